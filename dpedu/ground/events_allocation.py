r"""Balls-in-bins batches: their privacy event (Chua et al. 2025; docs/math.md §22.8).

Each epoch, every record is put into one of the epoch's b batches uniformly at random, independently of the
others (a ball thrown into one of b bins). Like shuffling, each record is used exactly once per epoch; unlike
shuffling, the batch sizes vary (Binomial(n, 1/b) each), which is what makes the privacy analysis tractable: for
one record, the others' bins have the same law with or without it, and only its own bin J is secret.

The batches are drawn by the ``"balls_in_bins"`` sampling scheme (:mod:`dpedu.textbook.training.sampling.balls_in_bins`);
:class:`BallsInBinsGaussianEvent` records one epoch of b Gaussian steps on such batches. The PLD accountant
(``make_accountant("pld")``) accounts it under add/remove (random allocation, docs/math.md §22.9: a proven upper
bound); the other accountants refuse it; :mod:`dpedu.accountants.balls_in_bins` gives a Monte Carlo *estimate* of
its privacy curve (labelled as such), the check beside it.

>>> BallsInBinsGaussianEvent(1.0, 100)
BallsInBinsGaussianEvent(noise_multiplier=1.0, batches_per_epoch=100)
"""

from __future__ import annotations

from dataclasses import dataclass

from .events import ADD_REMOVE, MIN_EVENT_NOISE_MULTIPLIER, Event, check_relation
from .validation import check_noise_multiplier, check_positive_int

__all__ = ["BallsInBinsGaussianEvent"]


@dataclass(frozen=True, repr=False)
class BallsInBinsGaussianEvent(Event):
    r"""One epoch of balls-in-bins batches: ``batches_per_epoch`` = b Gaussian steps (noise
    :math:`\mathcal N(0, z^2C^2I)` on each batch's clipped sum), each record in exactly one of them, its batch drawn
    uniformly at random. Count it once per epoch.

    Under add/remove, for one record, the epoch is dominated by :math:`P = \frac1b\sum_j \mathcal N(e_j, z^2I_b)`
    against :math:`Q = \mathcal N(0, z^2 I_b)` (Chua et al. 2025; docs/math.md §22.8). The PLD accountant accounts
    it, both directions, with a proven upper bound (random allocation, Feldman & Shenfeld 2025; docs/math.md §22.9);
    the other accountants refuse it; :func:`dpedu.accountants.balls_in_bins.balls_in_bins_epsilon` estimates its
    curve by Monte Carlo (an estimate, not a guarantee). Under replace-one only the un-amplified bound is proven
    (one Gaussian release of sensitivity 2C per epoch): every accountant refuses it, saying so.
    """

    noise_multiplier: float
    batches_per_epoch: int
    relation: str = ADD_REMOVE

    unsupported_reason = ("balls-in-bins batches (random allocation) have no theorem in this accountant: the 'pld' "
                          "accountant accounts them under add/remove (docs/math.md §22.9), and "
                          "dpedu.accountants.balls_in_bins estimates their curve by Monte Carlo (an estimate, not a "
                          "guarantee; docs/math.md §22.8)")

    def __post_init__(self):
        z = check_noise_multiplier(self.noise_multiplier)
        if z < MIN_EVENT_NOISE_MULTIPLIER:
            raise ValueError(f"noise_multiplier must be in [{MIN_EVENT_NOISE_MULTIPLIER:g}, inf); got {z!r}")
        object.__setattr__(self, "noise_multiplier", z)
        object.__setattr__(self, "batches_per_epoch", check_positive_int(self.batches_per_epoch, "batches_per_epoch"))
        check_relation(self.relation)
