r"""Basic (sequential) composition: epsilons add up, deltas add up.

Releases that are :math:`(\varepsilon_i, \delta_i)`-DP, run adaptively on the same data, are together
:math:`(\sum_i \varepsilon_i, \sum_i \delta_i)`-DP (Dwork, McSherry, Nissim & Smith 2006; Dwork, Kenthapadi,
McSherry, Mironov & Naor 2006; Dwork & Roth 2014, Thm 3.16; docs/math.md §9).

A Gaussian step has no single (epsilon, delta): it is :math:`(\varepsilon_0(\delta_0), \delta_0)`-DP for
*every* :math:`\delta_0`, so basic composition forces a choice of how to split delta over the steps.
This accountant makes the choice visible (see :class:`SequentialAccountant`).

The book's noisy gradient descent (10 steps, each (0.1, 1e-5)-DP, plus a 0.1-DP count; docs/math.md §7):

>>> from dpedu.accountants import EpsilonDeltaEvent, LaplaceEvent
>>> acc = SequentialAccountant().compose(EpsilonDeltaEvent(0.1, 1e-5), 10).compose(LaplaceEvent(0.1))
>>> result = acc.breakdown(delta=1e-4)
>>> round(result.epsilon, 10), result.delta
(1.1, 0.0001)
"""

from __future__ import annotations

import math

from ..ground.search import monotone_search
from ..ground.validation import check_delta
from .analysis.composition import (
    SHUFFLED_BATCH, WITHOUT_REPLACEMENT, CompositionBreakdown, fixed_delta, gaussian_step, sampling_rate_of,
    split_ledger
)
from .base import Accountant
from ..ground.events import (
    EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, SampledWithoutReplacementGaussianEvent, SubsampledGaussianEvent
)

__all__ = ["SequentialAccountant"]

# Deltas given as decimals (1e-5, 1e-4) are not exact in binary; sums of them may exceed the asked
# delta by a few ulps. Comparisons against the asked delta allow this relative rounding and no more.
_ROUNDING = 1e-12


