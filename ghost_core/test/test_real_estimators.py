"""SPEC §5 v1.1: no covariance is not certainty, hysteresis, unmeasured axes, async fixes."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.assessment import (
    assess_belief,
    HysteresisConfig,
    REASON_HYSTERESIS,
    REASON_NO_COVARIANCE,
    SelfAssessor,
    ThresholdsConfig,
)
from ghost_core.contracts import (
    STATUS_NO_MEASURED_AXIS,
    STATUS_NO_OBSERVATION_COVARIANCE,
    STATUS_PAIRED,
)
from ghost_core.errors import ConfigError
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.pipeline import PipelineConfig, run_pipeline
from ghost_core.prediction import evaluate_outcome, outcome_for_cycle, predict, propagate
from ghost_core.samples import BeliefSample, Observation

KNOWN, UNCERTAIN, UNKNOWN = SelfAssessmentLevel
S = 1_000_000_000
I3 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def _cov6(position_std: float, orientation_std: float = 0.01) -> tuple[float, ...]:
    values = [0.0] * 36
    for i in range(6):
        values[i * 7] = (position_std if i < 3 else orientation_std) ** 2
    return tuple(values)


def _belief(stamp_ns: int, position_std: float = 0.05,
            pose: tuple[float, ...] | None = None,
            twist: tuple[float, ...] | None = None) -> BeliefSample:
    return BeliefSample(stamp_ns, 'map', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0),
                        _cov6(position_std) if pose is None else pose,
                        _cov6(0.05) if twist is None else twist)


# -- No uncertainty information is not certainty ------------------------------------------

@pytest.mark.parametrize('pose', [
    (0.0,) * 36,  # what MAVROS publishes without covariance streams
    (-1.0,) + (0.0,) * 35,  # ROS's "covariance unknown" sentinel
])
def test_a_belief_without_covariance_is_unknown_never_known(pose: tuple[float, ...]) -> None:
    """All-zero or -1 covariance: UNKNOWN with reason no_covariance_information."""
    raw = assess_belief(S, 'map', pose, _cov6(0.05))
    assert raw.overall_level == UNKNOWN
    assert raw.position.reason == raw.orientation.reason == REASON_NO_COVARIANCE
    assert raw.position.max_std == 0.0


def test_a_zero_block_alone_is_enough_and_the_level_is_configurable() -> None:
    """Only the orientation block zero: that block (and so the belief) has no information.

    The configured level may be UNCERTAIN instead of UNKNOWN, but never KNOWN.
    """
    pose = list(_cov6(0.05))
    for i in (3, 4, 5):
        pose[i * 7] = 0.0
    raw = assess_belief(S, 'map', pose, _cov6(0.05))
    assert (raw.position.level, raw.orientation.level) == (KNOWN, UNKNOWN)
    lenient = ThresholdsConfig(no_covariance_level=UNCERTAIN)
    assert assess_belief(S, 'map', pose, _cov6(0.05), lenient).overall_level == UNCERTAIN
    assert lenient.sha256 != ThresholdsConfig().sha256
    with pytest.raises(ConfigError, match='no_covariance_level'):
        ThresholdsConfig(no_covariance_level=KNOWN)


def test_a_twist_sentinel_makes_the_velocity_unknown() -> None:
    """The -1 sentinel in the twist covariance: velocity UNKNOWN, position unaffected."""
    raw = assess_belief(S, 'map', _cov6(0.05), (-1.0,) + (0.0,) * 35)
    assert (raw.position.level, raw.velocity.level) == (KNOWN, UNKNOWN)
    assert raw.velocity.reason == REASON_NO_COVARIANCE


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, -1.0, 0.04, 1e-6]), min_size=36, max_size=36))
def test_no_covariance_block_is_ever_known(values: list[float]) -> None:
    """Any belief whose position block is all zero or starts with -1 is never KNOWN."""
    raw = assess_belief(S, 'map', values, _cov6(0.05))
    block = [values[r * 6 + c] for r in range(3) for c in range(3)]
    if values[0] == -1.0 or all(v == 0.0 for v in block):
        assert raw.position.level != KNOWN and raw.overall_level != KNOWN


# -- Hysteresis -----------------------------------------------------------------------------

def _levels(stds: list[float], config: ThresholdsConfig | None = None,
            period_ns: int = 100_000_000) -> list[SelfAssessmentLevel]:
    assessor = SelfAssessor(config)
    return [assessor.assess(_belief(S + i * period_ns, std)).position.level
            for i, std in enumerate(stds)]


def test_a_statistic_hovering_at_the_threshold_does_not_chatter() -> None:
    """Eph alternating 0.49 / 0.51 m every cycle: one change, not one per cycle."""
    stds = [0.49 if i % 2 else 0.51 for i in range(200)]
    levels = _levels(stds)
    changes = sum(a != b for a, b in zip(levels, levels[1:], strict=False))
    assert levels[0] == UNCERTAIN and changes == 0
    no_hysteresis = ThresholdsConfig(hysteresis=HysteresisConfig(0.0, 0, 0))
    instant = _levels(stds, no_hysteresis)
    assert sum(a != b for a, b in zip(instant, instant[1:], strict=False)) == 199


def test_degradation_is_immediate_and_recovery_waits() -> None:
    """Worse at once; better only below (1 - margin) x threshold, after dwell and interval."""
    config = ThresholdsConfig(hysteresis=HysteresisConfig(0.2, 2 * S, 5 * S, 20 * S))
    stds = [0.1] * 10 + [0.6] + [0.45] * 60 + [0.3] * 80
    levels = _levels(stds, config)
    assert levels[9] == KNOWN and levels[10] == UNCERTAIN  # immediate
    # 0.45 m is below the 0.5 m threshold but inside the 20 % margin: no recovery (within
    # the 20 s bound).
    assert set(levels[11:71]) == {UNCERTAIN}
    # 0.3 m from cycle 71 (7.1 s after start): the dwell of 2 s ends at cycle 91, and the
    # interval since the change at cycle 10 (5 s) has long passed.
    recovered = levels.index(KNOWN, 11)
    assert recovered == 91


def test_the_margin_band_holds_a_level_only_for_the_bound() -> None:
    """The trap of issue 21: 0.6 m once, then 0.45 m (inside the threshold, inside the margin).

    Before the bound, that stayed UNCERTAIN for ever; with recovery_bound 5 s it is KNOWN
    5 s after the first sample back inside the threshold, and stays KNOWN.
    """
    config = ThresholdsConfig(hysteresis=HysteresisConfig(0.2, 2 * S, 5 * S, 5 * S))
    levels = _levels([0.1] * 10 + [0.6] + [0.45] * 600, config)
    assert levels[10] == UNCERTAIN
    assert set(levels[11:61]) == {UNCERTAIN}  # 0.45 m from cycle 11; 5 s later is cycle 61
    assert set(levels[61:]) == {KNOWN}


def test_recovery_respects_the_minimum_interval() -> None:
    """A short dip: the recovery comes min_level_interval after the degradation, not before."""
    config = ThresholdsConfig(hysteresis=HysteresisConfig(0.2, 1 * S, 5 * S))
    levels = _levels([0.1] * 5 + [0.7] + [0.1] * 100, config)
    assert levels.index(KNOWN, 6) == 55  # degraded at cycle 5 (0.5 s); 5 s later


def test_the_first_level_is_not_a_change() -> None:
    """A stream that starts UNKNOWN recovers after the dwell alone (no interval to wait)."""
    config = ThresholdsConfig(hysteresis=HysteresisConfig(0.2, 2 * S, 5 * S))
    assessor = SelfAssessor(config)
    pose0 = (0.0,) * 36  # the first beliefs carry no covariance yet
    levels = [assessor.assess(_belief(S + i * 100_000_000, pose=pose0 if i < 3 else None)
                              ).overall_level for i in range(60)]
    assert levels[:3] == [UNKNOWN] * 3
    assert levels.index(KNOWN) == 23  # good from cycle 3, for 2 s: cycle 23


def test_a_recovery_goes_to_the_level_the_whole_dwell_earned() -> None:
    """UNKNOWN, 2 s that earn UNCERTAIN, one KNOWN sample: UNCERTAIN, not KNOWN.

    (Review finding: the promotion used to take the last sample's level, so one good sample
    at the end of a dwell jumped two levels and then fell back 0.1 s later.) The KNOWN run
    that the good sample starts is waited for (one step, not two, when it lasts); it breaks
    at the next sample, and the block goes to UNCERTAIN then.
    """
    config = ThresholdsConfig(hysteresis=HysteresisConfig(0.2, 2 * S, 5 * S))
    stds = [3.0] + [1.0] * 20 + [0.3] + [1.0] * 5
    levels = _levels(stds, config)
    assert KNOWN not in levels
    assert levels[21] == UNKNOWN and levels[22:] == [UNCERTAIN] * 5


def test_a_recovery_through_two_levels_is_one_step() -> None:
    """UNKNOWN, then UNCERTAIN for 0.5 s, then KNOWN: one change to KNOWN, after its dwell."""
    config = ThresholdsConfig(hysteresis=HysteresisConfig(0.2, 2 * S, 5 * S))
    stds = [3.0] + [1.0] * 5 + [0.3] * 40
    levels = _levels(stds, config)
    assert levels[:26] == [UNKNOWN] * 26  # the KNOWN run from cycle 6 is waited for
    assert levels[26:] == [KNOWN] * 20


def test_a_held_block_says_why() -> None:
    """While held, the block reports the measured std and reason held_by_hysteresis."""
    assessor = SelfAssessor()
    assessor.assess(_belief(S, 0.7))
    held = assessor.assess(_belief(S + 100_000_000, 0.1))
    assert held.position.level == UNCERTAIN
    assert held.position.reason == REASON_HYSTERESIS
    assert held.position.max_std == pytest.approx(0.1)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(0.0, 3.0), min_size=2, max_size=300))
def test_no_two_recoveries_come_within_the_interval(stds: list[float]) -> None:
    """A recovery never follows any change by < 5 s; published is never better than instant."""
    config = ThresholdsConfig()
    assessor = SelfAssessor(config)
    last_change: int | None = None
    previous: SelfAssessmentLevel | None = None
    for i, std in enumerate(stds):
        stamp = S + i * 100_000_000
        belief = _belief(stamp, max(std, 1e-6))
        published = assessor.assess(belief).position.level
        instant = assess_belief(stamp, 'map', belief.pose_covariance,
                                belief.twist_covariance, config).position.level
        assert published >= instant
        if previous is not None and published != previous:
            if published < previous and last_change is not None:
                assert stamp - last_change >= config.hysteresis.min_level_interval_ns
            last_change = stamp
        previous = published


def test_hysteresis_is_part_of_the_content_address() -> None:
    """Changing any hysteresis parameter changes thresholds_sha256."""
    base = ThresholdsConfig()
    for hysteresis in (HysteresisConfig(0.1), HysteresisConfig(0.2, 1 * S),
                       HysteresisConfig(0.2, 2 * S, 3 * S)):
        assert ThresholdsConfig(hysteresis=hysteresis).sha256 != base.sha256
    with pytest.raises(ConfigError, match='recovery_margin'):
        HysteresisConfig(1.0)


# -- Unmeasured axes and dimension ----------------------------------------------------------

def _prediction(stamp_ns: int = 0) -> object:
    return predict(stamp_ns, 'map', (0.0, 0.0, 0.0), (1.0, 0.0, 0.0),
                   (0.01, 0.0, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 0.01), (0.0,) * 9,
                   100_000_000, 0.0)


def test_an_unmeasured_axis_is_left_out_with_its_degree_of_freedom() -> None:
    """A fix with vertical variance 1e6: the distance uses x and y (2 axes), not +inf."""
    fix_cov = (0.2, 0.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 1e6)
    outcome = evaluate_outcome(_prediction(), (0.1 + 0.3, 0.3, -40.0), fix_cov,
                               100_000_000, 'map')
    assert outcome.status == STATUS_PAIRED and outcome.position_axes_compared == 2
    # e = (0.3, 0.3) on S = diag(0.21, 0.21): d^2 = 0.18 / 0.21
    assert outcome.position_mahalanobis == pytest.approx(math.sqrt(0.18 / 0.21))
    assert outcome.position_normalised_distance < outcome.position_mahalanobis


def test_a_fix_with_no_measured_axis_or_no_covariance_is_no_evidence() -> None:
    """Every axis beyond the bound, or a zero / -1 covariance: not observed, named."""
    prediction = _prediction()
    huge = evaluate_outcome(prediction, (0.0, 0.0, 0.0), (1e6, 0, 0, 0, 1e6, 0, 0, 0, 1e6),
                            100_000_000, 'map')
    assert (huge.status, huge.observed) == (STATUS_NO_MEASURED_AXIS, False)
    for cov in ((0.0,) * 9, (-1.0,) + (0.0,) * 8):
        fix = Observation(100_000_000, 'map', (0.0, 0.0, 0.0), cov)
        outcome = outcome_for_cycle(100_000_000, 'map', prediction, fix)
        assert (outcome.status, outcome.observed) == (STATUS_NO_OBSERVATION_COVARIANCE, False)


# -- Asynchronous fixes ---------------------------------------------------------------------

def test_a_prediction_is_propagated_to_the_fix_stamp() -> None:
    """p(τ) = p + vΔ and Σ(τ) = Σp + Δ²Σv + QΔ·I with Δ = τ - stamp; exact at the target."""
    prediction = predict(0, 'map', (0.0, 0.0, 0.0), (2.0, 0.0, 0.0), I3, I3, 100_000_000, 0.5)
    assert propagate(prediction, 100_000_000) == (prediction.predicted_position,
                                                  prediction.position_covariance)
    position, covariance = propagate(prediction, 40_000_000)
    assert position == pytest.approx((0.08, 0.0, 0.0))
    assert covariance[0] == pytest.approx(1.0 + 0.04 ** 2 + 0.5 * 0.04)


def test_an_asynchronous_fix_is_judged_at_its_own_stamp() -> None:
    """A fix 40 ms after a belief moving at 10 m/s: compared at 0.4 m, so consistent."""
    period = 100_000_000
    beliefs = [BeliefSample(S + i * period, 'map', (10.0 * i * 0.1, 0.0, 0.0), (10.0, 0.0, 0.0),
                            _cov6(0.05), _cov6(0.05)) for i in range(6)]
    fixes = [Observation(S + i * period + 40_000_000, 'map', (10.0 * (i * 0.1 + 0.04), 0.0, 0.0),
                         (0.0025, 0.0, 0.0, 0.0, 0.0025, 0.0, 0.0, 0.0, 0.0025))
             for i in range(5)]
    stream: list[BeliefSample | Observation] = []
    for i in range(6):
        stream.append(beliefs[i])
        if i < 5:
            stream.append(fixes[i])
    traces = run_pipeline(stream, PipelineConfig())
    paired = [t.outcome for t in traces if t.outcome.observed]
    assert len(paired) == 5
    for outcome in paired:
        # The fix belongs to the next cycle and carries its own stamp.
        assert outcome.observation_stamp_ns == outcome.prediction_stamp_ns + 40_000_000
        assert outcome.stamp_ns == outcome.prediction_stamp_ns + period
        assert outcome.position_mahalanobis < 1e-6


def test_old_and_repeated_beliefs_are_not_new_cycles_even_after_resolution() -> None:
    """A stale belief after resolution: no new cycle, and the hysteresis state untouched."""
    fix = (0.0025, 0.0, 0.0, 0.0, 0.0025, 0.0, 0.0, 0.0, 0.0025)
    stream: list[BeliefSample | Observation] = []
    for i in range(8):
        if i == 4:  # a stale belief whose covariance says UNKNOWN, after cycles 0-3 resolved
            stream.append(_belief(S, position_std=5.0))
        stream += [Observation(S + i * 100_000_000, 'map', (0.0, 0.0, 0.0), fix),
                   _belief(S + i * 100_000_000)]
    traces = run_pipeline(stream, PipelineConfig())
    assert [t.stamp_ns for t in traces] == [S + i * 100_000_000 for i in range(8)]
    assert {t.raw.overall_level for t in traces} == {KNOWN}


def test_a_finite_belief_whose_prediction_overflows_predicts_nothing() -> None:
    """Position 1.7e308 moving at 1e308 m/s: no prediction (the next outcome no_prediction)."""
    from ghost_core.prediction import prediction_from_belief

    belief = BeliefSample(S, 'map', (1.7e308, 0.0, 0.0), (1e308, 0.0, 0.0), _cov6(0.05),
                          _cov6(0.05))
    assert prediction_from_belief(belief, 100_000_000, 0.05) is None
