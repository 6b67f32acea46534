"""Calibration (ADR-0026): history building, the drift condition and the downgrade policy."""

from __future__ import annotations

import math

from ghost_core_test import examples as ex
from ghost_core_test.strategies import calibration_histories, levels, outcome_sequences
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.calibration import (
    build_calibration_history,
    CalibrationAdjustmentPolicy,
    distance_bin,
    downgrade,
    DOWNGRADE_POLICY_ID,
    drift_condition,
    MahalanobisDowngradePolicy,
    REASON_DOWNGRADE,
    REASON_NO_OUTCOMES,
    REASON_WITHIN_TOLERANCE,
)
from ghost_core.contracts import CalibrationHistory, PredictionOutcome
from ghost_core.errors import ConfigError
from ghost_core.hashing import canonical_json
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.wire import message_address, to_msg_dict

KNOWN, UNCERTAIN, UNKNOWN = SelfAssessmentLevel


def expected_bin(d: float) -> int:
    """Return the bin of SPEC section 5, written independently of distance_bin."""
    return 0 if d <= 1 else 1 if d <= 3 else 2 if d <= 5 else 3


@settings(max_examples=200, deadline=None)
@given(outcome_sequences(), st.integers(1, 40))
def test_history_aggregates_the_last_observed_outcomes(
    outcomes: list[PredictionOutcome], max_n: int
) -> None:
    """Counts, bins, worst values, stamp and window follow SPEC section 5 for any input."""
    history = build_calibration_history(outcomes, max_n)
    window = [o for o in outcomes if o.observed][-max_n:]
    assert history.window_size == max_n
    assert history.outcomes_considered == len(window) == min(
        max_n, sum(o.observed for o in outcomes))
    bins = [0, 0, 0, 0]
    for outcome in window:
        bins[expected_bin(max(outcome.position_normalised_distance,
                              outcome.orientation_mahalanobis))] += 1
    assert [history.count_within_1_std, history.count_beyond_1_std,
            history.count_beyond_3_std, history.count_beyond_5_std] == bins
    if window:
        assert history.worst_position_mahalanobis == max(o.position_mahalanobis for o in window)
        assert history.worst_orientation_mahalanobis == max(
            o.orientation_mahalanobis for o in window)
        assert history.most_recent_observed_stamp_ns == window[-1].stamp_ns
    else:
        assert history == CalibrationHistory.empty(max_n)


def test_bins_are_exclusive_at_their_edges() -> None:
    """1 is within_1, 3 is beyond_1, 5 is beyond_3, just above 5 and +inf are beyond_5."""
    for d, index in ((0.0, 0), (1.0, 0), (math.nextafter(1.0, 2.0), 1), (3.0, 1),
                     (math.nextafter(3.0, 4.0), 2), (5.0, 2), (math.nextafter(5.0, 6.0), 3),
                     (math.inf, 3)):
        assert distance_bin(d) == index, d


def test_history_bins_on_the_larger_of_the_two_distances() -> None:
    """Bin on d = max(position, orientation): small position, large orientation error."""
    outcome = PredictionOutcome(10, 'map', 5, True, 'paired', (0.0, 0.0, 0.0),
                                (0.0, 0.0, 0.0), 0.5, 4.0, observation_stamp_ns=10,
                                position_axes_compared=1, position_normalised_distance=0.5)
    history = build_calibration_history([outcome], 4)
    assert history.count_beyond_3_std == 1
    assert history.worst_position_mahalanobis == 0.5
    assert history.worst_orientation_mahalanobis == 4.0


def test_window_keeps_only_the_last_max_n() -> None:
    """Older outcomes leave the window."""
    outcomes = [ex.outcome(9.0, stamp_ns=ex.STAMP_NS + s) for s in (1, 2)] + [
        ex.outcome(0.5, stamp_ns=ex.STAMP_NS + s) for s in (3, 4, 5)]
    history = build_calibration_history(outcomes, 3)
    assert history.outcomes_considered == 3
    assert history.count_beyond_5_std == 0
    assert history.most_recent_observed_stamp_ns == ex.STAMP_NS + 5


def test_infinite_distance_counts_beyond_five() -> None:
    """+inf outcomes are counted (beyond_5) and become the worst value."""
    history = build_calibration_history([ex.outcome(math.inf)], 8)
    assert history.count_beyond_5_std == 1
    assert history.worst_position_mahalanobis == math.inf


@pytest.mark.parametrize('max_n', [0, -1, 2.5, True])
def test_window_must_hold_at_least_one(max_n: int) -> None:
    """max_n is an integer >= 1."""
    with pytest.raises(ConfigError, match='max_n'):
        build_calibration_history([], max_n)


def test_drift_condition_boundaries() -> None:
    """Drift needs M outcomes and K beyond 3 sigma: exactly M and exactly K are enough."""
    assert drift_condition(4, 1, 1, 4, 2)  # M exactly reached, K exactly reached
    assert drift_condition(4, 0, 2, 4, 2)
    assert drift_condition(4, 2, 0, 4, 2)
    assert not drift_condition(3, 2, 1, 4, 2)  # M - 1 outcomes
    assert not drift_condition(9, 1, 0, 4, 2)  # K - 1 beyond 3 sigma


def test_downgrade_table() -> None:
    """KNOWN -> UNCERTAIN, UNCERTAIN -> UNKNOWN, UNKNOWN stays."""
    assert downgrade(KNOWN) is UNCERTAIN
    assert downgrade(UNCERTAIN) is UNKNOWN
    assert downgrade(UNKNOWN) is UNKNOWN


