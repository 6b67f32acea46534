"""Progress of a review: a bar on a terminal (tqdm), a line per flight and a status otherwise.

On a terminal (stderr) a tqdm bar counts the flights reviewed, names the last one and shows
the elapsed time (redrawn every second, so a long flight does not look stuck). Otherwise
(a log, CI, a pipe) each flight's result is a line on stdout as it comes, and while a flight
takes long a status line goes to stderr every ``every_s`` seconds, so a long review is never
minutes without a word (as ``ghost_run``'s progress, ghost/ghost/progress.py). Errors and
warnings are one line each on stderr; on a terminal the bar is drawn again below them.
"""

from __future__ import annotations

from pathlib import Path
import sys
import threading
import time
from typing import Never, TextIO

from tqdm import tqdm

from .fleet import FlightOutcome

__all__ = ['FleetProgress']

#: How often the terminal's bar is redrawn (its elapsed time moves on), in seconds.
_REDRAW_S = 1.0


class FleetProgress:
    """`total` flights being reviewed into `output`: what the user sees while they are.

    start() once the work is handed out; use it as a context manager (or call close()): that
    stops the status and takes the bar away. Thread-safe.
    """

    def __init__(self, prog: str, total: int, output: Path, *, stream: TextIO | None = None,
                 every_s: float = 10.0) -> None:
        self._prog = prog
        self._stream = sys.stderr if stream is None else stream
        self._terminal = self._stream.isatty()
        self._output = output
        self._total = total
        self._done = 0
        self._every_s = every_s
        self._start = self._last_line = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        # A bar over no iterable (updated by hand): tqdm's type parameter is then Never.
        self._bar: tqdm[Never] | None = None
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> FleetProgress:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def start(self) -> None:
        """The flights are handed out: draw the bar, start the status (once).

        Not before: the bar and the status are threads (tqdm's monitor, the ticker), and the
        local processes of --jobs are forked only from a process without threads.
        """
        with self._lock:
            if self._ticker is not None or self._stop.is_set() or self._total == 0:
                return
            self._start = self._last_line = time.monotonic()
            if self._terminal:
                self._bar = tqdm(total=self._total, initial=self._done, unit='flight',
                                 desc=self._prog, file=self._stream, dynamic_ncols=True,
                                 leave=False, mininterval=0)  # a flight is seconds: each shows
            self._ticker = threading.Thread(target=self._tick, name=f'{self._prog}-progress',
                                            daemon=True)
            self._ticker.start()

    def _say(self, line: str, stream: TextIO) -> None:
        """One line on `stream`, with the bar (if any) cleared before and drawn again after."""
        if self._bar is not None:
            self._bar.write(line, file=stream)
        else:
            print(line, file=stream, flush=True)
        self._last_line = time.monotonic()

    def error(self, message: str) -> None:
        """One error line: ``<prog>: error: <message>``."""
        with self._lock:
            self._say(f'{self._prog}: error: {" ".join(message.split())}', self._stream)

    def flight(self, outcome: FlightOutcome) -> None:
        """One flight done: its line (not on a terminal), its warnings, the bar moved on."""
        with self._lock:
            self._done += 1
            done = outcome.review
            if done is None:
                message = outcome.error or f'{outcome.name}: not reviewed'
                self._say(f'{self._prog}: error: {" ".join(message.split())}', self._stream)
            elif not self._terminal:
                count = len(done.episodes)
                self._say(f'{self._prog}: {outcome.name}: {len(done.data.cycles)} cycles, '
                          f'{count} episode{"s" if count != 1 else ""} not PROCEED -> '
                          f'{self._output / outcome.name / "report.html"} '
                          f'({outcome.report_bytes / 1024:.0f} KB)', sys.stdout)
            for warning in done.warnings if done is not None else ():
                self._say(f'{self._prog}: warning: {outcome.name}: {" ".join(warning.split())}',
                          self._stream)
            if self._bar is not None:
                self._bar.set_postfix_str(outcome.name, refresh=False)
                self._bar.update(1)

    def _tick(self) -> None:
        """Redraw the bar every second; else a status line after every_s without a line."""
        while not self._stop.wait(min(self._every_s, _REDRAW_S)):
            with self._lock:
                if self._stop.is_set():
                    return
                now = time.monotonic()
                if self._bar is not None:
                    self._bar.refresh()
                elif now - self._last_line >= self._every_s:
                    try:
                        self._say(f'{self._prog}: {self._done}/{self._total} flights '
                                  f'reviewed, {now - self._start:.0f} s', self._stream)
                    except OSError:  # stderr is gone (its reader closed it): no more status
                        return

    def close(self) -> None:
        """Stop the status and take the bar away (the summary line follows)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
