"""A DataFlash log as AP_DDS would publish it: the messages ap_log_player plays, in log order.

Pure (no rclpy; the rows come from ``dataflash_read``): every message is a message dict
(``ghost_nodes.convert.from_msg_dict`` builds it) stamped with the log's ``TimeUS`` (ns since
boot), so that a belief's stamp is the one ``ghost_import`` gives the same EKF sample. From the
primary EKF core's states (``dataflash_streams.ekf_beliefs``: XKF1/XKQ, the XKV variances
carried between their 2 Hz samples as the importer carries them; the XKF4 bits not applied,
as no AP_DDS topic carries them), at the log's own rate:

- /ap/odometry/filtered: nav_msgs/Odometry as the proposed publisher (ArduPilot PR #31857)
  would: frame ``odom`` (ENU about the EKF origin), child ``base_link``, twist in body FLU, the
  covariance the EKF3 variances (position, velocity, and the quaternion variances as a
  rotation-vector covariance where the PR writes a placeholder 1: the player states the EKF's
  own). Only with XKV in the log: an EKF2 log, or one without XKV, has none to state;
- /ap/pose/filtered: PoseStamped, position ENU **relative to HOME** (ORGN type 1; the EKF
  origin when the log has no HOME), orientation ENU/FLU; /ap/twist/filtered: TwistStamped,
  linear the EKF velocity in earth ENU, angular zero (the log's gyro rates are not read);
  their frame_id the label ``base_link``, as AP_DDS writes it;
- /ap/navsat: sensor_msgs/NavSatFix of GPS instance 0 (``GPS``/``GPA``), covariance
  diag(HAcc², HAcc², VAcc²) DIAGONAL_KNOWN (UNKNOWN without GPA), STATUS_FIX from a 3-D fix;
- /ap/gps_global_origin/filtered: the EKF origin (ORGN type 0), once a second from when it is
  logged;
- /ap/status: ardupilot_msgs/Status from ARM, EV and MODE: on each change and twice a second.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import math
from typing import Any

from ghost_ardupilot import ekf
from ghost_ardupilot.dataflash_read import DataflashLog
from ghost_ardupilot.dataflash_streams import (
    BELIEF_TYPES,
    BeliefStream,
    ekf_beliefs,
    EkfLayout,
    gnss_rows,
    GNSS_TYPES,
    gps_delay,
    status_changes,
    STATUS_TYPES,
)
from ghost_px4 import convert as px4
from ghost_px4 import live
from ghost_px4.ulog_streams import odometry_dict

__all__ = ['LOADED_TYPES', 'Playback', 'bridge_parameters', 'playback']

LOADED_TYPES = (*BELIEF_TYPES, *GNSS_TYPES, *STATUS_TYPES)
#: The frame_id AP_DDS writes in its headers, a label whatever the frame.
LABEL = 'base_link'
#: How often /ap/gps_global_origin/filtered and /ap/status are repeated (ns of log time).
ORIGIN_PERIOD_NS = 1_000_000_000
STATUS_PERIOD_NS = 500_000_000
#: ardupilot_msgs/Status.vehicle_type: APM_ARDUCOPTER, APM_UNKNOWN.
_COPTER, _UNKNOWN_VEHICLE = 2, 5


def _header(stamp_ns: int) -> dict[str, Any]:
    return {'stamp': {'sec': stamp_ns // 1_000_000_000, 'nanosec': stamp_ns % 1_000_000_000},
            'frame_id': LABEL}


def _xyz(v: tuple[float, float, float]) -> dict[str, float]:
    return {'x': float(v[0]), 'y': float(v[1]), 'z': float(v[2])}


@dataclass(slots=True)
class Playback:
    """The messages to play, (log time ns, topic, message dict) in log order, and their counts."""

    order: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    #: What the log lacks, said once by the node.
    notes: list[str] = field(default_factory=list)

    def add(self, time_ns: int, topic: str, message: dict[str, Any]) -> None:
        """One message of ``topic`` at ``time_ns``."""
        self.order.append((time_ns, topic, message))
        self.counts[topic] = self.counts.get(topic, 0) + 1

    @property
    def span_s(self) -> float:
        """Seconds of log between the first and the last message."""
        return (self.order[-1][0] - self.order[0][0]) / 1e9 if self.order else 0.0


def _origins(log: DataflashLog) -> dict[int, tuple[int, px4.GeoOrigin]]:
    """The first ORGN of each type (0 the EKF origin, 1 HOME): (time ns, point)."""
    found: dict[int, tuple[int, px4.GeoOrigin]] = {}
    for row in log.rows('ORGN'):
        kind = int(row.get('Type', -1))
        if kind in found:
            continue
        try:
            point = px4.GeoOrigin(float(row['Lat']), float(row['Lng']), float(row['Alt']))
        except ValueError:
            continue
        found[kind] = (int(row['TimeUS']) * 1000, point)
    return found


def _home_offset(origins: Mapping[int, tuple[int, px4.GeoOrigin]]) -> tuple[float, float, float]:
    """HOME in the EKF frame (ENU about the EKF origin), (0, 0, 0) without both."""
    if 0 not in origins or 1 not in origins:
        return 0.0, 0.0, 0.0
    origin, home = origins[0][1], origins[1][1]
    north, east = ekf.distance_ne(origin.lat_deg, origin.lon_deg, home.lat_deg, home.lon_deg)
    return east, north, home.alt_m - origin.alt_m


def _beliefs(log: DataflashLog, layout: EkfLayout, out: Playback, odometry: bool,
             home: tuple[float, float, float]) -> None:
    stream = BeliefStream(f'{layout.state} (primary core)')
    for stamp, sample, _ in ekf_beliefs(log, layout, stream, flagged=False):
        ros = live.ros_odometry(sample)
        if odometry:
            out.add(stamp, '/ap/odometry/filtered', odometry_dict(stamp, ros))
        x, y, z = ros.position
        qx, qy, qz, qw = ros.orientation_xyzw
        out.add(stamp, '/ap/pose/filtered', {
            'header': _header(stamp),
            'pose': {'position': _xyz((x - home[0], y - home[1], z - home[2])),
                     'orientation': {'x': qx, 'y': qy, 'z': qz, 'w': qw}}})
        out.add(stamp, '/ap/twist/filtered', {
            'header': _header(stamp),
            'twist': {'linear': _xyz(px4.ned_to_enu(sample.velocity)),
                      'angular': _xyz((0.0, 0.0, 0.0))}})


def _fixes(log: DataflashLog, out: Playback) -> None:
    for instance, row, accuracy in gnss_rows(log):
        if instance != 0:
            continue
        stamp = int(row['TimeUS']) * 1000
        hacc = math.nan if accuracy is None else float(accuracy.get('HAcc', math.nan))
        vacc = math.nan if accuracy is None else float(accuracy.get('VAcc', math.nan))
        stated = math.isfinite(hacc) and math.isfinite(vacc) and hacc > 0 and vacc > 0
        h2, v2 = (hacc * hacc, vacc * vacc) if stated else (0.0, 0.0)
        out.add(stamp, '/ap/navsat', {
            'header': _header(stamp),
            'status': {'status': 0 if int(row.get('Status', 0)) >= 3 else -1, 'service': 1},
            'latitude': float(row['Lat']), 'longitude': float(row['Lng']),
            'altitude': float(row['Alt']),
            'position_covariance': [h2, 0.0, 0.0, 0.0, h2, 0.0, 0.0, 0.0, v2],
            'position_covariance_type': 2 if stated else 0})


def _repeated(start_ns: int, end_ns: int, period_ns: int) -> range:
    return range(start_ns, end_ns + 1, period_ns)


def _origin(origins: Mapping[int, tuple[int, px4.GeoOrigin]], end_ns: int,
            out: Playback) -> None:
    if 0 not in origins:
        out.notes.append('no EKF origin (ORGN type 0) in the log: '
                         '/ap/gps_global_origin/filtered stays silent')
        return
    start, point = origins[0]
    for stamp in _repeated(start, end_ns, ORIGIN_PERIOD_NS):
        out.add(stamp, '/ap/gps_global_origin/filtered', {
            'header': _header(stamp),
            'position': {'latitude': point.lat_deg, 'longitude': point.lon_deg,
                         'altitude': point.alt_m}})


def _statuses(log: DataflashLog, end_ns: int, out: Playback) -> None:
    changes = status_changes(log)
    if not changes:
        out.notes.append('no ARM, EV or MODE in the log: /ap/status stays silent')
        return
    vehicle = _COPTER if log.vehicle() == 'ArduCopter' else _UNKNOWN_VEHICLE
    state: dict[str, object] = {'armed': False, 'landed': True, 'mode': 0}
    times = sorted({time for time, _, _ in changes}
                   | set(_repeated(changes[0][0], end_ns, STATUS_PERIOD_NS)))
    index = 0
    for stamp in times:
        while index < len(changes) and changes[index][0] <= stamp:
            _, key, value = changes[index]
            state[key] = value
            index += 1
        armed, mode = bool(state['armed']), state['mode']
        out.add(stamp, '/ap/status', {
            'header': _header(stamp), 'vehicle_type': vehicle, 'armed': armed,
            'mode': mode if isinstance(mode, int) else 0,
            'flying': armed and not bool(state['landed']), 'external_control': False,
            'failsafe': []})


def playback(log: DataflashLog, *, odometry: bool = True) -> Playback:
    """Every message AP_DDS would have published during the flight, in log order.

    ValueError naming the log when it has no EKF state (neither XKF1 nor NKF1).
    """
    layout = EkfLayout.of(log)
    if layout is None:
        raise ValueError(f'{log.path}: no EKF state is logged (neither XKF1 nor NKF1)')
    out = Playback()
    with_odometry = odometry and layout.variances
    if odometry and not layout.variances:
        out.notes.append(f'{layout.label} without XKV variances: no /ap/odometry/filtered '
                         '(pose and twist only, as released AP_DDS firmware)')
    origins = _origins(log)
    if 1 not in origins:
        out.notes.append('no HOME (ORGN type 1): /ap/pose/filtered is about the EKF origin')
    _beliefs(log, layout, out, with_odometry, _home_offset(origins))
    _fixes(log, out)
    end = max((time for time, _, _ in out.order), default=0)
    _origin(origins, end, out)
    _statuses(log, end, out)
    out.order.sort(key=lambda item: item[0])
    return out


def bridge_parameters(log: DataflashLog) -> dict[str, object]:
    """The ap_bridge parameters this vehicle's parameters set: the GNSS lag, the height source."""
    layout = EkfLayout.of(log)
    _, _, source = ekf.height_source(log.parameters, layout.generation if layout else 3)
    return {'gps_delay_ms': gps_delay(log, 0, None).ns / 1e6,
            'gnss_height': source is ekf.GPS_HEIGHT}
