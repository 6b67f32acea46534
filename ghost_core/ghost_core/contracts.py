"""Frozen contracts: one per ghost message, plus the DecisionContext a policy decides from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
import numbers
import struct
from typing import Protocol

from ghost_core import _checks as check
from ghost_core.distances import MAX_AXES, normalised_distance
from ghost_core.gate import (
    GateAction,
    GateReason,
    VEHICLE_CMD_NAV_LAND,
    VEHICLE_CMD_NAV_RETURN_TO_LAUNCH,
)
from ghost_core.levels import ActuatorCommandKind, DecisionKind, SelfAssessmentLevel, worst_level

__all__ = [
    'OUTCOME_STATUSES',
    'SCHEMA_VERSION',
    'STATUS_FRAME_MISMATCH',
    'STATUS_INVALID_OBSERVATION',
    'STATUS_NO_MEASURED_AXIS',
    'STATUS_NO_OBSERVATION',
    'STATUS_NO_OBSERVATION_COVARIANCE',
    'STATUS_NO_PREDICTION',
    'STATUS_PAIRED',
    'ActionEmission',
    'ActuatorCommand',
    'AxisAssessment',
    'BeliefSelfAssessment',
    'CalibratedSelfAssessment',
    'CalibrationHistory',
    'Decision',
    'DecisionContext',
    'DecisionRationale',
    'ForwardPrediction',
    'GATE_MODES',
    'GateEmission',
    'Mat3',
    'PredictionOutcome',
    'SetpointVec3',
    'Vec3',
]

SCHEMA_VERSION = check.SCHEMA_VERSION

#: A 3-vector (m, m/s or rad).
Vec3 = tuple[float, float, float]
#: A 3x3 matrix as 9 floats, row-major (the layout of ForwardPrediction.position_covariance).
Mat3 = tuple[float, ...]

ZERO3: Vec3 = (0.0, 0.0, 0.0)
#: A PX4 setpoint 3-vector (GateEmission.position, velocity): float32 values, None where the
#: axis is not controlled (NaN on the wire).
SetpointVec3 = tuple[float | None, float | None, float | None]

#: PredictionOutcome.status values (closed): only `paired` outcomes are observed.
STATUS_PAIRED = 'paired'
STATUS_NO_OBSERVATION = 'no_observation'
STATUS_NO_PREDICTION = 'no_prediction'
STATUS_INVALID_OBSERVATION = 'invalid_observation'
STATUS_FRAME_MISMATCH = 'frame_mismatch'
#: The fix declares no uncertainty (all-zero covariance or ROS's -1 sentinel): no evidence.
STATUS_NO_OBSERVATION_COVARIANCE = 'no_observation_covariance'
#: Every axis of the fix has a variance above the evaluator's bound: nothing was measured.
STATUS_NO_MEASURED_AXIS = 'no_measured_axis'
OUTCOME_STATUSES: frozenset[str] = frozenset(
    {STATUS_PAIRED, STATUS_NO_OBSERVATION, STATUS_NO_PREDICTION, STATUS_INVALID_OBSERVATION,
     STATUS_FRAME_MISMATCH, STATUS_NO_OBSERVATION_COVARIANCE, STATUS_NO_MEASURED_AXIS}
)
# Statuses whose outcome records no observed position (the fix was absent or unusable).
_NO_OBSERVED_POSITION = frozenset(
    {STATUS_NO_OBSERVATION, STATUS_INVALID_OBSERVATION, STATUS_FRAME_MISMATCH,
     STATUS_NO_OBSERVATION_COVARIANCE, STATUS_NO_MEASURED_AXIS})
# Recorded normalised distances are recomputed by whoever reads them; a libm that rounds one
# ulp differently must not make an honest outcome invalid.
_NORMALISED_TOLERANCE = 1e-9
# ... nor one whose series underflows differently near zero (z ~ 1e-300 is 0 for every bin).
_NORMALISED_FLOOR = 1e-300

# Frozen dataclasses normalise their own fields (int -> float, list -> tuple, int -> enum) once,
# in __post_init__, so that the wire layer can rely on exact Python types.
_set = object.__setattr__


class _Stamped(Protocol):
    @property
    def stamp_ns(self) -> int: ...

    @property
    def frame_id(self) -> str: ...


def _header(self: _Stamped, owner: str) -> None:
    _set(self, 'stamp_ns', check.stamp(owner, 'stamp_ns', self.stamp_ns))
    _set(self, 'frame_id', check.text(owner, 'frame_id', self.frame_id))


@dataclass(frozen=True, slots=True)
class AxisAssessment:
    """Self-assessment of one block of the belief (position, velocity or orientation).

    Invariants: `level` is a SelfAssessmentLevel; `max_std` is finite and >= 0 (0.0 when the
    covariance is invalid); `reason` is a taxonomy string.
    """

    level: SelfAssessmentLevel
    max_std: float
    reason: str

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'AxisAssessment'
        _set(self, 'level', check.enum_member(owner, 'level', self.level, SelfAssessmentLevel))
        _set(self, 'max_std', check.finite_float(owner, 'max_std', self.max_std, 0.0))
        _set(self, 'reason', check.taxonomy(owner, 'reason', self.reason))


@dataclass(frozen=True, slots=True)
class BeliefSelfAssessment:
    """What the agent thinks of its own belief for one cycle (raw, before calibration).

    Invariants: stamp_ns >= 0; `overall_level` is the worst of the three blocks;
    `thresholds_sha256` is a content address; `assessor_id` a taxonomy string;
    `schema_version` is 1.
    """

    stamp_ns: int
    frame_id: str
    overall_level: SelfAssessmentLevel
    position: AxisAssessment
    velocity: AxisAssessment
    orientation: AxisAssessment
    thresholds_sha256: str
    assessor_id: str
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'BeliefSelfAssessment'
        _header(self, owner)
        for name in ('position', 'velocity', 'orientation'):
            check.instance(owner, name, getattr(self, name), AxisAssessment)
        overall = check.enum_member(
            owner, 'overall_level', self.overall_level, SelfAssessmentLevel
        )
        worst = worst_level(self.position.level, self.velocity.level, self.orientation.level)
        if overall != worst:
            raise check.failure(
                owner, 'overall_level', f'the worst block level ({worst.name})', overall
            )
        _set(self, 'overall_level', overall)
        _set(self, 'thresholds_sha256', check.sha256(owner, 'thresholds_sha256',
                                                     self.thresholds_sha256))
        _set(self, 'assessor_id', check.taxonomy(owner, 'assessor_id', self.assessor_id))
        _set(self, 'schema_version', check.schema_version(owner, self.schema_version))


@dataclass(frozen=True, slots=True)
class ForwardPrediction:
    """A predicted position (and its covariance) for a later cycle, and the state it came from.

    The origin state (position, velocity, their covariances and the process noise) lets the
    outcome evaluator propagate the prediction to a fix's own stamp (asynchronous fixes,
    SPEC §5 v1.1) with the same model: p(τ) = p + vΔ, Σ(τ) = Σp + Δ²Σv + QΔ·I, Δ = τ - stamp.
    Invariants: stamps >= 0 and target_stamp_ns > stamp_ns; positions and velocity are 3
    finite floats; covariances are 9 finite floats (3x3 row-major); process_noise is finite
    and >= 0; `model_id` is a taxonomy string.
    """

    stamp_ns: int
    frame_id: str
    target_stamp_ns: int
    predicted_position: Vec3
    position_covariance: Mat3
    model_id: str
    origin_position: Vec3 = ZERO3
    velocity: Vec3 = ZERO3
    origin_position_covariance: Mat3 = (0.0,) * 9
    velocity_covariance: Mat3 = (0.0,) * 9
    process_noise: float = 0.0
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'ForwardPrediction'
        _header(self, owner)
        target = check.stamp(owner, 'target_stamp_ns', self.target_stamp_ns)
        if target <= self.stamp_ns:
            raise check.failure(
                owner, 'target_stamp_ns', f'later than stamp_ns ({self.stamp_ns})', target
            )
        _set(self, 'target_stamp_ns', target)
        for name in ('predicted_position', 'origin_position', 'velocity'):
            _set(self, name, check.vector(owner, name, getattr(self, name), 3))
        for name in ('position_covariance', 'origin_position_covariance',
                     'velocity_covariance'):
            _set(self, name, check.vector(owner, name, getattr(self, name), 9))
        _set(self, 'process_noise',
             check.finite_float(owner, 'process_noise', self.process_noise, 0.0))
        _set(self, 'model_id', check.taxonomy(owner, 'model_id', self.model_id))
        _set(self, 'schema_version', check.schema_version(owner, self.schema_version))


@dataclass(frozen=True, slots=True)
class PredictionOutcome:
    """How the prediction targeting a cycle compared with that cycle's observation.

    Invariants: `status` is one of OUTCOME_STATUSES and `observed` is True exactly when it is
    `paired`; distances are >= 0 and never NaN (+inf is legitimate), and 0.0 when not observed;
    without a prediction, prediction_stamp_ns is 0 and predicted_position zeros; without a
    (valid) observation, observed_position is zeros; a prediction is never later than the
    outcome (prediction_stamp_ns <= stamp_ns). Dimension (SPEC §5 v1.1): an observed outcome
    compared 1..3 position axes (`position_axes_compared`) and carries
    `position_normalised_distance` = normalised_distance(position_mahalanobis, axes) (to
    1e-9 relative); an outcome that is not observed compared 0 axes and both are 0. The fix's
    own stamp (`observation_stamp_ns`) is 0 without an observation and otherwise no later than
    the cycle it belongs to.
    """

    stamp_ns: int
    frame_id: str
    prediction_stamp_ns: int
    observed: bool
    status: str
    predicted_position: Vec3
    observed_position: Vec3
    position_mahalanobis: float
    orientation_mahalanobis: float
    observation_stamp_ns: int = 0
    position_axes_compared: int = 0
    position_normalised_distance: float = 0.0
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'PredictionOutcome'
        _header(self, owner)
        prediction_stamp = check.stamp(owner, 'prediction_stamp_ns', self.prediction_stamp_ns)
        observed = check.boolean(owner, 'observed', self.observed)
        status = check.taxonomy(owner, 'status', self.status)
        if status not in OUTCOME_STATUSES:
            raise check.failure(owner, 'status', f'one of {sorted(OUTCOME_STATUSES)}', status)
        if observed != (status == STATUS_PAIRED):
            raise check.failure(owner, 'observed', f'{status == STATUS_PAIRED} when status is '
                                f'{status!r}', observed)
        predicted = check.vector(owner, 'predicted_position', self.predicted_position, 3)
        observed_position = check.vector(
            owner, 'observed_position', self.observed_position, 3
        )
        position_d = check.distance(owner, 'position_mahalanobis', self.position_mahalanobis)
        orientation_d = check.distance(
            owner, 'orientation_mahalanobis', self.orientation_mahalanobis
        )
        axes = check.integer(owner, 'position_axes_compared', self.position_axes_compared,
                             0, MAX_AXES)
        normalised = check.distance(owner, 'position_normalised_distance',
                                    self.position_normalised_distance)
        observation_stamp = check.stamp(owner, 'observation_stamp_ns',
                                        self.observation_stamp_ns)
        if observation_stamp > self.stamp_ns:
            raise check.failure(owner, 'observation_stamp_ns', f'<= stamp_ns ({self.stamp_ns})',
                                observation_stamp)
        if not observed:
            for name, value in (('position_mahalanobis', position_d),
                                ('orientation_mahalanobis', orientation_d),
                                ('position_axes_compared', axes),
                                ('position_normalised_distance', normalised)):
                if value != 0:
                    raise check.failure(owner, name, '0 when not observed', value)
        else:
            if axes < 1:
                raise check.failure(owner, 'position_axes_compared', '1..3 when observed', axes)
            expected = normalised_distance(position_d, axes)
            if not (normalised == expected or abs(normalised - expected)
                    <= _NORMALISED_TOLERANCE * expected + _NORMALISED_FLOOR):
                raise check.failure(
                    owner, 'position_normalised_distance',
                    f'normalised_distance({position_d!r}, {axes}) = {expected!r}', normalised)
        if status == STATUS_NO_PREDICTION:
            if prediction_stamp != 0:
                raise check.failure(owner, 'prediction_stamp_ns', '0 without a prediction',
                                    prediction_stamp)
            if predicted != ZERO3:
                raise check.failure(owner, 'predicted_position', 'zeros without a prediction',
                                    predicted)
        elif prediction_stamp > self.stamp_ns:
            raise check.failure(owner, 'prediction_stamp_ns',
                                f'<= stamp_ns ({self.stamp_ns})', prediction_stamp)
        if status in _NO_OBSERVED_POSITION and observed_position != ZERO3:
            raise check.failure(owner, 'observed_position',
                                f'zeros when status is {status!r}', observed_position)
        _set(self, 'prediction_stamp_ns', prediction_stamp)
        _set(self, 'predicted_position', predicted)
        _set(self, 'observed_position', observed_position)
        _set(self, 'position_mahalanobis', position_d)
        _set(self, 'orientation_mahalanobis', orientation_d)
        _set(self, 'observation_stamp_ns', observation_stamp)
        _set(self, 'position_axes_compared', axes)
        _set(self, 'position_normalised_distance', normalised)
        _set(self, 'schema_version', check.schema_version(owner, self.schema_version))


@dataclass(frozen=True, slots=True)
class CalibrationHistory:
    """Aggregate of the last `window_size` observed outcomes up to and including a cycle.

    Invariants: every count >= 0 and the four exclusive bins sum to `outcomes_considered`;
    worst distances >= 0, never NaN (+inf legitimate) and 0.0 when there are no outcomes;
    `most_recent_observed_stamp_ns` is None exactly when there are no outcomes;
    `window_size` >= 1; `schema_version` is 1.
    """

    outcomes_considered: int
    count_within_1_std: int
    count_beyond_1_std: int
    count_beyond_3_std: int
    count_beyond_5_std: int
    worst_position_mahalanobis: float
    worst_orientation_mahalanobis: float
    most_recent_observed_stamp_ns: int | None
    window_size: int
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'CalibrationHistory'
        counts = ('outcomes_considered', 'count_within_1_std', 'count_beyond_1_std',
                  'count_beyond_3_std', 'count_beyond_5_std')
        for name in counts:
            _set(self, name, check.integer(owner, name, getattr(self, name)))
        bins = (self.count_within_1_std + self.count_beyond_1_std + self.count_beyond_3_std
                + self.count_beyond_5_std)
        if bins != self.outcomes_considered:
            raise check.failure(owner, 'outcomes_considered',
                                f'the sum of the four bins ({bins})', self.outcomes_considered)
        for name in ('worst_position_mahalanobis', 'worst_orientation_mahalanobis'):
            value = check.distance(owner, name, getattr(self, name))
            if self.outcomes_considered == 0 and value != 0.0:
                raise check.failure(owner, name, '0.0 when outcomes_considered is 0', value)
            _set(self, name, value)
        observed_stamp = self.most_recent_observed_stamp_ns
        if self.outcomes_considered == 0:
            if observed_stamp is not None:
                raise check.failure(owner, 'most_recent_observed_stamp_ns',
                                    'None when outcomes_considered is 0', observed_stamp)
        elif observed_stamp is None:
            raise check.failure(owner, 'most_recent_observed_stamp_ns',
                                'a stamp when outcomes_considered > 0', observed_stamp)
        else:
            _set(self, 'most_recent_observed_stamp_ns',
                 check.stamp(owner, 'most_recent_observed_stamp_ns', observed_stamp))
        _set(self, 'window_size', check.integer(owner, 'window_size', self.window_size, 1))
        _set(self, 'schema_version', check.schema_version(owner, self.schema_version))

    @property
    def has_observed_stamp(self) -> bool:
        """Return True when at least one observed outcome is aggregated."""
        return self.most_recent_observed_stamp_ns is not None

    @classmethod
    def empty(cls, window_size: int) -> CalibrationHistory:
        """Return the history of a window that holds no observed outcome yet."""
        return cls(0, 0, 0, 0, 0, 0.0, 0.0, None, window_size)


@dataclass(frozen=True, slots=True)
class CalibratedSelfAssessment:
    """The raw assessment of a cycle, adjusted by the agent's own prediction errors (ADR-0026).

    Invariants: stamp_ns equals raw_assessment.stamp_ns (same cycle); the history holds nothing
    observed after the cycle; `raw_assessment_sha256` is a content address; the level is in the
    catalogue; policy id and reason are taxonomy strings; min_outcomes (M) and
    downgrade_threshold (K) are >= 1; `schema_version` is 1. The adjusted level may be better
    or worse than the raw one: the contract does not restrict the policy (ADR-0026).
    """

    stamp_ns: int
    frame_id: str
    raw_assessment: BeliefSelfAssessment
    raw_assessment_sha256: str
    calibration_history: CalibrationHistory
    adjusted_overall_level: SelfAssessmentLevel
    adjustment_policy_id: str
    adjustment_reason: str
    min_outcomes: int
    downgrade_threshold: int
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'CalibratedSelfAssessment'
        _header(self, owner)
        raw = check.instance(owner, 'raw_assessment', self.raw_assessment, BeliefSelfAssessment)
        if raw.stamp_ns != self.stamp_ns:
            raise check.failure(owner, 'raw_assessment',
                                f'an assessment of the same cycle (stamp_ns {self.stamp_ns})',
                                raw.stamp_ns)
        history = check.instance(owner, 'calibration_history', self.calibration_history,
                                 CalibrationHistory)
        observed_stamp = history.most_recent_observed_stamp_ns
        if observed_stamp is not None and observed_stamp > self.stamp_ns:
            raise check.failure(
                owner, 'calibration_history',
                f'outcomes observed no later than stamp_ns ({self.stamp_ns})', observed_stamp)
        _set(self, 'raw_assessment_sha256', check.sha256(owner, 'raw_assessment_sha256',
                                                         self.raw_assessment_sha256))
        _set(self, 'adjusted_overall_level', check.enum_member(
            owner, 'adjusted_overall_level', self.adjusted_overall_level, SelfAssessmentLevel))
        _set(self, 'adjustment_policy_id', check.taxonomy(owner, 'adjustment_policy_id',
                                                          self.adjustment_policy_id))
        _set(self, 'adjustment_reason', check.taxonomy(owner, 'adjustment_reason',
                                                       self.adjustment_reason))
        _set(self, 'min_outcomes', check.integer(owner, 'min_outcomes', self.min_outcomes, 1))
        _set(self, 'downgrade_threshold', check.integer(owner, 'downgrade_threshold',
                                                        self.downgrade_threshold, 1))
        _set(self, 'schema_version', check.schema_version(owner, self.schema_version))


@dataclass(frozen=True, slots=True)
class Decision:
    """What the agent decided for one cycle (closed catalogue, ADR-0021).

    Invariants: `kind` is a DecisionKind; decision_stamp_ns >= 0; `reason` is a taxonomy string.
    """

    kind: DecisionKind
    decision_stamp_ns: int
    reason: str

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'Decision'
        _set(self, 'kind', check.enum_member(owner, 'kind', self.kind, DecisionKind))
        _set(self, 'decision_stamp_ns',
             check.stamp(owner, 'decision_stamp_ns', self.decision_stamp_ns))
        _set(self, 'reason', check.taxonomy(owner, 'reason', self.reason))


def _decided_this_cycle(self: DecisionRationale | ActionEmission, owner: str) -> None:
    """Check the decision carried inline: a Decision for this very cycle (ADR-0021)."""
    decision = check.instance(owner, 'decision', self.decision, Decision)
    if decision.decision_stamp_ns != self.stamp_ns:
        raise check.failure(owner, 'decision.decision_stamp_ns',
                            f'equal to stamp_ns ({self.stamp_ns})', decision.decision_stamp_ns)


@dataclass(frozen=True, slots=True)
class DecisionRationale:
    """A decision together with the content addresses of the assessments that justified it.

    Invariants: decision.decision_stamp_ns == stamp_ns (no deferred decisions, ADR-0021);
    each sha field is None (nothing claimed; empty string on the wire) or a content address;
    a calibrated assessment is never claimed without its raw assessment; `policy_id` is a
    taxonomy string; `schema_version` is 1.
    """

    stamp_ns: int
    frame_id: str
    decision: Decision
    self_assessment_sha256: str | None
    calibrated_assessment_sha256: str | None
    policy_id: str
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'DecisionRationale'
        _header(self, owner)
        _decided_this_cycle(self, owner)
        raw_sha = check.optional_sha256(owner, 'self_assessment_sha256',
                                        self.self_assessment_sha256)
        calibrated_sha = check.optional_sha256(owner, 'calibrated_assessment_sha256',
                                               self.calibrated_assessment_sha256)
        if calibrated_sha is not None and raw_sha is None:
            raise check.failure(owner, 'self_assessment_sha256',
                                'claimed whenever calibrated_assessment_sha256 is', raw_sha)
        _set(self, 'policy_id', check.taxonomy(owner, 'policy_id', self.policy_id))
        _set(self, 'schema_version', check.schema_version(owner, self.schema_version))


@dataclass(frozen=True, slots=True)
class ActuatorCommand:
    """The command an actuation sends to the vehicle.

    Invariants: `kind` is an ActuatorCommandKind; the velocity (m/s, rad/s) is finite and is
    zero unless the kind is VELOCITY_SETPOINT.
    """

    kind: ActuatorCommandKind
    linear_velocity: Vec3 = ZERO3
    angular_velocity: Vec3 = ZERO3

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'ActuatorCommand'
        kind = check.enum_member(owner, 'kind', self.kind, ActuatorCommandKind)
        _set(self, 'kind', kind)
        for name in ('linear_velocity', 'angular_velocity'):
            value = check.vector(owner, name, getattr(self, name), 3)
            if kind != ActuatorCommandKind.VELOCITY_SETPOINT and value != ZERO3:
                raise check.failure(owner, name, f'zero for command kind {kind.name}', value)
            _set(self, name, value)


@dataclass(frozen=True, slots=True)
class ActionEmission:
    """The actuation that executes a decision (ADR-0023), published on /actuations.

    Invariants: decision.decision_stamp_ns == stamp_ns; `rationale_sha256` is a content
    address; `contract_id` is a taxonomy string; `schema_version` is 1.
    """

    stamp_ns: int
    frame_id: str
    decision: Decision
    rationale_sha256: str
    command: ActuatorCommand
    contract_id: str
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'ActionEmission'
        _header(self, owner)
        _decided_this_cycle(self, owner)
        _set(self, 'rationale_sha256',
             check.sha256(owner, 'rationale_sha256', self.rationale_sha256))
        check.instance(owner, 'command', self.command, ActuatorCommand)
        _set(self, 'contract_id', check.taxonomy(owner, 'contract_id', self.contract_id))
        _set(self, 'schema_version', check.schema_version(owner, self.schema_version))


#: GateEmission.mode values: PX4 trajectory setpoints, or a twist (cmd_vel).
GATE_MODES = ('px4', 'twist')
_GATE_VEHICLE_COMMANDS = frozenset({VEHICLE_CMD_NAV_LAND, VEHICLE_CMD_NAV_RETURN_TO_LAUNCH})
_UINT8_MAX = 255
_FLOAT32 = struct.Struct('<f')
_SETPOINT_VALUE = 'a finite float32 value, or None or NaN (not controlled)'


def _setpoint_value(owner: str, name: str, value: object) -> float | None:
    """Return a float32 setpoint value, or None for NaN / None (not controlled)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise check.failure(owner, name, _SETPOINT_VALUE, value)
    number = float(value)
    if math.isnan(number):
        return None
    # Exactly a float32: what the contract holds is what the message carries, bit for bit.
    try:
        exact = math.isfinite(number) and _FLOAT32.unpack(_FLOAT32.pack(number))[0] == number
    except OverflowError:
        exact = False
    if not exact:
        raise check.failure(owner, name, _SETPOINT_VALUE, value)
    return number


