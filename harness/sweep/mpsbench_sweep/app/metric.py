"""A farmed program's own figure of merit: what --app-metric and --app-progress read from its output.

--app-metric REGEX: the first capture group of the last line of a run's stdout that REGEX matches
(re.search) is that run's rate, in --app-metric-unit (ns/day, it/s, images/s). The farmer reads the
run's stdout file after the window (outside the timing).

--app-progress REGEX: the first capture group is a cumulative counter (steps, iterations, samples)
that the program prints as it goes. The farmer reads the run's stdout through a pipe as it runs and
timestamps each matching line when it arrives (ProgressLines); the rate comes later, from every
copy's lines together (figures.py).

Both: every figure is checked once, here, where it is read (checked_figure), and one that cannot be
taken is a BadFigure: the farmer reports it with the run and the sweep fails the configuration with one
line naming the pattern and the value (job.py), never a silent zero, a traceback or a number the
statistics cannot hold. A figure is ASCII decimal ("12", "3.5", "1e6"), thousands separators "," or "_"
allowed ("5,882"); a rate lies in [MIN_RATE, MAX_FIGURE] (above 0) and so does its rate per second; a
counter in [0, MAX_FIGURE] and never below its previous value. Lines are read whole (Lines): a newline
or a carriage return ends one, and a line longer than MAX_LINE_BYTES is a BadFigure rather than read in
pieces, which would cut "12345" into "12" and "345".
"""
import math
import re
from dataclasses import dataclass
from typing import Optional

from mpsbench_core.energy import rate_unit

from ..inputs import InputError
from ..text import printable, quoted

METHODS = ("metric", "progress")
# ASCII decimal, as the sweep reads every number (inputs.py): float() alone would take "٣" for 3.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
DEFAULT_UNIT = "units/s"
MAX_PATTERN = 1000
MAX_UNIT = 40
MAX_SAMPLES = 2000       # counter lines kept per run (evenly thinned): enough to interpolate within 0.1 %
MAX_LINE_BYTES = 1 << 20  # the longest line read whole (a figure's line is never near it); longer: BadFigure
READ_BYTES = 1 << 16
# The range of a figure. No program does more than 1e30 units of anything per second or in all (an exaflop
# machine does 1e23 FLOP a day): a larger value is a pattern capturing the wrong number. The bounds also keep
# every statistic finite and above 0: sums over millions of copies, squares (variance, Jain's index),
# products with window lengths (work, J/unit) and their quotients.
MAX_FIGURE = 1e30
MIN_RATE = 1e-30


@dataclass(frozen=True)
class MetricSpec:
    """How a program's own figure is read: method metric (a rate it prints) or progress (a counter)."""

    method: str
    regex: str
    unit: str

    @property
    def flag(self):
        return "--app-metric" if self.method == "metric" else "--app-progress"

    def pattern(self):
        return re.compile(self.regex)

    def to_json(self):
        return {"method": self.method, "regex": self.regex, "unit": self.unit}

    def described(self):
        return f"{self.flag} {quoted(self.regex)}"


def metric_spec(metric, progress, unit):
    """The MetricSpec of the options (None without --app-metric and --app-progress), or InputError."""
    if metric is not None and progress is not None:
        raise InputError("--app-metric and --app-progress: give one (a rate the program prints, or a counter it "
                         "prints as it goes)")
    if metric is None and progress is None:
        if unit is not None:
            raise InputError("--app-metric-unit: applies to --app-metric or --app-progress")
        return None
    method, regex = ("metric", metric) if metric is not None else ("progress", progress)
    flag = f"--app-{method}"
    if not regex or len(regex) > MAX_PATTERN or printable(regex) != regex:
        raise InputError(f"{flag}: {quoted(regex)} must be 1 to {MAX_PATTERN} printable characters")
    try:
        compiled = re.compile(regex)
    except re.error as e:
        raise InputError(f"{flag}: {quoted(regex)} is not a regular expression (Python re): {e}") from None
    if compiled.groups < 1:
        raise InputError(f"{flag}: {quoted(regex)} has no capture group: put the number in parentheses, e.g. "
                         "'ns_per_day: ([0-9.]+)'")
    unit = DEFAULT_UNIT if unit is None else unit
    if not unit or len(unit) > MAX_UNIT or printable(unit) != unit or unit.strip() != unit:
        raise InputError(f"--app-metric-unit: {quoted(unit)} must be 1 to {MAX_UNIT} printable characters without "
                         "leading or trailing spaces")
    return MetricSpec(method, regex, unit)


def number(text):
    """The float a captured group means, or None: '5,882' and '1_000' read as thousands; NaN and infinities
    are not rates."""
    if text is None:
        return None
    cleaned = text.strip().replace(",", "").replace("_", "")
    if _NUMBER.fullmatch(cleaned) is None:
        return None
    value = float(cleaned)
    return value if math.isfinite(value) else None


class BadFigure(Exception):
    """A figure that cannot be taken: one line naming the value (the caller names the pattern and the run)."""


def _shown(line):
    return repr(printable(line.strip())[:200])


