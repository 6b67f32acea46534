"""ArduPilot mission node: a stand-in for a user's mission, in front of the command gate.

An ArduPilot companion's mission (a planner, a follower) sends geometry_msgs/TwistStamped to
AP_DDS's /ap/cmd_vel; with Ghost it sends them to ``cmd_vel_in`` instead, and the
``command_gate`` in ardupilot mode decides what reaches /ap/cmd_vel. This node is that mission
for demonstrations and tests (``ghost_run --ardupilot-log``): a constant velocity ``linear`` in
``frame_id`` ('map' ENU or 'base_link' FLU, the two AP_DDS accepts), published at ``rate_hz``
(wall clock), stamped with the node's clock.
"""

from typing import Any

from geometry_msgs.msg import TwistStamped

from ghost_ardupilot.node_parameters import PARAMETERS
from ghost_nodes.node_base import GhostNode, run
from ghost_nodes.qos import COMMAND_QOS

__all__ = ['ApMissionNode', 'main']


class ApMissionNode(GhostNode):
    """Publishes a constant TwistStamped on cmd_vel_in."""

    def __init__(self, **options: Any) -> None:
        super().__init__('ap_mission', PARAMETERS['ap_mission'], **options)
        linear = [float(v) for v in self.param('linear')]
        if len(linear) != 3:
            raise ValueError(f'parameter linear must be 3 numbers (m/s), got {linear}')
        self._linear = linear
        self._frame_id = str(self.param('frame_id'))
        self._pub = self.create_publisher(TwistStamped, 'cmd_vel_in', COMMAND_QOS)
        self.create_timer(1.0 / self.param('rate_hz'), self._send)

    def _send(self) -> None:
        msg = TwistStamped()
        now = int(self.get_clock().now().nanoseconds)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
        msg.header.frame_id = self._frame_id
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = self._linear
        self._pub.publish(msg)


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``ap_mission`` executable."""
    run(ApMissionNode, args)
