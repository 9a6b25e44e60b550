r"""Rényi-DP curves of the building blocks: Gaussian, sampled Gaussian, Laplace, pure DP.

Each function returns :math:`\varepsilon_{\mathrm{RDP}}(\alpha)` at the given orders for ONE release
(docs/math.md §13.2, §13.5); T releases have T times the curve, and curves of different releases add.

>>> round(float(rdp_sampled_gaussian(0.01, 4.0, 20)) * 10_000, 4)   # 10,000 DP-SGD steps at order 20
0.6527

References
----------
.. [MTZ19] Mironov, Talwar, Zhang. Rényi Differential Privacy of the Sampled Gaussian Mechanism.
   arXiv:1908.10530, 2019.
.. [Mir17] Mironov. Rényi Differential Privacy. CSF 2017.
"""

from __future__ import annotations

import numpy as np

from ...ground.validation import check_epsilon, check_positive, check_sampling_rate
from .log_moments import check_analysis_noise_multiplier, log_a
from .orders import check_orders, shape_like_orders

__all__ = ["rdp_gaussian", "rdp_sampled_gaussian", "rdp_laplace", "rdp_pure_dp"]


def rdp_gaussian(noise_multiplier, orders):
    r"""RDP of one Gaussian release, :math:`\varepsilon(\alpha) = \alpha/(2z^2)` ([Mir17]_ Prop. 7).

    Examples
    --------
    >>> rdp_gaussian(1.0, [2.0, 4.0])
    array([1., 2.])
    """
    z = check_analysis_noise_multiplier(noise_multiplier)
    alphas = check_orders(orders)
    return shape_like_orders(alphas / (2 * z * z), alphas)


def rdp_sampled_gaussian(sampling_rate, noise_multiplier, orders):
    r"""RDP curve of one Poisson-sampled Gaussian step: :math:`\varepsilon(\alpha) = \ln A_\alpha/(\alpha-1)`.

    Parameters
    ----------
    sampling_rate : float
        Poisson rate :math:`q \in (0, 1]` (q = 0 is refused: it releases nothing about anyone).
    noise_multiplier : float
        :math:`z > 0`.
    orders : float or array of float
        Orders :math:`\alpha > 1`.

    Returns
    -------
    float or numpy.ndarray
        Shaped like ``orders``; T identical steps have T times this curve.

    Notes
    -----
    [MTZ19]_ §3: the SGM is :math:`(\alpha, \ln A_\alpha/(\alpha-1))`-RDP under add/remove neighbours.
    Integer orders use the binomial closed form, other orders the series (see :func:`log_a`).
    q = 1 gives exactly :math:`\alpha/(2z^2)`.

    Examples
    --------
    >>> float(rdp_sampled_gaussian(1.0, 2.0, 3.5)) == 3.5 / 8
    True
    """
    q = check_sampling_rate(sampling_rate)
    alphas = check_orders(orders)
    if q == 1.0:  # no subsampling: exactly the Gaussian curve (not ln A / (alpha - 1) with its rounding)
        return rdp_gaussian(noise_multiplier, orders)
    values = np.asarray(log_a(q, noise_multiplier, alphas)) / (alphas - 1)
    return shape_like_orders(values, alphas)


def rdp_laplace(scale, orders):
    r"""RDP of the Laplace mechanism with scale ``scale`` = b for a unit-L1-sensitivity query.

    Notes
    -----
    [Mir17]_ Table II (docs/math.md §3.2):

    .. math:: \varepsilon(\alpha) = \frac{1}{\alpha-1}\ln\!\left(\frac{\alpha}{2\alpha-1}e^{(\alpha-1)/b}
              + \frac{\alpha-1}{2\alpha-1}e^{-\alpha/b}\right),

    computed as a ``logaddexp`` of the two logs so large :math:`(\alpha-1)/b` cannot overflow. It
    increases to :math:`1/b` (pure DP) as :math:`\alpha\to\infty`.

    Examples
    --------
    >>> round(float(rdp_laplace(1.0, 1e6)), 4)
    1.0
    """
    b = check_positive(scale, "scale")
    alphas = check_orders(orders)
    log_mix = np.logaddexp(
        np.log(alphas / (2 * alphas - 1)) + (alphas - 1) / b,
        np.log((alphas - 1) / (2 * alphas - 1)) - alphas / b,
    )
    return shape_like_orders(log_mix / (alphas - 1), alphas)


def rdp_pure_dp(epsilon, orders):
    r"""RDP implied by pure :math:`\varepsilon`-DP: :math:`\min(\varepsilon, \alpha\varepsilon^2/2)`.

    Notes
    -----
    :math:`D_\alpha \le D_\infty = \varepsilon` ([Mir17]_ Prop. 3); and :math:`\varepsilon`-DP implies
    :math:`(\varepsilon^2/2)`-zCDP (Bun & Steinke 2016, Prop. 3.3), i.e. :math:`\alpha\varepsilon^2/2`.

    Examples
    --------
    >>> rdp_pure_dp(1.0, [1.5, 4.0])
    array([0.75, 1.  ])
    """
    eps = check_epsilon(epsilon)
    alphas = check_orders(orders)
    # alpha eps^2 / 2 <= eps exactly when alpha eps <= 2: compared without squaring, so a huge eps cannot overflow
    with np.errstate(over="ignore"):  # the unused branch may overflow
        small = alphas <= 2.0 / eps
        return shape_like_orders(np.where(small, alphas * eps * eps / 2, eps), alphas)
