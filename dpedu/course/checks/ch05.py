"""Checks for the exercises of chapter 5: the moments accountant.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp, xlog1py, xlogy

from .common import CheckFailed, call, checker, close, expect, passed, scalar, settings

__all__ = ['check_log_moment', 'check_epsilon_from_log_moments', 'check_smallest_feasible']


def _log_moment(q, z, lam, a=None):
    a = lam + 1 if a is None else a
    j = np.arange(a + 1)
    log_binom = gammaln(a + 1) - gammaln(j + 1) - gammaln(a - j + 1)
    # xlog1py / xlogy give 0 * log(0) = 0, so q = 1 (every j < a has weight 0) needs no special case
    log_terms = log_binom + xlog1py(a - j, -q) + xlogy(j, q) + (j * j - j) / (2 * z * z)
    return float(logsumexp(log_terms))


@checker
def check_log_moment(fn, *, seed=None):
    r"""``fn(sampling_rate, noise_multiplier, moment_order)``: Abadi et al.'s log-moment of one sampled Gaussian
    step, :math:`\alpha(\lambda)=\ln\sum_{j=0}^{\lambda+1}\binom{\lambda+1}{j}(1-q)^{\lambda+1-j}q^j e^{(j^2-j)/(2z^2)}`."""
    draw = settings(seed)
    cases = [(round(float(draw.uniform(0.005, 0.05)), 3), round(float(draw.uniform(2.0, 6.0)), 1), 1),
             (round(float(draw.uniform(0.005, 0.05)), 3), round(float(draw.uniform(2.0, 6.0)), 1),
              int(draw.integers(8, 32))),
             (round(float(draw.uniform(0.02, 0.1)), 3), round(float(draw.uniform(1.0, 1.5)), 2),
              int(draw.integers(16, 33))),          # j^2 / (2 z^2) <= 561: a sum of plain exponentials still fits
             (1.0, round(float(draw.uniform(1.5, 3.0)), 1), int(draw.integers(2, 6)))]
    for q, z, lam in cases:
        out = scalar(call(fn, q, z, lam), "the log-moment")
        expected = _log_moment(q, z, lam)
        if not close(out, expected, rtol=1e-6, atol=1e-12):
            expect(not close(out, _log_moment(q, z, lam, a=lam), rtol=1e-6, atol=1e-12),
                    "off by one: the sum runs over j = 0 .. lambda + 1 (binomial coefficients of lambda + 1)")
            expect(not close(out, math.exp(expected), rtol=1e-6, atol=1e-12),
                    "return the log-moment alpha(lambda), the logarithm of the sum")
            raise CheckFailed(f"for q={q}, z={z}, lambda={lam} expected {expected:.8g}; got {out:.8g}")
    out = scalar(call(fn, 0.01, 0.8, 256), "the log-moment")
    expect(close(out, _log_moment(0.01, 0.8, 256), rtol=1e-6),
            "for lambda = 256 and z = 0.8 the terms overflow float64 (exp(j^2 / (2 z^2)) is about e^50000): add "
            "them in log space (scipy.special.gammaln for the binomials, scipy.special.logsumexp for the sum)")
    passed("the sampled Gaussian's log-moment, in log space")


@checker
def check_epsilon_from_log_moments(fn, *, seed=None):
    r"""``fn(moment_orders, log_moments, delta)``: the tail bound :math:`\varepsilon=\min_\lambda(\alpha(\lambda)+\ln(1/\delta))/\lambda`."""
    from ...accountants import SubsampledGaussianEvent
    from ...accountants.moments import MomentsAccountant

    draw = settings(seed)
    z, q = round(float(draw.uniform(2.0, 5.0)), 1), 1.0 / int(draw.choice([50, 100, 200]))
    acc = MomentsAccountant().compose(SubsampledGaussianEvent(z, q), int(draw.integers(20, 100)) * round(1 / q))
    lambdas, alpha = acc.log_moments()
    # from lambda = 2: at lambda = 1 dividing by lambda changes nothing, and "forgot to divide" would look like "max"
    lambdas, alpha = lambdas[1:], alpha[1:]
    for delta in (float(10.0 ** -draw.integers(4, 7)), float(10.0 ** -draw.integers(7, 10))):
        out = scalar(call(fn, lambdas.copy(), alpha.copy(), delta), "epsilon")
        candidates = (alpha + math.log(1 / delta)) / lambdas
        expected = float(candidates.min())
        if not close(out, expected):
            expect(not close(out, candidates.max()), "you returned the largest candidate, and every λ gives a valid "
                                                     "ε", more="take the smallest (min) over λ")
            expect(not close(out, float(np.min(alpha + math.log(1 / delta)))),
                   "your candidates are not divided by λ", more="ε = (α(λ) + ln(1/δ)) / λ for each λ")
            expect(not close(out, float(np.min((alpha + math.log(delta)) / lambdas))),
                    "sign: ln(1/delta) = -ln(delta) is positive")
            expect(not close(out, lambdas[np.argmin(candidates)]), "return epsilon, not the best lambda")
            raise CheckFailed(f"for delta={delta} expected epsilon {expected:.6g}; got {out:.6g}")
    passed("the tail bound, min over lambda of (alpha + ln(1/delta))/lambda")


@checker
def check_smallest_feasible(fn, *, seed=None):
    r"""``fn(epsilon_of, target, lo, hi, rtol)``: bisection for the smallest z with ``epsilon_of(z) <= target``,
    returning the **feasible** end of the final bracket (docs/math.md §17)."""
    from ...accountants import SubsampledGaussianEvent, make_accountant

    draw = settings(seed)
    scale, target = round(float(draw.uniform(5.0, 20.0)), 1), round(float(draw.uniform(1.5, 4.0)), 1)
    rdp_target = round(float(draw.uniform(0.8, 2.0)), 2)

    def inverse(z):
        return scale / z

    def rdp(z):
        return make_accountant("rdp").compose(SubsampledGaussianEvent(z, 0.01), 10_000).get_epsilon(1e-5)

    for epsilon_of, target, lo, hi, root in ((inverse, target, 0.5, 100.0, scale / target),
                                             (rdp, rdp_target, 0.5, 20.0, None)):
        out = scalar(call(fn, epsilon_of, target, lo, hi, 1e-4), "the noise multiplier")
        expect(lo <= out <= hi, f"the answer must lie in the bracket [lo, hi] = [{lo:g}, {hi:g}] you were given "
                                f"(bisection never leaves it); got z = {out:.6g}")
        spent = epsilon_of(out)
        expect(spent <= target, f"the returned z = {out:.6g} gives epsilon {spent:.6g} > target {target:g}: you "
                                 "returned the midpoint or the infeasible end. Return hi, the end of the bracket that "
                                 "meets the target (Opacus once overshot by 0.5 this way, opacus#346)")
        if root is not None:
            expect(out <= root * (1 + 2e-4), f"valid but too much noise: {out:.6g} is more than rtol above the "
                                              f"smallest feasible z = {root:.6g}; keep bisecting until hi - lo <= rtol * hi")
        else:
            expect(epsilon_of(out * (1 - 2e-4)) > target, "valid but too much noise: keep bisecting until "
                                                           "hi - lo <= rtol * hi")
    passed("bisection that never overshoots the target")
