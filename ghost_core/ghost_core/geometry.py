"""Pure 3x3 geometry: matrices (row-major tuples of 9 floats), rotations, covariance checks.

One layout everywhere: a 3x3 matrix is a flat row-major tuple of 9 floats (``m[3 * i + j]``
is row i, column j), a 6x6 one of 36 (geometry_msgs order). Flat, because every matrix Ghost
judges arrives as a flat message array: the self-assessor's per-cycle ``covariance_defect``
and the evaluator's ``squared_mahalanobis`` read it without reshaping. Quaternions are
``(w, x, y, z)`` unless a name says ``xyzw`` (ROS order). Standard library only: the PX4
conversions (ghost_px4.convert) and the ROS input readers (ghost_core.ros_inputs) share it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import math

__all__ = [
    'ASYMMETRIC',
    'NEGATIVE_VARIANCE',
    'NON_FINITE',
    'NOT_PSD',
    'ZERO3',
    'Matrix3',
    'Vector3',
    'WxyzQuaternion',
    'add3',
    'apply',
    'block3',
    'blocks6',
    'cholesky',
    'congruence',
    'covariance_defect',
    'det3',
    'diagonal',
    'finite',
    'identity3',
    'mahalanobis',
    'mul',
    'normalise_quaternion',
    'quaternion_product',
    'rotation_matrix',
    'scale3',
    'solve3',
    'squared_mahalanobis',
    'sub_block',
    'transpose',
    'unit_quaternion_matrix',
]

Vector3 = tuple[float, float, float]
#: A 3x3 matrix: 9 floats, row-major.
Matrix3 = tuple[float, ...]
#: A quaternion, scalar first (Hamilton): (w, x, y, z).
WxyzQuaternion = tuple[float, float, float, float]

#: The 3x3 zero matrix.
ZERO3: Matrix3 = (0.0,) * 9

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
#: Variances at or below this (m^2; sigma 1e-12 m) are zero for the definiteness check.
_ZERO_VARIANCE = 1e-24
# A Cholesky pivot must keep more than this fraction of its axis's own variance: below it the
# axis is a linear combination of the others to within float64 rounding (~1e-16 relative on
# the variance, squared errors ~1e-13 after a few operations).
_PIVOT_TOLERANCE = 1e-12


def finite(*values: float) -> bool:
    """Return whether every value is finite."""
    return all(math.isfinite(value) for value in values)


# --- 3x3 and 6x6 matrices ---

def block3(matrix6: Sequence[float], row: int, col: int) -> Matrix3:
    """Return the 3x3 block of a row-major 6x6 matrix starting at (row, col)."""
    return tuple(float(matrix6[(row + i) * 6 + col + j]) for i in range(3) for j in range(3))


def blocks6(blocks: Mapping[tuple[int, int], Sequence[float]]) -> tuple[float, ...]:
    """Return the row-major 6x6 made of 3x3 ``blocks`` keyed by (row, col); zeros elsewhere."""
    full = [0.0] * 36
    for (row, col), block in blocks.items():
        for i in range(3):
            for j in range(3):
                full[(row + i) * 6 + col + j] = block[3 * i + j]
    return tuple(full)


def identity3() -> Matrix3:
    """Return the 3x3 identity."""
    return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def diagonal(values: Sequence[float]) -> Matrix3:
    """Return diag(values[0], values[1], values[2])."""
    a, b, c = float(values[0]), float(values[1]), float(values[2])
    return (a, 0.0, 0.0, 0.0, b, 0.0, 0.0, 0.0, c)


def add3(*matrices: Sequence[float]) -> Matrix3:
    """Return the element-wise sum of 3x3 matrices."""
    return tuple(math.fsum(m[k] for m in matrices) for k in range(9))


def scale3(factor: float, matrix: Sequence[float]) -> Matrix3:
    """Return `factor` times a 3x3 matrix."""
    return tuple(factor * x for x in matrix)


def mul(a: Sequence[float], b: Sequence[float]) -> Matrix3:
    """Return the product a b of two 3x3 matrices."""
    return tuple(float(sum(a[3 * i + k] * b[3 * k + j] for k in range(3)))
                 for i in range(3) for j in range(3))


def transpose(a: Sequence[float]) -> Matrix3:
    """Return aᵀ."""
    return tuple(float(a[3 * j + i]) for i in range(3) for j in range(3))


def apply(a: Sequence[float], v: Sequence[float]) -> Vector3:
    """Return the vector a v."""
    return (a[0] * v[0] + a[1] * v[1] + a[2] * v[2],
            a[3] * v[0] + a[4] * v[1] + a[5] * v[2],
            a[6] * v[0] + a[7] * v[1] + a[8] * v[2])


def congruence(a: Sequence[float], cov: Sequence[float]) -> Matrix3:
    """Return a cov aᵀ: a covariance expressed in the frame `a` maps into."""
    return mul(mul(a, cov), transpose(a))


def det3(m: Sequence[float]) -> float:
    """Return the determinant of a 3x3 matrix."""
    return (m[0] * (m[4] * m[8] - m[5] * m[7])
            - m[1] * (m[3] * m[8] - m[5] * m[6])
            + m[2] * (m[3] * m[7] - m[4] * m[6]))


def solve3(a: Sequence[float], b: Sequence[float]) -> Vector3:
    """Solve a x = b (Gaussian elimination with partial pivoting; `a` is non-singular)."""
    rows = [[a[3 * i], a[3 * i + 1], a[3 * i + 2], float(b[i])] for i in range(3)]
    for col in range(3):
        pivot = max(range(col, 3), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, 3):
            factor = rows[r][col] / rows[col][col]
            for c in range(col, 4):
                rows[r][c] -= factor * rows[col][c]
    x = [0.0, 0.0, 0.0]
    for r in (2, 1, 0):
        x[r] = (rows[r][3] - sum(rows[r][c] * x[c] for c in range(r + 1, 3))) / rows[r][r]
    return (x[0], x[1], x[2])


def sub_block(matrix3: Sequence[float], axes: Sequence[int]) -> tuple[float, ...]:
    """Return the rows and columns `axes` of a 3x3 matrix, row-major (len(axes)² floats)."""
    return tuple(float(matrix3[3 * i + j]) for i in axes for j in axes)


# --- rotations ---

def quaternion_product(a: WxyzQuaternion, b: WxyzQuaternion) -> WxyzQuaternion:
    """Return the Hamilton product a b of two (w, x, y, z) quaternions."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw)


