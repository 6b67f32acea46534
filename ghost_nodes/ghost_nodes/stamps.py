"""Input stamp checks at the edge: a cycle stamp is unique and increasing."""

from typing import Any

__all__ = ['StampGuard']


class StampGuard:
    """Accept only stamps later than every stamp accepted before, warning once per kind.

    A repeated stamp (zero time step) or an older one (negative step: out of order or stale)
    is not a new cycle: the message is dropped, and the node says so at most every 5 s per
    kind. The recorder still records the input, so the bag shows what was dropped.
    """

    def __init__(self, logger: Any, what: str) -> None:
        self._logger = logger
        self._what = what
        self._last_ns: int | None = None
        self.dropped = 0

    def accept(self, stamp_ns: int) -> bool:
        """Return whether a message stamped ``stamp_ns`` starts a new cycle."""
        last = self._last_ns
        if last is None or stamp_ns > last:
            self._last_ns = stamp_ns
            return True
        self.dropped += 1
        if stamp_ns == last:
            self._logger.warning(f'{self._what} stamp {stamp_ns} repeated (zero time step): '
                                 'dropped', throttle_duration_sec=5.0)
        else:
            self._logger.warning(f'{self._what} stamp {stamp_ns} is older than {last} '
                                 '(out of order or stale): dropped', throttle_duration_sec=5.0)
        return False
