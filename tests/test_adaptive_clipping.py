"""Adaptive clipping (Andrew, Thakkar, McMahan & Ramaswamy 2021; issue 22): C follows a quantile of the gradient
norms, the noise is split so the step is still one Gaussian with the requested multiplier, the ledger is the
same as with a fixed C."""

import math

import numpy as np
import pytest

from dpedu.accountants import account
from dpedu.textbook.clipping import l2_norms
from dpedu.textbook.datasets import make_toy
from dpedu.ground.events import GaussianEvent, SubsampledGaussianEvent
from dpedu.textbook.training import dp_sgd, gradient_noise_multiplier, plan_dp_sgd, run_dp_sgd
from dpedu.textbook.training.adaptive import ClipState


def planned(X, y, *, model=None, theta0=None, budget=None, rng=None, **settings):
    """A DP-SGD run with variants: ``run_dp_sgd`` on ``plan_dp_sgd(len(X), **settings)``."""
    return run_dp_sgd(X, y, plan_dp_sgd(len(X), **settings), model=model, theta0=theta0, budget=budget, rng=rng)



@pytest.fixture(scope="module")
def toy():
    return make_toy(n=500, d=3, rng=0)


@pytest.mark.parametrize("quantile", [0.2, 0.5, 0.9])
def test_without_noise_C_converges_to_the_quantile_of_the_gradient_norms(toy, quantile):
    X, y = toy
    # a learning rate of 1e-12 keeps theta at 0, where every gradient norm is ||x_i|| sigma(0) = ||x_i|| / 2
    result = planned(X, y, noise_multiplier=0.0, clip_norm=50.0, sampling_rate=1.0, steps=400, learning_rate=1e-12,
                    target_quantile=quantile, count_noise_std=0.0, rng=0)
    norms = l2_norms(X)[:, 0] / 2
    final = result.details.clip_norms[-1]
    low, high = np.quantile(norms, [quantile - 0.02, quantile + 0.02])
    assert low <= final <= high
    assert abs(np.mean(norms <= final) - quantile) <= 0.02


def test_with_poisson_batches_C_still_tracks_the_quantile(toy):
    X, y = toy
    result = planned(X, y, noise_multiplier=0.0, clip_norm=0.01, sampling_rate=0.5, steps=600, learning_rate=1e-12,
                    target_quantile=0.5, count_noise_std=0.0, rng=1)
    norms = l2_norms(X)[:, 0] / 2
    tail = result.details.clip_norms[-100:]
    assert np.all((np.quantile(norms, 0.4) <= tail) & (tail <= np.quantile(norms, 0.6)))


def test_the_geometric_update_of_one_step():
    state = ClipState(2.0, target_quantile=0.25, clip_learning_rate=0.5, count_noise_std=0.0, divisor=5.0)
    state.update(np.array([1.0, 1.0, 3.0, 3.0, 3.0]), np.random.default_rng(0))   # 2 of 5 at most C = 2
    assert state.clip_norm == pytest.approx(2.0 * math.exp(-0.5 * (0.4 - 0.25)), rel=1e-15)
    assert state.clip_norms == [2.0]


def test_the_split_noise_is_one_gaussian_with_the_requested_multiplier():
    z, sigma_b = 1.3, 4.0
    z_grad = gradient_noise_multiplier(z, sigma_b)
    # normalised: the sum has sensitivity 1 with noise z_grad, the shifted count 1/2 with noise sigma_b
    assert 1 / z ** 2 == pytest.approx(1 / z_grad ** 2 + 0.25 / sigma_b ** 2, rel=1e-14)
    # the PLD accountant composes the two Gaussian releases: the same epsilon as one with multiplier z
    two = account([(GaussianEvent(z_grad), 1), (GaussianEvent(2 * sigma_b), 1)], "pld", delta=1e-5).epsilon
    one = account([(GaussianEvent(z), 1)], "pld", delta=1e-5).epsilon
    assert two == pytest.approx(one, rel=2e-3)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_the_recorded_event_is_the_requested_one(toy, relation):
    X, y = toy
    result = planned(X, y, noise_multiplier=1.2, clip_norm=1.0, sampling_rate=0.1, steps=30, target_quantile=0.5,
                    relation=relation, rng=0)
    assert result.ledger == [(SubsampledGaussianEvent(1.2, 0.1, relation=relation), 30)]
    assert result.details.plan.gradient_noise_multiplier == pytest.approx(gradient_noise_multiplier(1.2, 50 / 20))
    assert result.details.plan.resolved_count_noise_std == 50 / 20
    assert result.details.clip_norms.shape == (30,) and result.details.clip_norms[0] == 1.0


