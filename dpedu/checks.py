r"""Checks for the course exercises: each ``check_*`` calls the student's function on the checker's own data.

A check prints ``passed: ...`` or raises ``AssertionError`` with a *teaching* hint: where a common
mistake can be recognised from its output (clipping coordinates one by one, dividing by the batch
size actually drawn, forgetting the noisy count, ...), the hint names it. Checks draw their test data
from their own ``seed`` (never from the student's random state), so a student's seed cannot make a
wrong answer pass, and the same answer always gets the same verdict. A function that still raises
the stub's ``NotImplementedError`` fails with "not written yet".

Chapter by chapter:

========  =========================================================================================
1         :func:`check_logistic_loss`, :func:`check_logistic_gradient`, :func:`check_gradient_descent`,
          :func:`check_accuracy`
2         :func:`check_sensitivities`, :func:`check_L2_clip`, :func:`check_noisy_count`,
          :func:`check_classic_noise_multiplier`, :func:`check_noisy_gradient_sum`
3         :func:`check_book_total`, :func:`check_advanced_composition`, :func:`check_zcdp_epsilon`,
          :func:`check_per_iteration_epsilon`
4         :func:`check_poisson_sample`, :func:`check_clipped_gradient_sum`, :func:`check_dp_sgd_step`,
          :func:`check_steps_and_epsilon`
5         :func:`check_log_moment`, :func:`check_epsilon_from_log_moments`, :func:`check_smallest_feasible`
6         :func:`check_proactive_noise_multiplier`, :func:`check_proactive_schedule`,
          :func:`check_closed_form_applies`
7         :func:`check_noise_std_of_average`, :func:`check_tuning_epsilon`,
          :func:`check_smallest_epsilon_reaching`
8         :func:`check_epsilon_from_rates`, :func:`check_clopper_pearson_upper`,
          :func:`check_audit_lower_bound`
========  =========================================================================================

>>> import numpy as np
>>> def my_L2_clip(v, clip_norm):
...     norm = np.linalg.norm(v, axis=-1, keepdims=True)
...     return v * np.minimum(1.0, clip_norm / np.maximum(norm, 1e-300))
>>> check_L2_clip(my_L2_clip)
passed: L2_clip scales whole vectors (and each row of a matrix) to norm <= clip_norm
>>> check_L2_clip(lambda v, clip_norm: np.clip(v, -clip_norm, clip_norm))
Traceback (most recent call last):
...
AssertionError: you clipped coordinates one by one (np.clip); that changes the direction of the vector. ...
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.special import expit, gammaln, logsumexp, xlog1py, xlogy

__all__ = [
    "check_logistic_loss",
    "check_logistic_gradient",
    "check_gradient_descent",
    "check_accuracy",
    "check_sensitivities",
    "check_L2_clip",
    "check_noisy_count",
    "check_classic_noise_multiplier",
    "check_noisy_gradient_sum",
    "check_book_total",
    "check_advanced_composition",
    "check_zcdp_epsilon",
    "check_per_iteration_epsilon",
    "check_poisson_sample",
    "check_clipped_gradient_sum",
    "check_dp_sgd_step",
    "check_steps_and_epsilon",
    "check_log_moment",
    "check_epsilon_from_log_moments",
    "check_smallest_feasible",
    "check_proactive_noise_multiplier",
    "check_proactive_schedule",
    "check_closed_form_applies",
    "check_noise_std_of_average",
    "check_tuning_epsilon",
    "check_smallest_epsilon_reaching",
]

NOT_WRITTEN = "not written yet: replace the line `raise NotImplementedError(...)` with your code"


# --- helpers ---------------------------------------------------------------------------------------


def _expect(condition, hint):
    if not condition:
        raise AssertionError(hint)


def _call(fn, *args, **kwargs):
    """fn(*args, **kwargs); a stub's NotImplementedError and any crash become a failed check."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # overflow is judged by the result, not the warning
            return fn(*args, **kwargs)
    except NotImplementedError:
        raise AssertionError(NOT_WRITTEN) from None
    except AssertionError:
        raise
    except Exception as exc:
        raise AssertionError(f"your function raised {type(exc).__name__}: {exc}") from exc


def _scalar(value, what):
    if value is None:  # an exercise that pre-sets its answers to None and was not filled in
        raise AssertionError(f"{what}: {NOT_WRITTEN}")
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise AssertionError(f"{what} must be a number; got {type(value).__name__} {value!r}") from None
    _expect(array.size == 1, f"{what} must be a single number; got an array of shape {array.shape}")
    return float(array.reshape(()))


def _vector(value, shape, what):
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise AssertionError(f"{what} must be a numpy array; got {type(value).__name__}") from None
    _expect(array.shape == shape, f"{what} must have shape {shape}; got shape {array.shape}")
    return array


def _close(a, b, rtol=1e-6, atol=1e-10):
    return bool(np.all(np.isfinite(a)) and np.allclose(a, b, rtol=rtol, atol=atol))


def _passed(what):
    print(f"passed: {what}")


