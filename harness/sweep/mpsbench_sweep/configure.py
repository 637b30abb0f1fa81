"""From the parsed command line to the frozen settings of one sweep (settings.py), checked before any start.

Everything that can be known before a launch is resolved and checked here, once: the modes (the
registry's defaults, mps-mem added by --mem-limits, the one-process modes left out with --mix), the
ranks per GPU, GPUs and nodes, the launchers, the rounds, the plan of jobs, the preflight, the output file and
the work directory. Bad input raises InputError (one line, exit 2).
"""
import datetime
import os
import shlex
import sys
import tempfile

from mpsbench_core import modes as registry
from mpsbench_core.sweep_settings import SweepRecord

from . import nvsmi, safe_files, workdir
from .app.probe import ProbeError, run_probe
from .app.settings import APP_ONLY_FLAGS, DEFAULT_APP_MODES, app_settings, check_app_modes
from .inputs import InputError, choice_list, integer, integer_list, is_decimal
from .launcher import Launcher
from .locate import default_program
from .passthrough import gpu_indices, gpu_items, passthrough_options
from .plan import (DEFAULT_ROUNDS, MEM_FIELD, QOS_FIELD, mix_ranks, parse_mem_limits, plan_app_jobs, plan_jobs,
                   plan_ramp, with_turns)
from .preflight import client_limit, executable, preflight
from .settings import DaemonSettings, RampSettings, SweepSettings
from .text import say

MAX_RANKS_PER_GPU = 4096


def _labelled(field):
    return tuple(m.name for m in registry.MODES if m.sweep and m.label_field == field)


def _default_output():
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path, n = f"mpsbench-sweep-{stamp}.json", 2
    while os.path.lexists(path) or os.path.lexists(path[:-5] + "-work"):
        path, n = f"mpsbench-sweep-{stamp}-{n}.json", n + 1
    return path


def _visible_devices():
    """The entries of CUDA_VISIBLE_DEVICES (None when unset)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return None if visible is None else [v for v in visible.split(",") if v.strip()]


def _gpus_per_node(args, passthrough):
    if args.gpus_per_node is not None:
        return args.gpus_per_node, "--gpus-per-node"
    if passthrough.get("device") == "cpu":
        return 1, "--device cpu (each host is one device)"
    if passthrough.get("gpus"):
        return len(gpu_items(passthrough["gpus"])), "--gpus"
    visible = _visible_devices()
    if visible is not None:
        if not visible:
            raise InputError("CUDA_VISIBLE_DEVICES is empty: no GPU is visible")
        return len(visible), "CUDA_VISIBLE_DEVICES"
    count = nvsmi.gpu_count()
    if count:
        return count, "nvidia-smi -L"
    say("note: could not count the GPUs (no nvidia-smi, no CUDA_VISIBLE_DEVICES): assuming 1 per node; "
        "pass --gpus-per-node")
    return 1, "assumed"


def _used_indices(passthrough):
    if passthrough.get("gpus"):
        return gpu_indices(passthrough["gpus"])
    visible = _visible_devices()
    if visible and all(is_decimal(v.strip()) for v in visible):
        return {int(v) for v in visible}
    return None


def _device_ordinals(passthrough, gpus_per_node):
    """How many CUDA device ordinals a rank of this node enumerates: the count in CUDA_VISIBLE_DEVICES, else
    nvidia-smi -L, else --gpus-per-node; at least past the largest index of mpsbench's --gpus."""
    count = len(_visible_devices() or []) or nvsmi.gpu_count() or gpus_per_node
    indices = gpu_indices(passthrough["gpus"]) if passthrough.get("gpus") else None
    return max(count, max(indices) + 1) if indices else count


def _nodes(args):
    if args.nodes is not None:
        return args.nodes
    if not os.environ.get("SLURM_JOB_ID"):
        return 1
    for var in ("SLURM_NNODES", "SLURM_JOB_NUM_NODES"):
        if os.environ.get(var):
            return integer(var, os.environ[var], 1, 100000)
    return 1


def _ramp_options(args, parser):
    """--client-ramp takes the place of --modes, --ranks-per-gpu and the other plans."""
    if args.app is not None:
        raise InputError("--client-ramp: measures mpsbench's own clients; not with --app")
    if args.modes is not None and choice_list("--modes", args.modes, registry.SWEEP_MODES) != ["mps"]:
        raise InputError("--client-ramp: runs mode mps only (leave out --modes or pass --modes mps)")
    for name in ("ranks_per_gpu", "qos_percentages", "mem_limits"):
        if getattr(args, name) != parser.get_default(name):
            raise InputError(f"--{name.replace('_', '-')}: not with --client-ramp, which chooses the clients per "
                             "GPU itself (1, 2, 4, ... up to the MPS client limit and one past it)")
    if args.rounds is not None and args.rounds > 1:
        # Each step is measured once: the step past the limit is meant to fail, and a second round of the
        # ramp would only repeat that failure; silently ignoring the option would claim rounds never run.
        raise InputError(f"--rounds {args.rounds}: not with --client-ramp, which measures one round (each step "
                         "once)")


