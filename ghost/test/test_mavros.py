"""MAVROS as the estimator: best-effort odometry with an all-zero covariance.

MAVROS publishes /mavros/local_position/odom (nav_msgs/Odometry) with rclcpp's SensorDataQoS
(best effort, keep last 5) and an all-zero covariance unless the FCU streams its estimator's
covariance. Ghost must hear it (the default best-effort input QoS) and must not mistake
"no covariance" for certainty: every cycle UNKNOWN, every decision ABSTAIN_UNCERTAIN, never
PROCEED, and the bag verifies.
"""

from pathlib import Path

from graph_runs import feed_cycles, run_fed_graph

from ghost_core.levels import DecisionKind, SelfAssessmentLevel
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
    bag, codes = run_fed_graph(tmp_path, ros_env, cycles,
                               {'/state/nav': MAVROS_ODOM, '/observations': FIX})
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
