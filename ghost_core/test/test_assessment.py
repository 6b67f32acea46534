"""Reference self-assessor: thresholds, content address, and never KNOWN on a bad covariance."""

from __future__ import annotations

import hashlib
import math

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.assessment import (
    assess_belief,
    assess_block,
    ASSESSOR_ID,
    BlockThresholds,
    HysteresisConfig,
    REASON_BEYOND_UNCERTAIN,
    REASON_HEADING_BEYOND_UNCERTAIN,
    REASON_HYSTERESIS,
    REASON_WITHIN_KNOWN,
    REASON_WITHIN_UNCERTAIN,
    SelfAssessor,
    ThresholdsConfig,
)
from ghost_core.errors import ConfigError, ContractError
from ghost_core.hashing import content_address
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.profiles import accuracy_profile
from ghost_core.samples import BeliefSample

KNOWN, UNCERTAIN, UNKNOWN = SelfAssessmentLevel


def diagonal6(position: float, orientation: float) -> list[float]:
    """Return a 6x6 diagonal covariance with the given variances for the two blocks."""
    values = [0.0] * 36
    for i in range(6):
        values[i * 7] = position if i < 3 else orientation
    return values


def test_levels_follow_the_thresholds() -> None:
    """max_std <= known -> KNOWN; <= uncertain -> UNCERTAIN; above -> UNKNOWN (boundaries in)."""
    block = BlockThresholds(0.5, 2.0)
    for std, level in ((1e-3, KNOWN), (0.5, KNOWN), (0.51, UNCERTAIN), (2.0, UNCERTAIN),
                       (2.01, UNKNOWN)):
        variance = std**2
        axis = assess_block((variance, 0, 0, 0, variance / 4, 0, 0, 0, 0.0), block)
        assert axis.level == level, std
        assert axis.max_std == pytest.approx(std)


def test_assess_belief_uses_the_right_blocks() -> None:
    """Position = pose x,y,z; orientation = pose rotation; velocity = twist linear block."""
    config = ThresholdsConfig()
    pose = diagonal6(0.01, 1.0)  # orientation std 1 rad: beyond uncertain
    twist = diagonal6(1.0, 99.0)  # linear std 1 m/s: uncertain; angular block ignored
    raw = assess_belief(7, 'map', pose, twist, config)
    assert raw.position.level == KNOWN
    assert raw.velocity.level == UNCERTAIN
    assert raw.orientation.level == UNKNOWN
    assert raw.overall_level == UNKNOWN
    assert raw.thresholds_sha256 == content_address(config.to_dict())
    assert raw.assessor_id == ASSESSOR_ID
    assert (raw.stamp_ns, raw.frame_id) == (7, 'map')


def orientation_pose(tilt_x_std: float, tilt_y_std: float, heading_std: float,
                     tilt_heading_correlation: float = 0.0) -> list[float]:
    """A pose covariance: position std 0.1 m, the rotation block (pose 21, 28, 35) as given."""
    pose = diagonal6(0.01, 0.0)
    pose[21], pose[28], pose[35] = tilt_x_std**2, tilt_y_std**2, heading_std**2
    pose[23] = pose[33] = tilt_heading_correlation * tilt_x_std * heading_std  # rot x, rot z
    return pose


#: The gnss profile's orientation bounds: KNOWN <= 0.2 rad, UNKNOWN beyond 0.5 rad.
GNSS = accuracy_profile('gnss').thresholds()


@pytest.mark.parametrize(('tilt', 'heading', 'level', 'max_std', 'reason'), [
    # Tilt 0.01 / 0.02 rad, heading 0.3 rad (17°, about EKF3's after its yaw alignment):
    # KNOWN, judged on the tilt, sqrt(max(1e-4, 4e-4)) = 0.02.
    ((0.01, 0.02), 0.3, KNOWN, 0.02, REASON_WITHIN_KNOWN),
    # Heading at the UNKNOWN bound exactly (0.5 rad, EKF3's EK3_YAW_M_NSE default): KNOWN.
    ((0.01, 0.02), 0.5, KNOWN, 0.02, REASON_WITHIN_KNOWN),
    # Heading 0.6 rad > 0.5: UNKNOWN, max_std = the heading's sqrt(0.36) = 0.6.
    ((0.01, 0.02), 0.6, UNKNOWN, 0.6, REASON_HEADING_BEYOND_UNCERTAIN),
    # Tilt 0.25 rad (> 0.2, <= 0.5), heading small: UNCERTAIN as before.
    ((0.25, 0.01), 0.01, UNCERTAIN, 0.25, REASON_WITHIN_UNCERTAIN),
    ((0.01, 0.25), 0.3, UNCERTAIN, 0.25, REASON_WITHIN_UNCERTAIN),
    # Tilt UNCERTAIN and heading beyond the bound: UNKNOWN by the heading.
    ((0.25, 0.01), 0.6, UNKNOWN, 0.6, REASON_HEADING_BEYOND_UNCERTAIN),
    # Tilt beyond the bound: UNKNOWN by the tilt, whatever the heading.
    ((0.55, 0.01), 0.6, UNKNOWN, 0.55, REASON_BEYOND_UNCERTAIN),
    ((0.55, 0.01), 0.01, UNKNOWN, 0.55, REASON_BEYOND_UNCERTAIN),
])
def test_heading_is_judged_apart_from_tilt(tilt: tuple[float, float], heading: float,
                                           level: SelfAssessmentLevel, max_std: float,
                                           reason: str) -> None:
    """Tilt (rot x, y) against both orientation bounds; heading (rot z) only against UNKNOWN."""
    for correlation in (0.0, 0.5):  # a tilt-heading correlation changes nothing
        pose = orientation_pose(*tilt, heading, correlation)
        raw = assess_belief(1, 'map', pose, diagonal6(0.01, 0.01), GNSS)
        assert raw.orientation.level == level
        assert raw.orientation.max_std == pytest.approx(max_std)
        assert raw.orientation.reason == reason
        assert raw.overall_level == level  # position and velocity are KNOWN
        block = assess_block(pose[21:24] + pose[27:30] + pose[33:36], GNSS.orientation,
                             heading=True)
        assert (block.level, block.reason) == (level, reason)


