"""The GPU memory each copy holds during a window: one definition, the same in every mode and configuration.

A copy's figure is the largest GPU memory its own processes held at one time, as nvidia-smi lists them
(--query-compute-apps): at each sample, the used memory of every process of the copy's run (its process
group: each run leads its own) on the copy's GPU, each process counted once, added up; the largest such sum
over the window's samples (and the results take the largest over the timed windows: results.py). Its CUDA
context is in it as nvidia-smi attributes it (under MPS, the client's share); the MPS server's own memory is
no copy's and is not in it. Samples are taken every SAMPLE_S while the window runs, by a thread of the
farmer (never on a copy's path), so a run much shorter than that may go unseen.

Where nvidia-smi lists no process of a copy (a container, whose nvidia-smi cannot map the copies' PIDs, or
runs too short to be sampled), the copy has no figure, and without any the method is None. Nothing is
estimated from the device's memory in use: that counts whatever else changed on the GPU meanwhile (other
processes, an MPS server starting, memory an ended run's context was still giving back), so the same program
read 548 MiB per copy in one configuration and 970 MiB in another (issue 36).
"""
import threading

from .. import nvsmi, procs

SAMPLE_S = 1.0
PER_PROCESS = "nvidia-smi per process"
UNSEEN = ("nvidia-smi listed no process of the copies while they ran (in a container it cannot map their "
          "PIDs; a run much shorter than a sample can go unseen): their memory cannot be told apart from "
          "the rest of the GPU's")


class MemorySampler:
    def __init__(self, copies):
        """copies: this node's Copy objects (gpu_uuid: the GPU each uses; None: any, e.g. an MPI launch)."""
        self.copies = {c.index: c for c in copies}
        self.groups = {}       # process group -> copy index
        self.peak = {}         # copy index -> bytes
        self._stop = threading.Event()
        self._thread = None

    def run_started(self, copy, pid):
        self.groups[pid] = copy.index  # each run leads its own process group

    def start(self):
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def sample(self, apps):
        """One sample: apps as nvsmi.compute_app_memory gives them; each copy's sum kept where it is its largest."""
        seen = {}  # copy -> {pid: bytes}: a process listed twice on the copy's GPU counts once
        for pid, gpu, used in apps or []:
            index = self.groups.get(procs.process_group(pid))
            copy = self.copies.get(index)
            if copy is None or (copy.gpu_uuid and gpu != copy.gpu_uuid.lower()):
                continue
            mine = seen.setdefault(index, {})
            mine[pid] = max(mine.get(pid, 0), used)
        for index, used in seen.items():
            self.peak[index] = max(self.peak.get(index, 0), sum(used.values()))

    def _loop(self):
        while not self._stop.wait(SAMPLE_S):
            self.sample(nvsmi.compute_app_memory())

    def stop(self):
        """(bytes per copy index as {"0": ...}, PER_PROCESS) of this window; ({}, None) when no copy was seen
        (UNSEEN says why)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if not self.peak:
            return {}, None
        return {str(k): v for k, v in sorted(self.peak.items())}, PER_PROCESS
