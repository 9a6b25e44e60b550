"""Gradient descent and the book's noisy gradient descent."""

import math
import warnings

import numpy as np
import pytest

from dpedu.accountants import GaussianEvent, LaplaceEvent
from dpedu.accountants.calibrate import analytic_noise_multiplier, classic_noise_multiplier
from dpedu.textbook.clipping import L2_clip
from dpedu.textbook.models import logistic as lg
from dpedu.textbook.training import NoisyGDPlan, gradient_descent, noisy_gradient_descent, plan_noisy_gradient_descent
from dpedu.textbook.training import run_noisy_gradient_descent


def ngd(X, y, iterations, epsilon, delta, *, theta0=None, budget=None, rng=None, **settings):
    """Noisy gradient descent with variants: its plan, then its run."""
    plan = plan_noisy_gradient_descent(iterations, epsilon, delta, **settings)
    return run_noisy_gradient_descent(X, y, plan, theta0=theta0, budget=budget, rng=rng)


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(42)
    X = rng.normal(size=(2000, 5))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)  # rows of norm <= 1
    theta_true = np.array([3.0, -2.0, 1.0, 0.0, 0.5])
    y = np.where(rng.random(2000) < 1 / (1 + np.exp(-X @ theta_true)), 1.0, -1.0)
    return X, y


def test_gradient_descent_decreases_loss_and_matches_manual_steps(toy):
    X, y = toy
    result = gradient_descent(X, y, 5, learning_rate=0.5)
    theta = np.zeros(5)
    for _ in range(5):
        theta = theta - 0.5 * lg.gradient(theta, X, y)
    np.testing.assert_allclose(result.theta, theta, rtol=1e-12)
    assert np.all(np.diff(result.losses) < 0)
    assert result.ledger is None and result.epsilon == math.inf and not result.private


def test_noisy_gd_is_gd_when_noise_vanishes(toy):
    # with a huge epsilon per iteration the noise is negligible: the path approaches plain GD on clipped gradients
    X, y = toy
    noisy = ngd(X, y, 5, epsilon=1e6, delta=0.5, clip_norm=10.0, calibration="analytic", rng=0)
    plain = gradient_descent(X, y, 5)
    np.testing.assert_allclose(noisy.theta, plain.theta, atol=1e-3)


def test_noisy_gd_follows_the_book_algorithm(toy):
    # re-run the loop by hand with the same random stream: count first, then one Gaussian draw per iteration
    X, y = toy
    eps, delta, clip, k = 0.5, 1e-5, 0.3, 4
    result = noisy_gradient_descent(X, y, k, eps, delta, clip_norm=clip, rng=123)
    rng = np.random.default_rng(123)
    z = classic_noise_multiplier(eps, delta)
    noisy_count = X.shape[0] + rng.laplace(0.0, 1 / eps)
    theta = np.zeros(5)
    for _ in range(k):
        grad_sum = L2_clip(lg.per_example_gradients(theta, X, y), clip).sum(axis=0)
        theta = theta - (grad_sum + rng.normal(0.0, z * clip, size=5)) / noisy_count
    np.testing.assert_allclose(result.theta, theta, rtol=1e-10)
    assert result.details.plan.noise_multiplier == pytest.approx(z)


def test_input_clipping_variant(toy):
    X, y = toy
    a = ngd(3 * X, y, 3, 0.5, 1e-5, clip_norm=1.0, clip_mode="inputs", rng=5)
    rng = np.random.default_rng(5)
    Xc = L2_clip(3 * X, 1.0)
    z = classic_noise_multiplier(0.5, 1e-5)
    count = Xc.shape[0] + rng.laplace(0.0, 2.0)
    theta = np.zeros(5)
    for _ in range(3):
        G = lg.per_example_gradients(theta, Xc, y).sum(axis=0)
        theta = theta - (G + rng.normal(0.0, z, size=5)) / count
    np.testing.assert_allclose(a.theta, theta, rtol=1e-10)


def test_sequential_spend_and_ledger(toy):
    X, y = toy
    r = noisy_gradient_descent(X, y, 10, 0.1, 1e-5, rng=0)
    assert r.epsilon == pytest.approx(1.1) and r.delta == pytest.approx(1e-4)      # the book's (k eps + eps, k delta)
    assert r.epsilon_per_iteration == 0.1 and r.delta_per_iteration == 1e-5
    z = classic_noise_multiplier(0.1, 1e-5)
    assert r.ledger == [(GaussianEvent(z), 10), (LaplaceEvent(0.1), 1)]


