"""Reading and validating one results file, with errors a person can act on.

The identity fields (schema, schema_version) are checked before the JSON Schema, so that a file of another format
or version gets that message rather than a list of missing fields.  A schema violation is reported as the single
best-matching error, named by its field path (``results[3].ranks[0].x``).  Values are checked as well as shapes:
no non-finite number or absurd nesting anywhere (json_values.py), integers written as integers, and every derived
field of each record in agreement with what it derives from (consistency.py).

Versions 1, 2 and 3 are read (SUPPORTED_VERSIONS), each against the schema it was written for (SCHEMA_FILES):
version 2's frozen at its last version-2 commit, as version 3 changed the shape of records (every record has a
``kind``; an application is an ``app_result`` with ``copies``, not a kernel ``app`` record named in ``precision``),
and version 1 against version 2's as :func:`_open_world` gives it.  After validation, legacy.py gives the
records of versions 1 and 2 the version-3 shape, so that nothing after the loader reads a version number or a
kernel name to know what a record is.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match, by_relevance

from .consistency import check_consistency
from .errors import AnalysisError
from .json_values import check_values, path_text
from .quality import short

SCHEMA_NAME = "mpsbench-results"
#: The version the shipped schema describes (what the writers write now).
SCHEMA_VERSION = 3
#: Every version this package reads (see the module doc for how each is validated).
SUPPORTED_VERSIONS = (1, 2, 3)
#: The schema file (a package resource) each version is validated against.
SCHEMA_FILES = {3: "schema/mpsbench-results.schema.json", 2: "schema/mpsbench-results-v2.schema.json",
                1: "schema/mpsbench-results-v2.schema.json"}
#: The required fields version 2 added (results[], results[].ranks[] and context.plan[]).
ADDED_IN_2 = frozenset({"params", "latency", "collective", "tenants", "latency_s", "collective_time_s", "tenant"})


@lru_cache(maxsize=len(SUPPORTED_VERSIONS))
def schema(version: int = SCHEMA_VERSION) -> dict[str, Any]:
    """The results JSON Schema of ``version`` shipped with this package (by default the current one)."""
    text = resources.files(__package__).joinpath(SCHEMA_FILES[version]).read_text("utf-8")
    return json.loads(text)


_LOCAL_REF = "#/definitions/"


def _open_world(node: Any, version: int = SCHEMA_VERSION, definitions: dict[str, Any] | None = None,
                depth: int = 0) -> Any:
    """The schema as a file of ``version`` is checked against, in one walk:

    * without ``additionalProperties: false``: files from a newer writer may carry fields this copy of the schema
      does not know yet (optional fields are added without a version bump); they are ignored, while every field
      we read is still checked for presence, type and range;
    * for version 1 (which shares version 2's file): without the requirements version 2 added and with
      ``schema_version`` 1;
    * given its ``definitions``: every ``$ref`` to them replaced by the definition itself.  The same schema for a
      validator (draft 7 ignores the siblings of ``$ref``, and so does this), but checked about twice as fast:
      resolving a reference is a large part of jsonschema's time, and every rank refers to several definitions.
      The format's definitions do not refer to themselves; ``depth`` guards against a schema that would.
    """
    if depth > 32:
        raise ValueError("schema definitions nest too deeply (a reference cycle?)")
    if isinstance(node, list):
        return [_open_world(v, version, definitions, depth) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if definitions is not None and isinstance(ref, str) and ref.startswith(_LOCAL_REF):
        return _open_world(definitions[ref[len(_LOCAL_REF):]], version, definitions, depth + 1)
    out = {}
    for k, v in node.items():
        if (k == "additionalProperties" and v is False) or (k == "definitions" and definitions is not None):
            continue
        if version == 1 and k == "required" and isinstance(v, list):
            out[k] = [name for name in v if name not in ADDED_IN_2]
        elif version == 1 and k == "schema_version" and isinstance(v, dict) and "const" in v:
            out[k] = dict(v, const=version)
        else:
            out[k] = _open_world(v, version, definitions, depth)
    return out


def _is_integer(_checker: Any, instance: Any) -> bool:
    # jsonschema counts 32.0 as an integer; the writers never write an integer
    # field as a float, and json.loads keeps the two apart, so a float there
    # means the file was produced by something else (or edited).
    return isinstance(instance, int) and not isinstance(instance, bool)


@lru_cache(maxsize=len(SUPPORTED_VERSIONS))
def _validator(version: int = SCHEMA_VERSION) -> Any:
    strict_integers = jsonschema.Draft7Validator.TYPE_CHECKER.redefine("integer", _is_integer)
    cls = jsonschema.validators.extend(jsonschema.Draft7Validator, type_checker=strict_integers)
    return cls(_open_world(schema(version), version, schema(version).get("definitions", {})))


def _describe(error: ValidationError) -> tuple[str, str]:
    """(field, message) for a schema violation, phrased for a person."""
    where, v = path_text(error.absolute_path), error.validator_value
    if error.validator == "required":
        name = next((name for name in v if name not in error.instance), "?")
        return (f"{where}.{name}" if where else name), "required field is missing"
    if error.validator in ("const", "type"):
        expected = short(v) if error.validator == "const" else " or ".join(map(str, v if isinstance(v, list) else [v]))
        message = f"expected {expected}, got {short(error.instance)}"
    elif error.validator == "enum":
        message = f"{short(error.instance)} is not one of {', '.join(map(short, v))}"
    else:
        message = error.message if len(error.message) <= 160 else error.message[:157] + "..."
    return where or "(document)", message


_relevance = by_relevance()


def _preferred(error: ValidationError) -> tuple[int, Any]:
    """best_match's order, except that requirements inside more if/then/else branches come later: such
    a requirement follows from another field's value (status "ok" requires a null error), and when
    that field is missing or wrong itself, its own error is the one to fix.  (Every record is inside
    one branch: its kind picks the app or the kernel/mix definition.)"""
    conditions = sum(part in ("then", "else") for part in error.absolute_schema_path)
    return -conditions, _relevance(error)


def _parse(text: str, name: str) -> Any:
    if not text.strip():
        raise AnalysisError("file is empty", name)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # the decoder reports "Unterminated string" only when the input ends inside one
        truncated = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        what = "truncated JSON (file ends early)" if truncated else "not valid JSON"
        raise AnalysisError(f"{what}: {exc.msg} (line {exc.lineno}, column {exc.colno})", name) from None
    except RecursionError:  # the C decoder recurses once per nesting level
        raise AnalysisError("not valid JSON: nested too deeply", name) from None
    except ValueError as exc:  # an integer of more digits than int() converts
        raise AnalysisError(f"not valid JSON: {str(exc).split(':')[0]}", name) from None


#: The most a compressed results file may expand to (a hostile .json.gz must not fill the memory).
MAX_DECOMPRESSED_BYTES = 1 << 30


def _decompressed(raw: bytes, name: str) -> bytes:
    """The bytes of a results file, gunzipped when they start with the gzip magic (``.json.gz``)."""
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
            data = f.read(MAX_DECOMPRESSED_BYTES + 1)
    except (OSError, EOFError, ValueError) as exc:
        raise AnalysisError(f"not a readable gzip file: {exc}", name) from None
    if len(data) > MAX_DECOMPRESSED_BYTES:
        raise AnalysisError(f"decompresses to more than {MAX_DECOMPRESSED_BYTES >> 20} MiB", name)
    return data


def load_document(path: str | Path) -> dict[str, Any]:
    """Reads and validates one results file (JSON, or gzip-compressed JSON); returns the parsed document."""
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise AnalysisError(f"cannot read file: {exc.strerror or exc}", name) from None
    raw = _decompressed(raw, name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnalysisError(f"not UTF-8 text (byte {exc.start})", name) from None
    doc = _parse(text, name)
    if not isinstance(doc, dict):
        raise AnalysisError(f"expected a JSON object at the top, got {type(doc).__name__}", name)
    check_values(doc, name)
    if "schema" not in doc:
        raise AnalysisError("required field is missing (not an mpsbench results file?)", name, "schema")
    if doc["schema"] != SCHEMA_NAME:
        raise AnalysisError(f"expected {SCHEMA_NAME!r}, got {short(doc['schema'])}", name, "schema")
    if "schema_version" not in doc:
        raise AnalysisError("required field is missing", name, "schema_version")
    version = doc["schema_version"]
    if not _is_integer(None, version) or version not in SUPPORTED_VERSIONS:  # 1.0 == 1
        raise AnalysisError(
            f"version {short(version)} is not supported (this tool reads versions "
            f"{', '.join(map(str, SUPPORTED_VERSIONS[:-1]))} and {SUPPORTED_VERSIONS[-1]})",
            name, "schema_version")
    error = best_match(_validator(version).iter_errors(doc), key=_preferred)
    if error is not None:
        where, message = _describe(error)
        raise AnalysisError(message, name, where)
    check_consistency(doc, name)
    if not doc["complete"]:
        print(f"mpsbench-analyze: warning: {name}: run is incomplete (complete=false); "
              f"using its {len(doc['results'])} finished results", file=sys.stderr)
    return doc
