"""ArduPilot's own events in a DataFlash log (ERR, EV, MODE, MSG), and its EKF/GPS limits.

Decoded with ArduPilot's enums (libraries/AP_Logger/AP_Logger.h: LogErrorSubsystem,
LogErrorCode, LogEvent; ArduCopter/mode.h: Mode::Number), never PX4's. An event is
``safety`` when ArduPilot acts on a degraded position or estimator (an EKF failsafe, an EKF
variance check, a GPS glitch, a dead-reckoning failsafe, GPS lost): what Ghost's lead time is
measured against. Battery, radio, GCS and fence failsafes are listed, not credited.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any

from ghost_ardupilot.dataflash_read import DataflashLog, load_dataflash
from ghost_ardupilot.dataflash_streams import COPTER_MODES

__all__ = [
    'ARDUPILOT_LIMITS',
    'ERROR_SUBSYSTEMS',
    'EVENT_IDS',
    'EVENT_KINDS',
    'EVENT_TYPES',
    'ArduPilotEvent',
    'ArduPilotLimits',
    'ardupilot_events',
    'ardupilot_limits',
    'error_name',
    'load_ardupilot_events',
]

#: The kinds of ArduPilotEvent: the DataFlash message each comes from.
EVENT_KINDS = ('error', 'event', 'mode', 'message')
#: The messages ``ardupilot_events`` reads.
EVENT_TYPES = ('ERR', 'EV', 'MODE')

#: LogErrorSubsystem (AP_Logger.h).
ERROR_SUBSYSTEMS: Mapping[int, str] = {
    1: 'MAIN', 2: 'RADIO', 3: 'COMPASS', 4: 'OPTFLOW', 5: 'FAILSAFE_RADIO', 6: 'FAILSAFE_BATT',
    7: 'FAILSAFE_GPS', 8: 'FAILSAFE_GCS', 9: 'FAILSAFE_FENCE', 10: 'FLIGHT_MODE', 11: 'GPS',
    12: 'CRASH_CHECK', 13: 'FLIP', 14: 'AUTOTUNE', 15: 'PARACHUTES', 16: 'EKFCHECK',
    17: 'FAILSAFE_EKFINAV', 18: 'BARO', 19: 'CPU', 20: 'FAILSAFE_ADSB', 21: 'TERRAIN',
    22: 'NAVIGATION', 23: 'FAILSAFE_TERRAIN', 24: 'EKF_PRIMARY', 25: 'THRUST_LOSS_CHECK',
    26: 'FAILSAFE_SENSORS', 27: 'FAILSAFE_LEAK', 28: 'PILOT_INPUT', 29: 'FAILSAFE_VIBE',
    30: 'INTERNAL_ERROR', 31: 'FAILSAFE_DEADRECKON',
}
#: LogErrorCode, per subsystem where the code means something of its own (AP_Logger.h); the
#: general codes 0 ERROR_RESOLVED, 1 FAILED_TO_INITIALISE, 4 UNHEALTHY otherwise.
_CODES: Mapping[str, Mapping[int, str]] = {
    'RADIO': {0: 'ERROR_RESOLVED', 2: 'RADIO_LATE_FRAME'},
    'MAIN': {1: 'MAIN_INS_DELAY'},
    'CRASH_CHECK': {1: 'CRASH_CHECK_CRASH', 2: 'CRASH_CHECK_LOSS_OF_CONTROL'},
    'FLIP': {2: 'FLIP_ABANDONED'},
    'TERRAIN': {2: 'MISSING_TERRAIN_DATA'},
    'NAVIGATION': {2: 'FAILED_TO_SET_DESTINATION', 3: 'RESTARTED_RTL', 4: 'FAILED_CIRCLE_INIT',
                   5: 'DEST_OUTSIDE_FENCE', 6: 'RTL_MISSING_RNGFND'},
    'INTERNAL_ERROR': {1: 'INTERNAL_ERRORS_DETECTED'},
    'PARACHUTES': {2: 'PARACHUTE_TOO_LOW', 3: 'PARACHUTE_LANDED'},
    'EKFCHECK': {0: 'EKFCHECK_VARIANCE_CLEARED', 2: 'EKFCHECK_BAD_VARIANCE'},
    'BARO': {2: 'BARO_GLITCH', 3: 'BAD_DEPTH'},
    'GPS': {0: 'ERROR_RESOLVED', 2: 'GPS_GLITCH'},
}
_GENERAL = {0: 'ERROR_RESOLVED', 1: 'FAILED_TO_INITIALISE', 4: 'UNHEALTHY'}
_FAILSAFE = {0: 'FAILSAFE_RESOLVED', 1: 'FAILSAFE_OCCURRED'}
#: (subsystem, code) pairs that are ArduPilot acting on its navigation: credited lead times.
_SAFETY_ERRORS = frozenset({('EKFCHECK', 2), ('FAILSAFE_EKFINAV', 1), ('GPS', 2),
                            ('FAILSAFE_GPS', 1), ('FAILSAFE_DEADRECKON', 1)})
#: What the user knows these as.
_PLAIN = {('EKFCHECK', 2): 'EKF variance check', ('FAILSAFE_EKFINAV', 1): 'EKF failsafe',
          ('GPS', 2): 'GPS glitch', ('FAILSAFE_DEADRECKON', 1): 'dead-reckoning failsafe',
          ('EKF_PRIMARY', None): 'EKF primary core changed to'}
#: LogEvent (AP_Logger.h).
EVENT_IDS: Mapping[int, str] = {
    10: 'ARMED', 11: 'DISARMED', 15: 'AUTO_ARMED', 17: 'LAND_COMPLETE_MAYBE',
    18: 'LAND_COMPLETE', 19: 'LOST_GPS', 21: 'FLIP_START', 22: 'FLIP_END', 25: 'SET_HOME',
    26: 'SET_SIMPLE_ON', 27: 'SET_SIMPLE_OFF', 28: 'NOT_LANDED', 29: 'SET_SUPERSIMPLE_ON',
    30: 'AUTOTUNE_INITIALISED', 31: 'AUTOTUNE_OFF', 32: 'AUTOTUNE_RESTART',
    33: 'AUTOTUNE_SUCCESS', 34: 'AUTOTUNE_FAILED', 35: 'AUTOTUNE_REACHED_LIMIT',
    36: 'AUTOTUNE_PILOT_TESTING', 37: 'AUTOTUNE_SAVEDGAINS', 38: 'SAVE_TRIM', 39: 'SAVEWP_ADD_WP',
    41: 'FENCE_ENABLE', 42: 'FENCE_DISABLE', 43: 'ACRO_TRAINER_OFF', 44: 'ACRO_TRAINER_LEVELING',
    45: 'ACRO_TRAINER_LIMITED', 46: 'GRIPPER_GRAB', 47: 'GRIPPER_RELEASE',
    49: 'PARACHUTE_DISABLED', 50: 'PARACHUTE_ENABLED', 51: 'PARACHUTE_RELEASED',
    52: 'LANDING_GEAR_DEPLOYED', 53: 'LANDING_GEAR_RETRACTED', 54: 'MOTORS_EMERGENCY_STOPPED',
    55: 'MOTORS_EMERGENCY_STOP_CLEARED', 56: 'MOTORS_INTERLOCK_DISABLED',
    57: 'MOTORS_INTERLOCK_ENABLED', 58: 'ROTOR_RUNUP_COMPLETE', 59: 'ROTOR_SPEED_BELOW_CRITICAL',
    60: 'EKF_ALT_RESET', 61: 'LAND_CANCELLED_BY_PILOT', 62: 'EKF_YAW_RESET',
    63: 'AVOIDANCE_ADSB_ENABLE', 64: 'AVOIDANCE_ADSB_DISABLE', 65: 'AVOIDANCE_PROXIMITY_ENABLE',
    66: 'AVOIDANCE_PROXIMITY_DISABLE', 67: 'GPS_PRIMARY_CHANGED', 71: 'ZIGZAG_STORE_A',
    72: 'ZIGZAG_STORE_B', 73: 'LAND_REPO_ACTIVE', 74: 'STANDBY_ENABLE', 75: 'STANDBY_DISABLE',
    80: 'FENCE_FLOOR_ENABLE', 81: 'FENCE_FLOOR_DISABLE', 85: 'EK3_SOURCES_SET_TO_PRIMARY',
    86: 'EK3_SOURCES_SET_TO_SECONDARY', 87: 'EK3_SOURCES_SET_TO_TERTIARY',
    90: 'AIRSPEED_PRIMARY_CHANGED', 163: 'SURFACED', 164: 'NOT_SURFACED', 165: 'BOTTOMED',
    166: 'NOT_BOTTOMED',
}
_SAFETY_EVENTS = frozenset({19})  # LOST_GPS
#: ModeReason (AP_Vehicle/ModeReason.h).
_MODE_REASONS = {0: 'UNKNOWN', 1: 'RC_COMMAND', 2: 'GCS_COMMAND', 3: 'RADIO_FAILSAFE',
                 4: 'BATTERY_FAILSAFE', 5: 'GCS_FAILSAFE', 6: 'EKF_FAILSAFE', 7: 'GPS_GLITCH',
                 8: 'MISSION_END', 9: 'THROTTLE_LAND_ESCAPE', 10: 'FENCE_BREACHED',
                 11: 'TERRAIN_FAILSAFE', 12: 'BRAKE_TIMEOUT', 13: 'FLIP_COMPLETE',
                 14: 'AVOIDANCE', 15: 'AVOIDANCE_RECOVERY', 16: 'THROW_COMPLETE',
                 17: 'TERMINATE', 18: 'TOY_MODE', 19: 'CRASH_FAILSAFE',
                 20: 'SOARING_FBW_B_WITH_MOTOR_RUNNING',
                 21: 'SOARING_THERMAL_DETECTED', 22: 'SOARING_THERMAL_ESTIMATE_DETERIORATED',
                 23: 'VTOL_FAILED_TRANSITION', 24: 'VTOL_FAILED_TAKEOFF', 25: 'FAILSAFE',
                 26: 'INITIALISED', 27: 'SURFACE_COMPLETE', 28: 'BAD_DEPTH',
                 29: 'LEAK_FAILSAFE', 30: 'SERVOTEST', 31: 'STARTUP', 32: 'SCRIPTING',
                 33: 'UNAVAILABLE', 34: 'AUTOROTATION_START', 35: 'AUTOROTATION_BAILOUT',
                 36: 'SOARING_ALT_TOO_HIGH', 37: 'SOARING_ALT_TOO_LOW',
                 38: 'SOARING_DRIFT_EXCEEDED', 39: 'RTL_COMPLETE_SWITCHING_TO_VTOL_LAND_RTL',
                 40: 'RTL_COMPLETE_SWITCHING_TO_FIXEDWING_AUTOLAND', 41: 'MISSION_CMD',
                 42: 'FRSKY_COMMAND', 43: 'FENCE_RETURN_PREVIOUS_MODE', 44: 'QRTL_INSTEAD_OF_RTL',
                 45: 'AUTO_RTL_EXIT', 46: 'LOITER_ALT_REACHED_QLAND', 47: 'LOITER_ALT_IN_VTOL',
                 48: 'RADIO_FAILSAFE_RECOVERY', 49: 'QLAND_INSTEAD_OF_RTL',
                 50: 'DEADRECKON_FAILSAFE', 51: 'MODE_TAKEOFF_FAILSAFE'}
_SAFETY_MODE_REASONS = frozenset({6, 7, 50})  # EKF_FAILSAFE, GPS_GLITCH, DEADRECKON_FAILSAFE


def error_name(subsystem: int, code: int) -> tuple[str, str, bool]:
    """(subsystem name, code name, safety) of an ERR row, by ArduPilot's enums."""
    sub = ERROR_SUBSYSTEMS.get(int(subsystem), f'subsystem {int(subsystem)}')
    if sub == 'EKF_PRIMARY':
        return sub, f'core {int(code)}', False
    codes = _FAILSAFE if sub.startswith('FAILSAFE_') else _CODES.get(sub, _GENERAL)
    name = codes.get(int(code), _GENERAL.get(int(code), f'code {int(code)}'))
    return sub, name, (sub, int(code)) in _SAFETY_ERRORS


