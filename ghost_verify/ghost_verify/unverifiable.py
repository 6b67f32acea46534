"""Cycles a recording cannot prove: cut at its start or end, or judged on evidence before it.

A ``ros2 bag record`` started after Ghost, or stopped before it, holds cycles that are
incomplete only because the recording missed part of them: the first cycle may lack its raw
assessment, the last its rationale or actuation, and the first histories count outcomes
observed before the bag's first message. Those cycles are ``unverifiable``: counted and listed
(stamp and reason), never violations, unless the verifier runs ``strict`` (then they fail, as
any other incomplete cycle). An incomplete cycle between two complete ones is no cut: it
always fails. So does a cycle whose missing messages the recording cannot have missed: at
the start, a cycle may only lack the first links of its chain (the recorder started after
they were published), at the end only the last ones (it stopped before them). A cycle at
the end that lacks its raw assessment but holds its actuation was recorded past the point
where the raw assessment was published: that is a lost message, not a cut.

BAUD-v1 and ERUR-v1 do not use these cuts: they judge every cycle that has a calibrated
assessment (cycle_properties.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from ghost_core.properties import JsonValue

from .events import CycleEvent, GhostTopicKind

__all__ = [
    'CUT_CYCLE_LIMIT',
    'REQUIRED_KINDS',
    'CycleCuts',
    'UnverifiableCycle',
    'UnverifiableReason',
    'last_log_time',
    'missing_kinds',
    'unverifiable_to_json',
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

#: At most this many consecutive incomplete cycles at the start or the end of a bag count as
#: cut by the recording. A recorder misses at most the few cycles in flight in the pipeline
#: when it starts or stops; a longer run of incomplete cycles is a real gap (a node that
#: died, a topic not recorded) and fails. The bound also keeps the memory held per checker
#: constant.
CUT_CYCLE_LIMIT = 8


class UnverifiableReason(StrEnum):
    """Why a cycle cannot be verified from the bag (closed catalogue)."""

    #: An incomplete cycle before the bag's first complete cycle (recording started late).
    CUT_AT_START = 'cut_at_start'
    #: An incomplete cycle after the bag's last complete cycle (recording stopped early).
    CUT_AT_END = 'cut_at_end'
    #: The recorded history counts outcomes observed before the bag's first outcome.
    EVIDENCE_BEFORE_RECORDING = 'evidence_before_recording'
    #: Its first message was logged before every Ghost node was ready (ghost_verify.edges).
    BEFORE_READY = 'before_ready'
    #: Logged after the run began to stop, or cut by the stop (ghost_verify.edges).
    AFTER_STOP = 'after_stop'


@dataclass(frozen=True, slots=True)
class UnverifiableCycle:
    """One cycle that the bag cannot prove either way, and why."""

    cycle_stamp_ns: int
    reason: UnverifiableReason
    detail: str = ''

    def to_json(self) -> dict[str, JsonValue]:
        """Return the cycle as a JSON object."""
        return {'cycle_stamp_ns': self.cycle_stamp_ns, 'reason': self.reason.value,
                'detail': self.detail}


def unverifiable_to_json(cycles: Sequence[UnverifiableCycle]) -> list[JsonValue]:
    """Return the unverifiable cycles as a JSON list, in stamp order."""
    return [cycle.to_json() for cycle in cycles]


def missing_kinds(cycle: CycleEvent) -> tuple[GhostTopicKind, ...]:
    """Return the required kinds the cycle lacks (empty for a complete cycle)."""
    counts = {
        GhostTopicKind.RAW_ASSESSMENT: len(cycle.raw_assessments),
        GhostTopicKind.CALIBRATED: len(cycle.calibrated),
        GhostTopicKind.RATIONALE: len(cycle.rationales),
        GhostTopicKind.ACTUATION: len(cycle.actuations),
    }
    return tuple(kind for kind in REQUIRED_KINDS if not counts[kind])


def last_log_time(cycle: CycleEvent) -> int:
    """The greatest log time of the cycle's messages (0 for none)."""
    views = (*cycle.raw_assessments, *cycle.calibrated, *cycle.rationales, *cycle.actuations)
    return max((*(view.message.log_time_ns for view in views),
                *(message.log_time_ns for message in (*cycle.predictions, *cycle.outcomes))),
               default=0)