def test_default_settings_are_the_papers():
    plan = plan_dp_sgd(1000, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=5, target_quantile=0.5)
    assert plan.clip_learning_rate == 0.2 and plan.resolved_count_noise_std == 100 / 20
    fixed = plan_dp_sgd(1000, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=5, sampling="fixed",
                        target_quantile=0.5)
    assert fixed.resolved_count_noise_std == 100 / 20
    # a small batch and much noise: sigma_b = z, so the gradient noise grows by 1 / sqrt(3/4) at most
    small = plan_dp_sgd(100, noise_multiplier=4.0, clip_norm=1.0, sampling_rate=0.1, steps=5, target_quantile=0.5)
    assert small.resolved_count_noise_std == 4.0
    assert small.gradient_noise_multiplier == pytest.approx(4.0 / math.sqrt(0.75), rel=1e-14)
    assert small.with_noise_multiplier(6.0).resolved_count_noise_std == 6.0


def test_same_seed_same_adaptive_run(toy):
    X, y = toy
    kwargs = dict(noise_multiplier=1.0, clip_norm=0.3, sampling_rate=0.1, steps=25, target_quantile=0.7)
    a, b = planned(X, y, rng=3, **kwargs), planned(X, y, rng=3, **kwargs)
    np.testing.assert_array_equal(a.theta, b.theta)
    np.testing.assert_array_equal(a.details.clip_norms, b.details.clip_norms)
    assert not np.array_equal(a.details.clip_norms, planned(X, y, rng=4, **kwargs).details.clip_norms)


def test_fixed_clip_norm_path_is_unchanged(toy):
    X, y = toy
    result = dp_sgd(X, y, noise_multiplier=1.0, clip_norm=0.3, sampling_rate=0.1, steps=7, rng=0)
    assert result.details.plan.gradient_noise_multiplier == 1.0 and result.details.plan.target_quantile is None
    np.testing.assert_array_equal(result.details.clip_norms, np.full(7, 0.3))


@pytest.mark.parametrize("kwargs, message", [
    (dict(target_quantile=0.5, count_noise_std=0.5), r"count_noise_std must exceed 0.5 x noise_multiplier = 0.5"),
    (dict(target_quantile=0.5, count_noise_std=0.1), "count_noise_std must exceed"),
    (dict(target_quantile=1.0), "target_quantile"),
    (dict(target_quantile=0.0), "target_quantile"),
    (dict(target_quantile=0.5, clip_learning_rate=0.0), "clip_learning_rate"),
    (dict(target_quantile=0.5, count_noise_std=-1.0), "count_noise_std"),
    (dict(clip_learning_rate=0.1), "give target_quantile too"),
    (dict(count_noise_std=3.0), "give target_quantile too"),
    (dict(target_quantile=0.5, clip_mode="inputs"), "clip_mode='gradients'"),
])
def test_bad_adaptive_settings_are_refused_by_name(toy, kwargs, message):
    X, y = toy
    with pytest.raises(ValueError, match=message):
        planned(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=3, rng=0, **kwargs)


