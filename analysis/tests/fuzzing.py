"""Seeded mutations of real results files, for test_fuzz.py.

A mutation is one of the ways outside testers broke files: a value of the
wrong type, a non-finite, huge, extreme (tiny, largest integer) or negative
number, a deleted or duplicated field or array item, deep nesting, a cut-off
text, a string where a number was and back, an empty container, an integer
written as a float.  Each is
applied at a path picked at random (seeded) among the document's values, so
a few thousand mutations reach every part of the format.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import pickle
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import CPU_RUN, H100_SWEEP, read_doc
from mpsbench_analysis.cli import main

Path_ = tuple[Any, ...]

#: Fields of a result whose numbers were measured (or computed from measurements).
MEASURED = {"aggregate", "window_s", "aggregate_cv", "jain_fairness", "iteration_time_s", "gpu_iteration_time_s",
            "throughput_per_s", "work_per_iteration", "iterations_per_repetition"}

#: Mutations that make any measured value invalid, not merely different: a
#: file with one of them in a measured field must never pass compare's gate.
CORRUPTING = {"non_finite", "negative", "huge", "to_string", "delete"}

_HUGE_VALUES = [1e101, 1e300, -1e300, 1.7e308, 10**20, 2**64, -(2**63) - 1]
#: Within what a file may hold, but at the edges of a double and of the writers' integers.
_EXTREME_VALUES = [1e99, -1e99, 1e-300, 5e-324, 2**63 - 1, 2**64 - 1, -(2**63)]
_HUGE_TEXT = ["1e999", "-1e999", "9" * 5000]  # inf after parsing, or too many digits for int()
_OTHER_TYPES = ["x", "", "\u00e9t\u00e9", "\udc80", [], {}, True, False, None, 7, 0.5, [1, 2], {"a": 1}]
_DEEP = "__deep__"


def trimmed_cpu() -> dict[str, Any]:
    """The CPU run at its smallest size in two precisions, with one result failed the way mpsbench writes it."""
    doc = read_doc(CPU_RUN)
    doc["results"] = [r for r in doc["results"] if r["size"] == 32 and r["precision"] in ("fp32", "bf16")]
    failed = doc["results"][-1]
    failed.update(status="failed", error="rank 3 on host vm: cudaMalloc failed: out of memory", verified=False,
                  iterations_per_repetition=None, work_per_iteration=None, primary_unit=None, window_s=[],
                  aggregate=None, aggregate_cv=None, speedup_vs_one_rank_per_gpu=None, jain_fairness=None,
                  max_rel_error=None, ranks=[])
    return doc


def trimmed_sweep() -> dict[str, Any]:
    """The H100 sweep cut to its smallest matmul size at one and two ranks per GPU (timeslice and mps
    at both, mps-qos and streams at two) and its smallest hybrid size (item/s) at two."""
    doc = read_doc(H100_SWEEP)
    smallest = {}
    for r in doc["results"]:
        smallest[r["kernel"]] = min(smallest.get(r["kernel"], r["size"]), r["size"])

    def kept(r: dict[str, Any]) -> bool:
        if r["size"] != smallest[r["kernel"]]:
            return False
        if r["kernel"] == "matmul":
            return r["ranks_per_gpu"] in ((1, 2) if r["mode"] in ("timeslice", "mps") else (2,))
        return r["kernel"] == "hybrid" and r["ranks_per_gpu"] == 2 and r["mode"] in ("timeslice", "mps")

    doc["results"] = [r for r in doc["results"] if kept(r)]
    doc["context"]["sweep"]["jobs"] = doc["context"]["sweep"]["jobs"][:3]
    return doc


def value_paths(doc: Any) -> list[Path_]:
    """Every path below the root, in document order."""
    out: list[Path_] = []
    stack: list[tuple[Any, Path_]] = [(doc, ())]
    while stack:
        node, path = stack.pop()
        if path:
            out.append(path)
        if isinstance(node, dict):
            stack.extend((v, path + (k,)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, path + (i,)) for i, v in enumerate(node))
    return out


def _get(doc: Any, path: Path_) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class Mutation:
    kind: str
    path: Path_
    text: str  # the mutated file's contents
    was_number: bool = False

    @property
    def corrupts_measurement(self) -> bool:
        """A CORRUPTING mutation of a number (or a deletion) inside a measured field of a result."""
        return (self.kind in CORRUPTING and (self.was_number or self.kind == "delete") and len(self.path) > 2
                and self.path[0] == "results" and any(part in MEASURED for part in self.path[2:]))

    def describe(self) -> str:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path) or "(text)"
        return f"{self.kind} at {where}"


def _set(doc: Any, path: Path_, value: Any) -> None:
    _get(doc, path[:-1])[path[-1]] = value


def _mutate(doc: Any, kind: str, path: Path_, rng: random.Random) -> dict[str, str] | None:
    """Changes ``doc`` in place; returns text replacements to make after dumping, None when it does not apply."""
    value = _get(doc, path)
    parent = _get(doc, path[:-1])
    if kind == "type_swap":
        _set(doc, path, rng.choice([v for v in _OTHER_TYPES if type(v) is not type(value)]))
    elif kind == "non_finite":
        if not _is_number(value):
            return None
        _set(doc, path, rng.choice([float("nan"), float("inf"), float("-inf")]))
    elif kind == "delete":
        del parent[path[-1]]
    elif kind == "duplicate":
        if isinstance(parent, list):
            parent.insert(path[-1], copy.deepcopy(value))
        else:
            other = rng.choice(list(parent))
            parent[other] = copy.deepcopy(value)
    elif kind == "deep_nest":
        _set(doc, path, _DEEP)
        depth = rng.choice([30, 70, 500, 3000, 100000])
        opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
        inner = json.dumps(value, allow_nan=True)
        return {json.dumps(_DEEP): opener * depth + inner + closer * depth}
    elif kind == "to_string":
        _set(doc, path, str(value) if _is_number(value) else "12.5")
    elif kind == "to_number":
        if not isinstance(value, str):
            return None
        _set(doc, path, rng.choice([3, 0.25, -1]))
    elif kind == "empty":
        _set(doc, path, rng.choice([[], {}, ""]))
    elif kind == "huge":
        if not _is_number(value):
            return None
        if rng.random() < 0.3:
            _set(doc, path, _DEEP)
            return {json.dumps(_DEEP): rng.choice(_HUGE_TEXT)}
        _set(doc, path, rng.choice(_HUGE_VALUES))
    elif kind == "extreme":
        if not _is_number(value):
            return None
        _set(doc, path, rng.choice(_EXTREME_VALUES))
    elif kind == "negative":
        if not _is_number(value):
            return None
        _set(doc, path, -(abs(value) or 1))
    elif kind == "int_as_float":
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        _set(doc, path, float(value))
    elif kind == "zero":
        if not _is_number(value):
            return None
        _set(doc, path, 0)
    else:
        raise ValueError(kind)
    return {}


KINDS = ["type_swap", "non_finite", "delete", "duplicate", "deep_nest", "to_string", "to_number", "empty",
         "huge", "extreme", "negative", "int_as_float", "zero"]
TEXT_KINDS = ["truncate", "garbage"]


class Mutator:
    """Seeded mutations of one base document."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.text = json.dumps(doc)
        self.paths = value_paths(doc)
        self.measured = [p for p in self.paths if p[0] == "results" and any(k in MEASURED for k in p[2:])]

    def mutation(self, seed: int) -> Mutation:
        rng = random.Random(seed)
        if rng.random() < 0.06:
            return self._text_mutation(rng)
        while True:
            kind = rng.choice(KINDS)
            # half of the mutations aim at measured values, where a corrupted file does harm
            path = rng.choice(self.measured if rng.random() < 0.5 else self.paths)
            doc = json.loads(self.text)
            was_number = _is_number(_get(doc, path))
            after = _mutate(doc, kind, path, rng)
            if after is None:
                continue
            text = json.dumps(doc)  # NaN and Infinity as Python writes them
            for old, new in after.items():
                text = text.replace(old, new, 1)
            return Mutation(kind, path, text, was_number)

    def _text_mutation(self, rng: random.Random) -> Mutation:
        kind = rng.choice(TEXT_KINDS)
        cut = rng.randrange(len(self.text))
        if kind == "truncate":
            return Mutation(kind, (), self.text[:cut])
        junk = rng.choice(["\x00", "}", "]", ",", '"', "\ud800", "\\", "NaN", "\xff"])
        return Mutation(kind, (), self.text[:cut] + junk + self.text[cut:])


