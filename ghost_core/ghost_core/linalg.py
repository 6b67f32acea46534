"""Pure-Python 3x3 linear algebra for covariances (row-major tuples of 9 floats)."""

from __future__ import annotations

from collections.abc import Sequence
import math

__all__ = [
    'ASYMMETRIC',
    'NEGATIVE_VARIANCE',
    'NON_FINITE',
    'NOT_PSD',
    'add3',
    'block3',
    'covariance_defect',
    'det3',
    'identity3',
    'inverse3',
    'mahalanobis',
    'scale3',
]

#: Reasons a 3x3 block is not a usable covariance (taxonomy strings, see AxisAssessment.msg).
NON_FINITE = 'non_finite_covariance'
NEGATIVE_VARIANCE = 'negative_variance'
ASYMMETRIC = 'asymmetric_covariance'
NOT_PSD = 'not_positive_semidefinite'

# Tolerances are relative to the largest variance s of the block, so that a covariance of
# millimetres and one of kilometres are judged alike; the absolute floor only matters for an
# all-zero block. 1e-9 is far above float64 rounding (~1e-16) yet far below any real
# inconsistency an estimator could publish.
_RELATIVE_TOLERANCE = 1e-9
_ABSOLUTE_TOLERANCE = 1e-12


def block3(matrix6: Sequence[float], row: int, col: int) -> tuple[float, ...]:
    """Return the 3x3 block of a row-major 6x6 matrix starting at (row, col)."""
    return tuple(float(matrix6[(row + i) * 6 + col + j]) for i in range(3) for j in range(3))


def identity3() -> tuple[float, ...]:
    """Return the 3x3 identity."""
    return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def add3(*matrices: Sequence[float]) -> tuple[float, ...]:
    """Return the element-wise sum of 3x3 matrices."""
    return tuple(math.fsum(m[k] for m in matrices) for k in range(9))


def scale3(factor: float, matrix: Sequence[float]) -> tuple[float, ...]:
    """Return `factor` times a 3x3 matrix."""
    return tuple(factor * x for x in matrix)


def det3(m: Sequence[float]) -> float:
    """Return the determinant of a 3x3 matrix."""
    return (m[0] * (m[4] * m[8] - m[5] * m[7])
            - m[1] * (m[3] * m[8] - m[5] * m[6])
            + m[2] * (m[3] * m[7] - m[4] * m[6]))


def inverse3(m: Sequence[float]) -> tuple[float, ...] | None:
    """Return the inverse of a 3x3 matrix, or None when it is singular or not finite.

    Singular means |det| <= 1e-9 * s**3 with s the largest absolute entry: the matrix is
    numerically rank-deficient relative to its own scale.
    """
    if len(m) != 9 or not all(math.isfinite(x) for x in m):
        return None
    scale = max(abs(x) for x in m)
    det = det3(m)
    if scale == 0.0 or abs(det) <= _RELATIVE_TOLERANCE * scale**3 or not math.isfinite(det):
        return None
    adjugate = (
        m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
        m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
        m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3],
    )
    return tuple(x / det for x in adjugate)


def covariance_defect(m: Sequence[float]) -> str | None:
    """Return why a 3x3 block is not a covariance (a reason string), or None when it is one.

    Checked in order: every entry finite; every variance (diagonal) >= 0; symmetric within
    tolerance; positive semi-definite, i.e. every principal minor (the three 2x2 ones and the
    determinant) >= -tolerance after scaling the block by its largest variance. For a
    symmetric matrix, all principal minors >= 0 is equivalent to positive semi-definiteness.
    """
    if len(m) != 9 or not all(math.isfinite(x) for x in m):
        return NON_FINITE
    diagonal = (m[0], m[4], m[8])
    if any(v < 0.0 for v in diagonal):
        return NEGATIVE_VARIANCE
    s = max(diagonal)
    tolerance = _RELATIVE_TOLERANCE * s + _ABSOLUTE_TOLERANCE
    pairs = ((1, 3), (2, 6), (5, 7))
    if any(abs(m[i] - m[j]) > tolerance for i, j in pairs):
        return ASYMMETRIC
    if s == 0.0:
        # All variances zero: only the zero matrix is positive semi-definite.
        return None if all(abs(x) <= _ABSOLUTE_TOLERANCE for x in m) else NOT_PSD
    b = [((m[3 * i + j] + m[3 * j + i]) / 2.0) / s for i in range(3) for j in range(3)]
    minors = (
        b[0] * b[4] - b[1] * b[1],
        b[0] * b[8] - b[2] * b[2],
        b[4] * b[8] - b[5] * b[5],
        det3(b),
    )
    if any(minor < -_RELATIVE_TOLERANCE for minor in minors):
        return NOT_PSD
    return None


def mahalanobis(error: Sequence[float], covariance: Sequence[float]) -> float:
    """Return sqrt(e^T S^-1 e); +inf when S is singular, not finite or not positive definite."""
    if not all(math.isfinite(x) for x in error):
        return math.inf
    inverse = inverse3(covariance)
    if inverse is None or covariance_defect(covariance) is not None:
        return math.inf
    # Positive definite <=> leading minors > 0 (Sylvester); inverse3 already ruled out ~0.
    leading_minors = (
        covariance[0],
        covariance[0] * covariance[4] - covariance[1] * covariance[3],
        det3(covariance),
    )
    if any(minor <= 0.0 for minor in leading_minors):
        return math.inf
    squared = math.fsum(
        error[i] * inverse[3 * i + j] * error[j] for i in range(3) for j in range(3)
    )
    if not math.isfinite(squared):
        return math.inf
    return math.sqrt(max(squared, 0.0))
