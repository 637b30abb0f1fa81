"""Files measured in rounds (mpsbench-sweep --rounds): one row per configuration, the CI gate judged by the
rounds, and the agreement of several runs (mpsbench-analyze agree).

A run here: matmul fp32 at sizes 256 and 4096, k = 1 and 4, timeslice and mps, two rounds, each round of
each configuration off its true figure by a seeded jitter of up to 1 % (the spread between processes).
Gains: 256 k=4 2.0, 4096 k=4 1.02, k=1 1.0.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

import builder
from mpsbench_analysis import load_results
from mpsbench_analysis.cli import main
from mpsbench_analysis.agree import percent_text

T = 1e12
BASE = {(256, 1, "timeslice"): 1.0, (256, 1, "mps"): 1.0, (256, 4, "timeslice"): 2.0, (256, 4, "mps"): 4.0,
        (4096, 1, "timeslice"): 10.0, (4096, 1, "mps"): 10.0, (4096, 4, "timeslice"): 10.0, (4096, 4, "mps"): 10.2}


def jitter(seed: int, *key: object) -> float:
    """A factor within 1 % of 1, fixed by the seed and the key (no random module: the same on every run)."""
    h = zlib.crc32(repr((seed, key)).encode())
    return 1.0 + 0.01 * ((h % 2001) / 1000.0 - 1.0)


def run(seed: int = 0, effects: dict[tuple[int, int, str], float] | None = None,
        scale: dict[tuple, float] | None = None, rounds: int = 2) -> list[dict]:
    """The records of one run: each round of each configuration jittered (``seed``); effects[(round, size,
    mode)] multiplies that round's figures too, scale[(size, k, mode)] the configuration's."""
    out = []
    for r in range(rounds):
        for (size, k, mode), value in BASE.items():
            v = (value * T * jitter(seed, r, size, k, mode) * (effects or {}).get((r, size, mode), 1.0)
                 * (scale or {}).get((size, k, mode), 1.0))
            out.append(builder.result(builder.flat(v), size=size, ranks_per_gpu=k, mode=mode, round=r))
    return out


def write(tmp_path: Path, name: str, records: list[dict]) -> Path:
    return builder.write(tmp_path / name, builder.document(records))


# two runs of one commit: the same configurations, their own jitter
RUN_A, RUN_B = 1, 2


def test_rounds_load_as_one_row_per_configuration(tmp_path: Path) -> None:
    rs = load_results([write(tmp_path, "a.json", run(effects={(0, 256, "mps"): 1.03}))])
    assert len(rs.round_results) == 16 and len(rs.results) == 8 and set(rs.results["rounds"]) == {2}
    row = rs.results[(rs.results["size"] == 256) & (rs.results["ranks_per_gpu"] == 4)
                     & (rs.results["mode_label"] == "mps")].iloc[0]
    first, second = 4.0 * T * 1.03 * jitter(0, 0, 256, 4, "mps"), 4.0 * T * jitter(0, 1, 256, 4, "mps")
    assert row["throughput"] == pytest.approx((first * second) ** 0.5)  # the geometric mean of the two rounds
    assert row["round_throughputs"] == pytest.approx((first, second))
    assert len(row["throughput_samples"]) == 10
    assert len(rs.ranks) == sum(rs.results["ranks_per_gpu"])  # the representative round's ranks only


def test_a_round_twice_is_a_duplicate(tmp_path: Path) -> None:
    records = run(rounds=1)
    records.append(dict(records[0]))
    code = main(["summary", str(write(tmp_path, "dup.json", records))])
    assert code == 2


def test_two_runs_of_one_commit_pass_the_gate(tmp_path: Path, capsys) -> None:
    a, b = write(tmp_path, "a.json", run(RUN_A)), write(tmp_path, "b.json", run(RUN_B))
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "gate: pass" in out and "rounds" in out


def test_a_real_slowdown_of_a_stable_configuration_fails_the_gate(tmp_path: Path, capsys) -> None:
    a = write(tmp_path, "a.json", run(RUN_A))
    slower = write(tmp_path, "slow.json", run(RUN_B, scale={(4096, 1, "timeslice"): 0.9}))
    assert main(["compare", str(a), str(slower)]) == 1
    out = capsys.readouterr().out
    assert "SLOWER" in out and "outside the rounds' spread" in out and "gate: FAIL" in out


def test_a_noisy_configuration_does_not_fail_the_gate(tmp_path: Path, capsys) -> None:
    # 256 at k=1 timeslice moved 20 % between the runs, but its own rounds differ by 25 %: noise, not a regression
    a = write(tmp_path, "a.json", run(RUN_A, effects={(0, 256, "timeslice"): 1.25}))
    b = write(tmp_path, "b.json", run(RUN_B, effects={(1, 256, "timeslice"): 0.8}))
    assert main(["compare", str(a), str(b)]) == 0
    assert "NOISY" in capsys.readouterr().out


def test_the_share_is_never_rounded_up_to_the_one_it_misses() -> None:
    # 402 of 448 is 89.73 %: under the 90 % agree needs, so it must not print as 90 %
    assert [percent_text(*x) for x in ((402, 448), (8999, 10000), (9, 10), (12, 12), (0, 0))] == [
        "89.7%", "89.9%", "90.0%", "100.0%", "0.0%"]


def test_runs_that_agree(tmp_path: Path, capsys) -> None:
    # three machines of different speed, the same spread between rounds: every gain the same in each
    everything = {(r, size, mode): 1.0 for r in range(2) for size in (256, 4096) for mode in ("timeslice", "mps")}
    paths = [str(write(tmp_path, f"{n}.json", run(RUN_A, effects={key: f for key in everything})))
             for n, f in (("a", 1.0), ("b", 1.04), ("c", 0.97))]
    assert main(["agree", *paths]) == 0
    out = capsys.readouterr().out
    assert ("consistent: 12 of 12 pairs of two runs' gains (100.0%) differ by no more than their two 95% intervals "
            "allow together (at least 90% needed") in out
    assert "gains: 12 of 12 (100.0%) inside every other run's 95% interval" in out
    assert "  each against each: 24 of 24 (100.0%) of the gains inside the other run's 95% interval" in out
    assert "verdicts: 0 of 2 points" in out and out.rstrip().endswith("agree: yes (3 runs)")
    assert out.count("A/A (1 rank per GPU") == 3
    assert "joint verdict of the 3 runs" in out and "\n  verdict: matmul fp32: MPS pays off at 256" in out


def test_runs_that_disagree_say_where(tmp_path: Path, capsys) -> None:
    # run b's mps at 256 k=4 only 1.0x timeslice, in both rounds: "does not" where run a says "pays off"
    a = write(tmp_path, "a.json", run(RUN_A))
    b = write(tmp_path, "b.json", run(RUN_B, scale={(256, 4, "mps"): 0.5}))
    assert main(["agree", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "contradicted: matmul fp32 at 256: run 1 pays off, run 2 does not" in out
    assert "outside: matmul fp32 256 k=4" in out and out.rstrip().endswith("agree: NO (2 runs)")
    assert "consistent: 3 of 4 pairs" in out and "  inconsistent: matmul fp32 256 k=4: run 1 2.01x [" in out
    # the joint verdict, each run one round: the spread between the runs makes both sizes "cannot tell"
    assert ("joint verdict of the 2 runs (each run one round, its figure its own: every interval is made of the "
            "spread between the runs):\n  verdict: matmul fp32: the data cannot tell whether MPS pays off at 256 "
            "(0.58x-3.47x) and 4096") in out


def test_agree_needs_two_files(tmp_path: Path, capsys) -> None:
    assert main(["agree", str(write(tmp_path, "a.json", run()))]) == 2
    assert "agree needs two results files or more" in capsys.readouterr().err


def test_one_run_given_twice_is_refused(tmp_path: Path, capsys) -> None:
    # the same path twice, or a copy under another name (the .json beside its .json.gz): one run held against
    # itself agrees whatever its noise
    a = write(tmp_path, "a.json", run(RUN_A))
    copy = write(tmp_path, "copy.json", run(RUN_A))
    b = write(tmp_path, "b.json", run(RUN_B))
    for argv in ([a, a], [a, b, copy]):
        assert main(["agree", *map(str, argv)]) == 2
        err = capsys.readouterr().err
        assert f"{argv[-1]} holds the same measurements as {a}: one run given twice" in err, err
    assert main(["agree", str(a), str(b)]) == 0


def test_a_run_on_another_gpu_model_is_named(tmp_path: Path, capsys) -> None:
    a = write(tmp_path, "a.json", run(RUN_A))
    doc = builder.document(run(RUN_B))
    doc["context"]["gpus"][0]["name"] = "NVIDIA H200"
    b = builder.write(tmp_path / "b.json", doc)
    c = write(tmp_path, "c.json", run(3))
    main(["agree", str(a), str(b), str(c)])
    out = capsys.readouterr().out
    assert ('run 2 ran on another device than run 1 (gpus[].name: run 1 "NVIDIA H100 80GB HBM3", run 2 '
            '"NVIDIA H200"): its gains may differ for real, not by noise') in out
    assert "run 3 ran on another device" not in out


def test_runs_of_other_suites_are_refused(tmp_path: Path, capsys) -> None:
    # no configuration in common: 0 of 0 pairs is no agreement to report
    a = write(tmp_path, "a.json", run(RUN_A))
    other = [dict(r, size=r["size"] * 2) for r in run(RUN_B)]
    assert main(["agree", str(a), str(write(tmp_path, "other.json", other))]) == 2
    assert "the runs share no configuration measured in both mps and timeslice" in capsys.readouterr().err


def test_files_without_rounds_keep_the_repetitions_rule(tmp_path: Path, capsys) -> None:
    a, b = write(tmp_path, "a.json", run(rounds=1)), write(tmp_path, "b.json", run(rounds=1))
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "|change| <= 5%" in out and "over 1 and 1 rounds" not in out


def with_gains(records: list[dict]) -> dict:
    """A document whose context.sweep.gains is what core derives from its records (what the sweep writes)."""
    from mpsbench_core.gain_record import gain_entries
    from mpsbench_core.records import results_of
    doc = builder.document(records)
    doc["context"]["sweep"] = {"modes": ["timeslice", "mps"], "launcher": "mpirun", "jobs": [],
                               "gains": gain_entries(results_of([doc]))}
    return doc


def test_the_file_records_what_each_interval_is_made_of(tmp_path: Path) -> None:
    doc = with_gains(run(RUN_A))
    entry = next(e for e in doc["context"]["sweep"]["gains"] if (e["size"], e["ranks_per_gpu"]) == (256, 4))
    assert entry["interval"]["rounds"] == 2 and entry["interval"]["basis"] == "rounds"
    assert set(entry["interval"]) >= {"df", "t", "se", "own_sd", "pooled_sd", "prior_df", "within_se"}
    assert main(["verdict", str(builder.write(tmp_path / "ok.json", doc))]) == 0


@pytest.mark.parametrize("mutate, where", [
    (lambda gains: gains[1]["interval"].update(low=0.5), "context.sweep.gains[1].interval.low"),
    (lambda gains: gains.pop(), "context.sweep.gains[3]"),
    (lambda gains: gains.append(dict(gains[0], size=8)), "context.sweep.gains[4]"),
])
def test_a_file_whose_intervals_disagree_with_its_records_is_refused(tmp_path: Path, capsys, mutate, where) -> None:
    doc = with_gains(run(RUN_A))
    mutate(doc["context"]["sweep"]["gains"])
    path = builder.write(tmp_path / "bad.json", doc)
    assert main(["verdict", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"field {where}:" in err and "the records give" in err and err.count("\n") == 1


def cpu_slowed(record: dict, slowed: int) -> dict:
    """The record with a cpu object whose first ``slowed`` kept repetitions ran on a CPU-slowed host."""
    n = record["repetitions"]
    flags = [i < slowed for i in range(n)]
    return dict(record, cpu={"probe": "relax_sweep_2048x8", "threshold": 0.3, "reference_probe_s": 4e-6,
                             "slowed_repetitions": slowed, "discarded_repetitions": 0, "repetition_slowed": flags,
                             "probe_ratio": [1.6 if f else 1.05 for f in flags], "steal_s": [0.0] * n,
                             "run_delay_s": [0.0] * n, "note": ""})


def test_the_marks_count_cpu_slowed_repetitions_over_the_rounds_and_the_hosts_cpus_are_compared(
        tmp_path: Path, capsys) -> None:
    a = write(tmp_path, "a.json", [cpu_slowed(r, 0) for r in run(RUN_A)])
    records = [cpu_slowed(r, 2 if (r["size"], r["ranks_per_gpu"], r["mode"]) == (4096, 1, "timeslice") else 0)
               for r in run(RUN_B, scale={(4096, 1, "timeslice"): 0.9})]
    for r in records:
        r["cpu"]["reference_probe_s"] = 4.6e-6  # NEW's host CPU 15 % slower at its best
    slower = write(tmp_path, "slow.json", records)
    assert main(["compare", str(a), str(slower)]) == 1  # marks and notes never change a verdict
    out = capsys.readouterr().out
    assert "SLOWER" in out and "cpu-slowed:4/10" in out
    assert "host CPU (fastest CPU probe): BASE 4.00 us, NEW 4.60 us (+15%" in out
