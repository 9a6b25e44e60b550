r"""The linear-loss last iterate as a :class:`~.losses.LossModel`: a binomial mixture of Gaussians (docs/math.md §28.2).

In units of C, with :math:`\sigma = z\sqrt T` and :math:`b_k = \binom Tk q^k(1-q)^{T-k}`
(:class:`~dpedu.ground.events_last_iterate.LinearLastIterateEvent`):

* **remove**: :math:`P = \sum_k b_k\,\mathcal N(k, \sigma^2)`, :math:`Q = \mathcal N(0, \sigma^2)`, loss
  :math:`L(x) = \ln\sum_k b_k e^{(2kx - k^2)/(2\sigma^2)}`, a log-sum-exp of lines in x: increasing and convex;
* **add**: :math:`P = \mathcal N(0, \sigma^2)`, :math:`Q` the mixture; with :math:`y = -x` the loss
  :math:`-\ln\sum_k b_k e^{(-2ky - k^2)/(2\sigma^2)}` increases in y.

Only the components with k in a window holding all but ``tail`` of the binomial's mass on each side are kept. A
dropped component of P goes to the mass at :math:`+\infty` (remove); a dropped component of Q is simply left out
(add), which only lowers Q. Both can only raise :math:`\delta(\varepsilon)`: pessimistic. Each bin's P-mass and Q-mass
are sums of normal CDFs (survival functions in the upper half), so connect the dots is exact per bin; the loss is
inverted by Newton's method from the right, which for a convex increasing function never overshoots.

>>> from dpedu.ground.events_last_iterate import LinearLastIterateEvent
>>> model = last_iterate_loss_model(LinearLastIterateEvent(1.0, 0.01, 100), "remove", 1e-12)
>>> x = np.array([-3.0, 0.0, 4.0])
>>> bool(np.allclose(model.preimage(model.loss(x)), x))
True
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp, ndtr, ndtri
from scipy.stats import binom

from .losses import LossModel

__all__ = ["binomial_window", "last_iterate_loss_model", "MAX_COMPONENTS"]

#: The most binomial components a model keeps (T <= 10^6 keeps far fewer: the window is about 15 sqrt(T q) wide).
MAX_COMPONENTS = 2**16
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_CHUNK = 2**21            # entries of one (edges x components) block: bounds the memory of a mass computation


def binomial_window(steps, sampling_rate, tail):
    """``(k, log b_k, dropped)``: the integers k of the window holding all but at most ``tail`` of Bin(T, q)'s mass
    on each side, their log-probabilities, and the mass left outside (at most 2 ``tail``).

    The tails are summed from the pmf itself, from each end inwards (small terms first, so the tail masses keep their
    relative precision): scipy's ``binom.isf`` returns T for tails below about 1e-16.
    """
    pmf = binom.pmf(np.arange(steps + 1), steps, sampling_rate)
    left, right = np.cumsum(pmf), np.cumsum(pmf[::-1])[::-1]           # P[K <= k], P[K >= k]
    low = int(np.searchsorted(left, tail, side="right"))               # P[K < low] = left[low - 1] <= tail
    high = int(steps - np.searchsorted(right[::-1], tail, side="right"))  # P[K > high] <= tail
    if high - low + 1 > MAX_COMPONENTS:
        raise ValueError(f"the last-iterate PLD would keep {high - low + 1} binomial components, more than "
                         f"{MAX_COMPONENTS}; use fewer steps")
    k = np.arange(low, high + 1, dtype=float)
    dropped = (left[low - 1] if low > 0 else 0.0) + (right[high + 1] if high < steps else 0.0)
    return k, binom.logpmf(k, steps, sampling_rate), float(dropped)


def _mixture_tails(points, shifts, log_b, sigma, sign):
    """``(cdf, survival)`` of :math:`\\sum_k b_k\\,\\mathcal N(\\text{sign}\\cdot k_k, \\sigma^2)` at ``points``, in blocks
    of components (memory bounded by _CHUNK)."""
    cdf, survival = np.zeros(points.size), np.zeros(points.size)
    weights = np.exp(log_b)
    step = max(1, _CHUNK // max(points.size, 1))
    for start in range(0, shifts.size, step):
        z = (points[:, None] - sign * shifts[None, start:start + step]) / sigma
        w = weights[start:start + step]
        cdf += ndtr(z) @ w
        survival += ndtr(-z) @ w
    return cdf, survival


def _between(cdf, survival):
    """Masses between consecutive points from the CDF below the median and the survival function above it."""
    return np.maximum(np.where(cdf[1:] <= 0.5, cdf[1:] - cdf[:-1], survival[:-1] - survival[1:]), 0.0)


def _log_sum(x, k, log_b, sigma, sign):
    r""":math:`\ln\sum_k b_k e^{(2\,\text{sign}\,k x - k^2)/(2\sigma^2)}` and its derivative in x, elementwise (blocks)."""
    x = np.asarray(x, dtype=float)
    flat = x.reshape(-1)
    value, slope = np.empty(flat.size), np.empty(flat.size)
    step = max(1, _CHUNK // max(k.size, 1))
    intercept, gradient = log_b - k * k / (2.0 * sigma * sigma), sign * k / (sigma * sigma)
    for start in range(0, flat.size, step):
        terms = intercept[None, :] + flat[start:start + step, None] * gradient[None, :]
        top = terms.max(axis=1)
        weights = np.exp(terms - top[:, None])
        total = weights.sum(axis=1)
        value[start:start + step] = top + np.log(total)
        slope[start:start + step] = (weights @ gradient) / total
    return value.reshape(x.shape), slope.reshape(x.shape)


def _inverse(function, target, low, high):
    """x in [low, high] with ``function(x)[0] == target`` for an increasing convex ``function`` returning (value,
    slope). Each x starts at the right end of its cell of a table of 1024 points (right of the root), then Newton
    steps, each of which lands at or right of the root for a convex increasing function."""
    target = np.asarray(target, dtype=float)
    table = np.linspace(low, high, 1025)
    values = function(table)[0]
    cell = np.clip(np.searchsorted(values, target, side="left"), 0, table.size - 1)
    x = table[cell]
    for _ in range(100):
        value, slope = function(x)
        move = np.maximum((value - target) / np.maximum(slope, 1e-300), 0.0)
        x = x - move
        if np.all(move <= 1e-12 * np.maximum(1.0, np.abs(x))):
            break
    return x


def last_iterate_loss_model(event, direction, tail):
    """The :class:`LossModel` of ``event`` (a :class:`~dpedu.ground.events_last_iterate.LinearLastIterateEvent`, q < 1) in
    ``direction`` ("remove" or "add"); ``tail`` bounds the mass cut from each end of the Gaussian range and of the
    binomial window."""
    z, q, steps = event.noise_multiplier, event.sampling_rate, event.steps
    sigma = z * math.sqrt(steps)
    k, log_b, dropped = binomial_window(steps, q, tail)
    cut = sigma * float(ndtri(tail))                   # negative: N(0, sigma^2) has `tail` mass below it
    if direction == "remove":
        def loss(x):
            return _log_sum(x, k, log_b, sigma, 1.0)[0]

        def log_density(x):
            x = np.asarray(x, dtype=float)
            terms = log_b[None, :] - 0.5 * ((x.reshape(-1, 1) - k[None, :]) / sigma) ** 2
            return (logsumexp(terms, axis=1) - _LOG_SQRT_2PI - math.log(sigma)).reshape(x.shape)

        def interval_masses(x):                        # P = sum_k b_k N(k, s^2), Q = N(0, s^2)
            p_cdf, p_survival = _mixture_tails(x, k, log_b, sigma, 1.0)
            return _between(p_cdf, p_survival), _between(ndtr(x / sigma), ndtr(-x / sigma))

        x_low, x_high = k[0] + cut, k[-1] - cut
        below, above = _mixture_tails(np.array([x_low, x_high]), k, log_b, sigma, 1.0)
        cut_low, cut_high, infinity = float(below[0]), float(above[1]), dropped
    elif direction == "add":
        def loss(y):
            return -_log_sum(y, k, log_b, sigma, -1.0)[0]

        def log_density(y):
            return -0.5 * (np.asarray(y, dtype=float) / sigma) ** 2 - _LOG_SQRT_2PI - math.log(sigma)

        def interval_masses(y):                        # P = N(0, s^2); Q = sum_k b_k N(-k, s^2) in y = -x
            q_cdf, q_survival = _mixture_tails(y, k, log_b, sigma, -1.0)
            return _between(ndtr(y / sigma), ndtr(-y / sigma)), _between(q_cdf, q_survival)

        x_low, x_high = cut, -cut
        cut_low = cut_high = float(ndtr(cut / sigma))
        infinity = 0.0
    else:
        raise ValueError(f"direction must be 'remove' or 'add'; got {direction!r}")

    def preimage(target):
        if direction == "remove":
            return _inverse(lambda x: _log_sum(x, k, log_b, sigma, 1.0), target, x_low, x_high)
        # add: loss(y) = -F(-y) with F = _log_sum(., +1) increasing convex in x = -y; solve F(x) = -target
        return -_inverse(lambda x: _log_sum(x, k, log_b, sigma, 1.0), -np.asarray(target, dtype=float), -x_high,
                         -x_low)

    return LossModel(loss, log_density, preimage, float(x_low), float(x_high), sigma / 16.0, (), infinity,
                     cut_low, cut_high, interval_masses)
