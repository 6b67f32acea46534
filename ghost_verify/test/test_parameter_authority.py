"""The run's recorded configuration is the one authority for M, K and W (issue 23, part 2).

An agent whose messages claim parameters of their own choosing is caught: each cycle is
judged with the configuration in force, and every message that differs from it is a
parameters_mismatch. Honest changes are recorded by the nodes (test_rederive's mid-run tests;
the DDS test in ghost/test/test_verifier.py).
"""

from __future__ import annotations

from dataclasses import replace
import json
from pathlib import Path

from ghost_verify_test.bags import scenario_traces, trace_entries
import pytest
from run_bags import configuration_change, write_run_bag, Written

from ghost_core.cli import ExitCode
from ghost_core.loop import closed_loop_step, LoopConfig
from ghost_core.pipeline import CycleTrace
from ghost_core.scenarios import generate_scenario
from ghost_verify import cli
from ghost_verify.run_parameters import ParameterSource
from ghost_verify.verify import verify_all

pytestmark = pytest.mark.bag

SMOKE_CONFIG = generate_scenario('smoke').parameters.pipeline_config()


def _bag(path: Path, traces: list[CycleTrace] | tuple[CycleTrace, ...],
         changes: tuple[Written, ...] = (), *, manifest: bool = True) -> Path:
    """The traces recorded as Ghost's recorder does, with the smoke run's configuration."""
    written = [Written(entry.topic, entry.type_name, entry.msg, entry.log_time_ns,
                       entry.stamp_ns) for entry in trace_entries(traces, with_state=False)]
    written = sorted([*written, *changes], key=lambda item: item.log_time_ns)
    config = json.loads(json.dumps(SMOKE_CONFIG.to_dict()))
    return write_run_bag(path, written, config, manifest=manifest)


def _forged(traces: tuple[CycleTrace, ...], loop_of: object) -> list[CycleTrace]:
    """Each cycle re-run by a calibrator with the loop configuration `loop_of(trace)` gives."""
    forged = []
    for position, trace in enumerate(traces):
        outcomes = [earlier.outcome for earlier in traces[:position + 1]]
        forged.append(replace(trace, result=closed_loop_step(
            trace.raw, outcomes, loop_of(trace))))  # type: ignore[operator]
    return forged


def test_the_honest_smoke_run_carries_its_recorded_configuration(tmp_path: Path) -> None:
    result = verify_all(_bag(tmp_path / 'bag', scenario_traces('smoke')))
    assert result.holds, result.summary_lines()
    report = result.parameters
    assert report is not None and report.authority is ParameterSource.RUN_CONFIGURATION
    assert report.holds and report.warning is None
    # Each cycle's calibrated, raw assessment and prediction carry the configuration.
    assert report.messages_checked == 30
    assert report.summary() == ('parameters: HOLDS (30 messages carry the run configuration '
                                'in force)')
    assert result.baud.min_outcomes_source.value == 'run_configuration'


def test_a_calibrator_claiming_k_above_its_counts_fails(tmp_path: Path) -> None:
    """K_t = b3 + b5 + 1 on every cycle: it never drifts by its own K, and proceeds."""
    loop = SMOKE_CONFIG.loop

    def evasive(trace: CycleTrace) -> LoopConfig:
        history = trace.calibrated.calibration_history
        return LoopConfig(loop.min_outcomes,
                          history.count_beyond_3_std + history.count_beyond_5_std + 1,
                          loop.max_history)

    forged = _forged(scenario_traces('smoke'), evasive)
    assert all(trace.rationale.decision.kind.name == 'PROCEED' for trace in forged)
    # Judged by the K each message claims (no configuration recorded), it would hold.
    assert verify_all(_bag(tmp_path / 'alone', forged, manifest=False)).holds
    result = verify_all(_bag(tmp_path / 'bag', forged))
    assert not result.holds
    assert not result.baud.holds and result.baud.cycles_precondition_held == 6
    report = result.parameters
    assert report is not None and not report.holds
    assert {mismatch.parameter for mismatch in report.mismatches} == {'downgrade_threshold'}
    assert all(mismatch.in_force == loop.downgrade_threshold for mismatch in report.mismatches)
    assert cli.verify_all_main([str(tmp_path / 'bag')]) == ExitCode.VIOLATED


