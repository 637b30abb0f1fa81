"""The farmer's side of mpsbench-meter: GPU energy and SM activity over a span, per node.

mpsbench-meter (beside mpsbench; build/ in a source tree) speaks one JSON line per answer:

    mpsbench-meter [--gpus UUID[,UUID...]]
    -> {"ready": true, "gpus": [{"index": I, "uuid": "GPU-..."}]}  (or {"ready": false, "reason": ...}, exit 2)
    stdin "start": a span begins (energy counter and a GPM sample per GPU, taken at once)
    stdin "stop"  -> {"span_s": S, "energy": {available, joules, mean_power_w, span_s, uncertainty, method,
                      reason?}, "gpu_activity": {available, sm_active, sm_occupancy, dram_bw, tensor_active,
                      reason?}, "gpus": [{"uuid", "index", "energy": {...}, "gpu_activity": {...}}]}
    end of input: exit 0
(energy summed over the GPUs, gpu_activity the mean over them, percent; `available: false` with a
reason where a figure cannot be had, never a zero; MPSBENCH_FAKE_NVML=FILE.json scripts the counters.)

The farmer starts one meter per configuration on its GPUs and spans each timed window (with
--app-progress, the node's common window: progress.py). The meter is a process of its own, so its
NVML calls (about 4 ms each) never run on a copy's path; a span shorter than about 1 s cannot be
metered well (the energy counter changes about every 100 ms), which the record states through the
meter's own uncertainty. Whatever goes wrong (no meter, not ready, no answer) becomes one
`unavailable` reason, never a failed configuration.
"""
import json
import os
import queue
import subprocess
import threading

READY_TIMEOUT_S = 60.0
ANSWER_TIMEOUT_S = 30.0


def unavailable(reason):
    return {"available": False, "reason": reason}


class Meter:
    def __init__(self, path, uuids):
        self.path, self.uuids = path, list(uuids)
        self.proc = None
        self.lines = queue.Queue()
        self.reason = None       # why nothing can be metered, once known
        self.gpus = []
        self.started = False     # a span is open
        self.pending = False     # a span was closed: its answer is to be read

    def open(self):
        """Starts the meter and waits for its ready line; afterwards self.reason says why not, if so."""
        if not self.path:
            self.reason = "no mpsbench-meter (build it: cmake --build build --target mpsbench-meter)"
            return self
        if not os.access(self.path, os.X_OK):
            self.reason = f"mpsbench-meter not found at {self.path} (build it: cmake --build build --target " \
                          "mpsbench-meter, or pass --meter PATH)"
            return self
        argv = [self.path] + (["--gpus", ",".join(self.uuids)] if self.uuids else [])
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, close_fds=True)
        except OSError as e:
            self.reason = f"cannot start {self.path}: {e.strerror or e}"
            return self
        threading.Thread(target=self._read, daemon=True).start()
        ready = self._answer(READY_TIMEOUT_S)
        if ready is None:
            self.reason = self.reason or f"{self.path} gave no ready line within {READY_TIMEOUT_S:g} s"
        elif not ready.get("ready"):
            self.reason = f"mpsbench-meter: {ready.get('reason') or 'not ready'}"
        else:
            self.gpus = ready.get("gpus") or []
        if self.reason:
            self.close()
        return self

    def _read(self):
        for line in self.proc.stdout:
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            if isinstance(answer, dict):
                self.lines.put(answer)
        self.lines.put(None)

    def _answer(self, timeout):
        try:
            answer = self.lines.get(timeout=timeout)
        except queue.Empty:
            return None
        if answer is None:
            said = (self.proc.stderr.read() or "").strip().splitlines() if self.proc.poll() is not None else []
            self.reason = f"mpsbench-meter ended (status {self.proc.poll()})" + (f": {said[-1][:200]}" if said else "")
        return answer

    def _send(self, line):
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            self.reason = self.reason or "mpsbench-meter stopped reading"
            return False

    def start(self):
        """Begins a span (no answer is awaited: nothing is added to the window's path)."""
        if self.reason is None and self.proc is not None:
            self.started = self._send("start")

    def stop(self):
        if self.started and self.reason is None:
            self.started = False
            self._send("stop")
            self.pending = True

    def result(self, what_ran):
        """The span's answer (the meter's JSON object), or {"unavailable": ...} saying why there is none.
        what_ran: what the span was meant to cover, for the reason when it never started."""
        if self.reason is not None:
            return {"unavailable": self.reason}
        if self.started:
            self.stop()  # a span left open (a window that ended early) is closed, its answer read
        if not self.pending:
            self.started = False
            return {"unavailable": f"no span: {what_ran}"}
        self.pending = False
        answer = self._answer(ANSWER_TIMEOUT_S)
        if answer is None:
            return {"unavailable": self.reason or f"mpsbench-meter did not answer stop within {ANSWER_TIMEOUT_S:g} s"}
        return answer

    def close(self):
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

