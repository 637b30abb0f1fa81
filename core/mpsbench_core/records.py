"""Typed views of the results records that the verdicts and tables read, for every schema version.

A results file (schema/mpsbench-results.schema.json) holds one record per configuration. Since schema
version 3 each record says its kind:
  * ``kernel``: a built-in kernel at a precision and size (mpsbench);
  * ``mix``: several kernels sharing each GPU (mpsbench --mix), its tenants in ``tenants``;
  * ``app``: a farmed application (mpsbench-sweep --app): no kernel, precision or size; what is
    particular to it is in ``app`` (its ``name`` identifies it), its copies in ``copies``.
Files of versions 1 and 2 have no ``kind``: a record of kernel ``app`` is an application (its name in
``precision``), one of kernel ``mix`` a mix, any other a kernel. :func:`kind_of` and
:meth:`Result.from_json` read all three versions, so nothing downstream special-cases a kernel name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from . import modes

KINDS = ("kernel", "mix", "app")
#: The kernel name that marked an application in files before version 3.
LEGACY_APP_KERNEL = "app"
#: The kernel name of a mix record.
MIX_KERNEL = "mix"


def kind_of(r: Mapping[str, Any]) -> str:
    """The record's kind, also for records of versions 1 and 2 (which have none)."""
    kind = r.get("kind")
    if kind in KINDS:
        return str(kind)
    kernel = r.get("kernel")
    return "app" if kernel == LEGACY_APP_KERNEL else "mix" if kernel == MIX_KERNEL else "kernel"


def params_text(params: Mapping[str, Any] | None) -> str:
    """A kernel's parameters as one compact string, names sorted: ``hidden=2048,layers=4``; "" for none."""
    if not params:
        return ""
    return ",".join(f"{name}={params[name]}" for name in sorted(params))


def app_name(r: Mapping[str, Any]) -> str:
    """An application record's name (``app.name``; ``precision`` before version 3)."""
    app = r.get("app")
    if isinstance(app, Mapping) and isinstance(app.get("name"), str):
        return app["name"]
    return str(r.get("precision", ""))


def app_params(r: Mapping[str, Any]) -> str:
    """An application record's parameters: how its copies were pinned to CPUs (``app.bind``, mpsbench-sweep
    --app-bind) where they were, ``bind=core``; "" for unpinned copies and files before it."""
    app = r.get("app")
    bind = app.get("bind") if isinstance(app, Mapping) else None
    return params_text({"bind": bind}) if isinstance(bind, str) and bind not in ("", "none") else ""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _checks_passed(r: Mapping[str, Any]) -> bool:
    """Whether an application record lists no failed --app-check: none in ``app.failed_checks``, none in its
    copies' checks (``copies[].check.ok``; ``ranks[].verification.ok`` before version 3).  Its ``verified``
    says the same in a consistent record; a record that claims ``verified`` with a failed check listed
    must not be the one a verdict picks."""
    app = r.get("app")
    if isinstance(app, Mapping) and app.get("failed_checks"):
        return False
    for copy in r.get("copies") or []:
        check = copy.get("check") if isinstance(copy, Mapping) else None
        if isinstance(check, Mapping) and check.get("ok") is False:
            return False
    for rank in r.get("ranks") or []:
        verification = rank.get("verification") if isinstance(rank, Mapping) else None
        if isinstance(verification, Mapping) and verification.get("ok") is False:
            return False
    return True


@dataclass(frozen=True)
class Result:
    """One configuration of any kind, as the verdicts, tables and gates read it."""

    kind: str                  # "kernel", "mix" or "app"
    name: str                  # the kernel; the application's name; "mix"
    precision: str             # the kernel's precision; a mix: its tenants as written; "" for an application
    size: int | None           # None for an application; 0 for a mix
    params: str                # params_text of the kernel's parameters; an application's binding (app_params)
    mode: str                  # result.mode
    mode_label: str            # modes.label: mps-qos and mps-mem carry their setting
    ranks_per_gpu: int         # ranks per GPU; copies per GPU for an application; a mix: its tenants' sum
    status: str                # "ok" or "failed"
    verified: bool             # the record says verified and it was measured
    median: float | None       # the primary metric's median; None when nothing was measured
    samples: tuple[float, ...]  # the primary metric per repetition
    unit: str                  # the primary metric's unit
    error: str | None
    raw: Mapping[str, Any] = field(compare=False, repr=False)

    @classmethod
    def from_json(cls, r: Mapping[str, Any]) -> "Result":
        kind = kind_of(r)
        ok = r.get("status") == "ok"
        aggregate = r.get("aggregate") if isinstance(r.get("aggregate"), Mapping) else {}
        primary = aggregate.get(r.get("primary_metric")) if ok else None
        median = _number(primary.get("median")) if isinstance(primary, Mapping) else None
        samples = tuple(float(v) for v in primary.get("samples", ())) if isinstance(primary, Mapping) else ()
        size = r.get("size")
        return cls(
            kind=kind,
            name=app_name(r) if kind == "app" else str(r.get("kernel", "")),
            precision="" if kind == "app" else str(r.get("precision", "")),
            size=None if kind == "app" or not isinstance(size, int) else size,
            params=app_params(r) if kind == "app" else params_text(r.get("params")),
            mode=str(r.get("mode")), mode_label=modes.label(r),
            ranks_per_gpu=int(r.get("ranks_per_gpu", 0)),
            status=str(r.get("status")),
            verified=bool(r.get("verified")) and ok and (kind != "app" or _checks_passed(r)),
            median=median if ok else None, samples=samples if ok else (),
            unit=str(r.get("primary_unit") or ""), error=r.get("error"), raw=r)

    @property
    def usable(self) -> bool:
        """Measured, verified and with a positive figure: what a verdict may use."""
        return self.verified and self.median is not None and self.median > 0

    @property
    def subject(self) -> tuple[str, str, str, str]:
        """What one verdict is about: (kind, name, precision, params)."""
        return self.kind, self.name, self.precision, self.params


def results_of(docs: list[Mapping[str, Any]]) -> list[Result]:
    """Every record of the documents, in file and record order."""
    return [Result.from_json(r) for doc in docs for r in doc.get("results", [])]
