"""SPEC §5 v1.2: unconfirmed is not known, bounded hysteresis, accuracy profiles."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.assessment import (
    assess_belief_sample,
    HysteresisConfig,
    REASON_UNCONFIRMED,
    SelfAssessor,
    ThresholdsConfig,
)
from ghost_core.errors import ConfigError
from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_core.pipeline import run_pipeline
from ghost_core.profiles import accuracy_profile, ACCURACY_PROFILES, dead_reckoning_horizon_s
from ghost_core.samples import BeliefSample
from ghost_core.scenarios import generate_scenario, GNSS_OUTAGE_FIRST_CYCLE, GNSS_OUTAGE_LAST_CYCLE

KNOWN, UNCERTAIN, UNKNOWN = SelfAssessmentLevel
S = 1_000_000_000
MS = 1_000_000


def _belief(stamp_ns: int, position_std: float = 0.05, vertical_std: float | None = None,
            velocity_std: float = 0.05) -> BeliefSample:
    pose = [0.0] * 36
    twist = [0.0] * 36
    for i in range(3):
        pose[i * 7] = (position_std if i < 2 or vertical_std is None else vertical_std) ** 2
        pose[(i + 3) * 7] = 0.01 ** 2
        twist[i * 7] = velocity_std ** 2
    return BeliefSample(stamp_ns, 'map', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), tuple(pose),
                        tuple(twist))


# -- Unconfirmed is not known -------------------------------------------------------------

def test_a_belief_unconfirmed_past_the_horizon_is_uncertain_until_fixes_return() -> None:
    """Fixes until 2 s, none until 6 s, then again: KNOWN, UNCERTAIN past 1 s, KNOWN again."""
    config = ThresholdsConfig(unconfirmed_horizon_ns=1 * S,
                              hysteresis=HysteresisConfig(0.2, 2 * S, 5 * S, 5 * S))
    assessor = SelfAssessor(config)
    levels, reasons = [], []
    for k in range(120):  # 10 Hz from t = 1 s
        stamp = S + k * 100 * MS
        if stamp <= 2 * S or stamp >= 6 * S:
            assessor.observe(stamp, (0.0, 0.0, 0.0))
        raw = assessor.assess(_belief(stamp))
        levels.append(raw.position.level)
        reasons.append(raw.position.reason)
    # The last fix is at 2.0 s (k = 10): unconfirmed for more than 1 s from k = 21 (3.1 s).
    assert set(levels[:21]) == {KNOWN}
    assert levels[21] == UNCERTAIN and reasons[21] == REASON_UNCONFIRMED
    assert set(levels[21:50]) == {UNCERTAIN}
    # Fixes again from 6.0 s (k = 50): the 2 s dwell ends at 8.0 s, the 5 s interval since
    # the change at 3.1 s at 8.1 s (k = 71).
    assert levels.index(KNOWN, 21) == 71
    assert set(levels[71:]) == {KNOWN}


def test_before_any_fix_the_age_counts_from_the_first_belief() -> None:
    assessor = SelfAssessor(ThresholdsConfig(unconfirmed_horizon_ns=1 * S))
    levels = [assessor.assess(_belief(S + k * 100 * MS)).overall_level for k in range(30)]
    assert levels.index(UNCERTAIN) == 11  # 1.1 s after the first belief


def test_a_non_finite_fix_confirms_nothing_and_a_zero_horizon_never_caps() -> None:
    assessor = SelfAssessor(ThresholdsConfig(unconfirmed_horizon_ns=1 * S))
    assessor.observe(S, (math.nan, 0.0, 0.0))
    assert assessor.unconfirmed_ns(3 * S) == 0  # no belief yet: counts from the first
    assessor.assess(_belief(S))
    assert assessor.assess(_belief(3 * S)).position.reason == REASON_UNCONFIRMED
    never = SelfAssessor(ThresholdsConfig(unconfirmed_horizon_ns=0))
    assert never.assess(_belief(S)).overall_level == KNOWN
    assert never.assess(_belief(100 * S)).overall_level == KNOWN


def test_the_horizon_is_content_addressed_and_checked() -> None:
    assert (ThresholdsConfig(unconfirmed_horizon_ns=S).sha256
            != ThresholdsConfig(unconfirmed_horizon_ns=2 * S).sha256)
    with pytest.raises(ConfigError, match='unconfirmed_horizon_ns'):
        ThresholdsConfig(unconfirmed_horizon_ns=-1)


def test_gnss_outage_with_the_gnss_profile_holds_before_the_horizon_runs_out() -> None:
    """The outage scenario with the shipped profile: HOLD once the horizon runs out.

    Non-PROCEED 3.1 s after the last fix, never KNOWN while unconfirmed, PROCEED again after
    the dwell once fixes resume.
    """
    scenario = generate_scenario('gnss_outage')
    profile = accuracy_profile('gnss')
    config = scenario.parameters.pipeline_config(profile.thresholds())
    traces = run_pipeline(scenario.inputs(), config)
    last_fix = scenario.cycles[GNSS_OUTAGE_FIRST_CYCLE - 2].stamp_ns
    horizon_ns = round(profile.unconfirmed_horizon_s * 1e9)
    for trace in traces:
        unconfirmed = GNSS_OUTAGE_FIRST_CYCLE <= (trace.stamp_ns - scenario.cycles[0].stamp_ns
                                                  ) // scenario.parameters.period_ns + 1
        if unconfirmed and trace.stamp_ns - last_fix > horizon_ns and (
                trace.stamp_ns <= scenario.cycles[GNSS_OUTAGE_LAST_CYCLE - 1].stamp_ns):
            assert trace.raw.overall_level != KNOWN
            assert trace.result.rationale.decision.kind != DecisionKind.PROCEED
    decisions = [t.result.rationale.decision.kind for t in traces]
    first_hold = decisions.index(DecisionKind.HOLD) + 1
    assert (traces[first_hold - 1].stamp_ns - last_fix) == pytest.approx(3.2 * S, abs=0.06 * S)
    resumed = decisions.index(DecisionKind.PROCEED, first_hold) + 1
    # Fixes resume at cycle 201; the recovery dwell is 2 s (20 cycles).
    assert resumed == GNSS_OUTAGE_LAST_CYCLE + 1 + 20
    assert set(decisions[resumed - 1:]) == {DecisionKind.PROCEED}


# -- Bounded hysteresis -------------------------------------------------------------------

steps = st.lists(st.tuples(st.integers(min_value=1, max_value=800),  # ms to the next belief
                           st.sampled_from([0.05, 0.3, 0.45, 0.49, 0.55, 0.9, 1.9, 2.5, 5.0]),
                           st.booleans()),  # a fix arrives just before this belief
                 min_size=1, max_size=300)
hysteresis = st.builds(
    HysteresisConfig,
    recovery_margin=st.sampled_from([0.0, 0.1, 0.2, 0.5]),
    recovery_dwell_ns=st.integers(min_value=0, max_value=6 * S),
    min_level_interval_ns=st.integers(min_value=0, max_value=20 * S),
    recovery_bound_ns=st.integers(min_value=0, max_value=8 * S))


@settings(max_examples=300, deadline=None)
@given(steps=steps, hysteresis=hysteresis,
       horizon_ns=st.sampled_from([0, 500 * MS, 2 * S]))
def test_after_r_seconds_inside_the_known_thresholds_the_level_is_known(
        steps: list[tuple[int, float, bool]], hysteresis: HysteresisConfig,
        horizon_ns: int) -> None:
    """For any trace: a belief inside its KNOWN thresholds and confirmed for R is KNOWN.

    And never KNOWN when outside them or unconfirmed (the published level is never better
    than the instantaneous one).
    """
    config = ThresholdsConfig(hysteresis=hysteresis, unconfirmed_horizon_ns=horizon_ns)
    assessor = SelfAssessor(config)
    reference = SelfAssessor(config)  # the same confirmation clock, for the oracle
    stamp, inside_since = S, None
    for gap_ms, std, fix in steps:
        stamp += gap_ms * MS
        if fix:
            assessor.observe(stamp - MS, (0.0, 0.0, 0.0))
            reference.observe(stamp - MS, (0.0, 0.0, 0.0))
        belief = _belief(stamp, std)
        published = assessor.assess(belief)
        reference.assess(belief)
        confirmed = horizon_ns == 0 or reference.unconfirmed_ns(stamp) <= horizon_ns
        inside = assess_belief_sample(belief, config).overall_level == KNOWN and confirmed
        inside_since = (inside_since if inside_since is not None else stamp) if inside else None
        if inside_since is not None and stamp - inside_since >= hysteresis.recovery_bound_ns:
            assert published.overall_level == KNOWN
        if not inside:
            assert published.overall_level != KNOWN


# -- Accuracy profiles --------------------------------------------------------------------

@pytest.mark.parametrize('eph', [0.3, 0.5, 0.68, 1.0])
def test_the_gnss_profile_knows_a_healthy_standalone_receiver(eph: float) -> None:
    """A receiver eph of 0.3-1.0 m (σ = eph/√2 per horizontal axis), epv up to 1 m: KNOWN."""
    config = accuracy_profile('gnss').thresholds()
    belief = _belief(S, eph / math.sqrt(2.0), vertical_std=min(1.0, 1.5 * eph),
                     velocity_std=0.3 / math.sqrt(2.0))
    assert assess_belief_sample(belief, config).overall_level == KNOWN


def test_the_gnss_profile_judges_px4s_own_failsafe_bounds_unknown() -> None:
    """COM_POS_FS_EPH = 5 m (eph) and COM_VEL_FS_EVH = 1 m/s (evh): UNKNOWN."""
    config = accuracy_profile('gnss').thresholds()
    position = _belief(S, 5.0 / math.sqrt(2.0))
    velocity = _belief(S, velocity_std=1.0 / math.sqrt(2.0))
    assert assess_belief_sample(position, config).position.level == UNKNOWN
    assert assess_belief_sample(velocity, config).velocity.level == UNKNOWN


def test_the_horizon_is_dead_reckoning_through_the_known_threshold() -> None:
    """sqrt(2 σ / 0.2 m/s²), down to 0.1 s, at least three periods of the slowest fix."""
    assert dead_reckoning_horizon_s(1.0, 1.0) == pytest.approx(3.1)
    assert dead_reckoning_horizon_s(0.1, 5.0) == pytest.approx(1.0)
    assert dead_reckoning_horizon_s(0.01, 1.0) == pytest.approx(3.0)  # 3 fix periods
    for profile in ACCURACY_PROFILES.values():
        thresholds = profile.thresholds()
        assert thresholds.unconfirmed_horizon_ns == round(profile.unconfirmed_horizon_s * 1e9)
        assert profile.unconfirmed_horizon_s >= 3.0 / profile.slowest_fix_hz
    with pytest.raises(ConfigError, match='gnss, rtk, indoor'):
        accuracy_profile('lidar')
