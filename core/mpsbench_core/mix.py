"""The verdict on a mix of tenants (mpsbench --mix): what each sharing mode does to each tenant, per tenant.

A mix's aggregate throughput says nothing a user can act on: plain MPS may add throughput while it starves a
latency-bound tenant.  So a mix is judged per tenant, in each mode measured, against the same tenant alone in
that mode (the record's ``tenants[]``, schema definitions.tenant):

* slowdown = ``alone_throughput / throughput.median`` (the record's ``slowdown``); above 1: slower sharing;
* p99 ratio = the tenant's p99 request latency in the mix / alone (``latency_p99_ratio``), for tenants that
  serve requests (the latency tenants);
* a tenant's cost in a mode is the larger of the two; a mode *keeps every tenant within B* when every
  tenant's cost is at most ``limit`` (PROTECTED, 1.5x), B being the largest cost rounded up to a tenth;
* the mode that protects the latency tenants (every tenant when none serves requests) is the one with the
  smallest cost for them, ties to the smaller cost of any tenant, then to the registry's order; it protects
  them when that cost is within ``limit``.  What it costs the others is said too: a tenant's throughput
  there against its best in the mix under any mode, where below 0.9x.

Measured in rounds (mpsbench-sweep --rounds), each tenant's figures are the geometric means of its rounds'
(each round's slowdown against itself alone in that round), and its cost has a 95 % interval (intervals.py,
the mix's costs pooled): a mode keeps a tenant within a bound, or slows it, only where the interval says so;
where the interval holds the limit the sentence says the rounds cannot tell.

Records that failed or did not verify are left out and counted.  One line per mix (the mix's tenants as its
record names them, and its parameters), e.g.

    verdict: mix matmul/fp32/4096:4,inference/fp16/8:4: time slicing slows inference 12.2x (p99 28.1x alone);
    plain MPS slows inference 198x (p99 275x alone); mps-qos 12% keeps every tenant within 1.2x (matmul 1.06x;
    inference 1.12x, p99 1.13x): it protects inference, at 0.34x matmul's throughput under plain MPS
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from . import modes
from .intervals import Interval, Pool, ratio_interval
from .records import Result, number
from .rounds import configs

#: The largest slowdown and p99 ratio at which a tenant counts as protected.
PROTECTED = 1.5
#: A tenant's throughput under the protecting mode below this share of its best is a price worth saying.
PRICE = 0.9

_PHRASES = {"timeslice": "time slicing", "mps": "plain MPS", "green": "green contexts"}


def mode_phrase(label: str) -> str:
    """How a sentence names a mode label: 'time slicing', 'plain MPS', 'mps-qos 12%', 'mps-mem 2G'."""
    base, value = modes.split_label(label)
    return _PHRASES.get(base, base) + (f" {value}" if value else "")


def times(value: float) -> str:
    """A slowdown or ratio to three significant digits: '198x', '12.2x', '1.12x'."""
    return f"{value:.0f}x" if value >= 99.95 else f"{value:.1f}x" if value >= 9.995 else f"{value:.2f}x"


def _ratio(given: Any, numerator: Any, denominator: Any) -> float | None:
    """The file's ratio where it is a positive number, else numerator / denominator where both are."""
    value = number(given)
    if value is not None and value > 0:
        return value
    a, b = number(numerator), number(denominator)
    return a / b if a is not None and b is not None and a > 0 and b > 0 else None


@dataclass(frozen=True)
class Tenant:
    """One tenant in one mode: its slowdown and p99 ratio against itself alone in that mode."""

    name: str                  # as sentences name it: its kernel, longer where two tenants share one
    label: str                 # kernel/precision/size:ranks
    slowdown: float | None
    p99_ratio: float | None
    throughput: float | None   # its median in the mix, in its own unit
    latency: bool              # it serves requests (its p99 was measured)
    interval: Interval | None = None  # of its cost over the rounds (mix_verdict); None: the cost alone

    @property
    def cost(self) -> float | None:
        known = [v for v in (self.slowdown, self.p99_ratio) if v is not None]
        return max(known) if known else None

    def side(self, limit: float) -> str:
        """"within" when its cost is known to be at most ``limit``, "beyond" when known to exceed it, else
        "unknown" (its interval holds the limit)."""
        if self.interval is None:
            return "within" if self.cost <= limit else "beyond"
        return "within" if self.interval.high <= limit else "beyond" if self.interval.low > limit else "unknown"

    def figures(self) -> str:
        """'inference 1.12x, p99 1.13x' (a tenant without a slowdown: its p99 ratio alone)."""
        parts = [times(self.slowdown)] if self.slowdown is not None else []
        parts += [f"p99 {times(self.p99_ratio)}"] if self.p99_ratio is not None else []
        return f"{self.name} {', '.join(parts)}"

    def harm(self) -> str:
        """'inference 198x (p99 275x alone)'."""
        head = f"{self.name} {times(self.slowdown)}" if self.slowdown is not None else self.name
        return head + (f" (p99 {times(self.p99_ratio)} alone)" if self.p99_ratio is not None else "")


