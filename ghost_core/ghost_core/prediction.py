"""Reference forward predictor (constant velocity) and outcome evaluator (Mahalanobis)."""

from __future__ import annotations

from collections.abc import Sequence
import math

from ghost_core.contracts import (
    ForwardPrediction,
    PredictionOutcome,
    STATUS_FRAME_MISMATCH,
    STATUS_INVALID_OBSERVATION,
    STATUS_NO_OBSERVATION,
    STATUS_NO_PREDICTION,
    STATUS_PAIRED,
    Vec3,
)
from ghost_core.errors import ConfigError, ContractError
from ghost_core.linalg import add3, covariance_defect, identity3, mahalanobis, scale3
from ghost_core.samples import BeliefSample, Observation

__all__ = [
    'MODEL_ID',
    'evaluate_outcome',
    'invalid_observation_outcome',
    'no_observation_outcome',
    'no_prediction_outcome',
    'outcome_for_cycle',
    'predict',
    'prediction_from_belief',
]

#: model_id of the reference forward predictor.
MODEL_ID = 'constant_velocity_v1'

_ZERO3: Vec3 = (0.0, 0.0, 0.0)
_NS_PER_S = 1e9


def _vec3(name: str, value: Sequence[float]) -> Vec3:
    if len(value) != 3:
        raise ContractError(f'{name} must be 3 numbers, got {value!r}')
    return (float(value[0]), float(value[1]), float(value[2]))


def _mat3(name: str, value: Sequence[float]) -> tuple[float, ...]:
    if len(value) != 9:
        raise ContractError(f'{name} must be 9 numbers (3x3 row-major), got {value!r}')
    return tuple(float(x) for x in value)


def predict(
    stamp_ns: int,
    frame_id: str,
    position: Sequence[float],
    velocity: Sequence[float],
    position_cov: Sequence[float],
    velocity_cov: Sequence[float],
    period_ns: int,
    process_noise_q: float,
) -> ForwardPrediction:
    """Return the constant-velocity prediction of the position one period ahead (pure).

    With Δ = period_ns in seconds: p' = p + vΔ and Σ' = Σp + Δ²Σv + QΔ·I, where Q
    (m²/s, per axis, the same on x, y, z) is white process noise on the velocity integrated
    over Δ: it covers accelerations the constant-velocity model does not represent. The
    target is stamp_ns + period_ns: Δ is the configured period of the next cycle, not a
    measured one, so that predictions are reproducible from the configuration alone.
    Covariances are 3x3 row-major. Non-finite inputs raise ContractError (a prediction must
    name a finite point); callers skip the prediction instead (see prediction_from_belief).
    """
    if isinstance(period_ns, bool) or not isinstance(period_ns, int) or period_ns < 1:
        raise ConfigError(f'period_ns must be an integer >= 1, got {period_ns!r}')
    if (isinstance(process_noise_q, bool) or not isinstance(process_noise_q, (int, float))
            or not math.isfinite(process_noise_q) or process_noise_q < 0.0):
        raise ConfigError(f'process_noise_q must be a finite number >= 0, got {process_noise_q!r}')
    p = _vec3('position', position)
    v = _vec3('velocity', velocity)
    delta = period_ns / _NS_PER_S
    covariance = add3(
        _mat3('position_cov', position_cov),
        scale3(delta * delta, _mat3('velocity_cov', velocity_cov)),
        scale3(float(process_noise_q) * delta, identity3()),
    )
    return ForwardPrediction(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        target_stamp_ns=stamp_ns + period_ns,
        predicted_position=(p[0] + v[0] * delta, p[1] + v[1] * delta, p[2] + v[2] * delta),
        position_covariance=covariance,
        model_id=MODEL_ID,
    )


def prediction_from_belief(
    belief: BeliefSample, period_ns: int, process_noise_q: float
) -> ForwardPrediction | None:
    """Return the prediction made from `belief`, or None when the belief is not finite.

    A belief with NaN/inf in its position, velocity or their covariance blocks predicts
    nothing; the next cycle's outcome is then `no_prediction`.
    """
    if not belief.is_predictable:
        return None
    return predict(belief.stamp_ns, belief.frame_id, belief.position, belief.velocity,
                   belief.position_covariance, belief.velocity_covariance, period_ns,
                   process_noise_q)


