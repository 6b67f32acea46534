"""PX4 bridge node: PX4's uXRCE-DDS topics (px4_msgs) in, Ghost's inputs out.

Out: state/nav, observations and vehicle_status (the flight and mission status of PX4's
vehicle_status, vehicle_land_detected and mission_result: ghost_px4.status; published before a
belief, stamped with its stamp, on a change and at least once a second), and before each of
them on source_samples (ghost_interfaces/SourceSamples, reliable) the PX4 samples it was made
from: their fully qualified topics and ``timestamp`` fields (SPEC 5 v1.3).

A thin adapter: each px4_msgs message goes through ``ghost_px4.bridge`` (the rules, and
the state they keep; the ULog importer's per-sample rules of ``ghost_px4.live`` over
``ghost_px4.convert``'s conventions), and what it returns is published. ``verify_all`` runs
the same rules over a bag's recorded fmu/out messages (ghost_verify.bridge_rederive).
See docs/integration.md, "PX4 over uXRCE-DDS: px4_bridge".

A belief PX4 flags invalid is published with that block marked invalid (SPEC §5), never
dropped: with source 'vehicle_odometry' the flags are those of the vehicle_local_position of
the same EKF2 cycle (stamp within ``max_attitude_age_s``). Beliefs published with a block
marked invalid are counted per reason and logged like drops.

``VehicleLocalPosition.tilt_var``/``heading_var`` (px4_msgs 1.15+) are read with ``getattr``
and a default: with an older px4_msgs that lacks them the orientation uncertainty comes from
vehicle_odometry's ``orientation_variance`` instead.

px4_msgs is imported when the node starts, not with this module, so that the parameter page
(``ghost.param_docs``) renders without a PX4 workspace.
"""

from collections import Counter
from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry

from ghost_core.graph import relative_topic, SOURCE_SAMPLES_TOPIC
from ghost_interfaces.msg import SourceSamples
from ghost_interfaces.msg import VehicleStatus as GhostVehicleStatus
from ghost_nodes.convert import from_msg_dict
from ghost_nodes.node_base import (
    GhostNode,
    run,
)
from ghost_nodes.qos import GHOST_QOS, PX4_QOS
from ghost_px4 import bridge, live
from ghost_px4 import convert as px4
from ghost_px4.node_parameters import PARAMETERS

__all__ = ['Px4BridgeNode', 'main']


#: Drop and invalid-block counts are logged at the first of a reason and then every this many.
_WARN_EVERY = 100


