"""Start-up and shutdown: the cycles a run's recorded readiness and stop leave unverifiable.

The rule is ``ghost_core.lifecycle``'s (docs/properties.md, "Start-up and shutdown"). This
module reads what it needs from the bag (each node's first configuration record, the
ghost/lifecycle records: their log times only) and stands between the bag's cycles and the
checks (:class:`EdgeFilter`): a cycle whose first message the recorder logged before the run
was ready, or less than ``STOP_LEAD_NS`` after it for an incomplete one (``before_ready``),
or logged at or after its stop, or that is incomplete and whose
last message was logged less than ``STOP_LEAD_NS`` before the stop (``after_stop``), is
unverifiable and reaches no check. A Ghost message logged more than ``STOP_BOUND_NS`` after
the stop is ``output_after_stop``, a violation: the run did not stop, so a stop record cannot
hide anything in the middle of a run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
import os

from ghost_bag.errors import BagError
from ghost_bag.recorded_configuration import read_configuration_changes
from ghost_bag.typed_read import read_typed
from ghost_core.graph import LIFECYCLE_TOPIC, LIFECYCLE_TYPE
from ghost_core.lifecycle import parse_lifecycle, run_edges, RunEdges, STOP_BOUND_NS, STOP_LEAD_NS
from ghost_core.properties import JsonValue

from .events import CycleEvent, GateRecord
from .rederive import Rederivation
from .unverifiable import last_log_time, missing_kinds, UnverifiableCycle, UnverifiableReason

__all__ = ['EdgeFilter', 'EdgesReport', 'read_run_edges']


def read_run_edges(bag: str | os.PathLike[str]) -> RunEdges:
    """The bag's recorded readiness and stop; no rule (``RunEdges()``) when it records none.

    A bag whose lifecycle or configuration records cannot be read has no rule here: the
    checks that read them say why.
    """
    try:
        starts: dict[str, int] = {}
        for change in read_configuration_changes(bag):
            if change.in_force_after_stamp_ns < 0:  # a start part, or a change before any cycle
                starts.setdefault(change.node, change.log_time_ns)
        records = []
        for message in read_typed(bag, frozenset({LIFECYCLE_TYPE}), 'the lifecycle records'):
            if not message.topic.endswith(LIFECYCLE_TOPIC):
                continue
            parsed = parse_lifecycle(str(getattr(message.decoded, 'data', '')))
            if parsed is not None:
                records.append((message.log_time_ns, *parsed))
    except BagError:
        return RunEdges()
    return run_edges(starts, records)


def _first_log_time(cycle: CycleEvent) -> int:
    views = (*cycle.raw_assessments, *cycle.calibrated, *cycle.rationales, *cycle.actuations)
    return min((*(view.message.log_time_ns for view in views),
                *(message.log_time_ns for message in (*cycle.predictions, *cycle.outcomes))),
               default=0)


@dataclass(frozen=True, slots=True)
class EdgesReport:
    """What the start-up and shutdown rule did with a bag's cycles."""

    edges: RunEdges
    ready_ns: int | None
    unverifiable: tuple[UnverifiableCycle, ...]
    #: Log time of the first Ghost message logged more than STOP_BOUND_NS after the stop.
    output_after_stop_ns: int | None = None

    @property
    def holds(self) -> bool:
        """False when the run went on after its stop record (``output_after_stop``)."""
        return self.output_after_stop_ns is None

    def count(self, reason: UnverifiableReason) -> int:
        """How many cycles the rule left unverifiable for `reason`."""
        return sum(1 for cycle in self.unverifiable if cycle.reason is reason)

    def summary(self) -> str | None:
        """The verify_all line (None: the bag records no readiness and no stop)."""
        if self.edges.ready_ns is None and self.edges.stop_ns is None:
            return None
        before = self.count(UnverifiableReason.BEFORE_READY)
        after = self.count(UnverifiableReason.AFTER_STOP)
        spared = f'{before} cycles before ready, {after} after the stop'
        if not self.holds:
            assert self.edges.stop_ns is not None and self.output_after_stop_ns is not None
            return (f'start-up and shutdown: VIOLATED (output_after_stop: a Ghost message '
                    f'logged at {self.output_after_stop_ns} ns, '
                    f'{(self.output_after_stop_ns - self.edges.stop_ns) / 1e9:.1f} s after the '
                    f'stop record at {self.edges.stop_ns} ns; {spared})')
        return f'start-up and shutdown: {spared} (unverifiable; recorded readiness and stop)'

    def to_json(self) -> dict[str, JsonValue]:
        """The report as JSON (docs/properties.md)."""
        return {'holds': self.holds, 'ready_ns': self.ready_ns,
                'stop_ns': self.edges.stop_ns,
                'ready_nodes': list(self.edges.ready_nodes),
                'last_ready': self.edges.last_ready,
                'cycles_before_ready': self.count(UnverifiableReason.BEFORE_READY),
                'cycles_after_stop': self.count(UnverifiableReason.AFTER_STOP),
                'output_after_stop_ns': self.output_after_stop_ns}


