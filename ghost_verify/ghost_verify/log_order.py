"""What the reader finds wrong with the order of a cycle's messages by the recorder's clock.

The rules are cycles.py's (the reader applies them as it groups the messages); the findings
ride the cycles (``CycleEvent.order_violations``) and the cycles check reports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ghost_core.properties import JsonValue

__all__ = ['OrderViolation', 'OrderViolationKind']


class OrderViolationKind(StrEnum):
    """Why the recorder's log times contradict how a cycle's messages were made (cycles.py)."""

    #: A message logged more than the transport bound before an input of its own cycle.
    OUT_OF_CAUSAL_ORDER = 'out_of_causal_order'
    #: A second copy of a cycle's message, logged more than the transport bound after a
    #: later cycle's first message (or after its own cycle was closed).
    REPLAYED_MESSAGE = 'replayed_message'
    #: An actuation logged after an actuation of a newer cycle.
    ACTUATION_OUT_OF_ORDER = 'actuation_out_of_order'
    #: More messages of one stream in one cycle than the reader keeps (MESSAGES_PER_CYCLE).
    CYCLE_FLOOD = 'cycle_flood'


@dataclass(frozen=True, slots=True)
class OrderViolation:
    """One contradiction between a cycle's messages and the recorder's log times.

    `stream` is the message's stream, logged at `log_time_ns` on `topic`; `reference_ns` is
    the log time it contradicts (its input's, the next cycle's first message, the newer
    actuation's; for a flood, how many messages the stream had); `detail` says it in words.
    """

    cycle_stamp_ns: int
    kind: OrderViolationKind
    #: The message's stream: a ``GhostTopicKind`` (``events``, which imports this module).
    stream: str
    topic: str
    log_time_ns: int
    reference_ns: int
    detail: str

    def to_json(self) -> dict[str, JsonValue]:
        """Return the violation as a JSON object."""
        return {'cycle_stamp_ns': self.cycle_stamp_ns, 'kind': self.kind.value,
                'stream': str(self.stream), 'topic': self.topic,
                'log_time_ns': self.log_time_ns, 'reference_ns': self.reference_ns,
                'detail': self.detail}
