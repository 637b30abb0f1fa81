"""Reads mpsbench results files into tidy DataFrames.

One row per configuration in ``ResultSet.results`` and one row per rank (copy, for an application) of it in
``ResultSet.ranks`` (rows.py says what each column is), so that every later step is a pandas group-by
rather than a walk over nested JSON. A configuration measured in several rounds (mpsbench-sweep --rounds:
one record per round) is one row there: its figure over the rounds (core rounds.py: the geometric mean of
the usable rounds' medians) in ``throughput``, every usable round's repetitions in ``throughput_samples``,
the rounds' medians in ``round_throughputs``, the other columns (and its rank rows) those of its
representative round; ``ResultSet.round_results`` keeps one row per record.  Files are validated first (validate.py: the schema of their
version, then the agreement of every derived field), records of older versions take the version-3 shape
(legacy.py), and every problem is reported as an AnalysisError naming the file and the field, because a
user with a broken file needs to know where to look, not a traceback.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from mpsbench_core import rounds as core_rounds
from mpsbench_core.records import Result, params_text, results_of
from mpsbench_core.stats import coefficient_of_variation

from .errors import AnalysisError
from .energy import OBJECT_COLUMNS as ENERGY_OBJECT_COLUMNS
from .legacy import upgraded_document
from .rows import LATENCY_FIELDS, result_rows
from .validate import SCHEMA_NAME, SCHEMA_VERSION, SUPPORTED_VERSIONS, load_document, schema

__all__ = ["KEY", "LATENCY_FIELDS", "ResultSet", "SCHEMA_NAME", "SCHEMA_VERSION", "SUPPORTED_VERSIONS",
           "load_document", "load_results", "params_text", "result_rows", "schema"]

#: What identifies one configuration; two results with the same key are the same measurement (compared
#: across files, merged within a run).  ``kind`` keeps an application apart from a kernel of its name;
#: ``params`` is the kernel's parameters as text (core records.params_text, "" for none and in
#: version-1 files), so a run with other parameters is another configuration.
KEY = ["kind", "kernel", "precision", "size", "ranks_per_gpu", "mode_label", "params"]

#: Counts that are None where unknown (older files), kept as integers next to them.
_OPTIONAL_COUNTS = ("throttled_repetitions", "discarded_repetitions", "warmup_windows", "latency_count",
                    "collective_bytes", "collective_checked_values", "tenant_count", "cpu_slowed_repetitions",
                    "cpu_discarded_repetitions")


@dataclass
class ResultSet:
    """Results of one or more files.

    results: one row per result (see rows.py for the columns).
    ranks: one row per active rank (an application: per copy) of each result, keyed like ``results``
        plus ``rank``; ``result_id`` links a rank row to its result row.
    contexts: each file's ``context`` object, by file name, in load order.
    complete: each file's top-level ``complete`` flag, by file name.
    documents: each file's validated document in the version-3 shape, by file name (what the verdicts
        of core read, :meth:`records`).
    """

    results: pd.DataFrame
    ranks: pd.DataFrame
    round_results: pd.DataFrame = field(default_factory=pd.DataFrame)  # one row per record (per round)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    complete: dict[str, bool] = field(default_factory=dict)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def files(self) -> list[str]:
        return list(self.contexts)

    def records(self) -> list[Result]:
        """Every record as core's typed Result, in file and record order."""
        return results_of(list(self.documents.values()))


def _sizes_as_written(df: pd.DataFrame) -> None:
    """Integer sizes stay integers next to an application's null ones (pandas would make floats of all)."""
    if "size" in df and df["size"].isna().any():
        df["size"] = pd.Series([None if pd.isna(v) else int(v) for v in df["size"]], index=df.index, dtype=object)


def _check_duplicates(results: pd.DataFrame) -> None:
    dup = results[results.duplicated(KEY + ["round"], keep=False)]
    if dup.empty:
        return
    first = dup.iloc[0]
    # tuples, not a column-wise ==, so that two null sizes (applications) count as equal; the round too, or
    # the same configuration's next round in the first file would be named as the duplicate
    same_as = KEY + ["round"]
    same = dup[[tuple(k) == tuple(first[same_as]) for k in dup[same_as].itertuples(index=False)]]
    later = same.iloc[1]
    what = ", ".join(f"{k}={first[k]}" for k in KEY + ["round"] if k not in ("params", "precision", "round") or first[k])
    hint = ("; several runs of one suite are compared with mpsbench-analyze agree"
            if later["file"] != first["file"] else "")
    raise AnalysisError(
        f"duplicate result ({what}); already in {first['file']} results[{first['index']}]{hint}",
        later["file"], f"results[{later['index']}]")


