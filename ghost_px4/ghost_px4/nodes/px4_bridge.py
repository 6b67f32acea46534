"""PX4 bridge node: PX4's uXRCE-DDS topics (px4_msgs) in, Ghost's inputs out.

Out: state/nav, observations and vehicle_status (the flight and mission status of PX4's
vehicle_status and, when px4_msgs has the type, vehicle_land_detected: ghost_px4.status;
published before a belief, stamped with its stamp, on a change and at least once a second).

A thin adapter: each px4_msgs message is read into plain numbers, converted by
``ghost_px4.live`` (the ULog importer's rules over ``ghost_px4.convert``'s
conventions) and published. See docs/integration.md, "PX4 over uXRCE-DDS: px4_bridge".

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
import math
from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry

from ghost_interfaces.msg import VehicleStatus as GhostVehicleStatus
from ghost_nodes.node_base import (
    GhostNode,
    run,
)
from ghost_nodes.qos import GHOST_QOS, PX4_QOS
from ghost_px4 import convert as px4
from ghost_px4 import live
from ghost_px4.errors import Px4SampleRejected
from ghost_px4.node_parameters import PARAMETERS
from ghost_px4.status import Px4Status, StatusReporter

__all__ = ['Px4BridgeNode', 'main']


#: Drop and invalid-block counts are logged at the first of a reason and then every this many.
_WARN_EVERY = 100


def _time(stamp_ns: int) -> tuple[int, int]:
    return stamp_ns // 1_000_000_000, stamp_ns % 1_000_000_000


class Px4BridgeNode(GhostNode):
    """Converts PX4's EKF2 output and GNSS fixes to nav_msgs/Odometry and fixes in its frame."""

    def __init__(self, **options: Any) -> None:
        super().__init__('px4_bridge', PARAMETERS['px4_bridge'], **options)
        import px4_msgs.msg
        from px4_msgs.msg import SensorGps, VehicleLocalPosition, VehicleOdometry, VehicleStatus

        self._source = self.param('source')
        self._delay_ns = int(round(self.param('gps_delay_ms') * 1e6))
        code = self.param('ekf2_hgt_ref')
        self._height = px4.height_reference({} if code < 0 else {'EKF2_HGT_REF': float(code)})
        self._max_attitude_age_ns = int(round(self.param('max_attitude_age_s') * 1e9))
        self._origin: tuple[px4.GeoOrigin, bool] | None = None
        self._attitude: live.Attitude | None = None
        self._validity: live.Validity | None = None
        self._last_belief_ns: int | None = None
        self._last_fix_ns: int | None = None
        self._status: tuple[int, int, bool] | None = None
        self._vehicle = Px4Status()
        self._reporter = StatusReporter()
        self.dropped: Counter[str] = Counter()
        #: Beliefs published with a block marked invalid, per reason.
        self.invalid: Counter[str] = Counter()
        #: Beliefs published per source of their orientation uncertainty ('' for none).
        self.orientation_sources: Counter[str] = Counter()
        self._nav_pub = self.create_graph_publisher(Odometry, 'state/nav', GHOST_QOS)
        self._obs_pub = self.create_graph_publisher(PoseWithCovarianceStamped, 'observations',
                                                    GHOST_QOS)
        self._status_pub = self.create_graph_publisher(GhostVehicleStatus, 'vehicle_status',
                                                       GHOST_QOS)
        self.create_subscription(VehicleOdometry, 'fmu/out/vehicle_odometry',
                                 self._on_odometry, PX4_QOS)
        self.create_subscription(VehicleLocalPosition, 'fmu/out/vehicle_local_position',
                                 self._on_local_position, PX4_QOS)
        self.create_subscription(SensorGps, 'fmu/out/vehicle_gps_position', self._on_gps,
                                 PX4_QOS)
        self.create_subscription(VehicleStatus, 'fmu/out/vehicle_status', self._on_status,
                                 PX4_QOS)
        # Not in every px4_msgs subset: without it the flight status says ARMED, not whether
        # the vehicle flies (ghost_px4.status).
        land_detected = getattr(px4_msgs.msg, 'VehicleLandDetected', None)
        if land_detected is not None:
            self.create_subscription(land_detected, 'fmu/out/vehicle_land_detected',
                                     self._on_land_detected, PX4_QOS)
        # HeightReference.describe() speaks of a log's parameters; say what this node was told.
        height = (self._height.describe() if code >= 0 else
                  "ekf2_hgt_ref=-1 (unknown): the fix's vertical axis is marked not measured "
                  f'(variance {px4.UNMEASURED_VARIANCE_M2:g} m²)')
        self.get_logger().info(
            f'belief from fmu/out/{self._source}; fixes delayed {self._delay_ns / 1e6:g} ms; '
            f'{height}')

    # --- inputs ---

    def _on_odometry(self, msg: Any) -> None:
        stamp = live.belief_time_ns(msg.timestamp, msg.timestamp_sample)
        if self._source == 'vehicle_odometry':
            position_valid, velocity_valid = (
                (True, True) if self._validity is None
                else self._validity.at(stamp, self._max_attitude_age_ns))
            try:
                belief = live.vehicle_odometry_sample(
                    position=msg.position, q=msg.q, velocity=msg.velocity,
                    angular_velocity=msg.angular_velocity,
                    position_variance=msg.position_variance,
                    orientation_variance=msg.orientation_variance,
                    velocity_variance=msg.velocity_variance, pose_frame=msg.pose_frame,
                    velocity_frame=msg.velocity_frame, position_valid=position_valid,
                    velocity_valid=velocity_valid)
            except Px4SampleRejected as err:
                self._drop('belief', str(err))
                return
            self._publish_belief(stamp, belief)
            return
        q = tuple(float(v) for v in msg.q)
        rates = tuple(float(v) for v in msg.angular_velocity)
        variance = tuple(float(v) for v in msg.orientation_variance)
        try:
            px4.px4_quaternion_to_ros(q)
        except ValueError:
            return  # not an attitude: the next local-position sample finds none and says so
        self._attitude = live.Attitude(
            stamp, (q[0], q[1], q[2], q[3]),
            (rates[0], rates[1], rates[2]) if all(map(math.isfinite, rates)) else (0.0, 0.0, 0.0),
            (variance[0], variance[1], variance[2]))

    def _on_local_position(self, msg: Any) -> None:
        self._origin = live.origin_of(msg.xy_global, msg.z_global, msg.ref_lat,
                                          msg.ref_lon, msg.ref_alt)
        stamp = live.belief_time_ns(msg.timestamp, msg.timestamp_sample)
        if self._source != 'vehicle_local_position':
            self._validity = live.Validity(stamp, bool(msg.xy_valid and msg.z_valid),
                                               bool(msg.v_xy_valid and msg.v_z_valid))
            return
        try:
            belief = live.local_position_odometry(
                x=msg.x, y=msg.y, z=msg.z, vx=msg.vx, vy=msg.vy, vz=msg.vz, eph=msg.eph,
                epv=msg.epv, evh=msg.evh, evv=msg.evv, xy_valid=msg.xy_valid,
                z_valid=msg.z_valid, v_xy_valid=msg.v_xy_valid, v_z_valid=msg.v_z_valid,
                stamp_ns=stamp, attitude=self._attitude,
                max_attitude_age_ns=self._max_attitude_age_ns,
                tilt_var=getattr(msg, 'tilt_var', None),
                heading_var=getattr(msg, 'heading_var', None))
        except Px4SampleRejected as err:
            self._drop('belief', str(err))
            return
        self._publish_belief(stamp, belief)

    def _on_gps(self, msg: Any) -> None:
        try:
            fix = live.fix_observation(
                fix_type=msg.fix_type, lat_deg=msg.latitude_deg, lon_deg=msg.longitude_deg,
                alt_m=msg.altitude_msl_m, eph=msg.eph, epv=msg.epv,
                sample_ns=live.fix_sample_time_ns(msg.timestamp, msg.timestamp_sample),
                delay_ns=self._delay_ns, origin=self._origin, height=self._height)
        except Px4SampleRejected as err:
            self._drop('fix', str(err))
            return
        if self._last_fix_ns is not None and fix.stamp_ns <= self._last_fix_ns:
            self._drop('fix', 'timestamp not strictly increasing')
            return
        self._last_fix_ns = fix.stamp_ns
        out = PoseWithCovarianceStamped()
        out.header.stamp.sec, out.header.stamp.nanosec = _time(fix.stamp_ns)
        out.header.frame_id = live.FRAME_ID
        p = out.pose.pose.position
        p.x, p.y, p.z = fix.position
        out.pose.pose.orientation.w = 1.0
        out.pose.covariance = list(fix.covariance)
        self._obs_pub.publish(out)

    def _on_status(self, msg: Any) -> None:
        # Recorded in the decisions' context and logged; the agent does not judge them.
        self._vehicle.arming_state = int(msg.arming_state)
        self._vehicle.nav_state = int(msg.nav_state)
        status = (int(msg.arming_state), int(msg.nav_state), bool(msg.failsafe))
        if status != self._status:
            self._status = status
            self.get_logger().info(f'vehicle_status: arming_state={status[0]} '
                                   f'nav_state={status[1]} failsafe={status[2]}')

    def _on_land_detected(self, msg: Any) -> None:
        self._vehicle.landed = bool(msg.landed)

    # --- outputs ---

    def _publish_belief(self, stamp_ns: int, belief: live.Belief) -> None:
        if self._last_belief_ns is not None and stamp_ns <= self._last_belief_ns:
            self._drop('belief', 'timestamp not strictly increasing')
            return
        self._last_belief_ns = stamp_ns
        # The status first: in force from this belief's cycle on.
        status = self._vehicle.at(stamp_ns, live.FRAME_ID)
        if self._reporter.due(status):
            self.publish_contract(self._status_pub, status)
        ros = belief.odometry
        out = Odometry()
        out.header.stamp.sec, out.header.stamp.nanosec = _time(stamp_ns)
        out.header.frame_id = live.FRAME_ID
        out.child_frame_id = live.CHILD_FRAME_ID
        pose = out.pose.pose
        pose.position.x, pose.position.y, pose.position.z = ros.position
        o = pose.orientation
        o.x, o.y, o.z, o.w = ros.orientation_xyzw
        out.pose.covariance = list(ros.pose_covariance)
        twist = out.twist.twist
        twist.linear.x, twist.linear.y, twist.linear.z = ros.linear_velocity
        twist.angular.x, twist.angular.y, twist.angular.z = ros.angular_velocity
        out.twist.covariance = list(ros.twist_covariance)
        self._nav_pub.publish(out)
        self._count(belief)

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
