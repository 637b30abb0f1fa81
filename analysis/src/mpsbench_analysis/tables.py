"""One table description, five renderings (terminal, CSV, JSON, Markdown, HTML).

Each analysis builds a DataFrame of raw numbers and a list of Columns that
say how a person should see them.  CSV and JSON keep the raw numbers and
field-like names (for spreadsheets and scripts; JSON writes a missing value
as null); the other formats show the formatted text, so that the terminal,
a CI page and the HTML report agree.
"""

from __future__ import annotations

import html
import io
import json
import math
from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd

from mpsbench_core.units import format_count, format_si

FORMATS = ("table", "csv", "markdown", "json")


def own_unit(kind: str, unit: str) -> bool:
    """Whether a figure is in a program's own unit (an application's other than run/s): shown without SI
    prefixes, which read badly on 'ns/day' or 'steps/s'."""
    return kind == "app" and unit != "run/s"


def format_figure(value: Any, unit: str, kind: str = "kernel") -> str:
    """A throughput for people: '48.2 TFLOP/s' (SI), '5,882 ns/day' (a program's own unit); '-' when missing."""
    return format_count(value, unit) if own_unit(kind, unit) else format_si(value, unit)


def _plain(value: Any, row: pd.Series) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@dataclass
class Column:
    """key: DataFrame column; header: what people read; fmt: value, row -> text."""

    key: str
    header: str
    fmt: Callable[[Any, pd.Series], str] = _plain
    left: bool = False


def _cells(df: pd.DataFrame, columns: list[Column]) -> list[list[str]]:
    return [[c.fmt(row[c.key], row) for c in columns] for _, row in df.iterrows()]


def render_text(df: pd.DataFrame, columns: list[Column], group_by: list[str] | None = None) -> str:
    """Aligned columns; a blank line between groups of ``group_by`` values."""
    cells = _cells(df, columns)
    headers = [c.header for c in columns]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        return "  ".join(v.ljust(w) if c.left else v.rjust(w)
                         for v, w, c in zip(values, widths, columns)).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    previous = None
    for (_, row), values in zip(df.iterrows(), cells):
        group = tuple(row[g] for g in group_by) if group_by else None
        if previous is not None and group != previous:
            out.append("")
        previous = group
        out.append(line(values))
    return "\n".join(out) + "\n"


def render_markdown(df: pd.DataFrame, columns: list[Column]) -> str:
    """GitHub-flavoured pipe table."""
    def esc(text: str) -> str:
        return text.replace("|", "\\|")

    out = ["| " + " | ".join(esc(c.header) for c in columns) + " |",
           "|" + "|".join(":---" if c.left else "---:" for c in columns) + "|"]
    out += ["| " + " | ".join(esc(v) for v in row) + " |" for row in _cells(df, columns)]
    return "\n".join(out) + "\n"


def render_csv(df: pd.DataFrame, columns: list[Column]) -> str:
    """Raw values under their column keys (a unit column says what numbers mean)."""
    buffer = io.StringIO()
    df[[c.key for c in columns]].to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue()


def json_value(value: Any) -> Any:
    """A DataFrame cell as plain JSON: NaN and NA -> None, numpy scalars -> Python, tuples -> lists."""
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, bool)):
        return value
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_records(df: pd.DataFrame, keys: list[str]) -> list[dict[str, Any]]:
    """One object per row with ``keys``, values as :func:`json_value` makes them."""
    return [{k: json_value(row[k]) for k in keys} for _, row in df.iterrows()]


def render_json(df: pd.DataFrame, columns: list[Column]) -> str:
    """A JSON array of one object per row, raw values under the column keys."""
    return json.dumps(json_records(df, [c.key for c in columns]), indent=1) + "\n"


def render_html(df: pd.DataFrame, columns: list[Column]) -> str:
    """A plain <table> for the report (styled by the report's CSS)."""
    head = "".join(f"<th>{html.escape(c.header)}</th>" for c in columns)
    body = []
    for values in _cells(df, columns):
        tds = "".join(f'<td class="{"l" if c.left else "r"}">{html.escape(v)}</td>'
                      for v, c in zip(values, columns))
        body.append(f"<tr>{tds}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render(df: pd.DataFrame, columns: list[Column], fmt: str, group_by: list[str] | None = None) -> str:
    """Dispatches on ``fmt`` (one of FORMATS)."""
    if fmt == "csv":
        return render_csv(df, columns)
    if fmt == "json":
        return render_json(df, columns)
    if fmt == "markdown":
        return render_markdown(df, columns)
    if fmt == "table":
        return render_text(df, columns, group_by)
    raise ValueError(f"unknown format {fmt!r}")