def _tenant_names(tenants: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each tenant's kernel, made longer (precision, size, ranks) only where two would read the same."""
    ways = [lambda t: f"{t.get('kernel')}", lambda t: f"{t.get('kernel')} {t.get('precision')}",
            lambda t: f"{t.get('kernel')}/{t.get('precision')}/{t.get('size')}", _label]
    for way in ways:
        names = [way(t) for t in tenants]
        if len(set(names)) == len(names):
            return names
    return [f"{_label(t)} #{i + 1}" for i, t in enumerate(tenants)]


def _label(t: Mapping[str, Any]) -> str:
    return f"{t.get('kernel')}/{t.get('precision')}/{t.get('size')}:{t.get('ranks_per_gpu')}"


def tenants_of(r: Result) -> tuple[Tenant, ...]:
    """The tenants of a mix record as this module reads them (any JSON value: none where malformed)."""
    raw = r.raw.get("tenants") if isinstance(r.raw, Mapping) else None
    found = [t for t in raw if isinstance(t, Mapping)] if isinstance(raw, list) else []
    out = []
    for t, name in zip(found, _tenant_names(found)):
        throughput = t.get("throughput") if isinstance(t.get("throughput"), Mapping) else {}
        latency = t.get("latency") if isinstance(t.get("latency"), Mapping) else {}
        overall = latency.get("overall") if isinstance(latency.get("overall"), Mapping) else {}
        median = number(throughput.get("median"))
        p99 = _ratio(t.get("latency_p99_ratio"), overall.get("p99"), t.get("alone_latency_p99_s"))
        out.append(Tenant(name, _label(t), _ratio(t.get("slowdown"), t.get("alone_throughput"), median), p99,
                          median, number(overall.get("p99")) is not None))
    return tuple(out)


@dataclass(frozen=True)
class MixMode:
    """One mode's figures for the tenants of a mix."""

    label: str
    tenants: tuple[Tenant, ...]

    @property
    def phrase(self) -> str:
        return mode_phrase(self.label)

    def cost(self, names: Sequence[str] | None = None) -> float | None:
        """The largest cost among the tenants named (all by default); None when none has a figure."""
        known = [t.cost for t in self.tenants if t.cost is not None and (names is None or t.name in names)]
        return max(known) if known else None

    def tenant(self, name: str) -> Tenant | None:
        return next((t for t in self.tenants if t.name == name), None)


@dataclass(frozen=True)
class MixVerdict:
    """What each mode measured does to each tenant of one mix, and which mode protects the latency tenants."""

    spec: str                   # the mix as its record names it: matmul/fp32/4096:4,inference/fp16/8:4
    params: str
    modes: tuple[MixMode, ...]  # the measured modes, in the registry's order
    left_out: int               # failed or unverified mix records
    limit: float = PROTECTED
    points: tuple = ()          # no series of gains: a mix has no size or copies-per-GPU axis

    @property
    def subject(self) -> str:
        return f"mix {self.spec}" + (f" ({self.params})" if self.params else "")

    @property
    def focus(self) -> tuple[str, ...]:
        """The tenants a protecting mode is for: those serving requests, else every tenant."""
        names = dict.fromkeys(t.name for m in self.modes for t in m.tenants if t.latency)
        return tuple(names) or tuple(dict.fromkeys(t.name for m in self.modes for t in m.tenants))

    @property
    def protector(self) -> MixMode | None:
        """The mode with the smallest cost for the focus tenants (module doc); None without figures."""
        ranked = [(m.cost(self.focus), m.cost(), i, m) for i, m in enumerate(self.modes) if m.cost(self.focus)]
        return min(ranked, key=lambda x: x[:3])[3] if ranked else None

    @property
    def starved(self) -> tuple[Tenant, MixMode] | None:
        """The tenant with the largest slowdown in any mode, and that mode."""
        found = [(t.slowdown, -i, t, m) for i, m in enumerate(self.modes) for t in m.tenants if t.slowdown is not None]
        if not found:
            return None
        _, _, tenant, mode = max(found, key=lambda x: x[:2])
        return tenant, mode

    def _sides(self, m: MixMode, names: Sequence[str] | None = None) -> set[str]:
        return {t.side(self.limit) for t in m.tenants if t.cost is not None and (names is None or t.name in names)}

    def _clause(self, m: MixMode) -> str:
        worst = m.cost()
        if worst is None:
            return f"{m.phrase}: no tenant figure (the tenants alone were not measured)"
        sides = self._sides(m)
        if sides == {"within"}:
            bound = math.ceil(max(t.interval.high if t.interval else t.cost for t in m.tenants
                                  if t.cost is not None) * 10 - 1e-9) / 10
            return f"{m.phrase} keeps every tenant within {bound:.1f}x ({'; '.join(t.figures() for t in m.tenants)})"
        over = sorted((t for t in m.tenants if t.cost is not None and t.side(self.limit) == "beyond"),
                      key=lambda t: -t.cost)
        unsure = [t for t in m.tenants if t.cost is not None and t.side(self.limit) == "unknown"]
        parts = [f"{m.phrase} slows " + " and ".join(t.harm() for t in over)] if over else []
        if unsure:
            parts.append(("cannot tell" if over else f"{m.phrase}: cannot tell") + " whether it keeps "
                         + " and ".join(f"{t.name} within {self.limit:g}x ({t.interval.text})" for t in unsure))
        return ", ".join(parts)

    def _price(self, p: MixMode) -> str:
        """', at 0.34x matmul's throughput under plain MPS' for each tenant P costs much of its best."""
        parts = []
        for t in p.tenants:
            best = max(((o.tenant(t.name).throughput, o) for o in self.modes
                        if o.tenant(t.name) and o.tenant(t.name).throughput), key=lambda x: x[0], default=None)
            if best and t.throughput and best[1] is not p and t.throughput < PRICE * best[0]:
                parts.append(f"{t.throughput / best[0]:.2f}x {t.name}'s throughput under {best[1].phrase}")
        return (", at " + " and ".join(parts)) if parts else ""

    @property
    def sentence(self) -> str:
        left = f"; {self.left_out} mode(s) failed or unverified, left out" if self.left_out else ""
        if not self.modes:
            return "no mix verdict: no mode measured the tenants" + left
        clauses = [self._clause(m) for m in self.modes]
        p = self.protector
        focus = " and ".join(self.focus) if any(t.latency for m in self.modes for t in m.tenants) else "every tenant"
        if p is not None and len(self.modes) > 1:
            i = self.modes.index(p)
            if self._sides(p, self.focus) == {"within"}:
                clauses[i] += f": it protects {focus}" + self._price(p)
            elif "beyond" not in self._sides(p, self.focus):
                clauses[i] += f": the least harm to {focus}, within {self.limit:g}x or not the rounds cannot tell"
            else:
                clauses.append(f"no mode measured keeps {focus} within {self.limit:g}x (the least harm: {p.phrase}, "
                               f"{times(p.cost(self.focus))})")
        return "; ".join(clauses) + left

    @property
    def line(self) -> str:
        return f"verdict: {self.subject}: {self.sentence}"


def _tenants_over_rounds(per_round: list[tuple[Tenant, ...]], pool: Pool | None) -> tuple[Tenant, ...]:
    """One mode's tenants over its rounds: each figure the geometric mean of the rounds', the cost with its
    interval (intervals.py, the mix's (mode, tenant) costs pooled); one round: the round's own figures."""
    if len(per_round) == 1:
        return per_round[0]
    out = []
    for i, first in enumerate(per_round[0]):
        same = [r[i] for r in per_round if i < len(r) and r[i].label == first.label]
        out.append(replace(first, slowdown=_geomean([t.slowdown for t in same]),
                           p99_ratio=_geomean([t.p99_ratio for t in same]),
                           throughput=_geomean([t.throughput for t in same]),
                           interval=_cost_interval(same, pool)))
    return tuple(out)


def _geomean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None and v > 0]
    return math.exp(math.fsum(map(math.log, known)) / len(known)) if known else None


def _log_costs(same: Sequence[Tenant]) -> list[float]:
    return [math.log(t.cost) for t in same if t.cost is not None and t.cost > 0]


def _cost_interval(same: Sequence[Tenant], pool: Pool | None) -> Interval | None:
    d = _log_costs(same)
    return ratio_interval(d, pool, 0.0) if d else None


def mix_verdict(mine: list[Result], limit: float = PROTECTED) -> MixVerdict:
    """The verdict on the records of one mix (every mode measured, every round), as the module doc defines it."""
    usable = [r for r in mine if r.verified]
    by_mode: dict[str, list[tuple[Tenant, ...]]] = {}
    for c in configs(usable):
        by_mode[c.first.mode_label] = [tenants_of(r) for r in c.records]
    series = [[t for t in (r[i] for r in rounds if i < len(r))] for rounds in by_mode.values() if rounds
              for i in range(len(rounds[0]))]
    pool = Pool.of(_log_costs(s) for s in series)
    measured = tuple(MixMode(label, _tenants_over_rounds(by_mode[label], pool))
                     for label in sorted(by_mode, key=modes.sort_key) if by_mode[label] and by_mode[label][0])
    return MixVerdict(mine[0].precision, mine[0].params, measured, len(mine) - len(usable), limit)
