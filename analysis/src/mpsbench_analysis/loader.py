"""Reads mpsbench results files into tidy DataFrames.

One row per result in ``ResultSet.results`` and one row per rank and result
in ``ResultSet.ranks``, so that every later step is a pandas group-by rather
than a walk over nested JSON.  Files are validated against the JSON Schema
shipped inside this package (a test keeps it byte-identical to the repo's
``schema/`` file), and every problem is reported as an AnalysisError naming
the file and the field, because a user with a broken file needs to know
where to look, not a traceback.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

import jsonschema
import pandas as pd
from jsonschema.exceptions import ValidationError, best_match

from .errors import AnalysisError
from .stats import coefficient_of_variation

SCHEMA_NAME = "mpsbench-results"
SCHEMA_VERSION = 1

#: What identifies one configuration; two results with the same key are the
#: same measurement (compared across files, merged within a run).
KEY = ["kernel", "precision", "size", "ranks_per_gpu", "mode_label"]

#: Display order of sharing modes; unknown ones sort after these.
MODE_ORDER = ["timeslice", "mps", "mps-qos", "streams", "mixed", "cpu"]

# Result fields that are flattened into named columns below; any other scalar
# field of a result (the schema may gain some) is copied through as is.
_HANDLED = {
    "kernel", "precision", "size", "ranks_per_gpu", "device", "mode", "status", "error",
    "active_ranks", "devices", "iterations_per_repetition", "repetitions", "work_per_iteration",
    "primary_metric", "primary_unit", "window_s", "aggregate", "aggregate_cv",
    "speedup_vs_one_rank_per_gpu", "jain_fairness", "verified", "max_rel_error", "ranks",
}


@dataclass
class ResultSet:
    """Results of one or more files.

    results: one row per result (see :func:`result_rows` for the columns).
    ranks: one row per active rank of each result, keyed like ``results``
        plus ``rank``; ``result_id`` links a rank row to its result row.
    contexts: each file's ``context`` object, by file name, in load order.
    """

    results: pd.DataFrame
    ranks: pd.DataFrame
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def files(self) -> list[str]:
        return list(self.contexts)


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The results JSON Schema shipped with this package."""
    text = resources.files(__package__).joinpath("schema/mpsbench-results.schema.json").read_text("utf-8")
    return json.loads(text)


def _open_world(node: Any) -> Any:
    """The schema without ``additionalProperties: false``.

    Files from a newer writer may carry fields this copy of the schema does
    not know yet (optional fields are added without a version bump); they
    are ignored, while every field we read is still checked for presence,
    type and range.
    """
    if isinstance(node, dict):
        return {k: _open_world(v) for k, v in node.items() if not (k == "additionalProperties" and v is False)}
    if isinstance(node, list):
        return [_open_world(v) for v in node]
    return node


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(_open_world(schema()))


