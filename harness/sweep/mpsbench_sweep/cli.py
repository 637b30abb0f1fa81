"""Command line of mpsbench-sweep: the options, their help, and main().

Every value is checked as it is parsed (inputs.py: ASCII decimal, within mpsbench's own limits; no option
takes an empty value: given()); an error is one line and exit status 2, argparse's own included.
configure.py turns the parsed options into the frozen settings, the runner runs them.
"""
import argparse
import signal
import sys
import time

from mpsbench_core import modes as registry
from mpsbench_core.verdict import GAIN_THRESHOLD

from . import configure, workdir
from .app.settings import DEFAULT_APP_MODES, MAX_MIN_TIME_S, MAX_REPETITIONS, MIN_TIME_DEFAULT_S
from .inputs import InputError, integer, seconds
from .jobs.outcome import EXIT_INPUT, Interrupted
from .launcher import LauncherError
from .lifetime import stop_signals
from .plan import DEFAULT_ROUNDS, MAX_ROUNDS
from .runner import Runner
from .text import printable, quoted

MAX_NODES = 100000
MAX_GPUS_PER_NODE = 1024       # mpsbench's --gpus: device indices 0-1023
MAX_RANKS_PER_GPU = 4096
MAX_TIMEOUT_S = 1e6            # mpsbench's --timeout limit
MAX_DAEMON_WAIT_S = 3600.0

DESCRIPTION = """\
Runs the whole GPU-sharing comparison: one mpsbench MPI job per mode (timeslice,
mps, mps-qos: one job per ranks-per-GPU value, mps-mem: one job per memory
limit, streams), in --rounds rounds with the modes in another order each round,
with a private MPS control daemon started before each stretch of MPS jobs and
removed after it, merges every job's results into one JSON file of the
mpsbench schema (context.sweep says what ran) and prints a table: throughput per
mode, MPS gain over timeslice, ratio to streams, then one verdict line per kernel
and precision: where MPS pays off, the best ranks per GPU and the crossover size.
--client-ramp instead finds how many MPS clients share one GPU: mode mps at 1, 2,
4, ... clients per GPU up to the client limit and one past it.
Options after -- go to every mpsbench job (the sweep sets --mode, --ranks-per-gpu
and --output itself)."""

EPILOG = """\
exit status: 0 all jobs ran and every result verified (--client-ramp: the step
past the limit may fail, that is its finding); 1 a result failed verification
or an application's configuration failed;
2 bad input, preflight failure (--device gpu without a GPU the probe sees, the
work directory in use by another sweep), a daemon not started by the sweep (with
--existing-daemon refuse), another user's MPS processes (with --other-mps-users
refuse) or a job rejected its input; 3 a job crashed,
timed out or its ranks had the wrong MPS state, or the MPS daemon failed;
130/143 (129) interrupted by SIGINT/SIGTERM (SIGHUP). Every exit cleans up first.

examples (one GPU node):
  harness/mpsbench-sweep --ranks-per-gpu 1,2,4,8 -- --kernel matmul --precision fp32
  harness/mpsbench-sweep --modes mps,mps-mem --mem-limits 2G,8G -- --kernel matmul --size 4096
  harness/mpsbench-sweep --client-ramp"""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but an error is one escaped line (no usage block): as every other error of the sweep."""

    def error(self, message):
        self.exit(EXIT_INPUT, f"{self.prog}: error: {printable(message)} (see --help)\n")


def given(convert=None):
    """The type of every option that takes a value (valued): an empty or blank value is refused, one line
    naming the option, never read as the option left out (`--app-check ''` would run no check and call every
    run verified; `--app-launcher ''` would farm separate copies). convert: the option's own type, if any."""
    def parse(text):
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{quoted(text)} is {'blank' if text else 'empty'}: give a value, or "
                                             "leave the option out for its default")
        return convert(text) if convert is not None else text
    parse.__name__ = getattr(convert, "__name__", "value")
    return parse


def valued(add_argument):
    """add_argument of a parser or group, with every option that takes a value typed through given()."""
    def add(*names, **kwargs):
        if kwargs.get("action") is None:
            kwargs["type"] = given(kwargs.get("type"))
        return add_argument(*names, **kwargs)
    return add