def load_results(paths: Iterable[str | Path]) -> ResultSet:
    """Loads and merges results files (e.g. one per mode) into one ResultSet.

    Raises AnalysisError on the first bad file, on a file without results,
    and on a configuration that appears twice, since silently picking one of
    two measurements would make every number after it arbitrary.
    """
    rows: list[dict[str, Any]] = []
    rank_rows: list[dict[str, Any]] = []
    contexts: dict[str, dict[str, Any]] = {}
    complete: dict[str, bool] = {}
    documents: dict[str, dict[str, Any]] = {}
    paths = list(paths)
    if not paths:
        raise AnalysisError("no results files given")
    for path in paths:
        name = str(path)
        if name in contexts:
            raise AnalysisError("file given twice", name)
        doc = load_document(path)
        if not doc["results"]:
            raise AnalysisError("no results in the file (empty run)", name, "results")
        doc = upgraded_document(doc)
        r, rr = result_rows(doc, name)
        rows += r
        rank_rows += rr
        contexts[name] = doc["context"]
        complete[name] = bool(doc["complete"])
        documents[name] = doc
    results = pd.DataFrame(rows)
    _sizes_as_written(results)
    for column in _OPTIONAL_COUNTS:  # Python ints and None: pandas would make floats of them
        results[column] = pd.Series([row[column] for row in rows], index=results.index, dtype=object)
    for column in ("tenants", "param_values", "collective_ok") + ENERGY_OBJECT_COLUMNS:  # lists, dicts, True/False/None
        results[column] = pd.Series([row[column] for row in rows], index=results.index, dtype=object)
    _check_duplicates(results)
    results["result_id"] = range(len(results))
    round_results = results
    results = _over_rounds(results, documents)
    ranks = pd.DataFrame(rank_rows)
    _sizes_as_written(ranks)
    if len(ranks):
        for column in ("latency_count", "tenant"):
            ranks[column] = pd.Series([row[column] for row in rank_rows], index=ranks.index, dtype=object)
    ids = results.set_index(["file", "index"])["result_id"]
    if len(ranks):
        ranks = ranks[[(f, i) in ids.index for f, i in zip(ranks["file"], ranks["index"])]].reset_index(drop=True)
    ranks["result_id"] = [ids[(f, i)] for f, i in zip(ranks["file"], ranks["index"])]
    return ResultSet(results=results, ranks=ranks, round_results=round_results, contexts=contexts, complete=complete,
                     documents=documents)


#: Counts a configuration over its rounds adds up (its marks then say K of all N repetitions).
_SUMMED = ("repetitions", "throttled_repetitions", "discarded_repetitions", "cpu_slowed_repetitions",
           "cpu_discarded_repetitions")


def _sum_counts(values: Iterable[Any]) -> int | None:
    """The sum of the known counts; None when none is known (an older file)."""
    known = [int(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(known) if known else None


def _over_rounds(rows: pd.DataFrame, documents: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """One row per configuration (module doc), by core's definition of a configuration over its rounds."""
    where = {}
    found = []
    for name, doc in documents.items():
        for index, result in enumerate(results_of([doc])):
            where[id(result.raw)] = (name, index)
            found.append(result)
    position = {(f, i): n for n, (f, i) in enumerate(zip(rows["file"], rows["index"]))}
    keep, figures, samples, medians, counts, verified, groups = [], [], [], [], [], [], []
    for config in core_rounds.configs(found):
        rep = position[where[id(config.representative.raw)]]
        keep.append(rep)
        groups.append([position[where[id(r.raw)]] for r in config.records])
        usable = [position[where[id(r.raw)]] for r in config.usable]
        figure = config.figure
        figures.append(rows["throughput"].iat[rep] if figure is None else figure)
        samples.append(tuple(v for n in usable for v in rows["throughput_samples"].iat[n]) if usable
                       else rows["throughput_samples"].iat[rep])
        medians.append(tuple(float(rows["throughput"].iat[n]) for n in usable))
        counts.append(len(config.records))
        verified.append(config.verified)
    out = rows.iloc[keep].copy()
    out["throughput"] = figures
    out["throughput_samples"] = pd.Series(samples, index=out.index, dtype=object)
    out["round_throughputs"] = pd.Series(medians, index=out.index, dtype=object)
    out["rounds"] = counts
    out["verified"] = verified
    several = out["rounds"] > 1
    for column in _SUMMED:  # counts over every round of the configuration, not the representative's alone
        if column in rows:
            out[column] = pd.Series([_sum_counts(rows[column].iat[n] for n in members) for members in groups],
                                    index=out.index, dtype=object)
    for column, fn in (("throughput_min", min), ("throughput_max", max)):
        out.loc[several, column] = [fn(s) if s else float("nan") for s in out.loc[several, "throughput_samples"]]
    out.loc[several, "throughput_cv"] = [coefficient_of_variation(s) for s in out.loc[several, "throughput_samples"]]
    return out.sort_values("result_id").reset_index(drop=True)
