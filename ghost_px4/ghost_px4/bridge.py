"""The PX4 bridge's rules, stateful and pure: px4_msgs messages in, Ghost's input messages out.

One home for what ``px4_bridge`` does with each message it receives, for the node (which
publishes what this returns) and for the auditor (``ghost_verify.bridge_rederive``, which runs
it again over the /fmu/out messages a bag recorded and compares its outputs with the recorded
/state/nav, /observations and /vehicle_status). A message is read by attribute, so an rclpy
px4_msgs message and one decoded from a bag (mcap_ros2) are read alike.

Per message, in the order received:

- ``vehicle_odometry``: with source 'vehicle_odometry', a belief (``live.vehicle_odometry_sample``;
  its blocks marked by the flags of the vehicle_local_position of the same EKF2 cycle); with
  source 'vehicle_local_position', the attitude the next local-position belief takes.
- ``vehicle_local_position``: the EKF origin (for the fixes); with source
  'vehicle_local_position', a belief (``live.local_position_odometry``), else the validity
  flags for the odometry beliefs.
- ``vehicle_gps_position``: a fix (``live.fix_observation``), stamped at its sample time minus
  the GNSS delay; dropped unless its stamp is after the previous fix's.
- ``vehicle_status`` / ``vehicle_land_detected``: the vehicle's flight and mission status
  (``ghost_px4.status``), published before a belief, stamped with its stamp, when
  ``StatusReporter`` says so (the first, a change, or once a second of belief time).

A belief whose stamp is not after the previous belief's is dropped. A sample the rules reject
is a ``Dropped`` output (the node counts and logs them). No rclpy or px4_msgs here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
from typing import Any

from ghost_core.contracts import VehicleStatus
from ghost_core.graph import PX4_OPTIONAL_OUT_TOPICS, PX4_OUT_TOPICS, relative_topic
from ghost_core.wire import to_msg_dict
from ghost_px4 import convert as px4
from ghost_px4 import live
from ghost_px4.errors import Px4SampleRejected
from ghost_px4.status import Px4Status, StatusReporter

__all__ = ['BRIDGE_CONFIG_KEY', 'BridgeConfig', 'Dropped', 'FixFrame', 'IN_TOPICS', 'Output',
           'Px4Bridge', 'Result', 'fix_message', 'odometry_message']

#: Where the recorder's run configuration (manifest.json's ``config``) holds the bridge's.
BRIDGE_CONFIG_KEY = 'px4_bridge'

#: The bridge's inputs (relative to its namespace) by the method that takes them.
IN_TOPICS: Mapping[str, str] = {
    method: relative_topic(f'/fmu/out/{name}') for method, name in (
        ('odometry', 'vehicle_odometry'), ('local_position', 'vehicle_local_position'),
        ('gps', 'vehicle_gps_position'), ('status', 'vehicle_status'),
        ('land_detected', 'vehicle_land_detected'))}
assert {f'/{topic}' for topic in IN_TOPICS.values()} == {*PX4_OUT_TOPICS,
                                                          *PX4_OPTIONAL_OUT_TOPICS}


@dataclass(frozen=True, slots=True)
class BridgeConfig:
    """The bridge's parameters (ghost_px4.node_parameters), in the units it works in."""

    source: str
    gps_delay_ns: int
    ekf2_hgt_ref: int
    max_attitude_age_ns: int

    def __post_init__(self) -> None:
        if self.source not in ('vehicle_odometry', 'vehicle_local_position'):
            raise ValueError(f'px4_bridge source {self.source!r} is not vehicle_odometry or '
                             'vehicle_local_position')
        if self.gps_delay_ns < 0 or self.max_attitude_age_ns < 0:
            raise ValueError(f'px4_bridge gps_delay_ns {self.gps_delay_ns} and '
                             f'max_attitude_age_ns {self.max_attitude_age_ns} must be >= 0')
        if not -1 <= self.ekf2_hgt_ref <= 3:
            raise ValueError(f'px4_bridge ekf2_hgt_ref {self.ekf2_hgt_ref} is not in -1..3')

    @classmethod
    def from_parameters(cls, params: Mapping[str, Any]) -> BridgeConfig:
        """From the node's parameter values (source, gps_delay_ms, ekf2_hgt_ref, ...)."""
        return cls(str(params['source']), int(round(float(params['gps_delay_ms']) * 1e6)),
                   int(params['ekf2_hgt_ref']),
                   int(round(float(params['max_attitude_age_s']) * 1e9)))

    def to_dict(self) -> dict[str, object]:
        """The form recorded in the run configuration (``from_dict`` reads it back)."""
        return {'source': self.source, 'gps_delay_ns': self.gps_delay_ns,
                'ekf2_hgt_ref': self.ekf2_hgt_ref,
                'max_attitude_age_ns': self.max_attitude_age_ns}

    @classmethod
    def from_dict(cls, document: object) -> BridgeConfig:
        """The form ``to_dict`` wrote, exactly; ValueError naming what is wrong."""
        if not isinstance(document, Mapping):
            raise ValueError(f'{BRIDGE_CONFIG_KEY} is not an object')
        expected = {'source': str, 'gps_delay_ns': int, 'ekf2_hgt_ref': int,
                    'max_attitude_age_ns': int}
        if set(document) != set(expected):
            raise ValueError(f'{BRIDGE_CONFIG_KEY} has keys {sorted(document)}, expected '
                             f'{sorted(expected)}')
        for key, kind in expected.items():
            value = document[key]
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ValueError(f'{BRIDGE_CONFIG_KEY}.{key} is {value!r}, not '
                                 f'{kind.__name__}')
        return cls(str(document['source']), int(document['gps_delay_ns']),
                   int(document['ekf2_hgt_ref']), int(document['max_attitude_age_ns']))


