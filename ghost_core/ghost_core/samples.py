"""Plain input samples: a belief (what nav_msgs/Odometry carries) and a position observation."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
import math
import numbers
from typing import Annotated

from ghost_core import _checks as check
from ghost_core.contracts import Contract, Mat3, StampNs, Text, Vec3
from ghost_core.geometry import block3

__all__ = ['COVARIANCE_UNKNOWN_SENTINEL', 'BeliefSample', 'Observation',
           'has_no_covariance_information']

#: ROS's convention (sensor_msgs, REP-145): a covariance whose first element is -1 is unknown.
COVARIANCE_UNKNOWN_SENTINEL = -1.0


def has_no_covariance_information(block: Sequence[float]) -> bool:
    """Return True when a covariance block says nothing about uncertainty.

    That is an all-zero block (what MAVROS and many drivers publish for "not provided") or one
    whose first element is ROS's -1 sentinel. Not knowing the uncertainty is not certainty:
    such a block must never be read as a perfectly known state.
    """
    if not block:
        return True
    return block[0] == COVARIANCE_UNKNOWN_SENTINEL or all(x == 0.0 for x in block)



def _numbers(owner: str, name: str, value: object, length: int) -> tuple[float, ...]:
    # Inputs may legitimately hold NaN or inf (a broken estimator): that is what the
    # self-assessor must judge, so only the shape and the number type are checked here.
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise check.failure(owner, name, f'a sequence of {length} numbers', value)
    items = tuple(value)
    if len(items) != length:
        raise check.failure(owner, name, f'a sequence of {length} numbers', value)
    # Fast path: plain floats (what messages carry) need no further check; it runs for every
    # 36-entry covariance of every belief.
    if all(type(item) is float for item in items):
        return items
    if any(isinstance(item, bool) or not isinstance(item, numbers.Real) for item in items):
        raise check.failure(owner, name, f'a sequence of {length} numbers', value)
    return tuple(float(item) for item in items)


def _numbers_of(length: int) -> check.FieldCheck:
    def check_numbers(owner: str, name: str, value: object) -> tuple[float, ...]:
        return _numbers(owner, name, value, length)
    return check_numbers


#: Numbers that may be non-finite (judged by the self-assessor, not refused here).
_Numbers3 = Annotated[Vec3, _numbers_of(3)]
_Covariance6 = Annotated[tuple[float, ...], _numbers_of(36)]


@dataclass(frozen=True, slots=True)
class BeliefSample(Contract):
    """One belief: the fields of a nav_msgs/Odometry the core uses.

    `pose_covariance` and `twist_covariance` are 36 floats, row-major 6x6 in the order of
    geometry_msgs PoseWithCovariance / TwistWithCovariance (x, y, z, rot x, rot y, rot z).
    The velocity is taken to be expressed in the pose frame (`frame_id`); a bridge whose twist
    is in the body frame must rotate it first. Values may be non-finite: judging them is the
    self-assessor's job.
    """

    stamp_ns: StampNs
    frame_id: Text
    position: _Numbers3
    velocity: _Numbers3
    pose_covariance: _Covariance6
    twist_covariance: _Covariance6
    orientation_xyzw: Annotated[tuple[float, float, float, float],
                                _numbers_of(4)] = (0.0, 0.0, 0.0, 1.0)

    @property
    def position_covariance(self) -> Mat3:
        """The 3x3 position block (x, y, z) of the pose covariance."""
        return block3(self.pose_covariance, 0, 0)

    @property
    def velocity_covariance(self) -> Mat3:
        """The 3x3 linear-velocity block of the twist covariance."""
        return block3(self.twist_covariance, 0, 0)

    @property
    def is_predictable(self) -> bool:
        """True when position, velocity and their covariance blocks are all finite."""
        values = (*self.position, *self.velocity, *self.position_covariance,
                  *self.velocity_covariance)
        return all(math.isfinite(x) for x in values)


@dataclass(frozen=True, slots=True)
class Observation(Contract):
    """An independent position fix (what geometry_msgs/PoseWithCovarianceStamped carries).

    `covariance` is the 3x3 position block, row-major. Values may be non-finite: the outcome
    evaluator turns that into an `invalid_observation` or an infinite distance.
    """

    stamp_ns: StampNs
    frame_id: Text
    position: _Numbers3
    covariance: Annotated[Mat3, _numbers_of(9)]

    @classmethod
    def from_pose_covariance(
        cls, stamp_ns: int, frame_id: str, position: Vec3, pose_covariance: tuple[float, ...]
    ) -> Observation:
        """Return the observation of a PoseWithCovariance (position block of its 6x6)."""
        pose = _numbers('Observation', 'pose_covariance', pose_covariance, 36)
        return cls(stamp_ns, frame_id, position, block3(pose, 0, 0))
