"""History consistency: each recorded H_t equals the history recomputed from recorded outcomes."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from types import MappingProxyType

from ghost_core.calibration import build_calibration_history
from ghost_core.contracts import PredictionOutcome
from ghost_core.errors import GhostError
from ghost_core.msg_fields import MESSAGE_FIELDS
from ghost_core.properties import JsonValue
from ghost_core.wire import parse_prediction_outcome, to_msg_dict

from .events import BagInfo, CycleEvent, GHOST_SCHEMAS, GhostTopicKind
from .unverifiable import unverifiable_to_json, UnverifiableCycle, UnverifiableReason

__all__ = [
    'HISTORY_FIELDS',
    'HISTORY_OUTCOME_LIMIT',
    'HistoryChecker',
    'HistoryMismatch',
    'HistoryReport',
    'InvalidOutcome',
]

#: The most observed outcomes the checker keeps. The check needs only the last W of them
#: (W = window_size, 32 by default); this bound keeps memory constant whatever W a bag claims.
#: A calibrated assessment whose window_size exceeds it, once more outcomes than this have
#: been observed, cannot be recomputed and is reported as a mismatch.
HISTORY_OUTCOME_LIMIT = 4096

#: The CalibrationHistory fields compared (window_size is the input of the recomputation, and
#: schema_version describes the message layout, not the evidence).
HISTORY_FIELDS: tuple[str, ...] = tuple(
    name for name, _ in MESSAGE_FIELDS['CalibrationHistory']
    if name not in ('window_size', 'schema_version'))
_SHOWN_COUNTS = HISTORY_FIELDS[:5]
_NOTHING: Mapping[int, object] = MappingProxyType({})

_OUTCOME_TYPES = frozenset(name for name, kind in GHOST_SCHEMAS.items()
                           if kind is GhostTopicKind.OUTCOME)

ShownValue = int | None


@dataclass(frozen=True, slots=True)
class HistoryMismatch:
    """A calibrated assessment whose recorded history differs from the recomputed one.

    `recorded` and `recomputed` show the counts, the most recent observed stamp and the window
    size; `differing_fields` names every compared field that differs (the worst distances
    included); `detail` says why no recomputation was possible, when none was.
    """

    cycle_stamp_ns: int
    recorded: tuple[tuple[str, ShownValue], ...]
    recomputed: tuple[tuple[str, ShownValue], ...]
    differing_fields: tuple[str, ...]
    detail: str = ''

    def to_json(self) -> dict[str, JsonValue]:
        """Return the mismatch as a JSON object."""
        return {
            'cycle_stamp_ns': self.cycle_stamp_ns,
            'kind': 'history_mismatch',
            'recorded': dict(self.recorded),
            'recomputed': dict(self.recomputed),
            'differing_fields': list(self.differing_fields),
            'detail': self.detail,
        }


@dataclass(frozen=True, slots=True)
class InvalidOutcome:
    """A recorded PredictionOutcome that breaks its contract; it cannot enter a history."""

    stamp_ns: int
    topic: str
    reason: str

    def to_json(self) -> dict[str, JsonValue]:
        """Return the outcome's problem as a JSON object."""
        return {'stamp_ns': self.stamp_ns, 'topic': self.topic, 'reason': self.reason}


