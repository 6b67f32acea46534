"""Tampered evidence: each change is caught, and the report names the cycle stamp."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
import random

from ghost_verify_test.bags import (
    ACTUATION,
    CALIBRATED,
    edit,
    Entry,
    RAW,
    scenario_traces,
    trace_entries,
    write_bag,
)
import pytest

from ghost_core.actions import emit_reference_action
from ghost_core.cli import ExitCode
from ghost_core.contracts import Decision, DecisionRationale
from ghost_core.levels import DecisionKind
from ghost_core.loop import CycleResult
from ghost_core.pipeline import CycleTrace
from ghost_core.wire import message_address
from ghost_verify import cli
from ghost_verify.errors import LateMessageError
from ghost_verify.single_pass import VerificationResult
from ghost_verify.trace import ChainLink, ChainStatus, DecisionTraceReport, trace_decisions
from ghost_verify.verify import verify_all

SMOKE = scenario_traces('smoke')
DRIFT = SMOKE[6]  # cycle 7: under drift (BAUD-v1 applies)
CALM = SMOKE[1]  # cycle 2: fewer than M outcomes (ERUR-v1 applies)


def _verify(tmp_path: Path, entries: list[Entry], name: str = 'bag') -> VerificationResult:
    return verify_all(write_bag(tmp_path / name, entries))


def _problems(trace: DecisionTraceReport) -> set[tuple[ChainLink, int, ChainStatus, str]]:
    return {(link.link, link.timestamp_ns, link.chain_status, link.detail)
            for link in trace.links
            if link.chain_status in (ChainStatus.BROKEN, ChainStatus.ASSESSMENT_MISSING)}


def _with_result(trace: CycleTrace, rationale: DecisionRationale,
                 calibrated: object | None = None) -> CycleTrace:
    cal = trace.calibrated if calibrated is None else calibrated
    return replace(trace, result=CycleResult(cal, rationale,  # type: ignore[arg-type]
                                             emit_reference_action(rationale)))


def test_a_decision_rewritten_to_proceed_under_drift_with_fresh_hashes_violates_baud(
    tmp_path: Path,
) -> None:
    """A forger turns cycle 7's HOLD into PROCEED, re-hashing rationale and actuation.

    The chain verifies (every hash is fresh), but BAUD-v1 fails P2 and P3 at that stamp.
    """
    rationale = DecisionRationale(
        stamp_ns=DRIFT.stamp_ns, frame_id=DRIFT.rationale.frame_id,
        decision=Decision(DecisionKind.PROCEED, DRIFT.stamp_ns, 'forged_proceed'),
        self_assessment_sha256=DRIFT.rationale.self_assessment_sha256,
        calibrated_assessment_sha256=DRIFT.rationale.calibrated_assessment_sha256,
        policy_id=DRIFT.rationale.policy_id,
        flight_status=DRIFT.rationale.flight_status,
        mission_status=DRIFT.rationale.mission_status,
    )
    traces = [_with_result(t, rationale) if t is DRIFT else t for t in SMOKE]
    result = _verify(tmp_path, trace_entries(traces))
    assert result.trace.summary() == 'chain: 10/10 verified'
    assert result.completeness.holds and result.history.holds
    found = {(v.cycle_stamp_ns, v.kind.value) for v in result.baud.violations}
    assert found == {(DRIFT.stamp_ns, 'p2_decision_proceed'),
                     (DRIFT.stamp_ns, 'p3_non_conservative_command')}
    observed = dict(result.baud.violations[0].observed)
    assert observed['decision_kind'] == 'PROCEED' and observed['command_kind'] == \
        'CONTINUE_MISSION'
    assert not result.holds


def test_an_altered_assessment_field_breaks_the_chain_at_its_stamp(tmp_path: Path) -> None:
    """/self_assessment at cycle 3 edited after the fact: both links that name it break."""
    stamp = SMOKE[2].stamp_ns
    entries = edit(trace_entries(SMOKE), RAW[0], stamp,
                   lambda m: {**m, 'assessor_id': 'forged'})
    result = _verify(tmp_path, entries)
    assert _problems(result.trace) == {
        (ChainLink.RATIONALE_TO_ASSESSMENT, stamp, ChainStatus.BROKEN, 'hash_mismatch'),
        (ChainLink.CALIBRATED_TO_ASSESSMENT, stamp, ChainStatus.BROKEN, 'hash_mismatch'),
    }
    # The combined verifier keeps only the problems; trace_decisions lists every decision.
    assert not result.trace.records_kept and not result.trace.records
    (record,) = [r for r in trace_decisions(tmp_path / 'bag').records if r.timestamp_ns == stamp]
    assert record.chain_status is ChainStatus.BROKEN and not record.end_to_end_verified
    assert result.baud.holds and result.erur.holds and not result.holds


def test_a_deleted_assessment_is_assessment_missing_and_an_incomplete_cycle(
    tmp_path: Path,
) -> None:
    stamp = SMOKE[4].stamp_ns
    entries = edit(trace_entries(SMOKE), RAW[0], stamp, lambda m: None)
    result = _verify(tmp_path, entries)
    assert _problems(result.trace) == {
        (ChainLink.RATIONALE_TO_ASSESSMENT, stamp, ChainStatus.ASSESSMENT_MISSING, ''),
        (ChainLink.CALIBRATED_TO_ASSESSMENT, stamp, ChainStatus.ASSESSMENT_MISSING, ''),
    }
    assert result.to_json()['incomplete_cycles'] == [{
        'cycle_stamp_ns': stamp,
        'present': ['prediction', 'outcome', 'calibrated', 'rationale', 'actuation'],
        'missing': ['raw_assessment'],
    }]


@pytest.mark.parametrize(('trace', 'report'), [(DRIFT, 'baud'), (CALM, 'erur')])
def test_a_deleted_actuation_under_a_precondition_is_actuation_missing(
    tmp_path: Path, trace: CycleTrace, report: str,
) -> None:
    """An unprovable cycle is not a passing one, for either property."""
    entries = edit(trace_entries(SMOKE), ACTUATION[0], trace.stamp_ns, lambda m: None)
    result = _verify(tmp_path, entries)
    violations = getattr(result, report).violations
    assert [(v.cycle_stamp_ns, v.kind.value) for v in violations] == [
        (trace.stamp_ns, 'actuation_missing')]
    other = result.erur if report == 'baud' else result.baud
    assert other.holds
    assert [c.cycle_stamp_ns for c in result.completeness.incomplete_cycles] == [trace.stamp_ns]
    assert result.trace.summary() == 'chain: 9/10 verified (intact; not every decision was ' \
        'actuated)'


def test_a_calibrated_assessment_whose_inline_raw_was_altered_is_broken(
    tmp_path: Path,
) -> None:
    """The inline raw no longer hashes to the calibrated message's own claim."""
    stamp = SMOKE[5].stamp_ns

    def alter(msg: dict[str, object]) -> dict[str, object]:
        raw = dict(msg['raw_assessment'])  # type: ignore[call-overload]
        return {**msg, 'raw_assessment': {**raw, 'assessor_id': 'forged'}}

    result = _verify(tmp_path, edit(trace_entries(SMOKE), CALIBRATED[0], stamp, alter))
    assert _problems(result.trace) == {
        (ChainLink.CALIBRATED_TO_ASSESSMENT, stamp, ChainStatus.BROKEN, 'inline_raw_mismatch'),
        # the calibrated message changed, so the rationale's claim on it breaks too
        (ChainLink.RATIONALE_TO_CALIBRATED, stamp, ChainStatus.BROKEN, 'hash_mismatch'),
    }


