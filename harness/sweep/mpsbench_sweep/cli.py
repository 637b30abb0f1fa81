"""Command line of mpsbench-sweep: parse, resolve defaults, preflight, run."""
import argparse
import datetime
import os
import sys
from types import SimpleNamespace

from . import nvsmi, safe_files
from .launcher import Launcher, LauncherError
from .plan import ALL_MODES, MODES, MPS_MODES, ONE_RANK_MODES, PlanError, client_limit, executable, mix_ranks, \
    parse_list, parse_mem_limits, passthrough_options, plan_jobs, plan_ramp, preflight
from .app_settings import APP_MODES, APP_ONLY_FLAGS, app_settings, check_app_modes, plan_app_jobs
from .locate import default_program
from .merge import GAIN_THRESHOLD
from .runner import EXIT_INPUT, Runner, say
from .safe_files import UnsafePath

DESCRIPTION = """\
Runs the whole GPU-sharing comparison: one mpsbench MPI job per mode (timeslice,
mps, mps-qos: one job per ranks-per-GPU value, mps-mem: one job per memory
limit, streams), with a private MPS control daemon started before the MPS modes
and removed after them, merges every job's results into one JSON file of the
mpsbench schema (context.sweep says what ran) and prints a table: throughput per
mode, MPS gain over timeslice, ratio to streams, then one verdict line per kernel
and precision: where MPS pays off, the best ranks per GPU and the crossover size.
--client-ramp instead finds how many MPS clients share one GPU: mode mps at 1, 2,
4, ... clients per GPU up to the client limit and one past it.
Options after -- go to every mpsbench job (the sweep sets --mode, --ranks-per-gpu
and --output itself)."""

EPILOG = """\
exit status: 0 all jobs ran and every result verified (--client-ramp: the step
past the limit may fail, that is its finding); 1 a result failed verification;
2 bad input, preflight failure, a daemon not started by the sweep (with
--existing-daemon refuse), another user's MPS processes (with --other-mps-users
refuse) or a job rejected its input; 3 a job crashed,
timed out or its ranks had the wrong MPS state, or the MPS daemon failed;
130/143 (129) interrupted by SIGINT/SIGTERM (SIGHUP). Every exit cleans up first.

examples (one GPU node):
  harness/mpsbench-sweep --ranks-per-gpu 1,2,4,8 -- --kernel matmul --precision fp32
  harness/mpsbench-sweep --modes mps,mps-mem --mem-limits 2G,8G -- --kernel matmul --size 4096
  harness/mpsbench-sweep --client-ramp"""


def _default_output():
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path, n = f"mpsbench-sweep-{stamp}.json", 2
    while os.path.lexists(path) or os.path.lexists(path[:-5] + "-work"):
        path, n = f"mpsbench-sweep-{stamp}-{n}.json", n + 1
    return path


def _default_mpsbench():
    return default_program("mpsbench")


def build_parser():
    p = argparse.ArgumentParser(prog="mpsbench-sweep", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                usage="%(prog)s [options] [-- MPSBENCH-OPTIONS...]")
    a = p.add_argument
    a("--modes", default=None, metavar="LIST",
      help=f"sharing modes to compare, run in this order; also mps-mem (with --mem-limits) and green (SM "
           f"partitions in green contexts, compared with mps-qos) (default: "
           f"{','.join(MODES)}, plus mps-mem with --mem-limits; with --app: {','.join(APP_MODES)})")
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
    a("--mps-client-limit", type=int, default=None, metavar="N",
      help="MPS clients an MPS server accepts per GPU (default: 48; 16 when nvidia-smi reports a GPU older "
           "than Volta; --client-ramp: what the daemon answers to get_default_client_limit, if it does)")
    a("--mps-ready-timeout", type=float, default=15.0, metavar="S",
      help="seconds for a new daemon to answer get_server_list (default: %(default)g)")
    a("--mps-quit-timeout", type=float, default=10.0, metavar="S",
      help="seconds for the quit command to return (default: %(default)g)")
    a("--mps-quit-grace", type=float, default=10.0, metavar="S",
      help="seconds for the daemon and its server to exit after quit before SIGTERM, then SIGKILL "
           "(default: %(default)g)")
    a("--timeout", type=float, default=None, metavar="S",
      help="longest a job may run before it is killed and the sweep stops with exit 3 (default: 3600; 600 with "
           "--client-ramp, whose step past the limit is then recorded as failed)")
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
           "state per GPU (default: the one beside an installed mpsbench-sweep, else build/mpsbench-probe of "
           "this repository, else on PATH)")
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


