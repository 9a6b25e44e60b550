"""Logistic loss, gradients, clipped sums: finite differences, identities, extreme margins."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import check_grad

from dpedu.textbook.clipping import L2_clip
from dpedu.textbook.models import LogisticModel
from dpedu.textbook.models import logistic as lg


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    theta = rng.normal(size=6)
    return theta, X, y


def test_loss_at_zero_is_ln2(data):
    _, X, y = data
    assert lg.loss(np.zeros(X.shape[1]), X, y) == pytest.approx(math.log(2), abs=1e-15)


def test_gradient_matches_finite_differences(data):
    theta, X, y = data
    err = check_grad(lambda t: lg.loss(t, X, y), lambda t: lg.gradient(t, X, y), theta)
    assert err < 1e-6


def test_per_example_gradients_match_finite_differences(data):
    theta, X, y = data
    G = lg.per_example_gradients(theta, X, y)
    for i in range(0, 40, 7):
        err = check_grad(lambda t: lg.loss(t, X[i:i + 1], y[i:i + 1]),
                         lambda t: lg.gradient(t, X[i:i + 1], y[i:i + 1]), theta)
        assert err < 1e-6
        np.testing.assert_allclose(G[i], lg.gradient(theta, X[i:i + 1], y[i:i + 1]), rtol=1e-12)


def test_gradient_is_the_mean_of_the_rows(data):
    theta, X, y = data
    np.testing.assert_allclose(lg.gradient(theta, X, y) * len(X), lg.per_example_gradients(theta, X, y).sum(0),
                               rtol=1e-12, atol=1e-14)


def test_per_example_gradient_norm_below_row_norm(data):
    theta, X, y = data
    G = lg.per_example_gradients(theta, X, y)
    assert np.all(np.linalg.norm(G, axis=1) < np.linalg.norm(X, axis=1))


@pytest.mark.parametrize("clip_norm", [1e-3, 0.1, 0.5, 2.0, 1e3, np.inf])
def test_two_matvec_clipped_sum_agrees_with_matrix_path(data, clip_norm):
    theta, X, y = data
    theta = 5 * theta  # spread the gradient norms so some rows clip and some do not
    shortcut = LogisticModel(X.shape[1]).clipped_gradient_sum(theta, X, y, clip_norm)
    matrix = L2_clip(lg.per_example_gradients(theta, X, y), clip_norm).sum(axis=0)
    np.testing.assert_allclose(shortcut, matrix, rtol=0, atol=1e-12)


def test_clipped_sum_on_adult_scale_agrees():
    rng = np.random.default_rng(5)
    X = rng.random((3000, 104)) / 3
    y = np.where(rng.random(3000) < 0.25, 1.0, -1.0)
    theta = rng.normal(size=104)
    shortcut = LogisticModel(104).clipped_gradient_sum(theta, X, y, 0.7, row_norms=np.linalg.norm(X, axis=1))
    matrix = L2_clip(lg.per_example_gradients(theta, X, y), 0.7).sum(axis=0)
    np.testing.assert_allclose(shortcut, matrix, rtol=0, atol=1e-12)


@pytest.mark.parametrize("margin", [1e6, -1e6, 800.0, -800.0, 0.0])
def test_extreme_margins_are_finite_and_exact(margin):
    X = np.array([[1.0, 0.0]])
    theta = np.array([margin, 0.0])
    y = np.array([1.0])
    loss = lg.per_example_loss(theta, X, y)[0]
    grad = lg.per_example_gradients(theta, X, y)[0]
    assert np.isfinite(loss) and np.all(np.isfinite(grad))
    # exact asymptotics: loss ~ max(-m, 0) and gradient -> 0 (m >> 0) or -x (m << 0)
    if margin >= 800:
        assert loss == pytest.approx(0.0, abs=1e-300) and grad[0] == pytest.approx(0.0, abs=1e-300)
    if margin <= -800:
        assert loss == pytest.approx(-margin, rel=1e-15) and grad[0] == pytest.approx(-1.0, rel=1e-15)


@settings(max_examples=50, deadline=None)
@given(scale=st.floats(1e-3, 1e6), seed=st.integers(0, 2**31))
def test_random_extreme_thetas_stay_finite(scale, seed):
    rng = np.random.default_rng(seed)
    X, theta = rng.normal(size=(20, 3)), scale * rng.normal(size=3)
    y = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    assert np.isfinite(lg.loss(theta, X, y))
    assert np.all(np.isfinite(lg.clipped_gradient_sum(theta, X, y, 1.0)))


def test_predict_and_accuracy():
    X = np.array([[1.0, 2.0], [-1.0, -1.0], [0.0, 0.0]])
    theta = np.array([1.0, 0.0])
    np.testing.assert_array_equal(lg.predict(theta, X), [1.0, -1.0, 1.0])  # score 0 -> +1
    assert lg.accuracy(theta, X, np.array([1.0, 1.0, 1.0])) == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    "theta, X, y, message",
    [
        (np.zeros(2), np.array([[1.0, np.nan]]), np.array([1.0]), "NaN"),
        (np.zeros(2), np.array([[1.0, np.inf]]), np.array([1.0]), "NaN or infinite"),
        (np.zeros(3), np.ones((2, 2)), np.ones(2), "theta has length 3"),
        (np.zeros(2), np.ones((2, 2)), np.array([0.0, 1.0]), "2 \\* y - 1"),
        (np.zeros(2), np.ones((2, 2)), np.array([1.0, 2.0]), "only -1 and \\+1"),
        (np.zeros(2), np.ones((2, 2)), np.ones(3), "3 labels but X has 2 rows"),
        (np.zeros(2), np.ones(2), np.ones(2), "2 dimension"),
        (np.zeros(2), np.ones((0, 2)), np.ones(0), "empty"),
    ],
)
def test_bad_inputs_raise(theta, X, y, message):
    with pytest.raises(ValueError, match=message):
        lg.loss(theta, X, y)


def test_bad_clip_norm_raises(data):
    theta, X, y = data
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="clip_norm"):
            lg.clipped_gradient_sum(theta, X, y, bad)
    with pytest.raises(TypeError, match="clip_norm"):
        lg.clipped_gradient_sum(theta, X, y, "1")


def test_one_loss_formula_and_one_sigmoid():
    # per-example and mean losses, and the plain and clipped gradient sums, come from the same formulas:
    # equal to the bit, including at margins where a naive ln(1 + e^{-m}) or 1/(1 + e^{-m}) overflows
    from dpedu.textbook.models import logistic as lg

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) * np.array([1.0, 100.0, 1e3])
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    theta = np.array([0.5, -2.0, 3.0])
    assert float(np.mean(lg.per_example_loss(theta, X, y))) == lg.loss(theta, X, y)
    np.testing.assert_array_equal(lg.per_example_gradients(theta, X, y).sum(axis=0),
                                  lg.clipped_gradient_sum(theta, X, y, np.inf))
    assert np.all(np.isfinite(lg.per_example_loss(theta, X, y)))
