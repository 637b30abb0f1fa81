"""The `context` of a farmed application's results file (schema mpsbench-results), built by the sweep.

With --app no mpsbench runs, so what mpsbench would record comes from elsewhere:
the GPUs from mpsbench-probe (the farmers' `probed` events), the build from the
probe's version fields, the copies as `ranks` (copy i on GPU i mod G), the
timing settings from the sweep's own options. `tool` is `mpsbench-sweep`.
"""
import datetime
import socket

NO_CUDA = {"driver_version": "none", "runtime_version": "none", "cublas_version": 0}
GPU_FIELDS = ("index", "name", "uuid", "sm_count", "memory_total_bytes", "compute_mode", "sm_clock_peak_khz")


def app_context(app, job, config, result, argv):
    """app: AppSettings; job: the plan's Job; config: its AppConfiguration; result: the record; argv: the
    sweep's command line as recorded."""
    probed = config.probed or [{"host": socket.gethostname(), "gpus": [], "states": []}]
    build = next((p.get("build") for p in probed if p.get("build")), None) or {}
    gpus = [{"host": p["host"], **{k: g[k] for k in GPU_FIELDS}} for p in probed for g in p["gpus"]]
    ranks = []
    for node, p in enumerate(probed):
        for local in range(config.copies_per_node):
            gpu = p["gpus"][local % len(p["gpus"])] if p["gpus"] else None
            ranks.append({"rank": node * config.copies_per_node + local, "host": p["host"], "local_rank": local,
                          "device_slot": local // max(1, len(p["gpus"])), "gpu_index": local % len(p["gpus"])
                          if gpu else -1, "gpu_uuid": gpu["uuid"] if gpu else "", "mps_enabled": None,
                          "sm_count": None, "memory_free_bytes": None,
                          "mps_active_thread_percentage": job.thread_percentage, "context_memory_bytes": None})
    return {
        "tool": "mpsbench-sweep", "version": build.get("version") or "unknown",
        "git_commit": build.get("git_commit") or "unknown", "git_dirty": bool(build.get("git_dirty")),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "argv": list(argv), "hosts": list(dict.fromkeys(p["host"] for p in probed)),
        "mpi": {"library_version": "none: the copies are separate processes" if app.launcher is None
                else f"the application's own ({app.launcher_spec})", "world_size": len(ranks)},
        "mode_requested": job.mode,
        "device": {"requested": app.device_requested, "used": app.device, "note": app.device_note,
                   "devices": result["devices"], "max_ranks_per_device": job.k},
        "cuda": next((p["cuda"] for p in probed if p.get("cuda")), NO_CUDA),
        "settings": {"min_time_s": app.min_time, "repetitions": app.repetitions, "seed": 0, "allreduce_bytes": None},
        "gpus": gpus, "ranks": ranks, "mix": None}
