"""GATE-v1 judged on gate records (ghost_core.gate_property): every postcondition, every kind."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
import math

from ghost_core_test.strategies import gate_runs, GateRecordView, GateRun
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.evidence import TRANSPORT_BOUND_NS
from ghost_core.gate import GateAction, GateReason, may_pass
from ghost_core.gate_property import (
    CitedActuationFacts,
    CitedActuationView,
    CitedLookup,
    DEFAULT_TIMEOUT_NS,
    GATE_V1,
    GateViolation,
    judge_gate,
    NewerActuation,
    timeout_ns_of,
)
from ghost_core.gate_property import GateViolationKind as K
from ghost_core.levels import ActuatorCommandKind as C
from ghost_core.levels import DecisionKind as D

SHA = 'a' * 64
OTHER_SHA = 'b' * 64
CYCLE = 2_000_000_000
SENT = CYCLE + 150_000_000
RECEIVED = CYCLE + 10_000_000
PROCEED = CitedActuationView(D.PROCEED, C.CONTINUE_MISSION, SHA)
HOLD = CitedActuationView(D.HOLD, C.HOLD_POSITION, SHA)
LAND = CitedActuationView(D.ENGAGE_LAND, C.LAND, SHA)
RTL = CitedActuationView(D.ENGAGE_RTL, C.RETURN_TO_LAUNCH, SHA)

PASSED = GateRecordView(
    gate='/ghost/gate', stamp_ns=SENT, action=GateAction.PASSED, reason=GateReason.PROCEED,
    output_topic='/fmu/in/trajectory_setpoint', has_actuation=True, actuation_stamp_ns=CYCLE,
    rationale_sha256=SHA, decision_kind=D.PROCEED, command_kind=C.CONTINUE_MISSION,
    actuation_received_ns=RECEIVED, timeout_s=0.5, velocity=(2.0, -1.0, 0.0))
HELD = replace(PASSED, action=GateAction.HELD, reason=GateReason.DECISION_NOT_PROCEED,
               decision_kind=D.HOLD, command_kind=C.HOLD_POSITION, velocity=(0.0, 0.0, 0.0))
NOTHING_YET = replace(HELD, reason=GateReason.NO_ACTUATION, has_actuation=False,
                      actuation_stamp_ns=0, rationale_sha256='', decision_kind=0,
                      command_kind=0, actuation_received_ns=0)
LANDING = replace(HELD, action=GateAction.VEHICLE_COMMAND, reason=GateReason.LAND,
                  output_topic='/fmu/in/vehicle_command', decision_kind=D.ENGAGE_LAND,
                  command_kind=C.LAND, vehicle_command=21)

def first_blocking_after(
    stamp_ns: int, actuations: Mapping[int, Sequence[CitedActuationFacts]],
) -> NewerActuation | None:
    """The earliest logged actuation newer than `stamp_ns` that may not pass (None: none)."""
    newer = [NewerActuation(stamp, item.log_time_ns, item.decision_kind, item.command_kind)
             for stamp, items in actuations.items() if stamp > stamp_ns for item in items
             if item.log_time_ns is not None
             and not may_pass(item.decision_kind, item.command_kind)]
    return min(newer, key=lambda item: item.log_time_ns, default=None)


def judge_gate_records(
    records: Iterable[GateRecordView],
    actuations: Mapping[int, Sequence[CitedActuationFacts]],
    timeout_ns: int = DEFAULT_TIMEOUT_NS,
) -> tuple[GateViolation, ...]:
    """The reference: every record judged in the order its gate sent it, every cycle held.

    With the recorder's log times of the records and actuations, when they have them.
    """
    latest: dict[str, int] = {}
    found: list[GateViolation] = []
    for record in records:
        found.extend(judge_gate(record, actuations.get(record.actuation_stamp_ns, ()),
                                latest_cited_ns=latest.get(record.gate),
                                timeout_ns=timeout_ns, record_log_time_ns=record.log_time_ns,
                                newer=first_blocking_after(record.actuation_stamp_ns,
                                                           actuations)))
        if record.has_actuation:
            latest[record.gate] = max(latest.get(record.gate, record.actuation_stamp_ns),
                                      record.actuation_stamp_ns)
    return tuple(found)


# (name, record, cited, lookup, latest cited, the kinds expected)
CASES = [
    ('passes_on_a_fresh_proceed', PASSED, (PROCEED,), CitedLookup.RECORDED, None, set()),
    ('passes_at_exactly_the_timeout', replace(PASSED, stamp_ns=RECEIVED + 500_000_000),
     (PROCEED,), CitedLookup.RECORDED, None, set()),
    ('passes_citing_the_same_actuation_again', PASSED, (PROCEED,), CitedLookup.RECORDED,
     CYCLE, set()),
    ('passed_before_any_actuation', replace(NOTHING_YET, action=GateAction.PASSED), (),
     CitedLookup.RECORDED, None, {K.NO_ACTUATION_CITED}),
    ('passed_citing_an_actuation_not_in_the_bag', PASSED, (), CitedLookup.RECORDED, None,
     {K.ACTUATION_MISSING}),
    ('passed_citing_another_rationale', PASSED, (replace(PROCEED, rationale_sha256=OTHER_SHA),),
     CitedLookup.RECORDED, None, {K.RATIONALE_MISMATCH}),
    ('passed_whose_actuation_is_out_of_reach', PASSED, (), CitedLookup.OUT_OF_REACH, None,
     {K.ACTUATION_OUT_OF_REACH}),
    ('passed_whose_actuation_precedes_the_recording', PASSED, (),
     CitedLookup.BEFORE_RECORDING, None, set()),
    ('passed_on_a_hold', replace(PASSED, decision_kind=D.HOLD, command_kind=C.HOLD_POSITION),
     (HOLD,), CitedLookup.RECORDED, None, {K.PASSED_NOT_PROCEED}),
    ('passed_on_a_proceed_with_a_velocity_setpoint',
     replace(PASSED, command_kind=C.VELOCITY_SETPOINT),
     (replace(PROCEED, command_kind=C.VELOCITY_SETPOINT),), CitedLookup.RECORDED, None,
     {K.PASSED_NOT_PROCEED}),
    ('passed_claiming_proceed_on_a_recorded_hold', PASSED, (HOLD,), CitedLookup.RECORDED,
     None, {K.KINDS_MISMATCH, K.PASSED_NOT_PROCEED}),
    ('passed_misquoting_a_recorded_proceed',
     replace(PASSED, decision_kind=D.HOLD, command_kind=C.HOLD_POSITION), (PROCEED,),
     CitedLookup.RECORDED, None, {K.KINDS_MISMATCH}),
    ('passed_on_its_own_hold_with_the_actuation_missing',
     replace(PASSED, decision_kind=D.HOLD), (), CitedLookup.RECORDED, None,
     {K.ACTUATION_MISSING, K.PASSED_NOT_PROCEED}),
    ('passed_one_ns_after_the_timeout', replace(PASSED, stamp_ns=RECEIVED + 500_000_001),
     (PROCEED,), CitedLookup.RECORDED, None, {K.ACTUATION_STALE}),
    ('passed_with_a_zero_timeout', replace(PASSED, timeout_s=0.0), (PROCEED,),
     CitedLookup.RECORDED, None, {K.INVALID_TIMEOUT}),
    ('passed_with_a_nan_timeout', replace(PASSED, timeout_s=math.nan), (PROCEED,),
     CitedLookup.RECORDED, None, {K.INVALID_TIMEOUT}),
    ('passed_with_an_infinite_timeout', replace(PASSED, timeout_s=math.inf), (PROCEED,),
     CitedLookup.RECORDED, None, {K.INVALID_TIMEOUT}),
    ('passed_on_an_older_actuation', PASSED, (PROCEED,), CitedLookup.RECORDED, CYCLE + 1,
     {K.ACTUATION_WENT_BACKWARDS}),
    ('held_on_an_older_actuation', HELD, (), CitedLookup.RECORDED, CYCLE + 1,
     {K.ACTUATION_WENT_BACKWARDS}),
    ('held_with_zero_velocity', HELD, (), CitedLookup.RECORDED, None, set()),
    ('held_with_uncontrolled_axes', replace(HELD, velocity=(math.nan, 0.0, math.nan)), (),
     CitedLookup.RECORDED, None, set()),
    ('held_before_any_actuation', NOTHING_YET, (), CitedLookup.RECORDED, None, set()),
    ('held_after_forgetting_its_actuation', NOTHING_YET, (), CitedLookup.RECORDED, CYCLE,
     set()),
    ('held_while_moving', replace(HELD, velocity=(0.0, 0.5, 0.0)), (), CitedLookup.RECORDED,
     None, {K.HELD_OUTPUT_MOVES}),
    ('held_with_an_infinite_velocity', replace(HELD, velocity=(math.inf, 0.0, 0.0)), (),
     CitedLookup.RECORDED, None, {K.HELD_OUTPUT_MOVES}),
    ('held_with_a_turning_twist', replace(HELD, mode='twist', twist_angular=(0.0, 0.0, 0.3)),
     (), CitedLookup.RECORDED, None, {K.HELD_OUTPUT_MOVES}),
    ('held_with_a_nan_twist', replace(HELD, mode='twist', twist_linear=(math.nan, 0.0, 0.0)),
     (), CitedLookup.RECORDED, None, {K.HELD_OUTPUT_MOVES}),
    ('lands_on_land', LANDING, (LAND,), CitedLookup.RECORDED, None, set()),
    ('returns_on_return_to_launch',
     replace(LANDING, reason=GateReason.RETURN_TO_LAUNCH, decision_kind=D.ENGAGE_RTL,
             command_kind=C.RETURN_TO_LAUNCH, vehicle_command=20),
     (RTL,), CitedLookup.RECORDED, None, set()),
    ('kills', replace(LANDING, vehicle_command=185), (LAND,), CitedLookup.RECORDED, None,
     {K.INVALID_VEHICLE_COMMAND}),
    ('returns_on_land', replace(LANDING, vehicle_command=20), (LAND,), CitedLookup.RECORDED,
     None, {K.VEHICLE_COMMAND_MISMATCH}),
    ('lands_on_proceed', replace(LANDING, decision_kind=D.PROCEED,
                                 command_kind=C.CONTINUE_MISSION),
     (PROCEED,), CitedLookup.RECORDED, None, {K.VEHICLE_COMMAND_MISMATCH}),
    ('lands_claiming_land_on_a_recorded_proceed', LANDING, (PROCEED,), CitedLookup.RECORDED,
     None, {K.KINDS_MISMATCH, K.VEHICLE_COMMAND_MISMATCH}),
    ('lands_before_any_actuation', replace(NOTHING_YET, action=GateAction.VEHICLE_COMMAND,
                                           vehicle_command=21),
     (), CitedLookup.RECORDED, None, {K.NO_ACTUATION_CITED}),
    ('lands_citing_an_actuation_not_in_the_bag', LANDING, (), CitedLookup.RECORDED, None,
     {K.ACTUATION_MISSING}),
    ('lands_citing_another_rationale', LANDING, (replace(LAND, rationale_sha256=OTHER_SHA),),
     CitedLookup.RECORDED, None, {K.RATIONALE_MISMATCH}),
    ('lands_out_of_reach', LANDING, (), CitedLookup.OUT_OF_REACH, None,
     {K.ACTUATION_OUT_OF_REACH}),
    ('sends_an_unknown_action', replace(HELD, action=7), (), CitedLookup.RECORDED, None,
     {K.UNKNOWN_ACTION}),
]


@pytest.mark.parametrize('name,record,cited,lookup,latest,expected', CASES,
                         ids=[case[0] for case in CASES])
def test_each_record_gets_exactly_the_violations_of_its_faults(
    name: str,
    record: GateRecordView,
    cited: tuple[CitedActuationView, ...],
    lookup: CitedLookup,
    latest: int | None,
    expected: set[K],
) -> None:
    found = judge_gate(record, cited, lookup=lookup, latest_cited_ns=latest)
    assert {violation.kind for violation in found} == expected
    assert len(found) == len(expected)
    assert all(violation.record_stamp_ns == record.stamp_ns for violation in found)


#: The actuations as the recorder logged them: cited at CYCLE, a newer HOLD 100 ms later.
PROCEED_LOGGED = replace(PROCEED, log_time_ns=RECEIVED)
NEWER_HOLD = NewerActuation(CYCLE + 100_000_000, CYCLE + 110_000_000, D.HOLD, C.HOLD_POSITION)
#: The latest a PASSED record may be logged after its actuation: the timeout and the bound.
LOG_AGE_LIMIT = DEFAULT_TIMEOUT_NS + TRANSPORT_BOUND_NS

# (name, record, cited, the judge's keyword arguments, the kinds expected): G3 by the
# configured timeout and the recorder's clock, whatever the record says of itself.
LOG_CASES = [
    ('passes_when_logged_fresh', PASSED, (PROCEED_LOGGED,),
     {'record_log_time_ns': SENT}, set()),
    ('passes_logged_at_the_timeout_and_the_bound', PASSED, (PROCEED_LOGGED,),
     {'record_log_time_ns': RECEIVED + LOG_AGE_LIMIT}, set()),
    ('passed_logged_one_ns_past_the_timeout_and_the_bound', PASSED, (PROCEED_LOGGED,),
     {'record_log_time_ns': RECEIVED + LOG_AGE_LIMIT + 1}, {K.STALE_IN_LOG_TIME}),
    ('passed_claiming_a_fresh_receive_of_an_old_actuation',
     replace(PASSED, stamp_ns=SENT + 900_000_000, actuation_received_ns=SENT + 890_000_000),
     (PROCEED_LOGGED,), {'record_log_time_ns': SENT + 900_000_000}, {K.STALE_IN_LOG_TIME}),
    ('passed_on_a_replayed_copy_of_an_old_actuation', PASSED,
     (PROCEED_LOGGED, replace(PROCEED_LOGGED, log_time_ns=SENT + 900_000_000)),
     {'record_log_time_ns': SENT + 900_000_000}, {K.STALE_IN_LOG_TIME}),
    ('passed_claiming_a_timeout_of_a_million_seconds',
     replace(PASSED, stamp_ns=RECEIVED + 600_000_000, timeout_s=1e6), (PROCEED,), {},
     {K.TIMEOUT_MISMATCH, K.ACTUATION_STALE}),
    ('passed_with_the_configured_timeout_not_the_default', replace(PASSED, timeout_s=2.0),
     (PROCEED,), {'timeout_ns': 2_000_000_000}, set()),
    ('passed_with_the_default_where_another_is_configured', PASSED, (PROCEED,),
     {'timeout_ns': 2_000_000_000}, {K.TIMEOUT_MISMATCH}),
    ('passed_through_a_newer_hold', PASSED, (PROCEED_LOGGED,),
     {'record_log_time_ns': NEWER_HOLD.log_time_ns + TRANSPORT_BOUND_NS + 1,
      'newer': NEWER_HOLD}, {K.SUPERSEDED_BY_CONSERVATIVE}),
    ('passed_within_the_bound_of_a_newer_hold', PASSED, (PROCEED_LOGGED,),
     {'record_log_time_ns': NEWER_HOLD.log_time_ns + TRANSPORT_BOUND_NS,
      'newer': NEWER_HOLD}, set()),
    ('passed_before_a_newer_hold', PASSED, (PROCEED_LOGGED,),
     {'record_log_time_ns': SENT, 'newer': NEWER_HOLD}, set()),
    ('passed_on_a_proceed_with_a_newer_proceed', PASSED, (PROCEED_LOGGED,),
     {'record_log_time_ns': SENT + 200_000_000,
      'newer': replace(NEWER_HOLD, decision_kind=D.PROCEED, command_kind=C.CONTINUE_MISSION)},
     set()),
    ('held_through_a_newer_hold', HELD, (), {'record_log_time_ns': SENT + 900_000_000,
                                            'newer': NEWER_HOLD}, set()),
]


@pytest.mark.parametrize('name,record,cited,options,expected', LOG_CASES,
                         ids=[case[0] for case in LOG_CASES])
def test_freshness_is_judged_by_the_configured_timeout_and_the_recorders_clock(
    name: str, record: GateRecordView, cited: tuple[CitedActuationView, ...],
    options: dict[str, object], expected: set[K],
) -> None:
    found = judge_gate(record, cited, **options)  # type: ignore[arg-type]
    assert {violation.kind for violation in found} == expected
    assert all(violation.postcondition == 'G3' for violation in found)


def test_a_replayed_or_superseded_pass_names_the_log_times() -> None:
    (stale,) = judge_gate(PASSED, (PROCEED_LOGGED,),
                          record_log_time_ns=RECEIVED + LOG_AGE_LIMIT + 1)
    observed = dict(stale.observed)
    assert (observed['actuation_log_time_ns'], observed['log_age_ns'],
            observed['transport_bound_ns']) == (RECEIVED, LOG_AGE_LIMIT + 1, TRANSPORT_BOUND_NS)
    (superseded,) = judge_gate(PASSED, (PROCEED_LOGGED,), newer=NEWER_HOLD,
                               record_log_time_ns=SENT + 400_000_000)
    observed = dict(superseded.observed)
    assert (observed['newer_actuation_stamp_ns'], observed['newer_decision_kind'],
            observed['newer_command_kind']) == (NEWER_HOLD.stamp_ns, 'HOLD', 'HOLD_POSITION')


def test_the_configured_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match='must be positive'):
        judge_gate(PASSED, (PROCEED,), timeout_ns=0)


def test_the_cases_cover_every_violation_kind() -> None:
    kinds = set().union(*(case[5] for case in CASES), *(case[4] for case in LOG_CASES))
    assert kinds == set(K)


def test_a_violation_reports_the_record_and_the_values_seen() -> None:
    (stale,) = judge_gate(replace(PASSED, stamp_ns=RECEIVED + 600_000_000), (PROCEED,))
    assert stale.to_json() == {
        'record_stamp_ns': RECEIVED + 600_000_000,
        'gate': '/ghost/gate',
        'kind': 'actuation_stale',
        'postcondition': 'G3',
        'observed': {
            'action': 'PASSED', 'reason': 'proceed', 'has_actuation': True,
            'actuation_stamp_ns': CYCLE, 'decision_kind': 'PROCEED',
            'command_kind': 'CONTINUE_MISSION', 'actuation_received_ns': RECEIVED,
            'age_ns': 600_000_000, 'timeout_ns': 500_000_000,
        },
    }
    (moving,) = judge_gate(replace(HELD, velocity=(0.0, math.nan, 1.5)))
    assert moving.postcondition == 'G5'
    assert dict(moving.observed)['velocity'] == '[0.0, nan, 1.5]'
    (unknown,) = judge_gate(replace(HELD, action=9, decision_kind=42))
    assert dict(unknown.observed)['action'] == 'invalid(9)'
    assert dict(unknown.observed)['decision_kind'] == 'invalid(42)'


def test_the_timeout_is_taken_to_the_nanosecond() -> None:
    assert timeout_ns_of(0.5) == 500_000_000
    assert timeout_ns_of(123_456_789 / 1e9) == 123_456_789
    assert timeout_ns_of(1e-12) is None
    assert timeout_ns_of(-0.1) is None


def test_a_gate_that_goes_back_to_an_older_actuation_is_caught_once_per_record() -> None:
    newer = CYCLE + 100_000_000
    records = [
        PASSED,
        replace(PASSED, stamp_ns=SENT + 1, actuation_stamp_ns=newer),
        replace(NOTHING_YET, stamp_ns=SENT + 2),  # a restart forgets; it cites nothing
        replace(HELD, stamp_ns=SENT + 3),         # back to the older one
        replace(PASSED, stamp_ns=SENT + 4),
        replace(PASSED, gate='/uav2/ghost/gate', stamp_ns=SENT + 5),  # another gate
    ]
    found = judge_gate_records(records, {CYCLE: (PROCEED,), newer: (PROCEED,)})
    assert [(v.record_stamp_ns, v.kind) for v in found] == [
        (SENT + 3, K.ACTUATION_WENT_BACKWARDS), (SENT + 4, K.ACTUATION_WENT_BACKWARDS)]
    assert dict(found[0].observed)['latest_cited_ns'] == newer


def test_gate_v1_is_a_record_property_with_this_judge() -> None:
    assert GATE_V1.version == 'GATE-v1'
    assert GATE_V1.judge is judge_gate


@settings(max_examples=300, deadline=None)
@given(gate_runs())
def test_a_gate_that_follows_its_rule_always_holds_gate_v1(run: GateRun) -> None:
    """Whatever it received and whenever it sent, gate_verdict's outputs hold GATE-v1.

    Judged by its configured timeout and the recorder's log times (the moments it received
    and sent each message).
    """
    assert judge_gate_records(run.records, run.actuations, run.timeout_ns) == ()


#: What GATE-v1 says of a record the rule held, had the gate passed the mission instead.
LEAK = {
    GateReason.NO_ACTUATION: K.NO_ACTUATION_CITED,
    GateReason.ACTUATION_STALE: K.ACTUATION_STALE,
    GateReason.DECISION_NOT_PROCEED: K.PASSED_NOT_PROCEED,
    GateReason.LAND: K.PASSED_NOT_PROCEED,
    GateReason.RETURN_TO_LAUNCH: K.PASSED_NOT_PROCEED,
}


@settings(max_examples=300, deadline=None)
@given(gate_runs(), st.data())
def test_a_gate_that_leaks_one_mission_output_fails_gate_v1(
    run: GateRun, data: st.DataObject
) -> None:
    """Any output the rule did not pass, passed anyway, is a violation that names why."""
    held = [index for index, record in enumerate(run.records)
            if record.action is not GateAction.PASSED]
    if not held:
        return
    index = data.draw(st.sampled_from(held))
    leaked = replace(run.records[index], action=GateAction.PASSED, reason=GateReason.PROCEED,
                     velocity=(3.0, 0.0, 0.0), vehicle_command=0)
    records = [*run.records[:index], leaked, *run.records[index + 1:]]
    found = judge_gate_records(records, run.actuations, run.timeout_ns)
    expected = {LEAK[run.records[index].reason]}
    if leaked.has_actuation and not may_pass(leaked.decision_kind, leaked.command_kind):
        expected.add(K.PASSED_NOT_PROCEED)  # a stale hold, passed: stale and not PROCEED
    if leaked.has_actuation and leaked.log_time_ns is not None:
        (cited,) = run.actuations[leaked.actuation_stamp_ns]
        assert cited.log_time_ns is not None
        if leaked.log_time_ns - cited.log_time_ns > run.timeout_ns + TRANSPORT_BOUND_NS:
            expected.add(K.STALE_IN_LOG_TIME)  # by the recorder's clock too
        newer = first_blocking_after(leaked.actuation_stamp_ns, run.actuations)
        if newer is not None and leaked.log_time_ns - newer.log_time_ns > TRANSPORT_BOUND_NS:
            expected.add(K.SUPERSEDED_BY_CONSERVATIVE)
    assert {violation.kind for violation in found} == expected
    assert {violation.record_stamp_ns for violation in found} == {leaked.stamp_ns}


@settings(max_examples=200, deadline=None)
@given(gate_runs(), st.data(), st.floats(0.01, 50.0) | st.floats(-50.0, -0.01))
def test_a_hold_that_moves_fails_gate_v1(run: GateRun, data: st.DataObject, speed: float) -> None:
    held = [index for index, record in enumerate(run.records)
            if record.action is GateAction.HELD]
    if not held:
        return
    index = data.draw(st.sampled_from(held))
    axis = data.draw(st.integers(0, 2))
    moving = tuple(speed if i == axis else 0.0 for i in range(3))
    changed = replace(run.records[index], **(
        {'velocity': moving} if data.draw(st.booleans()) else {'twist_angular': moving}))
    records = [*run.records[:index], changed, *run.records[index + 1:]]
    found = judge_gate_records(records, run.actuations, run.timeout_ns)
    assert [(v.record_stamp_ns, v.kind) for v in found] == [
        (changed.stamp_ns, K.HELD_OUTPUT_MOVES)]
