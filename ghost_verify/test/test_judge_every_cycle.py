"""Every cycle that can be judged is judged (issue 23, part 1).

A cycle with its calibrated assessment C_t is judged by BAUD-v1 and ERUR-v1 whatever else it
lacks; a precondition without its actuation is ``actuation_missing`` (SPEC section 6) unless
the recording demonstrably stopped before the actuation could be recorded. The trace keeps
ADR-0022's ``chain_intact`` (no missing link) and reports the recording's cuts apart.
"""

from __future__ import annotations

from pathlib import Path

from ghost_verify_test.bags import (
    ACTUATION,
    Entry,
    RAW,
    scenario_traces,
    trace_entries,
    with_policy,
    write_bag,
)

from ghost_core.cli import ExitCode
from ghost_core.levels import DecisionKind
from ghost_verify import cli
from ghost_verify.cycle_properties import verify_baud, verify_erur
from ghost_verify.trace import trace_decisions
from ghost_verify.unverifiable import UnverifiableReason
from ghost_verify.verify import verify_all

#: Cycles 5-10 of the smoke scenario (its BAUD-v1 cycles), by index.
LAST_SIX = range(4, 10)


def _without(entries: list[Entry], topic: str, stamps: set[int]) -> list[Entry]:
    return [entry for entry in entries
            if not (entry.topic == topic and entry.stamp_ns in stamps)]


def _stamps(indices: range) -> set[int]:
    traces = scenario_traces('smoke')
    return {traces[index].stamp_ns for index in indices}


def test_baud_judges_cycles_whose_raw_assessment_is_missing(tmp_path: Path) -> None:
    """(a) An always-PROCEED agent without /self_assessment on cycles 5-10 fails BAUD-v1."""
    traces = with_policy(scenario_traces('smoke'), DecisionKind.PROCEED, 'always_proceed_v1')
    entries = _without(trace_entries(traces), RAW[0], _stamps(LAST_SIX))
    bag = write_bag(tmp_path / 'bag', entries)
    report = verify_baud(bag)
    assert report.cycles_precondition_held == 6, report.summary()
    assert not report.holds and report.unverifiable == ()
    assert sorted({v.cycle_stamp_ns for v in report.violations}) == sorted(_stamps(LAST_SIX))
    assert report.summary() == ('BAUD-v1: VIOLATED (6 cycles evaluated; 6 p2_decision_proceed, '
                                '6 p3_non_conservative_command)')
    assert cli.verify_baud_main([str(bag)]) == ExitCode.VIOLATED
    result = verify_all(bag)
    assert not result.holds
    # The lost raw assessments are no cut: the cycles were recorded past them.
    assert len(result.completeness.incomplete_cycles) == 6


def test_an_honest_run_without_its_actuations_does_not_hold(tmp_path: Path) -> None:
    """(b) Actuations removed on cycles 5-10: 6 actuation_missing violations (SPEC section 6)."""
    entries = _without(trace_entries(scenario_traces('smoke')), ACTUATION[0],
                       _stamps(LAST_SIX))
    bag = write_bag(tmp_path / 'bag', entries)
    report = verify_baud(bag)
    assert not report.holds and report.unverifiable == ()
    assert [(v.cycle_stamp_ns, v.kind.value) for v in report.violations] == [
        (stamp, 'actuation_missing') for stamp in sorted(_stamps(LAST_SIX))]
    assert verify_erur(bag).holds
    assert not verify_all(bag).holds
    assert cli.verify_baud_main([str(bag)]) == ExitCode.VIOLATED
    assert cli.verify_all_main([str(bag)]) == ExitCode.VIOLATED
    assert cli.verify_baud_main([str(bag), '--strict']) == ExitCode.VIOLATED


def test_a_trace_with_missing_assessments_is_not_intact(tmp_path: Path) -> None:
    """(c) Six rationales whose assessment is missing: chain_intact is false (ADR-0022)."""
    entries = _without(trace_entries(scenario_traces('smoke')), RAW[0], _stamps(LAST_SIX))
    bag = write_bag(tmp_path / 'bag', entries)
    report = trace_decisions(bag)
    assert report.assessment_missing_count == 6
    assert not report.chain_intact
    document = report.to_json()
    assert document['chain_intact'] is False and document['assessment_missing_count'] == 6
    assert cli.trace_decisions_main(
        [str(bag), '--json', str(tmp_path / 't.json')]) == ExitCode.VIOLATED
    assert not verify_all(bag).trace.chain_intact


def test_a_cycle_after_the_recordings_last_message_is_unverifiable(tmp_path: Path) -> None:
    """The recorder stopped after C_t and the rationale: that cycle alone is unverifiable."""
    traces = scenario_traces('smoke')
    entries = trace_entries(traces)
    # The last cycle's actuation and prediction (logged after it) were never recorded.
    bag = write_bag(tmp_path / 'bag', entries[:-2])
    report = verify_baud(bag)
    assert report.holds and not report.violations
    assert [(c.cycle_stamp_ns, c.reason) for c in report.unverifiable] == [
        (traces[9].stamp_ns, UnverifiableReason.CUT_AT_END)]
    assert report.cycles_precondition_held == 5
    assert report.to_json()['cycles_unverifiable'] == 1
    strict = verify_baud(bag, strict=True)
    assert [v.kind.value for v in strict.violations] == ['actuation_missing']
    assert cli.verify_baud_main([str(bag)]) == ExitCode.OK
    assert cli.verify_baud_main([str(bag), '--strict']) == ExitCode.VIOLATED


def test_a_later_message_of_any_kind_shows_the_recording_went_on(tmp_path: Path) -> None:
    """A /state/nav message after the last rationale: the missing actuation is a violation."""
    traces = scenario_traces('smoke')
    entries = trace_entries(traces)[:-2]
    last = entries[-1]
    state = next(entry for entry in entries if entry.topic == '/state/nav')
    entries.append(Entry(state.topic, state.type_name, state.msg, last.log_time_ns + 1000,
                         last.stamp_ns))
    report = verify_baud(write_bag(tmp_path / 'bag', entries))
    assert report.unverifiable == ()
    assert [(v.cycle_stamp_ns, v.kind.value) for v in report.violations] == [
        (traces[9].stamp_ns, 'actuation_missing')]


def test_a_cut_chain_is_not_intact_but_reported_apart(tmp_path: Path) -> None:
    """A late start: the cut cycle's missing links leave chain_intact false, not the verdict."""
    traces = scenario_traces('smoke')
    # Three whole cycles and the state, raw, outcome and calibrated of the fourth are missed.
    bag = write_bag(tmp_path / 'bag', trace_entries(traces)[3 * 7 + 4:])
    report = trace_decisions(bag)
    assert not report.chain_intact and report.holds
    assert report.links_cut_by_recording == report.to_json()['links_cut_by_recording'] > 0
    assert [c.cycle_stamp_ns for c in report.unverifiable] == [traces[3].stamp_ns]
    assert 'not intact' in report.summary()
