"""ArduPilot's EKF as it logs itself: its status bits, its state variances, its local frame.

Pure (no pymavlink, no numpy): plain numbers in, plain numbers out, each rule from ArduPilot's
own source, never PX4's:

- ``XKF4``/``NKF4`` ``SS`` is ``nav_filter_status`` (libraries/AP_NavEKF/AP_Nav_Common.h,
  ``NavFilterStatusBit``), ``TS`` the timeout bits of ``getFilterTimeouts`` and ``FS`` the fault
  bits of ``getFilterFaults`` (AP_NavEKF3_Outputs.cpp). ``invalid_blocks`` turns them into
  the estimator's own "invalid", the reasons the importer counts.
- ``XKV1``/``XKV2`` ``V00``..``V23`` are the diagonal of the EKF3 covariance (states 0-3
  quaternion, 4-6 velocity NED, 7-9 position NED, then the biases and the magnetic field:
  AP_NavEKF3_core.h). ``state_covariances`` gives the position, velocity and rotation
  blocks about the NED axes.
- ``distance_ne`` is ``Location::get_distance_NE`` (AP_Common/Location.cpp), with which EKF3
  places a GNSS fix about its origin (readGpsData).
- ``height_source``: ``EK3_SRCn_POSZ`` (the active source set) or ``EK2_ALT_SOURCE``.

One cohesive job, hence one module: ArduPilot's estimator conventions in Ghost's terms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import enum
import math

from ghost_core.geometry import diagonal, Matrix3
from ghost_px4 import convert

__all__ = [
    'FAULT_BITS',
    'GPS_HEIGHT',
    'LATLON_TO_M',
    'SOLUTION_BITS',
    'TIMEOUT_BITS',
    'HeightSource',
    'InvalidBlocks',
    'StateCovariances',
    'bit_names',
    'distance_ne',
    'height_source',
    'invalid_blocks',
    'state_covariances',
]

#: ``nav_filter_status`` bits (AP_Nav_Common.h, NavFilterStatusBit): bit -> ArduPilot's name.
SOLUTION_BITS: Mapping[int, str] = {
    0: 'attitude', 1: 'horiz_vel', 2: 'vert_vel', 3: 'horiz_pos_rel', 4: 'horiz_pos_abs',
    5: 'vert_pos', 6: 'terrain_alt', 7: 'const_pos_mode', 8: 'pred_horiz_pos_rel',
    9: 'pred_horiz_pos_abs', 10: 'takeoff_detected', 11: 'takeoff', 12: 'touchdown',
    13: 'using_gps', 14: 'gps_glitching', 15: 'gps_quality_good', 16: 'initalized',
    17: 'rejecting_airspeed', 18: 'dead_reckoning',
}
#: ``getFilterTimeouts`` bits (XKF4.TS): bit -> what timed out.
TIMEOUT_BITS: Mapping[int, str] = {
    0: 'position measurement', 1: 'velocity measurement', 2: 'height measurement',
    3: 'magnetometer measurement', 4: 'airspeed measurement', 5: 'drag measurement',
}
#: ``getFilterFaults`` bits (XKF4.FS) whose meaning every EKF3 and EKF2 generation shares.
#: The conditioning bits above them moved between releases (an airspeed bit came and went), so
#: they are counted as a number, never named or judged.
FAULT_BITS: Mapping[int, str] = {0: 'quaternions are NaN', 1: 'velocities are NaN'}

_POSITION_OK = ('horiz_pos_rel', 'horiz_pos_abs')
_SS = {name: bit for bit, name in SOLUTION_BITS.items()}


def bit_names(value: int, names: Mapping[int, str]) -> tuple[str, ...]:
    """The names of the bits set in ``value`` (unnamed bits as 'bit N')."""
    return tuple(names.get(bit, f'bit {bit}') for bit in range(32) if int(value) >> bit & 1)


def _set(value: int, name: str) -> bool:
    return bool(int(value) >> _SS[name] & 1)


@dataclass(frozen=True, slots=True)
class InvalidBlocks:
    """Why the EKF's bits mark a belief's position, velocity or attitude invalid (empty: valid)."""

    position: str = ''
    velocity: str = ''
    orientation: str = ''


def invalid_blocks(solution: int, timeouts: int, faults: int) -> InvalidBlocks:
    """The estimator's own "invalid" from one XKF4 (or NKF4) sample of the primary core.

    Position invalid (first reason that applies): NaN states (FS bits 0-1); GPS glitching
    (SS ``gps_glitching``); dead reckoning (SS ``dead_reckoning``); position not usable (SS:
    neither ``horiz_pos_abs`` nor ``horiz_pos_rel``, or ``const_pos_mode``, or no
    ``vert_pos``); a position or height measurement timeout (TS bits 0, 2). Velocity invalid:
    NaN states; SS without ``horiz_vel`` or ``vert_vel``; a velocity timeout (TS bit 1).
    Orientation invalid: NaN quaternions (FS bit 0); SS without ``attitude``, which EKF3 and
    EKF2 set only while the filter is healthy with its tilt and yaw aligned
    (``updateFilterStatus``): ArduPilot's own test of a usable attitude, which never looks at
    the attitude variance. ArduCopter's own position check is the same test
    (``horiz_pos_abs`` and not ``const_pos_mode`` once armed). Airspeed, drag and
    magnetometer timeouts and conditioning faults are not about position, velocity or
    attitude and judge nothing here.
    """
    nan = bit_names(int(faults) & 0b11, FAULT_BITS)
    position = ''
    velocity = ''
    if nan:
        position = velocity = f'EKF fault: {", ".join(nan)} (XKF4.FS)'
    elif _set(solution, 'gps_glitching'):
        position = 'GPS glitching (XKF4.SS gps_glitching)'
    elif _set(solution, 'dead_reckoning'):
        position = 'dead reckoning (XKF4.SS dead_reckoning)'
    elif (not any(_set(solution, name) for name in _POSITION_OK)
          or _set(solution, 'const_pos_mode') or not _set(solution, 'vert_pos')):
        position = ('position not usable (XKF4.SS: no horiz_pos_abs/rel, const_pos_mode or '
                    'no vert_pos)')
    elif int(timeouts) & 0b101:
        position = ('position or height measurement timeout (XKF4.TS '
                    + ', '.join(bit_names(int(timeouts) & 0b101, TIMEOUT_BITS)) + ')')
    if not velocity:
        if not (_set(solution, 'horiz_vel') and _set(solution, 'vert_vel')):
            velocity = 'velocity not usable (XKF4.SS: no horiz_vel or vert_vel)'
        elif int(timeouts) & 0b10:
            velocity = 'velocity measurement timeout (XKF4.TS)'
    orientation = ''
    if int(faults) & 0b1:
        orientation = 'EKF fault: quaternions are NaN (XKF4.FS)'
    elif not _set(solution, 'attitude'):
        orientation = 'attitude not usable (XKF4.SS: no attitude)'
    return InvalidBlocks(position, velocity, orientation)


@dataclass(frozen=True, slots=True)
class StateCovariances:
    """The blocks of one XKV1/XKV2 pair about the NED axes; ``rotation`` None: not stated."""

    position: Matrix3
    velocity: Matrix3
    rotation: Matrix3 | None


def state_covariances(variances: Sequence[float], q_wxyz: Sequence[float]) -> StateCovariances:
    """Position, velocity and rotation covariance (NED) of the EKF3 state variances V00..V23.

    ``variances`` are at least states 0-9 (XKV1's V00..V09): quaternion 0-3, velocity NED 4-6,
    position NED 7-9. The covariance is the diagonal the log carries (no cross terms). The
    quaternion variances become a rotation-vector covariance about NED with
    ``convert.attitude_covariance_ned`` (EKF3 keeps the same four quaternion states as EKF2
    of PX4 1.14 did): right at every heading, var(θ_i) = 4 var(q_i) only facing north.
    ValueError for a variance that is not finite or negative, or a bad quaternion.
    """
    if len(variances) < 10:
        raise ValueError(f'EKF3 state variances 0-9 expected, got {len(variances)}')
    values = tuple(float(v) for v in variances[:10])
    if not all(math.isfinite(v) and v >= 0.0 for v in values):
        raise ValueError(f'EKF3 state variances {values!r} are not all finite and >= 0')
    return StateCovariances(diagonal(values[7:10]), diagonal(values[4:7]),
                            convert.attitude_covariance_ned(q_wxyz, values[0:4]))


#: ArduPilot's LATLON_TO_M (AP_Common/Location.h): metres per 1e-7 degree on its sphere of
#: radius 6378100 m.
LATLON_TO_M = 0.011131884502145034


def distance_ne(origin_lat_deg: float, origin_lon_deg: float, lat_deg: float,
                lon_deg: float) -> tuple[float, float]:
    """(north, east) in metres of a point from the origin: ``Location::get_distance_NE``.

    ArduPilot's flat-earth rule: north = Δlat · LATLON_TO_M, east = Δlon · LATLON_TO_M ·
    cos(mean latitude) (its ``longitude_scale``, at least 0.01), Δlon wrapped to ±180°.
    EKF3 places every GNSS fix about its origin this way, so the fix is in the EKF's own frame.
    """
    d_lat = (float(lat_deg) - float(origin_lat_deg)) * 1e7
    d_lon = (float(lon_deg) - float(origin_lon_deg) + 180.0) % 360.0 - 180.0
    scale = max(0.01, math.cos(math.radians((float(lat_deg) + float(origin_lat_deg)) / 2.0)))
    return d_lat * LATLON_TO_M, d_lon * 1e7 * LATLON_TO_M * scale


class HeightSource(enum.Enum):
    """What the EKF's height follows (EK3_SRCn_POSZ / EK2_ALT_SOURCE)."""

    NONE = 'none'
    BARO = 'barometric'
    RANGE = 'range finder'
    GNSS = 'GNSS'
    BEACON = 'beacon'
    EXTERNAL_NAV = 'external navigation'
    UNKNOWN = 'unknown'


#: EK3_SRCn_POSZ codes (AP_NavEKF/AP_NavEKF_Source.h, SourceZ).
_EK3_POSZ = {0: HeightSource.NONE, 1: HeightSource.BARO, 2: HeightSource.RANGE,
             3: HeightSource.GNSS, 4: HeightSource.BEACON, 6: HeightSource.EXTERNAL_NAV}
#: EK2_ALT_SOURCE codes (AP_NavEKF2.cpp).
_EK2_ALT = {0: HeightSource.BARO, 1: HeightSource.RANGE, 2: HeightSource.GNSS,
            3: HeightSource.BEACON, 4: HeightSource.EXTERNAL_NAV}
#: The HeightSource whose fix vertical axis checks the same quantity as the EKF's height.
GPS_HEIGHT = HeightSource.GNSS


def height_source(parameters: Mapping[str, float], ekf: int,
                  source_set: int = 0) -> tuple[str | None, float | None, HeightSource]:
    """(parameter, value, source) of the EKF's height source.

    EKF3 ``EK3_SRC{n}_POSZ``, EKF2 ``EK2_ALT_SOURCE`` (``ekf`` 3 or 2; ``source_set`` 0-2 is
    XKFS.SS, EKF3's active source set).
    EKF3 logs older than the source sets (before 4.1) state ``EK3_ALT_SOURCE`` with EKF2's
    codes. A missing or unknown code is UNKNOWN: the fix's vertical axis is then not compared.
    """
    candidates: tuple[tuple[str, Mapping[int, HeightSource]], ...] = (
        ((f'EK3_SRC{int(source_set) + 1}_POSZ', _EK3_POSZ), ('EK3_ALT_SOURCE', _EK2_ALT))
        if ekf == 3 else (('EK2_ALT_SOURCE', _EK2_ALT),))
    for parameter, codes in candidates:
        if parameter in parameters:
            value = parameters[parameter]
            source = HeightSource.UNKNOWN
            if isinstance(value, (int, float)) and float(value).is_integer():
                source = codes.get(int(value), HeightSource.UNKNOWN)
            return parameter, float(value), source
    return None, None, HeightSource.UNKNOWN