def _problem(seed, n=40, d=4, scale=1.0):
    """theta, X, y for the logistic checks (labels in {-1, +1}, no score exactly 0)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    theta = scale * rng.normal(size=d)
    return theta, X, y


def _loss(theta, X, y):
    return float(np.mean(np.logaddexp(0.0, -y * (X @ theta))))


def _per_example_gradients(theta, X, y):
    return (-y * expit(-y * (X @ theta)))[:, None] * X


def _clip_rows(G, clip_norm):
    norms = np.linalg.norm(G, axis=-1, keepdims=True)
    return G * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))


# --- chapter 1: logistic regression ------------------------------------------------------------------


def check_logistic_loss(fn, *, seed=0):
    r"""``fn(theta, X, y)`` must be the mean logistic loss :math:`\frac1n\sum_i\ln(1+e^{-y_i\theta\cdot x_i})`."""
    theta, X, y = _problem(seed)
    at_zero = _scalar(_call(fn, np.zeros(X.shape[1]), X, y), "the loss")
    if not _close(at_zero, math.log(2.0)):
        _expect(not _close(at_zero, X.shape[0] * math.log(2.0)),
                "return the mean over the examples, not the sum (at theta = 0 the mean loss is ln 2)")
        raise AssertionError(f"at theta = 0 every example has loss ln(1 + e^0) = ln 2 = 0.6931; you returned {at_zero:.6g}")
    out = _scalar(_call(fn, theta, X, y), "the loss")
    expected = _loss(theta, X, y)
    if not _close(out, expected):
        margins = y * (X @ theta)
        _expect(not _close(out, expected * X.shape[0]), "return the mean over the examples, not the sum")
        _expect(not _close(out, np.mean(np.logaddexp(0.0, margins))),
                "sign: the loss is ln(1 + exp(-m)) with margin m = y * (x . theta); a confident correct "
                "prediction (large m) must have a loss near 0")
        _expect(not _close(out, np.mean(np.logaddexp(0.0, -(X @ theta)))),
                "the margin includes the label: m = y * (X @ theta)")
        raise AssertionError(f"expected the mean logistic loss {expected:.6f}; got {out:.6f}")
    big = _scalar(_call(fn, 1000.0 * theta, X, y), "the loss")
    _expect(_close(big, _loss(1000.0 * theta, X, y)),
            "for large margins np.log(1 + np.exp(-m)) overflows (exp(710) is inf in float64) and the loss becomes "
            "inf; compute ln(1 + e^{-m}) as np.logaddexp(0, -m)")
    _passed("the mean logistic loss, stable for large margins")


def check_logistic_gradient(fn, *, seed=0):
    r"""``fn(theta, X, y)`` must be the gradient of the mean loss, :math:`-\frac1n\sum_i y_i x_i\,\sigma(-m_i)`."""
    theta, X, y = _problem(seed)
    n, d = X.shape
    raw = _call(fn, theta, X, y)
    _expect(np.shape(raw) != (n, d), "return the mean over the examples (axis=0), not one gradient per example")
    out = _vector(raw, (d,), "the gradient")
    expected = _per_example_gradients(theta, X, y).mean(axis=0)
    if not _close(out, expected):
        _expect(not _close(out, -expected),
                "you returned minus the gradient (the descent direction); return the gradient itself: gradient "
                "descent subtracts it")
        _expect(not _close(out, n * expected), "return the mean over the examples, not the sum")
        wrong_sigmoid = ((-y * expit(y * (X @ theta)))[:, None] * X).mean(axis=0)
        _expect(not _close(out, wrong_sigmoid), "the weight of example i is sigmoid(-m_i), not sigmoid(m_i): "
                                                "well-classified examples (large m) must contribute little")
        raise AssertionError(f"expected {np.round(expected, 6)}; got {np.round(out, 6)}")
    big = _vector(_call(fn, 1000.0 * theta, X, y), (d,), "the gradient")
    _expect(_close(big, _per_example_gradients(1000.0 * theta, X, y).mean(axis=0)),
            "for large margins your gradient is not finite: use scipy.special.expit(-m) for the sigmoid")
    _passed("the gradient of the mean logistic loss")


def check_gradient_descent(fn, *, seed=0):
    r"""``fn(X, y, iterations, learning_rate)`` must return theta after full-batch gradient descent from 0."""
    _, X, y = _problem(seed, n=200, d=3)
    iterations, learning_rate = 5, 0.5

    def descend(steps, lr, sign=-1.0, scale=1.0):
        theta = np.zeros(X.shape[1])
        for _ in range(steps):
            theta = theta + sign * lr * scale * _per_example_gradients(theta, X, y).mean(axis=0)
        return theta

    raw = _call(fn, X, y, iterations, learning_rate)
    _expect(not hasattr(raw, "theta"), "return the parameter vector theta itself (a numpy array)")
    out = _vector(raw, (X.shape[1],), "theta")
    expected = descend(iterations, learning_rate)
    if not _close(out, expected):
        _expect(not _close(out, descend(iterations, learning_rate, sign=+1.0)),
                "you climbed the loss: step against the gradient, theta <- theta - learning_rate * gradient")
        for steps in (iterations - 1, iterations + 1):
            _expect(not _close(out, descend(steps, learning_rate)),
                    f"you took {steps} steps instead of {iterations}: one update per iteration, starting at theta = 0")
        _expect(not _close(out, descend(iterations, learning_rate, scale=X.shape[0])),
                "step with the mean gradient, not the sum (the sum makes the step n times larger)")
        _expect(_loss(out, X, y) < math.log(2.0), "the loss did not decrease from theta = 0: check the update")
        raise AssertionError(f"expected theta = {np.round(expected, 6)}; got {np.round(out, 6)} (start at zeros)")
    _passed("gradient descent from theta = 0")


def check_accuracy(fn, *, seed=0):
    r"""``fn(theta, X, y)`` must return the fraction of rows where sign(x . theta) equals the label in {-1, +1}."""
    theta, X, y = _problem(seed, n=101)
    out = _scalar(_call(fn, theta, X, y), "the accuracy")
    scores = X @ theta
    expected = float(np.mean(np.where(scores >= 0, 1.0, -1.0) == y))
    if not _close(out, expected):
        _expect(not _close(out, expected * len(y)), "return the fraction of correct predictions, not their count")
        _expect(not _close(out, np.mean((scores > 0).astype(float) == y)),
                "the labels are -1/+1 but your predictions are 0/1: predict np.where(X @ theta >= 0, 1, -1)")
        _expect(not _close(out, 1.0 - expected), "your predictions are flipped: a positive score predicts +1")
        raise AssertionError(f"expected accuracy {expected:.4f}; got {out:.4f}")
    _passed("accuracy of sign(X @ theta) against labels in {-1, +1}")


# --- chapter 2: sensitivity, clipping, noise -----------------------------------------------------------


def check_sensitivities(count, clipped_sum_add_remove, clipped_sum_replace_one, *, clip_norm):
    r"""The L2 sensitivities of a count and of a sum of vectors clipped to ``clip_norm`` (MATH.md §2, §5)."""
    count = _scalar(count, "the sensitivity of a count")
    _expect(count != 0, "adding or removing one row changes a count by exactly 1, so its sensitivity is 1")
    _expect(_close(count, 1.0), f"a count changes by at most 1 when one row is added or removed; you said {count:g}")
    add_remove = _scalar(clipped_sum_add_remove, "the add/remove sensitivity of the clipped sum")
    _expect(not _close(add_remove, 2 * clip_norm),
            "under add/remove the two sums differ by ONE clipped vector, whose norm is at most C: the sensitivity is C")
    _expect(_close(add_remove, clip_norm),
            f"under add/remove the sums differ by one clipped vector u with ||u|| <= C = {clip_norm:g}; you said "
            f"{add_remove:g}")
    replace_one = _scalar(clipped_sum_replace_one, "the replace-one sensitivity of the clipped sum")
    _expect(not _close(replace_one, clip_norm),
            "replacing one row swaps u for u'; both have norm <= C, so ||u - u'|| can reach 2C (take u' = -u)")
    _expect(_close(replace_one, 2 * clip_norm),
            f"under replace-one the difference is u - u' with ||u||, ||u'|| <= C: at most 2C = {2 * clip_norm:g}; "
            f"you said {replace_one:g}")
    _passed("sensitivities: count 1, clipped sum C (add/remove) and 2C (replace-one)")


def check_L2_clip(fn, *, seed=0):
    r"""``fn(v, clip_norm)`` must scale ``v`` (or each row of a matrix) to L2 norm at most ``clip_norm``."""
    rng = np.random.default_rng(seed)
    clip_norm = 1.0
    v = 10.0 * rng.normal(size=5)
    original = v.copy()
    out = _vector(_call(fn, v, clip_norm), v.shape, "the clipped vector")
    _expect(np.array_equal(v, original), "do not modify the input in place: return a new array (v * factor)")
    if not (np.all(np.isfinite(out)) and np.allclose(out / np.linalg.norm(out), v / np.linalg.norm(v))):
        _expect(not np.allclose(out, np.clip(v, -clip_norm, clip_norm)),
                "you clipped coordinates one by one (np.clip); that changes the direction of the vector. Scale the "
                "whole vector: v * min(1, C / ||v||)")
        raise AssertionError("clipping must keep the direction: the result must be a positive multiple of v")
    _expect(np.linalg.norm(out) <= clip_norm * (1 + 1e-9), "the clipped vector must have norm at most clip_norm")
    _expect(np.isclose(np.linalg.norm(out), clip_norm), "a vector longer than C must be scaled to norm exactly C")

    small = 0.1 * v / np.linalg.norm(v)
    out_small = _vector(_call(fn, small.copy(), clip_norm), small.shape, "the clipped vector")
    _expect(np.allclose(out_small, small),
            "a vector with norm <= C must be left unchanged: scale by min(1, C / ||v||), never up to C")
    zero = np.zeros(4)
    out_zero = _vector(_call(fn, zero, clip_norm), zero.shape, "the clipped zero vector")
    _expect(np.all(np.isfinite(out_zero)) and np.all(out_zero == 0),
            "the zero vector must stay zero (no 0/0 = nan): ||0|| <= C, so it is not scaled at all")

    rows = np.vstack([10.0 * rng.normal(size=3), 0.2 * rng.normal(size=3) / np.sqrt(3), 3.0 * rng.normal(size=3)])
    out_rows = _vector(_call(fn, rows.copy(), clip_norm), rows.shape, "the clipped matrix")
    expected_rows = _clip_rows(rows, clip_norm)
    if not np.allclose(out_rows, expected_rows):
        whole = rows * min(1.0, clip_norm / np.linalg.norm(rows))
        _expect(not np.allclose(out_rows, whole),
                "a matrix holds one vector per row (one gradient per example): clip each row separately, taking "
                "the norm along the last axis (np.linalg.norm(v, axis=-1, keepdims=True))")
        raise AssertionError("each row of a matrix must be clipped on its own to norm <= clip_norm")
    _passed("L2_clip scales whole vectors (and each row of a matrix) to norm <= clip_norm")


def _excess_kurtosis(x):
    centred = x - x.mean()
    return float(np.mean(centred**4) / np.mean(centred**2) ** 2 - 3.0)


def check_noisy_count(fn, *, seed=0):
    r"""``fn(true_count, epsilon, rng)`` must return ``true_count + Laplace(1/epsilon)`` noise drawn from ``rng``."""
    first = _scalar(_call(fn, 100, 0.5, np.random.default_rng(1)), "the noisy count")
    again = _scalar(_call(fn, 100, 0.5, np.random.default_rng(1)), "the noisy count")
    _expect(first == again, "draw the noise from the rng you are given (rng.laplace(...)), not from np.random: "
                            "the same rng must give the same answer")
    rng = np.random.default_rng(seed)
    true_count, epsilon, n_draws = 1000, 0.5, 4000
    noise = np.array([_scalar(_call(fn, true_count, epsilon, rng), "the noisy count") for _ in range(n_draws)])
    noise -= true_count
    _expect(np.std(noise) > 0, "the count must be noisy: add Laplace noise drawn from rng")
    scale = 1.0 / epsilon
    # mean of n_draws Laplace(b): standard error b * sqrt(2 / n_draws) = 0.045 here; allow 7 standard errors
    _expect(abs(noise.mean()) < 7 * scale * math.sqrt(2.0 / n_draws),
            f"the noise must be centred at 0 (the answer is unbiased); its mean is {noise.mean():.3g}")
    # Laplace has excess kurtosis 3, a Gaussian 0 (standard error of the estimate about 0.3 at 4000 draws)
    _expect(_excess_kurtosis(noise) > 1.5, "this noise is not Laplace-shaped (its tails are too light): use "
                                           "rng.laplace(0.0, scale)")
    mean_abs = float(np.mean(np.abs(noise)))     # E|Lap(b)| = b; standard error b / sqrt(n_draws)
    if abs(mean_abs / scale - 1.0) > 0.1:
        _expect(abs(mean_abs / epsilon - 1.0) > 0.1,
                "the Laplace scale is sensitivity / epsilon = 1 / epsilon; you used epsilon. A smaller epsilon "
                "(more privacy) must mean MORE noise")
        raise AssertionError(f"the Laplace scale must be 1/epsilon = {scale:g} (sensitivity 1); your noise has scale "
                             f"about {mean_abs:.3g}")
    _passed("noisy count = count + Laplace(1/epsilon), drawn from the given rng")


def _classic_z(epsilon, delta):
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def check_classic_noise_multiplier(fn):
    r"""``fn(epsilon, delta)`` must return :math:`\sqrt{2\ln(1.25/\delta)}/\varepsilon` and refuse epsilon >= 1."""
    for epsilon, delta in ((0.5, 1e-5), (0.1, 1e-6), (0.9, 1e-3)):
        out = _scalar(_call(fn, epsilon, delta), "the noise multiplier")
        expected = _classic_z(epsilon, delta)
        if not _close(out, expected):
            _expect(not _close(out, math.sqrt(2.0 * math.log(1.0 / delta)) / epsilon),
                    "the classic formula has ln(1.25 / delta), not ln(1 / delta)")
            _expect(not _close(out, 2.0 * math.log(1.25 / delta) / epsilon),
                    "take the square root: z = sqrt(2 ln(1.25/delta)) / epsilon")
            _expect(not _close(out, math.sqrt(2.0 * math.log(1.25 / delta)) * epsilon),
                    "divide by epsilon: more privacy (smaller epsilon) needs MORE noise")
            raise AssertionError(f"for epsilon={epsilon}, delta={delta} expected z = {expected:.6g}; got {out:.6g}")
    try:
        with np.errstate(all="ignore"):
            fn(2.0, 1e-5)
    except NotImplementedError:
        raise AssertionError(NOT_WRITTEN) from None
    except ValueError:
        pass
    else:
        raise AssertionError("the classic formula is proven only for 0 < epsilon < 1: for epsilon = 2 raise "
                             "ValueError (and point to the analytic Gaussian) instead of returning a number")
    _passed("classic Gaussian calibration, refused for epsilon >= 1")


def check_noisy_gradient_sum(fn, *, seed=0):
    r"""``fn(theta, X, y, clip_norm, noise_multiplier, rng)``: sum of clipped per-example gradients plus
    :math:`\mathcal N(0, (zC)^2 I)`."""
    theta, X, y = _problem(seed, n=30, d=3, scale=0.5)
    X[:10] *= 5.0                                   # some gradients are clipped, some are not
    clip_norm = 0.5
    G = _per_example_gradients(theta, X, y)
    expected = _clip_rows(G, clip_norm).sum(axis=0)
    out = _vector(_call(fn, theta, X, y, clip_norm, 0.0, np.random.default_rng(0)), (3,), "the noisy gradient sum")
    if not _close(out, expected):
        _expect(not _close(out, G.sum(axis=0)), "clip each per-example gradient to norm <= C before summing: "
                                                "without clipping one example can move the sum arbitrarily far")
        total = G.sum(axis=0)
        _expect(not _close(out, total * min(1.0, clip_norm / np.linalg.norm(total))),
                "you clipped the sum; clip each example's gradient, then sum. Only then does one example change "
                "the sum by at most C")
        _expect(not _close(out, expected / len(y)), "return the sum (sensitivity C), not the mean")
        _expect(not _close(out, np.clip(G, -clip_norm, clip_norm).sum(axis=0)),
                "you clipped coordinates (np.clip); clip each gradient's L2 norm (L2_clip) to keep its direction")
        raise AssertionError(f"with noise_multiplier = 0 expected {np.round(expected, 6)}; got {np.round(out, 6)}")
    first = _call(fn, theta, X, y, clip_norm, 2.0, np.random.default_rng(1))
    _expect(np.array_equal(first, _call(fn, theta, X, y, clip_norm, 2.0, np.random.default_rng(1))),
            "draw the noise from the rng you are given (rng.normal(...)), not from np.random")
    rng = np.random.default_rng(seed)
    z, n_draws = 2.0, 3000
    draws = np.array([_vector(_call(fn, theta, X, y, clip_norm, z, rng), (3,), "the noisy gradient sum")
                      for _ in range(n_draws)])
    noise = draws - expected
    std = float(noise.std())                        # pooled over 3 coordinates: relative error about 1 %
    target = z * clip_norm
    if abs(std / target - 1.0) > 0.08:
        _expect(abs(std / z - 1.0) > 0.08, "the noise std must be z * C (noise multiplier times the L2 "
                                           "sensitivity C); you used z alone")
        raise AssertionError(f"the noise std must be z * C = {target:g}; yours is about {std:.3g}")
    _expect(np.all(np.abs(noise.mean(axis=0)) < 5 * target / math.sqrt(n_draws)), "the noise must have mean 0")
    _passed("noisy gradient sum: clipped per-example gradients + N(0, (z C)^2 I)")


# --- chapter 3: composition --------------------------------------------------------------------------


def _pair(value, what):
    try:
        first, second = value
    except (TypeError, ValueError):
        raise AssertionError(f"{what} must be a pair (epsilon, delta); got {value!r}") from None
    return _scalar(first, f"the epsilon of {what}"), _scalar(second, f"the delta of {what}")


def check_book_total(fn):
    r"""``fn(iterations, epsilon_per_iteration, delta_per_iteration)``: the book's sequential total, ``((k+1)eps, k delta)``."""
    for k, epsilon, delta in ((10, 0.1, 1e-5), (25, 0.05, 1e-6)):
        eps_total, delta_total = _pair(_call(fn, k, epsilon, delta), "the total")
        if not _close(eps_total, (k + 1) * epsilon):
            _expect(not _close(eps_total, k * epsilon),
                    "the noisy count (n + Lap(1/epsilon), computed once) costs epsilon too: (k + 1) epsilon in total")
            raise AssertionError(f"for k={k} iterations at epsilon={epsilon} expected total epsilon "
                                 f"{(k + 1) * epsilon:g}; got {eps_total:g}")
        if not _close(delta_total, k * delta, atol=0):
            _expect(not _close(delta_total, delta, atol=0), "deltas add up too: k iterations spend k * delta")
            _expect(not _close(delta_total, (k + 1) * delta, atol=0),
                    "the Laplace count is pure epsilon-DP (delta = 0): only the k Gaussian steps spend delta")
            raise AssertionError(f"expected total delta {k * delta:g}; got {delta_total:g}")
    _passed("the book's total: ((k + 1) epsilon, k delta) by sequential composition")


