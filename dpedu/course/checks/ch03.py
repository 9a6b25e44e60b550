"""Checks for the exercises of chapter 3: composition.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math

from .common import CheckFailed, call, checker, close, expect, passed, scalar, settings

__all__ = ['check_book_total', 'check_advanced_composition', 'check_zcdp_epsilon', 'check_per_iteration_epsilon']


def _pair(value, what):
    try:
        first, second = value
    except (TypeError, ValueError):
        raise CheckFailed(f"{what} must be a pair (epsilon, delta); got {value!r}") from None
    return scalar(first, f"the epsilon of {what}"), scalar(second, f"the delta of {what}")


@checker
def check_book_total(fn, *, seed=None):
    r"""``fn(iterations, epsilon_per_iteration, delta_per_iteration)``: the book's sequential total, ``((k+1)eps, k delta)``."""
    draw = settings(seed)
    for _ in range(2):
        k, epsilon = int(draw.integers(5, 60)), round(float(draw.uniform(0.02, 0.5)), 2)
        delta = float(10.0 ** -draw.integers(5, 8))
        eps_total, delta_total = _pair(call(fn, k, epsilon, delta), "the total")
        if not close(eps_total, (k + 1) * epsilon):
            expect(not close(eps_total, k * epsilon),
                    "the noisy count (n + Lap(1/epsilon), computed once) costs epsilon too: (k + 1) epsilon in total")
            raise CheckFailed(f"for k={k} iterations at epsilon={epsilon} expected total epsilon "
                                 f"{(k + 1) * epsilon:g}; got {eps_total:g}")
        if not close(delta_total, k * delta, atol=0):
            expect(not close(delta_total, delta, atol=0), "deltas add up too: k iterations spend k * delta")
            expect(not close(delta_total, (k + 1) * delta, atol=0),
                    "the Laplace count is pure epsilon-DP (delta = 0): only the k Gaussian steps spend delta")
            raise CheckFailed(f"expected total delta {k * delta:g}; got {delta_total:g}")
    passed("the book's total: ((k + 1) epsilon, k delta) by sequential composition")


def _advanced(epsilon, delta, k, delta_prime):
    return (epsilon * math.sqrt(2 * k * math.log(1 / delta_prime)) + k * epsilon * math.expm1(epsilon),
            k * delta + delta_prime)


@checker
def check_advanced_composition(fn, *, seed=None):
    r"""``fn(epsilon, delta, k, delta_prime)`` must return :math:`(\varepsilon\sqrt{2k\ln(1/\delta')} +
    k\varepsilon(e^\varepsilon-1),\ k\delta+\delta')` (Dwork, Rothblum & Vadhan 2010)."""
    draw = settings(seed)
    cases = [(round(float(draw.uniform(0.5, 1.5)), 2), 0.0, int(draw.integers(100, 1000)), 1e-5),
             (round(float(draw.uniform(0.05, 0.3)), 3), float(10.0 ** -draw.integers(6, 9)),
              int(draw.integers(50, 500)), float(10.0 ** -draw.integers(4, 7))),
             (round(float(draw.uniform(0.005, 0.02)), 4), float(10.0 ** -draw.integers(7, 10)),
              int(draw.integers(2000, 20_000)), float(10.0 ** -draw.integers(5, 8)))]
    for epsilon, delta, k, delta_prime in cases:
        eps_out, delta_out = _pair(call(fn, epsilon, delta, k, delta_prime), "the composed guarantee")
        eps_expected, delta_expected = _advanced(epsilon, delta, k, delta_prime)
        if not close(eps_out, eps_expected):
            expect(not close(eps_out, 2 * epsilon * math.sqrt(2 * k * math.log(1 / delta_prime))),
                   "2 ε √(2k ln(1/δ′)) is the simplified form from the book's plot code, not the theorem",
                   more="the theorem's ε′ has two terms: ε √(2k ln(1/δ′)) and a drift term k ε (exp(ε) − 1)")
            expect(not close(eps_out, epsilon * math.sqrt(2 * k * math.log(1 / delta_prime)) + k * epsilon**2),
                   "your second term k ε² is only the small-ε approximation of the drift term, and it is smaller, "
                   "so it is not a bound", more="the drift term is k ε (exp(ε) − 1); math.expm1 computes exp(ε) − 1")
            raise CheckFailed(f"for epsilon={epsilon}, k={k}, delta'={delta_prime} expected epsilon' = "
                                 f"{eps_expected:.6g}; got {eps_out:.6g}")
        if not close(delta_out, delta_expected, atol=0):
            expect(not close(delta_out, delta_prime, atol=0),
                    "the total delta is k * delta + delta': each step still spends its own delta")
            raise CheckFailed(f"expected total delta {delta_expected:g}; got {delta_out:g}")
    passed("advanced composition (Dwork-Rothblum-Vadhan), drift term and all")


