"""Real recordings: a late-started or early-stopped recorder, a mid-run M/K change, compression."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bags import Entry, scenario_traces, trace_entries, write_bag
import pytest

from ghost_bag.errors import BagError
from ghost_core.cli import ExitCode
from ghost_core.loop import closed_loop_step, LoopConfig
from ghost_core.pipeline import CycleTrace
from ghost_verify import cli
from ghost_verify.cycle_properties import verify_baud, verify_erur
from ghost_verify.trace import trace_decisions
from ghost_verify.unverifiable import UnverifiableReason
from ghost_verify.verify import verify_all

#: Messages per smoke cycle in trace_entries: state, raw, outcome, calibrated, rationale,
#: actuation, prediction.
PER_CYCLE = 7


def _cut_entries(name: str, first: int, last: int) -> tuple[list[Entry], tuple[CycleTrace, ...]]:
    """Drop the first `first` and last `last` messages, as a late/early recorder would."""
    traces = scenario_traces(name)
    entries = trace_entries(traces)
    return entries[first:len(entries) - last], traces


def _cut_bag(tmp_path: Path, first: int = 3 * PER_CYCLE + 2, last: int = 3) -> tuple[
        Path, tuple[CycleTrace, ...]]:
    # first: three whole cycles and the state and raw assessment of the fourth are missed;
    # last: the final cycle's prediction, actuation and rationale are missed.
    entries, traces = _cut_entries('smoke', first, last)
    return write_bag(tmp_path / 'bag', entries), traces


def test_a_recording_cut_at_both_ends_holds_with_unverifiable_cycles(tmp_path: Path) -> None:
    """Late start + early stop: the cut cycles and early histories are unverifiable, exit 0."""
    bag, traces = _cut_bag(tmp_path)
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    reasons = {(cycle.cycle_stamp_ns, cycle.reason) for cycle in result.unverifiable}
    assert (traces[3].stamp_ns, UnverifiableReason.CUT_AT_START) in reasons
    assert (traces[9].stamp_ns, UnverifiableReason.CUT_AT_END) in reasons
    # The histories of the first recorded cycles count outcomes observed before the bag.
    before = [cycle for cycle in result.unverifiable
              if cycle.reason is UnverifiableReason.EVIDENCE_BEFORE_RECORDING]
    assert before and before[0].cycle_stamp_ns == traces[3].stamp_ns
    assert result.completeness.incomplete_cycles == ()
    assert not result.baud.violations and not result.erur.violations
    # ADR-0022: the cut cycle's missing link leaves the chain not intact; it is reported
    # apart (links_cut_by_recording) and does not fail the verdict.
    assert result.trace.holds and not result.trace.chain_intact
    assert result.trace.links_cut_by_recording > 0
    document = result.to_json()
    assert document['cycles_unverifiable'] == result.cycles_unverifiable >= 2
    assert document['strict'] is False
    assert {'cycle_stamp_ns': traces[9].stamp_ns, 'reason': 'cut_at_end',
            'detail': 'lacks rationale, actuation'} in document['unverifiable']  # type: ignore
    assert any(line.startswith('unverifiable: ') for line in result.summary_lines())


def test_strict_makes_the_cut_cycles_failures_again(tmp_path: Path) -> None:
    """--strict: incomplete edges and history mismatches fail."""
    bag, traces = _cut_bag(tmp_path)
    result = verify_all(bag, strict=True)
    assert not result.holds and result.unverifiable == () and result.strict
    assert [cycle.cycle_stamp_ns for cycle in result.completeness.incomplete_cycles] == [
        traces[3].stamp_ns, traces[9].stamp_ns]
    assert result.history.mismatches
    assert cli.verify_all_main([str(bag)]) == ExitCode.OK
    assert cli.verify_all_main([str(bag), '--strict']) == ExitCode.VIOLATED


def test_the_single_property_tools_spare_a_cut_tail_unless_strict(tmp_path: Path) -> None:
    """A drift cycle cut before its actuation: unverifiable for BAUD; actuation_missing strict."""
    bag, traces = _cut_bag(tmp_path, first=0, last=2)  # the last actuation is missed
    report = verify_baud(bag)
    assert report.holds
    assert [(c.cycle_stamp_ns, c.reason) for c in report.unverifiable] == [
        (traces[9].stamp_ns, UnverifiableReason.CUT_AT_END)]
    assert report.to_json()['cycles_unverifiable'] == 1
    strict = verify_baud(bag, strict=True)
    assert [(v.cycle_stamp_ns, v.kind.value) for v in strict.violations] == [
        (traces[9].stamp_ns, 'actuation_missing')]
    assert verify_erur(bag).holds
    assert trace_decisions(bag).chain_intact
    assert cli.verify_baud_main([str(bag)]) == ExitCode.OK
    assert cli.verify_baud_main([str(bag), '--strict']) == ExitCode.VIOLATED
    assert cli.verify_erur_main([str(bag), '--strict']) == ExitCode.OK  # no ERUR cycle is cut


def test_a_late_start_alone_holds_and_its_trace_skips_the_cut_cycle(tmp_path: Path) -> None:
    """A cycle whose calibrated assessment was missed has a rationale without a target."""
    bag, traces = _cut_bag(tmp_path, first=3 * PER_CYCLE + 4, last=0)
    assert verify_all(bag).holds
    strict = trace_decisions(bag, strict=True)
    assert not strict.chain_intact
    relaxed = trace_decisions(bag)
    # Not intact (ADR-0022: a link is missing), but the missing links are all the cut's.
    assert relaxed.holds and not relaxed.chain_intact
    assert [c.cycle_stamp_ns for c in relaxed.unverifiable] == [traces[3].stamp_ns]
    assert cli.trace_decisions_main(
        [str(bag), '--json', str(tmp_path / 't.json')]) == ExitCode.OK
    assert cli.trace_decisions_main([str(bag), '--strict', '--json',
                                str(tmp_path / 's.json')]) == ExitCode.VIOLATED


def test_an_incomplete_cycle_in_the_middle_still_fails(tmp_path: Path) -> None:
    """Only the edges of a recording are cut: a gap between complete cycles is a failure."""
    traces = scenario_traces('smoke')
    entries = [entry for entry in trace_entries(traces)
               if not (entry.stamp_ns == traces[5].stamp_ns and entry.topic == '/actuations')]
    result = verify_all(write_bag(tmp_path / 'bag', entries))
    assert not result.holds and result.unverifiable == ()
    assert [c.cycle_stamp_ns for c in result.completeness.incomplete_cycles] == [
        traces[5].stamp_ns]


def _with_parameters_from(traces: tuple[CycleTrace, ...], index: int,
                          config: LoopConfig) -> list[CycleTrace]:
    """Return the traces with the calibrator re-run under `config` from cycle `index` on.

    This is a `ros2 param set` of M and K mid-run: the same raw assessments and outcomes, the
    new M and K recorded on every later calibrated assessment, and the chain recomputed.
    """
    changed = list(traces[:index])
    for position in range(index, len(traces)):
        trace = traces[position]
        outcomes = [earlier.outcome for earlier in traces[:position + 1]]
        changed.append(replace(trace, result=closed_loop_step(trace.raw, outcomes, config)))
    return changed


def test_a_mid_run_change_of_m_and_k_holds_when_self_reported(tmp_path: Path) -> None:
    """No recorded configuration: each cycle is judged with its own M and K, with a warning.

    From cycle 6 on K = 10, so the agent proceeds again; judged with the first pair (K = 2)
    those cycles would be BAUD violations, which is what --strict still shows. (With a
    recorded configuration, the configuration decides: test_rederive's parameters tests.)
    """
    traces = scenario_traces('smoke')
    changed = _with_parameters_from(traces, 5, LoopConfig(min_outcomes=4,
                                                          downgrade_threshold=10))
    bag = write_bag(tmp_path / 'bag', trace_entries(changed))
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    assert result.baud.cycles_precondition_held == 1  # only cycle 5 drifts under K = 2
    assert [(p.min_outcomes, p.downgrade_threshold, p.cycles)
            for p in result.baud.recorded_parameters] == [(4, 2, 5), (4, 10, 5)]
    assert not result.baud.parameters_mismatch and result.baud.parameter_notes == ()
    assert result.baud.min_outcomes == 4 and result.baud.downgrade_threshold == 2
    strict = verify_all(bag, strict=True)
    assert not strict.baud.holds and strict.baud.parameters_mismatch
    # A value given on the command line still overrides every cycle.
    given = verify_baud(bag, downgrade_threshold=2)
    assert not given.holds and given.parameter_notes[0] == (
        'downgrade_threshold: used 2 (from the command line) but the bag recorded 10')
    assert given.parameter_notes[1].startswith('self-reported parameters: ')
    assert result.parameters is not None and result.parameters.warning is not None
    assert cli.verify_all_main([str(bag)]) == ExitCode.OK


def _metadata_bag(tmp_path: Path, **options: str) -> Path:
    bag = write_bag(tmp_path / 'bag', trace_entries(scenario_traces('smoke')))
    metadata = bag / 'metadata.yaml'
    text = metadata.read_text(encoding='utf-8')
    for key, value in options.items():
        assert f'{key}:' in text, key
        lines = [f'  {key}: {value}' if line.strip().startswith(f'{key}:') else line
                 for line in text.splitlines()]
        text = '\n'.join(lines) + '\n'
    metadata.write_text(text, encoding='utf-8')
    return bag


def test_per_message_compression_is_refused_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """compression_mode: message (zstd) is named, never reported as undecodable messages."""
    bag = _metadata_bag(tmp_path, compression_mode='message', compression_format='zstd')
    with pytest.raises(BagError, match='per-message compression') as caught:
        verify_all(bag)
    assert "'zstd'" in str(caught.value) and 'undecodable' not in str(caught.value)
    assert cli.verify_all_main([str(bag)]) == ExitCode.BAD_INPUT
    assert 'per-message compression' in capsys.readouterr().err


@pytest.mark.parametrize(('options', 'named'), [
    ({'compression_mode': 'file', 'compression_format': 'zstd'}, 'per-file compression'),
    ({'compression_mode': 'chunk'}, "compression_mode 'chunk'"),
    ({'compression_format': 'zstd'}, "compression_format 'zstd' without a compression_mode"),
    ({'storage_identifier': 'sqlite3'}, "storage 'sqlite3'"),
])
def test_every_other_unhandled_storage_option_is_named(
        tmp_path: Path, options: dict[str, str], named: str) -> None:
    """File compression, unknown modes, a format without mode and other storage are named."""
    bag = _metadata_bag(tmp_path, **options)
    with pytest.raises(BagError, match=named):
        verify_all(bag)


def test_no_compression_spelt_none_is_read(tmp_path: Path) -> None:
    """compression_mode NONE (as some rosbag2 releases write it) is an uncompressed bag."""
    assert verify_all(_metadata_bag(tmp_path, compression_mode='NONE')).holds


@pytest.mark.parametrize('missed', [2, 5])
def test_outcomes_recorded_from_later_than_the_rest_hold_with_unverifiable_histories(
        tmp_path: Path, missed: int) -> None:
    """The recorder matched /prediction_outcomes after the other topics (discovery is per topic).

    The first outcome is not observed (no prediction yet), so missing 2 or 5 misses 1 or 4
    observed ones.

    Every cycle is complete, but the first histories count outcomes the bag never got: they
    are unverifiable (evidence before the recording), not mismatches, and the histories
    after hold. A first history of no outcomes at all says nothing about when the outcomes'
    recording began. ``--strict`` makes them mismatches again.
    """
    traces = scenario_traces('drift_then_recovery')
    entries = trace_entries(traces)
    outcomes = [i for i, entry in enumerate(entries)
                if entry.type_name == 'ghost_interfaces/msg/PredictionOutcome'][:missed]
    bag = write_bag(tmp_path / 'bag', [e for i, e in enumerate(entries) if i not in outcomes])
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    assert not result.history.mismatches
    before = [cycle for cycle in result.unverifiable
              if cycle.reason is UnverifiableReason.EVIDENCE_BEFORE_RECORDING]
    assert before, result.summary_lines()
    assert result.history.cycles_checked - len(result.history.unverifiable) > 0
    strict = verify_all(bag, strict=True)
    assert not strict.holds and strict.history.mismatches