def _advanced(epsilon, delta, k, delta_prime):
    return (epsilon * math.sqrt(2 * k * math.log(1 / delta_prime)) + k * epsilon * math.expm1(epsilon),
            k * delta + delta_prime)


def check_advanced_composition(fn):
    r"""``fn(epsilon, delta, k, delta_prime)`` must return :math:`(\varepsilon\sqrt{2k\ln(1/\delta')} +
    k\varepsilon(e^\varepsilon-1),\ k\delta+\delta')` (Dwork, Rothblum & Vadhan 2010)."""
    for epsilon, delta, k, delta_prime in ((1.0, 0.0, 500, 1e-5), (0.1, 1e-7, 100, 1e-5), (0.01, 1e-8, 10_000, 1e-6)):
        eps_out, delta_out = _pair(_call(fn, epsilon, delta, k, delta_prime), "the composed guarantee")
        eps_expected, delta_expected = _advanced(epsilon, delta, k, delta_prime)
        if not _close(eps_out, eps_expected):
            _expect(not _close(eps_out, 2 * epsilon * math.sqrt(2 * k * math.log(1 / delta_prime))),
                    "2 epsilon sqrt(2 k ln(1/delta')) is the simplified form from the book's plot code, not the "
                    "theorem: use epsilon sqrt(2 k ln(1/delta')) + k epsilon (e^epsilon - 1)")
            _expect(not _close(eps_out, epsilon * math.sqrt(2 * k * math.log(1 / delta_prime)) + k * epsilon**2),
                    "the second term is k epsilon (e^epsilon - 1); k epsilon^2 is only its small-epsilon "
                    "approximation, and it is smaller, so it is not a bound")
            raise AssertionError(f"for epsilon={epsilon}, k={k}, delta'={delta_prime} expected epsilon' = "
                                 f"{eps_expected:.6g}; got {eps_out:.6g}")
        if not _close(delta_out, delta_expected, atol=0):
            _expect(not _close(delta_out, delta_prime, atol=0),
                    "the total delta is k * delta + delta': each step still spends its own delta")
            raise AssertionError(f"expected total delta {delta_expected:g}; got {delta_out:g}")
    _passed("advanced composition (Dwork-Rothblum-Vadhan); note 966 > 500 for k = 500 steps of epsilon = 1")


