"""The console's tables after the comparison table: farmed applications, energy and SM activity, mixes.

Each takes the results (mpsbench_core.records.Result) and returns lines, or [] when it has nothing to
show; every cell is escaped (text.printable): names and units come from the file.

- applications: one row per configuration (binding, mode, copies per GPU): the program's own figure
  (or runs/s), per copy and its spread, fairness, runs/hour, the start-up share, GPU memory per copy,
  and where metered J per unit of work (as core energy.py reads it: J/run for a program's own rate) and
  SM active, with why a J per unit is unavailable;
- energy: kernels whose results carry energy or gpu_activity (mpsbench's per-result objects): J per
  unit of the headline metric's work and SM active, per mode, at each size and ranks per GPU;
- mixes: one row per tenant, per mode its slowdown against itself alone (and the p99 latency
  against alone for a latency tenant): the tenants, not one headline, so a starved tenant shows.
"""
import math

from mpsbench_core import modes as registry
from mpsbench_core import stats
from mpsbench_core.energy import format_per_unit
from mpsbench_core.units import format_count, format_ratio, format_seconds

from .text import printable

def _table(rows, left=1):
    """Aligned text of rows (lists of cells): the first `left` columns left-aligned, the rest right-aligned."""
    rows = [[printable(str(c)) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in rows]


def _available(obj):
    return isinstance(obj, dict) and obj.get("available") is True


def _num(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) else None


def figure(value, unit):
    """A figure in its unit as it reads, without SI prefixes (they read badly on ns/day or steps/s)."""
    return format_count(value, unit)


def per_unit(joules, unit):
    """J per unit of work as every line says it (core energy.format_per_unit): '2.50 J/step', '0.450 J/TFLOP'."""
    value = _num(joules)
    return "-" if value is None or not unit else format_per_unit(value, unit)


def _app_energy(r, notes):
    """An application's J per unit cell; why it is unavailable goes into notes (reason -> count)."""
    energy = r.energy
    if energy is None or not energy.available:
        return "-"
    if energy.per_unit is None:
        notes[energy.reason] = notes.get(energy.reason, 0) + 1
        return "unavailable"
    return per_unit(energy.per_unit, energy.unit)


def percent(value):
    value = _num(value)
    return "-" if value is None else f"{value:.0f}%"


def _work_unit(r):
    """The unit of work a kernel's J/unit is per: FLOP/s -> FLOP, B/s -> B, 'pairs/s' -> pairs."""
    unit = r.unit
    return unit[:-2] if unit.endswith("/s") else unit


def shown(label):
    """A mode label as a column reads it: 'mps-qos:12%' -> 'mps-qos 12%'."""
    mode, value = registry.split_label(label)
    return f"{mode} {value}" if value else mode


def bind_of(r):
    app = r.raw.get("app") if isinstance(r.raw.get("app"), dict) else {}
    return app.get("bind") or "none"


def app_lines(results):
    apps = [r for r in results if r.kind == "app"]
    if not apps:
        return []
    metered = any(_available(r.raw.get("energy")) or _available(r.raw.get("gpu_activity")) for r in apps)
    header = ["app", "bind", "mode", "copies/gpu", "figure", "per copy", "spread", "fairness", "runs/hour",
              "start-up", "memory/copy"] + (["J/unit", "SM active"] if metered else [])
    rows, unavailable = [header], {}
    order = sorted(apps, key=lambda r: (r.name, bind_of(r), registry.sort_key(r.mode_label), r.ranks_per_gpu))
    for r in order:
        app = r.raw.get("app") or {}
        metric = app.get("metric") if isinstance(app.get("metric"), dict) else {}
        row = [r.name, bind_of(r), shown(r.mode_label), r.ranks_per_gpu]
        if r.status != "ok":
            rows.append(row + ["FAILED"] + ["-"] * (len(header) - 5))
            continue
        copies = [c.get("metric_per_s") or {} for c in r.raw.get("copies") or []] if metric else []
        own = [_num(c.get("median")) for c in copies if _num(c.get("median")) is not None]
        spread = _num(metric.get("copy_spread"))
        memory = [v for v in (app.get("gpu_memory_bytes") or {}).values() if isinstance(v, int)]
        row += [figure(r.median, r.unit), figure(stats.mean(own), r.unit) if own else "-",
                "-" if spread is None else f"{spread * 100:.0f}%", _fairness(r.raw.get("jain_fairness")),
                format_count(_num(app.get("runs_per_hour")), "").strip(),
                "-" if _num(app.get("startup_share")) is None else f"{app['startup_share'] * 100:.0f}%",
                f"{stats.median(memory) / 2**20:.0f} MiB" if memory else "-"]
        if metered:
            activity = r.raw.get("gpu_activity") or {}
            row += [_app_energy(r, unavailable), percent(activity.get("sm_active")) if _available(activity) else "-"]
        rows.append(row)
    notes = ["applications: figure = the configuration's median (the program's own unit, or runs/s); per copy = "
             "the copies' mean; spread = (largest - smallest) / mean of the copies; start-up = share of a run "
             "before its first counter line (--app-progress); memory/copy: the largest GPU memory a copy's "
             "processes held at once, as nvidia-smi lists them ('-': it listed none)"]
    if metered:
        notes.append("J/unit: GPU energy over the metered spans per unit of work done in them (per run with "
                     "--app-metric); SM active: mean over the spans and GPUs (mpsbench-meter)")
        notes += [f"J/unit unavailable ({n} configuration{'s' if n != 1 else ''}): {why}"
                  for why, n in unavailable.items()]
    return _table(rows, left=3) + [""] + notes


def _fairness(value):
    value = _num(value)
    return "-" if value is None else f"{value:.2f}"


def energy_lines(results):
    """Kernels with energy or SM activity: one row per (kernel, precision, params, size, ranks/gpu)."""
    kernels = [r for r in results if r.kind == "kernel" and r.status == "ok"
               and (_available(r.raw.get("energy")) or _available(r.raw.get("gpu_activity")))]
    if not kernels:
        return []
    modes = sorted({r.mode_label for r in kernels}, key=registry.sort_key)
    cells = {}
    for r in kernels:
        key = (r.name, r.precision, r.params, r.size if r.size is not None else -1, r.ranks_per_gpu)
        energy, activity = r.raw.get("energy") or {}, r.raw.get("gpu_activity") or {}
        jpu = per_unit(energy.get("joules_per_unit"), _work_unit(r)) if _available(energy) else "-"
        cells.setdefault(key, {})[r.mode_label] = (jpu, percent(activity.get("sm_active"))
                                                   if _available(activity) else "-")
    header = (["kernel", "precision", "size", "ranks/gpu"] + [f"{shown(m)} J/unit" for m in modes]
              + [f"{shown(m)} SM" for m in modes])
    rows = [header]
    for key in sorted(cells):
        name, precision, params, size, k = key
        got = cells[key]
        rows.append([name, precision + (f" ({params})" if params else ""), "-" if size < 0 else size, k]
                    + [got.get(m, ("-", "-"))[0] for m in modes] + [got.get(m, ("-", "-"))[1] for m in modes])
    return (["energy and SM activity (J per unit of the headline metric's work over the kept repetitions; SM "
             "active: mean over them and the GPUs):"] + _table(rows, left=2))


def _tenant_label(t):
    return f"{t.get('kernel')}/{t.get('precision')}/{t.get('size')}:{t.get('ranks_per_gpu')}"


def mix_lines(results):
    """One table per mix (its tenants as written): a row per tenant, per mode its slowdown against itself alone
    ('4.70x'; 'p99 190x' added for a latency tenant); '-' where not measured, FAILED where the mix failed."""
    mixes = [r for r in results if r.kind == "mix"]
    out = []
    for mix in dict.fromkeys(r.precision for r in mixes):
        mine = [r for r in mixes if r.precision == mix]
        modes = sorted({r.mode_label for r in mine}, key=registry.sort_key)
        tenants = []
        for r in mine:
            for t in r.raw.get("tenants") or []:
                if isinstance(t, dict) and _tenant_label(t) not in tenants:
                    tenants.append(_tenant_label(t))
        rows = [["tenant"] + [shown(m) for m in modes]]
        for label in tenants:
            row = [label]
            for mode in modes:
                r = next((x for x in mine if x.mode_label == mode), None)
                t = next((t for t in (r.raw.get("tenants") or []) if isinstance(t, dict) and _tenant_label(t) == label),
                         None) if r is not None else None
                row.append("FAILED" if r is not None and r.status != "ok" else "-" if t is None else _slowdown(t))
            rows.append(row)
        k = mine[0].ranks_per_gpu
        out += ([f"mix {mix} ({k} ranks per GPU): each tenant's slowdown against itself alone in the same mode "
                 "(above 1x: slower when sharing); p99: its p99 latency against alone"]
                + (_table(rows) if tenants else ["  (no tenant measured)"]) + [""])
    return out[:-1]


def _slowdown(t):
    text = format_ratio(_num(t.get("slowdown")))
    ratio = _num(t.get("latency_p99_ratio"))
    latency = (t.get("latency") or {}).get("overall") if isinstance(t.get("latency"), dict) else None
    if ratio is not None:
        p99 = _num((latency or {}).get("p99"))
        text += f", p99 {format_ratio(ratio)}" + (f" ({format_seconds(p99)})" if p99 is not None else "")
    return text
