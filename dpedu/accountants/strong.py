r"""Abadi et al. (2016)'s "strong composition" baseline: per-step Gaussian, amplification, advanced composition.

Figure 2 of Abadi et al. compares the moments accountant with this recipe: make each DP-SGD step
:math:`(\varepsilon_0, \delta_0)`-DP as a Gaussian, amplify it by subsampling to
:math:`(\varepsilon_1, \delta_1)`, compose T steps with advanced composition (docs/math.md §10-12.6). Two recipes:

* ``recipe="valid"`` (default): exact analytic :math:`\varepsilon_0` (Balle & Wang 2018),
  :math:`\varepsilon_1 = \ln(1 + q(e^{\varepsilon_0}-1))`, exact Dwork-Rothblum-Vadhan, optimised
  split of delta - a true bound (the same numbers as :class:`~dpedu.accountants.advanced.AdvancedAccountant`
  on a Gaussian ledger).
* ``recipe="paper"``: the reconstruction that reproduces the paper's 9.34 / 24.22 - **not a valid bound**.

>>> from dpedu.accountants import SubsampledGaussianEvent
>>> paper = StrongCompositionAccountant(recipe="paper").compose(SubsampledGaussianEvent(4.0, 0.01), 10_000)
>>> round(paper.get_epsilon(1e-5), 3)            # Abadi et al. 2016, Fig. 2: 9.34
9.339
>>> step = paper.breakdown(1e-5).gaussian_steps[0]
>>> round(step.epsilon0, 3), round(step.epsilon1, 5)   # eps0 > 1: the classic formula does not apply
(1.459, 0.01459)
"""

from __future__ import annotations

import math

from ..ground.validation import check_choice, check_delta
from .analysis.composition import SHUFFLED_BATCH, CompositionBreakdown, GaussianStep, group_ledger, sampling_rate_of
from .advanced import advanced_composition_bound, optimal_breakdown, optimal_delta
from .base import Accountant, ConversionUnavailableError
from ..ground.events import EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, SubsampledGaussianEvent

__all__ = ["StrongCompositionAccountant", "PAPER_CAVEAT"]

PAPER_CAVEAT = (
    "as in the paper - NOT a valid bound: eps0 ~ 1.46 > 1 breaks the classic Gaussian's condition, "
    "and linear amplification q*eps0 is optimistic"
)

_RECIPES = ("valid", "paper")


def paper_breakdown(ledger, delta):
    r"""The recipe that reproduces Abadi et al. (2016) Fig. 2's strong-composition curve (docs/math.md §12.6).

    Per step :math:`\delta_0` with :math:`T q \delta_0 = \delta/2` (each step's :math:`q\delta_0 = \delta/(2T)`),
    the classic :math:`\varepsilon_0 = \sqrt{2\ln(1.25/\delta_0)}/z` (used although :math:`\varepsilon_0 > 1`),
    linear amplification :math:`(\varepsilon_1, \delta_1) = (q\varepsilon_0, q\delta_0)`, then
    :math:`\varepsilon = \sqrt{2\ln(1/\delta')\sum_t\varepsilon_1^2} + \sum_t\varepsilon_1^2` with
    :math:`\delta' = \delta/2` (the :math:`k\varepsilon^2` form of the second term). Not a valid bound.
    """
    counts = group_ledger(ledger)
    n_steps = sum(counts.values())
    step_delta = delta / (2.0 * n_steps)
    steps = []
    for event, count in counts.items():
        q = sampling_rate_of(event)
        delta0 = step_delta / q
        if not delta0 < 1.0:
            raise ValueError(
                f"recipe='paper' needs each step's delta0 = delta / (2 T q) < 1; got {delta0!r} "
                f"(delta={delta!r}, T={n_steps}, q={q!r})"
            )
        epsilon0 = math.sqrt(2.0 * math.log(1.25 / delta0)) / event.noise_multiplier
        steps.append(GaussianStep(event, count, delta0, epsilon0, q * delta0, q * epsilon0))
    sum_of_squares = math.fsum(step.count * step.epsilon1**2 for step in steps)
    return CompositionBreakdown(
        epsilon=advanced_composition_bound(sum_of_squares, sum_of_squares, delta / 2.0),
        delta=delta,
        gaussian_steps=tuple(steps),
        delta_slack=delta / 2.0,
    )


