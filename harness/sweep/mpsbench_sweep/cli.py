"""Command line of mpsbench-sweep: parse, resolve defaults, preflight, run."""
import argparse
import datetime
import os
import shutil
import sys
from types import SimpleNamespace

from . import nvsmi, safe_files
from .launcher import Launcher, LauncherError
from .plan import MODES, MPS_MODES, PlanError, client_limit, executable, parse_list, passthrough_options, \
    plan_jobs, preflight
from .app_settings import APP_MODES, APP_ONLY_FLAGS, app_settings, check_app_modes, plan_app_jobs
from .merge import GAIN_THRESHOLD
from .runner import EXIT_INPUT, Runner, say
from .safe_files import UnsafePath

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

DESCRIPTION = """\
Runs the whole GPU-sharing comparison: one mpsbench MPI job per mode (timeslice,
mps, mps-qos: one job per ranks-per-GPU value, streams), with a private MPS control
daemon started before the MPS modes and removed after them, merges every job's
results into one JSON file of the mpsbench schema (context.sweep says what ran)
and prints a table: throughput per mode, MPS gain over timeslice, ratio to streams,
then one verdict line per kernel and precision: where MPS pays off, the best
ranks per GPU and the crossover size.
Options after -- go to every mpsbench job (the sweep sets --mode, --ranks-per-gpu
and --output itself)."""

EPILOG = """\
exit status: 0 all jobs ran and every result verified; 1 a result failed
verification; 2 bad input, preflight failure, a daemon not started by the sweep
(with --existing-daemon refuse) or a job rejected its input; 3 a job crashed,
timed out or its ranks had the wrong MPS state, or the MPS daemon failed;
130/143 (129) interrupted by SIGINT/SIGTERM (SIGHUP). Every exit cleans up first.

example (one GPU node):
  harness/mpsbench-sweep --ranks-per-gpu 1,2,4,8 -- --kernel matmul --precision fp32"""


def _default_output():
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path, n = f"mpsbench-sweep-{stamp}.json", 2
    while os.path.lexists(path) or os.path.lexists(path[:-5] + "-work"):
        path, n = f"mpsbench-sweep-{stamp}-{n}.json", n + 1
    return path


def _default_mpsbench():
    built = os.path.join(REPO, "build", "mpsbench")
    return built if os.path.isfile(built) else (shutil.which("mpsbench") or built)


