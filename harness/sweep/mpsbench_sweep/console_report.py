"""What the sweep prints at the end: the comparison table, its notes and the verdict lines.

console_report(doc, threshold) works on any results file (every schema version, every kind of record),
so it can be checked against `mpsbench-analyze verdict` on the same file: the verdict lines are
mpsbench_core.verdict's, the figures are formatted by mpsbench_core.units, the columns follow the
mode registry (mpsbench_core.modes). Every cell is escaped (text.printable): names come from the file.

The table: one row per kernel (or application, or mix), precision, parameters, size and ranks per GPU;
one column per mode with the median of the record's headline metric. A mode whose label carries a
setting the user chose for it alone (mps-mem: the memory limit) gets one column per setting; one whose
setting follows k by default (mps-qos: 100/k percent) gets one column per setting only where a row has
several, else one column and a note listing the setting per k. Then ratios between modes where both
have one column: MPS gain = mps / timeslice, mps/streams, ts/streams, green/qos; and `verified` over all
modes.
"""
from mpsbench_core import modes as registry
from mpsbench_core import records, rounds, stats
from mpsbench_core.aa_check import aa_check
from mpsbench_core.units import format_count, format_si
from mpsbench_core.verdict import GAIN_THRESHOLD, KernelVerdict, verdict_lines, verdicts

from .console_tables import app_lines, energy_lines, mix_lines
from .plan import MEM_FIELD, QOS_FIELD
from .text import printable

RATIOS = (("MPS gain", "mps", "timeslice"), ("mps/streams", "mps", "streams"), ("ts/streams", "timeslice", "streams"),
          ("green/qos", "green", "mps-qos"))
SETTING_VARIABLES = {QOS_FIELD: "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", MEM_FIELD: "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"}
TITLED_SETTINGS = (MEM_FIELD,)  # settings always shown in their own columns' titles


def _params(r):
    """A kernel's parameters; an application's binding where it is pinned (records.app_params: bind=core)."""
    return r.params


def _row_key(r):
    return r.kind, r.name, r.precision, _params(r), r.size if r.size is not None else -1, r.ranks_per_gpu


def _cell(r):
    if r.status != "ok":
        return "FAILED"
    # A program's own unit reads without SI prefixes (ns/day, steps/s); runs and kernels' units with them.
    return format_count(r.median, r.unit) if r.kind == "app" and r.unit != "run/s" else format_si(r.median, r.unit)


def _columns(results):
    """[(mode, setting or None, title)] in registry order, and {mode: setting per k} for the notes."""
    settings, notes = {}, {}
    for r in results:
        mode, value = registry.split_label(r.mode_label)
        settings.setdefault(mode, {}).setdefault(_row_key(r), set()).add(value or None)
    columns = []
    for mode in sorted(settings, key=registry.sort_key):
        per_row = settings[mode]
        values = sorted({v for vs in per_row.values() for v in vs if v is not None},
                        key=lambda v: registry.sort_key(f"{mode}:{v}"))
        titled = mode in registry.BY_NAME and registry.BY_NAME[mode].label_field in TITLED_SETTINGS
        if values and (titled or any(len(vs) > 1 for vs in per_row.values())):
            columns += [(mode, v, f"{mode} {v}") for v in values]
        else:
            columns.append((mode, None, mode))
            if values:
                notes[mode] = {key[-1]: next(iter(vs)) for key, vs in sorted(per_row.items(), key=lambda i: i[0][-1])}
    return columns, notes


def _cell_key(r, columns):
    mode, value = registry.split_label(r.mode_label)
    return (mode, value) if (mode, value) in {(c[0], c[1]) for c in columns} else (mode, None)


