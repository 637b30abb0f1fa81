"""One results file from the jobs' part files.

The merged file is an ordinary mpsbench results file (same schema, version 3): `context` of the first
part plus `context.sweep` (what ran, how, with which daemon, and every MPS gain's interval in `gains`:
mpsbench_core.gain_record, which the analysis re-derives), `results` of every part. It is rewritten
atomically (temporary file, fsync, rename) after every job, so a sweep killed at any moment leaves
valid JSON holding everything that finished; `complete` turns true only when every planned job ran to
its end and every part is complete.
"""
import json

from mpsbench_core import modes as registry
from mpsbench_core.gain_record import gain_entries
from mpsbench_core.records import results_of

from . import safe_files
from .plan import MEM_FIELD

SCHEMA = "mpsbench-results"
SCHEMA_VERSION = 3  # what mpsbench of this tree writes, and what the sweep writes for an application


def load_part(path):
    """The part's document, or None when it is missing or not a results file (a crashed job)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("context"), dict):
        return None
    if not isinstance(doc.get("results", []), list):
        return None
    return doc


def part_document(context, records):
    """A part file of the sweep's own (an application's configuration)."""
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "complete": True, "context": context,
            "results": list(records)}


def merge(parts, sweep, all_jobs_done):
    """parts: documents in job order. None when there is nothing to merge (no context to keep)."""
    if not parts:
        return None
    context = dict(parts[0]["context"])
    results = [r for p in parts for r in p.get("results", [])]
    # every MPS gain's interval and what it is made of, by the one definition the analysis re-derives it with
    context["sweep"] = dict(sweep, gains=gain_entries(results_of([{"results": results}])))
    complete = all_jobs_done and all(p.get("complete") is True for p in parts)
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "complete": complete, "context": context,
            "results": results}


def relabel(doc, job):
    """A part's results as the merged file holds them: each says the round that measured it (every sweep, 0
    with one round: the records of one configuration differ only in round) and, in turns, its turn group;
    a part whose mode mpsbench ran under another name (mps-mem runs as plain mps clients) says the sweep's
    mode and the mode's label field its setting (the memory limit), so its results stay apart from the mps
    results of the same k."""
    mode = registry.BY_NAME[job.mode]
    extra = {"round": job.round}
    if job.turn_group is not None:  # its repetitions took turns with the group's (core turn_pairs.py)
        extra["turn_group"] = job.turn_group
    if mode.engine_mode != job.mode:
        extra["mode"] = job.mode
        if mode.label_field == MEM_FIELD:
            extra[MEM_FIELD] = job.mem_limit
    return dict(doc, results=[dict(r, **extra) for r in doc.get("results", [])])


def write_atomic(path, doc):
    """The document as JSON at path (safe_files.write_atomic: never through a link, never over a non-file)."""
    safe_files.write_atomic(path, json.dumps(doc, indent=1) + "\n")