def _chain_end(cycle: CycleEvent) -> int:
    """The log time of the last chain link the cycle has (-1 for none)."""
    views = (*cycle.raw_assessments, *cycle.calibrated, *cycle.rationales, *cycle.actuations)
    return max((view.message.log_time_ns for view in views), default=-1)


def _fits_start(missing: Sequence[GhostTopicKind]) -> bool:
    """True when `missing` are the first links of the chain (a recorder started late)."""
    return tuple(missing) == REQUIRED_KINDS[:len(missing)]


def _fits_end(missing: Sequence[GhostTopicKind]) -> bool:
    """True when `missing` are the last links of the chain (a recorder stopped early)."""
    return tuple(missing) == REQUIRED_KINDS[len(REQUIRED_KINDS) - len(missing):]


def _detail(missing: Sequence[GhostTopicKind]) -> str:
    return 'lacks ' + ', '.join(kind.value for kind in missing)


@dataclass(slots=True)
class CycleCuts:
    """Hold back incomplete cycles at a bag's edges until it is known whether they are cut.

    Feed every cycle, in stream order, to :meth:`feed`; judge the cycles it yields. At the
    end, judge the cycles :meth:`finish` yields. Complete cycles pass at once; incomplete ones
    wait: before the first complete cycle they become ``cut_at_start`` if they lack only the
    first links of the chain, between complete cycles they pass (in order), after the last
    one they become ``cut_at_end`` if they lack only the last links; the others pass. Strict, every
    cycle passes at once. More than `limit` waiting cycles pass too (see CUT_CYCLE_LIMIT), and
    so do the waiting cycles of a bag without any complete cycle: nothing shows that such a
    bag recorded a running agent at all.
    """

    strict: bool = False
    limit: int = CUT_CYCLE_LIMIT
    _pending: list[tuple[CycleEvent, tuple[GhostTopicKind, ...]]] = field(default_factory=list)
    _seen_complete: bool = False
    _overflowed: bool = False
    _cut: list[UnverifiableCycle] = field(default_factory=list)

    def feed(self, cycle: CycleEvent) -> Iterator[CycleEvent]:
        """Yield the cycles to judge now (`cycle` among them unless it waits)."""
        if self.strict:
            yield cycle
            return
        missing = missing_kinds(cycle)
        if len(missing) == len(REQUIRED_KINDS) and not (cycle.predictions or cycle.outcomes):
            yield cycle  # no ghost message at all: nothing to judge, nothing cut
            return
        if missing and not self._overflowed:
            self._pending.append((cycle, missing))
            if len(self._pending) > self.limit:
                self._overflowed = True
                yield from self._release()
            return
        if missing:
            yield cycle
            return
        if self._seen_complete or self._overflowed:
            yield from self._release()
        else:
            pending, self._pending = self._pending, []
            leading = True
            for waiting, lacks in pending:
                leading = leading and _fits_start(lacks)
                if leading:
                    self._cut.append(UnverifiableCycle(
                        waiting.stamp_ns, UnverifiableReason.CUT_AT_START, _detail(lacks)))
                else:
                    yield waiting
        self._seen_complete = True
        self._overflowed = False
        yield cycle

    def finish(self) -> Iterator[CycleEvent]:
        """End the stream: yield the waiting cycles that are no cut; the others are cut."""
        if self._seen_complete:
            pending, self._pending = self._pending, []
            # Only a tail of cycles that each lack the last links is cut: a cycle after one
            # that was recorded past such a link shows the recording went on.
            # It must also lack them for good: nothing of a later cycle was logged after the
            # last link it has.
            cut_from, later = len(pending), -1
            while cut_from:
                waiting, lacks = pending[cut_from - 1]
                if not _fits_end(lacks) or later > _chain_end(waiting):
                    break
                later = max(later, last_log_time(waiting))
                cut_from -= 1
            yield from (waiting for waiting, _ in pending[:cut_from])
            self._cut.extend(UnverifiableCycle(waiting.stamp_ns, UnverifiableReason.CUT_AT_END,
                                               _detail(lacks))
                             for waiting, lacks in pending[cut_from:])
            return
        yield from self._release()

    def _release(self) -> Iterator[CycleEvent]:
        waiting = [cycle for cycle, _ in self._pending]
        self._pending.clear()
        yield from waiting

    @property
    def unverifiable(self) -> tuple[UnverifiableCycle, ...]:
        """The cycles found cut so far, in stream order."""
        return tuple(self._cut)

