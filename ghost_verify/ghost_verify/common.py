"""What BAUD-v1 and ERUR-v1 share: violations, M/K resolution, the report shape, canonical JSON."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
import json
import os
from typing import Generic, TypeVar

from ghost_core.calibration import drift_condition
from ghost_core.levels import (
    ActuatorCommandKind,
    DecisionKind,
    NON_CONSERVATIVE_COMMAND_KINDS,
    SelfAssessmentLevel,
)

from .events import Actuation, BagFileDigest, BagInfo, Calibrated, CycleEvent, ReadError

__all__ = [
    'JsonValue',
    'ParameterSource',
    'PreconditionRun',
    'PropertyChecker',
    'PropertyReport',
    'RecordedParameters',
    'Violation',
    'ViolationKind',
    'canonical_report_json',
    'digests_to_json',
    'drift',
    'is_conservative_command',
    'kind_name',
    'observed_values',
    'read_error_notes',
    'read_errors_to_json',
]

JsonValue = None | bool | int | float | str | list['JsonValue'] | dict[str, 'JsonValue']
ObservedValue = int | str
_R = TypeVar('_R', bound='PropertyReport')


class ViolationKind(StrEnum):
    """Why a cycle under a property's precondition fails it (closed catalogue)."""

    P1_ADJUSTED_KNOWN = 'p1_adjusted_known'
    P2_DECISION_PROCEED = 'p2_decision_proceed'
    P3_NON_CONSERVATIVE_COMMAND = 'p3_non_conservative_command'
    Q1_ADJUSTED_NOT_KNOWN = 'q1_adjusted_not_known'
    Q2_DECISION_NOT_PROCEED = 'q2_decision_not_proceed'
    ACTUATION_MISSING = 'actuation_missing'


class ParameterSource(StrEnum):
    """Where the M or K a verifier used came from."""

    BAG = 'bag'
    COMMAND_LINE = 'command_line'
    NONE = 'none'


@dataclass(frozen=True, slots=True)
class Violation:
    """One failed postcondition at one cycle, with the values the verifier saw."""

    cycle_stamp_ns: int
    kind: ViolationKind
    postcondition: str
    observed: tuple[tuple[str, ObservedValue], ...]

    def to_json(self) -> dict[str, JsonValue]:
        """Return the violation as a JSON object."""
        return {
            'cycle_stamp_ns': self.cycle_stamp_ns,
            'kind': self.kind.value,
            'postcondition': self.postcondition,
            'observed': dict(self.observed),
        }


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

    `cycles_total` counts the cycles that have a calibrated assessment;
    `cycles_precondition_held` those among them where the precondition held (the cycles
    evaluated). `holds` is True exactly when there is no violation.
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

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object (see docs/properties.md for the fields)."""
        return {
            'property_version': self.property_version,
            'holds': self.holds,
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
        }

    def summary(self) -> str:
        """Return the one-line human verdict, e.g. ``BAUD-v1: HOLDS (6 cycles evaluated)``."""
        evaluated = _cycles(self.cycles_precondition_held)
        if self.holds:
            return f'{self.property_version}: HOLDS ({evaluated} evaluated)'
        counts: dict[str, int] = {}
        for violation in self.violations:
            counts[violation.kind.value] = counts.get(violation.kind.value, 0) + 1
        detail = ', '.join(f'{count} {kind}' for kind, count in sorted(counts.items()))
        return f'{self.property_version}: VIOLATED ({evaluated} evaluated; {detail})'


def _cycles(count: int) -> str:
    return f'{count} cycle' if count == 1 else f'{count} cycles'


def digests_to_json(files: Sequence[BagFileDigest]) -> list[JsonValue]:
    """Return the bag's file digests as a JSON list, in reading order."""
    return [{'file': item.file, 'sha256': item.sha256} for item in files]


def read_errors_to_json(errors: Sequence[ReadError]) -> list[JsonValue]:
    """Return the read errors as a JSON list, in the order they were met."""
    return [{'file': error.file, 'kind': error.kind.value, 'detail': error.detail,
             'offset': error.offset, 'count': error.count} for error in errors]


