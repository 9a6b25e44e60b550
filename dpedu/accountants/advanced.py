r"""Advanced composition (Dwork, Rothblum & Vadhan 2010): epsilon grows like the square root of k.

k adaptively chosen :math:`(\varepsilon, \delta)`-DP releases are, for every :math:`\delta' > 0`,
:math:`(\varepsilon', k\delta + \delta')`-DP with (Dwork & Roth 2014, Thm 3.20; docs/math.md §10)

.. math:: \varepsilon' = \varepsilon\sqrt{2k\ln(1/\delta')} + k\,\varepsilon\,(e^{\varepsilon} - 1).

It beats basic composition (:math:`k\varepsilon`) only for small :math:`\varepsilon` and large k. The book's
example is the teaching point: with :math:`\varepsilon = 1` it never does, since :math:`e - 1 > 1`.

>>> eps, delta = advanced_composition(epsilon=1.0, delta=0.0, k=500, delta_prime=1e-5)
>>> round(eps, 2), delta            # basic composition gives 500
(966.44, 1e-05)
>>> round(advanced_composition_simplified(epsilon=1.0, k=500, delta_prime=1e-5), 2)  # not valid here
214.60
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit

from ..ground.validation import check_delta, check_epsilon, check_in_interval, check_positive_int
from .analysis.composition import (
    SHUFFLED_BATCH, WITHOUT_REPLACEMENT, CompositionBreakdown, fixed_delta, gaussian_step, split_ledger
)
from .base import Accountant
from ..ground.events import (
    EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, SampledWithoutReplacementGaussianEvent, SubsampledGaussianEvent
)

__all__ = [
    "AdvancedAccountant",
    "advanced_composition",
    "advanced_composition_bound",
    "advanced_composition_simplified",
    "optimal_breakdown",
    "optimal_delta",
]


def _drift(epsilon):
    r""":math:`\varepsilon(e^{\varepsilon}-1)` of one step, as in :func:`advanced_composition` (inf past
    :math:`\varepsilon \approx 700`, where the bound exceeds every float anyway)."""
    return epsilon * math.expm1(epsilon) if epsilon < 700.0 else math.inf


def advanced_composition_bound(sum_of_squares, sum_of_drifts, delta_prime):
    r"""The advanced-composition epsilon from its two sums: √(2 ln(1/δ′) Σᵢ εᵢ²) + Σᵢ εᵢ(e^εᵢ − 1).

    In TeX: :math:`\sqrt{2\ln(1/\delta')\sum_i\varepsilon_i^2} + \sum_i\varepsilon_i(e^{\varepsilon_i}-1)`.

    Parameters
    ----------
    sum_of_squares : float
        :math:`\sum_i\varepsilon_i^2` over every step (a step repeated k times counts k times); ``inf`` allowed.
    sum_of_drifts : float
        :math:`\sum_i\varepsilon_i(e^{\varepsilon_i}-1)` (Abadi et al.'s paper recipe passes
        :math:`\sum_i\varepsilon_i^2` here instead, which is not a valid bound); ``inf`` allowed.
    delta_prime : float
        The slack :math:`\delta'` in (0, 1).

    Returns
    -------
    float
        The composed epsilon (``inf`` when a sum is ``inf``).

    Notes
    -----
    Dwork, Rothblum & Vadhan (2010); Dwork & Roth (2014), Thm 3.20 for equal steps; the heterogeneous form
    follows from Kairouz, Oh & Viswanath (2015), Thm 3.5 (docs/math.md §10). The caller checks its
    arguments: this is the formula alone, shared by :func:`advanced_composition`,
    :class:`AdvancedAccountant` and :class:`~dpedu.accountants.strong.StrongCompositionAccountant`.

    Examples
    --------
    >>> round(advanced_composition_bound(500 * 1.0**2, 500 * math.expm1(1.0), 1e-5), 2)   # 500 steps of eps 1
    966.44
    """
    return math.sqrt(2.0 * -math.log(delta_prime) * sum_of_squares) + sum_of_drifts


def advanced_composition(epsilon, delta, k, delta_prime):
    r"""Dwork-Rothblum-Vadhan advanced composition of k (ε, δ)-DP releases.

    Parameters
    ----------
    epsilon : float
        Per-release epsilon, > 0.
    delta : float
        Per-release delta in [0, 1).
    k : int
        Number of (adaptively chosen) releases, >= 1.
    delta_prime : float
        The slack :math:`\delta'` in (0, 1).

    Returns
    -------
    (float, float)
        :math:`\bigl(\varepsilon\sqrt{2k\ln(1/\delta')} + k\varepsilon(e^{\varepsilon}-1),\;
        k\delta + \delta'\bigr)`.

    Notes
    -----
    Dwork, Rothblum & Vadhan (2010); Dwork & Roth (2014), Thm 3.20. The number is reported as the
    theorem gives it, even when it is worse than basic composition :math:`k\varepsilon`.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_in_interval(delta, "delta", 0.0, 1.0, high_open=True)
    k = check_positive_int(k, "k")
    delta_prime = check_delta(delta_prime, "delta_prime")
    # k equal steps: the two sums are k epsilon^2 (as k * epsilon * epsilon: a huge epsilon gives inf,
    # a valid bound, not an OverflowError) and k epsilon (e^epsilon - 1)
    epsilon_total = advanced_composition_bound(k * epsilon * epsilon, k * _drift(epsilon), delta_prime)
    return epsilon_total, k * delta + delta_prime


