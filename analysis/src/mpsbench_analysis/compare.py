"""Regression verdicts between a BASE and a NEW run, and the CI gate on them (compare_text.py shows them).

First the run contexts are compared (:mod:`context`): a different device
kind, GPU model or GPU count is an AnalysisError unless the caller allows
it; every other difference is a note in the report.  Results match on
kernel, precision, size, ranks_per_gpu and mode; each matching pair gets a
verdict from :mod:`regression_rule` on the repetitions of the primary aggregate
throughput, and so does the MPS gain wherever both runs measured mps and
timeslice.  A regression is: a SLOWER throughput, a SLOWER (smaller) MPS
gain, a result that failed in NEW but not in BASE, or one verified in BASE
and not in NEW.  Results in only one run are listed as added or removed.

The gate (:meth:`Comparison.gate_failures`) fails on a regression, on a
removed result or an incomplete NEW file (unless ``allow_missing``), and
on a NOISY verdict when ``fail_on_noisy``; added results never fail it.

Latency kernels (schema version 2) also get a verdict on the p99 request
latency, where higher is worse: the change of the record's overall p99
(``latency.overall.p99``), with the active ranks' own p99s
(``ranks[].latency_s.p99``) as the samples that give the evidence (non-
overlapping ranges with at least ``min_samples`` ranks a side, or
Mann-Whitney p < alpha); a SLOWER p99 is a regression.  Stream kernels are
judged on their bytes/s like any primary throughput.  Different kernel
parameters (``params``) make different configurations (added and removed),
explained by a note per kernel; a different ``--allreduce`` size or
``--mix`` is a context note (context.py).

Energy per unit of work that rose beyond the threshold, or vanished, is listed as notes
(energy_compare.py): they never change a verdict or the gate.

Where both files measured a configuration (a gain) in two rounds or more (mpsbench-sweep --rounds), the
rounds judge instead of the repetitions (round_figures.judge_rounds): a change is SLOWER or FASTER only
where it is beyond the threshold and its interval, from the two files' spreads between rounds, lies
wholly on that side of 1; otherwise NOISY. The gate judges every such figure at once (throughputs, MPS
gains, p99 latencies: 560 in README command 1), so each interval has the coverage that keeps all of them
right with 95 % (Bonferroni, core intervals.family_coverage): at 95 % each, two runs of one commit on one
H200 failed on 2 and 3 of 560 figures, as chance alone makes likely. Two runs of one commit on one GPU
model then pass the gate while a real 10 % slowdown of a stable configuration still fails it.

Where the two hosts' CPUs differ in speed by more than the threshold (the fastest CPU probe of each file's
records, ``cpu.reference_probe_s``), a context note says so: the rounds' intervals describe one machine, and
on three H200 machines of one day CPU-bound configurations moved with their hosts' CPUs (up to 11 %).

Each row carries the marks of its BASE and NEW result (quality.py: noise
above its target, clock-throttled repetitions; files without the noise and
clock fields get a computed noise figure and no throttle mark); a gain row
those of the two results it divides.  Marks never change a verdict or the
gate but one: a throughput whose slower side's CPU was slowed in at least
half of its repetitions is NOISY, not SLOWER or FASTER
(regression_rule.cpu_slowed). A NOISY verdict's reason also gives the two
noise figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from mpsbench_core.records import number
from mpsbench_core.stats import relative_noise
from mpsbench_core.units import format_percent

from .energy_compare import COLUMNS as ENERGY_COLUMNS, energy_notes
from .context import ContextDifference, context_differences, describe_device, differs_from_base
from .errors import AnalysisError
from .loader import KEY, ResultSet
from .quality import count_value, mark_tokens, marks_text
from .regression_rule import NOISY, SLOWER, Rule, cpu_slowed, judge
from .round_figures import gain_series, judge_rounds, latency_series, several, throughput_series
from .summary import GROUP, gain_table, sort_rows

#: The columns of Comparison.latency.
LATENCY_COLUMNS = KEY + ["verdict", "base_p99_s", "new_p99_s", "change", "p_value", "reason", "regression",
                         "base_ranks", "new_ranks"]


@dataclass
class Comparison:
    """Verdict tables of one BASE/NEW pair."""

    results: pd.DataFrame  # one row per matching result
    gains: pd.DataFrame  # one row per configuration with an MPS gain in both
    added: pd.DataFrame  # KEY columns of results only in NEW
    removed: pd.DataFrame  # KEY columns of results only in BASE
    rule: Rule
    context: list[ContextDifference] = field(default_factory=list)  # mismatches first, then notes
    device: str = ""  # BASE's device kind and GPUs, e.g. 'gpu, 1 x "NVIDIA H100 80GB HBM3"'
    new_complete: bool = True  # NEW's "complete" flag (False: the run was cut short)
    # one row per result with request latency in both (p99, higher is worse)
    latency: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=LATENCY_COLUMNS))
    # notes on energy per unit of work (energy_compare.py): never a regression
    energy: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=ENERGY_COLUMNS))

    @property
    def regressions(self) -> int:
        return int(self.results["regression"].sum() + self.gains["regression"].sum()
                   + self.latency["regression"].sum())

    @property
    def noisy(self) -> int:
        """NOISY verdicts, throughput, MPS gain and p99 latency."""
        return int((self.results["verdict"] == NOISY).sum() + (self.gains["verdict"] == NOISY).sum()
                   + (self.latency["verdict"] == NOISY).sum())

    def gate_failures(self, allow_missing: bool = False, fail_on_noisy: bool = False) -> list[str]:
        """Why the gate fails (exit 1), one phrase per reason; empty when it passes."""
        out = []
        if self.regressions:
            out.append(f"{self.regressions} regression{'s' if self.regressions != 1 else ''}")
        n = len(self.removed)
        if not allow_missing and (n or not self.new_complete):
            configs = f"{n} configuration{'s' if n != 1 else ''} of BASE"
            if self.new_complete:
                why = f"{configs} missing from NEW"
            else:
                why = 'NEW is incomplete ("complete": false)'
                why += f" and {configs} {'is' if n == 1 else 'are'} missing from it" if n else ""
            out.append(why + " (--allow-missing accepts that)")
        if fail_on_noisy and self.noisy:
            out.append(f"{self.noisy} NOISY verdict{'s' if self.noisy != 1 else ''} (--fail-on-noisy)")
        return out


def _verified_change(base_ok: bool, new_ok: bool) -> str:
    return {(True, True): "yes", (True, False): "yes->NO", (False, True): "no->yes", (False, False): "no"}[
        (base_ok, new_ok)]


#: Result columns that make a result's marks.
_QUALITY = ["noise", "noise_limit", "noisy", "throttled_repetitions", "repetitions", "cpu_slowed_repetitions"]

def _noise_note(reason: str, base_noise: float, new_noise: float) -> str:
    """A NOISY verdict's reason with the two noise figures: '...; noise 0.40% -> 3.10%'."""
    if not (math.isfinite(base_noise) or math.isfinite(new_noise)):
        return reason
    return f"{reason}; noise {format_percent(base_noise, 2)} -> {format_percent(new_noise, 2)}"