def _setpoint_vector(owner: str, name: str, value: object) -> SetpointVec3:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 3:
        raise check.failure(owner, name, f'3 values, each {_SETPOINT_VALUE}', value)
    x, y, z = (_setpoint_value(owner, f'{name}[{index}]', item)
               for index, item in enumerate(value))
    return x, y, z


def _gate_reason(owner: str, value: object) -> GateReason:
    if isinstance(value, str) and value in {reason.value for reason in GateReason}:
        return GateReason(value)
    raise check.failure(owner, 'reason', f'one of GateReason ({", ".join(GateReason)})', value)


@dataclass(frozen=True, slots=True)
class GateEmission:
    """What the command gate sent to the vehicle, one record per output (GATE-v1).

    stamp_ns is when the gate sent it; the actuation fields describe the latest actuation it
    had received, and are zero / empty exactly when has_actuation is False. Invariants:
    `action` is a GateAction and `reason` a GateReason (the record does not tie one to the
    other: that is GATE-v1's to judge); `mode` is one of GATE_MODES; stamps fit
    builtin_interfaces/Time; with an actuation, `rationale_sha256` is a content address;
    decision_kind and command_kind are any uint8 (the gate records what it received, and
    holds on a kind outside the catalogue); timeout_s is finite and > 0; position, velocity
    and yaw are float32 values, None where not controlled (NaN given is stored as None, and
    is NaN on the wire); the twist is finite; the fields of the other mode are zero (PX4: the
    twist; twist: position, velocity and yaw); vehicle_command is 21 (land) or 20 (return to
    launch) for a VEHICLE_COMMAND and 0 otherwise; `schema_version` is 1.
    """

    stamp_ns: int
    frame_id: str
    action: GateAction
    reason: GateReason
    mode: str
    output_topic: str
    timeout_s: float
    has_actuation: bool = False
    actuation_stamp_ns: int = 0
    rationale_sha256: str = ''
    decision_kind: int = 0
    command_kind: int = 0
    actuation_received_ns: int = 0
    position: SetpointVec3 = ZERO3
    velocity: SetpointVec3 = ZERO3
    yaw: float | None = 0.0
    twist_linear: Vec3 = ZERO3
    twist_angular: Vec3 = ZERO3
    vehicle_command: int = 0
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'GateEmission'
        _header(self, owner)
        action = check.enum_member(owner, 'action', self.action, GateAction)
        _set(self, 'action', action)
        _set(self, 'reason', _gate_reason(owner, self.reason))
        mode = check.text(owner, 'mode', self.mode)
        if mode not in GATE_MODES:
            raise check.failure(owner, 'mode', f'one of {list(GATE_MODES)}', mode)
        _set(self, 'output_topic', check.text(owner, 'output_topic', self.output_topic))
        timeout_s = check.finite_float(owner, 'timeout_s', self.timeout_s)
        if timeout_s <= 0.0:
            raise check.failure(owner, 'timeout_s', 'a finite number > 0', timeout_s)
        _set(self, 'timeout_s', timeout_s)
        has_actuation = check.boolean(owner, 'has_actuation', self.has_actuation)
        actuation = {
            'actuation_stamp_ns': check.stamp(owner, 'actuation_stamp_ns',
                                              self.actuation_stamp_ns),
            'decision_kind': check.integer(owner, 'decision_kind', self.decision_kind, 0,
                                           _UINT8_MAX),
            'command_kind': check.integer(owner, 'command_kind', self.command_kind, 0,
                                          _UINT8_MAX),
            'actuation_received_ns': check.stamp(owner, 'actuation_received_ns',
                                                 self.actuation_received_ns),
        }
        if has_actuation:
            _set(self, 'rationale_sha256',
                 check.sha256(owner, 'rationale_sha256', self.rationale_sha256))
        else:
            if self.rationale_sha256 != '':
                raise check.failure(owner, 'rationale_sha256',
                                    "'' when has_actuation is False", self.rationale_sha256)
            for name, value in actuation.items():
                if value != 0:
                    raise check.failure(owner, name, '0 when has_actuation is False', value)
        for name, value in actuation.items():
            _set(self, name, value)
        position = _setpoint_vector(owner, 'position', self.position)
        velocity = _setpoint_vector(owner, 'velocity', self.velocity)
        yaw = _setpoint_value(owner, 'yaw', self.yaw)
        linear = check.vector(owner, 'twist_linear', self.twist_linear, 3)
        angular = check.vector(owner, 'twist_angular', self.twist_angular, 3)
        if mode == 'px4':
            for name, twist in (('twist_linear', linear), ('twist_angular', angular)):
                if twist != ZERO3:
                    raise check.failure(owner, name, 'zero in px4 mode', twist)
        else:
            for name, vector in (('position', position), ('velocity', velocity)):
                if vector != ZERO3:
                    raise check.failure(owner, name, 'zero in twist mode', vector)
            if yaw != 0.0:
                raise check.failure(owner, 'yaw', 'zero in twist mode', yaw)
        _set(self, 'position', position)
        _set(self, 'velocity', velocity)
        _set(self, 'yaw', yaw)
        _set(self, 'twist_linear', linear)
        _set(self, 'twist_angular', angular)
        command = check.integer(owner, 'vehicle_command', self.vehicle_command)
        if action is GateAction.VEHICLE_COMMAND:
            if command not in _GATE_VEHICLE_COMMANDS:
                raise check.failure(owner, 'vehicle_command',
                                    f'one of {sorted(_GATE_VEHICLE_COMMANDS)} for a '
                                    'VEHICLE_COMMAND', command)
        elif command != 0:
            raise check.failure(owner, 'vehicle_command', f'0 for action {action.name}',
                                command)
        _set(self, 'vehicle_command', command)
        _set(self, 'schema_version', check.schema_version(owner, self.schema_version))


