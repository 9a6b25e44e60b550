r"""Log-moments and Rényi DP of the sampled Gaussian mechanism (shared by ``moments`` and ``rdp``).

One step of DP-SGD with Poisson rate :math:`q` and noise multiplier :math:`z` (unit sensitivity,
add/remove neighbours) is, in the worst case, the pair of one-dimensional distributions

.. math:: \mu_0 = \mathcal N(0, z^2), \qquad \mu = (1-q)\,\mu_0 + q\,\mathcal N(1, z^2).

Everything here is built from the moments of the likelihood ratio (MATH.md §12.4, §13.5)

.. math:: A_\alpha = \mathbb E_{x\sim\mu_0}\!\left[\left(\frac{\mu(x)}{\mu_0(x)}\right)^{\alpha}\right]
          = \mathbb E_{x\sim\mu_0}\!\left[\left(1-q+q\,e^{(2x-1)/(2z^2)}\right)^{\alpha}\right],

whose logarithm is Abadi et al.'s log-moment at :math:`\lambda=\alpha-1` and gives the RDP curve
:math:`\varepsilon_{\mathrm{RDP}}(\alpha) = \ln A_\alpha/(\alpha-1)` (Mironov, Talwar & Zhang 2019, §3).
All sums are done in log space (``gammaln``, ``logsumexp``, ``log_ndtr``, ``log1p``, ``expm1``) because
the terms range from :math:`e^{-10^5}` to :math:`e^{10^6}` for the parameters students try.

The module also holds the other RDP building blocks (Gaussian, Laplace, pure DP) and the two
RDP :math:`\to(\varepsilon,\delta)` conversions.

>>> round(float(rdp_sampled_gaussian(0.01, 4.0, 20)) * 10_000, 4)   # 10,000 DP-SGD steps at order 20
0.6527
>>> eps, order = epsilon_from_rdp(DEFAULT_ORDERS, 10_000 * rdp_sampled_gaussian(0.01, 4.0, DEFAULT_ORDERS), 1e-5)
>>> round(eps, 4), order
(1.0355, 17.0)

References
----------
.. [ACG16] Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar, Zhang. Deep Learning with Differential
   Privacy. CCS 2016, arXiv:1607.00133.
.. [MTZ19] Mironov, Talwar, Zhang. Rényi Differential Privacy of the Sampled Gaussian Mechanism.
   arXiv:1908.10530, 2019.
.. [Mir17] Mironov. Rényi Differential Privacy. CSF 2017.
.. [BBG20] Balle, Barthe, Gaboardi, Hsu, Sato. Hypothesis Testing Interpretations and Rényi Differential
   Privacy. AISTATS 2020.
.. [CKS20] Canonne, Kamath, Steinke. The Discrete Gaussian for Differential Privacy. NeurIPS 2020.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.special import gammaln, log_ndtr, logsumexp

from ..validation import (
    check_array,
    check_delta,
    check_epsilon,
    check_noise_multiplier,
    check_positive,
    check_sampling_rate,
)

__all__ = [
    "DEFAULT_ORDERS",
    "OrderGridEdgeWarning",
    "SeriesDidNotConvergeError",
    "log_a_integer",
    "log_a_fractional",
    "log_a",
    "log_a_integrated",
    "log_moment",
    "abadi_log_moments_integrated",
    "rdp_gaussian",
    "rdp_sampled_gaussian",
    "rdp_laplace",
    "rdp_pure_dp",
    "epsilon_from_rdp",
    "delta_from_rdp",
]

#: Opacus's default grid {1.1, 1.2, ..., 10.9} U {12, ..., 63}, extended with larger orders (ratio
#: <= 4/3 apart, so epsilon stays within ~1 % of the continuous optimum) up to 1024. Large orders are
#: what a large noise multiplier or a tiny sampling rate needs: one Gaussian release with z = 100 at
#: delta = 1e-5 is best accounted at alpha = 320 (improved conversion; ~480 with the classic one).
DEFAULT_ORDERS = np.array(
    [1 + x / 10 for x in range(1, 100)]
    + list(range(12, 64))
    + [80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024],
    dtype=float,
)
DEFAULT_ORDERS.flags.writeable = False

_LOG_SERIES_TOL = -30.0  # MTZ19 §3.3: drop series terms below e^-30 (A_alpha >= 1, so relative 1e-13)
_MAX_SERIES_TERMS = 1_000_000


class OrderGridEdgeWarning(UserWarning):
    """The best order sits at an end of the order grid: a wider grid may give a smaller epsilon."""


class SeriesDidNotConvergeError(ArithmeticError):
    """The fractional-order series of MTZ19 §3.3 did not reach its stopping tolerance."""


# --------------------------------------------------------------------------------------------------
# argument checks


def _check_orders(orders, name="orders", *, integer=False, minimum=1.0, strict=True):
    """Orders as a float array (scalar or 1-D), each > ``minimum`` (>= if not strict), integers if asked."""
    arr = check_array(orders, name, ndim=(0, 1))
    bad = arr <= minimum if strict else arr < minimum
    if np.any(bad):
        relation = ">" if strict else ">="
        raise ValueError(f"{name} must all be {relation} {minimum:g}; got {arr[bad].ravel()[:5].tolist()}")
    if integer and np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be integers; got {arr[arr != np.round(arr)].ravel()[:5].tolist()}")
    return arr


def _shaped(values, orders_array):
    """A float for scalar orders, otherwise an array with the shape of the orders."""
    values = np.asarray(values, dtype=float).reshape(orders_array.shape)
    return float(values) if values.ndim == 0 else values


def _log1m(q):
    """log(1 - q) without the divide-by-zero warning at q = 1 (it is -inf there)."""
    return -math.inf if q == 1.0 else math.log1p(-q)


# --------------------------------------------------------------------------------------------------
# log A_alpha: closed form (integer), series (fractional), numerical integration (reference)


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
    z = check_noise_multiplier(noise_multiplier)
    alphas = _check_orders(orders, integer=True, strict=False)
    flat = alphas.ravel()
    if q == 1.0:
        return _shaped(flat * (flat - 1) / (2 * z * z), alphas)
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
    return _shaped(np.logaddexp(0.0, log_a_minus_1), alphas)


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
    z = check_noise_multiplier(noise_multiplier)
    alphas = _check_orders(orders)
    flat = alphas.ravel()
    if q == 1.0:
        return _shaped(flat * (flat - 1) / (2 * z * z), alphas)
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
    return _shaped(np.maximum(log_a_values, 0.0), alphas)


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
    z = check_noise_multiplier(noise_multiplier)
    alphas = _check_orders(orders)
    flat = alphas.ravel()
    out = np.empty_like(flat)
    is_int = flat == np.round(flat)
    if np.any(is_int):
        out[is_int] = log_a_integer(q, z, flat[is_int])
    if np.any(~is_int):
        out[~is_int] = log_a_fractional(q, z, flat[~is_int])
    return _shaped(out, alphas)


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

    Examples
    --------
    >>> abs(log_a_integrated(0.01, 4.0, 20.0) - log_a_integer(0.01, 4.0, 20)) < 1e-10
    True
    """
    q = check_sampling_rate(sampling_rate)
    z = check_noise_multiplier(noise_multiplier)
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
    y = p * np.logaddexp(_log1m(q), math.log(q) + (2 * x - 1) / (2 * z * z))
    with np.errstate(divide="ignore"):  # y == 0 exactly gives log 0 = -inf, a zero term
        log_abs_expm1 = np.maximum(y, 0.0) + np.log(-np.expm1(-np.abs(y)))
    log_parts = log_density + log_weights + log_abs_expm1
    log_pos = logsumexp(np.where(y > 0, log_parts, -np.inf))
    log_neg = logsumexp(np.where(y < 0, log_parts, -np.inf))
    if log_pos >= log_neg:  # A = 1 + e^{pos} - e^{neg} >= 1
        with np.errstate(divide="ignore"):
            return float(np.logaddexp(0.0, log_pos + np.log(-np.expm1(log_neg - log_pos))))
    return float(np.log1p(-np.exp(log_neg + np.log(-np.expm1(log_pos - log_neg)))))


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
    lambdas = _check_orders(moment_orders, "moment_orders", integer=True, strict=False)
    return log_a_integer(sampling_rate, noise_multiplier, lambdas + 1)


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
    z = check_noise_multiplier(noise_multiplier)
    lambdas = np.atleast_1d(_check_orders(moment_orders, "moment_orders", integer=True, strict=False))
    log_e1 = np.array([log_a_integrated(q, z, -lam) for lam in lambdas])
    log_e2 = np.array([log_a_integrated(q, z, lam + 1) for lam in lambdas])
    return log_e1, log_e2