def _marks(p: pd.Series, side: str) -> str:
    return marks_text(mark_tokens(p[f"noisy_{side}"], p[f"noise_limit_{side}"], p[f"throttled_repetitions_{side}"],
                                  p[f"repetitions_{side}"], p[f"cpu_slowed_repetitions_{side}"]))


def _result_rows(base: pd.DataFrame, new: pd.DataFrame, rule: Rule, rounds: tuple[dict, dict],
                 figures: int) -> pd.DataFrame:
    cols = KEY + ["throughput_samples", "primary_unit", "status", "verified"] + _QUALITY
    pairs = base[cols].merge(new[cols], on=KEY, suffixes=("_base", "_new"))
    rows = []
    for _, p in pairs.iterrows():
        row = {k: p[k] for k in KEY}
        row.update(base_noise=float(p["noise_base"]), new_noise=float(p["noise_new"]),
                   base_marks=_marks(p, "base"), new_marks=_marks(p, "new"))
        row["unit"] = p["primary_unit_new"]
        row["verified"] = _verified_change(bool(p["verified_base"]), bool(p["verified_new"]))
        failed = p["status_new"] != "ok" or p["status_base"] != "ok"
        if failed:
            row.update(verdict="FAILED" if p["status_new"] != "ok" else "RECOVERED",
                       base_median=math.nan, new_median=math.nan, change=math.nan, p_value=math.nan,
                       reason=f"status {p['status_base']} -> {p['status_new']}")
        elif several(*(side.get(tuple(p[k] for k in KEY)) for side in rounds)):
            v = judge_rounds(*(side[tuple(p[k] for k in KEY)] for side in rounds), rule, figures=figures)
            row.update(verdict=v.verdict, base_median=v.base, new_median=v.new, change=v.change, p_value=math.nan,
                       reason=v.reason)
        else:
            v = judge(p["throughput_samples_base"], p["throughput_samples_new"], rule)
            reason = _noise_note(v.reason, row["base_noise"], row["new_noise"]) if v.verdict == NOISY else v.reason
            row.update(verdict=v.verdict, base_median=v.base_median, new_median=v.new_median,
                       change=v.change, p_value=v.p_value, reason=reason)
        machine = None if failed else cpu_slowed(row["verdict"], *(
            (count_value(p[f"cpu_slowed_repetitions_{side}"]), count_value(p[f"repetitions_{side}"]))
            for side in ("base", "new")))
        if machine:
            row.update(verdict=NOISY, reason=f"{machine}; {row['reason']}")
        lost = row["verified"] == "yes->NO" or (p["status_new"] != "ok" and p["status_base"] == "ok")
        row["regression"] = row["verdict"] == SLOWER or lost
        rows.append(row)
    return pd.DataFrame(rows)