def _modes(args, farming, mem_limits):
    if args.client_ramp:
        return ["mps"]
    defaults = DEFAULT_APP_MODES if farming else registry.DEFAULT_SWEEP_MODES + (
        _labelled(MEM_FIELD) if mem_limits else ())
    modes = choice_list("--modes", args.modes or ",".join(defaults), registry.SWEEP_MODES)
    if args.modes is None:
        modes = sorted(modes, key=registry.NAMES.index)  # --mem-limits adds mps-mem in its place
    return modes


def _check_settings(modes, qos, mem_limits, farming):
    if qos and not any(m in modes for m in _labelled(QOS_FIELD)):
        raise InputError("--qos-percentages: mode mps-qos is not in --modes")
    if mem_limits and not any(m in modes for m in _labelled(MEM_FIELD)):
        raise InputError("--mem-limits: mode mps-mem is not in --modes")
    if not farming and not mem_limits and any(m in modes for m in _labelled(MEM_FIELD)):
        raise InputError("--modes: mps-mem needs --mem-limits (the CUDA_MPS_PINNED_DEVICE_MEM_LIMIT values, "
                         "e.g. 2G,8G)")


def _mix_plan(args, parser, modes, mix):
    """Mixed tenants: mpsbench's --mix sets the plan and the ranks per GPU (the tenants' sum) itself."""
    if args.client_ramp:
        raise InputError("--client-ramp: not with --mix after -- (the ramp runs one small kernel per client)")
    if args.ranks_per_gpu != parser.get_default("ranks_per_gpu"):
        raise InputError("--ranks-per-gpu: not with --mix after --, whose tenants' ranks set the ranks per GPU")
    if args.modes is None:
        modes = [m for m in modes if m not in registry.ONE_PROCESS_MODES]
    one_rank = [m for m in modes if m in registry.ONE_PROCESS_MODES]
    if one_rank:
        raise InputError(f"--modes: {', '.join(one_rank)} run(s) one rank per GPU; the tenants of --mix are "
                         "separate ranks (use timeslice, mps, mps-qos, mps-mem)")
    return modes, [mix_ranks(mix)]


def _probe_here(app, launcher, nodes):
    """--device gpu where the farmer runs on this node: mpsbench-probe must see the GPUs before anything starts,
    as mpsbench's --device gpu must (exit 2 there too), not fail every configuration (exit 1). In the copies'
    plain environment: a private empty pipe directory, so no MPS daemon is reached."""
    if app.device != "gpu" or not launcher.runs_here(nodes) or app.launcher is not None:
        return
    try:
        with tempfile.TemporaryDirectory(prefix="mpsb-empty-") as empty:
            env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_MPS_")}
            seen = len(run_probe(app.probe, dict(env, CUDA_MPS_PIPE_DIRECTORY=empty))["gpus"])
    except ProbeError as e:
        raise InputError(f"--device {app.device_requested}: mpsbench-probe finds no usable GPU here: {e}") from None
    if seen < app.gpus_per_node:
        raise InputError(f"--gpus-per-node {app.gpus_per_node}: mpsbench-probe sees {seen} GPU(s) here")


