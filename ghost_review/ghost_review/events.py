"""An autopilot's events, classified: which ones Ghost's lead time is measured against.

Ghost judges the navigation belief, so a lead time means something only against an event of
the navigation or the estimator: a position or velocity turning invalid, an EKF failsafe, a
GNSS loss, an estimator reset (``CREDITED``). Battery, RC or link and geofence failsafes,
mode changes and messages are listed beside the decisions, never credited to Ghost.

Autopilot-neutral: each autopilot's module turns its own log into ``LogEvent``s, each with
one ``EventClass`` (``ghost_review.px4`` for PX4's; another autopilot's module maps its own
events, e.g. ArduPilot's ERR and EV messages, to the same classes), and this table alone
decides what is credited. Pure: the lead is computed from the cycle rows alone.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from .episodes import seconds_text
from .flight import CycleRow

__all__ = ['CREDITED', 'EventClass', 'FAILSAFES', 'FixSource', 'Lead', 'LeadKind', 'LogEvent',
           'LogInfo', 'lead_of']

_PROCEED = 'PROCEED'


class EventClass(StrEnum):
    """What an autopilot event is about (its value is how the report names it)."""

    POSITION_INVALID = 'position or velocity invalid'
    ESTIMATOR_FAILSAFE = 'EKF failsafe'
    GNSS_LOSS = 'GNSS loss'
    ESTIMATOR_RESET = 'estimator reset'
    BATTERY_FAILSAFE = 'battery failsafe'
    LINK_FAILSAFE = 'RC or link loss failsafe'
    GEOFENCE_FAILSAFE = 'geofence failsafe'
    OTHER_FAILSAFE = 'failsafe, another cause'
    FAILSAFE_CAUSE_UNKNOWN = 'failsafe, cause not logged'
    RECOVERED = 'recovered'
    MODE = 'mode change'
    MESSAGE = 'message'


#: The one table: event class -> True when Ghost's lead is reported against it (credited),
#: False when the event is only listed.
CREDITED: Mapping[EventClass, bool] = {
    EventClass.POSITION_INVALID: True,
    EventClass.ESTIMATOR_FAILSAFE: True,
    EventClass.GNSS_LOSS: True,
    EventClass.ESTIMATOR_RESET: True,
    EventClass.BATTERY_FAILSAFE: False,
    EventClass.LINK_FAILSAFE: False,
    EventClass.GEOFENCE_FAILSAFE: False,
    EventClass.OTHER_FAILSAFE: False,
    EventClass.FAILSAFE_CAUSE_UNKNOWN: False,
    EventClass.RECOVERED: False,
    EventClass.MODE: False,
    EventClass.MESSAGE: False,
}
#: The failsafes that are listed, not credited (the report and the index name them).
FAILSAFES = frozenset({EventClass.BATTERY_FAILSAFE, EventClass.LINK_FAILSAFE,
                       EventClass.GEOFENCE_FAILSAFE, EventClass.OTHER_FAILSAFE,
                       EventClass.FAILSAFE_CAUSE_UNKNOWN})


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One autopilot event: time since boot (ns), the autopilot's kind and text, its class."""

    time_ns: int
    kind: str
    detail: str
    event_class: EventClass = EventClass.MESSAGE

    @property
    def credited(self) -> bool:
        """Ghost's lead is reported against this event (``CREDITED``)."""
        return CREDITED[self.event_class]

    @property
    def listed_failsafe(self) -> bool:
        """A failsafe Ghost's lead is not measured against (battery, link, geofence, …)."""
        return self.event_class in FAILSAFES


@dataclass(frozen=True, slots=True)
class FixSource:
    """Where an imported log's fixes come from, and whether its estimator fuses them."""

    topic: str
    fused: bool
    #: Why `fused` is what it is (e.g. the parameter and its bit, or the autopilot's default).
    why: str


@dataclass(frozen=True, slots=True)
class LogInfo:
    """What an autopilot's log says of itself: autopilot, vehicle, version, events, fixes."""

    autopilot: str
    vehicle: str
    version: str
    events: tuple[LogEvent, ...]
    fixes: FixSource | None = None


class LeadKind(StrEnum):
    """Where Ghost stood when a credited event came."""

    AHEAD = 'ahead'
    AT_EVENT = 'at the event'
    BEHIND = 'behind'
    #: PROCEED at the event and at every cycle after it.
    PROCEEDED_THROUGH = 'proceeded through the event'
    #: Not PROCEED from its first decision to the event: there is nothing to lead.
    ABSTAINED_THROUGHOUT = 'abstained throughout'
    BEFORE_FIRST_DECISION = "before Ghost's first decision"


@dataclass(frozen=True, slots=True)
class Lead:
    """Ghost's lead before one event: the kind, and seconds for AHEAD/AT_EVENT/BEHIND."""

    kind: LeadKind
    seconds: float | None = None
    #: The decision in force at the event (ABSTAINED_THROUGHOUT: the one held since the start).
    decision: str | None = None

    @property
    def text(self) -> str:
        """How the report and the index say it."""
        if self.seconds is None:
            if self.kind is LeadKind.ABSTAINED_THROUGHOUT:
                return f'abstained throughout ({self.decision} from its first decision; no lead)'
            if self.kind is LeadKind.PROCEEDED_THROUGH:
                return 'proceeded through the event (PROCEED then and after)'
            return str(self.kind.value)
        text = _signed(self.seconds)
        return f'{text} s ({self.kind.value})'


def _signed(seconds: float) -> str:
    return seconds_text(seconds, 2, sign=True)


def lead_of(rows: Sequence[CycleRow], event_ns: int) -> Lead:
    """Ghost's lead before an event at `event_ns` (seconds since boot, as the cycle stamps).

    Ghost not proceeding at the event: the seconds since that non-PROCEED run began
    (AHEAD), unless the run began at its first decision (ABSTAINED_THROUGHOUT: it never
    proceeded, so it led nothing). Ghost proceeding at the event: minus the seconds to its
    next non-PROCEED decision (BEHIND), or PROCEEDED_THROUGH when there is none.
    """
    decided = [row for row in rows if row.decision is not None]
    stamps = [row.stamp_ns for row in decided]
    if not stamps or event_ns < stamps[0]:
        return Lead(LeadKind.BEFORE_FIRST_DECISION)
    index = bisect_right(stamps, event_ns) - 1
    decision = decided[index].decision
    if decision != _PROCEED:
        start = index
        while start > 0 and decided[start - 1].decision != _PROCEED:
            start -= 1
        if start == 0:
            return Lead(LeadKind.ABSTAINED_THROUGHOUT, None, decided[0].decision)
        seconds = (event_ns - stamps[start]) / 1e9
        kind = LeadKind.AHEAD if float(_signed(seconds)) > 0 else LeadKind.AT_EVENT
        return Lead(kind, seconds, decision)
    later = next((i for i in range(index + 1, len(decided))
                  if decided[i].decision != _PROCEED), None)
    if later is None:
        return Lead(LeadKind.PROCEEDED_THROUGH, None, decision)
    seconds = (event_ns - stamps[later]) / 1e9
    kind = LeadKind.BEHIND if float(_signed(seconds)) < 0 else LeadKind.AT_EVENT
    return Lead(kind, seconds, decision)