class StrongCompositionAccountant(Accountant):
    r"""Per-step Gaussian + amplification by subsampling + advanced composition (Abadi et al. 2016, Fig. 2).

    Parameters
    ----------
    recipe : {"valid", "paper"}
        ``"valid"`` (default) gives a true bound: per-step :math:`\varepsilon_0` from the exact analytic
        Gaussian (Balle & Wang 2018, valid for :math:`\varepsilon_0 \ge 1`),
        :math:`\varepsilon_1 = \ln(1+q(e^{\varepsilon_0}-1))`, :math:`\delta_1 = q\delta_0` (docs/math.md §11.1),
        the exact Dwork-Rothblum-Vadhan bound :math:`\sqrt{2\ln(1/\delta')\sum\varepsilon_1^2} +
        \sum\varepsilon_1(e^{\varepsilon_1}-1)`, and the split of delta between :math:`\delta'` and
        :math:`T q\delta_0` optimised (:func:`~dpedu.accountants.advanced.optimal_breakdown`).
        ``"paper"`` reproduces the paper's numbers (:func:`paper_breakdown`); see ``caveat``.

    Attributes
    ----------
    caveat : str or None
        For ``recipe="paper"``: "as in the paper - NOT a valid bound: eps0 ~ 1.46 > 1 breaks the classic
        Gaussian's condition, and linear amplification q*eps0 is optimistic". ``None`` for ``"valid"``.

    Notes
    -----
    At q = 0.01, z = 4, delta = 1e-5 the paper recipe gives 9.339 (T = 10 000) and 24.205 (T = 40 000),
    the paper's 9.34 and 24.22. The valid recipe is larger, and far above the moments/RDP/PLD
    accountants (about 1.0-1.26 at T = 10 000): composing per-step (epsilon, delta) pairs throws away
    the shape of the subsampled Gaussian's privacy loss - the lesson of Fig. 2.
    Only Gaussian steps are covered (:class:`GaussianEvent` is the case q = 1).
    """

    name = "strong"
    supported_events = (GaussianEvent, SubsampledGaussianEvent)
    unsupported_reasons = {
        LaplaceEvent: "the strong-composition recipe converts Gaussian DP-SGD steps; for Laplace releases "
        "use the 'advanced' accountant (the same theorem for any (epsilon, delta) steps)",
        EpsilonDeltaEvent: "the strong-composition recipe converts Gaussian DP-SGD steps; for (epsilon, delta) "
        "releases use the 'advanced' accountant (the same theorem for any (epsilon, delta) steps)",
        **SHUFFLED_BATCH,
    }

    def __init__(self, *, recipe="valid"):
        super().__init__()
        self.recipe = check_choice(recipe, "recipe", _RECIPES)
        self.caveat = PAPER_CAVEAT if recipe == "paper" else None

    def breakdown(self, delta):
        r"""The per-step numbers behind ``get_epsilon(delta)``: :math:`\delta_0, \varepsilon_0, \delta_1,
        \varepsilon_1` for each distinct event, the slack :math:`\delta'`, and the totals.

        Raises
        ------
        ValueError
            For an empty ledger (there are no steps to break down).
        """
        delta = check_delta(delta)
        if not self.ledger:
            raise ValueError("the ledger is empty: compose some steps before asking for a breakdown")
        if self.recipe == "paper":
            return paper_breakdown(self.ledger, delta)
        return optimal_breakdown(self.ledger, delta)

    def _epsilon(self, delta):
        return self.breakdown(delta).epsilon

    def _delta(self, epsilon):
        if self.recipe == "paper":
            raise ConversionUnavailableError(
                "recipe='paper' reproduces the published numbers and is not a valid bound, so it offers no "
                "epsilon -> delta conversion; use recipe='valid'"
            )
        return optimal_delta(self.ledger, epsilon)
