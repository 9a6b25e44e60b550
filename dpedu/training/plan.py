r"""A DP-SGD run fixed before the data is touched: :class:`DPSGDPlan`, built by :func:`plan_dp_sgd`.

The plan is everything about a run that does not depend on the records: the noise multiplier z, the clip norm
C, the sampling scheme and its rate q, the number of steps T, the learning-rate schedule, and so the privacy
events the run will perform (its ``ledger``). :func:`dpedu.training.dp_sgd` and
:class:`dpedu.estimator.DPLogisticRegression` both build one and run it; nothing re-derives it.

A sampling scheme lives entirely in this module: its name in :data:`SAMPLINGS`, its sizes in
:func:`plan_dp_sgd` (batch size, the divisor, steps per epoch and the epochs-to-steps rule), the event
:attr:`DPSGDPlan.event` records for one step, and its sampler (:func:`poisson_batches`,
:func:`shuffled_batches`), which :meth:`DPSGDPlan.batches` returns. The training loop never looks at the name.

>>> plan = plan_dp_sgd(200, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2)
>>> plan.steps, plan.divisor, plan.ledger
(20, 20.0, [(SubsampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1), 20)])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..events import ShuffledBatchGaussianEvent, gaussian_step_event, steps_from_epochs
from ..validation import check_noise_scale, check_nonnegative, check_positive, check_positive_int, check_rng
from ..validation import check_sampling_rate, check_steps
from .common import CLIP_MODES

__all__ = ["LR_SCHEDULES", "SAMPLINGS", "CLIP_MODES", "poisson_sample", "poisson_batches", "shuffled_batches",
           "DPSGDPlan", "plan_dp_sgd", "check_noise_and_clip"]

LR_SCHEDULES = ("constant", "linear")
SAMPLINGS = ("poisson", "shuffle")


def poisson_sample(n, sampling_rate, rng=None):
    r"""Indices of a Poisson sample: each of ``n`` records joins independently with probability q.

    :math:`B = \{i : U_i < q\}` with :math:`U_i \sim \mathrm{Uniform}[0, 1)` drawn afresh for every record
    (Abadi et al. 2016, §3.1; docs/math.md §8). The size :math:`|B| \sim \mathrm{Binomial}(n, q)` is random and
    can be 0. This is the sampling every subsampled-Gaussian accountant assumes; drawing a fixed number of
    indices is a different mechanism.

    >>> poisson_sample(10, 0.3, rng=0)
    array([1, 2, 3])
    """
    n = check_positive_int(n, "n")
    sampling_rate = check_sampling_rate(sampling_rate)
    rng = check_rng(rng)
    return _poisson_sample(n, sampling_rate, rng)


def _poisson_sample(n, sampling_rate, rng):
    return np.flatnonzero(rng.random(n) < sampling_rate)        # B = {i : U_i < q}


def poisson_batches(n, sampling_rate, rng):
    """Endless Poisson samples (``sampling="poisson"``): one :func:`poisson_sample` per ``next``.

    >>> batches = poisson_batches(10, 0.3, np.random.default_rng(0))
    >>> next(batches)
    array([1, 2, 3])
    """
    n, sampling_rate, rng = check_positive_int(n, "n"), check_sampling_rate(sampling_rate), check_rng(rng)
    while True:
        yield _poisson_sample(n, sampling_rate, rng)


def shuffled_batches(n, batch_size, rng):
    """Endless fixed-size batches (``sampling="shuffle"``): shuffle, cut n // batch_size batches, drop the rest.

    >>> batches = shuffled_batches(10, 3, np.random.default_rng(0))
    >>> sorted(np.concatenate([next(batches) for _ in range(3)]).tolist()) != list(range(10))  # one left out
    True
    """
    n, batch_size, rng = check_positive_int(n, "n"), check_positive_int(batch_size, "batch_size"), check_rng(rng)
    while True:
        order = rng.permutation(n)
        for start in range(0, n - batch_size + 1, batch_size):
            yield order[start : start + batch_size]


def check_noise_and_clip(noise_multiplier, clip_norm):
    """z >= 0 and C > 0; C = inf only together with z = 0 (the non-private sanity setting)."""
    noise_multiplier = check_nonnegative(noise_multiplier, "noise_multiplier")
    clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
    if noise_multiplier > 0 and math.isinf(clip_norm):
        raise ValueError(
            "clip_norm=inf gives the clipped sum infinite sensitivity, so no finite noise protects it; "
            "clip_norm=inf is allowed only in the non-private sanity setting noise_multiplier=0"
        )
    if noise_multiplier > 0:
        check_noise_scale(noise_multiplier * clip_norm, f"std noise_multiplier * clip_norm = {noise_multiplier!r} * "
                          f"{clip_norm!r}", "a smaller noise_multiplier or clip_norm")
    return noise_multiplier, clip_norm


@dataclass(frozen=True)
class DPSGDPlan:
    """What a DP-SGD run on ``n`` records will do and spend, fixed before the data is touched.

    Build it with :func:`plan_dp_sgd` (which checks every value); run it with :func:`dpedu.training.run_dp_sgd`.
    ``divisor`` is what the clipped noisy sum is divided by: the expected batch size q n for Poisson sampling
    (never the drawn size, docs/math.md §8), the fixed batch size when shuffling.
    """

    n: int
    noise_multiplier: float
    clip_norm: float
    sampling_rate: float
    steps: int
    learning_rate: float
    lr_schedule: str
    sampling: str
    clip_mode: str
    divisor: float
    batch_size: int | None
    loss_every: int

    @property
    def private(self) -> bool:
        """Whether the run adds noise (``noise_multiplier > 0``); a noise-free run has no ledger."""
        return self.noise_multiplier > 0

    @property
    def event(self):
        """The privacy event of one step (the sampling scheme decides which)."""
        if self.sampling == "shuffle":
            return ShuffledBatchGaussianEvent(self.noise_multiplier, self.batch_size, self.n)
        return gaussian_step_event(self.noise_multiplier, self.sampling_rate)   # GaussianEvent when q = 1

    @property
    def ledger(self):
        """``[(event, steps)]``, or ``None`` for the non-private sanity run (z = 0)."""
        return [(self.event, self.steps)] if self.private else None

    @property
    def gradient_clip_norm(self):
        """The norm each per-example gradient is clipped to: C, or inf when the rows of X were clipped to C."""
        return math.inf if self.clip_mode == "inputs" else self.clip_norm

    def batches(self, rng):
        """The batches B_1, B_2, ... drawn from ``rng``, by this plan's sampling scheme."""
        if self.sampling == "shuffle":
            return shuffled_batches(self.n, self.batch_size, rng)
        return poisson_batches(self.n, self.sampling_rate, rng)

    def learning_rate_at(self, t):
        """eta_t for step t = 0, 1, ...: eta, or eta (1 - t/T) for the linear schedule."""
        if self.lr_schedule == "constant":
            return self.learning_rate
        return self.learning_rate * (1.0 - t / self.steps)

    def with_noise_multiplier(self, noise_multiplier):
        """The same run with another noise multiplier (checked): for noise calibrated to the plan's steps."""
        noise_multiplier, _ = check_noise_and_clip(noise_multiplier, self.clip_norm)
        return replace(self, noise_multiplier=noise_multiplier)