def _device_ordinals(passthrough, gpus_per_node):
    """How many CUDA device ordinals a rank of this node enumerates: the count in CUDA_VISIBLE_DEVICES, else
    nvidia-smi -L, else --gpus-per-node; at least past the largest index of mpsbench's --gpus."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    count = len([v for v in visible.split(",") if v.strip()]) if visible else None
    count = count or nvsmi.gpu_count() or gpus_per_node
    if passthrough.get("gpus"):
        count = max(count, max(parse_list("--gpus", passthrough["gpus"], low=0, high=1023)) + 1)
    return count


def _ramp_options(args, parser, modes_given):
    """--client-ramp takes the place of --modes, --ranks-per-gpu and the other plans."""
    if args.app is not None:
        raise PlanError("--client-ramp: measures mpsbench's own clients; not with --app")
    if modes_given and parse_list("--modes", args.modes, choices=ALL_MODES) != ["mps"]:
        raise PlanError("--client-ramp: runs mode mps only (leave out --modes or pass --modes mps)")
    for name in ("ranks_per_gpu", "qos_percentages", "mem_limits"):
        if getattr(args, name) != parser.get_default(name):
            raise PlanError(f"--{name.replace('_', '-')}: not with --client-ramp, which chooses the clients per GPU "
                            "itself (1, 2, 4, ... up to the MPS client limit and one past it)")


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
    if args.client_ramp:
        _ramp_options(args, parser, args.modes is not None)
        # The preset's small problem first: options after -- override it (mpsbench: later flags win).
        passthrough_args = ["--preset", "client-ramp"] + passthrough_args
    if args.other_mps_users == "go-on" and not farming:
        # mpsbench looks for other users' MPS processes on every host of its job too (refusing by default).
        passthrough_args = ["--other-mps-users", "go-on"] + passthrough_args
    mem_limits = parse_mem_limits(args.mem_limits) if args.mem_limits is not None else None
    default_modes = APP_MODES if farming else MODES + (("mps-mem",) if mem_limits else ())
    modes = parse_list("--modes", args.modes or ",".join(default_modes), choices=ALL_MODES)
    if args.client_ramp:
        modes = ["mps"]
    modes = [m for m in ALL_MODES if m in modes] if mem_limits and args.modes is None else modes
    ranks = parse_list("--ranks-per-gpu", args.ranks_per_gpu, low=1, high=4096)
    qos = parse_list("--qos-percentages", args.qos_percentages, low=1, high=100) if args.qos_percentages else None
    if qos and "mps-qos" not in modes:
        raise PlanError("--qos-percentages: mode mps-qos is not in --modes")
    if mem_limits and "mps-mem" not in modes:
        raise PlanError("--mem-limits: mode mps-mem is not in --modes")
    if "mps-mem" in modes and not mem_limits:
        raise PlanError("--modes: mps-mem needs --mem-limits (the CUDA_MPS_PINNED_DEVICE_MEM_LIMIT values, e.g. 2G,8G)")
    if farming and "mps-mem" in modes:
        raise PlanError("--modes: mps-mem applies to mpsbench's own jobs, not to --app")
    timeout = args.timeout if args.timeout is not None else 600.0 if args.client_ramp else 3600.0
    passthrough = passthrough_options(passthrough_args)
    mix = passthrough.get("mix")
    if mix is not None:
        # Mixed tenants: mpsbench's --mix sets the plan and the ranks per GPU (the tenants' sum) itself.
        if args.client_ramp:
            raise PlanError("--client-ramp: not with --mix after -- (the ramp runs one small kernel per client)")
        if args.ranks_per_gpu != parser.get_default("ranks_per_gpu"):
            raise PlanError("--ranks-per-gpu: not with --mix after --, whose tenants' ranks set the ranks per GPU")
        if args.modes is None:
            modes = [m for m in modes if m not in ONE_RANK_MODES]
        one_rank = [m for m in modes if m in ONE_RANK_MODES]
        if one_rank:
            raise PlanError(f"--modes: {', '.join(one_rank)} run(s) one rank per GPU; the tenants of --mix are "
                            "separate ranks (use timeslice, mps, mps-qos, mps-mem)")
        ranks = [mix_ranks(mix)]
    nodes = args.nodes
    if nodes is None:
        env_nodes = os.environ.get("SLURM_NNODES") or os.environ.get("SLURM_JOB_NUM_NODES")
        nodes = int(env_nodes) if env_nodes and env_nodes.isdigit() and os.environ.get("SLURM_JOB_ID") else 1
    if nodes < 1 or (args.gpus_per_node is not None and args.gpus_per_node < 1):
        raise PlanError("--nodes and --gpus-per-node must be at least 1")
    if args.mps_client_limit is not None and args.mps_client_limit < 1:
        raise PlanError("--mps-client-limit: must be at least 1")
    args.timeout = timeout
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
    elif args.client_ramp:
        jobs = plan_ramp(limit, nodes, gpus_per_node)
        ranks = [j.ranks_per_gpu[0] for j in jobs if not j.past_limit]  # the step past the limit is on purpose
        mpsbench = args.mpsbench or _default_mpsbench()
    else:
        jobs = plan_jobs(modes, ranks, qos, nodes, gpus_per_node, mem_limits, mix=mix is not None)
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
    ordinals = None
    if mem_limits:
        ordinals = _device_ordinals(passthrough, gpus_per_node)
        meta.update({"mem_limits": mem_limits, "mem_limit_device_ordinals": ordinals})
    ramp = None
    if args.client_ramp:
        ramp = SimpleNamespace(limit=limit, reason=limit_reason, explicit=args.mps_client_limit is not None,
                               nodes=nodes, gpus_per_node=gpus_per_node)
        meta["ranks_per_gpu"] = [j.ranks_per_gpu[0] for j in jobs]
    if app is not None:
        meta.update({"app": app.identity, "min_time_s": app.min_time, "repetitions": app.repetitions,
                     "device": app.device, "probe": app.probe})
    return SimpleNamespace(
        modes=modes, jobs=jobs, nodes=nodes, launcher=launcher, mpsbench=meta["mpsbench"], app=app,
        passthrough=passthrough_args, control=control, existing_daemon=args.existing_daemon,
        other_mps_users=args.other_mps_users, mem_device_ordinals=ordinals, ramp=ramp,
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
