"""What BAUD-v1 and ERUR-v1 share: violations, M/K resolution, the report shape, canonical JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
import json
import os
from typing import Protocol, TypeVar

# The judgement itself is pure and lives in ghost_core, where the live monitor uses it too;
# these names stay importable from here.
from ghost_core.properties import (
    CycleProperty,
    drift,
    is_conservative_command,
    JsonValue,
    kind_name,
    observed_values,
    ParameterTracker,
    Violation,
    ViolationKind,
)

from .events import BagFileDigest, BagInfo, CycleEvent, ReadError
from .unverifiable import CycleCuts, unverifiable_to_json, UnverifiableCycle

__all__ = [
    'CycleChecker',
    'JsonValue',
    'ParameterSource',
    'PreconditionRun',
    'PropertyChecker',
    'PropertyReport',
    'RecordedParameters',
    'Violation',
    'ViolationKind',
    'absorb_cuts',
    'canonical_report_json',
    'digests_to_json',
    'drift',
    'is_conservative_command',
    'kind_name',
    'observed_values',
    'read_error_notes',
    'read_errors_to_json',
    'resume_cuts',
]

_T = TypeVar('_T')
_R_co = TypeVar('_R_co', covariant=True)


class CycleChecker(Protocol[_R_co]):
    """Anything judged over the cycle stream: ``update(cycle)`` per cycle, then ``result(info)``.

    PropertyChecker (BAUD-v1, ERUR-v1) is one; so is the policy-conformance checker.
    """

    def update(self, cycle: CycleEvent) -> None:
        """Judge one cycle."""
        ...

    def result(self, info: BagInfo) -> _R_co:
        """Return the report for everything seen so far."""
        ...


class ParameterSource(StrEnum):
    """Where the M or K a verifier used came from."""

    BAG = 'bag'
    COMMAND_LINE = 'command_line'
    NONE = 'none'


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
    evaluated). `unverifiable` lists the cycles cut by the recording (not judged, see
    unverifiable.py; always empty when strict). `holds` is True exactly when there is no
    violation. `min_outcomes`/`downgrade_threshold` are those the first cycle was judged with;
    each cycle is judged with the pair it records (see `recorded_parameters`) unless given.
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
            'strict': self.strict,
            'cycles_unverifiable': len(self.unverifiable),
            'unverifiable': unverifiable_to_json(self.unverifiable),
        }

    def summary(self) -> str:
        """Return the one-line human verdict, e.g. ``BAUD-v1: HOLDS (6 cycles evaluated)``."""
        evaluated = _cycles(self.cycles_precondition_held)
        if self.unverifiable:
            evaluated += f', {len(self.unverifiable)} unverifiable'
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

    def absorb(self, later: ParameterTracker) -> None:
        """Continue with what `later` saw on the part of the bag after this one (jobs.py)."""
        for pair, (cycles, first_ns) in later._recorded.items():
            seen = self._recorded.get(pair)
            if seen is None:
                self._recorded[pair] = [cycles, first_ns]
            else:
                seen[0] += cycles
        if later._used is not None:
            self._used = later._used
        if self._first_used is None:
            self._first_used = later._first_used

    def resolved(self) -> _ResolvedParameters:
        given_m, given_k = self.given
        used_m, used_k = self.first_used
        return _ResolvedParameters(
            min_outcomes=used_m,
            downgrade_threshold=used_k,
            min_outcomes_source=_source(given_m, used_m),
            downgrade_threshold_source=_source(given_k, used_k),
            recorded=tuple(RecordedParameters(*pair) for pair in self.recorded()),
            notes=self.notes(),
        )


def _source(given: int | None, used: int | None) -> ParameterSource:
    if given is not None:
        return ParameterSource.COMMAND_LINE
    return ParameterSource.NONE if used is None else ParameterSource.BAG


class PropertyChecker:
    """One cycle property (BAUD-v1 or ERUR-v1) over the cycle stream.

    The property is a ``ghost_core.properties.CycleProperty``: a version and a judge. Feed the
    checker with :meth:`update`, read :meth:`result`.

    Each calibrated assessment of a cycle is judged with every actuation of that cycle (on a
    well-formed bag there is one of each), with the M and K it records (or the given ones).
    Unless `strict`, the cycles cut by the recording at the bag's start or end are not judged
    but listed as unverifiable (see unverifiable.py); :meth:`result` then ends the stream.
    """

    def __init__(
        self,
        cycle_property: CycleProperty,
        *,
        min_outcomes: int | None = None,
        downgrade_threshold: int | None = None,
        strict: bool = False,
    ) -> None:
        for name, value in (('min_outcomes', min_outcomes),
                            ('downgrade_threshold', downgrade_threshold)):
            if value is not None and (isinstance(value, bool) or value < 0):
                raise ValueError(f'{name} must be a non-negative integer, got {value!r}')
        # Strict restores the verifier's first behaviour exactly: the first recorded pair for
        # every cycle, and no cycle spared as cut.
        self.cycle_property = cycle_property
        self.property_version = cycle_property.version
        self._strict = strict
        self._parameters = _ParameterTracker(min_outcomes, downgrade_threshold,
                                             per_cycle=not strict)
        self._cuts = CycleCuts(strict=strict)
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
        for ready in self._cuts.feed(cycle):
            self._judge_cycle(ready)

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

    def resume(self) -> None:
        """Start after the cycles of an earlier part of the bag, the last of them complete."""
        resume_cuts(self._cuts)

    def absorb(self, later: PropertyChecker) -> None:
        """Continue with the part of the bag after this one (`later` resumed after it).

        This part ended with a complete cycle (so nothing waits in its cuts): counts add up,
        lists follow each other, and a precondition run still open here goes on in the
        first run of `later` when that starts with its first judged cycle.
        """
        self._parameters.absorb(later._parameters)
        absorb_cuts(self._cuts, later._cuts)
        self._cycles_total += later._cycles_total
        self._held += later._held
        if self._first_held is None:
            self._first_held = later._first_held
        runs = list(later._runs)
        if (self._run_open and runs and self._runs
                and runs[0].first_cycle_stamp_ns == later._first_judged):
            last, first = self._runs.pop(), runs.pop(0)
            self._runs.append(PreconditionRun(last.first_cycle_stamp_ns,
                                              first.last_cycle_stamp_ns,
                                              last.cycles + first.cycles))
        self._runs.extend(runs)
        if later._first_judged is not None:
            self._run_open = later._run_open
        if self._first_judged is None:
            self._first_judged = later._first_judged
        self._violations.extend(later._violations)

    def result(self, info: BagInfo) -> PropertyReport:
        """Return the frozen report for everything seen so far (this ends the stream)."""
        for ready in self._cuts.finish():
            self._judge_cycle(ready)
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
            unverifiable=self._cuts.unverifiable,
            strict=self._strict,
        )


def resume_cuts(cuts: CycleCuts) -> None:
    """Set `cuts` as after a complete cycle: nothing waits, nothing more is cut at the start."""
    cuts._seen_complete = True
    cuts._overflowed = False
    cuts._pending.clear()


def absorb_cuts(cuts: CycleCuts, later: CycleCuts) -> None:
    """Continue `cuts` (which ended with a complete cycle) with `later` (resumed after it)."""
    cuts._cut.extend(later._cut)
    cuts._pending = later._pending
    cuts._seen_complete = later._seen_complete
    cuts._overflowed = later._overflowed


def run_checker(
    checker: CycleChecker[_T], bag: str | os.PathLike[str], cycle_window: int
) -> _T:
    """Read the bag once, feeding every cycle to `checker`, and return its report."""
    # Imported here: bag.py is the reading side and must not depend on the judging side.
    from .bag import GhostBag

    ghost_bag = GhostBag(bag, cycle_window=cycle_window)
    for cycle in ghost_bag.cycles():
        checker.update(cycle)
    return checker.result(ghost_bag.info)