def settings_from(argv, parser):
    """The settings of the sweep argv asks for, or InputError/LauncherError for input that cannot work."""
    ours, passthrough_args = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    args = parser.parse_args(ours)
    farming = args.app is not None
    if not farming:
        used = [f"--{n.replace('_', '-')}" for n in APP_ONLY_FLAGS if getattr(args, n) != parser.get_default(n)]
        if used:
            raise InputError(f"{used[0]}: applies to --app only (mpsbench's own options go after --)")
    elif passthrough_args:
        raise InputError("options after -- go to mpsbench; with --app no mpsbench runs")
    if args.client_ramp:
        _ramp_options(args, parser)
        # The preset's small problem first: options after -- override it (mpsbench: later flags win).
        passthrough_args = ["--preset", "client-ramp"] + passthrough_args
    if args.other_mps_users == "go-on" and not farming:
        # mpsbench looks for other users' MPS processes on every host of its job too (refusing by default).
        passthrough_args = ["--other-mps-users", "go-on"] + passthrough_args
    mem_limits = parse_mem_limits(args.mem_limits) if args.mem_limits is not None else None
    modes = _modes(args, farming, mem_limits)
    ranks = integer_list("--ranks-per-gpu", args.ranks_per_gpu, 1, MAX_RANKS_PER_GPU)
    qos = integer_list("--qos-percentages", args.qos_percentages, 1, 100) if args.qos_percentages else None
    _check_settings(modes, qos, mem_limits, farming)
    passthrough = passthrough_options(passthrough_args)
    if passthrough.get("mix") is not None:
        modes, ranks = _mix_plan(args, parser, modes, passthrough["mix"])
    nodes = _nodes(args)
    timeout = args.timeout if args.timeout is not None else 600.0 if args.client_ramp else 3600.0
    rounds = args.rounds if args.rounds is not None else 1 if args.client_ramp else DEFAULT_ROUNDS
    device = args.device if farming else passthrough.get("device", "auto")
    if farming:
        passthrough["device"] = device
    gpus_per_node, gpus_source = _gpus_per_node(args, passthrough)
    node_gpus = None if device == "cpu" else nvsmi.gpus()
    limit, limit_reason = client_limit(args.mps_client_limit, node_gpus)
    launcher = Launcher(args.launcher, args.node_launcher)
    app = mpsbench = None
    if farming:
        app = app_settings(args, nodes, gpus_per_node, node_gpus)
        device = app.device
        check_app_modes(modes, device)
        jobs = plan_app_jobs(modes, ranks, qos, lambda k: app.copies_per_node(k) * nodes, app.binds, rounds)
    elif args.client_ramp:
        jobs = plan_ramp(limit, nodes, gpus_per_node)
        ranks = [j.k for j in jobs if not j.past_limit]  # the step past the limit is on purpose
        mpsbench = args.mpsbench or default_program("mpsbench")
    else:
        jobs = plan_jobs(modes, ranks, qos, nodes, gpus_per_node, mem_limits, mix="mix" in passthrough,
                         rounds=rounds)
        if args.turns == "on":
            jobs = with_turns(jobs)
            if "discard-throttled" in passthrough and any(j.turn_group is not None for j in jobs):
                raise InputError("--discard-throttled after --: a job in turns runs without the GPU monitor whose "
                                 "clocks it needs (add --turns off)")
        mpsbench = args.mpsbench or default_program("mpsbench")
    control = executable(args.mps_control)
    preflight(modes=modes, ranks=ranks, jobs=jobs, device=device, gpus=node_gpus,
              used_gpu_indices=_used_indices(passthrough), limit=limit, limit_reason=limit_reason,
              mpsbench=mpsbench, control=control or args.mps_control, nodes=nodes, launcher_kind=launcher.kind)
    if nodes > 1 and any(m in registry.MPS_MODES for m in modes):
        launcher.node_command(["true"], nodes)  # raises when there is no way to reach every node
    if app is not None:
        _probe_here(app, launcher, nodes)
    output = os.path.abspath(args.output or _default_output())
    work = os.path.abspath(args.workdir or (output[:-5] if output.endswith(".json") else output) + "-work")
    workdir.check_output(output, work)
    for flag, check, path in (("--output", safe_files.check_target, output), ("--workdir", safe_files.own_directory,
                                                                               work)):
        try:
            check(path)
        except safe_files.UnsafePath as e:
            raise InputError(f"{flag}: {e}") from None
    ordinals = _device_ordinals(passthrough, gpus_per_node) if mem_limits else None
    record = SweepRecord(
        argv=("mpsbench-sweep",) + tuple(argv), modes=tuple(modes),
        ranks_per_gpu=tuple(j.k for j in jobs) if args.client_ramp else tuple(ranks),
        qos_percentages=tuple(qos) if qos else None, nodes=nodes, gpus_per_node=gpus_per_node,
        gpus_per_node_source=gpus_source, launcher=launcher.describe(),
        mpsbench=os.path.abspath(executable(mpsbench)) if mpsbench else None, mpsbench_options=tuple(passthrough_args),
        mps_control=control, mps_client_limit=limit, gain_threshold=args.gain_threshold,
        node_gpus=tuple(node_gpus) if node_gpus is not None else None, mem_limits=tuple(mem_limits) if mem_limits
        else None, mem_limit_device_ordinals=ordinals, app=app.identity if app else None,
        min_time_s=app.min_time if app else None, repetitions=app.repetitions if app else None,
        device=app.device if app else None, probe=app.probe if app else None,
        command=shlex.join([sys.argv[0] or "mpsbench-sweep"] + list(argv)), rounds=rounds,
        turns=True if any(j.turn_group is not None for j in jobs) else None)
    ramp = (RampSettings(limit=limit, reason=limit_reason, explicit=args.mps_client_limit is not None)
            if args.client_ramp else None)
    daemon = DaemonSettings(control=control, existing_daemon=args.existing_daemon,
                            other_mps_users=args.other_mps_users, ready_timeout=args.mps_ready_timeout,
                            quit_timeout=args.mps_quit_timeout, grace=args.mps_quit_grace, check_node=device != "cpu")
    return SweepSettings(modes=tuple(modes), jobs=jobs, nodes=nodes, gpus_per_node=gpus_per_node, launcher=launcher,
                         mpsbench=record.mpsbench, passthrough=tuple(passthrough_args), app=app, ramp=ramp,
                         daemon=daemon, mem_device_ordinals=ordinals, output=output, workdir=work,
                         keep_parts=args.keep_parts, timeout=timeout, gain_threshold=args.gain_threshold,
                         record=record)