def test_heading_is_judged_only_in_the_orientation_block() -> None:
    """Without heading, a block's z axis is judged as x and y (position, velocity)."""
    covariance = (0.01**2, 0.0, 0.0, 0.0, 0.01**2, 0.0, 0.0, 0.0, 0.3**2)
    assert assess_block(covariance, GNSS.orientation).level == UNCERTAIN
    assert assess_block(covariance, GNSS.orientation, heading=True).level == KNOWN
    pose = diagonal6(0.01, 0.0001)
    pose[14] = 1.5**2  # position z std 1.5 m > the gnss KNOWN 1.0 m
    assert assess_belief(1, 'map', pose, diagonal6(0.01, 0.01), GNSS).position.level == (
        UNCERTAIN)


def test_a_heading_after_a_yaw_reset_holds_nothing_and_beyond_the_bound_is_unknown() -> None:
    """EKF3's yaw reset: heading std 0.5, then 0.28, 0.18 rad; tilt 0.03: KNOWN throughout.

    The same stream with the heading at 0.6 rad for one belief: UNKNOWN at once, then held
    by the hysteresis (the instantaneous level is what the hysteresis works on).
    """
    def belief(stamp_ns: int, heading: float) -> BeliefSample:
        return BeliefSample(stamp_ns, 'map', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0),
                            tuple(orientation_pose(0.03, 0.03, heading)),
                            tuple(diagonal6(0.01, 0.01)))

    period = 100_000_000
    headings = [0.05] * 5 + [0.5] * 5 + [0.28] * 5 + [0.18] * 5
    assessor = SelfAssessor(GNSS)
    published = [assessor.assess(belief(i * period, h)) for i, h in enumerate(headings)]
    assert {p.orientation.level for p in published} == {KNOWN}
    assert [p.orientation.max_std for p in published] == [pytest.approx(0.03)] * 20

    assessor = SelfAssessor(GNSS)
    headings = [0.05] * 5 + [0.6] + [0.3] * 5
    published = [assessor.assess(belief(i * period, h)) for i, h in enumerate(headings)]
    assert [p.orientation.level for p in published] == [KNOWN] * 5 + [UNKNOWN] * 6
    assert published[5].orientation.reason == REASON_HEADING_BEYOND_UNCERTAIN
    assert {p.orientation.reason for p in published[6:]} == {REASON_HYSTERESIS}


def test_thresholds_are_content_addressed() -> None:
    """thresholds_sha256 is H(config as dict) and changes with any threshold."""
    config = ThresholdsConfig()
    assert config.to_dict() == {
        'accuracy_profile': '',
        'hysteresis': {'min_level_interval_ns': 5_000_000_000,
                       'recovery_bound_ns': 5_000_000_000,
                       'recovery_dwell_ns': 2_000_000_000, 'recovery_margin': 0.2},
        'no_covariance_level': 'unknown',
        'orientation': {'known_max_std': 0.1, 'uncertain_max_std': 0.35},
        'position': {'known_max_std': 0.5, 'uncertain_max_std': 2.0},
        'unconfirmed_horizon_ns': 0,
        'velocity': {'known_max_std': 0.5, 'uncertain_max_std': 2.0},
    }
    assert config.sha256 == content_address(config.to_dict())
    other = ThresholdsConfig(position=BlockThresholds(0.5, 2.5))
    assert other.sha256 != config.sha256
    assert ThresholdsConfig(unconfirmed_horizon_ns=1).sha256 != config.sha256
    assert ThresholdsConfig(accuracy_profile='gnss').sha256 != config.sha256
    assert ThresholdsConfig(hysteresis=HysteresisConfig(recovery_bound_ns=1)).sha256 != (
        config.sha256)