def test_a_calibrator_claiming_a_window_of_one_fails(tmp_path: Path) -> None:
    """W = 1: one outcome never reaches K. The history is recomputed with the W in force."""
    loop = SMOKE_CONFIG.loop
    # A forger ignores LoopConfig's bounds (M and K at most W): set W past the constructor.
    window_of_one = LoopConfig(loop.min_outcomes, loop.downgrade_threshold, loop.max_history)
    object.__setattr__(window_of_one, 'max_history', 1)
    forged = _forged(scenario_traces('smoke'), lambda _trace: window_of_one)
    assert verify_all(_bag(tmp_path / 'alone', forged, manifest=False)).holds
    result = verify_all(_bag(tmp_path / 'bag', forged))
    assert not result.holds
    assert not result.history.holds
    report = result.parameters
    assert report is not None
    assert {mismatch.parameter for mismatch in report.mismatches} == {'window_size'}
    assert len(report.mismatches) == 10


def test_a_recorded_change_makes_the_same_messages_hold(tmp_path: Path) -> None:
    """K raised to 10 from cycle 6 on, recorded as the calibrator publishes it: holds."""
    traces = scenario_traces('smoke')
    loop = SMOKE_CONFIG.loop
    raised = LoopConfig(loop.min_outcomes, 10, loop.max_history)
    changed = [*traces[:5], *_forged(traces, lambda _trace: raised)[5:]]
    unrecorded = verify_all(_bag(tmp_path / 'unrecorded', changed))
    assert not unrecorded.holds and not unrecorded.baud.holds
    change = configuration_change(
        '/calibrator', traces[4].stamp_ns,
        {'loop': {'downgrade_threshold': 10, 'max_history': loop.max_history,
                  'min_outcomes': loop.min_outcomes}}, traces[4].stamp_ns + 10)
    bag = _bag(tmp_path / 'bag', changed, (change,))
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    assert result.parameters is not None and len(result.parameters.changes) == 1
    assert result.baud.cycles_precondition_held == 1  # only cycle 5 drifts under K = 2
    # The auditor's own K still judges every cycle.
    given = verify_all(bag, downgrade_threshold=2)
    assert not given.baud.holds


@pytest.mark.parametrize(('section', 'bound'), [
    ({'loop': {'downgrade_threshold': 100, 'max_history': 32, 'min_outcomes': 4}},
     'downgrade_threshold must be at most max_history (32'),
    ({'process_noise_q': 1.0e4}, 'process_noise_q must be a number in [0, 10]'),
    ({'thresholds': {**SMOKE_CONFIG.thresholds.to_dict(), 'hysteresis': {
        **SMOKE_CONFIG.thresholds.hysteresis.to_dict(), 'recovery_bound_ns': 10**15}}},
     'recovery_bound_ns must be at most 60 s'),
])
def test_a_recorded_value_beyond_its_declared_bound_fails(tmp_path: Path, section,
                                                          bound: str) -> None:
    """The audit's unbounded changes (K = 100, Q = 1e4, R = 1e15 ns), recorded as a node would.

    Each would switch a property off (a K no window reaches; predictions too wide for any
    drift; a recovery bound no flight outlasts): the parameters check fails, naming the bound.
    """
    traces = scenario_traces('smoke')
    node = '/calibrator' if 'loop' in section else (
        '/forward_predictor' if 'process_noise_q' in section else '/self_assessor')
    change = configuration_change(node, traces[4].stamp_ns, section, traces[4].stamp_ns + 10)
    result = verify_all(_bag(tmp_path / 'bag', traces, (change,)))
    assert not result.holds and result.parameters is not None
    assert not result.parameters.holds and bound in result.parameters.summary()
    assert result.verdict_line().startswith('NOT VERIFIED: parameters: VIOLATED (')


def test_a_bag_without_a_configuration_says_so(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    bag = _bag(tmp_path / 'bag', scenario_traces('smoke'), manifest=False)
    assert cli.verify_all_main([str(bag)]) == ExitCode.OK
    out = capsys.readouterr().out
    assert ('warning: self-reported parameters: no start configuration is recorded in the bag, '
            'and no manifest.json') in out
    assert '-m, -k, -w not given' in out
    assert cli.verify_all_main([str(bag), '-m', '4', '-k', '2', '-w', '32']) == ExitCode.OK
    out = capsys.readouterr().out
    assert 'self-reported' not in out
    result = verify_all(bag, min_outcomes=4, downgrade_threshold=2, window_size=32)
    assert result.parameters is not None
    assert result.parameters.authority is ParameterSource.COMMAND_LINE


def test_an_unusable_change_record_fails_the_check(tmp_path: Path) -> None:
    """A change of a read-only part of the configuration cannot be in force: it fails."""
    traces = scenario_traces('smoke')
    change = configuration_change('/outcome_evaluator', -1, {'grace_cycles': 7}, 1)
    result = verify_all(_bag(tmp_path / 'bag', traces, (change,)))
    assert not result.holds
    report = result.parameters
    assert report is not None and not report.holds
    assert 'grace_cycles cannot change while Ghost runs' in report.problem
