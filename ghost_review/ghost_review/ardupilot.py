"""What an ArduPilot DataFlash log says of itself: board, firmware, and ArduPilot's own events.

ghost_ardupilot is imported here only, and only for a DataFlash input; it owns the reading
and the event decoding (``ghost_ardupilot.events``: ERR by name, EV, MODE, MSG). The log is
imported into an input bag by the same ``ghost_import`` as a ULog (``.px4.import_ulog``).
"""

from __future__ import annotations

from pathlib import Path

from .errors import ReviewInputError
from .px4 import LogEvent, LogInfo

__all__ = ['DATAFLASH_MAGIC', 'dataflash_log_info', 'is_dataflash']

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
    events = tuple(LogEvent(event.time_ns, event.kind, event.detail, event.safety)
                   for event in ardupilot_events(log))
    return LogInfo(log.board(), log.firmware(), events)
