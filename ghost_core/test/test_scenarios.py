"""The scenarios of SPEC section 7 through the pure agent: which property applies, and holds."""

from __future__ import annotations

import pytest

from ghost_core.calibration import drift_condition
from ghost_core.contracts import STATUS_NO_OBSERVATION, STATUS_NO_PREDICTION, STATUS_PAIRED
from ghost_core.errors import ConfigError
from ghost_core.hashing import canonical_json
from ghost_core.levels import DecisionKind, NON_CONSERVATIVE_COMMAND_KINDS, SelfAssessmentLevel
from ghost_core.pipeline import CycleTrace
from ghost_core.scenarios import (
    generate_scenario,
    GNSS_OUTAGE_FIRST_CYCLE,
    GNSS_OUTAGE_LAST_CYCLE,
    GNSS_OUTAGE_Q,
    run_scenario,
    SCENARIO_NAMES,
    ScenarioCycle,
    START_STAMP_NS,
)
from ghost_core.wire import message_address, to_msg_dict

KNOWN = SelfAssessmentLevel.KNOWN


def classify(trace: CycleTrace) -> str:
    """Return 'B' (BAUD precondition), 'E' (ERUR precondition) or '-' (neither) for a cycle."""
    calibrated = trace.calibrated
    history = calibrated.calibration_history
    drift = drift_condition(history.outcomes_considered, history.count_beyond_3_std,
                            history.count_beyond_5_std, calibrated.min_outcomes,
                            calibrated.downgrade_threshold)
    if drift:
        return 'B'
    return 'E' if calibrated.raw_assessment.overall_level == KNOWN else '-'


def assert_properties_hold(traces: tuple[CycleTrace, ...]) -> None:
    """BAUD-v1 and ERUR-v1 postconditions hold on every cycle, and the chain is intact."""
    for trace in traces:
        calibrated, rationale, emission = trace.calibrated, trace.rationale, trace.emission
        assert calibrated.stamp_ns == rationale.stamp_ns == emission.stamp_ns == trace.stamp_ns
        assert rationale.calibrated_assessment_sha256 == message_address(calibrated)
        assert emission.rationale_sha256 == message_address(rationale)
        if classify(trace) == 'B':
            assert calibrated.adjusted_overall_level != KNOWN
            assert emission.decision.kind != DecisionKind.PROCEED
            assert emission.command.kind not in NON_CONSERVATIVE_COMMAND_KINDS
        elif classify(trace) == 'E':
            assert calibrated.adjusted_overall_level == KNOWN
            assert emission.decision.kind == DecisionKind.PROCEED


def kinds(traces: tuple[CycleTrace, ...]) -> str:
    """Return the decisions as a string of initials (P, H, A, ...)."""
    return ''.join(trace.emission.decision.kind.name[0] for trace in traces)


def test_smoke() -> None:
    """SPEC §7 smoke: ERUR on cycles 1-4, BAUD on 5-10; PROCEED then HOLD; all raw KNOWN."""
    scenario = generate_scenario('smoke')
    parameters = scenario.parameters
    assert (parameters.cycles, parameters.period_ns) == (10, 100_000_000)
    assert (parameters.min_outcomes, parameters.downgrade_threshold) == (4, 2)
    traces = run_scenario(scenario)
    assert [t.stamp_ns for t in traces] == [START_STAMP_NS + i * 100_000_000 for i in range(10)]
    assert all(t.raw.overall_level == KNOWN for t in traces)
    assert traces[0].outcome.status == STATUS_NO_PREDICTION
    assert [t.calibrated.calibration_history.outcomes_considered for t in traces] == list(
        range(10))
    assert ''.join(map(classify, traces)) == 'EEEE' + 'B' * 6
    assert kinds(traces) == 'PPPP' + 'H' * 6
    assert_properties_hold(traces)


def test_drift_then_recovery() -> None:
    """Drift for 10 cycles, then re-convergence: BAUD cycles, then ERUR cycles after them."""
    scenario = generate_scenario('drift_then_recovery')
    assert scenario.parameters.max_history == 8
    traces = run_scenario(scenario)
    pattern = ''.join(map(classify, traces))
    assert pattern == 'EEEE' + 'B' * 13 + 'E' * 13
    last_baud = pattern.rindex('B')
    assert pattern[last_baud + 1:] and set(pattern[last_baud + 1:]) == {'E'}
    assert kinds(traces) == 'PPPP' + 'H' * 13 + 'P' * 13  # PROCEED resumes: reactivation
    assert_properties_hold(traces)


