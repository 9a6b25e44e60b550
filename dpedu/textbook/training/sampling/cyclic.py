r"""Fixed batches visited in turn: ``sampling="cyclic"`` (DP-FTRL's batches, Kairouz et al. 2021).

The records are split once, at random, into b = ``round(1/q)`` fixed batches (a permutation taken modulo b) and
the batches are visited in the same order every epoch, so record j takes part in steps j, j + b, j + 2b, ...
(minimum separation b). Each epoch, each record is in exactly one batch, so with independent Gaussian noise an
epoch is one Gaussian release per record (parallel composition): one ``GaussianEvent`` per epoch.

The split depends on n: adding a record changes which batch the others are in, so with b > 1 batches the events
do **not** hold under add/remove (docs/math.md §1.2); with one batch (every record at every step) they do. They hold under replace-one (the split is the same for two data sets of
one size; the changed record moves its batch's sum by at most 2C) and under zero-out (the record replaced by one
whose gradient is zero: n and the split unchanged).

>>> scheme = Cyclic(6, 1 / 3)
>>> batches = scheme.batches(np.random.default_rng(0))
>>> first = [next(batches) for _ in range(3)]
>>> sorted(np.concatenate(first).tolist()), [b.tolist() for b in first] == [next(batches).tolist() for _ in range(3)]
([0, 1, 2, 3, 4, 5], True)
"""

from __future__ import annotations

import numpy as np

from ....ground.events import ADD_REMOVE, REPLACE_ONE, ZERO_OUT, GaussianEvent
from .base import Sampling

__all__ = ["Cyclic"]


class Cyclic(Sampling):
    """b = ``max(1, round(1/q))`` fixed batches from one random split, visited in turn; divide by n / b."""

    name = "cyclic"

    def __init__(self, n, sampling_rate):
        super().__init__(n, sampling_rate)
        self.batches_per_epoch = min(n, max(1, round(1.0 / sampling_rate)))

    @property
    def relations(self):
        """Zero-out and replace-one; add/remove too when there is one batch (nothing for an added record to move)."""
        return (ZERO_OUT, REPLACE_ONE) if self.batches_per_epoch > 1 else (ADD_REMOVE, REPLACE_ONE, ZERO_OUT)

    @property
    def steps_per_event(self):
        return self.batches_per_epoch

    @property
    def divisor(self):
        return self.n / self.batches_per_epoch                          # public: n and b are

    @property
    def steps_per_epoch(self):
        return self.batches_per_epoch

    def batches(self, rng):
        b = self.batches_per_epoch
        assignment = rng.permutation(self.n) % b                        # record -> its fixed batch
        members = [np.flatnonzero(assignment == j) for j in range(b)]
        while True:
            yield from members

    def event(self, noise_multiplier, relation=ZERO_OUT):
        return GaussianEvent(noise_multiplier, relation=relation)
