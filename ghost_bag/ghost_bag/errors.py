"""Exception types of ghost_bag: a bag that cannot be found, read, or written."""

from __future__ import annotations

__all__ = ['BagError', 'BagFormatError', 'BagNotFoundError', 'BagWriteError', 'InputBagError']


class BagError(Exception):
    """Base of every error raised on purpose about a bad input bag (bad input, not a bug).

    ghost_verify reports every BagError as bad input: what the reader raises is what the
    auditor reports.
    """


class BagNotFoundError(BagError, FileNotFoundError):
    """The bag path, or a file its metadata.yaml lists, does not exist."""


class BagFormatError(BagError, ValueError):
    """The input cannot be read as a rosbag2 MCAP bag, or a ghost message in it is malformed."""


class InputBagError(BagError, ValueError):
    """A bag of the agent's inputs cannot be read, or lacks its input topics with their types.

    Raised by :mod:`ghost_bag.recorded_inputs`; when it wraps another error (a damaged file, a
    message the agent cannot use), that error is its ``__cause__``.
    """


class BagWriteError(ValueError):
    """A message cannot be written: unknown type, or a message dict that does not fit it."""
