r"""RDP of the Gaussian on a fixed-size batch sampled without replacement, under replace-one.

A batch of exactly :math:`m` of the :math:`n` records, every :math:`m`-subset equally likely, gets the
Gaussian with multiplier :math:`z` (noise :math:`\mathcal N(0, z^2C^2I)`, records of norm at most C).
Replacing one record changes the batch sum by at most 2C, so the mechanism on the batch has
:math:`\varepsilon(\alpha) = 2\alpha/z^2` (the Gaussian with multiplier :math:`z/2`, Mironov 2017,
Prop. 7). Wang, Balle & Kasiviswanathan (2019, Thm 9) bound the subsampled mechanism at integer orders
:math:`\alpha \ge 2`, with :math:`\gamma = m/n` (docs/math.md §22.3):

.. math::

    \varepsilon'(\alpha) \le \frac{1}{\alpha-1}\ln\Big(1 + \gamma^2\binom{\alpha}{2}
    \min\{4(e^{\varepsilon(2)}-1),\ 2e^{\varepsilon(2)}\}
    + \sum_{j=3}^{\alpha} \gamma^j \binom{\alpha}{j}\, 2e^{(j-1)\varepsilon(j)}\Big)

(the theorem's factors :math:`\min\{2, (e^{\varepsilon(\infty)}-1)^j\}` are 2 for the Gaussian, whose
:math:`\varepsilon(\infty)` is infinite). At a fractional order the log-moment :math:`(\alpha-1)\varepsilon'(\alpha)`
is interpolated linearly between the neighbouring integers: the true one is convex in :math:`\alpha`, so the
chord of upper bounds stays an upper bound (Wang, Balle & Kasiviswanathan 2019, Cor. 10). With
:math:`m = n` nothing is sampled and the exact full-batch curve :math:`2\alpha/z^2` is returned.

>>> import numpy as np
>>> curve = rdp_without_replacement(1.0, 600, 60_000, np.array([2.0, 8.0]))
>>> [round(float(v), 6) for v in curve]
[0.01086, 10.835969]
>>> float(rdp_without_replacement(2.0, 10, 10, np.array([3.0]))[0])   # m = n: the replace-one Gaussian
1.5
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from ..validation import check_noise_multiplier, check_positive_int
from .orders import check_orders

__all__ = ["rdp_without_replacement", "log_moment_without_replacement", "MAX_INTEGER_ORDER"]

#: Orders above this cost O(alpha) terms each and are never the best order for DP-SGD's parameters: refused.
MAX_INTEGER_ORDER = 10_000


def log_moment_without_replacement(noise_multiplier, batch_size, dataset_size, order):
    r"""The bound on :math:`(\alpha-1)\varepsilon'(\alpha)` of docs/math.md §22.3 at one integer ``order`` >= 1.

    Summed in logarithms, so large orders and small noise stay finite (terms that overflow are infinite).
    """
    z = check_noise_multiplier(noise_multiplier)
    m, n = check_positive_int(batch_size, "batch_size"), check_positive_int(dataset_size, "dataset_size")
    alpha = check_positive_int(order, "order", maximum=MAX_INTEGER_ORDER)
    if m > n:
        raise ValueError(f"batch_size ({m}) must not exceed dataset_size ({n})")
    if m == n:
        return alpha * (alpha - 1) * 2.0 / z**2  # (alpha - 1) * 2 alpha / z^2: no sampling
    if alpha == 1:
        return 0.0
    log_gamma = math.log(m / n)

    def eps(j):  # RDP of the Gaussian on the batch under replace-one (sensitivity 2C)
        return 2.0 * j / z**2

    j = np.arange(2, alpha + 1, dtype=float)
    log_binom = gammaln(alpha + 1) - gammaln(j + 1) - gammaln(alpha - j + 1)
    # j = 2: min{4 (e^eps(2) - 1), 2 e^eps(2)}; e^x - 1 as exp(x + log(1 - e^-x))
    e2 = eps(2.0)
    second = min(math.log(4.0) + e2 + math.log(-math.expm1(-e2)), math.log(2.0) + e2)
    factor = np.where(j == 2, second, math.log(2.0) + (j - 1.0) * eps(j))
    log_terms = j * log_gamma + log_binom + factor
    return float(np.logaddexp(0.0, np.logaddexp.reduce(log_terms)))


def rdp_without_replacement(noise_multiplier, batch_size, dataset_size, orders):
    r"""The RDP bound of docs/math.md §22.3 at each of ``orders`` (> 1), as an array.

    Parameters
    ----------
    noise_multiplier : float
        z: noise standard deviation over each record's norm bound C (not halved: the replace-one
        sensitivity 2C is applied here).
    batch_size, dataset_size : int
        m <= n.
    orders : array of float
        Rényi orders > 1, at most ``MAX_INTEGER_ORDER``.
    """
    alphas = np.atleast_1d(check_orders(orders))
    if np.any(alphas > MAX_INTEGER_ORDER):
        raise ValueError(f"orders must be at most {MAX_INTEGER_ORDER} here; got {alphas.max():g}")
    if batch_size == dataset_size:  # nothing is sampled: the exact replace-one Gaussian at every order
        return 2.0 * alphas / check_noise_multiplier(noise_multiplier) ** 2
    cache = {}

    def at(k):
        if k not in cache:
            cache[k] = log_moment_without_replacement(noise_multiplier, batch_size, dataset_size, k)
        return cache[k]

    out = np.empty(alphas.shape)
    for index, alpha in np.ndenumerate(alphas):
        low, high = math.floor(alpha), math.ceil(alpha)
        t = alpha - low
        log_moment = at(low) if t == 0 else (1.0 - t) * at(low) + t * at(high)
        out[index] = log_moment / (alpha - 1.0)
    return out
