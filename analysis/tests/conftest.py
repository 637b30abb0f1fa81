"""Shared fixtures: a synthetic multi-mode sweep whose numbers the tests know by heart."""

from __future__ import annotations

from pathlib import Path

import pytest

import builder

DATA_DIR = Path(__file__).parent / "data"
#: Real results files (a CPU run now, a multi-mode GPU run later); every
#: generic test runs on each of them.
DATA_FILES = sorted(DATA_DIR.glob("*.json"))

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
