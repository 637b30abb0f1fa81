"""The small agreement checks every kind of record is made of (consistency.py and its neighbours).

Each raises AnalysisError naming the file and the field that disagrees, with both numbers, because a
person fixing (or distrusting) a file needs to see which figure is off and by how much.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from mpsbench_core import modes
from mpsbench_core.stats import coefficient_of_variation, jain_fairness, median, relative_noise

from .errors import AnalysisError

#: The writers copy doubles exactly; this only absorbs a reader that does not.
REL_TOL = 1e-9
#: For figures the writer sums in another order than we do (and the schema's own slack on
#: jain_fairness's maximum).
SUM_TOL = 1e-6


def count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def short(value: Any) -> str:
    return "null" if value is None else repr(value)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=SUM_TOL, abs_tol=1e-300)


def check_summary(summary: dict[str, Any], repetitions: int, name: str, field: str) -> None:
    """One sample per repetition; median, min and max those of the samples."""
    samples = summary["samples"]
    if len(samples) != repetitions:
        raise AnalysisError(f"{count(len(samples), 'sample', 'samples')}, but repetitions is {repetitions}",
                            name, f"{field}.samples")
    for key, expected in (("median", median(samples)), ("min", min(samples)), ("max", max(samples))):
        if not math.isclose(summary[key], expected, rel_tol=REL_TOL):
            raise AnalysisError(f"{summary[key]!r} disagrees with its samples, whose {key} is {expected!r}",
                                name, f"{field}.{key}")


def check_count(items: list[Any], expected: int, what: str, ok: bool, name: str, field: str) -> None:
    """``expected`` entries; a failed record may have measured nothing, and then the array is empty."""
    if len(items) != expected and (ok or items):
        raise AnalysisError(f"{count(len(items), 'entry', 'entries')}, but {what} is {expected}", name, field)


def check_rates(samples: Sequence[float], work: Sequence[float], windows: Sequence[float], formula: str,
                name: str, field: str) -> None:
    """samples[i] = work[i] / windows[i] (0 for an empty window), in that order, as the writers compute it."""
    for i, (sample, done, window) in enumerate(zip(samples, work, windows)):
        want = done / window if window > 0 else 0.0
        if not math.isclose(sample, want, rel_tol=REL_TOL):
            raise AnalysisError(f"{sample!r} disagrees with {formula.replace('[i]', f'[{i}]')} = {want!r}",
                                name, f"{field}[{i}]")


def check_cv(value: float | None, samples: Sequence[float], name: str, field: str, of: str) -> None:
    if value is None or not samples:
        return
    cv = coefficient_of_variation(samples)
    if not math.isclose(value, cv, rel_tol=SUM_TOL, abs_tol=1e-12):
        raise AnalysisError(f"{value!r} disagrees with the CV of {of}, {cv!r}", name, field)


def check_jain(value: float | None, throughputs: Sequence[float], name: str, field: str, of: str) -> None:
    if value is None or not throughputs:
        return
    jain = jain_fairness(throughputs)
    if not math.isclose(value, jain, rel_tol=SUM_TOL):
        raise AnalysisError(f"{value!r} disagrees with Jain's index over {of}, {jain!r}", name, field)


def check_common(r: dict[str, Any], instances: str, name: str, where: str) -> None:
    """The counts every kind shares (consistency.py's module doc), and each instance's MPS client flag;
    ``instances``: the array of ranks or copies."""
    ok = r["status"] == "ok"
    check_count(r[instances], r["active_ranks"], "active_ranks", ok, name, f"{where}.{instances}")
    check_count(r["window_s"], r["repetitions"], "repetitions", ok, name, f"{where}.window_s")
    if r["active_ranks"] != r["ranks_per_gpu"] * r["devices"]:
        raise AnalysisError(f"{r['active_ranks']}, but ranks_per_gpu x devices is {r['ranks_per_gpu']} x "
                            f"{r['devices']} = {r['ranks_per_gpu'] * r['devices']}", name, f"{where}.active_ranks")
    mode = modes.mode(r["mode"])
    expected = mode.expects_mps_client if mode else None
    for j, instance in enumerate(r[instances]):
        if expected is not None and isinstance(instance["mps_enabled"], bool) and instance["mps_enabled"] != expected:
            raise AnalysisError(f"{str(instance['mps_enabled']).lower()}, but mode {r['mode']} runs "
                                f"{'MPS clients' if expected else 'no MPS client'}", name,
                                f"{where}.{instances}[{j}].mps_enabled")


def check_spread(r: dict[str, Any], primary: list[float] | None, name: str, where: str) -> None:
    """``aggregate_cv`` and the harness's ``noise`` figure against the primary samples (None: no aggregate)."""
    check_cv(r["aggregate_cv"], primary or [], name, f"{where}.aggregate_cv",
             f"aggregate.{r['primary_metric']}.samples")
    noise = r.get("noise")
    if isinstance(noise, dict) and primary and noise.get("estimator") == "median_se_normal":
        _check_noise(noise, primary, name, f"{where}.noise")


def _check_noise(noise: dict[str, Any], samples: list[float], name: str, where: str) -> None:
    relative = noise.get("relative")
    expected = relative_noise(samples) if len(samples) > 1 else None
    if isinstance(relative, (int, float)) and not isinstance(relative, bool):
        if expected is None or not math.isclose(relative, expected, rel_tol=SUM_TOL, abs_tol=1e-12):
            raise AnalysisError(f"{relative!r} disagrees with the relative noise of the primary samples, "
                                f"{expected!r}", name, f"{where}.relative")
        target, met = noise.get("target"), noise.get("met")
        if isinstance(target, (int, float)) and isinstance(met, bool) and met != (relative <= target):
            raise AnalysisError(f"{str(met).lower()}, but relative {relative!r} is "
                                f"{'within' if relative <= target else 'above'} target {target!r}", name,
                                f"{where}.met")


def check_latency_stats(stats: dict[str, Any], name: str, where: str) -> None:
    """p50 <= p95 <= p99 <= max and mean <= max (the percentiles of one set of requests)."""
    order = ["p50", "p95", "p99", "max"]
    for lower, upper in zip(order, order[1:]):
        if stats[lower] > stats[upper] and not close(stats[lower], stats[upper]):
            raise AnalysisError(f"{stats[lower]!r} is above {upper} {stats[upper]!r}", name, f"{where}.{lower}")
    if stats["mean"] > stats["max"] and not close(stats["mean"], stats["max"]):
        raise AnalysisError(f"{stats['mean']!r} is above max {stats['max']!r}", name, f"{where}.mean")


def check_latency(latency: dict[str, Any], ranks: list[dict[str, Any]], name: str, where: str) -> None:
    """``overall``'s figures in order, and its count that of every request of the ranks."""
    overall = latency["overall"]
    check_latency_stats(overall, name, f"{where}.overall")
    counts = [rank["latency_s"]["count"] for rank in ranks if rank.get("latency_s") is not None]
    if ranks and len(counts) == len(ranks) and overall["count"] != sum(counts):
        raise AnalysisError(f"{overall['count']}, but the ranks' latency_s.count add up to {sum(counts)}", name,
                            f"{where}.overall.count")
