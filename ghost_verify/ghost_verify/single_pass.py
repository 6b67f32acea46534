"""One pass over a bag (``verify_all``): every checker fed every event, then one result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
import os
from types import MappingProxyType

from ghost_core.properties import BAUD_V1, CycleProperty, ERUR_V1, JsonValue

from .bag import DEFAULT_CYCLE_WINDOW, GhostBag
from .completeness import CompletenessChecker, CompletenessReport
from .conformance import ConformanceChecker, ConformanceReport
from .cycle_properties import PropertyChecker, PropertyReport
from .edges import EdgeFilter, EdgesReport, read_run_edges
from .events import BagInfo, CycleEvent, GateRecord, ReadError
from .evidence import evidence_checker, EvidenceChecker, EvidenceReport
from .gate import GATE_REACH, GateChecker, GateReport
from .history import HistoryChecker, HistoryReport
from .manifest import ManifestCheck
from .parameters_check import ParametersChecker, ParametersReport
from .recovery import RecoveryChecker, RecoveryReport
from .rederive import Rederivation, RederivationReport
from .report_json import read_error_notes, read_errors_to_json
from .run_parameters import RunParameters
from .trace import DecisionTracer, DecisionTraceReport
from .unverifiable import unverifiable_to_json, UnverifiableCycle

__all__ = ['Checks', 'follow_the_re_run', 'VerificationResult', 'verify_single_pass']

_NOTHING: Mapping[int, object] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class VerificationResult:
    """The reports of one pass over one bag, and what of the bag could not be read."""

    baud: PropertyReport
    erur: PropertyReport
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
    #: The GATE-v1 report (the command gate's records); not applicable without gate records.
    gate: GateReport | None = None
    #: The re-derivation from the inputs; ``None`` when it was skipped (``--no-replay``).
    replay: RederivationReport | None = None
    #: The check of every message's parameters against the run's configuration.
    parameters: ParametersReport | None = None
    #: RECOVERY-v1 from the recorded inputs; ``None`` when it was not judged.
    recovery: RecoveryReport | None = None
    #: EVIDENCE-v1: every named input on the recorder's log times; ``None``: not asked.
    evidence: EvidenceReport | None = None
    edges: EdgesReport | None = None  # the start-up and shutdown rule (ghost_verify.edges)

    @property
    def unverifiable(self) -> tuple[UnverifiableCycle, ...]:
        """Every unverifiable cycle, by stamp: cut by the recording, or evidence before it.

        A cycle may appear twice, once per reason. A cycle BAUD-v1 or ERUR-v1 left
        unverifiable (its actuation after the recording's last message) that completeness
        did not already list as cut is listed too.
        """
        listed = {(cycle.cycle_stamp_ns, cycle.reason)
                  for cycle in self.completeness.unverifiable}
        spared = {cycle.cycle_stamp_ns: cycle
                  for cycle in (*self.baud.unverifiable, *self.erur.unverifiable)
                  if (cycle.cycle_stamp_ns, cycle.reason) not in listed}
        return tuple(sorted(
            (*self.completeness.unverifiable, *spared.values(), *self.history.unverifiable,
             *(() if self.edges is None else self.edges.unverifiable)),
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
        conforms to the policies it names (every one of them known), no gate record fails
        GATE-v1 (a bag without gate records does not fail it), every byte of the bag was
        read, (with a public key) the signed manifest verifies, and (unless skipped) every
        recorded message was re-derived from the inputs it names and equals the re-derived
        one. A re-derivation that was not possible (no inputs or configuration recorded) or
        messages whose named inputs precede the recording are limits, failures only with
        `strict`.
        """
        return (self.baud.holds and self.erur.holds and self.trace.holds
                and self.completeness.holds and self.history.holds and self.conformance.holds
                and (self.gate is None or not self.gate.violated)
                and (self.replay is None or not self.replay.fails(self.strict))
                and (self.parameters is None or self.parameters.holds)
                and (self.recovery is None or not self.recovery.violated)
                and (self.evidence is None or self.evidence.holds)
                and (self.edges is None or self.edges.holds)
                and not self.incomplete_input
                and (self.manifest is None or self.manifest.ok))

    def failures(self) -> tuple[str, ...]:
        """Why the bag does not verify, in the order checked: each failing check's line."""
        checks: list[tuple[bool, str]] = []
        if self.manifest is not None:
            checks.append((self.manifest.ok, self.manifest.summary_lines()[0]))
        checks += [(self.baud.holds, self.baud.summary()), (self.erur.holds, self.erur.summary()),
                   (self.trace.holds, self.trace.summary()),
                   (self.completeness.holds, self.completeness.summary())]
        if self.parameters is not None:
            checks.append((self.parameters.holds, self.parameters.summary()))
        checks += [(self.history.holds, self.history.summary() or 'history: inconsistent'),
                   (self.conformance.holds, self.conformance.summary())]
        if self.recovery is not None:
            checks.append((not self.recovery.violated, self.recovery.summary()))
        if self.gate is not None:
            checks.append((not self.gate.violated, self.gate.summary()))
        if self.evidence is not None:
            checks.append((self.evidence.holds, self.evidence.summary()))
        if self.edges is not None:
            checks.append((self.edges.holds, self.edges.summary() or ''))
        if self.replay is not None and self.replay.fails(self.strict):
            bridge = next((bridge for bridge in self.replay.bridges if bridge.violated), None)
            if bridge is not None and not self.replay.messages_differing:
                checks.append((False, bridge.summary()))
            else:
                checks.append((False, self.replay.summary()))
        checks.append((not self.incomplete_input,
                       'input incomplete: part of the bag could not be read'))
        return tuple(line for ok, line in checks if not ok)

    def verdict_line(self, require_coverage: bool = False) -> str:
        """``VERIFIED`` (vacuous properties said as such) or ``NOT VERIFIED: <first reason>``."""
        failures = self.failures()
        uncovered = self.uncovered()
        if not failures and require_coverage and uncovered:
            failures = (f'precondition never held: {", ".join(uncovered)} '
                        '(--require-coverage)',)
        if failures:
            reason = failures[0]
            return f'NOT VERIFIED: {reason if len(reason) <= 160 else reason[:157] + "..."}'
        notes = [f'{version} held vacuously: its precondition never held'
                 for version in uncovered]
        limits = self.limits()
        if limits:
            return f'VERIFIED WITH LIMITS: {"; ".join((*limits, *notes))}'
        if uncovered:
            return f'VERIFIED ({"; ".join(notes)})'
        return 'VERIFIED'

    def limits(self) -> tuple[str, ...]:
        """What could not be checked, and why (SPEC 5, v1.3: not checked is not passed)."""
        found = []
        if self.evidence is not None and not self.evidence.checked:
            found.append(f'evidence not checked ({self.evidence.why_not})')
        replay = self.replay
        if replay is not None and not replay.replayed:
            found.append(f'not re-derived ({replay.not_possible_reason})')
        elif replay is not None and replay.messages_cut:
            found.append(f'{replay.messages_cut} messages not re-derived: their named inputs '
                         'precede the recording')
        found.extend(f"{bridge.name}'s conversion not re-derived ({bridge.not_possible_reason})"
                     for bridge in (() if replay is None else replay.bridges)
                     if not bridge.possible)
        return tuple(found)

    def uncovered(self) -> tuple[str, ...]:
        """Return the versions of the properties whose precondition never held."""
        return tuple(report.property_version for report in (self.baud, self.erur)
                     if not report.covered)

    def summary_lines(self) -> tuple[str, ...]:
        """Return the short human summary: one line per check, then any notes."""
        lines = [self.baud.summary(), self.erur.summary(), self.trace.summary(),
                 self.completeness.summary()]
        if self.parameters is not None and self.parameters.checked:
            lines.append(self.parameters.summary())
        history = self.history.summary()
        if history is not None:
            lines.append(history)
        lines.append(self.conformance.summary())
        if self.recovery is not None:
            lines.append(self.recovery.summary())
        if self.gate is not None and self.gate.applicable:
            lines.append(self.gate.summary())
        if self.evidence is not None:
            lines.append(self.evidence.summary())
        lines.extend(line for line in (self.edges and self.edges.summary(),) if line)
        if self.replay is not None:
            lines.append(self.replay.summary())
            lines.extend(bridge.summary() for bridge in self.replay.bridges)
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
        if self.recovery is not None:
            lines.extend(f'note: {note}' for note in self.recovery.notes())
        if self.replay is not None:
            lines.extend(f'note: {note}' for note in self.replay.notes())
            if not self.replay.violated and not self.replay.complete:
                lines.append('note: replay: what the recording cannot show is a limit, not a '
                             'failure (--strict makes it one)' if not self.strict else
                             'note: replay: what the recording cannot show fails with --strict')
        lines.extend(f'note: {note}' for note in read_error_notes(self.read_errors))
        if self.parameters is not None and self.parameters.warning is not None:
            lines.append(f'warning: {self.parameters.warning}')
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
            'cycle_order': self.completeness.order_to_json(),
            'history': self.history.to_json(),
            'conformance': self.conformance.to_json(),
            'gate': None if self.gate is None else self.gate.to_json(),
            'replay': None if self.replay is None else self.replay.to_json(),
            'parameters': None if self.parameters is None else self.parameters.to_json(),
            'recovery': None if self.recovery is None else self.recovery.to_json(),
            'evidence': None if self.evidence is None else self.evidence.to_json(),
            'edges': None if self.edges is None else self.edges.to_json(),
            'limits': list(self.limits()),
            'manifest': None if self.manifest is None else self.manifest.to_json(),
            'strict': self.strict,
            'cycles_unverifiable': self.cycles_unverifiable,
            'unverifiable': unverifiable_to_json(self.unverifiable),
        }


