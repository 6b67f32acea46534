"""The errors of ghost_review: each maps to one exit code of the command."""

__all__ = ['ReviewError', 'ReviewInputError', 'ReviewUsageError']


class ReviewError(Exception):
    """Base of ghost_review's errors."""


class ReviewUsageError(ReviewError, ValueError):
    """The command line cannot be carried out as given (exit 2)."""


class ReviewInputError(ReviewError, ValueError):
    """An input cannot be read or used: not a ULog, not a bag, nothing to replay (exit 3)."""
