"""Namespaces and input QoS with the real node processes.

Two graphs in namespaces uav1 and uav2 run side by side on one ROS domain and each bag
verifies; inputs published best-effort (as PX4's bridge and MAVROS publish them) are heard
by the default input QoS and recorded.
"""

from pathlib import Path
import subprocess
import sys
import time

from graph_runs import (
    FEED,
    feed_cycles,
    GHOST_RUN,
    json_safe,
    payloads_by_topic,
    reports,
    wait_line,
)

from ghost_nodes.graph import closed_loop_graph, expected_subscribers
from ghost_nodes.launcher import GraphProcesses
from ghost_verify import verify_all
from ghost_verify.bag import GhostBag

CONFIG = Path(__file__).resolve().parents[2] / 'config'


def test_two_namespaced_graphs_share_one_domain_and_each_bag_verifies(tmp_path, ros_env,
                                                                       processes) -> None:
    runs = {}
    for namespace in ('uav1', 'uav2'):
        run_dir = tmp_path / namespace
        runs[namespace] = (run_dir, processes.start(
            [*GHOST_RUN, '--scenario', 'smoke', '--run-dir', str(run_dir),
             '--namespace', namespace], ros_env))
    for namespace, (run_dir, proc) in runs.items():
        out, err = proc.communicate(timeout=150)
        assert proc.returncode == 0, f'{namespace}: {out}\n{err}'
        # ghost_run warns when its namespace already has a Ghost graph on the domain: the
        # other namespace's graph is no such graph.
        assert 'already has a Ghost graph' not in err
        topics = set(payloads_by_topic(run_dir / 'bag'))
        assert topics == {f'/{namespace}/{t}' for t in (
            'state/nav', 'observations', 'self_assessment', 'predictions',
            'prediction_outcomes', 'self_assessment/calibrated', 'decisions', 'actuations')}
        document = reports(run_dir)
        assert all(document[name]['holds'] for name in ('baud', 'erur')), document
        assert len(list(GhostBag(run_dir / 'bag').cycles())) == 10
        # No node heard the other graph's messages.
        for log in (run_dir / 'logs').glob('*.log'):
            assert 'foreign producer' not in log.read_text(), log


def test_best_effort_inputs_are_heard_and_recorded(tmp_path, ros_env) -> None:
    """Default input_qos (best_effort) matches a sensor-data publisher; nothing is lost."""
    cycles = feed_cycles(30)
    bag = tmp_path / 'bag'
    specs = closed_loop_graph(CONFIG, bag_path=str(bag), with_scenario=False)
    graph = GraphProcesses(specs, tmp_path / 'logs', ros_env)
    (tmp_path / 'cycles.json').write_text(json_safe(cycles))
    expect = [f'{t}={n}' for t, n in expected_subscribers(specs).items()]
    graph.start()
    try:
        feed = subprocess.Popen(
            [sys.executable, FEED, str(tmp_path / 'cycles.json'), '--best-effort',
             '--rate-hz', '10', '--expect', *expect], env=ros_env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            wait_line(feed, 'done')
            feed.wait(timeout=10)
        finally:
            feed.kill()
        time.sleep(1.0)
        codes = graph.stop()
    finally:
        graph.kill()
    assert all(code == 0 for code in codes.values()), codes
    payloads = payloads_by_topic(bag)
    assert len(payloads['/state/nav']) == 30
    assert len(payloads['/observations']) == sum(c['observation'] is not None for c in cycles)
    assert len(payloads['/actuations']) == 30
    result = verify_all(bag)
    assert result.baud.holds and result.erur.holds
