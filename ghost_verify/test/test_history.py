"""History consistency: every recorded H_t is recomputed from the recorded outcomes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ghost_verify_test.bags import (
    edit,
    Entry,
    OUTCOME,
    raw_assessment,
    scenario_traces,
    step_from_history,
    trace_entries,
    write_bag,
)
from ghost_verify_test.strategies import outcome as make_outcome
import pytest

from ghost_core.calibration import distance_bin
from ghost_core.cli import ExitCode
from ghost_core.contracts import CalibrationHistory, PredictionOutcome
from ghost_core.hashing import content_address
from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_core.loop import closed_loop_step, CycleResult, LoopConfig
from ghost_core.scenarios import generate_scenario
from ghost_core.wire import to_msg_dict
from ghost_verify import cli
from ghost_verify.events import (
    BagInfo,
    calibrated_of,
    CycleEvent,
    GhostMessage,
    GhostTopicKind,
)
from ghost_verify.history import HistoryChecker
from ghost_verify.single_pass import VerificationResult
from ghost_verify.verify import verify_all

SMOKE = scenario_traces('smoke')
CONFIG = generate_scenario('smoke').parameters.loop_config()
OUTCOME_TOPICS = (('/prediction_outcomes', 'ghost_interfaces/msg/PredictionOutcome'),)


def _verify(tmp_path: Path, entries: list[Entry], *, strict: bool = False) -> VerificationResult:
    return verify_all(write_bag(tmp_path / 'bag', entries), strict=strict)


def _mismatch_stamps(result: VerificationResult) -> list[int]:
    return [item.cycle_stamp_ns for item in result.history.mismatches]


def test_the_reference_agent_s_histories_are_all_consistent(tmp_path: Path) -> None:
    result = _verify(tmp_path, trace_entries(SMOKE))
    assert result.history.checked and result.history.holds
    assert result.history.cycles_checked == 10
    assert result.history.summary() == 'history: 10/10 consistent'


def test_a_restarted_calibrator_that_lost_its_window_is_reported_per_cycle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """The calibrator restarts before cycle 6 and forgets the outcomes of cycles 1-5.

    With fewer than M outcomes it sees no drift and the agent PROCEEDs on cycles 6-8 while the
    belief drifts; judged on the recorded histories, BAUD-v1 and ERUR-v1 both hold and the
    chain verifies. Only recomputing H_t from the recorded outcomes shows it: each of cycles
    6-10 is a history_mismatch, recorded count vs recomputed count.
    """
    restart = 5
    traces = list(SMOKE[:restart])
    for index in range(restart, len(SMOKE)):
        trace = SMOKE[index]
        outcomes = [item.outcome for item in SMOKE[restart:index + 1]]
        traces.append(replace(trace, result=closed_loop_step(trace.raw, outcomes, CONFIG)))
    assert traces[6].rationale.decision.kind is DecisionKind.PROCEED  # a PROCEED under drift
    bag = write_bag(tmp_path / 'bag', trace_entries(traces))
    result = verify_all(bag)
    assert result.baud.holds and result.erur.holds and result.trace.chain_intact
    assert result.completeness.holds and not result.holds
    assert _mismatch_stamps(result) == [trace.stamp_ns for trace in SMOKE[restart:]]
    for mismatch, forgetful, full in zip(result.history.mismatches, traces[restart:],
                                         SMOKE[restart:], strict=True):
        recorded, recomputed = dict(mismatch.recorded), dict(mismatch.recomputed)
        assert recorded['outcomes_considered'] == \
            forgetful.calibrated.calibration_history.outcomes_considered
        assert recomputed['outcomes_considered'] == \
            full.calibrated.calibration_history.outcomes_considered
        assert 'outcomes_considered' in mismatch.differing_fields
    code, out, _ = (cli.verify_all_main([str(bag)]), *capsys.readouterr())
    assert code == ExitCode.VIOLATED
    assert f'history: VIOLATED (5/10 consistent; 5 history_mismatch, the first at ' \
        f'{SMOKE[restart].stamp_ns} ns)' in out


def test_a_tampered_outcome_shows_in_every_history_whose_window_holds_it(
    tmp_path: Path,
) -> None:
    """Cycle 3's outcome moved to another bin after the fact: H_3 ... H_10 no longer agree."""
    trace = SMOKE[2]
    assert trace.outcome.observed
    before = trace.outcome.position_mahalanobis
    after = 100.0 if distance_bin(before) < 3 else 0.5
    entries = edit(trace_entries(SMOKE), OUTCOME[0], trace.stamp_ns,
                   lambda m: {**m, 'position_mahalanobis': after})
    result = _verify(tmp_path, entries)
    assert _mismatch_stamps(result) == [t.stamp_ns for t in SMOKE[2:]]
    assert 'worst_position_mahalanobis' in result.history.mismatches[0].differing_fields \
        or after < before


