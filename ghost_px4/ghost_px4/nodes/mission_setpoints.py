"""Mission setpoints node: a stand-in for a user's mission, in front of the command gate.

A PX4 user's mission (an offboard controller, a planner) sends ``px4_msgs/TrajectorySetpoint``
to PX4; with Ghost, it sends them to ``ghost/mission/trajectory_setpoint`` instead, and the
``command_gate`` decides what reaches ``fmu/in/trajectory_setpoint``. This node is that mission
for demonstrations and tests (``ghost_run --px4-ulog``): simple enough to read off a recording.

The mission, in PX4's local NED frame:

- it starts at the first valid ``fmu/out/vehicle_local_position`` (``xy_valid`` and ``z_valid``,
  x, y, z finite): that point S is the start; nothing is published before it;
- for ``hover_s`` it holds S (velocity 0);
- then it flies a square of side ``side_m`` at S's height at ``speed_m_s``: north, east, south,
  west, back to S, and again; the setpoint is the point on the square where the mission is, and
  the velocity is ``speed_m_s`` along the current leg.

Its clock is the vehicle's: the mission time is the PX4 time (``timestamp`` of the local
positions, us since boot) since S, so a log played ten times faster flies the mission ten times
faster, and a run gives the same setpoints at any speed. Setpoints are published at ``rate_hz``
(wall clock), stamped with the PX4 time of the latest local position; position and velocity are
always finite, acceleration, jerk, yaw and yaw rate are NaN (PX4: not set).
"""

import math
from typing import Any

from ghost_nodes.node_base import GhostNode, run
from ghost_nodes.qos import COMMAND_QOS, PX4_QOS
from ghost_px4.node_parameters import PARAMETERS

__all__ = ['MissionSetpointsNode', 'Vector3', 'main',
           'mission_setpoint']

Vector3 = tuple[float, float, float]


# Unit vectors of the legs, NED: north, east, south, west.
_LEGS: tuple[Vector3, ...] = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0),
                              (0.0, -1.0, 0.0))


def mission_setpoint(t_s: float, start: Vector3, hover_s: float, side_m: float,
                     speed_m_s: float) -> tuple[Vector3, Vector3]:
    """The mission's (position, velocity), NED, ``t_s`` seconds after it started at ``start``.

    Hold ``start`` (zero velocity) until ``hover_s``; then the square (see the module
    docstring). Before 0 (a local position older than the start) it holds the start.
    """
    flown = (t_s - hover_s) * speed_m_s
    if flown < 0.0:
        return start, (0.0, 0.0, 0.0)
    along = math.fmod(flown, 4.0 * side_m)
    leg = min(int(along // side_m), 3)
    corner = [start[0], start[1], start[2]]
    for direction in _LEGS[:leg]:
        corner = [c + side_m * d for c, d in zip(corner, direction, strict=True)]
    into = along - leg * side_m
    direction = _LEGS[leg]
    position = (corner[0] + into * direction[0], corner[1] + into * direction[1], corner[2])
    velocity = (speed_m_s * direction[0], speed_m_s * direction[1], 0.0)
    return position, velocity


class MissionSetpointsNode(GhostNode):
    """Publishes the stand-in mission's TrajectorySetpoint on ghost/mission/trajectory_setpoint."""

    def __init__(self, **options: Any) -> None:
        super().__init__('mission_setpoints', PARAMETERS['mission_setpoints'], **options)
        from px4_msgs.msg import TrajectorySetpoint, VehicleLocalPosition

        self._setpoint_type = TrajectorySetpoint
        self._start: Vector3 | None = None
        self._start_us = 0
        self._now_us = 0
        self._setpoint_pub = self.create_publisher(
            TrajectorySetpoint, 'ghost/mission/trajectory_setpoint', COMMAND_QOS)
        self.create_subscription(VehicleLocalPosition, 'fmu/out/vehicle_local_position',
                                 self._on_local_position, PX4_QOS)
        self._timer = self.create_timer(1.0 / self.param('rate_hz'), self._publish)
        self.get_logger().info(
            f"mission: from the first valid local position, hold {self.param('hover_s'):g} s, "
            f"then a {self.param('side_m'):g} m square at {self.param('speed_m_s'):g} m/s "
            f"(north, east, south, west); {self.param('rate_hz'):g} setpoints/s")

    def _on_local_position(self, msg: Any) -> None:
        self._now_us = max(self._now_us, int(msg.timestamp))
        if self._start is not None:
            return
        x, y, z = float(msg.x), float(msg.y), float(msg.z)
        if not (msg.xy_valid and msg.z_valid and all(map(math.isfinite, (x, y, z)))):
            return
        self._start, self._start_us = (x, y, z), int(msg.timestamp)
        self.get_logger().info(f'mission started at NED ({x:.2f}, {y:.2f}, {z:.2f}) m, PX4 time '
                               f'{self._start_us / 1e6:.3f} s')

    def _publish(self) -> None:
        if self._start is None:
            return
        t_s = (self._now_us - self._start_us) / 1e6
        position, velocity = mission_setpoint(t_s, self._start, self.param('hover_s'),
                                              self.param('side_m'), self.param('speed_m_s'))
        nan = float('nan')
        out = self._setpoint_type()
        out.timestamp = self._now_us
        out.position = list(position)
        out.velocity = list(velocity)
        out.acceleration = [nan, nan, nan]
        out.jerk = [nan, nan, nan]
        out.yaw = nan
        out.yawspeed = nan
        self._setpoint_pub.publish(out)

    def on_shutdown_requested(self) -> None:
        """Send nothing more."""
        self._timer.cancel()


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``mission_setpoints`` executable."""
    run(MissionSetpointsNode, args)