def _gain_marks(rs: ResultSet, key: tuple, mode: str = "mps") -> str:
    """The marks of the ``mode`` and timeslice results a gain divides: noisy when either is (at the
    smaller target of those that are), throttled repetitions and repetitions summed."""
    r = rs.results
    same = pd.Series([tuple(k) == key for k in r[GROUP].itertuples(index=False)], index=r.index, dtype=bool)
    at = r[same & r["mode_label"].isin([mode, "timeslice"])]
    noisy = at[at["noisy"].astype(bool)]
    limit = float(noisy["noise_limit"].min()) if not noisy.empty else math.nan
    throttled = sum(count_value(v) for v in at["throttled_repetitions"])
    slowed = sum(count_value(v) for v in at["cpu_slowed_repetitions"])
    return marks_text(mark_tokens(not noisy.empty, limit, throttled, sum(count_value(v) for v in at["repetitions"]),
                                  slowed))


def _gain_rows(base: ResultSet, new: ResultSet, rule: Rule, rounds: tuple[dict, dict], figures: int) -> pd.DataFrame:
    gb, gn = gain_table(base), gain_table(new)
    rb, rn = rounds
    pairs = gb.merge(gn, on=GROUP, suffixes=("_base", "_new"))
    rows = []
    for _, p in pairs.iterrows():
        key = tuple(p[k] for k in GROUP)
        if several(rb.get(key), rn.get(key)):
            v = judge_rounds(rb[key], rn[key], rule, figures=figures)
            rows.append({**{k: p[k] for k in GROUP}, "verdict": v.verdict, "base_gain": v.base, "new_gain": v.new,
                         "change": v.change, "p_value": math.nan, "reason": v.reason,
                         "regression": v.verdict == SLOWER, "base_noise": rb[key].noise, "new_noise": rn[key].noise,
                         "base_marks": _gain_marks(base, key), "new_marks": _gain_marks(new, key)})
            continue
        if not p["gain_samples_base"] or not p["gain_samples_new"]:
            continue
        v = judge(p["gain_samples_base"], p["gain_samples_new"], rule)
        noise_b, noise_n = relative_noise(p["gain_samples_base"]), relative_noise(p["gain_samples_new"])
        rows.append({**{k: p[k] for k in GROUP}, "verdict": v.verdict, "base_gain": p["gain_base"],
                     "new_gain": p["gain_new"], "change": p["gain_new"] / p["gain_base"] - 1.0,
                     "p_value": v.p_value,
                     "reason": _noise_note(v.reason, noise_b, noise_n) if v.verdict == NOISY else v.reason,
                     "regression": v.verdict == SLOWER, "base_noise": noise_b, "new_noise": noise_n,
                     "base_marks": _gain_marks(base, key), "new_marks": _gain_marks(new, key)})
    columns = GROUP + ["verdict", "base_gain", "new_gain", "change", "p_value", "reason", "regression",
                       "base_noise", "new_noise", "base_marks", "new_marks"]
    return pd.DataFrame(rows, columns=columns)


