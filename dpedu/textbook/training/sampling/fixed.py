r"""Fixed-size batches drawn without replacement: ``sampling="fixed"``.

Every step draws m = ``round(q n)`` of the n records uniformly without replacement, independently of the other
steps, and divides by m. The event is ``SampledWithoutReplacementGaussianEvent`` (Wang, Balle &
Kasiviswanathan 2019; docs/math.md §22.3), which the RDP accountant covers under replace-one.

>>> import numpy as np
>>> scheme = FixedSize(10, 0.3)
>>> batches = scheme.batches(np.random.default_rng(0))
>>> [next(batches).size for _ in range(3)], scheme.divisor
([3, 3, 3], 3)
"""

from __future__ import annotations


from ....ground.events import ADD_REMOVE, SampledWithoutReplacementGaussianEvent
from .base import Sampling

__all__ = ["FixedSize"]


class FixedSize(Sampling):
    """m = ``max(1, round(q n))`` records uniformly without replacement at every step; divide by m."""

    name = "fixed"

    def __init__(self, n, sampling_rate):
        super().__init__(n, sampling_rate)
        self.batch_size = max(1, round(sampling_rate * n))

    @property
    def divisor(self):
        return self.batch_size

    @property
    def steps_per_epoch(self):
        return self.n / self.batch_size

    def batches(self, rng):
        while True:
            yield rng.choice(self.n, size=self.batch_size, replace=False)

    def event(self, noise_multiplier, relation=ADD_REMOVE):
        return SampledWithoutReplacementGaussianEvent(noise_multiplier, self.batch_size, self.n, relation=relation)
