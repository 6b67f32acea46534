"""The beliefs, GNSS fixes and statuses of a DataFlash log as bag messages, drops counted.

What ``ghost_import`` writes for an ArduPilot log: /state/nav from the primary EKF core
(``XKF1`` with ``XKQ``, the covariance from ``XKV1``/``XKV2``, the flags of ``XKF4``; EKF2:
``NKF*``), /observations from ``GPS``/``GPA`` of the receiver the EKF uses, /vehicle_status
from ``EV``, ``ARM`` and ``MODE``. Conventions: ghost_ardupilot.ekf; the frame conversion is
ghost_px4.convert's (ArduPilot states NED/FRD and [w, x, y, z] quaternions as PX4 does).
One cohesive job, hence one module: a log's rows in, the import's messages and counts out.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
import math
import re
from typing import Any

from ghost_ardupilot import ekf
from ghost_ardupilot.dataflash_read import DataflashLog
from ghost_core.contracts import VehicleStatus
from ghost_core.geometry import finite, ZERO3
from ghost_core.levels import FlightStatus, MissionStatus
from ghost_core.wire import to_msg_dict
from ghost_px4 import convert as px4
from ghost_px4 import live
from ghost_px4.errors import Px4SampleRejected
from ghost_px4.live import FRAME_ID
from ghost_px4.status import StatusReporter
from ghost_px4.ulog_streams import observation_dict, odometry_dict, RATE_TOLERANCE, Stream

__all__ = [
    'BELIEF_TYPES',
    'COPTER_MODES',
    'EkfLayout',
    'GNSS_TYPES',
    'STATUS_SOURCE',
    'STATUS_TYPES',
    'XKV_MAX_AGE_NS',
    'GpsDelay',
    'gps_delay',
    'import_beliefs',
    'import_fixes',
    'import_statuses',
]

#: The estimator messages read, EKF3 (4.1+ with a core field C; older: core 0 only) and EKF2.
BELIEF_TYPES = ('XKF1', 'XKF4', 'XKQ', 'XKQ1', 'XKV1', 'XKV2', 'XKFS',
                'NKF1', 'NKF4', 'NKQ', 'NKQ1', 'NKFS')
GNSS_TYPES = ('GPS', 'GPA', 'GPS2', 'GPA2', 'ORGN')
STATUS_TYPES = ('EV', 'ARM', 'MODE')

#: A belief takes the latest XKV1/XKV2 (about 2 Hz) of its core at or before it, if at most this
#: much older: the variances are carried forward, as a live system holds the last it received
#: (a reset's variance is never carried back to the beliefs before it). The beliefs before a
#: log's first XKV of that core (logging starts with the EKF already running) take that first
#: one if it is at most this far ahead. Otherwise a belief has no covariance (all zeros:
#: UNKNOWN), never a stale one.
XKV_MAX_AGE_NS = 1_000_000_000
#: A belief takes the attitude (XKQ) of its own core logged at most this long before it.
ATTITUDE_MAX_AGE_NS = 100_000_000
#: XKF4 flags older than this say nothing about a belief (it is then taken as unflagged).
FLAGS_MAX_AGE_NS = 1_000_000_000
#: VehicleStatus.source of a status read from an ArduPilot log.
STATUS_SOURCE = 'ardupilot_dataflash'


def _ns(time_us: float) -> int:
    return int(time_us) * 1000


@dataclass(frozen=True, slots=True)
class EkfLayout:
    """Which EKF the log's beliefs come from and the names of its messages."""

    generation: int  # 3 (XK*) or 2 (NK*)
    state: str
    status: str
    quaternion: str
    selection: str
    #: The messages carry the core (field C, ArduPilot 4.1+); else they are core 0's.
    per_core: bool
    variances: bool

    @classmethod
    def of(cls, log: DataflashLog) -> EkfLayout | None:
        """The layout of the EKF ArduPilot used (AHRS_EKF_TYPE), else the one logged."""
        preferred = {2: ('NK', 'XK'), 3: ('XK', 'NK')}.get(
            int(log.parameters.get('AHRS_EKF_TYPE', 3)), ('XK', 'NK'))
        for prefix in preferred:
            state = f'{prefix}F1'
            rows = log.rows(state)
            if not rows:
                continue
            per_core = 'C' in rows[0]
            quaternion = f'{prefix}Q' if per_core else f'{prefix}Q1'
            if not log.rows(quaternion):
                quaternion = f'{prefix}Q1' if per_core else f'{prefix}Q'
            generation = 3 if prefix == 'XK' else 2
            return cls(generation, state, f'{prefix}F4', quaternion, f'{prefix}FS', per_core,
                       generation == 3 and bool(log.rows('XKV1')))
        return None

    @property
    def label(self) -> str:
        """'EKF3' or 'EKF2'."""
        return f'EKF{self.generation}'


