"""--app-progress on one node: each run's stdout read as it arrives, and the node's common window.

A run's stdout is a pipe (never a terminal: the program buffers as it would into a file; Python
programs get PYTHONUNBUFFERED=1 so that each line leaves at once). A reader thread per run copies
every chunk to the run's .out file (for --app-check and for the user) and hands each line to the
run's ProgressLines, timestamped on arrival (time.monotonic, the window's clock), which reads whole
lines and checks every counter as it comes (metric.py); a carriage return ends a line too (progress
bars redraw theirs).

CommonWindow follows the copies of this node live: it calls `span.start()` when every copy has
printed its first counter line and, when the first copy's run ends, `span.stop(ago)` with the span's
end put back to the copies' earliest last counter line up to then (core app_energy.span_end), so that
the energy meter (meter.py) covers the stretch the units are counted in: start-up and teardown excluded.
"""
import threading
import time

from mpsbench_core.app_energy import span_end

from .metric import READ_BYTES, ProgressLines

READER_JOIN_S = 5.0
LAST_LINES_S = 0.5  # how long an ended run's reader is given to read its last lines before the span is cut


class RunReader:
    """Reads one run's stdout pipe until it closes: the .out file and the counter lines."""

    def __init__(self, stream, out_path, spec, origin, on_first):
        """spec: the MetricSpec of --app-progress."""
        self.stream, self.out_path = stream, out_path
        self.lines = ProgressLines(spec, origin)
        self.on_first = on_first   # called once, at the run's first counter line
        self._told = False
        self.error = None
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _feed(self, data, now):
        self.lines.feed(data, now)
        self._tell()

    def _tell(self):
        if not self._told and self.lines.samples:
            self._told = True
            self.on_first()

    def _read(self):
        try:
            with open(self.out_path, "wb") as out:
                # What has arrived, not up to a newline: a progress bar redraws its line after a carriage
                # return, and each redraw is a counter line with its own time of arrival (metric.Lines).
                for chunk in iter(lambda: self.stream.read1(READ_BYTES), b""):
                    now = time.monotonic()
                    out.write(chunk)
                    self._feed(chunk, now)
                self.lines.end(time.monotonic())
                self._tell()
        except (OSError, ValueError) as e:
            self.error = str(e)
        finally:
            try:
                self.stream.close()
            except OSError:
                pass

    def finish(self):
        """The run's counter lines once its output has ended (what its leftovers still hold open is not
        waited for beyond READER_JOIN_S: the farmer kills them)."""
        self.thread.join(READER_JOIN_S)
        return self.lines.record()


class CommonWindow:
    """Tells a span (the energy meter) when this node's copies are all counting, and where their counting
    ended once one run has ended. clock: [the window's origin, time.monotonic()], set when its copies start;
    the lines' times are since then."""

    def __init__(self, copies, span, clock):
        self.waiting = set(copies)
        self.span, self.clock = span, clock
        self.readers = {}
        self.lock = threading.Lock()
        self.started = self.stopped = False
        self.started_at = None

    def watch(self, copy, reader):
        with self.lock:
            self.readers[copy] = reader

    def first_line(self, copy):
        with self.lock:
            self.waiting.discard(copy)
            if self.waiting or self.started or self.stopped:
                return
            self.started = True
        self.started_at = time.monotonic()
        self.span.start()

    def run_ended(self, reader, ended):
        """The first call ends the span: reader is the ended run's (its last lines are read first), ended the
        time.monotonic() at which it ended."""
        with self.lock:
            if self.stopped:
                return
            self.stopped = True
            started = self.started
            readers = list(self.readers.values())
        if not started:
            return
        if reader is not None:
            reader.thread.join(LAST_LINES_S)
        origin = self.clock[0]
        first_end = ended - origin
        end = span_end([list(r.lines.samples) for r in readers], first_end)
        for r in readers:
            r.lines.keep_last_before(first_end)
        now = time.monotonic()
        cut = end is not None and origin + end > self.started_at
        self.span.stop(max(0.0, now - (origin + end)) if cut else None)
