"""What nvidia-smi says about this node's GPUs; every function copes with its absence.

The sweep only reads: it never changes the compute mode or any other setting.
"""
import shutil
import subprocess
import threading


def _query(args, timeout=10.0):
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        r = subprocess.run([exe] + args, capture_output=True, text=True, timeout=timeout)
    except (subprocess.TimeoutExpired, OSError):
        return None
    return r.stdout if r.returncode == 0 else None


def gpu_count():
    """Number of GPUs `nvidia-smi -L` lists (MIG instances not counted), None without nvidia-smi."""
    out = _query(["-L"])
    if out is None:
        return None
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def gpus():
    """[{index, name, compute_mode (DEFAULT, EXCLUSIVE_PROCESS, PROHIBITED), compute_cap}] or None."""
    out = _query(["--query-gpu=index,name,compute_mode,compute_cap", "--format=csv,noheader"])
    if out is None:
        return None
    found = []
    for line in out.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 4 or not fields[0].isdigit():
            continue
        try:
            cap = float(fields[3])
        except ValueError:
            cap = None
        found.append({"index": int(fields[0]), "name": fields[1],
                      "compute_mode": fields[2].upper().replace(" ", "_"), "compute_cap": cap})
    return found


def compute_apps():
    """[(pid, process name, used GPU memory in bytes)] of the processes using a GPU now, None without
    nvidia-smi. Under MPS the clients are listed as well as the server (as far as the container sees them)."""
    out = _query(["--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits"], 5.0)
    if out is None:
        return None
    apps = []
    for line in out.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 3 and fields[0].isdigit() and fields[2].isdigit():
            apps.append((int(fields[0]), fields[1], int(fields[2]) * 1024 * 1024))  # MiB
    return apps


def compute_app_memory():
    """[(pid, GPU UUID in lower case, used GPU memory in bytes)] of the processes using a GPU now, one entry per
    process and GPU (what app/memory.py needs: a copy's processes on its own GPU), None without nvidia-smi."""
    out = _query(["--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits"], 5.0)
    if out is None:
        return None
    apps = []
    for line in out.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 3 and fields[0].isdigit() and fields[1] and fields[2].isdigit():
            apps.append((int(fields[0]), fields[1].lower(), int(fields[2]) * 1024 * 1024))  # MiB
    return apps


def bus_ids():
    """{GPU UUID in lower case: PCI bus id ('00000000:1B:00.0')}, {} without nvidia-smi."""
    out = _query(["--query-gpu=uuid,pci.bus_id", "--format=csv,noheader"])
    found = {}
    for line in (out or "").splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 2 and fields[0]:
            found[fields[0].lower()] = fields[1]
    return found


def mps_server_memory_bytes():
    """GPU memory of nvidia-cuda-mps-server processes right now (sum over GPUs), None when
    nvidia-smi is missing or lists no server (e.g. it cannot see processes of the container)."""
    servers = [used for _, name, used in compute_apps() or [] if name.endswith("nvidia-cuda-mps-server")]
    return sum(servers) if servers else None


class ServerMemoryPoller:
    """Keeps the largest MPS server memory seen while a job runs (polls about once a second)."""

    def __init__(self, interval=1.0):
        self.interval = interval
        self.max_bytes = None
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        if shutil.which("nvidia-smi") is None:
            return self
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while True:
            value = mps_server_memory_bytes()
            if value is not None:
                self.max_bytes = max(self.max_bytes or 0, value)
            if self._stop.wait(self.interval):
                return

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        return self.max_bytes