def console_report(doc, threshold=None):
    """The table, its notes, then the verdict lines (mpsbench_core.verdict) of a results document."""
    threshold = GAIN_THRESHOLD if threshold is None else threshold
    everything = [records.Result.from_json(r) for r in doc.get("results", []) if isinstance(r, dict)]
    if not everything:
        return "no results to compare"
    found_configs = rounds.configs(everything)
    gains = _gain_intervals(everything)
    once = rounds.combined(found_configs)  # one figure per configuration over its rounds
    results = [r for r in once if r.kind != "mix"]  # a mix is its tenants (console_tables.mix_lines)
    extra = [lines for lines in (app_lines(results), energy_lines(results), mix_lines(once)) if lines]
    found = verdicts(everything, threshold)
    aa = aa_check(everything).line
    verdict = [printable(line) for line in verdict_lines(found) + ([aa] if aa else [])]
    tables = [line for lines in extra for line in [""] + lines]
    if not results:
        return "\n".join(tables[1:] + [""] + verdict)
    rows, order = {}, {}
    for r in results:
        rows.setdefault(_row_key(r), []).append(r)
        order.setdefault(_row_key(r)[:4], len(order))
    columns, setting_notes = _columns(results)
    single = {}
    for mode, value, _ in columns:
        single[mode] = None if mode in single else (mode, value)
    ratios = [(name, single[a], single[b]) for name, a, b in RATIOS if single.get(a) and single.get(b)]
    with_params = any(_params(r) for r in results)
    header = (["kernel", "precision"] + (["params"] if with_params else []) + ["size", "ranks/gpu"]
              + [c[2] for c in columns] + [name for name, _, _ in ratios] + ["verified"])
    lines = [header]
    for key in sorted(rows, key=lambda k: (order[k[:4]], k[4], k[5])):
        cells = {_cell_key(r, columns): r for r in rows[key]}
        first = rows[key][0]
        app = first.kind == "app"
        line = ["app" if app else first.name, first.name if app else first.precision]
        line += [_params(first) or "-"] if with_params else []
        line += ["-" if first.size is None else str(first.size), str(first.ranks_per_gpu)]
        for mode, value, _ in columns:
            r = cells.get((mode, value))
            line.append("-" if r is None else _cell(r))

        def value_of(column):
            r = cells.get(column)
            return r.median if r is not None else None

        for name, a, b in ratios:
            x, y = value_of(a), value_of(b)
            interval = gains.get(key) if name == "MPS gain" else None
            line.append("-" if x is None or not y else f"{interval.point:.2f}x [{interval.low:.2f}-{interval.high:.2f}]"
                        if interval is not None else f"{x / y:.2f}x")
        titles = {(c[0], c[1]): c[2] for c in columns}
        failed = sorted({titles.get(c, c[0]) for c, r in cells.items() if not r.verified})
        line.append("yes" if not failed else "NO: " + ",".join(failed))
        lines.append([printable(c) for c in line])
    left = 3 if with_params else 2
    widths = [max(len(l[i]) for l in lines) for i in range(len(header))]
    text = ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(l, widths)))
            for l in lines]
    notes = _notes(ratios, setting_notes, found, threshold, rounds.Rounds.of(found_configs))
    return "\n".join(text + [""] + notes + tables + [""] + verdict)


def _gain_intervals(results):
    """{row key: the MPS gain's interval}: core's (rounds.gain_intervals), the ones the verdict and the A/A
    row give."""
    return {(*subject, -1 if size is None else size, k): interval
            for (subject, size, k), interval in rounds.gain_intervals(results).items()}


def _notes(ratios, setting_notes, found, threshold, measured):
    notes = ["throughput: aggregate median of the kernel's headline metric over the active ranks"
             + ("" if measured.most <= 1 else f"; each configuration measured in {measured.text} (separate processes,"
                " the modes interleaved): the figure is the geometric mean of its rounds' medians")]
    names = [name for name, _, _ in ratios]
    if any(name != "green/qos" for name in names):
        notes.append("MPS gain = mps / timeslice [its 95% interval, from the spread between rounds]; mps/streams, "
                     "ts/streams: ratio to k instances in one process (streams)")
    if "green/qos" in names:
        notes.append("green/qos = green / mps-qos at the same k: 1/k of the SMs fenced off in green contexts of one "
                     "process against k MPS clients capped at the percentage below (the SMs each instance got: "
                     "kernel_details.green_context_sm_count)")
    for mode, per_k in setting_notes.items():
        field = registry.BY_NAME[mode].label_field if mode in registry.BY_NAME else None
        notes.append(printable(f"{mode}: {SETTING_VARIABLES.get(field, field)} per ranks/gpu: "
                               + ", ".join(f"{k}: {v}" for k, v in per_k.items())))
    if any(isinstance(v, KernelVerdict) and v.outcome != "none" for v in found):
        notes.append(f"how the verdict reads: at each size, in each mode, the fewest ranks per GPU within noise of "
                     f"that mode's fastest; its MPS gain = the best of mps / the best of timeslice (the table's MPS "
                     f"gain is at the same k); it pays off where its 95% interval lies above {threshold:g}x, does not "
                     f"where it lies below, and the data cannot tell where the interval holds {threshold:g}x")
    return notes


def _mib(value):
    return "-" if value is None else f"{value / 2**20:.0f} MiB"


def memory_summary(sweep):
    """Per job: median context memory of a rank (from mpsbench's context.ranks) and the MPS server's peak."""
    rows, known = [], False
    for job in sweep.get("jobs", []):
        if job.get("status") == "not_run":
            continue
        per_rank = [r["context_memory_bytes"] for r in job.get("ranks") or [] if r.get("context_memory_bytes")]
        context = stats.median(per_rank) if per_rank else None
        server = (job.get("daemon") or {}).get("mps_server_memory_bytes")
        known = known or context is not None or server is not None
        rows.append((printable(job["label"]), context, server))
    width = max([24] + [len(label) for label, _, _ in rows])  # a round's label ("mps, round 2 of 2") is longer
    lines = [f"  {label:<{width}} context per rank {_mib(context):>9}   MPS server {_mib(server):>9}"
             for label, context, server in rows]
    if not known:
        return ""
    return "GPU memory (median context of a rank; MPS server peak, from nvidia-smi):\n" + "\n".join(lines)