def _check_choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def _number_of_steps(steps, epochs, steps_per_epoch, sampling, sampling_rate):
    if (steps is None) == (epochs is None):
        raise ValueError(f"give exactly one of steps or epochs; got steps={steps!r}, epochs={epochs!r}")
    if steps is not None:
        return check_steps(steps, "steps")
    epochs = check_steps(epochs, "epochs", steps_per_epoch=steps_per_epoch)
    if sampling == "poisson":
        return steps_from_epochs(epochs, sampling_rate)
    return max(1, round(epochs * steps_per_epoch))


def plan_dp_sgd(n, *, noise_multiplier, clip_norm, sampling_rate, steps=None, epochs=None, learning_rate=1.0,
                lr_schedule="constant", sampling="poisson", clip_mode="gradients", loss_every=None):
    """Check the settings of a DP-SGD run on ``n`` records and fix it as a :class:`DPSGDPlan`.

    The arguments are those of :func:`dpedu.training.dp_sgd`. Nothing is drawn or spent.
    """
    n = check_positive_int(n, "n")
    noise_multiplier, clip_norm = check_noise_and_clip(noise_multiplier, clip_norm)
    sampling_rate = check_sampling_rate(sampling_rate)
    learning_rate = check_positive(learning_rate, "learning_rate")
    _check_choice("lr_schedule", lr_schedule, LR_SCHEDULES)
    _check_choice("sampling", sampling, SAMPLINGS)
    _check_choice("clip_mode", clip_mode, CLIP_MODES)
    if sampling == "poisson":                          # divide by q n, never by |B_t|
        batch_size, divisor, steps_per_epoch = None, sampling_rate * n, 1.0 / sampling_rate
    else:                                              # "shuffle": every batch has exactly this size
        batch_size = max(1, round(sampling_rate * n))
        divisor, steps_per_epoch = batch_size, n // batch_size
    steps = _number_of_steps(steps, epochs, steps_per_epoch, sampling, sampling_rate)
    loss_every = max(1, round(steps_per_epoch)) if loss_every is None else check_positive_int(loss_every, "loss_every")
    return DPSGDPlan(n, noise_multiplier, clip_norm, sampling_rate, steps, learning_rate, lr_schedule, sampling,
                     clip_mode, divisor, batch_size, loss_every)