def build_parser():
    p = argparse.ArgumentParser(prog="mpsbench-sweep", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                usage="%(prog)s [options] [-- MPSBENCH-OPTIONS...]")
    a = p.add_argument
    a("--modes", default=None, metavar="LIST",
      help=f"sharing modes to compare, run in this order (default: {','.join(MODES)}; with --app: "
           f"{','.join(APP_MODES)})")
    a("--ranks-per-gpu", default="1,2,4,8", metavar="LIST",
      help="active ranks (streams: instances; --app: copies) per GPU (default: %(default)s)")
    a("--qos-percentages", default=None, metavar="LIST",
      help="mps-qos: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE values, one job per (ranks per GPU, value) "
           "(default: 100/k rounded down for k ranks per GPU)")
    a("--gpus-per-node", type=int, default=None, metavar="G",
      help="GPUs each node uses (default: the count in CUDA_VISIBLE_DEVICES, else `nvidia-smi -L`, "
           "else 1, said so; 1 with --device cpu)")
    a("--nodes", type=int, default=None, metavar="N",
      help="nodes of the job (default: SLURM_NNODES inside a Slurm allocation, else 1)")
    a("--launcher", default="auto", metavar="auto|mpirun|srun|TEMPLATE",
      help="how jobs start (default: auto = srun inside a Slurm allocation, else mpirun); a TEMPLATE such as "
           "'mpiexec -n {np} --bind-to none' gets {np}, {np_per_node}, {nodes} filled in and the mpsbench "
           "command appended")
    a("--node-launcher", default="auto", metavar="auto|TEMPLATE",
      help="with --nodes > 1: how one MPS guardian per node starts (default: auto = srun --ntasks-per-node=1 "
           "--overlap --input=all, or mpirun --map-by ppr:1:node --stdin all); a TEMPLATE gets {nodes}")
    a("--mpsbench", default=None, metavar="PATH",
      help="mpsbench executable (default: build/mpsbench of this repository, else mpsbench on PATH)")
    a("--mps-control", default="nvidia-cuda-mps-control", metavar="PATH",
      help="MPS control program (default: %(default)s on PATH)")
    a("--existing-daemon", choices=("refuse", "use"), default="refuse",
      help="an MPS daemon this sweep did not start is running: refuse to run (exit 2), or use it for the "
           "MPS modes (recorded; it is never stopped or killed) (default: %(default)s)")
    a("--mps-client-limit", type=int, default=None, metavar="N",
      help="MPS clients an MPS server accepts per GPU (default: 48; 16 when nvidia-smi reports a GPU older "
           "than Volta)")
    a("--mps-ready-timeout", type=float, default=15.0, metavar="S",
      help="seconds for a new daemon to answer get_server_list (default: %(default)g)")
    a("--mps-quit-timeout", type=float, default=10.0, metavar="S",
      help="seconds for the quit command to return (default: %(default)g)")
    a("--mps-quit-grace", type=float, default=10.0, metavar="S",
      help="seconds for the daemon and its server to exit after quit before SIGTERM, then SIGKILL "
           "(default: %(default)g)")
    a("--timeout", type=float, default=3600.0, metavar="S",
      help="longest a job may run before it is killed and the sweep stops with exit 3 (default: %(default)g)")
    a("--output", default=None, metavar="PATH",
      help="merged results (default: mpsbench-sweep-DATE-TIME.json, never overwriting an earlier file); an "
           "existing regular file is replaced, anything else there (a link, a directory, a FIFO, a device) is "
           "refused")
    a("--workdir", default=None, metavar="DIR",
      help="part files, job logs, MPS logs, sweep.json (default: OUTPUT without .json, plus -work); created if "
           "missing, else it must be a directory of yours that no other user can write in")
    a("--gain-threshold", type=float, default=GAIN_THRESHOLD, metavar="X",
      help="the MPS gain over timeslice that pays off, for the verdict lines after the table (default: "
           "%(default)g)")
    a("--keep-parts", action="store_true",
      help="keep each job's part file after a successful merge (default: delete them; logs are kept)")
    g = p.add_argument_group("farming your own application (instead of mpsbench; harness/sweep/README.md)")
    a = g.add_argument
    a("--app", default=None, metavar="'COMMAND ARGS'",
      help="run this program as k copies per GPU (copy i of a node on GPU i mod G, by UUID in "
           "CUDA_VISIBLE_DEVICES) for every mode and k; one string, split as a shell would, never run through a "
           "shell (write sh -c '...' for one); modes timeslice, mps, mps-qos (default: none: mpsbench runs)")
    a("--app-name", default=None, metavar="NAME",
      help="its name in the results (default: the program's base name; for an interpreter, the script's)")
    a("--app-check", default=None, metavar="'COMMAND ARGS'",
      help="run after each run with MPSBENCH_APP_STDOUT (and MPSBENCH_APP_STDERR) naming that run's output "
           "files; the run counts only when it exits 0 (checks run after each window, outside the timing) "
           "(default: none)")
    a("--app-launcher", default=None, metavar="mpirun|srun|TEMPLATE",
      help="the command is an MPI program: each run is one whole launch of k x G ranks per node through this "
           "launcher; each rank sees one GPU, node-local rank mod G (harness/sweep/app-rank-gpu) (default: "
           "none: separate copies)")
    a("--min-time", type=float, default=10.0, metavar="S",
      help="--app: copies start new runs until S seconds have passed; the window ends when the last run "
           "ends (default: %(default)g)")
    a("--repetitions", type=int, default=3, metavar="N", help="--app: timed windows per configuration "
                                                               "(default: %(default)s)")
    a("--no-warmup", action="store_true",
      help="--app: no untimed first run per copy before the windows (default: one warm-up run each)")
    a("--device", choices=("auto", "gpu", "cpu"), default="auto",
      help="--app: cpu runs the copies as plain processes, timeslice only (tests, CI); auto: gpu when "
           "nvidia-smi finds one (default: %(default)s)")
    a("--probe", default=None, metavar="PATH",
      help="--app: mpsbench-probe, run before each configuration in the copies' environment to verify the MPS "
           "state per GPU (default: build/mpsbench-probe of this repository, else on PATH)")
    return p


def _gpus_per_node(args, passthrough):
    if args.gpus_per_node is not None:
        return args.gpus_per_node, "--gpus-per-node"
    if passthrough.get("device") == "cpu":
        return 1, "--device cpu (each host is one device)"
    if passthrough.get("gpus"):
        return len(parse_list("--gpus", passthrough["gpus"], low=0, high=1023)), "--gpus"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        count = len([v for v in visible.split(",") if v.strip()])
        if count == 0:
            raise PlanError("CUDA_VISIBLE_DEVICES is empty: no GPU is visible")
        return count, "CUDA_VISIBLE_DEVICES"
    count = nvsmi.gpu_count()
    if count:
        return count, "nvidia-smi -L"
    say("note: could not count the GPUs (no nvidia-smi, no CUDA_VISIBLE_DEVICES): assuming 1 per node; "
        "pass --gpus-per-node")
    return 1, "assumed"


def _used_indices(passthrough):
    if passthrough.get("gpus"):
        return set(parse_list("--gpus", passthrough["gpus"], low=0, high=1023))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible and all(v.strip().isdigit() for v in visible.split(",")):
        return {int(v) for v in visible.split(",")}
    return None


def _app_only_flags_used(args, parser):
    return [f"--{name.replace('_', '-')}" for name in APP_ONLY_FLAGS + ("min_time", "repetitions")
            if getattr(args, name) != parser.get_default(name)]


