"""PX4 log player node: a PX4 flight log (ULog) played on fmu/out/... as PX4 would publish it.

What a vehicle running PX4 publishes to ROS 2, from a real flight: the log's
``vehicle_odometry``, ``vehicle_local_position``, ``vehicle_gps_position`` (else ``sensor_gps``),
``vehicle_status``, ``vehicle_land_detected`` and ``mission_result`` as px4_msgs
``VehicleOdometry``, ``VehicleLocalPosition``, ``SensorGps``, ``VehicleStatus``,
``VehicleLandDetected`` and ``MissionResult`` on ``fmu/out/<the log topic>`` (the GNSS on
``fmu/out/vehicle_gps_position``), with PX4's QoS (best-effort,
transient-local, keep-last: ``ghost_nodes.qos.PX4_QOS``), in log order, at the log's pace (by
``timestamp``) divided by ``speed``. Every field the message and the log both have is copied
(older names and units converted, ``ghost_px4.ulog_topics.RENAMED_FIELDS``); ``timestamp``
and ``timestamp_sample`` are the log's (us since PX4 boot), as PX4 stamps them. The fields the
log lacks keep the message's defaults and are listed once in the node's log.

A log without ``vehicle_odometry`` (PX4 before 1.14 rarely logs it; neither log in
../shared/realdata does) gets one per ``vehicle_local_position`` sample, composed from the
local position, ``vehicle_attitude`` and ``estimator_status`` as ``ghost_import`` composes
its beliefs (``derive_odometry``; ``ghost_px4.ulog_topics.playback`` says how).

Like the scenario node and the input player it is a source: it waits until every edge of the
graph has matched (``expected_subscribers``) before the first message, then plays, logs
``px4 log complete`` and publishes nothing more; the runner stops it (or, with
``exit_when_done``, it exits by itself: ``ghost_run --px4-ulog`` knows the log is over).
The px4_bridge parameters the log's vehicle parameters set (EKF2_HGT_REF / EKF2_HGT_MODE,
EKF2_GPS_DELAY) are logged at start-up; ``ghost_px4.ulog_topics.bridge_parameters`` returns them.

px4_msgs is imported when the node starts, not with this module, so that the parameter page
(``ghost.param_docs``) renders without a PX4 workspace.
"""

from pathlib import Path
import time
from typing import Any

from ghost_nodes.node_base import run
from ghost_nodes.qos import PX4_QOS
from ghost_nodes.source import SourceNode
from ghost_px4 import ulog_read, ulog_topics
from ghost_px4.node_parameters import PARAMETERS

__all__ = ['Px4LogPlayerNode', 'main']


#: Messages published per timer tick at most, so a fast playback still yields to the executor.
_BATCH = 50

#: With exit_when_done: seconds between the last message and the exit, for best-effort
#: samples still in flight to be delivered.
EXIT_LINGER_S = 1.0


def _warn_damage(logger: Any, log: Path, damage: Any) -> None:
    """Say once what of the log is damaged: a truncated tail, corrupt data."""
    if damage.truncated_at_byte is not None:
        logger.warning(f'{log}: truncated (its last message, at byte '
                       f'{damage.truncated_at_byte} of {damage.file_size}, is incomplete): '
                       'playing the complete part')
    if damage.corrupt:
        logger.warning(f'{log}: the log has corrupt data (pyulog: '
                       f'{damage.pyulog_said or "file corruption"}): samples in the damaged '
                       'parts are lost')