def _core(row: Mapping[str, Any]) -> int:
    return int(row.get('C', 0))


class _Timeline:
    """Rows of one message, per core, by time: the latest at or before a time."""

    def __init__(self, rows: Sequence[Mapping[str, Any]], per_core: bool = True) -> None:
        self._times: dict[int, list[int]] = {}
        self._rows: dict[int, list[Mapping[str, Any]]] = {}
        for row in rows:
            core = _core(row) if per_core else 0
            times = self._times.setdefault(core, [])
            t = _ns(row['TimeUS'])
            if times and t < times[-1]:
                continue  # out of order: not a row of this timeline
            times.append(t)
            self._rows.setdefault(core, []).append(row)

    def at(self, core: int, stamp_ns: int, max_age_ns: int
           ) -> tuple[int, Mapping[str, Any]] | None:
        """The latest row of ``core`` at or before ``stamp_ns``, at most ``max_age_ns`` older."""
        times = self._times.get(core)
        if not times:
            return None
        index = bisect_right(times, stamp_ns) - 1
        if index < 0 or stamp_ns - times[index] > max_age_ns:
            return None
        return times[index], self._rows[core][index]

    def held(self, core: int, stamp_ns: int, max_age_ns: int
             ) -> tuple[int, Mapping[str, Any]] | None:
        """``at``; before the first row of ``core``, that row if at most ``max_age_ns`` ahead."""
        found = self.at(core, stamp_ns, max_age_ns)
        times = self._times.get(core)
        if found is None and times and stamp_ns < times[0] <= stamp_ns + max_age_ns:
            return times[0], self._rows[core][0]
        return found


class _Primary:
    """The primary core at a time: PI of the latest status row (XKF4/NKF4) at or before it."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self._times = [_ns(row['TimeUS']) for row in rows if 'PI' in row]
        self._cores = [int(row['PI']) for row in rows if 'PI' in row]

    def at(self, stamp_ns: int) -> int:
        index = bisect_right(self._times, stamp_ns) - 1
        if index < 0:
            return self._cores[0] if self._cores else 0
        return self._cores[index] if self._cores[index] >= 0 else 0


_NO_ATTITUDE = 'no XKQ attitude of the same core within 100 ms before'
_BAD_ATTITUDE = 'attitude quaternion not finite or zero'
_NO_VARIANCES = {
    2: 'EKF2 logs no state variances (NKF*)',
    3: 'EKF3 log without XKV1/XKV2 (no state variances)',
}
_STALE_VARIANCES = 'no XKV1/XKV2 of the primary core within 1 s before'


@dataclass(slots=True)
class BeliefStream(Stream):
    """The beliefs, and why a belief has no covariance (per reason)."""

    no_covariance: Counter[str] = field(default_factory=Counter)
    #: |belief stamp - XKV time| (ns) of every belief that has a covariance, for the summary.
    variance_ages: list[int] = field(default_factory=list)
    cores: Counter[int] = field(default_factory=Counter)
    #: State rows of the other cores (not beliefs: Ghost judges the primary core).
    other_cores: int = 0
    #: Beliefs with at least one block the EKF flags invalid (``invalid`` counts the reasons).
    flagged: int = 0


def _variances(v1: Mapping[str, Any], v2: Mapping[str, Any] | None) -> list[float]:
    values = [float(v1[f'V{k:02d}']) for k in range(12)]
    if v2 is not None:
        values += [float(v2[f'V{k:02d}']) for k in range(12, 24)]
    return values


def _covariance(layout: EkfLayout, xkv: tuple[_Timeline, _Timeline] | None, core: int,
                stamp: int, q: Sequence[float],
                stream: BeliefStream) -> ekf.StateCovariances | None:
    """The belief's covariance from the latest XKV of its core, or None (counted)."""
    if xkv is None:
        stream.no_covariance[_NO_VARIANCES[layout.generation]] += 1
        return None
    found = xkv[0].held(core, stamp, XKV_MAX_AGE_NS)
    if found is None:
        stream.no_covariance[_STALE_VARIANCES] += 1
        return None
    time_ns, v1 = found
    v2 = xkv[1].at(core, time_ns, 0)
    try:
        covariance = ekf.state_covariances(_variances(v1, None if v2 is None else v2[1]), q)
    except ValueError:
        stream.no_covariance['XKV variances not finite or negative'] += 1
        return None
    stream.variance_ages.append(abs(stamp - time_ns))
    return covariance


