#!/usr/bin/env python3
"""A published result next to the same result measured again (standard library only).

usage: compare_published.py PUBLISHED NEW

scripts/reproduce.sh runs it for every file a results directory's reproduce.txt
names. What it prints depends on the file:

- an mpsbench results file (JSON with "results"): one row per configuration
  (kernel, precision, size, ranks per GPU, mode) with the published and the new
  aggregate median of the kernel's headline metric, their ratio (new /
  published) and whether each was verified; then one line: how many
  configurations both files hold, the median, lowest and highest ratio, and
  what only one of them holds;
- a Google Benchmark file (JSON with "benchmarks", mpsbench-micro): one row
  per benchmark with its throughput counter (FLOP/s, interaction/s, bytes/s)
  or, without one, its time per iteration;
- anything else, as text: the whole file when it has at most 40 lines, else
  its last paragraph (the lines after its last blank line, at most 40): the
  published one first, then the new one.

Either file may be gzip-compressed (results/ stores its JSON files and long
logs as FILE.json.gz, FILE.log.gz; a run writes them plain).

Exit status: 0 both files read; 1 NEW is missing or unreadable; 2 bad usage.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from results_io import open_text  # noqa: E402

MAX_TEXT_LINES = 40
PREFIXES = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
RATE_COUNTERS = ("FLOP/s", "interaction/s", "items_per_second", "bytes/s", "bytes_per_second")


def si(value, unit):
    if value is None:
        return "-"
    for scale, prefix in PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:#.4g} {prefix}{unit}".replace(". ", " ")
    return f"{value:#.4g} {unit}".replace(". ", " ")


JSON_SUFFIXES = (".json", ".json.gz")


def load_json(path):
    try:
        with open_text(path) as f:
            return json.load(f)
    except (OSError, ValueError, EOFError):
        return None


def table(rows, right=()):
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, r in enumerate(rows):
        out.append("  ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def ratio_line(ratios, only_published, only_new, what):
    if ratios:
        head = (f"{len(ratios)} {what} in both: this run / published median {statistics.median(ratios):.3f} "
                f"(lowest {min(ratios):.3f}, highest {max(ratios):.3f})")
    else:
        head = f"no {what} in both"
    return f"{head}; {only_published} only in the published file, {only_new} only in this run"


# --- mpsbench results files ----------------------------------------------------------------------

def config_key(r):
    """What makes a configuration itself (docs/results-format.md), in a printable order."""
    mode = r.get("mode") or "?"
    if r.get("mps_active_thread_percentage") is not None:
        mode += f" {r['mps_active_thread_percentage']}%"
    if r.get("mps_pinned_device_mem_limit") is not None:
        mode += f" mem {r['mps_pinned_device_mem_limit']}"
    params = r.get("params") or {}
    precision = r.get("precision") or "-"
    if params:
        precision += " " + ",".join(f"{k}={v}" for k, v in sorted(params.items()))
    if r.get("tenants"):
        precision += " [" + "+".join(f"{t.get('kernel')}/{t.get('precision')}/{t.get('size')}:{t.get('ranks_per_gpu')}"
                                     for t in r["tenants"]) + "]"
    size = "-" if r.get("size") is None else str(r["size"])
    return (str(r.get("kernel")), precision, size, str(r.get("ranks_per_gpu")), mode)


def headline(r):
    if r.get("status", "ok") != "ok":
        return None
    metric = r.get("primary_metric")
    try:
        return float(r["aggregate"][metric]["median"])
    except (KeyError, TypeError, ValueError):
        return None


def by_config(doc):
    records = {}
    for r in doc.get("results") or []:
        records.setdefault(config_key(r), []).append(r)
    return records


def compare_results(published, new):
    old, cur = by_config(published), by_config(new)
    keys = list(old) + [k for k in cur if k not in old]
    rows = [("kernel", "precision", "size", "k", "mode", "published", "this run", "ratio", "verified")]
    ratios = []
    for key in keys:
        for i in range(max(len(old.get(key, [])), len(cur.get(key, [])))):
            a = old[key][i] if i < len(old.get(key, [])) else None
            b = cur[key][i] if i < len(cur.get(key, [])) else None
            va, vb = (headline(a) if a else None), (headline(b) if b else None)
            unit = (a or b).get("primary_unit") or ""

            def shown(r, v):
                if r is None:
                    return "absent"
                return "FAILED" if r.get("status", "ok") != "ok" else si(v, unit)

            ratio = "-"
            if va and vb is not None:
                ratios.append(vb / va)
                ratio = f"{vb / va:.3f}"
            verified = "/".join("-" if r is None else ("yes" if r.get("verified") else "NO") for r in (a, b))
            rows.append(key + (shown(a, va), shown(b, vb), ratio, verified))
    only_published = sum(max(0, len(v) - len(cur.get(k, []))) for k, v in old.items())
    only_new = sum(max(0, len(v) - len(old.get(k, []))) for k, v in cur.items())
    return table(rows, right={2, 3, 5, 6, 7}) + "\n" + ratio_line(ratios, only_published, only_new, "configurations") + \
        "\n(verified: published/this run; ratio: this run / published)"


# --- Google Benchmark files (mpsbench-micro) -----------------------------------------------------

def bench_value(b):
    for counter in RATE_COUNTERS:
        if isinstance(b.get(counter), (int, float)):
            unit = {"items_per_second": "item/s", "bytes_per_second": "bytes/s"}.get(counter, counter)
            return float(b[counter]), unit, True
    if isinstance(b.get("real_time"), (int, float)):
        return float(b["real_time"]), b.get("time_unit", "ns") + " per iteration", False
    return None, "", True


def compare_benchmarks(published, new):
    old = {b.get("name"): b for b in published.get("benchmarks") or []}
    cur = {b.get("name"): b for b in new.get("benchmarks") or []}
    rows = [("benchmark", "published", "this run", "ratio")]
    ratios = []
    for name in list(old) + [n for n in cur if n not in old]:
        a, b = old.get(name), cur.get(name)
        va, unit, rate = bench_value(a) if a else (None, "", True)
        vb, unit_b, _ = bench_value(b) if b else (None, "", True)
        unit = unit or unit_b
        fmt = (lambda v: si(v, unit)) if rate else (lambda v: f"{v:.4g} {unit}")
        ratio = "-"
        if va and vb is not None:
            # a rate: new / published; a time: published / new, so that above 1 is faster here too
            r = vb / va if rate else (va / vb if vb else None)
            if r is not None:
                ratios.append(r)
                ratio = f"{r:.3f}"
        rows.append((str(name), "absent" if a is None else fmt(va) if va is not None else "-",
                     "absent" if b is None else fmt(vb) if vb is not None else "-", ratio))
    only_published = sum(1 for n in old if n not in cur)
    only_new = sum(1 for n in cur if n not in old)
    return table(rows, right={1, 2, 3}) + "\n" + ratio_line(ratios, only_published, only_new, "benchmarks") + \
        "\n(ratio: this run / published throughput; above 1 is faster here)"


# --- text ----------------------------------------------------------------------------------------

def text_excerpt(path):
    with open_text(path, errors="replace") as f:
        lines = f.read().rstrip("\n").splitlines()
    if len(lines) <= MAX_TEXT_LINES:
        return lines, "the whole file"
    blanks = [i for i, line in enumerate(lines) if not line.strip()]
    tail = lines[blanks[-1] + 1:] if blanks else lines
    note = "its last paragraph" if blanks else "its end"
    if len(tail) > MAX_TEXT_LINES:
        tail, note = tail[-MAX_TEXT_LINES:], f"the last {MAX_TEXT_LINES} lines of {note}"
    return tail, note


def compare_text(published_path, new_path):
    out = []
    for label, path in (("published", published_path), ("this run", new_path)):
        try:
            lines, note = text_excerpt(path)
        except OSError as e:
            out.append(f"{label} ({path}): not readable: {e.strerror or e}")
            continue
        out.append(f"{label} ({path}, {note}):")
        out += ["  " + line for line in lines]
    return "\n".join(out)


def main(argv):
    if len(argv) != 2 or argv[0] in ("-h", "--help"):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    published_path, new_path = argv
    print(f"== {new_path} (this run) against {published_path} (published)")
    try:
        with open(new_path, "rb"):
            pass
    except OSError as e:
        print(f"this run wrote no {new_path}: {e.strerror or e}")
        return 1
    published = load_json(published_path) if published_path.endswith(JSON_SUFFIXES) else None
    new = load_json(new_path) if new_path.endswith(JSON_SUFFIXES) else None
    if isinstance(published, dict) and isinstance(new, dict) and "results" in published and "results" in new:
        print(compare_results(published, new))
    elif isinstance(published, dict) and isinstance(new, dict) and "benchmarks" in published and "benchmarks" in new:
        print(compare_benchmarks(published, new))
    elif new_path.endswith(JSON_SUFFIXES) and new is None:
        print(f"this run's {new_path} is not JSON (a run cut short?)")
        return 1
    else:
        print(compare_text(published_path, new_path))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # | head
        sys.exit(0)
