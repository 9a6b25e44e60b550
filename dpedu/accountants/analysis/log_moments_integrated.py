r"""Reference values of the sampled Gaussian's moments by numerical integration (the independent check).

:func:`log_a_integrated` integrates :math:`\mathbb E_{x\sim\mu_0}[(\mu(x)/\mu_0(x))^p]` for any real power
p with the trapezoid rule in log space; :func:`abadi_log_moments_integrated` gives both of Abadi et al.'s
directions :math:`E_1, E_2` the way the paper's implementation computed them (docs/math.md §12.4). The
closed forms of :mod:`dpedu.accountants.analysis.log_moments` are tested against these.

>>> from dpedu.accountants.analysis.log_moments import log_a_integer
>>> abs(log_a_integrated(0.01, 4.0, 20.0) - log_a_integer(0.01, 4.0, 20)) < 1e-10
True

References
----------
.. [ACG16] Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar, Zhang. Deep Learning with Differential
   Privacy. CCS 2016, arXiv:1607.00133.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from ...ground.validation import check_array, check_sampling_rate
from .log_moments import check_analysis_noise_multiplier
from .orders import check_orders

__all__ = ["log_a_integrated", "abadi_log_moments_integrated"]


def log_a_integrated(sampling_rate, noise_multiplier, power):
    r"""Reference value of :math:`\ln\mathbb E_{x\sim\mu_0}[(\mu(x)/\mu_0(x))^{p}]` by numerical integration.

    Parameters
    ----------
    sampling_rate, noise_multiplier : float
        :math:`q \in (0, 1]` and :math:`z > 0`.
    power : float
        Any real :math:`p`. :math:`p=\alpha` gives :math:`\ln A_\alpha`; :math:`p = \lambda+1` and
        :math:`p = -\lambda` give Abadi's :math:`\ln E_2(\lambda)` and :math:`\ln E_1(\lambda)`.

    Returns
    -------
    float

    Notes
    -----
    The integrand :math:`\phi_z(x)\,(1-q+q e^{(2x-1)/(2z^2)})^{p}` is log-concave plus a bounded slope:
    :math:`\tfrac{d}{dx}\ln f \in (\min(0,p)-x,\ \max(0,p)-x)/z^2`. So outside
    :math:`[\min(0,p)-40z,\ \max(0,p)+40z]` it is below :math:`e^{-800}` times its maximum, and we
    integrate that interval with the trapezoid rule on a step of :math:`\min(z, z^2)/16` (about
    :math:`\min(z,z^2)/(16\sqrt{|p|})` for very large :math:`|p|`), summing in log space with
    ``logsumexp``. The integrand is analytic in a strip of half-width :math:`\pi z^2`, where the
    trapezoid rule converges geometrically: the value agrees with the closed forms to about 1e-12.
    This is the independent check of the series; it is slower (tens of thousands of points).

    """
    q = check_sampling_rate(sampling_rate)
    z = check_analysis_noise_multiplier(noise_multiplier)
    p = check_array(power, "power", ndim=0).item()
    if p == 0:
        return 0.0
    lo, hi = min(0.0, p) - 40 * z - 1, max(0.0, p) + 40 * z + 1
    step = min(z, z * z) / 16 / max(1.0, math.sqrt(abs(p)) / 4)
    n_points = int(math.ceil((hi - lo) / step)) + 1
    if n_points > 20_000_000:
        raise ValueError(f"power={p!r} with noise_multiplier={z!r} needs {n_points} grid points; too many")
    x = np.linspace(lo, hi, n_points)
    log_density = -0.5 * (x / z) ** 2 - math.log(z * math.sqrt(2 * math.pi))
    log_weights = np.log(np.full(n_points, x[1] - x[0]))
    log_weights[[0, -1]] -= math.log(2.0)  # trapezoid end points (negligible anyway)
    # E[r^p] - 1 = E[r^p - 1]: integrating expm1(p ln r) keeps relative precision when A - 1 ~ q^2 is
    # tiny. Its sign is that of p ln r, so positive and negative parts are summed separately.
    y = p * np.logaddexp((-math.inf if q == 1.0 else math.log1p(-q)), math.log(q) + (2 * x - 1) / (2 * z * z))
    with np.errstate(divide="ignore"):  # y == 0 exactly gives log 0 = -inf, a zero term
        log_abs_expm1 = np.maximum(y, 0.0) + np.log(-np.expm1(-np.abs(y)))
    log_parts = log_density + log_weights + log_abs_expm1
    log_pos = logsumexp(np.where(y > 0, log_parts, -np.inf))
    log_neg = logsumexp(np.where(y < 0, log_parts, -np.inf))
    if log_pos == log_neg == -math.inf:  # the ratio is 1 to double precision everywhere (a huge z): A = 1
        return 0.0
    if log_pos >= log_neg:  # A = 1 + e^{pos} - e^{neg} >= 1
        with np.errstate(divide="ignore"):
            return float(np.logaddexp(0.0, log_pos + np.log(-np.expm1(log_neg - log_pos))))
    return float(np.log1p(-np.exp(log_neg + np.log(-np.expm1(log_pos - log_neg)))))


def abadi_log_moments_integrated(sampling_rate, noise_multiplier, moment_orders):
    r"""Both of Abadi et al.'s directions, :math:`(\ln E_1(\lambda), \ln E_2(\lambda))`, by numerical integration.

    Parameters
    ----------
    sampling_rate, noise_multiplier : float
        :math:`q \in (0, 1]` and :math:`z > 0`.
    moment_orders : int or array of int
        :math:`\lambda \ge 1`.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        :math:`\ln E_1` and :math:`\ln E_2`, each shaped like ``np.atleast_1d(moment_orders)``.

    Notes
    -----
    .. math:: E_1 = \mathbb E_{x\sim\mu_0}\!\left[\left(\tfrac{\mu_0(x)}{\mu(x)}\right)^{\lambda}\right],\qquad
              E_2 = \mathbb E_{x\sim\mu}\!\left[\left(\tfrac{\mu(x)}{\mu_0(x)}\right)^{\lambda}\right]
              = \mathbb E_{x\sim\mu_0}\!\left[\left(\tfrac{\mu(x)}{\mu_0(x)}\right)^{\lambda+1}\right]

    ([ACG16]_ §3.2 and App. B, which computes both by numerical integration), each with
    :func:`log_a_integrated` at powers :math:`-\lambda` and :math:`\lambda+1`.

    Examples
    --------
    >>> log_e1, log_e2 = abadi_log_moments_integrated(0.01, 4.0, [1, 19])
    >>> bool(np.all(log_e1 <= log_e2))
    True
    """
    q = check_sampling_rate(sampling_rate)
    z = check_analysis_noise_multiplier(noise_multiplier)
    lambdas = np.atleast_1d(check_orders(moment_orders, "moment_orders", integer=True, strict=False))
    log_e1 = np.array([log_a_integrated(q, z, -lam) for lam in lambdas])
    log_e2 = np.array([log_a_integrated(q, z, lam + 1) for lam in lambdas])
    return log_e1, log_e2
