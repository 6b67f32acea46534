"""ArduPilot bridge node: ArduPilot's AP_DDS topics in, Ghost's inputs out.

Out: state/nav, observations and vehicle_status, and before each of them on source_samples
(ghost_interfaces/SourceSamples, reliable) the AP_DDS samples it was made from, by topic and
``header.stamp`` (SPEC 5 v1.3). The rules, and the state they keep, are
``ghost_ardupilot.bridge``'s; this node subscribes with AP_DDS's QoS (best-effort, volatile,
depth 5; /ap/status reliable, transient-local, depth 1) and publishes what they return.

Without /ap/odometry/filtered (released AP_DDS firmware) the beliefs come from pose and twist
with no covariance: the node says once, as a warning, why Ghost then abstains
(``bridge.NO_COVARIANCE``), and again when odometry arrives. See docs/integration.md,
"ArduPilot over AP_DDS: ap_bridge".

ardupilot_msgs, sensor_msgs and geographic_msgs are imported when the node starts, not with
this module, so that the parameter page renders without them.
"""

from collections import Counter
from typing import Any

from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped, TwistStamped
from nav_msgs.msg import Odometry

from ghost_ardupilot import bridge
from ghost_ardupilot.node_parameters import PARAMETERS
from ghost_core.graph import relative_topic, SOURCE_SAMPLES_TOPIC
from ghost_interfaces.msg import SourceSamples
from ghost_interfaces.msg import VehicleStatus as GhostVehicleStatus
from ghost_nodes.convert import from_msg_dict
from ghost_nodes.node_base import GhostNode, run
from ghost_nodes.qos import AP_QOS, AP_STATUS_QOS, GHOST_QOS
from ghost_px4.bridge import Dropped

__all__ = ['ApBridgeNode', 'main']

#: Drop counts are logged at the first of a reason and then every this many.
_WARN_EVERY = 100


class ApBridgeNode(GhostNode):
    """Converts AP_DDS's pose/odometry, fixes and status to Ghost's inputs."""

    def __init__(self, **options: Any) -> None:
        super().__init__('ap_bridge', PARAMETERS['ap_bridge'], **options)
        from ardupilot_msgs.msg import Status
        from geographic_msgs.msg import GeoPointStamped
        from sensor_msgs.msg import NavSatFix

        config = bridge.BridgeConfig.from_parameters(
            {spec.name: self.param(spec.name) for spec in PARAMETERS['ap_bridge']})
        self._bridge = bridge.ApBridge(config)
        self.dropped: Counter[str] = Counter()
        self._said_abstains = False
        self._status: tuple[bool, int, bool] | None = None
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
        self._input_topics = {method: self.resolve_topic_name(topic)
                              for method, topic in bridge.IN_TOPICS.items()}
        for method, kind in (('odometry', Odometry), ('pose', PoseStamped),
                             ('twist', TwistStamped), ('navsat', NavSatFix),
                             ('origin', GeoPointStamped), ('status', Status)):
            self.create_subscription(kind, bridge.IN_TOPICS[method], self._callback(method),
                                     AP_STATUS_QOS if method == 'status' else AP_QOS)
        self.get_logger().info(
            f'beliefs from source {config.source!r}; fixes about the EKF origin '
            f'(/ap/gps_global_origin/filtered), delayed {config.gps_delay_ns / 1e6:g} ms, '
            f'vertical axis {"compared (GNSS height)" if config.gnss_height else "not measured"}')

    def _callback(self, method: str) -> Any:
        rule = getattr(self._bridge, method)

        def on_message(msg: Any) -> None:
            if method == 'status':
                self._log_status(msg)
            self._publish(rule(msg))
        return on_message

    def _log_status(self, msg: Any) -> None:
        status = (bool(msg.armed), int(msg.mode), bool(msg.flying))
        if status != self._status:
            self._status = status
            self.get_logger().info(f'/ap/status: armed={status[0]} mode={status[1]} '
                                   f'flying={status[2]} failsafe={list(msg.failsafe)}')

    def _publish(self, result: bridge.Result) -> None:
        for item in result:
            if isinstance(item, Dropped):
                self._drop(item.what, item.reason)
                continue
            publisher = self._outputs[item.topic]
            sources = bridge.source_samples_message(item, self._resolved[item.topic],
                                                    self._input_topics)
            self._sources.publish(from_msg_dict(SourceSamples, sources))
            if item.status is not None:
                self.publish_contract(publisher, item.status)
                continue
            publisher.publish(from_msg_dict(publisher.msg_type, item.message))  # type: ignore[attr-defined]
            if item.topic == 'state/nav':
                self._say_source(item.sources[0][0])

    def _say_source(self, method: str) -> None:
        """Say once why Ghost abstains on pose beliefs, and once when odometry takes over."""
        if method == 'pose' and not self._said_abstains:
            self._said_abstains = True
            self.get_logger().warning(bridge.NO_COVARIANCE)
        elif method == 'odometry' and self._said_abstains:
            self._said_abstains = False
            self.get_logger().info('beliefs from /ap/odometry/filtered (the EKF variances) '
                                   'from now on')

    def _drop(self, what: str, reason: str) -> None:
        key = f'{what}: {reason}'
        self.dropped[key] += 1
        count = self.dropped[key]
        if count == 1 or count % _WARN_EVERY == 0:
            self.get_logger().warning(f'dropped {what} #{count}: {reason}')


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``ap_bridge`` executable."""
    run(ApBridgeNode, args)
