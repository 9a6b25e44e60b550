"""Checks for the exercises of chapter 6: pro-active DP.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math

import numpy as np

from .common import CheckFailed, call, checker, classic_z, close, expect, passed, scalar, settings

__all__ = ['check_proactive_noise_multiplier', 'check_proactive_schedule', 'check_closed_form_applies']


def _proactive_z(epsilon, delta):
    return math.sqrt(2.0 * (epsilon + math.log(1.0 / delta)) / epsilon)


@checker
def check_proactive_noise_multiplier(fn, *, seed=None):
    r"""``fn(epsilon, delta)``: the pro-active closed form :math:`z = \sqrt{2(\varepsilon+\ln(1/\delta))/\varepsilon}`."""
    draw = settings(seed)
    cases = [(round(float(draw.uniform(0.3, 0.5)), 2), 1 / int(draw.integers(20_000, 200_000))),
             (round(float(draw.uniform(0.1, 0.3)), 2), float(10.0 ** -draw.integers(5, 9)))]
    for epsilon, delta in cases:
        out = scalar(call(fn, epsilon, delta), "the noise multiplier")
        expected = _proactive_z(epsilon, delta)
        if not close(out, expected):
            expect(not close(out, classic_z(epsilon, delta)),
                   "that is the classic calibration of ONE Gaussian release, not the pro-active z for the whole run",
                   more="the pro-active z is √(2 (ε + ln(1/δ)) / ε)")
            expect(not close(out, 2.0 * (epsilon + math.log(1.0 / delta)) / epsilon), "a square root is missing",
                   more="z = √(2 (ε + ln(1/δ)) / ε)")
            expect(not close(out, math.sqrt(2.0 * math.log(1.0 / delta) / epsilon)),
                    "the numerator is epsilon + ln(1/delta), not ln(1/delta) alone")
            raise CheckFailed(f"for epsilon={epsilon}, delta={delta:.4g} expected z = {expected:.6g}; got {out:.6g}")
    passed("pro-active z = sqrt(2 (epsilon + ln(1/delta)) / epsilon): no T in it")


@checker
def check_proactive_schedule(fn, *, seed=None):
    r"""``fn(epsilon, dataset_size, epochs)`` -> ``(steps, sampling_rate, expected_batch_size)`` with
    :math:`T=\lceil 2k^2/\varepsilon\rceil`, :math:`q = k/T`, :math:`s = kN/T`."""
    draw = settings(seed)
    k = int(draw.integers(4, 7))
    epsilon = round(float(draw.uniform(0.2, 0.45)), 2)
    while float(2 * k * k / epsilon).is_integer():          # the second case must need rounding up
        epsilon = round(float(draw.uniform(0.2, 0.45)), 2)
    cases = [(0.5, int(draw.integers(20_000, 100_000)), int(draw.integers(4, 7))),
             (epsilon, int(draw.integers(10**5, 10**6)), k)]
    for epsilon, n, k in cases:
        raw = call(fn, epsilon, n, k)
        try:
            steps, q, s = raw
        except (TypeError, ValueError):
            raise CheckFailed(f"return a triple (steps, sampling_rate, expected_batch_size); got {raw!r}") from None
        exact = 2 * k * k / epsilon
        expected_steps = math.ceil(exact - 1e-9)
        steps = scalar(steps, "the number of steps T")
        expect(math.isfinite(steps) and steps == int(steps), f"T is a number of steps: a whole number (round "
                                                             f"2k^2/epsilon = {exact:g} UP with math.ceil); got {steps!r}")
        expect(int(steps) >= exact - 1e-9, f"T = {int(steps)} < 2k^2/epsilon = {exact:g}: round up, not down "
                                            "(the condition T >= 2k^2/epsilon must hold)")
        expect(int(steps) == expected_steps, f"the smallest admissible T is ceil(2 k^2 / epsilon) = {expected_steps}; "
                                              f"got {steps:g}")
        q = scalar(q, "the sampling rate")
        expect(not close(q, 1.0 / expected_steps), "q = k / T: k epochs of 1/q steps each make T steps")
        expect(close(q, k / expected_steps), f"q = k / T = {k / expected_steps:.6g}; got {q:.6g}")
        s = scalar(s, "the expected batch size")
        expect(not close(s, n / expected_steps), "s = k N / T = q N (k epochs of N examples over T steps)")
        expect(close(s, k * n / expected_steps), f"s = k N / T = {k * n / expected_steps:.6g}; got {s:.6g}")
    passed("T = ceil(2 k^2 / epsilon), q = k / T, s = k N / T")


@checker
def check_closed_form_applies(fn, *, seed=None):
    r"""``fn(epsilon, dataset_size, epochs, steps)`` -> whether every condition of the closed form holds
    (delta = 1/N): epsilon <= 1/2, T >= 2k^2/epsilon, (2/e)^2 k^2 - 1/2 >= ln N (and q z <= 1/e)."""
    from ...accountants.proactive import proactive_conditions

    draw = settings(seed)
    n, epsilon = int(draw.integers(20_000, 200_000)), round(float(draw.uniform(0.3, 0.5)), 2)
    k = 5
    least = math.ceil(2 * k * k / epsilon - 1e-9)
    high_epsilon = round(float(draw.uniform(0.55, 0.9)), 2)
    cases = (
        ((epsilon, n, k, least + int(draw.integers(0, 50))), "a plan that meets every condition"),
        ((epsilon, n, k, least // 4), f"T = {least // 4} < 2 k^2 / epsilon = {2 * k * k / epsilon:.4g} (the condition "
                                      f"fails by a factor 4, where the paper says the guarantee breaks)"),
        ((high_epsilon, n, k, 4 * least), f"epsilon = {high_epsilon:g} > 1/2: the closed form is proven for "
                                          f"epsilon <= 1/2 only"),
        ((epsilon, n, 3, math.ceil(18 / epsilon)), f"k = 3 epochs: (2/e)^2 k^2 - 1/2 = 4.4 < ln N = {math.log(n):.1f}"),
        ((epsilon, n, k, 10 * least), f"T = {10 * least} >= {least}: any T above 2 k^2 / epsilon keeps the "
                                      f"guarantee"),
        ((epsilon, n, k, least), f"T = {least}, the smallest whole number >= 2 k^2 / epsilon"),
    )
    for (epsilon, n, k, steps), why in cases:
        expected = proactive_conditions(epsilon=epsilon, delta=1.0 / n, dataset_size=n, epochs=k, steps=steps).all_hold
        out = call(fn, epsilon, n, k, steps)
        expect(isinstance(out, (bool, np.bool_)), f"return True or False; got {out!r}")
        expect(bool(out) == expected, f"epsilon={epsilon}, N={n}, k={k}, T={steps}: the closed form "
                                       f"{'applies' if expected else 'does NOT apply'} ({why})")
    passed("the closed form's conditions, checked before trusting it")