def checked_figure(spec, group, line, previous=None):
    """The value of one captured group (group: its text; line: the line it is in), checked for spec's method:
    a rate (metric) or a counter (progress; previous: its last value). BadFigure when it cannot be taken."""
    value = number(group)
    if value is None:
        raise BadFigure(f"printed a matching line whose group is not a number: {_shown(line)}")
    what = f"printed {'the rate' if spec.method == 'metric' else 'the counter'} {printable(group.strip())[:40]}"
    if spec.method == "metric":
        per = rate_unit(spec.unit)
        per_second = value / per[1] if per else value
        if value <= 0:
            raise BadFigure(f"{what} ({_shown(line)}): a rate must be above 0")
        if not MIN_RATE <= value <= MAX_FIGURE or not MIN_RATE <= per_second <= MAX_FIGURE:
            raise BadFigure(f"{what} ({_shown(line)}): out of range: a rate, and its rate per second, lies within "
                            f"{MIN_RATE:g} to {MAX_FIGURE:g} (does the pattern capture the right number?)")
        return value
    if not 0 <= value <= MAX_FIGURE:
        raise BadFigure(f"{what} ({_shown(line)}): out of range: a counter of work done so far lies within 0 to "
                        f"{MAX_FIGURE:g} (does the pattern capture the right number?)")
    if previous is not None and value < previous:
        raise BadFigure(f"the counter went down from {previous:g} to {value:g} ({_shown(line)}): it must be "
                        "cumulative (steps, iterations or samples done so far)")
    return value


class Lines:
    """Text lines from bytes as they arrive, each whole: a newline or a carriage return (a progress bar's
    redraw) ends one. A line longer than MAX_LINE_BYTES raises BadFigure: read in pieces, a figure at a
    piece's edge would be cut ("12345" read as "12")."""

    def __init__(self, stream_name="stdout"):
        self.pending = b""
        self.stream_name = stream_name

    def _too_long(self):
        return BadFigure(f"a line of its {self.stream_name} is longer than {MAX_LINE_BYTES >> 20} MiB, the most "
                         "the farmer reads as one line (a figure on it could be cut): print the figure on a "
                         "shorter line")

    def push(self, chunk):
        """The lines that chunk completes."""
        data = self.pending + chunk
        cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
        done, self.pending = (data[:cut + 1], data[cut + 1:]) if cut >= 0 else (b"", data)
        lines = done.splitlines()
        if len(self.pending) > MAX_LINE_BYTES or any(len(line) > MAX_LINE_BYTES for line in lines):
            raise self._too_long()
        return [line.decode(errors="replace") for line in lines]

    def end(self):
        """The last line, which no newline ended."""
        rest, self.pending = self.pending, b""
        return [rest.decode(errors="replace")] if rest else []


@dataclass(frozen=True)
class Scan:
    """What a run's output file says: value and line of the last line the pattern matches (None without one),
    or why its figure cannot be taken (problem, a BadFigure's text)."""

    value: Optional[float] = None
    line: Optional[str] = None
    problem: Optional[str] = None


def scan_rate(path, spec, stream_name="stdout"):
    """The Scan of a finished run's output file for spec's pattern (--app-metric: its last match is the rate)."""
    pattern, lines, last = spec.pattern(), Lines(stream_name), None
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(READ_BYTES), b""):
                for line in lines.push(chunk):
                    last = _match(pattern, line) or last
            for line in lines.end():
                last = _match(pattern, line) or last
        if last is None:
            return Scan()
        return Scan(checked_figure(spec, *last), printable(last[1].strip())[:200])
    except BadFigure as e:
        return Scan(line=printable(last[1].strip())[:200] if last else None, problem=str(e))
    except OSError:
        return Scan()


def _match(pattern, line):
    """(the first group's text, the line) where pattern matches line, else None; a group that matched nothing
    is empty text (not a number)."""
    m = pattern.search(line)
    return (m.group(1) or "", line) if m is not None else None


class ProgressLines:
    """The counter lines of one run as they arrive: (seconds since the window's start, value). The first
    figure that cannot be taken (checked_figure, Lines) ends the reading: error says why."""

    def __init__(self, spec, clock_origin):
        self.spec, self.pattern, self.origin = spec, spec.pattern(), clock_origin
        self.lines = Lines()
        self.samples = []
        self.kept = set()  # indices thinned() keeps whatever it drops: where a metered span ended (progress.py)
        self.error = None

    def keep_last_before(self, t):
        """The last sample at or before t (seconds since the window's start) is kept in the record: the energy
        code finds the span's end from the recorded samples as the farmer did from all of them."""
        found = [i for i, (when, _) in enumerate(list(self.samples)) if when <= t]
        if found:
            self.kept.add(found[-1])

    def feed(self, chunk, now):
        """Bytes of the run's stdout as they arrived at now."""
        if self.error is None:
            try:
                self._take(self.lines.push(chunk), now)
            except BadFigure as e:
                self.error = str(e)

    def end(self, now):
        """The run's stdout has ended: its last line, without a newline."""
        self.feed(b"", now)
        if self.error is None:
            try:
                self._take(self.lines.end(), now)
            except BadFigure as e:
                self.error = str(e)

    def _take(self, lines, now):
        for line in lines:
            found = _match(self.pattern, line)
            if found is not None:
                previous = self.samples[-1][1] if self.samples else None
                self.samples.append((round(now - self.origin, 6), checked_figure(self.spec, *found, previous)))

    @property
    def first_s(self):
        return self.samples[0][0] if self.samples else None

    def thinned(self):
        """At most MAX_SAMPLES samples (and those kept: keep_last_before), the first and the last always kept."""
        n = len(self.samples)
        if n <= MAX_SAMPLES:
            return [list(s) for s in self.samples]
        picks = sorted({round(i * (n - 1) / (MAX_SAMPLES - 1)) for i in range(MAX_SAMPLES)} | self.kept)
        return [list(self.samples[i]) for i in picks]

    def record(self):
        return {"samples": self.thinned(), "lines": len(self.samples), "error": self.error}

