r"""The last iterate of T Poisson-sampled Gaussian steps of a **linear** loss, as a privacy event.

When the loss is linear in :math:`\theta`, the differing record's clipped gradient is one fixed vector g with
:math:`\lVert g\rVert \le C`, whatever :math:`\theta` is. T steps of DP-SGD (constant learning rate, no projection,
no regulariser) then release

.. math:: \theta_T = \theta_0 - \frac{\eta}{qn}\Big(\sum_t \sum_{i \in B_t \setminus \{x\}} g_i + K g + \mathcal N(0, z^2C^2T\,I)\Big),
          \qquad K \sim \mathrm{Bin}(T, q),

so, along g and in units of C, the model with the record against the model without it is the pair
(Steinke et al., ICLR 2025, "The Last Iterate Advantage"; docs/math.md §28.1)

.. math:: P = \mathrm{Bin}(T, q) + \mathcal N(0, z^2 T), \qquad Q = \mathcal N(0, z^2 T).

:class:`LinearLastIterateEvent` records that release. Its curve is **exact for linear losses** and a
**heuristic, not a guarantee, for any other loss**: Steinke et al. propose it as a principled heuristic for
general DP-SGD, and losses are known for which the last iterate leaks as much as the whole trajectory
(docs/math.md §28.4). The PLD accountant accounts it (both directions of add/remove, docs/math.md §28.2) and
says it is a heuristic in its caveat; every other accountant refuses it by name. With ``sampling_rate = 1`` every
step uses the record, K = T, and the pair is the Gaussian :math:`\mathcal N(T, z^2T)` against
:math:`\mathcal N(0, z^2T)`: exactly T composed Gaussian steps, a guarantee for any loss
(:attr:`LinearLastIterateEvent.gaussian_equivalent`), which every accountant accounts.

>>> LinearLastIterateEvent(1.0, 0.01, 1000)
LinearLastIterateEvent(noise_multiplier=1.0, sampling_rate=0.01, steps=1000)
>>> LinearLastIterateEvent(2.0, 1.0, 100).gaussian_equivalent
GaussianEvent(noise_multiplier=0.2)
>>> LinearLastIterateEvent(1.0, 0.01, 1000).gaussian_equivalent is None
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .events import ADD_REMOVE, Event, GaussianEvent
from .validation import check_positive_int

__all__ = ["LinearLastIterateEvent", "MAX_LAST_ITERATE_STEPS", "LAST_ITERATE_CAVEAT"]

#: The largest T the event accepts: the PLD sums over the binomial's support, whose width grows like sqrt(T q).
MAX_LAST_ITERATE_STEPS = 10**6

#: How every number computed from the event is labelled.
LAST_ITERATE_CAVEAT = ("linear-loss last iterate (Steinke et al. 2025): exact for linear losses, a heuristic and NOT a "
                       "guarantee for other losses (counterexamples exist; docs/math.md §28.4)")


@dataclass(frozen=True, repr=False)
class LinearLastIterateEvent(Event):
    r"""Only :math:`\theta_T` is released after ``steps`` = T DP-SGD steps (Poisson rate ``sampling_rate`` = q,
    noise multiplier ``noise_multiplier`` = z, constant learning rate) of a **linear** loss.

    Dominating pair under add/remove, in units of C: :math:`\mathrm{Bin}(T, q) + \mathcal N(0, z^2T)` against
    :math:`\mathcal N(0, z^2T)` (docs/math.md §28.1), both directions. Exact for linear losses; a heuristic for
    others. Under replace-one with q < 1 no one-dimensional pair is established here (the two records' gradients
    need not be opposite, and K is shared): refused by every accountant.
    """

    noise_multiplier: float
    sampling_rate: float
    steps: int
    relation: str = field(default=ADD_REMOVE, kw_only=True)

    unsupported_reason = ("the linear-loss last iterate is a binomial mixture of Gaussians: only the 'pld' accountant "
                          "integrates its privacy-loss distribution (docs/math.md §28.2)")

    def __post_init__(self):
        super().__post_init__()                        # noise_multiplier, sampling_rate, relation (FIELD_CHECKS)
        steps = check_positive_int(self.steps, "steps")
        if steps > MAX_LAST_ITERATE_STEPS:
            raise ValueError(f"steps must be at most {MAX_LAST_ITERATE_STEPS} for the last-iterate event (its PLD "
                             f"sums over the binomial's support); got {steps}")
        object.__setattr__(self, "steps", steps)

    @property
    def gaussian_equivalent(self):
        """``GaussianEvent(z / sqrt(T))`` under the same relation when q = 1 (every step holds the record: T
        composed Gaussian steps, for any loss); None when q < 1."""
        if self.sampling_rate < 1.0:
            return None
        return GaussianEvent(self.noise_multiplier / math.sqrt(self.steps), relation=self.relation)
