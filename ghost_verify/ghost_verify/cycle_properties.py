"""BAUD-v1 and ERUR-v1 over a bag: one checker, the property its parameter.

BAUD-v1, bounded action under drift: under drift the agent neither claims KNOWN nor proceeds.
ERUR-v1, eventual reactivation under recovery: drift-clean and raw KNOWN means PROCEED.

The judgement of one cycle is ``ghost_core.properties`` (``BAUD_V1``/``ERUR_V1``: a version
and a judge, ``judge_baud``/``judge_erur``), the same functions the live ``monitor`` node runs;
``common.PropertyChecker`` runs one of them over a cycle stream, and this module over a bag.
"""

from __future__ import annotations

import os
from typing import TypedDict, Unpack

from ghost_core.properties import BAUD_V1, CycleProperty, ERUR_V1

from .bag import DEFAULT_CYCLE_WINDOW
from .common import PropertyChecker, PropertyReport, run_checker

__all__ = ['VerifyOptions', 'verify_baud', 'verify_erur', 'verify_property']


class VerifyOptions(TypedDict, total=False):
    """How a bag is judged.

    M and K (default: the bag's own, cycle by cycle), the cycle window, and ``strict`` (no
    cycle spared as cut by the recording).
    """

    min_outcomes: int | None
    downgrade_threshold: int | None
    cycle_window: int
    strict: bool


def verify_property(cycle_property: CycleProperty, bag: str | os.PathLike[str],
                    **options: Unpack[VerifyOptions]) -> PropertyReport:
    """Read the bag once and return its report for ``cycle_property``."""
    checker = PropertyChecker(cycle_property, min_outcomes=options.get('min_outcomes'),
                              downgrade_threshold=options.get('downgrade_threshold'),
                              strict=options.get('strict', False))
    return run_checker(checker, bag, options.get('cycle_window', DEFAULT_CYCLE_WINDOW))


def verify_baud(bag: str | os.PathLike[str], **options: Unpack[VerifyOptions]) -> PropertyReport:
    """The bag's BAUD-v1 report (``verify_property``)."""
    return verify_property(BAUD_V1, bag, **options)


def verify_erur(bag: str | os.PathLike[str], **options: Unpack[VerifyOptions]) -> PropertyReport:
    """The bag's ERUR-v1 report (``verify_property``)."""
    return verify_property(ERUR_V1, bag, **options)
