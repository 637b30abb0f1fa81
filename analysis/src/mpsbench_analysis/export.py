"""Google Benchmark JSON, so tools built for it read suite results.

Google Benchmark's tools/compare.py and github-action-benchmark read
``benchmarks[]`` entries named ``family/args``; we mirror what
``--benchmark_repetitions=N`` writes: one ``iteration`` entry per repetition
followed by ``median``, ``mean`` and ``stddev`` aggregates.  real_time is the
shared window of the repetition divided by its iterations (every active rank
ran that many iterations inside the window), in ns.  There is no CPU time
in mpsbench results; cpu_time repeats real_time so tools that default to it
still compare the right quantity.
"""

from __future__ import annotations

import math
from typing import Any

from mpsbench_core.modes import sort_key as mode_sort_key

from .loader import ResultSet
from mpsbench_core.stats import mean, median, stdev

#: Counters per repetition: gbench counter name -> aggregate key in the results.
_COUNTERS = {"flop_per_second": "flop_per_s", "bytes_per_second": "byte_per_s", "items_per_second": "item_per_s"}


#: Counters of an application (kind app), which counts runs and nothing else.
_APP_COUNTERS = {"items_per_second": "run_per_s"}


def benchmark_name(row: Any) -> str:
    """``matmul/fp32/1024/ranks:4/mode:mps``; a kernel's parameters after the size
    (``hidden=2048,layers=4/``); an application: ``app/NAME/copies:4/mode:mps`` (no precision or size)."""
    if row["kind"] == "app":
        return f"app/{row['kernel']}/copies:{row['ranks_per_gpu']}/mode:{row['mode_label']}"
    params = row["params"] if "params" in row and isinstance(row["params"], str) and row["params"] else ""
    params = f"{params}/" if params else ""
    return (f"{row['kernel']}/{row['precision']}/{row['size']}/{params}ranks:{row['ranks_per_gpu']}"
            f"/mode:{row['mode_label']}")


def _context(rs: ResultSet) -> dict[str, Any]:
    first = next(iter(rs.contexts.values()))
    date = first["date_utc"]
    return {
        "date": date.replace("T", " ").replace("Z", "+00:00"),
        "host_name": ",".join(first["hosts"]),
        "executable": first["argv"][0] if first["argv"] else "mpsbench",
        "num_cpus": 0,
        "mhz_per_cpu": 0,
        "cpu_scaling_enabled": False,
        "caches": [],
        "load_avg": [],
        "library_build_type": "release",
        "library_version": f"mpsbench {first['version']}",
        "mpsbench": {name: {"git_commit": c["git_commit"], "git_dirty": c["git_dirty"], "date_utc": c["date_utc"],
                            "gpus": sorted({g["name"] for g in c["gpus"]}), "device": c["device"]["used"]}
                     for name, c in rs.contexts.items()},
    }


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _entries(row: Any, family: int) -> list[dict[str, Any]]:
    name = benchmark_name(row)
    if not row["window_s"]:  # a failed configuration that measured nothing
        return [{"name": name, "family_index": family, "per_family_instance_index": 0, "run_name": name,
                 "repetitions": 0, "threads": int(row["active_ranks"]), "time_unit": "ns",
                 "run_type": "iteration", "repetition_index": 0, "iterations": 0, "real_time": 0.0,
                 "cpu_time": 0.0, "error_occurred": True, "error_message": str(row["error"] or "failed")}]
    n = len(row["window_s"])
    # an application has no iterations (its copies complete different numbers of runs): a
    # repetition's entry is then its whole window, and items_per_second its runs/s
    iterations = 1 if _missing(row["iterations_per_repetition"]) else int(row["iterations_per_repetition"])
    times = [w / iterations * 1e9 for w in row["window_s"]]
    names = _APP_COUNTERS if row["kind"] == "app" else _COUNTERS
    counters = {c: [float(v) for v in row["aggregate"][key]["samples"]] for c, key in names.items()}
    common = {"family_index": family, "per_family_instance_index": 0, "run_name": name, "repetitions": n,
              "threads": int(row["active_ranks"]), "time_unit": "ns"}
    out = []
    for i in range(n):
        entry = {"name": name, **common, "run_type": "iteration", "repetition_index": i,
                 "iterations": iterations, "real_time": times[i], "cpu_time": times[i]}
        entry.update({c: values[i] for c, values in counters.items() if i < len(values)})
        if row["status"] != "ok":
            entry["error_occurred"] = True
            entry["error_message"] = str(row["error"] or "failed")
        out.append(entry)
    for agg, fn in (("median", median), ("mean", mean), ("stddev", stdev)):
        t = fn(times)
        entry = {"name": f"{name}_{agg}", **common, "run_type": "aggregate", "aggregate_name": agg,
                 "aggregate_unit": "time", "iterations": n, "real_time": t, "cpu_time": t}
        entry.update({c: fn(values) for c, values in counters.items() if values})
        out.append(entry)
    return out


def to_gbench(rs: ResultSet) -> dict[str, Any]:
    """The Google Benchmark document for every result of ``rs``."""
    r = rs.results.copy()
    r["_mode"] = r["mode_label"].map(mode_sort_key)
    r = r.sort_values(["kernel", "precision", "params", "size", "ranks_per_gpu", "_mode"], kind="stable")
    benchmarks: list[dict[str, Any]] = []
    for family, (_, row) in enumerate(r.iterrows()):
        benchmarks += _entries(row, family)
    return {"context": _context(rs), "benchmarks": benchmarks}


__all__ = ["to_gbench", "benchmark_name"]
