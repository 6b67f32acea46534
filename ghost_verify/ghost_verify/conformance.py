"""Policy conformance over a bag: every cycle re-applied with the policies it names (ADR-0021).

The judgement of one stage is ``ghost_core.conformance`` (``check_adjustment``,
``check_decision``, ``check_emission``), which runs the reference objects the nodes run; this
module parses each recorded message into its ghost_core contract (``ghost_core.wire``) and
feeds the stages of every cycle to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
import os
from types import MappingProxyType
from typing import TypeVar

from ghost_core.conformance import (
    ADJUSTMENT_POLICIES,
    check_adjustment,
    check_decision,
    check_emission,
    CONFORMANCE_VERSION,
    ConformanceKind,
    ConformanceViolation,
    DECISION_POLICIES,
    invalid_message,
    REFERENCE_EMISSION,
    Stage,
)
from ghost_core.contracts import (
    ActionEmission,
    ActuatorCommand,
    CalibratedSelfAssessment,
    DecisionRationale,
)
from ghost_core.errors import GhostError
from ghost_core.properties import JsonValue
from ghost_core.wire import parse_actuator_command, parse_calibrated, parse_decision_rationale

from .bag import DEFAULT_CYCLE_WINDOW
from .checker import run_checker
from .events import BagInfo, CycleEvent, GhostMessage, ReadError
from .report_json import read_errors_to_json

__all__ = [
    'CONFORMANCE_VERSION',
    'ConformanceChecker',
    'ConformanceReport',
    'NotChecked',
    'verify_conformance',
]

_C = TypeVar('_C')
_NOTHING: Mapping[int, object] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class NotChecked:
    """A stage id (or an invalid message) that made cycles impossible to check, and how often."""

    stage: Stage
    kind: ConformanceKind
    policy_id: str
    cycles: int
    first_cycle_stamp_ns: int

    def to_json(self) -> dict[str, JsonValue]:
        """Return the entry as a JSON object."""
        return {
            'stage': self.stage.value,
            'kind': self.kind.value,
            'policy_id': self.policy_id,
            'cycles': self.cycles,
            'first_cycle_stamp_ns': self.first_cycle_stamp_ns,
        }


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """The policy-conformance verdict over one bag.

    `cycles_total` counts the cycles with a calibrated assessment, a rationale or an
    actuation; `cycles_not_checked` those where at least one stage could not be checked (an
    id with no reference implementation, or a message that breaks its contract);
    `cycles_conforming` those where every stage present was checked and matched. `holds` is
    True exactly when there is no violation, the not-checked ones included.
    """

    property_version: str
    reference_ids: tuple[tuple[Stage, tuple[str, ...]], ...]
    cycles_total: int
    cycles_conforming: int
    cycles_not_checked: int
    stages_checked: tuple[tuple[Stage, int], ...]
    not_checked: tuple[NotChecked, ...]
    violations: tuple[ConformanceViolation, ...]
    read_errors: tuple[ReadError, ...] = ()

    @property
    def holds(self) -> bool:
        """True when every stage of every cycle was checked and conforms (over what was read)."""
        return not self.violations

    @property
    def incomplete_input(self) -> bool:
        """True when part of the bag could not be read (see `read_errors`)."""
        return bool(self.read_errors)

    def violation_counts(self) -> dict[str, int]:
        """Return the number of violations of each kind (only the kinds that occur)."""
        counts: dict[str, int] = {}
        for violation in self.violations:
            counts[violation.kind.value] = counts.get(violation.kind.value, 0) + 1
        return dict(sorted(counts.items()))

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object (see docs/properties.md for the fields)."""
        counts: dict[str, JsonValue] = dict(self.violation_counts())
        return {
            'property_version': self.property_version,
            'holds': self.holds,
            'reference_ids': {stage.value: list(ids) for stage, ids in self.reference_ids},
            'cycles_total': self.cycles_total,
            'cycles_conforming': self.cycles_conforming,
            'cycles_not_checked': self.cycles_not_checked,
            'stages_checked': {stage.value: count for stage, count in self.stages_checked},
            'not_checked': [entry.to_json() for entry in self.not_checked],
            'violation_counts': counts,
            'violations': [violation.to_json() for violation in self.violations],
            'incomplete_input': self.incomplete_input,
            'read_errors': read_errors_to_json(self.read_errors),
        }

    def summary(self) -> str:
        """Return the one-line verdict, e.g. ``conformance: 10/10 conform``."""
        ratio = f'{self.cycles_conforming}/{self.cycles_total}'
        if self.holds:
            return f'conformance: {ratio} conform'
        detail = ', '.join(f'{count} {kind}' for kind, count in self.violation_counts().items())
        first = self.violations[0].cycle_stamp_ns
        return f'conformance: VIOLATED ({ratio} conform; {detail}, the first at {first} ns)'

    def notes(self) -> tuple[str, ...]:
        """One line per id (or invalid message kind) that left cycles not checked."""
        return tuple(
            f'conformance: not checked: {entry.stage.value} {entry.kind.value} '
            f'{entry.policy_id!r} ({entry.cycles} '
            f'{"cycle" if entry.cycles == 1 else "cycles"}, the first at '
            f'{entry.first_cycle_stamp_ns} ns)'
            for entry in self.not_checked)


