"""Cycle completeness: every cycle the bag shows a trace of carries its whole hash chain.

The cycles check also reports what the reader found wrong with the order of a cycle's
messages by the recorder's log times (``CycleEvent.order_violations``, cycles.py): causal
order, replayed copies, actuations out of order, floods. One line, ``cycles:``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ghost_core.properties import JsonValue

from .events import CycleEvent, GhostTopicKind
from .log_order import OrderViolation, OrderViolationKind
from .unverifiable import (
    CycleCuts,
    missing_kinds,
    REQUIRED_KINDS,
    UnverifiableCycle,
)

__all__ = [
    'ORDER_LISTED_LIMIT',
    'REQUIRED_KINDS',
    'CompletenessChecker',
    'CompletenessReport',
    'IncompleteCycle',
]

# REQUIRED_KINDS (the four links of the chain) lives in unverifiable.py, which shares it.

#: At most this many order violations (the first found) are listed; all are counted.
ORDER_LISTED_LIMIT = 64


@dataclass(frozen=True, slots=True)
class IncompleteCycle:
    """A cycle stamp that has some ghost message but lacks one the chain requires."""

    cycle_stamp_ns: int
    present: tuple[GhostTopicKind, ...]
    missing: tuple[GhostTopicKind, ...]

    def to_json(self) -> dict[str, JsonValue]:
        """Return the cycle as a JSON object."""
        return {
            'cycle_stamp_ns': self.cycle_stamp_ns,
            'present': [kind.value for kind in self.present],
            'missing': [kind.value for kind in self.missing],
        }


@dataclass(frozen=True, slots=True)
class CompletenessReport:
    """Which cycle stamps lack a raw assessment, calibrated assessment, rationale or actuation.

    `cycles_seen` counts every stamp that carries at least one ghost message. A cycle cut
    short by a restarted node, a dropped message or a deleted one is listed in
    `incomplete_cycles`. Unless strict, the incomplete cycles at the bag's start or end (cut
    by the recording, see unverifiable.py) are listed in `unverifiable` instead; strict, none
    is tolerated, not even the last cycle of a bag.
    """

    cycles_seen: int
    incomplete_cycles: tuple[IncompleteCycle, ...]
    unverifiable: tuple[UnverifiableCycle, ...] = ()
    #: Per kind, how many order violations the reader found (cycles.py).
    order_counts: tuple[tuple[OrderViolationKind, int], ...] = ()
    #: The first ORDER_LISTED_LIMIT of them, as found.
    order_violations: tuple[OrderViolation, ...] = ()

    @property
    def holds(self) -> bool:
        """True when every cycle seen is complete and its messages logged in order."""
        return not self.incomplete_cycles and not self.order_counts

    def to_json(self) -> list[JsonValue]:
        """Return the incomplete cycles as a JSON list (the combined report's field)."""
        return [cycle.to_json() for cycle in self.incomplete_cycles]

    def order_to_json(self) -> dict[str, JsonValue]:
        """Return the order violations as a JSON object (the combined report's field)."""
        return {'violation_counts': {kind.value: count for kind, count in self.order_counts},
                'violations': [violation.to_json() for violation in self.order_violations],
                'violations_listed_limit': ORDER_LISTED_LIMIT}

    def summary(self) -> str:
        """Return the one-line human verdict, e.g. ``cycles: 10/10 complete``."""
        complete = self.cycles_seen - len(self.incomplete_cycles) - len(self.unverifiable)
        if self.holds:
            cut = f', {len(self.unverifiable)} unverifiable' if self.unverifiable else ''
            return f'cycles: {complete}/{self.cycles_seen} complete{cut}'
        found = []
        if self.incomplete_cycles:
            first = self.incomplete_cycles[0]
            missing = ', '.join(kind.value for kind in first.missing)
            found.append(f'{len(self.incomplete_cycles)} incomplete, the first at '
                         f'{first.cycle_stamp_ns} ns lacks {missing}')
        if self.order_counts:
            first_order = self.order_violations[0]
            counts = ', '.join(f'{count} {kind.value}' for kind, count in self.order_counts)
            found.append(f'{counts}, the first at {first_order.cycle_stamp_ns} ns: '
                         f'{first_order.detail}')
        return f'cycles: VIOLATED ({complete}/{self.cycles_seen} complete; {"; ".join(found)})'



@dataclass(slots=True)
class CompletenessChecker:
    """Completeness over a cycle stream: ``update(cycle)`` per cycle, then ``result()``.

    Unless `strict`, :meth:`result` ends the stream (the cycles still waiting are cut).
    """

    strict: bool = False
    _seen: int = 0
    _incomplete: list[IncompleteCycle] = field(default_factory=list)
    _cuts: CycleCuts = field(default_factory=CycleCuts)
    _order_counts: dict[OrderViolationKind, int] = field(default_factory=dict)
    _order_listed: list[OrderViolation] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._cuts = CycleCuts(strict=self.strict)

    def update(self, cycle: CycleEvent) -> None:
        """Check one cycle (every cycle the reader yields has at least one ghost message)."""
        for violation in cycle.order_violations:
            self._order_counts[violation.kind] = self._order_counts.get(violation.kind, 0) + 1
            if len(self._order_listed) < ORDER_LISTED_LIMIT:
                self._order_listed.append(violation)
        for ready in self._cuts.feed(cycle):
            self._check(ready)

    def _check(self, cycle: CycleEvent) -> None:
        counts = {
            GhostTopicKind.RAW_ASSESSMENT: len(cycle.raw_assessments),
            GhostTopicKind.PREDICTION: len(cycle.predictions),
            GhostTopicKind.OUTCOME: len(cycle.outcomes),
            GhostTopicKind.CALIBRATED: len(cycle.calibrated),
            GhostTopicKind.RATIONALE: len(cycle.rationales),
            GhostTopicKind.ACTUATION: len(cycle.actuations),
        }
        # In GhostTopicKind order; gate records are not part of a cycle (never counted here).
        present = tuple(kind for kind in GhostTopicKind if counts.get(kind))
        if not present:
            return
        self._seen += 1
        missing = missing_kinds(cycle)
        if missing:
            self._incomplete.append(IncompleteCycle(cycle.stamp_ns, present, missing))

    def result(self) -> CompletenessReport:
        """Return the frozen report for everything seen so far."""
        for ready in self._cuts.finish():
            self._check(ready)
        cut = self._cuts.unverifiable
        return CompletenessReport(
            self._seen + len(cut), tuple(self._incomplete), cut,
            tuple(sorted(self._order_counts.items(), key=lambda item: item[0].value)),
            tuple(self._order_listed))