def _odometry(row: Mapping[str, Any], q: tuple[float, float, float, float],
              covariance: ekf.StateCovariances | None,
              flags: ekf.InvalidBlocks) -> px4.Px4Odometry:
    position = (float(row['PN']), float(row['PE']), float(row['PD']))
    velocity = (float(row['VN']), float(row['VE']), float(row['VD']))
    live.require_belief(position, q)
    velocity_ok = finite(*velocity)
    return px4.Px4Odometry(
        position_ned=position, q_wxyz=q,
        velocity=velocity if velocity_ok else (0.0, 0.0, 0.0),
        velocity_frame=px4.Px4Frame.NED,
        pose_covariance=(px4.pose_covariance(covariance.position, covariance.rotation)
                         if covariance is not None else (0.0,) * 36),
        velocity_covariance=covariance.velocity if covariance is not None else ZERO3,
        position_valid=not flags.position, velocity_valid=not flags.velocity and velocity_ok)


def _beliefs(log: DataflashLog, layout: EkfLayout, stream: BeliefStream
             ) -> Iterator[tuple[int, px4.Px4Odometry, ekf.InvalidBlocks]]:
    """Every state row of the primary core that carries a belief, flagged by the EKF."""
    primary = _Primary(log.rows(layout.status))
    quaternions = _Timeline(log.rows(layout.quaternion), layout.per_core)
    statuses = _Timeline(log.rows(layout.status), layout.per_core)
    xkv = ((_Timeline(log.rows('XKV1')), _Timeline(log.rows('XKV2')))
           if layout.variances else None)
    last: int | None = None
    for row in log.rows(layout.state):
        stamp = _ns(row['TimeUS'])
        core = _core(row) if layout.per_core else 0
        if layout.per_core and core != primary.at(stamp):
            stream.other_cores += 1
            continue
        stream.samples += 1
        if last is not None and stamp <= last:
            stream.drop('timestamp not strictly increasing')
            continue
        attitude = quaternions.at(core, stamp, ATTITUDE_MAX_AGE_NS)
        if attitude is None:
            stream.drop(_NO_ATTITUDE)
            continue
        a = attitude[1]
        q = (float(a['Q1']), float(a['Q2']), float(a['Q3']), float(a['Q4']))
        try:
            px4.px4_quaternion_to_ros(q)
        except ValueError:
            stream.drop(_BAD_ATTITUDE)
            continue
        status = statuses.at(core, stamp, FLAGS_MAX_AGE_NS)
        flags = (ekf.InvalidBlocks() if status is None else ekf.invalid_blocks(
            int(status[1].get('SS', 0)), int(status[1].get('TS', 0)),
            int(status[1].get('FS', 0))))
        covariance = _covariance(layout, xkv, core, stamp, q, stream)
        try:
            sample = _odometry(row, q, covariance, flags)
        except Px4SampleRejected as err:
            stream.drop(str(err))
            continue
        last = stamp
        stream.cores[core] += 1
        yield stamp, sample, flags


def _attitude_invalid(ros: px4.RosOdometry) -> px4.RosOdometry:
    """``ros`` with its rotation block flagged invalid: +inf variances, no cross terms.

    Set after the frame conversion, as convert.odometry_to_ros does for a position or velocity
    block PX4 flags invalid (an infinite variance rotated between frames would give NaN).
    """
    pose = list(ros.pose_covariance)
    for row in range(6):
        for col in range(3, 6):
            pose[row * 6 + col] = pose[col * 6 + row] = 0.0
    for k in range(3, 6):
        pose[k * 7] = px4.INVALID_VARIANCE
    return replace(ros, pose_covariance=tuple(pose))


