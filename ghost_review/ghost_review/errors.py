"""The errors of ghost_review: each maps to one exit code of the command (ghost_core.cli).

They cross the local processes and the Dask workers of a fleet review as they are (plain
exceptions), and ``ghost_review.cli`` turns each into one line and its ExitCode.
"""

__all__ = ['ReviewError', 'ReviewInputError', 'ReviewUsageError']


class ReviewError(Exception):
    """Base of ghost_review's errors."""


class ReviewUsageError(ReviewError, ValueError):
    """The command line cannot be carried out as given (ExitCode.USAGE, 2)."""


class ReviewInputError(ReviewError, ValueError):
    """An input cannot be read or used: not a ULog, not a bag, nothing to replay.

    ExitCode.BAD_INPUT (3).
    """
