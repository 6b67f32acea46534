"""MAVROS as the estimator: best-effort odometry with an all-zero covariance.

MAVROS publishes /mavros/local_position/odom (nav_msgs/Odometry) with rclcpp's SensorDataQoS
(best effort, keep last 5) and an all-zero covariance unless the FCU streams its estimator's
covariance. Ghost must hear it (the default best-effort input QoS) and must not mistake
"no covariance" for certainty: every cycle UNKNOWN, every decision ABSTAIN_UNCERTAIN, never
PROCEED, and the bag verifies.
"""

from pathlib import Path
import subprocess
import sys
import time

from graph_runs import FEED, feed_cycles, json_safe, wait_line

from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_nodes.graph import closed_loop_graph, expected_subscribers
from ghost_nodes.launcher import GraphProcesses
from ghost_verify import verify_all
from ghost_verify.bag import GhostBag

CONFIG = Path(__file__).resolve().parents[2] / 'config'
MAVROS_ODOM = '/mavros/local_position/odom'
FIX = '/rtk/fix'


def test_mavros_odometry_without_covariance_never_proceeds(tmp_path, ros_env) -> None:
    cycles = feed_cycles(20)
    for cycle in cycles:
        cycle['pose_covariance'] = [0.0] * 36
        cycle['twist_covariance'] = [0.0] * 36
    bag = tmp_path / 'bag'
    remaps = {'/state/nav': MAVROS_ODOM, '/observations': FIX}
    specs = closed_loop_graph(CONFIG, bag_path=str(bag), with_scenario=False, remaps=remaps)
    expect = [f'{remaps.get(t, t)}={n}' for t, n in expected_subscribers(specs).items()]
    (tmp_path / 'cycles.json').write_text(json_safe(cycles))
    graph = GraphProcesses(specs, tmp_path / 'logs', ros_env)
    graph.start()
    try:
        feed = subprocess.Popen(
            [sys.executable, FEED, str(tmp_path / 'cycles.json'), '--best-effort',
             '--state-topic', MAVROS_ODOM, '--observations-topic', FIX, '--rate-hz', '10',
             '--expect', *expect], env=ros_env, text=True, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
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
    seen = list(GhostBag(bag).cycles())
    assert len(seen) == 20
    for cycle in seen:
        raw = cycle.raw_assessments[0]
        assert raw.overall_level == SelfAssessmentLevel.UNKNOWN
        assert 'no_covariance' in raw.message.msg['position']['reason']
        assert [a.decision_kind for a in cycle.actuations] == [DecisionKind.ABSTAIN_UNCERTAIN]
    result = verify_all(bag)
    assert result.baud.holds and result.erur.holds
