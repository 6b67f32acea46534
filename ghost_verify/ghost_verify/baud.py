"""BAUD-v1, bounded action under drift: under drift the agent neither claims KNOWN nor proceeds.

The judgement of one cycle is ``ghost_core.properties.judge_baud`` (re-exported here), the
same function the live ``monitor`` node runs; this module runs it over a bag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import os

from ghost_core.properties import BAUD_V1, BAUD_VERSION, judge_baud

from .bag import DEFAULT_CYCLE_WINDOW
from .common import PropertyChecker, PropertyReport, run_checker, Violation
from .events import Actuation, Calibrated

__all__ = ['BAUD_VERSION', 'BaudChecker', 'BaudReport', 'judge_baud', 'verify_baud']


@dataclass(frozen=True, slots=True)
class BaudReport(PropertyReport):
    """The BAUD-v1 verdict over one bag (fields: see PropertyReport)."""


class BaudChecker(PropertyChecker[BaudReport]):
    """BAUD-v1 over a cycle stream: ``update(cycle)`` per cycle, then ``result(info)``."""

    property_version = BAUD_V1.version
    report_type = BaudReport

    def judge(
        self,
        calibrated: Calibrated,
        actuations: Sequence[Actuation],
        min_outcomes: int,
        downgrade_threshold: int,
    ) -> tuple[Violation, ...] | None:
        """Judge one calibrated assessment with its cycle's actuations (see judge_baud)."""
        return BAUD_V1.judge(calibrated, actuations, min_outcomes, downgrade_threshold)


def verify_baud(
    bag: str | os.PathLike[str],
    *,
    min_outcomes: int | None = None,
    downgrade_threshold: int | None = None,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
    strict: bool = False,
) -> BaudReport:
    """Read the bag once and return its BAUD-v1 report (M and K default to the bag's own)."""
    checker = BaudChecker(min_outcomes=min_outcomes, downgrade_threshold=downgrade_threshold,
                          strict=strict)
    return run_checker(checker, bag, cycle_window)