@pytest.mark.parametrize(('raw_level', 'adjusted'), [(KNOWN, UNCERTAIN), (UNCERTAIN, UNKNOWN),
                                                     (UNKNOWN, UNKNOWN)])
def test_policy_downgrades_one_level_on_drift(
    raw_level: SelfAssessmentLevel, adjusted: SelfAssessmentLevel
) -> None:
    """On drift the policy downgrades one level with reason downgrade_from_calibration."""
    calibrated = MahalanobisDowngradePolicy(4, 2).adjust(ex.raw(raw_level),
                                                         ex.history(beyond_3=2, within=2))
    assert calibrated.adjusted_overall_level is adjusted
    assert calibrated.adjustment_reason == REASON_DOWNGRADE == 'downgrade_from_calibration'


def test_policy_passes_through_without_outcomes() -> None:
    """With no outcome the level passes through, reason no_outcomes_yet."""
    calibrated = MahalanobisDowngradePolicy(4, 2).adjust(ex.raw(), CalibrationHistory.empty(32))
    assert calibrated.adjusted_overall_level is KNOWN
    assert calibrated.adjustment_reason == REASON_NO_OUTCOMES == 'no_outcomes_yet'


def test_policy_passes_through_within_tolerance() -> None:
    """Outcomes without drift pass through, reason calibration_within_tolerance."""
    for history in (ex.history(beyond_5=1, within=5), ex.history(beyond_3=2, within=1)):
        calibrated = MahalanobisDowngradePolicy(4, 2).adjust(ex.raw(UNCERTAIN), history)
        assert calibrated.adjusted_overall_level is UNCERTAIN
        assert calibrated.adjustment_reason == REASON_WITHIN_TOLERANCE
        assert REASON_WITHIN_TOLERANCE == 'calibration_within_tolerance'


def test_policy_downgrades_when_m_and_k_are_exactly_reached() -> None:
    """Exactly M outcomes of which exactly K beyond 3 sigma is drift."""
    history = ex.history(beyond_3=1, beyond_5=1, within=1)
    assert history.outcomes_considered == 3
    calibrated = MahalanobisDowngradePolicy(3, 2).adjust(ex.raw(), history)
    assert calibrated.adjusted_overall_level is UNCERTAIN


def test_calibrated_records_the_policy_and_the_raw_hash() -> None:
    """The calibrated assessment carries the raw hash, the policy id, M and K."""
    raw = ex.raw()
    calibrated = MahalanobisDowngradePolicy(5, 3).adjust(raw, ex.history())
    assert calibrated.raw_assessment == raw
    assert calibrated.raw_assessment_sha256 == message_address(raw)
    assert calibrated.adjustment_policy_id == DOWNGRADE_POLICY_ID == 'mahalanobis_downgrade_v1'
    assert (calibrated.min_outcomes, calibrated.downgrade_threshold) == (5, 3)
    assert (calibrated.stamp_ns, calibrated.frame_id) == (raw.stamp_ns, raw.frame_id)


@pytest.mark.parametrize(('m', 'k'), [(0, 2), (4, 0), (-1, 2), (4, 1.5)])
def test_policy_parameters_are_at_least_one(m: int, k: int) -> None:
    """M and K are integers >= 1."""
    with pytest.raises(ConfigError):
        MahalanobisDowngradePolicy(m, k)


def test_reference_policy_satisfies_the_protocol() -> None:
    """MahalanobisDowngradePolicy is a CalibrationAdjustmentPolicy."""
    assert isinstance(MahalanobisDowngradePolicy(4, 2), CalibrationAdjustmentPolicy)


@settings(max_examples=200, deadline=None)
@given(calibration_histories(max_stamp_ns=ex.STAMP_NS), levels, st.integers(1, 50),
       st.integers(1, 50))
def test_policy_follows_the_drift_condition(
    history: CalibrationHistory, level: SelfAssessmentLevel, m: int, k: int
) -> None:
    """For any history: downgrade iff drift, otherwise passthrough with the right reason."""
    calibrated = MahalanobisDowngradePolicy(m, k).adjust(ex.raw(level), history)
    drift = drift_condition(history.outcomes_considered, history.count_beyond_3_std,
                            history.count_beyond_5_std, m, k)
    if drift:
        assert calibrated.adjusted_overall_level == downgrade(level)
        assert calibrated.adjustment_reason == REASON_DOWNGRADE
    else:
        assert calibrated.adjusted_overall_level == level
        expected = REASON_NO_OUTCOMES if history.outcomes_considered == 0 else \
            REASON_WITHIN_TOLERANCE
        assert calibrated.adjustment_reason == expected


def test_calibration_is_pure() -> None:
    """Same inputs give byte-equal canonical JSON of the calibrated assessment."""
    outcomes = [ex.outcome(d, stamp_ns=ex.STAMP_NS - 10 + i)
                for i, d in enumerate((0.5, 4.0, 7.0, 0.9))]
    policy = MahalanobisDowngradePolicy(4, 2)
    first = policy.adjust(ex.raw(), build_calibration_history(outcomes, 8))
    second = MahalanobisDowngradePolicy(4, 2).adjust(
        ex.raw(), build_calibration_history(list(outcomes), 8))
    assert canonical_json(to_msg_dict(first)) == canonical_json(to_msg_dict(second))
    assert first.adjusted_overall_level is UNCERTAIN
    assert first.calibration_history.window_size == 8