@dataclass(frozen=True, slots=True, order=True)
class ArduPilotEvent:
    """One thing ArduPilot did or said, at its time since boot; ordered by time, kind, detail."""

    time_ns: int
    kind: str  # one of EVENT_KINDS
    detail: str  # e.g. 'ERR FAILSAFE_EKFINAV FAILSAFE_OCCURRED (EKF failsafe)'
    safety: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.time_ns, bool) or not isinstance(self.time_ns, int) \
                or self.time_ns < 0:
            raise ValueError(f'ArduPilotEvent.time_ns: {self.time_ns!r} is not a non-negative '
                             'integer number of nanoseconds')
        if self.kind not in EVENT_KINDS:
            raise ValueError(f'ArduPilotEvent.kind: {self.kind!r} is not one of '
                             f'{", ".join(EVENT_KINDS)}')


def _mode_name(number: int, copter: bool) -> str:
    if copter and number in COPTER_MODES:
        return COPTER_MODES[number][0]
    return f'mode {number}'


def _error(row: Mapping[str, Any]) -> ArduPilotEvent:
    sub, name, safety = error_name(int(row.get('Subsys', 0)), int(row.get('ECode', 0)))
    plain = _PLAIN.get((sub, int(row.get('ECode', 0)))) or _PLAIN.get((sub, None))
    detail = f'ERR {sub} {name}' + (f' ({plain})' if plain else '')
    return ArduPilotEvent(int(row['TimeUS']) * 1000, 'error', detail, safety)