def test_a_consistently_reforged_calibrated_assessment_is_still_caught_by_the_raw_topic(
    tmp_path: Path,
) -> None:
    """A calibrated assessment built on another raw assessment, every hash downstream fresh.

    Its own claim matches its inline raw, the rationale and the actuation name it correctly;
    only the link to what /self_assessment really published breaks.
    """
    trace = SMOKE[5]
    forged_raw = replace(trace.raw, assessor_id='forged_assessor')
    forged = replace(trace.calibrated, raw_assessment=forged_raw,
                     raw_assessment_sha256=message_address(forged_raw))
    rationale = replace(trace.rationale, calibrated_assessment_sha256=message_address(forged))
    traces = [_with_result(t, rationale, forged) if t is trace else t for t in SMOKE]
    result = _verify(tmp_path, trace_entries(traces))
    assert _problems(result.trace) == {
        (ChainLink.CALIBRATED_TO_ASSESSMENT, trace.stamp_ns, ChainStatus.BROKEN,
         'hash_mismatch'),
    }
    assert result.trace.summary() == 'chain: VIOLATED (9/10 verified; links: 1 broken)'


def test_messages_reordered_within_the_window_give_the_same_verdict(tmp_path: Path) -> None:
    """Shuffling messages across neighbouring cycles changes nothing but the file hashes.

    The reader groups by cycle stamp and yields cycles in stamp order, so any order that keeps
    each cycle's messages within the --cycle-window gives byte-identical reports.
    """
    entries = trace_entries(SMOKE)
    shuffled: list[Entry] = []
    rng = random.Random(7)
    for start in range(0, len(entries), 21):  # blocks of three cycles, shuffled inside
        block = entries[start:start + 21]
        rng.shuffle(block)
        shuffled += block
    assert shuffled != entries
    straight = _verify(tmp_path, entries, 'straight').to_json()
    reordered = _verify(tmp_path, shuffled, 'reordered').to_json()
    for document in (straight, reordered):
        for part in ('baud', 'erur', 'trace'):
            section = document[part]
            assert isinstance(section, dict)
            section.pop('bag_files')
            section.pop('source_mcap_sha256', None)
    assert straight == reordered and straight['holds'] is True


def test_messages_reordered_beyond_the_window_are_refused_not_misjudged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Messages moved further than the cycle window: exit 3 and a clear line, not a verdict.

    Every actuation moved to the end of the bag: with a window of 2 cycles they arrive after
    their cycles were judged. LateMessageError, exit 3, one line asking for a larger window;
    with the default window (256) the same bag verifies.
    """
    entries = trace_entries(SMOKE)
    moved = ([e for e in entries if e.topic != ACTUATION[0]]
             + [e for e in entries if e.topic == ACTUATION[0]])
    bag = write_bag(tmp_path / 'bag', moved)
    with pytest.raises(LateMessageError):
        verify_all(bag, cycle_window=2)
    code = cli.verify_all_main([str(bag), '--cycle-window', '2'])
    out, err = capsys.readouterr()
    assert (code, out) == (ExitCode.BAD_INPUT, '')
    assert err.count('\n') == 1 and 'rerun with a larger --cycle-window' in err
    assert cli.verify_all_main([str(bag)]) == ExitCode.OK
