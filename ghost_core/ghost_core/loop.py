"""The one-step closed loop (calibrate, decide, emit) shared by the nodes and the tests."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ghost_core.actions import emit_reference_action
from ghost_core.agent_parameters import declared, MAX_WINDOW
from ghost_core.calibration import (
    history_of_window,
    MahalanobisDowngradePolicy,
    observed_window,
)
from ghost_core.contracts import (
    ActionEmission,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    CalibrationHistory,
    DecisionContext,
    DecisionRationale,
    PredictionOutcome,
    VehicleStatus,
)
from ghost_core.decisions import decide_with_rationale, UncertaintyAwareReferencePolicy
from ghost_core.errors import ConfigError

__all__ = [
    'CycleResult',
    'LoopConfig',
    'calibrate',
    'calibrate_from_history',
    'closed_loop_step',
    'decide',
    'emit',
]

_REFERENCE_POLICY = UncertaintyAwareReferencePolicy()


@dataclass(frozen=True, slots=True)
class LoopConfig:
    """Parameters of the closed loop: M, K and the window W (integers, 1 <= M, K <= W <= 1024).

    The defaults are the calibrator's declared ones (``ghost_core.agent_parameters``).
    """

    min_outcomes: int = declared('calibrator', 'min_outcomes')
    downgrade_threshold: int = declared('calibrator', 'downgrade_threshold')
    max_history: int = declared('calibrator', 'max_history')

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        for name in ('min_outcomes', 'downgrade_threshold', 'max_history'):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f'LoopConfig.{name} must be an integer >= 1, got {value!r}')
        if self.max_history > MAX_WINDOW:
            raise ConfigError(f'LoopConfig.max_history must be at most {MAX_WINDOW} (its '
                              f'declared bound), got {self.max_history}')
        for name in ('min_outcomes', 'downgrade_threshold'):
            if getattr(self, name) > self.max_history:
                raise ConfigError(f'LoopConfig.{name} must be at most max_history '
                                  f'({self.max_history}: a count the window cannot reach '
                                  f'would switch drift detection off), got {getattr(self, name)}')

    @property
    def adjustment_policy(self) -> MahalanobisDowngradePolicy:
        """The reference calibration policy with this M and K."""
        return MahalanobisDowngradePolicy(self.min_outcomes, self.downgrade_threshold)


_DEFAULT_CONFIG = LoopConfig()


@dataclass(frozen=True, slots=True)
class CycleResult:
    """Everything the loop produces for one cycle, all with the cycle stamp."""

    calibrated: CalibratedSelfAssessment
    rationale: DecisionRationale
    emission: ActionEmission


def calibrate_from_history(
    raw: BeliefSelfAssessment,
    history: CalibrationHistory,
    config: LoopConfig = _DEFAULT_CONFIG,
    raw_sha256: str | None = None,
    window_outcome_stamps_ns: tuple[int, ...] = (),
) -> CalibratedSelfAssessment:
    """Return `raw` calibrated by `history` under MahalanobisDowngradePolicy(M, K).

    `raw_sha256` is H(raw) when the caller already has it (computed when None);
    `window_outcome_stamps_ns` names the outcomes `history` aggregates.
    """
    return config.adjustment_policy.adjust(raw, history, raw_sha256, window_outcome_stamps_ns)


def calibrate(
    raw: BeliefSelfAssessment,
    outcomes: Iterable[PredictionOutcome],
    config: LoopConfig = _DEFAULT_CONFIG,
    raw_sha256: str | None = None,
) -> CalibratedSelfAssessment:
    """Return `raw` calibrated by the last W observed outcomes stamped no later than it.

    `outcomes` are chronological and must include this cycle's outcome (SPEC section 5: the
    calibrated assessment for t waits for the outcome of t). Outcomes stamped after the
    cycle are ignored, so a caller may pass everything it has.
    """
    window = observed_window(
        (outcome for outcome in outcomes if outcome.stamp_ns <= raw.stamp_ns), config.max_history)
    return calibrate_from_history(raw, history_of_window(window, config.max_history), config,
                                  raw_sha256, tuple(outcome.stamp_ns for outcome in window))


def decide(calibrated: CalibratedSelfAssessment,
           addresses: tuple[str, str] | None = None, *,
           vehicle: VehicleStatus | None = None) -> DecisionRationale:
    """Return the reference decision on the adjusted level, with both hashes filled.

    `addresses` is (H(calibrated.raw_assessment), H(calibrated)) when the caller has them
    already, hashed from the message it received; they are computed when None. `vehicle` is
    the status in force at the cycle (ghost_core.vehicle.VehicleStatusTracker), recorded in
    the rationale; None (none received) records UNKNOWN.
    """
    return decide_with_rationale(
        _REFERENCE_POLICY, DecisionContext.from_calibrated(calibrated, vehicle), addresses)


def emit(rationale: DecisionRationale, rationale_sha256: str | None = None) -> ActionEmission:
    """Return the reference actuation of `rationale` (rationale_sha256 = H(rationale)).

    `rationale_sha256` is H(rationale) when the caller already has it (computed when None).
    """
    return emit_reference_action(rationale, rationale_sha256)


def closed_loop_step(
    raw: BeliefSelfAssessment,
    outcomes: Iterable[PredictionOutcome],
    config: LoopConfig = _DEFAULT_CONFIG,
    vehicle: VehicleStatus | None = None,
) -> CycleResult:
    """Return calibrate, decide and emit for one cycle from its raw assessment and outcomes.

    `vehicle` is the status in force at the cycle (None: UNKNOWN).
    """
    calibrated = calibrate(raw, outcomes, config)
    rationale = decide(calibrated, vehicle=vehicle)
    return CycleResult(calibrated, rationale, emit(rationale))
