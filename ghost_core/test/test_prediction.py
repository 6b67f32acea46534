"""Reference forward predictor (constant velocity) and outcome evaluator (Mahalanobis)."""

from __future__ import annotations

import math

from ghost_core_test import examples as ex
import pytest

from ghost_core.contracts import (
    STATUS_INVALID_OBSERVATION,
    STATUS_NO_OBSERVATION,
    STATUS_NO_PREDICTION,
    STATUS_PAIRED,
)
from ghost_core.errors import ConfigError, ContractError
from ghost_core.prediction import (
    evaluate_outcome,
    MODEL_ID,
    no_observation_outcome,
    no_prediction_outcome,
    outcome_for_cycle,
    predict,
    prediction_from_belief,
)
from ghost_core.samples import BeliefSample, Observation

DIAG = (0.04, 0.0, 0.0, 0.0, 0.04, 0.0, 0.0, 0.0, 0.04)
VEL_DIAG = (1.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 9.0)
I3 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def test_constant_velocity_prediction() -> None:
    """Prediction is p' = p + vΔ, Σ' = Σp + Δ²Σv + QΔ·I, target = stamp + period."""
    prediction = predict(1_000_000_000, 'map', (1.0, 2.0, 3.0), (10.0, -20.0, 0.0), DIAG,
                         VEL_DIAG, 100_000_000, 0.5)
    assert prediction.target_stamp_ns == 1_100_000_000
    assert prediction.predicted_position == pytest.approx((2.0, 0.0, 3.0))
    expected = (0.04 + 0.01 * 1.0 + 0.05, 0.0, 0.0,
                0.0, 0.04 + 0.01 * 4.0 + 0.05, 0.0,
                0.0, 0.0, 0.04 + 0.01 * 9.0 + 0.05)
    assert prediction.position_covariance == pytest.approx(expected)
    assert prediction.model_id == MODEL_ID == 'constant_velocity_v1'
    assert prediction.frame_id == 'map'


@pytest.mark.parametrize(('period_ns', 'q'), [(0, 0.1), (-5, 0.1), (100, -0.1),
                                              (100, math.nan), (100, math.inf)])
def test_bad_prediction_parameters_are_rejected(period_ns: int, q: float) -> None:
    """The period is >= 1 ns and the process noise finite and >= 0."""
    with pytest.raises(ConfigError):
        predict(0, 'map', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), DIAG, DIAG, period_ns, q)


def test_non_finite_belief_cannot_be_predicted() -> None:
    """A NaN position is rejected by predict; prediction_from_belief returns None instead."""
    with pytest.raises(ContractError, match='predicted_position'):
        predict(0, 'map', (math.nan, 0.0, 0.0), (0.0, 0.0, 0.0), DIAG, DIAG, 10, 0.0)
    belief = BeliefSample(0, 'map', (math.nan, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0,) * 36,
                          (0.0,) * 36)
    assert prediction_from_belief(belief, 10, 0.0) is None


def test_prediction_from_belief_uses_its_blocks() -> None:
    """The belief's position block and linear-velocity block feed the prediction."""
    pose = [0.0] * 36
    twist = [0.0] * 36
    for i in (0, 7, 14):
        pose[i] = 0.25
        twist[i] = 100.0
    belief = BeliefSample(5, 'odom', (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), tuple(pose),
                          tuple(twist))
    prediction = prediction_from_belief(belief, 1_000_000_000, 0.0)
    assert prediction is not None
    assert prediction.predicted_position == (1.0, 0.0, 0.0)
    assert prediction.position_covariance[0] == pytest.approx(100.25)


def test_mahalanobis_outcome() -> None:
    """Outcome: e = observed - predicted, S = Σpred + Σobs, d = sqrt(eᵀS⁻¹e)."""
    prediction = ex.prediction()  # at (1, 2, 3) with Σ = 0.01 I
    outcome = evaluate_outcome(prediction, (1.3, 2.4, 3.0),
                               (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), ex.STAMP_NS,
                               'map')
    assert outcome.status == STATUS_PAIRED
    assert outcome.observed
    assert outcome.position_mahalanobis == pytest.approx(5.0)
    assert outcome.orientation_mahalanobis == 0.0
    assert outcome.prediction_stamp_ns == prediction.stamp_ns
    assert outcome.observed_position == (1.3, 2.4, 3.0)


