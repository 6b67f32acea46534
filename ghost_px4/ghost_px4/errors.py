"""Exception types of ghost_px4 that callers outside one module catch."""

from __future__ import annotations

__all__ = ['Px4SampleRejected']


class Px4SampleRejected(ValueError):
    """A PX4 sample cannot become a belief or a fix; the message is a stable, countable reason."""
