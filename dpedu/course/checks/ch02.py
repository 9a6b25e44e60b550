"""Checks for the exercises of chapter 2: sensitivity, clipping, noise.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math

import numpy as np

from .common import (
    student, NOT_WRITTEN, CheckFailed, excess_kurtosis, call, call_strict, checker, classic_z, clip_rows, close, expect,
    expect_independent_noise, passed, per_example_gradients, problem, scalar, settings, vector
)

__all__ = ['check_sensitivities', 'check_L2_clip', 'check_noisy_count', 'check_classic_noise_multiplier', 'check_noisy_gradient_sum']


@checker
def check_sensitivities(count, clipped_sum_add_remove, clipped_sum_replace_one, *, clip_norm):
    r"""The L2 sensitivities of a count and of a sum of vectors clipped to ``clip_norm`` (docs/math.md §2, §5)."""
    count = scalar(count, "the sensitivity of a count")
    expect(close(count, 1.0), f"sensitivity_count = {count:g} is wrong: how much can adding or removing one row "
                              f"change a count?",
           more="write the count of D and of D′ = D with one more row: by how much can they differ?")
    add_remove = scalar(clipped_sum_add_remove, "the add/remove sensitivity of the clipped sum")
    expect(not close(add_remove, 2 * clip_norm),
           "sensitivity_sum_add_remove is twice too large: under add/remove the two sums differ by ONE clipped "
           "vector, not two", more="the difference is one clipped vector u, and ‖u‖ ≤ C")
    expect(close(add_remove, clip_norm),
           f"sensitivity_sum_add_remove = {add_remove:g} is wrong: what is the largest norm of the one vector by "
           f"which the two sums differ?",
           more="the two sums differ by the clipped vector u of the one added row: how long can u be after clipping?")
    replace_one = scalar(clipped_sum_replace_one, "the replace-one sensitivity of the clipped sum")
    expect(not close(replace_one, clip_norm),
           "sensitivity_sum_replace_one is too small: replacing a row swaps one clipped vector u for another u′, so "
           "the sums differ by u − u′, not by one vector",
           more="‖u − u′‖ ≤ ‖u‖ + ‖u′‖ with both norms ≤ C; which u′ makes the difference as long as possible?")
    expect(close(replace_one, 2 * clip_norm),
           f"sensitivity_sum_replace_one = {replace_one:g} is wrong: how long can u − u′ be when ‖u‖, ‖u′‖ ≤ C?",
           more="‖u − u′‖ ≤ ‖u‖ + ‖u′‖ (the triangle inequality): which u′ makes the difference as long as "
                "possible, and how long is it then?")
    passed("sensitivities: count 1, clipped sum C (add/remove) and 2C (replace-one)")


DIVIDES_BY_ZERO = ("the zero vector must stay zero, and for it your function divides by ‖v‖ = 0 (the exercise "
                   "forbids it; np.where and np.minimum compute both branches, so the division still happens)")
DIVIDES_BY_ZERO_MORE = "guard the denominator, np.maximum(norm, 1e-300), or scale only the rows whose norm exceeds C"


@checker
def check_L2_clip(fn, *, seed=None):
    r"""``fn(v, clip_norm)`` must scale ``v`` (or each row of a matrix) to L2 norm at most ``clip_norm``."""
    rng = settings(seed)
    clip_norm = 1.0
    v = 10.0 * rng.normal(size=5)
    original = v.copy()
    out = vector(call(fn, v, clip_norm), v.shape, "the clipped vector")
    expect(np.array_equal(v, original), "do not modify the input in place: return a new array (v * factor)")
    if not (np.all(np.isfinite(out)) and np.allclose(out / np.linalg.norm(out), v / np.linalg.norm(v))):
        expect(not np.allclose(out, np.clip(v, -clip_norm, clip_norm)),
               "you clipped coordinates one by one (np.clip), which changes the direction of the vector",
               more="scale the whole vector by one factor, min(1, C / ‖v‖), so its direction stays; np.clip acts "
                    "on each coordinate alone.")
        raise CheckFailed("clipping must keep the direction: the result must be a positive multiple of v")
    expect(np.linalg.norm(out) <= clip_norm * (1 + 1e-9), "the clipped vector must have norm at most clip_norm")
    expect(np.isclose(np.linalg.norm(out), clip_norm), "a vector longer than C must be scaled to norm exactly C")

    small = 0.1 * v / np.linalg.norm(v)
    out_small = vector(call(fn, small.copy(), clip_norm), small.shape, "the clipped vector")
    expect(np.allclose(out_small, small), "a vector with norm ≤ C was changed: it must be left as it is, never "
                                          "scaled up to C", more="the factor min(1, C / ‖v‖) is never above 1")
    rows = np.vstack([10.0 * rng.normal(size=3), 0.2 * rng.normal(size=3) / np.sqrt(3), 3.0 * rng.normal(size=3)])
    out_rows = vector(call(fn, rows.copy(), clip_norm), rows.shape, "the clipped matrix")
    expected_rows = clip_rows(rows, clip_norm)
    if not np.allclose(out_rows, expected_rows):
        whole = rows * min(1.0, clip_norm / np.linalg.norm(rows))
        expect(not np.allclose(out_rows, whole),
               "you clipped the matrix as one vector: it holds one vector per row (one gradient per example), and "
               "each row must be clipped separately",
               more="take the norm along the last axis, np.linalg.norm(v, axis=-1, keepdims=True), one per row")
        raise CheckFailed("each row of a matrix must be clipped on its own to norm <= clip_norm")

    zero = np.zeros(4)
    out_zero = vector(call_strict(fn, zero, clip_norm, hint=DIVIDES_BY_ZERO, more=DIVIDES_BY_ZERO_MORE), zero.shape, "the clipped zero vector")
    expect(np.all(np.isfinite(out_zero)) and np.all(out_zero == 0),
            "the zero vector must stay zero (no 0/0 = nan): ||0|| <= C, so it is not scaled at all")
    with_zero_row = np.vstack([rows, np.zeros(3)])
    out_zero_row = vector(call_strict(fn, with_zero_row.copy(), clip_norm, hint=DIVIDES_BY_ZERO,
                                      more=DIVIDES_BY_ZERO_MORE), with_zero_row.shape,
                          "the clipped matrix")
    expect(np.allclose(out_zero_row, clip_rows(with_zero_row, clip_norm)),
           "a zero row of a matrix must stay zero while the other rows are clipped")
    passed("L2_clip scales whole vectors (and each row of a matrix) to norm <= clip_norm")


@checker
def check_noisy_count(fn, *, seed=None):
    r"""``fn(true_count, epsilon, rng)`` must return ``true_count + Laplace(1/epsilon)`` noise drawn from ``rng``."""
    draw = settings(seed)
    true_count, epsilon = int(draw.integers(100, 100_000)), round(float(draw.uniform(0.2, 0.8)), 2)
    first = scalar(call(fn, true_count, epsilon, np.random.default_rng(1)), "the noisy count")
    again = scalar(call(fn, true_count, epsilon, np.random.default_rng(1)), "the noisy count")
    expect(math.isfinite(first), f"the noisy count must be a finite number; got {first}")
    expect(first == again, "the same rng gave two different answers: your noise does not come from the rng you "
                           "are given", more="draw the noise with rng.laplace(...), not with np.random")
    rng, n_draws = np.random.default_rng(2024), 4000
    noise = np.array([scalar(call(fn, true_count, epsilon, rng), "the noisy count") for _ in range(n_draws)])
    noise -= true_count
    expect(np.std(noise) > 0, "the count must be noisy: add Laplace noise drawn from rng")
    scale = 1.0 / epsilon
    # mean of n_draws Laplace(b): standard error b * sqrt(2 / n_draws) = 0.045 b here; allow 7 standard errors
    expect(abs(noise.mean()) < 7 * scale * math.sqrt(2.0 / n_draws),
            f"the noise must be centred at 0 (the answer is unbiased); its mean is {noise.mean():.3g}")
    # Laplace has excess kurtosis 3, a Gaussian 0 (standard error of the estimate about 0.3 at 4000 draws)
    expect(excess_kurtosis(noise) > 1.5, "this noise is not Laplace-shaped: its tails are too light",
           more="the Laplace distribution is rng.laplace(0.0, scale)")
    mean_abs = float(np.mean(np.abs(noise)))     # E|Lap(b)| = b; standard error b / sqrt(n_draws)
    if abs(mean_abs / scale - 1.0) > 0.1:
        expect(abs(mean_abs / epsilon - 1.0) > 0.1,
               "you used epsilon as the Laplace scale: a smaller epsilon (more privacy) must mean MORE noise",
               more="the scale is the sensitivity divided by ε, and a count has sensitivity 1")
        raise CheckFailed(f"at epsilon = {epsilon:g} the Laplace scale must be 1/epsilon = {scale:g} (sensitivity 1); "
                          f"your noise has scale about {mean_abs:.3g}")
    passed("noisy count = count + Laplace(1/epsilon), drawn from the given rng")


@checker
def check_classic_noise_multiplier(fn, *, seed=None):
    r"""``fn(epsilon, delta)`` must return :math:`\sqrt{2\ln(1.25/\delta)}/\varepsilon` and refuse epsilon >= 1."""
    draw = settings(seed)
    for low, high in ((0.05, 0.35), (0.35, 0.65), (0.65, 0.95)):
        epsilon, delta = round(float(draw.uniform(low, high)), 3), float(10.0 ** -draw.integers(3, 9))
        out = scalar(call(fn, epsilon, delta), "the noise multiplier")
        expected = classic_z(epsilon, delta)
        if not close(out, expected):
            expect(not close(out, math.sqrt(2.0 * math.log(1.0 / delta)) / epsilon),
                   "the number inside the logarithm is wrong: you computed ln(1/δ)",
                   more="the classic formula has ln(1.25/δ)")
            expect(not close(out, 2.0 * math.log(1.25 / delta) / epsilon), "a square root is missing",
                   more="z = √(2 ln(1.25/δ)) / ε")
            expect(not close(out, math.sqrt(2.0 * math.log(1.25 / delta)) * epsilon),
                   "you multiplied by ε: more privacy (a smaller ε) must need MORE noise", more="divide by ε")
            raise CheckFailed(f"for epsilon={epsilon}, delta={delta} expected z = {expected:.6g}; got {out:.6g}")
    too_large = round(float(draw.uniform(1.5, 4.0)), 1)
    try:
        with np.errstate(all="ignore"), student(fn):
            fn(too_large, 1e-5)
    except NotImplementedError:
        raise CheckFailed(NOT_WRITTEN) from None
    except CheckFailed:                   # dpedu's own version refused to run
        raise
    except ValueError:
        pass
    except Exception as exc:
        raise CheckFailed(f"for epsilon = {too_large:g} raise ValueError (the classic formula needs epsilon < 1); "
                          f"your function raised {type(exc).__name__}: {exc}") from None
    else:
        raise CheckFailed(f"the classic formula is proven only for 0 < epsilon < 1: for epsilon = {too_large:g} raise "
                          "ValueError (and point to the analytic Gaussian) instead of returning a number")
    passed("classic Gaussian calibration, refused for epsilon >= 1")


@checker
def check_noisy_gradient_sum(fn, *, seed=None):
    r"""``fn(theta, X, y, clip_norm, noise_multiplier, rng)``: sum of clipped per-example gradients plus
    :math:`\mathcal N(0, (zC)^2 I)`: an independent draw in every coordinate (docs/math.md §4, §5)."""
    draw = settings(seed)
    d = 5
    theta, X, y = problem(int(draw.integers(2**31)), n=30, d=d, scale=0.5)
    X[:10] *= 5.0                                   # some gradients are clipped, some are not
    clip_norm = round(float(draw.uniform(0.3, 0.8)), 2)
    G = per_example_gradients(theta, X, y)
    expected = clip_rows(G, clip_norm).sum(axis=0)
    out = vector(call(fn, theta, X, y, clip_norm, 0.0, np.random.default_rng(0)), (d,), "the noisy gradient sum")
    if not close(out, expected):
        expect(not close(out, G.sum(axis=0)), "the gradients were not clipped: without clipping one example can "
                                              "move the sum arbitrarily far",
               more="clip each per-example gradient to norm ≤ C, then sum")
        total = G.sum(axis=0)
        expect(not close(out, total * min(1.0, clip_norm / np.linalg.norm(total))),
               "you clipped the sum, so one example can still change it by more than C",
               more="clip each example's gradient, then sum: only then does one example move the sum by at most C")
        expect(not close(out, expected / len(y)), "you returned the mean; the noise is calibrated to the sum",
               more="return the sum, whose sensitivity is C")
        expect(not close(out, np.clip(G, -clip_norm, clip_norm).sum(axis=0)),
               "you clipped coordinates (np.clip), which changes each gradient's direction",
               more="clip each gradient's L2 norm (L2_clip) instead")
        raise CheckFailed(f"with noise_multiplier = 0 and C = {clip_norm:g} expected {np.round(expected, 6)}; "
                          f"got {np.round(out, 6)}")
    z = round(float(draw.uniform(1.0, 3.0)), 1)
    first = call(fn, theta, X, y, clip_norm, z, np.random.default_rng(1))
    expect(np.array_equal(first, call(fn, theta, X, y, clip_norm, z, np.random.default_rng(1))),
           "the same rng gave two different answers: your noise does not come from the rng you are given",
           more="draw the noise with rng.normal(...), not with np.random")
    rng, n_draws = np.random.default_rng(2024), 2000
    noise = np.array([vector(call(fn, theta, X, y, clip_norm, z, rng), (d,), "the noisy gradient sum")
                      for _ in range(n_draws)]) - expected
    std = float(noise.std())                        # pooled over the coordinates: relative error about 1 %
    target = z * clip_norm
    if abs(std / target - 1.0) > 0.08:
        expect(abs(std / z - 1.0) > 0.08, "you used z alone as the noise std: it must grow with the sensitivity "
                                          "of the sum", more="the std is z · C, the noise multiplier times C")
        expect(not (np.corrcoef(noise, rowvar=False).min() > 0.99),
               "every coordinate got the same noise draw, and at the wrong scale: draw one value per coordinate, "
               "with standard deviation z · C")
        raise CheckFailed(f"the noise std must be z * C = {target:g} (z = {z:g}, C = {clip_norm:g}); yours is about "
                          f"{std:.3g}")
    expect_independent_noise(noise, target, "the noise of the released sum")
    passed("noisy gradient sum: clipped gradients + N(0, (z C)^2 I), an independent draw per coordinate")
