"""The one-step closed loop, and the BAUD-v1 / ERUR-v1 postconditions of the policy pair."""

from __future__ import annotations

from ghost_core_test import examples as ex
from ghost_core_test.strategies import (
    belief_self_assessments,
    calibration_histories,
    outcome_sequences,
)
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.agent_parameters import declared as declared_default
from ghost_core.calibration import build_calibration_history, drift_condition
from ghost_core.contracts import BeliefSelfAssessment, CalibrationHistory, PredictionOutcome
from ghost_core.errors import ConfigError
from ghost_core.hashing import canonical_json
from ghost_core.levels import DecisionKind, NON_CONSERVATIVE_COMMAND_KINDS, SelfAssessmentLevel
from ghost_core.loop import (
    calibrate,
    closed_loop_step,
    CycleResult,
    decide,
    emit,
    LoopConfig,
)
from ghost_core.wire import message_address, to_msg_dict

KNOWN = SelfAssessmentLevel.KNOWN


def assert_chain(result: CycleResult) -> None:
    """Assert the hash chain raw -> calibrated -> rationale -> actuation and the one stamp."""
    calibrated, rationale, emission = result.calibrated, result.rationale, result.emission
    assert calibrated.raw_assessment_sha256 == message_address(calibrated.raw_assessment)
    assert rationale.self_assessment_sha256 == message_address(calibrated.raw_assessment)
    assert rationale.calibrated_assessment_sha256 == message_address(calibrated)
    assert emission.rationale_sha256 == message_address(rationale)
    assert emission.decision == rationale.decision
    stamp = calibrated.raw_assessment.stamp_ns
    assert calibrated.stamp_ns == rationale.stamp_ns == emission.stamp_ns == stamp
    assert rationale.decision.decision_stamp_ns == stamp


def test_loop_config_defaults_are_the_calibrators_declared_ones() -> None:
    """LoopConfig() is what `ros2 run ghost_nodes calibrator` runs with: M=4, K=3, W=32."""
    config = LoopConfig()
    declared = {name: declared_default('calibrator', name)
                for name in ('min_outcomes', 'downgrade_threshold', 'max_history')}
    assert declared == {'min_outcomes': 4, 'downgrade_threshold': 3, 'max_history': 32}
    assert (config.min_outcomes, config.downgrade_threshold, config.max_history) == (
        declared['min_outcomes'], declared['downgrade_threshold'], declared['max_history'])
    assert config.adjustment_policy.downgrade_threshold == declared['downgrade_threshold']


@pytest.mark.parametrize('field', ['min_outcomes', 'downgrade_threshold', 'max_history'])
def test_loop_config_rejects_values_below_one(field: str) -> None:
    """Every loop parameter is an integer >= 1; the error names it."""
    with pytest.raises(ConfigError, match=field):
        LoopConfig(**{field: 0})


@pytest.mark.parametrize(('config', 'message'), [
    ({'max_history': 1025}, 'max_history must be at most 1024'),
    ({'downgrade_threshold': 100}, 'downgrade_threshold must be at most max_history (32'),
    ({'min_outcomes': 33}, 'min_outcomes must be at most max_history (32'),
])
def test_loop_config_rejects_values_beyond_their_declared_bounds(config, message: str) -> None:
    """K = 100 in a window of 32 could never be reached: drift detection would be off."""
    with pytest.raises(ConfigError, match=message.replace('(', r'\(')):
        LoopConfig(**config)


def test_step_links_the_chain() -> None:
    """One step yields calibrated, rationale and actuation hash-linked and equally stamped."""
    outcomes = [ex.outcome(d, stamp_ns=ex.STAMP_NS - 4 + i) for i, d in
                enumerate((6.0, 4.0, 0.5, 0.5))]
    result = closed_loop_step(ex.raw(), outcomes, LoopConfig(4, 2))
    assert_chain(result)
    assert result.calibrated.adjusted_overall_level is SelfAssessmentLevel.UNCERTAIN
    assert result.rationale.decision.kind is DecisionKind.HOLD
    assert result.emission.command.kind.name == 'HOLD_POSITION'


