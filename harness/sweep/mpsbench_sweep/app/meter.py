"""The farmer's side of mpsbench-meter: GPU energy and SM activity over a span, per node.

mpsbench-meter (beside mpsbench; build/ in a source tree) speaks one JSON line per answer:

    mpsbench-meter [--gpus UUID[,UUID...]]
    -> {"ready": true, "gpus": [{"index": I, "uuid": "GPU-..."}]}  (or {"ready": false, "reason": ...}, exit 2)
    stdin "start": a span begins (energy counter and a GPM sample per GPU, taken at once)
    stdin "stop [AGO]" (the span ends AGO seconds before the command)
                  -> {"span_s": S, "energy": {available, joules, mean_power_w, span_s, uncertainty, method,
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

Every field of an answer is checked here before anything uses it (checked()), whatever built the meter:
a part (energy, gpu_activity) with a figure that is not what the protocol says (a percentage outside
0-100, a joule count that is not positive, a field of the wrong type) is unavailable, with the field and
its value as the reason, and so is the whole when one GPU's part is (a mean or sum over it would hold it).
The meter's output is read as UTF-8 with bad bytes replaced: a byte must not end the reading thread.
"""
import json
import math
import os
import queue
import subprocess
import threading

READY_TIMEOUT_S = 60.0
ANSWER_TIMEOUT_S = 30.0
ACTIVITY = ("sm_active", "sm_occupancy", "dram_bw", "tensor_active")


def unavailable(reason):
    return {"available": False, "reason": reason}


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value):
    """A value for a reason: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _head(part):
    """What is wrong with a part's available/reason, else None; an unavailable part with its reason is fine."""
    if not isinstance(part, dict) or not isinstance(part.get("available"), bool):
        return f"not an object with available true or false: {_shown(part)}"
    if not part["available"] and not (isinstance(part.get("reason"), str) and part["reason"].strip()):
        return "not available, and no reason given"
    return None


def energy_problem(part):
    """What makes an energy part untrustworthy, else None."""
    problem = _head(part)
    if problem or not part["available"]:
        return problem
    for key in ("joules", "mean_power_w", "span_s"):
        if not (_number(part.get(key)) and part[key] > 0):
            return f"{key} {_shown(part.get(key))} is not a positive number"
    if part.get("uncertainty") is not None and not (_number(part["uncertainty"]) and part["uncertainty"] >= 0):
        return f"uncertainty {_shown(part['uncertainty'])} is not a number >= 0"
    return None


def activity_problem(part):
    """What makes a gpu_activity part untrustworthy, else None."""
    problem = _head(part)
    if problem or not part["available"]:
        return problem
    for key in ACTIVITY:
        value = part.get(key)
        if value is not None and not (_number(value) and 0 <= value <= 100):
            return f"{key} {_shown(value)} is not a percentage (0-100)"
    if all(part.get(key) is None for key in ACTIVITY):
        return "available, but no figure given"
    return None


def checked(answer):
    """The meter's answer to a stop with every field checked (the module's text), or {"unavailable": ...}."""
    if not isinstance(answer, dict) or "error" in answer:
        said = answer.get("error") if isinstance(answer, dict) else answer
        return {"unavailable": f"mpsbench-meter: {str(said)[:200]}"}
    gpus = answer.get("gpus")
    if not (_number(answer.get("span_s")) and answer["span_s"] > 0) or not isinstance(gpus, list) \
            or not all(isinstance(g, dict) for g in gpus):
        return {"unavailable": "mpsbench-meter's answer has no span_s or gpus list as its protocol says"}
    out = dict(answer, gpus=[dict(g) for g in gpus])
    for part, problem_of in (("energy", energy_problem), ("gpu_activity", activity_problem)):
        problem = problem_of(answer.get(part))
        for g in out["gpus"]:
            own = problem_of(g.get(part))
            if own is not None:
                g[part] = unavailable(f"mpsbench-meter's answer: {own}")
                problem = problem or f"{str(g.get('uuid'))[:80]}: {own}"
        if problem is not None:
            out[part] = unavailable(f"mpsbench-meter's answer: {problem}")
    return out


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
                                         stderr=subprocess.PIPE, encoding="utf-8", errors="replace",
                                         close_fds=True)
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

    def stop(self, ago=None):
        """Ends the span now, or ago seconds before now (--app-progress: at the copies' last counter line)."""
        if self.started and self.reason is None:
            self.started = False
            self._send("stop" if ago is None else f"stop {ago:.6f}")
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
        return checked(answer)

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

