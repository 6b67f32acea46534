"""Closed-loop feedback (ADR-0026): calibration history, drift, and the downgrade policy."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ghost_core.contracts import (
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    CalibrationHistory,
    PredictionOutcome,
)
from ghost_core.errors import ConfigError
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.wire import message_address

__all__ = [
    'DOWNGRADE_POLICY_ID',
    'REASON_DOWNGRADE',
    'REASON_NO_OUTCOMES',
    'REASON_WITHIN_TOLERANCE',
    'CalibrationAdjustmentPolicy',
    'MahalanobisDowngradePolicy',
    'build_calibration_history',
    'history_of_window',
    'observed_window',
    'distance_bin',
    'downgrade',
    'drift_condition',
    'outcome_distance',
]

#: adjustment_policy_id of the reference calibration policy.
DOWNGRADE_POLICY_ID = 'mahalanobis_downgrade_v1'
#: adjustment_reason values of the reference calibration policy.
REASON_DOWNGRADE = 'downgrade_from_calibration'
REASON_NO_OUTCOMES = 'no_outcomes_yet'
REASON_WITHIN_TOLERANCE = 'calibration_within_tolerance'


def _positive_int(owner: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f'{owner}.{name} must be an integer >= 1, got {value!r}')
    return value


def drift_condition(
    outcomes_considered: int,
    count_beyond_3_std: int,
    count_beyond_5_std: int,
    min_outcomes: int,
    downgrade_threshold: int,
) -> bool:
    """Return True on drift: outcomes_considered >= M and beyond_3 + beyond_5 >= K.

    This is the one definition of drift (SPEC sections 5 and 6), shared by the policy and the
    property preconditions.
    """
    return (outcomes_considered >= min_outcomes
            and count_beyond_3_std + count_beyond_5_std >= downgrade_threshold)


def outcome_distance(outcome: PredictionOutcome) -> float:
    """Return the distance an outcome is binned on (SPEC §5 v1.1, comparable distances).

    d = max(position_normalised_distance, orientation_mahalanobis): the position distance
    normalised to its axes' degrees of freedom (the 1-D sigma with the same tail
    probability), so a consistent estimator lands beyond 3 at the 1-D rate whether 1, 2 or 3
    axes were compared. The contract guarantees the normalised value matches the raw distance
    and axis count it was recorded with. The reference model predicts no orientation (0.0).
    """
    return max(outcome.position_normalised_distance, outcome.orientation_mahalanobis)


def distance_bin(d: float) -> int:
    """Return the exclusive bin of a distance: 0 (d<=1), 1 (1<d<=3), 2 (3<d<=5), 3 (d>5).

    +inf falls in bin 3 (beyond 5 sigma); NaN never reaches here (contracts reject it).
    """
    if d <= 1.0:
        return 0
    if d <= 3.0:
        return 1
    if d <= 5.0:
        return 2
    return 3


def build_calibration_history(
    outcomes: Iterable[PredictionOutcome], max_n: int
) -> CalibrationHistory:
    """Return the history of the last `max_n` observed outcomes (pure).

    `outcomes` are in chronological order (the caller's responsibility, ADR-0026); outcomes
    that are not observed are skipped before the window is taken. window_size is max_n.
    """
    window_size = _positive_int('build_calibration_history', 'max_n', max_n)
    return history_of_window(observed_window(outcomes, window_size), window_size)


def observed_window(outcomes: Iterable[PredictionOutcome],
                    max_n: int) -> list[PredictionOutcome]:
    """The last `max_n` observed outcomes of `outcomes` (chronological), oldest first."""
    return [outcome for outcome in outcomes if outcome.observed][-max_n:]


def history_of_window(window: Sequence[PredictionOutcome],
                      window_size: int) -> CalibrationHistory:
    """The history aggregating exactly `window` (observed outcomes, at most window_size)."""
    if not window:
        return CalibrationHistory.empty(window_size)
    bins = [0, 0, 0, 0]
    for outcome in window:
        bins[distance_bin(outcome_distance(outcome))] += 1
    return CalibrationHistory(
        outcomes_considered=len(window),
        count_within_1_std=bins[0],
        count_beyond_1_std=bins[1],
        count_beyond_3_std=bins[2],
        count_beyond_5_std=bins[3],
        worst_position_mahalanobis=max(o.position_mahalanobis for o in window),
        worst_orientation_mahalanobis=max(o.orientation_mahalanobis for o in window),
        most_recent_observed_stamp_ns=max(o.stamp_ns for o in window),
        window_size=window_size,
    )


def downgrade(level: SelfAssessmentLevel) -> SelfAssessmentLevel:
    """Return the level one step weaker: KNOWN->UNCERTAIN->UNKNOWN; UNKNOWN stays."""
    return SelfAssessmentLevel(min(int(level) + 1, int(SelfAssessmentLevel.UNKNOWN)))


@runtime_checkable
class CalibrationAdjustmentPolicy(Protocol):
    """Turns a raw assessment and its calibration history into a calibrated one (pure)."""

    @property
    def policy_id(self) -> str:
        """Taxonomy string identifying the policy (adjustment_policy_id)."""
        ...

    def adjust(
        self, raw: BeliefSelfAssessment, history: CalibrationHistory,
        raw_sha256: str | None = None, window_outcome_stamps_ns: tuple[int, ...] = (),
    ) -> CalibratedSelfAssessment:
        """Return the calibrated assessment of `raw` given `history` (of those outcomes)."""
        ...


@dataclass(frozen=True, slots=True)
class MahalanobisDowngradePolicy:
    """Reference calibration policy (ADR-0026): downgrade one level on drift.

    drift (drift_condition with M = min_outcomes, K = downgrade_threshold) -> downgrade one
    level, reason downgrade_from_calibration; no outcomes -> passthrough, no_outcomes_yet;
    otherwise passthrough, calibration_within_tolerance. M and K must be >= 1; they have no
    default here: the loop's (``LoopConfig``) are the calibrator's declared ones.
    """

    min_outcomes: int
    downgrade_threshold: int

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'MahalanobisDowngradePolicy'
        _positive_int(owner, 'min_outcomes', self.min_outcomes)
        _positive_int(owner, 'downgrade_threshold', self.downgrade_threshold)

    @property
    def policy_id(self) -> str:
        """The reference policy's id, mahalanobis_downgrade_v1."""
        return DOWNGRADE_POLICY_ID

    def is_drift(self, history: CalibrationHistory) -> bool:
        """Return True when `history` meets the drift condition under this M and K."""
        return drift_condition(history.outcomes_considered, history.count_beyond_3_std,
                               history.count_beyond_5_std, self.min_outcomes,
                               self.downgrade_threshold)

    def adjust(
        self, raw: BeliefSelfAssessment, history: CalibrationHistory,
        raw_sha256: str | None = None, window_outcome_stamps_ns: tuple[int, ...] = (),
    ) -> CalibratedSelfAssessment:
        """Return `raw` calibrated by `history` (pure).

        `raw_sha256` is H(raw) when the caller has it already (hashed from the message it
        received); it is computed when None. `window_outcome_stamps_ns` names the outcomes the
        history aggregates (SPEC 5, v1.3).
        """
        if self.is_drift(history):
            level, reason = downgrade(raw.overall_level), REASON_DOWNGRADE
        elif history.outcomes_considered == 0:
            level, reason = raw.overall_level, REASON_NO_OUTCOMES
        else:
            level, reason = raw.overall_level, REASON_WITHIN_TOLERANCE
        return CalibratedSelfAssessment(
            stamp_ns=raw.stamp_ns,
            frame_id=raw.frame_id,
            raw_assessment=raw,
            raw_assessment_sha256=message_address(raw) if raw_sha256 is None else raw_sha256,
            calibration_history=history,
            adjusted_overall_level=level,
            adjustment_policy_id=self.policy_id,
            adjustment_reason=reason,
            min_outcomes=self.min_outcomes,
            downgrade_threshold=self.downgrade_threshold,
            window_outcome_stamps_ns=window_outcome_stamps_ns,
        )
