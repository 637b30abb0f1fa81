#!/usr/bin/env python3
"""Runs the commands of Markdown documents exactly as written.

Fenced code blocks are tagged by their info string:

    ```sh gpu         run on the GPU node (default kind)
    ```sh analysis    analysis only (mpsbench-analyze, python3); --kinds gpu,analysis
    ```bash slurm     a Slurm batch script: never run, only syntax-checked (--check)

The selected blocks of one document are written, in document order, into one
bash script that runs from the repository root (--root), so `export`, `cd` and
shell variables carry over from block to block. `set -e` is not used: a failing
command does not stop the document; a block's exit status is that of its first
failing command (what `set -e` would have stopped on, found through an ERR
trap), else 0. Blocks must not call `exit` or `set -e` (that ends the document).

Each block's commands and output go to LOG_DIR/<doc>/block-NN.log, the whole
transcript to LOG_DIR/<doc>.log, the generated script to LOG_DIR/<doc>.sh; a
summary table (block, line, section, first line, exit status, seconds) is
printed at the end and written to LOG_DIR/summary.txt and summary.json. Logs
are written as the output arrives, so a run killed from outside keeps them.

Python 3.8+ standard library only; Linux (the block timeout reads /proc).
The pieces: doc_blocks.py (finding the blocks, writing the script), doc_run.py
(running one document), this file (options and the summary).

Exit status: 0 every selected block ran with status 0; 1 a block failed, timed
out or did not run; 2 bad input (no blocks, a block with a bash syntax error);
130/143 interrupted by SIGINT/SIGTERM (the running commands are stopped first).
"""

import argparse
import datetime
import json
import os
import secrets
import shutil
import signal
import sys

from doc_blocks import parse_blocks, parse_ranges, syntax_errors
from doc_run import DocRun

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))),
                                "harness", "sweep"))
from mpsbench_sweep import safe_files  # noqa: E402


