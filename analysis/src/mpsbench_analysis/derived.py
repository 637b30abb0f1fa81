"""Every derived field of a results record, re-derived from the record's own measurements with the core's functions
and compared with the file: one table (:data:`FIELDS`), one loop (:func:`check_fields`).  A disagreeing file is
refused with one line naming the field (its path from the document's root) and both numbers.

An entry is a field (a path in one record: ``{i}`` a repetition, ``{j}`` a rank, ``{c}`` a copy, ``{t}`` a tenant,
``{key}`` an aggregate figure, ``{stat}`` median/min/max), the core function (mpsbench_core: stats, derivations,
speedup, app_energy; the writers derive with the same) of the record's measurements that derives it, its words
for the refusal, and its tolerance.  A derived None: nothing to derive it from (then the file's must be null
where the entry says so); :data:`SKIP`: its source is not in the file; a :class:`Range` or a tuple: any value in
it agrees.  rules.py's structural rules run first, so that a field is derived from what has its shape.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from itertools import product
from string import Formatter
from typing import Any, Callable, Iterator

from mpsbench_core import derivations as d
from mpsbench_core.app_energy import per_unit
from mpsbench_core.energy import ACTIVITY_FIELDS, rate_unit
from mpsbench_core.records import kind_of
from mpsbench_core.stats import coefficient_of_variation, jain_fairness, relative_noise, summary

from .run_index import NOT_IN_FILE, Run

#: The writers copy doubles exactly; this only absorbs a reader that does not.
REL_TOL = 1e-9
#: For figures the writer sums in another order than we do (and the schema's own slack on jain_fairness).
SUM_TOL = 1e-6
#: How far mean_power_w x the kept time may be from joules (the meter's spans are not the windows exactly).
POWER_TOL = 0.05
#: Nothing in the file to derive the field from: it is not checked.
SKIP = NOT_IN_FILE
MISSING = object()
KINDS = ("kernel", "mix", "app")
#: The primary metric of an application's own figure.
METRIC = "metric_per_s"


@dataclass(frozen=True)
class Range:
    low: float
    high: float


#: The words of a refusal, a template of {w} (the file's value), {d} (the derived one), {formula} (the entry's
#: words for its derivation) and the entry's placeholders; an entry gives its own where these do not read.
IS, COMMA = "{w} disagrees with {formula} is {d}", "{w} disagrees with {formula}, {d}"
NULL, NO_SOURCE = "null, but {formula} is {d}", "{w}, but there is no {formula} to derive it from"


@dataclass(frozen=True)
class Field:
    path: str
    derive: Callable[[dict, dict, Run], Any]
    formula: str | Callable[[dict, dict, Run], str]
    kinds: tuple[str, ...] = KINDS
    tol: float = SUM_TOL
    abs_tol: float = 0.0
    says: str = "{w} disagrees with {formula} = {d}"  # the file's number and the derived one disagree
    null_too: bool = False  # a null in the file must be a None derived (and the other way round)
    null: str = NULL  # with null_too: the file's is null, the derived one a number
    absent: str | Callable[[dict, dict, Run], str] | None = None  # the file's a number, but None derived


def at(node: Any, path: str) -> Any:
    """The value at ``path`` ("a.b[2].c") inside ``node``; MISSING where a step is absent or null."""
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        if node is None:
            return MISSING
        if index:
            if not isinstance(node, list) or int(index) >= len(node):
                return MISSING
            node = node[int(index)]
        elif not isinstance(node, dict) or name not in node:
            return MISSING
        else:
            node = node[name]
    return node


def _primary(r: dict[str, Any]) -> list[float]:
    summary_ = (r.get("aggregate") or {}).get(r.get("primary_metric"))
    return list(summary_["samples"]) if isinstance(summary_, dict) else []


def _own_figures(r: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Each copy's own figure (app.metric), or None where some copy has none."""
    figures = [c.get("metric_per_s") for c in r.get("copies") or []]
    return figures if figures and all(f is not None for f in figures) else None


def _samples_of(prefix: str) -> Callable[[dict, dict, Run], Any]:
    def derive(r: dict, ix: dict, _run: Run) -> Any:
        samples = at(r, prefix.format(**ix))["samples"]
        return summary(samples)[ix["stat"]] if samples else SKIP
    return derive


#: Every place that holds a summary of repetitions (or of ranks): its median, min and max are its samples'.
SUMMARIES = ("aggregate.{key}", "ranks[{j}].iteration_time_s", "ranks[{j}].gpu_iteration_time_s",
             "ranks[{j}].collective_time_s", "collective.time_per_iteration_s", "tenants[{t}].throughput",
             "copies[{c}].run_time_s", "copies[{c}].metric_per_s", "copies[{c}].startup_s")


