"""A farmed program's own figure of merit: what --app-metric and --app-progress read from its output.

--app-metric REGEX: the first capture group of the last line of a run's stdout that REGEX matches
(re.search) is that run's rate, in --app-metric-unit (ns/day, it/s, images/s). The farmer reads the
run's stdout file after the window (outside the timing).

--app-progress REGEX: the first capture group is a cumulative counter (steps, iterations, samples)
that the program prints as it goes. The farmer reads the run's stdout through a pipe as it runs and
timestamps each matching line when it arrives (ProgressLines); the rate comes later, from every
copy's lines together (figures.py).

Both: a number is ASCII decimal ("12", "3.5", "1e6", "-2"), thousands separators "," or "_" allowed
("5,882"); a match whose group is not one is a failure naming the
pattern and the text, never a silent zero.
"""
import math
import re
from dataclasses import dataclass

from ..inputs import InputError
from ..text import printable, quoted

METHODS = ("metric", "progress")
# ASCII decimal, as the sweep reads every number (inputs.py): float() alone would take "٣" for 3.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
DEFAULT_UNIT = "units/s"
MAX_PATTERN = 1000
MAX_UNIT = 40
MAX_SAMPLES = 2000       # counter lines kept per run (evenly thinned): enough to interpolate within 0.1 %
MAX_LINE_BYTES = 1 << 20  # a longer "line" is read in pieces; a counter line is never that long
# Time units a rate may be per, in seconds (for the energy per unit of work: energy.py).
PER = {"s": 1.0, "sec": 1.0, "second": 1.0, "min": 60.0, "minute": 60.0, "h": 3600.0, "hr": 3600.0,
       "hour": 3600.0, "day": 86400.0, "d": 86400.0}


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


def lines_of(chunk):
    """The text lines of one chunk read up to a newline; carriage returns (progress bars) end lines too."""
    return chunk.decode(errors="replace").splitlines()


def scan_rate(path, pattern):
    """(value, matched line) of the last line of the file that pattern matches; (None, None) without one.
    A match whose group is not a number gives (None, that line)."""
    last = None
    try:
        with open(path, "rb") as f:
            while True:
                chunk = f.readline(MAX_LINE_BYTES)
                if not chunk:
                    break
                for line in lines_of(chunk):
                    m = pattern.search(line)
                    if m is not None:
                        last = (m.group(1), line)
    except OSError:
        return None, None
    if last is None:
        return None, None
    return number(last[0]), printable(last[1].strip())[:200]


class ProgressLines:
    """The counter lines of one run as they arrive: (seconds since the window's start, value)."""

    def __init__(self, pattern, clock_origin):
        self.pattern, self.origin = pattern, clock_origin
        self.samples = []
        self.bad = None          # the first matching line whose group is not a number
        self.went_down = None    # (before, after) the first time the counter decreased

    def feed(self, chunk, now):
        for line in lines_of(chunk):
            m = self.pattern.search(line)
            if m is None:
                continue
            value = number(m.group(1))
            if value is None:
                self.bad = self.bad or printable(line.strip())[:200]
                continue
            if self.samples and value < self.samples[-1][1] and self.went_down is None:
                self.went_down = (self.samples[-1][1], value)
            self.samples.append((round(now - self.origin, 6), value))

    @property
    def first_s(self):
        return self.samples[0][0] if self.samples else None

    def thinned(self):
        """At most MAX_SAMPLES samples, the first and the last always kept."""
        n = len(self.samples)
        if n <= MAX_SAMPLES:
            return [list(s) for s in self.samples]
        picks = sorted({round(i * (n - 1) / (MAX_SAMPLES - 1)) for i in range(MAX_SAMPLES)})
        return [list(self.samples[i]) for i in picks]

    def record(self):
        return {"samples": self.thinned(), "lines": len(self.samples), "bad_line": self.bad,
                "went_down": list(self.went_down) if self.went_down else None}


def work_unit(unit):
    """(unit of work, seconds per time unit) of a rate unit: 'ns/day' -> ('ns', 86400), 'steps/s' ->
    ('steps', 1), 'run/s' -> ('run', 1); None when the unit is not something per a time unit."""
    work, sep, per = unit.rpartition("/")
    if not sep or not work.strip():
        return None
    seconds = PER.get(per.strip().lower())
    return (work.strip(), seconds) if seconds else None
