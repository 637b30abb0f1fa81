"""Seeded mutations of the newer optional fields (noise, warmup, clocks, the new settings).

Whatever they hold, every command answers with exit 0 or 2 (compare 0, 1 or
2) and one error line, never an internal error: with the package's schema,
and with a schema that does not know these fields at all (an older copy, or
a newer writer's fields the schema lags behind), where quality.py's own
checks are all that stands between the file and the tables.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import builder
import fuzzing
from conftest import sweep_results
from mpsbench_analysis import validate
from mpsbench_analysis.cli import main

#: every command of the fuzz parses its arguments with one parser (fuzzing.one_parser)
pytestmark = pytest.mark.usefixtures("one_parser")

MUTATIONS = 80
NEW_FIELDS = ("noise", "warmup", "clocks")
NEW_SETTINGS = ("warmup_time_s", "max_noise", "max_time_s", "discard_throttled", "throttle_retries", "clock_threshold")


def _base() -> dict[str, Any]:
    records = [builder.with_quality(r, affected=[i % 2 == 0] + [False] * (r["repetitions"] - 1), discarded=i % 3)
               for i, r in enumerate(sweep_results()[:8])]
    records += [builder.with_quality(builder.app_result(builder.flat(v), mode, k))
                for v, mode, k in ((1.0, "timeslice", 1), (2.0, "timeslice", 2), (2.6, "mps", 2))]
    records.append(builder.with_quality(builder.result([1e12, 2e12], size=9, status="failed", verified=False)))
    return builder.quality_settings(builder.document(records), max_noise=0.05)


class QualityMutator(fuzzing.Mutator):
    """Mutations only inside the newer fields, half of them inside ``clocks``."""

    def __init__(self, doc: dict[str, Any]) -> None:
        super().__init__(doc)
        inside = [p for p in self.paths if (len(p) > 3 and p[0] == "results" and p[2] in NEW_FIELDS)
                  or (len(p) == 3 and p[:2] == ("context", "settings") and p[2] in NEW_SETTINGS)]
        self.paths = inside
        self.measured = [p for p in inside if "clocks" in p]


def _without_new_fields(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as it was before these fields: they are unknown (and so unchecked) there."""
    out = copy.deepcopy(schema)
    result = out["definitions"]["result"]
    for key in NEW_FIELDS:
        result["properties"].pop(key, None)
    for branch in result.get("allOf", []):
        for part in ("then", "else"):
            for key in NEW_FIELDS:
                branch.get(part, {}).get("properties", {}).pop(key, None)
    settings = out["definitions"]["context"]["properties"]["settings"]["properties"]
    for key in NEW_SETTINGS:
        settings.pop(key, None)
    return out


def _cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


@pytest.mark.usefixtures("shared_loads")
@pytest.mark.parametrize("schema", ["package", "unaware"])
def test_mutated_quality_fields(tmp_path: Path, monkeypatch, schema: str) -> None:
    if schema == "unaware":
        strict = validate._validator()
        unaware = type(strict)(validate._open_world(_without_new_fields(validate.schema())))
        monkeypatch.setattr(validate, "_validator", lambda version=validate.SCHEMA_VERSION: unaware)
    base_doc = _base()
    jsonschema.Draft7Validator(validate.schema()).validate(base_doc)  # the unmutated base is valid
    base = builder.write(tmp_path / "base.json", base_doc)
    assert _cli(["summary", str(base)])[0] == 0
    mutator = QualityMutator(base_doc)
    failures, refused = [], 0
    for seed in range(MUTATIONS):
        mutation = mutator.mutation(seed)
        path = fuzzing.write(mutation, tmp_path / f"m{seed}.json")
        for argv, allowed in ((["summary", str(path), "--format", "json"], (0, 2)),
                              (["compare", str(base), str(path)], (0, 1, 2)),
                              (["compare", str(path), str(base)], (0, 1, 2)),
                              (["crossover", str(path)], (0, 2))):
            code, err = _cli(argv)
            errors = [line for line in err.splitlines() if not line.startswith("mpsbench-analyze: warning: ")]
            if code not in allowed or "internal error" in err or (code == 2 and len(errors) != 1):
                failures.append(f"seed {seed} ({mutation.describe()}) {argv[0]}: exit {code}: {err.strip()}")
            refused += argv[0] == "summary" and code == 2
    assert not failures, f"{len(failures)} failures, e.g.:\n" + "\n".join(failures[:10])
    assert refused > MUTATIONS // 5  # the checks were exercised, not only loads
