"""Every ghost message: SPEC §3 constants, and a lossless CDR round trip through rclpy."""

import math

from builtin_interfaces.msg import Time
import pytest
from rclpy.serialization import deserialize_message, serialize_message

from ghost_interfaces.msg import (
    ActionEmission,
    ActuatorCommand,
    AxisAssessment,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    CalibrationHistory,
    Decision,
    DecisionRationale,
    ForwardPrediction,
    PredictionOutcome,
)

SHA = 'ab' * 32


def test_level_constants_match_spec() -> None:
    assert (BeliefSelfAssessment.KNOWN, BeliefSelfAssessment.UNCERTAIN,
            BeliefSelfAssessment.UNKNOWN) == (0, 1, 2)


def test_decision_kind_constants_match_spec() -> None:
    expected = {'PROCEED': 0, 'HOLD': 1, 'YIELD_TO_PILOT': 2, 'ENGAGE_RTL': 3,
                'ENGAGE_LAND': 4, 'ENGAGE_KILL': 5, 'ABSTAIN_UNCERTAIN': 6}
    assert {name: getattr(Decision, name) for name in expected} == expected


def test_actuator_command_constants_match_spec() -> None:
    expected = {'NONE': 0, 'HOLD_POSITION': 1, 'CONTINUE_MISSION': 2, 'VELOCITY_SETPOINT': 3,
                'LAND': 4, 'RETURN_TO_LAUNCH': 5, 'KILL': 6}
    assert {name: getattr(ActuatorCommand, name) for name in expected} == expected


def _stamp(sec: int, nanosec: int) -> Time:
    return Time(sec=sec, nanosec=nanosec)


def _assessment() -> BeliefSelfAssessment:
    msg = BeliefSelfAssessment()
    msg.header.stamp = _stamp(12, 500_000_000)
    msg.header.frame_id = 'map'
    msg.overall_level = BeliefSelfAssessment.UNCERTAIN
    msg.position = AxisAssessment(level=1, max_std=0.75, reason='within_uncertain_threshold')
    msg.velocity = AxisAssessment(level=0, max_std=0.1, reason='within_known_threshold')
    msg.orientation = AxisAssessment(level=0, max_std=0.01, reason='within_known_threshold')
    msg.thresholds_sha256 = SHA
    msg.assessor_id = 'covariance_thresholds_v1'
    msg.schema_version = 1
    return msg


def _history() -> CalibrationHistory:
    return CalibrationHistory(
        outcomes_considered=5, count_within_1_std=1, count_beyond_1_std=1,
        count_beyond_3_std=1, count_beyond_5_std=2,
        worst_position_mahalanobis=math.inf, worst_orientation_mahalanobis=0.0,
        has_observed_stamp=True, most_recent_observed_stamp=_stamp(12, 500_000_000),
        window_size=32, schema_version=1)


def _calibrated() -> CalibratedSelfAssessment:
    msg = CalibratedSelfAssessment()
    msg.header.stamp = _stamp(12, 500_000_000)
    msg.raw_assessment = _assessment()
    msg.raw_assessment_sha256 = SHA
    msg.calibration_history = _history()
    msg.adjusted_overall_level = BeliefSelfAssessment.UNKNOWN
    msg.adjustment_policy_id = 'mahalanobis_downgrade_v1'
    msg.adjustment_reason = 'downgrade_from_calibration'
    msg.min_outcomes = 4
    msg.downgrade_threshold = 2
    msg.schema_version = 1
    return msg


def _decision() -> Decision:
    return Decision(kind=Decision.HOLD, decision_stamp=_stamp(12, 500_000_000),
                    reason='adjusted_level_uncertain')


def _prediction() -> ForwardPrediction:
    msg = ForwardPrediction()
    msg.header.stamp = _stamp(1, 0)
    msg.target_stamp = _stamp(1, 100_000_000)
    msg.predicted_position.x = 1.5
    msg.position_covariance = [0.1, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.1]
    msg.model_id = 'constant_velocity_v1'
    msg.schema_version = 1
    return msg


def _outcome() -> PredictionOutcome:
    msg = PredictionOutcome()
    msg.header.stamp = _stamp(1, 100_000_000)
    msg.prediction_stamp = _stamp(1, 0)
    msg.observed = True
    msg.status = 'paired'
    msg.predicted_position.x = 1.5
    msg.observed_position.x = 2.5
    msg.position_mahalanobis = math.inf
    msg.orientation_mahalanobis = 0.0
    msg.schema_version = 1
    return msg


def _rationale() -> DecisionRationale:
    msg = DecisionRationale()
    msg.header.stamp = _stamp(12, 500_000_000)
    msg.decision = _decision()
    msg.self_assessment_sha256 = SHA
    msg.calibrated_assessment_sha256 = 'cd' * 32
    msg.policy_id = 'uncertainty_aware_reference_v1'
    msg.flight_status = DecisionRationale.FLIGHT_IN_AIR
    msg.mission_status = DecisionRationale.MISSION_ON_MISSION
    msg.perception_mode = 'gnss'
    msg.schema_version = 2
    return msg


def _emission() -> ActionEmission:
    msg = ActionEmission()
    msg.header.stamp = _stamp(12, 500_000_000)
    msg.decision = _decision()
    msg.rationale_sha256 = SHA
    msg.command = ActuatorCommand(kind=ActuatorCommand.VELOCITY_SETPOINT)
    msg.command.velocity.linear.x = 2.0
    msg.contract_id = 'reference_action_emission_v1'
    msg.schema_version = 1
    return msg


BUILDERS = {
    'AxisAssessment': lambda: AxisAssessment(level=2, max_std=0.0, reason='negative_variance'),
    'BeliefSelfAssessment': _assessment,
    'ForwardPrediction': _prediction,
    'PredictionOutcome': _outcome,
    'CalibrationHistory': _history,
    'CalibratedSelfAssessment': _calibrated,
    'Decision': _decision,
    'DecisionRationale': _rationale,
    'ActuatorCommand': lambda: ActuatorCommand(kind=ActuatorCommand.LAND),
    'ActionEmission': _emission,
}


@pytest.mark.parametrize('name', sorted(BUILDERS))
def test_message_survives_cdr_round_trip(name: str) -> None:
    """Construct, serialize with rclpy, deserialize: the result equals the original."""
    msg = BUILDERS[name]()
    data = serialize_message(msg)
    back = deserialize_message(data, type(msg))
    assert back == msg
    # Serialized again, it decodes to the same message. (Not the same bytes: Fast CDR leaves
    # alignment padding unwritten, so padding bytes are whatever the buffer held.)
    assert deserialize_message(serialize_message(back), type(msg)) == msg


def test_infinite_mahalanobis_is_carried_exactly() -> None:
    back = deserialize_message(serialize_message(_outcome()), PredictionOutcome)
    assert back.position_mahalanobis == math.inf


def test_message_fields_carry_binding_names() -> None:
    """Spot-check the binding field names of SPEC section 3 on the generated classes."""
    calibrated = CalibratedSelfAssessment.get_fields_and_field_types()
    for field in ('header', 'raw_assessment', 'raw_assessment_sha256', 'calibration_history',
                  'adjusted_overall_level', 'adjustment_policy_id', 'adjustment_reason',
                  'min_outcomes', 'downgrade_threshold', 'schema_version'):
        assert field in calibrated
    emission = ActionEmission.get_fields_and_field_types()
    assert {'header', 'decision', 'rationale_sha256', 'command', 'contract_id',
            'schema_version'} <= set(emission)
