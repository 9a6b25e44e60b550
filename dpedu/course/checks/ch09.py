"""Checks for the exercises of chapter 9: auditing.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ...lab.audit import epsilon_from_mu, one_run_epsilon_lower_bound

from .common import CheckFailed, call, checker, close, expect, passed, scalar, settings

__all__ = ['check_epsilon_from_rates', 'check_clopper_pearson_upper', 'check_audit_lower_bound',
           'check_gaussian_shift_lower_bound', 'check_epsilon_from_gdp', 'check_one_run_bound']


def _rates_epsilon(fpr, fnr, delta):
    """max(0, ln((1-delta-fpr)/fnr), ln((1-delta-fnr)/fpr)) for positive rates (Kairouz, Oh, Viswanath 2015)."""
    terms = [0.0]
    for a, b in ((fpr, fnr), (fnr, fpr)):
        if 1.0 - delta - a > 0:
            terms.append(math.log((1.0 - delta - a) / b))
    return max(terms)


@checker
def check_epsilon_from_rates(fn, *, seed=None):
    r"""``fn(fpr, fnr, delta)``: the smallest epsilon an (epsilon, delta)-DP mechanism needs to allow a test with
    these (positive) rates, :math:`\max(0, \ln\frac{1-\delta-\mathrm{FPR}}{\mathrm{FNR}},
    \ln\frac{1-\delta-\mathrm{FNR}}{\mathrm{FPR}})`."""
    draw = settings(seed)

    def rate(low, high):
        return round(float(draw.uniform(low, high)), 3)

    cases = [(rate(0.2, 0.4), rate(0.02, 0.08), 1e-5), (rate(0.02, 0.08), rate(0.2, 0.4), 1e-5),
             (rate(0.005, 0.02), rate(0.4, 0.6), 0.0), (rate(0.15, 0.25), rate(0.01, 0.03), 0.1),
             (rate(0.55, 0.7), rate(0.55, 0.7), 0.0), (rate(0.42, 0.47), rate(0.48, 0.52), 0.01)]
    for fpr, fnr, delta in cases:
        out = scalar(call(fn, fpr, fnr, delta), "epsilon")
        expected = _rates_epsilon(fpr, fnr, delta)
        if close(out, expected, rtol=1e-9):
            continue
        one_way = [math.log((1.0 - delta - a) / b) for a, b in ((fpr, fnr), (fnr, fpr))]
        expect(not any(close(out, v, rtol=1e-9) for v in one_way if v > 0),
                f"at FPR = {fpr}, FNR = {fnr} the other inequality is the binding one: DP constrains both "
               "FPR + exp(ε) FNR ≥ 1 − δ and FNR + exp(ε) FPR ≥ 1 − δ (the test can be flipped)",
               more="solve both for ε and keep the larger of the two logarithms")
        expect(not (expected == 0.0 and out < 0), "a test no better than guessing proves nothing: clamp at 0 "
                                                   "(epsilon is never negative)")
        expect(not close(out, _rates_epsilon(fpr, fnr, 0.0), rtol=1e-9),
               f"with delta = {delta} your answer ignores delta: delta is the probability the guarantee may fail, "
               "so it buys the attacker that much", more="you must subtract delta: (1 − δ − FPR) / FNR")
        raise CheckFailed(f"for FPR = {fpr}, FNR = {fnr}, delta = {delta} expected {expected:.6f}; got {out:.6f}")
    passed("epsilon from the false-positive and false-negative rates (both directions, clamped at 0)")


@checker
def check_clopper_pearson_upper(fn, *, seed=None):
    r"""``fn(k, n, confidence)``: the one-sided Clopper-Pearson upper bound on a binomial proportion,
    ``scipy.stats.beta.ppf(confidence, k + 1, n - k)`` (and 1 when k = n)."""
    from scipy.stats import beta

    def reference(k, n, confidence):
        return 1.0 if k == n else float(beta.ppf(confidence, k + 1, n - k))

    draw = settings(seed)
    small, large, full = int(draw.integers(10, 30)), int(draw.integers(200, 600)), int(draw.integers(5, 12))
    cases = ((int(draw.integers(1, small // 4)), small, 0.95), (0, int(draw.integers(8, 20)), 0.95),
             (int(draw.integers(3, 7)), 10, 0.95), (int(draw.integers(large // 20, large // 5)), large, 0.99),
             (full, full, 0.9))
    for k, n, confidence in cases:
        out = scalar(call(fn, k, n, confidence), "the upper bound")
        expected = reference(k, n, confidence)
        if close(out, expected, rtol=1e-7):
            continue
        expect(not (k == n and not np.isfinite(out)),
               f"k = n = {n}: every trial succeeded. What is the largest proportion that k = n successes are still "
               f"consistent with, at any confidence?",
               more="when k = n the upper bound is 1: beta.ppf with b = n − k = 0 is not defined, so return 1.0")
        if k < n:
            expect(not close(out, float(beta.ppf(1 - (1 - confidence) / 2, k + 1, n - k)), rtol=1e-7),
                   "that is the upper end of the TWO-sided interval (alpha/2 in each tail); the audit needs a "
                   "one-sided bound, with all of 1 − confidence in the one tail it cares about",
                   more="the one-sided bound is the Beta quantile at `confidence` itself, not at 1 − (1 − c)/2")
            expect(not close(out, float(beta.ppf(confidence, k, n - k + 1)), rtol=1e-7) or k == 0,
                   "that Beta belongs to the LOWER bound: the upper end counts one more success than you saw",
                   more="the upper bound uses Beta(k + 1, n − k); Beta(k, n − k + 1) belongs to the lower bound")
        p_hat = k / n
        wald = p_hat + 1.6448536269514722 * math.sqrt(p_hat * (1 - p_hat) / n)
        expect(not close(out, wald, rtol=1e-3) and not (k == 0 and out == 0),
               "the normal-approximation (Wald) interval collapses to 0 when k = 0, exactly the case an audit "
               "cares about: an audit needs an exact bound (Clopper & Pearson 1934)",
               more="the exact bound is a quantile of a Beta distribution: scipy.stats.beta.ppf(confidence, k + 1, "
                    "n − k)")
        failure = CheckFailed(f"for k = {k}, n = {n}, confidence {confidence} expected {expected:.6f}; got {out:.6f}")
        failure.more = "the exact one-sided bound is beta.ppf(confidence, k + 1, n − k), and 1 when k = n"
        raise failure
    passed("one-sided Clopper-Pearson upper bounds (exact Beta quantiles)")


@checker
def check_audit_lower_bound(fn, *, seed=None):
    r"""``fn(false_positives, n_out, false_negatives, n_in, delta, confidence)``: the audit's lower bound on
    epsilon, valid with probability ``confidence``: Clopper-Pearson upper bounds on FPR and FNR, each at level
    1 - (1 - confidence)/2 (both must hold at once), put into the epsilon-from-rates formula."""
    from ...lab.audit import clopper_pearson, epsilon_from_rates, epsilon_lower_bound

    def variant(fp, n_out, fn_, n_in, delta, level):
        return epsilon_from_rates(clopper_pearson(fp, n_out, confidence=level),
                                  clopper_pearson(fn_, n_in, confidence=level), delta=delta)

    draw = settings(seed)
    n1, n2, n3 = (int(draw.integers(low, high)) for low, high in ((300, 700), (100, 300), (200, 400)))
    cases = ((int(draw.integers(1, 8)), n1, int(draw.integers(n1 // 6, n1 // 3)), n1, 1e-5, 0.95),
             (0, n2, 0, n2, 1e-5, 0.95),
             (int(draw.integers(5, 15)), n3, int(draw.integers(3, 10)), n3, 1e-3, 0.9),
             (int(draw.integers(n3 // 2 - 10, n3 // 2)), n3, int(draw.integers(n3 // 2 - 20, n3 // 2 - 10)), n3, 1e-5,
              0.95))
    for fp, n_out, fn_, n_in, delta, confidence in cases:
        out = scalar(call(fn, fp, n_out, fn_, n_in, delta, confidence), "epsilon")
        expected = epsilon_lower_bound(false_positives=fp, n_out=n_out, false_negatives=fn_, n_in=n_in, delta=delta,
                                       confidence=confidence)
        if close(out, expected, rtol=1e-7):
            continue
        expect(not close(out, variant(fp, n_out, fn_, n_in, delta, confidence), rtol=1e-7),
               "both upper bounds must hold at the same time, so each may only fail with half the error "
               "probability (Bonferroni)", more="compute each at confidence 1 − (1 − confidence)/2")
        if fp > 0 and fn_ > 0:
            point = _rates_epsilon(fp / n_out, fn_ / n_in, delta)
            expect(not close(out, point, rtol=1e-7),
                    "you used the observed rates; they are estimates and could be lucky. Replace each by its "
                    "Clopper-Pearson UPPER bound, which makes epsilon smaller: a lower bound must err low")
        expect(not (fp == 0 and fn_ == 0 and not np.isfinite(out)),
                "zero observed errors must not give epsilon = inf: with finitely many runs the upper bounds on the "
                "rates are positive (about ln(2/alpha)/n)")
        raise CheckFailed(f"for FP = {fp}/{n_out}, FN = {fn_}/{n_in}, delta = {delta}, confidence {confidence} "
                             f"expected {expected:.6f}; got {out:.6f}")
    passed("an audit lower bound that holds with the stated confidence")


# --- white-box and one-run audits ---------------------------------------------------------------

@checker
def check_gaussian_shift_lower_bound(fn, *, seed=None):
    r"""``fn(mean_in, mean_out, sigma, n_in, n_out, confidence)``: one-sided lower confidence bound on
    :math:`\mu = (m_{in} - m_{out})/\sigma` from two sample means of Gaussian run statistics with known sigma,
    :math:`(\bar s_{in} - \bar s_{out})/\sigma - z_{c}\sqrt{1/n_{in} + 1/n_{out}}`, :math:`z_c = \Phi^{-1}(c)`."""
    draw = settings(seed)

    def value(low, high):
        return round(float(draw.uniform(low, high)), 2)

    cases = ((value(3.0, 5.0), value(-0.1, 0.1), value(2.0, 3.0), 500, 500, 0.95),
             (value(0.8, 1.2), value(-0.3, -0.1), value(2.5, 3.5), int(draw.integers(100, 300)),
              int(draw.integers(600, 1000)), 0.99),
             (value(0.2, 0.4), 0.0, 1.0, int(draw.integers(30, 80)), int(draw.integers(30, 80)), 0.9))
    for mean_in, mean_out, sigma, n_in, n_out, confidence in cases:
        out = scalar(call(fn, mean_in, mean_out, sigma, n_in, n_out, confidence), "your answer")
        shift = (mean_in - mean_out) / sigma
        se = math.sqrt(1 / n_in + 1 / n_out)
        expected = shift - stats.norm.ppf(confidence) * se
        if close(out, expected):
            continue
        expect(not close(out, shift - stats.norm.ppf(1 - (1 - confidence) / 2) * se),
               "that is the lower end of a TWO-sided interval; a lower bound may put all of 1 − confidence in the "
               "one tail below it", more="use the one-sided quantile norm.ppf(confidence)")
        expect(not close(out, shift), "the estimated shift alone is a point estimate: the bound must err low, by "
                                      "as much as the estimate's own noise allows at this confidence",
               more="subtract norm.ppf(confidence) times the standard error √(1/n_in + 1/n_out) (in units of σ)")
        expect(not close(out, shift - stats.norm.ppf(confidence) * math.sqrt(1 / n_in)),
               "only one sample's noise is counted: the difference of two means carries the noise of both",
               more="the difference of two means has variance σ² (1/n_in + 1/n_out)")
        expect(not close(out, (mean_in - mean_out) - stats.norm.ppf(confidence) * se * sigma),
               "μ is a shift in units of σ, and yours is in the units of the statistic",
               more="divide the difference of the means by σ")
        failure = CheckFailed(f"for means {mean_in}, {mean_out}, sigma {sigma}, n = {n_in}, {n_out}, confidence "
                              f"{confidence} expected {expected:.6f}; got {out:.6f}")
        failure.more = "μ̂ − Φ⁻¹(confidence) · √(1/n_in + 1/n_out) with μ̂ = (mean_in − mean_out)/σ"
        raise failure
    passed("a one-sided lower confidence bound on the Gaussian shift mu")


@checker
def check_epsilon_from_gdp(fn, *, seed=None):
    r"""``fn(mu, delta)``: the epsilon at ``delta`` of a mu-GDP pair, the smallest epsilon with
    :math:`\Phi(-\varepsilon/\mu + \mu/2) - e^{\varepsilon}\Phi(-\varepsilon/\mu - \mu/2) \le \delta`."""
    draw = settings(seed)
    cases = ((round(float(draw.uniform(1.5, 2.5)), 2), 1e-5), (round(float(draw.uniform(0.4, 0.7)), 2), 1e-5),
             (round(float(draw.uniform(0.8, 1.2)), 2), 1e-3), (round(float(draw.uniform(0.2, 0.35)), 3), 1e-5))
    for mu, delta in cases:
        out = scalar(call(fn, mu, delta), "your answer")
        expected = epsilon_from_mu(mu, delta=delta)
        if close(out, expected, rtol=1e-4, atol=1e-9):
            continue
        classic = mu * math.sqrt(2 * math.log(1.25 / delta))
        expect(not close(out, classic, rtol=1e-4, atol=1e-9),
                "that is the classic calibration sqrt(2 ln(1.25/delta)) / z solved for epsilon: an upper bound, "
                "loose, and valid only for epsilon < 1. Invert the exact Gaussian delta(epsilon) by bisection")
        expect(not close(out, epsilon_from_mu(mu / math.sqrt(2), delta=delta), rtol=1e-4),
                "mu is the shift over sigma, not over sigma * sqrt(2)")
        raise CheckFailed(f"for mu = {mu}, delta = {delta} expected {expected:.6f}; got {out:.6f}")
    passed("epsilon of mu-GDP at delta, from the exact Gaussian curve")


@checker
def check_one_run_bound(fn, *, seed=None):
    r"""``fn(r, v, confidence)``: Steinke et al.'s one-run lower bound for delta = 0, the epsilon where
    :math:`P[\mathrm{Bin}(r, e^\varepsilon/(1+e^\varepsilon)) \ge v] = 1 - \text{confidence}` (0 if v is not
    significant even at epsilon = 0)."""
    draw = settings(seed)
    cases = ((100, int(draw.integers(72, 88)), 0.95), (200, int(draw.integers(180, 196)), 0.95),
             (50, int(draw.integers(29, 34)), 0.9), (100, int(draw.integers(48, 54)), 0.95))
    for r, v, confidence in cases:
        out = scalar(call(fn, r, v, confidence), "your answer")
        expected = one_run_epsilon_lower_bound(m=max(r, 1), r=r, v=v, delta=0.0, confidence=confidence)
        if close(out, expected, rtol=1e-3, atol=1e-9) or (expected == 0 and abs(out) < 1e-6):
            continue
        off_by_one = one_run_epsilon_lower_bound(m=r, r=r, v=min(v + 1, r), delta=0.0, confidence=confidence)
        expect(not close(out, off_by_one, rtol=1e-3, atol=1e-9),
                "P[V >= v] is binom.sf(v - 1, r, p), not binom.sf(v, r, p) (that is P[V > v])")
        expect(not (expected == 0 and out < 0), "epsilon is never negative: return 0 when v is not significant")
        raise CheckFailed(f"for r = {r} guesses, v = {v} right, confidence {confidence} expected {expected:.6f}; "
                             f"got {out:.6f}")
    passed("the one-run lower bound (a binomial test against randomized response)")
