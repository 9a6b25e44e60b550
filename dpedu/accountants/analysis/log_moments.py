r"""The sampled Gaussian's log-moments :math:`\ln A_\alpha` in closed form and by series (for ``moments`` and ``rdp``).

One step of DP-SGD with Poisson rate :math:`q` and noise multiplier :math:`z` (unit sensitivity,
add/remove neighbours) is, in the worst case, the pair of one-dimensional distributions

.. math:: \mu_0 = \mathcal N(0, z^2), \qquad \mu = (1-q)\,\mu_0 + q\,\mathcal N(1, z^2).

Everything here is built from the moments of the likelihood ratio (docs/math.md §12.4, §13.5)

.. math:: A_\alpha = \mathbb E_{x\sim\mu_0}\!\left[\left(\frac{\mu(x)}{\mu_0(x)}\right)^{\alpha}\right]
          = \mathbb E_{x\sim\mu_0}\!\left[\left(1-q+q\,e^{(2x-1)/(2z^2)}\right)^{\alpha}\right],

whose logarithm is Abadi et al.'s log-moment at :math:`\lambda=\alpha-1` and gives the RDP curve
:math:`\varepsilon_{\mathrm{RDP}}(\alpha) = \ln A_\alpha/(\alpha-1)` (Mironov, Talwar & Zhang 2019, §3).
All sums are done in log space (``gammaln``, ``logsumexp``, ``log_ndtr``, ``log1p``, ``expm1``) because
the terms range from :math:`e^{-10^5}` to :math:`e^{10^6}` for the parameters students try.

>>> round(float(log_a(0.01, 4.0, 20)) / 19 * 10_000, 4)   # 10,000 DP-SGD steps: RDP at order 20
0.6527

The numerical integration that checks these values independently is in
:mod:`dpedu.accountants.analysis.log_moments_integrated`.

References
----------
.. [ACG16] Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar, Zhang. Deep Learning with Differential
   Privacy. CCS 2016, arXiv:1607.00133.
.. [MTZ19] Mironov, Talwar, Zhang. Rényi Differential Privacy of the Sampled Gaussian Mechanism.
   arXiv:1908.10530, 2019.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, log_ndtr, logsumexp

from ...ground.events import MIN_EVENT_NOISE_MULTIPLIER
from ...ground.validation import check_noise_multiplier, check_sampling_rate
from .orders import check_orders, shape_like_orders

__all__ = ["SeriesDidNotConvergeError", "log_a_integer", "log_a_fractional", "log_a", "log_moment",
           "check_analysis_noise_multiplier"]

_LOG_SERIES_TOL = -30.0  # MTZ19 §3.3: drop series terms below e^-30 (A_alpha >= 1, so relative 1e-13)
_MAX_SERIES_TERMS = 1_000_000


def check_analysis_noise_multiplier(value, name="noise_multiplier"):
    """A noise multiplier the analysis functions can take: finite and at least ``MIN_EVENT_NOISE_MULTIPLIER``
    (1e-50, the events' limit). Below it :math:`z^2` underflows or the curve exceeds 1e100 at every order: refused
    by name (a ``ValueError``), never a bare warning. Large z is accepted: the curves go to 0."""
    z = check_noise_multiplier(value, name)
    if z < MIN_EVENT_NOISE_MULTIPLIER:
        raise ValueError(f"{name} must be in [{MIN_EVENT_NOISE_MULTIPLIER:g}, inf) (below it the privacy loss is "
                         f"beyond the float range: the release is effectively not private); got {z!r}")
    return z


class SeriesDidNotConvergeError(ArithmeticError):
    """The fractional-order series of MTZ19 §3.3 did not reach its stopping tolerance."""


def log_a_integer(sampling_rate, noise_multiplier, orders):
    r""":math:`\ln A_\alpha` for integer orders, by the binomial closed form.

    Parameters
    ----------
    sampling_rate : float
        Poisson rate :math:`q \in (0, 1]`.
    noise_multiplier : float
        :math:`z > 0`.
    orders : int or array of int
        Orders :math:`\alpha \ge 1`.

    Returns
    -------
    float or numpy.ndarray
        :math:`\ln A_\alpha`, shaped like ``orders``.

    Notes
    -----
    Expanding :math:`(1-q+q\,e^{(2x-1)/(2z^2)})^\alpha` binomially and using
    :math:`\mathbb E_{\mu_0}[e^{j(2x-1)/(2z^2)}] = e^{(j^2-j)/(2z^2)}` ([ACG16]_ App. B; [MTZ19]_ §3.3):

    .. math:: A_\alpha = \sum_{j=0}^{\alpha}\binom{\alpha}{j}(1-q)^{\alpha-j}q^j e^{(j^2-j)/(2z^2)}.

    The binomial weights sum to 1 and the :math:`j = 0, 1` exponents vanish, so we evaluate

    .. math:: A_\alpha - 1 = \sum_{j=2}^{\alpha}\binom{\alpha}{j}(1-q)^{\alpha-j}q^j
              \left(e^{(j^2-j)/(2z^2)} - 1\right),

    a sum of positive terms, with ``logsumexp`` and ``log(expm1)``. This keeps full *relative*
    precision when :math:`A_\alpha - 1` is tiny (q = 1e-6), where summing to :math:`1 + 10^{-15}`
    would lose every digit. q = 1 is the plain Gaussian, :math:`\alpha(\alpha-1)/(2z^2)`.

    Examples
    --------
    >>> round(log_a_integer(1.0, 2.0, 3), 12)        # plain Gaussian: alpha (alpha - 1) / (2 z^2)
    0.75
    """
    q = check_sampling_rate(sampling_rate)
    z = check_analysis_noise_multiplier(noise_multiplier)
    alphas = check_orders(orders, integer=True, strict=False)
    flat = alphas.ravel()
    if q == 1.0:
        return shape_like_orders(flat * (flat - 1) / (2 * z * z), alphas)
    # one flat array holding j = 2..alpha for every order (a ragged sum: no work past each alpha)
    counts = np.maximum(flat.astype(np.int64) - 1, 0)  # j = 0, 1 contribute nothing to A - 1
    log_a_minus_1 = np.full(flat.shape, -np.inf)  # alpha = 1: A_1 = E[mu/mu0] = 1
    has_terms = counts > 0
    if np.any(has_terms):
        counts = counts[has_terms]
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        k = np.repeat(flat[has_terms], counts)
        j = np.arange(k.size) - np.repeat(starts, counts) + 2.0
        exponent = (j * j - j) / (2 * z * z)  # > 0 for j >= 2
        with np.errstate(divide="ignore"):  # exponent 0 (z > 1e154) is a zero term: log 0 = -inf
            log_expm1 = exponent + np.log(-np.expm1(-exponent))  # log(e^c - 1), no overflow for large c
        log_terms = (gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1)
                     + (k - j) * math.log1p(-q) + j * math.log(q) + log_expm1)
        peak = np.maximum.reduceat(log_terms, starts)  # logsumexp per order, by segments
        peak = np.where(np.isfinite(peak), peak, 0.0)  # all terms zero (-inf): keep -inf - peak finite
        with np.errstate(divide="ignore"):
            scaled_sums = np.add.reduceat(np.exp(log_terms - np.repeat(peak, counts)), starts)
            log_a_minus_1[has_terms] = peak + np.log(scaled_sums)
    return shape_like_orders(np.logaddexp(0.0, log_a_minus_1), alphas)


def log_a_fractional(sampling_rate, noise_multiplier, orders):
    r""":math:`\ln A_\alpha` for real orders :math:`\alpha > 1`, by the two-sided series of [MTZ19]_ §3.3.

    Parameters
    ----------
    sampling_rate : float
        Poisson rate :math:`q \in (0, 1]`.
    noise_multiplier : float
        :math:`z > 0`.
    orders : float or array of float
        Orders :math:`\alpha > 1` (integers allowed: the series then stops at :math:`i = \alpha` and
        equals :func:`log_a_integer`).

    Returns
    -------
    float or numpy.ndarray
        :math:`\ln A_\alpha`, shaped like ``orders``.

    Raises
    ------
    SeriesDidNotConvergeError
        If the terms are still above :math:`e^{-30}` after a million terms (never observed; the
        error names the orders so they can be checked with :func:`log_a_integrated`).

    Notes
    -----
    Split the integral at :math:`z_0 = z^2\ln(1/q-1) + \tfrac12`, where :math:`q\,e^{(2x-1)/(2z^2)} = 1-q`,
    and expand each side with the generalised binomial series (ratio :math:`\le 1` on each side):

    .. math:: A_\alpha = \sum_{i\ge 0}\binom{\alpha}{i}\Big[
              (1-q)^{\alpha-i}q^{i}e^{(i^2-i)/(2z^2)}\,\tfrac12\operatorname{erfc}\!\big(\tfrac{i-z_0}{\sqrt2 z}\big)
            + (1-q)^{i}q^{\alpha-i}e^{((\alpha-i)^2-(\alpha-i))/(2z^2)}\,
              \tfrac12\operatorname{erfc}\!\big(\tfrac{z_0-(\alpha-i)}{\sqrt2 z}\big)\Big].

    :math:`\binom{\alpha}{i}` has sign :math:`(-1)^{\max(0,\,i-\lfloor\alpha\rfloor-1)}`, so positive and
    negative terms are accumulated separately in log space and subtracted once at the end. For
    :math:`i \ge \alpha` the terms alternate in sign and both brackets shrink monotonically in
    :math:`i` (:math:`|\binom{\alpha}{i+1}/\binom{\alpha}{i}| < 1` and the Mills-ratio inequality), so
    the omitted tail is smaller than the last term kept. Terms are added in chunks (32, 64, ...)
    until that last term is below :math:`e^{-30}`; as :math:`A_\alpha \ge 1`, :math:`\ln A_\alpha` is then
    accurate to about :math:`10^{-13}` absolute (what matters after multiplying by T steps).

    Examples
    --------
    >>> abs(log_a_fractional(0.1, 1.0, 5) - log_a_integer(0.1, 1.0, 5)) < 1e-12
    True
    """
    q = check_sampling_rate(sampling_rate)
    z = check_analysis_noise_multiplier(noise_multiplier)
    alphas = check_orders(orders)
    flat = alphas.ravel()
    if q == 1.0:
        return shape_like_orders(flat * (flat - 1) / (2 * z * z), alphas)
    log_q, log_1mq = math.log(q), math.log1p(-q)
    z0 = z * z * (log_1mq - log_q) + 0.5
    log_pos = np.full(flat.shape, -np.inf)
    log_neg = np.full(flat.shape, -np.inf)
    active = np.arange(flat.size)
    start, size = 0, 32
    while active.size:
        if start >= _MAX_SERIES_TERMS:
            raise SeriesDidNotConvergeError(
                f"the fractional-order series for q={q!r}, z={z!r} did not converge within "
                f"{_MAX_SERIES_TERMS} terms at orders {flat[active][:5].tolist()}; use integer orders "
                f"(log_a_integer) or check the value with log_a_integrated"
            )
        a = flat[active][:, None]
        i = np.arange(start, start + size, dtype=float)[None, :]
        log_abs_binom = gammaln(a + 1) - gammaln(i + 1) - gammaln(a - i + 1)  # -inf past an integer alpha
        negative = (np.maximum(0.0, i - np.floor(a) - 1) % 2) == 1
        k = a - i
        log_first = (k * log_1mq + i * log_q + (i * i - i) / (2 * z * z)
                     + log_ndtr((z0 - i) / z))
        log_second = (i * log_1mq + k * log_q + (k * k - k) / (2 * z * z)
                      + log_ndtr((k - z0) / z))
        log_terms = log_abs_binom + np.logaddexp(log_first, log_second)  # both brackets share the sign
        log_pos[active] = np.logaddexp(log_pos[active], logsumexp(np.where(negative, -np.inf, log_terms), axis=1))
        log_neg[active] = np.logaddexp(log_neg[active], logsumexp(np.where(negative, log_terms, -np.inf), axis=1))
        last_i = start + size - 1
        # past i = alpha the terms alternate in sign and shrink, so the omitted tail is smaller than
        # the last term kept: stop once that is below e^-30 (and alpha >= 1 so A >= 1)
        done = (last_i >= flat[active]) & (log_terms[:, -1] < _LOG_SERIES_TOL)
        active = active[~done]
        start, size = start + size, min(2 * size, 65_536)
    if np.any(log_neg >= log_pos):  # A_alpha >= 1 > 0; only a numerical failure could get here
        raise SeriesDidNotConvergeError(
            f"cancellation in the fractional-order series for q={q!r}, z={z!r}: the negative terms "
            f"reached the positive ones; check with log_a_integrated"
        )
    log_a_values = log_pos + np.log1p(-np.exp(log_neg - log_pos))
    # A_alpha >= (E[mu/mu0])^alpha = 1 by Jensen; a value below 0 is rounding in the last bits
    return shape_like_orders(np.maximum(log_a_values, 0.0), alphas)


def log_a(sampling_rate, noise_multiplier, orders):
    r""":math:`\ln A_\alpha` for any orders :math:`\alpha > 1`: closed form at integers, series otherwise.

    Parameters
    ----------
    sampling_rate, noise_multiplier : float
        :math:`q \in (0, 1]` and :math:`z > 0`.
    orders : float or array of float
        Orders :math:`\alpha > 1`.

    Returns
    -------
    float or numpy.ndarray
        See :func:`log_a_integer` and :func:`log_a_fractional`.

    Examples
    --------
    >>> round(log_a(0.5, 1.0, 2), 12) == round(math.log1p(0.25 * (math.e - 1)), 12)   # 1 + q^2 (e^{1/z^2}-1)
    True
    """
    q = check_sampling_rate(sampling_rate)
    z = check_analysis_noise_multiplier(noise_multiplier)
    alphas = check_orders(orders)
    flat = alphas.ravel()
    out = np.empty_like(flat)
    is_int = flat == np.round(flat)
    if np.any(is_int):
        out[is_int] = log_a_integer(q, z, flat[is_int])
    if np.any(~is_int):
        out[~is_int] = log_a_fractional(q, z, flat[~is_int])
    return shape_like_orders(out, alphas)


def log_moment(sampling_rate, noise_multiplier, moment_orders):
    r"""Abadi et al.'s log-moment :math:`\alpha(\lambda) = \ln E_2(\lambda) = \ln A_{\lambda+1}` (closed form).

    Parameters
    ----------
    sampling_rate, noise_multiplier : float
        :math:`q \in (0, 1]` and :math:`z > 0`.
    moment_orders : int or array of int
        :math:`\lambda \ge 1`.

    Returns
    -------
    float or numpy.ndarray

    Notes
    -----
    [ACG16]_ §3.2 defines :math:`\alpha(\lambda) = \ln\max(E_1, E_2)` with
    :math:`E_1 = \mathbb E_{\mu_0}[(\mu_0/\mu)^\lambda]` and :math:`E_2 = \mathbb E_{\mu}[(\mu/\mu_0)^\lambda]`.
    :math:`E_2 = A_{\lambda+1}` has the binomial form of :func:`log_a_integer`, and
    :math:`E_1 \le E_2`, i.e. :math:`D_{\lambda+1}(\mu_0\|\mu) \le D_{\lambda+1}(\mu\|\mu_0)`
    ([MTZ19]_ §3, Thm 5 (verify the number); checked by integration in the tests), so
    :math:`\ln E_2` is the log-moment.

    Examples
    --------
    >>> round(log_moment(0.01, 4.0, 19) * 10_000, 4)     # = 19 * (RDP at order 20) * T
    12.4
    """
    lambdas = check_orders(moment_orders, "moment_orders", integer=True, strict=False)
    return log_a_integer(sampling_rate, noise_multiplier, lambdas + 1)
