"""Pure sequencing of the loop's asynchronous streams: which inputs make up one cycle, and when.

Nodes receive their inputs over separate topics, with no ordering between topics. These classes
decide, deterministically, when a cycle's inputs are complete, so the same inputs always yield
the same payloads whatever the process scheduling (SPEC section 8). They rely only on what DDS
guarantees for a reliable topic with one publisher: messages arrive in publication order.
The pure pipeline (ghost_core.pipeline) and the nodes use the same objects, which is what makes
an offline replay and a run over DDS give identical payloads.
"""

from collections import deque
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ['CalibrationJoiner', 'CycleInputs', 'OutcomeSequencer', 'StampedOutcome']

P = TypeVar('P')
O = TypeVar('O')  # noqa: E741
R = TypeVar('R')


@dataclass(frozen=True, slots=True)
class CycleInputs(Generic[P, O]):
    """What the outcome of one cycle is computed from; None where it is known to be absent."""

    stamp_ns: int
    prediction: P | None
    observation: O | None


class OutcomeSequencer(Generic[P, O]):
    """Resolve, in cycle order, each cycle's prediction and fix (or their absence).

    A cycle is a belief stamp t; the cycle before it is the previous belief stamp t'. Its
    prediction is the one made at t' (the first cycle has none). Its fix is the latest
    observation stamped in (t', t]: a fix belongs to the first cycle whose stamp is >= its own
    (SPEC §5 v1.1, asynchronous fixes); earlier fixes of the same window are superseded.

    The prediction is known absent once a prediction made after t' arrived (one predictor, a
    FIFO topic) or ``grace_cycles`` later beliefs have. The window of fixes is closed once a
    fix stamped >= t arrived (FIFO), or a belief stamped >= t + ``max_observation_lag_ns``
    arrived: a fix may arrive up to that late, measured on the inputs' own stamps. A fix that
    arrives after its cycle was resolved is late: not used, and counted in ``late``.
    ``flush()`` resolves every pending cycle with what has arrived (end of the input).
    Deterministic: the result depends only on the order of arrival within each topic and on
    stamps, as long as fixes arrive within the lag.
    """

    def __init__(self, grace_cycles: int, max_observation_lag_ns: int) -> None:
        if grace_cycles < 1:
            raise ValueError(f'grace_cycles must be >= 1, got {grace_cycles}')
        if max_observation_lag_ns < 0:
            raise ValueError(f'max_observation_lag_ns must be >= 0, got {max_observation_lag_ns}')
        self._grace = grace_cycles
        self._lag = max_observation_lag_ns
        self._pending: deque[tuple[int, int | None]] = deque()  # (cycle, previous cycle)
        self._last_belief_ns: int | None = None
        self._predictions: dict[int, P] = {}
        self._last_prediction_ns: int | None = None
        self._observations: dict[int, O] = {}
        self._last_observation_ns: int | None = None
        self._resolved_up_to_ns: int | None = None
        #: Fixes that arrived after their cycle had been resolved (not used), and the last one's
        #: stamp. Counters, not lists: a long flight must not grow the node's memory.
        self.late = 0
        self.last_late_ns: int | None = None
        #: Fixes replaced by a later fix of the same cycle (not used).
        self.superseded = 0
        #: Fixes not newer than the previous fix (repeated or out of order; not used).
        self.stale = 0

    @property
    def pending_cycles(self) -> int:
        """Cycles whose inputs are not complete yet."""
        return len(self._pending)

    def on_belief(self, stamp_ns: int) -> list[CycleInputs[P, O]]:
        """Register a new cycle and return the cycles this completes.

        Old or repeated stamps are not new cycles: they are ignored (nothing returned).
        """
        if self._last_belief_ns is not None and stamp_ns <= self._last_belief_ns:
            return []
        self._pending.append((stamp_ns, self._last_belief_ns))
        self._last_belief_ns = stamp_ns
        return self._resolve(flushing=False)

    def on_prediction(self, origin_ns: int, prediction: P) -> list[CycleInputs[P, O]]:
        """Register the prediction made at the cycle stamped ``origin_ns``."""
        self._predictions[origin_ns] = prediction
        if self._last_prediction_ns is None or origin_ns > self._last_prediction_ns:
            self._last_prediction_ns = origin_ns
        return self._resolve(flushing=False)

    def on_observation(self, stamp_ns: int, observation: O) -> list[CycleInputs[P, O]]:
        """Register a fix stamped ``stamp_ns``.

        A fix not newer than the last one is not used (counted in ``stale``), as every node's
        stamp guard drops it: one fix stream is FIFO, so it is a repeat or out of order.
        """
        if self._last_observation_ns is not None and stamp_ns <= self._last_observation_ns:
            self.stale += 1
            return []
        if self._resolved_up_to_ns is not None and stamp_ns <= self._resolved_up_to_ns:
            self.late += 1
            self.last_late_ns = stamp_ns
            return []
        self._observations[stamp_ns] = observation
        self._last_observation_ns = stamp_ns
        return self._resolve(flushing=False)

    def flush(self) -> list[CycleInputs[P, O]]:
        """Resolve every pending cycle with what has arrived (nothing more will come)."""
        return self._resolve(flushing=True)

    def _later_beliefs(self, stamp_ns: int) -> int:
        return sum(1 for s, _ in self._pending if s > stamp_ns)

    def _resolve(self, flushing: bool) -> list[CycleInputs[P, O]]:
        done: list[CycleInputs[P, O]] = []
        while self._pending:
            t, previous = self._pending[0]
            timed_out = flushing or self._later_beliefs(t) >= self._grace
            prediction: P | None = None
            if previous is not None:
                if previous in self._predictions:
                    prediction = self._predictions[previous]
                elif not (timed_out or (self._last_prediction_ns is not None
                                        and self._last_prediction_ns > previous)):
                    break
            window_closed = flushing or (
                self._last_observation_ns is not None and self._last_observation_ns >= t) or (
                self._last_belief_ns is not None and self._last_belief_ns >= t + self._lag)
            if not window_closed:
                break
            in_window = sorted(s for s in self._observations
                               if s <= t and (previous is None or s > previous))
            observation: O | None = self._observations[in_window[-1]] if in_window else None
            self.superseded += max(len(in_window) - 1, 0)
            self._pending.popleft()
            self._resolved_up_to_ns = t
            done.append(CycleInputs(t, prediction, observation))
            # Inputs at or before a resolved cycle can no longer be used; the prediction made
            # at t is the next cycle's.
            for key in [k for k in self._observations if k <= t]:
                del self._observations[key]
            for key in [k for k in self._predictions if k < t]:
                del self._predictions[key]
        return done