@checker
def check_zcdp_epsilon(fn, *, seed=None):
    r"""``fn(noise_multiplier, steps, delta)``: T Gaussian steps are :math:`\rho = T/(2z^2)`-zCDP, so
    :math:`\varepsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}` (Bun & Steinke 2016)."""
    draw = settings(seed)
    cases = [(round(float(draw.uniform(0.8, 2.0)), 2), 1, float(10.0 ** -draw.integers(4, 8))),
             (round(float(draw.uniform(5.0, 15.0)), 1), int(draw.integers(20, 200)), float(10.0 ** -draw.integers(4, 8))),
             (round(float(draw.uniform(2.0, 5.0)), 2), int(draw.integers(200, 2000)), float(10.0 ** -draw.integers(4, 8)))]
    for z, steps, delta in cases:
        out = scalar(call(fn, z, steps, delta), "epsilon")
        rho = steps / (2 * z * z)
        expected = rho + 2 * math.sqrt(rho * math.log(1 / delta))
        if not close(out, expected):
            def eps(r):
                return r + 2 * math.sqrt(r * math.log(1 / delta))
            expect(not close(out, eps(steps / (z * z))), "your ρ is twice too large: a factor 1/2 is missing",
                   more="one Gaussian step with multiplier z is ρ = 1/(2z²)-zCDP")
            if steps > 1:
                expect(not close(out, eps(1 / (2 * z * z))), "rho adds up over steps: T steps give T / (2 z^2)")
            expect(not close(out, rho + math.sqrt(rho * math.log(1 / delta))),
                   "your conversion from ρ to ε misses a factor 2", more="ε = ρ + 2 √(ρ ln(1/δ))")
            raise CheckFailed(f"for z={z}, T={steps}, delta={delta} expected epsilon {expected:.6g}; got {out:.6g}")
    passed("zCDP: ρ = T/(2z²), ε = ρ + 2 √(ρ ln(1/δ))")


@checker
def check_per_iteration_epsilon(fn, *, seed=None):
    r"""``fn(total_epsilon, k, delta_prime)``: the largest per-step epsilon whose k-fold advanced composition
    (with per-step delta 0) is at most ``total_epsilon`` (to 0.1 %)."""
    from scipy.optimize import brentq

    draw = settings(seed)
    cases = [(round(float(draw.uniform(0.5, 2.0)), 2), int(draw.integers(50, 300)), float(10.0 ** -draw.integers(4, 7))),
             (round(float(draw.uniform(3.0, 8.0)), 1), int(draw.integers(500, 3000)), float(10.0 ** -draw.integers(5, 8)))]
    for total, k, delta_prime in cases:
        out = scalar(call(fn, total, k, delta_prime), "the per-iteration epsilon")
        expect(out > 0, f"the per-iteration epsilon must be positive; got {out:g}")
        expect(out <= total, f"too large: one iteration alone may not spend more than the total {total:g}; got "
                             f"{out:.6g} per iteration")
        root = brentq(lambda e: _advanced(e, 0.0, k, delta_prime)[0] - total, 1e-12, total, xtol=1e-15)
        spent = _advanced(out, 0.0, k, delta_prime)[0]
        if spent > total * (1 + 1e-9):
            raise CheckFailed(f"too large: with epsilon = {out:.6g} per iteration, {k} iterations cost "
                                 f"{spent:.6g} > {total:g} by advanced composition")
        if out < root * (1 - 1e-3):
            expect(not close(out, total / k),
                    f"total / k = {total / k:g} is the sequential split; advanced composition lets each of the {k} "
                    f"iterations spend more (about {root:.4g}): solve advanced_composition(eps, 0, k, delta') = total")
            raise CheckFailed(f"valid but wasteful: {out:.6g} per iteration spends only {spent:.6g} of {total:g}; "
                                 f"the largest is {root:.6g} (find it by bisection)")
    passed("the largest per-iteration epsilon under advanced composition")
