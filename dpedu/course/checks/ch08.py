"""Checks for the exercises of chapter 8: what epsilon means (trade-off curves, docs/math.md §21).

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri

from .common import CheckFailed, call, checker, close, expect, passed, scalar, settings

__all__ = ["check_gaussian_tradeoff", "check_epsilon_delta_tradeoff", "check_best_tpr"]

_ALPHA_RANGES = ((0.0005, 0.002), (0.005, 0.02), (0.03, 0.08), (0.1, 0.3), (0.4, 0.6), (0.8, 0.95))


def _alphas(draw):
    """Six false-positive rates from 0.001 to 0.9, drawn afresh (two significant digits)."""
    return [float(f"{draw.uniform(low, high):.2g}") for low, high in _ALPHA_RANGES]


def _gaussian(alpha, mu):
    return float(ndtr(ndtri(1.0 - alpha) - mu))


def _pair(alpha, epsilon, delta):
    return max(0.0, 1.0 - delta - math.exp(epsilon) * alpha, math.exp(-epsilon) * (1.0 - delta - alpha))


@checker
def check_gaussian_tradeoff(fn, *, seed=None):
    r"""``fn(alpha, mu)``: the mu-GDP trade-off curve :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)`."""
    draw = settings(seed)
    for low, high in ((0.3, 0.8), (0.8, 1.6), (2.0, 4.0)):
        mu = round(float(draw.uniform(low, high)), 2)
        for alpha in _alphas(draw):
            out = scalar(call(fn, alpha, mu), "beta")
            expected = _gaussian(alpha, mu)
            if close(out, expected, rtol=1e-6, atol=1e-9):
                continue
            expect(not close(out, 1.0 - expected, rtol=1e-6, atol=1e-9),
                   "you returned the attacker's true-positive rate 1 - beta; the curve is the false-NEGATIVE rate beta")
            expect(not close(out, float(ndtr(ndtri(alpha) - mu)), rtol=1e-6, atol=1e-9),
                   "your threshold is at the wrong quantile: a test with FPR α says 'in' for the top α of N(0, 1), "
                   "not the bottom α", more="the threshold is Φ⁻¹(1 − α), not Φ⁻¹(α).")
            expect(not close(out, float(ndtr(ndtri(1.0 - alpha) + mu)), rtol=1e-6, atol=1e-9),
                   "sign: your μ moves the threshold the wrong way; under the alternative N(μ, 1) the threshold sits "
                   "μ LOWER", more="β = Φ(Φ⁻¹(1 − α) − μ)")
            raise CheckFailed(f"for alpha={alpha}, mu={mu} expected beta = {expected:.6g}; got {out:.6g}")
    alpha = round(float(draw.uniform(0.1, 0.9)), 2)
    expect(close(scalar(call(fn, alpha, 0.0), "beta"), 1.0 - alpha),
           "with mu = 0 no test beats guessing: beta = 1 - alpha")
    passed("the Gaussian trade-off curve G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)")


@checker
def check_epsilon_delta_tradeoff(fn, *, seed=None):
    r"""``fn(alpha, epsilon, delta)``: :math:`f_{\varepsilon,\delta}(\alpha)=\max(0, 1-\delta-e^{\varepsilon}\alpha,
    e^{-\varepsilon}(1-\delta-\alpha))` (Dong, Roth & Su 2022, Prop. 2.5)."""
    draw = settings(seed)
    cases = [(round(float(draw.uniform(0.7, 1.3)), 2), 0.0),
             (round(float(draw.uniform(0.3, 0.7)), 2), round(float(draw.uniform(5e-4, 5e-3)), 4)),
             (round(float(draw.uniform(1.5, 2.5)), 2), round(float(draw.uniform(0.02, 0.08)), 3))]
    for epsilon, delta in cases:
        for alpha in _alphas(draw) + [0.999]:
            out = scalar(call(fn, alpha, epsilon, delta), "beta")
            expected = _pair(alpha, epsilon, delta)
            if close(out, expected, rtol=1e-6, atol=1e-10):
                continue
            steep = 1.0 - delta - math.exp(epsilon) * alpha
            flat = math.exp(-epsilon) * (1.0 - delta - alpha)
            expect(not close(out, max(0.0, steep), rtol=1e-6, atol=1e-10),
                   "only the steep line 1 − δ − exp(ε) α: DP holds for both orders of D and D', so the mirrored "
                   "line exp(−ε)(1 − δ − α) is a floor too (it wins at large alpha)",
                   more="the curve is the larger of the two lines at each α")
            expect(not close(out, max(0.0, flat), rtol=1e-6, atol=1e-10),
                   "only the flat line exp(−ε)(1 − δ − α): the steep line 1 − δ − exp(ε) α wins at small "
                   "alpha", more="the curve is the larger of the two lines at each α")
            expect(not close(out, max(steep, flat), rtol=1e-6, atol=1e-10), "an error rate is never negative: "
                                                                               "take the max with 0 as well")
            expect(not close(out, _pair(alpha, epsilon, 0.0), rtol=1e-6, atol=1e-10) or delta == 0,
                   "δ lowers both lines: 1 − δ − exp(ε) α and exp(−ε)(1 − δ − α)")
            raise CheckFailed(f"for alpha={alpha}, epsilon={epsilon}, delta={delta} expected {expected:.6g}; got {out:.6g}")
    passed("the (epsilon, delta) trade-off curve max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a))")


@checker
def check_best_tpr(fn, *, seed=None):
    r"""``fn(epsilons, deltas, fpr)``: the best attack's TPR at ``fpr`` that a privacy profile allows,
    :math:`1 - \max_j f_{\varepsilon_j,\delta_j}(\mathrm{fpr})` (docs/math.md §21.3)."""
    from ...accountants import SubsampledGaussianEvent, make_accountant

    draw = settings(seed)
    epsilons = np.linspace(0.05, 8.0, 160)
    cases = [(round(float(draw.uniform(3.0, 5.0)), 1), 0.01, 100 * int(draw.integers(50, 150))),
             (round(float(draw.uniform(0.9, 1.3)), 2), 0.05, 100 * int(draw.integers(5, 15)))]
    for z, q, steps in cases:
        deltas = make_accountant("pld").compose(SubsampledGaussianEvent(z, q), steps).get_delta(epsilons)
        for fpr in [float(f"{draw.uniform(low, high):.2g}") for low, high in ((5e-4, 2e-3), (5e-3, 2e-2), (0.05, 0.2))]:
            out = scalar(call(fn, epsilons.copy(), deltas.copy(), fpr), "the TPR")
            floors = np.array([_pair(fpr, e, d) for e, d in zip(epsilons, deltas)])
            expected = 1.0 - floors.max()
            if close(out, expected, rtol=1e-6, atol=1e-9):
                continue
            expect(not close(out, floors.max(), rtol=1e-6, atol=1e-9),
                   "you returned the floor beta on the FNR; the attacker's best TPR is 1 - beta")
            expect(not close(out, 1.0 - floors.min(), rtol=1e-6, atol=1e-9),
                   "every (eps_j, delta_j) pair is a valid floor: the best floor is the LARGEST (max over j), so the "
                   "best TPR is 1 - max_j f_j")
            expect(not close(out, 1.0 - floors[np.argmin(np.abs(epsilons - 1.0))], rtol=1e-6, atol=1e-9),
                   "one pair (near eps = 1) gives a valid floor but not the best one: take the max over all pairs")
            raise CheckFailed(f"for z={z}, q={q}, T={steps}, fpr={fpr} expected TPR {expected:.6g}; got {out:.6g}")
    passed("the attacker's best TPR at a fixed FPR, read off a privacy profile")
