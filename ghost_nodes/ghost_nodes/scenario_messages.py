"""The ROS messages of one scenario cycle: the belief (Odometry) and the fix, if any.

One builder for everything that plays a ghost_core scenario over DDS: the scenario node and
the closed-loop benchmark's driver (bench/loop_driver.py) publish exactly these messages.
"""

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry

from ghost_core.scenarios import ScenarioCycle

__all__ = ['cycle_messages']


def cycle_messages(cycle: ScenarioCycle, frame_id: str = 'map',
                   child_frame_id: str = 'base_link',
                   ) -> tuple[Odometry, PoseWithCovarianceStamped | None]:
    """The belief and the fix (None when the cycle has none), stamped with the cycle stamp."""
    sec, nanosec = divmod(cycle.stamp_ns, 1_000_000_000)
    odom = Odometry()
    odom.header.stamp.sec, odom.header.stamp.nanosec = sec, nanosec
    odom.header.frame_id = frame_id
    odom.child_frame_id = child_frame_id
    p = odom.pose.pose.position
    p.x, p.y, p.z = cycle.belief.position
    q = odom.pose.pose.orientation
    q.x, q.y, q.z, q.w = cycle.belief.orientation_xyzw
    odom.pose.covariance = [float(v) for v in cycle.belief.pose_covariance]
    v = odom.twist.twist.linear
    v.x, v.y, v.z = cycle.belief.velocity
    odom.twist.covariance = [float(c) for c in cycle.belief.twist_covariance]
    if cycle.observation is None:
        return odom, None
    obs = PoseWithCovarianceStamped()
    obs.header.stamp.sec, obs.header.stamp.nanosec = sec, nanosec
    obs.header.frame_id = frame_id
    o = obs.pose.pose.position
    o.x, o.y, o.z = cycle.observation.position
    obs.pose.pose.orientation.w = 1.0
    # The fix gives position only: its 3x3 block; the orientation rows stay zero.
    cov = [0.0] * 36
    for i in range(3):
        for j in range(3):
            cov[i * 6 + j] = float(cycle.observation.covariance[i * 3 + j])
    obs.pose.covariance = cov
    return odom, obs
