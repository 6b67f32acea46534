"""The MAVROS bridge's per-sample rules: one MAVROS message in, Ghost's input content out.

Pure functions of the samples they are given (no rclpy, no mavros_msgs: a message is read by
attribute, so an rclpy message and one decoded from a bag are read alike), for the node
(``ghost_mavros.bridge``) and for an auditor that re-derives its outputs:

- ``belief_of``: ``/mavros/local_position/odom`` (nav_msgs/Odometry). MAVROS already states it
  in ROS's frames (REP 103/105: ENU world, FLU body, the twist in the body frame, relative to
  the autopilot's local origin), so nothing is rotated: the content is kept as MAVROS gives
  it, relabelled ``odom``/``base_link`` (labels, as px4_bridge's). The covariance is kept as
  is too: MAVROS fills it only from MAVLink LOCAL_POSITION_NED_COV, which ArduPilot never
  sends, so with ArduPilot it is all zeros: no information, which the self-assessor judges
  UNKNOWN (``no_covariance_information``), never certainty. ``covariance_reason`` says why in
  words that name MAVROS and the autopilot (the node logs it once per autopilot).
- ``navsat_fix``: ``/mavros/global_position/raw/fix`` (sensor_msgs/NavSatFix): the receiver's
  fix with the covariance MAVROS computed (from h_acc/v_acc, else the DOPs), ENU m².
- ``gpsraw_fix``: ``/mavros/gpsstatus/gps1/raw`` (mavros_msgs/GPSRAW): h_acc/v_acc (mm) as
  PX4's eph/epv are read (``ghost_px4.convert.fix_covariance``), else eph/epv (DOP x 100) times
  ``gps_uere_m``, MAVROS's own rule for raw/fix.
- A fix is projected about ``FixFrame``: the autopilot's EKF origin when the parameters give it,
  else anchored at the first usable fix and the belief held then (``Anchor``). Unless the
  EKF's height follows GNSS (``gnss_height``), the vertical axis is marked not measured.
- ``status_of``: ``/mavros/state`` and ``/mavros/extended_state`` by the pure converter
  ``ghost_core.vehicle.mavros_status`` (armed, landed state, the mode's mission status, PX4's
  and ArduPilot's mode names alike).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ghost_core.contracts import VehicleStatus
from ghost_core.geometry import finite, Matrix3, Vector3
from ghost_core.vehicle import MAVROS_MODES, mavros_status
from ghost_px4 import convert as px4
from ghost_px4.errors import Px4SampleRejected
from ghost_px4.live import CHILD_FRAME_ID, FRAME_ID

__all__ = ['ARDUPILOT', 'AUTOPILOTS', 'Anchor', 'FixFrame', 'GeoFix', 'MAVROS_SOURCE', 'PX4',
           'Rejected', 'anchor_of', 'autopilot_of_mode', 'belief_of', 'covariance_reason',
           'fix_message', 'gpsraw_fix', 'navsat_fix', 'origin_of', 'stamp_ns', 'status_of']

#: VehicleStatus.source of a status read from MAVROS.
MAVROS_SOURCE = 'mavros_state'
PX4 = 'PX4'
ARDUPILOT = 'ArduPilot'
#: The ``autopilot`` parameter's values: named from /mavros/state's mode ('auto'), or given.
AUTOPILOTS = ('auto', 'px4', 'ardupilot')
#: Modes only PX4 names so (MAVROS's px4_custom_mode names); the others MAVROS_MODES knows
#: (but MANUAL and ACRO, which both use) are ArduPilot's.
_PX4_ONLY = frozenset({'ALTCTL', 'POSCTL', 'OFFBOARD', 'STABILIZED', 'RATTITUDE'})
_BOTH = frozenset({'MANUAL', 'ACRO'})
#: GPSRAW.eph/epv when unknown (UINT16_MAX).
_DOP_UNKNOWN = 65535


class Rejected(Px4SampleRejected):
    """A MAVROS sample that gives no output; the message is a stable, countable reason."""


def stamp_ns(header: Any) -> int:
    """A std_msgs/Header's stamp in nanoseconds (how /source_samples names a MAVROS sample)."""
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


def autopilot_of_mode(mode: str) -> str | None:
    """The autopilot a /mavros/state mode string names (PX4 or ArduPilot), None if either."""
    name = mode.strip().upper()
    if name.startswith('AUTO.') or name in _PX4_ONLY:
        return PX4
    if name in MAVROS_MODES and name not in _BOTH:
        return ARDUPILOT
    return None


def _xyz(v: Any) -> dict[str, float]:
    return {'x': float(v.x), 'y': float(v.y), 'z': float(v.z)}


