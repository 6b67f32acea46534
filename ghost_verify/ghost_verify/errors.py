"""Exception types of ghost_verify: every bad input maps to one of these."""

from __future__ import annotations

from ghost_bag.errors import BagError, BagFormatError, BagNotFoundError

__all__ = [
    'BagFormatError',
    'BagNotFoundError',
    'GhostVerifyError',
    'LateMessageError',
    'NoGhostTopicsError',
    'SchemaMismatchError',
]


#: Base of every error ghost_verify raises on purpose (bad input, not a bug). It is
#: ghost_bag's BagError, so that what the bag reader raises (BagNotFoundError and
#: BagFormatError, re-exported here) is caught, and reported, as the verifier's own.
GhostVerifyError = BagError


class SchemaMismatchError(BagFormatError):
    """A ghost channel's embedded schema does not define the fields the verifier reads.

    The bag was written with another definition of a ghost_interfaces type (a field missing,
    renamed or of another kind); reading it as if it were the known one would mis-read it.
    """


class LateMessageError(BagFormatError):
    """A ghost message arrived after its cycle had been closed by the cycle window."""


class NoGhostTopicsError(GhostVerifyError, LookupError):
    """The bag was read but holds no channel with a ghost_interfaces schema."""