def test_a_forged_history_that_hides_drift_is_caught_only_by_recomputation(
    tmp_path: Path,
) -> None:
    """Cycle 7 rewritten from a history with no bad outcome, every hash fresh: PROCEED.

    The recorded H_7 says no drift, so BAUD-v1 does not apply and ERUR-v1 holds; the chain
    verifies. The recomputed H_7 disagrees: history_mismatch at cycle 7, and exit 1.
    """
    trace = SMOKE[6]
    real = trace.calibrated.calibration_history
    clean = CalibrationHistory(
        outcomes_considered=real.outcomes_considered,
        count_within_1_std=real.outcomes_considered, count_beyond_1_std=0,
        count_beyond_3_std=0, count_beyond_5_std=0, worst_position_mahalanobis=0.5,
        worst_orientation_mahalanobis=0.0,
        most_recent_observed_stamp_ns=real.most_recent_observed_stamp_ns,
        window_size=real.window_size)
    forged = step_from_history(trace.raw, clean, CONFIG)
    assert forged.rationale.decision.kind is DecisionKind.PROCEED
    traces = [replace(t, result=forged) if t is trace else t for t in SMOKE]
    result = _verify(tmp_path, trace_entries(traces))
    assert result.baud.holds and result.erur.holds
    assert result.trace.summary() == 'chain: 10/10 verified'
    assert _mismatch_stamps(result) == [trace.stamp_ns]
    (mismatch,) = result.history.mismatches
    assert dict(mismatch.recorded)['count_beyond_5_std'] == 0
    assert dict(mismatch.recomputed)['count_beyond_3_std'] \
        + dict(mismatch.recomputed)['count_beyond_5_std'] >= 2  # type: ignore[operator]
    assert not result.holds


def test_a_recording_that_started_late_cannot_back_its_first_histories(
    tmp_path: Path,
) -> None:
    """The recorder missed cycles 1-3: the first histories name outcomes the bag lacks.

    Start the recorder before the loop; otherwise the first W cycles are mismatches.
    """
    late = [entry for entry in trace_entries(SMOKE) if entry.stamp_ns >= SMOKE[3].stamp_ns]
    result = _verify(tmp_path, late, strict=True)
    assert _mismatch_stamps(result)[0] == SMOKE[3].stamp_ns
    assert result.baud.holds and result.erur.holds and not result.holds


def test_an_outcome_that_breaks_its_contract_is_reported(tmp_path: Path) -> None:
    """A paired outcome flagged unobserved is invalid: reported with its stamp, and it fails."""
    stamp = SMOKE[4].stamp_ns
    entries = edit(trace_entries(SMOKE), OUTCOME[0], stamp, lambda m: {**m, 'observed': False})
    result = _verify(tmp_path, entries)
    (invalid,) = result.history.invalid_outcomes
    assert invalid.stamp_ns == stamp and 'observed' in invalid.reason
    assert not result.history.holds


def test_without_an_outcome_topic_the_check_is_skipped_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Nothing to recompute from: a note, not a failure."""
    entries = [entry for entry in trace_entries(SMOKE) if entry.topic != OUTCOME[0]]
    bag = write_bag(tmp_path / 'bag', entries)
    result = verify_all(bag)
    assert not result.history.checked and result.holds
    assert result.to_json()['history'] == {
        'checked': False,
        'skipped_reason': 'the bag has no PredictionOutcome topic, so no history can be '
                          'recomputed',
        'holds': True, 'cycles_checked': 0, 'cycles_consistent': 0, 'observed_outcomes': 0,
        'outcome_limit': 4096, 'history_mismatch': [], 'invalid_outcomes': [],
    }
    assert cli.verify_all_main([str(bag)]) == ExitCode.OK
    lines = capsys.readouterr().out.splitlines()
    assert not any(line.startswith('history:') for line in lines)
    assert ('note: history: not checked: the bag has no PredictionOutcome topic, so no '
            'history can be recomputed') in lines


def _message(kind: GhostTopicKind, contract: object, stamp_ns: int) -> GhostMessage:
    msg = to_msg_dict(contract)
    return GhostMessage('/t', 'ghost_interfaces/msg/X', kind, 0, stamp_ns, msg,
                        content_address(msg))


def _event(outcome: PredictionOutcome, result: CycleResult) -> CycleEvent:
    calibrated = calibrated_of(_message(GhostTopicKind.CALIBRATED, result.calibrated,
                                        outcome.stamp_ns))
    return CycleEvent(outcome.stamp_ns,
                      outcomes=(_message(GhostTopicKind.OUTCOME, outcome, outcome.stamp_ns),),
                      calibrated=(calibrated,))


def test_memory_is_bounded_by_the_outcome_limit_not_the_bag_length() -> None:
    """Memory is bounded by the checker's outcome limit, whatever the bag's length.

    Thousands of cycles, W = 4: the checker keeps at most its limit of outcomes, and a window
    larger than the limit is reported as impossible to recompute, not guessed.
    """
    config = LoopConfig(min_outcomes=2, downgrade_threshold=1, max_history=4)
    checker = HistoryChecker(outcome_limit=8)
    outcomes: list[PredictionOutcome] = []
    for index in range(1, 2001):
        outcomes.append(make_outcome(index, [0.5, 2.0, 4.0, 6.0, None][index % 5]))
        raw = raw_assessment(outcomes[-1].stamp_ns, SelfAssessmentLevel.KNOWN)
        checker.update(_event(outcomes[-1], closed_loop_step(raw, outcomes[-8:], config)))
        assert len(checker._window) <= 8
    info = BagInfo((), OUTCOME_TOPICS, 0, 0, 0)
    assert checker.result(info).holds
    wide = LoopConfig(min_outcomes=2, downgrade_threshold=1, max_history=16)
    outcomes.append(make_outcome(2001, 0.5))
    raw = raw_assessment(outcomes[-1].stamp_ns, SelfAssessmentLevel.KNOWN)
    checker.update(_event(outcomes[-1], closed_loop_step(raw, outcomes, wide)))
    (mismatch,) = checker.result(info).mismatches
    assert 'cannot be recomputed' in mismatch.detail
