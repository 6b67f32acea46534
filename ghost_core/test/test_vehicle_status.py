"""The decision context's vehicle status (ADR-0021 §2): catalogues, contract, tracker, MAVROS."""

from __future__ import annotations

from dataclasses import replace
import hashlib
import json
from pathlib import Path

from ghost_core_test import examples as ex
from ghost_core_test.strategies import flight_statuses, mission_statuses, taxonomies
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.contracts import DecisionContext, VehicleStatus
from ghost_core.decisions import decide_with_rationale, UncertaintyAwareReferencePolicy
from ghost_core.errors import ContractError
from ghost_core.hashing import canonical_json
from ghost_core.levels import FlightStatus, MissionStatus, SelfAssessmentLevel
from ghost_core.msg_codegen import parse_msg
from ghost_core.pipeline import Pipeline, run_pipeline
from ghost_core.scenarios import generate_scenario, run_scenario
from ghost_core.vehicle import mavros_status, VehicleStatusTracker
from ghost_core.wire import message_address, parse_decision_rationale, to_msg_dict

MSG_DIR = Path(__file__).resolve().parents[2] / 'ghost_interfaces' / 'msg'
IN_AIR, ON_MISSION = FlightStatus.IN_AIR, MissionStatus.ON_MISSION
POLICY = UncertaintyAwareReferencePolicy()


def _status(stamp_ns: int, flight: FlightStatus = IN_AIR,
            mission: MissionStatus = ON_MISSION) -> VehicleStatus:
    return VehicleStatus(stamp_ns, 'map', flight, mission, 'test')


@pytest.mark.parametrize('message', ['VehicleStatus', 'DecisionRationale'])
def test_msg_constants_are_the_catalogues(message: str) -> None:
    """FLIGHT_*/MISSION_* of both .msg files are exactly FlightStatus and MissionStatus."""
    _, constants = parse_msg((MSG_DIR / f'{message}.msg').read_text(), message)
    found = {name: value for name, _, value in constants}
    expected = {**{f'FLIGHT_{m.name}': m.value for m in FlightStatus},
                **{f'MISSION_{m.name}': m.value for m in MissionStatus}}
    assert found == expected


def test_vehicle_status_refuses_values_outside_its_catalogues_naming_the_field() -> None:
    with pytest.raises(ContractError, match=r'VehicleStatus\.flight_status'):
        VehicleStatus(1, 'map', len(FlightStatus), ON_MISSION, 'test')
    with pytest.raises(ContractError, match=r'VehicleStatus\.mission_status'):
        VehicleStatus(1, 'map', IN_AIR, len(MissionStatus), 'test')
    with pytest.raises(ContractError, match=r'VehicleStatus\.perception_mode'):
        VehicleStatus(1, 'map', IN_AIR, ON_MISSION, 'test', perception_mode='GNSS')
    with pytest.raises(ContractError, match=r'VehicleStatus\.source'):
        VehicleStatus(1, 'map', IN_AIR, ON_MISSION, '')


def test_the_rationale_layout_is_version_3_and_records_the_context() -> None:
    """Schemas 1 and 2 (no status, no named status) are refused; the fields are required."""
    message = to_msg_dict(ex.rationale())
    assert message['schema_version'] == 3
    for old in (1, 2):
        with pytest.raises(ContractError, match='schema_version'):
            parse_decision_rationale({**message, 'schema_version': old})
    for name in ('flight_status', 'mission_status', 'perception_mode'):
        with pytest.raises(ValueError, match=name):
            parse_decision_rationale({k: v for k, v in message.items() if k != name})


# Schema-3 known-answer vectors (docs/contracts.md): the JSON written out by hand and its
# SHA-256, pinned as literals so that any change to the hashing or the layout fails here.
RATIONALE_V3 = (
    '{"calibrated_assessment_sha256":"' + 'b' * 64 + '","decision":{"decision_stamp":'
    '{"nanosec":500000000,"sec":1},"kind":0,"reason":"adjusted_level_known"},'
    '"flight_status":3,"has_vehicle_status":false,'
    '"header":{"frame_id":"map","stamp":{"nanosec":500000000,"sec":1}},'
    '"mission_status":2,"perception_mode":"","policy_id":"uncertainty_aware_reference_v1",'
    '"schema_version":3,"self_assessment_sha256":"' + 'a' * 64 + '",'
    '"vehicle_status_stamp":{"nanosec":0,"sec":0}}')
