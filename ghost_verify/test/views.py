"""Typed cycle views built directly, for testing the pure judge functions without a bag."""

from __future__ import annotations

from ghost_core.properties import Violation
from ghost_verify.events import Actuation, Calibrated, GhostMessage, GhostTopicKind

STAMP = 7_000_000_000


def calibrated(adjusted: int, *, raw: int = 0, considered: int = 6, beyond_3: int = 1,
               beyond_5: int = 1, m: int = 4, k: int = 2) -> Calibrated:
    """A calibrated assessment with the given levels and history counts (drift by default)."""
    message = GhostMessage('/c', 'ghost_interfaces/msg/CalibratedSelfAssessment',
                           GhostTopicKind.CALIBRATED, 0, STAMP, {}, '')
    return Calibrated(message, raw, '', '', adjusted, considered, beyond_3, beyond_5, m, k, 32,
                      '')


def actuation(decision: int, command: int) -> Actuation:
    """An actuation carrying decision kind `decision` and command kind `command`."""
    message = GhostMessage('/a', 'ghost_interfaces/msg/ActionEmission',
                           GhostTopicKind.ACTUATION, 0, STAMP, {}, '')
    return Actuation(message, decision, command, '')


def kinds(violations: tuple[Violation, ...] | None) -> list[str]:
    """The sorted violation kinds of a judge's answer (which must not be None)."""
    assert violations is not None
    return sorted(v.kind.value for v in violations)
