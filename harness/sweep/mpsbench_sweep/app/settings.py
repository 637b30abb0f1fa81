"""The --app options of mpsbench-sweep: farming a user's own program instead of mpsbench.

`--app 'COMMAND ARGS'` is split as a shell would split it (shlex) and run directly, never through
a shell: a user who wants one writes `sh -c '...'`. Everything here is checked before anything
starts (exit 2, one line). The application's name goes into the results and onto the terminal:
a name given with --app-name must be printable; one taken from the command is escaped (text.py).
"""
import os
import shlex
from dataclasses import dataclass
from typing import Optional, Tuple

from mpsbench_core import modes as registry

from ..inputs import InputError, choice_list
from ..launcher import Launcher, LauncherError
from ..locate import default_program
from ..plan import MEM_FIELD
from ..preflight import executable
from ..text import printable, quoted
from .bind import BINDS
from .metric import MetricSpec, metric_spec
from .results import app_identity

SWEEP_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RANK_WRAPPER = os.path.join(SWEEP_DIR, "app-rank-gpu")
# The modes an application runs in: separate processes (a one-process mode runs k instances inside one
# mpsbench process), not mps-mem (its limit is tried on mpsbench's own buffers).
APP_MODES = tuple(m.name for m in registry.MODES if m.sweep and not m.one_process and m.label_field != MEM_FIELD)
DEFAULT_APP_MODES = tuple(m for m in registry.DEFAULT_SWEEP_MODES if m in APP_MODES)
INTERPRETERS = {"python", "python3", "bash", "sh", "dash", "zsh", "perl", "ruby", "node", "Rscript", "julia",
                "env", "apptainer", "singularity"}
RANK_VARS = ("MPSBENCH_GPUS_PER_NODE", "MPSBENCH_DEVICE")
APP_ONLY_FLAGS = ("app_name", "app_check", "app_launcher", "no_warmup", "device", "probe", "min_time", "repetitions",
                  "app_metric", "app_progress", "app_metric_unit", "app_bind", "meter")
MAX_NAME = 200
MIN_TIME_DEFAULT_S = 10.0
MAX_MIN_TIME_S = 3600.0  # mpsbench's --min-time limit (options.cpp, parse_seconds)
MAX_REPETITIONS = 1000   # mpsbench's --repetitions limit


def default_name(argv):
    """The program's base name; for an interpreter, its script's name (python3 farm.py -> farm); escaped."""
    name = os.path.basename(argv[0])
    if (name.rstrip("0123456789.") in INTERPRETERS or name in INTERPRETERS) and "-c" not in argv[1:]:
        script = next((a for a in argv[1:] if not a.startswith("-")), None)
        if script is not None:
            name = os.path.splitext(os.path.basename(script))[0] or name
    return printable(name)[:MAX_NAME] or "app"


def check_name(name):
    if not name or printable(name) != name or len(name) > MAX_NAME:
        raise InputError(f"--app-name: {quoted(name)} must be 1 to {MAX_NAME} printable characters (no control "
                         "characters: it is shown on the terminal and stored in the results)")
    return name


def split_command(flag, text):
    try:
        argv = shlex.split(text)
    except ValueError as e:
        raise InputError(f"{flag}: cannot split {quoted(text)} like a shell would: {e}") from None
    if not argv:
        raise InputError(f"{flag}: empty command")
    if executable(argv[0]) is None:
        raise InputError(f"{flag}: {quoted(argv[0])} is not an executable program (not found on PATH or not "
                         "executable)")
    argv[0] = argv[0] if os.sep not in argv[0] else os.path.abspath(argv[0])
    return argv


