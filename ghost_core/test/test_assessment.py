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
    ThresholdsConfig,
)
from ghost_core.errors import ConfigError, ContractError
from ghost_core.hashing import content_address
from ghost_core.levels import SelfAssessmentLevel

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
