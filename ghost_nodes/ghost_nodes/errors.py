"""Exception types of ghost_nodes that callers outside one module catch."""

from __future__ import annotations

__all__ = ['BagWriteError']


class BagWriteError(ValueError):
    """A message cannot be written: unknown type, or a message dict that does not fit it."""
