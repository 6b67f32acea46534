"""BAUD-v1 and ERUR-v1 judged on one cycle: the pure judgement the verifier and the monitor share.

A judge sees one calibrated assessment ``C_t`` and the actuations of the same cycle (SPEC
section 6) and returns ``None`` when its precondition does not hold, else the violations it
found (maybe none). The offline verifier (``ghost_verify``) feeds it the cycles of a bag; the
live monitor (``ghost_core.monitor``, in the ``monitor`` node) the cycles as they arrive over
DDS. Both see a cycle through the small read-only views below, so either side can bring its
own record type (the verifier's bag events, the node's ``CalibratedView``).

One cohesive job, kept in one module: the per-cycle judges, their facts, and their M and K.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Protocol

from ghost_core.calibration import drift_condition
from ghost_core.levels import (
    ActuatorCommandKind,
    DecisionKind,
    NON_CONSERVATIVE_COMMAND_KINDS,
    SelfAssessmentLevel,
)

__all__ = [
    'BAUD_V1',
    'BAUD_VERSION',
    'ERUR_V1',
    'ERUR_VERSION',
    'PROPERTIES',
    'ActuationFacts',
    'ActuationView',
    'CalibratedFacts',
    'CalibratedView',
    'CycleProperty',
    'Judge',
    'JsonValue',
    'ObservedValue',
    'ParameterTracker',
    'Violation',
    'ViolationKind',
    'drift',
    'is_conservative_command',
    'judge_baud',
    'judge_erur',
    'kind_name',
    'observed_values',
]

JsonValue = None | bool | int | float | str | list['JsonValue'] | dict[str, 'JsonValue']
ObservedValue = int | str

BAUD_VERSION = 'BAUD-v1'
ERUR_VERSION = 'ERUR-v1'


class ViolationKind(StrEnum):
    """Why a cycle under a property's precondition fails it (closed catalogue)."""

    P1_ADJUSTED_KNOWN = 'p1_adjusted_known'
    P2_DECISION_PROCEED = 'p2_decision_proceed'
    P3_NON_CONSERVATIVE_COMMAND = 'p3_non_conservative_command'
    Q1_ADJUSTED_NOT_KNOWN = 'q1_adjusted_not_known'
    Q2_DECISION_NOT_PROCEED = 'q2_decision_not_proceed'
    ACTUATION_MISSING = 'actuation_missing'


@dataclass(frozen=True, slots=True)
class Violation:
    """One failed postcondition at one cycle, with the values the judge saw."""

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


class CalibratedFacts(Protocol):
    """What the judges read of a calibrated assessment ``C_t`` (levels as catalogue ints)."""

    @property
    def stamp_ns(self) -> int:
        """The cycle stamp."""
        ...

    @property
    def raw_overall_level(self) -> int:
        """``C_t.raw_assessment.overall_level``."""
        ...

    @property
    def adjusted_overall_level(self) -> int:
        """``C_t.adjusted_overall_level``."""
        ...

    @property
    def outcomes_considered(self) -> int:
        """``H_t.outcomes_considered``."""
        ...

    @property
    def count_beyond_3_std(self) -> int:
        """``H_t.count_beyond_3_std``."""
        ...

    @property
    def count_beyond_5_std(self) -> int:
        """``H_t.count_beyond_5_std``."""
        ...

    @property
    def min_outcomes(self) -> int:
        """The M recorded in ``C_t``."""
        ...

    @property
    def downgrade_threshold(self) -> int:
        """The K recorded in ``C_t``."""
        ...


class ActuationFacts(Protocol):
    """What the judges read of an actuation ``A_t``: its inline decision and its command."""

    @property
    def decision_kind(self) -> int:
        """``A_t.decision.kind``."""
        ...

    @property
    def command_kind(self) -> int:
        """``A_t.command.kind``."""
        ...