# --------------------------------------------------------------------------------------------------
# RDP curves of the building blocks


def rdp_gaussian(noise_multiplier, orders):
    r"""RDP of one Gaussian release, :math:`\varepsilon(\alpha) = \alpha/(2z^2)` ([Mir17]_ Prop. 7).

    Examples
    --------
    >>> rdp_gaussian(1.0, [2.0, 4.0])
    array([1., 2.])
    """
    z = check_noise_multiplier(noise_multiplier)
    alphas = _check_orders(orders)
    return _shaped(alphas / (2 * z * z), alphas)


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
    alphas = _check_orders(orders)
    if q == 1.0:  # no subsampling: exactly the Gaussian curve (not ln A / (alpha - 1) with its rounding)
        return rdp_gaussian(noise_multiplier, orders)
    values = np.asarray(log_a(q, noise_multiplier, alphas)) / (alphas - 1)
    return _shaped(values, alphas)


def rdp_laplace(scale, orders):
    r"""RDP of the Laplace mechanism with scale ``scale`` = b for a unit-L1-sensitivity query.

    Notes
    -----
    [Mir17]_ Table II (MATH.md §3.2):

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
    alphas = _check_orders(orders)
    log_mix = np.logaddexp(
        np.log(alphas / (2 * alphas - 1)) + (alphas - 1) / b,
        np.log((alphas - 1) / (2 * alphas - 1)) - alphas / b,
    )
    return _shaped(log_mix / (alphas - 1), alphas)


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
    alphas = _check_orders(orders)
    return _shaped(np.minimum(eps, alphas * eps * eps / 2), alphas)


# --------------------------------------------------------------------------------------------------
# RDP -> (epsilon, delta)

_CONVERSIONS = ("improved", "classic")


def check_conversion(conversion):
    """``"improved"`` or ``"classic"``, else ValueError."""
    if conversion not in _CONVERSIONS:
        raise ValueError(f"conversion must be one of {_CONVERSIONS}; got {conversion!r}")
    return conversion


def _check_curve(orders, rdp):
    alphas = np.atleast_1d(_check_orders(orders))
    if alphas.ndim != 1:
        raise ValueError(f"orders must be 1-D; got shape {alphas.shape}")
    values = np.atleast_1d(np.asarray(rdp, dtype=float))
    if values.shape != alphas.shape:
        raise ValueError(f"rdp must have the shape of orders {alphas.shape}; got {values.shape}")
    if np.any(np.isnan(values)) or np.any(values < 0):
        raise ValueError("rdp must be >= 0 (inf allowed) at every order")
    return alphas, values


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
    alphas, values = _check_curve(orders, rdp)
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
    alphas, values = _check_curve(orders, rdp)
    eps = check_epsilon(epsilon)
    conversion = check_conversion(conversion)
    log_delta = (alphas - 1) * (values - eps)
    if conversion == "improved":
        log_delta = log_delta + (alphas - 1) * np.log1p(-1 / alphas) - np.log(alphas)
    best = int(np.argmin(log_delta))
    return math.exp(min(0.0, float(log_delta[best]))), float(alphas[best])


def warn_if_at_edge(best_order, orders, parameter="orders", stacklevel=3, *, lower_limit=None):
    """Emit :class:`OrderGridEdgeWarning` when ``best_order`` is the smallest or largest of ``orders``.

    ``lower_limit`` is the smallest order the method allows at all (1 for Abadi's integer moment
    orders): at that edge the advice is to use another method, not to extend the grid.
    """
    smallest, largest = float(np.min(orders)), float(np.max(orders))
    if smallest == largest:
        return
    if best_order == largest:
        edge, advice = "largest", f"extend {parameter} with larger orders"
    elif best_order == smallest:
        edge = "smallest"
        if lower_limit is not None and smallest <= lower_limit:
            advice = "no smaller order exists here; the RDP accountant's fractional orders in (1, 2) can do better"
        else:
            advice = f"extend {parameter} with orders closer to 1"
    else:
        return
    warnings.warn(
        f"the best order {best_order:g} is the {edge} in {parameter} ({smallest:g} .. {largest:g}), so epsilon "
        f"may be smaller outside the grid: {advice}",
        OrderGridEdgeWarning,
        stacklevel=stacklevel,
    )
