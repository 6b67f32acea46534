"""Pure 3x3 linear algebra: covariance validity, inverse and Mahalanobis distance."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.linalg import (
    ASYMMETRIC,
    block3,
    covariance_defect,
    det3,
    identity3,
    inverse3,
    mahalanobis,
    NEGATIVE_VARIANCE,
    NON_FINITE,
    NOT_PSD,
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


def test_inverse_of_a_known_matrix() -> None:
    """inverse3 inverts, and refuses singular or non-finite matrices."""
    m = (2.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.5)
    assert inverse3(m) == (0.5, 0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 2.0)
    assert inverse3(outer((1.0, 2.0, 3.0))) is None
    assert inverse3((0.0,) * 9) is None
    assert inverse3((math.inf, *I3[1:])) is None
    assert det3(m) == 4.0


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
