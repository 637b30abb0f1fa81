"""Copies of an application on one node: one warm-up run each, then timed windows of whole runs.

The window protocol (harness/sweep/README.md, "Farming an application"):
- all copies start together: each copy's thread waits at one barrier, and the
  window's clock starts when the barrier opens;
- each copy runs the command again and again, back to back, and starts a new
  run only while --min-time has not yet passed since that common start;
- the window ends when the last copy finishes the run it was in when --min-time
  passed. Whole runs only: no run is ever killed to end a window, so every
  counted run did its complete work;
- a run that exits non-zero or is killed by a signal fails the configuration.
  The other copies' runs are then stopped (SIGTERM to their process groups,
  SIGKILL after a grace period): nothing more of this configuration will be
  reported as a measurement, and the sweep goes on with the next one.
Nothing of a run may outlive it: its processes would skew the later runs'
timings. Every run gets its own process group, killed when the run ends (what
it left in the background); a child it put in a session of its own is
re-parented to the farmer (a subreaper: farm.py), where a watcher finds it
within WATCH_S and kills it with everything below it; the count is reported
as left_running. Runs do not ask for a signal when the farmer dies
(PR_SET_PDEATHSIG would need Python code between fork and exec, about 4 ms
added to every timed run): a farmer killed outright leaves them to its own
subreaper, the keeper, which ends them. Anything that goes wrong in a copy's thread,
an output file that cannot be created included, is a failed run that fails the
configuration: never a thread's traceback and a window cut short.
"""
import os
import signal
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import List, Optional

from .. import procs
from ..lifetime import reap, stray_children
from .bind import cpu_list
from .progress import CommonWindow, RunReader

STOP_GRACE_S = 5.0
STDERR_TAIL_BYTES = 2000
WATCH_S = 0.25  # how often the farmer looks for processes a finished run left running


@dataclass
class Copy:
    index: int                 # node-local copy number
    gpu_index: Optional[int]   # i mod G on a GPU node, None on the CPU device
    gpu_uuid: Optional[str]
    directory: str             # where its runs' stdout and stderr go
    env: dict = field(default_factory=dict)  # on top of the farmer's environment
    cpus: Optional[frozenset] = None         # --app-bind: the CPUs its runs may use (None: the farmer's)


@dataclass
class Run:
    copy: int
    repetition: int            # 0-based; -1 for the warm-up
    number: int                # 0-based within the copy and repetition
    start_s: float             # since the window's common start
    duration_s: float
    exit_code: Optional[int]   # None when killed by a signal
    signal: Optional[int]
    stdout: str
    stderr: str
    stopped: bool = False      # ended by us because another run failed
    check_exit_code: Optional[int] = None
    start_error: Optional[str] = None  # why the run could not start (exit_code 127)
    metric: Optional[float] = None     # --app-metric: the rate its stdout reported (farm.py)
    metric_line: Optional[str] = None  # the line it was read from
    progress: Optional[dict] = None    # --app-progress: its counter lines (progress.py)
    stderr_match: Optional[str] = None  # no match in its stdout: a line of its stderr that matches (the hint)

    @property
    def succeeded(self):
        return self.exit_code == 0

    def record(self):
        return asdict(self)


@dataclass
class Window:
    repetition: int
    window_s: float
    runs: List[Run]
    failure: Optional[Run]     # the first run that failed, if any
    left_running: int = 0      # processes finished runs left behind, killed during the window


