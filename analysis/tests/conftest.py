"""Shared fixtures: a synthetic multi-mode sweep whose numbers the tests know by heart."""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import builder

DATA_DIR = Path(__file__).parent / "data"
#: Real results files, cut to what the tests use (data/README.md says how): a CPU run (version 1) and a
#: multi-mode H100 sweep of three kernels (version 1, gzip-compressed).  Every generic test runs on each.
CPU_RUN = DATA_DIR / "cpu-np4-matmul.json"
H100_SWEEP = DATA_DIR / "h100-sweep-2026-11-21.json.gz"
DATA_FILES = [CPU_RUN, H100_SWEEP]
#: Real files of the other kinds: a farmed application (version 1: kernel-app records) and mixed tenants
#: with each tenant alone (version 2).
APP_RUN = DATA_DIR / "h100-farm-small-kernels-2026-11-24.json.gz"
MIX_RUN = DATA_DIR / "h100-mix-2026-11-25.json.gz"
ALL_DATA_FILES = DATA_FILES + [APP_RUN, MIX_RUN]


def read_doc(path: Path) -> dict[str, Any]:
    """A results document as JSON, gunzipped when its name ends in .gz."""
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)


#: Tests that build the report of a committed results file (recorded_report) share one worker under
#: `pytest -n N` (pyproject: --dist loadgroup), so each such report is drawn once per run, not once per test.
RECORDED_REPORTS = pytest.mark.xdist_group("recorded-reports")


@functools.cache
def recorded_results(path: Path):
    """load_results of one committed (never rewritten) results file, loaded once per test process.
    Callers only read it: build_report and the verdicts leave a ResultSet as they found it."""
    from mpsbench_analysis import load_results
    return load_results([path])


@functools.cache
def recorded_report(path: Path) -> str:
    """The HTML report of a committed results file, drawn once per test process (its 6 to 40 figures are
    most of its cost); build_report is deterministic, so every test reads the page it would have drawn."""
    from mpsbench_analysis.report import build_report
    return build_report(recorded_results(path))

T = 1e12  # TFLOP/s

# matmul fp32 aggregate throughput medians in TFLOP/s, by size and ranks per GPU 1, 2, 4.
MATMUL = {
    256: {"timeslice": [2.0, 2.2, 2.4], "mps": [2.0, 3.3, 4.8]},
    1024: {"timeslice": [10.0, 10.5, 11.0], "mps": [10.0, 12.6, 13.2]},
    4096: {"timeslice": [40.0, 40.0, 40.0], "mps": [40.0, 41.0, 42.0]},
}
# nbody fp32 at ranks per GPU 1 and 4: MPS pays off only at the larger size.
NBODY = {
    256: {"timeslice": [1.0, 1.0], "mps": [1.0, 1.0]},
    1024: {"timeslice": [1.0, 1.0], "mps": [1.0, 1.3]},
}


def sweep_results() -> list[dict]:
    out = []
    for kernel, table, ranks in (("matmul", MATMUL, [1, 2, 4]), ("nbody", NBODY, [1, 4])):
        for size, modes in table.items():
            for mode, values in modes.items():
                for rpg, value in zip(ranks, values):
                    speedup = None if rpg == 1 else value / values[0]
                    out.append(builder.result(builder.flat(value * T), kernel=kernel, size=size,
                                              ranks_per_gpu=rpg, mode=mode, speedup=speedup,
                                              mps_active_thread_percentage=None))
    # MPS with a client thread limit: two percentages at one configuration.
    for pct, value in ((50, 11.0), (25, 10.0)):
        out.append(builder.result(builder.flat(value * T), size=1024, ranks_per_gpu=2, mode="mps-qos",
                                  mps_active_thread_percentage=pct, speedup=None, future_field="ignored"))
    return out


@pytest.fixture
def sweep_file(tmp_path: Path) -> Path:
    return builder.write(tmp_path / "sweep.json", builder.document(sweep_results()))


@pytest.fixture
def sweep_schema(monkeypatch):
    """Validation against the schema with the sweep's additions for a program's own figure (energy_builder)."""
    import energy_builder
    from mpsbench_analysis import validate
    extended = energy_builder.sweep_schema()
    original = validate.schema
    monkeypatch.setattr(validate, "schema", lambda version=3: extended if version == 3 else original(version))
    validate._validator.cache_clear()
    yield extended
    validate._validator.cache_clear()


@pytest.fixture
def shared_loads():
    """Each file read and validated once in the test, whatever number of commands read it (fuzzing.shared_loads)."""
    import fuzzing
    with fuzzing.shared_loads():
        yield


@pytest.fixture
def one_parser():
    """The command line parser built once in the test, not once per command run (fuzzing.one_parser)."""
    import fuzzing
    with fuzzing.one_parser():
        yield
