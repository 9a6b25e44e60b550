"""Checks for the exercises of chapter 4: DP-SGD.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.checks`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .common import (
    CheckFailed,
    call,
    checker,
    clip_rows,
    close,
    expect,
    passed,
    per_example_gradients,
    problem,
    scalar,
    vector,
)

__all__ = ['check_poisson_sample', 'check_clipped_gradient_sum', 'check_dp_sgd_step', 'check_steps_and_epsilon']


def _indices(value, n, what="the sample"):
    array = np.asarray(value)
    expect(not (array.dtype == bool and array.shape == (n,)),
            "return the indices of the sampled records (np.flatnonzero(mask)), not the boolean mask")
    expect(array.ndim == 1, f"{what} must be a 1-D array of indices; got shape {array.shape}")
    expect(array.size == 0 or np.issubdtype(array.dtype, np.integer),
            f"{what} must hold integer indices; got dtype {array.dtype}")
    expect(np.all((array >= 0) & (array < n)), f"indices must be in 0 .. n-1 = {n - 1}")
    return array


@checker
def check_poisson_sample(fn, *, seed=0):
    r"""``fn(n, sampling_rate, rng)`` must return the indices of a Poisson sample: each record joins
    independently with probability q (docs/math.md §8)."""
    first = _indices(call(fn, 1000, 0.05, np.random.default_rng(1)), 1000)
    expect(np.array_equal(first, _indices(call(fn, 1000, 0.05, np.random.default_rng(1)), 1000)),
            "draw from the rng you are given (rng.random(n) < q), not from np.random")
    rng = np.random.default_rng(seed)
    n, q, n_draws = 1000, 0.05, 400
    samples = [_indices(call(fn, n, q, rng), n) for _ in range(n_draws)]
    expect(all(len(np.unique(s)) == len(s) for s in samples),
            "a record appears twice in one batch: that is sampling with replacement. Each record is in or out")
    sizes = np.array([len(s) for s in samples])
    expect(sizes.std() > 0, f"every batch has {sizes[0]} records: a fixed batch size is not Poisson sampling. Each "
                             "record joins independently with probability q, so the batch size varies "
                             "(Binomial(n, q))")
    # |B| ~ Binomial(1000, 0.05): mean 50 (standard error of the average 0.34), variance 47.5
    expect(abs(sizes.mean() - n * q) < 2.5, f"the expected batch size is q n = {n * q:g}; yours average "
                                             f"{sizes.mean():.3g}")
    expect(30 < sizes.var() < 70, f"batch sizes must vary like Binomial(n, q) (variance n q (1 - q) = "
                                   f"{n * q * (1 - q):.3g}); yours have variance {sizes.var():.3g}")
    counts = np.bincount(np.concatenate(samples), minlength=n)
    halves = counts[: n // 2].sum(), counts[n // 2 :].sum()
    expect(abs(halves[0] - halves[1]) < 0.1 * sum(halves), "every record must have the same chance q to be sampled")
    tiny = [_indices(call(fn, 10, 0.01, rng), 10) for _ in range(200)]
    expect(any(len(s) == 0 for s in tiny),
            "with n = 10 and q = 0.01 about 90 % of Poisson batches are empty, yours never are: an empty batch is "
            "a normal step. Never resample or force a record in")
    passed("Poisson sampling: independent inclusions, varying (possibly empty) batches")


@checker
def check_clipped_gradient_sum(fn, *, seed=0):
    r"""``fn(per_example_gradients, clip_norm)``: :math:`\sum_i \mathrm{L2\_clip}(g_i, C)` over the rows."""
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(20, 4)) * rng.choice([0.05, 3.0], size=(20, 1))
    clip_norm = 2.0  # above the batch mean's norm (about 1.7), so "clipped the mean" differs from "clipped the sum"
    expected = clip_rows(G, clip_norm).sum(axis=0)
    out = vector(call(fn, G.copy(), clip_norm), (4,), "the clipped sum")
    if not close(out, expected):
        total = G.sum(axis=0)
        expect(not close(out, total * min(1.0, clip_norm / np.linalg.norm(total))),
                "you clipped the sum of the batch; clip each example's gradient (each row), then sum: the "
                "sensitivity C comes from each example's contribution having norm <= C")
        mean = G.mean(axis=0)
        expect(not close(out, mean * min(1.0, clip_norm / np.linalg.norm(mean))),
                "you clipped the mean gradient of the batch; clip each example's gradient (each row), then sum")
        expect(not close(out, total), "clip each row to norm <= C before summing")
        expect(not close(out, expected / len(G)), "return the sum of the clipped rows, not their mean")
        expect(not close(out, np.clip(G, -clip_norm, clip_norm).sum(axis=0)),
                "you clipped coordinates one by one; that changes each gradient's direction: clip L2 norms")
        raise CheckFailed(f"expected {np.round(expected, 6)}; got {np.round(out, 6)}")
    empty = call(fn, np.zeros((0, 4)), clip_norm)
    expect(np.shape(empty) == (4,) and np.all(np.asarray(empty) == 0),
            "an empty batch (possible under Poisson sampling) has clipped sum zero: return np.zeros(d)")
    passed("per-example clipping, then the sum")


@checker
def check_dp_sgd_step(fn, *, seed=0):
    r"""``fn(theta, X_batch, y_batch, *, clip_norm, noise_multiplier, expected_batch_size, learning_rate, rng)``:

    .. math:: \theta - \frac{\eta}{qn}\Big(\sum_{i\in B}\mathrm{L2\_clip}(\nabla\ell(\theta; x_i, y_i), C)
              + \mathcal N(0, z^2C^2 I)\Big)
    """
    theta, X, y = problem(seed, n=37, d=3, scale=0.5)
    X[:12] *= 6.0
    clip_norm, expected_batch_size, learning_rate = 0.5, 50.0, 2.0
    kwargs = dict(clip_norm=clip_norm, expected_batch_size=expected_batch_size, learning_rate=learning_rate)
    G = per_example_gradients(theta, X, y)
    clipped_sum = clip_rows(G, clip_norm).sum(axis=0)
    expected = theta - learning_rate * clipped_sum / expected_batch_size
    out = vector(call(fn, theta.copy(), X, y, noise_multiplier=0.0, rng=np.random.default_rng(0), **kwargs),
                  theta.shape, "the new theta")
    if not close(out, expected):
        expect(not close(out, theta - learning_rate * clipped_sum / len(y)),
                f"you divided by the batch size actually drawn (|B| = {len(y)}); divide by the expected batch size "
                f"q n = {expected_batch_size:g}: |B| depends on whether a record was sampled, and is not noised")
        expect(not close(out, theta + learning_rate * clipped_sum / expected_batch_size),
                "step against the gradient: theta - learning_rate * noisy average")
        expect(not close(out, theta - learning_rate * G.sum(axis=0) / expected_batch_size),
                "clip each per-example gradient to norm <= C before summing")
        total = G.sum(axis=0)
        expect(not close(out, theta - learning_rate * total * min(1.0, clip_norm / np.linalg.norm(total))
                           / expected_batch_size),
                "you clipped the batch gradient; clip each example's gradient, then sum")
        raise CheckFailed(f"with noise_multiplier = 0 expected {np.round(expected, 6)}; got {np.round(out, 6)}")
    empty = vector(call(fn, theta.copy(), X[:0], y[:0], noise_multiplier=0.0, rng=np.random.default_rng(0),
                          **kwargs), theta.shape, "the new theta")
    expect(np.allclose(empty, theta), "an empty batch has clipped sum 0: without noise theta must not move "
                                       "(and with noise the step is pure noise)")
    rng = np.random.default_rng(seed)
    z, n_draws = 1.5, 2000
    draws = np.array([vector(call(fn, theta.copy(), X, y, noise_multiplier=z, rng=rng, **kwargs), theta.shape,
                              "the new theta") for _ in range(n_draws)])
    std = float((draws - expected).std())          # pooled over 3 coordinates: relative error about 1 %
    target = learning_rate * z * clip_norm / expected_batch_size
    if abs(std / target - 1.0) > 0.08:
        expect(abs(std / (target / clip_norm) - 1.0) > 0.08,
                "the noise added to the clipped sum has std z * C (you used z alone)")
        raise CheckFailed(f"the noise in theta must have std learning_rate * z * C / (q n) = {target:.4g}; yours "
                             f"has {std:.4g}")
    expect(np.all(np.abs((draws - expected).mean(axis=0)) < 5 * target / math.sqrt(n_draws)),
            "the noise must have mean 0")
    empty_noisy = vector(call(fn, theta.copy(), X[:0], y[:0], noise_multiplier=z, rng=np.random.default_rng(2),
                                **kwargs), theta.shape, "the new theta")
    expect(not np.allclose(empty_noisy, theta), "an empty batch is still a step: it must release noise (the "
                                                 "accountant counts it)")
    passed("one DP-SGD step: clip, sum, noise z C, divide by the expected batch size")


@checker
def check_steps_and_epsilon(fn):
    r"""``fn(epochs, sampling_rate, noise_multiplier, delta)`` -> ``(steps, epsilon)`` by the RDP accountant."""
    from ..accountants import GaussianEvent, SubsampledGaussianEvent, make_accountant

    def rdp(event, steps):
        return make_accountant("rdp").compose(event, steps).get_epsilon(1e-5)

    raw = call(fn, 100, 0.01, 4.0, 1e-5)
    try:
        steps, epsilon = raw
    except (TypeError, ValueError):
        raise CheckFailed(f"return a pair (steps, epsilon); got {raw!r}") from None
    steps = scalar(steps, "steps")
    expect(steps != 100, "one epoch is 1/q steps in expectation: 100 epochs at q = 0.01 are 10,000 steps")
    expect(steps == 10_000, f"steps = epochs / q = 10,000; got {steps:g}")
    epsilon = scalar(epsilon, "epsilon")
    event = SubsampledGaussianEvent(4.0, 0.01)
    expected = rdp(event, 10_000)
    if not close(epsilon, expected, rtol=1e-4):
        expect(not close(epsilon, rdp(event, 1), rtol=1e-4), "that is the epsilon of one step: compose all T steps "
                                                              "(acc.compose(event, steps))")
        expect(not close(epsilon, rdp(GaussianEvent(4.0), 10_000), rtol=1e-4),
                "each step sees a Poisson sample: account SubsampledGaussianEvent(z, q), not GaussianEvent(z)")
        for other in ("moments", "pld"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = make_accountant(other).compose(event, 10_000).get_epsilon(1e-5)
            expect(not close(epsilon, value, rtol=1e-3), f"that is the {other!r} accountant's epsilon; use the RDP "
                                                          "accountant: make_accountant('rdp')")
        raise CheckFailed(f"expected epsilon {expected:.4f} (RDP, 10,000 subsampled steps); got {epsilon:.4f}")
    passed("steps = epochs / q, epsilon by the RDP accountant (1.0355 for Abadi et al.'s setting)")