def write(mutation: Mutation, path: Path) -> Path:
    # surrogatepass: a lone surrogate in the text becomes bytes that are not UTF-8, as in a damaged file
    path.write_bytes(mutation.text.encode("utf-8", "surrogatepass"))
    return path


@contextlib.contextmanager
def shared_loads():
    """Within the block each file is read and validated once (validate.load_document: schema, values and
    derived fields, most of a command's time on these small files), not once per command that reads it: the
    base of every compare, and each mutation that several commands read.  load_document is a function of the
    file's name and bytes alone, so a later load of the same name and bytes replays what the first gave: a
    fresh copy of the document, or the same exception (an internal error as much as an AnalysisError), and
    the warnings it wrote to stderr."""
    from mpsbench_analysis import loader
    original = loader.load_document
    outcomes: dict[tuple[str, bytes], tuple[str, bytes | None, BaseException | None]] = {}

    def load_document(path: Any) -> dict[str, Any]:
        try:
            key = (str(path), Path(path).read_bytes())
        except OSError:
            return original(path)
        if key not in outcomes:
            warnings = io.StringIO()
            try:
                with contextlib.redirect_stderr(warnings):
                    loaded = original(path)
            except Exception as exc:  # noqa: BLE001 -- replayed as it was raised
                outcomes[key] = (warnings.getvalue(), None, exc)
            else:
                outcomes[key] = (warnings.getvalue(), pickle.dumps(loaded), None)
        warned, document, error = outcomes[key]
        sys.stderr.write(warned)
        if error is not None:
            raise error
        return pickle.loads(document)

    loader.load_document = load_document
    try:
        yield
    finally:
        loader.load_document = original