def summary_table(runs):
    rows = [("doc", "block", "line", "kind", "section", "first line", "status", "seconds")]
    for run in runs:
        for b in run.blocks:
            status = "-" if b.status is None else str(b.status)
            if b.note:
                status = b.note if b.status is None else f"{status} ({b.note})"
            rows.append((run.stem, str(b.number), str(b.line), b.kind, b.section[:28], b.first_line[:60], status,
                         "-" if b.seconds is None else f"{b.seconds:.1f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    right = {1, 2, 7}
    out = []
    for n, r in enumerate(rows):
        out.append("  ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    total = sum(b.seconds or 0 for run in runs for b in run.blocks)
    failed = sum(1 for run in runs for b in run.blocks if b.status != 0)
    out.append(f"{sum(len(r.blocks) for r in runs)} blocks, {failed} not ok (failed, timed out or not run), "
               f"{total:.1f} s in blocks")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="run-doc-commands.py",
        description="Run the `sh gpu` (and optionally `sh analysis`) blocks of Markdown documents in order, "
                    "one bash shell per document, from the repository root; log every block and print a summary.",
        epilog="example (GPU node): python3 scripts/docs/run-doc-commands.py --log-dir $OUT/docs --collect ws "
               "docs/workshop.md")
    p.add_argument("docs", nargs="+", metavar="MARKDOWN")
    p.add_argument("--kinds", default="gpu", help="block kinds to run, comma list of gpu, analysis (default: gpu)")
    p.add_argument("--log-dir", help="where logs go (default: doc-logs-DATE-TIME in the current directory)")
    p.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   help="directory the blocks run in (default: this repository's root)")
    p.add_argument("--blocks", help="only these block numbers of each document, e.g. 1,3-5 (numbers as in --list)")
    p.add_argument("--block-timeout", type=float, default=0,
                   help="seconds after which a block's commands are stopped (SIGTERM, then SIGKILL) and the "
                        "document goes on with the next block (default: 0, no limit)")
    p.add_argument("--timeout", type=float, default=0,
                   help="seconds after which a whole document is stopped (default: 0, no limit)")
    p.add_argument("--collect", action="append", default=[], metavar="PATH",
                   help="after the run, copy PATH (relative to --root) to LOG_DIR/collected/ (repeatable)")
    p.add_argument("--list", action="store_true", help="list every tagged block and run nothing")
    p.add_argument("--check", action="store_true",
                   help="bash -n every tagged block (slurm ones too) and run nothing; exit 2 on a syntax error")
    p.add_argument("-q", "--quiet", action="store_true", help="print one line per block, not its output")
    args = p.parse_args(argv)

    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in ("gpu", "analysis")]
    if bad or not kinds:
        p.error(f"--kinds: choose from gpu, analysis (got {args.kinds!r})")
    try:
        chosen = parse_ranges(args.blocks) if args.blocks else None
    except ValueError as e:
        p.error(str(e))

    docs = []
    for path in args.docs:
        if not os.path.isfile(path):
            p.error(f"{path}: no such file")
        docs.append((path, parse_blocks(path)))

    if args.list or args.check:
        errors = []
        for path, blocks in docs:
            print(f"{path}: {len(blocks)} tagged blocks")
            for b in blocks:
                print(f"  {b.number:3d}  line {b.line:4d}  {b.lang + ' ' + b.kind:13s}  {b.section[:30]:30s}  {b.first_line[:70]}")
            if args.check:
                errors += [f"{path}: {e}" for e in syntax_errors(blocks)]
        for e in errors:
            print(f"run-doc-commands: syntax error: {e}", file=sys.stderr)
        return 2 if errors else 0

    selected = []
    for path, blocks in docs:
        mine = [b for b in blocks if b.kind in kinds and (chosen is None or b.number in chosen)]
        if not mine:
            print(f"run-doc-commands: error: {path}: no blocks of kind {','.join(kinds)}"
                  f"{' among --blocks ' + args.blocks if chosen else ''}", file=sys.stderr)
            return 2
        errors = syntax_errors(mine)
        if errors:
            for e in errors:
                print(f"run-doc-commands: error: {path}: {e}", file=sys.stderr)
            return 2
        selected.append((path, mine))

    log_dir = os.path.abspath(args.log_dir or datetime.datetime.now().strftime("doc-logs-%Y%m%d-%H%M%S"))
    try:
        # It holds the script that is then run: nobody else may be able to plant anything in it.
        safe_files.own_directory(log_dir)
    except safe_files.UnsafePath as e:
        print(f"run-doc-commands: error: --log-dir: {e}", file=sys.stderr)
        return 2
    root = os.path.abspath(args.root)
    token = "@@run-doc-commands-" + secrets.token_hex(6) + "@@"

    runs, stems = [], set()
    stop = {"signal": None}

    def on_signal(signum, frame):
        stop["signal"] = signum
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    interrupted = None
    for path, blocks in selected:
        stem = os.path.splitext(os.path.basename(path))[0]
        while stem in stems:
            stem += "_"
        stems.add(stem)
        run = DocRun(path, blocks, args, log_dir, stem)
        runs.append(run)
        print(f"run-doc-commands: {path}: {len(blocks)} blocks ({','.join(kinds)}) in {root}; logs in "
              f"{os.path.join(log_dir, stem)}", flush=True)
        run.run(root, token)
        if run.interrupted:
            interrupted = 128 + (stop["signal"] or signal.SIGINT)
            break

    collected = []
    for rel in args.collect:
        src = os.path.join(root, rel)
        dst = os.path.join(log_dir, "collected", rel)
        try:
            if os.path.isdir(src):
                shutil.copytree(src, dst, dirs_exist_ok=True)
            else:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(src, dst)
            collected.append(f"{rel} -> {dst}")
        except OSError as e:
            collected.append(f"{rel}: not collected ({e.strerror or e})")

    table = summary_table(runs)
    text = table + "".join(f"\ncollected: {c}" for c in collected)
    print("\n" + text, flush=True)
    with open(os.path.join(log_dir, "summary.txt"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    with open(os.path.join(log_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"root": root, "kinds": kinds, "collected": collected, "documents": [
            {"path": r.path, "log": r.transcript_path, "script": r.script_path, "blocks": [
                {"number": b.number, "line": b.line, "kind": b.kind, "section": b.section,
                 "first_line": b.first_line, "status": b.status, "note": b.note or None,
                 "seconds": None if b.seconds is None else round(b.seconds, 3),
                 "log": os.path.join(r.block_dir, f"block-{b.number:02d}.log")} for b in r.blocks]}
            for r in runs]}, f, indent=1)
        f.write("\n")
    if interrupted:
        return interrupted
    return 0 if all(b.status == 0 for r in runs for b in r.blocks) else 1


if __name__ == "__main__":
    sys.exit(main())