def test_total_budget_splits_sequentially(toy):
    X, y = toy
    r = ngd(X, y, 9, 1.0, 1e-5, budget_split="total", calibration="analytic", rng=0)
    assert r.epsilon == pytest.approx(1.0) and r.delta == pytest.approx(1e-5)
    assert r.epsilon_per_iteration == pytest.approx(0.1) and r.delta_per_iteration == pytest.approx(1e-5 / 9)
    assert r.details.plan.noise_multiplier == pytest.approx(analytic_noise_multiplier(0.1, 1e-5 / 9))


def test_seeds_reproduce_and_differ(toy):
    X, y = toy
    a = noisy_gradient_descent(X, y, 3, 0.5, 1e-5, rng=1).theta
    b = noisy_gradient_descent(X, y, 3, 0.5, 1e-5, rng=1).theta
    c = noisy_gradient_descent(X, y, 3, 0.5, 1e-5, rng=2).theta
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_noisy_count_is_floored():
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, -1.0])
    counts = [noisy_gradient_descent(X, y, 1, 1e-3, 1e-5, rng=s).details.noisy_count for s in range(20)]
    assert min(counts) == 1.0  # n + Lap(1000) is often below 1 here


def test_learns_something_on_toy(toy):
    X, y = toy
    base = max(np.mean(y == 1), np.mean(y == -1))
    r = noisy_gradient_descent(X, y, 20, 0.9, 1e-5, clip_norm=1.0, rng=0)
    assert lg.accuracy(r.theta, X, y) > base + 0.05


@pytest.mark.parametrize("kwargs, exc, message", [
    (dict(iterations=0), ValueError, "iterations"),
    (dict(iterations=2.0), TypeError, "iterations"),
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(epsilon=-1.0), ValueError, "epsilon"),
    (dict(epsilon=np.inf), ValueError, "epsilon"),
    (dict(delta=0.0), ValueError, "delta"),
    (dict(delta=1.5), ValueError, "delta"),
    (dict(clip_norm=0.0), ValueError, "clip_norm"),
    (dict(clip_norm=-5.0), ValueError, "clip_norm"),
    (dict(learning_rate=0.0), ValueError, "learning_rate"),
    (dict(budget_split="each"), ValueError, "budget_split"),
    (dict(calibration="exact"), ValueError, "calibration"),
    (dict(clip_mode="yes"), ValueError, "clip_mode"),
    (dict(epsilon=1.5), ValueError, "0 < epsilon < 1"),      # classic calibration outside its theorem
])
def test_bad_arguments(toy, kwargs, exc, message):
    X, y = toy
    args = dict(iterations=2, epsilon=0.5, delta=1e-5)
    args.update(kwargs)
    with pytest.raises(exc, match=message):
        ngd(X, y, args.pop("iterations"), args.pop("epsilon"), args.pop("delta"), **args)


def test_bad_data(toy):
    X, y = toy
    with pytest.raises(ValueError, match="2 \\* y - 1"):
        gradient_descent(X, (y + 1) / 2, 1)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        noisy_gradient_descent(bad, y, 1, 0.5, 1e-5)
    with pytest.raises(ValueError, match="theta0"):
        gradient_descent(X, y, 1, theta0=np.zeros(3))


def test_recorded_losses_are_the_losses_after_each_step(toy):
    # the loss is taken from the margins the next gradient computes: same values as recomputing it after a step
    X, y = toy
    result = noisy_gradient_descent(X, y, 4, 0.5, 1e-5, clip_norm=0.3, rng=7)
    rng = np.random.default_rng(7)
    z = classic_noise_multiplier(0.5, 1e-5)
    noisy_count = X.shape[0] + rng.laplace(0.0, 2.0)
    theta, expected = np.zeros(5), []
    for _ in range(4):
        grad_sum = L2_clip(lg.per_example_gradients(theta, X, y), 0.3).sum(axis=0)
        theta = theta - (grad_sum + rng.normal(0.0, z * 0.3, size=5)) / noisy_count
        expected.append(lg.loss(theta, X, y))
    np.testing.assert_allclose(result.losses, expected, rtol=1e-10)
    plain = gradient_descent(X, y, 3)
    theta = np.zeros(5)
    for t in range(3):
        theta = theta - lg.gradient(theta, X, y)
        assert plain.losses[t] == pytest.approx(lg.loss(theta, X, y), rel=1e-12)


