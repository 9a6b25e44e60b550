r"""A DP-SGD run fixed before the data is touched: :class:`DPSGDPlan`, built by :func:`plan_dp_sgd`.

The plan is everything about a run that does not depend on the records: the noise multiplier z, the clip norm
C, the sampling scheme and its rate q, the number of steps T, the learning-rate schedule, and so the privacy
events the run will perform (its ``ledger``). :func:`dpedu.training.run_dp_sgd` runs it;
:func:`dpedu.training.dp_sgd` (Algorithm 1's parameters only) and :class:`dpedu.estimator.DPLogisticRegression`
both build one and run it; nothing re-derives it. Every variant of the algorithm is a setting of the plan.

A sampling scheme lives entirely in this module: its name in :data:`SAMPLINGS`, its sizes in
:func:`plan_dp_sgd` (batch size, the divisor, steps per epoch and the epochs-to-steps rule), the event
:attr:`DPSGDPlan.event` records for one step, and its sampler, which :meth:`DPSGDPlan.batches` returns. The
training loop never looks at the name.

=======================  ===============================  =======  =========  ==========================================
``sampling``             :math:`B_t`                      divisor  per epoch  event (docs/math.md §22)
=======================  ===============================  =======  =========  ==========================================
``"poisson"``            each record with prob. q         q n      1/q        ``SubsampledGaussianEvent``
``"fixed"``              m = round(q n) records, uniform  m        n/m        ``SampledWithoutReplacementGaussianEvent``
                         without replacement, each step
``"truncated_poisson"``  Poisson, then a uniform subset   q n      1/q        ``TruncatedPoissonGaussianEvent``
                         of ``max_batch_size`` if larger
``"shuffle"``            a permutation per epoch, cut     m        n // m     ``ShuffledBatchGaussianEvent``
``"balls_in_bins"``      each epoch, each record into     n / b    b          ``BallsInBinsGaussianEvent`` (once per
                         one of b = round(1/q) batches,                       epoch)
                         uniformly at random
=======================  ===============================  =======  =========  ==========================================

The divisor is always a public constant, never the drawn size (a drawn size would put an un-noised count of
the batch into the update: docs/math.md §8). For truncated Poisson it is q n, as for Poisson: it is the
expected size as long as the cap is rarely reached (choose ``max_batch_size`` a few standard deviations above
q n), so the step size does not change with the cap; dividing by the cap instead would shrink every step by
q n / ``max_batch_size``. Balls-in-bins batches divide by the expected size n / b, public as well; their
event is a whole epoch of b steps, so the ledger counts ``ceil(T / b)`` epochs (a partial last epoch as a whole
one: its releases are a prefix of a whole epoch's, post-processing of it). The neighbouring relation
(``relation``) is recorded on the event; which accountant covers which (scheme, relation) pair is the
accountants' business (they refuse the rest by name).

>>> plan = plan_dp_sgd(200, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2)
>>> plan.steps, plan.divisor, plan.ledger
(20, 20.0, [(SubsampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1), 20)])
>>> plan_dp_sgd(200, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2, sampling="fixed",
...             relation="replace_one").event
SampledWithoutReplacementGaussianEvent(noise_multiplier=1.0, batch_size=20, dataset_size=200, relation='replace_one')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..events_allocation import BallsInBinsGaussianEvent, balls_in_bins_epochs
from ..events import (ADD_REMOVE, SampledWithoutReplacementGaussianEvent, ShuffledBatchGaussianEvent,
                      TruncatedPoissonGaussianEvent, check_relation, gaussian_step_event, steps_from_epochs)
from ..engine.validation import check_choice, check_noise_scale, check_nonnegative, check_positive, check_positive_int
from ..engine.validation import check_rng
from ..engine.validation import check_sampling_rate, check_steps
from .adaptive import DEFAULT_CLIP_LEARNING_RATE, DEFAULT_COUNT_NOISE_FRACTION, ClipState, check_adaptive_clipping
from .adaptive import gradient_noise_multiplier
from .common import CLIP_MODES

__all__ = ["LR_SCHEDULES", "SAMPLINGS", "SAMPLERS", "CLIP_MODES", "poisson_sample", "binomial_poisson_sample",
           "poisson_batches", "fixed_size_batches",
           "truncated_poisson_batches", "shuffled_batches", "DPSGDPlan", "plan_dp_sgd", "check_noise_and_clip"]

LR_SCHEDULES = ("constant", "linear")
SAMPLINGS = ("poisson", "fixed", "truncated_poisson", "shuffle", "balls_in_bins")
#: How a (truncated) Poisson sample is drawn: ``"uniforms"``, :func:`poisson_sample` (n uniforms, the default
#: stream); ``"binomial"``, :func:`binomial_poisson_sample` (the same distribution, faster, another stream).
SAMPLERS = ("uniforms", "binomial")


def poisson_sample(n, sampling_rate, rng=None):
    r"""Indices of a Poisson sample: each of ``n`` records joins independently with probability q.

    :math:`B = \{i : U_i < q\}` with :math:`U_i \sim \mathrm{Uniform}[0, 1)` drawn afresh for every record
    (Abadi et al. 2016, §3.1; docs/math.md §8). The size :math:`|B| \sim \mathrm{Binomial}(n, q)` is random and
    can be 0. This is the sampling every subsampled-Gaussian accountant assumes; drawing a fixed number of
    indices is a different mechanism. Random stream: ``rng.random(n)``, one uniform per record.
    :func:`binomial_poisson_sample` draws the same distribution faster, from another stream.

    >>> poisson_sample(10, 0.3, rng=0)
    array([1, 2, 3])
    """
    n, sampling_rate, rng = check_positive_int(n, "n"), check_sampling_rate(sampling_rate), check_rng(rng)
    return np.flatnonzero(rng.random(n) < sampling_rate)        # B = {i : U_i < q}


def binomial_poisson_sample(n, sampling_rate, rng=None):
    r"""A Poisson sample drawn by its size: :math:`|B| \sim \mathrm{Binomial}(n, q)`, then a uniform subset of
    that size (sorted).

    The same distribution as :func:`poisson_sample`'s :math:`\{i : U_i < q\}`: both give every subset S of the
    n records the probability :math:`P(B = S) = q^{|S|}(1-q)^{n-|S|}` (docs/math.md §8.1), so every Poisson
    accountant covers it. It draws about qn numbers instead of n. Random stream: one
    ``rng.binomial(n, q)``, then ``rng.choice(n, size, replace=False)``; a seed gives other samples than
    :func:`poisson_sample` with that seed. ``plan_dp_sgd(..., sampler="binomial")`` trains with it.

    >>> binomial_poisson_sample(10, 0.3, rng=0)
    array([2, 3, 4])
    """
    n, sampling_rate, rng = check_positive_int(n, "n"), check_sampling_rate(sampling_rate), check_rng(rng)
    size = rng.binomial(n, sampling_rate)                       # |B| ~ Binomial(n, q)
    return np.sort(rng.choice(n, size=size, replace=False))     # a uniform subset of that size


def poisson_batches(n, sampling_rate, rng, sampler="uniforms"):
    """Endless Poisson samples (``sampling="poisson"``): one :func:`poisson_sample` (``sampler="uniforms"``) or
    :func:`binomial_poisson_sample` (``sampler="binomial"``) per ``next``.

    >>> batches = poisson_batches(10, 0.3, np.random.default_rng(0))
    >>> next(batches)
    array([1, 2, 3])
    """
    n, sampling_rate, rng = check_positive_int(n, "n"), check_sampling_rate(sampling_rate), check_rng(rng)
    by_size = check_choice(sampler, "sampler", SAMPLERS) == "binomial"
    while True:                                   # the two samplers' lines, checked once instead of every step
        if by_size:
            yield np.sort(rng.choice(n, size=rng.binomial(n, sampling_rate), replace=False))
        else:
            yield np.flatnonzero(rng.random(n) < sampling_rate)


def fixed_size_batches(n, batch_size, rng):
    """Endless batches of exactly ``batch_size`` records (``sampling="fixed"``), each drawn uniformly without
    replacement and independently of the others: every m-subset is equally likely at every step.

    >>> batches = fixed_size_batches(10, 3, np.random.default_rng(0))
    >>> [next(batches).size for _ in range(4)]
    [3, 3, 3, 3]
    """
    n, batch_size, rng = check_positive_int(n, "n"), check_positive_int(batch_size, "batch_size"), check_rng(rng)
    if batch_size > n:
        raise ValueError(f"batch_size must be at most n={n}; got {batch_size}")
    while True:
        yield rng.choice(n, size=batch_size, replace=False)


def truncated_poisson_batches(n, sampling_rate, max_batch_size, rng, sampler="uniforms"):
    """Endless truncated Poisson samples (``sampling="truncated_poisson"``): a Poisson sample, and when it has
    more than ``max_batch_size`` records, a uniformly random subset of ``max_batch_size`` of them.

    >>> batches = truncated_poisson_batches(100, 0.5, 20, np.random.default_rng(0))
    >>> max(next(batches).size for _ in range(10))
    20
    """
    n, sampling_rate, rng = check_positive_int(n, "n"), check_sampling_rate(sampling_rate), check_rng(rng)
    max_batch_size = check_positive_int(max_batch_size, "max_batch_size")
    poisson = poisson_batches(n, sampling_rate, rng, sampler)
    while True:
        batch = next(poisson)
        if batch.size > max_batch_size:
            batch = np.sort(rng.choice(batch, size=max_batch_size, replace=False))
        yield batch


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
    ``divisor`` is what the clipped noisy sum is divided by: the expected batch size q n for (truncated) Poisson
    sampling (never the drawn size, docs/math.md §8), the fixed batch size m otherwise. ``relation`` is the
    neighbouring relation the events are stated under. ``target_quantile`` (None: a fixed clip norm) turns on
    adaptive clipping (:mod:`dpedu.training.adaptive`): ``clip_norm`` is then the initial :math:`C_0`.
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
    relation: str = ADD_REMOVE
    max_batch_size: int | None = None
    target_quantile: float | None = None
    clip_learning_rate: float = DEFAULT_CLIP_LEARNING_RATE
    count_noise_std: float | None = None
    sampler: str = "uniforms"

    @property
    def private(self) -> bool:
        """Whether the run adds noise (``noise_multiplier > 0``); a noise-free run has no ledger."""
        return self.noise_multiplier > 0

    @property
    def adaptive(self) -> bool:
        """Whether the clip norm follows a target quantile (adaptive clipping) instead of staying C."""
        return self.target_quantile is not None

    @property
    def gradient_noise_multiplier(self):
        """The multiplier of the noise on the gradient sum: z, or z_Delta > z when a noisy count is released too."""
        if not self.adaptive:
            return self.noise_multiplier
        return gradient_noise_multiplier(self.noise_multiplier, self.resolved_count_noise_std)

    @property
    def resolved_count_noise_std(self):
        r"""sigma_b: ``count_noise_std``, or by default the larger of divisor / 20 (Andrew et al.'s m / 20) and z.

        sigma_b >= z keeps the count's share of the step's budget, :math:`1/(4\sigma_b^2)` of :math:`1/z^2`, at most
        a quarter, so the gradient noise grows by at most :math:`1/\sqrt{3/4}` (docs/math.md §24.1).
        """
        if not self.adaptive:
            return None
        if self.count_noise_std is None:
            return max(DEFAULT_COUNT_NOISE_FRACTION * self.divisor, self.noise_multiplier)
        return self.count_noise_std

    @property
    def batches_per_epoch(self):
        """b = ``round(1 / q)`` for ``sampling="balls_in_bins"``; None for the other schemes."""
        return max(1, round(1.0 / self.sampling_rate)) if self.sampling == "balls_in_bins" else None

    @property
    def event(self):
        """The privacy event of one step (the sampling scheme decides which), under the plan's relation.

        With adaptive clipping the step releases a noisy count too; the two Gaussians together are one with
        multiplier z (docs/math.md §24.1), so the event is the same.
        """
        return self.event_at(self.noise_multiplier)

    def event_at(self, noise_multiplier):
        """The event of one step of this plan with noise multiplier z (> 0): calibration probes z with it."""
        z, relation = noise_multiplier, self.relation
        if self.sampling == "shuffle":
            return ShuffledBatchGaussianEvent(z, self.batch_size, self.n, relation=relation)
        if self.sampling == "fixed":
            return SampledWithoutReplacementGaussianEvent(z, self.batch_size, self.n, relation=relation)
        if self.sampling == "truncated_poisson":
            return TruncatedPoissonGaussianEvent(z, self.sampling_rate, self.max_batch_size, self.n, relation=relation)
        if self.sampling == "balls_in_bins":                   # one event per epoch of b steps
            return BallsInBinsGaussianEvent(z, self.batches_per_epoch, relation=relation)
        return replace(gaussian_step_event(z, self.sampling_rate), relation=relation)  # GaussianEvent when q = 1

    @property
    def ledger(self):
        """``[(event, steps)]`` (balls-in-bins: ``[(event, epochs)]``, epochs = ``ceil(steps / b)``), or ``None`` for
        the non-private sanity run (z = 0)."""
        if not self.private:
            return None
        if self.sampling == "balls_in_bins":
            return [(self.event, -(-self.steps // self.batches_per_epoch))]
        return [(self.event, self.steps)]

    @property
    def noise_std(self):
        """The std z C of the noise on the clipped gradient sum (0 for the non-private run)."""
        return self.noise_multiplier * self.clip_norm if self.private else 0.0

    def batches(self, rng):
        """The batches B_1, B_2, ... drawn from ``rng``, by this plan's sampling scheme."""
        if self.sampling == "shuffle":
            return shuffled_batches(self.n, self.batch_size, rng)
        if self.sampling == "fixed":
            return fixed_size_batches(self.n, self.batch_size, rng)
        if self.sampling == "truncated_poisson":
            return truncated_poisson_batches(self.n, self.sampling_rate, self.max_batch_size, rng, self.sampler)
        if self.sampling == "balls_in_bins":
            return balls_in_bins_epochs(self.n, self.batches_per_epoch, rng)
        return poisson_batches(self.n, self.sampling_rate, rng, self.sampler)

    def clip_state(self):
        """A fresh :class:`~dpedu.training.adaptive.ClipState` at C_0 for an adaptive run; None for a fixed C."""
        if not self.adaptive:
            return None
        return ClipState(self.clip_norm, self.target_quantile, self.clip_learning_rate,
                         self.resolved_count_noise_std, self.divisor)

    def learning_rate_at(self, t):
        """eta_t for step t = 0, 1, ...: eta, or eta (1 - t/T) for the linear schedule."""
        if self.lr_schedule == "constant":
            return self.learning_rate
        return self.learning_rate * (1.0 - t / self.steps)

    def with_noise_multiplier(self, noise_multiplier):
        """The same run with another noise multiplier (checked): for noise calibrated to the plan's steps."""
        noise_multiplier, _ = check_noise_and_clip(noise_multiplier, self.clip_norm)
        plan = replace(self, noise_multiplier=noise_multiplier)
        _ = plan.gradient_noise_multiplier              # adaptive clipping: count_noise_std must exceed z / 2
        return plan


def _number_of_steps(steps, epochs, steps_per_epoch, sampling, sampling_rate):
    if (steps is None) == (epochs is None):
        raise ValueError(f"give exactly one of steps or epochs; got steps={steps!r}, epochs={epochs!r}")
    if steps is not None:
        return check_steps(steps, "steps")
    epochs = check_steps(epochs, "epochs", steps_per_epoch=steps_per_epoch)
    if sampling in ("poisson", "truncated_poisson"):
        return steps_from_epochs(epochs, sampling_rate)
    return max(1, round(epochs * steps_per_epoch))


def _check_max_batch_size(max_batch_size, sampling, n):
    if sampling != "truncated_poisson":
        if max_batch_size is not None:
            raise ValueError(f"max_batch_size is used only with sampling='truncated_poisson'; got "
                             f"max_batch_size={max_batch_size!r} with sampling={sampling!r}")
        return None
    if max_batch_size is None:
        raise ValueError("sampling='truncated_poisson' needs max_batch_size (the cap on |B_t|); got None")
    max_batch_size = check_positive_int(max_batch_size, "max_batch_size")
    if max_batch_size > n:
        raise ValueError(f"max_batch_size must be at most n={n}; got {max_batch_size}")
    return max_batch_size


def _adaptive_settings(target_quantile, clip_learning_rate, count_noise_std, clip_mode, clip_norm):
    """(gamma, eta_C, sigma_b) checked (sigma_b None: the plan's default); or the fixed-C defaults."""
    if target_quantile is None:
        if count_noise_std is not None or clip_learning_rate is not None:
            raise ValueError("clip_learning_rate and count_noise_std are settings of adaptive clipping: give "
                             "target_quantile too (or neither)")
        return None, DEFAULT_CLIP_LEARNING_RATE, None
    if clip_mode != "gradients":
        raise ValueError(f"adaptive clipping (target_quantile) clips gradients: it needs clip_mode='gradients'; got "
                         f"clip_mode={clip_mode!r}")
    if math.isinf(clip_norm):
        raise ValueError("adaptive clipping starts from clip_norm = C_0, which must be finite; got clip_norm=inf")
    gamma, eta, sigma_b = check_adaptive_clipping(
        target_quantile, DEFAULT_CLIP_LEARNING_RATE if clip_learning_rate is None else clip_learning_rate,
        0.0 if count_noise_std is None else count_noise_std)
    return gamma, eta, None if count_noise_std is None else sigma_b


def plan_dp_sgd(n, *, noise_multiplier, clip_norm, sampling_rate, steps=None, epochs=None, learning_rate=1.0,
                lr_schedule="constant", sampling="poisson", clip_mode="gradients", loss_every=None,
                relation=ADD_REMOVE, max_batch_size=None, target_quantile=None, clip_learning_rate=None,
                count_noise_std=None, sampler="uniforms"):
    r"""Check the settings of a DP-SGD run on ``n`` records and fix it as a :class:`DPSGDPlan`; nothing is drawn
    or spent. :func:`dpedu.training.run_dp_sgd` trains by it; :func:`dpedu.training.dp_sgd` is the plain case.

    Parameters
    ----------
    n : int
        The number of records.
    noise_multiplier, clip_norm, sampling_rate, steps, epochs, learning_rate
        Algorithm 1's parameters, as in :func:`dpedu.training.dp_sgd`. ``epochs`` means
        ``max(1, round(epochs / q))`` steps for (truncated) Poisson sampling, ``round(epochs * n / m)`` with
        ``"fixed"``, ``round(epochs * (n // m))`` with ``"shuffle"`` and ``round(epochs * b)`` with ``"balls_in_bins"``.
    lr_schedule : {"constant", "linear"}
        ``"constant"``: eta_t = eta (Abadi et al. §3.3 found a constant rate enough). ``"linear"``:
        :math:`\eta_t = \eta\,(1 - (t-1)/T)`, decaying to eta/T at the last step. A schedule is
        post-processing: it does not change the privacy.
    sampling : {"poisson", "fixed", "truncated_poisson", "shuffle", "balls_in_bins"}
        How :math:`B_t` is drawn; each scheme records its own event (the table in the module docstring).
        ``"poisson"``: Algorithm 1, what the accountants analyse. ``"fixed"``: m = ``round(q n)`` records drawn
        without replacement at every step, divided by m (``SampledWithoutReplacementGaussianEvent``; covered
        under ``relation="replace_one"``). ``"truncated_poisson"``: a Poisson sample cut to a uniform subset of
        ``max_batch_size`` records when larger, divided by q n (the PLD accountant covers it under both relations,
        docs/math.md §22.7; RDP under add/remove, §22.5). ``"shuffle"``: a
        permutation per epoch cut into batches of m; **no accountant covers it** (``run_dp_sgd`` warns).
        ``"balls_in_bins"``: each epoch puts every record into one of b = ``round(1/q)`` batches uniformly at random
        (Chua et al. 2025), divided by n / b; the ledger holds ``BallsInBinsGaussianEvent(z, b)`` once per epoch.
        The accountants refuse it by name; :mod:`dpedu.accountants.balls_in_bins` gives a proven upper bound (E
        Gaussian releases, docs/math.md §22.8) and a Monte Carlo *estimate* with its confidence, labelled as one.
    clip_mode : {"gradients", "inputs"}
        ``"gradients"``: clip every per-example gradient to C at every step. ``"inputs"`` (logistic regression
        only): clip every row of X to norm C once; since :math:`\lVert\nabla\ell\rVert < \lVert x\rVert \le C`
        the gradient sum has the same sensitivity C (docs/math.md §5).
    loss_every : int, optional
        Record the mean training loss every this many steps (default: once per epoch) and after the last.
    relation : {"add_remove", "replace_one"}
        The neighbouring relation the events are stated under (docs/math.md §22); training does not change.
    max_batch_size : int, optional
        The cap of ``sampling="truncated_poisson"``, required there and refused with any other scheme.
    target_quantile : float in (0, 1), optional
        Turns on **adaptive clipping** (Andrew et al. 2021; docs/math.md §24): ``clip_norm`` is :math:`C_0`
        and C moves towards the ``target_quantile`` of the gradient norms, driven by a noisy count; the
        gradient noise grows to :math:`z_\Delta = (z^{-2} - (2\sigma_b)^{-2})^{-1/2}` so that the ledger is
        unchanged.
    clip_learning_rate : float, optional
        :math:`\eta_C > 0` (adaptive clipping only; default 0.2, the paper's).
    count_noise_std : float, optional
        :math:`\sigma_b > z/2` (adaptive clipping only). Default: the larger of the divisor / 20 and z.
    sampler : {"uniforms", "binomial"}
        How a (truncated) Poisson sample is drawn: n uniforms (:func:`poisson_sample`, the default stream) or
        a binomial size and a uniform subset (:func:`binomial_poisson_sample`: the same distribution,
        docs/math.md §8.1, faster at small q, another random stream).
    """
    n = check_positive_int(n, "n")
    noise_multiplier, clip_norm = check_noise_and_clip(noise_multiplier, clip_norm)
    sampling_rate = check_sampling_rate(sampling_rate)
    learning_rate = check_positive(learning_rate, "learning_rate")
    check_choice(lr_schedule, "lr_schedule", LR_SCHEDULES)
    check_choice(sampling, "sampling", SAMPLINGS)
    check_choice(clip_mode, "clip_mode", CLIP_MODES)
    check_choice(sampler, "sampler", SAMPLERS)
    if sampler != "uniforms" and sampling not in ("poisson", "truncated_poisson"):
        raise ValueError(f"sampler={sampler!r} draws Poisson samples: it needs sampling='poisson' or "
                         f"'truncated_poisson'; got sampling={sampling!r}")
    relation = check_relation(relation)
    max_batch_size = _check_max_batch_size(max_batch_size, sampling, n)
    if sampling in ("poisson", "truncated_poisson"):   # divide by q n, never by |B_t| (module docstring)
        batch_size, divisor, steps_per_epoch = None, sampling_rate * n, 1.0 / sampling_rate
    elif sampling == "balls_in_bins":                  # b = round(1/q) batches per epoch, divide by n / b
        batches_per_epoch = max(1, round(1.0 / sampling_rate))
        batch_size, divisor, steps_per_epoch = None, n / batches_per_epoch, batches_per_epoch
    else:                                              # "fixed", "shuffle": every batch has exactly this size
        batch_size = max(1, round(sampling_rate * n))
        divisor = batch_size
        steps_per_epoch = n / batch_size if sampling == "fixed" else n // batch_size
    steps = _number_of_steps(steps, epochs, steps_per_epoch, sampling, sampling_rate)
    loss_every = max(1, round(steps_per_epoch)) if loss_every is None else check_positive_int(loss_every, "loss_every")
    adaptive = _adaptive_settings(target_quantile, clip_learning_rate, count_noise_std, clip_mode, clip_norm)
    plan = DPSGDPlan(n, noise_multiplier, clip_norm, sampling_rate, steps, learning_rate, lr_schedule, sampling,
                     clip_mode, divisor, batch_size, loss_every, relation, max_batch_size, *adaptive, sampler)
    if plan.private:
        _ = plan.gradient_noise_multiplier, plan.event  # refuses count_noise_std <= z / 2; checks the event's fields
    return plan
