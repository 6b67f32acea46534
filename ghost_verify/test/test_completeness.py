"""Cycle completeness: a cycle with any ghost message must carry its whole chain."""

from __future__ import annotations

from pathlib import Path

from ghost_verify_test.bags import (
    ACTUATION,
    CALIBRATED,
    edit,
    Entry,
    PREDICTION,
    RATIONALE,
    scenario_traces,
    trace_entries,
    write_bag,
)
from ghost_verify_test.views import actuation, calibrated
import pytest

from ghost_core.cli import ExitCode
from ghost_verify import cli
from ghost_verify.completeness import CompletenessChecker
from ghost_verify.events import CycleEvent, GhostTopicKind
from ghost_verify.single_pass import VerificationResult
from ghost_verify.verify import verify_all

SMOKE = scenario_traces('smoke')


def _verify(tmp_path: Path, entries: list[Entry], *, strict: bool = False) -> VerificationResult:
    return verify_all(write_bag(tmp_path / 'bag', entries), strict=strict)


def test_every_cycle_of_the_reference_run_is_complete(tmp_path: Path) -> None:
    report = _verify(tmp_path, trace_entries(SMOKE)).completeness
    assert report.holds and report.cycles_seen == 10
    assert report.summary() == 'cycles: 10/10 complete'


def test_a_cycle_without_its_rationale_is_reported_with_what_it_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A decision policy restarted mid-cycle: calibrated and (a stray) actuation, no rationale."""
    stamp = SMOKE[3].stamp_ns
    bag = write_bag(tmp_path / 'bag', edit(trace_entries(SMOKE), RATIONALE[0], stamp,
                                           lambda m: None))
    result = verify_all(bag)
    assert result.to_json()['incomplete_cycles'] == [{
        'cycle_stamp_ns': stamp,
        'present': ['raw_assessment', 'prediction', 'outcome', 'calibrated', 'actuation'],
        'missing': ['rationale'],
    }]
    assert result.baud.holds and result.erur.holds  # ERUR still has its actuation
    assert cli.verify_all_main([str(bag)]) == ExitCode.VIOLATED
    out = capsys.readouterr().out
    assert f'cycles: VIOLATED (9/10 complete; 1 incomplete, the first at {stamp} ns lacks ' \
        'rationale)' in out


def test_the_last_cycle_of_a_bag_cut_short_is_not_excused(tmp_path: Path) -> None:
    """Strict: the recorder stopped after cycle 10's assessment but before its decision.

    BAUD-v1 and ERUR-v1 judge the nine cycles that have C_t and hold; the combined verdict
    fails on the incomplete last cycle, and the report says exactly which one.
    """
    last = SMOKE[-1].stamp_ns
    entries = trace_entries(SMOKE)
    for topic in (CALIBRATED[0], RATIONALE[0], ACTUATION[0]):
        entries = edit(entries, topic, last, lambda m: None)
    result = _verify(tmp_path, entries, strict=True)
    assert result.baud.holds and result.erur.holds and result.baud.cycles_total == 9
    (cycle,) = result.completeness.incomplete_cycles
    assert cycle.cycle_stamp_ns == last
    assert cycle.missing == (GhostTopicKind.CALIBRATED, GhostTopicKind.RATIONALE,
                             GhostTopicKind.ACTUATION)
    assert not result.holds


def test_a_stamp_with_only_a_prediction_is_incomplete(tmp_path: Path) -> None:
    """A message whose stamp matches no cycle (e.g. a tampered stamp) opens an incomplete one."""
    stray = SMOKE[-1].stamp_ns + 50_000_000

    def move(msg: dict[str, object]) -> dict[str, object]:
        return {**msg, 'header': {'stamp': {'sec': stray // 10**9, 'nanosec': stray % 10**9},
                                  'frame_id': 'map'}}

    entries = edit(trace_entries(SMOKE), PREDICTION[0], SMOKE[-1].stamp_ns, move)
    result = _verify(tmp_path, entries, strict=True)
    (cycle,) = result.completeness.incomplete_cycles
    assert cycle.cycle_stamp_ns == stray and cycle.present == (GhostTopicKind.PREDICTION,)


def test_a_cycle_missing_entirely_is_seen_by_the_history_check_instead(
    tmp_path: Path,
) -> None:
    """A cycle gone without a trace is invisible to completeness; the history check sees it.

    No message carries cycle 5's stamp, so no cycle is incomplete; but its observed outcome is
    missing from every later H_t, which the history check reports.
    """
    gone = SMOKE[4].stamp_ns
    result = _verify(tmp_path, [e for e in trace_entries(SMOKE) if e.stamp_ns != gone])
    assert result.completeness.holds and result.completeness.cycles_seen == 9
    assert [m.cycle_stamp_ns for m in result.history.mismatches] == [
        t.stamp_ns for t in SMOKE[5:]]
    assert not result.holds


def test_the_checker_ignores_empty_events_and_counts_duplicates_as_present() -> None:
    checker = CompletenessChecker()
    checker.update(CycleEvent(1))
    hold = actuation(1, 1)
    checker.update(CycleEvent(2, calibrated=(calibrated(1), calibrated(1)), actuations=(hold,)))
    report = checker.result()
    assert report.cycles_seen == 1
    (cycle,) = report.incomplete_cycles
    assert cycle.missing == (GhostTopicKind.RAW_ASSESSMENT, GhostTopicKind.RATIONALE)