def normalise_quaternion(q_wxyz: Sequence[float]) -> WxyzQuaternion:
    """Return the (w, x, y, z) quaternion scaled to unit norm.

    ValueError for a length other than 4, and for a quaternion that is not finite or whose
    norm is below 1e-6 (no rotation can be read from it).
    """
    if len(q_wxyz) != 4:
        raise ValueError(f'a quaternion has 4 components, got {len(q_wxyz)}')
    w, x, y, z = (float(value) for value in q_wxyz)
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if not math.isfinite(norm) or norm < 1e-6:
        raise ValueError(f'quaternion {tuple(q_wxyz)!r} is not finite or has (near) zero norm')
    return (w / norm, x / norm, y / norm, z / norm)


def unit_quaternion_matrix(x: float, y: float, z: float, w: float) -> Matrix3:
    """Return the rotation matrix R (v' = R v) of a quaternion already of unit norm."""
    return (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
            2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
            2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y))


def rotation_matrix(q_xyzw: Sequence[float]) -> Matrix3:
    """Return the rotation matrix R (v' = R v) of a ROS (x, y, z, w) quaternion, normalised.

    ValueError for a quaternion that is not finite or has (near) zero norm
    (normalise_quaternion).
    """
    w, x, y, z = normalise_quaternion((q_xyzw[3], q_xyzw[0], q_xyzw[1], q_xyzw[2]))
    return unit_quaternion_matrix(x, y, z, w)


# --- covariances ---

