"""Pure 3x3 geometry: covariance validity, Mahalanobis distance, matrices and rotations."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.geometry import (
    apply,
    ASYMMETRIC,
    block3,
    blocks6,
    cholesky,
    congruence,
    covariance_defect,
    diagonal,
    finite,
    identity3,
    mahalanobis,
    mul,
    NEGATIVE_VARIANCE,
    NON_FINITE,
    normalise_quaternion,
    NOT_PSD,
    quaternion_product,
    rotation_matrix,
    solve3,
    squared_mahalanobis,
    sub_block,
    transpose,
    unit_quaternion_matrix,
)

I3 = identity3()


def outer(v: tuple[float, float, float]) -> tuple[float, ...]:
    """Return v v^T (rank 1, positive semi-definite)."""
    return tuple(v[i] * v[j] for i in range(3) for j in range(3))


@pytest.mark.parametrize(('matrix', 'reason'), [
    ((math.nan, *I3[1:]), NON_FINITE),
    ((*I3[:4], math.inf, *I3[5:]), NON_FINITE),
    ((1.0, 0.0, 0.0, 0.0, -1e-3, 0.0, 0.0, 0.0, 1.0), NEGATIVE_VARIANCE),
    ((1.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), ASYMMETRIC),
    ((1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0), NOT_PSD),  # a 2x2 minor is -3
    # every 2x2 minor is 0.64 > 0, yet the determinant is -0.512: only the 3x3 test sees it
    ((1.0, -0.6, -0.6, -0.6, 1.0, -0.6, -0.6, -0.6, 1.0), NOT_PSD),
    ((0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0), NOT_PSD),  # zero variances, non-zero cov
    # An impossible x/y correlation next to a "not measured" vertical axis (1e6): judged on
    # each pair's own scale, not hidden by the huge variance (review finding).
    ((1.0, 5.0, 0.0, 5.0, 1.0, 0.0, 0.0, 0.0, 1e6), NOT_PSD),
    ((0.2, 0.3, 0.0, 0.3, 0.2, 0.0, 0.0, 0.0, 1e6), NOT_PSD),
    ((1.0, 0.0, 0.0, 1e-4, 1.0, 0.0, 0.0, 0.0, 1e6), ASYMMETRIC),
])
def test_defective_covariances_are_named(matrix: tuple[float, ...], reason: str) -> None:
    """Each defect is detected and named with its reason string."""
    assert covariance_defect(matrix) == reason


@pytest.mark.parametrize('matrix', [
    I3,
    (0.0,) * 9,
    outer((1.0, 2.0, 3.0)),  # singular but positive semi-definite
    (4.0, 2.0, 0.6, 2.0, 2.0, 0.4, 0.6, 0.4, 1.0),
    tuple(1e-8 * x for x in (4.0, 2.0, 0.6, 2.0, 2.0, 0.4, 0.6, 0.4, 1.0)),
    (1.0, 1e-17, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),  # asymmetric only by rounding
])
def test_valid_covariances_pass(matrix: tuple[float, ...]) -> None:
    """Positive semi-definite symmetric matrices, singular and tiny ones included, pass."""
    assert covariance_defect(matrix) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(*[st.floats(-10.0, 10.0)] * 3), min_size=1, max_size=4))
def test_sums_of_outer_products_are_positive_semidefinite(
    vectors: list[tuple[float, float, float]],
) -> None:
    """Every Gram matrix sum(v v^T) is accepted as a covariance."""
    matrix = tuple(math.fsum(m[k] for m in map(outer, vectors)) for k in range(9))
    assert covariance_defect(matrix) is None


def test_cholesky_factors_and_refuses_what_is_not_positive_definite() -> None:
    """Cholesky gives L with L Lᵀ = S, and None for singular, indefinite or non-finite S."""
    m = (4.0, 2.0, 0.6, 2.0, 2.0, 0.4, 0.6, 0.4, 1.0)
    lower = cholesky(m, 3)
    assert lower is not None
    product = [math.fsum(lower[i * 3 + k] * lower[j * 3 + k] for k in range(3))
               for i in range(3) for j in range(3)]
    assert product == pytest.approx(m, rel=1e-15)
    assert cholesky(outer((1.0, 2.0, 3.0)), 3) is None  # rank 1
    assert cholesky((0.0,) * 9, 3) is None
    assert cholesky((math.inf, *I3[1:]), 3) is None
    assert cholesky((1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0), 3) is None


@pytest.mark.parametrize('variances', [
    (0.45, 0.45, 1e6),  # a GNSS fix whose vertical axis is "not measured" (ROS convention)
    (1e-6, 1.0, 1e9),  # nine orders of magnitude in one block
    (1e-9, 1e-9, 1e-9),  # millimetre-level mocap
    (1e9, 1e9, 1e9),
])
def test_badly_scaled_but_valid_covariances_give_exact_distances(
    variances: tuple[float, float, float],
) -> None:
    """Variances spanning many orders of magnitude are valid: the distance is not +inf.

    The old relative-determinant test called diag(0.45, 0.45, 1e6) singular; a Cholesky
    solve is exact to rounding on each axis's own scale.
    """
    s = (variances[0], 0.0, 0.0, 0.0, variances[1], 0.0, 0.0, 0.0, variances[2])
    error = (math.sqrt(variances[0]), 2.0 * math.sqrt(variances[1]), 0.0)
    assert mahalanobis(error, s) == pytest.approx(math.sqrt(5.0), rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(scales=st.tuples(*[st.floats(-6.0, 9.0)] * 3),
       unit=st.tuples(*[st.floats(-3.0, 3.0)] * 3),
       rho=st.floats(-0.9, 0.9))
def test_distance_is_invariant_to_axis_scaling(
    scales: tuple[float, float, float], unit: tuple[float, float, float], rho: float,
) -> None:
    """d(De, D S D) = d(e, S) for any diagonal D: units (mm vs km) never change a verdict."""
    base = (1.0, rho, 0.0, rho, 1.0, 0.0, 0.0, 0.0, 1.0)
    d = tuple(10.0 ** x for x in scales)
    scaled = tuple(base[3 * i + j] * d[i] * d[j] for i in range(3) for j in range(3))
    expected = mahalanobis(unit, base)
    got = mahalanobis(tuple(unit[i] * d[i] for i in range(3)), scaled)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_squared_mahalanobis_on_a_sub_block() -> None:
    """The distance over chosen axes uses the sub-block of S for those axes only."""
    s = (0.45, 0.0, 0.0, 0.0, 0.45, 0.0, 0.0, 0.0, 1e6)
    block = sub_block(s, (0, 1))
    assert block == (0.45, 0.0, 0.0, 0.45)
    assert squared_mahalanobis((0.9, 0.0), block) == pytest.approx(1.8)
    assert squared_mahalanobis((), ()) == math.inf
    assert squared_mahalanobis((math.nan, 0.0), block) == math.inf


def test_mahalanobis_examples() -> None:
    """Distance is sqrt(e^T S^-1 e); a singular, non-finite or indefinite S gives +inf."""
    assert mahalanobis((3.0, 4.0, 0.0), I3) == 5.0
    assert mahalanobis((2.0, 0.0, 0.0), (4.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)) == 1.0
    assert mahalanobis((0.0, 0.0, 0.0), outer((1.0, 2.0, 3.0))) == math.inf
    assert mahalanobis((0.1, 0.0, 0.0), (math.nan, *I3[1:])) == math.inf
    assert mahalanobis((0.1, 0.0, 0.0), (-1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0)) \
        == math.inf


def test_block3_extracts_row_major_blocks() -> None:
    """block3 reads the 3x3 block of a row-major 6x6."""
    matrix = tuple(float(i) for i in range(36))
    assert block3(matrix, 0, 0) == (0.0, 1.0, 2.0, 6.0, 7.0, 8.0, 12.0, 13.0, 14.0)
    assert block3(matrix, 3, 3) == (21.0, 22.0, 23.0, 27.0, 28.0, 29.0, 33.0, 34.0, 35.0)


def test_a_subnormal_variance_is_zero_for_the_definiteness_check() -> None:
    """A subnormal variance is no reason to refuse a covariance (found by Hypothesis).

    v = (0, 1, 9.78e-160) gives m22 = 9.6e-319, a subnormal whose square root has too few bits
    to divide by; sum(v v^T) is a covariance all the same.
    """
    v = (0.0, 1.0, 9.780451259791272e-160)
    assert covariance_defect(outer(v)) is None
    # A zero variance still cannot carry a covariance.
    assert covariance_defect((0.0, 0.5, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 1.0)) == NOT_PSD


# --- matrices and rotations (one row-major layout: 9 floats) ---

def test_matrix_product_transpose_apply_and_congruence() -> None:
    """Row-major 3x3: a b, aᵀ, a v and a c aᵀ on hand-computed cases."""
    a = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0)
    assert mul(a, I3) == a == mul(I3, a)
    assert transpose(a) == (1.0, 4.0, 7.0, 2.0, 5.0, 8.0, 3.0, 6.0, 10.0)
    assert mul(a, transpose(a))[:3] == (14.0, 32.0, 53.0)
    assert apply(a, (1.0, 0.0, -1.0)) == (-2.0, -2.0, -3.0)
    swap = (0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, -1.0)  # NED <-> ENU
    assert congruence(swap, diagonal((1.0, 4.0, 9.0))) == diagonal((4.0, 1.0, 9.0))
    assert diagonal((1, 2, 3)) == (1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0)
    assert solve3(a, apply(a, (1.0, -2.0, 0.5))) == pytest.approx((1.0, -2.0, 0.5))


def test_blocks6_is_the_inverse_of_block3() -> None:
    matrix = tuple(float(i) for i in range(36))
    blocks = {(r, c): block3(matrix, r, c) for r in (0, 3) for c in (0, 3)}
    assert blocks6(blocks) == matrix
    assert blocks6({(3, 3): I3}) == tuple(1.0 if i == j and i >= 3 else 0.0
                                         for i in range(6) for j in range(6))


def test_rotation_matrix_of_a_quaternion() -> None:
    """(x, y, z, w): 90 degrees about z maps x to y; normalised; a zero quaternion is refused."""
    s = math.sqrt(0.5)
    r = rotation_matrix((0.0, 0.0, s, s))
    assert apply(r, (1.0, 0.0, 0.0)) == pytest.approx((0.0, 1.0, 0.0), abs=1e-15)
    assert rotation_matrix((0.0, 0.0, 2.0, 2.0)) == pytest.approx(r)
    assert unit_quaternion_matrix(0.0, 0.0, 0.0, 1.0) == I3
    with pytest.raises(ValueError, match='not finite or has'):
        rotation_matrix((0.0, 0.0, 0.0, 0.0))
    with pytest.raises(ValueError):
        normalise_quaternion((1.0, math.nan, 0.0, 0.0))


@settings(max_examples=100, deadline=None)
@given(st.tuples(*[st.floats(-1.0, 1.0)] * 4).filter(lambda q: sum(v * v for v in q) > 1e-3),
       st.tuples(*[st.floats(-1.0, 1.0)] * 4).filter(lambda q: sum(v * v for v in q) > 1e-3))
def test_quaternion_product_composes_rotations(a: tuple[float, float, float, float],
                                               b: tuple[float, float, float, float]) -> None:
    """R(a b) = R(a) R(b), with (w, x, y, z) quaternions."""
    qa, qb = normalise_quaternion(a), normalise_quaternion(b)
    w, x, y, z = quaternion_product(qa, qb)

    def matrix(q: tuple[float, float, float, float]) -> tuple[float, ...]:
        return unit_quaternion_matrix(q[1], q[2], q[3], q[0])

    assert unit_quaternion_matrix(x, y, z, w) == pytest.approx(
        mul(matrix(qa), matrix(qb)), abs=1e-12)


def test_finite() -> None:
    assert finite(1.0, -2.0, 0.0) and finite()
    assert not finite(1.0, math.nan) and not finite(math.inf)