def test_huge_but_finite_X_stays_finite_or_is_refused_naming_X(toy):
    X, y = toy
    huge = X * 1e300                                   # finite, row norms up to 1e300
    with warnings.catch_warnings():                    # and no floating-point warning on the way
        warnings.simplefilter("error")
        for run in (lambda: noisy_gradient_descent(huge, y, 3, 0.5, 1e-5, clip_norm=1.0, rng=0),
                    lambda: ngd(huge, y, 3, 0.5, 1e-5, clip_norm=1.0, clip_mode="inputs", rng=0)):
            result = run()
            assert np.all(np.isfinite(result.theta)) and np.all(np.isfinite(result.losses))
        # unclipped gradient descent moves theta by ~1e300, so X @ theta overflows: refused, naming X
        with pytest.raises(ValueError, match=r"\bX\b.*rescale"):
            gradient_descent(huge, y, 3)
    # a row whose norm is beyond the float range cannot be clipped or bounded: refused up front
    beyond = X.copy()
    beyond[0] = [1.7e308, 1.7e308, 0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match=r"\bX\b"):
        noisy_gradient_descent(beyond, y, 2, 0.5, 1e-5, rng=0)
    with pytest.raises(ValueError, match=r"\bX\b"):
        gradient_descent(beyond, y, 2)


def test_absurd_iterations_are_refused(toy):
    from dpedu.textbook.training import MAX_STEPS

    X, y = toy
    with pytest.raises(ValueError, match="iterations.*MAX_STEPS"):
        noisy_gradient_descent(X, y, MAX_STEPS + 1, 0.5, 1e-5, rng=0)
    with pytest.raises(ValueError, match="iterations.*MAX_STEPS"):
        gradient_descent(X, y, 10**12)


def test_failed_call_spends_no_budget(toy):
    from dpedu.accountants.budget import PrivacyBudget

    X, y = toy
    budget = PrivacyBudget(epsilon=10.0, delta=1e-3)
    for bad in (dict(theta0=np.zeros(3)), dict(rng="seed"), dict(clip_mode="rows"), dict(clip_norm=1e300)):
        with pytest.raises((ValueError, TypeError)):
            ngd(X, y, 2, 0.5, 1e-5, budget=budget, **dict(dict(rng=0), **bad))
    assert budget.ledger == []


def test_loss_every_records_a_subset_and_changes_nothing_else():
    from dpedu.textbook.datasets import make_toy

    X, y = make_toy(n=200, d=3, rng=0)
    every = ngd(X, y, 7, 0.5, 1e-5, clip_norm=1.0, rng=3)
    sparse = ngd(X, y, 7, 0.5, 1e-5, clip_norm=1.0, rng=3, loss_every=3)
    np.testing.assert_array_equal(every.theta, sparse.theta)       # the diagnostic never changes the run
    np.testing.assert_array_equal(every.details.loss_steps, np.arange(1, 8))
    np.testing.assert_array_equal(sparse.details.loss_steps, [3, 6, 7])
    np.testing.assert_allclose(sparse.losses, every.losses[[2, 5, 6]], rtol=1e-12)
    for bad, error in ((0, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)):
        with pytest.raises(error, match="loss_every"):
            ngd(X, y, 3, 0.5, 1e-5, rng=0, loss_every=bad)


def test_plain_call_is_its_plan_and_the_plan_is_checked_first(toy):
    X, y = toy
    plan = plan_noisy_gradient_descent(3, 0.5, 1e-5, clip_norm=0.7, learning_rate=0.5)
    direct = noisy_gradient_descent(X, y, 3, 0.5, 1e-5, clip_norm=0.7, learning_rate=0.5, rng=4)
    # the printed loop (L2_clip of the per-example gradients) and the engine's run: the same noise, equal to rounding
    np.testing.assert_allclose(direct.theta, run_noisy_gradient_descent(X, y, plan, rng=4).theta, rtol=1e-12, atol=1e-15)
    assert isinstance(direct.details.plan, NoisyGDPlan) and direct.details.plan == plan
    assert direct.details.plan.noise_std == pytest.approx(plan.noise_multiplier * 0.7)
    with pytest.raises(TypeError, match=r"\bplan\b"):
        run_noisy_gradient_descent(X, y, {"iterations": 3}, rng=0)