@dataclass(frozen=True, slots=True)
class CalibratedView:
    """A calibrated assessment reduced to what the judges read (a ``CalibratedFacts``)."""

    stamp_ns: int
    raw_overall_level: int
    adjusted_overall_level: int
    outcomes_considered: int
    count_beyond_3_std: int
    count_beyond_5_std: int
    min_outcomes: int
    downgrade_threshold: int


@dataclass(frozen=True, slots=True)
class ActuationView:
    """An actuation reduced to its stamp, inline decision and command (an ``ActuationFacts``)."""

    stamp_ns: int
    decision_kind: int
    command_kind: int


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
    calibrated: CalibratedFacts,
    min_outcomes: int,
    downgrade_threshold: int,
    actuation: ActuationFacts | None = None,
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


def drift(calibrated: CalibratedFacts, min_outcomes: int, downgrade_threshold: int) -> bool:
    """Return drift_t of SPEC section 6 for one calibrated assessment (ghost_core's definition)."""
    return drift_condition(
        calibrated.outcomes_considered,
        calibrated.count_beyond_3_std,
        calibrated.count_beyond_5_std,
        min_outcomes,
        downgrade_threshold,
    )


def judge_baud(
    calibrated: CalibratedFacts,
    actuations: Sequence[ActuationFacts],
    min_outcomes: int,
    downgrade_threshold: int,
) -> tuple[Violation, ...] | None:
    """Judge one cycle against BAUD-v1; None when drift_t does not hold.

    Under drift: P1 the adjusted level is not KNOWN, P2 no actuation's decision is PROCEED,
    P3 every actuation's command is conservative; no actuation at all is `actuation_missing`.
    """
    if not drift(calibrated, min_outcomes, downgrade_threshold):
        return None
    stamp_ns = calibrated.stamp_ns
    found: list[Violation] = []
    if calibrated.adjusted_overall_level == SelfAssessmentLevel.KNOWN:
        found.append(Violation(
            stamp_ns, ViolationKind.P1_ADJUSTED_KNOWN, 'P1',
            observed_values(calibrated, min_outcomes, downgrade_threshold),
        ))
    if not actuations:
        found.append(Violation(
            stamp_ns, ViolationKind.ACTUATION_MISSING, 'P2,P3',
            observed_values(calibrated, min_outcomes, downgrade_threshold),
        ))
    for actuation in actuations:
        observed = observed_values(calibrated, min_outcomes, downgrade_threshold, actuation)
        if actuation.decision_kind == DecisionKind.PROCEED:
            found.append(Violation(stamp_ns, ViolationKind.P2_DECISION_PROCEED, 'P2', observed))
        if not is_conservative_command(actuation.command_kind):
            found.append(Violation(
                stamp_ns, ViolationKind.P3_NON_CONSERVATIVE_COMMAND, 'P3', observed
            ))
    return tuple(found)


