"""Hand-built valid contracts the example-based tests start from (and perturb)."""

from __future__ import annotations

from ghost_core.contracts import (
    ActionEmission,
    ActuatorCommand,
    AxisAssessment,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    CalibrationHistory,
    Decision,
    DecisionRationale,
    ForwardPrediction,
    PredictionOutcome,
    STATUS_PAIRED,
)
from ghost_core.levels import (
    ActuatorCommandKind,
    DecisionKind,
    FlightStatus,
    MissionStatus,
    SelfAssessmentLevel,
)
from ghost_core.loop import calibrate_from_history, CycleResult, decide, emit, LoopConfig

STAMP_NS = 1_500_000_000
SHA_A = 'a' * 64
SHA_B = 'b' * 64
SHA_C = 'c' * 64
#: A decision context's flight and mission status when the vehicle reported nothing.
UNKNOWN_VEHICLE = (FlightStatus.UNKNOWN, MissionStatus.UNKNOWN)

KNOWN_AXIS = AxisAssessment(SelfAssessmentLevel.KNOWN, 0.05, 'within_known_threshold')


def axis(level: SelfAssessmentLevel = SelfAssessmentLevel.KNOWN) -> AxisAssessment:
    """Return an axis assessment of `level`."""
    return AxisAssessment(level, 0.05, 'within_known_threshold')


def raw(level: SelfAssessmentLevel = SelfAssessmentLevel.KNOWN,
        stamp_ns: int = STAMP_NS) -> BeliefSelfAssessment:
    """Return a raw assessment of `level` (position block carries it)."""
    return BeliefSelfAssessment(stamp_ns, 'map', level, axis(level), KNOWN_AXIS, KNOWN_AXIS,
                                SHA_A, 'covariance_threshold_v1')


def prediction(stamp_ns: int = STAMP_NS - 100_000_000) -> ForwardPrediction:
    """Return a prediction made one period before STAMP_NS, targeting it."""
    return ForwardPrediction(stamp_ns, 'map', stamp_ns + 100_000_000, (1.0, 2.0, 3.0),
                             (0.01, 0.0, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 0.01),
                             'constant_velocity_v1')


def outcome(distance: float = 0.5, stamp_ns: int = STAMP_NS) -> PredictionOutcome:
    """Return a paired (observed) outcome at `stamp_ns` with position distance `distance`.

    One axis compared, so the normalised distance equals `distance`.
    """
    return PredictionOutcome(stamp_ns, 'map', stamp_ns - 100_000_000, True, STATUS_PAIRED,
                             (1.0, 2.0, 3.0), (1.1, 2.0, 3.0), distance, 0.0,
                             observation_stamp_ns=stamp_ns, position_axes_compared=1,
                             position_normalised_distance=distance)


def history(beyond_3: int = 0, beyond_5: int = 0, within: int = 4,
            stamp_ns: int = STAMP_NS) -> CalibrationHistory:
    """Return a consistent history with the given bins (no beyond_1 outcomes)."""
    total = beyond_3 + beyond_5 + within
    worst = 6.0 if beyond_5 else 4.0 if beyond_3 else 0.5
    return CalibrationHistory(total, within, 0, beyond_3, beyond_5,
                              worst if total else 0.0, 0.0, stamp_ns if total else None, 32)


def calibrated(level: SelfAssessmentLevel = SelfAssessmentLevel.KNOWN) -> CalibratedSelfAssessment:
    """Return a passthrough calibrated assessment of a raw assessment of `level`."""
    return CalibratedSelfAssessment(STAMP_NS, 'map', raw(level), SHA_A, history(), level,
                                    'mahalanobis_downgrade_v1', 'calibration_within_tolerance',
                                    4, 2)


def decision(kind: DecisionKind = DecisionKind.PROCEED, stamp_ns: int = STAMP_NS) -> Decision:
    """Return a decision of `kind` at `stamp_ns`."""
    return Decision(kind, stamp_ns, 'adjusted_level_known')


def rationale(kind: DecisionKind = DecisionKind.PROCEED) -> DecisionRationale:
    """Return a rationale claiming both assessments."""
    return DecisionRationale(STAMP_NS, 'map', decision(kind), SHA_A, SHA_B,
                             'uncertainty_aware_reference_v1', FlightStatus.IN_AIR,
                             MissionStatus.ON_MISSION)


def emission() -> ActionEmission:
    """Return the actuation of a PROCEED decision."""
    return ActionEmission(STAMP_NS, 'map', decision(), SHA_C,
                          ActuatorCommand(ActuatorCommandKind.CONTINUE_MISSION),
                          'reference_action_emission_v1')


def step_from_history(raw: BeliefSelfAssessment, history: CalibrationHistory,
                      config: LoopConfig, window: tuple[int, ...] = ()) -> CycleResult:
    """One loop step (calibrate, decide, emit) on `history` as given, not built from outcomes.

    `window` names the outcomes `history` aggregates.
    """
    calibrated = calibrate_from_history(raw, history, config, None, window)
    rationale = decide(calibrated)
    return CycleResult(calibrated, rationale, emit(rationale))
