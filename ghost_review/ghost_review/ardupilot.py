"""What an ArduPilot DataFlash log says of itself: board, firmware, and ArduPilot's own events.

ghost_ardupilot is imported here only, and only for a DataFlash input; it owns the reading
and the event decoding (``ghost_ardupilot.events``: ERR by name, EV, MODE, MSG). The log is
imported into an input bag by the same ``ghost_import`` as a ULog (``.px4.import_ulog``).
"""

from __future__ import annotations

from pathlib import Path

from .errors import ReviewInputError
from .events import EventClass, FixSource, LogEvent, LogInfo

__all__ = ['DATAFLASH_MAGIC', 'dataflash_log_info', 'event_class', 'is_dataflash']

#: The first bytes of a DataFlash log (its FMT message's header).
DATAFLASH_MAGIC = b'\xa3\x95\x80'


def is_dataflash(path: Path) -> bool:
    """A file named .bin, or one that starts as a DataFlash log does."""
    if not path.is_file():
        return False
    if path.suffix.lower() == '.bin':
        return True
    try:
        with path.open('rb') as handle:
            return handle.read(len(DATAFLASH_MAGIC)) == DATAFLASH_MAGIC
    except OSError:
        return False


#: ArduPilot's ERR subsystems (AP_Logger's LogErrorSubsystem) by the review's event class.
_ERROR_CLASSES = {
    'FAILSAFE_EKFINAV': EventClass.ESTIMATOR_FAILSAFE,
    'EKFCHECK': EventClass.ESTIMATOR_FAILSAFE,
    'FAILSAFE_DEADRECKON': EventClass.POSITION_INVALID,
    'NAVIGATION': EventClass.POSITION_INVALID,
    'GPS': EventClass.GNSS_LOSS,
    'FAILSAFE_GPS': EventClass.GNSS_LOSS,
    'FAILSAFE_BATT': EventClass.BATTERY_FAILSAFE,
    'FAILSAFE_RADIO': EventClass.LINK_FAILSAFE,
    'FAILSAFE_GCS': EventClass.LINK_FAILSAFE,
    'FAILSAFE_FENCE': EventClass.GEOFENCE_FAILSAFE,
}


def event_class(kind: str, detail: str, safety: bool) -> EventClass:
    """The review's class of one ArduPilot event (``ghost_review.events.CREDITED`` decides).

    An ERR row by its subsystem (a resolved one is a recovery); EV's EKF yaw or position
    resets and GPS glitches; a mode change ArduPilot made for a degraded estimator is the EKF
    failsafe acting; the rest is listed as what it is.
    """
    words = detail.split()
    if kind == 'error' and len(words) >= 3:
        if words[2].endswith('RESOLVED'):
            return EventClass.RECOVERED
        found = _ERROR_CLASSES.get(words[1])
        if found is not None:
            return found
        return EventClass.OTHER_FAILSAFE if words[1].startswith('FAILSAFE_') else (
            EventClass.MESSAGE)
    if kind == 'event':
        if 'RESET' in detail:
            return EventClass.ESTIMATOR_RESET
        if 'GPS' in detail and 'GLITCH' in detail:
            return EventClass.GNSS_LOSS
        return EventClass.POSITION_INVALID if safety else EventClass.MESSAGE
    if kind == 'mode':
        return EventClass.ESTIMATOR_FAILSAFE if safety else EventClass.MODE
    return EventClass.MESSAGE


def dataflash_log_info(path: Path) -> LogInfo:
    """The log's board, firmware and events; ReviewInputError when it cannot be read."""
    try:
        from ghost_ardupilot.dataflash_read import DataflashReadError, load_dataflash
        from ghost_ardupilot.events import ardupilot_events, EVENT_TYPES
    except ImportError as err:
        raise ReviewInputError(f'{path}: an ArduPilot DataFlash log needs ghost_ardupilot, '
                               f'which is not installed ({err})') from err
    try:
        log = load_dataflash(path, EVENT_TYPES)
    except DataflashReadError as err:
        raise ReviewInputError(str(err)) from err
    events = tuple(LogEvent(event.time_ns, event.kind, event.detail,
                            event_class(event.kind, event.detail, event.safety))
                   for event in ardupilot_events(log))
    # ArduPilot's EKF fuses its GNSS unless its position source says otherwise: the fixes
    # Ghost compares come from the receiver the EKF uses (ghost_ardupilot's import).
    fixes = FixSource('/observations', True, "ArduPilot's EKF fuses the GNSS it selects")
    return LogInfo('ArduPilot', f'{log.vehicle()} on {log.board()}', log.firmware(), events,
                   fixes)
