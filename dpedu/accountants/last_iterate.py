r"""The linear-loss last iterate, computed exactly: the reference the PLD accountant is checked against.

For the pair of :class:`~dpedu.ground.events_last_iterate.LinearLastIterateEvent` (docs/math.md §28.1), in units of C,
:math:`\sigma = z\sqrt T`, :math:`b_k = \binom Tk q^k (1-q)^{T-k}`, the loss
:math:`L(x) = \ln\sum_k b_k e^{(2kx-k^2)/(2\sigma^2)}` increases in x, so each direction's
:math:`\delta(\varepsilon) = \int (P - e^{\varepsilon}Q)_+` is a finite sum of normal tails at the one point where the
loss crosses :math:`\pm\varepsilon` (docs/math.md §28.3):

.. math::
    \delta_{\rm remove}(\varepsilon) = \sum_k b_k\,\bar\Phi\Big(\frac{x^\ast - k}{\sigma}\Big)
        - e^{\varepsilon}\,\bar\Phi\Big(\frac{x^\ast}{\sigma}\Big),\quad L(x^\ast) = \varepsilon;\qquad
    \delta_{\rm add}(\varepsilon) = \Phi\Big(\frac{x_\ast}{\sigma}\Big)
        - e^{\varepsilon}\sum_k b_k\,\Phi\Big(\frac{x_\ast - k}{\sigma}\Big),\quad L(x_\ast) = -\varepsilon

(:math:`\delta_{\rm add} = 0` when :math:`-\varepsilon \le T\ln(1-q)`, the infimum of L). The sums run over the k
holding all but :data:`REFERENCE_TAIL` of the binomial's mass on each side (the error this leaves in δ is at most
:math:`2 e^{\varepsilon}` times it), in logarithms, so no term underflows. :func:`linear_last_iterate_epsilon`
inverts the larger of the two by bracketing. This is the reference of ``benchmarks/bench_last_iterate.py`` and of
the tests: the PLD accountant's epsilon must lie within 0.1 % above it.

>>> round(linear_last_iterate_epsilon(1e-5, noise_multiplier=1.0, sampling_rate=0.01, steps=100), 3)
0.411
>>> round(linear_last_iterate_epsilon(1e-5, noise_multiplier=1.0, sampling_rate=0.01, steps=1000), 3)
1.278
"""

from __future__ import annotations

import math

from scipy.special import log_ndtr, logsumexp

from ..ground.search import monotone_search
from ..ground.validation import check_choice, check_delta, check_epsilon
from ..ground.events_last_iterate import LinearLastIterateEvent
from ..ground.gaussian import gaussian_delta_exact, gaussian_epsilon_exact
from .pld.last_iterate import binomial_window

__all__ = ["REFERENCE_TAIL", "linear_last_iterate_delta", "linear_last_iterate_epsilon"]

#: Binomial mass left out of the reference's sums on each side.
REFERENCE_TAIL = 1e-30
_DIRECTIONS = ("remove", "add", "both")


def _pair(noise_multiplier, sampling_rate, steps):
    event = LinearLastIterateEvent(noise_multiplier, sampling_rate, steps)      # checks the three values
    sigma = event.noise_multiplier * math.sqrt(event.steps)
    k, log_b, _ = binomial_window(event.steps, event.sampling_rate, REFERENCE_TAIL)
    return event, sigma, k, log_b


def _crossing(target, k, log_b, sigma):
    """x with L(x) = target (L increasing from its infimum T ln(1-q) to infinity)."""
    def excess(x):
        return logsumexp(log_b + (2.0 * k * x - k * k) / (2.0 * sigma * sigma)) - target

    return monotone_search(lambda x: excess(x) >= 0, 0.0, feasible_when="large", lowest=-math.inf,
                           highest=math.inf, rtol=0.0, at_limit=None, step=sigma)


