"""The GPU memory each copy holds during a window, by whichever method works on this node.

  "nvidia-smi per process"      nvidia-smi lists the processes using a GPU (--query-compute-apps); each
                                process is a copy's by its process group (each run leads its own), and a
                                copy's figure is the largest sum over its processes seen at once;
  "device used delta / copies"  where nvidia-smi lists no process of ours (a container: it cannot map
                                the copies' PIDs), the GPU's memory in use during the window (largest
                                sample) minus before it, split evenly over the copies of that GPU.
Sampled about once a second while the window runs (a thread of the farmer, never on a copy's path).
The delta counts everything that changed on the GPU meanwhile: under MPS the server's own memory when
the server started within the window, and anyone else's work on a shared GPU.
"""
import threading

from .. import nvsmi, procs

SAMPLE_S = 1.0
PER_PROCESS = "nvidia-smi per process"
DEVICE_DELTA = "device used delta / copies"


class MemorySampler:
    def __init__(self, copies):
        """copies: this node's Copy objects (their gpu_uuid names the GPU each uses)."""
        self.copies = copies
        self.groups = {}       # process group -> copy index
        self.peak = {}         # copy index -> bytes (per process)
        self.before = None     # GPU UUID -> bytes in use before the window
        self.device_peak = {}  # GPU UUID -> largest bytes in use during the window
        self._stop = threading.Event()
        self._thread = None

    def run_started(self, copy, pid):
        self.groups[pid] = copy.index  # each run leads its own process group

    def start(self):
        """Reads the GPUs' memory in use first (before the window's clock starts), then samples."""
        if any(c.gpu_uuid for c in self.copies):
            self.before = nvsmi.device_memory_used()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def _loop(self):
        while not self._stop.wait(SAMPLE_S):
            apps = nvsmi.compute_apps()
            now = {}
            for pid, _, used in apps or []:
                copy = self.groups.get(procs.process_group(pid))
                if copy is not None:
                    now[copy] = now.get(copy, 0) + used
            for copy, used in now.items():
                self.peak[copy] = max(self.peak.get(copy, 0), used)
            if not now and not self.peak and self.before:
                for uuid, used in (nvsmi.device_memory_used() or {}).items():
                    self.device_peak[uuid] = max(self.device_peak.get(uuid, 0), used)

    def stop(self):
        """(bytes per copy index as {"0": ...}, method) of this window; ({}, None) when nothing was seen."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.peak:
            return {str(k): v for k, v in sorted(self.peak.items())}, PER_PROCESS
        if not self.before or not self.device_peak:
            return {}, None
        sharing = {}
        for c in self.copies:
            if c.gpu_uuid:
                sharing.setdefault(c.gpu_uuid.lower(), []).append(c.index)
        out = {}
        for uuid, indices in sharing.items():
            if uuid in self.before and uuid in self.device_peak:
                delta = max(0, self.device_peak[uuid] - self.before[uuid])
                for index in indices:
                    out[str(index)] = delta // len(indices)
        return dict(sorted(out.items(), key=lambda item: int(item[0]))), (DEVICE_DELTA if out else None)
