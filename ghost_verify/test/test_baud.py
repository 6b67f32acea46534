"""BAUD-v1: under drift the adjusted level is not KNOWN, no PROCEED, a conservative command."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ghost_verify_test.bags import (
    ACTUATION,
    edit,
    scenario_traces,
    trace_entries,
    with_policy,
    write_bag,
)
from ghost_verify_test.views import actuation, calibrated, kinds
import pytest

from ghost_core.contracts import CalibratedSelfAssessment
from ghost_core.levels import ActuatorCommandKind, DecisionKind, SelfAssessmentLevel
from ghost_core.loop import CycleResult, decide, emit
from ghost_core.properties import BAUD_V1, BAUD_VERSION, judge_baud, ViolationKind
from ghost_core.wire import message_address
from ghost_verify.cycle_properties import PropertyChecker, verify_baud
from ghost_verify.events import BagInfo, CycleEvent

KNOWN, UNCERTAIN = SelfAssessmentLevel.KNOWN, SelfAssessmentLevel.UNCERTAIN


def test_judge_baud_is_a_pure_function_of_one_cycle() -> None:
    """No drift: not applicable. Drift: P1, P2, P3 and a missing actuation each caught."""
    hold = actuation(DecisionKind.HOLD, ActuatorCommandKind.HOLD_POSITION)
    assert judge_baud(calibrated(KNOWN, beyond_3=0, beyond_5=1), [hold], 4, 2) is None
    assert judge_baud(calibrated(KNOWN, considered=3), [hold], 4, 2) is None
    assert judge_baud(calibrated(UNCERTAIN), [hold], 4, 2) == ()
    proceed = actuation(DecisionKind.PROCEED, ActuatorCommandKind.CONTINUE_MISSION)
    assert kinds(judge_baud(calibrated(KNOWN), [proceed], 4, 2)) == [
        'p1_adjusted_known', 'p2_decision_proceed', 'p3_non_conservative_command']
    velocity = actuation(DecisionKind.HOLD, ActuatorCommandKind.VELOCITY_SETPOINT)
    assert kinds(judge_baud(calibrated(UNCERTAIN), [velocity], 4, 2)) == [
        'p3_non_conservative_command']
    missing = judge_baud(calibrated(UNCERTAIN), [], 4, 2)
    assert kinds(missing) == ['actuation_missing']
    assert missing is not None and missing[0].postcondition == 'P2,P3'


def test_a_command_kind_outside_the_catalogue_is_not_conservative() -> None:
    """An unknown command cannot be shown conservative, so it fails P3."""
    odd = actuation(DecisionKind.HOLD, 42)
    found = judge_baud(calibrated(UNCERTAIN), [odd], 4, 2)
    assert kinds(found) == ['p3_non_conservative_command']
    assert found is not None and dict(found[0].observed)['command_kind'] == 'invalid(42)'


def test_every_actuation_of_a_cycle_is_judged() -> None:
    """A second, non-conservative actuation in a drift cycle is a violation too."""
    good = actuation(DecisionKind.HOLD, ActuatorCommandKind.HOLD_POSITION)
    bad = actuation(DecisionKind.PROCEED, ActuatorCommandKind.CONTINUE_MISSION)
    assert kinds(judge_baud(calibrated(UNCERTAIN), [good, bad], 4, 2)) == [
        'p2_decision_proceed', 'p3_non_conservative_command']


def test_the_checker_counts_cycles_and_runs_over_a_stream() -> None:
    """update()/result(): cycles without a calibrated assessment are not counted."""
    checker = PropertyChecker(BAUD_V1)
    hold = actuation(DecisionKind.HOLD, ActuatorCommandKind.HOLD_POSITION)
    checker.update(CycleEvent(1))
    checker.update(CycleEvent(2, calibrated=(calibrated(UNCERTAIN),), actuations=(hold,)))
    checker.update(CycleEvent(3, calibrated=(calibrated(KNOWN, considered=0),)))
    report = checker.result(BagInfo((), (), 0, 0, 3))
    assert (report.cycles_total, report.cycles_precondition_held) == (2, 1)
    assert report.first_precondition_cycle_stamp_ns == 2
    assert report.holds and report.property_version == BAUD_VERSION


def test_the_smoke_run_satisfies_baud_on_cycles_5_to_10(tmp_path: Path) -> None:
    """The reference agent under sustained drift: BAUD holds on the six drift cycles."""
    traces = scenario_traces('smoke')
    report = verify_baud(write_bag(tmp_path / 'bag', trace_entries(traces)))
    assert report.holds
    assert (report.cycles_total, report.cycles_precondition_held) == (10, 6)
    assert report.first_precondition_cycle_stamp_ns == traces[4].stamp_ns
    assert [(r.first_cycle_stamp_ns, r.cycles) for r in report.precondition_runs] == [
        (traces[4].stamp_ns, 6)]
    assert (report.min_outcomes, report.downgrade_threshold) == (4, 2)
    assert report.summary() == 'BAUD-v1: HOLDS (6 cycles evaluated)'


def test_an_always_proceed_policy_violates_baud(tmp_path: Path) -> None:
    """PROCEED under drift breaks P2, and its CONTINUE_MISSION breaks P3, on every drift cycle."""
    traces = with_policy(scenario_traces('smoke'), DecisionKind.PROCEED, 'always_proceed_v1')
    report = verify_baud(write_bag(tmp_path / 'bag', trace_entries(traces)))
    assert not report.holds
    assert sorted({v.kind for v in report.violations}) == [
        ViolationKind.P2_DECISION_PROCEED, ViolationKind.P3_NON_CONSERVATIVE_COMMAND]
    assert sorted({v.cycle_stamp_ns for v in report.violations}) == [
        t.stamp_ns for t in traces[4:]]
    observed = dict(report.violations[0].observed)
    assert observed['decision_kind'] == 'PROCEED'
    assert observed['command_kind'] == 'CONTINUE_MISSION'
    assert observed['adjusted_overall_level'] == 'UNCERTAIN'
    assert report.summary() == ('BAUD-v1: VIOLATED (6 cycles evaluated; 6 p2_decision_proceed, '
                                '6 p3_non_conservative_command)')


def test_a_calibrator_that_ignores_drift_violates_p1(tmp_path: Path) -> None:
    """A passthrough calibrator keeps KNOWN under drift: P1 (and then P2, P3) fail."""
    changed = []
    for trace in scenario_traces('smoke'):
        c = trace.calibrated
        passthrough = CalibratedSelfAssessment(
            c.stamp_ns, c.frame_id, c.raw_assessment, c.raw_assessment_sha256,
            c.calibration_history, c.raw_assessment.overall_level, 'passthrough_v1',
            'calibration_within_tolerance', c.min_outcomes, c.downgrade_threshold)
        rationale = decide(passthrough)
        changed.append(CycleResult(passthrough, rationale, emit(rationale)))
    pairs = zip(scenario_traces('smoke'), changed, strict=True)
    entries = trace_entries(replace(trace, result=result) for trace, result in pairs)
    report = verify_baud(write_bag(tmp_path / 'bag', entries))
    assert {v.kind for v in report.violations} == {
        ViolationKind.P1_ADJUSTED_KNOWN, ViolationKind.P2_DECISION_PROCEED,
        ViolationKind.P3_NON_CONSERVATIVE_COMMAND}
    assert message_address(changed[0].calibrated)  # the chain itself is consistent


def test_a_missing_actuation_under_drift_is_a_violation(tmp_path: Path) -> None:
    """An unprovable drift cycle is not a passing one: actuation_missing."""
    traces = scenario_traces('smoke')
    entries = edit(trace_entries(traces), ACTUATION[0], traces[6].stamp_ns, lambda m: None)
    report = verify_baud(write_bag(tmp_path / 'bag', entries))
    assert [(v.cycle_stamp_ns, v.kind, v.postcondition) for v in report.violations] == [
        (traces[6].stamp_ns, ViolationKind.ACTUATION_MISSING, 'P2,P3')]


def test_given_m_and_k_override_the_bag_and_the_mismatch_is_reported(tmp_path: Path) -> None:
    """--min-outcomes 5: drift starts one cycle later; the report notes the bag said 4."""
    bag = write_bag(tmp_path / 'bag', trace_entries(scenario_traces('smoke')))
    report = verify_baud(bag, min_outcomes=5)
    assert report.holds and report.cycles_precondition_held == 5
    assert report.min_outcomes == 5 and report.downgrade_threshold == 2
    assert report.min_outcomes_source.value == 'command_line'
    assert report.downgrade_threshold_source.value == 'self_reported'
    assert report.parameters_mismatch
    # The bag records no run configuration: K is the one its messages claim, and it says so.
    assert report.parameter_notes[0] == (
        'min_outcomes: used 5 (from the command line) but the bag recorded 4')
    assert report.parameter_notes[1].startswith(
        'self-reported parameters: no start configuration is recorded in the bag, and no '
        'manifest.json')
    assert '-k not given' in report.parameter_notes[1]
    same = verify_baud(bag, min_outcomes=4, downgrade_threshold=2)
    assert not same.parameters_mismatch and same.parameter_notes == ()


def test_negative_parameters_are_refused() -> None:
    """M and K are counts."""
    with pytest.raises(ValueError, match='min_outcomes'):
        PropertyChecker(BAUD_V1, min_outcomes=-1)
