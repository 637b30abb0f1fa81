"""One results file from the jobs' part files, and the comparison table.

The merged file is an ordinary mpsbench results file (same schema): `context`
of the first part plus `context.sweep` (what ran, how, with which daemon),
`results` of every part. It is rewritten atomically (temporary file, fsync,
rename) after every job, so a sweep killed at any moment leaves valid JSON
holding everything that finished; `complete` turns true only when every planned
job ran to its end and every part is complete.
"""
import json
import statistics

from . import safe_files

MODE_ORDER = ("timeslice", "mps", "mps-qos", "mps-mem", "streams", "green")
# The field of a result that names its mps-mem job's memory limit (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT per device).
MEM_LIMIT_FIELD = "mps_pinned_device_mem_limit"
GAIN_THRESHOLD = 1.1  # the MPS gain that "pays off" (mpsbench-analyze crossover's default too)


def load_part(path):
    """The part's document, or None when it is missing or not a results file (a crashed job)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("schema") != "mpsbench-results" or "context" not in doc:
        return None
    return doc


def merge(parts, sweep, all_jobs_done):
    """parts: documents in job order. None when there is nothing to merge (no context to keep)."""
    if not parts:
        return None
    context = dict(parts[0]["context"])
    context["sweep"] = sweep
    results = [r for p in parts for r in p.get("results", [])]
    complete = all_jobs_done and all(p.get("complete") is True for p in parts)
    return {"schema": "mpsbench-results", "schema_version": parts[0].get("schema_version", 2),
            "complete": complete, "context": context, "results": results}


def relabel_mem(doc, limit):
    """A copy of an mps-mem job's part whose results say so: mode "mps-mem" (mpsbench ran them as plain mps
    clients) and the limit in MEM_LIMIT_FIELD, so they stay apart from the mps results of the same k."""
    return dict(doc, results=[dict(r, mode="mps-mem", **{MEM_LIMIT_FIELD: limit}) for r in doc.get("results", [])])


def _limit_bytes(limit):
    from .plan import MEM_LIMIT, mem_limit_bytes  # plan imports nothing of ours
    return mem_limit_bytes(limit) if isinstance(limit, str) and MEM_LIMIT.match(limit) else 0


def write_atomic(path, doc):
    """The document as JSON at path (safe_files.write_atomic: never through a link, never over a non-file)."""
    safe_files.write_atomic(path, json.dumps(doc, indent=1) + "\n")


def si(value, unit):
    """48.2 TFLOP/s: three significant digits and an SI prefix."""
    if value is None:
        return "-"
    for factor, prefix in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")):
        if abs(value) >= factor:
            scaled = value / factor
            break
    else:
        scaled, prefix = value, ""
    digits = 2 if abs(scaled) < 10 else 1 if abs(scaled) < 100 else 0
    return f"{scaled:.{digits}f} {prefix}{unit}"


def _ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def _columns(results):
    """Mode columns in the usual order; mps-qos gets one column per percentage when a row has several, mps-mem
    one per memory limit."""
    qos = {}
    for r in results:
        if r["mode"] == "mps-qos":
            qos.setdefault(r["ranks_per_gpu"], set()).add(r["mps_active_thread_percentage"])
    split_qos = any(len(p) > 1 for p in qos.values())
    columns = []
    for mode in MODE_ORDER + tuple(sorted({r["mode"] for r in results} - set(MODE_ORDER))):
        if mode == "mps-qos" and split_qos:
            for p in sorted({p for ps in qos.values() for p in ps}, key=lambda p: (p is None, p)):
                columns.append((mode, p, f"mps-qos {p}%"))
        elif mode == "mps-mem":
            for limit in sorted({r.get(MEM_LIMIT_FIELD) for r in results if r["mode"] == mode},
                                key=lambda x: (_limit_bytes(x), str(x))):
                columns.append((mode, limit, f"mps-mem {limit}"))
        elif any(r["mode"] == mode for r in results):
            columns.append((mode, None, mode))
    return columns, split_qos, qos


def _column_key(r, split_qos):
    if r["mode"] == "mps-qos" and split_qos:
        return r["mode"], r["mps_active_thread_percentage"]
    if r["mode"] == "mps-mem":
        return r["mode"], r.get(MEM_LIMIT_FIELD)
    return r["mode"], None


def table(doc, threshold=None):
    """The comparison table, its notes, then one verdict line per kernel and precision (kernel_verdicts) and
    per farmed application (app_verdicts). threshold: the MPS gain that pays off (GAIN_THRESHOLD)."""
    threshold = GAIN_THRESHOLD if threshold is None else threshold
    results = doc.get("results", [])
    if not results:
        return "no results to compare"
    columns, split_qos, qos = _columns(results)
    rows = {}
    for r in results:
        key = (r["kernel"], r["precision"], r["size"], r["ranks_per_gpu"])
        rows.setdefault(key, {})[_column_key(r, split_qos)] = r
    order = {}
    for r in results:
        order.setdefault((r["kernel"], r["precision"]), len(order))
    present = {c[0] for c in columns}
    ratios = [(name, a, b) for name, a, b in (("MPS gain", "mps", "timeslice"), ("mps/streams", "mps", "streams"),
                                              ("ts/streams", "timeslice", "streams"), ("green/qos", "green", "mps-qos"))
              if {a, b} <= present and not (b == "mps-qos" and split_qos)]
    header = ["kernel", "precision", "size", "ranks/gpu"] + [c[2] for c in columns] + [r[0] for r in ratios] + \
             ["verified"]
    lines = [header]
    for key in sorted(rows, key=lambda k: (order[k[:2]], k[2] or 0, k[3])):
        cells = rows[key]

        def value(mode, p=None):
            r = cells.get((mode, p))
            # A failed configuration (out of memory) has no aggregate at all.
            return r["aggregate"][r["primary_metric"]]["median"] if r and r.get("status", "ok") == "ok" else None

        line = [key[0], key[1], "-" if key[2] is None else str(key[2]), str(key[3])]
        for mode, p, _ in columns:
            r = cells.get((mode, p))
            line.append("-" if not r else "FAILED" if r.get("status", "ok") != "ok" else si(value(mode, p), r["primary_unit"]))
        names = {(mode, p): name for mode, p, name in columns}
        failed = sorted({names.get(c, c[0]) for c, r in cells.items() if not r["verified"]})
        line += [_ratio(value(a), value(b)) for _, a, b in ratios] + ["yes" if not failed else "NO: " + ",".join(failed)]
        lines.append(line)
    widths = [max(len(l[i]) for l in lines) for i in range(len(header))]
    text = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(l, widths))) for l in lines]
    notes = ["throughput: aggregate median of the kernel's headline metric over the active ranks"]
    if any(name != "green/qos" for name, _, _ in ratios):
        notes.append("MPS gain = mps / timeslice; mps/streams, ts/streams: ratio to k instances in one process "
                     "(streams)")
    if any(name == "green/qos" for name, _, _ in ratios):
        notes.append("green/qos = green / mps-qos at the same k: 1/k of the SMs fenced off in green contexts of one "
                     "process against k MPS clients capped at the percentage below (the SMs each instance got: "
                     "kernel_details.green_context_sm_count)")
    if qos and not split_qos:
        notes.append("mps-qos: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE per ranks/gpu: " +
                     ", ".join(f"{k}: {next(iter(p))}%" for k, p in sorted(qos.items())))
    verdicts = kernel_verdicts(results, threshold)
    if any(" MPS pays off " in v or " MPS never " in v for v in verdicts):
        notes.append(f"verdict: at each size k = the ranks per GPU where mps is fastest (of those measured in "
                     f"timeslice too), MPS gain = mps / timeslice at k; MPS pays off at a gain of {threshold:g}x or more")
    return "\n".join(text + [""] + notes + ([""] + verdicts if verdicts else []) + app_verdicts(results))


def _median(r):
    return r["aggregate"][r["primary_metric"]]["median"] if r.get("status", "ok") == "ok" else None


def _usable(r):
    """A result the verdict can use: measured (not failed), verified, with a positive median."""
    value = _median(r)
    return r.get("verified") is True and value is not None and value > 0


def crossover(sizes, gains, threshold):
    """(crossover size, outcome) for gains at ascending sizes, as `mpsbench-analyze crossover` defines it: the
    smallest size S with gain < threshold at every size >= S. Outcomes: "every" (no size falls short),
    "largest" (some smaller sizes fall short, the largest pays off: no crossover), "never" (S is the smallest
    size), "below" (MPS pays off below S)."""
    if not sizes:
        raise ValueError("no sizes")
    start = None
    for size, gain in zip(reversed(sizes), reversed(gains)):
        if gain >= threshold:
            break
        start = size
    if start is None:
        return None, "every" if all(g >= threshold for g in gains) else "largest"
    return start, "never" if start == sizes[0] else "below"


def kernel_verdicts(results, threshold=None):
    """One line per kernel and precision (farmed applications excepted): where MPS pays off.

    At each size, k is the ranks per GPU with the highest mps throughput among the k measured (status ok,
    verified) in both mps and timeslice, and the MPS gain is mps / timeslice at k, the table's "MPS gain"
    column. The crossover over the sizes is `crossover()` with the threshold. Failed or unverified results
    are left out (and counted); a kernel without mps or timeslice results gets a line saying so (one line for
    all when that is so for every kernel, as on the CPU device, where only streams runs)."""
    threshold = GAIN_THRESHOLD if threshold is None else threshold
    t = f"{threshold:g}x"
    lines, unmeasured = [], set()
    for kernel, precision in dict.fromkeys((r["kernel"], r["precision"]) for r in results if r["kernel"] != "app"):
        mine = [r for r in results if r["kernel"] == kernel and r["precision"] == precision]
        name = f"verdict: {kernel} {precision}:"
        modes = [m for m in MODE_ORDER if any(r["mode"] == m for r in mine)]
        missing = [m for m in ("timeslice", "mps") if m not in modes]
        if missing:
            why = f"no MPS verdict: {' and '.join(missing)} not measured (measured: {', '.join(modes) or 'nothing'})"
            unmeasured.add(why)
            lines.append(f"{name} {why}")
            continue
        compared = [r for r in mine if r["mode"] in ("timeslice", "mps")]
        left_out = sum(not _usable(r) for r in compared)
        value = {(r["mode"], r["size"], r["ranks_per_gpu"]): _median(r) for r in compared if _usable(r)}
        best = {}  # size -> (k, gain)
        for (mode, size, k), mps in value.items():
            timeslice = value.get(("timeslice", size, k))
            if mode != "mps" or timeslice is None:
                continue
            if size not in best or (mps, -k) > (value[("mps", size, best[size][0])], -best[size][0]):
                best[size] = (k, mps / timeslice)
        failed = f"; {left_out} configuration(s) failed or unverified, left out" if left_out else ""
        if not best:
            lines.append(f"{name} no MPS verdict: no size has verified mps and timeslice results at the same ranks "
                         f"per GPU{failed}")
            continue
        sizes = sorted(best, key=lambda s: (s is None, s or 0))
        gains = [best[s][1] for s in sizes]
        size, outcome = crossover(sizes, gains, threshold)
        shown = ["-" if s is None else str(s) for s in sizes]
        if outcome == "every":
            where = f"MPS pays off at every size measured ({shown[0]}" + (f" to {shown[-1]})" if len(sizes) > 1 else ")")
        elif outcome == "never":
            where = f"MPS never pays off (gain < {t} at every size measured)"
        elif outcome == "below":
            where = f"MPS pays off below size {size} (gain < {t} from {size} on)"
        else:
            short = [sh for sh, g in zip(shown, gains) if g < threshold]
            where = f"MPS pays off at the largest size measured (gain < {t} only at {', '.join(short)})"
        by_size = ", ".join(f"{sh} k={best[s][0]} {best[s][1]:.2f}x" for sh, s in zip(shown, sizes))
        lines.append(f"{name} {where}; best ranks/GPU and MPS gain by size: {by_size}{failed}")
    if len(lines) > 1 and len(unmeasured) == 1 and all(l.endswith(next(iter(unmeasured))) for l in lines):
        return [f"verdict: every kernel: {next(iter(unmeasured))}"]  # the same for all: say it once
    return lines


def app_verdicts(results):
    """One line per farmed application: its best mode and copies per GPU, runs/hour, and the gains."""
    lines = []
    for name in dict.fromkeys(r["precision"] for r in results if r["kernel"] == "app"):
        mine = [r for r in results if r["kernel"] == "app" and r["precision"] == name]
        ok = [r for r in mine if _median(r) is not None]
        if not ok:
            lines.append(f"verdict: {name}: no configuration completed ({len(mine)} failed)")
            continue
        best = max(ok, key=_median)
        k = best["ranks_per_gpu"]
        mode = best["mode"] + (f" {best['mps_active_thread_percentage']}%" if best["mode"] == "mps-qos" else "")

        def at(m, copies):
            return next((_median(r) for r in ok if r["mode"] == m and r["ranks_per_gpu"] == copies), None)

        alone = at("timeslice", 1) or at(best["mode"], 1)
        timeslice = at("timeslice", k)
        gains = [f"{_median(best) / alone:.2f}x one copy alone" if alone else "no one-copy run to compare",
                 f"{_median(best) / timeslice:.2f}x timeslice at {k} per GPU" if timeslice and best["mode"] !=
                 "timeslice" else None]
        failed = len(mine) - len(ok)
        lines.append(f"verdict: {name}: best {mode} at {k} cop{'y' if k == 1 else 'ies'} per GPU, "
                     f"{_median(best) * 3600:,.0f} runs/hour ({'; '.join(g for g in gains if g)})"
                     + (f"; {failed} configuration(s) failed" if failed else ""))
    return [""] + lines if lines else []


def _mib(value):
    return "-" if value is None else f"{value / 2**20:.0f} MiB"


def memory_summary(sweep):
    """Per job: median context memory of a rank (from mpsbench's context.ranks) and the MPS server's peak."""
    lines, known = [], False
    for job in sweep.get("jobs", []):
        if job.get("status") == "not_run":
            continue
        per_rank = [r["context_memory_bytes"] for r in job.get("ranks") or [] if r.get("context_memory_bytes")]
        context = statistics.median(per_rank) if per_rank else None
        server = (job.get("daemon") or {}).get("mps_server_memory_bytes")
        known = known or context is not None or server is not None
        lines.append(f"  {job['label']:<24} context per rank {_mib(context):>9}   MPS server {_mib(server):>9}")
    if not known:
        return ""
    return "GPU memory (median context of a rank; MPS server peak, from nvidia-smi):\n" + "\n".join(lines)