def follow_the_re_run(recovery: RecoveryChecker, rederivation: Rederivation,
                      parameters: RunParameters) -> bool:
    """Have RECOVERY-v1 judge the inputs the re-run reads (one read), if it reads its topics.

    Call before the pass's first cycle; then ``rederivation.read_every_input()`` after its
    result says whether the checker had every input (``recovery_inputs_read``).
    """
    take = recovery.follow(parameters)
    topics = recovery.input_topics(parameters)
    return take is not None and rederivation.tap_inputs(take, topics['state'],
                                                        topics['observations'])


def verify_single_pass(
    bag: str | os.PathLike[str],
    manifest: ManifestCheck,
    parameters: RunParameters,
    *,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
    strict: bool = False,
    replay: bool = True,
) -> VerificationResult:
    """``verify_all`` in this process, in one pass over the bag (the manifest already checked).

    Every cycle is judged with `parameters` (``run_parameters.load_run_parameters``); with
    `replay`, the bag is re-derived from its inputs in the same pass (``Rederivation``).
    """
    checks = Checks.new(parameters, cycle_window=cycle_window, strict=strict,
                        evidence=evidence_checker(bag, parameters.input_topics, None if (
                            parameters.timeline is None) else parameters.timeline.start))
    rederivation = Rederivation(bag, parameters) if replay else None
    following = (rederivation is not None
                 and follow_the_re_run(checks.recovery, rederivation, parameters))
    ghost_bag = GhostBag(bag, cycle_window=cycle_window)
    edges = EdgeFilter(read_run_edges(bag), strict=strict, rederivation=rederivation)
    for event in edges.events(ghost_bag.events()):
        if rederivation is not None and isinstance(event, CycleEvent):
            # First: the checks take the messages it finds exactly the agent's as contracts.
            rederivation.update(event)
            checks.feed(event, rederivation.matched)
        else:
            checks.feed(event)
    info = ghost_bag.info
    replayed = None if rederivation is None else rederivation.result(info)
    every_input = following and rederivation is not None and rederivation.read_every_input()
    return replace(checks.result(info, manifest, replayed, bag=bag,
                                 recovery_inputs_read=every_input), edges=edges.result())


