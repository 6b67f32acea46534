"""Dimension-normalised distances: the 1-D sigma with the tail probability of d² on n axes."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.calibration import build_calibration_history
from ghost_core.distances import chi2_log_survival, normalised_distance
from ghost_core.prediction import evaluate_outcome, predict

I3 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def test_tiny_distances_keep_their_order_and_value() -> None:
    """Near zero: z ≈ sqrt(π/2)·P(χ²ₙ <= d²), never a collapse to 0 for a non-zero d.

    (Found by Hypothesis: the log-tail form once gave 0.0 for d = 1e-12 and d itself for
    d = 4e-97 on two axes.)
    """
    assert normalised_distance(1e-12, 2) == pytest.approx(math.sqrt(math.pi / 2) * 0.5e-24,
                                                          rel=1e-9)
    assert 0.0 < normalised_distance(4.4e-97, 2) < normalised_distance(1e-12, 2)
    assert normalised_distance(1e-6, 3) == pytest.approx(
        math.sqrt(math.pi / 2) * math.sqrt(2 / math.pi) / 3 * 1e-18, rel=1e-6)
    for n in (2, 3):
        below, above = normalised_distance(0.9999999, n), normalised_distance(1.0000001, n)
        assert below < normalised_distance(1.0, n) < above


def test_one_axis_is_the_identity_and_the_ends_are_fixed() -> None:
    """N = 1: z = d; z(0) = 0 and z(inf) = inf for every n; 0 axes only with d = 0."""
    for d in (0.0, 0.3, 1.0, 3.0, 7.5, 1e6):
        assert normalised_distance(d, 1) == d
    for n in (2, 3):
        assert normalised_distance(0.0, n) == 0.0
        assert normalised_distance(math.inf, n) == math.inf
    assert normalised_distance(0.0, 0) == 0.0
    with pytest.raises(ValueError, match='no axis compared'):
        normalised_distance(1.0, 0)
    with pytest.raises(ValueError, match='axes'):
        normalised_distance(1.0, 4)
    with pytest.raises(ValueError, match='distance'):
        normalised_distance(math.nan, 2)


@pytest.mark.parametrize(('n', 'd', 'tail'), [
    # P(chi2_n > d^2) from tables (scipy.stats.chi2.sf), to 1e-9.
    (2, 3.0, 0.011108996538242306),
    (3, 3.0, 0.029290886534888),
    (3, 1.0, 0.8012519569012),
    (2, 5.0, 3.726653172078671e-06),
])
def test_chi2_tails_match_known_values(n: int, d: float, tail: float) -> None:
    """The closed-form survival functions match reference values."""
    assert math.exp(chi2_log_survival(d * d, n)) == pytest.approx(tail, rel=1e-9)


@settings(max_examples=300, deadline=None)
@given(d=st.floats(0.0, 60.0), n=st.sampled_from([2, 3]))
def test_normalised_distance_has_the_same_tail(d: float, n: int) -> None:
    """P(|N(0,1)| > z) = P(chi2_n > d²), z <= d, in log space even far in the tail."""
    z = normalised_distance(d, n)
    assert 0.0 <= z <= d
    if d > 0.0:
        assert chi2_log_survival(z * z, 1) == pytest.approx(chi2_log_survival(d * d, n),
                                                            rel=1e-9, abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(a=st.floats(0.0, 100.0), b=st.floats(0.0, 100.0), n=st.sampled_from([1, 2, 3]))
def test_normalised_distance_keeps_the_order(a: float, b: float, n: int) -> None:
    """A larger distance is never a smaller normalised one (to rounding): bins stay ordered."""
    low, high = sorted((a, b))
    assert normalised_distance(low, n) <= normalised_distance(high, n) * (1.0 + 1e-12)


@pytest.mark.parametrize('axes', [2, 3])
def test_a_consistent_estimator_is_beyond_3_at_the_1d_rate(axes: int) -> None:
    """Consistent errors on 2 or 3 axes land beyond 3 (normalised) at ~0.27 %, not 1-3 %.

    40 000 draws: the 1-D rate 0.27 % gives 108 expected, sd ~10; the raw 3-D distance
    would give ~1170 (2.9 %), the raw 2-D one ~444 (1.1 %).
    """
    rng = random.Random(axes)
    draws = 40_000
    raw_beyond = normalised_beyond = 0
    for _ in range(draws):
        d = math.sqrt(sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(axes)))
        raw_beyond += d > 3.0
        normalised_beyond += normalised_distance(d, axes) > 3.0
    assert 60 <= normalised_beyond <= 160
    assert raw_beyond > 3 * normalised_beyond


def test_the_history_bins_on_the_normalised_distance() -> None:
    """A 3-D outcome with d = 3.2 (tail 1.7 %, z = 2.39) is within 1..3 sigma, not beyond 3."""
    prediction = predict(0, 'map', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), I3, I3, 100, 0.0)
    # S = 2 I: an error of 3.2 * sqrt(2) along x gives d = 3.2 on 3 axes.
    outcome = evaluate_outcome(prediction, (3.2 * math.sqrt(2.0), 0.0, 0.0), I3, 100, 'map')
    assert outcome.position_axes_compared == 3
    assert outcome.position_mahalanobis == pytest.approx(3.2)
    assert outcome.position_normalised_distance == pytest.approx(2.395, abs=0.001)
    history = build_calibration_history([outcome], 4)
    assert (history.count_beyond_1_std, history.count_beyond_3_std) == (1, 0)
    assert history.worst_position_mahalanobis == outcome.position_mahalanobis


@settings(max_examples=200, deadline=None)
@given(d=st.floats(1e150, 1e160), n=st.sampled_from([2, 3]))
def test_astronomical_distances_stay_astronomical(d: float, n: int) -> None:
    """Around d² = float max (d ~ 1.3e154), z = d: never 0, never "within 1 sigma".

    (Review finding: sqrt(2x/π) overflowed for 3 axes and d in [9.5e153, 1.34e154) gave 0.)
    """
    z = normalised_distance(d, n)
    assert z > 5.0 and z <= d
