"""The run-context check of ``compare``: which differences are mismatches, which are notes."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import builder
from conftest import CPU_RUN, H100_SWEEP, read_doc
from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.compare import compare
from mpsbench_analysis.compare_text import render_comparison
from mpsbench_analysis.context import context_differences

T = 1e12
H100 = "NVIDIA H100 80GB HBM3"


def _ctx(**kw) -> dict:
    return builder.context(**kw)


def _diffs(base: dict, new: dict) -> dict[str, tuple[str, str, bool]]:
    return {d.field: (d.base, d.new, d.mismatch) for d in context_differences(base, new)}


def test_identical_contexts_have_no_difference() -> None:
    assert context_differences(_ctx(), _ctx()) == []


def test_host_names_uuids_date_and_argv_are_not_compared() -> None:
    new = _ctx()
    new["hosts"] = ["other-node"]
    new["gpus"][0].update(host="other-node", uuid="GPU-9999")
    for r in new["ranks"]:
        r.update(host="other-node", gpu_uuid="GPU-9999")
    new.update(date_utc="2027-01-01T00:00:00Z", argv=["mpsbench", "--output", "x.json"])
    assert context_differences(_ctx(), new) == []


def test_driver_cuda_commit_and_settings_are_notes() -> None:
    new = _ctx()
    new["cuda"].update(driver_version="13.1", runtime_version="12.8", cublas_version=120800)
    new.update(git_commit="fedcba9876543210fedcba9876543210fedcba98", git_dirty=True, version="0.2.0")
    new["settings"]["repetitions"] = 7
    new["mpi"]["world_size"] = 8
    d = _diffs(_ctx(), new)
    assert d == {
        "cuda.driver_version": ('"13.0"', '"13.1"', False),
        "cuda.runtime_version": ('"13.0"', '"12.8"', False),
        "cuda.cublas_version": ("130100", "120800", False),
        "version": ('"0.1.0"', '"0.2.0"', False),
        "git_commit": ('"0123456789ab"', '"fedcba987654+dirty"', False),
        "settings.repetitions": ("5", "7", False),
        "mpi.world_size": ("4", "8", False),
    }


def test_gpu_model_count_and_device_kind_are_mismatches() -> None:
    a100 = _ctx()
    a100["gpus"][0]["name"] = "NVIDIA A100-SXM4-80GB"
    assert _diffs(_ctx(), a100) == {"gpus[].name": (f'"{H100}"', '"NVIDIA A100-SXM4-80GB"', True)}
    two = _ctx()
    two["gpus"].append(dict(two["gpus"][0], index=1, uuid="GPU-5678"))
    assert _diffs(_ctx(), two) == {"len(gpus)": ("1", "2", True)}
    d = _diffs(_ctx(), _ctx(device="cpu"))
    assert d["device.used"] == ('"gpu"', '"cpu"', True)
    assert d["len(gpus)"] == ("1", "0", True) and d["gpus[].name"] == (f'"{H100}"', "(none)", True)
    # mismatches are listed before notes
    flags = [x.mismatch for x in context_differences(_ctx(), _ctx(device="cpu"))]
    assert flags == sorted(flags, reverse=True)


def test_sharing_modes_of_a_sweep_file() -> None:
    sweep = _ctx()
    sweep["sweep"] = {"modes": ["timeslice", "mps"], "launcher": "mpirun", "jobs": []}
    assert _diffs(_ctx(), sweep) == {"sweep.modes": ("(absent)", '"timeslice", "mps"', False)}
    other = copy.deepcopy(sweep)
    other["sweep"]["modes"] = ["timeslice"]
    assert _diffs(sweep, other) == {"sweep.modes": ('"timeslice", "mps"', '"timeslice"', False)}
    # without a sweep, the requested mode is the mode list
    ts = _ctx()
    ts["mode_requested"] = "timeslice"
    assert _diffs(_ctx(), ts) == {"mode_requested": ('"auto"', '"timeslice"', False)}


def _write(tmp_path: Path, name: str, doc: dict) -> Path:
    return builder.write(tmp_path / name, doc)


def test_compare_refuses_a_mismatch_unless_allowed(tmp_path: Path) -> None:
    results = [builder.result(builder.flat(10 * T))]
    base = _write(tmp_path, "base.json", builder.document(results))
    doc = builder.document(results)
    doc["context"]["gpus"][0]["name"] = "NVIDIA A100-SXM4-80GB"
    new = _write(tmp_path, "new.json", doc)
    with pytest.raises(AnalysisError) as err:
        compare(load_results([base]), load_results([new]))
    assert err.value.file == str(new)
    assert f'gpus[].name: BASE "{H100}", NEW "NVIDIA A100-SXM4-80GB"' in err.value.detail
    c = compare(load_results([base]), load_results([new]), allow_context_mismatch=True)
    assert [d.field for d in c.context] == ["gpus[].name"] and c.regressions == 0
    text = render_comparison(c, "table", "base.json", "new.json")
    assert f'context: BASE gpu, 1 x "{H100}"; 1 mismatch (compared anyway: --allow-context-mismatch)' in text
    assert f'  mismatch  gpus[].name: BASE "{H100}", NEW "NVIDIA A100-SXM4-80GB"' in text


def test_real_files_context_notes() -> None:
    sweep = read_doc(H100_SWEEP)
    single = copy.deepcopy(sweep["context"])
    del single["sweep"]
    single.update(git_commit="9bbfe06f0b227a605c4db0d0cf773242134e52b9", hosts=["another-host"])
    single["settings"]["repetitions"] = 3
    assert _diffs(single, sweep["context"]) == {
        "git_commit": ('"9bbfe06f0b22"', '"unknown"', False),
        "settings.repetitions": ("3", "5", False),
        "sweep.modes": ("(absent)", '"timeslice", "mps", "mps-qos", "streams"', False),
    }
    cpu = read_doc(CPU_RUN)["context"]
    assert {d.field for d in context_differences(cpu, sweep["context"]) if d.mismatch} == \
        {"device.used", "gpus[].name", "len(gpus)"}


def test_adaptive_protocol_settings_are_notes_also_against_an_older_file() -> None:
    base, new = _ctx(), _ctx()
    new["settings"].update(warmup_time_s=0.1, max_noise=0.01, max_time_s=1.0, discard_throttled=False,
                           throttle_retries=3, clock_threshold=0.9)
    diffs = _diffs(base, new)
    assert diffs["settings.max_noise"][1:] == ("0.01", False)  # a note, not a mismatch
    assert {f for f in diffs if f.startswith("settings.")} == {
        "settings.warmup_time_s", "settings.max_noise", "settings.max_time_s", "settings.discard_throttled",
        "settings.throttle_retries", "settings.clock_threshold"}
    base["settings"].update(new["settings"])
    assert context_differences(base, new) == []
