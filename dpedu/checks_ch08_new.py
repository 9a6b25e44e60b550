r"""Chapter 8 checks for the white-box and one-run audits (to be moved into the chapter-8 module of dpedu.checks).

Each ``check_*`` calls the student's function on the checker's own inputs, prints ``passed: ...`` or raises
``AssertionError`` with a teaching hint naming the recognised mistake.

>>> from scipy.stats import norm
>>> check_gaussian_shift_lower_bound(lambda mi, mo, s, n1, n0, c: (mi - mo) / s - norm.ppf(c) * (1 / n1 + 1 / n0) ** 0.5)
passed: a one-sided lower confidence bound on the Gaussian shift mu
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats

from .audit import epsilon_from_mu, one_run_epsilon_lower_bound

__all__ = ["check_gaussian_shift_lower_bound", "check_epsilon_from_gdp", "check_one_run_bound"]

NOT_WRITTEN = "not written yet: replace the `raise NotImplementedError` line with your solution"


def _call(fn, *args):
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out = fn(*args)
    except NotImplementedError:
        raise AssertionError(NOT_WRITTEN) from None
    except AssertionError:
        raise
    except Exception as exc:
        raise AssertionError(f"your function raised {type(exc).__name__}: {exc}") from exc
    if out is None:
        raise AssertionError(NOT_WRITTEN)
    try:
        value = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        raise AssertionError(f"the answer must be a number; got {type(out).__name__} {out!r}") from None
    if value.size != 1:
        raise AssertionError(f"the answer must be a single number; got an array of shape {value.shape}")
    return float(value.reshape(()))


def _close(a, b, rtol=1e-6):
    return bool(np.isfinite(a) and math.isclose(a, b, rel_tol=rtol, abs_tol=1e-9))


def _expect(condition, hint):
    if not condition:
        raise AssertionError(hint)


def check_gaussian_shift_lower_bound(fn):
    r"""``fn(mean_in, mean_out, sigma, n_in, n_out, confidence)``: one-sided lower confidence bound on
    :math:`\mu = (m_{in} - m_{out})/\sigma` from two sample means of Gaussian run statistics with known sigma,
    :math:`(\bar s_{in} - \bar s_{out})/\sigma - z_{c}\sqrt{1/n_{in} + 1/n_{out}}`, :math:`z_c = \Phi^{-1}(c)`."""
    for mean_in, mean_out, sigma, n_in, n_out, confidence in ((4.1, 0.05, 2.4, 500, 500, 0.95),
                                                             (1.0, -0.2, 3.0, 200, 800, 0.99),
                                                             (0.3, 0.0, 1.0, 50, 50, 0.9)):
        out = _call(fn, mean_in, mean_out, sigma, n_in, n_out, confidence)
        shift = (mean_in - mean_out) / sigma
        se = math.sqrt(1 / n_in + 1 / n_out)
        expected = shift - stats.norm.ppf(confidence) * se
        if _close(out, expected):
            continue
        _expect(not _close(out, shift - stats.norm.ppf(1 - (1 - confidence) / 2) * se),
                "that is the lower end of a TWO-sided interval; a lower bound needs only the one-sided quantile "
                "norm.ppf(confidence)")
        _expect(not _close(out, shift), "the estimated shift alone is a point estimate: subtract its uncertainty "
                                        "(z times the standard error) so the bound errs low")
        _expect(not _close(out, shift - stats.norm.ppf(confidence) * math.sqrt(1 / n_in)),
                "the difference of two means has variance sigma^2 (1/n_in + 1/n_out): both samples are noisy")
        _expect(not _close(out, (mean_in - mean_out) - stats.norm.ppf(confidence) * se * sigma),
                "mu is the shift in units of sigma: divide the difference of the means by sigma")
        raise AssertionError(f"for means {mean_in}, {mean_out}, sigma {sigma}, n = {n_in}, {n_out}, confidence "
                             f"{confidence} expected {expected:.6f}; got {out:.6f}")
    print("passed: a one-sided lower confidence bound on the Gaussian shift mu")


def check_epsilon_from_gdp(fn):
    r"""``fn(mu, delta)``: the epsilon at ``delta`` of a mu-GDP pair, the smallest epsilon with
    :math:`\Phi(-\varepsilon/\mu + \mu/2) - e^{\varepsilon}\Phi(-\varepsilon/\mu - \mu/2) \le \delta`."""
    for mu, delta in ((2.0, 1e-5), (0.5, 1e-5), (1.0, 1e-3), (0.27, 1e-5)):
        out = _call(fn, mu, delta)
        expected = epsilon_from_mu(mu, delta=delta)
        if _close(out, expected, rtol=1e-4):
            continue
        classic = mu * math.sqrt(2 * math.log(1.25 / delta))
        _expect(not _close(out, classic, rtol=1e-4),
                "that is the classic calibration sqrt(2 ln(1.25/delta)) / z solved for epsilon: an upper bound, "
                "loose, and valid only for epsilon < 1. Invert the exact Gaussian delta(epsilon) by bisection")
        _expect(not _close(out, epsilon_from_mu(mu / math.sqrt(2), delta=delta), rtol=1e-4),
                "mu is the shift over sigma, not over sigma * sqrt(2)")
        raise AssertionError(f"for mu = {mu}, delta = {delta} expected {expected:.6f}; got {out:.6f}")
    print("passed: epsilon of mu-GDP at delta, from the exact Gaussian curve")


def check_one_run_bound(fn):
    r"""``fn(r, v, confidence)``: Steinke et al.'s one-run lower bound for delta = 0, the epsilon where
    :math:`P[\mathrm{Bin}(r, e^\varepsilon/(1+e^\varepsilon)) \ge v] = 1 - \text{confidence}` (0 if v is not
    significant even at epsilon = 0)."""
    for r, v, confidence in ((100, 80, 0.95), (200, 190, 0.95), (50, 30, 0.9), (100, 52, 0.95)):
        out = _call(fn, r, v, confidence)
        expected = one_run_epsilon_lower_bound(m=max(r, 1), r=r, v=v, delta=0.0, confidence=confidence)
        if _close(out, expected, rtol=1e-3) or (expected == 0 and abs(out) < 1e-6):
            continue
        off_by_one = one_run_epsilon_lower_bound(m=r, r=r, v=min(v + 1, r), delta=0.0, confidence=confidence)
        _expect(not _close(out, off_by_one, rtol=1e-3),
                "P[V >= v] is binom.sf(v - 1, r, p), not binom.sf(v, r, p) (that is P[V > v])")
        _expect(not (expected == 0 and out < 0), "epsilon is never negative: return 0 when v is not significant")
        raise AssertionError(f"for r = {r} guesses, v = {v} right, confidence {confidence} expected {expected:.6f}; "
                             f"got {out:.6f}")
    print("passed: the one-run lower bound (a binomial test against randomized response)")
