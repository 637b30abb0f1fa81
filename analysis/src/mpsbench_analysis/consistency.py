"""Every record of a schema-valid document must agree with itself and with the records it takes figures from, or
the file is refused with one line naming the field: its structural rules before (rules.py), every derived field
re-derived with the core's functions (derived.py, one table), its claims after (rules.py), then the figures taken
from other records (derived.ACROSS_RECORDS) and the MPS gains' intervals (core gain_record).

A file where these disagree was edited or corrupted, and analysing it would put numbers on the screen that no run
measured, let a CI gate pass on them, or let a verdict pick a configuration that failed.
"""

from __future__ import annotations

from typing import Any

from mpsbench_core.gain_record import first_difference
from mpsbench_core.records import kind_of, results_of

from . import legacy
from .derived import ACROSS_RECORDS, FIELDS, check_fields, refusal, show
from .energy_rules import check_activity, check_energy
from .errors import AnalysisError
from .quality import check_settings
from .rules import claims, samples, shape
from .run_index import Run

_OF_ENERGY = tuple(f for f in FIELDS if f.path.startswith(("energy.", "gpu_activity.")))


def _record(r: dict[str, Any], run: Run, name: str, where: str) -> None:
    shape(r, name, where)
    check_fields(r, FIELDS, run, name, where)
    claims(r, name, where)


def _legacy_app(r: dict[str, Any], run: Run, name: str, where: str) -> None:
    """A kernel-``app`` record of versions 1 and 2: what only that shape has, then the checks of its version-3
    shape (legacy.py), an error naming the field as this file has it."""
    if r["precision"] != r["app"]["name"]:
        raise AnalysisError(f"{r['precision']!r}, but app.name is {r['app']['name']!r} (an application record "
                            "of this version names the application in both)", name, f"{where}.precision")
    for key in ("flop_per_s", "byte_per_s") if r["aggregate"] is not None else ():
        samples(r["aggregate"][key], r["repetitions"], name, f"{where}.aggregate.{key}")
        for stat in ("median", "min", "max"):
            why = refusal(FIELDS[0], r, {"key": key, "stat": stat}, run)
            if why:
                raise AnalysisError(why, name, f"{where}.aggregate.{key}.{stat}")
        nonzero = [i for i, sample in enumerate(r["aggregate"][key]["samples"]) if sample != 0]
        if nonzero:
            raise AnalysisError(f"{r['aggregate'][key]['samples'][nonzero[0]]!r}, but an application's runs have no "
                                f"{key} (0)", name, f"{where}.aggregate.{key}.samples[{nonzero[0]}]")
    try:
        _record(legacy.app_record(r), run, name, where)
    except AnalysisError as exc:
        inner = exc.field[len(where) + 1:] if exc.field and exc.field.startswith(where + ".") else None
        if inner is None:
            raise
        raise AnalysisError(exc.detail, name, f"{where}.{legacy.v3_field(inner)}") from None
    check_energy(r, name, where)
    check_activity(r, name, where)
    check_fields(r, _OF_ENERGY, run, name, where)


def check_consistency(doc: dict[str, Any], name: str) -> None:
    """Raises AnalysisError on the first disagreement of a schema-valid document (module doc)."""
    check_settings(doc["context"], name)
    run = Run(doc["results"])
    for i, r in enumerate(doc["results"]):
        (_legacy_app if kind_of(r) == "app" and "kind" not in r else _record)(r, run, name, f"results[{i}]")
    for i, r in enumerate(doc["results"]):
        check_fields(r, ACROSS_RECORDS, run, name, f"results[{i}]")
    sweep = doc["context"].get("sweep")
    if isinstance(sweep, dict) and "gains" in sweep:
        found = first_difference(sweep["gains"], results_of([doc]))
        if found is not None:
            where, written, derived = found
            raise AnalysisError(f"{show(written)}, but the records give {show(derived)}", name,
                                f"context.sweep.gains{where}")