@dataclass(frozen=True, slots=True)
class StampedOutcome(Generic[O]):
    """An outcome with its cycle stamp and whether it was observed."""

    stamp_ns: int
    observed: bool
    outcome: O


class CalibrationJoiner(Generic[R, O]):
    """Join each cycle's raw assessment with the outcomes up to and including that cycle.

    A raw assessment for cycle t is released only once the outcome for t has arrived (the
    outcome stream is FIFO and has one outcome per cycle), together with every outcome stamped
    <= t that the window may still need: all outcomes since the oldest pending cycle plus the
    last ``max_history`` observed ones before it. A raw assessment whose outcome can no longer
    come (the outcome stream moved past it) is dropped and reported by ``dropped``.
    """

    #: Outcomes kept at most beyond the window (bounds memory when assessments stop coming).
    MAX_BACKLOG = 4096

    def __init__(self, max_history: int) -> None:
        if max_history < 1:
            raise ValueError(f'max_history must be >= 1, got {max_history}')
        self._w = max_history
        self._raws: dict[int, R] = {}
        self._outcomes: list[StampedOutcome[O]] = []
        self._outcome_stamps: set[int] = set()
        self._last_outcome_ns: int | None = None
        self._last_released_ns: int | None = None
        self.dropped: list[int] = []

    def on_assessment(self, stamp_ns: int, raw: R) -> list[tuple[R, list[O]]]:
        """Register the raw assessment of cycle ``stamp_ns``; returns cycles now complete."""
        self._raws[stamp_ns] = raw
        return self._release()

    def on_outcome(self, outcome: StampedOutcome[O]) -> list[tuple[R, list[O]]]:
        """Register the outcome of one cycle; returns cycles now complete."""
        self._outcomes.append(outcome)
        self._outcome_stamps.add(outcome.stamp_ns)
        if self._last_outcome_ns is None or outcome.stamp_ns > self._last_outcome_ns:
            self._last_outcome_ns = outcome.stamp_ns
        return self._release()

    def _release(self) -> list[tuple[R, list[O]]]:
        ready: list[tuple[R, list[O]]] = []
        for t in sorted(self._raws):
            if t in self._outcome_stamps:
                ready.append((self._raws.pop(t),
                              [o.outcome for o in self._outcomes if o.stamp_ns <= t]))
                if self._last_released_ns is None or t > self._last_released_ns:
                    self._last_released_ns = t
            elif self._last_outcome_ns is not None and self._last_outcome_ns > t:
                del self._raws[t]
                self.dropped.append(t)
        self._prune()
        return ready

    def _prune(self) -> None:
        # Raw assessments arrive in cycle order, so no future one is stamped at or before the
        # last released cycle: outcomes before the floor matter only as window history.
        candidates = list(self._raws)
        if self._last_released_ns is not None:
            candidates.append(self._last_released_ns + 1)
        if not candidates:
            # No assessment yet: keep a bounded backlog of outcomes.
            del self._outcomes[:-self.MAX_BACKLOG]
        else:
            floor = min(candidates)
            recent = [o for o in self._outcomes if o.stamp_ns >= floor][-self.MAX_BACKLOG:]
            older_observed = [o for o in self._outcomes if o.stamp_ns < floor and o.observed]
            self._outcomes = older_observed[-self._w:] + recent
        self._outcome_stamps = {o.stamp_ns for o in self._outcomes}
