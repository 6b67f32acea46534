"""Policy conformance (ADR-0021 step 5): each stage re-applied with the policy it names.

Every crafted bag below keeps the hash chain intact (the hashes downstream of an edit are
recomputed), every history consistent and BAUD-v1 and ERUR-v1 holding: only conformance can
catch what was done to it.
"""

from __future__ import annotations

import copy
from dataclasses import replace
import json
from pathlib import Path
from typing import Any

from ghost_verify_test.bags import (
    ACTUATION,
    CALIBRATED,
    edit,
    Entry,
    RATIONALE,
    RAW,
    raw_assessment,
    scenario_traces,
    step_from_history,
    trace_entries,
    write_bag,
)
from ghost_verify_test.strategies import cycle_cases, CycleCase
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.cli import ExitCode
from ghost_core.conformance import (
    check_adjustment,
    check_decision,
    check_emission,
    ConformanceKind,
)
from ghost_core.contracts import BeliefSelfAssessment
from ghost_core.hashing import content_address
from ghost_core.levels import ActuatorCommandKind, DecisionKind, SelfAssessmentLevel
from ghost_verify import cli
from ghost_verify.conformance import verify_conformance
from ghost_verify.single_pass import VerificationResult
from ghost_verify.verify import verify_all

SMOKE = scenario_traces('smoke')
CALM = SMOKE[1].stamp_ns  # cycle 2: no drift (fewer than M outcomes), raw KNOWN
DRIFT = SMOKE[6].stamp_ns  # cycle 7: drift, HOLD / HOLD_POSITION


def _rechain(entries: list[Entry], stamp_ns: int) -> list[Entry]:
    """Recompute every content address of one cycle from its (edited) messages."""
    msgs = {entry.topic: entry.msg for entry in entries if entry.stamp_ns == stamp_ns}
    raw_sha = content_address(msgs[RAW[0]])
    calibrated = dict(msgs[CALIBRATED[0]], raw_assessment_sha256=raw_sha)
    rationale = dict(msgs[RATIONALE[0]], self_assessment_sha256=raw_sha,
                     calibrated_assessment_sha256=content_address(calibrated))
    actuation = dict(msgs[ACTUATION[0]], rationale_sha256=content_address(rationale))
    fixed = {CALIBRATED[0]: calibrated, RATIONALE[0]: rationale, ACTUATION[0]: actuation}
    return [Entry(e.topic, e.type_name, fixed.get(e.topic, e.msg), e.log_time_ns, e.stamp_ns)
            if e.stamp_ns == stamp_ns else e for e in entries]


def _set_raw_level(msg: dict[str, Any], level: int) -> dict[str, Any]:
    changed = copy.deepcopy(msg)
    changed['overall_level'] = level
    changed['position']['level'] = level  # the overall level is the worst block's
    return changed


def _forged(tmp_path: Path, stamp_ns: int, **changes: Any) -> VerificationResult:
    """Apply dict edits to one cycle's messages (topic -> change), re-chain, verify_all."""
    entries = trace_entries(SMOKE)
    for topic, change in changes.items():
        entries = edit(entries, topic, stamp_ns, change)
    return verify_all(write_bag(tmp_path / 'bag', _rechain(entries, stamp_ns)))


def _only_conformance_fails(result: VerificationResult) -> None:
    assert result.baud.holds and result.erur.holds, result.summary_lines()
    assert result.trace.chain_intact and result.trace.decisions_end_to_end_verified == 10
    assert result.completeness.holds and result.history.holds
    assert not result.conformance.holds and not result.holds


def _kinds(result: VerificationResult) -> set[tuple[int, str]]:
    return {(v.cycle_stamp_ns, v.kind.value) for v in result.conformance.violations}