def import_beliefs(log: DataflashLog, layout: EkfLayout, rate_hz: float | None) -> BeliefStream:
    """The beliefs of the primary core, decimated to ``rate_hz`` if given."""
    stream = BeliefStream(f'{layout.state} (primary core)')
    min_step = None if rate_hz is None else int(round(RATE_TOLERANCE * 1e9 / rate_hz))
    last_kept: int | None = None
    for stamp, sample, flags in _beliefs(log, layout, stream):
        if min_step is not None and last_kept is not None and stamp < last_kept + min_step:
            stream.decimated += 1
            continue
        last_kept = stamp
        ros = live.ros_odometry(sample)
        if flags.orientation:
            ros = _attitude_invalid(ros)
        reasons = [reason for reason in (flags.position, flags.velocity, flags.orientation)
                   if reason]
        for reason in reasons:
            stream.invalid[reason] += 1
        stream.flagged += bool(reasons)
        if flags.position:
            stream.position_invalid += 1
        if sample.pose_covariance[21:36:7] == (0.0, 0.0, 0.0):
            stream.no_orientation_uncertainty['no state variances'] += 1
        else:
            stream.orientation_sources['XKV1 V00-V03 (quaternion states)'] += 1
        stream.messages.append((stamp, stamp, odometry_dict(stamp, ros)))
    return stream


# --- fixes ---

@dataclass(frozen=True, slots=True)
class GpsDelay:
    """The GNSS measurement delay the fixes are stamped with, and where it comes from."""

    ns: int
    source: str


#: u-blox hardware generations (MON-VER hwVersion, as ArduPilot logs "u-blox N HW: ...") whose
#: lag ArduPilot's driver states as 120 ms (AP_GPS_UBLOX::get_lag: 7, M8, F9, M9, M10).
_UBLOX_120MS = ('00070000', '00080000', '00190000', '000A0000')
#: ArduPilot's lag for a receiver of unknown type or generation (GPS_WORST_LAG_SEC).
_WORST_LAG_MS = 220.0


def gps_delay(log: DataflashLog, instance: int, given_ms: float | None) -> GpsDelay:
    """The delay ArduPilot compensates the fixes of ``instance`` for (AP_GPS::get_lag).

    ``--gps-delay-ms``; else ``GPS{n}_DELAY_MS`` (4.5+) or ``GPS_DELAY_MS``/``GPS_DELAY_MS2``
    when > 0 (the user's value, which ArduPilot always uses); else the driver's own: a SITL
    log's simulated lag ``SIM_GPS_LAG_MS``, a u-blox whose hardware the log names (7, M8, F9,
    M9, M10: 120 ms; older: 220 ms); else ArduPilot's worst case, 220 ms.
    """
    if given_ms is not None:
        return GpsDelay(int(round(given_ms * 1e6)), f'{given_ms:g} ms (--gps-delay-ms)')
    n = instance + 1
    names = (f'GPS{n}_DELAY_MS', 'GPS_DELAY_MS' if n == 1 else f'GPS_DELAY_MS{n}')
    for name in names:
        value = log.parameters.get(name)
        if value is not None and math.isfinite(value) and value > 0:
            return GpsDelay(int(round(value * 1e6)), f'{value:g} ms ({name})')
    stated = next((f'{name}={log.parameters[name]:g}' for name in names
                   if name in log.parameters), 'no GPS delay parameter')
    sim = log.parameters.get('SIM_GPS_LAG_MS' if n == 1 else f'SIM_GPS{n}_LAG_MS')
    if sim is not None and math.isfinite(sim) and sim >= 0:
        return GpsDelay(int(round(sim * 1e6)),
                        f"{sim:g} ms (SITL's simulated lag SIM_GPS_LAG_MS; {stated})")
    for _, text in log.texts():
        found = re.match(rf'u-blox {n} HW: (\w+)', text)
        if found is not None:
            ms = 120.0 if found[1] in _UBLOX_120MS else _WORST_LAG_MS
            return GpsDelay(int(ms * 1e6), f"{ms:g} ms (the u-blox driver's lag for HW "
                                           f'{found[1]}; {stated})')
    return GpsDelay(int(_WORST_LAG_MS * 1e6),
                    f"{_WORST_LAG_MS:g} ms (ArduPilot's lag for a receiver of unknown type; "
                    f'{stated})')


def _gnss_rows(log: DataflashLog) -> list[tuple[int, Mapping[str, Any], Mapping[str, Any] | None]]:
    """(instance, GPS row, its GPA row or None) of every receiver, in log order."""
    accuracy: dict[tuple[int, int], Mapping[str, Any]] = {}
    for name, default in (('GPA', 0), ('GPA2', 1)):
        for row in log.rows(name):
            accuracy[(int(row.get('I', default)), int(row['TimeUS']))] = row
    found = []
    for name, default in (('GPS', 0), ('GPS2', 1)):
        for row in log.rows(name):
            instance = int(row.get('I', default))
            found.append((instance, row, accuracy.get((instance, int(row['TimeUS'])))))
    return sorted(found, key=lambda item: int(item[1]['TimeUS']))


