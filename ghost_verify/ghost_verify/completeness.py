"""Cycle completeness: every cycle the bag shows a trace of carries its whole hash chain."""

from __future__ import annotations

from dataclasses import dataclass, field

from .common import JsonValue
from .events import CycleEvent, GhostTopicKind

__all__ = [
    'REQUIRED_KINDS',
    'CompletenessChecker',
    'CompletenessReport',
    'IncompleteCycle',
]

#: The messages every cycle must have once any ghost message carries its stamp: the four
#: links of the SHA-256 chain (SPEC section 4). Predictions and outcomes are not required
#: (a cycle's prediction or outcome may legitimately be absent, e.g. at the end of a run);
#: a missing outcome shows up in the history check instead.
REQUIRED_KINDS: tuple[GhostTopicKind, ...] = (
    GhostTopicKind.RAW_ASSESSMENT,
    GhostTopicKind.CALIBRATED,
    GhostTopicKind.RATIONALE,
    GhostTopicKind.ACTUATION,
)


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
    `incomplete_cycles`; none is tolerated, not even the last cycle of a bag.
    """

    cycles_seen: int
    incomplete_cycles: tuple[IncompleteCycle, ...]

    @property
    def holds(self) -> bool:
        """True when every cycle seen is complete."""
        return not self.incomplete_cycles

    def to_json(self) -> list[JsonValue]:
        """Return the incomplete cycles as a JSON list (the combined report's field)."""
        return [cycle.to_json() for cycle in self.incomplete_cycles]

    def summary(self) -> str:
        """Return the one-line human verdict, e.g. ``cycles: 10/10 complete``."""
        complete = self.cycles_seen - len(self.incomplete_cycles)
        if self.holds:
            return f'cycles: {complete}/{self.cycles_seen} complete'
        first = self.incomplete_cycles[0]
        missing = ', '.join(kind.value for kind in first.missing)
        count = len(self.incomplete_cycles)
        return (f'cycles: VIOLATED ({complete}/{self.cycles_seen} complete; {count} incomplete, '
                f'the first at {first.cycle_stamp_ns} ns lacks {missing})')


@dataclass(slots=True)
class CompletenessChecker:
    """Completeness over a cycle stream: ``update(cycle)`` per cycle, then ``result()``."""

    _seen: int = 0
    _incomplete: list[IncompleteCycle] = field(default_factory=list)

    def update(self, cycle: CycleEvent) -> None:
        """Check one cycle (every cycle the reader yields has at least one ghost message)."""
        counts = {
            GhostTopicKind.RAW_ASSESSMENT: len(cycle.raw_assessments),
            GhostTopicKind.PREDICTION: len(cycle.predictions),
            GhostTopicKind.OUTCOME: len(cycle.outcomes),
            GhostTopicKind.CALIBRATED: len(cycle.calibrated),
            GhostTopicKind.RATIONALE: len(cycle.rationales),
            GhostTopicKind.ACTUATION: len(cycle.actuations),
        }
        present = tuple(kind for kind in GhostTopicKind if counts[kind])
        if not present:
            return
        self._seen += 1
        missing = tuple(kind for kind in REQUIRED_KINDS if not counts[kind])
        if missing:
            self._incomplete.append(IncompleteCycle(cycle.stamp_ns, present, missing))

    def result(self) -> CompletenessReport:
        """Return the frozen report for everything seen so far."""
        return CompletenessReport(self._seen, tuple(self._incomplete))