def check_zcdp_epsilon(fn):
    r"""``fn(noise_multiplier, steps, delta)``: T Gaussian steps are :math:`\rho = T/(2z^2)`-zCDP, so
    :math:`\varepsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}` (Bun & Steinke 2016)."""
    for z, steps, delta in ((1.0, 1, 1e-5), (10.0, 100, 1e-5), (3.0, 1000, 1e-6)):
        out = _scalar(_call(fn, z, steps, delta), "epsilon")
        rho = steps / (2 * z * z)
        expected = rho + 2 * math.sqrt(rho * math.log(1 / delta))
        if not _close(out, expected):
            def eps(r):
                return r + 2 * math.sqrt(r * math.log(1 / delta))
            _expect(not _close(out, eps(steps / (z * z))), "one Gaussian step is rho = 1 / (2 z^2)-zCDP: the 1/2 is missing")
            if steps > 1:
                _expect(not _close(out, eps(1 / (2 * z * z))), "rho adds up over steps: T steps give T / (2 z^2)")
            _expect(not _close(out, rho + math.sqrt(rho * math.log(1 / delta))),
                    "the conversion is epsilon = rho + 2 sqrt(rho ln(1/delta)): the 2 is missing")
            raise AssertionError(f"for z={z}, T={steps}, delta={delta} expected epsilon {expected:.6g}; got {out:.6g}")
    _passed("zCDP: rho = T/(2 z^2), epsilon = rho + 2 sqrt(rho ln(1/delta))")


def check_per_iteration_epsilon(fn):
    r"""``fn(total_epsilon, k, delta_prime)``: the largest per-step epsilon whose k-fold advanced composition
    (with per-step delta 0) is at most ``total_epsilon`` (to 0.1 %)."""
    from scipy.optimize import brentq

    for total, k, delta_prime in ((1.0, 100, 1e-5), (5.0, 1000, 1e-6)):
        out = _scalar(_call(fn, total, k, delta_prime), "the per-iteration epsilon")
        _expect(out > 0, f"the per-iteration epsilon must be positive; got {out:g}")
        root = brentq(lambda e: _advanced(e, 0.0, k, delta_prime)[0] - total, 1e-12, total, xtol=1e-15)
        spent = _advanced(out, 0.0, k, delta_prime)[0]
        if spent > total * (1 + 1e-9):
            raise AssertionError(f"too large: with epsilon = {out:.6g} per iteration, {k} iterations cost "
                                 f"{spent:.6g} > {total:g} by advanced composition")
        if out < root * (1 - 1e-3):
            _expect(not _close(out, total / k),
                    f"total / k = {total / k:g} is the sequential split; advanced composition lets each of the {k} "
                    f"iterations spend more (about {root:.4g}): solve advanced_composition(eps, 0, k, delta') = total")
            raise AssertionError(f"valid but wasteful: {out:.6g} per iteration spends only {spent:.6g} of {total:g}; "
                                 f"the largest is {root:.6g} (find it by bisection)")
    _passed("the largest per-iteration epsilon under advanced composition")


# --- chapter 4: DP-SGD ---------------------------------------------------------------------------------


def _indices(value, n, what="the sample"):
    array = np.asarray(value)
    _expect(not (array.dtype == bool and array.shape == (n,)),
            "return the indices of the sampled records (np.flatnonzero(mask)), not the boolean mask")
    _expect(array.ndim == 1, f"{what} must be a 1-D array of indices; got shape {array.shape}")
    _expect(array.size == 0 or np.issubdtype(array.dtype, np.integer),
            f"{what} must hold integer indices; got dtype {array.dtype}")
    _expect(np.all((array >= 0) & (array < n)), f"indices must be in 0 .. n-1 = {n - 1}")
    return array


