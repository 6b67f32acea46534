"""ArduPilot log player node: a DataFlash log (.bin) played on /ap/... as AP_DDS would publish it.

What a vehicle running ArduPilot with AP_DDS publishes to ROS 2, from a real flight
(``ghost_ardupilot.ap_playback`` says how each topic is made from the log): /ap/odometry/filtered
(the EKF3 state and its XKV variances, as the proposed upstream publisher would),
/ap/pose/filtered, /ap/twist/filtered, /ap/navsat, /ap/gps_global_origin/filtered and /ap/status,
with AP_DDS's QoS (``ghost_nodes.qos.AP_QOS``; /ap/status ``AP_STATUS_QOS``), in log order, at the
log's pace (by TimeUS) divided by ``speed``, stamped with the log's TimeUS.

Like the PX4 log player it is a source: it waits until every edge of the graph has matched
(``expected_subscribers``), then plays, logs ``ardupilot log complete`` and publishes nothing
more; with ``exit_when_done`` it exits by itself a second later. The ap_bridge parameters the
log's vehicle parameters set (the GNSS lag, the EKF height source) are logged at start-up
(``ap_playback.bridge_parameters``).

ardupilot_msgs, sensor_msgs and geographic_msgs are imported when the node starts.
"""

from pathlib import Path
import time
from typing import Any

from geometry_msgs.msg import PoseStamped, TwistStamped
from nav_msgs.msg import Odometry

from ghost_ardupilot import ap_playback
from ghost_ardupilot.dataflash_read import DataflashReadError, load_dataflash
from ghost_ardupilot.node_parameters import PARAMETERS
from ghost_core.graph import AP_OUT_TOPICS, relative_topic
from ghost_nodes.convert import from_msg_dict
from ghost_nodes.node_base import run
from ghost_nodes.qos import AP_QOS, AP_STATUS_QOS
from ghost_nodes.source import SourceNode

__all__ = ['ApLogPlayerNode', 'main']

#: Messages published per timer tick at most, so a fast playback still yields to the executor.
_BATCH = 50
#: With exit_when_done: seconds between the last message and the exit.
EXIT_LINGER_S = 1.0


class ApLogPlayerNode(SourceNode):
    """Publishes a DataFlash log's flight on /ap/..., as ArduPilot's AP_DDS would."""

    def __init__(self, **options: Any) -> None:
        super().__init__('ap_log_player', PARAMETERS['ap_log_player'], **options)
        from ardupilot_msgs.msg import Status
        from geographic_msgs.msg import GeoPointStamped
        from sensor_msgs.msg import NavSatFix

        kinds: dict[str, Any] = {
            '/ap/odometry/filtered': Odometry, '/ap/pose/filtered': PoseStamped,
            '/ap/twist/filtered': TwistStamped, '/ap/navsat': NavSatFix,
            '/ap/gps_global_origin/filtered': GeoPointStamped, '/ap/status': Status}
        path = self.param('log')
        if not path:
            raise ValueError("parameter 'log' must name the ArduPilot flight log (.bin) to play")
        try:
            log = load_dataflash(Path(path), ap_playback.LOADED_TYPES)
            self._playback = ap_playback.playback(log, odometry=self.param('odometry'))
        except (DataflashReadError, ValueError) as err:
            raise ValueError(f'parameter log: {err}') from err
        logger = self.get_logger()
        damage = log.damage.describe(log.last_time_us)
        if damage:
            logger.warning(f'{path}: {damage}')
        for note in self._playback.notes:
            logger.warning(note)
        logger.info(f'{log.firmware()} on {log.board()}; ap_bridge parameters of this '
                    'vehicle: ' + ', '.join(f'{name}={value}' for name, value in sorted(
                        ap_playback.bridge_parameters(log).items())))
        self._kinds = kinds
        # Every topic has its writer, played or not: the graph waits for every edge.
        self._writers = {topic: self.create_publisher(
            kinds[topic], relative_topic(topic),
            AP_STATUS_QOS if topic == '/ap/status' else AP_QOS) for topic in AP_OUT_TOPICS}
        self._next = 0
        self._t0_wall = 0.0
        self.wait_for_graph()

    def start_playing(self) -> None:
        """Publish the log's messages at the log's pace / speed."""
        counts = ', '.join(f'{n} {topic}' for topic, n in self._playback.counts.items())
        self.get_logger().info(
            f'playing {len(self._playback.order)} messages ({counts}), '
            f'{self._playback.span_s:.1f} s of log at speed {self.param("speed")}')
        self._t0_wall = time.monotonic()
        self._timer = self.create_timer(0.005, self._play)

    def _play(self) -> None:
        order = self._playback.order
        if not order:
            self._done()
            return
        elapsed_ns = (time.monotonic() - self._t0_wall) * 1e9 * self.param('speed')
        published = 0
        while (self._next < len(order) and published < _BATCH
               and order[self._next][0] - order[0][0] <= elapsed_ns):
            _, topic, message = order[self._next]
            self._next += 1
            published += 1
            self._writers[topic].publish(from_msg_dict(self._kinds[topic], message))
        if self._next >= len(order):
            self._done()

    def _done(self) -> None:
        self._timer.cancel()
        self.get_logger().info(f'ardupilot log complete: {self._next} messages published')
        if self.param('exit_when_done'):
            self.create_timer(EXIT_LINGER_S, self._exit)

    def _exit(self) -> None:
        """The log is over: leave the executor; ``run`` destroys the node (exit code 0)."""
        raise SystemExit(0)


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``ap_log_player`` executable."""
    run(ApLogPlayerNode, args)
