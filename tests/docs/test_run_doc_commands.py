"""Tests of scripts/docs/run-doc-commands.py (no GPU needed).

python3 -m unittest discover -s tests/docs -v
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(ROOT, "scripts", "docs", "run-doc-commands.py")

DOC = textwrap.dedent("""\
    # Title

    ```sh gpu
    export FOO=hello
    cd scripts
    ```

    ## Second

    1. inside a list item:

       ```sh gpu
       echo "$FOO from $(basename "$PWD")"
       false
       (exit 7)
       echo still-running
       ```

    ```sh analysis
    echo analysis-ran
    ```

    ```bash slurm
    #!/bin/bash
    #SBATCH -N 1
    srun hostname
    ```

    ```sh
    echo untagged-never-runs
    ```

    ```sh gpu
    printf 'no newline'
    ```
    """)


def run(args, cwd):
    return subprocess.run([sys.executable, RUNNER] + args, cwd=cwd, capture_output=True, text=True, timeout=120)


class RunnerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.doc = os.path.join(self.dir, "doc.md")
        with open(self.doc, "w") as f:
            f.write(DOC)
        self.logs = os.path.join(self.dir, "logs")

    def tearDown(self):
        self.tmp.cleanup()

    def summary(self):
        with open(os.path.join(self.logs, "summary.json")) as f:
            return {b["number"]: b for b in json.load(f)["documents"][0]["blocks"]}

    def test_list_numbers_every_tagged_block(self):
        r = run(["--list", self.doc], self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("5 tagged blocks", r.stdout)
        self.assertIn("bash slurm", r.stdout)
        self.assertNotIn("untagged", r.stdout)

    def test_gpu_blocks_share_one_shell_and_report_first_failure(self):
        r = run(["--log-dir", self.logs, self.doc], self.dir)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        blocks = self.summary()
        self.assertEqual(sorted(blocks), [1, 2, 5])  # gpu only
        self.assertEqual(blocks[1]["status"], 0)
        self.assertEqual(blocks[2]["status"], 1)      # `false`, not the later (exit 7)
        self.assertEqual(blocks[5]["status"], 0)
        with open(os.path.join(self.logs, "doc", "block-02.log")) as f:
            log = f.read()
        self.assertIn("$ echo \"$FOO from", log)        # the commands, de-indented
        self.assertIn("hello from scripts", log)        # export and cd carried over
        self.assertIn("still-running", log)             # no set -e
        with open(os.path.join(self.logs, "doc", "block-05.log")) as f:
            self.assertIn("no newline\n---- block 5: exit status 0", f.read())
        self.assertIn("3 blocks, 1 not ok", r.stdout)

    def test_analysis_kind_and_block_selection(self):
        r = run(["--kinds", "analysis", "--log-dir", self.logs, self.doc], self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("analysis-ran", r.stdout)
        r = run(["--blocks", "5", "-q", "--log-dir", self.logs, self.doc], self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(list(self.summary()), [5])

    def run_block_past_timeout(self, commands):
        """A first block of `commands` at --block-timeout 1, then one that must still run."""
        with open(self.doc, "w") as f:
            f.write(f"```sh gpu\n{commands}\n```\n\n```sh gpu\necho next-block\n```\n")
        start = time.monotonic()
        r = run(["--block-timeout", "1", "--log-dir", self.logs, self.doc], self.dir)
        self.assertLess(time.monotonic() - start, 20)
        blocks = self.summary()
        self.assertEqual(blocks[1]["note"], "timeout")
        self.assertEqual(blocks[2]["status"], 0)
        self.assertIn("next-block", r.stdout)
        return blocks

    def test_block_timeout_stops_only_that_block(self):
        self.assertNotEqual(self.run_block_past_timeout("sleep 30")[1]["status"], 0)

    def test_block_timeout_stops_every_later_command_of_that_block(self):
        # bash goes on with the block's next command after the first is stopped; that one is stopped too.
        self.run_block_past_timeout("sleep 30; sleep 30; sleep 30")

    def test_syntax_error_is_bad_input(self):
        with open(self.doc, "w") as f:
            f.write("```sh gpu\nif true; then echo\n```\n")
        r = run(["--log-dir", self.logs, self.doc], self.dir)
        self.assertEqual(r.returncode, 2)
        self.assertIn("block 1", r.stderr)

    def test_collect_copies_into_log_dir(self):
        os.makedirs(os.path.join(self.dir, "out"))
        with open(self.doc, "w") as f:
            f.write("```sh gpu\necho data > out/x.txt\n```\n")
        r = run(["--root", self.dir, "--collect", "out", "--log-dir", self.logs, self.doc], self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.logs, "collected", "out", "x.txt")) as f:
            self.assertEqual(f.read(), "data\n")


class WorkshopDocTest(unittest.TestCase):
    def test_every_block_of_the_workshop_parses(self):
        r = run(["--check", os.path.join(ROOT, "docs", "workshop.md")], ROOT)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("sh gpu", r.stdout)

    def test_every_slurm_script_of_the_workshop_parses(self):
        r = run(["--check", os.path.join(ROOT, "docs", "workshop", "slurm.md")], ROOT)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("slurm", r.stdout)


if __name__ == "__main__":
    unittest.main()
