"""Frozen contracts: one per ghost message, plus the DecisionContext a policy decides from.

One cohesive job (every contract and its checks), so one module past 400 lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
import math
import numbers
import struct
from typing import Annotated, Any, get_args, get_origin, get_type_hints

from ghost_core import _checks as check
from ghost_core.distances import MAX_AXES, normalised_distance
from ghost_core.gate import (
    ARDUPILOT_MODES,
    GateAction,
    GateReason,
    VEHICLE_CMD_NAV_LAND,
    VEHICLE_CMD_NAV_RETURN_TO_LAUNCH,
)
from ghost_core.levels import (
    ActuatorCommandKind,
    DecisionKind,
    FlightStatus,
    MissionStatus,
    SelfAssessmentLevel,
    worst_level,
)

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
    'ConfigurationChange',
    'Contract',
    'Decision',
    'DecisionContext',
    'DecisionRationale',
    'ForwardPrediction',
    'GATE_MODES',
    'GateEmission',
    'Mat3',
    'PredictionOutcome',
    'EVIDENCE_SCHEMA_VERSION',
    'EvidenceLayout',
    'RATIONALE_SCHEMA_VERSION',
    'SetpointVec3',
    'Vec3',
    'VehicleStatus',
    'vehicle_context',
]

SCHEMA_VERSION = check.SCHEMA_VERSION
#: The layout of the messages that name their inputs (SPEC 5, v1.3): the raw and calibrated
#: assessments and the rationale (2 was the rationale's with the vehicle status, v1.2).
EVIDENCE_SCHEMA_VERSION = 3
RATIONALE_SCHEMA_VERSION = EVIDENCE_SCHEMA_VERSION
#: schema_version of a message that names its inputs.
EvidenceLayout = Annotated[int, check.layout_version_of(EVIDENCE_SCHEMA_VERSION)]

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

# --- the contract base: every field checks itself, then what ties the fields together --------

_set = object.__setattr__


def checked_together(_owner: str, _name: str, value: object) -> object:
    """The check of a field that ``Contract._check_together`` checks with the fields it needs."""
    return value


# The field types of the contracts: each names the check that normalises it (int -> float,
# list -> tuple, int -> enum), so that the wire layer can rely on exact Python types.
StampNs = Annotated[int, check.stamp]
Text = Annotated[str, check.text]
Taxonomy = Annotated[str, check.taxonomy]
ContentAddress = Annotated[str, check.sha256]
#: None (nothing claimed; '' on the wire) or a content address.
ClaimedAddress = Annotated[str | None, check.optional_sha256]
#: A uint32 count.
Count = Annotated[int, check.integer]
Distance = Annotated[float, check.distance]
Flag = Annotated[bool, check.boolean]
Level = Annotated[SelfAssessmentLevel, check.member_of(SelfAssessmentLevel)]
LayoutVersion = Annotated[int, check.layout_version]
FiniteVec3 = Annotated[Vec3, check.vector_of(3)]
FiniteMat3 = Annotated[Mat3, check.vector_of(9)]
Flight = Annotated[FlightStatus, check.member_of(FlightStatus)]
Mission = Annotated[MissionStatus, check.member_of(MissionStatus)]
#: None (not stated; '' on the wire) or a taxonomy string.
PerceptionMode = Annotated[str | None, check.optional_taxonomy]


#: A contract class's field table: its name (the owner errors name), per field (name, check,
#: type): the field's check, or None for a nested contract, whose type is checked (the type is
#: `object` for a field with a check); and whether the class has invariants of its own
#: (``_check_together``).
_FieldTable = tuple[str, tuple[tuple[str, check.FieldCheck | None, type], ...], bool]
_field_tables: dict[type, _FieldTable] = {}


def _field_table(cls: type[Any]) -> _FieldTable:
    """Build and keep the field table of one contract class, from its fields' annotations.

    Built at the class's first construction, when every annotation can be resolved. A field
    that names no check raises TypeError, naming it (at every construction: no table is kept).
    """
    hints = get_type_hints(cls, include_extras=True)
    owner = cls.__name__
    steps: list[tuple[str, check.FieldCheck | None, type]] = []
    for field in fields(cls):
        name, hint = field.name, hints[field.name]
        if get_origin(hint) is Annotated:
            field_check = get_args(hint)[1]
            if field_check is not checked_together:
                steps.append((name, field_check, object))
        elif isinstance(hint, type) and issubclass(hint, Contract):
            steps.append((name, None, hint))  # a nested contract: only its type is checked
        else:
            raise TypeError(f'{owner}.{name}: a contract field names its check '
                            f'(Annotated[T, check] or a contract type), got {hint}')
    together = cls._check_together is not Contract._check_together
    table = _field_tables[cls] = (owner, tuple(steps), together)
    return table


class Contract:
    """A frozen contract whose fields check themselves.

    A subclass is a ``@dataclass(frozen=True, slots=True)`` whose every field is annotated
    with its check (``Annotated[T, check]``; a field whose type is a contract must be one).
    On construction each field is normalised by its check, in field order; then
    ``_check_together`` checks the invariants that tie fields together. The checks run as a
    loop over the class's field table, built at its first construction (a ``__post_init__``
    generated per class was not 1.5x faster: bench/codegen.py, docs/performance.md).
    """

    __slots__ = ()

    def __post_init__(self) -> None:
        """Normalise every field by its check, then check the invariants between fields."""
        table = _field_tables.get(type(self))
        owner, steps, together = table if table is not None else _field_table(type(self))
        for name, field_check, kind in steps:
            if field_check is not None:
                _set(self, name, field_check(owner, name, getattr(self, name)))
            elif type(getattr(self, name)) is not kind:
                check.instance(owner, name, getattr(self, name), kind)
        if together:
            self._check_together(owner)

    def _check_together(self, owner: str) -> None:
        """Check the invariants between fields (after every field was checked alone)."""


@dataclass(frozen=True, slots=True)
class _Header(Contract):
    """The ``std_msgs/Header header`` a message starts with: its stamp (ns) and frame."""

    stamp_ns: StampNs
    frame_id: Text


@dataclass(frozen=True, slots=True)
class AxisAssessment(Contract):
    """Self-assessment of one block of the belief (position, velocity or orientation).

    Invariants: `level` is a SelfAssessmentLevel; `max_std` is finite and >= 0 (0.0 when the
    covariance is invalid); `reason` is a taxonomy string.
    """

    level: Level
    max_std: Annotated[float, check.finite_at_least(0.0)]
    reason: Taxonomy


@dataclass(frozen=True, slots=True)
class BeliefSelfAssessment(_Header):
    """What the agent thinks of its own belief for one cycle (raw, before calibration).

    Invariants: stamp_ns >= 0; `overall_level` is the worst of the three blocks;
    `thresholds_sha256` is a content address; `assessor_id` a taxonomy string; the inputs it
    names (SPEC 5, v1.3): `confirmation_stamp_ns`, the stamp of the latest finite fix the
    assessor had when the belief arrived (None: none yet), and `previous_stamp_ns`, the belief
    it judged before (None: this is its first), earlier than stamp_ns; `schema_version` is 3.
    """

    overall_level: Level
    position: AxisAssessment
    velocity: AxisAssessment
    orientation: AxisAssessment
    thresholds_sha256: ContentAddress
    assessor_id: Taxonomy
    confirmation_stamp_ns: Annotated[int | None, check.optional_stamp] = None
    previous_stamp_ns: Annotated[int | None, check.optional_stamp] = None
    schema_version: EvidenceLayout = EVIDENCE_SCHEMA_VERSION

    def _check_together(self, owner: str) -> None:
        worst = worst_level(self.position.level, self.velocity.level, self.orientation.level)
        if self.overall_level != worst:
            raise check.failure(
                owner, 'overall_level', f'the worst block level ({worst.name})',
                self.overall_level)
        if self.previous_stamp_ns is not None and self.previous_stamp_ns >= self.stamp_ns:
            raise check.failure(owner, 'previous_stamp_ns', f'< stamp_ns ({self.stamp_ns})',
                                self.previous_stamp_ns)


@dataclass(frozen=True, slots=True)
class ForwardPrediction(_Header):
    """A predicted position (and its covariance) for a later cycle, and the state it came from.

    The origin state (position, velocity, their covariances and the process noise) lets the
    outcome evaluator propagate the prediction to a fix's own stamp (asynchronous fixes,
    SPEC §5 v1.1) with the same model: p(τ) = p + vΔ, Σ(τ) = Σp + Δ²Σv + QΔ·I, Δ = τ - stamp.
    Invariants: stamps >= 0 and target_stamp_ns > stamp_ns; positions and velocity are 3
    finite floats; covariances are 9 finite floats (3x3 row-major); process_noise is finite
    and >= 0; `model_id` is a taxonomy string.
    """

    target_stamp_ns: StampNs
    predicted_position: FiniteVec3
    position_covariance: FiniteMat3
    model_id: Taxonomy
    origin_position: FiniteVec3 = ZERO3
    velocity: FiniteVec3 = ZERO3
    origin_position_covariance: FiniteMat3 = (0.0,) * 9
    velocity_covariance: FiniteMat3 = (0.0,) * 9
    process_noise: Annotated[float, check.finite_at_least(0.0)] = 0.0
    schema_version: LayoutVersion = SCHEMA_VERSION

    def _check_together(self, owner: str) -> None:
        if self.target_stamp_ns <= self.stamp_ns:
            raise check.failure(owner, 'target_stamp_ns', f'later than stamp_ns ({self.stamp_ns})',
                                self.target_stamp_ns)


def _outcome_status(owner: str, name: str, value: object) -> str:
    status = check.taxonomy(owner, name, value)
    if status not in OUTCOME_STATUSES:
        raise check.failure(owner, name, f'one of {sorted(OUTCOME_STATUSES)}', status)
    return status


@dataclass(frozen=True, slots=True)
class PredictionOutcome(_Header):
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

    prediction_stamp_ns: StampNs
    observed: Flag
    status: Annotated[str, _outcome_status]
    predicted_position: FiniteVec3
    observed_position: FiniteVec3
    position_mahalanobis: Distance
    orientation_mahalanobis: Distance
    observation_stamp_ns: StampNs = 0
    position_axes_compared: Annotated[int, check.integer_in(0, MAX_AXES)] = 0
    position_normalised_distance: Distance = 0.0
    schema_version: LayoutVersion = SCHEMA_VERSION

    def _check_together(self, owner: str) -> None:
        status, observed = self.status, self.observed
        if observed != (status == STATUS_PAIRED):
            raise check.failure(owner, 'observed', f'{status == STATUS_PAIRED} when status is '
                                f'{status!r}', observed)
        if self.observation_stamp_ns > self.stamp_ns:
            raise check.failure(owner, 'observation_stamp_ns', f'<= stamp_ns ({self.stamp_ns})',
                                self.observation_stamp_ns)
        axes = self.position_axes_compared
        if not observed:
            for name in ('position_mahalanobis', 'orientation_mahalanobis',
                         'position_axes_compared', 'position_normalised_distance'):
                if getattr(self, name) != 0:
                    raise check.failure(owner, name, '0 when not observed', getattr(self, name))
        else:
            if axes < 1:
                raise check.failure(owner, 'position_axes_compared', '1..3 when observed', axes)
            position_d, normalised = self.position_mahalanobis, self.position_normalised_distance
            expected = normalised_distance(position_d, axes)
            if not (normalised == expected or abs(normalised - expected)
                    <= _NORMALISED_TOLERANCE * expected + _NORMALISED_FLOOR):
                raise check.failure(
                    owner, 'position_normalised_distance',
                    f'normalised_distance({position_d!r}, {axes}) = {expected!r}', normalised)
        if status == STATUS_NO_PREDICTION:
            if self.prediction_stamp_ns != 0:
                raise check.failure(owner, 'prediction_stamp_ns', '0 without a prediction',
                                    self.prediction_stamp_ns)
            if self.predicted_position != ZERO3:
                raise check.failure(owner, 'predicted_position', 'zeros without a prediction',
                                    self.predicted_position)
        elif self.prediction_stamp_ns > self.stamp_ns:
            raise check.failure(owner, 'prediction_stamp_ns',
                                f'<= stamp_ns ({self.stamp_ns})', self.prediction_stamp_ns)
        if status in _NO_OBSERVED_POSITION and self.observed_position != ZERO3:
            raise check.failure(owner, 'observed_position',
                                f'zeros when status is {status!r}', self.observed_position)


@dataclass(frozen=True, slots=True)
class CalibrationHistory(Contract):
    """Aggregate of the last `window_size` observed outcomes up to and including a cycle.

    Invariants: every count >= 0 and the four exclusive bins sum to `outcomes_considered`;
    worst distances >= 0, never NaN (+inf legitimate) and 0.0 when there are no outcomes;
    `most_recent_observed_stamp_ns` is None exactly when there are no outcomes;
    `window_size` >= 1; `schema_version` is 1.
    """

    outcomes_considered: Count
    count_within_1_std: Count
    count_beyond_1_std: Count
    count_beyond_3_std: Count
    count_beyond_5_std: Count
    worst_position_mahalanobis: Distance
    worst_orientation_mahalanobis: Distance
    most_recent_observed_stamp_ns: Annotated[int | None, checked_together]
    window_size: Annotated[int, check.integer_in(1)]
    schema_version: LayoutVersion = SCHEMA_VERSION

    def _check_together(self, owner: str) -> None:
        bins = (self.count_within_1_std + self.count_beyond_1_std + self.count_beyond_3_std
                + self.count_beyond_5_std)
        if bins != self.outcomes_considered:
            raise check.failure(owner, 'outcomes_considered',
                                f'the sum of the four bins ({bins})', self.outcomes_considered)
        observed_stamp = self.most_recent_observed_stamp_ns
        if self.outcomes_considered == 0:
            for name in ('worst_position_mahalanobis', 'worst_orientation_mahalanobis'):
                if getattr(self, name) != 0.0:
                    raise check.failure(owner, name, '0.0 when outcomes_considered is 0',
                                        getattr(self, name))
            if observed_stamp is not None:
                raise check.failure(owner, 'most_recent_observed_stamp_ns',
                                    'None when outcomes_considered is 0', observed_stamp)
        elif observed_stamp is None:
            raise check.failure(owner, 'most_recent_observed_stamp_ns',
                                'a stamp when outcomes_considered > 0', observed_stamp)
        else:
            _set(self, 'most_recent_observed_stamp_ns',
                 check.stamp(owner, 'most_recent_observed_stamp_ns', observed_stamp))

    @property
    def has_observed_stamp(self) -> bool:
        """Return True when at least one observed outcome is aggregated."""
        return self.most_recent_observed_stamp_ns is not None

    @classmethod
    def empty(cls, window_size: int) -> CalibrationHistory:
        """Return the history of a window that holds no observed outcome yet."""
        return cls(0, 0, 0, 0, 0, 0.0, 0.0, None, window_size)


@dataclass(frozen=True, slots=True)
class CalibratedSelfAssessment(_Header):
    """The raw assessment of a cycle, adjusted by the agent's own prediction errors (ADR-0026).

    Invariants: stamp_ns equals raw_assessment.stamp_ns (same cycle); the history holds nothing
    observed after the cycle; `raw_assessment_sha256` is a content address; the level is in the
    catalogue; policy id and reason are taxonomy strings; min_outcomes (M) and
    downgrade_threshold (K) are >= 1; `window_outcome_stamps_ns` names the observed outcomes
    the history aggregates (SPEC 5, v1.3), increasing, none after stamp_ns;
    `schema_version` is 3. The adjusted level may be better or worse than
    the raw one: the contract does not restrict the policy (ADR-0026).
    """

    raw_assessment: BeliefSelfAssessment
    raw_assessment_sha256: ContentAddress
    calibration_history: CalibrationHistory
    adjusted_overall_level: Level
    adjustment_policy_id: Taxonomy
    adjustment_reason: Taxonomy
    min_outcomes: Annotated[int, check.integer_in(1)]
    downgrade_threshold: Annotated[int, check.integer_in(1)]
    window_outcome_stamps_ns: Annotated[tuple[int, ...], check.stamps] = ()
    schema_version: EvidenceLayout = EVIDENCE_SCHEMA_VERSION

    def _check_together(self, owner: str) -> None:
        # Whether they are the outcomes the history counts is the verifier's to judge against
        # the bag (ghost_verify.history): the contract keeps only their shape.
        window = self.window_outcome_stamps_ns
        if any(later <= earlier for earlier, later in zip(window, window[1:], strict=False)) or (
                window and window[-1] > self.stamp_ns):
            raise check.failure(owner, 'window_outcome_stamps_ns',
                                f'increasing stamps, none after stamp_ns ({self.stamp_ns})',
                                window)
        if self.raw_assessment.stamp_ns != self.stamp_ns:
            raise check.failure(owner, 'raw_assessment',
                                f'an assessment of the same cycle (stamp_ns {self.stamp_ns})',
                                self.raw_assessment.stamp_ns)
        observed_stamp = self.calibration_history.most_recent_observed_stamp_ns
        if observed_stamp is not None and observed_stamp > self.stamp_ns:
            raise check.failure(
                owner, 'calibration_history',
                f'outcomes observed no later than stamp_ns ({self.stamp_ns})', observed_stamp)


@dataclass(frozen=True, slots=True)
class Decision(Contract):
    """What the agent decided for one cycle (closed catalogue, ADR-0021).

    Invariants: `kind` is a DecisionKind; decision_stamp_ns >= 0; `reason` is a taxonomy string.
    """

    kind: Annotated[DecisionKind, check.member_of(DecisionKind)]
    decision_stamp_ns: StampNs
    reason: Taxonomy


@dataclass(frozen=True, slots=True)
class _DecidedCycle(_Header):
    """A header and the decision of that very cycle, carried inline (ADR-0021)."""

    decision: Decision

    def _check_together(self, owner: str) -> None:
        if self.decision.decision_stamp_ns != self.stamp_ns:
            raise check.failure(owner, 'decision.decision_stamp_ns',
                                f'equal to stamp_ns ({self.stamp_ns})',
                                self.decision.decision_stamp_ns)


@dataclass(frozen=True, slots=True)
class DecisionRationale(_DecidedCycle):
    """A decision together with the content addresses of the assessments that justified it.

    Invariants: decision.decision_stamp_ns == stamp_ns (no deferred decisions, ADR-0021);
    each sha field is None (nothing claimed; empty string on the wire) or a content address;
    a calibrated assessment is never claimed without its raw assessment; `policy_id` is a
    taxonomy string; the vehicle status the policy saw (ADR-0021 §2): `flight_status` and
    `mission_status` in their catalogues (UNKNOWN when no status was received),
    `perception_mode` None or a taxonomy string; `vehicle_status_stamp_ns` names the status
    the context came from (None: none received; SPEC 5, v1.3), no later than stamp_ns;
    `schema_version` is 3.
    """

    self_assessment_sha256: ClaimedAddress
    calibrated_assessment_sha256: ClaimedAddress
    policy_id: Taxonomy
    flight_status: Flight
    mission_status: Mission
    perception_mode: PerceptionMode = None
    vehicle_status_stamp_ns: Annotated[int | None, check.optional_stamp] = None
    schema_version: EvidenceLayout = EVIDENCE_SCHEMA_VERSION

    def _check_together(self, owner: str) -> None:
        _DecidedCycle._check_together(self, owner)
        status = self.vehicle_status_stamp_ns
        if status is not None and status > self.stamp_ns:
            raise check.failure(owner, 'vehicle_status_stamp_ns',
                                f'<= stamp_ns ({self.stamp_ns})', status)
        if self.calibrated_assessment_sha256 is not None and self.self_assessment_sha256 is None:
            raise check.failure(owner, 'self_assessment_sha256',
                                'claimed whenever calibrated_assessment_sha256 is', None)


@dataclass(frozen=True, slots=True)
class VehicleStatus(_Header):
    """The vehicle's status as its autopilot reports it (/vehicle_status; ADR-0021 §2).

    In force for the cycles stamped at or after `stamp_ns`, until a later one. Invariants:
    `flight_status` and `mission_status` in their catalogues (UNKNOWN: the source says
    nothing); `perception_mode` None or a taxonomy string; `source` a taxonomy string naming
    what reported it; `schema_version` is 1.
    """

    flight_status: Flight
    mission_status: Mission
    source: Taxonomy
    perception_mode: PerceptionMode = None
    schema_version: LayoutVersion = SCHEMA_VERSION


@dataclass(frozen=True, slots=True)
class ConfigurationChange(_Header):
    """A change of a node's configuration while it runs, as the node applied it.

    stamp_ns is when it applied the change (the node's clock). Invariants: `node` and
    `configuration` are text (the configuration a JSON object of run-configuration keys, which
    ``ghost_core.run_configuration`` reads); `in_force_after_stamp_ns` >= -1 (-1: before the
    node's first cycle).
    """

    node: Text
    in_force_after_stamp_ns: Annotated[int, check.integer_in(-1, 2**63 - 1)]
    configuration: Text


@dataclass(frozen=True, slots=True)
class ActuatorCommand(Contract):
    """The command an actuation sends to the vehicle.

    Invariants: `kind` is an ActuatorCommandKind; the velocity (m/s, rad/s) is finite and is
    zero unless the kind is VELOCITY_SETPOINT.
    """

    kind: Annotated[ActuatorCommandKind, check.member_of(ActuatorCommandKind)]
    linear_velocity: FiniteVec3 = ZERO3
    angular_velocity: FiniteVec3 = ZERO3

    def _check_together(self, owner: str) -> None:
        if self.kind == ActuatorCommandKind.VELOCITY_SETPOINT:
            return
        for name in ('linear_velocity', 'angular_velocity'):
            if getattr(self, name) != ZERO3:
                raise check.failure(owner, name, f'zero for command kind {self.kind.name}',
                                    getattr(self, name))


@dataclass(frozen=True, slots=True)
class ActionEmission(_DecidedCycle):
    """The actuation that executes a decision (ADR-0023), published on /actuations.

    Invariants: decision.decision_stamp_ns == stamp_ns; `rationale_sha256` is a content
    address; `contract_id` is a taxonomy string; `schema_version` is 1.
    """

    rationale_sha256: ContentAddress
    command: ActuatorCommand
    contract_id: Taxonomy
    schema_version: LayoutVersion = SCHEMA_VERSION


#: GateEmission.mode values: PX4 trajectory setpoints, a twist (cmd_vel), or ArduPilot's
#: /ap/cmd_vel and /ap/mode_switch.
GATE_MODES = ('px4', 'twist', 'ardupilot')
#: GateEmission.mode_answer values (MODE_* of the message).
MODE_ANSWERS = range(4)
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


def _gate_reason(owner: str, name: str, value: object) -> GateReason:
    if isinstance(value, str) and value in {reason.value for reason in GateReason}:
        return GateReason(value)
    raise check.failure(owner, name, f'one of GateReason ({", ".join(GateReason)})', value)


def _gate_mode(owner: str, name: str, value: object) -> str:
    mode = check.text(owner, name, value)
    if mode not in GATE_MODES:
        raise check.failure(owner, name, f'one of {list(GATE_MODES)}', mode)
    return mode


def _timeout(owner: str, name: str, value: object) -> float:
    timeout_s = check.finite_float(owner, name, value)
    if timeout_s <= 0.0:
        raise check.failure(owner, name, 'a finite number > 0', timeout_s)
    return timeout_s


#: A uint8 the gate records as it received it (a kind outside the catalogue included).
_Uint8 = Annotated[int, check.integer_in(0, _UINT8_MAX)]
_Setpoint = Annotated[SetpointVec3, _setpoint_vector]


@dataclass(frozen=True, slots=True)
class GateEmission(_Header):
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
    twist; twist and ardupilot: position, velocity and yaw); vehicle_command is 21 (land) or
    20 (return to launch) for a VEHICLE_COMMAND (ardupilot: the Copter mode asked for, one of
    ARDUPILOT_MODES) and 0 otherwise; mode_asked, mode_answer and vehicle_mode are 0 outside
    ardupilot mode, and an answer needs a mode asked; `schema_version` is 1.
    """

    action: Annotated[GateAction, check.member_of(GateAction)]
    reason: Annotated[GateReason, _gate_reason]
    mode: Annotated[str, _gate_mode]
    output_topic: Text
    timeout_s: Annotated[float, _timeout]
    has_actuation: Flag = False
    actuation_stamp_ns: StampNs = 0
    rationale_sha256: Annotated[str, checked_together] = ''
    decision_kind: _Uint8 = 0
    command_kind: _Uint8 = 0
    actuation_received_ns: StampNs = 0
    position: _Setpoint = ZERO3
    velocity: _Setpoint = ZERO3
    yaw: Annotated[float | None, _setpoint_value] = 0.0
    twist_linear: FiniteVec3 = ZERO3
    twist_angular: FiniteVec3 = ZERO3
    vehicle_command: Count = 0
    mode_asked: _Uint8 = 0
    mode_answer: _Uint8 = 0
    vehicle_mode: _Uint8 = 0
    schema_version: LayoutVersion = SCHEMA_VERSION

    def _check_together(self, owner: str) -> None:
        if self.has_actuation:
            _set(self, 'rationale_sha256',
                 check.sha256(owner, 'rationale_sha256', self.rationale_sha256))
        else:
            if self.rationale_sha256 != '':
                raise check.failure(owner, 'rationale_sha256',
                                    "'' when has_actuation is False", self.rationale_sha256)
            for name in ('actuation_stamp_ns', 'decision_kind', 'command_kind',
                         'actuation_received_ns'):
                if getattr(self, name) != 0:
                    raise check.failure(owner, name, '0 when has_actuation is False',
                                        getattr(self, name))
        if self.mode == 'px4':
            for name in ('twist_linear', 'twist_angular'):
                if getattr(self, name) != ZERO3:
                    raise check.failure(owner, name, 'zero in px4 mode', getattr(self, name))
        else:
            for name in ('position', 'velocity'):
                if getattr(self, name) != ZERO3:
                    raise check.failure(owner, name, 'zero in twist mode', getattr(self, name))
            if self.yaw != 0.0:
                raise check.failure(owner, 'yaw', 'zero in twist mode', self.yaw)
        self._check_ardupilot(owner)
        command = self.vehicle_command
        allowed = ARDUPILOT_MODES if self.mode == 'ardupilot' else _GATE_VEHICLE_COMMANDS
        if self.action is GateAction.VEHICLE_COMMAND:
            if command not in allowed:
                raise check.failure(owner, 'vehicle_command',
                                    f'one of {sorted(allowed)} for a {self.mode} '
                                    'VEHICLE_COMMAND', command)
        elif command != 0:
            raise check.failure(owner, 'vehicle_command', f'0 for action {self.action.name}',
                                command)


    def _check_ardupilot(self, owner: str) -> None:
        """The mode switch's answer: ArduPilot mode only, an answer only to a mode asked."""
        names = ('mode_asked', 'mode_answer', 'vehicle_mode')
        if self.mode != 'ardupilot':
            for name in names:
                if getattr(self, name) != 0:
                    raise check.failure(owner, name, f'0 in {self.mode} mode', getattr(self, name))
            return
        if self.mode_answer not in MODE_ANSWERS:
            raise check.failure(owner, 'mode_answer', f'one of {list(MODE_ANSWERS)}',
                                self.mode_answer)
        if self.mode_asked == 0 and (self.mode_answer or self.vehicle_mode):
            raise check.failure(owner, 'mode_answer', '0 with vehicle_mode 0 when no mode was '
                                'asked (mode_asked 0)', self.mode_answer)
        if self.mode_asked != 0 and self.mode_asked not in ARDUPILOT_MODES:
            raise check.failure(owner, 'mode_asked', f'0 or one of {sorted(ARDUPILOT_MODES)}',
                                self.mode_asked)


@dataclass(frozen=True, slots=True)
class DecisionContext(_Header):
    """What a decision policy sees for one cycle (ADR-0021): self-contained, so decide is pure.

    `flight_status` and `mission_status` (required: UNKNOWN when the vehicle reported
    nothing) and `perception_mode` (optional) are the vehicle status in force at the cycle
    (ADR-0021 §2); `from_calibrated` and `from_raw` take them from a VehicleStatus, or None.
    `self_assessment` is None when no introspection is available. When a calibrated
    assessment is given, the raw assessment is the one it carries inline (filled in when
    omitted). Invariants: every assessment given is of this cycle (same stamp_ns).
    """

    flight_status: Flight
    mission_status: Mission
    self_assessment: Annotated[BeliefSelfAssessment | None, checked_together] = None
    calibrated_assessment: Annotated[CalibratedSelfAssessment | None, checked_together] = None
    perception_mode: PerceptionMode = None
    #: The stamp of the vehicle status the three fields above came from (None: none).
    vehicle_status_stamp_ns: Annotated[int | None, check.optional_stamp] = None

    def _check_together(self, owner: str) -> None:
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
    def from_calibrated(cls, calibrated: CalibratedSelfAssessment,
                        vehicle: VehicleStatus | None) -> DecisionContext:
        """Return the context of the cycle `calibrated` belongs to (raw carried inline).

        `vehicle` is the status in force at the cycle; None (none received) is UNKNOWN.
        """
        flight, mission, perception = vehicle_context(vehicle)
        return cls(calibrated.stamp_ns, calibrated.frame_id, flight, mission,
                   calibrated.raw_assessment, calibrated, perception,
                   None if vehicle is None else vehicle.stamp_ns)

    @classmethod
    def from_raw(cls, raw: BeliefSelfAssessment,
                 vehicle: VehicleStatus | None) -> DecisionContext:
        """Return the context of a cycle that has a raw assessment but no calibration."""
        flight, mission, perception = vehicle_context(vehicle)
        return cls(raw.stamp_ns, raw.frame_id, flight, mission, raw, None, perception,
                   None if vehicle is None else vehicle.stamp_ns)

    @property
    def effective_level(self) -> SelfAssessmentLevel | None:
        """The level to act on: the adjusted one when calibrated, else the raw one, else None."""
        if self.calibrated_assessment is not None:
            return self.calibrated_assessment.adjusted_overall_level
        if self.self_assessment is not None:
            return self.self_assessment.overall_level
        return None


def vehicle_context(vehicle: VehicleStatus | None
                    ) -> tuple[FlightStatus, MissionStatus, str | None]:
    """A decision context's flight status, mission status and perception mode from `vehicle`.

    None (no status received) gives UNKNOWN, UNKNOWN and no perception mode: never invented.
    """
    if vehicle is None:
        return FlightStatus.UNKNOWN, MissionStatus.UNKNOWN, None
    return vehicle.flight_status, vehicle.mission_status, vehicle.perception_mode