def advanced_composition_simplified(epsilon, k, delta_prime):
    r"""The book's simplified form :math:`2\varepsilon\sqrt{2k\ln(1/\delta')}` - **valid only for small epsilon**.

    This is Dwork & Roth (2014), Cor. 3.21 read backwards: k releases with
    :math:`\varepsilon = \varepsilon'/(2\sqrt{2k\ln(1/\delta')})` compose to :math:`\varepsilon'`
    **provided** :math:`\varepsilon' < 1`. Outside that range the dropped term
    :math:`k\varepsilon(e^{\varepsilon}-1)` dominates and the formula under-reports: for
    k = 500, :math:`\varepsilon = 1`, :math:`\delta' = 10^{-5}` it gives 214.60 where the theorem
    (:func:`advanced_composition`) gives 966.44 (programming-dp#56). Kept for comparison with the book
    (ch6); use :func:`advanced_composition` for a bound.
    """
    epsilon = check_epsilon(epsilon)
    k = check_positive_int(k, "k")
    delta_prime = check_delta(delta_prime, "delta_prime")
    return 2.0 * epsilon * math.sqrt(2.0 * k * -math.log(delta_prime))


# ----------------------------------------------------------------------------------------------------
# The accountant: heterogeneous steps, and an optimised split of delta.

# The split is searched over u = logit(delta' / R), R = the delta left for delta' and the Gaussian steps:
# u << 0 is a log scale on delta', u >> 0 a log scale on what the Gaussian steps get. |u| <= 30 reaches
# shares of 1e-13 at either end; the grid spacing 1 is then refined by Brent's method.
_SPLIT_GRID = np.linspace(-30.0, 30.0, 61)


def _sums(fixed, gaussian_steps):
    r"""The two sums of the theorem over every step: :math:`\sum_i k_i\varepsilon_i^2` and
    :math:`\sum_i k_i\varepsilon_i(e^{\varepsilon_i}-1)` (:math:`k_i` = count)."""
    epsilons = [(count, event.epsilon) for event, count in fixed.items()]
    epsilons += [(step.count, step.epsilon1) for step in gaussian_steps]
    sum_of_squares = math.fsum(count * eps**2 for count, eps in epsilons)
    sum_of_drifts = math.fsum(count * _drift(eps) for count, eps in epsilons)
    return sum_of_squares, sum_of_drifts


def _composed(fixed, gaussian_steps, delta_prime, spent_delta):
    r"""Heterogeneous advanced composition of every step at slack ``delta_prime``:
    :math:`\varepsilon' = \sqrt{2\ln(1/\delta')\sum_i k_i\varepsilon_i^2} + \sum_i k_i\varepsilon_i(e^{\varepsilon_i}-1)`.
    """
    return CompositionBreakdown(
        epsilon=advanced_composition_bound(*_sums(fixed, gaussian_steps), delta_prime),
        delta=spent_delta,
        gaussian_steps=tuple(gaussian_steps),
        delta_slack=delta_prime,
    )


