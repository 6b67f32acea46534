"""The multi-process graph on either executor: ghost_run --executor events | single_threaded.

Real processes over real DDS (ghost_run on the test's own domain; it stops its graph): the
smoke scenario's closed loop completes, records and verifies on each executor, and each of the
agent's nodes is given that executor (its ``executor`` parameter; the sources and the recorder
keep their own). A value ghost_run does not know is refused before anything starts.
"""

import json

from graph_runs import GHOST_RUN, run_main_job
import pytest

from ghost_core.graph import IN_PROCESS_NODES


@pytest.mark.parametrize('executor', ['events', 'single_threaded'])
def test_the_multi_process_loop_runs_and_verifies_on_each_executor(tmp_path, ros_env,
                                                                   executor) -> None:
    run = tmp_path / executor
    result = run_main_job('smoke', run, ros_env, timeout=90,
                          extra=['--executor', executor, '--no-report'])
    assert result.returncode == 0, result.stdout + result.stderr
    for line in ('BAUD-v1: HOLDS', 'ERUR-v1: HOLDS', 'chain: 10/10 verified', 'VERIFIED'):
        assert line in result.stdout, result.stdout
    logs = run / 'logs'
    assert not (logs / 'ghost_agent.log').exists()
    given = {}
    for path in logs.glob('*.params.yaml'):
        (section,) = json.loads(path.read_text()).values()
        given[path.name.removesuffix('.params.yaml')] = section['ros__parameters'].get('executor')
    agent = {name for name in given if name in IN_PROCESS_NODES}
    assert agent >= {'self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
                     'decision_policy', 'action_emitter', 'monitor'}, given
    assert {given[name] for name in agent} == {executor}, given
    assert given['scenario'] is None and given['recorder'] is None, given


def test_an_unknown_executor_is_a_usage_error(tmp_path) -> None:
    import subprocess

    result = subprocess.run([*GHOST_RUN, '--scenario', 'smoke', '--run-dir', str(tmp_path / 'r'),
                             '--executor', 'multi'], text=True, capture_output=True,
                            timeout=60, check=False)
    assert result.returncode == 2, result.stderr
    assert "--executor: invalid choice: 'multi' (choose from 'single_threaded', 'events')" in (
        result.stderr), result.stderr
    assert 'Traceback' not in result.stderr and not (tmp_path / 'r').exists()


def test_the_agents_nodes_spin_the_events_executor_unless_told() -> None:
    """The default of both modes, in ghost_run, ghost_agent and the launch file alike."""
    from ghost.run import _parser
    from ghost_nodes.node_parameters import AGENT_EXECUTOR, DEFAULT_EXECUTOR

    assert AGENT_EXECUTOR == 'events' and DEFAULT_EXECUTOR == 'single_threaded'
    for extra in ([], ['--single-process']):
        assert _parser().parse_args(['--scenario', 'smoke', *extra]).executor == 'events'
