"""The example applications' scripts without a GPU: bad input, no PyTorch, the --app-check script."""
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TORCH_EXAMPLE = os.path.join(REPO, "examples", "torch_matmul_cpu.py")
CHECK = os.path.join(REPO, "examples", "check_output.sh")


def has_torch():
    return subprocess.run([sys.executable, "-c", "import torch, numpy"], capture_output=True).returncode == 0


class TorchExample(unittest.TestCase):
    def run_example(self, *args, env=None):
        return subprocess.run([sys.executable, TORCH_EXAMPLE, *args], capture_output=True, text=True, timeout=300,
                              env=env)

    def test_without_pytorch_one_line_and_exit_2(self):
        with tempfile.TemporaryDirectory() as fake:
            with open(os.path.join(fake, "torch.py"), "w") as f:
                f.write("raise ImportError('No module named torch (test stand-in)')\n")
            r = self.run_example("--steps", "1", env=dict(os.environ, PYTHONPATH=fake))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("torch_matmul_cpu: error: PyTorch with CUDA is not available here", r.stderr)

    def test_bad_input_one_line_and_exit_2(self):
        for args, expected in ((["--size", "0"], "--size: 0 must be at least 1"),
                               (["--steps", "x"], "--steps: 'x' is not an integer"),
                               (["--cpu-work", "-1"], "--cpu-work: -1 must be at least 0"),
                               (["--device", "tpu"], "--device: invalid choice"),
                               (["--bogus"], "unrecognized arguments: --bogus")):
            r = self.run_example(*args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(expected, r.stderr)

    @unittest.skipUnless(has_torch(), "PyTorch is not installed here")
    def test_runs_and_verifies_on_the_cpu(self):
        r = self.run_example("--device", "cpu", "--size", "64", "--steps", "2", "--cpu-work", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("result=ok", r.stdout)


class CheckScript(unittest.TestCase):
    def check(self, text, path=None):
        """check_output.sh's exit status on a stdout file holding text (None: MPSBENCH_APP_STDOUT unset)."""
        with tempfile.NamedTemporaryFile("w", suffix=".out") as f:
            if text is not None:
                f.write(text)
                f.flush()
            env = dict(os.environ)
            env.pop("MPSBENCH_APP_STDOUT", None)
            if text is not None or path is not None:
                env["MPSBENCH_APP_STDOUT"] = path or f.name
            r = subprocess.run(["sh", CHECK], env=env, capture_output=True, text=True, timeout=30)
            if r.returncode == 2:
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            return r.returncode

    def test_passes_only_on_result_ok(self):
        self.assertEqual(self.check("small-kernels: launches=1 result=ok mismatches=0\n"), 0)
        self.assertEqual(self.check("torch_matmul_cpu: device=cuda steps=1 result=ok"), 0)
        self.assertEqual(self.check("small-kernels: launches=1 result=wrong mismatches=3\n"), 1)
        self.assertEqual(self.check("result=okay\n"), 1)
        self.assertEqual(self.check(""), 1)

    def test_no_file_to_read_is_exit_2(self):
        self.assertEqual(self.check(None), 2)
        self.assertEqual(self.check(None, path="/nonexistent-dir/run.out"), 2)
        with tempfile.TemporaryDirectory() as directory:
            self.assertEqual(self.check(None, path=directory), 2)


if __name__ == "__main__":
    unittest.main()
