r"""Balls-in-bins batches: ``sampling="balls_in_bins"`` (Chua et al. 2025).

Each epoch puts every record into one of b = ``round(1/q)`` batches, uniformly at random and independently of
the other records, then takes the b batches in order; divide by the expected size n / b. Adding a record moves
no other record, so the events hold under add/remove. One event, ``BallsInBinsGaussianEvent(z, b)``, covers a
whole epoch of b steps; a partial last epoch is counted as a whole one (its releases are a prefix of an epoch's).

>>> batches = BallsInBins(10, 1 / 3).batches(np.random.default_rng(0))
>>> sorted(np.concatenate([next(batches) for _ in range(3)]).tolist()) == list(range(10))   # one epoch
True
"""

from __future__ import annotations

import numpy as np

from ....ground.events import ADD_REMOVE
from ....ground.events_allocation import BallsInBinsGaussianEvent
from .base import Sampling

__all__ = ["BallsInBins", "balls_in_bins_epoch"]


def balls_in_bins_epoch(n, batches_per_epoch, rng):
    """The b batches of one epoch, in order: record i goes to batch ``rng.integers(0, b)`` (one draw per record).

    Each batch is sorted; together they hold every index once; a batch may be empty (its size is Binomial(n, 1/b)).
    """
    bins = rng.integers(0, batches_per_epoch, size=n)
    order = np.argsort(bins, kind="stable")                       # the records grouped by batch, increasing in each
    bounds = np.concatenate(([0], np.cumsum(np.bincount(bins, minlength=batches_per_epoch))))
    return [order[bounds[j] : bounds[j + 1]] for j in range(batches_per_epoch)]


class BallsInBins(Sampling):
    """b = ``max(1, round(1/q))`` batches per epoch, each record in one of them uniformly at random; divide by n / b."""

    name = "balls_in_bins"

    def __init__(self, n, sampling_rate):
        super().__init__(n, sampling_rate)
        self.batches_per_epoch = max(1, round(1.0 / sampling_rate))

    @property
    def steps_per_event(self):
        return self.batches_per_epoch

    @property
    def divisor(self):
        return self.n / self.batches_per_epoch

    @property
    def steps_per_epoch(self):
        return self.batches_per_epoch

    def batches(self, rng):
        while True:
            yield from balls_in_bins_epoch(self.n, self.batches_per_epoch, rng)

    def event(self, noise_multiplier, relation=ADD_REMOVE):
        return BallsInBinsGaussianEvent(noise_multiplier, self.batches_per_epoch, relation=relation)