def test_scenario_runs_of_the_reference_agent_conform(tmp_path: Path) -> None:
    """Every stage of every cycle of the real loop equals the reference re-applied to it."""
    for name in ('smoke', 'drift_then_recovery', 'dropout'):
        traces = scenario_traces(name)
        result = verify_all(write_bag(tmp_path / name, trace_entries(traces)))
        report = result.conformance
        assert result.holds and report.holds
        assert report.cycles_total == report.cycles_conforming == len(traces)
        assert report.cycles_not_checked == 0 and not report.not_checked
        assert dict(report.stages_checked) == dict.fromkeys(
            ('calibration', 'decision', 'emission'), len(traces))
        assert report.summary() == f'conformance: {len(traces)}/{len(traces)} conform'
        document = report.to_json()
        assert document['property_version'] == 'CONFORMANCE-v1'
        assert document['violation_counts'] == {} and document['violations'] == []
        assert document['reference_ids'] == {
            'calibration': ['mahalanobis_downgrade_v1'],
            'decision': ['uncertainty_aware_reference_v1'],
            'emission': ['reference_action_emission_v1'],
        }


def test_a_calibrator_that_upgrades_uncertain_to_known_is_an_adjusted_level_mismatch(
    tmp_path: Path,
) -> None:
    """Raw UNCERTAIN, no drift, adjusted KNOWN and PROCEED: BAUD and ERUR do not apply."""
    uncertain = int(SelfAssessmentLevel.UNCERTAIN)

    def calibrated(msg: dict[str, Any]) -> dict[str, Any]:
        return dict(msg, raw_assessment=_set_raw_level(msg['raw_assessment'], uncertain))

    result = _forged(tmp_path, CALM, **{RAW[0]: lambda m: _set_raw_level(m, uncertain),
                                        CALIBRATED[0]: calibrated})
    _only_conformance_fails(result)
    assert _kinds(result) == {(CALM, 'adjusted_level_mismatch')}
    violation = result.conformance.violations[0]
    assert (violation.expected, violation.recorded) == ('UNCERTAIN', 'KNOWN')
    assert violation.stage.value == 'calibration'
    assert violation.policy_id == 'mahalanobis_downgrade_v1'
    assert dict(violation.inputs)['raw_overall_level'] == 'UNCERTAIN'
    assert result.conformance.cycles_conforming == 9
    assert result.conformance.summary() == (
        f'conformance: VIOLATED (9/10 conform; 1 adjusted_level_mismatch, the first at '
        f'{CALM} ns)')


def test_proceeding_on_a_raw_unknown_belief_without_drift_is_a_decision_mismatch(
    tmp_path: Path,
) -> None:
    """Raw and adjusted UNKNOWN, no drift evidence, PROCEED with CONTINUE_MISSION."""
    unknown = int(SelfAssessmentLevel.UNKNOWN)

    def calibrated(msg: dict[str, Any]) -> dict[str, Any]:
        return dict(msg, raw_assessment=_set_raw_level(msg['raw_assessment'], unknown),
                    adjusted_overall_level=unknown)

    result = _forged(tmp_path, CALM, **{RAW[0]: lambda m: _set_raw_level(m, unknown),
                                        CALIBRATED[0]: calibrated})
    _only_conformance_fails(result)
    assert _kinds(result) == {(CALM, 'decision_mismatch'), (CALM, 'decision_reason_mismatch')}
    by_kind = {v.kind: v for v in result.conformance.violations}
    mismatch = by_kind[ConformanceKind.DECISION_MISMATCH]
    assert (mismatch.expected, mismatch.recorded) == ('ABSTAIN_UNCERTAIN', 'PROCEED')
    assert mismatch.policy_id == 'uncertainty_aware_reference_v1'
    reason = by_kind[ConformanceKind.DECISION_REASON_MISMATCH]
    assert (reason.expected, reason.recorded) == ('adjusted_level_unknown', 'adjusted_level_known')


