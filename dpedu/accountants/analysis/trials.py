r"""The number of trials K of private selection: the truncated negative binomial family and Poisson.

Private selection (docs/math.md §23.1) runs a private mechanism K times and releases the best run. K is
drawn *independently of the data* from one of these distributions, given by its mean and its shape
:math:`\eta` (Papernot & Steinke 2022, Def. 1):

* :math:`\eta \in (-1, \infty)`: the truncated negative binomial :math:`\mathcal D_{\eta,\gamma}` on
  :math:`\{1, 2, \dots\}`,

  .. math:: \Pr[K = k] = \frac{(1-\gamma)^k}{\gamma^{-\eta} - 1}\prod_{\ell=0}^{k-1}\frac{\ell + \eta}{\ell + 1}
            \quad (k \ge 1,\ \eta \ne 0,\ 0 < \gamma < 1),

  with :math:`\eta = 1` the geometric distribution :math:`\Pr[K=k] = \gamma(1-\gamma)^{k-1}` and
  :math:`\eta = 0` the logarithmic one :math:`\Pr[K=k] = (1-\gamma)^k / (k \ln(1/\gamma))`;
* :math:`\eta = \infty`: Poisson(:math:`\mu`), the limit of the negative binomial at a fixed mean.

Every member of the family obeys one recursion, which is how :func:`trials_pmf` and :func:`sample_trials`
compute it (docs/math.md §23.1):

.. math:: \Pr[K = 1] = \frac{1-\gamma}{L\,\varphi(\eta L)}, \qquad
          \frac{\Pr[K = k+1]}{\Pr[K = k]} = (1-\gamma)\frac{k + \eta}{k + 1}, \qquad
          \mathbb E[K] = \frac{1-\gamma}{\gamma\, L\,\varphi(-\eta L)},

where :math:`L = \ln(1/\gamma)` and :math:`\varphi(x) = (e^x - 1)/x` (:math:`\varphi(0) = 1`). The mean
grows as :math:`\gamma` falls, so :func:`log_inverse_gamma` finds :math:`L` for a given mean by bisection.

>>> round(math.exp(-log_inverse_gamma(10.0, 1.0)), 12)        # geometric: gamma = 1 / mean
0.1
>>> round(trials_mean(log_inverse_gamma(5.0, 0.5), 0.5), 9)
5.0
"""

from __future__ import annotations

import functools
import math

from ...ground.search import monotone_search
from ...ground.validation import check_rng

__all__ = ["log_inverse_gamma", "trials_mean", "trials_pmf", "sample_trials"]


def _log_expm1_over_x(x):
    r""":math:`\ln\varphi(x) = \ln((e^x - 1)/x)`, finite for every finite x (no overflow for large x)."""
    if x == 0:
        return 0.0
    if x > 0:
        return x + math.log(-math.expm1(-x)) - math.log(x)
    return math.log(-math.expm1(x)) - math.log(-x)


def _log_mean(L, shape):
    r""":math:`\ln \mathbb E[K]` of the truncated negative binomial with :math:`\ln(1/\gamma) = L > 0`."""
    return math.log(-math.expm1(-L)) + L - math.log(L) - _log_expm1_over_x(-shape * L)


@functools.lru_cache(maxsize=256)
def log_inverse_gamma(mean, shape):
    r""":math:`L = \ln(1/\gamma)` of the truncated negative binomial with this mean and shape :math:`\eta`.

    Parameters
    ----------
    mean : float
        :math:`\mathbb E[K] > 1` (a mean of 1 is one run, :math:`\gamma = 1`).
    shape : float
        :math:`\eta \in (-1, \infty)`.

    Returns
    -------
    float
        :math:`L > 0`, found by bisection to the last bit (the mean increases with :math:`L`). It is
        returned rather than :math:`\gamma` because for :math:`\eta` near -1 a mean of 10 already needs
        :math:`\gamma \approx 10^{-100}`, and larger means would underflow. The geometric case is exact:
        :math:`L = \ln(\text{mean})`.
    """
    if not (mean > 1 and shape > -1 and math.isfinite(mean) and math.isfinite(shape)):
        raise ValueError(f"mean must be finite and > 1 and shape in (-1, inf); got mean={mean!r}, shape={shape!r}")
    target = math.log(mean)
    if shape == 1:
        return target
    return monotone_search(lambda L: _log_mean(L, shape) >= target, 1.0, feasible_when="large", lowest=0.0,
                           highest=math.inf, rtol=0.0, at_limit=lambda L, feasible: L)


def trials_mean(L, shape):
    r""":math:`\mathbb E[K]` of the truncated negative binomial with :math:`\ln(1/\gamma) = L` and shape :math:`\eta`.

    >>> trials_mean(math.log(4.0), 1.0)                       # geometric, gamma = 1/4
    4.0
    """
    return math.exp(_log_mean(L, shape))


def _first_probability(L, shape):
    r""":math:`\Pr[K = 1] = (1-\gamma) / (L\,\varphi(\eta L))`, computed through its logarithm."""
    return math.exp(math.log(-math.expm1(-L)) - math.log(L) - _log_expm1_over_x(shape * L))


def trials_pmf(k, mean, shape):
    r""":math:`\Pr[K = k]` for the distribution of mean ``mean`` and shape ``shape`` (``math.inf``: Poisson).

    >>> round(trials_pmf(3, 4.0, 1.0), 12)                   # geometric: (1/4) (3/4)^2
    0.140625
    >>> round(trials_pmf(0, 2.0, math.inf), 12) == round(math.exp(-2.0), 12)
    True
    """
    if math.isinf(shape):
        return math.exp(-mean + k * math.log(mean) - math.lgamma(k + 1))
    if k < 1:
        return 0.0
    L = log_inverse_gamma(mean, shape)
    one_minus_gamma = -math.expm1(-L)
    probability = _first_probability(L, shape)
    for j in range(1, k):
        probability *= one_minus_gamma * (j + shape) / (j + 1)
    return probability


def sample_trials(mean, shape, rng):
    r"""Draw K (an int) from the distribution of mean ``mean`` and shape ``shape``, with the generator ``rng``.

    Poisson (``shape = math.inf``) uses ``rng.poisson``. The truncated negative binomial walks its
    probabilities with the recursion above until their running sum passes one uniform draw U (inversion):
    the result is a function of U alone, so one seed gives one K. (Should rounding leave the running sum
    just below a U within about 1e-16 of 1, the walk stops where the probabilities underflow.)

    >>> import numpy as np
    >>> sample_trials(10.0, 1.0, np.random.default_rng(0)) == sample_trials(10.0, 1.0, np.random.default_rng(0))
    True
    """
    rng = check_rng(rng)
    if math.isinf(shape):
        return int(rng.poisson(mean))
    L = log_inverse_gamma(mean, shape)
    one_minus_gamma = -math.expm1(-L)
    u = rng.random()
    k, probability = 1, _first_probability(L, shape)
    total = probability
    while total <= u and probability > 0:
        probability *= one_minus_gamma * (k + shape) / (k + 1)
        k += 1
        total += probability
    return k
