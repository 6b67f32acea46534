"""BAUD-v1 and ERUR-v1 over a bag: one checker, the property its parameter.

BAUD-v1, bounded action under drift: under drift the agent neither claims KNOWN nor proceeds.
ERUR-v1, eventual reactivation under recovery: drift-clean and raw KNOWN means PROCEED.

The judgement of one cycle is ``ghost_core.properties`` (``BAUD_V1``/``ERUR_V1``: a version
and a judge, ``judge_baud``/``judge_erur``), the same functions the live ``monitor`` node runs;
``PropertyChecker`` runs one of them over a cycle stream, ``verify_property`` over a bag.
One cohesive job: a cycle property over a bag, from the parameters each cycle is judged with
to the cycles the recording's end leaves unverifiable and the report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
import os
from typing import TypedDict, Unpack

from ghost_core.properties import (
    BAUD_V1,
    CycleProperty,
    ERUR_V1,
    JsonValue,
    ParameterTracker,
    Violation,
)

from .bag import DEFAULT_CYCLE_WINDOW
from .checker import run_checker
from .events import BagFileDigest, BagInfo, CycleEvent, ReadError
from .report_json import digests_to_json, read_errors_to_json
from .run_parameters import load_run_parameters, ParameterSource
from .unverifiable import (
    CUT_CYCLE_LIMIT,
    last_log_time,
    unverifiable_to_json,
    UnverifiableCycle,
    UnverifiableReason,
)

__all__ = ['ParameterSource', 'PreconditionRun', 'PropertyChecker', 'PropertyReport',
           'RecordedParameters', 'VerifyOptions', 'verify_baud', 'verify_erur',
           'verify_property']


@dataclass(frozen=True, slots=True)
class RecordedParameters:
    """One (M, K) pair recorded in the bag's calibrated assessments, and where it appeared."""

    min_outcomes: int
    downgrade_threshold: int
    cycles: int
    first_cycle_stamp_ns: int

    def to_json(self) -> dict[str, JsonValue]:
        """Return the pair as a JSON object."""
        return {
            'min_outcomes': self.min_outcomes,
            'downgrade_threshold': self.downgrade_threshold,
            'cycles': self.cycles,
            'first_cycle_stamp_ns': self.first_cycle_stamp_ns,
        }


@dataclass(frozen=True, slots=True)
class PreconditionRun:
    """A maximal run of consecutive evaluated cycles under which the precondition held."""

    first_cycle_stamp_ns: int
    last_cycle_stamp_ns: int
    cycles: int

    def to_json(self) -> dict[str, JsonValue]:
        """Return the run as a JSON object."""
        return {
            'first_cycle_stamp_ns': self.first_cycle_stamp_ns,
            'last_cycle_stamp_ns': self.last_cycle_stamp_ns,
            'cycles': self.cycles,
        }


