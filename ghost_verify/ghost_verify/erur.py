"""ERUR-v1, eventual reactivation under recovery: drift-clean and raw KNOWN means PROCEED."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import os

from ghost_core.levels import DecisionKind, SelfAssessmentLevel

from .bag import DEFAULT_CYCLE_WINDOW
from .common import (
    drift,
    observed_values,
    PropertyChecker,
    PropertyReport,
    run_checker,
    Violation,
    ViolationKind,
)
from .events import Actuation, Calibrated

__all__ = ['ERUR_VERSION', 'ErurChecker', 'ErurReport', 'judge_erur', 'verify_erur']

ERUR_VERSION = 'ERUR-v1'


@dataclass(frozen=True, slots=True)
class ErurReport(PropertyReport):
    """The ERUR-v1 verdict over one bag (fields: see PropertyReport)."""


def judge_erur(
    calibrated: Calibrated,
    actuations: Sequence[Actuation],
    min_outcomes: int,
    downgrade_threshold: int,
) -> tuple[Violation, ...] | None:
    """Judge one cycle against ERUR-v1; None unless not drift_t and the raw level is KNOWN.

    Then: Q1 the adjusted level is KNOWN, Q2 every actuation's decision is PROCEED; no
    actuation at all is `actuation_missing`. Nothing is claimed about the command (ADR-0032).
    """
    if drift(calibrated, min_outcomes, downgrade_threshold):
        return None
    if calibrated.raw_overall_level != SelfAssessmentLevel.KNOWN:
        return None
    stamp_ns = calibrated.message.stamp_ns
    found: list[Violation] = []
    if calibrated.adjusted_overall_level != SelfAssessmentLevel.KNOWN:
        found.append(Violation(
            stamp_ns, ViolationKind.Q1_ADJUSTED_NOT_KNOWN, 'Q1',
            observed_values(calibrated, min_outcomes, downgrade_threshold),
        ))
    if not actuations:
        found.append(Violation(
            stamp_ns, ViolationKind.ACTUATION_MISSING, 'Q2',
            observed_values(calibrated, min_outcomes, downgrade_threshold),
        ))
    for actuation in actuations:
        if actuation.decision_kind != DecisionKind.PROCEED:
            found.append(Violation(
                stamp_ns, ViolationKind.Q2_DECISION_NOT_PROCEED, 'Q2',
                observed_values(calibrated, min_outcomes, downgrade_threshold, actuation),
            ))
    return tuple(found)


class ErurChecker(PropertyChecker[ErurReport]):
    """ERUR-v1 over a cycle stream: ``update(cycle)`` per cycle, then ``result(info)``."""

    property_version = ERUR_VERSION
    report_type = ErurReport

    def judge(
        self,
        calibrated: Calibrated,
        actuations: Sequence[Actuation],
        min_outcomes: int,
        downgrade_threshold: int,
    ) -> tuple[Violation, ...] | None:
        """Judge one calibrated assessment with its cycle's actuations (see judge_erur)."""
        return judge_erur(calibrated, actuations, min_outcomes, downgrade_threshold)


def verify_erur(
    bag: str | os.PathLike[str],
    *,
    min_outcomes: int | None = None,
    downgrade_threshold: int | None = None,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
) -> ErurReport:
    """Read the bag once and return its ERUR-v1 report (M and K default to the bag's own)."""
    checker = ErurChecker(min_outcomes=min_outcomes, downgrade_threshold=downgrade_threshold)
    return run_checker(checker, bag, cycle_window)