class Px4BridgeNode(GhostNode):
    """Converts PX4's EKF2 output and GNSS fixes to nav_msgs/Odometry and fixes in its frame."""

    def __init__(self, **options: Any) -> None:
        super().__init__('px4_bridge', PARAMETERS['px4_bridge'], **options)
        from px4_msgs.msg import (
            MissionResult,
            SensorGps,
            VehicleLandDetected,
            VehicleLocalPosition,
            VehicleOdometry,
            VehicleStatus,
        )

        config = bridge.BridgeConfig.from_parameters(
            {spec.name: self.param(spec.name) for spec in PARAMETERS['px4_bridge']})
        self._bridge = bridge.Px4Bridge(config)
        self._status: tuple[int, int, bool] | None = None
        self._plan: tuple[bool, bool, bool] | None = None
        self.dropped: Counter[str] = Counter()
        #: Beliefs published with a block marked invalid, per reason.
        self.invalid: Counter[str] = Counter()
        #: Beliefs published per source of their orientation uncertainty ('' for none).
        self.orientation_sources: Counter[str] = Counter()
        self._outputs = {
            'state/nav': self.create_graph_publisher(Odometry, 'state/nav', GHOST_QOS),
            'observations': self.create_graph_publisher(PoseWithCovarianceStamped,
                                                        'observations', GHOST_QOS),
            'vehicle_status': self.create_graph_publisher(GhostVehicleStatus, 'vehicle_status',
                                                          GHOST_QOS),
        }
        self._sources = self.create_graph_publisher(
            SourceSamples, relative_topic(SOURCE_SAMPLES_TOPIC), GHOST_QOS)
        #: Fully qualified names, as SourceSamples names them.
        self._resolved = {name: self.resolve_topic_name(name) for name in self._outputs}
        inputs = bridge.IN_TOPICS
        self._input_topics = {method: self.resolve_topic_name(topic)
                              for method, topic in inputs.items()}
        for method, kind, callback in (
                ('odometry', VehicleOdometry, self._on_odometry),
                ('local_position', VehicleLocalPosition, self._on_local_position),
                ('gps', SensorGps, self._on_gps), ('status', VehicleStatus, self._on_status),
                ('land_detected', VehicleLandDetected, self._on_land_detected),
                ('mission_result', MissionResult, self._on_mission_result)):
            self.create_subscription(kind, inputs[method], callback, PX4_QOS)
        # HeightReference.describe() speaks of a log's parameters; say what this node was told.
        height = (self._bridge.height.describe() if config.ekf2_hgt_ref >= 0 else
                  "ekf2_hgt_ref=-1 (unknown): the fix's vertical axis is marked not measured "
                  f'(variance {px4.UNMEASURED_VARIANCE_M2:g} m²)')
        self.get_logger().info(
            f'belief from fmu/out/{config.source}; fixes delayed {config.gps_delay_ns / 1e6:g} '
            'ms; '
            f'{height}')

    # --- inputs (the rules: ghost_px4.bridge) ---

    def _on_odometry(self, msg: Any) -> None:
        self._publish(self._bridge.odometry(msg))

    def _on_local_position(self, msg: Any) -> None:
        self._publish(self._bridge.local_position(msg))

    def _on_gps(self, msg: Any) -> None:
        self._publish(self._bridge.gps(msg))

    def _on_status(self, msg: Any) -> None:
        # Recorded in the decisions' context and logged; the agent does not judge them.
        self._bridge.status(msg)
        status = (int(msg.arming_state), int(msg.nav_state), bool(msg.failsafe))
        if status != self._status:
            self._status = status
            self.get_logger().info(f'vehicle_status: arming_state={status[0]} '
                                   f'nav_state={status[1]} failsafe={status[2]}')

    def _on_land_detected(self, msg: Any) -> None:
        self._bridge.land_detected(msg)

    def _on_mission_result(self, msg: Any) -> None:
        self._bridge.mission_result(msg)
        plan = (bool(msg.valid), bool(msg.finished), bool(msg.failure))
        if plan != self._plan:
            self._plan = plan
            self.get_logger().info(f'mission_result: valid={plan[0]} finished={plan[1]} '
                                   f'failure={plan[2]} (item {msg.seq_current} of '
                                   f'{msg.seq_total})')

    # --- outputs ---

    def _publish(self, result: bridge.Result) -> None:
        for item in result:
            if isinstance(item, bridge.Dropped):
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
            if item.belief is not None:
                self._count(item.belief)

    def _count(self, belief: live.Belief) -> None:
        """Count what a published belief says it does not know; log the first and every 100th."""
        for reason in belief.invalid:
            self.invalid[reason] += 1
            count = self.invalid[reason]
            if count == 1 or count % _WARN_EVERY == 0:
                self.get_logger().warning(
                    f'published belief #{count} with a block marked invalid (judged UNKNOWN): '
                    f'{reason}')
        source = belief.orientation_source or ''
        self.orientation_sources[source] += 1
        if self.orientation_sources[source] == 1:
            if source:
                self.get_logger().info(f'orientation uncertainty from {source}')
            else:
                self.get_logger().warning(
                    'no orientation uncertainty stated: the orientation block is left all '
                    'zeros (judged UNKNOWN)')

    def _drop(self, what: str, reason: str) -> None:
        key = f'{what}: {reason}'
        self.dropped[key] += 1
        count = self.dropped[key]
        if count == 1 or count % _WARN_EVERY == 0:
            self.get_logger().warning(f'dropped {what} #{count}: {reason}')


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``px4_bridge`` executable."""
    run(Px4BridgeNode, args)
