"""L2_clip: norm bound, direction kept, rows independent, bad input refused."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpedu.textbook.clipping import L2_clip, l2_norms


@settings(max_examples=200, deadline=None)
@given(v=arrays(np.float64, st.integers(1, 20), elements=st.floats(-1e6, 1e6)), c=st.floats(1e-3, 1e3))
def test_clip_bounds_norm_and_keeps_small_vectors(v, c):
    out = L2_clip(v, c)
    assert np.linalg.norm(out) <= c * (1 + 1e-12)
    # "inside the ball" by dpedu's own norm: np.linalg.norm(v) (a dot product) can differ from it in the last bit
    if l2_norms(v)[0] <= c:
        np.testing.assert_array_equal(out, v)
    else:  # same direction, norm exactly c
        assert np.linalg.norm(out) == pytest.approx(c, rel=1e-12)
        np.testing.assert_allclose(out * np.linalg.norm(v) / c, v, rtol=1e-9, atol=1e-9 * np.abs(v).max())


def test_rows_are_clipped_independently():
    M = np.array([[3.0, 4.0], [0.0, 0.0], [0.3, 0.4], [30.0, -40.0]])
    out = L2_clip(M, 1.0)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0], [0.3, 0.4], [0.6, -0.8]])
    np.testing.assert_allclose(out[3], L2_clip(M[3], 1.0))


def test_zero_vector_and_infinite_clip():
    np.testing.assert_array_equal(L2_clip(np.zeros(3), 1.0), np.zeros(3))
    v = np.array([1e300, -1e300])
    np.testing.assert_array_equal(L2_clip(v, np.inf), v)


def test_not_coordinate_clipping():
    # clipping coordinate by coordinate would give [1, 1]; L2 clipping keeps the direction
    out = L2_clip(np.array([10.0, 10.0]), 1.0)
    np.testing.assert_allclose(out, [1 / np.sqrt(2)] * 2)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan])
def test_bad_clip_norm(bad):
    with pytest.raises(ValueError, match="clip_norm"):
        L2_clip([1.0, 2.0], bad)


def test_bad_vectors():
    with pytest.raises(ValueError, match="NaN"):
        L2_clip([1.0, np.nan], 1.0)
    with pytest.raises(ValueError, match="dimension"):
        L2_clip(np.ones((2, 2, 2)), 1.0)
    with pytest.raises(TypeError, match="numeric"):
        L2_clip(["a", "b"], 1.0)


def test_float_extremes_get_a_plain_outcome():
    # a norm beyond the largest float is refused by name (as l2_norms refuses it); a factor C / ||v|| below the
    # smallest normal float clips the row to 0, which is inside the ball; a huge but representable norm keeps
    # its direction
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for v in ([1.7e308, 1.7e308], [-1.7e308, 1.7e308, 0.0], [[1.0, 0.0], [1.7e308, -1.7e308]]):
            with pytest.raises(ValueError, match=r"\bv\b.*largest float"):
                L2_clip(v, 2.0)
        np.testing.assert_allclose(L2_clip([1e300, 1e300], 1.0), [2 ** -0.5, 2 ** -0.5], rtol=1e-15)
        np.testing.assert_allclose(L2_clip([1.2e308, 0.0], 3.0), [3.0, 0.0], rtol=1e-15)
        out = L2_clip([[1e300, 0.0], [3.0, 4.0]], 1e-10)
        np.testing.assert_array_equal(out[0], [0.0, 0.0])
        np.testing.assert_allclose(out[1], [6e-11, 8e-11], rtol=1e-15)
        np.testing.assert_allclose(L2_clip([[1e300, 0.0], [3.0, 4.0]], 1e-5), [[1e-5, 0.0], [6e-6, 8e-6]], rtol=1e-12)
        np.testing.assert_allclose(L2_clip([1e-200, 1e-200], 1.0), [1e-200, 1e-200], rtol=0)   # inside: unchanged


@pytest.mark.parametrize("v", [[1.7e308, 1.7e308], [1.2e308, 0.0], [1e-320, 0.0], [[1e300, 1e300], [0.0, 0.0]],
                               [[1.0, 0.0], [1.7e308, -1.7e308]]])
def test_l2_norms_and_L2_clip_refuse_the_same_rows(v):
    def refused(f):
        try:
            f()
        except ValueError:
            return True
        return False
    assert refused(lambda: l2_norms(v)) == refused(lambda: L2_clip(v, 1.0)) == refused(lambda: L2_clip(v, np.inf))


def test_l2_norms_finite_where_representable_else_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(l2_norms([[1e200, 1e200], [1e-200, 1e-200]])[:, 0], [2 ** 0.5 * 1e200, 2 ** 0.5 * 1e-200])
        np.testing.assert_allclose(l2_norms([1.2e308, 0.0]), [1.2e308])
        with pytest.raises(ValueError, match=r"\bv\b.*largest float"):
            l2_norms([1.7e308, 1.7e308])
        with pytest.raises(ValueError, match=r"\bX\b"):
            l2_norms([[1.0, 0.0], [1.7e308, -1.7e308]], name="X")


def test_ordinary_rows_are_exactly_v_times_min_1_c_over_norm():
    # the float-extreme care changes nothing for rows of ordinary size: the result is the formula, to the bit
    rng = np.random.default_rng(0)
    V = rng.normal(size=(50, 7)) * rng.choice([1e-3, 1.0, 1e3], size=(50, 1))
    for c in (1e-2, 1.0, 30.0):
        norms = np.sqrt(np.einsum("ij,ij->i", V, V))[:, None]
        np.testing.assert_array_equal(L2_clip(V, c), V * np.minimum(1.0, c / norms))


def test_infinite_clip_norm_returns_every_entry_unchanged():
    v = np.array([[1.7e308, 0.0, 6.6e-311], [1e-320, 0.0, -0.0]])
    out = L2_clip(v, np.inf)
    np.testing.assert_array_equal(out, v)
    assert out is not v


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", ["ordinary row", "extreme row"])
def test_l2_norms_refuses_nan_and_inf_entries_by_name_without_a_separate_pass(bad, where):
    # float64 input skips the NaN/inf pass: the norms themselves must catch every such entry, with check_array's
    # message (not the "exceeds the largest float" one), and silently (no RuntimeWarning)
    v = np.ones((4, 3)) if where == "ordinary row" else np.full((4, 3), 1e200)
    v[2, 1] = bad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="rows contains NaN or infinite values"):
            l2_norms(v, name="rows")


def test_training_data_refuses_nan_rows_by_name_and_keeps_huge_finite_rows():
    from dpedu.textbook.training import training_data

    X, y = np.ones((5, 3)), np.ones(5)
    X[3, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN or infinite values"):
        training_data(X, y)
    X[3] = 1e300                                       # finite: its norm is measured without overflow
    assert np.isclose(training_data(X, y).row_norms[3], np.sqrt(3) * 1e300, rtol=1e-15)
    X[3] = 1.5e308                                     # finite entries, norm above the largest float
    with pytest.raises(ValueError, match="exceeds the largest float"):
        training_data(X, y)