def _path_text(path: Iterable[Any]) -> str:
    """``results[3].ranks[0].iteration_time_s`` from a jsonschema path."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(error: ValidationError) -> tuple[str, str]:
    """(field, message) for a schema violation, phrased for a person."""
    where = _path_text(error.absolute_path)
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        name = missing[0] if missing else "?"
        return (f"{where}.{name}" if where else name), "required field is missing"
    if error.validator == "const":
        return where or "(document)", f"expected {_short(error.validator_value)}, got {_short(error.instance)}"
    if error.validator == "type":
        return where or "(document)", f"expected {error.validator_value}, got {_short(error.instance)}"
    if error.validator == "enum":
        allowed = ", ".join(_short(v) for v in error.validator_value)
        return where or "(document)", f"{_short(error.instance)} is not one of {allowed}"
    message = error.message
    if len(message) > 160:
        message = message[:157] + "..."
    return where or "(document)", message


def _parse(text: str, name: str) -> Any:
    if not text.strip():
        raise AnalysisError("file is empty", name)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # the decoder reports "Unterminated string" only when the input ends inside one
        truncated = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        what = "truncated JSON (file ends early)" if truncated else "not valid JSON"
        raise AnalysisError(f"{what}: {exc.msg} (line {exc.lineno}, column {exc.colno})", name) from None


def load_document(path: str | Path) -> dict[str, Any]:
    """Reads and validates one results file; returns the parsed document.

    The identity fields are checked before the full schema so that a file of
    another format or schema version gets that message, not a list of
    missing fields.
    """
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise AnalysisError(f"cannot read file: {exc.strerror or exc}", name) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnalysisError(f"not UTF-8 text (byte {exc.start})", name) from None
    doc = _parse(text, name)
    if not isinstance(doc, dict):
        raise AnalysisError(f"expected a JSON object at the top, got {type(doc).__name__}", name)
    if "schema" not in doc:
        raise AnalysisError("required field is missing (not an mpsbench results file?)", name, "schema")
    if doc["schema"] != SCHEMA_NAME:
        raise AnalysisError(f"expected {SCHEMA_NAME!r}, got {_short(doc['schema'])}", name, "schema")
    if "schema_version" not in doc:
        raise AnalysisError("required field is missing", name, "schema_version")
    if doc["schema_version"] != SCHEMA_VERSION:
        raise AnalysisError(
            f"version {_short(doc['schema_version'])} is not supported (this tool reads version {SCHEMA_VERSION})",
            name, "schema_version")
    error = best_match(_validator().iter_errors(doc))
    if error is not None:
        where, message = _describe(error)
        raise AnalysisError(message, name, where)
    if not doc["complete"]:
        print(f"mpsbench-analyze: warning: {name}: run is incomplete (complete=false); "
              f"using its {len(doc['results'])} finished results", file=sys.stderr)
    return doc


def mode_label(result: dict[str, Any]) -> str:
    """The mode a result is grouped under.

    ``mps-qos`` runs at different active-thread percentages are different
    configurations, so the percentage (when the file has one) joins the
    label; every other mode is its own label.
    """
    mode = str(result["mode"])
    pct = result.get("mps_active_thread_percentage")
    if mode == "mps-qos" and isinstance(pct, (int, float)) and not isinstance(pct, bool):
        return f"mps-qos:{pct:g}%"
    return mode


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def result_rows(doc: dict[str, Any], name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Flattens one validated document into result rows and rank rows."""
    rows, rank_rows = [], []
    for index, r in enumerate(doc["results"]):
        primary = r["aggregate"][r["primary_metric"]]
        ok = r["status"] == "ok"
        samples = tuple(float(v) for v in primary["samples"])
        row: dict[str, Any] = {
            "file": name, "index": index,
            "kernel": r["kernel"], "precision": r["precision"], "size": int(r["size"]),
            "ranks_per_gpu": int(r["ranks_per_gpu"]), "mode": r["mode"], "mode_label": mode_label(r),
            "device": r["device"], "status": r["status"], "error": r["error"],
            "verified": bool(r["verified"]) and ok,
            "active_ranks": r["active_ranks"], "devices": r["devices"],
            "iterations_per_repetition": r["iterations_per_repetition"], "repetitions": r["repetitions"],
            "primary_metric": r["primary_metric"], "primary_unit": r["primary_unit"],
            # A failed result has no meaningful throughput; NaN keeps it out of
            # every ratio while the row still shows up (as failed) in tables.
            "throughput": float(primary["median"]) if ok else math.nan,
            "throughput_min": float(primary["min"]) if ok else math.nan,
            "throughput_max": float(primary["max"]) if ok else math.nan,
            "throughput_samples": samples if ok else (),
            "throughput_cv": coefficient_of_variation(samples) if ok else math.nan,
            "window_s": tuple(float(v) for v in r["window_s"]),
            "aggregate_cv": float(r["aggregate_cv"]),
            "speedup_vs_one_rank_per_gpu": _number(r["speedup_vs_one_rank_per_gpu"]),
            "jain_fairness": float(r["jain_fairness"]),
            "max_rel_error": _number(r["max_rel_error"]),
            "work_flop": float(r["work_per_iteration"]["flop"]),
            "work_byte": float(r["work_per_iteration"]["byte"]),
            "work_items": float(r["work_per_iteration"]["items"]),
            "item_unit": r["work_per_iteration"]["item_unit"],
            "aggregate": r["aggregate"],
            "mps_active_thread_percentage": _number(r.get("mps_active_thread_percentage")),
        }
        for key, value in r.items():
            if key not in _HANDLED and key not in row and not isinstance(value, (dict, list)):
                row[key] = value
        rows.append(row)
        for rr in r["ranks"]:
            it = rr["iteration_time_s"]
            gpu = rr["gpu_iteration_time_s"]
            rank_rows.append({
                "file": name, "index": index,
                **{k: row[k] for k in ("kernel", "precision", "size", "ranks_per_gpu", "mode", "mode_label")},
                "rank": rr["rank"], "host": rr["host"], "local_rank": rr["local_rank"],
                "gpu_index": rr["gpu_index"], "gpu_uuid": rr["gpu_uuid"],
                "mps_enabled": rr["mps_enabled"], "sm_count": rr["sm_count"],
                "iteration_time_s": float(it["median"]),
                "iteration_time_samples_s": tuple(float(v) for v in it["samples"]),
                "gpu_iteration_time_s": math.nan if gpu is None else float(gpu["median"]),
                "throughput_per_s": float(rr["throughput_per_s"]),
                "verified": bool(rr["verification"]["ok"]),
                "max_rel_error": _number(rr["verification"]["max_rel_error"]),
            })
    return rows, rank_rows


def _check_duplicates(results: pd.DataFrame) -> None:
    dup = results[results.duplicated(KEY, keep=False)]
    if dup.empty:
        return
    first = dup.iloc[0]
    same = dup[(dup[KEY] == first[KEY]).all(axis=1)]
    later = same.iloc[1]
    what = ", ".join(f"{k}={first[k]}" for k in KEY)
    raise AnalysisError(
        f"duplicate result ({what}); already in {first['file']} results[{first['index']}]",
        later["file"], f"results[{later['index']}]")


def mode_sort_key(label: str) -> tuple[int, float, str]:
    """Orders mode labels timeslice, mps, mps-qos (by percentage), streams, mixed, cpu, others."""
    base, _, pct = label.partition(":")
    try:
        number = float(pct.rstrip("%")) if pct else -1.0
    except ValueError:
        number = -1.0
    return (MODE_ORDER.index(base) if base in MODE_ORDER else len(MODE_ORDER), number, label)


def load_results(paths: Iterable[str | Path]) -> ResultSet:
    """Loads and merges results files (e.g. one per mode) into one ResultSet.

    Raises AnalysisError on the first bad file, on a file without results,
    and on a configuration that appears twice, since silently picking one of
    two measurements would make every number after it arbitrary.
    """
    rows: list[dict[str, Any]] = []
    rank_rows: list[dict[str, Any]] = []
    contexts: dict[str, dict[str, Any]] = {}
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
        r, rr = result_rows(doc, name)
        rows += r
        rank_rows += rr
        contexts[name] = doc["context"]
    results = pd.DataFrame(rows)
    _check_duplicates(results)
    results["result_id"] = range(len(results))
    ranks = pd.DataFrame(rank_rows)
    ids = results.set_index(["file", "index"])["result_id"]
    ranks["result_id"] = [ids[(f, i)] for f, i in zip(ranks["file"], ranks["index"])]
    return ResultSet(results=results, ranks=ranks, contexts=contexts)