#: Known answer (docs/contracts.md): the gnss profile's thresholds with the declared defaults,
#: as canonical JSON written out by hand, and its content address (thresholds_sha256).
GNSS_THRESHOLDS_JSON = (
    '{"accuracy_profile":"gnss","hysteresis":{"min_level_interval_ns":5000000000,'
    '"recovery_bound_ns":5000000000,"recovery_dwell_ns":2000000000,"recovery_margin":0.2},'
    '"no_covariance_level":"unknown","orientation":{"known_max_std":0.2,'
    '"uncertain_max_std":0.5},"position":{"known_max_std":1.0,"uncertain_max_std":2.5},'
    '"unconfirmed_horizon_ns":3100000000,"velocity":{"known_max_std":0.5,'
    '"uncertain_max_std":0.7}}')
GNSS_THRESHOLDS_SHA256 = '8bf2c3f81d2c35ded457a056587c4fc540bddacc2073ae96ea601d9596bab648'


def test_default_thresholds_sha256_known_answer() -> None:
    """The shipped thresholds (profile gnss, recorded by name) hash to the pinned address."""
    from ghost_core.hashing import canonical_json
    from ghost_core.profiles import accuracy_profile

    thresholds = accuracy_profile('gnss').thresholds()
    assert canonical_json(thresholds.to_dict()) == GNSS_THRESHOLDS_JSON
    assert hashlib.sha256(GNSS_THRESHOLDS_JSON.encode('utf-8')).hexdigest() == (
        GNSS_THRESHOLDS_SHA256)
    assert thresholds.sha256 == GNSS_THRESHOLDS_SHA256


def test_the_accuracy_profile_is_a_known_name_or_none() -> None:
    """accuracy_profile names a profile of ghost_core.profiles, or '' (none)."""
    with pytest.raises(ConfigError, match='accuracy_profile must be one of gnss, rtk, indoor'):
        ThresholdsConfig(accuracy_profile='lidar')


@pytest.mark.parametrize(('known', 'uncertain'), [(0.0, 1.0), (-1.0, 1.0), (2.0, 1.0),
                                                  (math.nan, 1.0), (1.0, math.inf)])
def test_bad_thresholds_are_rejected(known: float, uncertain: float) -> None:
    """Thresholds are finite, positive, and known <= uncertain."""
    with pytest.raises(ConfigError, match='max_std'):
        BlockThresholds(known, uncertain)


@pytest.mark.parametrize(('index', 'value', 'reason'), [
    (0, math.nan, 'non_finite_covariance'),
    (1, math.inf, 'non_finite_covariance'),
    (14, -math.inf, 'non_finite_covariance'),
    (7, math.inf, 'estimator_position_invalid'),
    (14, -0.01, 'negative_variance'),
    (1, 0.5, 'asymmetric_covariance'),
])
def test_bad_position_covariance_is_unknown(index: int, value: float, reason: str) -> None:
    """NaN, inf, negative variance or asymmetry in the position block gives UNKNOWN.

    +inf on the diagonal is the estimator declaring the block invalid (PX4's xy_valid false,
    as the importer writes it): UNKNOWN with a reason naming it.
    """
    pose = diagonal6(0.01, 0.0001)
    pose[index] = value
    raw = assess_belief(1, 'map', pose, diagonal6(0.01, 0.01))
    assert raw.position.level == UNKNOWN
    assert raw.position.reason == reason
    assert raw.position.max_std == 0.0
    assert raw.overall_level == UNKNOWN


def test_not_positive_semidefinite_velocity_is_unknown() -> None:
    """A symmetric twist block with a negative eigenvalue gives UNKNOWN velocity."""
    twist = diagonal6(0.01, 0.01)
    twist[1] = twist[6] = 0.02  # |cov(x, y)| > sqrt(var x * var y)
    raw = assess_belief(1, 'map', diagonal6(0.01, 0.0001), twist)
    assert raw.velocity.level == UNKNOWN
    assert raw.velocity.reason == 'not_positive_semidefinite'


def test_a_defect_outside_the_blocks_is_ignored() -> None:
    """NaN in the angular-rate block of the twist does not affect the three assessed blocks."""
    twist = diagonal6(0.01, 0.01)
    twist[35] = math.nan
    assert assess_belief(1, 'map', diagonal6(0.01, 0.0001), twist).overall_level == KNOWN


def test_covariance_must_be_6x6() -> None:
    """A covariance that is not 36 numbers is rejected naming the argument."""
    with pytest.raises(ContractError, match='pose_covariance'):
        assess_belief(1, 'map', [0.0] * 35, [0.0] * 36)


bad_entries = st.sampled_from([math.nan, math.inf, -math.inf, -1.0])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1e-3), min_size=36, max_size=36),
       st.integers(0, 2), st.integers(0, 8), bad_entries)
def test_never_known_on_bad_covariance(
    base: list[float], block: int, entry: int, bad: float
) -> None:
    """Whatever else the covariance holds, a non-finite or negative variance is never KNOWN."""
    pose, twist = list(base), list(base)
    row, col = divmod(entry, 3)
    if bad == -1.0:
        col = row  # a negative variance sits on the diagonal
    target, offset = ((pose, 0), (pose, 3), (twist, 0))[block]
    target[(offset + row) * 6 + offset + col] = bad
    raw = assess_belief(1, 'map', pose, twist)
    assert raw.overall_level == UNKNOWN