def optimal_breakdown(ledger, delta):
    r"""Advanced composition of a heterogeneous ledger at total ``delta``, with the delta split optimised.

    The fixed events keep their deltas; the rest, :math:`R = \delta - \sum\delta_{\text{fixed}}`, is
    split between the slack :math:`\delta'` and the Gaussian-type steps (shared evenly: each step's
    amplified :math:`\delta_1 = (R - \delta')/T_G`). The share is found by a grid over
    :math:`u = \operatorname{logit}(\delta'/R) \in [-30, 30]` and Brent's bounded minimisation
    (``scipy.optimize.minimize_scalar``) in the best grid cell. Every split tried is a valid bound,
    so the smallest epsilon seen is returned with its split. Used by :class:`AdvancedAccountant` and
    by the ``"valid"`` recipe of :class:`~dpedu.accountants.strong.StrongCompositionAccountant`.
    """
    fixed, gaussians = split_ledger(ledger)
    given_delta = fixed_delta(fixed)
    remaining = delta - given_delta
    if remaining <= 0:
        raise ValueError(
            f"the EpsilonDeltaEvents in the ledger already spend delta={given_delta!r}, which leaves nothing of "
            f"delta={delta!r} for the slack delta' > 0 of advanced composition - ask for a larger delta"
        )
    if not gaussians:
        return _composed(fixed, (), remaining, delta)
    n_steps = sum(gaussians.values())

    def at_split(u):
        delta_prime = remaining * float(expit(u))
        step_delta = remaining * float(expit(-u)) / n_steps  # 1 - expit(u), without cancellation
        steps = [gaussian_step(event, count, step_delta) for event, count in gaussians.items()]
        spent = math.fsum([given_delta, delta_prime] + [step.count * step.delta1 for step in steps])
        return _composed(fixed, steps, delta_prime, spent)

    tried = [at_split(u) for u in _SPLIT_GRID]
    best = int(np.argmin([result.epsilon for result in tried]))
    if math.isfinite(tried[best].epsilon):
        low, high = _SPLIT_GRID[max(best - 1, 0)], _SPLIT_GRID[min(best + 1, len(_SPLIT_GRID) - 1)]
        # capped so that Brent's arithmetic stays finite if part of the cell overflows to inf
        refined = minimize_scalar(lambda u: min(at_split(u).epsilon, 1e300), bounds=(low, high),
                                  method="bounded", options={"xatol": 1e-6})
        tried.append(at_split(float(refined.x)))
    return min(tried, key=lambda result: result.epsilon)


def optimal_delta(ledger, epsilon):
    r"""Smallest total delta at which advanced composition certifies ``epsilon`` (1.0 if none).

    The theorem inverted: for a slack :math:`\delta'`, :math:`\varepsilon' \le \varepsilon` iff
    :math:`\sum_i k_i\varepsilon_i(e^{\varepsilon_i}-1) < \varepsilon` and
    :math:`\delta' \ge \exp\bigl(-(\varepsilon - \sum_i k_i\varepsilon_i(e^{\varepsilon_i}-1))^2 /
    (2\sum_i k_i\varepsilon_i^2)\bigr)`. The Gaussian steps' :math:`\delta_1` is optimised on a log grid
    (steps of 1 in :math:`\ln\delta_1`) then by Brent's method; every candidate is a valid certificate.
    """
    fixed, gaussians = split_ledger(ledger)
    given_delta = fixed_delta(fixed)

    def total_delta(step_delta):
        """Total delta at this per-step delta; inf where the drift alone exceeds epsilon."""
        steps = [gaussian_step(event, count, step_delta) for event, count in gaussians.items()]
        sum_of_squares, sum_of_drifts = _sums(fixed, steps)
        if not sum_of_drifts < epsilon:
            return math.inf  # no slack makes the bound this small
        # sum_of_squares = 0 only if every step has epsilon 0: then any slack > 0 works
        margin = epsilon - sum_of_drifts  # margin * margin: inf for huge epsilon, where ** 2 raises OverflowError
        slack = math.exp(-margin * margin / (2.0 * sum_of_squares)) if sum_of_squares else 0.0
        return math.fsum([given_delta, slack] + [step.count * step.delta1 for step in steps])

    if not gaussians:
        return min(1.0, total_delta(0.0))
    # ln(step delta) from ln(1e-300) up to where every Gaussian step has epsilon 0 (q * delta_G(0)).
    log_high = math.log(max(gaussian_step(event, 1, 1.0).delta1 for event in gaussians))
    grid = np.arange(math.log(1e-300), log_high, 1.0).tolist() + [log_high]
    tried = [total_delta(math.exp(v)) for v in grid]
    best = int(np.argmin(tried))
    if math.isfinite(tried[best]):

        def objective(v):  # log of the total, kept finite (+-1e3 stand for inf and 0) so Brent's arithmetic is
            total = total_delta(math.exp(v))
            if total == 0.0:
                return -1e3
            return math.log(total) if math.isfinite(total) else 1e3

        low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
        refined = minimize_scalar(objective, bounds=(low, high), method="bounded", options={"xatol": 1e-8})
        tried.append(total_delta(math.exp(float(refined.x))))
    return min(1.0, min(tried))