@dataclass(frozen=True, slots=True)
class PropertyReport:
    """The verdict of one property over one bag (SPEC section 6).

    `cycles_total` counts the cycles judged that have a calibrated assessment;
    `cycles_precondition_held` those among them where the precondition held (the cycles
    evaluated). `unverifiable` lists the cycles whose actuation the recording cannot have
    held: a calibrated assessment without an actuation, after which the bag holds no message
    at all (not judged; always empty when strict). `holds` is True exactly when there is no
    violation; `vacuous` when it holds on no cycle at all. `min_outcomes`/
    `downgrade_threshold` are those the first cycle was judged with; each cycle is judged
    with the pair it records (see `recorded_parameters`) unless given.
    """

    property_version: str
    bag_files: tuple[BagFileDigest, ...]
    min_outcomes: int | None
    downgrade_threshold: int | None
    min_outcomes_source: ParameterSource
    downgrade_threshold_source: ParameterSource
    recorded_parameters: tuple[RecordedParameters, ...]
    parameters_mismatch: bool
    parameter_notes: tuple[str, ...]
    cycles_total: int
    cycles_precondition_held: int
    first_precondition_cycle_stamp_ns: int | None
    precondition_runs: tuple[PreconditionRun, ...]
    violations: tuple[Violation, ...]
    read_errors: tuple[ReadError, ...] = ()
    unverifiable: tuple[UnverifiableCycle, ...] = ()
    strict: bool = False

    @property
    def holds(self) -> bool:
        """True when no cycle read under the precondition failed a postcondition.

        On an incomplete input (`incomplete_input`) this is the verdict over what was read.
        """
        return not self.violations

    @property
    def incomplete_input(self) -> bool:
        """True when part of the bag could not be read (see `read_errors`)."""
        return bool(self.read_errors)

    @property
    def covered(self) -> bool:
        """True when the precondition held on at least one cycle (the verdict is not vacuous)."""
        return self.cycles_precondition_held > 0

    @property
    def vacuous(self) -> bool:
        """True when the verdict holds only because the precondition never held."""
        return self.holds and not self.covered

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object (see docs/properties.md for the fields)."""
        return {
            'property_version': self.property_version,
            'holds': self.holds,
            'vacuous': self.vacuous,
            'bag_files': digests_to_json(self.bag_files),
            'min_outcomes': self.min_outcomes,
            'downgrade_threshold': self.downgrade_threshold,
            'parameters_source': {
                'min_outcomes': self.min_outcomes_source.value,
                'downgrade_threshold': self.downgrade_threshold_source.value,
            },
            'recorded_parameters': [item.to_json() for item in self.recorded_parameters],
            'parameters_mismatch': self.parameters_mismatch,
            'parameter_notes': list(self.parameter_notes),
            'cycles_total': self.cycles_total,
            'cycles_precondition_held': self.cycles_precondition_held,
            'first_precondition_cycle_stamp_ns': self.first_precondition_cycle_stamp_ns,
            'precondition_runs': [run.to_json() for run in self.precondition_runs],
            'violations': [violation.to_json() for violation in self.violations],
            'incomplete_input': self.incomplete_input,
            'read_errors': read_errors_to_json(self.read_errors),
            'strict': self.strict,
            'cycles_unverifiable': len(self.unverifiable),
            'unverifiable': unverifiable_to_json(self.unverifiable),
        }

    def summary(self) -> str:
        """Return the one-line human verdict, e.g. ``BAUD-v1: HOLDS (6 cycles evaluated)``."""
        evaluated = _cycles(self.cycles_precondition_held)
        if self.unverifiable:
            evaluated += f', {len(self.unverifiable)} unverifiable'
        if self.vacuous:
            return f'{self.property_version}: HOLDS vacuously ({evaluated})'
        if self.holds:
            return f'{self.property_version}: HOLDS ({evaluated} evaluated)'
        counts: dict[str, int] = {}
        for violation in self.violations:
            counts[violation.kind.value] = counts.get(violation.kind.value, 0) + 1
        detail = ', '.join(f'{count} {kind}' for kind, count in sorted(counts.items()))
        return f'{self.property_version}: VIOLATED ({evaluated} evaluated; {detail})'


def _cycles(count: int) -> str:
    return f'{count} cycle' if count == 1 else f'{count} cycles'


@dataclass(frozen=True, slots=True)
class _ResolvedParameters:
    min_outcomes: int | None
    downgrade_threshold: int | None
    min_outcomes_source: ParameterSource
    downgrade_threshold_source: ParameterSource
    recorded: tuple[RecordedParameters, ...]
    notes: tuple[str, ...]


class _ParameterTracker(ParameterTracker):
    """ghost_core's M/K resolution (see ParameterTracker), plus what the report shows of it."""

    def resolved(self) -> _ResolvedParameters:
        given_m, given_k = self.given
        used_m, used_k = self.first_used
        configured = self._in_force is not None
        return _ResolvedParameters(
            min_outcomes=used_m,
            downgrade_threshold=used_k,
            min_outcomes_source=_source(given_m, used_m, configured),
            downgrade_threshold_source=_source(given_k, used_k, configured),
            recorded=tuple(RecordedParameters(*pair) for pair in self.recorded()),
            notes=self.notes(),
        )