def _difference(log_a, log_b):
    """exp(log_a) - exp(log_b), >= 0, without cancellation error beyond its relative precision."""
    return 0.0 if log_b >= log_a else math.exp(log_a) * -math.expm1(log_b - log_a)


def _delta_remove(epsilon, k, log_b, sigma):
    x = _crossing(epsilon, k, log_b, sigma)
    return _difference(logsumexp(log_b + log_ndtr((k - x) / sigma)), epsilon + log_ndtr(-x / sigma))


def _delta_add(epsilon, k, log_b, sigma):
    infimum = log_b[0] if k[0] == 0 else -math.inf       # L(-inf) = ln b_0 (the k = 0 term is kept in the window)
    if -epsilon <= infimum:
        return 0.0
    x = _crossing(-epsilon, k, log_b, sigma)
    return _difference(log_ndtr(x / sigma), epsilon + logsumexp(log_b + log_ndtr((x - k) / sigma)))


def linear_last_iterate_delta(epsilon, *, noise_multiplier, sampling_rate, steps, direction="both"):
    r"""Exact :math:`\delta(\varepsilon)` of the linear-loss last iterate (docs/math.md §28.3), under add/remove.

    Parameters
    ----------
    epsilon : float
        > 0.
    noise_multiplier, sampling_rate, steps : float, float, int
        z, q and T, as :class:`~dpedu.ground.events_last_iterate.LinearLastIterateEvent` checks them.
    direction : {"both", "remove", "add"}
        One direction of the pair, or the larger of the two (the curve of the mechanism).

    Returns
    -------
    float
        Exact for linear losses up to the binomial mass the sums leave out (at most
        ``2 * exp(epsilon) * REFERENCE_TAIL``); a heuristic for any other loss.
    """
    epsilon = check_epsilon(epsilon)
    direction = check_choice(direction, "direction", _DIRECTIONS)
    event, sigma, k, log_b = _pair(noise_multiplier, sampling_rate, steps)
    if event.sampling_rate == 1.0:                      # N(T, z^2 T) against N(0, z^2 T): a Gaussian, symmetric
        return gaussian_delta_exact(epsilon, event.noise_multiplier / math.sqrt(event.steps))
    parts = []
    if direction in ("remove", "both"):
        parts.append(_delta_remove(epsilon, k, log_b, sigma))
    if direction in ("add", "both"):
        parts.append(_delta_add(epsilon, k, log_b, sigma))
    return max(parts)


def linear_last_iterate_epsilon(delta, *, noise_multiplier, sampling_rate, steps, direction="both"):
    r"""The smallest :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon) \le` ``delta`` for the linear-loss last
    iterate (docs/math.md §28.3): the exact value the PLD accountant approximates from above.

    ``delta`` in (0, 1); the other arguments as in :func:`linear_last_iterate_delta`. Each direction's
    :math:`\delta(\varepsilon)` decreases in :math:`\varepsilon`; it is inverted by Brent's method on a bracket found by
    doubling (the one search, :mod:`dpedu.ground.search`), to a relative tolerance of 1e-12, on the side whose
    :math:`\delta` is at most ``delta``.
    """
    delta = check_delta(delta)
    direction = check_choice(direction, "direction", _DIRECTIONS)
    event, sigma, k, log_b = _pair(noise_multiplier, sampling_rate, steps)
    if event.sampling_rate == 1.0:
        return gaussian_epsilon_exact(delta, event.noise_multiplier / math.sqrt(event.steps))
    found = []
    for name, curve in (("remove", _delta_remove), ("add", _delta_add)):
        if direction not in (name, "both"):
            continue
        if curve(1e-12, k, log_b, sigma) <= delta:
            found.append(0.0)
            continue
        found.append(monotone_search(lambda e: curve(e, k, log_b, sigma) <= delta, 1.0, feasible_when="large",
                                     lowest=1e-12, highest=math.inf, rtol=1e-12, at_limit=lambda e, feasible: e))
    return float(max(found))
