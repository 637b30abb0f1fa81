"""What the sweep writes in a shared, world-writable directory: never through a planted link, never over a
FIFO, a device or a directory, never at a predictable temporary name; private MPS directories stay private."""
import os
import stat
import sys
import tempfile
import unittest

from sweeptest import SweepTestCase

from mpsbench_sweep import merge, safe_files  # noqa: E402
from mpsbench_sweep.daemon.mps_daemon import Daemon, DaemonError  # noqa: E402


class Planted(unittest.TestCase):
    """A directory with a victim file and the things a neighbour could plant beside it."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="sweep-safe-")
        self.dir = self._tmp.name
        self.victim = self.path("victim.json")
        with open(self.victim, "w") as f:
            f.write("someone else's file\n")
        os.symlink(self.victim, self.path("link.json"))
        os.mkfifo(self.path("fifo"))
        os.mkdir(self.path("directory"))

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def assert_untouched(self):
        with open(self.victim) as f:
            self.assertEqual(f.read(), "someone else's file\n")
        self.assertTrue(os.path.islink(self.path("link.json")))
        self.assertTrue(stat.S_ISFIFO(os.lstat(self.path("fifo")).st_mode))
        self.assertTrue(os.path.isdir(self.path("directory")) and not os.listdir(self.path("directory")))
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith(".")], [], "temporary left behind")


class WriteAtomic(Planted):
    def test_refuses_every_target_that_is_not_a_regular_file(self):
        for name, kind in (("link.json", "a symbolic link"), ("fifo", "a FIFO"), ("directory", "a directory")):
            with self.assertRaisesRegex(safe_files.UnsafePath, f"{self.path(name)} is {kind}, not a regular file"):
                merge.write_atomic(self.path(name), {"x": 1})
        with self.assertRaisesRegex(safe_files.UnsafePath, "/dev/null is a character device"):
            safe_files.write_atomic("/dev/null", "x")
        self.assertTrue(stat.S_ISCHR(os.lstat("/dev/null").st_mode))
        with self.assertRaisesRegex(safe_files.UnsafePath, "does not exist"):
            safe_files.write_atomic(self.path("missing/out.json"), "x")
        self.assert_untouched()

    def test_planted_links_at_predictable_temporary_names_have_no_effect(self):
        target = self.path("out.json")
        for suffix in (".tmp", f".tmp.{os.getpid()}", "~", ".part"):
            os.symlink(self.victim, target + suffix)
        os.symlink(self.victim, self.path(".mpsbench-sweep-tmp"))
        merge.write_atomic(target, {"results": []})
        with open(target) as f:
            self.assertIn('"results"', f.read())
        with open(self.victim) as f:
            self.assertEqual(f.read(), "someone else's file\n")
        self.assertFalse(os.path.islink(target))

    def test_replaces_a_regular_file(self):
        target = self.path("out.json")
        with open(target, "w") as f:
            f.write("old\n")
        safe_files.write_atomic(target, "new\n")
        with open(target) as f:
            self.assertEqual(f.read(), "new\n")


class OpenLog(Planted):
    def test_refuses_links_and_fifos_without_blocking(self):
        for name in ("link.json", "fifo", "directory"):
            with self.assertRaises(safe_files.UnsafePath):
                safe_files.open_log(self.path(name))
        self.assert_untouched()

    def test_writes_a_new_log(self):
        with safe_files.open_log(self.path("job.log")) as f:
            f.write("line\n")
        self.assertTrue(stat.S_ISREG(os.lstat(self.path("job.log")).st_mode))


class OwnDirectory(Planted):
    def test_creates_a_new_directory(self):
        safe_files.own_directory(self.path("new/work"))
        self.assertTrue(os.path.isdir(self.path("new/work")))

    def test_accepts_an_existing_private_directory(self):
        os.mkdir(self.path("mine"), 0o755)
        os.chmod(self.path("mine"), 0o755)
        safe_files.own_directory(self.path("mine"))

    def test_refuses_links_files_and_directories_others_can_write(self):
        os.symlink(self.path("directory"), self.path("dirlink"))
        os.mkdir(self.path("shared"))
        os.chmod(self.path("shared"), 0o1777)
        for name, message in (("dirlink", "is a symbolic link"), ("victim.json", "is a regular file, not a directory"),
                              ("shared", "can be written by other users")):
            with self.assertRaisesRegex(safe_files.UnsafePath, message):
                safe_files.own_directory(self.path(name))


class PrivateMpsDirectories(Planted):
    def test_an_existing_entry_or_link_at_the_base_is_refused(self):
        for name in ("directory", "link.json", "victim.json"):
            with self.assertRaisesRegex(DaemonError, "cannot create the private MPS directory"):
                Daemon(sys.executable, self.path(name)).start(ready_timeout=0.1)
        self.assert_untouched()

    def test_directories_are_created_mode_0700(self):
        daemon = Daemon("/bin/false", self.path("mpsb-x"))
        with self.assertRaises(DaemonError):
            daemon.start(ready_timeout=0.1)  # the control program fails; the directories exist by then
        for d in (daemon.base_dir, daemon.pipe_dir, daemon.log_dir):
            self.assertEqual(stat.S_IMODE(os.lstat(d).st_mode) & 0o077, 0, d)
        daemon.stop(quit_timeout=0.1, grace=0.1)
        self.assertFalse(os.path.lexists(daemon.base_dir))


class SweepRefusesUnsafeTargets(SweepTestCase):
    """The whole command: exit 2, one line naming the path, nothing started, nothing replaced."""

    def check(self, args, message):
        r = self.sweep(args)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(message, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_output_onto_dev_null_fifo_link_or_directory(self):
        os.mkfifo(os.path.join(self.tmp, "fifo"))
        os.symlink(os.path.join(self.tmp, "victim"), os.path.join(self.tmp, "link.json"))
        for target, kind in (("/dev/null", "a character device"), (os.path.join(self.tmp, "fifo"), "a FIFO"),
                             (os.path.join(self.tmp, "link.json"), "a symbolic link"), (self.tmp, "a directory")):
            args = self.fake_args("--workdir", os.path.join(self.tmp, "work"))
            args[args.index("--output") + 1] = target
            self.check(args, f"--output: {target} is {kind}, not a regular file")
        self.assertTrue(stat.S_ISCHR(os.lstat("/dev/null").st_mode))
        self.assertFalse(os.path.lexists(os.path.join(self.tmp, "victim")))

    def test_workdir_that_is_a_link_or_writable_by_others(self):
        os.mkdir(os.path.join(self.tmp, "real"))
        os.symlink(os.path.join(self.tmp, "real"), os.path.join(self.tmp, "linked"))
        self.check(self.fake_args("--workdir", os.path.join(self.tmp, "linked")), "--workdir: ")
        shared = os.path.join(self.tmp, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)
        self.check(self.fake_args("--workdir", shared), "can be written by other users")
        self.assertEqual(os.listdir(os.path.join(self.tmp, "real")), [])


if __name__ == "__main__":
    unittest.main()