def tail(path, limit=STDERR_TAIL_BYTES):
    """The last lines of a file (at most `limit` bytes), for a failure message."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            data = f.read()
    except OSError:
        return ""
    text = data.decode(errors="replace")
    return text if len(data) < limit else text.split("\n", 1)[-1]


class Farm:
    """The copies of one configuration on this node. progress: the --app-progress MetricSpec (each window is
    then one run per copy, read as it runs: progress.RunReader); None otherwise."""

    def __init__(self, argv, copies, base_env, progress=None):
        self.argv, self.copies, self.base_env = list(argv), copies, dict(base_env)
        self.progress = progress
        self.common = None       # progress: this window's CommonWindow (the energy meter's span)
        self._lock = threading.Lock()
        self._running = {}      # copy index -> Popen of its current run
        self._started = set()   # pid of every run started: what the watcher must never take for a stray
        self.failed = threading.Event()
        self.aborted = threading.Event()
        self.on_start = None    # called with (copy, pid) as each run starts (memory sampling)

    def _env(self, copy):
        env = dict(self.base_env)
        env.update(copy.env)
        return env

    def _start(self, copy, repetition, number, origin):
        """(the run's Popen, its output files' stem, its RunReader or None)."""
        stem = os.path.join(copy.directory, f"r{repetition}-{number}" if repetition >= 0 else "warmup")
        if self.progress is None:
            with open(stem + ".out", "wb") as out, open(stem + ".err", "wb") as err:
                proc = subprocess.Popen(self.argv, env=self._env(copy), stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=err, process_group=0, close_fds=True)
            return proc, stem, None
        with open(stem + ".err", "wb") as err:
            proc = subprocess.Popen(self.argv, env=self._env(copy), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=err, process_group=0, close_fds=True)
        common = self.common if repetition >= 0 else None
        reader = RunReader(proc.stdout, stem + ".out", self.progress, origin,
                           (lambda: common.first_line(copy.index)) if common else (lambda: None))
        if common is not None:
            common.watch(copy.index, reader)
        return proc, stem, reader

    def _copy_loop(self, copy, repetition, barrier, clock, deadline_s, runs):
        bind_error = None
        if copy.cpus is not None:
            try:
                os.sched_setaffinity(0, copy.cpus)  # this thread's: the runs it starts inherit it
            except OSError as e:
                bind_error = f"cannot bind to CPUs {cpu_list(copy.cpus)}: {e.strerror or e}"
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            return
        if bind_error is not None:
            runs.append(self._unstartable(copy, repetition, 0, 0.0, bind_error))
            self._fail()
            return
        number = 0
        try:
            while not self.failed.is_set() and not self.aborted.is_set():
                started = time.monotonic()
                if number > 0 and started - clock[0] >= deadline_s:
                    break
                run = self._one_run(copy, repetition, number, started, clock[0])
                if run is None:
                    break
                runs.append(run)
                if not run.succeeded and not run.stopped:
                    self._fail()
                    break
                number += 1
                if repetition < 0 or self.progress is not None:
                    break  # the warm-up is one run per copy, and so is a window of --app-progress
        except BaseException as e:  # noqa: B902 - a thread's failure is the configuration's, never a traceback
            runs.append(self._unstartable(copy, repetition, number, time.monotonic() - clock[0],
                                          f"the farmer's thread for this copy failed: {e!r}"))
            self._fail()

    def _one_run(self, copy, repetition, number, started, start_of_window):
        """One whole run of the copy; None when the window was stopped before it started."""
        with self._lock:
            if self.failed.is_set() or self.aborted.is_set():
                return None
            try:
                proc, stem, reader = self._start(copy, repetition, number, start_of_window)
            except OSError as e:
                return self._unstartable(copy, repetition, number, started - start_of_window,
                                         f"cannot start {self.argv[0]}: {e.strerror or e}"
                                         + (f" ({e.filename})" if e.filename else ""))
            self._running[copy.index] = proc
            self._started.add(proc.pid)
        if self.on_start is not None:
            self.on_start(copy, proc.pid)
        rc = proc.wait()
        ended = time.monotonic()
        if self.common is not None and repetition >= 0:
            self.common.run_ended(reader, ended)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever the run left in its process group
        except (ProcessLookupError, PermissionError):
            pass
        with self._lock:
            self._running.pop(copy.index, None)
            stopped = self.failed.is_set() and rc != 0
        return Run(copy.index, repetition, number, round(started - start_of_window, 6), round(ended - started, 6),
                   rc if rc >= 0 else None, -rc if rc < 0 else None, stem + ".out", stem + ".err", stopped,
                   progress=reader.finish() if reader is not None else None)

    def _unstartable(self, copy, repetition, number, at, why):
        """A run that did not start: failed with status 127, as a shell says it; nothing is written (its
        directory may be what is missing)."""
        stem = os.path.join(copy.directory, f"r{repetition}-{number}" if repetition >= 0 else "warmup")
        return Run(copy.index, repetition, number, round(at, 6), 0.0, 127, None, stem + ".out", stem + ".err",
                   start_error=why)

    def _watch(self, stop, found):
        """During a window: kills what finished runs left running in sessions of their own (re-parented to
        us, the subreaper) and everything below them; counts them in found[0]."""
        while not stop.wait(WATCH_S):
            roots, zombies = stray_children(skip_own_group=True)
            with self._lock:
                # Runs start under this lock, so every run forked before the scan is in _started by now:
                # what is not is a stray, and the runs never wait for the scan.
                roots = [p for p in roots if p.pid not in self._started]
                zombies = [p for p in zombies if p.pid not in self._started]
            victims = procs.with_descendants(roots) if roots else set()
            procs.signal_all(victims, signal.SIGKILL)
            found[0] += len(victims)
            reap(zombies)

    def _fail(self):
        """A run failed: stop the others (their results would not be reported anyway)."""
        with self._lock:
            self.failed.set()
            running = list(self._running.values())
        stop_processes(running)

    def abort(self):
        """From a signal handler's thread: stop every run now."""
        self.aborted.set()
        with self._lock:
            running = list(self._running.values())
        stop_processes(running)

    def window(self, repetition, min_time_s, span=None):
        """One timed window (repetition >= 0), or the warm-up (-1): every copy's runs, in order. span: what
        the energy meter measures; with --app-progress it is started and stopped at this node's common
        window (progress.py), else by the caller around the whole window."""
        clock = [0.0]
        self.common = CommonWindow([c.index for c in self.copies], span, clock) if span and self.progress else None
        runs = []
        per_copy = {c.index: [] for c in self.copies}
        barrier = threading.Barrier(len(self.copies), action=lambda: clock.__setitem__(0, time.monotonic()))
        threads = [threading.Thread(target=self._copy_loop, args=(c, repetition, barrier, clock, min_time_s,
                                                                 per_copy[c.index]), daemon=True)
                   for c in self.copies]
        stop_watching, left = threading.Event(), [0]
        watcher = threading.Thread(target=self._watch, args=(stop_watching, left), daemon=True)
        watcher.start()
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            stop_watching.set()
            watcher.join()
        for c in self.copies:
            runs += per_copy[c.index]
        ends = [r.start_s + r.duration_s for r in runs]
        failure = next((r for r in sorted(runs, key=lambda r: r.start_s + r.duration_s)
                        if not r.succeeded and not r.stopped), None)
        return Window(repetition, round(max(ends), 6) if ends else 0.0, runs, failure, left[0])


def stop_processes(running, grace=STOP_GRACE_S):
    """SIGTERM to each run's process group, SIGKILL to those still there after the grace period."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in running:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        deadline = time.monotonic() + grace
        while any(p.poll() is None for p in running) and time.monotonic() < deadline:
            time.sleep(0.05)
