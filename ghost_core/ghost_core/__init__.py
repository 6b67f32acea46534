"""ghost_core: the pure-Python heart of Ghost (contracts, content addresses, policies)."""

from ghost_core.actions import (
    ActionEmissionContract,
    EMISSION_TABLE,
    emit_reference_action,
    REFERENCE_EMISSION_CONTRACT_ID,
    ReferenceActionEmissionContract,
)
from ghost_core.assessment import assess_belief, BlockThresholds, ThresholdsConfig
from ghost_core.calibration import (
    assess_with_feedback,
    build_calibration_history,
    CalibrationAdjustmentPolicy,
    drift_condition,
    MahalanobisDowngradePolicy,
)
from ghost_core.contracts import (
    ActionEmission,
    ActuatorCommand,
    AxisAssessment,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    CalibrationHistory,
    Decision,
    DecisionContext,
    DecisionRationale,
    ForwardPrediction,
    PredictionOutcome,
)
from ghost_core.decisions import (
    decide_and_publish,
    decide_with_rationale,
    DECISION_TABLE,
    DecisionSink,
    NullDecisionSink,
    Policy,
    RecordingDecisionSink,
    UncertaintyAwareReferencePolicy,
)
from ghost_core.errors import ConfigError, ContractError, GhostError, MessageFormatError
from ghost_core.hashing import canonical_json, content_address
from ghost_core.levels import (
    ActuatorCommandKind,
    DecisionKind,
    NON_CONSERVATIVE_COMMAND_KINDS,
    SelfAssessmentLevel,
)
from ghost_core.loop import closed_loop_step, cycle_from_history, CycleResult, LoopConfig
from ghost_core.monitor import OnlineMonitor
from ghost_core.prediction import evaluate_outcome, outcome_for_cycle, predict
from ghost_core.properties import (
    BAUD_V1,
    CycleProperty,
    ERUR_V1,
    judge_baud,
    judge_erur,
    PROPERTIES,
    Violation,
    ViolationKind,
)
from ghost_core.samples import BeliefSample, Observation
from ghost_core.scenarios import generate_scenario, run_scenario, Scenario
from ghost_core.wire import message_address, to_msg_dict

__all__ = [
    'BAUD_V1',
    'DECISION_TABLE',
    'EMISSION_TABLE',
    'ERUR_V1',
    'NON_CONSERVATIVE_COMMAND_KINDS',
    'PROPERTIES',
    'REFERENCE_EMISSION_CONTRACT_ID',
    'ActionEmission',
    'ActionEmissionContract',
    'ActuatorCommand',
    'ActuatorCommandKind',
    'AxisAssessment',
    'BeliefSample',
    'BeliefSelfAssessment',
    'BlockThresholds',
    'CalibratedSelfAssessment',
    'CalibrationAdjustmentPolicy',
    'CalibrationHistory',
    'ConfigError',
    'ContractError',
    'CycleProperty',
    'CycleResult',
    'Decision',
    'DecisionContext',
    'DecisionKind',
    'DecisionRationale',
    'DecisionSink',
    'ForwardPrediction',
    'GhostError',
    'LoopConfig',
    'MahalanobisDowngradePolicy',
    'MessageFormatError',
    'NullDecisionSink',
    'Observation',
    'OnlineMonitor',
    'Policy',
    'PredictionOutcome',
    'RecordingDecisionSink',
    'ReferenceActionEmissionContract',
    'Scenario',
    'SelfAssessmentLevel',
    'ThresholdsConfig',
    'UncertaintyAwareReferencePolicy',
    'Violation',
    'ViolationKind',
    'assess_belief',
    'assess_with_feedback',
    'build_calibration_history',
    'canonical_json',
    'closed_loop_step',
    'content_address',
    'cycle_from_history',
    'decide_and_publish',
    'decide_with_rationale',
    'drift_condition',
    'emit_reference_action',
    'evaluate_outcome',
    'generate_scenario',
    'judge_baud',
    'judge_erur',
    'message_address',
    'outcome_for_cycle',
    'predict',
    'run_scenario',
    'to_msg_dict',
]