#: At most this many read errors are spelled out in a human summary (all are in the JSON).
MAX_NOTED_READ_ERRORS = 8


def read_error_notes(errors: Sequence[ReadError]) -> tuple[str, ...]:
    """Return the human notes of an incomplete input: what was not read, and what that means.

    Empty when every byte of the bag was read.
    """
    if not errors:
        return ()
    notes = [f'input incomplete: {error.describe()}' for error in errors[:MAX_NOTED_READ_ERRORS]]
    if len(errors) > MAX_NOTED_READ_ERRORS:
        notes.append(f'input incomplete: and {len(errors) - MAX_NOTED_READ_ERRORS} more '
                     'problems (see the JSON report)')
    notes.append('input incomplete: the verdicts cover only what could be read; exit code 1')
    return tuple(notes)


def canonical_report_json(document: dict[str, JsonValue]) -> str:
    """Return the canonical JSON text of a report: sorted keys, indent 2, UTF-8, final newline."""
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + '\n'


def kind_name(enum_type: type[IntEnum], value: int) -> str:
    """Return the catalogue name of `value`, or ``invalid(<value>)`` when it is outside it."""
    try:
        return enum_type(value).name
    except ValueError:
        return f'invalid({value})'


def is_conservative_command(kind: int) -> bool:
    """Return True when the command kind is in the catalogue and does not move the vehicle.

    A kind outside the catalogue cannot be shown conservative, so it counts as not.
    """
    try:
        command = ActuatorCommandKind(kind)
    except ValueError:
        return False
    return command not in NON_CONSERVATIVE_COMMAND_KINDS


def observed_values(
    calibrated: Calibrated,
    min_outcomes: int,
    downgrade_threshold: int,
    actuation: Actuation | None = None,
) -> tuple[tuple[str, ObservedValue], ...]:
    """Return the values a violation report shows for a cycle (and one of its actuations)."""
    values: list[tuple[str, ObservedValue]] = [
        ('raw_overall_level', kind_name(SelfAssessmentLevel, calibrated.raw_overall_level)),
        ('adjusted_overall_level',
         kind_name(SelfAssessmentLevel, calibrated.adjusted_overall_level)),
        ('outcomes_considered', calibrated.outcomes_considered),
        ('count_beyond_3_std', calibrated.count_beyond_3_std),
        ('count_beyond_5_std', calibrated.count_beyond_5_std),
        ('min_outcomes', min_outcomes),
        ('downgrade_threshold', downgrade_threshold),
    ]
    if actuation is not None:
        values.append(('decision_kind', kind_name(DecisionKind, actuation.decision_kind)))
        values.append(('command_kind', kind_name(ActuatorCommandKind, actuation.command_kind)))
    return tuple(values)


def drift(calibrated: Calibrated, min_outcomes: int, downgrade_threshold: int) -> bool:
    """Return drift_t of SPEC section 6 for one calibrated assessment (ghost_core's definition)."""
    return drift_condition(
        calibrated.outcomes_considered,
        calibrated.count_beyond_3_std,
        calibrated.count_beyond_5_std,
        min_outcomes,
        downgrade_threshold,
    )


@dataclass(frozen=True, slots=True)
class _ResolvedParameters:
    min_outcomes: int | None
    downgrade_threshold: int | None
    min_outcomes_source: ParameterSource
    downgrade_threshold_source: ParameterSource
    recorded: tuple[RecordedParameters, ...]
    notes: tuple[str, ...]


