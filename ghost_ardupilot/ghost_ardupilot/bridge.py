"""The ArduPilot bridge's rules: AP_DDS messages in, Ghost's input messages and their sources out.

One home for what ``ap_bridge`` does with each AP_DDS message it receives (the node publishes
what this returns), and for an auditor that converts each recorded /state/nav, /observations
and /vehicle_status again from exactly the AP_DDS samples its /source_samples names. A message
is read by attribute, so an rclpy message and one decoded from a bag (mcap_ros2) read alike.
The facts are ../shared/vendor/ardupilot_msgs/README.md's:

- ``/ap/odometry/filtered`` (nav_msgs/Odometry with the EKF3 variances; proposed upstream,
  ArduPilot PR #31857, and what ``ap_log_player`` publishes): a belief (``belief_of_odometry``)
  with its covariance, REP 105 (pose ENU about the EKF origin, twist body FLU).
- ``/ap/pose/filtered`` + ``/ap/twist/filtered`` (PoseStamped, TwistStamped: no covariance
  field): where no odometry is published, a belief (``belief_of_pose``) of the pose and the
  twist held (earth ENU, turned into body FLU), covariance all zeros: Ghost judges it UNKNOWN
  and abstains (``NO_COVARIANCE``). The pose is relative to HOME, not the EKF origin, a second
  reason it cannot be checked against the fixes.
- ``/ap/navsat`` (NavSatFix, the receiver's fix): a fix (``fix_of``) about the EKF origin of
  the latest ``/ap/gps_global_origin/filtered`` (never HOME), by EKF3's own flat-earth rule
  (``dataflash_streams.fix_about_origin``, as ``ghost_import`` places GPS/GPA), its HAcc/VAcc
  from the covariance diag(HAcc², HAcc², VAcc²), stamped at the fix's stamp minus the GNSS lag.
- ``/ap/status`` (ardupilot_msgs/Status): held; the flight status (armed, flying) and an
  ArduCopter mode's mission status (``status_of``: ``dataflash_streams.copter_status``) are
  published before a belief, stamped with it, on a change and at least once a second.

Every output names its samples (``Output.sources``: the input method and the sample's
``header.stamp`` in ns, SPEC 5 v1.3). ``base_link`` in AP_DDS headers is a label (whatever the
frame): the frame is the topic's, and the bridge states its outputs in ``odom``/``base_link``.
A belief stamped not after the previous one, a fix not after the previous fix, is dropped.
No rclpy here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
from typing import Any

from ghost_ardupilot.dataflash_streams import copter_status, fix_about_origin
from ghost_core.contracts import VehicleStatus
from ghost_core.graph import AP_OUT_TOPICS, relative_topic
from ghost_core.wire import to_msg_dict
from ghost_px4 import convert as px4
from ghost_px4 import live
from ghost_px4.bridge import Dropped, fix_message, odometry_message, Output
from ghost_px4.status import StatusReporter

__all__ = ['AP_STATUS_SOURCE', 'BRIDGE_CONFIG_KEY', 'BRIDGE_SOURCES', 'BridgeConfig', 'ApBridge',
           'IN_TOPICS', 'NO_COVARIANCE', 'Result', 'SOURCE_STAMP_FIELD', 'belief_of_odometry',
           'belief_of_pose', 'fix_of', 'origin_of', 'source_samples_message', 'stamp_ns',
           'status_of']

#: Where the recorder's run configuration holds the bridge's.
BRIDGE_CONFIG_KEY = 'ap_bridge'
#: Where the beliefs come from: odometry where published (auto), or one source only.
BRIDGE_SOURCES = ('auto', 'odometry', 'pose_twist')
#: The bridge's inputs (relative to its namespace) by the method that takes them.
IN_TOPICS: Mapping[str, str] = {
    method: relative_topic(topic) for method, topic in (
        ('odometry', '/ap/odometry/filtered'), ('pose', '/ap/pose/filtered'),
        ('twist', '/ap/twist/filtered'), ('navsat', '/ap/navsat'),
        ('origin', '/ap/gps_global_origin/filtered'), ('status', '/ap/status'))}
assert {f'/{topic}' for topic in IN_TOPICS.values()} == set(AP_OUT_TOPICS)
#: The field that names an AP_DDS sample on its topic (SourceSamples.stamp_fields).
SOURCE_STAMP_FIELD = 'header.stamp'
#: VehicleStatus.source of a status read from AP_DDS.
AP_STATUS_SOURCE = 'ardupilot_dds'
#: ardupilot_msgs/Status.vehicle_type of the Copter firmwares (APM_ARDUCOPTER, APM_HELI).
_COPTER_TYPES = frozenset({2, 13})
#: Why Ghost abstains on beliefs from pose and twist (logged once by the node).
NO_COVARIANCE = ('no /ap/odometry/filtered: this firmware publishes no EKF variances '
                 '(/ap/pose/filtered and /ap/twist/filtered have no covariance field), so the '
                 'beliefs carry an all-zero covariance and Ghost judges them UNKNOWN: it '
                 'abstains (ABSTAIN_UNCERTAIN) until a firmware publishes /ap/odometry/filtered')
_NO_ORIGIN = 'no EKF origin (no /ap/gps_global_origin/filtered received)'
_ORIENTATION_FROM_ODOMETRY = '/ap/odometry/filtered pose.covariance'


@dataclass(frozen=True, slots=True)
class BridgeConfig:
    """The bridge's parameters (ghost_ardupilot.node_parameters), in the units it works in."""

    source: str
    gps_delay_ns: int
    gnss_height: bool
    max_twist_age_ns: int

    def __post_init__(self) -> None:
        if self.source not in BRIDGE_SOURCES:
            raise ValueError(f'ap_bridge source {self.source!r} is not one of '
                             f'{", ".join(BRIDGE_SOURCES)}')
        if self.gps_delay_ns < 0 or self.max_twist_age_ns < 0:
            raise ValueError(f'ap_bridge gps_delay_ns {self.gps_delay_ns} and '
                             f'max_twist_age_ns {self.max_twist_age_ns} must be >= 0')

    @classmethod
    def from_parameters(cls, params: Mapping[str, Any]) -> BridgeConfig:
        """From the node's parameter values (source, gps_delay_ms, gnss_height, ...)."""
        return cls(str(params['source']), int(round(float(params['gps_delay_ms']) * 1e6)),
                   bool(params['gnss_height']),
                   int(round(float(params['max_twist_age_s']) * 1e9)))

    def to_dict(self) -> dict[str, object]:
        """The form recorded in the run configuration (``from_dict`` reads it back)."""
        return {'source': self.source, 'gps_delay_ns': self.gps_delay_ns,
                'gnss_height': self.gnss_height, 'max_twist_age_ns': self.max_twist_age_ns}

    @classmethod
    def from_dict(cls, document: object) -> BridgeConfig:
        """The form ``to_dict`` wrote, exactly; ValueError naming what is wrong."""
        expected = {'source': str, 'gps_delay_ns': int, 'gnss_height': bool,
                    'max_twist_age_ns': int}
        if not isinstance(document, Mapping) or set(document) != set(expected):
            raise ValueError(f'{BRIDGE_CONFIG_KEY} is not an object with keys '
                             f'{sorted(expected)}')
        for key, kind in expected.items():
            value = document[key]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise ValueError(f'{BRIDGE_CONFIG_KEY}.{key} is {value!r}, not '
                                 f'{kind.__name__}')
        return cls(str(document['source']), int(document['gps_delay_ns']),
                   bool(document['gnss_height']), int(document['max_twist_age_ns']))


