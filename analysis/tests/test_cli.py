"""The command line: exit codes, one-line errors, every subcommand end to end."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import builder
from conftest import CPU_RUN, DATA_FILES, H100_SWEEP
from mpsbench_analysis.cli import main

T = 1e12
ERROR_LINE = re.compile(r"^mpsbench-analyze: error: \S.*: .+$")


def _doc(*results: dict) -> dict:
    return builder.document(list(results))


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_console_script_is_declared() -> None:
    scripts = {e.name: e.value for e in metadata.entry_points(group="console_scripts")}
    if "mpsbench-analyze" not in scripts:  # run from the source tree, not installed: the declaration itself
        import tomllib
        with open(Path(__file__).parents[1] / "pyproject.toml", "rb") as f:
            scripts = tomllib.load(f)["project"]["scripts"]
    assert scripts.get("mpsbench-analyze") == "mpsbench_analysis.cli:main"


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["--help"], capsys)
    assert code == 0
    for command in ("summary", "plot", "verdict", "crossover", "compare", "report", "export"):
        assert command in out


# ---- compare exit codes -------------------------------------------------------------------

def _compare(tmp_path: Path, base: list[dict], new: list[dict], capsys, *extra: str) -> tuple[int, str, str]:
    b = builder.write(tmp_path / "base.json", builder.document(base))
    n = builder.write(tmp_path / "new.json", builder.document(new))
    return _run(["compare", str(b), str(n), *extra], capsys)


def test_compare_same_file_exits_0(sweep_file: Path, capsys) -> None:
    code, out, _ = _run(["compare", str(sweep_file), str(sweep_file)], capsys)
    assert code == 0 and "no regression" in out


def test_compare_slower_exits_1(tmp_path: Path, capsys) -> None:
    code, out, _ = _compare(tmp_path, [builder.result(builder.flat(10 * T))],
                            [builder.result(builder.flat(9 * T))], capsys)
    assert code == 1 and "SLOWER" in out and out.splitlines()[2].startswith("REGRESSION")


def test_compare_threshold_option(tmp_path: Path, capsys) -> None:
    # the same -10 % is SAME under a 15 % threshold
    code, out, _ = _compare(tmp_path, [builder.result(builder.flat(10 * T))],
                            [builder.result(builder.flat(9 * T))], capsys, "--threshold", "15%")
    assert code == 0 and "SAME" in out


def test_compare_lost_verification_exits_1(tmp_path: Path, capsys) -> None:
    code, out, _ = _compare(tmp_path, [builder.result(builder.flat(10 * T))],
                            [builder.result(builder.flat(10 * T), verified=False)], capsys)
    assert code == 1 and "yes->NO" in out


def test_compare_smaller_mps_gain_exits_1(tmp_path: Path, capsys) -> None:
    base = [builder.result(builder.flat(10 * T), ranks_per_gpu=2, mode="timeslice"),
            builder.result(builder.flat(15 * T), ranks_per_gpu=2, mode="mps")]
    new = [builder.result(builder.flat(12.5 * T), ranks_per_gpu=2, mode="timeslice"),
           builder.result(builder.flat(15 * T), ranks_per_gpu=2, mode="mps")]
    code, out, _ = _compare(tmp_path, base, new, capsys)
    assert code == 1 and "1 smaller MPS gain" in out


def test_compare_faster_noisy_added_exit_0(tmp_path: Path, capsys) -> None:
    base = [builder.result(builder.flat(10 * T), size=1),
            builder.result([8 * T, 9 * T, 10 * T, 11 * T, 12 * T], size=2)]
    new = [builder.result(builder.flat(11 * T), size=1),
           builder.result([7.5 * T, 8.5 * T, 9.05 * T, 10.5 * T, 11.5 * T], size=2),
           builder.result(builder.flat(10 * T), size=4)]
    md = tmp_path / "compare.md"
    code, out, _ = _compare(tmp_path, base, new, capsys, "--markdown", str(md))
    assert code == 0
    assert "1 FASTER, 1 NOISY" in out and "1 added, 0 removed" in out
    assert out.rstrip().splitlines()[-1] == "gate: pass (exit 0)"
    page = md.read_text()
    assert page.startswith("## mpsbench compare") and "| NOISY |" in page and "**gate: pass (exit 0)**" in page


# ---- the gate: missing configurations, incomplete NEW, NOISY -----------------------------

def test_compare_removed_configuration_exits_1(tmp_path: Path, capsys) -> None:
    base = [builder.result(builder.flat(10 * T), size=1), builder.result(builder.flat(10 * T), size=3)]
    new = [builder.result(builder.flat(10 * T), size=1)]
    code, out, _ = _compare(tmp_path, base, new, capsys)
    assert code == 1 and "no regression" in out and "0 added, 1 removed" in out
    assert out.rstrip().splitlines()[-1] == ("gate: FAIL (exit 1): 1 configuration of BASE missing from NEW "
                                             "(--allow-missing accepts that)")
    code, out, _ = _compare(tmp_path, base, new, capsys, "--allow-missing")
    assert code == 0 and out.rstrip().splitlines()[-1] == "gate: pass (exit 0)"


def test_compare_incomplete_new_exits_1(tmp_path: Path, capsys) -> None:
    results = [builder.result(builder.flat(10 * T))]
    b = builder.write(tmp_path / "base.json", builder.document(results))
    n = builder.write(tmp_path / "new.json", builder.document(results, complete=False))
    md = tmp_path / "compare.md"
    code, out, err = _run(["compare", str(b), str(n), "--markdown", str(md)], capsys)
    assert code == 1 and "(1 SAME); 0 added, 0 removed" in out and "incomplete" in err
    why = 'gate: FAIL (exit 1): NEW is incomplete ("complete": false) (--allow-missing accepts that)'
    assert out.rstrip().splitlines()[-1] == why and f"**{why}**" in md.read_text()
    code, out, _ = _run(["compare", str(b), str(n), "--allow-missing"], capsys)
    assert code == 0
    # cut short: incomplete and missing a configuration, one reason
    b2 = builder.write(tmp_path / "base2.json", builder.document(results + [builder.result(builder.flat(T), size=2)]))
    code, out, _ = _run(["compare", str(b2), str(n)], capsys)
    assert code == 1 and out.rstrip().splitlines()[-1] == (
        'gate: FAIL (exit 1): NEW is incomplete ("complete": false) and 1 configuration of BASE is missing '
        'from it (--allow-missing accepts that)')
    # an incomplete BASE is the baseline's problem, not the candidate's
    code, out, _ = _run(["compare", str(n), str(b)], capsys)
    assert code == 0


def test_compare_missing_and_regression_both_named(tmp_path: Path, capsys) -> None:
    base = [builder.result(builder.flat(10 * T), size=1), builder.result(builder.flat(10 * T), size=2),
            builder.result(builder.flat(10 * T), size=3)]
    new = [builder.result(builder.flat(9 * T), size=1)]
    code, out, _ = _compare(tmp_path, base, new, capsys)
    assert code == 1
    assert out.rstrip().splitlines()[-1].startswith(
        "gate: FAIL (exit 1): 1 regression; 2 configurations of BASE missing from NEW")
    code, out, _ = _compare(tmp_path, base, new, capsys, "--allow-missing")
    assert code == 1 and out.rstrip().splitlines()[-1] == "gate: FAIL (exit 1): 1 regression"


def test_compare_fail_on_noisy(tmp_path: Path, capsys) -> None:
    base = [builder.result([8 * T, 9 * T, 10 * T, 11 * T, 12 * T])]
    new = [builder.result([7.5 * T, 8.5 * T, 9.05 * T, 10.5 * T, 11.5 * T])]
    code, out, _ = _compare(tmp_path, base, new, capsys)
    assert code == 0 and "1 NOISY" in out
    code, out, _ = _compare(tmp_path, base, new, capsys, "--fail-on-noisy")
    assert code == 1 and out.rstrip().splitlines()[-1] == "gate: FAIL (exit 1): 1 NOISY verdict (--fail-on-noisy)"
    # only NOISY counts: SAME and FASTER still pass
    code, _, _ = _compare(tmp_path, [builder.result(builder.flat(10 * T))], [builder.result(builder.flat(11 * T))],
                          capsys, "--fail-on-noisy")
    assert code == 0


# ---- the gate: run context --------------------------------------------------------------

def _context_pair(tmp_path: Path, change) -> tuple[Path, Path]:
    results = [builder.result(builder.flat(10 * T))]
    new = builder.document(results)
    change(new["context"])
    return (builder.write(tmp_path / "base.json", builder.document(results)),
            builder.write(tmp_path / "new.json", new))


@pytest.mark.parametrize("change, words", [
    (lambda c: c["gpus"][0].update(name="NVIDIA A100-SXM4-80GB"),
     'gpus[].name: BASE "NVIDIA H100 80GB HBM3", NEW "NVIDIA A100-SXM4-80GB"'),
    (lambda c: c["gpus"].append(dict(c["gpus"][0], index=1)), "len(gpus): BASE 1, NEW 2"),
    (lambda c: (c["device"].update(used="cpu"), c["gpus"].clear()), 'device.used: BASE "gpu", NEW "cpu"'),
])
def test_compare_context_mismatch_exits_2(tmp_path: Path, capsys, change, words: str) -> None:
    b, n = _context_pair(tmp_path, change)
    code, out, err = _run(["compare", str(b), str(n)], capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and ERROR_LINE.match(lines[0])
    assert lines[0].startswith(f"mpsbench-analyze: error: {n}: run context differs from BASE: ") and words in lines[0]
    assert "--allow-context-mismatch" in lines[0]
    code, out, err = _run(["compare", str(b), str(n), "--allow-context-mismatch"], capsys)
    assert code == 0 and f"mpsbench-analyze: warning: {n}: run context differs from BASE: {words}" in err
    assert f"mismatch  {words}" in out


def test_compare_context_notes_do_not_fail(tmp_path: Path, capsys) -> None:
    def change(c: dict) -> None:
        c["cuda"]["driver_version"] = "13.1"
        c["git_commit"] = "fedcba9876543210fedcba9876543210fedcba98"
        c["hosts"] = ["elsewhere"]
        c["gpus"][0]["host"] = "elsewhere"

    b, n = _context_pair(tmp_path, change)
    code, out, err = _run(["compare", str(b), str(n)], capsys)
    assert code == 0 and err == ""
    assert out.splitlines()[2].startswith("no regression")
    assert out.splitlines()[3:6] == [
        'context: gpu, 1 x "NVIDIA H100 80GB HBM3"; 2 notes',
        '  note      cuda.driver_version: BASE "13.0", NEW "13.1"',
        '  note      git_commit: BASE "0123456789ab", NEW "fedcba987654"',
    ]


def test_compare_same_context_says_so(sweep_file: Path, capsys) -> None:
    code, out, _ = _run(["compare", str(sweep_file), str(sweep_file)], capsys)
    assert code == 0
    assert out.splitlines()[3] == 'context: gpu, 1 x "NVIDIA H100 80GB HBM3"; no difference in the compared fields'


def test_real_cpu_and_gpu_files_are_not_comparable(capsys) -> None:
    cpu, gpu = CPU_RUN, H100_SWEEP
    code, _, err = _run(["compare", str(cpu), str(gpu)], capsys)
    assert code == 2 and 'device.used: BASE "cpu", NEW "gpu"' in err


def test_compare_help_documents_exit_codes(capsys) -> None:
    code, out, _ = _run(["compare", "--help"], capsys)
    assert code == 0
    epilog = out[out.index("exit status:"):]
    for words in ("0  the gate passes", "1  the gate fails", "2  bad input or usage", "--allow-missing",
                  "--fail-on-noisy", "--allow-context-mismatch", '"complete": false', "GPU model"):
        assert words in epilog, words


def test_compare_without_overlap_exits_2(tmp_path: Path, capsys) -> None:
    code, out, err = _compare(tmp_path, [builder.result([T], kernel="matmul")],
                              [builder.result([T], kernel="nbody")], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"mpsbench-analyze: error: {tmp_path / 'new.json'}: no result matches BASE")
    assert "BASE has matmul/fp32" in err and "NEW has nbody/fp32" in err


# ---- bad input: one line, exit 2, never a traceback --------------------------------------

def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = _doc(builder.result([T, T]))
    wrong_version = dict(good, schema_version=7)
    missing = json.loads(json.dumps(good))
    del missing["results"][0]["primary_metric"]
    text = json.dumps(good, indent=1)
    nan, ranks, size = (json.loads(text) for _ in range(3))
    nan["results"][0]["aggregate"]["flop_per_s"]["median"] = float("nan")
    ranks["results"][0]["ranks"].append(ranks["results"][0]["ranks"][0])
    size["results"][0]["size"] = 1024.0
    deep = text.replace('"node1"', "[" * 100000 + "]" * 100000, 1)
    return {
        "malformed": (builder.write(tmp_path / "malformed.json", text.replace(":", "=", 1)), "not valid JSON"),
        "empty": (builder.write(tmp_path / "empty.json", ""), "file is empty"),
        "truncated": (builder.write(tmp_path / "truncated.json", text[: len(text) // 2]), "truncated JSON"),
        "version": (builder.write(tmp_path / "version.json", wrong_version),
                    "field schema_version: version 7 is not supported"),
        "missing": (builder.write(tmp_path / "missing.json", missing),
                    "field results[0].primary_metric: required field is missing"),
        "absent": (tmp_path / "absent.json", "cannot read file"),
        "nan": (builder.write(tmp_path / "nan.json", nan),
                "field results[0].aggregate.flop_per_s.median: not a finite number (NaN)"),
        "ranks": (builder.write(tmp_path / "ranks.json", ranks),
                  "field results[0].ranks: 2 entries, but active_ranks is 1"),
        "float-size": (builder.write(tmp_path / "size.json", size),
                       "field results[0].size: expected integer, got 1024.0"),
        "deep": (builder.write(tmp_path / "deep.json", deep), "not valid JSON: nested too deeply"),
    }


@pytest.mark.parametrize("kind", ["malformed", "empty", "truncated", "version", "missing", "absent", "nan", "ranks",
                                  "float-size", "deep"])
@pytest.mark.parametrize("command", ["summary", "verdict", "crossover", "plot", "report", "export", "compare-base",
                                     "compare-new"])
def test_bad_input_is_one_line_exit_2(tmp_path: Path, capsys, kind: str, command: str) -> None:
    bad, words = _bad_files(tmp_path)[kind]
    good = builder.write(tmp_path / "good.json", _doc(builder.result([T, T])))
    argv = {"compare-base": ["compare", str(bad), str(good)], "compare-new": ["compare", str(good), str(bad)],
            "plot": ["plot", str(bad), "--outdir", str(tmp_path / "p")],
            "report": ["report", str(bad), "-o", str(tmp_path / "r.html")]}.get(command, [command, str(bad)])
    code, _, err = _run(argv, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and ERROR_LINE.match(lines[0]), err
    assert lines[0].startswith(f"mpsbench-analyze: error: {bad}: ") and words in lines[0]


def test_subprocess_error_has_no_traceback(tmp_path: Path) -> None:
    bad = builder.write(tmp_path / "t.json", '{"schema": "mpsbench-results", "schema_version": 1, "res')
    proc = subprocess.run([sys.executable, "-m", "mpsbench_analysis", "summary", str(bad)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"mpsbench-analyze: error: {bad}: truncated JSON")
    assert "Traceback" not in proc.stderr


def test_unexpected_exception_is_caught(sweep_file: Path, capsys, monkeypatch) -> None:
    import mpsbench_analysis.summary as summary

    def boom(*_args):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(summary, "summarize", boom)
    code, _, err = _run(["summary", str(sweep_file)], capsys)
    assert code == 2 and "internal error: RuntimeError: kaboom" in err


@pytest.mark.parametrize("argv, words", [
    (["compare", "a", "b", "--threshold", "5"], "ambiguous: write 5% or 0.05"),
    (["summary", "x.json", "--format", "xml"], "invalid choice"),
    (["crossover", "x.json", "--threshold", "-1"], "must be positive"),
    ([], "required"),
])
def test_usage_errors_exit_2(capsys, argv: list[str], words: str) -> None:
    code, _, err = _run(argv, capsys)
    assert code == 2 and words in err


def test_unwritable_output_and_bad_image_format(sweep_file: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "no" / "such" / "dir" / "s.csv"
    code, _, err = _run(["summary", str(sweep_file), "--output", str(target)], capsys)
    assert code == 2 and err.startswith(f"mpsbench-analyze: error: {target}: cannot write")
    code, _, err = _run(["plot", str(sweep_file), "--formats", "bmp", "--outdir", str(tmp_path)], capsys)
    assert code == 2 and "unsupported image format(s) bmp" in err


# ---- every subcommand end to end ---------------------------------------------------------

def test_cli_summary_to_file(sweep_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.md"
    assert main(["summary", str(sweep_file), "--format", "markdown", "--output", str(out)]) == 0
    assert "| matmul | fp32 | 256 | 4 | mps | 4.80 TFLOP/s |" in out.read_text()


def test_cli_crossover(sweep_file: Path, capsys) -> None:
    code, out, _ = _run(["crossover", str(sweep_file), "--threshold", "1.25"], capsys)
    assert code == 0 and "MPS pays off at 256 (gain above 1.25x); does not at 1024 and 4096; the crossover lies between " \
                         "256 and 1024" in out


def test_cli_crossover_without_mps_data(tmp_path: Path, capsys) -> None:
    path = builder.write(tmp_path / "ts.json", _doc(builder.result([T])))
    code, _, err = _run(["crossover", str(path)], capsys)
    assert code == 2
    assert err.startswith(f"mpsbench-analyze: error: {path}: no configuration was measured in both mode mps")


def test_cli_merges_one_file_per_mode(tmp_path: Path, capsys) -> None:
    ts = builder.write(tmp_path / "ts.json", _doc(builder.result(builder.flat(2 * T), ranks_per_gpu=4)))
    mps = builder.write(tmp_path / "mps.json", _doc(builder.result(builder.flat(3 * T), ranks_per_gpu=4, mode="mps")))
    code, out, _ = _run(["crossover", str(ts), str(mps)], capsys)
    assert code == 0 and "1.500" in out  # gain 3 / 2 from two files


def test_cli_plot_report_export(sweep_file: Path, tmp_path: Path, capsys) -> None:
    code, out, _ = _run(["plot", str(sweep_file), "--outdir", str(tmp_path / "plots"), "--formats", "png"], capsys)
    assert code == 0 and len(out.splitlines()) == 6
    html = tmp_path / "r.html"
    code, out, _ = _run(["report", str(sweep_file), "-o", str(html)], capsys)
    assert code == 0 and out.strip() == str(html) and html.read_text().startswith("<!DOCTYPE html>")
    code, out, _ = _run(["export", "--format", "gbench", str(sweep_file)], capsys)
    assert code == 0 and json.loads(out)["benchmarks"][0]["run_type"] == "iteration"


@pytest.mark.parametrize("path", DATA_FILES, ids=[p.name for p in DATA_FILES])
@pytest.mark.parametrize("fmt", ["table", "csv", "markdown"])
def test_real_files_through_the_cli(path: Path, fmt: str, capsys) -> None:
    code, out, _ = _run(["summary", str(path), "--format", fmt], capsys)
    assert code == 0 and "matmul" in out
    code, out, _ = _run(["compare", str(path), str(path)], capsys)
    assert code == 0 and "no regression" in out