def test_a_forged_adjustment_reason_and_decision_reason_are_reported(tmp_path: Path) -> None:
    """Bit for bit: the reasons the policies give are re-derived too."""
    result = _forged(tmp_path, CALM, **{
        CALIBRATED[0]: lambda m: dict(m, adjustment_reason='all_good'),
        RATIONALE[0]: lambda m: dict(m, decision=dict(m['decision'], reason='trust_me')),
        ACTUATION[0]: lambda m: dict(m, decision=dict(m['decision'], reason='trust_me')),
    })
    _only_conformance_fails(result)
    assert _kinds(result) == {(CALM, 'adjustment_reason_mismatch'),
                              (CALM, 'decision_reason_mismatch')}


def test_a_command_other_than_the_emission_table_is_a_command_mismatch(tmp_path: Path) -> None:
    """HOLD under drift executed as LAND: conservative (BAUD P3 holds), but not the contract."""
    land = int(ActuatorCommandKind.LAND)
    result = _forged(tmp_path, DRIFT, **{
        ACTUATION[0]: lambda m: dict(m, command=dict(m['command'], kind=land))})
    _only_conformance_fails(result)
    assert _kinds(result) == {(DRIFT, 'command_mismatch')}
    violation = result.conformance.violations[0]
    assert (violation.expected, violation.recorded) == ('HOLD_POSITION', 'LAND')
    assert violation.policy_id == 'reference_action_emission_v1'
    assert dict(violation.inputs) == {'decision_kind': 'HOLD'}


@pytest.mark.parametrize(('topic', 'field', 'kind', 'stage'), [
    (CALIBRATED[0], 'adjustment_policy_id', 'unknown_adjustment_policy', 'calibration'),
    (RATIONALE[0], 'policy_id', 'unknown_decision_policy', 'decision'),
])
def test_an_unknown_policy_id_is_not_checked_and_never_passes(
    tmp_path: Path, topic: str, field: str, kind: str, stage: str,
) -> None:
    """A stage naming an id with no reference is counted and listed as not checked."""
    result = _forged(tmp_path, DRIFT, **{topic: lambda m: dict(m, **{field: 'custom_v9'})})
    _only_conformance_fails(result)
    report = result.conformance
    assert _kinds(result) == {(DRIFT, kind)}
    assert report.cycles_not_checked == 1 and report.cycles_conforming == 9
    assert [entry.to_json() for entry in report.not_checked] == [{
        'stage': stage, 'kind': kind, 'policy_id': 'custom_v9', 'cycles': 1,
        'first_cycle_stamp_ns': DRIFT}]
    assert dict(report.stages_checked)[stage] == 9
    assert report.notes() == (
        f"conformance: not checked: {stage} {kind} 'custom_v9' (1 cycle, the first at "
        f'{DRIFT} ns)',)
    assert report.violations[0].recorded == 'custom_v9'


def test_the_command_is_checked_with_the_reference_table_whatever_contract_id_says(
    tmp_path: Path,
) -> None:
    """The contract_id does not choose the table: the properties are over the reference emitter."""
    result = _forged(tmp_path, DRIFT, **{ACTUATION[0]: lambda m: dict(m, contract_id='custom_v9')})
    assert result.holds and result.conformance.cycles_conforming == 10
    land = int(ActuatorCommandKind.LAND)
    result = _forged(tmp_path / 'land', DRIFT, **{ACTUATION[0]: lambda m: dict(
        m, contract_id='custom_v9', command=dict(m['command'], kind=land))})
    _only_conformance_fails(result)
    assert [(v.kind.value, v.policy_id) for v in result.conformance.violations] == [
        ('command_mismatch', 'custom_v9')]


def test_a_message_that_breaks_its_contract_is_not_checked(tmp_path: Path) -> None:
    """An adjusted level outside the catalogue cannot be re-applied: invalid_message."""
    result = _forged(tmp_path, CALM, **{
        CALIBRATED[0]: lambda m: dict(m, adjusted_overall_level=7)})
    kinds = _kinds(result)
    assert (CALM, 'invalid_message') in kinds and result.conformance.cycles_not_checked == 1
    assert result.conformance.not_checked[0].stage.value == 'calibration'
    assert not result.holds


