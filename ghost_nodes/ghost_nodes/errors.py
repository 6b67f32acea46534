"""Exception types of ghost_nodes that callers outside one module catch."""

from __future__ import annotations

# The bag writer's error is ghost_bag's (ghost_bag.write raises it); importable from here too.
from ghost_bag.errors import BagWriteError

__all__ = ['BagWriteError', 'Px4SampleRejected']


class Px4SampleRejected(ValueError):
    """A PX4 sample cannot become a belief or a fix; the message is a stable, countable reason."""
