"""Reading and validating one results file, with errors a person can act on.

The identity fields (schema, schema_version) are checked before the JSON
Schema so that a file of another format or version gets that message rather
than a list of missing fields; schema violations are reported as the single
best-matching error, named by its field path (``results[3].ranks[0].x``).
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from .errors import AnalysisError

SCHEMA_NAME = "mpsbench-results"
SCHEMA_VERSION = 1


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The results JSON Schema shipped with this package."""
    text = resources.files(__package__).joinpath("schema/mpsbench-results.schema.json").read_text("utf-8")
    return json.loads(text)


def _open_world(node: Any) -> Any:
    """The schema without ``additionalProperties: false``.

    Files from a newer writer may carry fields this copy of the schema does
    not know yet (optional fields are added without a version bump); they
    are ignored, while every field we read is still checked for presence,
    type and range.
    """
    if isinstance(node, dict):
        return {k: _open_world(v) for k, v in node.items() if not (k == "additionalProperties" and v is False)}
    if isinstance(node, list):
        return [_open_world(v) for v in node]
    return node


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(_open_world(schema()))


def _path_text(path: Iterable[Any]) -> str:
    """``results[3].ranks[0].iteration_time_s`` from a jsonschema path."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(error: ValidationError) -> tuple[str, str]:
    """(field, message) for a schema violation, phrased for a person."""
    where = _path_text(error.absolute_path)
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        name = missing[0] if missing else "?"
        return (f"{where}.{name}" if where else name), "required field is missing"
    if error.validator == "const":
        return where or "(document)", f"expected {_short(error.validator_value)}, got {_short(error.instance)}"
    if error.validator == "type":
        return where or "(document)", f"expected {error.validator_value}, got {_short(error.instance)}"
    if error.validator == "enum":
        allowed = ", ".join(_short(v) for v in error.validator_value)
        return where or "(document)", f"{_short(error.instance)} is not one of {allowed}"
    message = error.message
    if len(message) > 160:
        message = message[:157] + "..."
    return where or "(document)", message


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


def load_document(path: str | Path) -> dict[str, Any]:
    """Reads and validates one results file; returns the parsed document.

    The identity fields are checked before the full schema so that a file of
    another format or schema version gets that message, not a list of
    missing fields.
    """
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise AnalysisError(f"cannot read file: {exc.strerror or exc}", name) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnalysisError(f"not UTF-8 text (byte {exc.start})", name) from None
    doc = _parse(text, name)
    if not isinstance(doc, dict):
        raise AnalysisError(f"expected a JSON object at the top, got {type(doc).__name__}", name)
    if "schema" not in doc:
        raise AnalysisError("required field is missing (not an mpsbench results file?)", name, "schema")
    if doc["schema"] != SCHEMA_NAME:
        raise AnalysisError(f"expected {SCHEMA_NAME!r}, got {_short(doc['schema'])}", name, "schema")
    if "schema_version" not in doc:
        raise AnalysisError("required field is missing", name, "schema_version")
    if doc["schema_version"] != SCHEMA_VERSION:
        raise AnalysisError(
            f"version {_short(doc['schema_version'])} is not supported (this tool reads version {SCHEMA_VERSION})",
            name, "schema_version")
    error = best_match(_validator().iter_errors(doc))
    if error is not None:
        where, message = _describe(error)
        raise AnalysisError(message, name, where)
    if not doc["complete"]:
        print(f"mpsbench-analyze: warning: {name}: run is incomplete (complete=false); "
              f"using its {len(doc['results'])} finished results", file=sys.stderr)
    return doc