def _kernel_rate(r: dict, ix: dict, _run: Run) -> Any:
    if kind_of(r) == "mix" or r["iterations_per_repetition"] is None or ix["key"] not in _WORK:
        return SKIP  # a mix's aggregate adds its tenants' work at iteration counts not in the file
    work = r["work_per_iteration"][_WORK[ix["key"]]]
    total = d.kernel_work(r["active_ranks"], r["iterations_per_repetition"], work)
    return d.rate_samples([total], [r["window_s"][ix["i"]]])[0]


_WORK = {"flop_per_s": "flop", "byte_per_s": "byte", "item_per_s": "items"}


def _app_rate(r: dict, ix: dict, _run: Run) -> Any:
    if ix["key"] != "run_per_s":
        return SKIP
    runs = r["app"]["runs_per_repetition"]
    return d.rate_samples([float(runs[ix["i"]])], [r["window_s"][ix["i"]]])[0]


def _metric_sum(r: dict, ix: dict, _run: Run) -> Any:
    figures = _own_figures(r)
    if ix["key"] != METRIC or r["primary_metric"] != METRIC or figures is None:
        return SKIP
    return math.fsum(f["samples"][ix["i"]] for f in figures)


def _jain_over(r: dict) -> tuple[str, list[float]] | None:
    """(what, values) Jain's index of the record is over; None where it is over nothing (a mix's ranks of
    different tenants do different work: its index says nothing)."""
    if kind_of(r) == "kernel":
        return "ranks[].throughput_per_s", [rank["throughput_per_s"] for rank in r["ranks"]]
    if kind_of(r) == "app" and r["primary_metric"] != METRIC:
        return "copies[].throughput_per_s", [c["throughput_per_s"] for c in r["copies"]]
    medians = _copy_medians(r) if kind_of(r) == "app" else None
    return ("copies[].metric_per_s.median", medians) if medians else None


def _noise(r: dict, _ix: dict, _run: Run) -> Any:
    samples = _primary(r)
    if r["noise"].get("estimator") != "median_se_normal" or not samples:
        return SKIP
    return relative_noise(samples) if len(samples) > 1 else None


def _fraction(r: dict, _ix: dict, _run: Run) -> Any:
    timed = [rank for rank in r["ranks"] if rank.get("collective_time_s") is not None]
    if not timed:
        return SKIP
    return d.fraction_of_iteration(r["collective"]["time_per_iteration_s"]["median"],
                                   [rank["iteration_time_s"]["median"] for rank in timed])


def _latency_count(ranks: list[dict]) -> Any:
    counts = [rank["latency_s"]["count"] for rank in ranks if rank.get("latency_s") is not None]
    return sum(counts) if ranks and len(counts) == len(ranks) else SKIP


def _copy_medians(r: dict) -> list[float] | None:
    figures = _own_figures(r)
    return [f["median"] for f in figures] if figures and r["primary_metric"] == METRIC else None


def _joules_per_unit(r: dict, _ix: dict, _run: Run) -> Any:
    """An application's work: exactly core app_energy.per_unit; else the kept repetitions' work at their rates,
    where the windows give it (kernel, mix) and/or over the metered span at the rates' range."""
    e = r["energy"]
    if not e.get("available") or r.get("status") != "ok" and e.get("work") is None:
        return SKIP
    if e.get("work") is not None:
        return per_unit(e["joules"], e["work"])
    samples, windows, app = _primary(r), r.get("window_s") or [], kind_of(r) == "app"
    accepted = []
    if not app and samples and len(samples) == len(windows) and d.kept_work(samples, windows) > 0:
        accepted.append(e["joules"] / d.kept_work(samples, windows))
    rate = rate_unit(r.get("primary_unit") or "") if app else None
    if isinstance(e.get("span_s"), (int, float)):
        over_span = d.per_unit_over_span(e["joules"], samples, e["span_s"], rate[1] if rate else 1.0)
        accepted += [Range(*over_span)] if over_span else []
    if not accepted:
        return None if samples and not app else SKIP
    return tuple(accepted)


def _per_unit_formula(r: dict, _ix: dict, _run: Run) -> str:
    e = r["energy"]
    if e.get("work") is not None:
        return "core app_energy.per_unit(joules, work)"
    span = f": over span_s {e['span_s']!r} s at their rates or" if isinstance(e.get("span_s"), (int, float)) else ""
    return (f"joules / the work of the kept repetitions{span} (Σ aggregate.{r.get('primary_metric')}.samples[i] x "
            "window_s[i])")


def _mean_power(r: dict, _ix: dict, _run: Run) -> Any:
    e, windows = r["energy"], r.get("window_s") or []
    times = [t for t in (math.fsum(windows), e.get("span_s")) if t]
    return tuple(e["joules"] / t for t in times) if e.get("available") and times else SKIP


