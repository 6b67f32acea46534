"""Exception types of ghost_verify: every bad input is a ghost_bag.errors.BagError."""

from __future__ import annotations

from ghost_bag.errors import BagError, BagFormatError

__all__ = [
    'LateMessageError',
    'NoGhostTopicsError',
    'SchemaMismatchError',
]


class SchemaMismatchError(BagFormatError):
    """A ghost channel's embedded schema does not define the fields the verifier reads.

    The bag was written with another definition of a ghost_interfaces type (a field missing,
    renamed or of another kind); reading it as if it were the known one would mis-read it.
    """


class LateMessageError(BagFormatError):
    """A ghost message arrived after its cycle had been closed by the cycle window."""


class NoGhostTopicsError(BagError, LookupError):
    """The bag was read but holds no channel with a ghost_interfaces schema."""