def check_poisson_sample(fn, *, seed=0):
    r"""``fn(n, sampling_rate, rng)`` must return the indices of a Poisson sample: each record joins
    independently with probability q (MATH.md §8)."""
    first = _indices(_call(fn, 1000, 0.05, np.random.default_rng(1)), 1000)
    _expect(np.array_equal(first, _indices(_call(fn, 1000, 0.05, np.random.default_rng(1)), 1000)),
            "draw from the rng you are given (rng.random(n) < q), not from np.random")
    rng = np.random.default_rng(seed)
    n, q, n_draws = 1000, 0.05, 400
    samples = [_indices(_call(fn, n, q, rng), n) for _ in range(n_draws)]
    _expect(all(len(np.unique(s)) == len(s) for s in samples),
            "a record appears twice in one batch: that is sampling with replacement. Each record is in or out")
    sizes = np.array([len(s) for s in samples])
    _expect(sizes.std() > 0, f"every batch has {sizes[0]} records: a fixed batch size is not Poisson sampling. Each "
                             "record joins independently with probability q, so the batch size varies "
                             "(Binomial(n, q))")
    # |B| ~ Binomial(1000, 0.05): mean 50 (standard error of the average 0.34), variance 47.5
    _expect(abs(sizes.mean() - n * q) < 2.5, f"the expected batch size is q n = {n * q:g}; yours average "
                                             f"{sizes.mean():.3g}")
    _expect(30 < sizes.var() < 70, f"batch sizes must vary like Binomial(n, q) (variance n q (1 - q) = "
                                   f"{n * q * (1 - q):.3g}); yours have variance {sizes.var():.3g}")
    counts = np.bincount(np.concatenate(samples), minlength=n)
    halves = counts[: n // 2].sum(), counts[n // 2 :].sum()
    _expect(abs(halves[0] - halves[1]) < 0.1 * sum(halves), "every record must have the same chance q to be sampled")
    tiny = [_indices(_call(fn, 10, 0.01, rng), 10) for _ in range(200)]
    _expect(any(len(s) == 0 for s in tiny),
            "with n = 10 and q = 0.01 about 90 % of Poisson batches are empty, yours never are: an empty batch is "
            "a normal step. Never resample or force a record in")
    _passed("Poisson sampling: independent inclusions, varying (possibly empty) batches")


def check_clipped_gradient_sum(fn, *, seed=0):
    r"""``fn(per_example_gradients, clip_norm)``: :math:`\sum_i \mathrm{L2\_clip}(g_i, C)` over the rows."""
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(20, 4)) * rng.choice([0.05, 3.0], size=(20, 1))
    clip_norm = 2.0  # above the batch mean's norm (about 1.7), so "clipped the mean" differs from "clipped the sum"
    expected = _clip_rows(G, clip_norm).sum(axis=0)
    out = _vector(_call(fn, G.copy(), clip_norm), (4,), "the clipped sum")
    if not _close(out, expected):
        total = G.sum(axis=0)
        _expect(not _close(out, total * min(1.0, clip_norm / np.linalg.norm(total))),
                "you clipped the sum of the batch; clip each example's gradient (each row), then sum: the "
                "sensitivity C comes from each example's contribution having norm <= C")
        mean = G.mean(axis=0)
        _expect(not _close(out, mean * min(1.0, clip_norm / np.linalg.norm(mean))),
                "you clipped the mean gradient of the batch; clip each example's gradient (each row), then sum")
        _expect(not _close(out, total), "clip each row to norm <= C before summing")
        _expect(not _close(out, expected / len(G)), "return the sum of the clipped rows, not their mean")
        _expect(not _close(out, np.clip(G, -clip_norm, clip_norm).sum(axis=0)),
                "you clipped coordinates one by one; that changes each gradient's direction: clip L2 norms")
        raise AssertionError(f"expected {np.round(expected, 6)}; got {np.round(out, 6)}")
    empty = _call(fn, np.zeros((0, 4)), clip_norm)
    _expect(np.shape(empty) == (4,) and np.all(np.asarray(empty) == 0),
            "an empty batch (possible under Poisson sampling) has clipped sum zero: return np.zeros(d)")
    _passed("per-example clipping, then the sum")


def check_dp_sgd_step(fn, *, seed=0):
    r"""``fn(theta, X_batch, y_batch, *, clip_norm, noise_multiplier, expected_batch_size, learning_rate, rng)``:

    .. math:: \theta - \frac{\eta}{qn}\Big(\sum_{i\in B}\mathrm{L2\_clip}(\nabla\ell(\theta; x_i, y_i), C)
              + \mathcal N(0, z^2C^2 I)\Big)
    """
    theta, X, y = _problem(seed, n=37, d=3, scale=0.5)
    X[:12] *= 6.0
    clip_norm, expected_batch_size, learning_rate = 0.5, 50.0, 2.0
    kwargs = dict(clip_norm=clip_norm, expected_batch_size=expected_batch_size, learning_rate=learning_rate)
    G = _per_example_gradients(theta, X, y)
    clipped_sum = _clip_rows(G, clip_norm).sum(axis=0)
    expected = theta - learning_rate * clipped_sum / expected_batch_size
    out = _vector(_call(fn, theta.copy(), X, y, noise_multiplier=0.0, rng=np.random.default_rng(0), **kwargs),
                  theta.shape, "the new theta")
    if not _close(out, expected):
        _expect(not _close(out, theta - learning_rate * clipped_sum / len(y)),
                f"you divided by the batch size actually drawn (|B| = {len(y)}); divide by the expected batch size "
                f"q n = {expected_batch_size:g}: |B| depends on whether a record was sampled, and is not noised")
        _expect(not _close(out, theta + learning_rate * clipped_sum / expected_batch_size),
                "step against the gradient: theta - learning_rate * noisy average")
        _expect(not _close(out, theta - learning_rate * G.sum(axis=0) / expected_batch_size),
                "clip each per-example gradient to norm <= C before summing")
        total = G.sum(axis=0)
        _expect(not _close(out, theta - learning_rate * total * min(1.0, clip_norm / np.linalg.norm(total))
                           / expected_batch_size),
                "you clipped the batch gradient; clip each example's gradient, then sum")
        raise AssertionError(f"with noise_multiplier = 0 expected {np.round(expected, 6)}; got {np.round(out, 6)}")
    empty = _vector(_call(fn, theta.copy(), X[:0], y[:0], noise_multiplier=0.0, rng=np.random.default_rng(0),
                          **kwargs), theta.shape, "the new theta")
    _expect(np.allclose(empty, theta), "an empty batch has clipped sum 0: without noise theta must not move "
                                       "(and with noise the step is pure noise)")
    rng = np.random.default_rng(seed)
    z, n_draws = 1.5, 2000
    draws = np.array([_vector(_call(fn, theta.copy(), X, y, noise_multiplier=z, rng=rng, **kwargs), theta.shape,
                              "the new theta") for _ in range(n_draws)])
    std = float((draws - expected).std())          # pooled over 3 coordinates: relative error about 1 %
    target = learning_rate * z * clip_norm / expected_batch_size
    if abs(std / target - 1.0) > 0.08:
        _expect(abs(std / (target / clip_norm) - 1.0) > 0.08,
                "the noise added to the clipped sum has std z * C (you used z alone)")
        raise AssertionError(f"the noise in theta must have std learning_rate * z * C / (q n) = {target:.4g}; yours "
                             f"has {std:.4g}")
    _expect(np.all(np.abs((draws - expected).mean(axis=0)) < 5 * target / math.sqrt(n_draws)),
            "the noise must have mean 0")
    empty_noisy = _vector(_call(fn, theta.copy(), X[:0], y[:0], noise_multiplier=z, rng=np.random.default_rng(2),
                                **kwargs), theta.shape, "the new theta")
    _expect(not np.allclose(empty_noisy, theta), "an empty batch is still a step: it must release noise (the "
                                                 "accountant counts it)")
    _passed("one DP-SGD step: clip, sum, noise z C, divide by the expected batch size")