RATIONALE_V3_SHA256 = 'a0c61735c83b7ca07cd963911878c0500ca030c422f07d675f825aca75fe6f86'
RATIONALE_V3_GNSS_SHA256 = 'bbf934abbb7f35b04641dd61be2d17399e898a824520daeac2917c05143d7096'
VEHICLE_STATUS_V1 = (
    '{"flight_status":3,"header":{"frame_id":"odom","stamp":{"nanosec":500000000,"sec":1}},'
    '"mission_status":2,"perception_mode":"","schema_version":1,'
    '"source":"px4_vehicle_status"}')
VEHICLE_STATUS_V1_SHA256 = '0dcf793da867e1eac3356e0c014556082956b6080e3d3c0fedfd830469ad17f7'


def test_rationale_schema_3_known_answer() -> None:
    rationale = ex.rationale()
    assert canonical_json(to_msg_dict(rationale)) == RATIONALE_V3
    assert hashlib.sha256(RATIONALE_V3.encode()).hexdigest() == RATIONALE_V3_SHA256
    assert message_address(rationale) == RATIONALE_V3_SHA256
    assert parse_decision_rationale(json.loads(RATIONALE_V3)) == rationale
    on_ground = replace(rationale, flight_status=FlightStatus.ARMED_ON_GROUND,
                        mission_status=MissionStatus.NO_MISSION, perception_mode='gnss')
    literal = (RATIONALE_V3.replace('"flight_status":3', '"flight_status":2')
               .replace('"mission_status":2', '"mission_status":1')
               .replace('"perception_mode":""', '"perception_mode":"gnss"'))
    assert canonical_json(to_msg_dict(on_ground)) == literal
    assert message_address(on_ground) == RATIONALE_V3_GNSS_SHA256
    assert hashlib.sha256(literal.encode()).hexdigest() == RATIONALE_V3_GNSS_SHA256


def test_vehicle_status_known_answer() -> None:
    status = VehicleStatus(ex.STAMP_NS, 'odom', IN_AIR, ON_MISSION, 'px4_vehicle_status')
    assert canonical_json(to_msg_dict(status)) == VEHICLE_STATUS_V1
    assert message_address(status) == VEHICLE_STATUS_V1_SHA256
    assert hashlib.sha256(VEHICLE_STATUS_V1.encode()).hexdigest() == VEHICLE_STATUS_V1_SHA256


@settings(max_examples=200, deadline=None)
@given(flight=flight_statuses, mission=mission_statuses,
       perception=st.none() | taxonomies, level=st.sampled_from(list(SelfAssessmentLevel)))
def test_the_reference_policy_ignores_the_status_and_the_rationale_records_it(
        flight: FlightStatus, mission: MissionStatus, perception: str | None,
        level: SelfAssessmentLevel) -> None:
    """The reference policy decides the same whatever the vehicle status (ADR-0021).

    Any flight/mission status and perception mode: the same decision as with UNKNOWN; the
    rationale carries them, so its content address covers them.
    """
    calibrated = replace(ex.calibrated(), adjusted_overall_level=level)
    status = VehicleStatus(ex.STAMP_NS, 'map', flight, mission, 'test', perception)
    seen = decide_with_rationale(POLICY, DecisionContext.from_calibrated(calibrated, status))
    blind = decide_with_rationale(POLICY, DecisionContext.from_calibrated(calibrated, None))
    assert seen.decision == blind.decision
    assert (seen.flight_status, seen.mission_status, seen.perception_mode) == (
        flight, mission, perception)
    assert (blind.flight_status, blind.mission_status, blind.perception_mode) == (
        FlightStatus.UNKNOWN, MissionStatus.UNKNOWN, None)
    # The rationale names the status it saw (SPEC 5, v1.3), so the two always differ.
    assert (seen.vehicle_status_stamp_ns, blind.vehicle_status_stamp_ns) == (ex.STAMP_NS, None)
    assert message_address(seen) != message_address(blind)