def _joules_per_run(r: dict, _ix: dict, _run: Run) -> Any:
    runs = (r.get("app") or {}).get("runs_per_repetition")
    if not r["energy"].get("available") or not isinstance(runs, list) or r.get("status") != "ok":
        return SKIP
    return per_unit(r["energy"]["joules"], sum(runs))


def _activity(r: dict, ix: dict, _run: Run) -> Any:
    a = r["gpu_activity"]
    theirs = [g[ix["gpu_figure"]] for g in a.get("per_gpu") or [] if g.get(ix["gpu_figure"]) is not None]
    return Range(min(theirs), max(theirs)) if a.get("available") and theirs else SKIP


#: The derived fields (module doc), in the order they are checked: a summary before what derives from it.
FIELDS = (
    *(Field(prefix + ".{stat}", _samples_of(prefix), "its samples, whose {stat}", tol=REL_TOL, says=IS)
      for prefix in SUMMARIES),
    Field("aggregate_cv", lambda r, ix, run: coefficient_of_variation(_primary(r)) if _primary(r) else SKIP,
          "the CV of aggregate.{r[primary_metric]}.samples", abs_tol=1e-12, says=COMMA),
    Field("noise.relative", _noise, "the relative noise of the primary samples", abs_tol=1e-12, says=COMMA,
          absent="{w}, but there are fewer than two primary samples (no spread to estimate)"),
    Field("aggregate.{key}.samples[{i}]", _kernel_rate, ("active_ranks x iterations_per_repetition x "
          "work_per_iteration.{work} / window_s[{i}]"), kinds=("kernel",), tol=REL_TOL),
    Field("aggregate.{key}.samples[{i}]", _app_rate, "app.runs_per_repetition[{i}] / window_s[{i}]", kinds=("app",),
          tol=REL_TOL),
    Field("aggregate.{key}.samples[{i}]", _metric_sum, "the sum over the copies of copies[].metric_per_s.samples[{i}]",
          kinds=("app",), says=COMMA),
    Field("jain_fairness", lambda r, ix, run: jain_fairness(_jain_over(r)[1]) if _jain_over(r) and _jain_over(r)[1]
          else SKIP, lambda r, ix, run: f"Jain's index over {_jain_over(r)[0]}", says=COMMA),
    Field("app.runs_per_hour", lambda r, ix, run: d.runs_per_hour(r["aggregate"]["run_per_s"]["median"])
          if r["aggregate"] else None, "aggregate.run_per_s.median x 3600", kinds=("app",), tol=REL_TOL,
          null_too=True, absent="{w}, but the record measured no runs per second (aggregate is null)"),
    Field("app.metric.jain_fairness", lambda r, ix, run: jain_fairness(_copy_medians(r)) if _copy_medians(r)
          else SKIP, "Jain's index over copies[].metric_per_s.median", kinds=("app",), says=COMMA),
    Field("app.metric.copy_spread", lambda r, ix, run: d.copy_spread(_copy_medians(r)) if _copy_medians(r)
          else SKIP, "(largest - smallest) / mean of copies[].metric_per_s.median", kinds=("app",), abs_tol=1e-12,
          says=COMMA),
    Field("collective.fraction_of_iteration", _fraction, "time_per_iteration_s.median / the median of the ranks' "
          "iteration_time_s.median", kinds=("kernel", "mix"), abs_tol=1e-12, says=COMMA),
    *(Field(path, lambda r, ix, run: _latency_count([rank for rank in r["ranks"] if "t" not in ix or
          rank.get("tenant") == ix["t"]]), "the ranks' latency_s.count", kinds=kinds, tol=0.0,
          says="{w}, but {formula} add up to {d}")
      for path, kinds in (("latency.overall.count", ("kernel", "mix")), ("tenants[{t}].latency.overall.count",
                                                                        ("mix",)))),
    Field("tenants[{t}].slowdown", lambda r, ix, run: d.ratio(r["tenants"][ix["t"]]["alone_throughput"],
          r["tenants"][ix["t"]]["throughput"]["median"]), "alone_throughput / throughput.median", kinds=("mix",),
          null_too=True),
    Field("tenants[{t}].latency_p99_ratio", lambda r, ix, run: d.ratio(
          (at(r, f"tenants[{ix['t']}].latency.overall.p99") if at(r, f"tenants[{ix['t']}].latency") else None),
          r["tenants"][ix["t"]]["alone_latency_p99_s"] or None), "latency.overall.p99 / alone_latency_p99_s",
          kinds=("mix",), null_too=True),
    Field("energy.mean_power_w", _mean_power, "joules / the kept window time or span_s", tol=POWER_TOL),
    Field("energy.joules_per_unit", _joules_per_unit, _per_unit_formula, absent="{w} disagrees with {formula}"),
    Field("energy.joules_per_run", _joules_per_run, "joules / the runs counted (Σ app.runs_per_repetition)",
          kinds=("app",)),
    Field("gpu_activity.{gpu_figure}", _activity, "the GPUs' (per_gpu[].{gpu_figure}) range", abs_tol=1e-9,
          says="{w}, but {formula} from {d}: a mean lies between"),
)

