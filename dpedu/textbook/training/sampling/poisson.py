r"""Poisson sampling (Abadi et al. 2016, Algorithm 1): every record joins each batch independently with probability q.

:func:`poisson_sample` is the sampler chapter 4 prints and every Poisson run calls at every step. It draws the
batch by its size: :math:`|B| \sim \mathrm{Binomial}(n, q)`, then a uniformly random subset of that size. This
is the same distribution as :math:`B = \{i : U_i < q\}` with one uniform per record: both give every subset S
of the n records the probability :math:`q^{|S|}(1-q)^{n-|S|}` (docs/math.md §8.1), so every Poisson accountant
covers it. It draws about qn random numbers instead of n (at q = 0.01 on Adult, 300 instead of 30,162).

>>> poisson_sample(10, 0.3, rng=0)
array([2, 3, 4])
>>> Poisson(200, 0.1).event(1.0), Poisson(200, 1.0).event(1.0)
(SubsampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1), GaussianEvent(noise_multiplier=1.0))
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ....ground.door import count, door, generator, probability
from ....ground.events import ADD_REMOVE, gaussian_step_event, steps_from_epochs
from .base import Sampling

__all__ = ["poisson_sample", "Poisson"]


@door(n=count, sampling_rate=probability, rng=generator)
def poisson_sample(n, sampling_rate, rng=None):
    r"""The indices of a Poisson sample of ``n`` records at rate q: each record is in it with probability q."""
    size = rng.binomial(n, sampling_rate)                    # |B| ~ Binomial(n, q)
    return np.sort(rng.choice(n, size=size, replace=False))  # a uniform subset of it


class Poisson(Sampling):
    """``sampling="poisson"``: :func:`poisson_sample` at every step; divide by q n (never by :math:`|B_t|`).

    At q = 1 every record is in every batch (full-batch noisy gradient descent): nothing is drawn, and the event is
    the plain ``GaussianEvent``.
    """

    name = "poisson"

    @property
    def divisor(self):
        return self.sampling_rate * self.n                       # q n: public, fixed before any draw

    @property
    def steps_per_epoch(self):
        return 1.0 / self.sampling_rate

    def steps(self, epochs):
        return steps_from_epochs(epochs, self.sampling_rate)     # max(1, round(epochs / q))

    def batches(self, rng):
        while True:
            yield slice(None) if self.sampling_rate == 1.0 else poisson_sample(self.n, self.sampling_rate, rng)

    def event(self, noise_multiplier, relation=ADD_REMOVE):
        return replace(gaussian_step_event(noise_multiplier, self.sampling_rate), relation=relation)