def check_steps_and_epsilon(fn):
    r"""``fn(epochs, sampling_rate, noise_multiplier, delta)`` -> ``(steps, epsilon)`` by the RDP accountant."""
    from .accountants import GaussianEvent, SubsampledGaussianEvent, make_accountant

    def rdp(event, steps):
        return make_accountant("rdp").compose(event, steps).get_epsilon(1e-5)

    raw = _call(fn, 100, 0.01, 4.0, 1e-5)
    try:
        steps, epsilon = raw
    except (TypeError, ValueError):
        raise AssertionError(f"return a pair (steps, epsilon); got {raw!r}") from None
    steps = _scalar(steps, "steps")
    _expect(steps != 100, "one epoch is 1/q steps in expectation: 100 epochs at q = 0.01 are 10,000 steps")
    _expect(steps == 10_000, f"steps = epochs / q = 10,000; got {steps:g}")
    epsilon = _scalar(epsilon, "epsilon")
    event = SubsampledGaussianEvent(4.0, 0.01)
    expected = rdp(event, 10_000)
    if not _close(epsilon, expected, rtol=1e-4):
        _expect(not _close(epsilon, rdp(event, 1), rtol=1e-4), "that is the epsilon of one step: compose all T steps "
                                                              "(acc.compose(event, steps))")
        _expect(not _close(epsilon, rdp(GaussianEvent(4.0), 10_000), rtol=1e-4),
                "each step sees a Poisson sample: account SubsampledGaussianEvent(z, q), not GaussianEvent(z)")
        for other in ("moments", "pld"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = make_accountant(other).compose(event, 10_000).get_epsilon(1e-5)
            _expect(not _close(epsilon, value, rtol=1e-3), f"that is the {other!r} accountant's epsilon; use the RDP "
                                                          "accountant: make_accountant('rdp')")
        raise AssertionError(f"expected epsilon {expected:.4f} (RDP, 10,000 subsampled steps); got {epsilon:.4f}")
    _passed("steps = epochs / q, epsilon by the RDP accountant (1.0355 for Abadi et al.'s setting)")


# --- chapter 5: the moments accountant ------------------------------------------------------------------


def _log_moment(q, z, lam, a=None):
    a = lam + 1 if a is None else a
    j = np.arange(a + 1)
    log_binom = gammaln(a + 1) - gammaln(j + 1) - gammaln(a - j + 1)
    # xlog1py / xlogy give 0 * log(0) = 0, so q = 1 (every j < a has weight 0) needs no special case
    log_terms = log_binom + xlog1py(a - j, -q) + xlogy(j, q) + (j * j - j) / (2 * z * z)
    return float(logsumexp(log_terms))


def check_log_moment(fn):
    r"""``fn(sampling_rate, noise_multiplier, moment_order)``: Abadi et al.'s log-moment of one sampled Gaussian
    step, :math:`\alpha(\lambda)=\ln\sum_{j=0}^{\lambda+1}\binom{\lambda+1}{j}(1-q)^{\lambda+1-j}q^j e^{(j^2-j)/(2z^2)}`."""
    for q, z, lam in ((0.01, 4.0, 1), (0.01, 4.0, 19), (0.05, 1.0, 32), (1.0, 2.0, 3)):
        out = _scalar(_call(fn, q, z, lam), "the log-moment")
        expected = _log_moment(q, z, lam)
        if not _close(out, expected, rtol=1e-6, atol=1e-12):
            _expect(not _close(out, _log_moment(q, z, lam, a=lam), rtol=1e-6, atol=1e-12),
                    "off by one: the sum runs over j = 0 .. lambda + 1 (binomial coefficients of lambda + 1)")
            _expect(not _close(out, math.exp(expected), rtol=1e-6, atol=1e-12),
                    "return the log-moment alpha(lambda), the logarithm of the sum")
            raise AssertionError(f"for q={q}, z={z}, lambda={lam} expected {expected:.8g}; got {out:.8g}")
    out = _scalar(_call(fn, 0.01, 0.8, 256), "the log-moment")
    _expect(_close(out, _log_moment(0.01, 0.8, 256), rtol=1e-6),
            "for lambda = 256 and z = 0.8 the terms overflow float64 (exp(j^2 / (2 z^2)) is about e^50000): add "
            "them in log space (scipy.special.gammaln for the binomials, scipy.special.logsumexp for the sum)")
    _passed("the sampled Gaussian's log-moment, in log space")


def check_epsilon_from_log_moments(fn):
    r"""``fn(moment_orders, log_moments, delta)``: the tail bound :math:`\varepsilon=\min_\lambda(\alpha(\lambda)+\ln(1/\delta))/\lambda`."""
    from .accountants.moments import MomentsAccountant
    from .accountants import SubsampledGaussianEvent

    acc = MomentsAccountant().compose(SubsampledGaussianEvent(4.0, 0.01), 10_000)
    lambdas, alpha = acc.log_moments()
    # from lambda = 2: at lambda = 1 dividing by lambda changes nothing, and "forgot to divide" would look like "max"
    lambdas, alpha = lambdas[1:], alpha[1:]
    for delta in (1e-5, 1e-8):
        out = _scalar(_call(fn, lambdas.copy(), alpha.copy(), delta), "epsilon")
        candidates = (alpha + math.log(1 / delta)) / lambdas
        expected = float(candidates.min())
        if not _close(out, expected):
            _expect(not _close(out, candidates.max()), "every lambda gives a valid epsilon: take the smallest (min), "
                                                       "not the largest")
            _expect(not _close(out, float(np.min(alpha + math.log(1 / delta)))),
                    "divide by lambda: epsilon = (alpha(lambda) + ln(1/delta)) / lambda")
            _expect(not _close(out, float(np.min((alpha + math.log(delta)) / lambdas))),
                    "sign: ln(1/delta) = -ln(delta) is positive")
            _expect(not _close(out, lambdas[np.argmin(candidates)]), "return epsilon, not the best lambda")
            raise AssertionError(f"for delta={delta} expected epsilon {expected:.6g}; got {out:.6g}")
    _passed("the tail bound: epsilon = min over lambda of (alpha + ln(1/delta)) / lambda (1.2586 at 100 epochs)")


def check_smallest_feasible(fn):
    r"""``fn(epsilon_of, target, lo, hi, rtol)``: bisection for the smallest z with ``epsilon_of(z) <= target``,
    returning the **feasible** end of the final bracket (MATH.md §17)."""
    from .accountants import SubsampledGaussianEvent, make_accountant

    def inverse(z):
        return 10.0 / z

    def rdp(z):
        return make_accountant("rdp").compose(SubsampledGaussianEvent(z, 0.01), 10_000).get_epsilon(1e-5)

    for epsilon_of, target, lo, hi, root in ((inverse, 3.0, 0.5, 100.0, 10.0 / 3.0), (rdp, 1.0, 0.5, 20.0, None)):
        out = _scalar(_call(fn, epsilon_of, target, lo, hi, 1e-4), "the noise multiplier")
        spent = epsilon_of(out)
        _expect(spent <= target, f"the returned z = {out:.6g} gives epsilon {spent:.6g} > target {target:g}: you "
                                 "returned the midpoint or the infeasible end. Return hi, the end of the bracket that "
                                 "meets the target (Opacus once overshot by 0.5 this way, opacus#346)")
        if root is not None:
            _expect(out <= root * (1 + 2e-4), f"valid but too much noise: {out:.6g} is more than rtol above the "
                                              f"smallest feasible z = {root:.6g}; keep bisecting until hi - lo <= rtol * hi")
        else:
            _expect(epsilon_of(out * (1 - 2e-4)) > target, "valid but too much noise: keep bisecting until "
                                                           "hi - lo <= rtol * hi")
    _passed("bisection that never overshoots the target")


# --- chapter 6: pro-active DP -------------------------------------------------------------------------------


def _proactive_z(epsilon, delta):
    return math.sqrt(2.0 * (epsilon + math.log(1.0 / delta)) / epsilon)


def check_proactive_noise_multiplier(fn):
    r"""``fn(epsilon, delta)``: the pro-active closed form :math:`z = \sqrt{2(\varepsilon+\ln(1/\delta))/\varepsilon}`."""
    for epsilon, delta in ((0.5, 1 / 60_000), (0.25, 1e-6)):
        out = _scalar(_call(fn, epsilon, delta), "the noise multiplier")
        expected = _proactive_z(epsilon, delta)
        if not _close(out, expected):
            _expect(not _close(out, _classic_z(epsilon, delta)),
                    "that is the classic calibration of ONE Gaussian release; the pro-active z for the whole run is "
                    "sqrt(2 (epsilon + ln(1/delta)) / epsilon)")
            _expect(not _close(out, 2.0 * (epsilon + math.log(1.0 / delta)) / epsilon), "take the square root")
            _expect(not _close(out, math.sqrt(2.0 * math.log(1.0 / delta) / epsilon)),
                    "the numerator is epsilon + ln(1/delta), not ln(1/delta) alone")
            raise AssertionError(f"for epsilon={epsilon}, delta={delta:.4g} expected z = {expected:.6g}; got {out:.6g}")
    _passed("pro-active z = sqrt(2 (epsilon + ln(1/delta)) / epsilon): no T in it")


def check_proactive_schedule(fn):
    r"""``fn(epsilon, dataset_size, epochs)`` -> ``(steps, sampling_rate, expected_batch_size)`` with
    :math:`T=\lceil 2k^2/\varepsilon\rceil`, :math:`q = k/T`, :math:`s = kN/T`."""
    for epsilon, n, k in ((0.5, 60_000, 5), (0.3, 10**6, 5)):
        raw = _call(fn, epsilon, n, k)
        try:
            steps, q, s = raw
        except (TypeError, ValueError):
            raise AssertionError(f"return a triple (steps, sampling_rate, expected_batch_size); got {raw!r}") from None
        exact = 2 * k * k / epsilon
        expected_steps = math.ceil(exact - 1e-9)
        _expect(float(steps) == int(float(steps)), f"T is a number of steps: a whole number (round 2k^2/epsilon = "
                                                   f"{exact:g} UP with math.ceil); got {steps!r}")
        _expect(int(steps) >= exact - 1e-9, f"T = {int(steps)} < 2k^2/epsilon = {exact:g}: round up, not down "
                                            "(the condition T >= 2k^2/epsilon must hold)")
        _expect(int(steps) == expected_steps, f"the smallest admissible T is ceil(2 k^2 / epsilon) = {expected_steps}; "
                                              f"got {steps}")
        q = _scalar(q, "the sampling rate")
        _expect(not _close(q, 1.0 / expected_steps), "q = k / T: k epochs of 1/q steps each make T steps")
        _expect(_close(q, k / expected_steps), f"q = k / T = {k / expected_steps:.6g}; got {q:.6g}")
        s = _scalar(s, "the expected batch size")
        _expect(not _close(s, n / expected_steps), "s = k N / T = q N (k epochs of N examples over T steps)")
        _expect(_close(s, k * n / expected_steps), f"s = k N / T = {k * n / expected_steps:.6g}; got {s:.6g}")
    _passed("T = ceil(2 k^2 / epsilon), q = k / T, s = k N / T")


def check_closed_form_applies(fn):
    r"""``fn(epsilon, dataset_size, epochs, steps)`` -> whether every condition of the closed form holds
    (delta = 1/N): epsilon <= 1/2, T >= 2k^2/epsilon, (2/e)^2 k^2 - 1/2 >= ln N (and q z <= 1/e)."""
    from .proactive import proactive_conditions

    cases = (
        ((0.5, 60_000, 5, 100), "the headline plan"),
        ((0.5, 60_000, 5, 25), "T = 25 < 2 k^2 / epsilon = 100 (the condition fails by a factor 4, where the "
                               "paper says the guarantee breaks)"),
        ((0.6, 60_000, 5, 200), "epsilon = 0.6 > 1/2: the closed form is proven for epsilon <= 1/2 only"),
        ((0.5, 60_000, 3, 36), "k = 3 epochs: (2/e)^2 k^2 - 1/2 = 4.4 < ln N = 11.0"),
        ((0.5, 60_000, 5, 1000), "T = 1000 >= 100: any T above 2 k^2 / epsilon keeps the guarantee"),
        ((0.25, 60_000, 5, 200), "epsilon = 0.25, T = 200 = 2 k^2 / epsilon"),
    )
    for (epsilon, n, k, steps), why in cases:
        expected = proactive_conditions(epsilon=epsilon, delta=1.0 / n, dataset_size=n, epochs=k, steps=steps).all_hold
        out = _call(fn, epsilon, n, k, steps)
        _expect(isinstance(out, (bool, np.bool_)), f"return True or False; got {out!r}")
        _expect(bool(out) == expected, f"epsilon={epsilon}, N={n}, k={k}, T={steps}: the closed form "
                                       f"{'applies' if expected else 'does NOT apply'} ({why})")
    _passed("the closed form's conditions, checked before trusting it")


# --- chapter 7: the effect of noise ----------------------------------------------------------------------


def check_noise_std_of_average(fn):
    r"""``fn(noise_multiplier, clip_norm, sampling_rate, dataset_size)``: std of the noise in DP-SGD's average
    gradient, :math:`zC/(qn)`."""
    for z, c, q, n in ((1.0, 0.5, 0.05, 30_162), (4.0, 2.0, 0.01, 60_000)):
        out = _scalar(_call(fn, z, c, q, n), "the noise std")
        expected = z * c / (q * n)
        if not _close(out, expected):
            _expect(not _close(out, z / (q * n)), "the noise on the clipped sum has std z * C: multiply by C")
            _expect(not _close(out, z * c / n), "the average divides by the expected batch size q n, not by n")
            _expect(not _close(out, z * c), "that is the noise on the SUM; the average divides it by q n")
            raise AssertionError(f"expected z C / (q n) = {expected:.6g}; got {out:.6g}")
    _passed("noise std of the average gradient = z C / (q n): larger batches average the noise away")


def check_tuning_epsilon(fn):
    r"""``fn(noise_multiplier, sampling_rate, steps, n_runs, delta)``: total epsilon (RDP) of ``n_runs`` training
    runs on the same data, e.g. a hyper-parameter search."""
    from .accountants import SubsampledGaussianEvent, make_accountant

    z, q, steps, runs, delta = 1.0, 0.05, 640, 10, 1e-5
    event = SubsampledGaussianEvent(z, q)
    out = _scalar(_call(fn, z, q, steps, runs, delta), "epsilon")
    expected = make_accountant("rdp").compose(event, steps * runs).get_epsilon(delta)
    if not _close(out, expected, rtol=1e-4):
        one = make_accountant("rdp").compose(event, steps).get_epsilon(delta)
        _expect(not _close(out, one, rtol=1e-4), f"that is one run ({one:.3g}); every run of the search trains on the "
                                                "same data, so all of them are composed")
        _expect(not _close(out, runs * one, rtol=1e-4),
                f"{runs} x {one:.3g} = {runs * one:.3g} is valid (sequential composition) but loose: compose all "
                f"{runs} x {steps} steps in ONE RDP accountant and convert once")
        raise AssertionError(f"expected {expected:.4f} (RDP, {runs} runs of {steps} steps); got {out:.4f}")
    _passed("a search over 10 runs costs about 3 times one run by RDP, not 10 times")


def check_smallest_epsilon_reaching(fn, *, seed=0):
    r"""``fn(epsilons, accuracies, target)``: the smallest epsilon whose **mean** accuracy over seeds (axis 1) is at
    least ``target``; ``math.inf`` if none is."""
    rng = np.random.default_rng(seed)
    epsilons = np.array([1.0, 0.1, 10.0, 0.3, 3.0])                    # deliberately not sorted
    means = np.array([0.82, 0.76, 0.84, 0.79, 0.83])
    accuracies = means[:, None] + rng.normal(0, 0.005, size=(5, 4))
    accuracies -= accuracies.mean(axis=1, keepdims=True) - means[:, None]   # exact means, some spread
    accuracies[3] = [0.83, 0.78, 0.775, 0.775]                           # one lucky seed at epsilon = 0.3; mean 0.79
    for target, expected in ((0.825, 3.0), (0.8, 1.0), (0.75, 0.1), (0.9, math.inf)):
        out = _scalar(_call(fn, epsilons.copy(), accuracies.copy(), target), "epsilon")
        if out != expected:
            mean_sorted_first = next((e for e, m in zip(epsilons, accuracies.mean(axis=1)) if m >= target), math.inf)
            best_seed = min((e for e, a in zip(epsilons, accuracies.max(axis=1)) if a >= target), default=math.inf)
            _expect(not (out == best_seed != expected), "a single lucky seed at epsilon = 0.3 reaches 0.83; use the "
                                                        "MEAN over seeds (axis=1), not the best seed")
            _expect(out != mean_sorted_first, "the epsilons are not sorted: take the smallest qualifying epsilon, "
                                              "not the first one in the list")
            _expect(not (target == 0.9 and math.isnan(out)), "when no epsilon reaches the target return math.inf")
            raise AssertionError(f"for target {target} expected {expected}; got {out}")
    _passed("the smallest epsilon whose mean accuracy reaches the target")


# --- chapter 8: auditing -----------------------------------------------------------------------------

__all__ += ["check_epsilon_from_rates", "check_clopper_pearson_upper", "check_audit_lower_bound"]


def _rates_epsilon(fpr, fnr, delta):
    """max(0, ln((1-delta-fpr)/fnr), ln((1-delta-fnr)/fpr)) for positive rates (Kairouz, Oh, Viswanath 2015)."""
    terms = [0.0]
    for a, b in ((fpr, fnr), (fnr, fpr)):
        if 1.0 - delta - a > 0:
            terms.append(math.log((1.0 - delta - a) / b))
    return max(terms)


def check_epsilon_from_rates(fn):
    r"""``fn(fpr, fnr, delta)``: the smallest epsilon an (epsilon, delta)-DP mechanism needs to allow a test with
    these (positive) rates, :math:`\max(0, \ln\frac{1-\delta-\mathrm{FPR}}{\mathrm{FNR}},
    \ln\frac{1-\delta-\mathrm{FNR}}{\mathrm{FPR}})`."""
    cases = [(0.3, 0.05, 1e-5), (0.05, 0.3, 1e-5), (0.01, 0.5, 0.0), (0.2, 0.02, 0.1), (0.6, 0.6, 0.0),
             (0.45, 0.5, 0.01)]
    for fpr, fnr, delta in cases:
        out = _scalar(_call(fn, fpr, fnr, delta), "epsilon")
        expected = _rates_epsilon(fpr, fnr, delta)
        if _close(out, expected, rtol=1e-9):
            continue
        one_way = [math.log((1.0 - delta - a) / b) for a, b in ((fpr, fnr), (fnr, fpr))]
        _expect(not any(_close(out, v, rtol=1e-9) for v in one_way if v > 0),
                f"at FPR = {fpr}, FNR = {fnr} the other inequality is the binding one: DP constrains both "
                "FPR + e^eps FNR >= 1 - delta and FNR + e^eps FPR >= 1 - delta (the test can be flipped), so take "
                "the max of the two logarithms")
        _expect(not (expected == 0.0 and out < 0), "a test no better than guessing proves nothing: clamp at 0 "
                                                   "(epsilon is never negative)")
        _expect(not _close(out, _rates_epsilon(fpr, fnr, 0.0), rtol=1e-9),
                f"with delta = {delta} you must subtract delta: (1 - delta - FPR) / FNR; delta is the probability "
                "the guarantee may fail, so it buys the attacker that much")
        raise AssertionError(f"for FPR = {fpr}, FNR = {fnr}, delta = {delta} expected {expected:.6f}; got {out:.6f}")
    _passed("epsilon from the false-positive and false-negative rates (both directions, clamped at 0)")


def check_clopper_pearson_upper(fn):
    r"""``fn(k, n, confidence)``: the one-sided Clopper-Pearson upper bound on a binomial proportion,
    ``scipy.stats.beta.ppf(confidence, k + 1, n - k)`` (and 1 when k = n)."""
    from scipy.stats import beta

    def reference(k, n, confidence):
        return 1.0 if k == n else float(beta.ppf(confidence, k + 1, n - k))

    for k, n, confidence in ((3, 20, 0.95), (0, 10, 0.95), (5, 10, 0.95), (40, 400, 0.99), (7, 7, 0.9)):
        out = _scalar(_call(fn, k, n, confidence), "the upper bound")
        expected = reference(k, n, confidence)
        if _close(out, expected, rtol=1e-7):
            continue
        _expect(not (k == n and not np.isfinite(out)),
                "when every trial succeeded (k = n) the upper bound is 1: beta.ppf with b = n - k = 0 is not defined")
        if k < n:
            _expect(not _close(out, float(beta.ppf(1 - (1 - confidence) / 2, k + 1, n - k)), rtol=1e-7),
                    "that is the upper end of the TWO-sided interval (alpha/2 in each tail); the audit needs a "
                    "one-sided bound: beta.ppf(confidence, k + 1, n - k)")
            _expect(not _close(out, float(beta.ppf(confidence, k, n - k + 1)), rtol=1e-7) or k == 0,
                    "the upper bound uses Beta(k + 1, n - k); Beta(k, n - k + 1) belongs to the lower bound")
        p_hat = k / n
        wald = p_hat + 1.6448536269514722 * math.sqrt(p_hat * (1 - p_hat) / n)
        _expect(not _close(out, wald, rtol=1e-3) and not (k == 0 and out == 0),
                "the normal-approximation (Wald) interval collapses to 0 when k = 0, exactly the case an audit "
                "cares about; use the exact Beta quantile (Clopper & Pearson 1934)")
        raise AssertionError(f"for k = {k}, n = {n}, confidence {confidence} expected {expected:.6f}; got {out:.6f}")
    _passed("one-sided Clopper-Pearson upper bounds (exact Beta quantiles)")


def check_audit_lower_bound(fn):
    r"""``fn(false_positives, n_out, false_negatives, n_in, delta, confidence)``: the audit's lower bound on
    epsilon, valid with probability ``confidence``: Clopper-Pearson upper bounds on FPR and FNR, each at level
    1 - (1 - confidence)/2 (both must hold at once), put into the epsilon-from-rates formula."""
    from .audit import _epsilon_from_rates, clopper_pearson, epsilon_lower_bound

    def variant(fp, n_out, fn_, n_in, delta, level):
        return float(_epsilon_from_rates(clopper_pearson(fp, n_out, confidence=level),
                                         clopper_pearson(fn_, n_in, confidence=level), delta))

    for fp, n_out, fn_, n_in, delta, confidence in ((3, 500, 120, 500, 1e-5, 0.95), (0, 200, 0, 200, 1e-5, 0.95),
                                                    (10, 300, 5, 300, 1e-3, 0.9), (150, 300, 140, 300, 1e-5, 0.95)):
        out = _scalar(_call(fn, fp, n_out, fn_, n_in, delta, confidence), "epsilon")
        expected = epsilon_lower_bound(false_positives=fp, n_out=n_out, false_negatives=fn_, n_in=n_in, delta=delta,
                                       confidence=confidence)
        if _close(out, expected, rtol=1e-7):
            continue
        _expect(not _close(out, variant(fp, n_out, fn_, n_in, delta, confidence), rtol=1e-7),
                "both upper bounds must hold at the same time, so each gets half the error probability "
                "(Bonferroni): compute them at confidence 1 - (1 - confidence) / 2")
        if fp > 0 and fn_ > 0:
            point = _rates_epsilon(fp / n_out, fn_ / n_in, delta)
            _expect(not _close(out, point, rtol=1e-7),
                    "you used the observed rates; they are estimates and could be lucky. Replace each by its "
                    "Clopper-Pearson UPPER bound, which makes epsilon smaller: a lower bound must err low")
        _expect(not (fp == 0 and fn_ == 0 and not np.isfinite(out)),
                "zero observed errors must not give epsilon = inf: with finitely many runs the upper bounds on the "
                "rates are positive (about ln(2/alpha)/n)")
        raise AssertionError(f"for FP = {fp}/{n_out}, FN = {fn_}/{n_in}, delta = {delta}, confidence {confidence} "
                             f"expected {expected:.6f}; got {out:.6f}")
    _passed("an audit lower bound that holds with the stated confidence")

# chapter 8, white-box and one-run audits (written in dpedu/checks_ch08_new.py; the integrator moves them here)
from .checks_ch08_new import check_epsilon_from_gdp, check_gaussian_shift_lower_bound, check_one_run_bound  # noqa: E402,F401
