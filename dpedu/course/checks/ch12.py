"""Checks for the exercises of chapter 12: what the released model reveals.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, stats

from .common import CheckFailed, call, checker, close, expect, passed, scalar, settings

__all__ = ["check_last_iterate_delta", "check_flat_from"]


def _integrated(epsilon, z, q, T):
    """int (P - e^eps Q)_+ for P = Bin(T, q) + N(0, z^2 T), Q = N(0, z^2 T): the trapezoid rule on the densities
    themselves, on a grid of 40,001 points over [-14 sigma, T + 14 sigma] (no loss function, no crossing point)."""
    sigma = z * math.sqrt(T)
    x = np.linspace(-14 * sigma, T + 14 * sigma, 40_001)
    p = np.zeros_like(x)
    for k, b in enumerate(stats.binom.pmf(np.arange(T + 1), T, q)):
        if b > 1e-300:
            p += b * np.exp(-0.5 * ((x - k) / sigma) ** 2)
    q_density = math.exp(epsilon) * np.exp(-0.5 * (x / sigma) ** 2)
    return float(integrate.trapezoid(np.maximum(p - q_density, 0.0), x)) / (sigma * math.sqrt(2 * math.pi))


@checker
def check_last_iterate_delta(fn, *, seed=None):
    r"""``fn(epsilon, z, q, T)``: :math:`\delta(\varepsilon) = \int (P - e^\varepsilon Q)_+` of the linear-loss last
    iterate, :math:`P = \mathrm{Bin}(T, q) + \mathcal N(0, z^2T)`, :math:`Q = \mathcal N(0, z^2T)` (the remove
    direction), compared with a numerical integration of the densities themselves, at settings drawn afresh."""
    draw = settings(seed)

    def setting(eps, z, q, steps):                     # each a (low, high) range
        return (round(float(draw.uniform(*eps)), 2), round(float(draw.uniform(*z)), 2),
                round(float(draw.uniform(*q)), 3), int(draw.integers(*steps)))

    cases = [setting((0.3, 0.8), (0.8, 1.4), (0.03, 0.08), (30, 50)),
             setting((0.8, 1.5), (0.6, 1.0), (0.08, 0.15), (20, 40)),
             setting((0.2, 0.5), (1.5, 2.5), (0.01, 0.03), (40, 80)),
             setting((1.5, 2.5), (0.6, 0.9), (0.15, 0.25), (8, 16))]
    for epsilon, z, q, T in cases:
        out = scalar(call(fn, epsilon, z, q, T), "delta")
        expected = _integrated(epsilon, z, q, T)
        if close(out, expected, rtol=1e-4, atol=1e-12):
            continue
        mean_only = stats.norm.sf(epsilon * z * math.sqrt(T) / (q * T) - q * T / (2 * z * math.sqrt(T))) - \
            math.exp(epsilon) * stats.norm.sf(epsilon * z * math.sqrt(T) / (q * T) + q * T / (2 * z * math.sqrt(T)))
        expect(not close(out, mean_only, rtol=1e-3),
               "you replaced Bin(T, q) by its mean qT: that is a Gaussian pair, not this one; keep the mixture "
               "sum_k b_k N(k, z^2 T)", more="P's density is sum_k C(T, k) q^k (1 - q)^(T - k) φ((x − k)/(z√T)) / (z√T)")
        expect(not close(out, _integrated(epsilon, z / math.sqrt(T), q, T), rtol=1e-4),
               "the noise after T steps has variance z² T, not z²: T independent steps of variance z² add up")
        expect(out >= 0, "delta is an integral of a positive part: it is never negative")
        expect(out < 1.0 + 1e-12, "delta is at most 1 (a difference of two probabilities)")
        raise CheckFailed(f"for epsilon = {epsilon}, z = {z}, q = {q}, T = {T} expected delta = {expected:.6e}; "
                          f"got {out:.6e}",)
    # a property the curve must have: it decreases in epsilon
    values = [scalar(call(fn, e, 1.0, 0.05, 40), "delta") for e in (0.2, 0.5, 1.0, 2.0)]
    expect(all(a >= b for a, b in zip(values, values[1:])), "delta(epsilon) must decrease as epsilon grows")
    passed("delta(epsilon) of the linear-loss last iterate: a binomial mixture of Gaussians against one")


def _mu_squared(T, d, s):
    """mu(T)^2 of the full-batch bound with c = 1 (docs/math.md §28.5): min(T s^2, min over j < T of (d + j s)^2/j)."""
    windows = np.arange(1, T)
    inner = np.min((d + windows * s) ** 2 / windows) if T > 1 else math.inf
    return min(T * s * s, inner)


@checker
def check_flat_from(fn, *, seed=None):
    r"""``fn(d, s)``: the first T from which the full-batch bound :math:`\mu(T)^2 = \min(Ts^2, \min_{j<T}
    (d + js)^2/j)` stops growing (:math:`\mu(T') = \mu(T)` for every :math:`T' \ge T`), at settings drawn
    afresh (always s < 4d, so the bound grows for at least one step)."""
    draw = settings(seed)
    ranges = (((1.5, 4.0), (0.05, 0.2)), ((5.0, 15.0), (0.5, 1.5)), ((0.25, 0.5), (0.3, 0.7)),
              ((20.0, 50.0), (0.2, 0.3)), ((5.0, 9.0), (0.03, 0.07)))
    for d, s in [(round(float(draw.uniform(*d)), 2), round(float(draw.uniform(*s)), 3)) for d, s in ranges]:
        out = scalar(call(fn, d, s), "T")
        expect(float(out).is_integer() and out >= 1, f"T is a number of steps (a whole number >= 1); got {out}")
        T = int(out)
        plateau = min((d + j * s) ** 2 / j for j in range(1, int(4 * d / s) + 3))
        value = _mu_squared(T, d, s)
        if math.isclose(value, plateau, rel_tol=1e-12) and (T == 1 or _mu_squared(T - 1, d, s) < plateau * (1 - 1e-12)):
            continue
        expect(math.isclose(value, plateau, rel_tol=1e-12),
               f"for d = {d}, s = {s} the bound at T = {T} is still growing (mu² = {value:.6g}, the plateau is "
               f"{plateau:.6g}): it flattens later",
               more="before the plateau, the composition term T s² is the smaller one; it stops growing when T s² "
                    "reaches the best window's (d + j s)² / j")
        raise CheckFailed(f"for d = {d}, s = {s} the bound is already flat before T = {T}: give the first such T",)
    passed("the first T from which the proven bound no longer grows")
