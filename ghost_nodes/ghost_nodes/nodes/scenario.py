"""Scenario node: a seeded simulated flight on /state/nav, /observations and /vehicle_status."""

from dataclasses import replace
from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry

from ghost_core.ros_inputs import time_ns
from ghost_core.scenarios import generate_scenario
from ghost_core.wire import to_msg_dict
from ghost_interfaces.msg import VehicleStatus
from ghost_nodes.convert import from_msg_dict
from ghost_nodes.node_base import run
from ghost_nodes.node_parameters import PARAMETERS
from ghost_nodes.qos import GHOST_QOS
from ghost_nodes.scenario_messages import cycle_messages
from ghost_nodes.source import SourceNode

__all__ = ['ScenarioNode', 'main']


class ScenarioNode(SourceNode):
    """Plays one scenario: per cycle, its vehicle status, (maybe) an observation and a belief."""

    EXITS_WHEN_ACTUATED = True

    def __init__(self, **options: Any) -> None:
        super().__init__('scenario', PARAMETERS['scenario'], **options)
        cycles = self.param('cycles')
        self._scenario = generate_scenario(self.param('scenario'), seed=self.param('seed'),
                                           **({'cycles': cycles} if cycles else {}))
        self._frame = self.param('frame_id')
        self._state_pub = self.create_publisher(Odometry, 'state/nav', GHOST_QOS)
        self._obs_pub = self.create_publisher(PoseWithCovarianceStamped, 'observations',
                                              GHOST_QOS)
        self._status_pub = self.create_publisher(VehicleStatus, 'vehicle_status', GHOST_QOS)
        self._next = 0
        self._last_belief_ns: int | None = None
        self.wait_for_graph(self.param('settle_s'))

    def start_playing(self) -> None:
        """Publish one cycle per period (``rate_hz``, or the scenario's own)."""
        rate = self.param('rate_hz')
        period_s = 1.0 / rate if rate > 0 else self._scenario.parameters.period_ns / 1e9
        self.get_logger().info(f'playing {self._scenario.name!r}: {len(self._scenario.cycles)} '
                               f'cycles every {period_s * 1e3:.1f} ms')
        self._publish_status(0)
        self._timer = self.create_timer(period_s, self._publish_cycle)

    def _publish_status(self, index: int) -> None:
        """The vehicle status of cycle `index` (stamped with it: in force from that cycle on).

        Published a period ahead of its cycle's belief, so that it has reached the decision
        policy before that cycle's decision whatever the order the topics are delivered in.
        """
        if index < len(self._scenario.cycles):
            status = replace(self._scenario.cycles[index].vehicle, frame_id=self._frame)
            self._status_pub.publish(from_msg_dict(VehicleStatus, to_msg_dict(status)))

    def _publish_cycle(self) -> None:
        if self._next >= len(self._scenario.cycles):
            self._timer.cancel()
            self.get_logger().info('scenario complete')
            self.finish(self._last_belief_ns)
            return
        cycle = self._scenario.cycles[self._next]
        self._next += 1
        odom, obs = cycle_messages(cycle, self._frame)
        if obs is not None:
            # The observation goes first: it is usually needed as soon as the belief is.
            self._obs_pub.publish(obs)
        self._state_pub.publish(odom)
        self._last_belief_ns = time_ns(odom.header.stamp)
        self._publish_status(self._next)  # the next cycle's, a period ahead


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``scenario`` executable."""
    run(ScenarioNode, args)
