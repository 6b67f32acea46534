"""Garbage in a belief or an observation never yields KNOWN, nor counts as evidence."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.assessment import assess_belief_sample
from ghost_core.calibration import build_calibration_history
from ghost_core.contracts import STATUS_FRAME_MISMATCH, STATUS_INVALID_OBSERVATION
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.prediction import outcome_for_cycle, predict
from ghost_core.samples import BeliefSample, Observation

GOOD_POSE = tuple(0.01 if i in (0, 7, 14, 21, 28, 35) else 0.0 for i in range(36))
BAD = (math.nan, math.inf, -math.inf)


def _belief(**changes: object) -> BeliefSample:
    fields: dict[str, object] = dict(stamp_ns=1, frame_id='map', position=(0.0, 0.0, 10.0),
                                     velocity=(1.0, 0.0, 0.0), pose_covariance=GOOD_POSE,
                                     twist_covariance=GOOD_POSE)
    fields.update(changes)
    return BeliefSample(**fields)  # type: ignore[arg-type]


def test_a_clean_belief_is_known() -> None:
    assert assess_belief_sample(_belief()).overall_level == SelfAssessmentLevel.KNOWN


@pytest.mark.parametrize('bad', BAD)
@pytest.mark.parametrize(('field', 'block', 'reason'), [
    ('position', 'position', 'non_finite_position'),
    ('velocity', 'velocity', 'non_finite_velocity'),
])
def test_non_finite_state_is_unknown_with_a_reason(bad, field, block, reason) -> None:
    assessment = assess_belief_sample(_belief(**{field: (0.0, bad, 0.0)}))
    assert assessment.overall_level == SelfAssessmentLevel.UNKNOWN
    assert getattr(assessment, block).reason == reason


@pytest.mark.parametrize('q', [(0.0, 0.0, 0.0, 0.0), (math.nan, 0.0, 0.0, 1.0)])
def test_invalid_orientation_is_unknown(q) -> None:
    assessment = assess_belief_sample(_belief(orientation_xyzw=q))
    assert assessment.orientation.reason == 'invalid_orientation'
    assert assessment.overall_level == SelfAssessmentLevel.UNKNOWN


@settings(max_examples=200, deadline=None)
@given(index=st.integers(0, 35), value=st.sampled_from([*BAD, -1.0, -1e-3]),
       which=st.sampled_from(['pose_covariance', 'twist_covariance']))
def test_garbage_covariance_entry_is_never_known(index, value, which) -> None:
    """Any NaN/inf, or a negative diagonal entry, in a judged block: never KNOWN."""
    cov = list(GOOD_POSE)
    cov[index] = value
    row, col = divmod(index, 6)
    judged = (which == 'pose_covariance' and (row < 3) == (col < 3)) or (
        which == 'twist_covariance' and row < 3 and col < 3)
    assessment = assess_belief_sample(_belief(**{which: tuple(cov)}))
    if judged and (not math.isfinite(value) or row == col):
        assert assessment.overall_level == SelfAssessmentLevel.UNKNOWN


def _prediction():
    eye = (0.01, 0.0, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 0.01)
    return predict(0, 'map', (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), eye, eye, 100_000_000, 0.05)


def test_an_observation_in_another_frame_is_no_evidence() -> None:
    obs = Observation(100_000_000, 'odom', (0.1, 0.0, 0.0), (0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01))
    outcome = outcome_for_cycle(100_000_000, 'map', _prediction(), obs)
    assert outcome.status == STATUS_FRAME_MISMATCH and not outcome.observed
    assert build_calibration_history([outcome], 8).outcomes_considered == 0


@pytest.mark.parametrize('cov', [
    (math.nan, 0, 0, 0, 0.01, 0, 0, 0, 0.01),      # not finite
    (-0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01),         # negative variance
    (0.01, 0.5, 0, 0.5, 0.01, 0, 0, 0, 0.01),      # not positive semi-definite
])
def test_an_observation_with_a_bad_covariance_is_no_evidence(cov) -> None:
    obs = Observation(100_000_000, 'map', (0.1, 0.0, 0.0), cov)
    outcome = outcome_for_cycle(100_000_000, 'map', _prediction(), obs)
    assert outcome.status == STATUS_INVALID_OBSERVATION and not outcome.observed


def test_an_observation_with_a_non_finite_position_is_no_evidence() -> None:
    obs = Observation(100_000_000, 'map', (math.inf, 0.0, 0.0),
                      (0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01))
    outcome = outcome_for_cycle(100_000_000, 'map', _prediction(), obs)
    assert outcome.status == STATUS_INVALID_OBSERVATION and not outcome.observed
