"""The agent's two inputs from their ROS messages: a belief from Odometry, a fix from a pose.

Duck-typed: a message is read by its attributes (rclpy's, a decoded object's) or, as a plain
dict (the bag readers' decoded form, ``ghost_bag.cdr``), by its keys. So the nodes, the
offline replay and the verifier's re-derivation all convert with the very same arithmetic:
the same message gives bit for bit the same BeliefSample or Observation. REP 105:
an Odometry's twist is in its child (body) frame; the constant-velocity model needs it in the
pose frame, so the velocity and its covariance block are rotated here, once.
"""

from __future__ import annotations

from collections.abc import Sequence
import math
from typing import Any

from ghost_core.assessment import declares_invalid
from ghost_core.geometry import apply, congruence, identity3, Matrix3, unit_quaternion_matrix
from ghost_core.samples import BeliefSample, Observation

__all__ = ['belief_sample', 'body_twist_in_parent', 'observation_of', 'time_ns']


def _field(msg: Any, name: str) -> Any:
    """A field of a message: a dict's key, or an attribute of any other form."""
    return msg[name] if type(msg) is dict else getattr(msg, name)


def time_ns(stamp: Any) -> int:
    """Integer nanoseconds of a ``builtin_interfaces/Time`` message (``sec``, ``nanosec``)."""
    return int(_field(stamp, 'sec')) * 1_000_000_000 + int(_field(stamp, 'nanosec'))


def _xyz(vector: Any) -> tuple[float, float, float]:
    return float(_field(vector, 'x')), float(_field(vector, 'y')), float(_field(vector, 'z'))


def _message_rotation(q: Any) -> Matrix3:
    """Rotation matrix of a quaternion message (x, y, z, w), normalised; identity if zero.

    Lenient, unlike geometry.rotation_matrix: a message is read, never refused. The
    normalisation is the one every recorded run was derived with (kept bit for bit).
    """
    x, y, z = _xyz(q)
    w = float(_field(q, 'w'))
    n: float = (x * x + y * y + z * z + w * w) ** 0.5
    if not n > 0.0 or n != n:
        return identity3()
    return unit_quaternion_matrix(x / n, y / n, z / n, w / n)


def body_twist_in_parent(orientation: Any, linear: Any,
                         twist_covariance: Sequence[float]) -> tuple[tuple[float, float, float],
                                                                      list[float]]:
    """Linear velocity and its 3x3 covariance (row-major) rotated from body to parent frame.

    REP 105/nav_msgs: Odometry.twist is in child_frame_id; the constant-velocity model needs
    it in header.frame_id. v' = R v, Sigma' = R Sigma R^T. A block the estimator declares
    invalid (+inf on its diagonal, assessment.declares_invalid) stays so in any frame:
    diag(+inf) (rotating it would make NaN of 0 x inf).
    """
    r = _message_rotation(orientation)
    x, y, z = apply(r, _xyz(linear))
    # + 0.0: an exact zero is +0.0, never -0.0, as every recorded run was derived with.
    v_parent = (x + 0.0, y + 0.0, z + 0.0)
    cov = [float(twist_covariance[i * 6 + j]) for i in range(3) for j in range(3)]
    if declares_invalid(cov):
        return v_parent, [math.inf if i == j else 0.0 for i in range(3) for j in range(3)]
    return v_parent, list(congruence(r, cov))


def belief_sample(odom: Any) -> BeliefSample:
    """The core's BeliefSample of a nav_msgs/Odometry, with the twist in the pose frame.

    The velocity covariance block is rotated into the pose frame; the rest of the twist
    covariance is kept as published.
    """
    header, pose, twist = _field(odom, 'header'), _field(odom, 'pose'), _field(odom, 'twist')
    p = _field(_field(pose, 'pose'), 'position')
    q = _field(_field(pose, 'pose'), 'orientation')
    twist_cov = [float(v) for v in _field(twist, 'covariance')]
    velocity, velocity_cov = body_twist_in_parent(
        q, _field(_field(twist, 'twist'), 'linear'), twist_cov)
    for i in range(3):
        for j in range(3):
            twist_cov[i * 6 + j] = velocity_cov[i * 3 + j]
    return BeliefSample(
        stamp_ns=time_ns(_field(header, 'stamp')), frame_id=_field(header, 'frame_id'),
        position=_xyz(p), velocity=velocity,
        pose_covariance=tuple(float(v) for v in _field(pose, 'covariance')),
        twist_covariance=tuple(twist_cov),
        orientation_xyzw=(*_xyz(q), float(_field(q, 'w'))))


def observation_of(msg: Any) -> Observation:
    """The core's Observation of a geometry_msgs/PoseWithCovarianceStamped (its position).

    The position block (the first 3x3 of the 6x6 pose covariance) is the fix's covariance;
    the orientation is not used.
    """
    header, pose = _field(msg, 'header'), _field(msg, 'pose')
    p = _field(_field(pose, 'pose'), 'position')
    cov = [float(v) for v in _field(pose, 'covariance')]
    return Observation(time_ns(_field(header, 'stamp')), str(_field(header, 'frame_id')),
                       _xyz(p), tuple(cov[r * 6 + c] for r in range(3) for c in range(3)))