class SequentialAccountant(Accountant):
    r"""Basic composition (Dwork & Roth 2014, Thm 3.16): :math:`(\sum_i\varepsilon_i, \sum_i\delta_i)`.

    Parameters
    ----------
    per_step_delta : float in (0, 1), optional
        How each Gaussian-type step gets its delta.

        * ``None`` (default): the delta left after the :class:`EpsilonDeltaEvent` deltas is split
          **evenly** over all Gaussian-type steps: each step's delta *after* subsampling is
          :math:`\delta_1 = (\delta - \sum \delta_{\text{fixed}})/T_G` with :math:`T_G` the number of
          Gaussian-type steps. The total delta is then exactly the delta asked for.
        * a number :math:`\delta_0`: every Gaussian release (before subsampling) is read as
          :math:`(\varepsilon_0(\delta_0), \delta_0)`-DP, so a subsampled step contributes
          :math:`q\delta_0`. The total delta is fixed by the ledger; asking for a smaller one raises
          ``ValueError``. This is how the book states it ("each step is (0.1, 1e-5)-DP").

    Notes
    -----
    * :class:`LaplaceEvent` is pure :math:`\varepsilon`-DP; :class:`EpsilonDeltaEvent` is used as given.
    * Gaussian steps: :math:`\varepsilon_0` is the **exact** analytic epsilon for :math:`\delta_0`
      (Balle & Wang 2018, Thm 8), valid for every :math:`\varepsilon_0` (the classic
      :math:`\sqrt{2\ln(1.25/\delta)}/z` needs :math:`\varepsilon_0<1`). Subsampled steps are amplified:
      :math:`\varepsilon_1 = \ln(1+q(e^{\varepsilon_0}-1))`, :math:`\delta_1 = q\delta_0` (docs/math.md §11.1).
    * Basic composition is tight for pure DP in the worst case, but for many small Gaussian steps
      it is far looser than :mod:`~dpedu.accountants.advanced` or the RDP/PLD accountants.
    * ``get_delta(epsilon)``: the smallest total delta the same rule certifies. With the even split it
      is found by bisection on the per-step delta; a pure ledger, or one with ``per_step_delta``, has
      fixed totals (E, D) and gives D when epsilon >= E. Where basic composition certifies nothing
      (epsilon below E, or below the sum of the pure epsilons) the only true statement is the trivial
      :math:`\delta = 1`, and that is what is returned - never a made-up small number.
    """

    name = "sequential"
    supported_events = (GaussianEvent, SubsampledGaussianEvent, LaplaceEvent, EpsilonDeltaEvent,
                        SampledWithoutReplacementGaussianEvent)
    relations = WITHOUT_REPLACEMENT
    unsupported_reasons = SHUFFLED_BATCH

    def __init__(self, *, per_step_delta=None):
        super().__init__()
        self.per_step_delta = None if per_step_delta is None else check_delta(per_step_delta, "per_step_delta")

    def breakdown(self, delta):
        """The composed (epsilon, delta) with every Gaussian step's conversion, for a target ``delta``.

        Returns
        -------
        CompositionBreakdown
            ``epsilon``, ``delta`` (spent; at most the asked ``delta``) and ``gaussian_steps``
            (:math:`\\delta_0, \\varepsilon_0, \\delta_1, \\varepsilon_1` per distinct Gaussian event).

        Raises
        ------
        ValueError
            If the ledger's fixed deltas (EpsilonDeltaEvents, and Gaussian steps when
            ``per_step_delta`` is set) already exceed ``delta``.
        """
        delta = check_delta(delta)
        pure_epsilon, given_delta, gaussians = self._split()
        if self.per_step_delta is not None:
            result = self._compose(pure_epsilon, given_delta, gaussians, per_step_delta=self.per_step_delta)
            if result.delta > delta * (1 + _ROUNDING):
                raise ValueError(
                    f"delta={delta!r} is smaller than the delta this ledger has already spent "
                    f"({result.delta!r}: EpsilonDeltaEvent deltas plus per_step_delta={self.per_step_delta!r} "
                    f"for each of the {sum(gaussians.values())} Gaussian steps, times q when subsampled); "
                    f"ask for delta >= {result.delta!r} or lower per_step_delta"
                )
            return result
        if given_delta > delta * (1 + _ROUNDING) or (gaussians and given_delta >= delta):
            raise ValueError(
                f"the EpsilonDeltaEvents in the ledger already spend delta={given_delta!r}, which leaves "
                f"nothing of delta={delta!r}"
                + (" for the Gaussian steps" if gaussians else "")
                + "; basic composition cannot certify a smaller total delta - ask for a larger delta"
            )
        step_delta = (delta - given_delta) / sum(gaussians.values()) if gaussians else 0.0
        return self._compose(pure_epsilon, given_delta, gaussians, step_delta=step_delta)

    def _split(self):
        """(sum of the given epsilons, sum of the given deltas, {Gaussian-type event: count})."""
        fixed, gaussians = split_ledger(self.ledger)
        pure_epsilon = math.fsum(count * event.epsilon for event, count in fixed.items())
        return pure_epsilon, fixed_delta(fixed), gaussians

    @staticmethod
    def _compose(pure_epsilon, given_delta, gaussians, *, step_delta=None, per_step_delta=None):
        """Sum epsilons and deltas; each Gaussian step gets ``step_delta`` after subsampling, or
        ``per_step_delta`` before it."""
        steps = tuple(
            gaussian_step(
                event,
                count,
                step_delta if per_step_delta is None else per_step_delta * sampling_rate_of(event),
            )
            for event, count in gaussians.items()
        )
        epsilon = math.fsum([pure_epsilon] + [step.count * step.epsilon1 for step in steps])
        delta = math.fsum([given_delta] + [step.count * step.delta1 for step in steps])
        return CompositionBreakdown(epsilon=epsilon, delta=delta, gaussian_steps=steps)

    def _epsilon(self, delta):
        return self.breakdown(delta).epsilon

    def _delta(self, epsilon):
        pure_epsilon, given_delta, gaussians = self._split()
        if not gaussians or self.per_step_delta is not None:
            # The ledger fixes both totals: it is (E, D)-DP and basic composition says nothing below E.
            result = self._compose(pure_epsilon, given_delta, gaussians, per_step_delta=self.per_step_delta)
            return min(result.delta, 1.0) if epsilon >= result.epsilon else 1.0
        return self._even_split_delta(epsilon, pure_epsilon, given_delta, gaussians)

    def _even_split_delta(self, epsilon, pure_epsilon, given_delta, gaussians):
        """Smallest even per-step delta whose composed epsilon is at most ``epsilon`` (bisection)."""
        budget = epsilon - pure_epsilon  # what the Gaussian steps may spend
        if budget < 0:
            return 1.0

        def gaussian_spend(step_delta):
            steps = self._compose(0.0, 0.0, gaussians, step_delta=step_delta).gaussian_steps
            return math.fsum(step.count * step.epsilon1 for step in steps)

        # At step delta q * delta_G(0) every Gaussian is (0, delta_G(0))-DP: it spends no epsilon. The spend
        # decreases as the step delta grows: search log(step delta) for the smallest that fits, keep that end.
        highest = max(gaussian_step(event, 1, 1.0).delta1 for event in gaussians)
        step_delta = monotone_search(lambda d: gaussian_spend(d) <= budget, highest, feasible_when="large",
                                     lowest=1e-300, highest=highest, rtol=1e-12, at_limit=lambda d, feasible: d)
        spent = self._compose(pure_epsilon, given_delta, gaussians, step_delta=step_delta)
        return min(spent.delta, 1.0)
