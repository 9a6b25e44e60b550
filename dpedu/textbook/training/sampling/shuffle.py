r"""Shuffled batches: ``sampling="shuffle"``, what most training code runs, and what no accountant covers.

Each epoch shuffles the n records and cuts n // m batches of m = ``round(q n)`` (the rest is dropped). Privacy
analyses of Poisson sampling do not apply (Chua et al. 2024; docs/math.md §22.6): the event,
``ShuffledBatchGaussianEvent``, is refused by every accountant, and the loop warns. The Monte Carlo audit
:mod:`dpedu.lab.audit.shuffle` measures a lower bound instead.

>>> import numpy as np
>>> batches = Shuffle(10, 0.3).batches(np.random.default_rng(0))
>>> sorted(np.concatenate([next(batches) for _ in range(3)]).tolist()) != list(range(10))  # one left out
True
"""

from __future__ import annotations

from ....ground.events import ADD_REMOVE, ShuffledBatchGaussianEvent
from .base import Sampling

__all__ = ["Shuffle", "ShuffledBatchesWarning"]


class ShuffledBatchesWarning(UserWarning):
    """``sampling="shuffle"``: fixed-size batches from a shuffled pass, which no dpedu accountant covers."""


class Shuffle(Sampling):
    """A permutation per epoch, cut into n // m batches of m = ``max(1, round(q n))``; divide by m."""

    name = "shuffle"
    warning = ("sampling='shuffle' trains on fixed-size batches from a shuffled pass. No accountant in dpedu (and no "
               "Poisson-subsampling analysis: moments, RDP, PLD) covers this; the ledger holds "
               "ShuffledBatchGaussianEvent, which every accountant refuses. Use sampling='poisson' for a guarantee.")

    def __init__(self, n, sampling_rate):
        super().__init__(n, sampling_rate)
        self.batch_size = max(1, round(sampling_rate * n))          # <= n, since q <= 1

    @property
    def divisor(self):
        return self.batch_size

    @property
    def steps_per_epoch(self):
        return self.n // self.batch_size

    def batches(self, rng):
        m = self.batch_size
        while True:
            order = rng.permutation(self.n)
            for start in range(0, self.n - m + 1, m):
                yield order[start : start + m]

    def event(self, noise_multiplier, relation=ADD_REMOVE):
        return ShuffledBatchGaussianEvent(noise_multiplier, self.batch_size, self.n, relation=relation)