def _latency_rows(base: pd.DataFrame, new: pd.DataFrame, rule: Rule, rounds: tuple[dict, dict],
                  figures: int) -> pd.DataFrame:
    """The p99 request latency of every result measured with latency in both runs, higher is worse (by the
    rounds where both files have two or more, as the throughputs)."""
    cols = KEY + ["latency_p99_s", "latency_rank_p99_s"]
    b = base[base["latency_p99_s"].notna() & (base["status"] == "ok")][cols]
    n = new[new["latency_p99_s"].notna() & (new["status"] == "ok")][cols]
    pairs = b.merge(n, on=KEY, suffixes=("_base", "_new"))
    rows = []
    for _, p in pairs.iterrows():
        p99_b, p99_n = float(p["latency_p99_s_base"]), float(p["latency_p99_s_new"])
        samples_b = list(p["latency_rank_p99_s_base"]) or [p99_b]
        samples_n = list(p["latency_rank_p99_s_new"]) or [p99_n]
        key = tuple(p[k] for k in KEY)
        if several(*(side.get(key) for side in rounds)):
            rv = judge_rounds(*(side[key] for side in rounds), rule, higher_is_better=False, figures=figures)
            verdict, change, p_value, reason = rv.verdict, rv.change, math.nan, rv.reason
        else:
            v = judge(samples_b, samples_n, rule, higher_is_better=False, values=(p99_b, p99_n), samples_word="ranks")
            verdict, change, p_value, reason = v.verdict, v.change, v.p_value, v.reason
        rows.append({**{k: p[k] for k in KEY}, "verdict": verdict, "base_p99_s": p99_b, "new_p99_s": p99_n,
                     "change": change, "p_value": p_value, "reason": reason, "regression": verdict == SLOWER,
                     "base_ranks": len(samples_b), "new_ranks": len(samples_n)})
    return pd.DataFrame(rows, columns=LATENCY_COLUMNS)


def _params_notes(base: pd.DataFrame, new: pd.DataFrame) -> list[ContextDifference]:
    """A note per kernel and precision whose parameters differ: their results do not match (other work)."""
    out = []

    def sets(df: pd.DataFrame) -> dict[tuple[str, str], set[str]]:
        found: dict[tuple[str, str], set[str]] = {}
        for kernel, precision, params in zip(df["kernel"], df["precision"], df["params"]):
            found.setdefault((kernel, precision), set()).add(params)
        return found

    sb, sn = sets(base), sets(new)
    for key in [k for k in sb if k in sn]:
        if sb[key] != sn[key]:
            show = lambda values: "; ".join(sorted(v or "(none)" for v in values))  # noqa: E731
            out.append(ContextDifference(f"params of {key[0]} {key[1]}", show(sb[key]), show(sn[key]), False))
    return out


def host_cpu_probe_s(rs: ResultSet) -> float | None:
    """The fastest CPU probe of any record's timed threads (cpu.reference_probe_s): the host CPU's speed at its
    best, for telling two hosts apart; None in files without CPU probes."""
    found = [number(r.raw["cpu"].get("reference_probe_s")) for r in rs.records()
             if isinstance(r.raw.get("cpu"), dict)]
    found = [v for v in found if v is not None and v > 0]
    return min(found) if found else None


