"""All three checks (BAUD-v1, ERUR-v1, the SHA-256 chain) in one pass over a bag."""

from __future__ import annotations

from dataclasses import dataclass
import os

from .bag import DEFAULT_CYCLE_WINDOW, GhostBag
from .baud import BaudChecker, BaudReport
from .common import JsonValue
from .erur import ErurChecker, ErurReport
from .trace import DecisionTracer, DecisionTraceReport

__all__ = ['VerificationResult', 'verify_all']


@dataclass(frozen=True, slots=True)
class VerificationResult:
    """The three reports of one pass over one bag."""

    baud: BaudReport
    erur: ErurReport
    trace: DecisionTraceReport

    @property
    def holds(self) -> bool:
        """True when both properties hold and no chain link is broken or missing."""
        return self.baud.holds and self.erur.holds and self.trace.chain_intact

    def uncovered(self) -> tuple[str, ...]:
        """Return the versions of the properties whose precondition never held."""
        return tuple(report.property_version for report in (self.baud, self.erur)
                     if not report.covered)

    def summary_lines(self) -> tuple[str, ...]:
        """Return the short human summary: one line per check, then any notes."""
        lines = [self.baud.summary(), self.erur.summary(), self.trace.summary()]
        for report in (self.baud, self.erur):
            lines.extend(f'note: {report.property_version}: {note}'
                         for note in report.parameter_notes)
        return tuple(lines)

    def to_json(self) -> dict[str, JsonValue]:
        """Return the three full reports as one JSON object."""
        return {
            'holds': self.holds,
            'baud': self.baud.to_json(),
            'erur': self.erur.to_json(),
            'trace': self.trace.to_json(),
        }


def verify_all(
    bag: str | os.PathLike[str],
    *,
    min_outcomes: int | None = None,
    downgrade_threshold: int | None = None,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
) -> VerificationResult:
    """Read the bag once and return the BAUD-v1, ERUR-v1 and chain reports together.

    M and K default to the values the bag recorded; given values override them (and the
    reports note any mismatch). Raises a GhostVerifyError subclass when the input cannot be
    read as a bag or holds no ghost topics.
    """
    baud = BaudChecker(min_outcomes=min_outcomes, downgrade_threshold=downgrade_threshold)
    erur = ErurChecker(min_outcomes=min_outcomes, downgrade_threshold=downgrade_threshold)
    tracer = DecisionTracer()
    ghost_bag = GhostBag(bag, cycle_window=cycle_window)
    for cycle in ghost_bag.cycles():
        baud.update(cycle)
        erur.update(cycle)
        tracer.update(cycle)
    info = ghost_bag.info
    return VerificationResult(baud.result(info), erur.result(info), tracer.result(info))
