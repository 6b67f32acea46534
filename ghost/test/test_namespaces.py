"""Namespaces and input QoS with the real node processes.

Two graphs in namespaces uav1 and uav2 run side by side on one ROS domain and each bag
verifies; inputs published best-effort (as PX4's bridge and MAVROS publish them) are heard
by the default input QoS and recorded.
"""

from graph_runs import feed_cycles, GHOST_RUN, payloads_by_topic, reports, run_fed_graph

from ghost_verify import verify_all
from ghost_verify.bag import GhostBag


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
            'state/nav', 'observations', 'vehicle_status', 'self_assessment', 'predictions',
            'prediction_outcomes', 'self_assessment/calibrated', 'decisions', 'actuations',
            'ghost/configuration', 'ghost/lifecycle')}
        document = reports(run_dir)
        assert all(document[name]['holds'] for name in ('baud', 'erur')), document
        assert len(list(GhostBag(run_dir / 'bag').cycles())) == 10
        # No node heard the other graph's messages.
        for log in (run_dir / 'logs').glob('*.log'):
            assert 'foreign producer' not in log.read_text(), log


def test_best_effort_inputs_are_heard_and_recorded(tmp_path, ros_env) -> None:
    """Default input_qos (best_effort) matches a sensor-data publisher; nothing is lost."""
    cycles = feed_cycles(30)
    bag, codes = run_fed_graph(tmp_path, ros_env, cycles)
    assert all(code == 0 for code in codes.values()), codes
    payloads = payloads_by_topic(bag)
    assert len(payloads['/state/nav']) == 30
    assert len(payloads['/observations']) == sum(c['observation'] is not None for c in cycles)
    assert len(payloads['/actuations']) == 30
    result = verify_all(bag)
    assert result.baud.holds and result.erur.holds