def test_nominal() -> None:
    """A consistent estimator for 100 cycles never triggers drift and always proceeds."""
    traces = run_scenario(generate_scenario('nominal'))
    assert len(traces) == 100
    assert set(map(classify, traces)) == {'E'}
    assert set(kinds(traces)) == {'P'}
    histories = [t.calibrated.calibration_history for t in traces]
    assert histories[-1].outcomes_considered == 32  # the window is full
    assert_properties_hold(traces)


def test_dropout() -> None:
    """Cycles without observation give no_observation outcomes that never enter a history."""
    scenario = generate_scenario('dropout')
    traces = run_scenario(scenario)
    missing = [c.index for c in scenario.cycles if c.observation is None]
    assert missing == [4, 7, 8, 9, 14, 17, 18, 19]
    assert scenario.cycles[-1].observation is not None
    observed_so_far = 0
    for cycle, trace in zip(scenario.cycles, traces, strict=True):
        if cycle.index == 1:
            assert trace.outcome.status == STATUS_NO_PREDICTION
        elif cycle.observation is None:
            assert trace.outcome.status == STATUS_NO_OBSERVATION
        else:
            assert trace.outcome.status == STATUS_PAIRED
            observed_so_far += 1
        assert trace.calibrated.calibration_history.outcomes_considered == observed_so_far
    assert set(kinds(traces)) == {'P'}
    assert_properties_hold(traces)


@pytest.mark.parametrize('name', SCENARIO_NAMES)
def test_scenarios_are_reproducible(name: str) -> None:
    """The same scenario and seed give byte-identical payloads on every topic."""
    def payloads(seed: int) -> list[str]:
        traces = run_scenario(generate_scenario(name, seed))
        return [canonical_json(to_msg_dict(message)) for t in traces
                for message in (t.raw, t.outcome, t.calibrated, t.rationale, t.emission)]
    assert payloads(0) == payloads(0)
    assert payloads(0) != payloads(1)


def test_overrides_and_bad_names() -> None:
    """Cycles and period can be overridden; unknown names and bad values are rejected."""
    scenario = generate_scenario('nominal', 3, cycles=5, period_ns=50_000_000)
    assert len(scenario.cycles) == 5
    assert scenario.cycles[1].stamp_ns - scenario.cycles[0].stamp_ns == 50_000_000
    with pytest.raises(ConfigError, match='scenario name'):
        generate_scenario('windy')
    with pytest.raises(ConfigError, match='cycles'):
        generate_scenario('smoke', cycles=0)


def _position_std(cycle_index: int, scenario_cycles: tuple[ScenarioCycle, ...]) -> float:
    """The largest declared position standard deviation of a scenario cycle (1-based)."""
    covariance = scenario_cycles[cycle_index - 1].belief.pose_covariance
    return float(max(covariance[0], covariance[7], covariance[14])) ** 0.5


def test_gnss_outage_has_no_fix_during_the_outage_and_fixes_around_it() -> None:
    """gnss_outage: fixes on cycles 1-50 and 201-300, none on 51-200; 300 cycles, W=32."""
    scenario = generate_scenario('gnss_outage')
    assert len(scenario.cycles) == 300
    assert (scenario.parameters.max_history, scenario.parameters.min_outcomes,
            scenario.parameters.downgrade_threshold) == (32, 4, 2)
    missing = [c.index for c in scenario.cycles if c.observation is None]
    assert missing == list(range(GNSS_OUTAGE_FIRST_CYCLE, GNSS_OUTAGE_LAST_CYCLE + 1))
    assert (GNSS_OUTAGE_FIRST_CYCLE, GNSS_OUTAGE_LAST_CYCLE) == (51, 200)
    traces = run_scenario(scenario)
    statuses = {t.outcome.status for t in traces[GNSS_OUTAGE_FIRST_CYCLE - 1:
                                                 GNSS_OUTAGE_LAST_CYCLE]}
    assert statuses == {STATUS_NO_OBSERVATION}