class AdvancedAccountant(Accountant):
    r"""Advanced composition over a heterogeneous ledger, with the delta split optimised.

    Notes
    -----
    Every event becomes per-step :math:`(\varepsilon_i, \delta_i)`: a :class:`LaplaceEvent` is
    :math:`(\varepsilon, 0)`, an :class:`EpsilonDeltaEvent` is used as given, and a Gaussian-type step
    gets the exact analytic :math:`\varepsilon_0(\delta_0)` (Balle & Wang 2018), amplified by Poisson
    subsampling (docs/math.md §11.1). Then, for every :math:`\delta' > 0`,

    .. math:: \varepsilon' = \sqrt{2\ln(1/\delta')\textstyle\sum_i\varepsilon_i^2}
              + \textstyle\sum_i \varepsilon_i(e^{\varepsilon_i}-1), \qquad
              \delta_{\text{total}} = \delta' + \textstyle\sum_i\delta_i .

    This heterogeneous form follows from Kairouz, Oh & Viswanath (2015), Thm 3.5 (its third bound,
    with :math:`\varepsilon_i\tanh(\varepsilon_i/2) \le \varepsilon_i(e^{\varepsilon_i}-1)` and
    :math:`1-(1-\delta')\prod_i(1-\delta_i) \le \delta' + \sum_i\delta_i`); with equal steps it is exactly
    Dwork-Rothblum-Vadhan (Dwork & Roth 2014, Thm 3.20). The target delta is split between
    :math:`\delta'` and the Gaussian steps by a 1-D minimisation (:func:`optimal_breakdown`).

    There is **no hidden minimum** with basic composition: for :math:`\varepsilon_i = 1` the number
    reported is worse than :class:`~dpedu.accountants.sequential.SequentialAccountant`'s, as the
    theorem says. A bound beyond the float range (per-step epsilon above ~700) is reported as ``inf``.

    Examples
    --------
    >>> from dpedu.accountants import EpsilonDeltaEvent
    >>> acc = AdvancedAccountant().compose(EpsilonDeltaEvent(1.0), 500)
    >>> round(acc.get_epsilon(1e-5), 2)
    966.44
    """

    name = "advanced"
    supported_events = (GaussianEvent, SubsampledGaussianEvent, LaplaceEvent, EpsilonDeltaEvent,
                        SampledWithoutReplacementGaussianEvent)
    relations = WITHOUT_REPLACEMENT
    unsupported_reasons = SHUFFLED_BATCH

    def breakdown(self, delta):
        """The composed epsilon at ``delta`` with the chosen split and each Gaussian step's conversion.

        Returns
        -------
        CompositionBreakdown
            ``epsilon``, ``delta`` (spent), ``delta_slack`` (:math:`\\delta'`) and ``gaussian_steps``.
        """
        return optimal_breakdown(self.ledger, check_delta(delta))

    def _epsilon(self, delta):
        return self.breakdown(delta).epsilon

    def _delta(self, epsilon):
        return optimal_delta(self.ledger, epsilon)
