"""The message-dict layer: every ghost contract to and from the dict of SPEC section 4."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from enum import IntEnum, StrEnum
import functools
import math
import numbers
from types import MappingProxyType
from typing import Any, TypeVar

from ghost_core import _checks as check
from ghost_core.contracts import (
    ActionEmission,
    ActuatorCommand,
    AxisAssessment,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    CalibrationHistory,
    Decision,
    DecisionRationale,
    ForwardPrediction,
    GateEmission,
    Mat3,
    PredictionOutcome,
    SetpointVec3,
    Vec3,
)
from ghost_core.errors import MessageFormatError
from ghost_core.gate import GateAction, GateReason
from ghost_core.hashing import content_address
from ghost_core.levels import ActuatorCommandKind, DecisionKind, SelfAssessmentLevel

__all__ = [
    'MESSAGE_TYPES',
    'MsgDict',
    'action_emission_to_msg_dict',
    'actuator_command_to_msg_dict',
    'axis_assessment_to_msg_dict',
    'belief_self_assessment_to_msg_dict',
    'calibrated_to_msg_dict',
    'calibration_history_to_msg_dict',
    'decision_rationale_to_msg_dict',
    'decision_to_msg_dict',
    'forward_prediction_to_msg_dict',
    'gate_emission_to_msg_dict',
    'message_address',
    'ns_to_stamp',
    'parse_action_emission',
    'parse_actuator_command',
    'parse_axis_assessment',
    'parse_belief_self_assessment',
    'parse_calibrated',
    'parse_calibrated_self_assessment',
    'parse_calibration_history',
    'parse_decision',
    'parse_decision_rationale',
    'parse_forward_prediction',
    'parse_gate_emission',
    'parse_prediction_outcome',
    'prediction_outcome_to_msg_dict',
    'stamp_to_ns',
    'to_msg_dict',
]

#: A message dict: every field of the .msg by name (SPEC section 4).
MsgDict = dict[str, Any]

_NS_PER_S = 10**9
EnumT = TypeVar('EnumT', bound=IntEnum)
StrEnumT = TypeVar('StrEnumT', bound=StrEnum)


# --- time -------------------------------------------------------------------------------------

def stamp_to_ns(d: Mapping[str, Any], path: str = 'stamp') -> int:
    """Return a builtin_interfaces/Time dict ({'sec', 'nanosec'}) as integer nanoseconds."""
    sec = _int(d, 'sec', path)
    nanosec = _int(d, 'nanosec', path)
    if not 0 <= nanosec < _NS_PER_S:
        raise MessageFormatError(f'{path}.nanosec must be in [0, 1e9), got {nanosec!r}')
    if sec < 0:
        raise MessageFormatError(f'{path}.sec must be >= 0 (stamps are >= 0), got {sec!r}')
    return sec * _NS_PER_S + nanosec


def ns_to_stamp(ns: int) -> dict[str, int]:
    """Return integer nanoseconds (>= 0) as a builtin_interfaces/Time dict."""
    if isinstance(ns, bool) or not isinstance(ns, int) or ns < 0:
        raise MessageFormatError(f'a stamp must be an integer number of ns >= 0, got {ns!r}')
    sec, nanosec = divmod(ns, _NS_PER_S)
    return {'sec': sec, 'nanosec': nanosec}


# --- contract -> dict -------------------------------------------------------------------------

def _header(stamp_ns: int, frame_id: str) -> MsgDict:
    return {'stamp': ns_to_stamp(stamp_ns), 'frame_id': frame_id}


def _point(v: Vec3) -> MsgDict:
    return {'x': float(v[0]), 'y': float(v[1]), 'z': float(v[2])}


@functools.singledispatch
def to_msg_dict(contract: object) -> MsgDict:
    """Return the message dict of any ghost message contract (SPEC section 4)."""
    raise TypeError(f'no ghost message for {type(contract).__name__}')


@to_msg_dict.register
def axis_assessment_to_msg_dict(contract: AxisAssessment) -> MsgDict:
    """Return the AxisAssessment message dict."""
    return {'level': int(contract.level), 'max_std': contract.max_std, 'reason': contract.reason}


@to_msg_dict.register
def belief_self_assessment_to_msg_dict(contract: BeliefSelfAssessment) -> MsgDict:
    """Return the BeliefSelfAssessment message dict."""
    return {
        'header': _header(contract.stamp_ns, contract.frame_id),
        'overall_level': int(contract.overall_level),
        'position': axis_assessment_to_msg_dict(contract.position),
        'velocity': axis_assessment_to_msg_dict(contract.velocity),
        'orientation': axis_assessment_to_msg_dict(contract.orientation),
        'thresholds_sha256': contract.thresholds_sha256,
        'assessor_id': contract.assessor_id,
        'schema_version': contract.schema_version,
    }


@to_msg_dict.register
def forward_prediction_to_msg_dict(contract: ForwardPrediction) -> MsgDict:
    """Return the ForwardPrediction message dict."""
    return {
        'header': _header(contract.stamp_ns, contract.frame_id),
        'target_stamp': ns_to_stamp(contract.target_stamp_ns),
        'predicted_position': _point(contract.predicted_position),
        'position_covariance': [float(x) for x in contract.position_covariance],
        'model_id': contract.model_id,
        'origin_position': _point(contract.origin_position),
        'velocity': _point(contract.velocity),
        'origin_position_covariance': [float(x) for x in contract.origin_position_covariance],
        'velocity_covariance': [float(x) for x in contract.velocity_covariance],
        'process_noise': contract.process_noise,
        'schema_version': contract.schema_version,
    }


@to_msg_dict.register
def prediction_outcome_to_msg_dict(contract: PredictionOutcome) -> MsgDict:
    """Return the PredictionOutcome message dict."""
    return {
        'header': _header(contract.stamp_ns, contract.frame_id),
        'prediction_stamp': ns_to_stamp(contract.prediction_stamp_ns),
        'observed': contract.observed,
        'status': contract.status,
        'predicted_position': _point(contract.predicted_position),
        'observed_position': _point(contract.observed_position),
        'position_mahalanobis': contract.position_mahalanobis,
        'orientation_mahalanobis': contract.orientation_mahalanobis,
        'observation_stamp': ns_to_stamp(contract.observation_stamp_ns),
        'position_axes_compared': contract.position_axes_compared,
        'position_normalised_distance': contract.position_normalised_distance,
        'schema_version': contract.schema_version,
    }


@to_msg_dict.register
def calibration_history_to_msg_dict(contract: CalibrationHistory) -> MsgDict:
    """Return the CalibrationHistory message dict (an absent stamp is has_observed_stamp False)."""
    stamp = contract.most_recent_observed_stamp_ns
    return {
        'outcomes_considered': contract.outcomes_considered,
        'count_within_1_std': contract.count_within_1_std,
        'count_beyond_1_std': contract.count_beyond_1_std,
        'count_beyond_3_std': contract.count_beyond_3_std,
        'count_beyond_5_std': contract.count_beyond_5_std,
        'worst_position_mahalanobis': contract.worst_position_mahalanobis,
        'worst_orientation_mahalanobis': contract.worst_orientation_mahalanobis,
        'has_observed_stamp': stamp is not None,
        'most_recent_observed_stamp': ns_to_stamp(0 if stamp is None else stamp),
        'window_size': contract.window_size,
        'schema_version': contract.schema_version,
    }


@to_msg_dict.register
def calibrated_to_msg_dict(contract: CalibratedSelfAssessment) -> MsgDict:
    """Return the CalibratedSelfAssessment message dict."""
    return {
        'header': _header(contract.stamp_ns, contract.frame_id),
        'raw_assessment': belief_self_assessment_to_msg_dict(contract.raw_assessment),
        'raw_assessment_sha256': contract.raw_assessment_sha256,
        'calibration_history': calibration_history_to_msg_dict(contract.calibration_history),
        'adjusted_overall_level': int(contract.adjusted_overall_level),
        'adjustment_policy_id': contract.adjustment_policy_id,
        'adjustment_reason': contract.adjustment_reason,
        'min_outcomes': contract.min_outcomes,
        'downgrade_threshold': contract.downgrade_threshold,
        'schema_version': contract.schema_version,
    }


@to_msg_dict.register
def decision_to_msg_dict(contract: Decision) -> MsgDict:
    """Return the Decision message dict."""
    return {
        'kind': int(contract.kind),
        'decision_stamp': ns_to_stamp(contract.decision_stamp_ns),
        'reason': contract.reason,
    }


@to_msg_dict.register
def decision_rationale_to_msg_dict(contract: DecisionRationale) -> MsgDict:
    """Return the DecisionRationale message dict (an absent sha is the empty string)."""
    return {
        'header': _header(contract.stamp_ns, contract.frame_id),
        'decision': decision_to_msg_dict(contract.decision),
        'self_assessment_sha256': contract.self_assessment_sha256 or '',
        'calibrated_assessment_sha256': contract.calibrated_assessment_sha256 or '',
        'policy_id': contract.policy_id,
        'schema_version': contract.schema_version,
    }


@to_msg_dict.register
def actuator_command_to_msg_dict(contract: ActuatorCommand) -> MsgDict:
    """Return the ActuatorCommand message dict (velocity as a geometry_msgs/Twist dict)."""
    return {
        'kind': int(contract.kind),
        'velocity': {
            'linear': _point(contract.linear_velocity),
            'angular': _point(contract.angular_velocity),
        },
    }


@to_msg_dict.register
def action_emission_to_msg_dict(contract: ActionEmission) -> MsgDict:
    """Return the ActionEmission message dict."""
    return {
        'header': _header(contract.stamp_ns, contract.frame_id),
        'decision': decision_to_msg_dict(contract.decision),
        'rationale_sha256': contract.rationale_sha256,
        'command': actuator_command_to_msg_dict(contract.command),
        'contract_id': contract.contract_id,
        'schema_version': contract.schema_version,
    }


def _setpoint(value: float | None) -> float:
    # Not controlled (None) is NaN on the wire, as PX4 reads it; canonical JSON keeps NaN.
    return math.nan if value is None else value


@to_msg_dict.register
def gate_emission_to_msg_dict(contract: GateEmission) -> MsgDict:
    """Return the GateEmission message dict (a setpoint axis not controlled is NaN)."""
    return {
        'header': _header(contract.stamp_ns, contract.frame_id),
        'action': int(contract.action),
        'reason': contract.reason.value,
        'mode': contract.mode,
        'output_topic': contract.output_topic,
        'has_actuation': contract.has_actuation,
        'actuation_stamp': ns_to_stamp(contract.actuation_stamp_ns),
        'rationale_sha256': contract.rationale_sha256,
        'decision_kind': contract.decision_kind,
        'command_kind': contract.command_kind,
        'actuation_received': ns_to_stamp(contract.actuation_received_ns),
        'timeout_s': contract.timeout_s,
        'position': [_setpoint(value) for value in contract.position],
        'velocity': [_setpoint(value) for value in contract.velocity],
        'yaw': _setpoint(contract.yaw),
        'twist': {
            'linear': _point(contract.twist_linear),
            'angular': _point(contract.twist_angular),
        },
        'vehicle_command': contract.vehicle_command,
        'schema_version': contract.schema_version,
    }


def message_address(contract: object) -> str:
    """Return H(msg) of a ghost message contract: content_address(to_msg_dict(contract))."""
    return content_address(to_msg_dict(contract))


# --- dict -> contract -------------------------------------------------------------------------
# Parsers accept any Mapping (e.g. rosidl's OrderedDict) and ignore fields they do not know:
# SPEC section 3 allows extra fields. Shape errors raise MessageFormatError naming the path;
# invariant violations raise ContractError from the contract itself.

def _get(d: Mapping[str, Any], key: str, path: str) -> Any:
    if not isinstance(d, Mapping):
        raise MessageFormatError(f'{path} must be a mapping, got {d!r}')
    if key not in d:
        raise MessageFormatError(f'{path}.{key} is missing')
    return d[key]


def _int(d: Mapping[str, Any], key: str, path: str) -> int:
    value = _get(d, key, path)
    if type(value) is int:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise MessageFormatError(f'{path}.{key} must be an integer, got {value!r}')
    return int(value)


def _float(d: Mapping[str, Any], key: str, path: str) -> float:
    value = _get(d, key, path)
    if type(value) is float:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise MessageFormatError(f'{path}.{key} must be a number, got {value!r}')
    return float(value)


def _enum(d: Mapping[str, Any], key: str, path: str, enum: type[EnumT]) -> EnumT:
    return check.enum_member(path, key, _int(d, key, path), enum)


def _str_enum(d: Mapping[str, Any], key: str, path: str, enum: type[StrEnumT]) -> StrEnumT:
    value = _str(d, key, path)
    if value not in {member.value for member in enum}:
        raise check.failure(path, key, f'one of {enum.__name__} ({", ".join(enum)})', value)
    return enum(value)


def _bool(d: Mapping[str, Any], key: str, path: str) -> bool:
    value = _get(d, key, path)
    if not isinstance(value, bool):
        raise MessageFormatError(f'{path}.{key} must be a bool, got {value!r}')
    return value


def _str(d: Mapping[str, Any], key: str, path: str) -> str:
    value = _get(d, key, path)
    if not isinstance(value, str):
        raise MessageFormatError(f'{path}.{key} must be a string, got {value!r}')
    return value


def _sub(d: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    value = _get(d, key, path)
    if not isinstance(value, Mapping):
        raise MessageFormatError(f'{path}.{key} must be a mapping, got {value!r}')
    return value


def _time(d: Mapping[str, Any], key: str, path: str) -> int:
    return stamp_to_ns(_sub(d, key, path), f'{path}.{key}')


def _header_fields(d: Mapping[str, Any], path: str) -> tuple[int, str]:
    header = _sub(d, 'header', path)
    return _time(header, 'stamp', f'{path}.header'), _str(header, 'frame_id', f'{path}.header')


def _vec3(d: Mapping[str, Any], key: str, path: str) -> Vec3:
    point = _sub(d, key, path)
    where = f'{path}.{key}'
    return (_float(point, 'x', where), _float(point, 'y', where), _float(point, 'z', where))


def _floats(d: Mapping[str, Any], key: str, path: str, length: int) -> Mat3:
    value = _get(d, key, path)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise MessageFormatError(f'{path}.{key} must be {length} numbers, got {value!r}')
    items = list(value)
    if len(items) != length or any(
        isinstance(item, bool) or not isinstance(item, numbers.Real) for item in items
    ):
        raise MessageFormatError(f'{path}.{key} must be {length} numbers, got {value!r}')
    return tuple(float(item) for item in items)


def _float_triple(d: Mapping[str, Any], key: str, path: str) -> SetpointVec3:
    x, y, z = _floats(d, key, path, 3)
    return x, y, z


def _sha(d: Mapping[str, Any], key: str, path: str) -> str | None:
    value = _str(d, key, path)
    return value or None


def parse_axis_assessment(d: Mapping[str, Any], path: str = 'AxisAssessment') -> AxisAssessment:
    """Return the AxisAssessment of a message dict (raise on invalid)."""
    return AxisAssessment(_enum(d, 'level', path, SelfAssessmentLevel),
                          _float(d, 'max_std', path),
                          _str(d, 'reason', path))


def parse_belief_self_assessment(
    d: Mapping[str, Any], path: str = 'BeliefSelfAssessment'
) -> BeliefSelfAssessment:
    """Return the BeliefSelfAssessment of a message dict (raise on invalid)."""
    stamp_ns, frame_id = _header_fields(d, path)
    return BeliefSelfAssessment(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        overall_level=_enum(d, 'overall_level', path, SelfAssessmentLevel),
        position=parse_axis_assessment(_sub(d, 'position', path), f'{path}.position'),
        velocity=parse_axis_assessment(_sub(d, 'velocity', path), f'{path}.velocity'),
        orientation=parse_axis_assessment(_sub(d, 'orientation', path), f'{path}.orientation'),
        thresholds_sha256=_str(d, 'thresholds_sha256', path),
        assessor_id=_str(d, 'assessor_id', path),
        schema_version=_int(d, 'schema_version', path),
    )


def parse_forward_prediction(
    d: Mapping[str, Any], path: str = 'ForwardPrediction'
) -> ForwardPrediction:
    """Return the ForwardPrediction of a message dict (raise on invalid)."""
    stamp_ns, frame_id = _header_fields(d, path)
    return ForwardPrediction(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        target_stamp_ns=_time(d, 'target_stamp', path),
        predicted_position=_vec3(d, 'predicted_position', path),
        position_covariance=_floats(d, 'position_covariance', path, 9),
        model_id=_str(d, 'model_id', path),
        origin_position=_vec3(d, 'origin_position', path),
        velocity=_vec3(d, 'velocity', path),
        origin_position_covariance=_floats(d, 'origin_position_covariance', path, 9),
        velocity_covariance=_floats(d, 'velocity_covariance', path, 9),
        process_noise=_float(d, 'process_noise', path),
        schema_version=_int(d, 'schema_version', path),
    )


def parse_prediction_outcome(
    d: Mapping[str, Any], path: str = 'PredictionOutcome'
) -> PredictionOutcome:
    """Return the PredictionOutcome of a message dict (raise on invalid, NaN included)."""
    stamp_ns, frame_id = _header_fields(d, path)
    return PredictionOutcome(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        prediction_stamp_ns=_time(d, 'prediction_stamp', path),
        observed=_bool(d, 'observed', path),
        status=_str(d, 'status', path),
        predicted_position=_vec3(d, 'predicted_position', path),
        observed_position=_vec3(d, 'observed_position', path),
        position_mahalanobis=_float(d, 'position_mahalanobis', path),
        orientation_mahalanobis=_float(d, 'orientation_mahalanobis', path),
        observation_stamp_ns=_time(d, 'observation_stamp', path),
        position_axes_compared=_int(d, 'position_axes_compared', path),
        position_normalised_distance=_float(d, 'position_normalised_distance', path),
        schema_version=_int(d, 'schema_version', path),
    )


def parse_calibration_history(
    d: Mapping[str, Any], path: str = 'CalibrationHistory'
) -> CalibrationHistory:
    """Return the CalibrationHistory of a message dict (raise on invalid).

    When has_observed_stamp is False the stamp must be zero and is read as absent (None).
    """
    has_stamp = _bool(d, 'has_observed_stamp', path)
    stamp = _time(d, 'most_recent_observed_stamp', path)
    if not has_stamp and stamp != 0:
        raise MessageFormatError(
            f'{path}.most_recent_observed_stamp must be zero when has_observed_stamp is false,'
            f' got {stamp!r} ns')
    return CalibrationHistory(
        outcomes_considered=_int(d, 'outcomes_considered', path),
        count_within_1_std=_int(d, 'count_within_1_std', path),
        count_beyond_1_std=_int(d, 'count_beyond_1_std', path),
        count_beyond_3_std=_int(d, 'count_beyond_3_std', path),
        count_beyond_5_std=_int(d, 'count_beyond_5_std', path),
        worst_position_mahalanobis=_float(d, 'worst_position_mahalanobis', path),
        worst_orientation_mahalanobis=_float(d, 'worst_orientation_mahalanobis', path),
        most_recent_observed_stamp_ns=stamp if has_stamp else None,
        window_size=_int(d, 'window_size', path),
        schema_version=_int(d, 'schema_version', path),
    )


def parse_calibrated(
    d: Mapping[str, Any], path: str = 'CalibratedSelfAssessment'
) -> CalibratedSelfAssessment:
    """Return the CalibratedSelfAssessment of a message dict (raise on invalid)."""
    stamp_ns, frame_id = _header_fields(d, path)
    return CalibratedSelfAssessment(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        raw_assessment=parse_belief_self_assessment(_sub(d, 'raw_assessment', path),
                                                    f'{path}.raw_assessment'),
        raw_assessment_sha256=_str(d, 'raw_assessment_sha256', path),
        calibration_history=parse_calibration_history(_sub(d, 'calibration_history', path),
                                                      f'{path}.calibration_history'),
        adjusted_overall_level=_enum(d, 'adjusted_overall_level', path, SelfAssessmentLevel),
        adjustment_policy_id=_str(d, 'adjustment_policy_id', path),
        adjustment_reason=_str(d, 'adjustment_reason', path),
        min_outcomes=_int(d, 'min_outcomes', path),
        downgrade_threshold=_int(d, 'downgrade_threshold', path),
        schema_version=_int(d, 'schema_version', path),
    )


#: Alias of parse_calibrated named after the message.
parse_calibrated_self_assessment = parse_calibrated


def parse_decision(d: Mapping[str, Any], path: str = 'Decision') -> Decision:
    """Return the Decision of a message dict (raise on invalid)."""
    return Decision(
        kind=_enum(d, 'kind', path, DecisionKind),
        decision_stamp_ns=_time(d, 'decision_stamp', path),
        reason=_str(d, 'reason', path),
    )


def parse_decision_rationale(
    d: Mapping[str, Any], path: str = 'DecisionRationale'
) -> DecisionRationale:
    """Return the DecisionRationale of a message dict (empty sha strings become None)."""
    stamp_ns, frame_id = _header_fields(d, path)
    return DecisionRationale(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        decision=parse_decision(_sub(d, 'decision', path), f'{path}.decision'),
        self_assessment_sha256=_sha(d, 'self_assessment_sha256', path),
        calibrated_assessment_sha256=_sha(d, 'calibrated_assessment_sha256', path),
        policy_id=_str(d, 'policy_id', path),
        schema_version=_int(d, 'schema_version', path),
    )


def parse_actuator_command(
    d: Mapping[str, Any], path: str = 'ActuatorCommand'
) -> ActuatorCommand:
    """Return the ActuatorCommand of a message dict (raise on invalid)."""
    velocity = _sub(d, 'velocity', path)
    return ActuatorCommand(
        kind=_enum(d, 'kind', path, ActuatorCommandKind),
        linear_velocity=_vec3(velocity, 'linear', f'{path}.velocity'),
        angular_velocity=_vec3(velocity, 'angular', f'{path}.velocity'),
    )


def parse_action_emission(d: Mapping[str, Any], path: str = 'ActionEmission') -> ActionEmission:
    """Return the ActionEmission of a message dict (raise on invalid)."""
    stamp_ns, frame_id = _header_fields(d, path)
    return ActionEmission(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        decision=parse_decision(_sub(d, 'decision', path), f'{path}.decision'),
        rationale_sha256=_str(d, 'rationale_sha256', path),
        command=parse_actuator_command(_sub(d, 'command', path), f'{path}.command'),
        contract_id=_str(d, 'contract_id', path),
        schema_version=_int(d, 'schema_version', path),
    )


def parse_gate_emission(d: Mapping[str, Any], path: str = 'GateEmission') -> GateEmission:
    """Return the GateEmission of a message dict (NaN setpoint axes become None)."""
    stamp_ns, frame_id = _header_fields(d, path)
    twist = _sub(d, 'twist', path)
    return GateEmission(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        action=_enum(d, 'action', path, GateAction),
        reason=_str_enum(d, 'reason', path, GateReason),
        mode=_str(d, 'mode', path),
        output_topic=_str(d, 'output_topic', path),
        timeout_s=_float(d, 'timeout_s', path),
        has_actuation=_bool(d, 'has_actuation', path),
        actuation_stamp_ns=_time(d, 'actuation_stamp', path),
        rationale_sha256=_str(d, 'rationale_sha256', path),
        decision_kind=_int(d, 'decision_kind', path),
        command_kind=_int(d, 'command_kind', path),
        actuation_received_ns=_time(d, 'actuation_received', path),
        position=_float_triple(d, 'position', path),
        velocity=_float_triple(d, 'velocity', path),
        yaw=_float(d, 'yaw', path),
        twist_linear=_vec3(twist, 'linear', f'{path}.twist'),
        twist_angular=_vec3(twist, 'angular', f'{path}.twist'),
        vehicle_command=_int(d, 'vehicle_command', path),
        schema_version=_int(d, 'schema_version', path),
    )


#: Every ghost message: its .msg name -> (contract type, parser).
MESSAGE_TYPES: Mapping[str, tuple[type, Callable[..., object]]] = MappingProxyType({
    'ActionEmission': (ActionEmission, parse_action_emission),
    'ActuatorCommand': (ActuatorCommand, parse_actuator_command),
    'AxisAssessment': (AxisAssessment, parse_axis_assessment),
    'BeliefSelfAssessment': (BeliefSelfAssessment, parse_belief_self_assessment),
    'CalibratedSelfAssessment': (CalibratedSelfAssessment, parse_calibrated),
    'CalibrationHistory': (CalibrationHistory, parse_calibration_history),
    'Decision': (Decision, parse_decision),
    'DecisionRationale': (DecisionRationale, parse_decision_rationale),
    'ForwardPrediction': (ForwardPrediction, parse_forward_prediction),
    'GateEmission': (GateEmission, parse_gate_emission),
    'PredictionOutcome': (PredictionOutcome, parse_prediction_outcome),
})