def _host_cpu_note(base: ResultSet, new: ResultSet, rule: Rule) -> list[ContextDifference]:
    b, n = host_cpu_probe_s(base), host_cpu_probe_s(new)
    if b is None or n is None or abs(n / b - 1.0) <= rule.threshold:
        return []
    return [ContextDifference("host CPU (fastest CPU probe)", f"{b * 1e6:.2f} us", f"{n * 1e6:.2f} us ({n / b - 1.0:+.0%}: "
                              "changes of CPU-bound configurations may be the hosts')", False)]


def _check_context(diffs: list[ContextDifference], new_name: str, allow: bool) -> None:
    bad = [d for d in diffs if d.mismatch]
    if bad and not allow:
        raise AnalysisError(
            differs_from_base(bad) + " (comparing them is meaningless; --allow-context-mismatch compares anyway)",
            new_name)


def judged_by_rounds(series: list[tuple[dict, dict]]) -> int:
    """How many figures the gate judges by rounds at once: those both files measured in two rounds or more."""
    return sum(several(b.get(k), n.get(k)) for b, n in series for k in b.keys() & n.keys())


def compare(base: ResultSet, new: ResultSet, rule: Rule = Rule(),
            allow_context_mismatch: bool = False) -> Comparison:
    """Matches NEW against BASE.

    Raises AnalysisError when the contexts differ in device kind, GPU model
    or GPU count (unless ``allow_context_mismatch``), and when no result
    matches.  With several files on one side, the first file's context
    stands for that side.
    """
    base_ctx, new_ctx = next(iter(base.contexts.values()), {}), next(iter(new.contexts.values()), {})
    diffs = context_differences(base_ctx, new_ctx)
    _check_context(diffs, ", ".join(new.files), allow_context_mismatch)
    b, n = base.results, new.results
    keys_b = set(map(tuple, b[KEY].itertuples(index=False)))
    keys_n = set(map(tuple, n[KEY].itertuples(index=False)))
    if not keys_b & keys_n:
        def what(df: pd.DataFrame) -> str:
            return ", ".join(sorted({f"{k}/{p}" for k, p in zip(df["kernel"], df["precision"])}))
        raise AnalysisError(
            f"no result matches BASE on kernel, precision, size, ranks_per_gpu, mode and params "
            f"(BASE has {what(b)} in modes {', '.join(sorted(set(b['mode_label'])))}; NEW has {what(n)} "
            f"in modes {', '.join(sorted(set(n['mode_label'])))})", ", ".join(new.files))
    series = [(throughput_series(base), throughput_series(new)), (gain_series(base), gain_series(new)),
              (latency_series(base), latency_series(new))]
    figures = judged_by_rounds(series)
    results = sort_rows(_result_rows(b, n, rule, series[0], figures), KEY, "mode_label")
    added = pd.DataFrame(sorted(keys_n - keys_b, key=_sortable), columns=KEY)
    removed = pd.DataFrame(sorted(keys_b - keys_n, key=_sortable), columns=KEY)
    latency = _latency_rows(b, n, rule, series[2], figures)
    if not latency.empty:
        latency = sort_rows(latency, KEY, "mode_label")
    energy = energy_notes(b, n, rule.threshold)
    if not energy.empty:
        energy = sort_rows(energy, KEY, "mode_label")
    return Comparison(results, _gain_rows(base, new, rule, series[1], figures), added, removed, rule,
                      context=diffs + _params_notes(b, n) + _host_cpu_note(base, new, rule),
                      device=describe_device(base_ctx), new_complete=all(new.complete.values()), latency=latency,
                      energy=energy)


def _sortable(key: tuple) -> tuple:
    """A KEY tuple that sorts an application's null size among integer sizes."""
    return tuple((v is None, v if v is not None else 0) if i == KEY.index("size") else v for i, v in enumerate(key))
