"""verify_all --jobs N: one bag cut into parts judged by N processes, the single pass's result.

Every test compares the whole --json document of the split run with the single pass's (there
is no timing field in it), on bags of a few hundred cycles in many chunks, so that each part
starts inside the evidence window of the cycles before it (W = 32 outcomes). The split must
really have happened (SplitRun.parts), except where a single pass is the only exact answer.
"""

from __future__ import annotations

from dataclasses import replace
import functools
import json
from pathlib import Path
from typing import Any

from bags import (
    chunk_spans,
    Entry,
    flip,
    mcap_of,
    trace_entries,
    with_policy,
    write_bag,
)
import pytest
from run_bags import LyingEvaluator, run_bag, scenario_inputs

from ghost_core.cli import ExitCode
from ghost_core.levels import DecisionKind
from ghost_core.loop import closed_loop_step, LoopConfig
from ghost_core.pipeline import CycleTrace
from ghost_core.scenarios import generate_scenario, run_scenario
from ghost_verify import cli
from ghost_verify.jobs import run_split, SplitRun
from ghost_verify.report_json import canonical_report_json
from ghost_verify.single_pass import VerificationResult
from ghost_verify.unverifiable import UnverifiableReason
from ghost_verify.verify import verify_all

#: Messages per cycle in trace_entries: state, raw, outcome, calibrated, rationale, actuation,
#: prediction.
PER_CYCLE = 7


@functools.cache
def _traces(name: str, cycles: int | None = None) -> tuple[CycleTrace, ...]:
    return run_scenario(generate_scenario(name, cycles=cycles))


def _first_difference(single: Any, split: Any, path: str = '') -> str:
    """Where two JSON documents first differ (for the assertion message)."""
    if type(single) is not type(split):
        return f'{path}: {single!r:.200} != {split!r:.200}'
    if isinstance(single, dict):
        for key in sorted(set(single) | set(split)):
            if single.get(key) != split.get(key):
                return _first_difference(single.get(key), split.get(key), f'{path}.{key}')
    if isinstance(single, list):
        if len(single) != len(split):
            return f'{path}: {len(single)} items != {len(split)}'
        for index, (one, other) in enumerate(zip(single, split, strict=True)):
            if one != other:
                return _first_difference(one, other, f'{path}[{index}]')
    return f'{path}: {single!r:.200} != {split!r:.200}'


def _same_report(single: VerificationResult, split: VerificationResult) -> None:
    one, other = single.to_json(), split.to_json()
    assert canonical_report_json(one) == canonical_report_json(other), (
        _first_difference(one, other))
    assert single.summary_lines() == split.summary_lines()


def _split(bag: Path, jobs: int, **options: Any) -> tuple[VerificationResult, SplitRun]:
    """The single pass and the split run of `bag` compared; return the split's result."""
    single = verify_all(bag, **options)
    split, run = run_split(bag, jobs, **options)
    _same_report(single, split)
    return split, run


def _with_parameters_from(traces: tuple[CycleTrace, ...],
                          changes: dict[int, LoopConfig]) -> list[CycleTrace]:
    """The calibrator re-run from each change's cycle on with its M and K (ros2 param set)."""
    changed = []
    config: LoopConfig | None = None
    for position, trace in enumerate(traces):
        config = changes.get(position, config)
        if config is None:
            changed.append(trace)
            continue
        outcomes = [earlier.outcome for earlier in traces[:position + 1]]
        changed.append(replace(trace, result=closed_loop_step(trace.raw, outcomes, config)))
    return changed


def _next_trace(traces: tuple[CycleTrace, ...] | list[CycleTrace], stamp_ns: int) -> CycleTrace:
    return min((trace for trace in traces if trace.stamp_ns > stamp_ns),
               key=lambda trace: trace.stamp_ns)


