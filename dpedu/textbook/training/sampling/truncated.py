r"""Truncated Poisson batches: ``sampling="truncated_poisson"``.

A Poisson sample (:func:`~dpedu.textbook.training.sampling.poisson.poisson_sample`) and, when it has more than
``max_batch_size`` records, a uniformly random subset of ``max_batch_size`` of them: what code with a memory cap
on the batch runs. The divisor stays q n, so the step size does not depend on the cap (choose the cap a few
standard deviations above q n, and it is rarely reached). The event is ``TruncatedPoissonGaussianEvent``
(docs/math.md §22.5, §22.7).

>>> scheme = TruncatedPoisson(100, 0.5, max_batch_size=20)
>>> batches = scheme.batches(np.random.default_rng(0))
>>> max(next(batches).size for _ in range(10))
20
"""

from __future__ import annotations

import numpy as np

from ....ground.validation import check_positive_int
from ....ground.events import ADD_REMOVE, TruncatedPoissonGaussianEvent, steps_from_epochs
from .base import Sampling
from .poisson import poisson_sample

__all__ = ["TruncatedPoisson"]


class TruncatedPoisson(Sampling):
    """Poisson at rate q, cut to ``max_batch_size`` records (a uniform subset) when larger; divide by q n."""

    name = "truncated_poisson"

    def __init__(self, n, sampling_rate, max_batch_size):
        super().__init__(n, sampling_rate)
        if max_batch_size is None:
            raise ValueError("sampling='truncated_poisson' needs max_batch_size (the cap on |B_t|); got None")
        self.max_batch_size = check_positive_int(max_batch_size, "max_batch_size")
        if self.max_batch_size > n:
            raise ValueError(f"max_batch_size must be at most n={n}; got {self.max_batch_size}")

    @property
    def divisor(self):
        return self.sampling_rate * self.n

    @property
    def steps_per_epoch(self):
        return 1.0 / self.sampling_rate

    def steps(self, epochs):
        return steps_from_epochs(epochs, self.sampling_rate)

    def batches(self, rng):
        while True:
            batch = poisson_sample(self.n, self.sampling_rate, rng)
            if batch.size > self.max_batch_size:                     # a uniform subset of the cap's size
                batch = np.sort(rng.choice(batch, size=self.max_batch_size, replace=False))
            yield batch

    def event(self, noise_multiplier, relation=ADD_REMOVE):
        return TruncatedPoissonGaussianEvent(noise_multiplier, self.sampling_rate, self.max_batch_size, self.n,
                                             relation=relation)
