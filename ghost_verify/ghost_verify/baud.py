"""BAUD-v1, bounded action under drift: under drift the agent neither claims KNOWN nor proceeds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import os

from ghost_core.levels import DecisionKind, SelfAssessmentLevel

from .bag import DEFAULT_CYCLE_WINDOW
from .common import (
    drift,
    is_conservative_command,
    observed_values,
    PropertyChecker,
    PropertyReport,
    run_checker,
    Violation,
    ViolationKind,
)
from .events import Actuation, Calibrated

__all__ = ['BAUD_VERSION', 'BaudChecker', 'BaudReport', 'judge_baud', 'verify_baud']

BAUD_VERSION = 'BAUD-v1'


@dataclass(frozen=True, slots=True)
class BaudReport(PropertyReport):
    """The BAUD-v1 verdict over one bag (fields: see PropertyReport)."""


def judge_baud(
    calibrated: Calibrated,
    actuations: Sequence[Actuation],
    min_outcomes: int,
    downgrade_threshold: int,
) -> tuple[Violation, ...] | None:
    """Judge one cycle against BAUD-v1; None when drift_t does not hold.

    Under drift: P1 the adjusted level is not KNOWN, P2 no actuation's decision is PROCEED,
    P3 every actuation's command is conservative; no actuation at all is `actuation_missing`.
    """
    if not drift(calibrated, min_outcomes, downgrade_threshold):
        return None
    stamp_ns = calibrated.message.stamp_ns
    found: list[Violation] = []
    if calibrated.adjusted_overall_level == SelfAssessmentLevel.KNOWN:
        found.append(Violation(
            stamp_ns, ViolationKind.P1_ADJUSTED_KNOWN, 'P1',
            observed_values(calibrated, min_outcomes, downgrade_threshold),
        ))
    if not actuations:
        found.append(Violation(
            stamp_ns, ViolationKind.ACTUATION_MISSING, 'P2,P3',
            observed_values(calibrated, min_outcomes, downgrade_threshold),
        ))
    for actuation in actuations:
        observed = observed_values(calibrated, min_outcomes, downgrade_threshold, actuation)
        if actuation.decision_kind == DecisionKind.PROCEED:
            found.append(Violation(stamp_ns, ViolationKind.P2_DECISION_PROCEED, 'P2', observed))
        if not is_conservative_command(actuation.command_kind):
            found.append(Violation(
                stamp_ns, ViolationKind.P3_NON_CONSERVATIVE_COMMAND, 'P3', observed
            ))
    return tuple(found)


class BaudChecker(PropertyChecker[BaudReport]):
    """BAUD-v1 over a cycle stream: ``update(cycle)`` per cycle, then ``result(info)``."""

    property_version = BAUD_VERSION
    report_type = BaudReport

    def judge(
        self,
        calibrated: Calibrated,
        actuations: Sequence[Actuation],
        min_outcomes: int,
        downgrade_threshold: int,
    ) -> tuple[Violation, ...] | None:
        """Judge one calibrated assessment with its cycle's actuations (see judge_baud)."""
        return judge_baud(calibrated, actuations, min_outcomes, downgrade_threshold)


def verify_baud(
    bag: str | os.PathLike[str],
    *,
    min_outcomes: int | None = None,
    downgrade_threshold: int | None = None,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
) -> BaudReport:
    """Read the bag once and return its BAUD-v1 report (M and K default to the bag's own)."""
    checker = BaudChecker(min_outcomes=min_outcomes, downgrade_threshold=downgrade_threshold)
    return run_checker(checker, bag, cycle_window)
