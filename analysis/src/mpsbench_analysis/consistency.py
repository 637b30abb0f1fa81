"""Every record of a schema-valid document must agree with itself and with the records it takes figures from, or
the file is refused with one line naming the field: its structural rules before (rules.py; quality.py and
energy_rules.py for the optional objects), every derived field re-derived with the core's functions (derived.py,
one table), its claims after (rules.py), then the figures taken from other records (derived.ACROSS_RECORDS) and
the MPS gains' intervals (core gain_record).  A rule says what it refuses as (field, why) pairs, :func:`first`
makes the first one the error, so that no rule needs the file's name or the record's place.

A file where these disagree was edited or corrupted, and analysing it would put numbers on the screen that no run
measured, let a CI gate pass on them, or let a verdict pick a configuration that failed.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

from mpsbench_core.gain_record import first_difference
from mpsbench_core.records import kind_of, results_of

from . import legacy
from .derived import ACROSS_RECORDS, FIELDS, refusal, refusals, show
from .energy_rules import metered
from .errors import AnalysisError
from .quality import check_quality, check_settings
from .rules import Refusals, claims, samples, shape
from .run_index import Run

_OF_ENERGY = tuple(f for f in FIELDS if f.path.startswith(("energy.", "gpu_activity.")))


def first(found: Refusals, name: str, where: str) -> None:
    """Raises AnalysisError naming the first of the refusals ``found`` in the record at ``where``."""
    for field, why in found:
        raise AnalysisError(why, name, f"{where}.{field}")


def _record(r: dict[str, Any], run: Run, name: str, where: str) -> None:
    first(shape(r), name, where)
    if kind_of(r) != "app":
        check_quality(r, name, where)
    first(chain(metered(r), refusals(r, FIELDS, run), claims(r)), name, where)


def _legacy_only(r: dict[str, Any], run: Run) -> Refusals:
    """What only a kernel-``app`` record of versions 1 and 2 has."""
    if r["precision"] != r["app"]["name"]:
        yield "precision", (f"{r['precision']!r}, but app.name is {r['app']['name']!r} (an application record of "
                            "this version names the application in both)")
    for key in ("flop_per_s", "byte_per_s") if r["aggregate"] is not None else ():
        yield from samples(r["aggregate"][key], r["repetitions"], f"aggregate.{key}")
        for stat in ("median", "min", "max"):
            why = refusal(FIELDS[0], r, {"key": key, "stat": stat}, run)
            if why:
                yield f"aggregate.{key}.{stat}", why
        nonzero = [i for i, sample in enumerate(r["aggregate"][key]["samples"]) if sample != 0]
        if nonzero:
            yield f"aggregate.{key}.samples[{nonzero[0]}]", (
                f"{r['aggregate'][key]['samples'][nonzero[0]]!r}, but an application's runs have no {key} (0)")


def _legacy_app(r: dict[str, Any], run: Run, name: str, where: str) -> None:
    """A kernel-``app`` record of versions 1 and 2: what only that shape has, then the checks of its version-3
    shape (legacy.py), an error naming the field as this file has it, then its energy (which that shape drops)."""
    first(_legacy_only(r, run), name, where)
    try:
        _record(legacy.app_record(r), run, name, where)
    except AnalysisError as exc:
        inner = exc.field[len(where) + 1:] if exc.field and exc.field.startswith(where + ".") else None
        if inner is None:
            raise
        raise AnalysisError(exc.detail, name, f"{where}.{legacy.v3_field(inner)}") from None
    first(chain(metered(r), refusals(r, _OF_ENERGY, run)), name, where)


def check_consistency(doc: dict[str, Any], name: str) -> None:
    """Raises AnalysisError on the first disagreement of a schema-valid document (module doc)."""
    check_settings(doc["context"], name)
    run = Run(doc["results"])
    for i, r in enumerate(doc["results"]):
        (_legacy_app if kind_of(r) == "app" and "kind" not in r else _record)(r, run, name, f"results[{i}]")
    for i, r in enumerate(doc["results"]):
        first(refusals(r, ACROSS_RECORDS, run), name, f"results[{i}]")
    sweep = doc["context"].get("sweep")
    if isinstance(sweep, dict) and "gains" in sweep:
        found = first_difference(sweep["gains"], results_of([doc]))
        if found is not None:
            where, written, derived = found
            raise AnalysisError(f"{show(written)}, but the records give {show(derived)}", name,
                                f"context.sweep.gains{where}")
