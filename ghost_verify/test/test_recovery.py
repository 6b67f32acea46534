"""RECOVERY-v1 in verify_all: judged from the recorded inputs by default, or said not applicable.

The bags are runs of the real pure pipeline recorded as Ghost's recorder records them (inputs,
Ghost messages, manifest.json with the run configuration; run_bags). The pure judgement and
its Hypothesis tests are in ghost_core/test/test_recovery.py.
"""

from __future__ import annotations

from pathlib import Path

from bags import scenario_traces, trace_entries, write_bag
import pytest
from run_bags import (
    run_bag,
    run_config,
    run_messages,
    scenario_inputs,
    TrappedAssessor,
    write_run_bag,
)

from ghost_core.cli import ExitCode
from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_core.scenarios import generate_scenario
from ghost_verify import cli
from ghost_verify.verify import verify_all

#: Degraded (GNSS lost), then recovered for long enough: the recovery is judged.
SCENARIO = 'gnss_outage'


def _outage(tmp_path: Path, trapped: bool = False, chunk_size: int | None = None) -> Path:
    scenario = generate_scenario(SCENARIO)
    config = scenario.parameters.pipeline_config()
    pipeline = TrappedAssessor(config) if trapped else None
    bag, _ = run_bag(tmp_path / ('trapped' if trapped else 'honest'),
                     scenario_inputs(scenario), config, pipeline, chunk_size=chunk_size)
    return bag


def test_an_honest_recovery_holds_and_is_judged(tmp_path: Path) -> None:
    """The reference assessor comes back after the outage: RECOVERY-v1 holds, not vacuously."""
    bag = _outage(tmp_path)
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    recovery = result.recovery
    assert recovery is not None and recovery.applicable and recovery.holds
    assert not recovery.vacuous and recovery.verdict is not None
    assert recovery.verdict.cycles_evaluated > 0
    assert dict(recovery.verdict.breaks)  # the outage ended a run: it was judged across it
    assert recovery.summary() == (f'RECOVERY-v1: HOLDS ({recovery.verdict.cycles_evaluated} '
                                  'cycles evaluated; R = 5 s)')
    assert recovery.summary() in result.summary_lines()
    document = result.to_json()['recovery']
    assert isinstance(document, dict)
    assert (document['applicable'], document['holds'], document['vacuous']) == (
        True, True, False)
    assert document['recovery_time_ns'] == 5_000_000_000
    assert document['input_topics'] == {'observations': '/observations', 'state': '/state/nav'}
    assert cli.verify_all_main([str(bag)]) == ExitCode.OK


def test_an_assessor_that_never_comes_back_fails_verify_all(tmp_path: Path) -> None:
    """Held UNCERTAIN after the belief recovered: RECOVERY-v1 is violated, exit 1.

    Every other check holds on what it recorded (ERUR-v1 needs a KNOWN raw level).
    """
    bag = _outage(tmp_path, trapped=True)
    result = verify_all(bag)
    assert result.baud.holds and result.erur.holds and result.trace.holds
    assert result.completeness.holds and result.history.holds and result.conformance.holds
    recovery = result.recovery
    assert recovery is not None and recovery.violated and not result.holds
    verdict = recovery.verdict
    # Judged before the outage (KNOWN, as due) and after it (held: every one a violation).
    assert verdict is not None and 0 < verdict.violations_total < verdict.cycles_evaluated
    first = verdict.violations[0]
    assert first.published_level == SelfAssessmentLevel.UNCERTAIN
    assert first.cycle_stamp_ns - first.recovered_since_ns >= 5_000_000_000
    assert recovery.summary().startswith(f'RECOVERY-v1: VIOLATED ({verdict.violations_total} '
                                         f'of {verdict.cycles_evaluated} cycles evaluated; '
                                         f'the first at {first.cycle_stamp_ns} ns: published '
                                         'UNCERTAIN')
    document = result.to_json()['recovery']
    assert isinstance(document, dict) and document['violations'][0] == first.to_json()
    assert cli.verify_all_main([str(bag)]) == ExitCode.VIOLATED


def test_a_bag_without_configuration_or_inputs_is_not_applicable(tmp_path: Path) -> None:
    """No manifest.json, or no recorded inputs: not applicable and why, never a HOLDS.

    The other checks decide the verdict.
    """
    plain = write_bag(tmp_path / 'plain', trace_entries(scenario_traces('smoke')))
    result = verify_all(plain)
    recovery = result.recovery
    assert recovery is not None and not recovery.applicable and not recovery.holds
    assert not recovery.violated and result.holds
    assert recovery.summary().startswith(
        'RECOVERY-v1: not applicable (no start configuration is recorded in the bag, and no '
        'manifest.json')
    document = result.to_json()['recovery']
    assert isinstance(document, dict)
    assert (document['applicable'], document['holds'], document['vacuous']) == (
        False, False, False)
    assert 'manifest.json' in str(document['not_applicable_reason'])
    scenario = generate_scenario(SCENARIO)
    config = scenario.parameters.pipeline_config()
    written, _ = run_messages(scenario_inputs(scenario), config)
    ghost_only = write_run_bag(tmp_path / 'no_inputs',
                               [item for item in written if item.stamp_ns is not None],
                               run_config(config))
    recovery = verify_all(ghost_only).recovery
    assert recovery is not None and recovery.summary() == (
        'RECOVERY-v1: not applicable (the bag holds no belief on /state/nav: the inputs were '
        'not recorded)')


def test_a_recovery_too_short_for_r_holds_vacuously(tmp_path: Path) -> None:
    """drift_then_recovery lasts 2.9 s, less than R = 5 s: nothing is under the precondition."""
    scenario = generate_scenario('drift_then_recovery')
    bag, traces = run_bag(tmp_path / 'bag', scenario_inputs(scenario),
                          scenario.parameters.pipeline_config())
    assert any(t.rationale.decision.kind == DecisionKind.PROCEED for t in traces)
    recovery = verify_all(bag).recovery
    assert recovery is not None and recovery.vacuous
    assert recovery.summary() == 'RECOVERY-v1: HOLDS vacuously (0 cycles; R = 5 s)'


@pytest.mark.parametrize('trapped', [False, True])
def test_judged_on_the_re_runs_read_of_the_inputs(tmp_path: Path, trapped: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """With the re-derivation on, RECOVERY-v1 takes the inputs the re-run reads (one read).

    Its report is the one a read of its own gives (--no-replay), violations included; and
    RECOVERY-v1 reads nothing itself then.
    """
    bag = _outage(tmp_path, trapped=trapped)
    alone = verify_all(bag, replay=False).recovery
    assert alone is not None and alone.applicable

    def no_second_read(*_args: object, **_kwargs: object) -> None:
        raise AssertionError('RECOVERY-v1 read the inputs again')

    monkeypatch.setattr('ghost_verify.recovery.read_file_inputs', no_second_read)
    followed = verify_all(bag)
    # The re-run read every input (the trapped assessor's levels differ from it: a finding).
    replayed = followed.replay
    assert replayed is not None and replayed.replayed and replayed.not_possible_reason is None
    assert replayed.beliefs == alone.verdict.beliefs and replayed.holds != trapped
    assert followed.recovery == alone
    assert followed.recovery.violated == trapped