def settings_from(argv):
    """Everything the runner needs, or PlanError/LauncherError for input that cannot work."""
    ours, passthrough_args = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    parser = build_parser()
    args = parser.parse_args(ours)
    if args.app is None:
        used = _app_only_flags_used(args, parser)
        if used:
            raise PlanError(f"{used[0]}: applies to --app only (mpsbench's own options go after --)")
    elif passthrough_args:
        raise PlanError("options after -- go to mpsbench; with --app no mpsbench runs")
    farming = args.app is not None
    modes = parse_list("--modes", args.modes or ",".join(APP_MODES if farming else MODES), choices=MODES)
    ranks = parse_list("--ranks-per-gpu", args.ranks_per_gpu, low=1, high=4096)
    qos = parse_list("--qos-percentages", args.qos_percentages, low=1, high=100) if args.qos_percentages else None
    if qos and "mps-qos" not in modes:
        raise PlanError("--qos-percentages: mode mps-qos is not in --modes")
    passthrough = passthrough_options(passthrough_args)
    nodes = args.nodes
    if nodes is None:
        env_nodes = os.environ.get("SLURM_NNODES") or os.environ.get("SLURM_JOB_NUM_NODES")
        nodes = int(env_nodes) if env_nodes and env_nodes.isdigit() and os.environ.get("SLURM_JOB_ID") else 1
    if nodes < 1 or (args.gpus_per_node is not None and args.gpus_per_node < 1):
        raise PlanError("--nodes and --gpus-per-node must be at least 1")
    for flag in ("timeout", "mps_ready_timeout", "mps_quit_timeout", "mps_quit_grace", "gain_threshold"):
        if not getattr(args, flag) > 0:
            raise PlanError(f"--{flag.replace('_', '-')}: must be positive")
    device = args.device if farming else passthrough.get("device", "auto")
    if farming:
        passthrough["device"] = device
    gpus_per_node, gpus_source = _gpus_per_node(args, passthrough)
    node_gpus = None if device == "cpu" else nvsmi.gpus()
    limit, limit_reason = client_limit(args.mps_client_limit, node_gpus)
    launcher = Launcher(args.launcher, args.node_launcher)
    app = None
    if farming:
        app = app_settings(args, nodes, gpus_per_node, node_gpus)
        device = app.device
        check_app_modes(modes, device)
        jobs = plan_app_jobs(modes, ranks, qos, lambda k: k * app.gpus_per_node * nodes)
        mpsbench = None
    else:
        jobs = plan_jobs(modes, ranks, qos, nodes, gpus_per_node)
        mpsbench = args.mpsbench or _default_mpsbench()
    control = executable(args.mps_control)
    preflight(modes=modes, ranks=ranks, jobs=jobs, device=device, gpus=node_gpus,
              used_gpu_indices=_used_indices(passthrough), limit=limit, limit_reason=limit_reason,
              mpsbench=mpsbench, control=control or args.mps_control, nodes=nodes, launcher_kind=launcher.kind)
    if nodes > 1 and any(m in MPS_MODES for m in modes):
        launcher.node_command(["true"], nodes)  # raises when there is no way to reach every node
    output = os.path.abspath(args.output or _default_output())
    workdir = os.path.abspath(args.workdir or (output[:-5] if output.endswith(".json") else output) + "-work")
    for flag, check, path in (("--output", safe_files.check_target, output), ("--workdir", safe_files.own_directory,
                                                                               workdir)):
        try:
            check(path)
        except UnsafePath as e:
            raise PlanError(f"{flag}: {e}") from None
    meta = {"tool": "mpsbench-sweep", "argv": ["mpsbench-sweep"] + list(argv), "modes": modes,
            "ranks_per_gpu": ranks, "qos_percentages": qos, "nodes": nodes, "gpus_per_node": gpus_per_node,
            "gpus_per_node_source": gpus_source, "launcher": launcher.describe(),
            "mpsbench": os.path.abspath(executable(mpsbench)) if mpsbench else None,
            "mpsbench_options": passthrough_args, "mps_control": control, "mps_client_limit": limit,
            "node_gpus": node_gpus}
    if app is not None:
        meta.update({"app": app.identity, "min_time_s": app.min_time, "repetitions": app.repetitions,
                     "device": app.device, "probe": app.probe})
    return SimpleNamespace(
        modes=modes, jobs=jobs, nodes=nodes, launcher=launcher, mpsbench=meta["mpsbench"], app=app,
        passthrough=passthrough_args, control=control, existing_daemon=args.existing_daemon,
        check_existing=device != "cpu", output=output, workdir=workdir, keep_parts=args.keep_parts,
        timeout=args.timeout, ready_timeout=args.mps_ready_timeout, quit_timeout=args.mps_quit_timeout,
        grace=args.mps_quit_grace, gain_threshold=args.gain_threshold, meta=meta)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        settings = settings_from(argv)
    except (PlanError, LauncherError) as e:
        print(f"mpsbench-sweep: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    return Runner(settings).run()