def _source(given: int | None, used: int | None, configured: bool) -> ParameterSource:
    if given is not None:
        return ParameterSource.COMMAND_LINE
    if used is None:
        return ParameterSource.NONE
    return ParameterSource.RUN_CONFIGURATION if configured else ParameterSource.SELF_REPORTED


def _anchor(cycle: CycleEvent) -> int:
    """When the actuation of a cycle that lacks one was due: after its C_t and rationales."""
    return max(view.message.log_time_ns for views in (cycle.calibrated, cycle.rationales)
               for view in views)


class PropertyChecker:
    """One cycle property (BAUD-v1 or ERUR-v1) over the cycle stream.

    The property is a ``ghost_core.properties.CycleProperty``: a version and a judge. Feed the
    checker with :meth:`update`, read :meth:`result`.

    Every cycle that has a calibrated assessment is judged, whatever else it lacks: each
    calibrated assessment of a cycle with every actuation of that cycle (on a well-formed bag
    there is one of each), with the given M and K, else those of the run's configuration in
    force at its stamp (`in_force`), else those it records itself; a precondition
    that holds without an actuation is ``actuation_missing`` (SPEC section 6). The one
    exception, unless `strict`: a cycle without an actuation after whose calibrated
    assessment and rationale the bag holds no message of any kind (the recording stopped
    before its actuation could be recorded) is listed as unverifiable, not judged. Such a
    cycle waits until a later message shows the recording went on (it is then judged), or
    until :meth:`result` (which ends the stream) knows the bag's last message; at most
    CUT_CYCLE_LIMIT cycles wait, the oldest is judged beyond.
    """

    def __init__(
        self,
        cycle_property: CycleProperty,
        *,
        min_outcomes: int | None = None,
        downgrade_threshold: int | None = None,
        strict: bool = False,
        in_force: Callable[[int], tuple[int, int]] | None = None,
    ) -> None:
        for name, value in (('min_outcomes', min_outcomes),
                            ('downgrade_threshold', downgrade_threshold)):
            if value is not None and (isinstance(value, bool) or value < 1):
                raise ValueError(f'{name} must be a positive integer, got {value!r}')
        # Strict restores the verifier's first behaviour exactly: the first recorded pair for
        # every cycle, and no cycle spared as cut.
        self.cycle_property = cycle_property
        self.property_version = cycle_property.version
        self._strict = strict
        self._parameters = _ParameterTracker(min_outcomes, downgrade_threshold,
                                             per_cycle=not strict, in_force=in_force)
        # Cycles with a calibrated assessment and no actuation, not yet shown to be before
        # the recording's end, in stream order.
        self._waiting: list[CycleEvent] = []
        self._unverifiable: list[UnverifiableCycle] = []
        # The greatest log time of the ghost messages fed so far.
        self._last_log_ns: int | None = None
        self._cycles_total = 0
        self._held = 0
        self._first_held: int | None = None
        self._runs: list[PreconditionRun] = []
        self._run_open = False
        self._violations: list[Violation] = []
        # The first cycle judged (one with a calibrated assessment): where a run may join
        # the one a part of the bag before ended with (absorb()).
        self._first_judged: int | None = None

    def update(self, cycle: CycleEvent) -> None:
        """Judge one cycle; cycles without a calibrated assessment are not evaluated."""
        if self._strict:
            self._judge_cycle(cycle)
            return
        last = last_log_time(cycle)
        self._release(last)
        if self._last_log_ns is None or last > self._last_log_ns:
            self._last_log_ns = last
        if cycle.calibrated and not cycle.actuations:
            self._waiting.append(cycle)
            if len(self._waiting) > CUT_CYCLE_LIMIT:
                self._judge_cycle(self._waiting.pop(0))
            return
        self._judge_cycle(cycle)

    def _release(self, later_than: int | None) -> None:
        """Judge the waiting cycles a message logged at `later_than` shows were recorded whole."""
        while self._waiting and (later_than is not None
                                 and later_than > _anchor(self._waiting[0])):
            self._judge_cycle(self._waiting.pop(0))

    def _judge_cycle(self, cycle: CycleEvent) -> None:
        if not cycle.calibrated:
            return
        if self._first_judged is None:
            self._first_judged = cycle.stamp_ns
        self._cycles_total += 1
        held = False
        for calibrated in cycle.calibrated:
            min_outcomes, downgrade_threshold = self._parameters.resolve(calibrated)
            verdict = self.cycle_property.judge(calibrated, cycle.actuations, min_outcomes,
                                                downgrade_threshold)
            if verdict is not None:
                held = True
                self._violations.extend(verdict)
        if held:
            self._held += 1
            if self._first_held is None:
                self._first_held = cycle.stamp_ns
            if self._run_open:
                last = self._runs[-1]
                self._runs[-1] = PreconditionRun(
                    last.first_cycle_stamp_ns, cycle.stamp_ns, last.cycles + 1
                )
            else:
                self._runs.append(PreconditionRun(cycle.stamp_ns, cycle.stamp_ns, 1))
        self._run_open = held

    def _finish(self, info: BagInfo) -> None:
        """End the stream: a waiting cycle after the bag's last message is unverifiable."""
        self._release(info.last_log_time_ns)
        ended = not info.read_errors and info.last_log_time_ns is not None
        for cycle in self._waiting:
            if ended:
                self._unverifiable.append(UnverifiableCycle(
                    cycle.stamp_ns, UnverifiableReason.CUT_AT_END,
                    "lacks actuation; the bag holds no message after the cycle's "
                    'calibrated assessment and rationale (the recording stopped)'))
            else:
                self._judge_cycle(cycle)
        self._waiting = []

    def result(self, info: BagInfo) -> PropertyReport:
        """Return the frozen report for everything seen so far (this ends the stream)."""
        self._finish(info)
        parameters = self._parameters.resolved()
        return PropertyReport(
            property_version=self.property_version,
            bag_files=info.files,
            min_outcomes=parameters.min_outcomes,
            downgrade_threshold=parameters.downgrade_threshold,
            min_outcomes_source=parameters.min_outcomes_source,
            downgrade_threshold_source=parameters.downgrade_threshold_source,
            recorded_parameters=parameters.recorded,
            parameters_mismatch=bool(parameters.notes),
            parameter_notes=parameters.notes,
            cycles_total=self._cycles_total,
            cycles_precondition_held=self._held,
            first_precondition_cycle_stamp_ns=self._first_held,
            precondition_runs=tuple(self._runs),
            violations=tuple(self._violations),
            read_errors=info.read_errors,
            unverifiable=tuple(self._unverifiable),
            strict=self._strict,
        )


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
    """Read the bag once and return its report for ``cycle_property``.

    Each cycle is judged with the given M and K, else with the run's recorded configuration
    in force at its stamp, else (no configuration recorded) with the values its messages
    claim, which a note of the report then says.
    """
    parameters = load_run_parameters(bag, min_outcomes=options.get('min_outcomes'),
                                     downgrade_threshold=options.get('downgrade_threshold'))
    checker = PropertyChecker(cycle_property, min_outcomes=parameters.min_outcomes,
                              downgrade_threshold=parameters.downgrade_threshold,
                              strict=options.get('strict', False),
                              in_force=parameters.loop_in_force)
    report = run_checker(checker, bag, options.get('cycle_window', DEFAULT_CYCLE_WINDOW))
    warning = parameters.warning(window=False)
    if warning is None:
        return report
    return replace(report, parameter_notes=(*report.parameter_notes, warning))


def verify_baud(bag: str | os.PathLike[str], **options: Unpack[VerifyOptions]) -> PropertyReport:
    """The bag's BAUD-v1 report (``verify_property``)."""
    return verify_property(BAUD_V1, bag, **options)


def verify_erur(bag: str | os.PathLike[str], **options: Unpack[VerifyOptions]) -> PropertyReport:
    """The bag's ERUR-v1 report (``verify_property``)."""
    return verify_property(ERUR_V1, bag, **options)
