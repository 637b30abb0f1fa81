"""README command 1, `scripts/bootstrap.sh run`: the sweep command it builds from its arguments and the machine.

MPSBENCH_BOOTSTRAP_DRY_RUN=1 makes it print the commands it would run (no packages, no build);
MPSBENCH_BOOTSTRAP_GPUS stands for the GPU count mpsbench-probe would report, OMP_NUM_THREADS for the
cores (GNU nproc honours it), and PATH decides whether nvidia-cuda-mps-control is there (the fake one).
"""
import datetime
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

from sweeptest import FAKE_CONTROL, REPO

from mpsbench_sweep import cli, passthrough  # noqa: E402

BOOTSTRAP = os.path.join(REPO, "scripts", "bootstrap.sh")
SWEEP = os.path.join(REPO, "harness", "mpsbench-sweep")


def measure_args():
    """The script's measure_args=(...) as a list: the test follows whatever the lead sets there."""
    with open(BOOTSTRAP, encoding="utf-8") as f:
        match = re.search(r"^measure_args=\((.*)\)$", f.read(), re.M)
    assert match, "bootstrap.sh defines no measure_args=(...)"
    return shlex.split(match.group(1))


class BootstrapRun(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bst-")
        self.build = os.path.join(self.tmp, "build")
        self.nompsbin = os.path.join(self.tmp, "bin")  # PATH without nvidia-cuda-mps-control
        os.mkdir(self.nompsbin)
        os.symlink(os.path.realpath(sys.executable), os.path.join(self.nompsbin, "python3"))
        for tool in ("date", "nproc", "seq", "dirname", "timeout"):
            found = shutil.which(tool)
            if found:
                os.symlink(found, os.path.join(self.nompsbin, tool))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def dry_run(self, *args, gpus="1", cores="16", mps=True, expect=0, nvidia_smi=None):
        """nvidia_smi: what a fake nvidia-smi -L prints (None: there is none)."""
        env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "OMP_THREAD_LIMIT")}
        env.update(MPSBENCH_BOOTSTRAP_DRY_RUN="1", MPSBENCH_BOOTSTRAP_GPUS=gpus, OMP_NUM_THREADS=cores,
                   MPSBENCH_BUILD_DIR=self.build, MPSBENCH_RANKS="8",
                   PATH=(os.path.dirname(FAKE_CONTROL) + os.pathsep if mps else "") + self.nompsbin)
        smi = os.path.join(self.nompsbin, "nvidia-smi")
        if os.path.lexists(smi):
            os.unlink(smi)
        if nvidia_smi is not None:
            with open(smi, "w") as f:
                f.write(f"#!/bin/sh\nprintf '%s\\n' {shlex.quote(nvidia_smi)}\n")
            os.chmod(smi, 0o755)
            for tool in ("grep", "printf"):
                if shutil.which(tool) and not os.path.lexists(os.path.join(self.nompsbin, tool)):
                    os.symlink(shutil.which(tool), os.path.join(self.nompsbin, tool))
        r = subprocess.run([shutil.which("bash") or "/bin/bash", BOOTSTRAP, "run"] + list(args), env=env, cwd=self.tmp, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, expect, r.stdout + r.stderr)
        if expect:
            return r
        lines = r.stdout.splitlines()
        sweep = next(shlex.split(l.split(": ", 1)[1][len("would run: "):]) for l in lines if "would run: " in l)
        report = next(shlex.split(l.split("then: ", 1)[1]) for l in lines if "then: " in l)
        self.build_line = next(l.split("would build: ", 1)[1] for l in lines if "would build: " in l)
        notes = [l for l in lines if "would run: " not in l and "then: " not in l and "would build: " not in l]
        return sweep, report, notes

    def split(self, sweep):
        """(sweep options as parsed by the sweep's own parser, mpsbench options after --)."""
        self.assertEqual(sweep[0], SWEEP)
        dash = sweep.index("--")
        args = cli.build_parser().parse_args(sweep[1:dash])
        passthrough.passthrough_options(sweep[dash + 1:])  # raises on an option the sweep owns
        return args, sweep[dash + 1:]

    def test_gpu_machine_compares_three_modes(self):
        sweep, report, notes = self.dry_run("--kernel", "matmul", "--precision", "fp32")
        args, mpsbench = self.split(sweep)
        self.assertEqual((args.modes, args.ranks_per_gpu, args.gain_threshold), ("timeslice,mps,streams", "1,2,4,8",
                                                                                 1.1))
        self.assertEqual(args.mpsbench, os.path.join(self.build, "mpsbench"))
        self.assertRegex(args.output, r"^mpsbench-compare-\d{8}-\d{6}\.json$")
        # The measurement settings first, the user's options last (mpsbench: the last one wins).
        self.assertEqual(mpsbench, measure_args() + ["--kernel", "matmul", "--precision", "fp32"])
        self.assertEqual(report, ["mpsbench-analyze", "report", args.output, "-o", args.output[:-5] + ".html",
                                  "--threshold", "1.1"])
        self.assertEqual(notes, [])

    def test_options_for_the_sweep(self):
        sweep, report, _ = self.dry_run("--output=res.json", "--ranks-per-gpu", "1,2", "--mode", "timeslice,mps",
                                        "--existing-daemon", "use", "--gain-threshold", "1.25", "--size", "512")
        args, mpsbench = self.split(sweep)
        self.assertEqual((args.output, args.ranks_per_gpu, args.modes, args.existing_daemon, args.gain_threshold),
                         ("res.json", "1,2", "timeslice,mps", "use", 1.25))
        self.assertEqual(mpsbench, measure_args() + ["--size", "512"])
        self.assertEqual(report[2:], ["res.json", "-o", "res.html", "--threshold", "1.25"])
        r = self.dry_run("--output", expect=2)
        self.assertIn("--output: missing value", r.stderr)

    def test_without_the_mps_control_program(self):
        sweep, _, notes = self.dry_run(mps=False)
        self.assertEqual(self.split(sweep)[0].modes, "timeslice,streams")
        self.assertEqual(len(notes), 1)
        self.assertIn("nvidia-cuda-mps-control is not on PATH", notes[0])

    def test_without_a_gpu(self):
        sweep, report, notes = self.dry_run("--kernel", "nbody", gpus="0")
        args, mpsbench = self.split(sweep)
        self.assertEqual((args.modes, args.ranks_per_gpu), ("streams", "1,2,4"))
        self.assertEqual(mpsbench, ["--device", "cpu"] + measure_args() + ["--kernel", "nbody"])
        self.assertEqual(len(notes), 1)
        self.assertRegex(notes[0], r"^bootstrap: no usable NVIDIA GPU \(.*\): the MPS comparison needs one; running "
                                   r"the CPU engine instead")
        self.assertEqual(report[:2], ["mpsbench-analyze", "report"])
        # Asked for explicitly on a GPU machine: the same, without the note.
        sweep, _, notes = self.dry_run("--device", "cpu", gpus="2")
        self.assertEqual((self.split(sweep)[0].modes, notes), ("streams", []))

    def test_gpus_used_follow_the_cores(self):
        # 8 ranks per GPU: 16 cores serve 2 of 4 GPUs; 64 cores all 4; 2 cores still one.
        for cores, expected in (("16", ["--gpus", "0,1"]), ("64", []), ("2", ["--gpus", "0"])):
            sweep, _, notes = self.dry_run(gpus="4", cores=cores)
            self.assertEqual(self.split(sweep)[1], expected + measure_args(), cores)
            self.assertEqual(len(notes), 1 if expected else 0)
        sweep, _, _ = self.dry_run("--ranks-per-gpu", "1,2,4", gpus="4", cores="16")
        self.assertNotIn("--gpus", self.split(sweep)[1])  # 16 cores / 4 ranks per GPU: all 4 GPUs
        sweep, _, _ = self.dry_run("--ranks-per-gpu", "8,1,2", gpus="4", cores="16")  # the most, not the last
        self.assertEqual(self.split(sweep)[1][:2], ["--gpus", "0,1"])
        sweep, _, notes = self.dry_run("--gpus", "3", gpus="4", cores="8")  # the user's choice stands
        self.assertEqual((self.split(sweep)[1], notes), (measure_args() + ["--gpus", "3"], []))
        sweep, _, _ = self.dry_run(gpus="1", cores="2")  # one GPU: never a --gpus of ours
        self.assertNotIn("--gpus", self.split(sweep)[1])

    def test_default_names_never_overwrite(self):
        now = datetime.datetime.now()
        taken = []
        for dt in range(-1, 5):  # whatever second the script starts in, its first choice is taken
            stamp = (now + datetime.timedelta(seconds=dt)).strftime("%Y%m%d-%H%M%S")
            taken += [f"mpsbench-compare-{stamp}.json", f"mpsbench-compare-{stamp}-2.html"]
            os.mkdir(os.path.join(self.tmp, f"mpsbench-compare-{stamp}-3-work"))
        for name in taken:
            open(os.path.join(self.tmp, name), "w").close()
        sweep, report, _ = self.dry_run()
        output = self.split(sweep)[0].output
        self.assertRegex(output, r"^mpsbench-compare-\d{8}-\d{6}-4\.json$")
        for path in (output, report[4], output[:-5] + "-work"):
            self.assertFalse(os.path.lexists(os.path.join(self.tmp, path)), path)

    def test_the_build_makes_what_the_run_needs_for_the_local_gpu(self):
        self.dry_run(nvidia_smi="GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1234)")
        configure, build = [shlex.split(part) for part in self.build_line.split(" && ")]
        self.assertIn("-DCMAKE_CUDA_ARCHITECTURES=native", configure)
        self.assertEqual(build[-3:], ["--target", "mpsbench", "mpsbench-probe"])
        for listing in (None, "No devices were found"):  # no nvidia-smi, or one that finds no GPU
            self.dry_run(gpus="0", nvidia_smi=listing)
            self.assertIn("-UCMAKE_CUDA_ARCHITECTURES", shlex.split(self.build_line.split(" && ")[0]))

    def test_offline_the_report_is_made_elsewhere(self):
        with open(BOOTSTRAP, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("make it on any machine with pip from the results file: pip install ./analysis && "
                      "mpsbench-analyze report", text)
        self.assertIn("debian_analysis_packages=(python3-pandas python3-matplotlib python3-jsonschema)", text)

    def fake_python(self, directory, has_deps):
        """A python3 in `directory` that has the analysis' dependencies or not (otherwise the real one)."""
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "python3")
        with open(path, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n" + f'case "$*" in *pandas*) exit {0 if has_deps else 1} ;; esac\n'
                    + f'exec {shutil.which("python3")} "$@"\n')
        os.chmod(path, 0o755)
        return path

    def pick_analyzer(self, python_has_deps, venv_installed, system_has_deps=False):
        """What the report is made with once the analysis install has ended, as run_compare picks it."""
        bindir = os.path.join(self.tmp, "pybin")
        self.fake_python(bindir, python_has_deps)
        system = self.fake_python(os.path.join(self.tmp, "system"), system_has_deps)
        venv = os.path.join(self.build, "analysis-venv")
        if venv_installed:
            os.makedirs(os.path.join(venv, "bin"), exist_ok=True)
            with open(os.path.join(venv, "bin", "mpsbench-analyze"), "w", encoding="utf-8") as f:
                f.write("#!/bin/sh\n")
            os.chmod(os.path.join(venv, "bin", "mpsbench-analyze"), 0o755)
            open(os.path.join(venv, ".mpsbench-run-installed"), "w").close()
        script = (f"source {shlex.quote(BOOTSTRAP)}; build={shlex.quote(self.build)}; "
                  f"system_python={shlex.quote(system)}; pick_analyzer out.json; "
                  'printf "analyzer: %s\\n" "${analyzer[@]}"')
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
        r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        words = [line[len("analyzer: "):] for line in r.stdout.splitlines() if line.startswith("analyzer: ")]
        return words, r.stdout + r.stderr

    def test_the_report_is_made_by_what_is_there(self):
        # pip installed it: the venv's command.
        lines, _ = self.pick_analyzer(python_has_deps=False, venv_installed=True)
        self.assertEqual(lines, [os.path.join(self.build, "analysis-venv", "bin", "mpsbench-analyze")])
        shutil.rmtree(os.path.join(self.build, "analysis-venv"))
        # pip failed (offline) but python3 has pandas, matplotlib, jsonschema: the source tree (on the H100
        # machine the venv's command was used here, which pip had not made, and there was no report).
        lines, _ = self.pick_analyzer(python_has_deps=True, venv_installed=False)
        self.assertEqual(lines[-3:], ["python3", "-m", "mpsbench_analysis"])
        self.assertIn(f"PYTHONPATH={os.path.join(REPO, 'analysis', 'src')}", lines)
        # The python3 on PATH (a virtual environment's) lacks them, the system's has the Debian packages.
        lines, _ = self.pick_analyzer(python_has_deps=False, venv_installed=False, system_has_deps=True)
        self.assertEqual(lines[-3:], [os.path.join(self.tmp, "system", "python3"), "-m", "mpsbench_analysis"])
        # Neither: no report, one line saying how to make it elsewhere.
        lines, out = self.pick_analyzer(python_has_deps=False, venv_installed=False)
        self.assertEqual(lines, [""])  # printf of no words: one line, empty
        self.assertIn("no HTML report here", out)
        self.assertIn("mpsbench-analyze report out.json", out)

    def test_the_last_line_says_minutes_and_seconds(self):
        script = f"source {shlex.quote(BOOTSTRAP)}; minutes_seconds 236; minutes_seconds 60; minutes_seconds 42"
        r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), ["3 min 56 s", "1 min 0 s", "42 s"])

    def test_ci_runs_only_the_test_command(self):
        with open(os.path.join(REPO, ".ci", "run"), encoding="utf-8") as f:
            commands = [l for l in f.read().splitlines() if l.strip() and not l.startswith("#")]
        self.assertEqual([c for c in commands if "bootstrap.sh" in c], ["exec ./scripts/bootstrap.sh test"])


if __name__ == "__main__":
    unittest.main()
