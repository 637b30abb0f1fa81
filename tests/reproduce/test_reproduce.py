"""Tests of scripts/reproduce.sh, its helpers and the results directories' reproduce.txt (no GPU needed).

python3 -m unittest discover -s tests/reproduce -v
"""
import glob
import gzip
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPRODUCE = os.path.join(ROOT, "scripts", "reproduce.sh")
COMPARE = os.path.join(ROOT, "scripts", "reproduce", "compare_published.py")
RESULT_DIRS = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(ROOT, "results", "*", "reproduce.txt")))


def entries(spec):
    """(name, [(out, published)], command) per line of a reproduce.txt, as scripts/reproduce.sh reads it."""
    out = []
    with open(spec, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, files, command = line.split(None, 2)
            pairs = [(i.split("=", 1)[0], i.split("=", 1)[-1]) for i in files.split(",")]
            out.append((name, pairs, command))
    return out


def results_doc(rate):
    return {"schema_version": 1, "results": [
        {"kernel": "matmul", "precision": "fp32", "size": 512, "ranks_per_gpu": k, "mode": "timeslice",
         "mps_active_thread_percentage": None, "status": "ok", "verified": True, "primary_metric": "flop_per_s",
         "primary_unit": "FLOP/s", "aggregate": {"flop_per_s": {"median": rate * k}}} for k in (1, 2)]}


class PublishedDirectoriesTest(unittest.TestCase):
    def test_there_are_results_directories(self):
        self.assertGreaterEqual(len(RESULT_DIRS), 3, RESULT_DIRS)
        for d in glob.glob(os.path.join(ROOT, "results", "*", "")):
            self.assertTrue(os.path.isfile(os.path.join(d, "README.md")), f"{d} has no README.md")

    def test_every_reproduce_txt_lists_and_names_published_files(self):
        for d in RESULT_DIRS:
            with self.subTest(d=os.path.basename(d)):
                r = subprocess.run(["bash", REPRODUCE, "--list", d], capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(os.path.join(d, "README.md"), encoding="utf-8") as f:
                    readme = f.read()
                for name, pairs, command in entries(os.path.join(d, "reproduce.txt")):
                    self.assertIn(name, r.stdout)
                    for _, published in pairs:
                        self.assertTrue(os.path.isfile(os.path.join(d, published)), f"{name}: {published} missing")
                    syntax = subprocess.run(["bash", "-n"], input=command, capture_output=True, text=True)
                    self.assertEqual(syntax.returncode, 0, f"{name}: {syntax.stderr}")
                    # the scripts a command runs are in the tree
                    for word in shlex.split(command):
                        if word.startswith(("scripts/", "harness/")):
                            self.assertTrue(os.path.exists(os.path.join(ROOT, word)), f"{name}: {word} missing")
                    # the directory's README shows the command as it runs
                    self.assertTrue(command in readme, f"{name}: README.md does not show the command {command!r}")

    def test_shell_scripts_parse(self):
        scripts = glob.glob(os.path.join(ROOT, "scripts", "**", "*.sh"), recursive=True)
        self.assertIn(REPRODUCE, scripts)
        for path in scripts:
            r = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, f"{path}: {r.stderr}")


class CompareTest(unittest.TestCase):
    def compare(self, a, b):
        return subprocess.run([sys.executable, COMPARE, a, b], capture_output=True, text=True, timeout=60)

    def test_a_published_file_against_itself(self):
        for rel in ("results/h200-2026-11-21/quick.json.gz", "results/h100-2026-11-21/micro-gpu.json.gz"):
            path = os.path.join(ROOT, rel)
            r = self.compare(path, path)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("median 1.000 (lowest 1.000, highest 1.000); 0 only in the published file, 0 only in this run",
                          r.stdout)

    def test_compressed_published_files_against_plain_new_ones(self):
        # results/ stores its files gzip-compressed; a run writes them plain.
        with tempfile.TemporaryDirectory() as tmp:
            published, new = os.path.join(tmp, "a.json.gz"), os.path.join(tmp, "a.json")
            with gzip.open(published, "wt", encoding="utf-8") as f:
                json.dump(results_doc(10e12), f)
            with open(new, "w") as f:
                json.dump(results_doc(11e12), f)
            r = self.compare(published, new)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("2 configurations in both: this run / published median 1.100", r.stdout)
            log_gz, log = os.path.join(tmp, "x.log.gz"), os.path.join(tmp, "x.log")
            with gzip.open(log_gz, "wt", encoding="utf-8") as f:
                f.write("noise\n\nthe published table\n")
            with open(log, "w") as f:
                f.write("the new table\n")
            r = self.compare(log_gz, log)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("  the published table", r.stdout)
            self.assertIn("  the new table", r.stdout)

    def test_results_rows_and_text(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
            with open(a, "w") as f:
                json.dump(results_doc(10e12), f)
            with open(b, "w") as f:
                json.dump(results_doc(11e12), f)
            r = self.compare(a, b)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("10.00 TFLOP/s", r.stdout)
            self.assertIn("1.100", r.stdout)
            self.assertIn("2 configurations in both", r.stdout)
            t1, t2 = os.path.join(tmp, "a.txt"), os.path.join(tmp, "b.txt")
            with open(t1, "w") as f:
                f.write("".join(f"noise {i}\n" for i in range(50)) + "\nthe table\nrow 1\n")
            with open(t2, "w") as f:
                f.write("short\n")
            r = self.compare(t1, t2)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("its last paragraph", r.stdout)
            self.assertIn("  the table", r.stdout)
            self.assertNotIn("noise 3", r.stdout)
            self.assertIn("  short", r.stdout)
            r = self.compare(t1, os.path.join(tmp, "missing.txt"))
            self.assertEqual(r.returncode, 1)
            self.assertIn("this run wrote no", r.stdout)


class ReproduceRunTest(unittest.TestCase):
    """scripts/reproduce.sh end to end on a made-up results directory, without a GPU or a build."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.dev = os.path.join(t, "dev-2026-01-01")
        os.makedirs(os.path.join(self.dev, "sub"))
        with open(os.path.join(self.dev, "a.json"), "w") as f:
            json.dump(results_doc(10e12), f)
        self.new_json = os.path.join(t, "new.json")
        with open(self.new_json, "w") as f:
            json.dump(results_doc(12e12), f)
        with open(os.path.join(self.dev, "sub", "b.txt"), "w") as f:
            f.write("published table\n")
        with open(os.path.join(self.dev, "other.txt"), "w") as f:
            f.write("published elsewhere\n")
        self.build = os.path.join(t, "build")
        os.makedirs(self.build)
        with open(os.path.join(self.build, "mpsbench"), "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(os.path.join(self.build, "mpsbench"), 0o755)
        self.spec([
            "# a comment",
            f"one   a.json     cp {shlex.quote(self.new_json)} \"$OUT/a.json\"",
            "two   sub/b.txt  printf 'new table\\n' >\"$OUT/sub/b.txt\"; echo \"$BUILD\" >\"$OUT/build.txt\"; pwd",
            "three c.txt=other.txt  false",
        ])
        self.env = dict(os.environ, MPSBENCH_REPRODUCE_SKIP_GPU_CHECK="1", MPSBENCH_BUILD_DIR=self.build)

    def tearDown(self):
        self.tmp.cleanup()

    def spec(self, lines):
        with open(os.path.join(self.dev, "reproduce.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")

    def run_it(self, *args, cwd=None):
        return subprocess.run(["bash", REPRODUCE, "--no-build", *args], capture_output=True, text=True,
                              env=self.env, cwd=cwd or self.tmp.name, timeout=120)

    def test_runs_every_command_compares_and_never_overwrites(self):
        out = os.path.join(self.tmp.name, "out")
        r = self.run_it(self.dev, out)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # `three` fails and writes nothing
        with open(os.path.join(out, "a.json")) as f:
            self.assertEqual(json.load(f), results_doc(12e12))
        with open(os.path.join(out, "build.txt")) as f:
            self.assertEqual(f.read().strip(), self.build)
        with open(os.path.join(out, "logs", "two.log")) as f:
            self.assertEqual(f.read().strip(), ROOT)  # commands run from the repository root
        with open(os.path.join(out, "comparison.txt")) as f:
            comparison = f.read()
        self.assertIn("1.200", comparison)
        self.assertIn("published table", comparison)
        self.assertIn("new table", comparison)
        self.assertIn("this run wrote no", comparison)
        with open(os.path.join(out, "summary.txt")) as f:
            summary = f.read()
        self.assertRegex(summary, r"one\s+0\s")
        self.assertRegex(summary, r"three\s+1, a file missing")
        for name in ("reproduce.txt", "machine.txt"):
            self.assertTrue(os.path.isfile(os.path.join(out, name)), name)
        # a second run into the same directory is refused and changes nothing
        before = {p: os.path.getmtime(p) for p in glob.glob(os.path.join(out, "**"), recursive=True)}
        r = self.run_it(self.dev, out)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("nothing is overwritten", r.stderr)
        self.assertEqual(before, {p: os.path.getmtime(p) for p in glob.glob(os.path.join(out, "**"), recursive=True)})

    def test_default_outdir_is_new_each_time_and_only_selects(self):
        for _ in range(2):
            r = self.run_it("--only", "one", self.dev)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        made = sorted(glob.glob(os.path.join(self.tmp.name, "reproduce-dev-2026-01-01-*")))
        self.assertEqual(len(made), 2, made)
        for d in made:
            self.assertEqual(sorted(os.listdir(d)), ["a.json", "comparison.txt", "logs", "machine.txt",
                                                     "reproduce.txt", "summary.txt"])

    def test_bad_input(self):
        r = self.run_it("--only", "nine", self.dev)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no command 'nine'", r.stderr)
        r = self.run_it(os.path.join(self.tmp.name, "nowhere"))
        self.assertEqual(r.returncode, 2)
        for lines, message in ((["one a.json"], "want NAME FILES COMMAND"),
                               (["one a.json true", "one b.json true"], "used twice"),
                               (["one ../a.json true"], "without . or .."),
                               (["one a.json true", "two a.json true"], "earlier line")):
            self.spec(lines)
            r = self.run_it(self.dev)
            self.assertEqual(r.returncode, 2, lines)
            self.assertIn(message, r.stderr)
        self.assertEqual(glob.glob(os.path.join(self.tmp.name, "reproduce-*")), [])

    def test_sigterm_stops_the_running_command(self):
        self.spec(["slow x.txt sleep 60 & echo $! >\"$OUT/pid\"; wait"])
        out = os.path.join(self.tmp.name, "out")
        p = subprocess.Popen(["bash", REPRODUCE, "--no-build", self.dev, out], env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        pid_file = os.path.join(out, "pid")
        deadline = time.monotonic() + 30
        while not (os.path.exists(pid_file) and open(pid_file).read().strip()) and time.monotonic() < deadline:
            time.sleep(0.1)
        sleeper = int(open(pid_file).read())
        p.send_signal(signal.SIGTERM)
        output, _ = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 143, output)
        self.assertIn("interrupted", output)
        time.sleep(0.2)
        self.assertFalse(os.path.exists(f"/proc/{sleeper}") and
                         open(f"/proc/{sleeper}/stat").read().split()[2] != "Z", "the command's sleep survived")


if __name__ == "__main__":
    unittest.main()
