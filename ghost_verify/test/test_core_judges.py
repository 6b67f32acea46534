"""The verifier judges with ghost_core's property functions, the ones the live monitor runs."""

from __future__ import annotations

import ghost_core.properties as core
from ghost_verify import (
    BAUD_VERSION,
    ERUR_VERSION,
    judge_baud,
    judge_erur,
    PropertyChecker,
    Violation,
    ViolationKind,
)


def test_the_verifier_names_are_ghost_core_objects() -> None:
    """judge_baud, judge_erur, Violation, drift...: the same objects, not copies."""
    assert PropertyChecker(core.BAUD_V1).cycle_property.judge is core.judge_baud
    assert PropertyChecker(core.ERUR_V1).cycle_property.judge is core.judge_erur
    assert core.judge_baud is judge_baud and core.judge_erur is judge_erur
    assert BAUD_VERSION == core.BAUD_V1.version and ERUR_VERSION == core.ERUR_V1.version
    assert Violation is core.Violation and ViolationKind is core.ViolationKind


def test_bag_events_are_what_the_judges_read() -> None:
    """A bag's Calibrated and Actuation carry the cycle stamp the core views carry."""
    from ghost_verify_test.views import actuation, calibrated, STAMP

    assert calibrated(0).stamp_ns == STAMP and actuation(0, 1).stamp_ns == STAMP
