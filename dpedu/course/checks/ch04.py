"""Checks for the exercises of chapter 4: DP-SGD.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .common import (
    NOT_WRITTEN, CheckFailed, call, checker, clip_rows, close, expect, expect_independent_noise, passed,
    per_example_gradients, problem, scalar, settings, student, vector, where_raised
)
from .guard import ExerciseRefused

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
def check_clipped_gradient_sum(fn, *, seed=None):
    r"""``fn(per_example_gradients, clip_norm)``: :math:`\sum_i \mathrm{L2\_clip}(g_i, C)` over the rows."""
    rng = settings(seed)
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


EMPTY_BATCH = ("an empty batch (X_batch with 0 rows, which Poisson sampling draws now and then) made your function "
               "raise {error}: an empty batch is a step too. Its clipped sum is the zero vector, and the step releases "
               "the noise alone (dpedu's logistic.per_example_gradients refuses an empty X: handle 0 rows yourself)")


def _step_on_empty_batch(fn, theta, X, y, **kwargs):
    """``fn`` on a batch of 0 rows; a crash there gets the empty-batch hint (the chapter asks for it)."""
    try:
        with np.errstate(all="ignore"), student(fn):
            return fn(theta, X, y, **kwargs)
    except NotImplementedError:
        raise CheckFailed(NOT_WRITTEN) from None
    except ExerciseRefused as exc:
        raise ExerciseRefused(f"{exc}{where_raised(exc, fn)}") from None
    except CheckFailed:
        raise
    except Exception as exc:
        failure = CheckFailed(EMPTY_BATCH.format(error=f"{type(exc).__name__}: {exc}") + where_raised(exc, fn))
        failure.more = ("with 0 rows, X_batch @ theta has 0 entries and the sum over them is np.zeros(d); only a "
                        "function that refuses an empty array fails here")
        raise failure from None


@checker
def check_dp_sgd_step(fn, *, seed=None):
    r"""``fn(theta, X_batch, y_batch, *, clip_norm, noise_multiplier, expected_batch_size, learning_rate, rng)``:

    .. math:: \theta - \frac{\eta}{qn}\Big(\sum_{i\in B}\mathrm{L2\_clip}(\nabla\ell(\theta; x_i, y_i), C)
              + \mathcal N(0, z^2C^2 I)\Big)

    The noise must be an independent draw in every coordinate, and an empty batch a step of pure noise (the
    chapter asks for both).
    """
    draw = settings(seed)
    d = 5
    theta, X, y = problem(int(draw.integers(2**31)), n=int(draw.integers(25, 45)), d=d, scale=0.5)
    X[:12] *= 6.0
    clip_norm = round(float(draw.uniform(0.3, 0.8)), 2)
    expected_batch_size = float(draw.integers(60, 90))
    learning_rate = round(float(draw.uniform(1.0, 3.0)), 1)
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
    empty = vector(_step_on_empty_batch(fn, theta.copy(), X[:0], y[:0], noise_multiplier=0.0,
                                        rng=np.random.default_rng(0), **kwargs), theta.shape, "the new theta")
    expect(np.allclose(empty, theta), "an empty batch has clipped sum 0: without noise theta must not move "
                                       "(and with noise the step is pure noise)")
    z = round(float(draw.uniform(1.0, 2.5)), 1)
    rng, n_draws = np.random.default_rng(2024), 2000
    noise = np.array([vector(call(fn, theta.copy(), X, y, noise_multiplier=z, rng=rng, **kwargs), theta.shape,
                             "the new theta") for _ in range(n_draws)]) - expected
    std = float(noise.std())          # pooled over the coordinates: relative error about 1 %
    target = learning_rate * z * clip_norm / expected_batch_size
    if abs(std / target - 1.0) > 0.08:
        expect(abs(std / (target / clip_norm) - 1.0) > 0.08,
                "the noise added to the clipped sum has std z * C (you used z alone)")
        raise CheckFailed(f"the noise in theta must have std learning_rate * z * C / (q n) = {target:.4g}; yours "
                             f"has {std:.4g}")
    expect_independent_noise(noise, target, "the noise in the new theta")
    empty_noisy = vector(_step_on_empty_batch(fn, theta.copy(), X[:0], y[:0], noise_multiplier=z,
                                              rng=np.random.default_rng(2), **kwargs), theta.shape, "the new theta")
    expect(not np.allclose(empty_noisy, theta), "an empty batch is still a step: it must release noise (the "
                                                 "accountant counts it)")
    passed("one DP-SGD step: clip, sum, noise z C in each coordinate, divide by the expected batch size")


@checker
def check_steps_and_epsilon(fn, *, seed=None):
    r"""``fn(epochs, sampling_rate, noise_multiplier, delta)`` -> ``(steps, epsilon)`` by the RDP accountant, at
    settings drawn afresh at every call."""
    from ...accountants import GaussianEvent, SubsampledGaussianEvent, make_accountant

    draw = settings(seed)
    epochs, per_epoch = int(draw.integers(5, 60)), int(draw.choice([50, 100, 200, 250, 400]))
    q, z, delta = 1.0 / per_epoch, round(float(draw.uniform(1.0, 4.0)), 2), float(10.0 ** -draw.integers(5, 8))
    T = epochs * per_epoch

    def rdp(event, steps):
        return make_accountant("rdp").compose(event, steps).get_epsilon(delta)

    raw = call(fn, epochs, q, z, delta)
    try:
        steps, epsilon = raw
    except (TypeError, ValueError):
        raise CheckFailed(f"return a pair (steps, epsilon); got {raw!r}") from None
    steps = scalar(steps, "steps")
    expect(steps != epochs, f"one epoch is 1/q steps in expectation: {epochs} epochs at q = 1/{per_epoch} are "
                            f"{T:,} steps, not {epochs}")
    expect(steps == T, f"steps = epochs / q = {epochs} x {per_epoch} = {T:,}; got {steps:g}")
    epsilon = scalar(epsilon, "epsilon")
    event = SubsampledGaussianEvent(z, q)
    expected = rdp(event, T)
    if not close(epsilon, expected, rtol=1e-4):
        expect(not close(epsilon, rdp(event, 1), rtol=1e-4), "that is the epsilon of one step: compose all T steps "
                                                              "(acc.compose(event, steps))")
        expect(not close(epsilon, rdp(GaussianEvent(z), T), rtol=1e-4),
                "each step sees a Poisson sample: account SubsampledGaussianEvent(z, q), not GaussianEvent(z)")
        for other in ("moments", "pld"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = make_accountant(other).compose(event, T).get_epsilon(delta)
            expect(not close(epsilon, value, rtol=1e-3), f"that is the {other!r} accountant's epsilon; use the RDP "
                                                          "accountant: make_accountant('rdp')")
        raise CheckFailed(f"for {epochs} epochs at q = 1/{per_epoch}, z = {z:g}, delta = {delta:g} expected epsilon "
                          f"{expected:.4f} (RDP, {T:,} subsampled steps); got {epsilon:.4f}")
    passed("steps = epochs / q, epsilon by the RDP accountant")


def _pair(raw, first, second):
    try:
        a, b = raw
    except (TypeError, ValueError):
        raise CheckFailed(f"return a pair ({first}, {second}); got {raw!r:.80}") from None
    return a, b


@checker
def check_steps_and_sampling_rate(fn, *, seed=None):
    r"""``fn(epochs, batch_size, dataset_size)`` -> ``(steps, sampling_rate)`` of Poisson-sampled DP-SGD with
    expected batch size m: :math:`q = m/n`, :math:`T = E/q = En/m` (docs/math.md §8)."""
    draw = settings(seed)
    for _ in range(2):
        m = int(draw.choice([32, 64, 100, 128, 250, 256, 300, 500]))
        epochs, n = int(draw.integers(2, 20)), m * int(draw.integers(40, 400))
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
def check_fixed_batch_event(fn, *, seed=None):
    r"""``fn(noise_multiplier, batch_size, dataset_size)`` -> the event of one DP-SGD step on exactly m of n
    records drawn uniformly without replacement: ``SampledWithoutReplacementGaussianEvent(z, m, n,
    relation="replace_one")`` (docs/math.md §11.2, §22.3)."""
    from ...accountants import make_accountant
    from ...ground.events import (
        REPLACE_ONE, Event, GaussianEvent, SampledWithoutReplacementGaussianEvent, ShuffledBatchGaussianEvent,
        SubsampledGaussianEvent
    )

    draw = settings(seed)
    cases = [(round(float(draw.uniform(0.8, 2.0)), 2), m, m * int(draw.integers(20, 200)))
             for m in (int(draw.integers(16, 64)), int(draw.integers(100, 1000)))]
    for z, m, n in cases:
        event = call(fn, z, m, n)
        expect(isinstance(event, Event), f"return a dpedu event (from dpedu.ground.events); got {type(event).__name__} "
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
