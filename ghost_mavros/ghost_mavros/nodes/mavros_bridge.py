"""MAVROS bridge node: MAVROS's topics (PX4 or ArduPilot behind it) in, Ghost's inputs out.

In, with the QoS MAVROS publishes them with: ``mavros/local_position/odom`` (nav_msgs/Odometry)
and the fix source (``mavros/global_position/raw/fix``, sensor_msgs/NavSatFix, or
``mavros/gpsstatus/gps1/raw``, mavros_msgs/GPSRAW) best-effort (rclcpp's SensorDataQoS);
``mavros/state`` and ``mavros/extended_state`` reliable and transient-local. Out: state/nav,
observations and vehicle_status, and before each of them on source_samples
(ghost_interfaces/SourceSamples) the MAVROS samples it was made from, named by topic and
``header.stamp`` (SPEC 5 v1.3).

A thin adapter: each message goes through ``ghost_mavros.bridge`` (the state) over
``ghost_mavros.rules`` (the rules), and what it returns is published. When MAVROS states no
covariance (all zeros: ArduPilot never sends LOCAL_POSITION_NED_COV) the bridge says once,
naming MAVROS and the autopilot, why every belief is judged UNKNOWN; and again if the
autopilot it names changes. Drops are counted per reason, logged at the first and every 100th.

mavros_msgs is imported when the node starts, not with this module, so that the parameter page
renders without it. See docs/integration.md, "MAVROS (ArduPilot or PX4 over MAVLink)".
"""

from collections import Counter
from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy
from sensor_msgs.msg import NavSatFix

from ghost_core.graph import relative_topic, SOURCE_SAMPLES_TOPIC
from ghost_interfaces.msg import SourceSamples
from ghost_interfaces.msg import VehicleStatus as GhostVehicleStatus
from ghost_mavros import bridge, rules
from ghost_mavros.node_parameters import PARAMETERS
from ghost_nodes.convert import from_msg_dict
from ghost_nodes.node_base import GhostNode, run
from ghost_nodes.qos import GHOST_QOS
from ghost_px4.bridge import Dropped, Result

__all__ = ['MAVROS_SENSOR_QOS', 'MAVROS_STATE_QOS', 'MavrosBridgeNode', 'main']

#: MAVROS's sensor topics: rclcpp::SensorDataQoS (best-effort, volatile, keep-last 5).
MAVROS_SENSOR_QOS = QoSProfile(reliability=QoSReliabilityPolicy.BEST_EFFORT,
                               durability=QoSDurabilityPolicy.VOLATILE,
                               history=QoSHistoryPolicy.KEEP_LAST, depth=5)
#: /mavros/state and /mavros/extended_state: MAVROS's sys_status plugin publishes them with
#: rclcpp::QoS(10).transient_local() (reliable, transient-local, keep-last 10); read alike, so
#: the bridge has the state in force when it starts.
MAVROS_STATE_QOS = QoSProfile(reliability=QoSReliabilityPolicy.RELIABLE,
                              durability=QoSDurabilityPolicy.TRANSIENT_LOCAL,
                              history=QoSHistoryPolicy.KEEP_LAST, depth=10)
#: Drop counts are logged at the first of a reason and then every this many.
_WARN_EVERY = 100


class MavrosBridgeNode(GhostNode):
    """Publishes MAVROS's belief, fixes and state as Ghost's inputs, naming their samples."""

    def __init__(self, **options: Any) -> None:
        super().__init__('mavros_bridge', PARAMETERS['mavros_bridge'], **options)
        from mavros_msgs.msg import ExtendedState, GPSRAW, State

        config = bridge.MavrosConfig.from_parameters(
            {spec.name: self.param(spec.name) for spec in PARAMETERS['mavros_bridge']})
        self._bridge = bridge.MavrosBridge(config)
        self.dropped: Counter[str] = Counter()
        #: The covariance reasons logged, so each is said once.
        self._said: set[str] = set()
        self._state: tuple[bool, bool, str] | None = None
        self._outputs = {
            'state/nav': self.create_graph_publisher(Odometry, 'state/nav', GHOST_QOS),
            'observations': self.create_graph_publisher(PoseWithCovarianceStamped,
                                                        'observations', GHOST_QOS),
            'vehicle_status': self.create_graph_publisher(GhostVehicleStatus, 'vehicle_status',
                                                          GHOST_QOS),
        }
        self._sources = self.create_graph_publisher(
            SourceSamples, relative_topic(SOURCE_SAMPLES_TOPIC), GHOST_QOS)
        self._resolved = {name: self.resolve_topic_name(name) for name in self._outputs}
        inputs = bridge.IN_TOPICS
        self._input_topics = {method: self.resolve_topic_name(topic)
                              for method, topic in inputs.items()}
        fix_type = NavSatFix if config.fix_source == 'navsat' else GPSRAW
        for method, kind, callback, qos in (
                ('odometry', Odometry, self._on_odometry, MAVROS_SENSOR_QOS),
                (config.fix_source, fix_type, self._on_fix, MAVROS_SENSOR_QOS),
                ('state', State, self._on_state, MAVROS_STATE_QOS),
                ('extended_state', ExtendedState, self._on_extended_state, MAVROS_STATE_QOS)):
            self.create_subscription(kind, inputs[method], callback, qos)
        fixes = bridge.fixes_note(config, self._input_topics[config.fix_source])
        self.get_logger().info(f'belief from {self._input_topics["odometry"]} (ENU/FLU as '
                               f'MAVROS states it); {fixes}')

    # --- inputs (the rules: ghost_mavros.bridge) ---

    def _on_odometry(self, msg: Any) -> None:
        reason = rules.covariance_reason(msg.pose.covariance, msg.twist.covariance,
                                         self._bridge.autopilot)
        if reason is not None and reason not in self._said:
            self._said.add(reason)
            self.get_logger().warning(reason)
        self._publish(self._bridge.odometry(msg))

    def _on_fix(self, msg: Any) -> None:
        self._publish(self._bridge.fix(self._bridge.config.fix_source, msg))

    def _on_state(self, msg: Any) -> None:
        self._bridge.state(msg)
        state = (bool(msg.connected), bool(msg.armed), str(msg.mode))
        if state != self._state:
            self._state = state
            self.get_logger().info(f'mavros/state: connected={state[0]} armed={state[1]} '
                                   f'mode={state[2]!r} (autopilot: '
                                   f'{self._bridge.autopilot or "not named yet"})')

    def _on_extended_state(self, msg: Any) -> None:
        self._bridge.extended_state(msg)

    # --- outputs ---

    def _publish(self, result: Result) -> None:
        for item in result:
            if isinstance(item, Dropped):
                self._drop(item.what, item.reason)
                continue
            publisher = self._outputs[item.topic]
            # Its sources first, so that a reader has them when the output comes.
            sources = bridge.source_samples_message(item, self._resolved[item.topic],
                                                    self._input_topics)
            self._sources.publish(from_msg_dict(SourceSamples, sources))
            if item.status is not None:
                self.publish_contract(publisher, item.status)
                continue
            publisher.publish(from_msg_dict(publisher.msg_type, item.message))  # type: ignore[attr-defined]

    def _drop(self, what: str, reason: str) -> None:
        key = f'{what}: {reason}'
        self.dropped[key] += 1
        count = self.dropped[key]
        if count == 1 or count % _WARN_EVERY == 0:
            self.get_logger().warning(f'dropped {what} #{count}: {reason}')


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``mavros_bridge`` executable."""
    run(MavrosBridgeNode, args)
