r"""The Gaussian mechanism in closed form: classic and analytic calibration, exact delta(epsilon).

One Gaussian release (or T composed ones, which are again one Gaussian) needs no accountant: its
privacy curve is known exactly. Mechanisms, accountants and calibration all use these functions.

The Gaussian mechanism with noise multiplier :math:`z=\sigma/\Delta_2` is, exactly,
:math:`(\varepsilon,\delta)`-DP iff :math:`\delta \ge \delta_G(\varepsilon)` with (Balle & Wang 2018, Thm 8)

.. math:: \delta_G(\varepsilon) = \Phi\!\left(\tfrac{\mu}{2}-\tfrac{\varepsilon}{\mu}\right)
          - e^{\varepsilon}\,\Phi\!\left(-\tfrac{\mu}{2}-\tfrac{\varepsilon}{\mu}\right),\qquad \mu = 1/z.

>>> round(classic_noise_multiplier(epsilon=1 - 1e-12, delta=1e-5), 4)
4.8448
>>> round(analytic_noise_multiplier(epsilon=1.0, delta=1e-5), 4)
3.7306
>>> round(gaussian_epsilon_exact(delta=1e-5, noise_multiplier=1.0), 4)
4.3772
"""

from __future__ import annotations

import math

from scipy.special import log_ndtr

from .search import monotone_search
from .validation import check_delta, check_epsilon, check_noise_multiplier, check_nonnegative

__all__ = [
    "classic_noise_multiplier",
    "gaussian_delta_exact",
    "gaussian_epsilon_exact",
    "analytic_noise_multiplier",
]


def classic_noise_multiplier(epsilon, delta):
    r"""Classic Gaussian calibration :math:`z = \sqrt{2\ln(1.25/\delta)}/\varepsilon`.

    Parameters
    ----------
    epsilon : float
        Per-release epsilon; the theorem needs :math:`0 < \varepsilon < 1`.
    delta : float
        Per-release delta in (0, 1).

    Returns
    -------
    float
        The noise multiplier z (noise std divided by the L2 sensitivity).

    Raises
    ------
    ValueError
        For :math:`\varepsilon \ge 1`, where the formula is not a valid bound: with
        :math:`\delta=10^{-5}`, :math:`\varepsilon=10` it gives z = 0.4845, whose true delta is
        2.27e-5. Use :func:`analytic_noise_multiplier` there (exact for every epsilon).

    Notes
    -----
    Dwork & Roth (2014), Thm 3.22 / App. A; Abadi et al. (2016) §2.1. It is also loose inside its
    range: at :math:`\varepsilon = 1, \delta=10^{-5}` it gives 4.84 where 3.73 is exact.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if not epsilon < 1:
        raise ValueError(
            f"the classic Gaussian calibration sqrt(2 ln(1.25/delta))/epsilon is only proven for 0 < epsilon < 1 "
            f"(got epsilon={epsilon!r}); for larger epsilon it can under-protect - use analytic_noise_multiplier "
            f"(Balle & Wang 2018), exact for every epsilon"
        )
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def _log_delta_terms(epsilon, mu):
    """log Phi(mu/2 - eps/mu) and eps + log Phi(-mu/2 - eps/mu): both terms of delta_G in log space."""
    log_first = float(log_ndtr(mu / 2.0 - epsilon / mu))
    log_second = epsilon + float(log_ndtr(-mu / 2.0 - epsilon / mu))
    return log_first, log_second


def gaussian_delta_exact(epsilon, noise_multiplier):
    r"""Exact :math:`\delta_G(\varepsilon)` of one Gaussian release with multiplier ``noise_multiplier``.

    Computed as :math:`\Phi(a)\,(1 - e^{\varepsilon+\log\Phi(b)-\log\Phi(a)})` with ``log_ndtr``
    and ``expm1`` so it stays accurate when delta is tiny and finite for huge epsilon
    (Balle & Wang 2018, Thm 8). ``epsilon = 0`` is allowed (total variation distance).
    """
    epsilon = check_nonnegative(epsilon, "epsilon")
    mu = 1.0 / check_noise_multiplier(noise_multiplier)
    log_first, log_second = _log_delta_terms(epsilon, mu)
    if log_second >= log_first:  # only by rounding: delta_G >= 0 always
        return 0.0
    return float(-math.exp(log_first) * math.expm1(log_second - log_first))


def gaussian_epsilon_exact(delta, noise_multiplier):
    r"""Smallest epsilon with :math:`\delta_G(\varepsilon) \le \delta` for one Gaussian release.

    :math:`\delta_G` is decreasing in epsilon, so this is a bisection; the returned epsilon is on the
    feasible side (its delta is at most ``delta``). For T composed Gaussian releases with equal
    multiplier z, pass ``noise_multiplier = z / sqrt(T)`` (the composition is again a Gaussian with
    :math:`\mu\sqrt{T}`; Dong, Roth & Su 2019).
    """
    delta = check_delta(delta)
    z = check_noise_multiplier(noise_multiplier)
    if gaussian_delta_exact(0.0, z) <= delta:
        return 0.0
    # delta_G(0) > delta: the feasible epsilons are those above the boundary; bisect to machine resolution
    return monotone_search(lambda epsilon: gaussian_delta_exact(epsilon, z) <= delta, 1.0, feasible_when="large",
                           lowest=0.0, highest=math.inf, rtol=0.0, at_limit=None)


def analytic_noise_multiplier(epsilon, delta):
    r"""Smallest noise multiplier z whose Gaussian mechanism is exactly (epsilon, delta)-DP.

    The analytic Gaussian mechanism (Balle & Wang 2018, Alg. 1), by bisection on z: for fixed
    epsilon, :math:`\delta_G` decreases as z grows. Valid for every epsilon > 0. The returned z is
    on the feasible side (relative tolerance 1e-12).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    return monotone_search(lambda z: gaussian_delta_exact(epsilon, z) <= delta, 1.0, feasible_when="large",
                           lowest=1e-12, highest=math.inf, rtol=1e-12, at_limit=lambda z, feasible: z)