@contextlib.contextmanager
def one_parser():
    """Within the block the command line parser is built once (cli.build_parser: about 1.4 ms, argparse's
    message lookups), not once per command run in this process.  It depends on nothing the commands read:
    every run parses its own arguments with it, and a parser keeps no state between parse_args calls."""
    from mpsbench_analysis import cli
    original = cli.build_parser
    parser = original()
    cli.build_parser = lambda: parser
    try:
        yield
    finally:
        cli.build_parser = original


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """mpsbench-analyze in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def cli_problem(code: int, err: str, allowed: tuple[int, ...]) -> str | None:
    """What is wrong with a CLI run on hostile input, or None: an exit code outside `allowed`, a traceback or
    internal error, or exit 2 without exactly one error line (warnings aside)."""
    if code not in allowed:
        return f"exit {code}"
    if "internal error" in err or "Traceback" in err:
        return err.strip().splitlines()[-1]
    errors = [line for line in err.splitlines() if not line.startswith("mpsbench-analyze: warning: ")]
    if code == 2 and (len(errors) != 1 or not errors[0].startswith("mpsbench-analyze: error: ")):
        return f"not one error line: {err!r}"
    return None


def figure_failures(mutator: Any, first_seed: int, count: int, tmp_path: Path) -> list[str]:
    """Mutations from first_seed on until `count` of them load, each through plot and report (which draw every
    column): what went wrong, one line per run (cli_problem), with the seed and the mutation."""
    from mpsbench_analysis import AnalysisError, load_results
    failures, done, seed = [], 0, first_seed
    while done < count:
        mutation = mutator.mutation(seed)
        path = write(mutation, tmp_path / f"m{seed}.json")
        seed += 1
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                load_results([path])
        except AnalysisError:
            continue
        done += 1
        for argv in (["plot", str(path), "--outdir", str(tmp_path / "plots"), "--formats", "png"],
                     ["report", str(path), "-o", str(tmp_path / "r.html")]):
            code, _, err = run_cli(argv)
            why = cli_problem(code, err, (0, 2))
            if why:
                failures.append(f"seed {seed - 1} ({mutation.describe()}, {argv[0]}): {why}")
    return failures
