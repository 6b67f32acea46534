"""What a PX4 ULog says of itself: vehicle, PX4 version, and PX4's own events.

ghost_px4 is imported here only, and only for a ULog input (a review of bags needs nothing of
PX4); it owns the reading (``ghost_px4.ulog_read``) and the events (``ghost_px4.events``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
import io
from pathlib import Path

from ghost_core.cli import ExitCode

from .errors import ReviewInputError, ReviewUsageError

__all__ = ['LogEvent', 'LogInfo', 'import_ulog', 'log_info']


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One PX4 event: PX4 time since boot (ns), its kind and its text.

    `safety`: PX4 acting on a degraded position or estimator, or announcing a failsafe
    (ghost_px4's ``Px4Event.safety``), what Ghost's lead time is measured against.
    """

    time_ns: int
    kind: str
    detail: str
    safety: bool = False


@dataclass(frozen=True, slots=True)
class LogInfo:
    """The vehicle, the PX4 version and the events of one log."""

    vehicle: str
    px4_version: str
    events: tuple[LogEvent, ...]


def _px4() -> None:
    try:
        import ghost_px4  # noqa: F401
    except ImportError as err:
        raise ReviewInputError(f'a PX4 ULog needs ghost_px4, which is not installed ({err})'
                               ) from err


def log_info(path: Path) -> LogInfo:
    """Read the log's vehicle, version and events; ReviewInputError when it cannot be read."""
    _px4()
    from ghost_px4.events import EVENT_TOPICS, px4_events
    from ghost_px4.ulog_read import load_ulog, px4_version_label, UlogReadError

    try:
        ulog, _ = load_ulog(path, EVENT_TOPICS)
    except UlogReadError as err:
        raise ReviewInputError(str(err)) from err
    info = ulog.msg_info_dict
    vehicle = ' '.join(str(info[key]) for key in ('ver_hw', 'ver_hw_subtype')
                       if info.get(key)) or 'not stated'
    events = tuple(LogEvent(event.time_ns, event.kind, event.detail, event.safety)
                   for event in px4_events(ulog))
    return LogInfo(vehicle, px4_version_label(ulog), events)


def import_ulog(path: Path, output: Path) -> list[str]:
    """Import the log into an input bag at `output` (ghost_import); its warnings.

    ReviewInputError with the importer's own one-line error when the log cannot be used;
    ReviewUsageError when the bag cannot be written; KeyboardInterrupt when it was
    interrupted; RuntimeError (an internal fault) for any other failure.
    """
    _px4()
    from ghost_px4.ulog_import import main as import_main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = import_main([str(path), '--output', str(output)])
    lines = [line for line in err.getvalue().splitlines() if line.strip()]
    if code == ExitCode.INTERRUPTED:
        # The importer turned Ctrl-C into its exit code: it stops the review, not this log.
        raise KeyboardInterrupt
    if code != ExitCode.OK:
        errors = [line for line in lines if ': error: ' in line] or lines or [f'exit {code}']
        message = errors[-1].split(': error: ', 1)[-1]
        if code == ExitCode.BAD_INPUT:
            raise ReviewInputError(message)
        if code == ExitCode.USAGE:
            # The only usage error left to it: the bag cannot be written under the output.
            raise ReviewUsageError(message)
        raise RuntimeError(f'ghost_import exited {code}: {message}')
    return [line.split(': warning: ', 1)[-1] for line in lines if ': warning: ' in line]