def test_the_tracker_gives_the_latest_status_stamped_at_or_before_the_cycle() -> None:
    tracker = VehicleStatusTracker()
    assert tracker.at(10) is None
    later = _status(30, FlightStatus.ARMED_ON_GROUND)
    tracker.on_status(later)  # arrives first, stamped later
    tracker.on_status(_status(10, FlightStatus.DISARMED))
    assert tracker.at(9) is None
    assert tracker.at(10) == _status(10, FlightStatus.DISARMED)
    assert tracker.at(29) == _status(10, FlightStatus.DISARMED)
    assert tracker.at(30) is later
    replaced = _status(30, IN_AIR)
    tracker.on_status(replaced)  # the same stamp again: the later received counts
    assert tracker.at(31) is replaced
    tracker.forget_before(30)
    assert len(tracker) == 1
    assert tracker.at(30) is replaced


@pytest.mark.parametrize(('connected', 'armed', 'mode', 'landed', 'expected'), [
    (False, True, 'AUTO.MISSION', 2, (FlightStatus.UNKNOWN, MissionStatus.UNKNOWN)),
    (True, False, 'POSCTL', None, (FlightStatus.DISARMED, MissionStatus.NO_MISSION)),
    (True, True, 'AUTO.MISSION', None, (FlightStatus.ARMED, MissionStatus.ON_MISSION)),
    (True, True, 'OFFBOARD', 2, (IN_AIR, MissionStatus.OFFBOARD)),
    (True, True, 'AUTO.TAKEOFF', 1, (FlightStatus.ARMED_ON_GROUND, MissionStatus.TAKING_OFF)),
    (True, True, 'AUTO.RTL', 0, (FlightStatus.ARMED, MissionStatus.RETURNING)),
    (True, True, 'LAND', 4, (IN_AIR, MissionStatus.LANDING)),
    (True, True, 'GUIDED', 2, (IN_AIR, MissionStatus.OFFBOARD)),
    (True, True, 'SOME_NEW_MODE', 2, (IN_AIR, MissionStatus.UNKNOWN)),
])
def test_mavros_state(connected: bool, armed: bool, mode: str, landed: int | None,
                      expected: tuple[FlightStatus, MissionStatus]) -> None:
    """/mavros/state (+ extended_state's landed_state): only what MAVROS reports."""
    assert mavros_status(connected, armed, mode, landed) == expected


def test_scenarios_record_their_own_status_in_every_decision() -> None:
    for name, mission in (('smoke', ON_MISSION), ('dropout', MissionStatus.HOLDING)):
        traces = run_scenario(generate_scenario(name))
        assert {(t.rationale.flight_status, t.rationale.mission_status) for t in traces} == {
            (IN_AIR, mission)}


def test_without_status_input_the_context_is_unknown_never_invented() -> None:
    """A bag of beliefs and fixes only (no /vehicle_status): every decision records UNKNOWN."""
    scenario = generate_scenario('smoke')
    inputs = [item for item in scenario.inputs() if not isinstance(item, VehicleStatus)]
    traces = run_pipeline(inputs, scenario.parameters.pipeline_config())
    assert len(traces) == len(scenario.cycles)
    assert {(t.rationale.flight_status, t.rationale.mission_status, t.rationale.perception_mode)
            for t in traces} == {(FlightStatus.UNKNOWN, MissionStatus.UNKNOWN, None)}


def test_the_pipeline_applies_each_status_from_its_stamp_on() -> None:
    """Each decision records the status in force at its stamp.

    Disarmed, armed on the ground, then in the air from cycle 5: each decision records the
    status in force at its stamp, whatever status arrived later (stamped after the cycle).
    """
    scenario = generate_scenario('nominal', cycles=8)
    pipeline = Pipeline(scenario.parameters.pipeline_config())
    stamps = [cycle.stamp_ns for cycle in scenario.cycles]
    plan = {stamps[0]: FlightStatus.DISARMED, stamps[2]: FlightStatus.ARMED_ON_GROUND,
            stamps[4]: IN_AIR}
    traces = []
    for item in scenario.inputs():
        if isinstance(item, VehicleStatus):
            if item.stamp_ns in plan:
                traces += pipeline.feed(_status(item.stamp_ns, plan[item.stamp_ns]))
            continue
        traces += pipeline.feed(item)
    traces += pipeline.finish()
    assert [t.rationale.flight_status for t in traces] == [
        FlightStatus.DISARMED] * 2 + [FlightStatus.ARMED_ON_GROUND] * 2 + [IN_AIR] * 4