def ardupilot_events(log: DataflashLog) -> tuple[ArduPilotEvent, ...]:
    """ArduPilot's own events of a read log, sorted by time: every ERR, EV, MODE and MSG.

    MODE names the mode (ArduCopter's; other vehicles by number) and its reason; a mode change
    ArduPilot made for an EKF failsafe, a GPS glitch or dead reckoning is a safety event too.
    """
    copter = log.vehicle() == 'ArduCopter'
    events = [_error(row) for row in log.rows('ERR')]
    for row in log.rows('EV'):
        event = int(row.get('Id', -1))
        events.append(ArduPilotEvent(int(row['TimeUS']) * 1000, 'event',
                                     f'EV {EVENT_IDS.get(event, f"id {event}")}',
                                     event in _SAFETY_EVENTS))
    previous: int | None = None
    for row in log.rows('MODE'):
        number = int(row.get('ModeNum', row.get('Mode', -1)))
        reason = int(row.get('Rsn', 0))
        name = _mode_name(number, copter)
        detail = (f'MODE {name}' if previous is None
                  else f'MODE {_mode_name(previous, copter)} -> {name}')
        detail += f' ({_MODE_REASONS.get(reason, f"reason {reason}")})'
        events.append(ArduPilotEvent(int(row['TimeUS']) * 1000, 'mode', detail,
                                     reason in _SAFETY_MODE_REASONS))
        previous = number
    for time_us, text in log.texts():
        events.append(ArduPilotEvent(time_us * 1000, 'message', f'MSG {text.strip()}'))
    return tuple(sorted(events))


