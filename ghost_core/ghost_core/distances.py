"""Dimension-normalised distances: the 1-D sigma with the tail probability of d² on n axes.

A consistent estimator's squared Mahalanobis distance over n compared axes follows χ²ₙ. The
same "3 sigma" cut-off means very different things for different n: P(d > 3) is 0.27 % on
one axis, 1.1 % on two and 2.9 % on three. The normalised distance z of (d, n) is the 1-D
sigma with the same tail probability,

    P(|N(0, 1)| > z) = P(χ²ₙ > d²),   i.e.   erfc(z/√2) = Q(n/2, d²/2),

so that a consistent estimator falls beyond 3 at the 1-D rate (0.27 %) whatever n is. z = d
for n = 1, z <= d for n > 1, z is increasing in d, z(0) = 0 and z(+inf) = +inf. Everything is
computed in log space, so distances far in the tail (d = 40 and beyond) keep their order
instead of underflowing to a tie.
"""

from __future__ import annotations

import math

__all__ = ['MAX_AXES', 'chi2_log_survival', 'normalised_distance']

#: The reference model compares at most the three position axes.
MAX_AXES = 3

# Below this argument math.erfc is accurate and far from underflow (erfc(25) ~ 1e-274).
_ERFC_DIRECT_LIMIT = 25.0
_LOG_SQRT_PI = 0.5 * math.log(math.pi)
_NEWTON_STEPS = 100
# Below this d² the lower tail is computed instead of the upper one (see _small_normalised).
_SMALL_X = 1.0
_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _log_erfcx(t: float) -> float:
    """Return log(erfc(t) exp(t²)) for t >= 0, by its asymptotic series where erfc underflows.

    Computing the scaled form directly keeps -t² out of the far tail, where subtracting it
    again would cancel catastrophically.
    """
    if t < _ERFC_DIRECT_LIMIT:
        return math.log(math.erfc(t)) + t * t
    inverse_square = 1.0 / (t * t)
    # erfc(t) = exp(-t²)/(t√π) (1 - 1/(2t²) + 3/(4t⁴) - 15/(8t⁶) + ...); t >= 25 makes the
    # truncation error ~1e-11 relative, far below what could move a bin.
    series = 1.0 - 0.5 * inverse_square + 0.75 * inverse_square**2 - 1.875 * inverse_square**3
    return -math.log(t) - _LOG_SQRT_PI + math.log(series)


def _log_erfc(t: float) -> float:
    """Return log(erfc(t)) for t >= 0."""
    return _log_erfcx(t) - t * t


def chi2_log_survival(x: float, n: int) -> float:
    """Return log P(χ²ₙ > x) for x >= 0 and n in 1..3 (closed forms)."""
    if n not in (1, 2, 3):
        raise ValueError(f'chi2_log_survival: n must be 1, 2 or 3, got {n!r}')
    if not x >= 0.0:
        raise ValueError(f'chi2_log_survival: x must be a number >= 0, got {x!r}')
    if math.isinf(x):
        return -math.inf
    s = math.sqrt(x / 2.0)
    if n == 1:
        return _log_erfc(s)
    if n == 2:
        return -x / 2.0
    # n = 3: Q = erfc(s) + sqrt(2x/π) exp(-x/2) = exp(-x/2) (erfcx(s) + sqrt(2x/π)), with
    # erfcx(s) = erfc(s) exp(s²) and s² = x/2: no term underflows.
    # sqrt(2x/π) as sqrt(x)·sqrt(2/π): 2x overflows for x > 9e307, sqrt(x) never does.
    return -x / 2.0 + math.log(math.exp(_log_erfcx(s)) + math.sqrt(x) * _SQRT_2_OVER_PI)


def normalised_distance(distance: float, axes: int) -> float:
    """Return the 1-D sigma z whose two-sided tail equals that of `distance` on `axes` axes.

    `distance` is a Mahalanobis distance (>= 0, +inf allowed); `axes` is 1..3 (0 axes is no
    comparison: the distance must then be 0 and so is z). Deterministic: Newton's method in
    log space from z = distance, a fixed sequence of float operations, so a verifier can
    recompute it from the recorded fields.
    """
    if isinstance(axes, bool) or not isinstance(axes, int) or not 0 <= axes <= MAX_AXES:
        raise ValueError(f'normalised_distance: axes must be an integer in 0..{MAX_AXES}, '
                         f'got {axes!r}')
    if not distance >= 0.0:
        raise ValueError(f'normalised_distance: distance must be a number >= 0, '
                         f'got {distance!r}')
    if axes == 0:
        if distance != 0.0:
            raise ValueError(f'normalised_distance: no axis compared, so the distance must '
                             f'be 0.0, got {distance!r}')
        return 0.0
    if axes == 1 or distance == 0.0 or math.isinf(distance):
        return distance
    x = distance * distance
    if x < _SMALL_X:
        return _small_normalised(x, axes)
    target = chi2_log_survival(x, axes)
    if not math.isfinite(target):
        # d² beyond float range (d > 1.3e154): the tail is 0 whatever n; z = d keeps the order.
        return distance
    # f(z) = log erfc(z/√2) - target is concave and decreasing, and f(distance) <= 0 (z <=
    # distance): Newton's method from distance stays on the right of the root and decreases
    # monotonically to it. Stop when a step no longer decreases z (float64 convergence).
    z = distance
    for _ in range(_NEWTON_STEPS):
        t = z / _SQRT2
        log_scaled = _log_erfcx(t)
        log_tail = log_scaled - t * t
        # d/dz log erfc(z/√2) = -sqrt(2/π) exp(-z²/2) / erfc(z/√2) = -sqrt(2/π) / erfcx(t).
        slope = -math.sqrt(2.0 / math.pi) * math.exp(-log_scaled)
        step = (log_tail - target) / slope
        if not math.isfinite(step):
            break
        candidate = max(z - step, 0.0)
        if not candidate < z:
            break
        z = candidate
    return z


def _chi2_cdf_small(x: float, n: int) -> float:
    """P(χ²ₙ <= x) for 0 <= x < _SMALL_X, without the cancellation of 1 - survival."""
    if n == 2:
        return -math.expm1(-x / 2.0)
    # n = 3: the lower regularised gamma P(3/2, y), y = x/2, by its power series
    # y^a e^-y Σ y^k / Γ(a + k + 1), which converges fast for y < 1.
    y = x / 2.0
    term = 1.0 / math.gamma(2.5)
    total = term
    for k in range(1, 60):
        term *= y / (1.5 + k)
        total += term
        if term < total * 1e-17:
            break
    return float(y ** 1.5 * math.exp(-y) * total)


def _small_normalised(x: float, n: int) -> float:
    """normalised_distance for d² = x < _SMALL_X: solve erf(z/√2) = P(χ²ₙ <= x) directly.

    Near zero the tail probability is 1 - (tiny), which the log-tail form cannot resolve; the
    lower tail can. erf is concave on z >= 0, and z0 = sqrt(π/2) C lies left of the root
    (erf(u) <= 2u/√π), so Newton's method increases monotonically to it.
    """
    cdf = _chi2_cdf_small(x, n)
    z = math.sqrt(math.pi / 2.0) * cdf
    for _ in range(_NEWTON_STEPS):
        slope = math.sqrt(2.0 / math.pi) * math.exp(-0.5 * z * z)
        candidate = z - (math.erf(z / _SQRT2) - cdf) / slope
        if not candidate > z:
            break
        z = candidate
    return z
