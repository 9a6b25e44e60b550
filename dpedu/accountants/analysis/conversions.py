r"""From a Rényi-DP curve to :math:`(\varepsilon, \delta)`: the classic and the improved conversion.

An RDP curve :math:`\varepsilon_{\mathrm{RDP}}(\alpha)` certifies :math:`(\varepsilon, \delta)`-DP at every
order; the best certificate minimises over the orders (docs/math.md §13.4).

>>> from dpedu.accountants.analysis.orders import DEFAULT_ORDERS
>>> from dpedu.accountants.analysis.rdp_curves import rdp_sampled_gaussian
>>> eps, order = epsilon_from_rdp(DEFAULT_ORDERS, 10_000 * rdp_sampled_gaussian(0.01, 4.0, DEFAULT_ORDERS), 1e-5)
>>> round(eps, 4), order
(1.0355, 17.0)

References
----------
.. [Mir17] Mironov. Rényi Differential Privacy. CSF 2017.
.. [BBG20] Balle, Barthe, Gaboardi, Hsu, Sato. Hypothesis Testing Interpretations and Rényi Differential
   Privacy. AISTATS 2020.
.. [CKS20] Canonne, Kamath, Steinke. The Discrete Gaussian for Differential Privacy. NeurIPS 2020.
"""

from __future__ import annotations

import math

import numpy as np

from ...ground.validation import check_choice, check_delta, check_epsilon, check_real_entries
from .orders import check_orders

__all__ = [
    "CONVERSIONS",
    "check_conversion",
    "check_curve",
    "check_curve_values",
    "epsilon_from_rdp",
    "delta_from_rdp",
]

#: The two RDP -> (epsilon, delta) theorems, by name.
CONVERSIONS = ("improved", "classic")


def check_conversion(conversion):
    """``"improved"`` or ``"classic"`` (:data:`CONVERSIONS`), else ``ValueError`` naming ``conversion``."""
    return check_choice(conversion, "conversion", CONVERSIONS)


def check_curve_values(values, shape, name="rdp"):
    """A curve's values as a float array of ``shape``, each >= 0 (``inf`` allowed).

    Booleans, strings and complex numbers are refused with a ``TypeError`` naming ``name``; NaN, negative
    values and a wrong shape with a ``ValueError``. Used for RDP curves and for log-moments.
    """
    check_real_entries(values, name)
    raw = np.asarray(values)
    if not np.issubdtype(raw.dtype, np.number):
        raise TypeError(f"{name} must be real numbers; got dtype {raw.dtype}")
    curve = np.atleast_1d(raw.astype(float))
    if curve.shape != shape:
        raise ValueError(f"{name} must have the shape of the orders {shape}; got {curve.shape}")
    if np.any(np.isnan(curve)) or np.any(curve < 0):
        raise ValueError(f"{name} must be >= 0 (inf allowed) at every order")
    return curve


def check_curve(orders, values, name="rdp"):
    """``(orders, values)`` as two 1-D float arrays of one shape: orders > 1, values >= 0 (``inf`` allowed)."""
    alphas = np.atleast_1d(check_orders(orders))
    if alphas.ndim != 1:
        raise ValueError(f"orders must be 1-D; got shape {alphas.shape}")
    return alphas, check_curve_values(values, alphas.shape, name)


def epsilon_from_rdp(orders, rdp, delta, conversion="improved"):
    r"""Smallest :math:`\varepsilon` over the orders for an RDP curve at ``delta``; returns ``(epsilon, order)``.

    Parameters
    ----------
    orders : array of float
        Orders :math:`\alpha > 1`.
    rdp : array of float
        :math:`\varepsilon_{\mathrm{RDP}}(\alpha)` at those orders (may be ``inf``).
    delta : float
        Target :math:`\delta \in (0, 1)`.
    conversion : {"improved", "classic"}
        Which theorem.

    Returns
    -------
    (float, float)
        :math:`\varepsilon \ge 0` and the minimising order.

    Notes
    -----
    classic ([Mir17]_ Prop. 3): :math:`\varepsilon = \varepsilon(\alpha) + \ln(1/\delta)/(\alpha-1)`.

    improved ([BBG20]_ Thm 21; [CKS20]_ Prop. 12):

    .. math:: \varepsilon = \varepsilon(\alpha) + \ln\tfrac{\alpha-1}{\alpha} - \frac{\ln\delta + \ln\alpha}{\alpha-1},

    never larger than classic (the difference :math:`\ln(1-1/\alpha) - \ln\alpha/(\alpha-1) < 0`);
    clamped at 0, since any mechanism is :math:`(0,\delta)`-DP when the bound says less.

    Examples
    --------
    >>> eps, order = epsilon_from_rdp([2.0, 3.0], [0.5, 0.75], 0.01, "classic")   # 0.75 + ln(100)/2
    >>> round(eps, 4), order
    (3.0526, 3.0)
    """
    alphas, values = check_curve(orders, rdp)
    delta = check_delta(delta)
    conversion = check_conversion(conversion)
    if conversion == "classic":
        eps = values + math.log(1 / delta) / (alphas - 1)
    else:
        eps = values + np.log1p(-1 / alphas) - (math.log(delta) + np.log(alphas)) / (alphas - 1)
    best = int(np.argmin(eps))
    return max(0.0, float(eps[best])), float(alphas[best])


def delta_from_rdp(orders, rdp, epsilon, conversion="improved"):
    r"""Smallest :math:`\delta` over the orders for an RDP curve at ``epsilon``; returns ``(delta, order)``.

    Notes
    -----
    The conversions of :func:`epsilon_from_rdp` solved for :math:`\delta` (capped at 1):

    classic: :math:`\delta = e^{(\alpha-1)(\varepsilon(\alpha)-\varepsilon)}`;

    improved ([CKS20]_ Prop. 12; [BBG20]_ Thm 21):
    :math:`\delta = \frac{e^{(\alpha-1)(\varepsilon(\alpha)-\varepsilon)}}{\alpha}
    \left(1-\frac1\alpha\right)^{\alpha-1}`.

    Everything is compared as :math:`\ln\delta`, so huge curves cannot overflow.

    Examples
    --------
    >>> delta, order = delta_from_rdp([2.0, 3.0], [0.5, 0.75], 0.75 + math.log(100) / 2, "classic")
    >>> round(delta, 12), order
    (0.01, 3.0)
    """
    alphas, values = check_curve(orders, rdp)
    eps = check_epsilon(epsilon)
    conversion = check_conversion(conversion)
    log_delta = (alphas - 1) * (values - eps)
    if conversion == "improved":
        log_delta = log_delta + (alphas - 1) * np.log1p(-1 / alphas) - np.log(alphas)
    best = int(np.argmin(log_delta))
    return math.exp(min(0.0, float(log_delta[best]))), float(alphas[best])
