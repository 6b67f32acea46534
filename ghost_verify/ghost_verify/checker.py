"""What every check over a bag's cycle stream shares: the CycleChecker protocol, run_checker."""

from __future__ import annotations

import os
from typing import Protocol, TypeVar

from .events import BagInfo, CycleEvent

__all__ = ['CycleChecker', 'run_checker']

_T = TypeVar('_T')
_R_co = TypeVar('_R_co', covariant=True)


class CycleChecker(Protocol[_R_co]):
    """Anything judged over the cycle stream: ``update(cycle)`` per cycle, then ``result(info)``.

    PropertyChecker (BAUD-v1, ERUR-v1) is one; so is the policy-conformance checker.
    """

    def update(self, cycle: CycleEvent) -> None:
        """Judge one cycle."""
        ...

    def result(self, info: BagInfo) -> _R_co:
        """Return the report for everything seen so far."""
        ...


def run_checker(
    checker: CycleChecker[_T], bag: str | os.PathLike[str], cycle_window: int
) -> _T:
    """Read the bag once, feeding every cycle to `checker`, and return its report."""
    # Imported here: bag.py is the reading side and must not depend on the judging side.
    from .bag import GhostBag

    ghost_bag = GhostBag(bag, cycle_window=cycle_window)
    for cycle in ghost_bag.cycles():
        checker.update(cycle)
    return checker.result(ghost_bag.info)