#: Figures a record takes from another record of the same run (run_index.py finds it).
ACROSS_RECORDS = (
    *(Field(key, lambda r, ix, run: run.speedup(r), lambda r, ix, run: (
            f"the primary median over that of results[{run.one_per_gpu(r)[0]}] (one per GPU)"), says=COMMA,
            absent=lambda r, ix, run, key=key: f"{show(at(r, key))}, but {run.why_no_speedup(r)}")
      for key in ("speedup_vs_one_rank_per_gpu", "speedup_vs_one_copy_per_gpu")),
    *(Field(f"tenants[{{t}}].{field}", lambda r, ix, run, field=field: run.alone(r, ix["t"], field),
            lambda r, ix, run: run.alone_text(r, ix["t"]), kinds=("mix",), null_too=True,
            **dict.fromkeys(("says", "null", "absent"), "{w}, but {formula} measured {d}"))
      for field in ("alone_throughput", "alone_latency_p99_s")),
)

_INDICES: dict[str, Callable[[dict], Any]] = {
    "i": lambda r: range(len(r.get("window_s") or [])),
    "j": lambda r: range(len(r.get("ranks") or [])),
    "c": lambda r: range(len(r.get("copies") or [])),
    "t": lambda r: range(len(r.get("tenants") or [])),
    "key": lambda r: [k for k, summary in (r.get("aggregate") or {}).items() if isinstance(summary, dict)],
    "stat": lambda r: ("median", "min", "max"),
    "gpu_figure": lambda r: ACTIVITY_FIELDS,
}


def number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _agrees(written: float, derived: Any, f: Field) -> bool:
    if isinstance(derived, tuple):
        return any(_agrees(written, one, f) for one in derived)
    slack = f.tol * abs(written) + f.abs_tol
    if isinstance(derived, Range):
        return derived.low - slack <= written <= derived.high + slack
    return math.isclose(written, derived, rel_tol=f.tol, abs_tol=max(f.abs_tol, 1e-300 if f.tol else 0.0))


def show(x: Any) -> str:
    if isinstance(x, tuple):
        return " or ".join(show(one) for one in x)
    if isinstance(x, Range):
        return f"{x.low!r} to {x.high!r}"
    return "null" if x is None else repr(x)


def _text(part: str | Callable, r: dict, ix: dict, run: Run, **words: str) -> str:
    return part(r, ix, run) if callable(part) else part.format(r=r, **ix, **words)


def refusal(f: Field, r: dict, ix: dict, run: Run) -> str | None:
    """Why the field at ``ix`` of ``r`` disagrees with what the entry derives, or None where it agrees."""
    path = f.path.format(**ix)
    written = at(r, path)
    if written is MISSING or not (written is None or number(written)):
        return None  # absent, or of another type: the schema's and rules.py's to refuse
    derived = f.derive(r, ix, run)
    if derived is SKIP or (written is None and (derived is None or not f.null_too)):
        return None
    absent = f.absent or (NO_SOURCE if f.null_too else None)
    if derived is None and absent is None or written is not None and derived is not None and \
            _agrees(written, derived, f):
        return None
    template = f.null if written is None else absent if derived is None else f.says
    return _text(template, r, ix, run, w=show(written), d=show(derived), formula=_text(f.formula, r, ix, run))


def fields_of(path: str, r: dict) -> list[dict[str, Any]]:
    """Every index assignment of the placeholders of ``path`` in ``r`` (one empty one for a plain path)."""
    names = [name for _, name, _, _ in Formatter().parse(path) if name]
    return [dict(zip(names, values)) for values in product(*(_INDICES[n](r) for n in names))]


def refusals(r: dict[str, Any], table: tuple[Field, ...], run: Run) -> Iterator[tuple[str, str]]:
    """(field, why) of each field of ``table`` in ``r`` that disagrees with its derivation (rules.Refusals)."""
    for f in table:
        for ix in fields_of(f.path, r) if kind_of(r) in f.kinds else ():
            why = refusal(f, r, dict(ix, work=_WORK.get(ix.get("key"), "")), run)
            if why is not None:
                yield f.path.format(**ix), why
