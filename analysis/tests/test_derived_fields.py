"""The one generic re-derivation (mpsbench_analysis.derived, issue 37): a derived field changed in a file is refused
with one line naming the field and both numbers, for every kind of record, and the table has an entry for every
derived field the schema describes."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

import builder
import energy_builder as eb
from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.derived import ACROSS_RECORDS, FIELDS, show
from mpsbench_analysis.validate import schema
from mpsbench_core.stats import median

T = 1e12


def _kernel() -> list[dict[str, Any]]:
    return [builder.result([1.0 * T, 1.1 * T, 1.2 * T], ranks_per_gpu=2)]


def _app() -> list[dict[str, Any]]:
    return [builder.app_result([2.35, 2.4, 2.45, 2.5, 2.3], "mps", 2, check=True)]


def _energy() -> list[dict[str, Any]]:
    return [eb.with_energy(builder.result([1.0 * T, 1.1 * T, 1.2 * T], ranks_per_gpu=2), 1e-10)]


CASES = [  # (records, the record, its field, how it changes, a function of the records giving the derived value)
    ("kernel", _kernel, 0, ("aggregate", "flop_per_s", "median"), 2.0,
     lambda rs: median(rs[0]["aggregate"]["flop_per_s"]["samples"])),
    ("kernel", _kernel, 0, ("aggregate_cv",), 3.0, None),
    ("app", _app, 0, ("app", "runs_per_hour"), 1.5, lambda rs: rs[0]["aggregate"]["run_per_s"]["median"] * 3600),
    ("app", _app, 0, ("jain_fairness",), 0.5, None),
    ("mix", lambda: builder.mix_sweep(("mps",)), 4, ("tenants", 0, "slowdown"), 2.0,
     lambda rs: rs[4]["tenants"][0]["alone_throughput"] / rs[4]["tenants"][0]["throughput"]["median"]),
    ("mix", lambda: builder.mix_sweep(("mps",)), 4, ("tenants", 1, "latency_p99_ratio"), 3.0, None),
    ("energy", _energy, 0, ("energy", "mean_power_w"), 3.0, None),
    ("energy", _energy, 0, ("energy", "joules_per_unit"), 3.0, None),
]


def _path_text(path: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


@pytest.mark.parametrize("kind, records, index, path, factor, derived", CASES,
                         ids=[f"{c[0]}-{_path_text(c[3])}" for c in CASES])
def test_a_changed_derived_field_is_refused_naming_it_and_both_numbers(tmp_path: Path, kind, records, index, path,
                                                                      factor, derived) -> None:
    rs = records()
    assert any(part == kind for part in (rs[index].get("kind"), "energy" if "energy" in path else None))
    load_results([builder.write(tmp_path / "ok.json", builder.document(rs))])  # as written, it agrees
    bad = copy.deepcopy(rs)
    node = bad[index]
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] *= factor
    with pytest.raises(AnalysisError) as exc:
        load_results([builder.write(tmp_path / "bad.json", builder.document(bad))])
    field = f"results[{index}].{_path_text(path)}"
    assert exc.value.field == field, str(exc.value)
    assert str(exc.value).count("\n") == 0
    assert exc.value.detail.startswith(repr(node[path[-1]]) + " disagrees with "), exc.value.detail
    if derived is not None:  # the other number is the core's derivation from the file's own measurements
        assert exc.value.detail.endswith(" " + show(derived(bad))), exc.value.detail
    else:
        assert re.search(r"[0-9]", exc.value.detail[len(repr(node[path[-1]])):]), exc.value.detail


# ---- every derived field the schema describes has its entry --------------------------------------------------

#: A description that gives a field as a formula of other fields of the same file.
_FORMULA = re.compile(r"(?<![a-z])(/ |Jain's index|x 3600|the sum over|coefficient of variation|throughput median of)")
#: Fields whose formula is over measurements a results file does not hold: nothing in it derives them.
_NOT_IN_THE_FILE = {
    "cpu.probe_ratio": "the probes before and after each repetition are not written",
    "energy.per_gpu[].uncertainty": "the meter's read brackets are not written",
    "app.startup_share": "each run's start and first counter line are not written",
    "noise.estimator": "the name of the estimator, not a figure",
    "app.gpu_memory_method": "how a figure was found, not a figure",
}


def _described(node: Any, defs: dict[str, Any], path: str, out: dict[str, str], depth: int = 0) -> None:
    """Record path -> description (or "summary") of every property reachable from ``node``."""
    if depth > 12 or not isinstance(node, dict):
        return
    ref = node.get("$ref", "")
    if ref == "#/definitions/summary":
        out[path] = "summary"
        return
    if ref:
        _described(defs[ref.split("/")[-1]], defs, path, out, depth + 1)
    for branch in ("then", "else"):
        _described(node.get(branch), defs, path, out, depth + 1)
    for alt in node.get("anyOf", []) + node.get("oneOf", []):
        _described(alt, defs, path, out, depth + 1)
    if isinstance(node.get("items"), dict):
        _described(node["items"], defs, path + "[]", out, depth + 1)
    for name, sub in (node.get("properties") or {}).items():
        child = f"{path}.{name}" if path else name
        if isinstance(sub, dict) and isinstance(sub.get("description"), str):
            out.setdefault(child, sub["description"])
        _described(sub, defs, child, out, depth + 1)


def schema_derived_fields() -> set[str]:
    """The derived fields of a record as the schema describes them: each summary's median, min and max, and each
    field whose description is a formula of other fields (_FORMULA)."""
    s = schema()
    described: dict[str, str] = {}
    for definition in ("result", "app_result"):
        _described(s["definitions"][definition], s["definitions"], "", described)
    out = set()
    for path, description in described.items():
        if description == "summary":
            out |= {f"{path}.{stat}" for stat in ("median", "min", "max")}
        elif _FORMULA.search(description) and path not in _NOT_IN_THE_FILE:
            out.add(path)
    return out


def _table_paths() -> set[str]:
    """The paths of the table's entries with every index as [] and every name placeholder expanded."""
    names = {"stat": ("median", "min", "max"), "key": ("flop_per_s", "byte_per_s", "item_per_s", "run_per_s",
                                                        "metric_per_s"),
             "gpu_figure": ("sm_active", "sm_occupancy", "dram_bw", "tensor_active")}
    out = set()
    for f in FIELDS + ACROSS_RECORDS:
        paths = [re.sub(r"\[\{[ijct]\}\]", "[]", f.path)]
        for name, values in names.items():
            paths = [p.replace("{" + name + "}", v) for p in paths for v in values] if "{" + name + "}" in paths[0] \
                else paths
        out |= set(paths)
    return out


def test_the_schema_lists_the_derived_fields_this_test_expects() -> None:
    found = schema_derived_fields()
    # a few that must be among them, so that a schema walk that finds nothing cannot pass the test below
    assert {"aggregate.flop_per_s.median", "tenants[].slowdown", "collective.fraction_of_iteration",
            "app.metric.copy_spread", "speedup_vs_one_copy_per_gpu"} <= found, sorted(found)


def test_every_derived_field_the_schema_lists_has_a_table_entry() -> None:
    table = _table_paths()
    covered = {p for p in schema_derived_fields() if p in table or any(t.startswith(p + ".") or
                                                                        t.startswith(p + "[]") for t in table)}
    missing = sorted(schema_derived_fields() - covered)
    assert not missing, f"derived fields without an entry in mpsbench_analysis.derived: {missing}"

