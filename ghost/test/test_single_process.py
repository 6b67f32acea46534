"""Single-process mode: the agent's nodes in one ghost_agent process, on one executor.

Real processes over real DDS: ghost_run --single-process records the same messages as the
one-process-per-node graph (decoded payloads equal, topic for topic), and its bag verifies,
with in-process delivery between the nodes (ghost_nodes.intra_process) and without.
"""

import json

from graph_runs import payloads_by_topic, run_main_job, without_arrival

from ghost_core.graph import CONFIGURATION_TOPIC, IN_PROCESS_NODES, LIFECYCLE_TOPIC

SCENARIO = 'dropout'
#: Topics every node publishes on (its own records): DDS orders one publisher, not several.
MANY_PUBLISHERS = (LIFECYCLE_TOPIC, CONFIGURATION_TOPIC)


def _as_set(messages: list) -> list[str]:
    return sorted(json.dumps(message, sort_keys=True) for message in messages)


def test_single_process_records_what_the_multi_process_graph_records(tmp_path, ros_env) -> None:
    multi = tmp_path / 'multi'
    result = run_main_job(SCENARIO, multi, ros_env)
    assert result.returncode == 0, result.stdout + result.stderr
    multi_process_payloads = payloads_by_topic(multi / 'bag')
    # In-process delivery (the default) with both executors, and every hop through DDS.
    for executor, delivery in (('single_threaded', 'in_process'), ('events', 'in_process'),
                               ('events', 'dds')):
        run = tmp_path / f'{executor}-{delivery}'
        result = run_main_job(SCENARIO, run, ros_env,
                              extra=['--single-process', '--executor', executor,
                                     '--delivery', delivery])
        assert result.returncode == 0, result.stdout + result.stderr
        assert "'ghost_agent': 0" in result.stdout, result.stdout
        logs = {path.stem for path in (run / 'logs').glob('*.log')}
        assert 'ghost_agent' in logs and not logs & IN_PROCESS_NODES, logs
        graph = json.loads((run / 'logs' / 'ghost_agent.graph.json').read_text())
        assert {node['name'] for node in graph['nodes']} == {
            'self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
            'decision_policy', 'action_emitter', 'monitor'}
        payloads = payloads_by_topic(run / 'bag')
        assert set(payloads) == set(multi_process_payloads)
        for topic, messages in multi_process_payloads.items():
            ours, theirs = without_arrival(payloads[topic]), without_arrival(messages)
            if topic in MANY_PUBLISHERS:  # one record per node: their order is arrival's
                ours, theirs = _as_set(ours), _as_set(theirs)
            assert ours == theirs, f'{topic} differs ({executor}, {delivery})'
        for line in ('BAUD-v1: HOLDS', 'ERUR-v1: HOLDS', 'chain: 20/20 verified'):
            assert line in result.stdout, result.stdout
        # Every edge was proven matched (subscriptions sharing one DDS reader counted once),
        # not waited out for wait_for_graph_s.
        scenario_log = (run / 'logs' / 'scenario.log').read_text(encoding='utf-8')
        assert 'every edge matched' in scenario_log, scenario_log[-2000:]


def test_a_bad_node_parameter_in_single_process_fails_start_up_with_its_reason(
        tmp_path, ros_env) -> None:
    params = tmp_path / 'bad.yaml'
    params.write_text('/**/monitor:\n  ros__parameters:\n    stale_cycles: 0\n')
    result = run_main_job('smoke', tmp_path / 'run', ros_env, timeout=90,
                          extra=['--single-process', '--params-file', str(params)])
    assert result.returncode != 0
    log = (tmp_path / 'run' / 'logs' / 'ghost_agent.log').read_text()
    assert 'stale_cycles' in log, log