@pytest.mark.parametrize(('scenario', 'cycles', 'jobs', 'chunk_size'), [
    ('smoke', 240, 2, 16384),
    ('smoke', 240, 3, 8192),
    ('nominal', 300, 4, 16384),
    ('gnss_outage', None, 2, 32768),
])
def test_a_split_bag_gives_the_single_pass_report_on_every_field(
        tmp_path: Path, scenario: str, cycles: int | None, jobs: int, chunk_size: int) -> None:
    """Each part resumes inside the evidence window of the cycles before it."""
    traces = _traces(scenario, cycles)
    bag = write_bag(tmp_path / 'bag', trace_entries(traces), chunk_size=chunk_size)
    result, run = _split(bag, jobs)
    assert run == SplitRun(jobs, run.starts), run
    assert len(run.starts) == jobs - 1
    assert result.holds, result.summary_lines()
    assert result.completeness.cycles_seen == len(traces)
    # The first cycle of each part judges a history of outcomes recorded in the part before.
    windows = [_next_trace(traces, start).calibrated.calibration_history.outcomes_considered
               for start in run.starts]
    if scenario != 'gnss_outage':  # whose outage leaves windows without observed outcomes
        assert min(windows) >= 8, windows


@pytest.mark.parametrize('lying', [False, True])
def test_the_re_derivation_runs_beside_the_split_parts(tmp_path: Path, lying: bool) -> None:
    """A bag with inputs and configuration: split and re-derived, the single pass's report.

    The parts judge the cycles while the parent re-runs the agent from the inputs; an
    evaluator that lies is caught by the re-derivation either way.
    """
    scenario = generate_scenario('drift_then_recovery', cycles=300)
    config = scenario.parameters.pipeline_config()
    bag, _ = run_bag(tmp_path / 'bag', scenario_inputs(scenario), config,
                     LyingEvaluator(config) if lying else None, chunk_size=16384)
    result, run = _split(bag, 2)
    assert run == SplitRun(2, run.starts), run
    assert result.replay is not None and result.replay.possible
    assert result.replay.cycles_compared == 300
    assert result.replay.violated is lying and result.holds is not lying, (
        result.summary_lines())


def test_a_mid_run_change_of_m_and_k_carries_over_the_split(tmp_path: Path) -> None:
    """K raised, lowered and raised again: each part judges each cycle with its own pair."""
    traces = _traces('smoke', 240)
    changed = _with_parameters_from(traces, {
        50: LoopConfig(min_outcomes=4, downgrade_threshold=10),
        110: LoopConfig(min_outcomes=3, downgrade_threshold=2),
        170: LoopConfig(min_outcomes=4, downgrade_threshold=40)})
    bag = write_bag(tmp_path / 'bag', trace_entries(changed), chunk_size=8192)
    result, run = _split(bag, 3)
    assert run.parts == 3 and run.single_pass is None
    assert result.holds, result.summary_lines()
    pairs = [(item.min_outcomes, item.downgrade_threshold, item.first_cycle_stamp_ns)
             for item in result.baud.recorded_parameters]
    assert [pair[:2] for pair in pairs] == [(4, 2), (4, 10), (3, 2), (4, 40)]
    # The parts do not start where the pairs change: a part resumes with the pair in force.
    assert not {pair[2] for pair in pairs} & {_next_trace(changed, s).stamp_ns
                                               for s in run.starts}
    assert result.baud.min_outcomes == 4 and result.baud.downgrade_threshold == 2


def _cut(entries: list[Entry], first: int, last: int) -> list[Entry]:
    return entries[first:len(entries) - last]


def test_unverifiable_cycles_at_both_edges_carry_over_the_split(tmp_path: Path) -> None:
    """A late start (cut cycles, histories counting outcomes before the bag), an early stop."""
    traces = _traces('smoke', 240)
    entries = _cut(trace_entries(traces), 3 * PER_CYCLE + 2, 3)
    bag = write_bag(tmp_path / 'bag', entries, chunk_size=8192)
    result, run = _split(bag, 3)
    assert run.parts == 3
    assert result.holds, result.summary_lines()
    reasons = {cycle.reason for cycle in result.unverifiable}
    assert reasons == set(UnverifiableReason)
    lead_in = [cycle.cycle_stamp_ns for cycle in result.unverifiable
               if cycle.reason is UnverifiableReason.EVIDENCE_BEFORE_RECORDING]
    # The lead-in is over within the first part, whose end the second carries on from.
    assert len(lead_in) > 20 and max(lead_in) < run.starts[0]