def _stamp(ns: int) -> dict[str, int]:
    return {'sec': ns // 1_000_000_000, 'nanosec': ns % 1_000_000_000}


def belief_of(msg: Any) -> dict[str, Any]:
    """The /state/nav message dict of one MAVROS odometry sample, or Rejected.

    Kept as MAVROS states it (ENU/FLU, covariances as given); only a position that is not
    finite is rejected (no belief). The self-assessor judges a zero covariance block UNKNOWN.
    """
    pose, twist = msg.pose.pose, msg.twist.twist
    position = _xyz(pose.position)
    if not finite(*position.values()):
        raise Rejected('position not finite (MAVROS states no position)')
    q = pose.orientation
    return {
        'header': {'stamp': _stamp(stamp_ns(msg.header)), 'frame_id': FRAME_ID},
        'child_frame_id': CHILD_FRAME_ID,
        'pose': {'pose': {'position': position,
                          'orientation': {'x': float(q.x), 'y': float(q.y), 'z': float(q.z),
                                          'w': float(q.w)}},
                 'covariance': [float(v) for v in msg.pose.covariance]},
        'twist': {'twist': {'linear': _xyz(twist.linear), 'angular': _xyz(twist.angular)},
                  'covariance': [float(v) for v in msg.twist.covariance]},
    }


def _zero(values: Sequence[float], indices: Sequence[int]) -> bool:
    return all(float(values[i]) == 0.0 for i in indices)


_POSITION = tuple(r * 6 + c for r in range(3) for c in range(3))
_ROTATION = tuple(r * 6 + c for r in range(3, 6) for c in range(3, 6))


def covariance_reason(pose_covariance: Sequence[float], twist_covariance: Sequence[float],
                      autopilot: str | None) -> str | None:
    """Why a MAVROS belief's covariance says nothing, naming MAVROS and the autopilot; or None.

    All zeros: ArduPilot never sends LOCAL_POSITION_NED_COV, PX4 only when it streams it. With
    position and velocity stated, the orientation block is still zero (MAVROS's local_position
    plugin never fills it), so the orientation is judged UNKNOWN all the same.
    """
    who = autopilot or 'the autopilot (not named by /mavros/state yet)'
    if all(float(v) == 0.0 for v in (*pose_covariance, *twist_covariance)):
        why = {ARDUPILOT: 'ArduPilot never sends MAVLink LOCAL_POSITION_NED_COV',
               PX4: 'PX4 sends MAVLink LOCAL_POSITION_NED_COV only when that stream is on'}.get(
            autopilot or '', 'MAVROS fills it only from MAVLink LOCAL_POSITION_NED_COV')
        return (f'MAVROS /mavros/local_position/odom from {who} has an all-zero covariance '
                f'({why}): no uncertainty is stated, so every belief is judged UNKNOWN and '
                'Ghost abstains')
    if _zero(pose_covariance, _ROTATION) and not _zero(pose_covariance, _POSITION):
        return (f'MAVROS /mavros/local_position/odom from {who} states no orientation '
                "covariance (MAVROS's local_position plugin leaves it zero): the orientation "
                'is judged UNKNOWN')
    return None


@dataclass(frozen=True, slots=True)
class Anchor:
    """The frame of anchored fixes: the first usable fix and the belief position held then.

    A fix is projected about the anchor fix (``origin``) and offset by ``offset`` (the ENU
    position of the belief held when the anchor fix came), so the anchor fix coincides with
    that belief; later fixes check the belief's motion from there, not an offset present then.
    """

    origin: px4.GeoOrigin
    offset: Vector3


@dataclass(frozen=True, slots=True)
class FixFrame:
    """How fixes become observations: the EKF origin (None: anchored), its height, the UERE."""

    origin: px4.GeoOrigin | None
    gnss_height: bool
    gps_uere_m: float
    delay_ns: int


def _position(frame: FixFrame, anchor: Anchor | None, lat: float, lon: float,
              alt: float) -> Vector3:
    if frame.origin is not None:
        return px4.gnss_to_enu(frame.origin, lat, lon, alt)
    if anchor is None:
        raise Rejected('no anchor: no belief received before the first fix')
    east, north, up = px4.gnss_to_enu(anchor.origin, lat, lon, alt)
    return (east + anchor.offset[0], north + anchor.offset[1], up + anchor.offset[2])


def _unmeasured_vertical(cov: Matrix3, gnss_height: bool) -> Matrix3:
    if gnss_height:
        return cov
    return (cov[0], cov[1], 0.0, cov[3], cov[4], 0.0, 0.0, 0.0, px4.UNMEASURED_VARIANCE_M2)


@dataclass(frozen=True, slots=True)
class GeoFix:
    """A usable fix before projection: its stamp (ns), lat/lon (deg), alt (m), ENU covariance."""

    stamp_ns: int
    lat_deg: float
    lon_deg: float
    alt_m: float
    covariance: Matrix3


def _geo_fix(frame: FixFrame, stamp: int, lat: float, lon: float, alt: float,
             cov: Matrix3) -> GeoFix:
    if not (finite(lat, lon, alt) and abs(lat) <= 90.0 and abs(lon) <= 180.0):
        raise Rejected('latitude/longitude/altitude not finite or out of range')
    if not finite(*cov) or min(cov[0], cov[4], cov[8]) <= 0.0:
        raise Rejected('covariance not finite or not positive')
    return GeoFix(stamp - frame.delay_ns, lat, lon, alt,
                  _unmeasured_vertical(cov, frame.gnss_height))


def navsat_fix(frame: FixFrame, msg: Any) -> GeoFix:
    """A /mavros/global_position/raw/fix as a usable fix, or Rejected.

    MAVROS reports a 2-D fix as no fix (status -1); covariance type 0 states none.
    """
    if int(msg.status.status) < 0:
        raise Rejected('no fix (NavSatFix status -1; MAVROS reports a 2-D fix so)')
    if int(msg.position_covariance_type) == 0:
        raise Rejected('covariance unknown (NavSatFix position_covariance_type 0)')
    cov = tuple(float(v) for v in msg.position_covariance)
    return _geo_fix(frame, stamp_ns(msg.header), float(msg.latitude), float(msg.longitude),
                    float(msg.altitude), (cov[0], cov[1], cov[2], cov[3], cov[4], cov[5],
                                          cov[6], cov[7], cov[8]))


def gpsraw_fix(frame: FixFrame, msg: Any) -> GeoFix:
    """A /mavros/gpsstatus/gps1/raw as a usable fix (altitude MSL), or Rejected.

    Needs a 3-D fix (fix_type >= 3). h_acc/v_acc (mm, 1 sigma) when both are stated (> 0),
    read as PX4's eph/epv; else eph/epv (DOP x 100, 65535 unknown) times ``gps_uere_m``.
    """
    if int(msg.fix_type) < 3:
        raise Rejected('no 3-D fix (GPSRAW fix_type < 3)')
    h_acc, v_acc = int(msg.h_acc), int(msg.v_acc)
    if h_acc > 0 and v_acc > 0:
        horizontal, vertical = h_acc / 1000.0, v_acc / 1000.0
    elif _DOP_UNKNOWN not in (int(msg.eph), int(msg.epv)) and min(int(msg.eph),
                                                                   int(msg.epv)) > 0:
        horizontal = int(msg.eph) / 100.0 * frame.gps_uere_m
        vertical = int(msg.epv) / 100.0 * frame.gps_uere_m
    else:
        raise Rejected('no accuracy (GPSRAW h_acc/v_acc 0 and eph/epv unknown)')
    return _geo_fix(frame, stamp_ns(msg.header), int(msg.lat) / 1e7, int(msg.lon) / 1e7,
                    int(msg.alt) / 1000.0, px4.horizontal_vertical_covariance(horizontal,
                                                                              vertical))


def anchor_of(fix: GeoFix, belief: Any | None) -> Anchor | None:
    """The anchor a first usable fix and the odometry held then give (None: no belief)."""
    if belief is None:
        return None
    return Anchor(px4.GeoOrigin(fix.lat_deg, fix.lon_deg, fix.alt_m),
                  tuple(_xyz(belief.pose.pose.position).values()))  # type: ignore[arg-type]


def fix_message(frame: FixFrame, fix: GeoFix, anchor: Anchor | None) -> dict[str, Any]:
    """The /observations message dict of a usable fix, projected (Rejected: no frame yet)."""
    position = _position(frame, anchor, fix.lat_deg, fix.lon_deg, fix.alt_m)
    covariance = px4.observation_pose_covariance(fix.covariance)
    return {
        'header': {'stamp': _stamp(fix.stamp_ns), 'frame_id': FRAME_ID},
        'pose': {'pose': {'position': {'x': position[0], 'y': position[1], 'z': position[2]},
                          'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}},
                 'covariance': [float(v) for v in covariance]},
    }


def status_of(stamp: int, state: Any | None, extended_state: Any | None) -> VehicleStatus:
    """The vehicle status of the latest /mavros/state and /mavros/extended_state (None: none).

    Without a /mavros/state the status is UNKNOWN, UNKNOWN (MAVROS says nothing yet).
    """
    landed = None if extended_state is None else int(extended_state.landed_state)
    flight, mission = (mavros_status(False, False, '') if state is None else mavros_status(
        bool(state.connected), bool(state.armed), str(state.mode), landed))
    return VehicleStatus(stamp, FRAME_ID, flight, mission, MAVROS_SOURCE)


def origin_of(text: str) -> px4.GeoOrigin | None:
    """The EKF origin of the ``origin`` parameter ('LAT,LON,ALT'; '': None, anchored)."""
    if not text.strip():
        return None
    try:
        values = [float(part) for part in text.split(',')]
        if len(values) != 3:
            raise ValueError(f'{len(values)} numbers')
        return px4.GeoOrigin(*values)
    except ValueError as err:
        raise ValueError(f"mavros_bridge origin {text!r} is not 'LAT,LON,ALT' on the globe "
                         f'({err})') from None