@dataclass(frozen=True, slots=True)
class _Height:
    """The EKF's height source per active source set, decided by the log's parameters."""

    generation: int
    parameters: Mapping[str, float]

    def at(self, source_set: int) -> tuple[str | None, float | None, ekf.HeightSource]:
        return ekf.height_source(self.parameters, self.generation, source_set)


@dataclass(slots=True)
class FixStream(Stream):
    """The fixes, their instances, and the height sources that decided their vertical axis."""

    instances: Counter[int] = field(default_factory=Counter)
    heights: Counter[str] = field(default_factory=Counter)


_NO_ORIGIN = 'no EKF origin (no ORGN type 0 logged before)'
_NO_ACCURACY = 'no GPA accuracy (HAcc/VAcc) logged with it'


def _origins(log: DataflashLog) -> tuple[list[int], list[px4.GeoOrigin]]:
    times, origins = [], []
    for row in log.rows('ORGN'):
        if int(row.get('Type', -1)) != 0:
            continue
        try:
            origins.append(px4.GeoOrigin(float(row['Lat']), float(row['Lng']),
                                         float(row['Alt'])))
        except ValueError:
            continue
        times.append(_ns(row['TimeUS']))
    return times, origins


def import_fixes(log: DataflashLog, layout: EkfLayout | None,
                 delay: Mapping[int, GpsDelay]) -> FixStream:
    """Every GNSS sample of the receiver the EKF uses (XKFS.GI), in the EKF's frame (ENU)."""
    stream = FixStream('GPS/GPA')
    primary = _Primary(log.rows(layout.status)) if layout is not None else _Primary([])
    per_core = layout is not None and layout.per_core
    selection = _Timeline(log.rows(layout.selection) if layout else [], per_core)
    origin_times, origins = _origins(log)
    height = _Height(layout.generation if layout else 3, log.parameters)
    last: dict[int, int] = {}
    for instance, row, accuracy in _gnss_rows(log):
        log_ns = _ns(row['TimeUS'])
        core = primary.at(log_ns) if per_core else 0
        chosen = selection.at(core, log_ns, 10**18)
        used = int(chosen[1].get('GI', 0)) if chosen is not None else 0
        if instance != used:
            continue
        stream.samples += 1
        if instance in last and log_ns <= last[instance]:
            stream.drop('timestamp not strictly increasing')
            continue
        if accuracy is None:
            stream.drop(_NO_ACCURACY)
            continue
        hacc, vacc = float(accuracy.get('HAcc', math.nan)), float(accuracy.get('VAcc', math.nan))
        status = int(row.get('Status', 0))
        problem = px4.fix_problem(status, float(row['Lat']), float(row['Lng']),
                                  float(row['Alt']), hacc, vacc)
        if problem is not None:
            stream.drop(problem.replace('fix_type', 'GPS.Status').replace(
                'eph/epv', 'GPA.HAcc/VAcc'))
            continue
        stamp = log_ns - delay[instance].ns
        if stamp < 0:
            stream.drop(live.BEFORE_BOOT)
            continue
        index = bisect_right(origin_times, stamp) - 1
        if index < 0:
            stream.drop(_NO_ORIGIN)
            continue
        origin = origins[index]
        north, east = ekf.distance_ne(origin.lat_deg, origin.lon_deg, float(row['Lat']),
                                      float(row['Lng']))
        source_set = int(chosen[1].get('SS', 0)) if chosen is not None else 0
        parameter, value, source = height.at(source_set)
        measured = source is ekf.GPS_HEIGHT
        stream.heights[f'{parameter}={value:g} ({source.value})' if parameter else
                       'height source not in the parameters'] += 1
        covariance = px4.fix_covariance(hacc, vacc, measured)
        fix = live.Fix(stamp, (east, north, float(row['Alt']) - origin.alt_m),
                       px4.observation_pose_covariance(covariance))
        last[instance] = log_ns
        stream.instances[instance] += 1
        stream.messages.append((stamp, log_ns, observation_dict(fix)))
    return stream


# --- vehicle status ---

