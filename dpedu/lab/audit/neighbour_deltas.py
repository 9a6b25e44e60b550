r"""Measuring δ(ε) of a pair of output laws, exactly or by Monte Carlo on the privacy loss (docs/math.md §20.7).

* :func:`gaussian_pair_delta`: two Gaussians with one covariance, the exact curve; :func:`laplace_gaussian_delta`: a
  Laplace count beside a Gaussian, by quadrature over the Laplace loss;
* :func:`mixture_delta`: two Gaussian mixtures (:class:`~dpedu.lab.audit.neighbour_laws.GaussianMixture`), by
  Monte Carlo: draws from each law, the exact log-ratio L, and :math:`1\{U < 1 - e^{\varepsilon - L}\}`, Bernoulli
  with mean exactly the direction's δ, bounded by Clopper-Pearson (docs/math.md §22.6);
* :func:`cyclic_convexity_bound`: an exact upper bound for fixed batches from one split, by joint convexity (§22.10);
* :func:`monte_carlo_tolerance`: how far above the claimed δ a Monte Carlo upper end may sit before a claim fails.

>>> round(gaussian_pair_delta(1.0, 1.0), 6)                  # Phi(-1/2) - e Phi(-3/2)
0.126937
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate
from scipy.special import log_ndtr

from ...ground.validation import check_confidence, check_delta, check_positive, check_positive_int, check_rng
from .statistics import clopper_pearson

__all__ = ["MAX_DRAWS", "SPREAD", "TOLERANCE", "cyclic_convexity_bound", "gaussian_pair_delta",
           "laplace_gaussian_delta", "mixture_delta", "monte_carlo_tolerance", "with_bound"]

#: A claim holds when the measured delta (its upper confidence end) is at most (1 + tolerance) times the claimed
#: delta, the tolerance being TOLERANCE or, for Monte Carlo, SPREAD relative standard errors 1 / sqrt(delta N) if
#: that is more (:func:`monte_carlo_tolerance`): the upper end sits about 2.3 standard errors above the estimate, so an
#: exactly tight claim is called failed only when its estimate lands 3.7 standard errors high (about 1e-4). At
#: delta = 1e-2: 10 % from 3.6 * 10**5 draws on, 13.4 % at 2 * 10**5 (docs/math.md §20.7).
TOLERANCE = 0.1
SPREAD = 6.0
#: At most this many Monte Carlo draws per direction (:func:`mixture_delta`).
MAX_DRAWS = 10**8
def _gaussian_hockey(mu, e):
    r""":math:`H_\mu(e) = \Phi(\mu/2 - e/\mu) - e^{e}\Phi(-\mu/2 - e/\mu)`, the hockey-stick divergence of
    :math:`\mathcal N(\mu, 1)` from :math:`\mathcal N(0, 1)` at :math:`e^{e}`, for every real e (vectorised)."""
    e = np.asarray(e, dtype=float)
    if mu == 0:
        return np.maximum(-np.expm1(e), 0.0)
    first, second = log_ndtr(mu / 2 - e / mu), e + log_ndtr(-mu / 2 - e / mu)
    return np.where(second < first, -np.exp(first) * np.expm1(np.minimum(second - first, 0.0)), 0.0)


def gaussian_pair_delta(mu, epsilon):
    r"""δ(ε) of :math:`\mathcal N(\mu, 1)` against :math:`\mathcal N(0, 1)` (both directions agree)."""
    return float(_gaussian_hockey(check_positive(mu, "mu") if mu else 0.0, epsilon))


def laplace_gaussian_delta(epsilon, *, laplace_shift, laplace_scale, mu):
    r"""δ(ε), exactly, of :math:`(\mathrm{Lap}(s, b), \mathcal N(\mu, 1))` against :math:`(\mathrm{Lap}(0, b),
    \mathcal N(0, 1))`, independent coordinates: :math:`E_u[H_\mu(\varepsilon - \ell(u))]` with the Laplace loss
    :math:`\ell(u) = (|u| - |u - s|)/b` (:math:`-s/b` below 0, :math:`s/b` above s, linear between), the middle part
    by quadrature. The reverse direction is the same by symmetry (u -> s - u and y -> mu - y)."""
    s, b = abs(laplace_shift), check_positive(laplace_scale, "laplace_scale")
    above = 0.5 * _gaussian_hockey(mu, epsilon - s / b)                       # u >= s: probability 1/2
    below = 0.5 * math.exp(-s / b) * _gaussian_hockey(mu, epsilon + s / b)    # u <= 0

    def between(u):                                                           # 0 < u < s: density e^-(s-u)/b / 2b
        return math.exp(-(s - u) / b) / (2 * b) * _gaussian_hockey(mu, epsilon - (2 * u - s) / b)

    middle = integrate.quad(between, 0.0, s, epsabs=1e-13, limit=200)[0] if s > 0 else 0.0
    return float(above + below + middle)


def _hits(p, q, epsilon, draws, rng, chunk):
    """How many of ``draws`` draws from p have U < 1 - e^(epsilon - L), L = ln p/q: Bernoulli with mean delta."""
    hits = 0                                              # chunks of at most 2e7 exponentials in memory at once
    chunk = max(1, min(chunk, 20_000_000 // (p.blocks * max(len(p.weights), len(q.weights)))))
    for start in range(0, draws, chunk):
        y = p.sample(min(chunk, draws - start), rng)
        loss = p.log_density(y) - q.log_density(y)
        with np.errstate(over="ignore"):
            hits += int(np.count_nonzero(rng.random(len(loss)) < -np.expm1(epsilon - loss)))
    return hits


def mixture_delta(first, second, epsilon, *, draws, rng, confidence=0.95, stop_below=None, chunk=50_000):
    r"""δ(ε) of two :class:`~dpedu.lab.audit.neighbour_laws.GaussianMixture` laws, both directions, by Monte
    Carlo on the privacy loss: ``(estimate, lower, upper)`` of the larger direction.

    ``draws`` per direction; each direction's two-sided Clopper-Pearson interval at :math:`1 - (1-c)/2`, so both hold
    together with probability at least ``confidence`` c and the larger δ lies in [max of lowers, max of uppers].
    With ``stop_below``, the draws are looked at twice, after a tenth (intervals at :math:`1 - (1-c)/20` per
    direction) and at the end (:math:`1 - 9(1-c)/20`), and the first look is returned when its upper end is already
    below ``stop_below``: a union bound over the looks and directions keeps the confidence c whichever is returned,
    and a claim far from its bound costs a tenth of the draws.
    Two single Gaussians are computed exactly instead (:func:`gaussian_pair_delta`).
    """
    draws = check_positive_int(draws, "draws", maximum=MAX_DRAWS)
    confidence = check_confidence(confidence)
    if len(first.weights) == 1 and len(second.weights) == 1:
        exact = gaussian_pair_delta(math.sqrt(first.blocks) * float(np.linalg.norm(first.means - second.means)),
                                    epsilon)
        return exact, exact, exact
    rng = check_rng(rng)
    looks = [(draws, 1.0)] if stop_below is None or draws < 10 else [(draws // 10, 0.1), (draws, 0.9)]
    hits, done = [0, 0], 0
    for look, share in looks:                             # (draws so far, share of 1 - confidence spent here)
        for i, (p, q) in enumerate(((first, second), (second, first))):
            hits[i] += _hits(p, q, epsilon, look - done, rng, chunk)
        done, level = look, 1 - (1 - confidence) * share / 2
        ends = [(k / look, *clopper_pearson(k, look, confidence=level, side="two-sided")) for k in hits]
        estimate = tuple(max(end[i] for end in ends) for i in range(3))
        if stop_below is not None and estimate[2] <= stop_below:
            break
    return estimate


def monte_carlo_tolerance(delta, draws):
    """The relative tolerance of a Monte Carlo verdict: :data:`TOLERANCE`, or :data:`SPREAD` relative standard errors
    of an estimate of ``delta`` from ``draws`` draws when that is more.

    >>> monte_carlo_tolerance(1e-2, 10**6), round(monte_carlo_tolerance(1e-2, 2 * 10**5), 3)
    (0.1, 0.134)
    """
    return max(TOLERANCE, SPREAD / math.sqrt(check_delta(delta) * check_positive_int(draws, "draws")))


def cyclic_convexity_bound(worlds, batches, steps, epsilon, noise_multiplier, transform=None):
    r"""An exact upper bound on δ(ε) of a fixed-n pair under fixed batches from one split (``"cyclic"``): the record's
    batch J is the same in both datasets (the split does not look at the data), so by joint convexity of the
    hockey-stick divergence :math:`\delta \le \sum_j P(J = j)\,\delta_{\mu_j}(\varepsilon)`, where
    :math:`\mu_j` is the norm of the (whitened) difference of the two runs' sums when J = j, over the noise. None
    when the pair changes n (add/remove)."""
    first, second = worlds
    if first.n != second.n:
        return None
    sizes = np.array([len(range(k, first.n, batches)) for k in range(batches)], dtype=float)
    total = 0.0
    for j in range(batches):
        shift = np.zeros(steps)
        shift[j::batches] = first.record - second.record          # the others are the same in both
        whitened = shift if transform is None else np.asarray(transform) @ shift
        total += sizes[j] / first.n * gaussian_pair_delta(float(np.linalg.norm(whitened)) / noise_multiplier,
                                                           epsilon)
    return total


def with_bound(estimate, bound):
    """(estimate, lower, upper) with every value lowered to an exact upper bound when there is one (the estimate too:
    the true delta is known to be at most the bound)."""
    if bound is None:
        return estimate
    return tuple(min(value, bound) for value in estimate)