class _ParameterTracker:
    """Resolve the M and K to judge with, and remember what the bag recorded.

    A value given by the user is used for every cycle; otherwise the value recorded in the
    first calibrated assessment of the bag is. Every recorded pair is kept (with a cycle count)
    so that the report can show any mismatch.
    """

    def __init__(self, min_outcomes: int | None, downgrade_threshold: int | None) -> None:
        self._given = (min_outcomes, downgrade_threshold)
        self._used: tuple[int, int] | None = None
        # (M, K) -> [cycles, first cycle stamp]
        self._recorded: dict[tuple[int, int], list[int]] = {}

    def resolve(self, calibrated: Calibrated) -> tuple[int, int]:
        pair = (calibrated.min_outcomes, calibrated.downgrade_threshold)
        seen = self._recorded.get(pair)
        if seen is None:
            self._recorded[pair] = [1, calibrated.message.stamp_ns]
        else:
            seen[0] += 1
        if self._used is None:
            given_m, given_k = self._given
            self._used = (
                pair[0] if given_m is None else given_m,
                pair[1] if given_k is None else given_k,
            )
        return self._used

    def resolved(self) -> _ResolvedParameters:
        given_m, given_k = self._given
        used_m, used_k = self._used if self._used is not None else (given_m, given_k)
        recorded = tuple(
            RecordedParameters(m, k, seen[0], seen[1])
            for (m, k), seen in sorted(self._recorded.items(), key=lambda item: item[1][1])
        )
        notes = []
        for name, used, given, values in (
            ('min_outcomes', used_m, given_m, {m for m, _ in self._recorded}),
            ('downgrade_threshold', used_k, given_k, {k for _, k in self._recorded}),
        ):
            other = sorted(value for value in values if value != used)
            if other:
                source = 'the command line' if given is not None else 'the first cycle'
                notes.append(
                    f'{name}: used {used} (from {source}) but the bag recorded '
                    f'{", ".join(str(value) for value in other)}'
                )
        return _ResolvedParameters(
            min_outcomes=used_m,
            downgrade_threshold=used_k,
            min_outcomes_source=_source(given_m, used_m),
            downgrade_threshold_source=_source(given_k, used_k),
            recorded=recorded,
            notes=tuple(notes),
        )


def _source(given: int | None, used: int | None) -> ParameterSource:
    if given is not None:
        return ParameterSource.COMMAND_LINE
    return ParameterSource.NONE if used is None else ParameterSource.BAG


class PropertyChecker(ABC, Generic[_R]):
    """A property over the cycle stream: feed it with :meth:`update`, read :meth:`result`.

    Each calibrated assessment of a cycle is judged with every actuation of that cycle (on a
    well-formed bag there is one of each).
    """

    property_version: str
    report_type: type[_R]

    def __init__(
        self, *, min_outcomes: int | None = None, downgrade_threshold: int | None = None
    ) -> None:
        for name, value in (('min_outcomes', min_outcomes),
                            ('downgrade_threshold', downgrade_threshold)):
            if value is not None and (isinstance(value, bool) or value < 0):
                raise ValueError(f'{name} must be a non-negative integer, got {value!r}')
        self._parameters = _ParameterTracker(min_outcomes, downgrade_threshold)
        self._cycles_total = 0
        self._held = 0
        self._first_held: int | None = None
        self._runs: list[PreconditionRun] = []
        self._run_open = False
        self._violations: list[Violation] = []

    @abstractmethod
    def judge(
        self,
        calibrated: Calibrated,
        actuations: Sequence[Actuation],
        min_outcomes: int,
        downgrade_threshold: int,
    ) -> tuple[Violation, ...] | None:
        """Return None when the precondition does not hold, else the violations (maybe none)."""

    def update(self, cycle: CycleEvent) -> None:
        """Judge one cycle; cycles without a calibrated assessment are not evaluated."""
        if not cycle.calibrated:
            return
        self._cycles_total += 1
        held = False
        for calibrated in cycle.calibrated:
            min_outcomes, downgrade_threshold = self._parameters.resolve(calibrated)
            verdict = self.judge(calibrated, cycle.actuations, min_outcomes,
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

    def result(self, info: BagInfo) -> _R:
        """Return the frozen report for everything seen so far."""
        parameters = self._parameters.resolved()
        return self.report_type(
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
        )


def run_checker(
    checker: PropertyChecker[_R], bag: str | os.PathLike[str], cycle_window: int
) -> _R:
    """Read the bag once, feeding every cycle to `checker`, and return its report."""
    # Imported here: bag.py is the reading side and must not depend on the judging side.
    from .bag import GhostBag

    ghost_bag = GhostBag(bag, cycle_window=cycle_window)
    for cycle in ghost_bag.cycles():
        checker.update(cycle)
    return checker.result(ghost_bag.info)