_M = MissionStatus
#: ArduCopter's mode numbers (ArduCopter/mode.h, Mode::Number) -> mission status.
COPTER_MODES: Mapping[int, tuple[str, MissionStatus]] = {
    0: ('STABILIZE', _M.NO_MISSION), 1: ('ACRO', _M.NO_MISSION),
    2: ('ALT_HOLD', _M.NO_MISSION), 3: ('AUTO', _M.ON_MISSION), 4: ('GUIDED', _M.OFFBOARD),
    5: ('LOITER', _M.NO_MISSION), 6: ('RTL', _M.RETURNING),
    7: ('CIRCLE', _M.OTHER_AUTONOMOUS), 9: ('LAND', _M.LANDING), 11: ('DRIFT', _M.NO_MISSION),
    13: ('SPORT', _M.NO_MISSION), 14: ('FLIP', _M.NO_MISSION), 15: ('AUTOTUNE', _M.NO_MISSION),
    16: ('POSHOLD', _M.NO_MISSION), 17: ('BRAKE', _M.HOLDING),
    18: ('THROW', _M.OTHER_AUTONOMOUS), 19: ('AVOID_ADSB', _M.OTHER_AUTONOMOUS),
    20: ('GUIDED_NOGPS', _M.OFFBOARD), 21: ('SMART_RTL', _M.RETURNING),
    22: ('FLOWHOLD', _M.NO_MISSION), 23: ('FOLLOW', _M.OTHER_AUTONOMOUS),
    24: ('ZIGZAG', _M.OTHER_AUTONOMOUS), 25: ('SYSTEMID', _M.NO_MISSION),
    26: ('AUTOROTATE', _M.OTHER_AUTONOMOUS), 27: ('AUTO_RTL', _M.RETURNING),
    28: ('TURTLE', _M.NO_MISSION),
}
#: EV ids (AP_Logger.h, LogEvent) that set the arming and landed state.
_ARMED, _DISARMED, _LAND_COMPLETE, _NOT_LANDED = 10, 11, 18, 28


def _status_changes(log: DataflashLog) -> list[tuple[int, str, object]]:
    changes: list[tuple[int, str, object]] = []
    for row in log.rows('ARM'):
        changes.append((_ns(row['TimeUS']), 'armed', bool(row.get('ArmState', 0))))
    for row in log.rows('EV'):
        event = int(row.get('Id', -1))
        if event in (_ARMED, _DISARMED):
            changes.append((_ns(row['TimeUS']), 'armed', event == _ARMED))
        elif event in (_LAND_COMPLETE, _NOT_LANDED):
            changes.append((_ns(row['TimeUS']), 'landed', event == _LAND_COMPLETE))
    for row in log.rows('MODE'):
        changes.append((_ns(row['TimeUS']), 'mode', int(row.get('ModeNum', row.get('Mode', -1)))))
    return sorted(changes, key=lambda change: change[0])


def _status(state: Mapping[str, object], copter: bool, stamp: int) -> VehicleStatus:
    armed, landed, mode = state.get('armed'), state.get('landed'), state.get('mode')
    if armed is None:
        flight = FlightStatus.UNKNOWN
    elif not armed:
        flight = FlightStatus.DISARMED
    elif landed is None:
        flight = FlightStatus.ARMED
    else:
        flight = FlightStatus.ARMED_ON_GROUND if landed else FlightStatus.IN_AIR
    mission = MissionStatus.UNKNOWN
    if copter and isinstance(mode, int) and mode in COPTER_MODES:
        mission = COPTER_MODES[mode][1]
    return VehicleStatus(stamp, FRAME_ID, flight, mission, STATUS_SOURCE)


def import_statuses(log: DataflashLog, beliefs: Sequence[tuple[int, int, object]]
                    ) -> list[tuple[int, int, dict[str, object]]]:
    """/vehicle_status before each belief it is due for (the first, a change, a heartbeat).

    Armed from ARM and EV ARMED/DISARMED, landed from EV LAND_COMPLETE/NOT_LANDED, the mission
    from an ArduCopter MODE (another vehicle's modes are UNKNOWN: never guessed). Empty when
    the log says none of them.
    """
    changes = _status_changes(log)
    if not changes:
        return []
    copter = log.vehicle() == 'ArduCopter'
    reporter = StatusReporter()
    state: dict[str, object] = {}
    index = 0
    out: list[tuple[int, int, dict[str, object]]] = []
    for stamp_ns, log_time_ns, _ in beliefs:
        while index < len(changes) and changes[index][0] <= stamp_ns:
            _, key, value = changes[index]
            state[key] = value
            if key == 'armed' and not value:
                state.pop('landed', None)
            index += 1
        status = _status(state, copter, stamp_ns)
        if reporter.due(status):
            out.append((stamp_ns, log_time_ns, to_msg_dict(status)))
    return out