def evaluate_outcome(
    prediction: ForwardPrediction,
    observed_position: Sequence[float],
    observation_cov: Sequence[float],
    stamp_ns: int,
    frame_id: str,
) -> PredictionOutcome:
    """Return the outcome of pairing `prediction` with an observation of cycle `stamp_ns`.

    e = observed - predicted, S = Σpred + Σobs, d = sqrt(eᵀS⁻¹e). An S that is singular,
    not finite, asymmetric or not positive definite gives d = +inf: the error cannot be
    weighed against the claimed uncertainty, which is itself a calibration failure. An
    observed position that is not finite gives an `invalid_observation` outcome, which is
    not observed. Orientation is not predicted, so orientation_mahalanobis is 0.0.
    """
    observed = _vec3('observed_position', observed_position)
    if not all(math.isfinite(x) for x in observed):
        return invalid_observation_outcome(prediction, stamp_ns, frame_id)
    predicted = prediction.predicted_position
    error = (observed[0] - predicted[0], observed[1] - predicted[1], observed[2] - predicted[2])
    covariance = add3(prediction.position_covariance, _mat3('observation_cov', observation_cov))
    return PredictionOutcome(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        prediction_stamp_ns=prediction.stamp_ns,
        observed=True,
        status=STATUS_PAIRED,
        predicted_position=predicted,
        observed_position=observed,
        position_mahalanobis=mahalanobis(error, covariance),
        orientation_mahalanobis=0.0,
    )


def no_prediction_outcome(
    stamp_ns: int, frame_id: str, observed_position: Sequence[float] | None = None
) -> PredictionOutcome:
    """Return the (unobserved) outcome of a cycle that no prediction targeted.

    The observation, when there is one and it is finite, is recorded for the audit trail.
    """
    observed = _ZERO3
    if observed_position is not None:
        candidate = _vec3('observed_position', observed_position)
        if all(math.isfinite(x) for x in candidate):
            observed = candidate
    return PredictionOutcome(stamp_ns, frame_id, 0, False, STATUS_NO_PREDICTION, _ZERO3,
                             observed, 0.0, 0.0)


def no_observation_outcome(
    prediction: ForwardPrediction, stamp_ns: int, frame_id: str
) -> PredictionOutcome:
    """Return the (unobserved) outcome of a cycle that had a prediction but no observation."""
    return PredictionOutcome(stamp_ns, frame_id, prediction.stamp_ns, False,
                             STATUS_NO_OBSERVATION, prediction.predicted_position, _ZERO3,
                             0.0, 0.0)


def invalid_observation_outcome(
    prediction: ForwardPrediction, stamp_ns: int, frame_id: str,
    status: str = STATUS_INVALID_OBSERVATION,
) -> PredictionOutcome:
    """Return the (unobserved) outcome of a cycle whose observation cannot be used.

    `status` says why: invalid_observation (a position that is not finite, or a covariance
    that is not one) or frame_mismatch (the fix is in another frame than the prediction).
    Such an observation is no evidence either way: it never enters a calibration history.
    """
    return PredictionOutcome(stamp_ns, frame_id, prediction.stamp_ns, False, status,
                             prediction.predicted_position, _ZERO3, 0.0, 0.0)


def outcome_for_cycle(
    stamp_ns: int,
    frame_id: str,
    prediction: ForwardPrediction | None,
    observation: Observation | None,
) -> PredictionOutcome:
    """Return the one outcome of cycle `stamp_ns`, whatever arrived for it.

    `prediction` is the one whose target is this cycle (None if there is none); `observation`
    is this cycle's observation (None if there is none). No prediction takes precedence:
    `no_prediction`; else no observation: `no_observation`; else an observation in another
    frame than the prediction: `frame_mismatch`; else one whose position is not finite or
    whose covariance block is not a covariance (NaN/inf, negative variance, asymmetric, not
    positive semi-definite): `invalid_observation`; else `evaluate_outcome`.
    """
    if prediction is None:
        return no_prediction_outcome(
            stamp_ns, frame_id, None if observation is None else observation.position)
    if observation is None:
        return no_observation_outcome(prediction, stamp_ns, frame_id)
    if observation.frame_id != prediction.frame_id:
        return invalid_observation_outcome(prediction, stamp_ns, frame_id,
                                           STATUS_FRAME_MISMATCH)
    if covariance_defect(observation.covariance) is not None:
        return invalid_observation_outcome(prediction, stamp_ns, frame_id)
    return evaluate_outcome(prediction, observation.position, observation.covariance,
                            stamp_ns, frame_id)
