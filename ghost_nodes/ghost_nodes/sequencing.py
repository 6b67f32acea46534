"""Pure sequencing of the loop's asynchronous streams: which inputs make up one cycle, and when.

Nodes receive their inputs over separate topics, with no ordering between topics. These classes
decide, deterministically, when a cycle's inputs are complete, so the same scenario always yields
the same payloads whatever the process scheduling (SPEC section 8). They rely only on what DDS
guarantees for a reliable topic with one publisher: messages arrive in publication order.
No rclpy here; the nodes feed these objects and publish what they return.
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

    @property
    def status(self) -> str:
        """Taxonomy string of PredictionOutcome.status for these inputs."""
        if self.prediction is None:
            return 'no_prediction'
        if self.observation is None:
            return 'no_observation'
        return 'paired'


class OutcomeSequencer(Generic[P, O]):
    """Resolve, in cycle order, each cycle's prediction and observation (or their absence).

    A cycle is a belief stamp. Its prediction is the one whose target stamp is within
    ``tolerance_ns`` of it; its observation the one stamped within ``tolerance_ns`` of it.
    An input is known absent once its topic has moved past the cycle (a later prediction or
    observation arrived: topics are FIFO), or once ``grace_cycles`` later beliefs have arrived.
    The first belief this sequencer sees has no prediction unless one already arrived for it.
    """

    def __init__(self, grace_cycles: int, tolerance_ns: int) -> None:
        if grace_cycles < 1:
            raise ValueError(f'grace_cycles must be >= 1, got {grace_cycles}')
        if tolerance_ns < 0:
            raise ValueError(f'tolerance_ns must be >= 0, got {tolerance_ns}')
        self._grace = grace_cycles
        self._tol = tolerance_ns
        self._pending: deque[int] = deque()
        self._beliefs_seen = 0
        self._last_belief_ns: int | None = None
        self._first_belief_ns: int | None = None
        self._predictions: dict[int, P] = {}
        self._observations: dict[int, O] = {}
        self._last_prediction_target_ns: int | None = None
        self._last_observation_ns: int | None = None
        self._resolved_up_to_ns: int | None = None

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
        if self._first_belief_ns is None:
            self._first_belief_ns = stamp_ns
        self._last_belief_ns = stamp_ns
        self._pending.append(stamp_ns)
        return self._resolve()

    def on_prediction(self, target_ns: int, prediction: P) -> list[CycleInputs[P, O]]:
        """Register a prediction for the cycle stamped ``target_ns``."""
        self._predictions[target_ns] = prediction
        if self._last_prediction_target_ns is None or target_ns > self._last_prediction_target_ns:
            self._last_prediction_target_ns = target_ns
        return self._resolve()

    def on_observation(self, stamp_ns: int, observation: O) -> list[CycleInputs[P, O]]:
        """Register an observation stamped ``stamp_ns``."""
        self._observations[stamp_ns] = observation
        if self._last_observation_ns is None or stamp_ns > self._last_observation_ns:
            self._last_observation_ns = stamp_ns
        return self._resolve()

    def _find(self, table: dict[int, P] | dict[int, O], stamp_ns: int) -> int | None:
        if stamp_ns in table:
            return stamp_ns
        close = [s for s in table if abs(s - stamp_ns) <= self._tol]
        return min(close, key=lambda s: (abs(s - stamp_ns), s)) if close else None

    def _later_beliefs(self, stamp_ns: int) -> int:
        return sum(1 for s in self._pending if s > stamp_ns)

    def _resolve(self) -> list[CycleInputs[P, O]]:
        done: list[CycleInputs[P, O]] = []
        while self._pending:
            t = self._pending[0]
            timed_out = self._later_beliefs(t) >= self._grace
            pred_key = self._find(self._predictions, t)
            if pred_key is not None:
                prediction: P | None = self._predictions[pred_key]
            elif t == self._first_belief_ns or timed_out or (
                    self._last_prediction_target_ns is not None
                    and self._last_prediction_target_ns > t + self._tol):
                prediction = None
            else:
                break
            obs_key = self._find(self._observations, t)
            if obs_key is not None:
                observation: O | None = self._observations[obs_key]
            elif timed_out or (self._last_observation_ns is not None
                               and self._last_observation_ns > t + self._tol):
                observation = None
            else:
                break
            self._pending.popleft()
            self._resolved_up_to_ns = t
            done.append(CycleInputs(t, prediction, observation))
            # Inputs at or before a resolved cycle can no longer be used.
            limit = t + self._tol
            for table in (self._predictions, self._observations):
                for key in [k for k in table if k <= limit]:
                    del table[key]
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