def test_a_lead_in_longer_than_the_first_part_is_judged_in_a_single_pass(
        tmp_path: Path) -> None:
    """Histories still counting outcomes before the bag when part 1 would start: no split."""
    traces = _traces('smoke', 80)
    entries = _cut(trace_entries(traces), 3 * PER_CYCLE + 2, 0)
    bag = write_bag(tmp_path / 'bag', entries, chunk_size=4096)
    result, run = _split(bag, 4)
    assert run.parts == 1 and run.single_pass is not None and 'lead-in' in run.single_pass
    assert result.holds and result.cycles_unverifiable > 20


def test_violations_and_precondition_runs_across_the_split(tmp_path: Path) -> None:
    """An agent that always proceeds under drift: one BAUD run and violations in every part."""
    traces = with_policy(_traces('smoke', 240), DecisionKind.PROCEED, 'always_proceed_v1')
    bag = write_bag(tmp_path / 'bag', trace_entries(traces), chunk_size=16384)
    result, run = _split(bag, 3)
    assert run.parts == 3
    assert not result.holds
    stamps = [violation.cycle_stamp_ns for violation in result.baud.violations]
    assert all(any(stamp > start for stamp in stamps) for start in run.starts)
    assert any(stamp <= run.starts[0] for stamp in stamps)
    [held] = result.baud.precondition_runs
    assert held.first_cycle_stamp_ns < run.starts[0] and held.last_cycle_stamp_ns > run.starts[-1]
    assert result.conformance.violations  # the policy id is unknown: not checked


def test_a_damaged_bag_is_judged_in_a_single_pass(tmp_path: Path) -> None:
    """A chunk whose content fails its CRC: only a single pass reports exactly what was read."""
    traces = _traces('smoke', 240)
    bag = write_bag(tmp_path / 'bag', trace_entries(traces), chunk_size=16384)
    spans = chunk_spans(mcap_of(bag))
    middle = spans[len(spans) // 2]
    flip(mcap_of(bag), (middle.content + middle.end) // 2)
    result, run = _split(bag, 2)
    assert run.parts == 1 and run.single_pass is not None
    assert result.incomplete_input and not result.holds


def test_strict_is_judged_in_a_single_pass(tmp_path: Path) -> None:
    """--strict judges every cycle with the first recorded M and K, which no part knows."""
    traces = _traces('smoke', 240)
    bag = write_bag(tmp_path / 'bag', trace_entries(traces), chunk_size=16384)
    _, run = _split(bag, 2, strict=True)
    assert run.parts == 1 and run.single_pass is not None and 'strict' in run.single_pass


def test_too_few_chunks_are_judged_in_a_single_pass(tmp_path: Path) -> None:
    """A bag of one chunk cannot be cut (each part needs two)."""
    traces = _traces('smoke', 40)
    bag = write_bag(tmp_path / 'bag', trace_entries(traces))
    _, run = _split(bag, 2)
    assert run.parts == 1 and 'too few' in str(run.single_pass)


def test_the_cli_writes_the_same_report_with_jobs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """verify_all BAG --jobs 2 --json: the same document, lines and exit code as without."""
    traces = with_policy(_traces('smoke', 240), DecisionKind.PROCEED, 'always_proceed_v1')
    bag = write_bag(tmp_path / 'bag', trace_entries(traces), chunk_size=16384)
    single, split = tmp_path / 'single.json', tmp_path / 'split.json'
    capsys.readouterr()
    assert cli.verify_all_main([str(bag), '--json', str(single)]) == ExitCode.VIOLATED
    lines = capsys.readouterr().out
    assert cli.verify_all_main(
        [str(bag), '--jobs', '2', '--json', str(split)]) == ExitCode.VIOLATED
    assert capsys.readouterr().out == lines
    assert split.read_bytes() == single.read_bytes()
    assert json.loads(split.read_text())['baud']['holds'] is False


def test_jobs_must_be_positive() -> None:
    """--jobs 0 is a usage error."""
    with pytest.raises(SystemExit) as caught:
        cli.verify_all_main(['bag', '--jobs', '0'])
    assert caught.value.code == ExitCode.USAGE