def whole(flag, low, high):
    def parse(text):
        try:
            return integer(flag, text, low, high)
        except InputError as e:
            raise argparse.ArgumentTypeError(str(e).split(": ", 1)[1]) from None
    parse.__name__ = "whole number"
    return parse


def number(flag, high):
    def parse(text):
        try:
            return seconds(flag, text, 0.0, high)
        except InputError as e:
            raise argparse.ArgumentTypeError(str(e).split(": ", 1)[1]) from None
    parse.__name__ = "number"
    return parse


def build_parser():
    p = OneLineParser(prog="mpsbench-sweep", description=DESCRIPTION, epilog=EPILOG,
                      formatter_class=argparse.RawDescriptionHelpFormatter,
                      usage="%(prog)s [options] [-- MPSBENCH-OPTIONS...]")
    a = valued(p.add_argument)
    a("--modes", default=None, metavar="LIST",
      help=f"sharing modes to compare, run in this order; also mps-mem (with --mem-limits) and green (SM "
           f"partitions in green contexts, compared with mps-qos) (default: "
           f"{','.join(registry.DEFAULT_SWEEP_MODES)}, plus mps-mem with --mem-limits; with --app: "
           f"{','.join(DEFAULT_APP_MODES)})")
    a("--ranks-per-gpu", default="1,2,4,8", metavar="LIST",
      help="active ranks (streams: instances; --app: copies) per GPU (default: %(default)s)")
    a("--qos-percentages", default=None, metavar="LIST",
      help="mps-qos: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE values, one job per (ranks per GPU, value) "
           "(default: 100/k rounded down for k ranks per GPU)")
    a("--mem-limits", default=None, metavar="LIST",
      help="mode mps-mem: CUDA_MPS_PINNED_DEVICE_MEM_LIMIT values per GPU (K, M, G suffixes: 2G,8G), one job per "
           "value, each rank gets DEVICE=VALUE for every GPU of its node (default: none; given without --modes, it "
           "adds mps-mem to the default modes)")
    a("--client-ramp", action="store_true",
      help="how many clients share one GPU: mode mps, one job per k = 1, 2, 4, ... up to the MPS client limit "
           "and one past it, with --preset client-ramp before the options after --; a table of throughput, "
           "context memory per rank and MPS server memory per k (console and sweep.json) (default: off)")
    a("--rounds", type=whole("--rounds", 1, MAX_ROUNDS), default=None, metavar="N",
      help=f"run every job N times (1 to {MAX_ROUNDS}), each time in processes of its own, round after round, the "
           "modes in another order each round (rotated, reversed every other round) so that a drift of the machine "
           "falls on every mode alike; the records say their round (default: "
           f"{DEFAULT_ROUNDS}; 1 with --client-ramp, which measures one round)")
    a("--turns", choices=("on", "off"), default="on",
      help="on: each round's modes run at once, on the same cores, and take turns of one configuration (the "
           "others asleep), so that every mode measures a configuration within a second of the others and a "
           "host whose CPUs change speed changes it for all of them alike; off: one job after the other. Not "
           "for modes with several jobs a round (mps-qos, mps-mem), --client-ramp or --app, which run one by "
           "one (default: on; docs/measurement.md)")
    a("--gpus-per-node", type=whole("--gpus-per-node", 1, MAX_GPUS_PER_NODE), default=None, metavar="G",
      help="GPUs each node uses (default: the count in CUDA_VISIBLE_DEVICES, else `nvidia-smi -L`, "
           "else 1, said so; 1 with --device cpu)")
    a("--nodes", type=whole("--nodes", 1, MAX_NODES), default=None, metavar="N",
      help="nodes of the job (default: SLURM_NNODES inside a Slurm allocation, else 1)")
    a("--launcher", default="auto", metavar="auto|mpirun|srun|TEMPLATE",
      help="how jobs start (default: auto = srun inside a Slurm allocation, else mpirun); a TEMPLATE such as "
           "'mpiexec -n {np} --bind-to none' gets {np}, {np_per_node}, {nodes} filled in and the mpsbench "
           "command appended")
    a("--node-launcher", default="auto", metavar="auto|TEMPLATE",
      help="with --nodes > 1: how one MPS guardian per node starts (default: auto = srun --ntasks-per-node=1 "
           "--overlap --input=all, or mpirun --map-by ppr:1:node --stdin all); a TEMPLATE gets {nodes}")
    a("--mpsbench", default=None, metavar="PATH",
      help="mpsbench executable (default: the one beside an installed mpsbench-sweep, else build/mpsbench of "
           "this repository, else mpsbench on PATH)")
    a("--mps-control", default="nvidia-cuda-mps-control", metavar="PATH",
      help="MPS control program (default: %(default)s on PATH)")
    a("--existing-daemon", choices=("refuse", "use"), default="refuse",
      help="an MPS daemon this sweep did not start is running: refuse to run (exit 2), or use it for the "
           "MPS modes (recorded; it is never stopped or killed) (default: %(default)s)")
    a("--other-mps-users", choices=("refuse", "go-on"), default="refuse",
      help="an MPS server or daemon of another user runs here, or serves another user's clients: refuse to run "
           "(exit 2), or go on and record it (default: %(default)s)")
    a("--mps-client-limit", type=whole("--mps-client-limit", 1, MAX_RANKS_PER_GPU), default=None, metavar="N",
      help="MPS clients an MPS server accepts per GPU (default: 48; 16 when nvidia-smi reports a GPU older "
           "than Volta; --client-ramp: what the daemon answers to get_default_client_limit, if it does)")
    a("--mps-ready-timeout", type=number("--mps-ready-timeout", MAX_DAEMON_WAIT_S), default=15.0, metavar="S",
      help="seconds for a new daemon to answer get_server_list (default: %(default)g)")
    a("--mps-quit-timeout", type=number("--mps-quit-timeout", MAX_DAEMON_WAIT_S), default=10.0, metavar="S",
      help="seconds for the quit command to return (default: %(default)g)")
    a("--mps-quit-grace", type=number("--mps-quit-grace", MAX_DAEMON_WAIT_S), default=10.0, metavar="S",
      help="seconds for the daemon and its server to exit after quit before SIGTERM, then SIGKILL "
           "(default: %(default)g)")
    a("--timeout", type=number("--timeout", MAX_TIMEOUT_S), default=None, metavar="S",
      help="longest a job may run before it is killed and the sweep stops with exit 3 (default: 3600; 600 with "
           "--client-ramp, whose step past the limit is then recorded as failed)")
    a("--output", default=None, metavar="PATH",
      help="merged results (default: mpsbench-sweep-DATE-TIME.json, never overwriting an earlier file); an "
           "existing regular file is replaced, anything else there (a link, a directory, a FIFO, a device) is "
           "refused, and so is a file the sweep itself writes in its work directory")
    a("--workdir", default=None, metavar="DIR",
      help="part files, job logs, MPS logs, sweep.json (default: OUTPUT without .json, plus -work); created if "
           "missing, else it must be a directory of yours that no other user can write in; one sweep at a time "
           "(a lock: a second sweep there exits 2)")
    a("--gain-threshold", type=number("--gain-threshold", 1000.0), default=GAIN_THRESHOLD, metavar="X",
      help="the MPS gain over timeslice that pays off, for the verdict lines after the table (default: "
           "%(default)g)")
    a("--keep-parts", action="store_true",
      help="keep each job's part file after a successful merge (default: delete them; logs are kept)")
    g = p.add_argument_group("farming your own application (instead of mpsbench; harness/sweep/README.md)")
    a = valued(g.add_argument)
    a("--app", default=None, metavar="'COMMAND ARGS'",
      help="run this program as k copies per GPU (copy i of a node on GPU i mod G, by UUID in "
           "CUDA_VISIBLE_DEVICES) for every mode and k; one string, split as a shell would, never run through a "
           "shell (write sh -c '...' for one); modes timeslice, mps, mps-qos (default: none: mpsbench runs)")
    a("--app-name", default=None, metavar="NAME",
      help="its name in the results and on the terminal: printable, at most 200 characters (default: the "
           "program's base name; for an interpreter, the script's)")
    a("--app-check", default=None, metavar="'COMMAND ARGS'",
      help="run after each run with MPSBENCH_APP_STDOUT (and MPSBENCH_APP_STDERR) naming that run's output "
           "files; the run counts only when it exits 0 (checks run after each window, outside the timing) "
           "(default: none)")
    a("--app-launcher", default=None, metavar="mpirun|srun|TEMPLATE",
      help="the command is an MPI program: each run is one whole launch of k x G ranks per node through this "
           "launcher; each rank sees one GPU, node-local rank mod G (harness/sweep/app-rank-gpu) (default: "
           "none: separate copies)")
    a("--app-metric", default=None, metavar="REGEX",
      help="the program's own figure: the first group of the last line of a run's stdout that REGEX matches is "
           "that copy's rate (e.g. 'ns_per_day: ([0-9.]+)'); a configuration's figure is the sum over the copies "
           "(default: none: runs per second)")
    a("--app-progress", default=None, metavar="REGEX",
      help="the program's own figure from a cumulative counter it prints as it goes (e.g. '^([0-9]+),'): each "
           "copy's rate inside the window where every copy is counting, start-up excluded; each window is one "
           "run per copy (default: none)")
    a("--app-metric-unit", default=None, metavar="UNIT",
      help="the unit of that figure, e.g. ns/day, it/s, steps/s (default: units/s)")
    a("--app-bind", default="none", metavar="LIST",
      help="how copies are pinned to CPUs, an axis like the modes: none, core (cores of its own per copy), numa "
           "(its GPU's NUMA node) (default: %(default)s)")
    a("--meter", default=None, metavar="PATH",
      help="mpsbench-meter, which reads the GPUs' energy and SM activity over each window (default: the one "
           "beside an installed mpsbench-sweep, else build/mpsbench-meter, else on PATH; missing: recorded as "
           "unavailable)")
    a("--min-time", type=number("--min-time", MAX_MIN_TIME_S), default=MIN_TIME_DEFAULT_S, metavar="S",
      help="--app: copies start new runs until S seconds have passed (at most 3600, as mpsbench's --min-time); "
           "the window ends when the last run ends (default: %(default)g)")
    a("--repetitions", type=whole("--repetitions", 1, MAX_REPETITIONS), default=3, metavar="N",
      help="--app: timed windows per configuration "
                                                               "(default: %(default)s)")
    a("--no-warmup", action="store_true",
      help="--app: no untimed first run per copy before the windows (default: one warm-up run each)")
    a("--device", choices=("auto", "gpu", "cpu"), default="auto",
      help="--app: cpu runs the copies as plain processes, timeslice only (tests, CI); auto: gpu when "
           "nvidia-smi finds one; gpu: mpsbench-probe must see the GPUs here, else exit 2 as mpsbench "
           "(default: %(default)s)")
    a("--probe", default=None, metavar="PATH",
      help="--app: mpsbench-probe, run before each configuration in the copies' environment to verify the MPS "
           "state per GPU (default: the one beside an installed mpsbench-sweep, else build/mpsbench-probe of "
           "this repository, else on PATH)")
    return p