@dataclass(slots=True)
class Checks:
    """The checkers of one verify_all pass: fed every event of a bag, in order, then read."""

    baud: PropertyChecker
    erur: PropertyChecker
    tracer: DecisionTracer
    completeness: CompletenessChecker
    history: HistoryChecker
    conformance: ConformanceChecker
    gate: GateChecker
    parameters: ParametersChecker
    recovery: RecoveryChecker
    strict: bool
    evidence: EvidenceChecker | None = None

    @classmethod
    def new(
        cls,
        parameters: RunParameters,
        *,
        cycle_window: int = DEFAULT_CYCLE_WINDOW,
        strict: bool = False,
        evidence: EvidenceChecker | None = None,
    ) -> Checks:
        """Every checker of verify_all, at the start of a bag, judging with `parameters`."""
        def cycle_property(judged: CycleProperty) -> PropertyChecker:
            return PropertyChecker(judged, min_outcomes=parameters.min_outcomes,
                                   downgrade_threshold=parameters.downgrade_threshold,
                                   strict=strict, in_force=parameters.loop_in_force)

        return cls(
            baud=cycle_property(BAUD_V1),
            erur=cycle_property(ERUR_V1),
            # Bounded memory: counts + problems only.
            tracer=DecisionTracer(keep_records=False, strict=strict),
            completeness=CompletenessChecker(strict=strict),
            history=HistoryChecker(strict=strict, window_at=parameters.window_at),
            conformance=ConformanceChecker(),
            gate=GateChecker(strict=strict, reach=max(cycle_window, GATE_REACH),
                             timeouts=parameters.gate_timeouts),
            parameters=ParametersChecker(parameters),
            recovery=RecoveryChecker(),
            strict=strict,
            evidence=evidence,
        )

    def feed(self, event: CycleEvent | GateRecord,
             rederived: Mapping[int, object] = _NOTHING) -> None:
        """Judge one event of the bag (a cycle, or a gate record), in bag order.

        `rederived`: the cycle's messages the re-derivation found exactly the agent's
        (``Rederivation.matched``), which the checks take as contracts instead of parsing.
        """
        if isinstance(event, GateRecord):
            self.gate.record(event)
            return
        self.gate.update(event)
        self.baud.update(event)
        self.erur.update(event)
        self.tracer.update(event)
        self.completeness.update(event)
        self.history.update(event, rederived)
        self.conformance.update(event, rederived)
        self.parameters.update(event)
        self.recovery.update(event)
        if self.evidence is not None:
            self.evidence.update(event)

    def result(self, info: BagInfo, manifest: ManifestCheck | None,
               replay: RederivationReport | None = None, *,
               bag: str | os.PathLike[str] | None = None,
               recovery_inputs_read: bool = False) -> VerificationResult:
        """Every report, for the bag `info` describes (this ends the stream).

        With `bag`, RECOVERY-v1 is judged too: on the inputs the re-derivation read for it
        (`recovery_inputs_read`: every one, through ``RecoveryChecker.follow``), or it reads
        the bag's recorded inputs.
        """
        recovery = (None if bag is None
                    else self.recovery.result(bag, self.parameters.parameters, info,
                                              followed_every_input=recovery_inputs_read))
        return VerificationResult(
            self.baud.result(info), self.erur.result(info), self.tracer.result(info),
            self.completeness.result(), self.history.result(info),
            self.conformance.result(info), info.read_errors, manifest, self.strict,
            self.gate.result(info), replay, self.parameters.result(), recovery,
            None if self.evidence is None else self.evidence.result())