def _command_of(msg: Mapping[str, object]) -> ActuatorCommand:
    command = msg.get('command')
    if not isinstance(command, Mapping):
        return parse_actuator_command({}, 'ActionEmission.command')
    return parse_actuator_command(command, 'ActionEmission.command')


class ConformanceChecker:
    """Policy conformance over a cycle stream: ``update(cycle)`` per cycle, then ``result(info)``.

    Every calibrated assessment of a cycle is checked against its adjustment policy; every
    rationale against its decision policy, on the last calibrated assessment of the cycle;
    every actuation against its emission contract, on the last rationale of the cycle (the
    chain's convention, docs/properties.md). A stage whose input is absent is not judged here:
    cycle completeness reports the missing message.
    """

    def __init__(self) -> None:
        self._cycles_total = 0
        self._conforming = 0
        self._not_checked_cycles = 0
        self._stages = {stage: 0 for stage in Stage}
        # (stage, kind, id) -> [cycles, first stamp]
        self._not_checked: dict[tuple[Stage, ConformanceKind, str], list[int]] = {}
        self._violations: list[ConformanceViolation] = []

    def update(self, cycle: CycleEvent, rederived: Mapping[int, object] = _NOTHING) -> None:
        """Check every stage recorded at one cycle.

        `rederived`: the cycle's messages the re-derivation found exactly the agent's, by the
        id of their GhostMessage (``Rederivation.matched``): each is taken as its contract
        instead of being parsed again (the same value, already validated).
        """
        if not (cycle.calibrated or cycle.rationales or cycle.actuations):
            return
        self._cycles_total += 1
        found: list[ConformanceViolation] = []
        calibrated = None
        for item in cycle.calibrated:
            known = rederived.get(id(item.message))
            calibrated = (known if isinstance(known, CalibratedSelfAssessment) else self._parse(
                item.message, Stage.CALIBRATION, 'adjustment_policy_id', parse_calibrated,
                found))
            if calibrated is not None:
                self._judged(Stage.CALIBRATION, check_adjustment(calibrated), found)
        rationale = None
        for view in cycle.rationales:
            known = rederived.get(id(view.message))
            rationale = (known if isinstance(known, DecisionRationale) else self._parse(
                view.message, Stage.DECISION, 'policy_id', parse_decision_rationale, found))
            if rationale is not None and calibrated is not None:
                self._judged(Stage.DECISION, check_decision(calibrated, rationale), found)
        for actuation in cycle.actuations:
            # Only the command is re-derived: the rest of the actuation is not the emitter's
            # choice (the decision is the chain's, the contract_id is not checked).
            known = rederived.get(id(actuation.message))
            command = (known.command if isinstance(known, ActionEmission) else self._parse(
                actuation.message, Stage.EMISSION, 'contract_id', _command_of, found))
            if command is not None and rationale is not None:
                contract_id = actuation.message.msg.get('contract_id')
                self._judged(Stage.EMISSION, check_emission(
                    rationale, command, actuation.stamp_ns,
                    contract_id if isinstance(contract_id, str) else ''), found)
        unchecked = [violation for violation in found if not violation.checked]
        for violation in unchecked:
            key = (violation.stage, violation.kind, violation.policy_id)
            seen = self._not_checked.setdefault(key, [0, cycle.stamp_ns])
            seen[0] += 1
        if unchecked:
            self._not_checked_cycles += 1
        elif not found:
            self._conforming += 1
        self._violations.extend(found)

    def _judged(
        self,
        stage: Stage,
        verdict: tuple[ConformanceViolation, ...],
        found: list[ConformanceViolation],
    ) -> None:
        # A stage counts as checked only when its policy was known.
        if all(violation.checked for violation in verdict):
            self._stages[stage] += 1
        found.extend(verdict)

    @staticmethod
    def _parse(
        message: GhostMessage,
        stage: Stage,
        id_field: str,
        parse: Callable[[Mapping[str, object]], _C],
        found: list[ConformanceViolation],
    ) -> _C | None:
        try:
            return parse(message.msg)
        except GhostError as err:
            policy_id = message.msg.get(id_field)
            found.append(invalid_message(message.stamp_ns, stage,
                                         policy_id if isinstance(policy_id, str) else '', err))
            return None

    def result(self, info: BagInfo) -> ConformanceReport:
        """Return the frozen report for everything seen so far."""
        return ConformanceReport(
            property_version=CONFORMANCE_VERSION,
            reference_ids=(
                (Stage.CALIBRATION, tuple(sorted(ADJUSTMENT_POLICIES))),
                (Stage.DECISION, tuple(sorted(DECISION_POLICIES))),
                (Stage.EMISSION, (REFERENCE_EMISSION.contract_id,)),
            ),
            cycles_total=self._cycles_total,
            cycles_conforming=self._conforming,
            cycles_not_checked=self._not_checked_cycles,
            stages_checked=tuple(self._stages.items()),
            not_checked=tuple(
                NotChecked(stage, kind, policy_id, seen[0], seen[1])
                for (stage, kind, policy_id), seen in sorted(
                    self._not_checked.items(), key=lambda item: (item[1][1], item[0]))),
            violations=tuple(self._violations),
            read_errors=info.read_errors,
        )


def verify_conformance(
    bag: str | os.PathLike[str], *, cycle_window: int = DEFAULT_CYCLE_WINDOW
) -> ConformanceReport:
    """Read the bag once and return its policy-conformance report."""
    return run_checker(ConformanceChecker(), bag, cycle_window)