class Px4LogPlayerNode(SourceNode):
    """Publishes a ULog's PX4 topics on fmu/out/..., as PX4's uXRCE-DDS bridge would."""

    def __init__(self, **options: Any) -> None:
        super().__init__('px4_log_player', PARAMETERS['px4_log_player'], **options)
        from px4_msgs.msg import (
            MissionResult,
            SensorGps,
            VehicleLandDetected,
            VehicleLocalPosition,
            VehicleOdometry,
            VehicleStatus,
        )

        types: dict[str, Any] = {
            'vehicle_odometry': VehicleOdometry, 'vehicle_local_position': VehicleLocalPosition,
            'vehicle_gps_position': SensorGps, 'vehicle_status': VehicleStatus,
            'vehicle_land_detected': VehicleLandDetected, 'mission_result': MissionResult}
        path = self.param('log')
        if not path:
            raise ValueError("parameter 'log' must name the PX4 flight log (ULog) to play")
        log = Path(path)
        try:
            ulog, damage = ulog_read.load_ulog(log, ulog_topics.PLAYER_LOADED_TOPICS)
        except ulog_read.UlogReadError as err:
            raise ValueError(f'parameter log: {err}') from err
        try:
            self._playback = ulog_topics.playback(
                ulog, {topic: kind.get_fields_and_field_types() for topic, kind in types.items()},
                start_s=self.param('start_s'), duration_s=self.param('duration_s'),
                derive_odometry=self.param('derive_odometry'), name=str(log))
        except ulog_read.UlogReadError as err:
            cut = ('' if damage.truncated_at_byte is None else
                   f' (the log is truncated at byte {damage.truncated_at_byte} of '
                   f'{damage.file_size})')
            raise ValueError(f'parameter log: {err}{cut}') from err
        logger = self.get_logger()
        _warn_damage(logger, log, damage)
        for topic in self._playback.absent:
            logger.warning(f'{topic} is not in the log: fmu/out/{topic} stays silent')
        for play in self._playback.topics.values():
            logger.info(ulog_topics.describe_topic(play))
        overrides = ulog_topics.bridge_parameters_of(dict(ulog.initial_parameters))
        logger.info('px4_bridge parameters of this vehicle: ' + (', '.join(
            f'{name}={value}' for name, value in sorted(overrides.items())) or 'none in the log'))
        self._types = types
        # Every topic has its writer, logged or not: the graph waits for every edge.
        self._writers = {topic: self.create_publisher(types[topic], f'fmu/out/{topic}', PX4_QOS)
                         for topic in ulog_topics.PLAYED_TOPICS}
        # When each message is due (log us): the latest timestamp not after any later one's, so
        # a single corrupt timestamp far ahead does not hold back the rest of the log.
        due = [t for t, _, _ in self._playback.order]
        for i in range(len(due) - 2, -1, -1):
            due[i] = min(due[i], due[i + 1])
        self._due = due
        self._next = 0
        self._t0_wall = 0.0
        self.wait_for_graph()

    def start_playing(self) -> None:
        """Publish the log's messages at the log's pace / speed."""
        counts = ', '.join(f'{n} {topic}' for topic, n in self._playback.counts().items())
        self.get_logger().info(
            f'playing {len(self._playback.order)} messages ({counts}), '
            f'{self._playback.span_s:.1f} s of log at speed {self.param("speed")}')
        self._t0_wall = time.monotonic()
        self._timer = self.create_timer(0.005, self._play)

    def _play(self) -> None:
        order, due = self._playback.order, self._due
        elapsed_us = (time.monotonic() - self._t0_wall) * 1e6 * self.param('speed')
        published = 0
        while (self._next < len(order) and published < _BATCH
               and due[self._next] - due[0] <= elapsed_us):
            _, topic, row = order[self._next]
            self._next += 1
            published += 1
            fields = self._playback.topics[topic].fields(row)
            self._writers[topic].publish(self._types[topic](**fields))
        if self._next >= len(order):
            self._timer.cancel()
            self.get_logger().info(f'px4 log complete: {len(order)} messages published')
            if self.param('exit_when_done'):
                self.create_timer(EXIT_LINGER_S, self._exit)

    def _exit(self) -> None:
        """The log is over: leave the executor; ``run`` destroys the node (exit code 0)."""
        raise SystemExit(0)


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``px4_log_player`` executable."""
    run(Px4LogPlayerNode, args)