@dataclass(frozen=True, slots=True)
class Dropped:
    """A sample the bridge does not publish: ``what`` ('belief' or 'fix') and why."""

    what: str
    reason: str


@dataclass(frozen=True, slots=True)
class Output:
    """A message the bridge publishes: its topic, stamp and message dict (SPEC section 4).

    ``topic`` is relative: 'state/nav', 'observations' or 'vehicle_status'.

    ``belief`` is the belief a 'state/nav' message carries (the node counts what it says);
    ``status`` the contract a 'vehicle_status' message is the wire form of.
    """

    topic: str
    stamp_ns: int
    message: dict[str, Any]
    belief: live.Belief | None = None
    status: VehicleStatus | None = None


def _stamp(stamp_ns: int) -> dict[str, int]:
    return {'sec': stamp_ns // 1_000_000_000, 'nanosec': stamp_ns % 1_000_000_000}


def _xyz(v: tuple[float, float, float]) -> dict[str, float]:
    return {'x': float(v[0]), 'y': float(v[1]), 'z': float(v[2])}


def odometry_message(stamp_ns: int, belief: live.Belief) -> dict[str, Any]:
    """The nav_msgs/Odometry of a belief, as a message dict."""
    ros = belief.odometry
    x, y, z, w = ros.orientation_xyzw
    return {
        'header': {'stamp': _stamp(stamp_ns), 'frame_id': live.FRAME_ID},
        'child_frame_id': live.CHILD_FRAME_ID,
        'pose': {'pose': {'position': _xyz(ros.position),
                          'orientation': {'x': float(x), 'y': float(y), 'z': float(z),
                                          'w': float(w)}},
                 'covariance': [float(v) for v in ros.pose_covariance]},
        'twist': {'twist': {'linear': _xyz(ros.linear_velocity),
                            'angular': _xyz(ros.angular_velocity)},
                  'covariance': [float(v) for v in ros.twist_covariance]},
    }


def fix_message(fix: live.Fix) -> dict[str, Any]:
    """The geometry_msgs/PoseWithCovarianceStamped of a fix, as a message dict."""
    return {
        'header': {'stamp': _stamp(fix.stamp_ns), 'frame_id': live.FRAME_ID},
        'pose': {'pose': {'position': _xyz(fix.position),
                          'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}},
                 'covariance': [float(v) for v in fix.covariance]},
    }


#: What one received message gives: messages to publish, in order, or a drop.
Result = tuple[Output | Dropped, ...]
#: The frame a fix is stated in: the EKF's geodetic origin (and whether PX4 flags it valid;
#: None before PX4 gives one) and the height reference.
FixFrame = tuple[tuple[px4.GeoOrigin, bool] | None, px4.HeightReference]


class Px4Bridge:
    """The bridge's state, and its rule for each message it receives (see the module)."""

    def __init__(self, config: BridgeConfig) -> None:
        self.config = config
        self._height = px4.height_reference(
            {} if config.ekf2_hgt_ref < 0 else {'EKF2_HGT_REF': float(config.ekf2_hgt_ref)})
        self._origin: tuple[px4.GeoOrigin, bool] | None = None
        self._attitude: live.Attitude | None = None
        self._validity: live.Validity | None = None
        self._last_belief_ns: int | None = None
        self._last_fix_ns: int | None = None
        self._vehicle = Px4Status()
        self._reporter = StatusReporter()

    @property
    def height(self) -> px4.HeightReference:
        """The height reference the fixes are stated with."""
        return self._height

    @property
    def validity(self) -> live.Validity | None:
        """The last validity flags vehicle_local_position gave (None before any)."""
        return self._validity

    def odometry(self, msg: Any) -> Result:
        """A vehicle_odometry: a belief (source vehicle_odometry) or the attitude."""
        stamp = live.belief_time_ns(msg.timestamp, msg.timestamp_sample)
        if self.config.source == 'vehicle_odometry':
            belief = self.odometry_belief(msg, self._validity)
            if isinstance(belief, Dropped):
                return (belief,)
            return self._belief(stamp, belief)
        q = tuple(float(v) for v in msg.q)
        rates = tuple(float(v) for v in msg.angular_velocity)
        variance = tuple(float(v) for v in msg.orientation_variance)
        try:
            px4.px4_quaternion_to_ros(q)
        except ValueError:
            return ()  # not an attitude: the next local-position sample finds none and says so
        self._attitude = live.Attitude(
            stamp, (q[0], q[1], q[2], q[3]),
            (rates[0], rates[1], rates[2]) if all(map(math.isfinite, rates)) else (0.0, 0.0, 0.0),
            (variance[0], variance[1], variance[2]))
        return ()

    def local_position(self, msg: Any) -> Result:
        """A vehicle_local_position: the origin, and a belief or the validity flags."""
        self._origin = live.origin_of(msg.xy_global, msg.z_global, msg.ref_lat, msg.ref_lon,
                                      msg.ref_alt)
        stamp = live.belief_time_ns(msg.timestamp, msg.timestamp_sample)
        if self.config.source != 'vehicle_local_position':
            self._validity = live.Validity(stamp, bool(msg.xy_valid and msg.z_valid),
                                           bool(msg.v_xy_valid and msg.v_z_valid))
            return ()
        try:
            belief = live.local_position_odometry(
                x=msg.x, y=msg.y, z=msg.z, vx=msg.vx, vy=msg.vy, vz=msg.vz, eph=msg.eph,
                epv=msg.epv, evh=msg.evh, evv=msg.evv, xy_valid=msg.xy_valid,
                z_valid=msg.z_valid, v_xy_valid=msg.v_xy_valid, v_z_valid=msg.v_z_valid,
                stamp_ns=stamp, attitude=self._attitude,
                max_attitude_age_ns=self.config.max_attitude_age_ns,
                tilt_var=getattr(msg, 'tilt_var', None),
                heading_var=getattr(msg, 'heading_var', None))
        except Px4SampleRejected as err:
            return (Dropped('belief', str(err)),)
        return self._belief(stamp, belief)

    def odometry_belief(self, msg: Any,
                        validity: live.Validity | None) -> live.Belief | Dropped:
        """A vehicle_odometry as a belief with `validity`'s flags, or why not; no state."""
        stamp = live.belief_time_ns(msg.timestamp, msg.timestamp_sample)
        position_valid, velocity_valid = (
            (True, True) if validity is None
            else validity.at(stamp, self.config.max_attitude_age_ns))
        try:
            return live.vehicle_odometry_sample(
                position=msg.position, q=msg.q, velocity=msg.velocity,
                angular_velocity=msg.angular_velocity, position_variance=msg.position_variance,
                orientation_variance=msg.orientation_variance,
                velocity_variance=msg.velocity_variance, pose_frame=msg.pose_frame,
                velocity_frame=msg.velocity_frame, position_valid=position_valid,
                velocity_valid=velocity_valid)
        except Px4SampleRejected as err:
            return Dropped('belief', str(err))

    @property
    def fix_frame(self) -> FixFrame:
        """What a fix is stated in: the EKF's origin (None before PX4 gives one), the height."""
        return (self._origin, self._height)

    def gps(self, msg: Any) -> Result:
        """A SensorGps: a fix in the EKF's local frame, or a drop."""
        out = self.fix_of(msg)
        if isinstance(out, Dropped):
            return (out,)
        if self._last_fix_ns is not None and out.stamp_ns <= self._last_fix_ns:
            return (Dropped('fix', 'timestamp not strictly increasing'),)
        self._last_fix_ns = out.stamp_ns
        return (out,)

    def fix_of(self, msg: Any, frame: FixFrame | None = None) -> Output | Dropped:
        """A SensorGps as a fix in `frame` (default the one in force), or why not; no state."""
        origin, height = self.fix_frame if frame is None else frame
        try:
            fix = live.fix_observation(
                fix_type=msg.fix_type, lat_deg=msg.latitude_deg, lon_deg=msg.longitude_deg,
                alt_m=msg.altitude_msl_m, eph=msg.eph, epv=msg.epv,
                sample_ns=live.fix_sample_time_ns(msg.timestamp, msg.timestamp_sample),
                delay_ns=self.config.gps_delay_ns, origin=origin, height=height)
        except Px4SampleRejected as err:
            return Dropped('fix', str(err))
        return Output('observations', fix.stamp_ns, fix_message(fix))

    def status(self, msg: Any) -> Result:
        """A vehicle_status: the arming and navigation state in force (nothing published)."""
        self._vehicle.arming_state = int(msg.arming_state)
        self._vehicle.nav_state = int(msg.nav_state)
        return ()

    def land_detected(self, msg: Any) -> Result:
        """A vehicle_land_detected: whether the vehicle is landed (nothing published)."""
        self._vehicle.landed = bool(msg.landed)
        return ()

    def _belief(self, stamp_ns: int, belief: live.Belief) -> Result:
        if self._last_belief_ns is not None and stamp_ns <= self._last_belief_ns:
            return (Dropped('belief', 'timestamp not strictly increasing'),)
        self._last_belief_ns = stamp_ns
        # The status first: in force from this belief's cycle on.
        status: VehicleStatus = self._vehicle.at(stamp_ns, live.FRAME_ID)
        out: list[Output | Dropped] = []
        if self._reporter.due(status):
            out.append(Output('vehicle_status', stamp_ns, to_msg_dict(status), status=status))
        out.append(Output('state/nav', stamp_ns, odometry_message(stamp_ns, belief), belief))
        return tuple(out)
