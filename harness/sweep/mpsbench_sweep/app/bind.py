"""--app-bind: how the copies of a node are pinned to its CPUs, an axis of the sweep like the modes.

  none   no pinning: every copy may run on every CPU the farmer may use (the operating system places them)
  core   each copy on cores of its own: the node's cores (the CPUs the farmer may use, hyperthreads of one
         core kept together) are split into as many contiguous, equal blocks as there are copies; with more
         copies than cores, copy i shares core i mod (cores) with others
  numa   each copy on the CPUs of its GPU's NUMA node (the GPU's PCI device's local_cpulist), shared by the
         copies of that GPU; without a GPU (the CPU device) or where the kernel does not say, copy i on NUMA
         node i mod (nodes)

The farmer pins a copy by setting the CPU affinity of the thread that starts its runs, which each run
inherits at fork (no code between fork and exec, no taskset). What each copy got is recorded
(copies[].cpus). An MPI application (--app-launcher) is bound by its launcher's own options
(mpirun --bind-to core): only none applies there.
"""
import glob
import os

BINDS = ("none", "core", "numa")
SYS = "/sys"


def cpu_list(cpus):
    """{0, 1, 2, 5} -> '0-2,5'."""
    out, run = [], []
    for c in sorted(cpus):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [c]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def parse_cpu_list(text):
    """'0-2,5' -> {0, 1, 2, 5}; an empty set for text the kernel did not give."""
    cpus = set()
    for part in text.strip().split(","):
        low, sep, high = part.partition("-")
        if low.strip().isdigit() and (not sep or high.strip().isdigit()):
            cpus.update(range(int(low), int(high if sep else low) + 1))
    return cpus


def _read(path):
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def cores(allowed):
    """The allowed CPUs grouped by physical core, cores ordered by (package, core id)."""
    groups = {}
    for cpu in sorted(allowed):
        base = f"{SYS}/devices/system/cpu/cpu{cpu}/topology"
        package, core = _read(f"{base}/physical_package_id"), _read(f"{base}/core_id")
        key = (int(package), int(core)) if package and core and package.lstrip("-").isdigit() and core.isdigit() \
            else (0, 1_000_000 + cpu)
        groups.setdefault(key, set()).add(cpu)
    return [frozenset(groups[k]) for k in sorted(groups)]


def numa_nodes(allowed):
    """The allowed CPUs of each NUMA node (nodes without any left out); one node of all when none is listed."""
    nodes = []
    for path in sorted(glob.glob(f"{SYS}/devices/system/node/node[0-9]*/cpulist"),
                       key=lambda p: int(os.path.basename(os.path.dirname(p))[4:])):
        cpus = parse_cpu_list(_read(path) or "") & set(allowed)
        if cpus:
            nodes.append(frozenset(cpus))
    return nodes or [frozenset(allowed)]


def gpu_cpus(bus_id, allowed):
    """The allowed CPUs local to the GPU at PCI address bus_id ('00000000:1B:00.0'), None when unknown."""
    if not bus_id:
        return None
    address = bus_id.lower()
    if address.count(":") == 2 and len(address.split(":")[0]) == 8:
        address = address[4:]  # nvidia-smi's 8-digit domain; sysfs has 4
    cpus = parse_cpu_list(_read(f"{SYS}/bus/pci/devices/{address}/local_cpulist") or "") & set(allowed)
    return frozenset(cpus) if cpus else None


def cpu_sets(bind, copies, gpu_of_copy=None, bus_ids=None, allowed=None):
    """The CPUs of each of `copies` copies (a list, None for no pinning). gpu_of_copy: the GPU index each
    copy runs on (None on the CPU device); bus_ids: the PCI address of each GPU index."""
    if bind == "none":
        return [None] * copies
    allowed = frozenset(allowed if allowed is not None else os.sched_getaffinity(0))
    if bind == "core":
        found = cores(allowed)
        n = len(found)
        if copies <= n:
            blocks = [found[i * n // copies:(i + 1) * n // copies] for i in range(copies)]
            return [frozenset().union(*block) for block in blocks]
        return [found[i % n] for i in range(copies)]
    nodes = numa_nodes(allowed)
    out = []
    for i in range(copies):
        gpu = gpu_of_copy[i] if gpu_of_copy else None
        local = gpu_cpus((bus_ids or {}).get(gpu), allowed) if gpu is not None else None
        out.append(local or nodes[(gpu if gpu is not None else i) % len(nodes)])
    return out