def stamp_ns(msg: Any) -> int:
    """A message's ``header.stamp`` in nanoseconds (how SourceSamples names it)."""
    stamp = msg.header.stamp
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def _xyz(vector: Any) -> tuple[float, float, float]:
    return float(vector.x), float(vector.y), float(vector.z)


def _orientation(msg: Any) -> tuple[float, float, float, float] | None:
    """The unit quaternion (x, y, z, w) of a geometry_msgs/Quaternion, or None."""
    q = (float(msg.x), float(msg.y), float(msg.z), float(msg.w))
    if not all(map(math.isfinite, q)) or abs(math.sqrt(sum(v * v for v in q)) - 1.0) > 1e-3:
        return None
    return q


def belief_of_odometry(msg: Any) -> live.Belief | Dropped:
    """An /ap/odometry/filtered as a belief: its pose, twist and covariances as stated.

    Dropped when it carries no belief (a position that is not finite, no unit quaternion). A
    covariance with a value that is not finite is all zeros instead (not stated: UNKNOWN).
    """
    position = _xyz(msg.pose.pose.position)
    orientation = _orientation(msg.pose.pose.orientation)
    if not all(map(math.isfinite, position)):
        return Dropped('belief', live.NAN_POSITION)
    if orientation is None:
        return Dropped('belief', 'orientation not a finite unit quaternion')
    pose_cov = tuple(float(v) for v in msg.pose.covariance)
    twist_cov = tuple(float(v) for v in msg.twist.covariance)
    if not all(map(math.isfinite, pose_cov)):
        pose_cov = (0.0,) * 36
    if not all(map(math.isfinite, twist_cov)):
        twist_cov = (0.0,) * 36
    linear = _xyz(msg.twist.twist.linear)
    angular = _xyz(msg.twist.twist.angular)
    ros = px4.RosOdometry(position, orientation,
                          linear if all(map(math.isfinite, linear)) else (0.0, 0.0, 0.0),
                          live.carried_rates(angular), pose_cov, twist_cov)
    stated = any(pose_cov[index] != 0.0 for index in (21, 28, 35))
    return live.Belief(ros, _ORIENTATION_FROM_ODOMETRY if stated else None)


