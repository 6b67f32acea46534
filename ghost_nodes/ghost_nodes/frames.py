"""Frame handling at the edge: Odometry twists are expressed in the child (body) frame."""

from collections.abc import Sequence
from typing import Any

from ghost_core.samples import BeliefSample
from ghost_nodes.convert import stamp_ns

__all__ = ['belief_sample', 'body_twist_in_parent', 'rotation_matrix']


def rotation_matrix(q: Any) -> list[list[float]]:
    """Rotation matrix of a quaternion message (x, y, z, w), normalised; identity if zero."""
    x, y, z, w = float(q.x), float(q.y), float(q.z), float(q.w)
    n = (x * x + y * y + z * z + w * w) ** 0.5
    if not n > 0.0 or n != n:
        return [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    x, y, z, w = x / n, y / n, z / n, w / n
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]


def body_twist_in_parent(orientation: Any, linear: Any,
                         twist_covariance: Sequence[float]) -> tuple[tuple[float, float, float],
                                                                      list[float]]:
    """Linear velocity and its 3x3 covariance (row-major) rotated from body to parent frame.

    REP 105/nav_msgs: Odometry.twist is in child_frame_id; the constant-velocity model needs
    it in header.frame_id. v' = R v, Sigma' = R Sigma R^T.
    """
    r = rotation_matrix(orientation)
    v = (float(linear.x), float(linear.y), float(linear.z))
    cov = [[float(twist_covariance[i * 6 + j]) for j in range(3)] for i in range(3)]
    v_parent = tuple(sum(r[i][k] * v[k] for k in range(3)) for i in range(3))
    rc = [[sum(r[i][k] * cov[k][j] for k in range(3)) for j in range(3)] for i in range(3)]
    rcrt = [sum(rc[i][k] * r[j][k] for k in range(3)) for i in range(3) for j in range(3)]
    return (v_parent[0], v_parent[1], v_parent[2]), rcrt


def belief_sample(odom: Any) -> BeliefSample:
    """The core's BeliefSample of a nav_msgs/Odometry, with the twist in the pose frame.

    The velocity covariance block is rotated into the pose frame; the rest of the twist
    covariance is kept as published.
    """
    p = odom.pose.pose.position
    q = odom.pose.pose.orientation
    twist_cov = [float(v) for v in odom.twist.covariance]
    velocity, velocity_cov = body_twist_in_parent(q, odom.twist.twist.linear, twist_cov)
    for i in range(3):
        for j in range(3):
            twist_cov[i * 6 + j] = velocity_cov[i * 3 + j]
    return BeliefSample(
        stamp_ns=stamp_ns(odom.header.stamp), frame_id=odom.header.frame_id,
        position=(float(p.x), float(p.y), float(p.z)), velocity=velocity,
        pose_covariance=tuple(float(v) for v in odom.pose.covariance),
        twist_covariance=tuple(twist_cov),
        orientation_xyzw=(float(q.x), float(q.y), float(q.z), float(q.w)))
