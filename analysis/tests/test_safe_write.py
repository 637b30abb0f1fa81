"""Output files: never through a planted link, never over something that is not a regular file.

Every option that writes (summary/crossover/export --output, compare
--markdown, report --output, plot --outdir) goes through safe_write; the
tests plant what an attacker in a shared directory would and check that
the planted thing and whatever it points to are left alone.
"""

from __future__ import annotations

import os
import select
import stat
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

import builder
from mpsbench_analysis import safe_write
from mpsbench_analysis.cli import main

T = 1e12
PRECIOUS = "someone else's data\n"

#: argv of each file-writing option, given the results file and the output path.
OUTPUT_OPTIONS: dict[str, Callable[[str, str], list[str]]] = {
    "summary": lambda src, out: ["summary", src, "--format", "csv", "--output", out],
    "crossover": lambda src, out: ["crossover", src, "-o", out],
    "export": lambda src, out: ["export", src, "--output", out],
    "compare": lambda src, out: ["compare", src, src, "--markdown", out],
    "report": lambda src, out: ["report", src, "--output", out],
}


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    """Two sizes in timeslice and mps: enough for every command, small enough to plot quickly."""
    results = [builder.result(builder.flat(value * T), size=size, ranks_per_gpu=2, mode=mode)
               for size, values in ((256, (2.0, 3.0)), (1024, (10.0, 10.2))) for mode, value in
               zip(("timeslice", "mps"), values)]
    return builder.write(tmp_path / "results.json", builder.document(results))


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _refusal(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "internal error" not in lines[0] and lines[0].startswith("mpsbench-analyze: error: "), lines[0]
    return lines[0][len("mpsbench-analyze: error: "):]


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "elsewhere" / "victim.txt"
    victim.parent.mkdir(exist_ok=True)
    victim.write_text(PRECIOUS)
    return victim


@pytest.mark.parametrize("command", OUTPUT_OPTIONS)
def test_each_output_option_writes_a_regular_file(results_file: Path, tmp_path: Path, capsys, command: str) -> None:
    out = tmp_path / "shared" / f"out.{command}"
    out.parent.mkdir()
    out.write_text("old contents")  # an existing regular file is replaced
    code, _, err = _run(OUTPUT_OPTIONS[command](str(results_file), str(out)), capsys)
    assert code == 0, err
    assert stat.S_ISREG(os.lstat(out).st_mode) and out.read_text() not in ("", "old contents")
    assert os.listdir(out.parent) == [out.name]  # no temporary file left behind


@pytest.mark.parametrize("command", OUTPUT_OPTIONS)
def test_planted_symlink_is_refused_and_its_target_untouched(results_file: Path, tmp_path: Path, capsys,
                                                             command: str) -> None:
    victim = _victim(tmp_path)
    link = tmp_path / "out.txt"
    link.symlink_to(victim)
    code, _, err = _run(OUTPUT_OPTIONS[command](str(results_file), str(link)), capsys)
    assert code == 2
    assert _refusal(err) == f"refusing to replace {link}: it is a symbolic link, not a regular file"
    assert victim.read_text() == PRECIOUS and link.is_symlink() and os.readlink(link) == str(victim)


def test_dangling_symlink_is_refused_and_nothing_created(results_file: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "elsewhere" / "would-be-created.txt"
    link = tmp_path / "out.csv"
    link.symlink_to(target)
    code, _, err = _run(["summary", str(results_file), "-o", str(link)], capsys)
    assert code == 2 and "it is a symbolic link" in err
    assert not target.exists() and not target.parent.exists()


@pytest.mark.parametrize("command", OUTPUT_OPTIONS)
def test_fifo_is_refused_without_writing_into_it(results_file: Path, tmp_path: Path, capsys, command: str) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    # a reader drains the FIFO so that a writer would not block: it would write, and we would see it
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    leaked = bytearray()
    stop = threading.Event()

    def drain() -> None:
        while not stop.is_set():
            if select.select([reader], [], [], 0.05)[0]:
                try:
                    chunk = os.read(reader, 1 << 16)
                except BlockingIOError:
                    chunk = b""
                leaked.extend(chunk)
                if not chunk:
                    time.sleep(0.01)

    thread = threading.Thread(target=drain)
    thread.start()
    try:
        code, _, err = _run(OUTPUT_OPTIONS[command](str(results_file), str(fifo)), capsys)
    finally:
        stop.set()
        thread.join()
        os.close(reader)
    assert code == 2
    assert _refusal(err) == f"refusing to replace {fifo}: it is a FIFO (named pipe), not a regular file"
    assert leaked == b"" and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_device_is_refused_before_any_rename(results_file: Path, capsys, monkeypatch) -> None:
    # /dev/null itself: safe even as root, because nothing may be created or renamed in /dev
    renames: list[tuple] = []
    creations: list[str] = []
    real_open = os.open

    def no_rename(*args, **kwargs):
        renames.append(args)
        raise OSError(1, "rename forbidden by the test")

    def watch_open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            creations.append(str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "replace", no_rename)
    monkeypatch.setattr(os, "open", watch_open)
    before = set(os.listdir("/dev"))
    code, _, err = _run(["summary", str(results_file), "--output", "/dev/null"], capsys)
    assert code == 2
    assert _refusal(err) == "refusing to replace /dev/null: it is a character device, not a regular file"
    assert renames == [] and creations == []
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode) and set(os.listdir("/dev")) == before


@pytest.mark.parametrize("command", OUTPUT_OPTIONS)
def test_directory_is_refused(results_file: Path, tmp_path: Path, capsys, command: str) -> None:
    target = tmp_path / "a-directory"
    target.mkdir()
    (target / "inside").write_text(PRECIOUS)
    code, _, err = _run(OUTPUT_OPTIONS[command](str(results_file), str(target)), capsys)
    assert code == 2
    assert _refusal(err) == f"refusing to replace {target}: it is a directory, not a regular file"
    assert os.listdir(target) == ["inside"] and (target / "inside").read_text() == PRECIOUS


def test_hard_link_is_replaced_not_written_through(results_file: Path, tmp_path: Path, capsys) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "out.csv"
    os.link(victim, out)  # a regular file, but another name of someone else's
    code, _, _ = _run(["summary", str(results_file), "--format", "csv", "-o", str(out)], capsys)
    assert code == 0
    assert victim.read_text() == PRECIOUS and out.read_text().startswith("kind,kernel,")


@pytest.mark.parametrize("command", OUTPUT_OPTIONS)
def test_missing_parent_directory_is_one_line(results_file: Path, tmp_path: Path, capsys, command: str) -> None:
    out = tmp_path / "no" / "such" / "out.txt"
    code, _, err = _run(OUTPUT_OPTIONS[command](str(results_file), str(out)), capsys)
    assert code == 2
    assert _refusal(err) == f"{out}: cannot write: directory {out.parent} does not exist"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
@pytest.mark.parametrize("command", OUTPUT_OPTIONS)
def test_read_only_directory_is_one_line(results_file: Path, tmp_path: Path, capsys, command: str) -> None:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        code, _, err = _run(OUTPUT_OPTIONS[command](str(results_file), str(folder / "out.txt")), capsys)
    finally:
        folder.chmod(0o755)
    assert code == 2
    assert _refusal(err) == f"{folder / 'out.txt'}: cannot write: Permission denied"
    assert os.listdir(folder) == []


def test_planted_symlinks_at_temporary_names_have_no_effect(results_file: Path, tmp_path: Path, capsys,
                                                            monkeypatch) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "out.csv"
    guesses = [".out.csv.tmp", "out.csv.tmp", "out.csv~", ".out.csv.swp", "out.csv.new",
               ".out.csv.0123456789abcdef.tmp"]
    for name in guesses:
        (tmp_path / name).symlink_to(victim)
    # the first random name drawn is one an attacker guessed: O_EXCL must refuse it, and another is drawn
    draws = iter(["0123456789abcdef", "fedcba9876543210"])
    monkeypatch.setattr(safe_write.secrets, "token_hex", lambda _n: next(draws))
    code, _, err = _run(["summary", str(results_file), "--format", "csv", "-o", str(out)], capsys)
    assert code == 0, err
    assert victim.read_text() == PRECIOUS
    assert all(os.readlink(tmp_path / name) == str(victim) for name in guesses)
    assert out.read_text().startswith("kind,kernel,") and not (tmp_path / ".out.csv.fedcba9876543210.tmp").exists()


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(results_file: Path, tmp_path: Path, capsys,
                                                                 monkeypatch) -> None:
    out = tmp_path / "out.csv"
    out.write_text("the previous summary\n")

    def disk_full(_fd, _data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", disk_full)
    code, _, err = _run(["summary", str(results_file), "-o", str(out)], capsys)
    monkeypatch.undo()
    assert code == 2 and _refusal(err) == f"{out}: cannot write: No space left on device"
    assert out.read_text() == "the previous summary\n"
    assert sorted(os.listdir(tmp_path)) == sorted([results_file.name, out.name])


# ---- plot --outdir ------------------------------------------------------------------------

def _plot(results_file: Path, outdir: Path, capsys) -> tuple[int, str, str]:
    return _run(["plot", str(results_file), "--outdir", str(outdir), "--formats", "png"], capsys)


def test_plot_creates_the_directory_and_replaces_old_figures(results_file: Path, tmp_path: Path, capsys) -> None:
    outdir = tmp_path / "new" / "plots"
    code, out, _ = _plot(results_file, outdir, capsys)
    assert code == 0
    names = sorted(os.listdir(outdir))
    assert names == sorted(Path(line).name for line in out.split()) and len(names) == 3
    old = outdir / names[0]
    old.write_bytes(b"stale")
    code, _, _ = _plot(results_file, outdir, capsys)
    assert code == 0 and old.read_bytes().startswith(b"\x89PNG") and sorted(os.listdir(outdir)) == names


def test_plot_refuses_a_symlinked_outdir(results_file: Path, tmp_path: Path, capsys) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "plots"
    link.symlink_to(elsewhere)
    code, _, err = _plot(results_file, link, capsys)
    assert code == 2
    assert _refusal(err) == f"refusing to use {link} as the output directory: it is a symbolic link, not a directory"
    assert os.listdir(elsewhere) == []


def test_plot_refuses_an_outdir_that_is_a_file(results_file: Path, tmp_path: Path, capsys) -> None:
    victim = _victim(tmp_path)
    code, _, err = _plot(results_file, victim, capsys)
    assert code == 2
    assert _refusal(err) == f"refusing to use {victim} as the output directory: it is a regular file, not a directory"
    assert victim.read_text() == PRECIOUS


def test_plot_refuses_a_planted_figure_link(results_file: Path, tmp_path: Path, capsys) -> None:
    victim = _victim(tmp_path)
    outdir = tmp_path / "plots"
    outdir.mkdir()
    planted = outdir / "throughput_matmul_fp32.png"
    planted.symlink_to(victim)
    code, _, err = _plot(results_file, outdir, capsys)
    assert code == 2
    assert _refusal(err) == f"refusing to replace {planted}: it is a symbolic link, not a regular file"
    assert victim.read_text() == PRECIOUS and planted.is_symlink()


def test_plot_outdir_under_a_file_is_one_line(results_file: Path, tmp_path: Path, capsys) -> None:
    victim = _victim(tmp_path)
    code, _, err = _plot(results_file, victim / "plots", capsys)
    assert code == 2
    assert _refusal(err).startswith(f"{victim / 'plots'}: cannot create the output directory: ")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_plot_into_a_read_only_directory_is_one_line(results_file: Path, tmp_path: Path, capsys) -> None:
    outdir = tmp_path / "plots"
    outdir.mkdir()
    outdir.chmod(0o555)
    try:
        code, _, err = _plot(results_file, outdir, capsys)
    finally:
        outdir.chmod(0o755)
    assert code == 2 and _refusal(err).endswith("cannot write: Permission denied")
