"""The parameters check: every message carries the run configuration in force at its cycle.

Judged with the ``RunParameters`` of ``run_parameters`` (the one authority: the configuration
the bag records): a message that carries another M, K, W, thresholds address or Q than the
configuration in force at its stamp is a ``parameters_mismatch``, and a recorded
configuration that cannot be used (``RunParameters.problem``) fails the check.
"""

from __future__ import annotations

from dataclasses import dataclass
import json

from ghost_core.properties import JsonValue
from ghost_core.run_configuration import ChangeInForce, ParametersInForce

from .events import CycleEvent
from .run_parameters import ParameterSource, RunParameters

__all__ = ['ParametersChecker', 'ParametersMismatch', 'ParametersReport']


@dataclass(frozen=True, slots=True)
class ParametersMismatch:
    """A message whose parameter differs from the run configuration in force at its cycle."""

    cycle_stamp_ns: int
    topic: str
    parameter: str
    recorded: JsonValue
    in_force: JsonValue

    def to_json(self) -> dict[str, JsonValue]:
        """Return the mismatch as a JSON object."""
        return {'cycle_stamp_ns': self.cycle_stamp_ns, 'kind': 'parameters_mismatch',
                'topic': self.topic, 'parameter': self.parameter, 'recorded': self.recorded,
                'in_force': self.in_force}


@dataclass(frozen=True, slots=True)
class ParametersReport:
    """The check of every message's parameters against the run's configuration."""

    authority: ParameterSource
    changes: tuple[ChangeInForce, ...]
    messages_checked: int
    mismatches: tuple[ParametersMismatch, ...]
    problem: str = ''
    warning: str | None = None

    @property
    def holds(self) -> bool:
        """True when no message differs and the recorded configuration (if any) is usable."""
        return not self.mismatches and not self.problem

    @property
    def checked(self) -> bool:
        """True when there was a recorded configuration to check against (usable or not)."""
        return self.authority is ParameterSource.RUN_CONFIGURATION or bool(self.problem)

    def summary(self) -> str:
        """The one-line verdict."""
        if self.problem:
            return f'parameters: VIOLATED ({self.problem})'
        if self.authority is ParameterSource.COMMAND_LINE:
            return ("parameters: not checked (no run configuration recorded; judged with the "
                    "auditor's -m/-k/-w)")
        if self.authority is ParameterSource.SELF_REPORTED:
            return 'parameters: not checked (self-reported parameters; see the warning)'
        changes = len(self.changes)
        changed = f'; {changes} recorded change{"" if changes == 1 else "s"}' if changes else ''
        if self.holds:
            return (f'parameters: HOLDS ({self.messages_checked} messages carry the run '
                    f'configuration in force{changed})')
        cycles = len({mismatch.cycle_stamp_ns for mismatch in self.mismatches})
        first = self.mismatches[0]
        return (f'parameters: VIOLATED ({cycles} cycles parameters_mismatch{changed}; first at '
                f'{first.cycle_stamp_ns} ns: {first.topic} {first.parameter} '
                f'{first.recorded}, in force {first.in_force})')

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object."""
        return {
            'holds': self.holds,
            'authority': self.authority.value,
            'changes': [{'node': change.node,
                         'in_force_after_stamp_ns': change.in_force_after_stamp_ns,
                         'configuration': json.dumps(change.section, sort_keys=True),
                         'log_time_ns': change.log_time_ns} for change in self.changes],
            'messages_checked': self.messages_checked,
            'mismatches': [mismatch.to_json() for mismatch in self.mismatches],
            'problem': self.problem,
            'warning': self.warning,
        }


class ParametersChecker:
    """Compare each message's M, K, W, thresholds address and Q with the configuration in force.

    Fed every cycle (``update``), in any order; a split run merges parts with ``absorb``.
    Without a recorded configuration there is nothing to compare with: it only counts.
    """

    def __init__(self, parameters: RunParameters) -> None:
        self.parameters = parameters
        self._checked = 0
        self._mismatches: list[ParametersMismatch] = []

    def update(self, cycle: CycleEvent) -> None:
        """Check the parameters every message of one cycle carries."""
        timeline = self.parameters.timeline
        if timeline is None:
            return
        expected = timeline.parameters_at(cycle.stamp_ns)
        for calibrated in cycle.calibrated:
            self._compare(cycle.stamp_ns, calibrated.message.topic, expected, (
                ('min_outcomes', calibrated.min_outcomes),
                ('downgrade_threshold', calibrated.downgrade_threshold),
                ('window_size', calibrated.window_size),
                ('thresholds_sha256', calibrated.thresholds_sha256)))
        for raw in cycle.raw_assessments:
            self._compare(cycle.stamp_ns, raw.message.topic, expected,
                          (('thresholds_sha256', raw.thresholds_sha256),))
        for prediction in cycle.predictions:
            noise = prediction.msg.get('process_noise')
            self._compare(cycle.stamp_ns, prediction.topic, expected,
                          (('process_noise_q', noise if isinstance(noise, float) else None),))

    def _compare(self, stamp_ns: int, topic: str, expected: ParametersInForce,
                 carried: tuple[tuple[str, int | float | str | None], ...]) -> None:
        self._checked += 1
        for name, value in carried:
            wanted: int | float | str = getattr(expected, name)
            if value is None or type(value) is not type(wanted) or value != wanted:
                self._mismatches.append(ParametersMismatch(stamp_ns, topic, name, value,
                                                           wanted))

    def result(self) -> ParametersReport:
        """The report of every message checked."""
        timeline = self.parameters.timeline
        return ParametersReport(
            self.parameters.authority, () if timeline is None else timeline.changes,
            self._checked, tuple(self._mismatches), self.parameters.problem,
            self.parameters.warning())