def belief_of_pose(pose: Any, twist: Any | None, max_twist_age_ns: int) -> live.Belief | Dropped:
    """A /ap/pose/filtered with the /ap/twist/filtered held as a belief with no covariance.

    The twist must be stamped within ``max_twist_age_ns`` of the pose (before or after: AP_DDS
    publishes both from one AHRS update); its earth ENU linear velocity is turned into body
    FLU with the pose's attitude, its angular rate (body FLU) kept. Covariance all zeros.
    """
    position = _xyz(pose.pose.position)
    orientation = _orientation(pose.pose.orientation)
    if not all(map(math.isfinite, position)):
        return Dropped('belief', live.NAN_POSITION)
    if orientation is None:
        return Dropped('belief', 'orientation not a finite unit quaternion')
    if twist is None or abs(stamp_ns(twist) - stamp_ns(pose)) > max_twist_age_ns:
        return Dropped('belief', f'no /ap/twist/filtered within {max_twist_age_ns / 1e6:g} ms')
    velocity_enu = _xyz(twist.twist.linear)
    if not all(map(math.isfinite, velocity_enu)):
        velocity_enu = (0.0, 0.0, 0.0)
    velocity, _ = px4.world_to_body(velocity_enu, orientation)
    ros = px4.RosOdometry(position, orientation, velocity,
                          live.carried_rates(_xyz(twist.twist.angular)), (0.0,) * 36,
                          (0.0,) * 36)
    return live.Belief(ros, None)


def origin_of(msg: Any | None) -> px4.GeoOrigin | None:
    """The EKF origin of a GeoPointStamped (AMSL), or None (none received, or off the globe)."""
    if msg is None:
        return None
    try:
        return px4.GeoOrigin(float(msg.position.latitude), float(msg.position.longitude),
                             float(msg.position.altitude))
    except ValueError:
        return None


def fix_of(config: BridgeConfig, navsat: Any, origin: Any | None) -> live.Fix | Dropped:
    """A NavSatFix as a fix about the EKF origin ``origin`` (a GeoPointStamped, None: none)."""
    if int(navsat.status.status) < 0:
        return Dropped('fix', 'no fix (NavSatStatus STATUS_NO_FIX)')
    if int(navsat.position_covariance_type) == 0:
        return Dropped('fix', 'no accuracy stated (position_covariance_type UNKNOWN)')
    covariance = [float(v) for v in navsat.position_covariance]
    hacc = math.sqrt(covariance[0]) if covariance[0] >= 0 else math.nan
    vacc = math.sqrt(covariance[8]) if covariance[8] >= 0 else math.nan
    lat, lon, alt = float(navsat.latitude), float(navsat.longitude), float(navsat.altitude)
    problem = px4.fix_problem(3, lat, lon, alt, hacc, vacc)
    if problem is not None:
        return Dropped('fix', problem.replace('eph/epv', 'HAcc/VAcc'))
    stamp = stamp_ns(navsat) - config.gps_delay_ns
    if stamp < 0:
        return Dropped('fix', live.BEFORE_BOOT)
    geo = origin_of(origin)
    if geo is None:
        return Dropped('fix', _NO_ORIGIN)
    return fix_about_origin(geo, stamp, lat, lon, alt, hacc, vacc, config.gnss_height)


def status_of(stamp: int, status: Any | None) -> VehicleStatus:
    """The vehicle status of the /ap/status held (None: none received), stamped ``stamp``."""
    if status is None:
        return copter_status(stamp, None, None, None, False, AP_STATUS_SOURCE)
    armed = bool(status.armed)
    return copter_status(stamp, armed, not bool(status.flying) if armed else None,
                         int(status.mode), int(status.vehicle_type) in _COPTER_TYPES,
                         AP_STATUS_SOURCE)


