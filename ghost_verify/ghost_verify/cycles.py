"""Group a bag's ghost messages into cycles, and judge their order by the recorder's clock.

One CycleEvent per cycle stamp, in stamp order. Grouping by stamp alone would let a message
stand in any cycle whatever the recorder saw, so the reader also checks the log times
(SPEC §5, amendments v1.3: the recorder keeps the clock; ``TRANSPORT_BOUND_NS`` is the one
tolerance between two log times), and hands what it finds to the judges with the cycle
(``CycleEvent.order_violations``; the completeness check reports them):

- causal order: a cycle's calibrated assessment is logged after its raw assessment and its
  outcome, its rationale after its calibrated assessment, its actuation after its
  rationale; a message logged more than the bound before such an input of its own cycle is
  ``out_of_causal_order``;
- a second copy of a cycle's message logged more than the bound after the first message of
  a later cycle (or one whose cycle was closed already) is ``replayed_message``;
- an actuation logged after an actuation of a newer cycle (one emitter publishes them in
  stamp order) is ``actuation_out_of_order``;
- at most ``MESSAGES_PER_CYCLE`` messages of one stream are kept per cycle; more are counted,
  not kept, and are ``cycle_flood``.

Memory is thus bounded by ``--cycle-window`` cycles of at most MESSAGES_PER_CYCLE messages
per stream each, whatever a bag holds.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from ghost_core.evidence import TRANSPORT_BOUND_NS

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
from .log_order import OrderViolation, OrderViolationKind

__all__ = ['DEFAULT_CYCLE_WINDOW', 'MESSAGES_PER_CYCLE', 'group_cycles', 'group_events']

# How many cycles may be open (seen but not yet handed to the judges) at once. A cycle is
# closed when a message of a new cycle arrives while this many are open (the oldest stamp is
# closed first), or at the end of the bag. 256 cycles is 25.6 s of recorder lag at 10 Hz.
DEFAULT_CYCLE_WINDOW = 256
#: How many messages of one stream one cycle keeps (a well-formed cycle has one; a node
#: restart may repeat one). The rest are counted and reported (``cycle_flood``).
MESSAGES_PER_CYCLE = 16

#: Each stream's inputs within its own cycle: it is logged after them (within the bound).
_CAUSES: tuple[tuple[GhostTopicKind, tuple[GhostTopicKind, ...]], ...] = (
    (GhostTopicKind.CALIBRATED, (GhostTopicKind.RAW_ASSESSMENT, GhostTopicKind.OUTCOME)),
    (GhostTopicKind.RATIONALE, (GhostTopicKind.CALIBRATED,)),
    (GhostTopicKind.ACTUATION, (GhostTopicKind.RATIONALE,)),
)
_CYCLE_KINDS = tuple(kind for kind in GhostTopicKind if kind is not GhostTopicKind.GATE)


@dataclass(slots=True)
class _CycleBuilder:
    stamp_ns: int
    first_log_ns: int
    raw: list[RawAssessment] = field(default_factory=list)
    predictions: list[GhostMessage] = field(default_factory=list)
    outcomes: list[GhostMessage] = field(default_factory=list)
    calibrated: list[Calibrated] = field(default_factory=list)
    rationales: list[Rationale] = field(default_factory=list)
    actuations: list[Actuation] = field(default_factory=list)
    # Per stream: the messages read (kept or not) and the earliest log time.
    counts: dict[GhostTopicKind, int] = field(default_factory=dict)
    earliest: dict[GhostTopicKind, int] = field(default_factory=dict)
    topics: dict[GhostTopicKind, str] = field(default_factory=dict)
    found: list[OrderViolation] = field(default_factory=list)

    def add(self, message: GhostMessage) -> bool:
        """Keep the message (False: its stream has MESSAGES_PER_CYCLE already)."""
        kind = message.kind
        count = self.counts.get(kind, 0)
        self.counts[kind] = count + 1
        self.topics.setdefault(kind, message.topic)
        if count >= MESSAGES_PER_CYCLE:
            return False
        log_ns = message.log_time_ns
        if log_ns < self.earliest.get(kind, log_ns + 1):
            self.earliest[kind] = log_ns
        self.first_log_ns = min(self.first_log_ns, log_ns)
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
        return True

    def _logged(self, kind: GhostTopicKind) -> list[tuple[int, str]]:
        views: list[Calibrated] | list[Rationale] | list[Actuation]
        if kind is GhostTopicKind.CALIBRATED:
            views = self.calibrated
        elif kind is GhostTopicKind.RATIONALE:
            views = self.rationales
        else:
            views = self.actuations
        return [(view.message.log_time_ns, view.message.topic) for view in views]

    def build(self) -> CycleEvent:
        """The cycle, with its order violations (causal order and floods) added."""
        for kind, causes in _CAUSES:
            for cause in causes:
                if cause not in self.earliest:
                    continue
                earliest = self.earliest[cause]
                early = [(log_ns, topic) for log_ns, topic in self._logged(kind)
                         if earliest - log_ns > TRANSPORT_BOUND_NS]
                if early:
                    log_ns, topic = early[0]
                    self.found.append(OrderViolation(
                        self.stamp_ns, OrderViolationKind.OUT_OF_CAUSAL_ORDER, kind, topic,
                        log_ns, earliest, f'{kind.value} logged {earliest - log_ns} ns before '
                        f'the {cause.value} of its cycle'))
        for kind in _CYCLE_KINDS:
            count = self.counts.get(kind, 0)
            if count > MESSAGES_PER_CYCLE:
                self.found.append(OrderViolation(
                    self.stamp_ns, OrderViolationKind.CYCLE_FLOOD, kind, self.topics[kind],
                    self.earliest[kind], count, f'{count} {kind.value} messages in one cycle, '
                    f'more than the {MESSAGES_PER_CYCLE} kept'))
        return CycleEvent(
            stamp_ns=self.stamp_ns,
            raw_assessments=tuple(self.raw),
            predictions=tuple(self.predictions),
            outcomes=tuple(self.outcomes),
            calibrated=tuple(self.calibrated),
            rationales=tuple(self.rationales),
            actuations=tuple(self.actuations),
            order_violations=tuple(self.found),
        )


def group_cycles(
    messages: Iterable[GhostMessage], cycle_window: int = DEFAULT_CYCLE_WINDOW
) -> Iterator[CycleEvent]:
    """Group ghost messages by cycle stamp, yielding each cycle once, in increasing stamp order.

    At most ``cycle_window`` cycles are held open. When a message of a new cycle arrives and
    the window is full, the open cycle with the smallest stamp is closed and yielded; the
    rest are yielded at the end. A message whose
    stamp is not newer than a closed cycle cannot be placed any more: a second copy of a
    message its cycle had, or an actuation logged after a newer one, is an order violation
    (carried by the next cycle yielded); anything else raises LateMessageError. Gate records
    are not part of a cycle: they are dropped here (see :func:`group_events`).
    """
    for event in group_events(messages, cycle_window):
        if isinstance(event, CycleEvent):
            yield event


class _Order:
    """The reader's state across cycles: open stamps, closed ones, the newest actuation."""

    def __init__(self, cycle_window: int) -> None:
        self.window = cycle_window
        self.open_stamps: list[int] = []
        # The most recently closed cycles (a late message's cycle may be one), in stamp
        # order: their streams, their first log times, and how many late messages each had.
        self.closed_stamps: list[int] = []
        self.closed: dict[int, tuple[frozenset[GhostTopicKind], int]] = {}
        self.late_counts: dict[int, int] = {}
        self.newest_actuation: tuple[int, int] | None = None

    def close(self, builder: _CycleBuilder) -> None:
        self.open_stamps.remove(builder.stamp_ns)
        self.closed_stamps.append(builder.stamp_ns)
        self.closed[builder.stamp_ns] = (frozenset(builder.counts), builder.first_log_ns)
        if len(self.closed_stamps) > 2 * self.window:
            for stamp_ns in self.closed_stamps[:self.window]:
                del self.closed[stamp_ns]
                self.late_counts.pop(stamp_ns, None)
            del self.closed_stamps[:self.window]

    def next_first_log(self, stamp_ns: int, open_cycles: dict[int, _CycleBuilder]) -> int | None:
        """The first log time of the next cycle after `stamp_ns` (closed and kept, or open)."""
        index = bisect_right(self.closed_stamps, stamp_ns)
        if index < len(self.closed_stamps):
            return self.closed[self.closed_stamps[index]][1]
        index = bisect_right(self.open_stamps, stamp_ns)
        if index < len(self.open_stamps):
            return open_cycles[self.open_stamps[index]].first_log_ns
        return None

    def replayed(self, message: GhostMessage, later_ns: int | None) -> OrderViolation | None:
        if later_ns is None or message.log_time_ns - later_ns <= TRANSPORT_BOUND_NS:
            return None
        return OrderViolation(
            message.stamp_ns, OrderViolationKind.REPLAYED_MESSAGE, message.kind, message.topic,
            message.log_time_ns, later_ns, f'a second {message.kind.value} of its cycle, '
            f"logged {message.log_time_ns - later_ns} ns after the next cycle's first message")

    def actuation(self, message: GhostMessage) -> OrderViolation | None:
        """An actuation logged after a newer cycle's actuation (and keep the newest)."""
        newest = self.newest_actuation
        if newest is None or message.stamp_ns > newest[0]:
            self.newest_actuation = (message.stamp_ns, message.log_time_ns)
            return None
        if message.stamp_ns < newest[0] and message.log_time_ns > newest[1]:
            return OrderViolation(
                message.stamp_ns, OrderViolationKind.ACTUATION_OUT_OF_ORDER, message.kind,
                message.topic, message.log_time_ns, newest[1],
                f'actuation logged after the actuation of the newer cycle {newest[0]} ns')
        return None

    def late(self, message: GhostMessage, open_cycles: dict[int, _CycleBuilder],
             closed_up_to: int) -> OrderViolation | None:
        """What a message of a closed cycle is: a replay, an actuation out of order, or late.

        None when it is one more of more than MESSAGES_PER_CYCLE late messages of its cycle
        (counted once, as a flood). LateMessageError when it is neither: the window was too
        small for the bag.
        """
        stamp_ns = message.stamp_ns
        count = self.late_counts.get(stamp_ns, 0) + 1
        self.late_counts[stamp_ns] = count
        if count > MESSAGES_PER_CYCLE + 1:
            return None
        if count == MESSAGES_PER_CYCLE + 1:
            return OrderViolation(
                stamp_ns, OrderViolationKind.CYCLE_FLOOD, message.kind, message.topic,
                message.log_time_ns, count, f'more than {MESSAGES_PER_CYCLE} messages of its '
                'cycle after it was closed')
        closed = self.closed.get(stamp_ns)
        if closed is not None and message.kind in closed[0]:
            replayed = self.replayed(message, self.next_first_log(stamp_ns, open_cycles))
            if replayed is not None:
                return replayed
        if message.kind is GhostTopicKind.ACTUATION:
            backwards = self.actuation(message)
            if backwards is not None:
                return backwards
        raise LateMessageError(
            f'{message.topic}: message for cycle stamp {stamp_ns} ns arrived after cycles up '
            f'to {closed_up_to} ns were closed (more than {self.window} cycles open); rerun '
            'with a larger --cycle-window'
        )


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
    order = _Order(cycle_window)
    closed_up_to: int | None = None
    # Findings on late messages (of closed cycles): they ride the next cycle yielded.
    late: list[OrderViolation] = []
    for message in messages:
        if message.kind is GhostTopicKind.GATE:
            yield gate_record_of(message)
            continue
        stamp_ns = message.stamp_ns
        builder = open_cycles.get(stamp_ns)
        closed: CycleEvent | None = None
        if builder is None:
            if len(open_cycles) >= cycle_window:
                oldest = order.open_stamps[0]
                closing = open_cycles.pop(oldest)
                order.close(closing)
                closed = closing.build()
                closed_up_to = oldest
            if closed_up_to is not None and stamp_ns <= closed_up_to:
                found = order.late(message, open_cycles, closed_up_to)
                if found is not None:
                    late.append(found)
            else:
                builder = open_cycles[stamp_ns] = _CycleBuilder(stamp_ns, message.log_time_ns)
                insort(order.open_stamps, stamp_ns)
        if builder is not None:
            _add(builder, message, order, open_cycles)
        if closed is not None:
            yield _with(closed, late)
            late = []
    if late and not open_cycles:
        # Only a window of one cycle leaves none to carry them: too small for this bag.
        raise LateMessageError(f'{late[0].topic}: message for cycle stamp '
                               f'{late[0].cycle_stamp_ns} ns arrived after its cycle was '
                               'closed; rerun with a larger --cycle-window')
    for index, stamp_ns in enumerate(sorted(open_cycles)):
        cycle = open_cycles[stamp_ns].build()
        yield _with(cycle, late) if index == 0 else cycle


def _add(builder: _CycleBuilder, message: GhostMessage, order: _Order,
         open_cycles: dict[int, _CycleBuilder]) -> None:
    """Add a message to its open cycle, judging its order against the cycles around it."""
    kept = builder.counts.get(message.kind, 0)
    if kept and kept < MESSAGES_PER_CYCLE:
        replayed = order.replayed(message, order.next_first_log(message.stamp_ns, open_cycles))
        if replayed is not None:
            builder.found.append(replayed)
    if message.kind is GhostTopicKind.ACTUATION and kept < MESSAGES_PER_CYCLE:
        backwards = order.actuation(message)
        if backwards is not None and not (
                builder.found and builder.found[-1].log_time_ns == message.log_time_ns
                and builder.found[-1].kind is OrderViolationKind.REPLAYED_MESSAGE):
            builder.found.append(backwards)
    builder.add(message)


def _with(cycle: CycleEvent, late: list[OrderViolation]) -> CycleEvent:
    """The cycle with the findings on late messages added."""
    return replace(cycle, order_violations=(*cycle.order_violations, *late)) if late else cycle
