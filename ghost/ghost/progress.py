"""Progress of a long run: a bar on a terminal (tqdm), a one-line status now and then otherwise.

``ghost_run`` shows the cycles actuated, the current decision and the elapsed time while the
graph runs. On a terminal (stderr) that is a tqdm bar; in a log or CI (not a terminal), one
line every ``every_s`` seconds, so a long run at speed 1 is never minutes without a word.
"""

from __future__ import annotations

import sys
import time
from typing import Never, TextIO

from tqdm import tqdm

__all__ = ['LoopProgress']


class LoopProgress:
    """Cycles actuated out of `total` (None: open-ended), the current decision, elapsed time."""

    def __init__(self, total: int | None, *, stream: TextIO | None = None,
                 every_s: float = 10.0) -> None:
        self._stream = sys.stderr if stream is None else stream
        self._start = self._last_line = time.monotonic()
        self._every_s = every_s
        self._total = total
        self._cycles = 0
        self._decision = '-'
        # A bar over no iterable (updated by hand): tqdm's type parameter is then Never.
        self._bar: tqdm[Never] | None = None
        if self._stream.isatty():
            self._bar = tqdm(total=total, unit='cycle', desc='ghost', file=self._stream,
                             dynamic_ncols=True, leave=False)

    def update(self, cycles: int, decision: str) -> None:
        """The loop has actuated `cycles` so far; the latest decision is `decision`."""
        if cycles == self._cycles and decision == self._decision:
            self._maybe_line()
            return
        if self._bar is not None:
            self._bar.update(cycles - self._cycles)
            self._bar.set_postfix_str(decision, refresh=True)
        self._cycles, self._decision = cycles, decision
        self._maybe_line()

    def _maybe_line(self) -> None:
        now = time.monotonic()
        if self._bar is not None or now - self._last_line < self._every_s:
            return
        self._last_line = now
        total = '' if self._total is None else f'/{self._total}'
        print(f'ghost: {self._cycles}{total} cycles, decision {self._decision}, '
              f'{now - self._start:.0f} s', file=self._stream, flush=True)

    def close(self) -> None:
        """Take the bar away (the summary lines follow)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
