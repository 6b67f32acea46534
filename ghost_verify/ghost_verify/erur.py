"""ERUR-v1, eventual reactivation under recovery: drift-clean and raw KNOWN means PROCEED.

The judgement of one cycle is ``ghost_core.properties.judge_erur`` (re-exported here), the
same function the live ``monitor`` node runs; this module runs it over a bag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import os

from ghost_core.properties import ERUR_V1, ERUR_VERSION, judge_erur

from .bag import DEFAULT_CYCLE_WINDOW
from .common import PropertyChecker, PropertyReport, run_checker, Violation
from .events import Actuation, Calibrated

__all__ = ['ERUR_VERSION', 'ErurChecker', 'ErurReport', 'judge_erur', 'verify_erur']


@dataclass(frozen=True, slots=True)
class ErurReport(PropertyReport):
    """The ERUR-v1 verdict over one bag (fields: see PropertyReport)."""


class ErurChecker(PropertyChecker[ErurReport]):
    """ERUR-v1 over a cycle stream: ``update(cycle)`` per cycle, then ``result(info)``."""

    property_version = ERUR_V1.version
    report_type = ErurReport

    def judge(
        self,
        calibrated: Calibrated,
        actuations: Sequence[Actuation],
        min_outcomes: int,
        downgrade_threshold: int,
    ) -> tuple[Violation, ...] | None:
        """Judge one calibrated assessment with its cycle's actuations (see judge_erur)."""
        return ERUR_V1.judge(calibrated, actuations, min_outcomes, downgrade_threshold)


def verify_erur(
    bag: str | os.PathLike[str],
    *,
    min_outcomes: int | None = None,
    downgrade_threshold: int | None = None,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
    strict: bool = False,
) -> ErurReport:
    """Read the bag once and return its ERUR-v1 report (M and K default to the bag's own)."""
    checker = ErurChecker(min_outcomes=min_outcomes, downgrade_threshold=downgrade_threshold,
                          strict=strict)
    return run_checker(checker, bag, cycle_window)
