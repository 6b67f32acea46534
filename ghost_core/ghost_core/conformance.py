"""Policy conformance (ADR-0021 step 5): re-apply the named policies to one cycle, bit for bit.

For one cycle, each stage of the loop is re-run on the inputs that stage recorded, with the
reference implementation named by the id the stage recorded, and its output is compared with
the recorded one:

- calibration: ``adjust(raw, history)`` of the adjustment policy named by
  ``adjustment_policy_id``, built with the M and K recorded on the same message, on the inline
  raw assessment and the recorded history -> ``adjusted_overall_level`` and
  ``adjustment_reason``;
- decision: ``decide`` of the decision policy named by the rationale's ``policy_id``, on
  ``C_t`` and the vehicle status the rationale records -> the decision's ``kind`` and
  ``reason``;
- emission: ``emit(rationale)`` of the reference emission contract (SPEC section 5, ADR-0023)
  -> the command's ``kind``. The actuation's ``contract_id`` is reported, not used to pick
  the table: the properties are stated over the reference emitter.

These are the very objects the nodes run (``ghost_core.loop``): nothing is re-implemented. A
policy id with no reference here cannot be checked; it is reported as such (``unknown_*``),
never as passing. Each stage is judged on its own recorded input, so a violation names the stage at
fault.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from ghost_core.actions import ActionEmissionContract, ReferenceActionEmissionContract
from ghost_core.calibration import (
    CalibrationAdjustmentPolicy,
    DOWNGRADE_POLICY_ID,
    MahalanobisDowngradePolicy,
)
from ghost_core.contracts import (
    ActuatorCommand,
    CalibratedSelfAssessment,
    DecisionContext,
    DecisionRationale,
)
from ghost_core.decisions import Policy, UncertaintyAwareReferencePolicy
from ghost_core.errors import GhostError
from ghost_core.levels import ActuatorCommandKind, DecisionKind, SelfAssessmentLevel
from ghost_core.properties import JsonValue, kind_name, ObservedValue

__all__ = [
    'ADJUSTMENT_POLICIES',
    'CONFORMANCE_VERSION',
    'DECISION_POLICIES',
    'REFERENCE_EMISSION',
    'NOT_CHECKED_KINDS',
    'ConformanceKind',
    'ConformanceViolation',
    'Stage',
    'check_adjustment',
    'check_decision',
    'check_emission',
    'invalid_message',
]

CONFORMANCE_VERSION = 'CONFORMANCE-v1'

#: adjustment_policy_id -> the policy with the recorded (M, K) (what LoopConfig builds).
ADJUSTMENT_POLICIES: Mapping[str, Callable[[int, int], CalibrationAdjustmentPolicy]] = (
    MappingProxyType({DOWNGRADE_POLICY_ID: MahalanobisDowngradePolicy}))
#: policy_id -> the decision policy (what ghost_core.loop.decide runs).
DECISION_POLICIES: Mapping[str, Policy] = MappingProxyType(
    {policy.policy_id: policy for policy in (UncertaintyAwareReferencePolicy(),)})
#: The emission contract every actuation is checked with (what ghost_core.loop.emit runs).
REFERENCE_EMISSION: ActionEmissionContract = ReferenceActionEmissionContract()


class Stage(StrEnum):
    """The loop stage a conformance finding concerns."""

    CALIBRATION = 'calibration'
    DECISION = 'decision'
    EMISSION = 'emission'


class ConformanceKind(StrEnum):
    """Why a cycle does not conform to the policies it names (closed catalogue)."""

    ADJUSTED_LEVEL_MISMATCH = 'adjusted_level_mismatch'
    ADJUSTMENT_REASON_MISMATCH = 'adjustment_reason_mismatch'
    DECISION_MISMATCH = 'decision_mismatch'
    DECISION_REASON_MISMATCH = 'decision_reason_mismatch'
    COMMAND_MISMATCH = 'command_mismatch'
    UNKNOWN_ADJUSTMENT_POLICY = 'unknown_adjustment_policy'
    UNKNOWN_DECISION_POLICY = 'unknown_decision_policy'
    INVALID_MESSAGE = 'invalid_message'


#: The kinds that mean "this stage could not be checked" rather than "it was checked and
#: differs"; they fail the verdict all the same (not checked is not passing).
NOT_CHECKED_KINDS: frozenset[ConformanceKind] = frozenset({
    ConformanceKind.UNKNOWN_ADJUSTMENT_POLICY,
    ConformanceKind.UNKNOWN_DECISION_POLICY,
    ConformanceKind.INVALID_MESSAGE,
})


@dataclass(frozen=True, slots=True)
class ConformanceViolation:
    """One stage of one cycle that does not conform: what the reference gives, what was recorded.

    `policy_id` is the id the stage recorded; `inputs` the recorded values the reference was
    applied to (levels and kinds by catalogue name).
    """

    cycle_stamp_ns: int
    kind: ConformanceKind
    stage: Stage
    policy_id: str
    expected: str
    recorded: str
    inputs: tuple[tuple[str, ObservedValue], ...] = ()

    @property
    def checked(self) -> bool:
        """False when the stage could not be checked at all (unknown id, invalid message)."""
        return self.kind not in NOT_CHECKED_KINDS

    def to_json(self) -> dict[str, JsonValue]:
        """Return the violation as a JSON object."""
        return {
            'cycle_stamp_ns': self.cycle_stamp_ns,
            'kind': self.kind.value,
            'stage': self.stage.value,
            'policy_id': self.policy_id,
            'expected': self.expected,
            'recorded': self.recorded,
            'inputs': dict(self.inputs),
        }


def _known(ids: Mapping[str, object]) -> str:
    return 'one of: ' + ', '.join(sorted(ids))


def _level(value: int) -> str:
    return kind_name(SelfAssessmentLevel, value)


def check_adjustment(
    calibrated: CalibratedSelfAssessment,
) -> tuple[ConformanceViolation, ...]:
    """Re-apply the named adjustment policy (recorded M, K) to the recorded raw and history."""
    stamp_ns = calibrated.stamp_ns
    policy_id = calibrated.adjustment_policy_id
    history = calibrated.calibration_history
    inputs: tuple[tuple[str, ObservedValue], ...] = (
        ('raw_overall_level', _level(calibrated.raw_assessment.overall_level)),
        ('outcomes_considered', history.outcomes_considered),
        ('count_beyond_3_std', history.count_beyond_3_std),
        ('count_beyond_5_std', history.count_beyond_5_std),
        ('min_outcomes', calibrated.min_outcomes),
        ('downgrade_threshold', calibrated.downgrade_threshold),
    )
    factory = ADJUSTMENT_POLICIES.get(policy_id)
    if factory is None:
        return (ConformanceViolation(
            stamp_ns, ConformanceKind.UNKNOWN_ADJUSTMENT_POLICY, Stage.CALIBRATION, policy_id,
            _known(ADJUSTMENT_POLICIES), policy_id, inputs),)
    policy = factory(calibrated.min_outcomes, calibrated.downgrade_threshold)
    reference = policy.adjust(calibrated.raw_assessment, history, None,
                              calibrated.window_outcome_stamps_ns)
    found = []
    if reference.adjusted_overall_level != calibrated.adjusted_overall_level:
        found.append(ConformanceViolation(
            stamp_ns, ConformanceKind.ADJUSTED_LEVEL_MISMATCH, Stage.CALIBRATION, policy_id,
            _level(reference.adjusted_overall_level),
            _level(calibrated.adjusted_overall_level), inputs))
    if reference.adjustment_reason != calibrated.adjustment_reason:
        found.append(ConformanceViolation(
            stamp_ns, ConformanceKind.ADJUSTMENT_REASON_MISMATCH, Stage.CALIBRATION, policy_id,
            reference.adjustment_reason, calibrated.adjustment_reason, inputs))
    return tuple(found)


def check_decision(
    calibrated: CalibratedSelfAssessment, rationale: DecisionRationale
) -> tuple[ConformanceViolation, ...]:
    """Re-apply the named decision policy to the recorded calibrated assessment it decided from."""
    stamp_ns = rationale.stamp_ns
    policy_id = rationale.policy_id
    inputs: tuple[tuple[str, ObservedValue], ...] = (
        ('adjusted_overall_level', _level(calibrated.adjusted_overall_level)),)
    policy = DECISION_POLICIES.get(policy_id)
    if policy is None:
        return (ConformanceViolation(
            stamp_ns, ConformanceKind.UNKNOWN_DECISION_POLICY, Stage.DECISION, policy_id,
            _known(DECISION_POLICIES), policy_id, inputs),)
    # The context the rationale says the policy saw: its vehicle status as recorded.
    reference = policy.decide(DecisionContext(
        calibrated.stamp_ns, calibrated.frame_id, rationale.flight_status,
        rationale.mission_status, calibrated.raw_assessment, calibrated,
        rationale.perception_mode))
    recorded = rationale.decision
    found = []
    if reference.kind != recorded.kind:
        found.append(ConformanceViolation(
            stamp_ns, ConformanceKind.DECISION_MISMATCH, Stage.DECISION, policy_id,
            kind_name(DecisionKind, reference.kind), kind_name(DecisionKind, recorded.kind),
            inputs))
    if reference.reason != recorded.reason:
        found.append(ConformanceViolation(
            stamp_ns, ConformanceKind.DECISION_REASON_MISMATCH, Stage.DECISION, policy_id,
            reference.reason, recorded.reason, inputs))
    return tuple(found)


def check_emission(
    rationale: DecisionRationale, command: ActuatorCommand, stamp_ns: int, contract_id: str = ''
) -> tuple[ConformanceViolation, ...]:
    """Re-apply the reference emission contract to the rationale an actuation executes.

    `command` is the actuation's recorded command; `contract_id` its recorded id (reported
    as the violation's `policy_id`; only the command is compared).
    """
    inputs: tuple[tuple[str, ObservedValue], ...] = (
        ('decision_kind', kind_name(DecisionKind, rationale.decision.kind)),)
    reference = REFERENCE_EMISSION.emit(rationale).command
    if reference.kind != command.kind:
        return (ConformanceViolation(
            stamp_ns, ConformanceKind.COMMAND_MISMATCH, Stage.EMISSION, contract_id,
            kind_name(ActuatorCommandKind, reference.kind),
            kind_name(ActuatorCommandKind, command.kind), inputs),)
    return ()


def invalid_message(
    stamp_ns: int, stage: Stage, policy_id: str, error: GhostError
) -> ConformanceViolation:
    """Return the finding for a recorded message that breaks its contract (nothing to re-apply)."""
    return ConformanceViolation(
        stamp_ns, ConformanceKind.INVALID_MESSAGE, stage, policy_id,
        'a message that satisfies its contract', ' '.join(str(error).split()))
