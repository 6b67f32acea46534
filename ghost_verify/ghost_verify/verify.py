"""Every check in one pass: manifest, BAUD-v1, ERUR-v1, chain, completeness, conformance."""

from __future__ import annotations

from dataclasses import dataclass
import os

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .bag import DEFAULT_CYCLE_WINDOW, GhostBag
from .baud import BaudChecker, BaudReport
from .common import JsonValue, read_error_notes, read_errors_to_json
from .completeness import CompletenessChecker, CompletenessReport
from .conformance import ConformanceChecker, ConformanceReport
from .erur import ErurChecker, ErurReport
from .events import ReadError
from .history import HistoryChecker, HistoryReport
from .manifest import check_manifest, ManifestCheck
from .trace import DecisionTracer, DecisionTraceReport
from .unverifiable import unverifiable_to_json, UnverifiableCycle

__all__ = ['VerificationResult', 'verify_all']


@dataclass(frozen=True, slots=True)
class VerificationResult:
    """The reports of one pass over one bag, and what of the bag could not be read."""

    baud: BaudReport
    erur: ErurReport
    trace: DecisionTraceReport
    completeness: CompletenessReport
    history: HistoryReport
    conformance: ConformanceReport
    read_errors: tuple[ReadError, ...] = ()
    #: The signed-manifest check (made first); ``None`` when it was not asked for.
    manifest: ManifestCheck | None = None
    #: True when cut cycles and a recorded change of M or K were judged as the first
    #: verifier did (``--strict``): then nothing is unverifiable.
    strict: bool = False

    @property
    def unverifiable(self) -> tuple[UnverifiableCycle, ...]:
        """Every unverifiable cycle, by stamp: cut by the recording, or evidence before it.

        A cycle may appear twice, once per reason.
        """
        return tuple(sorted(
            (*self.completeness.unverifiable, *self.history.unverifiable),
            key=lambda cycle: (cycle.cycle_stamp_ns, cycle.reason.value)))

    @property
    def cycles_unverifiable(self) -> int:
        """How many distinct cycle stamps are unverifiable."""
        return len({cycle.cycle_stamp_ns for cycle in self.unverifiable})

    @property
    def incomplete_input(self) -> bool:
        """True when part of the bag could not be read (the verdicts cover what was)."""
        return bool(self.read_errors)

    @property
    def holds(self) -> bool:
        """True when everything checked holds over a complete input.

        Both properties hold, no chain link is broken or missing, every cycle is complete,
        every recorded history is consistent (or the check was skipped), every cycle
        conforms to the policies it names (every one of them known), every byte of the bag
        was read, and (with a public key) the signed manifest verifies.
        """
        return (self.baud.holds and self.erur.holds and self.trace.chain_intact
                and self.completeness.holds and self.history.holds and self.conformance.holds
                and not self.incomplete_input
                and (self.manifest is None or self.manifest.ok))

    def uncovered(self) -> tuple[str, ...]:
        """Return the versions of the properties whose precondition never held."""
        return tuple(report.property_version for report in (self.baud, self.erur)
                     if not report.covered)

    def summary_lines(self) -> tuple[str, ...]:
        """Return the short human summary: one line per check, then any notes."""
        lines = [self.baud.summary(), self.erur.summary(), self.trace.summary(),
                 self.completeness.summary()]
        history = self.history.summary()
        if history is not None:
            lines.append(history)
        lines.append(self.conformance.summary())
        unverifiable = self.unverifiable
        if unverifiable:
            reasons: dict[str, int] = {}
            for cycle in unverifiable:
                reasons[cycle.reason.value] = reasons.get(cycle.reason.value, 0) + 1
            detail = ', '.join(f'{count} {reason}' for reason, count in sorted(reasons.items()))
            lines.append(f'unverifiable: {self.cycles_unverifiable} cycles ({detail}; not '
                         'violations, --strict makes them failures)')
        for report in (self.baud, self.erur):
            lines.extend(f'note: {report.property_version}: {note}'
                         for note in report.parameter_notes)
        lines.extend(f'note: {note}' for note in self.history.notes())
        lines.extend(f'note: {note}' for note in self.conformance.notes())
        lines.extend(f'note: {note}' for note in read_error_notes(self.read_errors))
        return tuple(lines)

    def to_json(self) -> dict[str, JsonValue]:
        """Return every report as one JSON object (see docs/properties.md for the fields)."""
        return {
            'holds': self.holds,
            'incomplete_input': self.incomplete_input,
            'read_errors': read_errors_to_json(self.read_errors),
            'baud': self.baud.to_json(),
            'erur': self.erur.to_json(),
            'trace': self.trace.to_json(),
            'cycles_seen': self.completeness.cycles_seen,
            'incomplete_cycles': self.completeness.to_json(),
            'history': self.history.to_json(),
            'conformance': self.conformance.to_json(),
            'manifest': None if self.manifest is None else self.manifest.to_json(),
            'strict': self.strict,
            'cycles_unverifiable': self.cycles_unverifiable,
            'unverifiable': unverifiable_to_json(self.unverifiable),
        }


def verify_all(
    bag: str | os.PathLike[str],
    *,
    min_outcomes: int | None = None,
    downgrade_threshold: int | None = None,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
    public_key: Ed25519PublicKey | None = None,
    manifest: ManifestCheck | None = None,
    strict: bool = False,
) -> VerificationResult:
    """Read the bag once and return every report together.

    The signed manifest is checked first, with `public_key` (without one, the result only
    says whether the bag has a manifest); a caller that already checked it passes the
    `manifest` check instead.

    M and K default to the values the bag recorded; given values override them (and the
    reports note any mismatch). A damaged bag is judged on what could be read, and the result
    lists what could not (`read_errors`). Raises a GhostVerifyError subclass when nothing
    ghost could be read, or the bag holds no ghost topics, or a ghost schema is not the one
    the verifier reads.

    Each cycle is judged with the M and K it records. Cycles cut by the recording (a bag
    started after Ghost, or stopped before it) and histories whose evidence window starts
    before the bag are unverifiable: listed, not failures. `strict` restores the first
    verifier's behaviour: the first recorded M and K for every cycle, and those cycles fail.
    """
    if manifest is None:
        manifest = check_manifest(bag, public_key)
    baud = BaudChecker(min_outcomes=min_outcomes, downgrade_threshold=downgrade_threshold,
                       strict=strict)
    erur = ErurChecker(min_outcomes=min_outcomes, downgrade_threshold=downgrade_threshold,
                       strict=strict)
    # Bounded memory: counts + problems only.
    tracer = DecisionTracer(keep_records=False, strict=strict)
    completeness = CompletenessChecker(strict=strict)
    history = HistoryChecker(strict=strict)
    conformance = ConformanceChecker()
    ghost_bag = GhostBag(bag, cycle_window=cycle_window)
    for cycle in ghost_bag.cycles():
        baud.update(cycle)
        erur.update(cycle)
        tracer.update(cycle)
        completeness.update(cycle)
        history.update(cycle)
        conformance.update(cycle)
    info = ghost_bag.info
    return VerificationResult(baud.result(info), erur.result(info), tracer.result(info),
                              completeness.result(), history.result(info),
                              conformance.result(info), info.read_errors, manifest, strict)
