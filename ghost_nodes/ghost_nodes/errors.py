"""Exception types of ghost_nodes that callers outside one module catch."""

from __future__ import annotations

__all__ = ['BagWriteError', 'Px4SampleRejected']


class BagWriteError(ValueError):
    """A message cannot be written: unknown type, or a message dict that does not fit it."""


class Px4SampleRejected(ValueError):
    """A PX4 sample cannot become a belief or a fix; the message is a stable, countable reason."""
