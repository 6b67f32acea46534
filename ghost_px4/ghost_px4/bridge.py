"""The PX4 bridge's rules: px4_msgs messages in, Ghost's input messages and their sources out.

One home for what ``px4_bridge`` does with each message it receives, for the node (which
publishes what this returns) and for the auditor (``ghost_verify.bridge_rederive``, which
converts each recorded /state/nav, /observations and /vehicle_status again from exactly the
PX4 samples its /source_samples message names). A message is read by attribute, so an rclpy
px4_msgs message and one decoded from a bag (mcap_ros2) are read alike.

Each output is a function of a few PX4 samples (``belief_of``, ``fix_of``, ``status_of``), and
names them (``Output.sources``: the input method and the sample's ``timestamp``, SPEC 5
v1.3). ``Px4Bridge`` holds the latest sample of each kind it received and calls them:

- ``vehicle_odometry``: with source 'vehicle_odometry', a belief (``live.vehicle_odometry_sample``)
  from it and the latest vehicle_local_position (its validity flags, when within
  ``max_attitude_age_ns`` of the belief: the same EKF2 cycle); with source
  'vehicle_local_position', held as the attitude the next local-position belief takes (when its
  quaternion is one).
- ``vehicle_local_position``: held (the EKF origin for the fixes, the flags for the odometry
  beliefs); with source 'vehicle_local_position', a belief (``live.local_position_odometry``)
  from it and the attitude held.
- ``vehicle_gps_position``: a fix (``live.fix_observation``) in the frame of the latest
  vehicle_local_position, stamped at its sample time minus the GNSS delay; dropped unless its
  stamp is after the previous fix's.
- ``vehicle_status`` / ``vehicle_land_detected`` / ``mission_result``: held; the vehicle's
  flight and mission status (``ghost_px4.status``) is published before a belief, stamped with
  its stamp, when ``StatusReporter`` says so (the first, a change, or once a second of belief
  time), naming the belief's sample and the status samples held.

A belief whose stamp is not after the previous belief's is dropped. A sample the rules reject
is a ``Dropped`` output (the node counts and logs them). No rclpy or px4_msgs here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
from typing import Any

from ghost_core.contracts import VehicleStatus
from ghost_core.graph import PX4_OUT_TOPICS, relative_topic
from ghost_core.vehicle import MissionPlan
from ghost_core.wire import to_msg_dict
from ghost_px4 import convert as px4
from ghost_px4 import live
from ghost_px4.errors import Px4SampleRejected
from ghost_px4.status import Px4Status, StatusReporter

__all__ = ['BRIDGE_CONFIG_KEY', 'BridgeConfig', 'Dropped', 'IN_TOPICS', 'Output', 'Px4Bridge',
           'Result', 'SOURCE_STAMP_FIELD', 'Source', 'STATUS_METHODS', 'attitude_of',
           'belief_of', 'fix_message', 'fix_of', 'height_of', 'odometry_message',
           'source_samples_message', 'status_of']

#: Where the recorder's run configuration (manifest.json's ``config``) holds the bridge's.
BRIDGE_CONFIG_KEY = 'px4_bridge'

#: The bridge's inputs (relative to its namespace) by the method that takes them.
IN_TOPICS: Mapping[str, str] = {
    method: relative_topic(f'/fmu/out/{name}') for method, name in (
        ('odometry', 'vehicle_odometry'), ('local_position', 'vehicle_local_position'),
        ('gps', 'vehicle_gps_position'), ('status', 'vehicle_status'),
        ('land_detected', 'vehicle_land_detected'), ('mission_result', 'mission_result'))}
assert {f'/{topic}' for topic in IN_TOPICS.values()} == set(PX4_OUT_TOPICS)
#: The inputs a vehicle status is made of (besides the belief whose stamp it takes).
STATUS_METHODS = ('status', 'land_detected', 'mission_result')
#: The px4_msgs field that names a PX4 sample on its topic (SourceSamples.stamp_fields).
SOURCE_STAMP_FIELD = 'timestamp'


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


#: One PX4 sample an output was made from: the input method (IN_TOPICS) and its ``timestamp``.
Source = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Output:
    """A message the bridge publishes: its topic, stamp and message dict (SPEC section 4).

    ``topic`` is relative: 'state/nav', 'observations' or 'vehicle_status'. ``sources`` the
    PX4 samples it was made from, in the order the rules read them (``source_samples_message``).

    ``belief`` is the belief a 'state/nav' message carries (the node counts what it says);
    ``status`` the contract a 'vehicle_status' message is the wire form of.
    """

    topic: str
    stamp_ns: int
    message: dict[str, Any]
    sources: tuple[Source, ...] = ()
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


def source_samples_message(output: Output, output_topic: str,
                           topics: Mapping[str, str]) -> dict[str, Any]:
    """The ghost_interfaces/SourceSamples of ``output``, as a message dict.

    ``output_topic`` is the output's fully qualified topic, ``topics`` each input method's
    fully qualified topic (as the node resolved its subscriptions).
    """
    return {
        'header': {'stamp': _stamp(output.stamp_ns), 'frame_id': live.FRAME_ID},
        'output_topic': output_topic,
        'source_topics': [topics[method] for method, _ in output.sources],
        'stamp_fields': [SOURCE_STAMP_FIELD] * len(output.sources),
        'stamps': [int(stamp) for _, stamp in output.sources],
        'schema_version': 1,
    }


def height_of(config: BridgeConfig) -> px4.HeightReference:
    """The height reference the fixes are stated with (``ekf2_hgt_ref``; -1: unknown)."""
    return px4.height_reference(
        {} if config.ekf2_hgt_ref < 0 else {'EKF2_HGT_REF': float(config.ekf2_hgt_ref)})


def attitude_of(msg: Any) -> live.Attitude | None:
    """The attitude a vehicle_odometry gives a local-position belief; None without one."""
    q = tuple(float(v) for v in msg.q)
    try:
        px4.px4_quaternion_to_ros(q)
    except ValueError:
        return None  # not an attitude: a local-position sample finds none and says so
    rates = tuple(float(v) for v in msg.angular_velocity)
    variance = tuple(float(v) for v in msg.orientation_variance)
    return live.Attitude(
        live.belief_time_ns(msg.timestamp, msg.timestamp_sample), (q[0], q[1], q[2], q[3]),
        (rates[0], rates[1], rates[2]) if all(map(math.isfinite, rates)) else (0.0, 0.0, 0.0),
        (variance[0], variance[1], variance[2]))


def _validity_of(msg: Any) -> live.Validity:
    return live.Validity(live.belief_time_ns(msg.timestamp, msg.timestamp_sample),
                         bool(msg.xy_valid and msg.z_valid),
                         bool(msg.v_xy_valid and msg.v_z_valid))


def belief_of(config: BridgeConfig, msg: Any, other: Any | None) -> live.Belief | Dropped:
    """The belief of one sample of ``config.source`` and the sample of the other kind held.

    Source vehicle_odometry: ``msg`` a vehicle_odometry, ``other`` the vehicle_local_position
    whose validity flags apply (within ``max_attitude_age_ns`` of the belief; None or farther:
    no flags). Source vehicle_local_position: ``msg`` a vehicle_local_position, ``other`` the
    vehicle_odometry whose attitude it takes (None: none). No state.
    """
    stamp = live.belief_time_ns(msg.timestamp, msg.timestamp_sample)
    try:
        if config.source == 'vehicle_odometry':
            position_valid, velocity_valid = (
                (True, True) if other is None
                else _validity_of(other).at(stamp, config.max_attitude_age_ns))
            return live.vehicle_odometry_sample(
                position=msg.position, q=msg.q, velocity=msg.velocity,
                angular_velocity=msg.angular_velocity, position_variance=msg.position_variance,
                orientation_variance=msg.orientation_variance,
                velocity_variance=msg.velocity_variance, pose_frame=msg.pose_frame,
                velocity_frame=msg.velocity_frame, position_valid=position_valid,
                velocity_valid=velocity_valid)
        return live.local_position_odometry(
            x=msg.x, y=msg.y, z=msg.z, vx=msg.vx, vy=msg.vy, vz=msg.vz, eph=msg.eph,
            epv=msg.epv, evh=msg.evh, evv=msg.evv, xy_valid=msg.xy_valid, z_valid=msg.z_valid,
            v_xy_valid=msg.v_xy_valid, v_z_valid=msg.v_z_valid, stamp_ns=stamp,
            attitude=None if other is None else attitude_of(other),
            max_attitude_age_ns=config.max_attitude_age_ns,
            tilt_var=getattr(msg, 'tilt_var', None), heading_var=getattr(msg, 'heading_var', None))
    except Px4SampleRejected as err:
        return Dropped('belief', str(err))


def fix_of(config: BridgeConfig, msg: Any, local_position: Any | None) -> live.Fix | Dropped:
    """A SensorGps as a fix in the EKF frame of ``local_position`` (None: none yet); no state."""
    origin = None if local_position is None else live.origin_of(
        local_position.xy_global, local_position.z_global, local_position.ref_lat,
        local_position.ref_lon, local_position.ref_alt)
    try:
        return live.fix_observation(
            fix_type=msg.fix_type, lat_deg=msg.latitude_deg, lon_deg=msg.longitude_deg,
            alt_m=msg.altitude_msl_m, eph=msg.eph, epv=msg.epv,
            sample_ns=live.fix_sample_time_ns(msg.timestamp, msg.timestamp_sample),
            delay_ns=config.gps_delay_ns, origin=origin, height=height_of(config))
    except Px4SampleRejected as err:
        return Dropped('fix', str(err))


def status_of(stamp_ns: int, status: Any | None, land_detected: Any | None,
              mission_result: Any | None) -> VehicleStatus:
    """The vehicle status of the samples held (None: none received), stamped ``stamp_ns``."""
    values = Px4Status()
    if status is not None:
        values.arming_state = int(status.arming_state)
        values.nav_state = int(status.nav_state)
    if land_detected is not None:
        values.landed = bool(land_detected.landed)
    if mission_result is not None:
        values.plan = MissionPlan(bool(mission_result.valid), bool(mission_result.finished),
                                  bool(mission_result.failure))
    return values.at(stamp_ns, live.FRAME_ID)


#: What one received message gives: messages to publish, in order, or a drop.
Result = tuple[Output | Dropped, ...]


class Px4Bridge:
    """The latest PX4 sample of each kind, and the rule for each message received (the module)."""

    def __init__(self, config: BridgeConfig) -> None:
        self.config = config
        self._height = height_of(config)
        #: The latest sample received per input method ('odometry': the latest with an
        #: attitude).
        self._held: dict[str, Any] = {}
        self._last_belief_ns: int | None = None
        self._last_fix_ns: int | None = None
        self._reporter = StatusReporter()

    @property
    def height(self) -> px4.HeightReference:
        """The height reference the fixes are stated with."""
        return self._height

    def _source(self, method: str) -> tuple[Source, ...]:
        held = self._held.get(method)
        return () if held is None else ((method, int(held.timestamp)),)

    def odometry(self, msg: Any) -> Result:
        """A vehicle_odometry: a belief (source vehicle_odometry) or the attitude held."""
        if self.config.source == 'vehicle_odometry':
            return self._belief('odometry', msg, 'local_position')
        if attitude_of(msg) is not None:
            self._held['odometry'] = msg
        return ()

    def local_position(self, msg: Any) -> Result:
        """A vehicle_local_position: held; a belief with source vehicle_local_position."""
        self._held['local_position'] = msg
        if self.config.source != 'vehicle_local_position':
            return ()
        return self._belief('local_position', msg, 'odometry')

    def gps(self, msg: Any) -> Result:
        """A SensorGps: a fix in the EKF's local frame, or a drop."""
        fix = fix_of(self.config, msg, self._held.get('local_position'))
        if isinstance(fix, Dropped):
            return (fix,)
        if self._last_fix_ns is not None and fix.stamp_ns <= self._last_fix_ns:
            return (Dropped('fix', 'timestamp not strictly increasing'),)
        self._last_fix_ns = fix.stamp_ns
        return (Output('observations', fix.stamp_ns, fix_message(fix),
                       (('gps', int(msg.timestamp)), *self._source('local_position'))),)

    def status(self, msg: Any) -> Result:
        """A vehicle_status: the arming and navigation state held (nothing published)."""
        self._held['status'] = msg
        return ()

    def land_detected(self, msg: Any) -> Result:
        """A vehicle_land_detected: whether the vehicle is landed (nothing published)."""
        self._held['land_detected'] = msg
        return ()

    def mission_result(self, msg: Any) -> Result:
        """A mission_result: the mission plan's state (nothing published)."""
        self._held['mission_result'] = msg
        return ()

    def _belief(self, method: str, msg: Any, other: str) -> Result:
        belief = belief_of(self.config, msg, self._held.get(other))
        if isinstance(belief, Dropped):
            return (belief,)
        stamp_ns = live.belief_time_ns(msg.timestamp, msg.timestamp_sample)
        if self._last_belief_ns is not None and stamp_ns <= self._last_belief_ns:
            return (Dropped('belief', 'timestamp not strictly increasing'),)
        self._last_belief_ns = stamp_ns
        primary: Source = (method, int(msg.timestamp))
        # The status first: in force from this belief's cycle on.
        status = status_of(stamp_ns, *(self._held.get(name) for name in STATUS_METHODS))
        out: list[Output | Dropped] = []
        if self._reporter.due(status):
            out.append(Output('vehicle_status', stamp_ns, to_msg_dict(status),
                              (primary, *(source for name in STATUS_METHODS
                                          for source in self._source(name))), status=status))
        out.append(Output('state/nav', stamp_ns, odometry_message(stamp_ns, belief),
                          (primary, *self._source(other)), belief))
        return tuple(out)
