"""The --app options of mpsbench-sweep: farming a user's own program instead of mpsbench.

`--app 'COMMAND ARGS'` is split as a shell would split it (shlex) and run
directly, never through a shell: a user who wants one writes `sh -c '...'`.
Everything here is checked before anything starts (exit 2, one line).
"""
import os
import shlex
from dataclasses import dataclass
from typing import List, Optional

from .app_results import app_identity
from .launcher import Launcher, LauncherError
from .locate import default_program
from .plan import MODES, Job, PlanError, executable

APP_MODES = tuple(m for m in MODES if m != "streams")
RANK_WRAPPER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "app-rank-gpu")
INTERPRETERS = {"python", "python3", "bash", "sh", "dash", "zsh", "perl", "ruby", "node", "Rscript", "julia",
                "env", "apptainer", "singularity"}
RANK_VARS = ("MPSBENCH_GPUS_PER_NODE", "MPSBENCH_DEVICE")
APP_ONLY_FLAGS = ("app_name", "app_check", "app_launcher", "no_warmup", "device", "probe")


def default_name(argv):
    """The program's base name; for an interpreter, its script's name (python3 farm.py -> farm)."""
    name = os.path.basename(argv[0])
    if (name.rstrip("0123456789.") in INTERPRETERS or name in INTERPRETERS) and "-c" not in argv[1:]:
        script = next((a for a in argv[1:] if not a.startswith("-")), None)
        if script is not None:
            return os.path.splitext(os.path.basename(script))[0] or name
    return name


def split_command(flag, text):
    try:
        argv = shlex.split(text)
    except ValueError as e:
        raise PlanError(f"{flag}: cannot split '{text}' like a shell would: {e}") from None
    if not argv:
        raise PlanError(f"{flag}: empty command")
    if executable(argv[0]) is None:
        raise PlanError(f"{flag}: '{argv[0]}' is not an executable program (not found on PATH or not executable)")
    argv[0] = argv[0] if os.sep not in argv[0] else os.path.abspath(argv[0])
    return argv


class AppJobPlan(Job):
    def label(self):
        return f"{self.mode} k={self.ranks_per_gpu[0]}" + (f" {self.thread_percentage}%" if self.mode == "mps-qos"
                                                           else "")


def plan_app_jobs(modes, ranks, qos_percentages, copies_total_per_k):
    """One job per (mode, copies per GPU[, percentage]): part-app-MODE-kK[-pP].json, k ascending."""
    jobs = []
    for mode in modes:
        for k in ranks:
            percentages = (qos_percentages or [max(1, 100 // k)]) if mode == "mps-qos" else [None]
            for p in percentages:
                name = f"part-app-{mode}-k{k}" + (f"-p{p}" if p is not None else "") + ".json"
                jobs.append(AppJobPlan(len(jobs), mode, [k], copies_total_per_k(k), p, name))
    return jobs


@dataclass
class AppSettings:
    argv: List[str]
    name: str
    check: Optional[List[str]]
    launcher: Optional[Launcher]   # --app-launcher: an MPI application, one run = one launch
    launcher_spec: Optional[str]
    device: str                    # gpu or cpu
    device_note: str
    gpus_per_node: int
    nodes: int
    warmup: bool
    min_time: float
    repetitions: int
    probe: Optional[str]

    @property
    def identity(self):
        return app_identity(self.argv, self.name, self.launcher_spec, self.check, self.warmup)

    def command_for(self, job, env):
        """What one copy runs: the command, or for an MPI application the whole launch (env: the farmer's,
        which the launch inherits; its rank wrapper reads MPSBENCH_GPUS_PER_NODE and MPSBENCH_DEVICE)."""
        if self.launcher is None:
            return list(self.argv)
        np = job.ranks_per_gpu[0] * self.gpus_per_node * self.nodes
        return self.launcher.job_command([RANK_WRAPPER] + self.argv, np, self.nodes, env, export=RANK_VARS)

    def farmer_env(self, env):
        """The variables the rank wrapper of an MPI application needs, added to the farmer's environment."""
        if self.launcher is not None:
            env.update({"MPSBENCH_GPUS_PER_NODE": str(self.gpus_per_node), "MPSBENCH_DEVICE": self.device})
        return env


def app_settings(args, nodes, gpus_per_node, node_gpus):
    """AppSettings from the parsed arguments, or PlanError naming the bad value."""
    argv = split_command("--app", args.app)
    check = split_command("--app-check", args.app_check) if args.app_check else None
    launcher = None
    if args.app_launcher:
        try:
            launcher = Launcher(args.app_launcher, "auto")
        except LauncherError as e:
            raise PlanError(str(e).replace("--launcher", "--app-launcher")) from None
    if not args.min_time > 0 or args.min_time > 86400:
        raise PlanError(f"--min-time: {args.min_time:g} must be in (0, 86400] seconds")
    if not 1 <= args.repetitions <= 1000:
        raise PlanError(f"--repetitions: {args.repetitions} must be in [1, 1000]")
    device, note = args.device, ""
    if device == "auto":
        device = "gpu" if node_gpus or os.environ.get("CUDA_VISIBLE_DEVICES") else "cpu"
        note = "" if device == "gpu" else "auto: no GPU found by nvidia-smi; the copies run as plain processes"
    probe = None
    if device == "gpu":
        probe = args.probe or _default_probe()
        if executable(probe) is None:
            raise PlanError(f"--probe: '{probe}' is not an executable file (build it: cmake --build build "
                            "--target mpsbench-probe)")
        probe = os.path.abspath(executable(probe))
    return AppSettings(argv=argv, name=args.app_name or default_name(argv), check=check, launcher=launcher,
                       launcher_spec=args.app_launcher, device=device, device_note=note,
                       gpus_per_node=gpus_per_node if device == "gpu" else 1, nodes=nodes,
                       warmup=not args.no_warmup, min_time=args.min_time, repetitions=args.repetitions,
                       probe=probe)


def _default_probe():
    return default_program("mpsbench-probe")


def check_app_modes(modes, device):
    if "streams" in modes:
        raise PlanError("--modes: streams does not apply to an external program (--app): it runs k instances "
                        "inside one mpsbench process; drop it")
    if device == "cpu" and modes != ["timeslice"]:
        gpu_only = [m for m in modes if m != "timeslice"]
        raise PlanError(f"--device cpu: only --modes timeslice runs without a GPU ({', '.join(gpu_only)} need "
                        "one)")