def test_gnss_outage_declared_sigma_crosses_known_at_the_documented_cycle() -> None:
    """σ grows as sqrt(0.05² + q·τ): > 0.5 m first on cycle 81, < 2.0 m, 0.05 m after."""
    cycles = generate_scenario('gnss_outage').cycles
    sigmas = [_position_std(i, cycles) for i in range(1, 301)]
    assert all(s == pytest.approx(0.05) for s in sigmas[:GNSS_OUTAGE_FIRST_CYCLE - 1])
    outage = sigmas[GNSS_OUTAGE_FIRST_CYCLE - 1:GNSS_OUTAGE_LAST_CYCLE]
    assert all(b > a for a, b in zip(outage, outage[1:], strict=False))  # grows monotonically
    assert sigmas[79] <= 0.5 < sigmas[80]  # cycles 80 and 81
    assert max(sigmas) < 2.0
    assert sigmas[GNSS_OUTAGE_LAST_CYCLE - 1] == pytest.approx(
        (0.05**2 + GNSS_OUTAGE_Q * 15.0) ** 0.5)
    assert all(s == pytest.approx(0.05) for s in sigmas[GNSS_OUTAGE_LAST_CYCLE:])


def test_gnss_outage_error_is_consistent_with_the_declared_covariance() -> None:
    """The belief stays honest: its error / declared σ is ~N(0, 1), the truth does not drift."""
    squares = []
    for seed in range(5):
        scenario = generate_scenario('gnss_outage', seed)
        for cycle in scenario.cycles:
            sigma = _position_std(cycle.index, scenario.cycles)
            squares += [((b - t) / sigma) ** 2
                        for b, t in zip(cycle.belief.position, cycle.truth_position,
                                            strict=True)]
        assert all(c.truth_velocity == scenario.cycles[0].truth_velocity
                   for c in scenario.cycles)
    assert sum(squares) / len(squares) == pytest.approx(1.0, abs=0.15)


def test_gnss_outage_holds_within_10_cycles_and_proceeds_again_within_w() -> None:
    """Non-PROCEED <= 10 cycles after σ > 0.5 m; PROCEED <= W cycles after σ is back below."""
    scenario = generate_scenario('gnss_outage')
    traces = run_scenario(scenario)
    sigmas = [_position_std(i, scenario.cycles) for i in range(1, 301)]
    crossing = next(i for i, s in enumerate(sigmas, 1) if s > 0.5)
    back = next(i for i, s in enumerate(sigmas, 1) if i > crossing and s <= 0.5)
    assert (crossing, back) == (81, 201)
    decisions = kinds(traces)
    first_hold = decisions.index('H', 0) + 1
    assert decisions[:crossing - 1] == 'P' * (crossing - 1)
    assert 0 <= first_hold - crossing <= 10
    resumed = decisions.index('P', back - 1) + 1
    assert 0 <= resumed - back <= scenario.parameters.max_history
    assert decisions == 'P' * 80 + 'H' * 140 + 'P' * 80  # the documented timeline
    assert not any(trace.calibrated.adjustment_reason == 'downgrade_from_calibration'
                   for trace in traces)  # an honest estimator: never a calibration downgrade
    assert_properties_hold(traces)


@pytest.mark.parametrize('name', SCENARIO_NAMES)
def test_a_scenario_built_to_cover_both_properties_covers_them(name: str) -> None:
    """``covers_both_properties`` (ghost_run then requires coverage) is true of the run."""
    scenario = generate_scenario(name)
    parameters = scenario.parameters
    baud = erur = False
    for trace in run_scenario(scenario):
        history = trace.calibrated.calibration_history
        drift = drift_condition(history.outcomes_considered, history.count_beyond_3_std,
                                history.count_beyond_5_std, parameters.min_outcomes,
                                parameters.downgrade_threshold)
        baud = baud or drift
        erur = erur or (not drift and trace.raw.overall_level is SelfAssessmentLevel.KNOWN)
    assert parameters.covers_both_properties == (name in {'smoke', 'drift_then_recovery'})
    if parameters.covers_both_properties:
        assert baud and erur