def load_ardupilot_events(path: Path | str) -> tuple[ArduPilotEvent, ...]:
    """``ardupilot_events`` of the log at ``path`` (DataflashReadError when unreadable)."""
    return ardupilot_events(load_dataflash(Path(path), EVENT_TYPES))


# --- the log's own limits ---

@dataclass(frozen=True, slots=True)
class _Limit:
    parameter: str
    default: float
    meaning: str


#: ArduPilot's EKF failsafe and GPS checks (ArduCopter/Parameters.cpp, AP_NavEKF3.cpp,
#: AP_GPS.cpp), with their defaults.
ARDUPILOT_LIMITS = (
    _Limit('FS_EKF_THRESH', 0.8, "ArduCopter's EKF failsafe: the filtered test ratios (velocity "
           'and position, compass) above this for 1 s trigger it (0 disables)'),
    _Limit('FS_EKF_ACTION', 1.0, 'what the EKF failsafe does: 1 LAND, 2 ALT_HOLD, 3 LAND even '
           'in STABILIZE'),
    _Limit('EK3_CHECK_SCALE', 100.0, "EKF3's GPS pre-flight checks, in % of their defaults"),
    _Limit('EK3_GPS_CHECK', 31.0, "EKF3's GPS pre-flight check bits (accuracies, satellites, "
           'drift, speed)'),
    _Limit('EK3_GLITCH_RAD', 25.0, 'm: a GPS position further than this from the EKF is a '
           'glitch (the EKF resets to it after the retry time)'),
    _Limit('GPS_HDOP_GOOD', 140.0, 'HDOP x100 below which the GPS counts as good for arming'),
    _Limit('FS_DR_ENABLE', 2.0, 'dead-reckoning failsafe action (0 disabled)'),
    _Limit('FS_DR_TIMEOUT', 30.0, 's of dead reckoning before that failsafe'),
)


@dataclass(frozen=True, slots=True)
class ArduPilotLimits:
    """The log's own limits (ArduPilot's default where it states none)."""

    values: Mapping[str, float]
    from_log: frozenset[str]

    def lines(self) -> list[str]:
        """One line per limit: name, value, where it comes from, what ArduPilot does with it."""
        out = []
        for limit in ARDUPILOT_LIMITS:
            value = float(self.values[limit.parameter])
            shown = str(int(value)) if value.is_integer() else f'{value:g}'
            source = ('log' if limit.parameter in self.from_log
                      else 'not in this log: ArduPilot default')
            out.append(f'{limit.parameter} {shown} ({source}): {limit.meaning}')
        return out


def ardupilot_limits(parameters: Mapping[str, float]) -> ArduPilotLimits:
    """The limits a log's parameters state, else ArduPilot's defaults (ValueError if corrupt)."""
    values: dict[str, float] = {}
    stated = set()
    for limit in ARDUPILOT_LIMITS:
        value = parameters.get(limit.parameter)
        if value is None:
            values[limit.parameter] = limit.default
            continue
        if not math.isfinite(float(value)):
            raise ValueError(f'parameter {limit.parameter}: {value!r} is not a finite number')
        values[limit.parameter] = float(value)
        stated.add(limit.parameter)
    return ArduPilotLimits(values, frozenset(stated))