@dataclass(slots=True)
class EdgeFilter:
    """Pass a bag's events to the checks, holding back the cycles the edges leave unverifiable.

    ``strict``: nothing is held back (every cycle is judged, as the first verifier did).
    """

    edges: RunEdges
    strict: bool = False
    #: The pass's re-derivation: told where the run stops, and given the held-back cycles to
    #: re-run without comparing (the agent's state from them is the judged cycles').
    rederivation: Rederivation | None = None
    #: The first message of the first complete cycle (READY_BOUND_NS counts from it).
    _first_ns: int | None = None
    _cut: list[UnverifiableCycle] = field(default_factory=list)
    _after_stop_ns: int | None = None

    def events(self, events: Iterator[CycleEvent | GateRecord]
               ) -> Iterator[CycleEvent | GateRecord]:
        """Yield `events` less the held-back cycles (no check judges them)."""
        if self.rederivation is not None and not self.strict:
            self.rederivation.stop_log_ns = self.edges.stop_ns
        for event in events:
            if isinstance(event, GateRecord):
                yield event
            elif not self._held(event):
                yield event
            elif self.rederivation is not None and self._after_stop_ns is None:
                self.rederivation.warm_up(event)  # its state is the next cycles'

    def _held(self, cycle: CycleEvent) -> bool:
        first = _first_log_time(cycle)
        last = last_log_time(cycle)
        if not (cycle.raw_assessments or cycle.calibrated or cycle.rationales
                or cycle.actuations or cycle.predictions or cycle.outcomes):
            return False
        stop = self.edges.stop_ns
        if stop is not None and last > stop + STOP_BOUND_NS and self._after_stop_ns is None:
            self._after_stop_ns = last
        if self._first_ns is None and not missing_kinds(cycle):
            self._first_ns = first
        if self.strict:
            return False
        ready = self.edges.ready_from(self._first_ns)
        incomplete = bool(missing_kinds(cycle))
        # An incomplete cycle's inputs may precede its first message by up to STOP_LEAD_NS
        # (an outcome closes its cycle at the next fix, or the idle flush).
        if ready is not None and (first < ready
                                  or (incomplete and first < ready + STOP_LEAD_NS)):
            self._cut.append(UnverifiableCycle(
                cycle.stamp_ns, UnverifiableReason.BEFORE_READY,
                f'first message logged {(ready - first) / 1e6:.0f} ms before the run was '
                f'ready ({self.edges.last_ready})'))
            return True
        if stop is None or self._after_stop_ns is not None:
            return False
        if first >= stop or (incomplete and last >= stop - STOP_LEAD_NS):
            self._cut.append(UnverifiableCycle(
                cycle.stamp_ns, UnverifiableReason.AFTER_STOP,
                f'{"incomplete, " if incomplete else ""}first message logged '
                f'{(first - stop) / 1e6:+.0f} ms from the stop record'))
            return True
        return False

    def result(self) -> EdgesReport:
        """The report (after the last event)."""
        ready = None if self.strict else self.edges.ready_from(self._first_ns)
        return EdgesReport(self.edges, ready, tuple(self._cut), self._after_stop_ns)