def covariance_defect(m: Sequence[float]) -> str | None:
    """Return why a 3x3 block is not a covariance (a reason string), or None when it is one.

    Checked in order: every entry finite; every variance (diagonal) >= 0; symmetric within
    tolerance; positive semi-definite. Symmetry and definiteness are judged on the
    correlation matrix c_ij = m_ij / sqrt(m_ii m_jj), i.e. on each pair of axes' own scale, so
    that a huge variance on one axis (1e6 for "not measured") cannot hide an impossible
    correlation between the others. An axis with (numerically) zero variance, below 1e-24,
    must have covariances within sigma_i sigma_j (plus an absolute 1e-12). The remaining c must
    have every principal minor (the 2x2 ones and the determinant) >= -1e-9; for a symmetric
    matrix that is positive semi-definiteness.
    """
    if len(m) != 9 or not all(math.isfinite(x) for x in m):
        return NON_FINITE
    diagonal = (m[0], m[4], m[8])
    if any(v < 0.0 for v in diagonal):
        return NEGATIVE_VARIANCE
    roots = [math.sqrt(v) for v in diagonal]
    pairs = ((0, 1), (0, 2), (1, 2))
    for i, j in pairs:
        tolerance = _RELATIVE_TOLERANCE * roots[i] * roots[j] + _ABSOLUTE_TOLERANCE
        if abs(m[3 * i + j] - m[3 * j + i]) > tolerance:
            return ASYMMETRIC
    # An axis with (numerically) no variance: below 1e-24 m^2 (sigma 1e-12) its square root
    # would be a subnormal without the precision to divide by.
    live = [axis for axis in range(3) if diagonal[axis] > _ZERO_VARIANCE]
    for i, j in pairs:
        if i not in live or j not in live:
            # Cauchy-Schwarz, |m_ij| <= sigma_i sigma_j, computed without dividing: a zero
            # variance with a non-zero covariance is not positive semi-definite.
            bound = roots[i] * roots[j] * (1.0 + _RELATIVE_TOLERANCE) + _ABSOLUTE_TOLERANCE
            if abs(m[3 * i + j]) > bound:
                return NOT_PSD
    c = {(i, j): (m[3 * i + j] + m[3 * j + i]) / 2.0 / (roots[i] * roots[j])
         for i in live for j in live}
    minors = [1.0 - c[i, j] ** 2 for i, j in pairs if i in live and j in live]
    if len(live) == 3:
        minors.append(det3([c[i, j] for i in range(3) for j in range(3)]))
    if any(minor < -_RELATIVE_TOLERANCE for minor in minors):
        return NOT_PSD
    return None


def cholesky(matrix: Sequence[float], n: int) -> tuple[float, ...] | None:
    """Return the lower-triangular L (n x n, row-major) with matrix = L Lᵀ, or None.

    None means `matrix` is numerically not positive definite: an entry is not finite, or a
    pivot (the variance of one axis left unexplained by the axes before it) is not above
    1e-12 times that axis's own variance. The test is relative to each axis's own scale, so
    variances spanning many orders of magnitude (1e-6 next to 1e9) are valid; only a
    (numerically) linearly dependent axis, a zero or a negative variance fails. Only the
    lower triangle of `matrix` is read: callers check symmetry first (covariance_defect).
    """
    if len(matrix) != n * n or not all(math.isfinite(x) for x in matrix):
        return None
    lower = [0.0] * (n * n)
    for j in range(n):
        diagonal = matrix[j * n + j]
        pivot = diagonal - math.fsum(lower[j * n + k] ** 2 for k in range(j))
        if not (diagonal > 0.0 and pivot > _PIVOT_TOLERANCE * diagonal):
            return None
        root = math.sqrt(pivot)
        lower[j * n + j] = root
        for i in range(j + 1, n):
            value = matrix[i * n + j] - math.fsum(
                lower[i * n + k] * lower[j * n + k] for k in range(j))
            lower[i * n + j] = value / root
    return tuple(lower)


def squared_mahalanobis(error: Sequence[float], covariance: Sequence[float]) -> float:
    """Return eᵀS⁻¹e for an n-vector and its n x n covariance; +inf when S is not usable.

    Not usable: an error or entry that is not finite, or S numerically not positive definite
    (cholesky returns None). Solved by forward substitution with L (S = L Lᵀ), never by an
    explicit inverse, so a badly scaled but valid S gives an accurate distance.
    """
    n = len(error)
    if n == 0 or not all(math.isfinite(x) for x in error):
        return math.inf
    lower = cholesky(covariance, n)
    if lower is None:
        return math.inf
    solved: list[float] = []
    for i in range(n):
        value = error[i] - math.fsum(lower[i * n + k] * solved[k] for k in range(i))
        solved.append(value / lower[i * n + i])
    squared = math.fsum(x * x for x in solved)
    return squared if math.isfinite(squared) else math.inf


def mahalanobis(error: Sequence[float], covariance: Sequence[float]) -> float:
    """Return sqrt(eᵀS⁻¹e) over the three axes; +inf when S is not a usable covariance.

    Not usable: not finite, asymmetric or not positive semi-definite (covariance_defect), or
    numerically not positive definite (cholesky).
    """
    if covariance_defect(covariance) is not None:
        return math.inf
    return math.sqrt(squared_mahalanobis(error, covariance))
