"""Group a bag's ghost messages into cycles: one CycleEvent per cycle stamp, in stamp order."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .errors import LateMessageError
from .events import (
    Actuation,
    actuation_of,
    Calibrated,
    calibrated_of,
    CycleEvent,
    gate_record_of,
    GateRecord,
    GhostMessage,
    GhostTopicKind,
    Rationale,
    rationale_of,
    raw_assessment_of,
    RawAssessment,
)

__all__ = ['DEFAULT_CYCLE_WINDOW', 'group_cycles', 'group_events']

# How many cycles may be open (seen but not yet handed to the judges) at once. A cycle is
# closed when a message of a new cycle arrives while this many are open (the oldest stamp is
# closed first), or at the end of the bag. 256 cycles is 25.6 s of recorder lag at 10 Hz.
DEFAULT_CYCLE_WINDOW = 256


@dataclass(slots=True)
class _CycleBuilder:
    stamp_ns: int
    raw: list[RawAssessment] = field(default_factory=list)
    predictions: list[GhostMessage] = field(default_factory=list)
    outcomes: list[GhostMessage] = field(default_factory=list)
    calibrated: list[Calibrated] = field(default_factory=list)
    rationales: list[Rationale] = field(default_factory=list)
    actuations: list[Actuation] = field(default_factory=list)

    def add(self, message: GhostMessage) -> None:
        kind = message.kind
        if kind is GhostTopicKind.RAW_ASSESSMENT:
            self.raw.append(raw_assessment_of(message))
        elif kind is GhostTopicKind.PREDICTION:
            self.predictions.append(message)
        elif kind is GhostTopicKind.OUTCOME:
            self.outcomes.append(message)
        elif kind is GhostTopicKind.CALIBRATED:
            self.calibrated.append(calibrated_of(message))
        elif kind is GhostTopicKind.RATIONALE:
            self.rationales.append(rationale_of(message))
        elif kind is GhostTopicKind.ACTUATION:
            self.actuations.append(actuation_of(message))
        else:
            raise ValueError(f'a {kind.value} message is not part of a cycle')

    def build(self) -> CycleEvent:
        return CycleEvent(
            stamp_ns=self.stamp_ns,
            raw_assessments=tuple(self.raw),
            predictions=tuple(self.predictions),
            outcomes=tuple(self.outcomes),
            calibrated=tuple(self.calibrated),
            rationales=tuple(self.rationales),
            actuations=tuple(self.actuations),
        )


def group_cycles(
    messages: Iterable[GhostMessage], cycle_window: int = DEFAULT_CYCLE_WINDOW
) -> Iterator[CycleEvent]:
    """Group ghost messages by cycle stamp, yielding each cycle once, in increasing stamp order.

    At most ``cycle_window`` cycles are held open. When a message of a new cycle arrives and
    the window is full, the open cycle with the smallest stamp is closed and yielded; the rest
    are yielded at the end. A message whose stamp is not newer than a closed cycle cannot be
    placed any more and raises LateMessageError. Gate records are not part of a cycle: they
    are dropped here (see :func:`group_events`).
    """
    for event in group_events(messages, cycle_window):
        if isinstance(event, CycleEvent):
            yield event


def group_events(
    messages: Iterable[GhostMessage], cycle_window: int = DEFAULT_CYCLE_WINDOW
) -> Iterator[CycleEvent | GateRecord]:
    """Like :func:`group_cycles`, and every gate record as it is read, between the cycles.

    A gate record (GateEmission) is stamped when the gate sent it, not with a cycle stamp, so
    it is not grouped: it is yielded at once, in bag order, and never held in the window. The
    cycle it cites may therefore come after it (that cycle is still open).
    """
    if cycle_window < 1:
        raise ValueError(f'cycle_window must be at least 1, got {cycle_window}')
    open_cycles: dict[int, _CycleBuilder] = {}
    closed_up_to: int | None = None
    for message in messages:
        if message.kind is GhostTopicKind.GATE:
            yield gate_record_of(message)
            continue
        builder = open_cycles.get(message.stamp_ns)
        if builder is None:
            if len(open_cycles) >= cycle_window:
                oldest = min(open_cycles)
                yield open_cycles.pop(oldest).build()
                closed_up_to = oldest
            if closed_up_to is not None and message.stamp_ns <= closed_up_to:
                raise LateMessageError(
                    f'{message.topic}: message for cycle stamp {message.stamp_ns} ns arrived '
                    f'after cycles up to {closed_up_to} ns were closed (more than '
                    f'{cycle_window} cycles open); rerun with a larger --cycle-window'
                )
            builder = open_cycles[message.stamp_ns] = _CycleBuilder(message.stamp_ns)
        builder.add(message)
    for stamp_ns in sorted(open_cycles):
        yield open_cycles[stamp_ns].build()
