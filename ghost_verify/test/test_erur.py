"""ERUR-v1: without drift and with a KNOWN raw level, the agent claims KNOWN and proceeds."""

from __future__ import annotations

from pathlib import Path

from ghost_verify_test.bags import (
    ACTUATION,
    cycle_entries,
    edit,
    raw_assessment,
    scenario_traces,
    trace_entries,
    with_policy,
    write_bag,
)
from ghost_verify_test.views import actuation, calibrated, kinds

from ghost_core.levels import ActuatorCommandKind, DecisionKind, SelfAssessmentLevel
from ghost_core.loop import closed_loop_step, LoopConfig
from ghost_core.properties import ERUR_VERSION, judge_erur, ViolationKind
from ghost_verify.cycle_properties import verify_baud, verify_erur

KNOWN, UNCERTAIN, UNKNOWN = list(SelfAssessmentLevel)


def test_judge_erur_is_a_pure_function_of_one_cycle() -> None:
    """Drift or a raw level other than KNOWN: not applicable. Otherwise Q1, Q2, missing."""
    proceed = actuation(DecisionKind.PROCEED, ActuatorCommandKind.CONTINUE_MISSION)
    hold = actuation(DecisionKind.HOLD, ActuatorCommandKind.HOLD_POSITION)
    assert judge_erur(calibrated(UNCERTAIN), [hold], 4, 2) is None  # drift
    assert judge_erur(calibrated(UNCERTAIN, raw=UNCERTAIN, beyond_3=0), [hold], 4, 2) is None
    assert judge_erur(calibrated(UNKNOWN, raw=UNKNOWN, considered=1), [hold], 4, 2) is None
    assert judge_erur(calibrated(KNOWN, considered=3), [proceed], 4, 2) == ()
    assert kinds(judge_erur(calibrated(UNCERTAIN, beyond_5=0), [hold], 4, 2)) == [
        'q1_adjusted_not_known', 'q2_decision_not_proceed']
    missing = judge_erur(calibrated(KNOWN, beyond_3=0), [], 4, 2)
    assert kinds(missing) == ['actuation_missing']
    assert missing is not None and missing[0].postcondition == 'Q2'


def test_erur_says_nothing_about_the_command_shape() -> None:
    """PROCEED with any command satisfies ERUR (ADR-0032: no postcondition on A_t)."""
    odd = actuation(DecisionKind.PROCEED, ActuatorCommandKind.NONE)
    assert judge_erur(calibrated(KNOWN, considered=0, beyond_3=0, beyond_5=0), [odd], 4, 2) == ()


def test_the_smoke_run_satisfies_erur_on_cycles_1_to_4(tmp_path: Path) -> None:
    """Fewer than M outcomes on cycles 1-4: drift-clean, raw KNOWN, PROCEED (ADR-0032 4.2)."""
    traces = scenario_traces('smoke')
    report = verify_erur(write_bag(tmp_path / 'bag', trace_entries(traces)))
    assert report.holds and report.property_version == ERUR_VERSION
    assert report.cycles_precondition_held >= 4
    assert report.first_precondition_cycle_stamp_ns == traces[0].stamp_ns
    assert [(r.first_cycle_stamp_ns, r.last_cycle_stamp_ns) for r in report.precondition_runs] \
        == [(traces[0].stamp_ns, traces[3].stamp_ns)]
    assert report.summary() == 'ERUR-v1: HOLDS (4 cycles evaluated)'


def test_an_always_hold_policy_passes_baud_but_fails_erur(tmp_path: Path) -> None:
    """The degenerate policy BAUD alone cannot catch: ERUR's Q2 fails on cycles 1-4."""
    traces = with_policy(scenario_traces('smoke'), DecisionKind.HOLD, 'always_hold_v1')
    bag = write_bag(tmp_path / 'bag', trace_entries(traces))
    assert verify_baud(bag).holds
    report = verify_erur(bag)
    assert not report.holds
    assert [(v.cycle_stamp_ns, v.kind, v.postcondition) for v in report.violations] == [
        (t.stamp_ns, ViolationKind.Q2_DECISION_NOT_PROCEED, 'Q2') for t in traces[:4]]
    assert dict(report.violations[0].observed)['decision_kind'] == 'HOLD'


def test_a_missing_actuation_under_recovery_is_a_violation(tmp_path: Path) -> None:
    """Dropping cycle 2's actuation makes it unprovable: actuation_missing."""
    traces = scenario_traces('smoke')
    entries = edit(trace_entries(traces), ACTUATION[0], traces[1].stamp_ns, lambda m: None)
    report = verify_erur(write_bag(tmp_path / 'bag', entries))
    assert [(v.cycle_stamp_ns, v.kind) for v in report.violations] == [
        (traces[1].stamp_ns, ViolationKind.ACTUATION_MISSING)]


def test_drift_then_recovery_shows_reactivation(tmp_path: Path) -> None:
    """Bad outcomes leave the short window: BAUD cycles, then ERUR cycles; both hold."""
    traces = scenario_traces('drift_then_recovery')
    bag = write_bag(tmp_path / 'bag', trace_entries(traces))
    baud, erur = verify_baud(bag), verify_erur(bag)
    assert baud.holds and erur.holds
    assert baud.covered and erur.covered
    last_drift = baud.precondition_runs[-1].last_cycle_stamp_ns
    reactivation = [r for r in erur.precondition_runs if r.first_cycle_stamp_ns > last_drift]
    assert reactivation, 'PROCEED never resumed after the drift'
    assert baud.cycles_precondition_held + erur.cycles_precondition_held == len(traces)


def test_raw_uncertain_and_unknown_cycles_are_skipped_by_erur(tmp_path: Path) -> None:
    """Drift-clean but raw not KNOWN: neither property applies (the fourth quadrant)."""
    config = LoopConfig()
    entries = []
    for index, level in enumerate([UNCERTAIN, UNKNOWN, UNCERTAIN], start=1):
        raw = raw_assessment(index * 100_000_000, level)
        entries += cycle_entries(raw.stamp_ns, raw=raw, result=closed_loop_step(raw, [], config))
    bag = write_bag(tmp_path / 'bag', entries)
    erur, baud = verify_erur(bag), verify_baud(bag)
    assert erur.holds and not erur.covered and erur.cycles_total == 3
    assert baud.holds and not baud.covered


def test_an_override_that_hides_drift_exposes_the_held_cycles(tmp_path: Path) -> None:
    """With K=100 nothing is drift: ERUR then fails on the HOLD cycles.

    The report says that the bag recorded K=2.
    """
    bag = write_bag(tmp_path / 'bag', trace_entries(scenario_traces('smoke')))
    report = verify_erur(bag, downgrade_threshold=100)
    assert report.cycles_precondition_held == 10
    assert {v.kind for v in report.violations} == {
        ViolationKind.Q1_ADJUSTED_NOT_KNOWN, ViolationKind.Q2_DECISION_NOT_PROCEED}
    assert report.parameter_notes[0] == (
        'downgrade_threshold: used 100 (from the command line) but the bag recorded 2')
    assert report.parameter_notes[1].startswith('self-reported parameters:')
    assert '-m not given' in report.parameter_notes[1]