@dataclass(frozen=True)
class AppSettings:
    argv: Tuple[str, ...]
    name: str
    check: Optional[Tuple[str, ...]]
    launcher: Optional[Launcher]   # --app-launcher: an MPI application, one run = one launch
    launcher_spec: Optional[str]
    device: str                    # gpu or cpu
    device_requested: str          # --device as given (auto, gpu, cpu)
    device_note: str
    gpus_per_node: int
    nodes: int
    warmup: bool
    min_time: float
    repetitions: int
    probe: Optional[str]
    metric: Optional[MetricSpec] = None   # --app-metric / --app-progress: the program's own figure
    binds: Tuple[str, ...] = ("none",)    # --app-bind: an axis of the plan, like the modes
    meter: Optional[str] = None           # mpsbench-meter (energy, SM activity); None: not found

    @property
    def identity(self):
        return app_identity(self.argv, self.name, self.launcher_spec, self.check, self.warmup, self.metric)

    def copies_per_node(self, k):
        """One launch per run for an MPI application (its launcher spreads the ranks), else k per GPU."""
        return 1 if self.launcher else k * self.gpus_per_node

    def command_for(self, k, env):
        """What one copy runs: the command, or for an MPI application the whole launch of k ranks per GPU
        (env: the farmer's, which the launch inherits; its rank wrapper reads MPSBENCH_GPUS_PER_NODE and
        MPSBENCH_DEVICE)."""
        if self.launcher is None:
            return list(self.argv)
        np = k * self.gpus_per_node * self.nodes
        return self.launcher.job_command([RANK_WRAPPER] + list(self.argv), np, self.nodes, env, export=RANK_VARS,
                                         user_env=True)

    def farmer_env(self, env):
        """The variables the rank wrapper of an MPI application needs, added to the farmer's environment."""
        if self.launcher is not None:
            env.update({"MPSBENCH_GPUS_PER_NODE": str(self.gpus_per_node), "MPSBENCH_DEVICE": self.device})
        return env


def app_settings(args, nodes, gpus_per_node, node_gpus):
    """AppSettings from the parsed arguments, or InputError naming the bad value."""
    argv = split_command("--app", args.app)
    # Given means given (an empty value is refused, never taken for the option left out: cli.given).
    check = split_command("--app-check", args.app_check) if args.app_check is not None else None
    name = check_name(args.app_name) if args.app_name is not None else default_name(argv)
    launcher = None
    if args.app_launcher is not None:
        try:
            launcher = Launcher(args.app_launcher, "auto")
        except LauncherError as e:
            raise InputError(str(e).replace("--launcher", "--app-launcher")) from None
    device, note = args.device, ""
    if device == "auto":
        device = "gpu" if node_gpus or os.environ.get("CUDA_VISIBLE_DEVICES") else "cpu"
        note = "" if device == "gpu" else "auto: no GPU found by nvidia-smi; the copies run as plain processes"
    metric = metric_spec(args.app_metric, args.app_progress, args.app_metric_unit)
    if metric is not None and metric.method == "progress" and args.min_time != MIN_TIME_DEFAULT_S:
        raise InputError("--min-time: with --app-progress each window is one run per copy, as long as the program "
                         "runs; leave --min-time out")
    binds = choice_list("--app-bind", args.app_bind, BINDS)
    if launcher is not None and binds != ["none"]:
        raise InputError("--app-bind: an MPI application (--app-launcher) is bound by its launcher's own options "
                         "(e.g. mpirun --bind-to core); only none applies")
    meter = None
    if args.meter is not None and executable(args.meter) is None:
        raise InputError(f"--meter: {quoted(args.meter)} is not an executable file")
    if device == "gpu":
        meter = args.meter or default_program("mpsbench-meter")
        meter = os.path.abspath(executable(meter) or meter)  # one that is missing: unavailable, with the reason
    probe = None
    if device == "gpu":
        probe = args.probe or default_program("mpsbench-probe")
        if executable(probe) is None:
            raise InputError(f"--probe: {quoted(probe)} is not an executable file (build it: cmake --build build "
                             "--target mpsbench-probe)")
        probe = os.path.abspath(executable(probe))
    return AppSettings(argv=tuple(argv), name=name, check=tuple(check) if check else None, launcher=launcher,
                       launcher_spec=args.app_launcher, device=device, device_requested=args.device,
                       device_note=note, gpus_per_node=gpus_per_node if device == "gpu" else 1, nodes=nodes,
                       warmup=not args.no_warmup, min_time=args.min_time, repetitions=args.repetitions,
                       probe=probe, metric=metric, binds=tuple(binds), meter=meter)


def check_app_modes(modes, device):
    refused = [m for m in modes if m not in APP_MODES]
    if refused:
        raise InputError(f"--modes: {', '.join(refused)} does not apply to an external program (--app): "
                         f"an application runs in {', '.join(APP_MODES)} (a one-process mode runs k instances "
                         "inside one mpsbench process; mps-mem tries its limit on mpsbench's buffers); drop it")
    if device == "cpu" and modes != ["timeslice"]:
        gpu_only = [m for m in modes if m != "timeslice"]
        raise InputError(f"--device cpu: only --modes timeslice runs without a GPU ({', '.join(gpu_only)} need "
                         "one)")
