"""BAUD-v1 and ERUR-v1 judged online: each calibrated assessment joined with its actuation live.

The offline verifier groups a bag's messages by cycle stamp and judges each cycle once it
is complete. Live, the messages of a cycle arrive one by one on different topics, so
``OnlineMonitor`` decides when a cycle is complete and then calls the very judges of
``ghost_core.properties`` (with the M and K resolved by the same ``ParameterTracker``):

* a cycle with a calibrated assessment is judged as soon as an actuation with its stamp
  has arrived (actuations normally follow their calibrated assessment by milliseconds);
* it is judged without an actuation (``actuation_missing``) once an actuation of a later
  cycle has arrived (one emitter publishes in cycle order) or ``timeout_ns`` after its
  calibrated assessment arrived with no actuation at all;
* a judged cycle stays open for ``timeout_ns`` more: a second actuation or calibrated
  assessment with its stamp (a second producer) is judged with everything the cycle holds,
  as the verifier would, and only the violations not reported yet are added. A violation
  once reported stays reported: an actuation later than the timeout does not take back
  its ``actuation_missing``.

Time is whatever monotonic clock the caller passes (``now_ns``); stamps are cycle stamps.
Nothing here does I/O: the ``monitor`` node feeds it from its subscriptions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ghost_core.properties import (
    ActuationView,
    CalibratedFacts,
    CycleProperty,
    ParameterTracker,
    PROPERTIES,
    Violation,
)

__all__ = ['OnlineMonitor', 'PropertyState']


@dataclass(frozen=True, slots=True)
class PropertyState:
    """Where one property stands after the cycles judged so far.

    `holds` is False from the first violation on (latched): a monitor never forgets one.
    """

    version: str
    cycles_total: int
    cycles_precondition_held: int
    violations: int
    first_violation: Violation | None
    last_violation: Violation | None
    counts_by_kind: tuple[tuple[str, int], ...]

    @property
    def holds(self) -> bool:
        """True while no cycle has failed a postcondition."""
        return self.violations == 0


@dataclass(slots=True)
class _Cycle:
    stamp_ns: int
    opened_ns: int
    calibrated: list[tuple[CalibratedFacts, int, int]] = field(default_factory=list)
    actuations: list[ActuationView] = field(default_factory=list)
    judged_ns: int | None = None
    held: set[str] = field(default_factory=set)
    reported: dict[str, list[Violation]] = field(default_factory=dict)


@dataclass(slots=True)
class _Tally:
    held: int = 0
    violations: int = 0
    first: Violation | None = None
    last: Violation | None = None
    by_kind: dict[str, int] = field(default_factory=dict)


class OnlineMonitor:
    """Judge the properties on a live stream of calibrated assessments and actuations.

    ``on_calibrated``, ``on_actuation`` and ``expire`` each return the violations found by
    that call, as (property version, violation) pairs, in the order found.
    """

    def __init__(self, timeout_ns: int,
                 properties: Sequence[CycleProperty] = PROPERTIES) -> None:
        if timeout_ns <= 0:
            raise ValueError(f'timeout_ns must be > 0, got {timeout_ns}')
        self._timeout_ns = timeout_ns
        self._properties = tuple(properties)
        # Each cycle is judged with the M and K it was calibrated with: a valid
        # `ros2 param set` mid-flight is not a violation.
        self.parameters = ParameterTracker(per_cycle=True)
        self._cycles: dict[int, _Cycle] = {}
        self._latest_actuation_ns: int | None = None
        self._cycles_total = 0
        self._tallies = {prop.version: _Tally() for prop in self._properties}

    def on_calibrated(self, calibrated: CalibratedFacts,
                      now_ns: int) -> list[tuple[str, Violation]]:
        """Take one calibrated assessment; judge its cycle if its actuation is already known."""
        found = self.expire(now_ns)
        min_outcomes, downgrade_threshold = self.parameters.resolve(calibrated)
        cycle = self._cycle(calibrated.stamp_ns, now_ns)
        cycle.calibrated.append((calibrated, min_outcomes, downgrade_threshold))
        later_actuation = (self._latest_actuation_ns is not None
                           and self._latest_actuation_ns > cycle.stamp_ns)
        if cycle.actuations or later_actuation or cycle.judged_ns is not None:
            found += self._judge(cycle, now_ns)
        return found

    def on_actuation(self, actuation: ActuationView,
                     now_ns: int) -> list[tuple[str, Violation]]:
        """Take one actuation; judge its cycle, and every earlier cycle still waiting."""
        found = self.expire(now_ns)
        stamp_ns = actuation.stamp_ns
        if self._latest_actuation_ns is None or stamp_ns > self._latest_actuation_ns:
            self._latest_actuation_ns = stamp_ns
        # The emitter has moved past these cycles: their actuation is not coming.
        for earlier in sorted(s for s, c in self._cycles.items()
                              if s < stamp_ns and c.calibrated and c.judged_ns is None):
            found += self._judge(self._cycles[earlier], now_ns)
        cycle = self._cycle(stamp_ns, now_ns)
        cycle.actuations.append(actuation)
        if cycle.calibrated:
            found += self._judge(cycle, now_ns)
        return found

    def expire(self, now_ns: int) -> list[tuple[str, Violation]]:
        """Judge the cycles whose actuation is overdue; forget the cycles no longer open."""
        found: list[tuple[str, Violation]] = []
        for stamp_ns in sorted(self._cycles):
            cycle = self._cycles[stamp_ns]
            if cycle.judged_ns is None and now_ns - cycle.opened_ns > self._timeout_ns:
                if cycle.calibrated:
                    found += self._judge(cycle, now_ns)
                else:
                    del self._cycles[stamp_ns]  # an actuation nothing calibrated: not judged
            elif cycle.judged_ns is not None and now_ns - cycle.judged_ns > self._timeout_ns:
                del self._cycles[stamp_ns]
        return found

    @property
    def pending(self) -> int:
        """Cycles with a calibrated assessment that wait for their actuation."""
        return sum(1 for c in self._cycles.values() if c.calibrated and c.judged_ns is None)

    def states(self) -> tuple[PropertyState, ...]:
        """The state of every property, in the order they were given."""
        return tuple(
            PropertyState(
                version=prop.version,
                cycles_total=self._cycles_total,
                cycles_precondition_held=tally.held,
                violations=tally.violations,
                first_violation=tally.first,
                last_violation=tally.last,
                counts_by_kind=tuple(sorted(tally.by_kind.items())),
            )
            for prop in self._properties
            for tally in (self._tallies[prop.version],)
        )

    def _cycle(self, stamp_ns: int, now_ns: int) -> _Cycle:
        cycle = self._cycles.get(stamp_ns)
        if cycle is None:
            cycle = self._cycles[stamp_ns] = _Cycle(stamp_ns, now_ns)
        return cycle

    def _judge(self, cycle: _Cycle, now_ns: int) -> list[tuple[str, Violation]]:
        """Judge everything the cycle holds; return (and count) what was not reported yet."""
        if cycle.judged_ns is None:
            self._cycles_total += 1
        cycle.judged_ns = now_ns
        found: list[tuple[str, Violation]] = []
        for prop in self._properties:
            tally = self._tallies[prop.version]
            verdicts = [prop.judge(calibrated, cycle.actuations, m, k)
                        for calibrated, m, k in cycle.calibrated]
            if prop.version not in cycle.held and any(v is not None for v in verdicts):
                cycle.held.add(prop.version)
                tally.held += 1
            reported = cycle.reported.setdefault(prop.version, [])
            unmatched = list(reported)
            for verdict in verdicts:
                for violation in verdict or ():
                    if violation in unmatched:
                        unmatched.remove(violation)
                        continue
                    reported.append(violation)
                    found.append((prop.version, violation))
                    tally.violations += 1
                    if tally.first is None:
                        tally.first = violation
                    tally.last = violation
                    kind = violation.kind.value
                    tally.by_kind[kind] = tally.by_kind.get(kind, 0) + 1
        return found
