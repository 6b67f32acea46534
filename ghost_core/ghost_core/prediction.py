"""Reference forward predictor (constant velocity) and outcome evaluator (Mahalanobis)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

from ghost_core.agent_parameters import declared
from ghost_core.contracts import (
    ForwardPrediction,
    Mat3,
    PredictionOutcome,
    STATUS_FRAME_MISMATCH,
    STATUS_INVALID_OBSERVATION,
    STATUS_NO_MEASURED_AXIS,
    STATUS_NO_OBSERVATION,
    STATUS_NO_OBSERVATION_COVARIANCE,
    STATUS_NO_PREDICTION,
    STATUS_PAIRED,
    Vec3,
)
from ghost_core.distances import normalised_distance
from ghost_core.errors import ConfigError, ContractError
from ghost_core.geometry import (
    add3,
    covariance_defect,
    identity3,
    scale3,
    squared_mahalanobis,
    sub_block,
)
from ghost_core.samples import BeliefSample, has_no_covariance_information, Observation

__all__ = [
    'DEFAULT_MAX_OBSERVATION_LAG_NS',
    'DEFAULT_UNMEASURED_VARIANCE_M2',
    'MODEL_ID',
    'EvaluatorConfig',
    'measured_axes',
    'propagate',
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

#: An observation axis whose variance exceeds this (m²) is not measured; the outcome
#: evaluator's declared ``unmeasured_variance_m2`` (ghost_core.agent_parameters says why).
DEFAULT_UNMEASURED_VARIANCE_M2: float = declared('outcome_evaluator', 'unmeasured_variance_m2')
#: How long after a cycle's stamp its fix may still arrive (GNSS is typically ~110 ms late):
#: the outcome evaluator's declared ``max_observation_lag_s``.
DEFAULT_MAX_OBSERVATION_LAG_NS = round(declared('outcome_evaluator', 'max_observation_lag_s')
                                       * 1e9)


@dataclass(frozen=True, slots=True)
class EvaluatorConfig:
    """Outcome evaluator settings (recorded with the configuration Ghost ran with).

    unmeasured_variance_m2: an observation axis with a larger variance counts as not measured
    (finite, > 0). max_observation_lag_ns: a cycle's outcome waits for fixes stamped in its
    window until a belief stamped this much later than the cycle has arrived (integer >= 0).
    """

    unmeasured_variance_m2: float = DEFAULT_UNMEASURED_VARIANCE_M2
    max_observation_lag_ns: int = DEFAULT_MAX_OBSERVATION_LAG_NS

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        bound = self.unmeasured_variance_m2
        if (isinstance(bound, bool) or not isinstance(bound, (int, float))
                or not math.isfinite(bound) or bound <= 0.0):
            raise ConfigError(f'EvaluatorConfig.unmeasured_variance_m2 must be a finite '
                              f'number > 0, got {bound!r}')
        object.__setattr__(self, 'unmeasured_variance_m2', float(bound))
        lag = self.max_observation_lag_ns
        if isinstance(lag, bool) or not isinstance(lag, int) or lag < 0:
            raise ConfigError(f'EvaluatorConfig.max_observation_lag_ns must be an integer '
                              f'>= 0, got {lag!r}')

    def to_dict(self) -> dict[str, float | int]:
        """Return the settings as a plain dict (for the recorded configuration)."""
        return {'max_observation_lag_ns': self.max_observation_lag_ns,
                'unmeasured_variance_m2': self.unmeasured_variance_m2}


_DEFAULT_EVALUATOR = EvaluatorConfig()


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
        origin_position=p,
        velocity=v,
        origin_position_covariance=_mat3('position_cov', position_cov),
        velocity_covariance=_mat3('velocity_cov', velocity_cov),
        process_noise=float(process_noise_q),
    )


def propagate(prediction: ForwardPrediction, stamp_ns: int) -> tuple[Vec3, Mat3]:
    """Return the predicted position and covariance at `stamp_ns` (> prediction.stamp_ns).

    At the prediction's own target the published values are returned as they are (so a fix on
    the cycle stamp is compared exactly as before asynchronous fixes existed); elsewhere the
    same constant-velocity model is applied with Δ = stamp_ns - prediction.stamp_ns.
    """
    if stamp_ns == prediction.target_stamp_ns:
        return prediction.predicted_position, prediction.position_covariance
    if stamp_ns <= prediction.stamp_ns:
        raise ContractError(f'propagate: stamp {stamp_ns} is not after the prediction stamp '
                            f'{prediction.stamp_ns}')
    delta = (stamp_ns - prediction.stamp_ns) / _NS_PER_S
    p, v = prediction.origin_position, prediction.velocity
    covariance = add3(
        prediction.origin_position_covariance,
        scale3(delta * delta, prediction.velocity_covariance),
        scale3(prediction.process_noise * delta, identity3()),
    )
    return (p[0] + v[0] * delta, p[1] + v[1] * delta, p[2] + v[2] * delta), covariance


def measured_axes(observation_cov: Sequence[float], bound_m2: float) -> tuple[int, ...]:
    """Return the axes (0 = x, 1 = y, 2 = z) whose observation variance is <= `bound_m2`."""
    return tuple(axis for axis in range(3) if observation_cov[4 * axis] <= bound_m2)


def prediction_from_belief(
    belief: BeliefSample, period_ns: int, process_noise_q: float
) -> ForwardPrediction | None:
    """Return the prediction made from `belief`, or None when the belief is not finite.

    A belief with NaN/inf in its position, velocity or their covariance blocks predicts
    nothing, nor does one whose prediction would overflow; the next cycle's outcome is then
    `no_prediction`.
    """
    if not belief.is_predictable:
        return None
    try:
        return predict(belief.stamp_ns, belief.frame_id, belief.position, belief.velocity,
                       belief.position_covariance, belief.velocity_covariance, period_ns,
                       process_noise_q)
    except ContractError:
        # Finite inputs whose prediction overflows (e.g. a position of 1e308 moving fast):
        # nothing finite can be predicted either.
        return None


def evaluate_outcome(
    prediction: ForwardPrediction,
    observed_position: Sequence[float],
    observation_cov: Sequence[float],
    stamp_ns: int,
    frame_id: str,
    observation_stamp_ns: int | None = None,
    config: EvaluatorConfig = _DEFAULT_EVALUATOR,
) -> PredictionOutcome:
    """Return the outcome of pairing `prediction` with an observation of cycle `stamp_ns`.

    The prediction is propagated to the fix's own stamp (`observation_stamp_ns`, default the
    cycle stamp). On the measured axes A (observation variance <= the configured bound):
    e = observed - predicted, S = Σpred + Σobs, d = sqrt(e_Aᵀ S_AA⁻¹ e_A) with n = |A| degrees
    of freedom, solved by Cholesky; an S that is not finite, asymmetric, not positive
    semi-definite or numerically not positive definite gives d = +inf (the error cannot be
    weighed against the claimed uncertainty, itself a calibration failure). The outcome
    carries d, n and the normalised distance (distances.normalised_distance). An observed
    position that is not finite gives `invalid_observation`; a fix without any measured axis
    `no_measured_axis`; neither is observed. Orientation is not predicted:
    orientation_mahalanobis is 0.0.
    """
    observed = _vec3('observed_position', observed_position)
    fix_stamp = stamp_ns if observation_stamp_ns is None else observation_stamp_ns
    if not all(math.isfinite(x) for x in observed):
        return invalid_observation_outcome(prediction, stamp_ns, frame_id,
                                           STATUS_INVALID_OBSERVATION, fix_stamp)
    obs_cov = _mat3('observation_cov', observation_cov)
    axes = measured_axes(obs_cov, config.unmeasured_variance_m2)
    if not axes:
        return invalid_observation_outcome(prediction, stamp_ns, frame_id,
                                           STATUS_NO_MEASURED_AXIS, fix_stamp)
    predicted, predicted_cov = propagate(prediction, fix_stamp)
    error = tuple(observed[i] - predicted[i] for i in axes)
    covariance = add3(predicted_cov, obs_cov)
    if covariance_defect(covariance) is not None:
        distance = math.inf
    else:
        distance = math.sqrt(squared_mahalanobis(error, sub_block(covariance, axes)))
    return PredictionOutcome(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        prediction_stamp_ns=prediction.stamp_ns,
        observed=True,
        status=STATUS_PAIRED,
        predicted_position=predicted,
        observed_position=observed,
        position_mahalanobis=distance,
        orientation_mahalanobis=0.0,
        observation_stamp_ns=fix_stamp,
        position_axes_compared=len(axes),
        position_normalised_distance=normalised_distance(distance, len(axes)),
    )


def no_prediction_outcome(
    stamp_ns: int, frame_id: str, observation: Observation | None = None
) -> PredictionOutcome:
    """Return the (unobserved) outcome of a cycle that no prediction targeted.

    The observation, when there is one, is recorded for the audit trail: its stamp, and its
    position when that is finite.
    """
    if observation is None:
        return PredictionOutcome(stamp_ns, frame_id, 0, False, STATUS_NO_PREDICTION, _ZERO3,
                                 _ZERO3, 0.0, 0.0)
    candidate = _vec3('observed_position', observation.position)
    observed = candidate if all(math.isfinite(x) for x in candidate) else _ZERO3
    return PredictionOutcome(stamp_ns, frame_id, 0, False, STATUS_NO_PREDICTION, _ZERO3,
                             observed, 0.0, 0.0, observation_stamp_ns=observation.stamp_ns)


def no_observation_outcome(
    prediction: ForwardPrediction, stamp_ns: int, frame_id: str
) -> PredictionOutcome:
    """Return the (unobserved) outcome of a cycle that had a prediction but no observation."""
    return PredictionOutcome(stamp_ns, frame_id, prediction.stamp_ns, False,
                             STATUS_NO_OBSERVATION, prediction.predicted_position, _ZERO3,
                             0.0, 0.0)


def invalid_observation_outcome(
    prediction: ForwardPrediction, stamp_ns: int, frame_id: str,
    status: str = STATUS_INVALID_OBSERVATION, observation_stamp_ns: int = 0,
) -> PredictionOutcome:
    """Return the (unobserved) outcome of a cycle whose observation cannot be used.

    `status` says why: invalid_observation (a position that is not finite, or a covariance
    that is not one), frame_mismatch (the fix is in another frame than the prediction),
    no_observation_covariance (the fix declares no uncertainty) or no_measured_axis (every
    axis is beyond the unmeasured bound). Such an observation is no evidence either way: it
    never enters a calibration history.
    """
    return PredictionOutcome(stamp_ns, frame_id, prediction.stamp_ns, False, status,
                             prediction.predicted_position, _ZERO3, 0.0, 0.0,
                             observation_stamp_ns=observation_stamp_ns)


def outcome_for_cycle(
    stamp_ns: int,
    frame_id: str,
    prediction: ForwardPrediction | None,
    observation: Observation | None,
    config: EvaluatorConfig = _DEFAULT_EVALUATOR,
) -> PredictionOutcome:
    """Return the one outcome of cycle `stamp_ns`, whatever arrived for it.

    `prediction` is the one made at the previous cycle (None if there is none); `observation`
    is the fix attributed to this cycle (stamped after the previous cycle and no later than
    this one; None if there is none). No prediction takes precedence: `no_prediction`; else
    no observation: `no_observation`; else an observation in another frame than the
    prediction: `frame_mismatch`; else one that declares no uncertainty (all-zero covariance
    or the -1 sentinel): `no_observation_covariance`; else one whose position is not finite or
    whose covariance block is not a covariance (NaN/inf, negative variance, asymmetric, not
    positive semi-definite): `invalid_observation`; else `evaluate_outcome` at the fix's stamp.
    """
    if prediction is None:
        return no_prediction_outcome(stamp_ns, frame_id, observation)
    if observation is None:
        return no_observation_outcome(prediction, stamp_ns, frame_id)
    fix_stamp = observation.stamp_ns
    if observation.frame_id != prediction.frame_id:
        return invalid_observation_outcome(prediction, stamp_ns, frame_id,
                                           STATUS_FRAME_MISMATCH, fix_stamp)
    if has_no_covariance_information(observation.covariance):
        return invalid_observation_outcome(prediction, stamp_ns, frame_id,
                                           STATUS_NO_OBSERVATION_COVARIANCE, fix_stamp)
    if covariance_defect(observation.covariance) is not None:
        return invalid_observation_outcome(prediction, stamp_ns, frame_id,
                                           STATUS_INVALID_OBSERVATION, fix_stamp)
    if fix_stamp <= prediction.stamp_ns:
        # Only a sequencing error could pair a fix with a prediction made after it.
        raise ContractError(f'outcome_for_cycle: fix stamp {fix_stamp} is not after the '
                            f'prediction stamp {prediction.stamp_ns}')
    return evaluate_outcome(prediction, observation.position, observation.covariance,
                            stamp_ns, frame_id, fix_stamp, config)