def test_verify_all_exits_1_lists_the_kinds_and_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """The summary line, the note for ids not checked, exit 1 and the JSON fields."""
    entries = trace_entries(SMOKE)
    for trace in SMOKE:
        entries = edit(entries, RATIONALE[0], trace.stamp_ns,
                       lambda m: dict(m, policy_id='my_policy_v2'))
        entries = _rechain(entries, trace.stamp_ns)
    bag = write_bag(tmp_path / 'bag', entries)
    target = tmp_path / 'all.json'
    code = cli.verify_all_main([str(bag), '--json', str(target)])
    out = capsys.readouterr().out.splitlines()
    assert code == ExitCode.VIOLATED
    assert out[:5] == ['BAUD-v1: HOLDS (6 cycles evaluated)',
                       'ERUR-v1: HOLDS (4 cycles evaluated)', 'chain: 10/10 verified',
                       'cycles: 10/10 complete', 'history: 10/10 consistent']
    assert out[5] == (f'conformance: VIOLATED (0/10 conform; 10 unknown_decision_policy, the '
                      f'first at {SMOKE[0].stamp_ns} ns)')
    assert out[6].startswith('RECOVERY-v1: not applicable (no start configuration is '
                             'recorded in the bag')
    assert out[7].startswith('evidence: HOLDS (')
    assert out[8].startswith('replay: not possible (no start configuration')
    assert out[9] == ("note: conformance: not checked: decision unknown_decision_policy "
                      f"'my_policy_v2' (10 cycles, the first at {SMOKE[0].stamp_ns} ns)")
    document = json.loads(target.read_text(encoding='utf-8'))
    assert document['holds'] is False
    conformance = document['conformance']
    assert conformance['violation_counts'] == {'unknown_decision_policy': 10}
    assert conformance['cycles_not_checked'] == 10
    assert conformance['stages_checked'] == {'calibration': 10, 'decision': 0, 'emission': 10}
    assert set(conformance['violations'][0]) == {
        'cycle_stamp_ns', 'kind', 'stage', 'policy_id', 'expected', 'recorded', 'inputs'}
    standalone = verify_conformance(bag)
    assert standalone.to_json() == conformance


@settings(max_examples=200, deadline=None)
@given(case=cycle_cases(), forged_level=st.sampled_from(list(SelfAssessmentLevel)),
       forged_decision=st.sampled_from(list(DecisionKind)),
       forged_command=st.sampled_from(list(ActuatorCommandKind)))
def test_the_reference_loop_always_conforms_and_any_change_of_output_is_caught(
    case: CycleCase, forged_level: SelfAssessmentLevel, forged_decision: DecisionKind,
    forged_command: ActuatorCommandKind,
) -> None:
    """For any M, K, W, history and raw level: the loop's output conforms; another does not."""
    raw: BeliefSelfAssessment = raw_assessment(case.stamp_ns, case.raw_level)
    result = step_from_history(raw, case.history, case.config)
    assert check_adjustment(result.calibrated) == ()
    assert check_decision(result.calibrated, result.rationale) == ()
    emission = result.emission
    assert check_emission(result.rationale, emission.command, emission.stamp_ns) == ()

    calibrated = replace(result.calibrated, adjusted_overall_level=forged_level)
    found = {v.kind for v in check_adjustment(calibrated)}
    assert (ConformanceKind.ADJUSTED_LEVEL_MISMATCH in found) == (
        forged_level != result.calibrated.adjusted_overall_level)
    decision = replace(result.rationale.decision, kind=forged_decision)
    rationale = replace(result.rationale, decision=decision)
    found = {v.kind for v in check_decision(result.calibrated, rationale)}
    assert (ConformanceKind.DECISION_MISMATCH in found) == (
        forged_decision != result.rationale.decision.kind)
    emission = replace(result.emission, command=replace(result.emission.command,
                                                        kind=forged_command))
    found = {v.kind for v in check_emission(result.rationale, emission.command,
                                            emission.stamp_ns)}
    assert (ConformanceKind.COMMAND_MISMATCH in found) == (
        forged_command != result.emission.command.kind)
