"""Exception types of ghost_verify: every bad input maps to one of these."""

from __future__ import annotations

__all__ = [
    'BagFormatError',
    'BagNotFoundError',
    'GhostVerifyError',
    'LateMessageError',
    'NoGhostTopicsError',
    'SchemaMismatchError',
]


class GhostVerifyError(Exception):
    """Base of every error ghost_verify raises on purpose (bad input, not a bug)."""


class BagNotFoundError(GhostVerifyError, FileNotFoundError):
    """The bag path, or a file its metadata.yaml lists, does not exist."""


class BagFormatError(GhostVerifyError, ValueError):
    """The input cannot be read as a rosbag2 MCAP bag, or a ghost message in it is malformed."""


class SchemaMismatchError(BagFormatError):
    """A ghost channel's embedded schema does not define the fields the verifier reads.

    The bag was written with another definition of a ghost_interfaces type (a field missing,
    renamed or of another kind); reading it as if it were the known one would mis-read it.
    """


class LateMessageError(BagFormatError):
    """A ghost message arrived after its cycle had been closed by the cycle window."""


class NoGhostTopicsError(GhostVerifyError, LookupError):
    """The bag was read but holds no channel with a ghost_interfaces schema."""