@dataclass(frozen=True, slots=True)
class HistoryReport:
    """Whether every recorded calibration_history is the one the recorded outcomes imply.

    `checked` is False (with `skipped_reason`) when the bag has no PredictionOutcome topic:
    then nothing can be recomputed, which is noted but is not a failure.
    """

    checked: bool
    skipped_reason: str | None
    cycles_checked: int
    observed_outcomes: int
    mismatches: tuple[HistoryMismatch, ...]
    invalid_outcomes: tuple[InvalidOutcome, ...]
    outcome_limit: int = HISTORY_OUTCOME_LIMIT
    #: The calibrated assessments (counted in `cycles_checked`) whose recorded history counts
    #: outcomes observed before the bag's first one: not compared (never when strict).
    unverifiable: tuple[UnverifiableCycle, ...] = ()

    @property
    def holds(self) -> bool:
        """True when no recorded history differs and no recorded outcome is invalid."""
        return not self.mismatches and not self.invalid_outcomes

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object (see docs/properties.md for the fields)."""
        return {
            'checked': self.checked,
            'skipped_reason': self.skipped_reason,
            'holds': self.holds,
            'cycles_checked': self.cycles_checked,
            'cycles_consistent': (self.cycles_checked - len(self.mismatches)
                                  - len(self.unverifiable)),
            'observed_outcomes': self.observed_outcomes,
            'outcome_limit': self.outcome_limit,
            'history_mismatch': [item.to_json() for item in self.mismatches],
            'invalid_outcomes': [item.to_json() for item in self.invalid_outcomes],
            # Skipped, no history was examined: nothing can be unverifiable either.
            **({'cycles_unverifiable': len(self.unverifiable),
                'unverifiable': unverifiable_to_json(self.unverifiable)}
               if self.checked else {}),
        }

    def summary(self) -> str | None:
        """Return the one-line verdict, e.g. ``history: 10/10 consistent``; None if skipped."""
        if not self.checked:
            return None
        agreeing = self.cycles_checked - len(self.mismatches) - len(self.unverifiable)
        consistent = f'{agreeing}/{self.cycles_checked} consistent'
        if self.unverifiable:
            consistent += f', {len(self.unverifiable)} unverifiable'
        if self.holds:
            return f'history: {consistent}'
        parts = []
        if self.mismatches:
            parts.append(f'{len(self.mismatches)} history_mismatch, the first at '
                         f'{self.mismatches[0].cycle_stamp_ns} ns')
        if self.invalid_outcomes:
            parts.append(f'{len(self.invalid_outcomes)} invalid outcome'
                         f'{"s" if len(self.invalid_outcomes) > 1 else ""}')
        return f'history: VIOLATED ({consistent}; {"; ".join(parts)})'

    def notes(self) -> tuple[str, ...]:
        """Return the human note saying the check was skipped, if it was."""
        if self.checked:
            return ()
        return (f'history: not checked: {self.skipped_reason}',)


@dataclass(slots=True)
class HistoryChecker:
    """History consistency over a cycle stream: ``update(cycle)`` per cycle, ``result(info)``.

    Cycles must come in increasing stamp order (as the reader yields them). Each cycle's
    outcomes join the window before its calibrated assessments are checked: SPEC section 5
    counts the outcome observed at t in H_t. The window rule is ghost_core's own
    (build_calibration_history over parse_prediction_outcome), so it exists once.

    Unless `strict`, the first calibrated assessments whose history counts more outcomes than
    the bag holds before them (a recording started after Ghost: their evidence window starts
    before the bag) are unverifiable, not mismatches. That lead-in ends at the first history
    the bag's outcomes can explain (as many outcomes as recorded, or a full window of W) that
    counts at least one outcome: from there on every history must match.

    `window_at` (the run's configuration: ``run_parameters.RunParameters.window_at``) gives
    the W each history is recomputed with, from its stamp and the W it claims; without it,
    the claimed W is used.
    """

    outcome_limit: int = HISTORY_OUTCOME_LIMIT
    strict: bool = False
    window_at: Callable[[int, int], int] | None = None
    _lead_in: bool = True
    _unverifiable: list[UnverifiableCycle] = field(default_factory=list)
    _window: deque[PredictionOutcome] = field(default_factory=deque)
    _observed: int = 0
    _checked: int = 0
    _mismatches: list[HistoryMismatch] = field(default_factory=list)
    _invalid: list[InvalidOutcome] = field(default_factory=list)
    # Resumed mid-bag (resume()): the observed outcomes before, as far as they are known.

    def __post_init__(self) -> None:
        if self.outcome_limit < 1:
            raise ValueError(f'outcome_limit must be at least 1, got {self.outcome_limit}')
        self._window = deque(maxlen=self.outcome_limit)

    def update(self, cycle: CycleEvent, rederived: Mapping[int, object] = _NOTHING) -> None:
        """Add the cycle's observed outcomes, then check each of its calibrated assessments.

        `rederived`: as for ConformanceChecker.update (an outcome the re-derivation found
        exactly the agent's is taken as its contract, not parsed again).
        """
        for message in cycle.outcomes:
            known = rederived.get(id(message))
            if isinstance(known, PredictionOutcome):
                outcome = known
            else:
                try:
                    outcome = parse_prediction_outcome(message.msg)
                except (GhostError, ValueError, TypeError, ArithmeticError) as err:
                    # The dict comes from the bag: any way it breaks the contract is reported.
                    self._invalid.append(InvalidOutcome(message.stamp_ns, message.topic,
                                                        ' '.join(str(err).split())))
                    continue
            if outcome.observed:
                self._window.append(outcome)
                self._observed += 1
        for calibrated in cycle.calibrated:
            self._checked += 1
            recorded = calibrated.message.msg.get('calibration_history')
            mismatch = self._compare(cycle.stamp_ns,
                                     recorded if isinstance(recorded, Mapping) else {})
            if mismatch is not None:
                self._mismatches.append(mismatch)

    def _compare(self, stamp_ns: int, recorded: Mapping[str, object]) -> HistoryMismatch | None:
        window_size = recorded.get('window_size')
        if isinstance(window_size, bool) or not isinstance(window_size, int) or window_size < 1:
            return HistoryMismatch(stamp_ns, _shown(recorded), (), ('window_size',),
                                   f'window_size {window_size!r} is not an integer >= 1')
        if self.window_at is not None:
            window_size = self.window_at(stamp_ns, window_size)
        if window_size > len(self._window) and self._observed > len(self._window):
            return HistoryMismatch(
                stamp_ns, _shown(recorded), (), (),
                f'window_size {window_size} exceeds the {self.outcome_limit} observed outcomes '
                'the verifier keeps: the history cannot be recomputed')
        # Only the last W observed outcomes stamped <= t matter: walk back from the newest, so
        # the cost per cycle is O(W), not O(outcomes kept).
        newest_first = (outcome for outcome in reversed(self._window)
                        if outcome.stamp_ns <= stamp_ns)
        eligible = list(islice(newest_first, window_size))
        eligible.reverse()
        expected = to_msg_dict(
            build_calibration_history(eligible, window_size))
        differing = tuple(name for name in HISTORY_FIELDS
                          if not _same(recorded.get(name), expected[name]))
        if not differing:
            # A history of no outcomes says nothing about when the bag's outcomes begin (the
            # recorder may match /prediction_outcomes after the other topics): the lead-in
            # ends at the first matching history that counts some.
            if expected['outcomes_considered']:
                self._lead_in = False
            return None
        considered = recorded.get('outcomes_considered')
        if (self._lead_in and not self.strict and len(eligible) < window_size
                and isinstance(considered, int) and not isinstance(considered, bool)
                and considered > len(eligible)):
            self._unverifiable.append(UnverifiableCycle(
                stamp_ns, UnverifiableReason.EVIDENCE_BEFORE_RECORDING,
                f'the history counts {considered} outcomes, the bag holds {len(eligible)} '
                'observed at or before this cycle'))
            return None
        self._lead_in = False
        return HistoryMismatch(stamp_ns, _shown(recorded), _shown(expected), differing)

    @property
    def lead_in(self) -> bool:
        """True while no recorded history has yet been judged (matched, or not)."""
        return self._lead_in

    def result(self, info: BagInfo) -> HistoryReport:
        """Return the frozen report; skipped when the bag has no PredictionOutcome topic."""
        if not any(type_name in _OUTCOME_TYPES for _, type_name in info.ghost_topics):
            return HistoryReport(
                checked=False,
                skipped_reason='the bag has no PredictionOutcome topic, so no history can be '
                               'recomputed',
                cycles_checked=0,
                observed_outcomes=0,
                mismatches=(),
                invalid_outcomes=(),
                outcome_limit=self.outcome_limit,
            )
        return HistoryReport(
            checked=True,
            skipped_reason=None,
            cycles_checked=self._checked,
            observed_outcomes=self._observed,
            mismatches=tuple(self._mismatches),
            invalid_outcomes=tuple(self._invalid),
            outcome_limit=self.outcome_limit,
            unverifiable=tuple(self._unverifiable),
        )


def _same(recorded: object, expected: object) -> bool:
    # bool is an int subclass: True must not pass for 1, nor 1 for True.
    if isinstance(recorded, bool) != isinstance(expected, bool):
        return False
    return recorded == expected


def _shown(history: Mapping[str, object]) -> tuple[tuple[str, ShownValue], ...]:
    values: list[tuple[str, ShownValue]] = [
        (name, _int_or_none(history.get(name))) for name in _SHOWN_COUNTS
    ]
    stamp = history.get('most_recent_observed_stamp')
    stamp_ns: ShownValue = None
    if history.get('has_observed_stamp') is True and isinstance(stamp, Mapping):
        sec, nanosec = _int_or_none(stamp.get('sec')), _int_or_none(stamp.get('nanosec'))
        if sec is not None and nanosec is not None:
            stamp_ns = sec * 1_000_000_000 + nanosec
    values.append(('most_recent_observed_stamp_ns', stamp_ns))
    values.append(('window_size', _int_or_none(history.get('window_size'))))
    return tuple(values)


def _int_or_none(value: object) -> ShownValue:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