def test_step_ignores_outcomes_after_the_cycle() -> None:
    """Outcomes stamped after the cycle never enter its history."""
    future = [ex.outcome(9.0, stamp_ns=ex.STAMP_NS + i) for i in range(1, 6)]
    result = closed_loop_step(ex.raw(), future, LoopConfig())
    assert result.calibrated.calibration_history.outcomes_considered == 0
    assert result.calibrated.adjustment_reason == 'no_outcomes_yet'
    assert result.rationale.decision.kind is DecisionKind.PROCEED


def test_step_from_history_equals_step_from_outcomes() -> None:
    """Calibrating on the built history gives exactly closed_loop_step's result."""
    outcomes = [ex.outcome(d, stamp_ns=ex.STAMP_NS - 9 + i)
                for i, d in enumerate((0.2, 3.5, 9.0, 0.1, 7.5))]
    config = LoopConfig(3, 2, 3)
    history = build_calibration_history(outcomes, 3)
    window = tuple(outcome.stamp_ns for outcome in outcomes)[-3:]
    assert ex.step_from_history(ex.raw(), history, config, window) == closed_loop_step(
        ex.raw(), outcomes, config)
    assert calibrate(ex.raw(), outcomes, config).calibration_history == history


def test_decide_and_emit_compose() -> None:
    """Deciding then emitting is the reference pair on a calibrated assessment."""
    rationale = decide(ex.calibrated())
    assert rationale.decision.kind is DecisionKind.PROCEED
    assert emit(rationale).command.kind.name == 'CONTINUE_MISSION'


@settings(max_examples=200, deadline=None)
@given(belief_self_assessments(stamp_ns=10**15), outcome_sequences(max_size=30),
       st.integers(1, 8), st.integers(1, 8), st.integers(1, 12))
def test_step_is_pure(
    raw: BeliefSelfAssessment, outcomes: list[PredictionOutcome], m: int, k: int, w: int
) -> None:
    """Same inputs give byte-equal canonical JSON on every message of the cycle."""
    m, k = min(m, w), min(k, w)  # M and K are at most W (a count the window cannot reach)
    config = LoopConfig(m, k, w)
    first = closed_loop_step(raw, outcomes, config)
    second = closed_loop_step(raw, list(outcomes), LoopConfig(m, k, w))
    for a, b in ((first.calibrated, second.calibrated), (first.rationale, second.rationale),
                 (first.emission, second.emission)):
        assert canonical_json(to_msg_dict(a)) == canonical_json(to_msg_dict(b))
    assert_chain(first)


@settings(max_examples=200, deadline=None)
@given(st.data(), calibration_histories(max_stamp_ns=10**15), st.integers(1, 40),
       st.integers(1, 40))
def test_policy_pair_satisfies_baud_and_erur(
    data: st.DataObject, history: CalibrationHistory, m: int, k: int
) -> None:
    """For every history, raw level, M and K: BAUD-v1 and ERUR-v1 postconditions hold."""
    raw = data.draw(belief_self_assessments(stamp_ns=10**15))
    w = history.window_size
    m, k = min(m, w), min(k, w)  # M and K are at most W (LoopConfig's declared bound)
    result = ex.step_from_history(raw, history, LoopConfig(m, k, w))
    calibrated, decision = result.calibrated, result.emission.decision
    assert_chain(result)
    drift = drift_condition(history.outcomes_considered, history.count_beyond_3_std,
                            history.count_beyond_5_std, m, k)
    if drift:  # BAUD-v1
        assert calibrated.adjusted_overall_level != KNOWN
        assert decision.kind != DecisionKind.PROCEED
        assert result.emission.command.kind not in NON_CONSERVATIVE_COMMAND_KINDS
    if not drift and raw.overall_level == KNOWN:  # ERUR-v1
        assert calibrated.adjusted_overall_level == KNOWN
        assert decision.kind == DecisionKind.PROCEED