def test_singular_innovation_covariance_gives_infinity() -> None:
    """A singular S gives d = +inf, which is a legitimate observed outcome."""
    prediction = predict(0, 'map', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0,) * 9, (0.0,) * 9,
                         10, 0.0)
    outcome = evaluate_outcome(prediction, (0.0, 0.0, 0.0), (0.0,) * 9, 10, 'map')
    assert outcome.position_mahalanobis == math.inf
    assert outcome.observed


def test_non_finite_observation_covariance_gives_infinity() -> None:
    """A NaN in the observation covariance makes S non-finite: d = +inf."""
    outcome = evaluate_outcome(ex.prediction(), (1.0, 2.0, 3.0), (math.nan, *I3[1:]),
                               ex.STAMP_NS, 'map')
    assert outcome.position_mahalanobis == math.inf


def test_non_finite_observed_position_is_an_invalid_observation() -> None:
    """An observation at NaN is not observed: status invalid_observation, distance 0."""
    outcome = evaluate_outcome(ex.prediction(), (math.nan, 0.0, 0.0), I3, ex.STAMP_NS, 'map')
    assert outcome.status == STATUS_INVALID_OBSERVATION
    assert not outcome.observed
    assert outcome.observed_position == (0.0, 0.0, 0.0)


def test_unobserved_outcome_constructors() -> None:
    """no_prediction and no_observation outcomes are unobserved with zero distances."""
    fix = Observation(ex.STAMP_NS - 10, 'map', (4.0, 5.0, 6.0), I3)
    missing_prediction = no_prediction_outcome(ex.STAMP_NS, 'map', fix)
    assert missing_prediction.status == STATUS_NO_PREDICTION
    assert missing_prediction.prediction_stamp_ns == 0
    assert missing_prediction.observed_position == (4.0, 5.0, 6.0)
    assert missing_prediction.observation_stamp_ns == ex.STAMP_NS - 10
    missing_observation = no_observation_outcome(ex.prediction(), ex.STAMP_NS, 'map')
    assert missing_observation.status == STATUS_NO_OBSERVATION
    assert missing_observation.predicted_position == ex.prediction().predicted_position
    for outcome in (missing_prediction, missing_observation):
        assert not outcome.observed
        assert outcome.position_mahalanobis == outcome.orientation_mahalanobis == 0.0


def test_outcome_for_cycle_picks_the_status() -> None:
    """No prediction wins over no observation; both present means paired."""
    observation = Observation(ex.STAMP_NS, 'map', (1.0, 2.0, 3.0), I3)
    assert outcome_for_cycle(ex.STAMP_NS, 'map', None, None).status == STATUS_NO_PREDICTION
    assert outcome_for_cycle(ex.STAMP_NS, 'map', None, observation).status == \
        STATUS_NO_PREDICTION
    assert outcome_for_cycle(ex.STAMP_NS, 'map', ex.prediction(), None).status == \
        STATUS_NO_OBSERVATION
    paired = outcome_for_cycle(ex.STAMP_NS, 'map', ex.prediction(), observation)
    assert paired.status == STATUS_PAIRED
    assert paired.position_mahalanobis == 0.0


def test_an_outcome_never_precedes_its_prediction() -> None:
    """Evaluating a prediction against an earlier observation violates the contract."""
    with pytest.raises(ContractError, match='not after the prediction stamp'):
        evaluate_outcome(ex.prediction(), (1.0, 2.0, 3.0), I3, 0, 'map')


def test_samples_validate_their_shape() -> None:
    """A belief needs 36-number covariances; an observation a 9-number one."""
    with pytest.raises(ContractError, match='pose_covariance'):
        BeliefSample(0, 'map', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0,) * 35, (0.0,) * 36)
    with pytest.raises(ContractError, match='covariance'):
        Observation(0, 'map', (0.0, 0.0, 0.0), (0.0,) * 8)
    pose = tuple(float(i) for i in range(36))
    observation = Observation.from_pose_covariance(0, 'map', (0.0, 0.0, 0.0), pose)
    assert observation.covariance == (0.0, 1.0, 2.0, 6.0, 7.0, 8.0, 12.0, 13.0, 14.0)
