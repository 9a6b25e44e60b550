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
:math:`\varepsilon(\infty)` is infinite).

**The Gaussian-specific bound** (Wang, Balle & Kasiviswanathan 2019, Thm 27 of the long version, arXiv:1808.00087;
docs/math.md §22.3): for :math:`j \ge 3` the j-th term's factor :math:`2e^{(j-1)\varepsilon(j)}` may be replaced by
:math:`\min\{4\sqrt{\Delta_{2\lfloor j/2\rfloor}\Delta_{2\lceil j/2\rceil}},\ 2e^{(j-1)\varepsilon(j)}\}`, where
:math:`\Delta_\ell = \sum_{k=0}^{\ell}\binom{\ell}{k}(-1)^{\ell-k}e^{(k-1)\varepsilon(k)} = E_Q[(P/Q-1)^\ell]`
is the :math:`\ell`-th forward difference of the Gaussian's moments (an even moment: :math:`\ge 0` for even
:math:`\ell`). The alternating sum is computed in floating point with a bound on its rounding error *added*
(:func:`forward_differences`), so the bound never drops below the theorem's value by round-off. This is used at
integer orders up to ``MAX_DIFFERENCE_ORDER`` (as Google's ``dp_accounting``); above, Thm 9's factor is kept.

At a fractional order the log-moment :math:`(\alpha-1)\varepsilon'(\alpha)`
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

import functools
import math

import numpy as np
from scipy.special import gammaln

from ...ground.validation import check_noise_multiplier, check_positive_int
from .orders import check_orders

__all__ = ["rdp_without_replacement", "log_moment_without_replacement", "forward_differences", "MAX_INTEGER_ORDER",
           "MAX_DIFFERENCE_ORDER"]

#: Orders above this cost O(alpha) terms each and are never the best order for DP-SGD's parameters: refused.
MAX_INTEGER_ORDER = 10_000
#: Integer orders up to this use the Gaussian-specific factor (O(alpha^2) work once per noise multiplier).
MAX_DIFFERENCE_ORDER = 256
_UNIT_ROUNDOFF = np.finfo(float).eps / 2.0


@functools.lru_cache(maxsize=32)
def forward_differences(noise_multiplier, largest):
    r"""Upper bounds on :math:`\ln\Delta_\ell` for even :math:`\ell = 0, 2, \dots` up to ``largest`` (an array
    indexed by :math:`\ell/2`), :math:`\Delta_\ell = \sum_k \binom{\ell}{k}(-1)^{\ell-k}e^{2k(k-1)/z^2}`.

    Each sum is taken relative to its largest term; the floating-point result is raised by a bound on its
    rounding error, :math:`u\,(4(\ell+3) + 4\max_k|a_k|)\sum_k|t_k|` (u the unit round-off, :math:`a_k` the
    exponents, whose own rounding moves each term by at most :math:`u|a_k|` relatively), so each value is an
    upper bound on the exact :math:`\ln\Delta_\ell` and never :math:`-\infty`.
    """
    z2 = float(noise_multiplier) ** 2
    ells = np.arange(0, largest + 1, 2, dtype=float)[:, None]
    k = np.arange(0, largest + 1, dtype=float)[None, :]
    valid = k <= ells
    with np.errstate(invalid="ignore"):
        log_binom = np.where(valid, gammaln(ells + 1) - gammaln(k + 1) - gammaln(np.maximum(ells - k, 0) + 1), 0.0)
    exponent = np.where(valid, log_binom + 2.0 * k * (k - 1.0) / z2, -np.inf)
    top = exponent.max(axis=1, keepdims=True)
    magnitude = np.where(valid, np.exp(exponent - top), 0.0)
    sign = np.where((ells - k) % 2 == 0, 1.0, -1.0)
    total = np.sum(sign * magnitude, axis=1)
    scale = np.max(np.where(valid, np.abs(exponent), 0.0), axis=1)
    error = _UNIT_ROUNDOFF * (4.0 * (ells[:, 0] + 3.0) + 4.0 * scale) * magnitude.sum(axis=1)
    return top[:, 0] + np.log(np.maximum(total, 0.0) + error)


def log_moment_without_replacement(noise_multiplier, batch_size, dataset_size, order, *, gaussian_specific=True):
    r"""The bound on :math:`(\alpha-1)\varepsilon'(\alpha)` of docs/math.md §22.3 at one integer ``order`` >= 1
    (``gaussian_specific=False``: Thm 9's factors only, for comparison).

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
    if not isinstance(gaussian_specific, bool):
        raise TypeError(f"gaussian_specific must be True or False; got {gaussian_specific!r}")
    if gaussian_specific and alpha <= MAX_DIFFERENCE_ORDER:  # the Gaussian-specific factor (Thm 27), j >= 3
        even = forward_differences(z, 2 * math.ceil(MAX_DIFFERENCE_ORDER / 2))
        low, high = even[(j // 2).astype(int)], even[np.ceil(j / 2).astype(int)]
        factor = np.where(j == 2, factor, np.minimum(factor, math.log(4.0) + 0.5 * (low + high)))
    log_terms = j * log_gamma + log_binom + factor
    return float(np.logaddexp(0.0, np.logaddexp.reduce(log_terms)))


def rdp_without_replacement(noise_multiplier, batch_size, dataset_size, orders, *, gaussian_specific=True):
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
    gaussian_specific : bool, default True
        Use the Gaussian-specific factors (Thm 27) up to ``MAX_DIFFERENCE_ORDER``; ``False``: Thm 9 alone.
    """
    alphas = np.atleast_1d(check_orders(orders))
    if not isinstance(gaussian_specific, bool):
        raise TypeError(f"gaussian_specific must be True or False; got {gaussian_specific!r}")
    if np.any(alphas > MAX_INTEGER_ORDER):
        raise ValueError(f"orders must be at most {MAX_INTEGER_ORDER} here; got {alphas.max():g}")
    if batch_size == dataset_size:  # nothing is sampled: the exact replace-one Gaussian at every order
        return 2.0 * alphas / check_noise_multiplier(noise_multiplier) ** 2
    cache = {}

    def at(k):
        if k not in cache:
            cache[k] = log_moment_without_replacement(noise_multiplier, batch_size, dataset_size, k,
                                                      gaussian_specific=gaussian_specific)
        return cache[k]

    out = np.empty(alphas.shape)
    for index, alpha in np.ndenumerate(alphas):
        low, high = math.floor(alpha), math.ceil(alpha)
        t = alpha - low
        log_moment = at(low) if t == 0 else (1.0 - t) * at(low) + t * at(high)
        out[index] = log_moment / (alpha - 1.0)
    return out