@dataclass(frozen=True, slots=True)
class DecisionContext:
    """What a decision policy sees for one cycle (ADR-0021): self-contained, so decide is pure.

    `self_assessment` is None when no introspection is available. When a calibrated
    assessment is given, the raw assessment is the one it carries inline (filled in when
    omitted). Invariants: every assessment given is of this cycle (same stamp_ns).
    """

    stamp_ns: int
    frame_id: str
    self_assessment: BeliefSelfAssessment | None = None
    calibrated_assessment: CalibratedSelfAssessment | None = None

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        owner = 'DecisionContext'
        _header(self, owner)
        calibrated = self.calibrated_assessment
        if calibrated is not None:
            check.instance(owner, 'calibrated_assessment', calibrated, CalibratedSelfAssessment)
            if self.self_assessment is None:
                _set(self, 'self_assessment', calibrated.raw_assessment)
            elif self.self_assessment != calibrated.raw_assessment:
                raise check.failure(owner, 'self_assessment',
                                    'the raw assessment the calibrated assessment carries',
                                    self.self_assessment)
        raw = self.self_assessment
        if raw is not None:
            check.instance(owner, 'self_assessment', raw, BeliefSelfAssessment)
            if raw.stamp_ns != self.stamp_ns:
                raise check.failure(owner, 'self_assessment',
                                    f'an assessment with stamp_ns {self.stamp_ns}', raw.stamp_ns)

    @classmethod
    def from_calibrated(cls, calibrated: CalibratedSelfAssessment) -> DecisionContext:
        """Return the context of the cycle `calibrated` belongs to (raw carried inline)."""
        return cls(calibrated.stamp_ns, calibrated.frame_id, calibrated.raw_assessment,
                   calibrated)

    @classmethod
    def from_raw(cls, raw: BeliefSelfAssessment) -> DecisionContext:
        """Return the context of a cycle that has a raw assessment but no calibration."""
        return cls(raw.stamp_ns, raw.frame_id, raw)

    @property
    def effective_level(self) -> SelfAssessmentLevel | None:
        """The level to act on: the adjusted one when calibrated, else the raw one, else None."""
        if self.calibrated_assessment is not None:
            return self.calibrated_assessment.adjusted_overall_level
        if self.self_assessment is not None:
            return self.self_assessment.overall_level
        return None
