"""Checks for the exercises of chapter 4: DP-SGD.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .common import (
    CheckFailed, call, checker, clip_rows, close, expect, passed, per_example_gradients, problem, scalar, vector
)

__all__ = ['check_poisson_sample', 'check_clipped_gradient_sum', 'check_dp_sgd_step', 'check_steps_and_epsilon',
           'check_steps_and_sampling_rate', 'check_fixed_batch_event']


def _indices(value, n, what="the sample"):
    array = np.asarray(value)
    expect(not (array.dtype == bool and array.shape == (n,)),
           "you returned the boolean mask: the answer is the indices of the sampled records",
           more="np.flatnonzero(mask) turns a mask into the indices where it is True")
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
            "two calls with the same rng seed gave different samples: your draws do not come from the rng "
            "you are given", more="draw with the rng argument (rng.random(n) < q), not with np.random")
    rng = np.random.default_rng(seed)
    n, q, n_draws = 1000, 0.05, 400
    samples = [_indices(call(fn, n, q, rng), n) for _ in range(n_draws)]
    expect(all(len(np.unique(s)) == len(s) for s in samples),
            "a record appears twice in one batch: that is sampling with replacement",
            more="in a Poisson sample each record is in or out, once: decide for each record separately")
    sizes = np.array([len(s) for s in samples])
    expect(sizes.std() > 0, f"every batch has {sizes[0]} records: a fixed batch size is not Poisson sampling",
           more="each record joins independently with probability q, so the batch size varies (Binomial(n, q)): "
                "one uniform number per record, compared with q")
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
    from ...accountants import GaussianEvent, SubsampledGaussianEvent, make_accountant

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


def _pair(raw, first, second):
    try:
        a, b = raw
    except (TypeError, ValueError):
        raise CheckFailed(f"return a pair ({first}, {second}); got {raw!r:.80}") from None
    return a, b


@checker
def check_steps_and_sampling_rate(fn):
    r"""``fn(epochs, batch_size, dataset_size)`` -> ``(steps, sampling_rate)`` of Poisson-sampled DP-SGD with
    expected batch size m: :math:`q = m/n`, :math:`T = E/q = En/m` (docs/math.md §8)."""
    for epochs, m, n in ((10, 250, 60_000), (3, 300, 30_000)):
        steps, rate = _pair(call(fn, epochs, m, n), "steps", "sampling_rate")
        steps, rate = scalar(steps, "steps"), scalar(rate, "sampling_rate")
        expected_steps, expected_rate = epochs * n // m, m / n
        expect(not (close(steps, expected_rate) and close(rate, expected_steps)),
               "return (steps, sampling_rate) in this order")
        if not close(rate, expected_rate):
            expect(not close(rate, m), f"the sampling rate is a probability, the chance that one record joins a "
                                       f"step: q = m / n = {m} / {n}, not the batch size m")
            expect(not close(rate, n / m), f"upside down: q = m / n = {expected_rate:.6g}, not n / m")
            expect(not close(rate, 1 / m), f"q is the chance that a record joins a batch: m / n = {expected_rate:.6g}")
            raise CheckFailed(f"with batch size {m} of {n} records, q = m / n = {expected_rate:.6g}; got {rate:.6g}")
        if not close(steps, expected_steps):
            expect(not close(steps, epochs),
                   f"you counted epochs, not steps: the wrong unit. Every step is a release the accountant must "
                   f"count, and an epoch is n / m = {n // m} steps, so {epochs} epochs are {expected_steps} steps "
                   f"(a ledger that counts epochs undercounts the releases by 1/q)")
            expect(not close(steps, n / m), f"that is the number of steps of ONE epoch (n / m = {n // m}); "
                                            f"multiply by the {epochs} epochs")
            expect(not (close(steps, epochs * m) or close(steps, epochs * n)),
                   "that counts examples, not steps: T = epochs / q = epochs * n / m")
            raise CheckFailed(f"{epochs} epochs of batches of {m} (expected) from {n} records are T = epochs / q = "
                              f"{expected_steps} steps; got {steps:g}")
    passed("q = m / n and T = epochs / q steps (every step counted, not every epoch)")


@checker
def check_fixed_batch_event(fn):
    r"""``fn(noise_multiplier, batch_size, dataset_size)`` -> the event of one DP-SGD step on exactly m of n
    records drawn uniformly without replacement: ``SampledWithoutReplacementGaussianEvent(z, m, n,
    relation="replace_one")`` (docs/math.md §11.2, §22.3)."""
    from ...accountants import make_accountant
    from ...events import (REPLACE_ONE, Event, GaussianEvent, SampledWithoutReplacementGaussianEvent,
                          ShuffledBatchGaussianEvent, SubsampledGaussianEvent)

    for z, m, n in ((1.5, 600, 60_000), (0.8, 32, 1_000)):
        event = call(fn, z, m, n)
        expect(isinstance(event, Event), f"return a dpedu event (from dpedu.events); got {type(event).__name__} "
                                         f"{event!r:.60}")
        expect(not isinstance(event, SubsampledGaussianEvent),
               "SubsampledGaussianEvent is Poisson sampling (each record joins independently with probability q, "
               "so the batch size varies); exactly m records drawn without replacement is "
               "SampledWithoutReplacementGaussianEvent")
        expect(not isinstance(event, ShuffledBatchGaussianEvent),
               "the batches are drawn afresh at every step, not cut from one shuffled pass: "
               "SampledWithoutReplacementGaussianEvent")
        expect(not isinstance(event, GaussianEvent), "only m of the n records are in each batch: record the "
                                                     "sampling, SampledWithoutReplacementGaussianEvent(z, m, n, ...)")
        expect(isinstance(event, SampledWithoutReplacementGaussianEvent),
               f"exactly m records drawn without replacement is SampledWithoutReplacementGaussianEvent; got "
               f"{type(event).__name__}")
        expect(event.relation == REPLACE_ONE,
               "wrong neighbouring relation: remove a record from a batch of exactly m and another record takes "
               "its place, so the outputs differ by a swap (sensitivity 2C), a replace-one difference. The theorem "
               "for fixed-size batches is for replace-one and the accountants refuse add/remove: pass "
               "relation='replace_one'")
        expect(not close(event.noise_multiplier, z / 2),
               "store z itself (per unit of the clip norm C): the accountant applies the replace-one "
               "sensitivity 2C (docs/math.md §22.1); halving z here counts it twice")
        expect(close(event.noise_multiplier, z), f"the noise multiplier is z = {z:g}; got {event.noise_multiplier:g}")
        expect((event.batch_size, event.dataset_size) == (m, n),
               f"batch_size = m = {m} and dataset_size = n = {n}; got {event.batch_size} and {event.dataset_size}")
    make_accountant("rdp").compose(event, 10)      # accounted, not refused
    passed("fixed-size batches: SampledWithoutReplacementGaussianEvent(z, m, n, relation='replace_one')")