def source_samples_message(output: Output, output_topic: str,
                           topics: Mapping[str, str]) -> dict[str, Any]:
    """The ghost_interfaces/SourceSamples of ``output``, as a message dict."""
    return {
        'header': {'stamp': {'sec': output.stamp_ns // 1_000_000_000,
                             'nanosec': output.stamp_ns % 1_000_000_000},
                   'frame_id': live.FRAME_ID},
        'output_topic': output_topic,
        'source_topics': [topics[method] for method, _ in output.sources],
        'stamp_fields': [SOURCE_STAMP_FIELD] * len(output.sources),
        'stamps': [int(stamp) for _, stamp in output.sources],
        'schema_version': 1,
    }


#: What one received message gives: messages to publish, in order, or a drop.
Result = tuple[Output | Dropped, ...]


class ApBridge:
    """The latest AP_DDS sample of each kind, and the rule for each message (the module)."""

    def __init__(self, config: BridgeConfig) -> None:
        self.config = config
        self._held: dict[str, Any] = {}
        self._last_belief_ns: int | None = None
        self._last_fix_ns: int | None = None
        self._reporter = StatusReporter()
        #: An /ap/odometry/filtered was received (source 'auto' then takes beliefs from it).
        self.odometry_seen = False

    def _source(self, method: str) -> tuple[tuple[str, int], ...]:
        held = self._held.get(method)
        return () if held is None else ((method, stamp_ns(held)),)

    @property
    def from_pose(self) -> bool:
        """Whether beliefs come from pose and twist now."""
        return self.config.source == 'pose_twist' or (
            self.config.source == 'auto' and not self.odometry_seen)

    def odometry(self, msg: Any) -> Result:
        """An /ap/odometry/filtered: a belief (unless the source is pose_twist)."""
        if self.config.source == 'pose_twist':
            return ()
        self.odometry_seen = True
        return self._belief(('odometry', stamp_ns(msg)), belief_of_odometry(msg), ())

    def pose(self, msg: Any) -> Result:
        """An /ap/pose/filtered: a belief with the twist held, while beliefs come from pose."""
        if not self.from_pose:
            return ()
        belief = belief_of_pose(msg, self._held.get('twist'), self.config.max_twist_age_ns)
        return self._belief(('pose', stamp_ns(msg)), belief, self._source('twist'))

    def twist(self, msg: Any) -> Result:
        """An /ap/twist/filtered: held for the next pose."""
        self._held['twist'] = msg
        return ()

    def origin(self, msg: Any) -> Result:
        """An /ap/gps_global_origin/filtered: the EKF origin the fixes are placed about."""
        self._held['origin'] = msg
        return ()

    def status(self, msg: Any) -> Result:
        """An /ap/status: held (published before the next belief when due)."""
        self._held['status'] = msg
        return ()

    def navsat(self, msg: Any) -> Result:
        """An /ap/navsat: a fix about the EKF origin, or a drop."""
        fix = fix_of(self.config, msg, self._held.get('origin'))
        if isinstance(fix, Dropped):
            return (fix,)
        if self._last_fix_ns is not None and fix.stamp_ns <= self._last_fix_ns:
            return (Dropped('fix', 'timestamp not strictly increasing'),)
        self._last_fix_ns = fix.stamp_ns
        return (Output('observations', fix.stamp_ns, fix_message(fix),
                       (('navsat', stamp_ns(msg)), *self._source('origin'))),)

    def _belief(self, primary: tuple[str, int], belief: live.Belief | Dropped,
                others: tuple[tuple[str, int], ...]) -> Result:
        if isinstance(belief, Dropped):
            return (belief,)
        stamp = primary[1]
        if self._last_belief_ns is not None and stamp <= self._last_belief_ns:
            return (Dropped('belief', 'timestamp not strictly increasing'),)
        self._last_belief_ns = stamp
        status = status_of(stamp, self._held.get('status'))
        out: list[Output | Dropped] = []
        if self._reporter.due(status):
            out.append(Output('vehicle_status', stamp, to_msg_dict(status),
                              (primary, *self._source('status')), status=status))
        out.append(Output('state/nav', stamp, odometry_message(stamp, belief),
                          (primary, *others), belief))
        return tuple(out)
