"""Input player node: plays a recorded input bag's inputs into the graph.

The bag's /state/nav, /observations and, when it has them, /vehicle_status messages.

What ``ros2 bag play`` does on a ROS install, for the no-ROS runner (``ghost_run --input``):
each message is republished exactly as recorded (its CDR bytes), in the bag's log-time order,
at the recorded pace divided by ``speed``. Like the scenario node it waits until every edge of
the graph has matched before the first message, so nothing is lost to discovery.
"""

import time
from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry

from ghost_bag.recorded_inputs import InputBagError, InputMessage, read_inputs
from ghost_interfaces.msg import VehicleStatus
from ghost_nodes.node_base import run
from ghost_nodes.node_parameters import PARAMETERS
from ghost_nodes.qos import GHOST_QOS
from ghost_nodes.source import SourceNode

__all__ = ['InputPlayerNode', 'main']


#: Messages published per timer tick at most, so a fast playback still yields to the executor.
_BATCH = 50


class InputPlayerNode(SourceNode):
    """Publishes a bag's beliefs, fixes and statuses on the graph's input topics, as recorded."""

    EXITS_WHEN_ACTUATED = True

    def __init__(self, **options: Any) -> None:
        super().__init__('input_player', PARAMETERS['input_player'], **options)
        path = self.param('input')
        if not path:
            raise ValueError("parameter 'input' must name the input bag to play")
        try:
            self._messages: list[InputMessage] = list(read_inputs(
                path, self.param('bag_state_topic'), self.param('bag_observations_topic')))
        except InputBagError as err:
            raise ValueError(str(err)) from err
        self._state_topic = self.param('bag_state_topic')
        self._obs_topic = self.param('bag_observations_topic')
        self._state_pub = self.create_publisher(Odometry, 'state/nav', GHOST_QOS)
        self._obs_pub = self.create_publisher(PoseWithCovarianceStamped, 'observations',
                                              GHOST_QOS)
        self._status_pub = self.create_publisher(VehicleStatus, 'vehicle_status', GHOST_QOS)
        self._next = 0
        self._t0_wall = 0.0
        self.wait_for_graph()

    def start_playing(self) -> None:
        """Publish the recorded messages at the recorded pace / speed."""
        self.get_logger().info(f'playing {len(self._messages)} messages at speed '
                               f'{self.param("speed")}')
        self._t0_wall = time.monotonic()
        self._timer = self.create_timer(0.005, self._play)

    def _play(self) -> None:
        if not self._messages:
            self._finish()
            return
        first_ns = self._messages[0].log_time_ns
        elapsed_ns = (time.monotonic() - self._t0_wall) * 1e9 * self.param('speed')
        published = 0
        while (self._next < len(self._messages) and published < _BATCH
               and self._messages[self._next].log_time_ns - first_ns <= elapsed_ns):
            message = self._messages[self._next]
            self._next += 1
            published += 1
            # The recorded CDR bytes, unchanged: the graph sees exactly what was recorded.
            if message.topic == self._state_topic:
                self._state_pub.publish(message.data)
            elif message.topic == self._obs_topic:
                self._obs_pub.publish(message.data)
            else:
                self._status_pub.publish(message.data)
        if self._next >= len(self._messages):
            self._finish()

    def _finish(self) -> None:
        self._timer.cancel()
        self.get_logger().info('input complete')
        # The newest belief's stamp: the agent drops an older or repeated one.
        stamps = [message.sample.stamp_ns for message in self._messages
                  if message.topic == self._state_topic]
        self.finish(max(stamps, default=None))


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``input_player`` executable."""
    run(InputPlayerNode, args)