def main(argv=None):
    started = time.monotonic()
    argv = list(sys.argv[1:] if argv is None else argv)
    # Before the runner's own handling: the preflight may wait for nvidia-smi or the probe; a signal then
    # ends the sweep with one line and its usual status, not a traceback (the probe is killed by run()).
    stop_signals.install()
    try:
        settings = configure.settings_from(argv, build_parser())
        lock = workdir.claim(settings.workdir)  # held until the sweep exits, however it exits
        try:
            output_lock = workdir.claim_output(settings.output)  # two sweeps never write one --output
        except InputError:
            lock.release()
            raise
    except (InputError, LauncherError) as e:
        print(f"mpsbench-sweep: error: {printable(e)}", file=sys.stderr)
        return EXIT_INPUT
    except Interrupted as e:
        return _interrupted_early(e)
    try:
        # A signal before the runner installs its own handling (while it plans) ends the sweep like one during
        # the preflight; from then on the runner handles every signal itself and returns its status.
        return Runner(settings, started).run()
    except Interrupted as e:
        return _interrupted_early(e)
    finally:
        output_lock.release()
        lock.release()


def _interrupted_early(e):
    print(f"mpsbench-sweep: interrupted by {signal.Signals(e.signum).name} before the first job; nothing was "
          "started", file=sys.stderr)
    return 128 + e.signum