def test_infinite_initial_clip_norm_is_refused(toy):
    X, y = toy
    with pytest.raises(ValueError, match="must be finite"):
        planned(X, y, noise_multiplier=0.0, clip_norm=math.inf, sampling_rate=0.1, steps=3, target_quantile=0.5, rng=0)


def test_calibrated_noise_is_rechecked_against_the_count_noise():
    plan = plan_dp_sgd(100, noise_multiplier=0.0, clip_norm=1.0, sampling_rate=0.1, steps=5, target_quantile=0.5,
                       count_noise_std=1.0)
    assert plan.with_noise_multiplier(1.5).gradient_noise_multiplier > 1.5
    with pytest.raises(ValueError, match="count_noise_std must exceed"):
        plan.with_noise_multiplier(2.0)


def test_the_figure_of_an_adaptive_run(toy):
    from matplotlib.figure import Figure

    from dpedu.lab.plotting import plot_adaptive_clipping

    X, y = toy
    result = planned(X, y, noise_multiplier=1.0, clip_norm=0.05, sampling_rate=0.1, epochs=5, target_quantile=0.5,
                    rng=0)
    details = result.details
    assert details.gradient_norm_quantiles.shape == details.loss_steps.shape == (5,)
    fig = Figure(figsize=(7.0, 3.5))
    ax = plot_adaptive_clipping(details.clip_norms, details.loss_steps, details.gradient_norm_quantiles,
                                target_quantile=0.5, ax=fig.add_subplot())
    labels = [line.get_label() for line in ax.lines]
    assert len(labels) == 2 and "non-private diagnostic" in labels[1] and ax.get_yscale() == "log"
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), details.clip_norms)
    with pytest.raises(ValueError, match="one length"):
        plot_adaptive_clipping([1.0, 0.5], [1, 2], [0.4], target_quantile=0.5, ax=fig.add_subplot())
    with pytest.raises(ValueError, match="target_quantile"):
        plot_adaptive_clipping([1.0, 0.5], [1], [0.4], target_quantile=1.5, ax=fig.add_subplot())
    with pytest.raises(TypeError, match="ax must be"):
        plot_adaptive_clipping([1.0], [1], [0.4], target_quantile=0.5, ax="axes")


@pytest.mark.parametrize("relation, count_move", [("add_remove", 0.5), ("zero_out", 1.0)])
def test_the_step_is_one_gaussian_with_multiplier_z_under_each_relation(relation, count_move):
    """The worst change of (gradient sum / z_grad C, count / sigma_b) has norm exactly 1 / z (docs/math.md §24.1).

    Add/remove: the record's clipped gradient (norm C) and its indicator -1/2 against nothing. Zero-out: the same
    gradient against the zero-gradient record, whose indicator is +1/2: the count moves by 1. Before the split
    took that into account, zero-out at z = sigma_b = 1 was the Gaussian with mu = sqrt(1.75) under a claim of mu = 1.
    """
    z = 1.3
    plan = plan_dp_sgd(1000, noise_multiplier=z, clip_norm=1.0, sampling_rate=0.1, steps=10, target_quantile=0.5,
                       relation=relation)
    sigma_b, z_grad = plan.resolved_count_noise_std, plan.gradient_noise_multiplier
    assert math.hypot(1.0 / z_grad, count_move / sigma_b) == pytest.approx(1.0 / z, rel=1e-12)
    assert z_grad <= z / math.sqrt(0.75) + 1e-12                   # the default sigma_b keeps the count's share <= 1/4


def test_zero_out_refuses_a_count_noise_that_would_spend_the_step():
    with pytest.raises(ValueError, match="count_noise_std must exceed 1 x noise_multiplier"):
        plan_dp_sgd(1000, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=10, target_quantile=0.5,
                    count_noise_std=0.9, relation="zero_out")
    plan_dp_sgd(1000, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=10, target_quantile=0.5,
                count_noise_std=0.9)                                # 0.9 > 1/2: fine under add/remove