def judge_erur(
    calibrated: CalibratedFacts,
    actuations: Sequence[ActuationFacts],
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
    stamp_ns = calibrated.stamp_ns
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


#: A judge: (C_t, the actuations of t, M, K) -> None (precondition false) or the violations.
Judge = Callable[[CalibratedFacts, Sequence[ActuationFacts], int, int],
                 tuple[Violation, ...] | None]


@dataclass(frozen=True, slots=True)
class CycleProperty:
    """A property judged cycle by cycle: its version string and its judge."""

    version: str
    judge: Judge


BAUD_V1 = CycleProperty(BAUD_VERSION, judge_baud)
ERUR_V1 = CycleProperty(ERUR_VERSION, judge_erur)
#: Every property Ghost is checked against, in report order.
PROPERTIES: tuple[CycleProperty, ...] = (BAUD_V1, ERUR_V1)


class ParameterTracker:
    """Resolve the M and K to judge with, and remember every pair the stream recorded.

    A value given by the user is used for every cycle. Otherwise, with `in_force` (the run's
    recorded configuration: ``ghost_core.run_configuration``), the M and K in force at the
    cycle's stamp are, whatever the message claims. Without either (a bag with no recorded
    configuration), the messages' own values are: by default the first calibrated
    assessment's; with ``per_cycle`` each calibrated assessment's own, so that a change of M
    or K mid-run is followed. Every recorded pair is kept (with a cycle count and the stamp it
    first appeared at) so that a change is shown.
    """

    def __init__(
        self,
        min_outcomes: int | None = None,
        downgrade_threshold: int | None = None,
        *,
        per_cycle: bool = False,
        in_force: Callable[[int], tuple[int, int]] | None = None,
    ) -> None:
        self._given = (min_outcomes, downgrade_threshold)
        self._per_cycle = per_cycle
        self._in_force = in_force
        self._used: tuple[int, int] | None = None
        self._first_used: tuple[int, int] | None = None
        # (M, K) -> [cycles, first cycle stamp]
        self._recorded: dict[tuple[int, int], list[int]] = {}

    @property
    def given(self) -> tuple[int | None, int | None]:
        """The (M, K) the user gave (None where not given)."""
        return self._given

    @property
    def per_cycle(self) -> bool:
        """True when each cycle is judged with the M and K it records (unless given)."""
        return self._per_cycle

    @property
    def used(self) -> tuple[int | None, int | None]:
        """The (M, K) judged with so far (the given ones until a calibrated assessment is seen).

        With ``per_cycle``, the pair of the latest calibrated assessment: the one in force.
        """
        return self._used if self._used is not None else self._given

    @property
    def first_used(self) -> tuple[int | None, int | None]:
        """The (M, K) the first calibrated assessment was judged with (the given ones before)."""
        return self._first_used if self._first_used is not None else self._given

    def resolve(self, calibrated: CalibratedFacts) -> tuple[int, int]:
        """Record `calibrated`'s pair and return the (M, K) to judge it with."""
        pair = (calibrated.min_outcomes, calibrated.downgrade_threshold)
        seen = self._recorded.get(pair)
        if seen is None:
            self._recorded[pair] = [1, calibrated.stamp_ns]
        else:
            seen[0] += 1
        if self._used is None or self._per_cycle or self._in_force is not None:
            given_m, given_k = self._given
            claimed = pair if self._in_force is None else self._in_force(calibrated.stamp_ns)
            self._used = (
                claimed[0] if given_m is None else given_m,
                claimed[1] if given_k is None else given_k,
            )
            if self._first_used is None:
                self._first_used = self._used
        return self._used

    def recorded(self) -> tuple[tuple[int, int, int, int], ...]:
        """Every recorded pair as (M, K, cycles, first cycle stamp), by first appearance."""
        return tuple(
            (m, k, seen[0], seen[1])
            for (m, k), seen in sorted(self._recorded.items(), key=lambda item: item[1][1])
        )

    def notes(self, recorded_by: str = 'the bag recorded') -> tuple[str, ...]:
        """One line per parameter whose recorded values differ from the one used; else empty.

        `recorded_by` names where the other values were seen (the verifier: the bag). With
        ``per_cycle``, a recorded change is no mismatch (each cycle was judged with its own
        pair): only a given value that differs from a recorded one is noted.
        """
        if self._in_force is not None:
            # Judged with the run's configuration: the verifier's parameters check reports
            # every message that differs from it.
            return ()
        given_m, given_k = self._given
        used_m, used_k = self.used
        notes = []
        for name, used, given, values in (
            ('min_outcomes', used_m, given_m, {m for m, _ in self._recorded}),
            ('downgrade_threshold', used_k, given_k, {k for _, k in self._recorded}),
        ):
            if self._per_cycle and given is None:
                continue
            other = sorted(value for value in values if value != used)
            if other:
                source = 'the command line' if given is not None else 'the first cycle'
                notes.append(
                    f'{name}: used {used} (from {source}) but {recorded_by} '
                    f'{", ".join(str(value) for value in other)}'
                )
        return tuple(notes)
