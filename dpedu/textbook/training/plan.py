r"""A DP-SGD run fixed before the data is touched: :class:`DPSGDPlan`, built by :func:`plan_dp_sgd`.

The plan is everything about a run that does not depend on the records: the noise multiplier z, the clip norm
C, the sampling scheme (a :class:`~dpedu.textbook.training.sampling.Sampling` object: how batches are drawn, the public
divisor, the event a step records), the number of steps T, the learning-rate schedule, and so the privacy events
the run will perform (its ``ledger``). :func:`dpedu.textbook.training.run_dp_sgd` runs it;
:func:`dpedu.textbook.training.dp_sgd` (Algorithm 1's parameters only) and :class:`dpedu.lab.estimator.DPLogisticRegression`
both build one and run it; nothing re-derives it. Every variant of the algorithm is a setting of the plan (or a
step, noise source or observer the loop is given).

The neighbouring relation (``relation``) is recorded on the events; a scheme refuses a relation under which its
batches are not the mechanism its event describes, and which accountant covers which (scheme, relation) pair is
the accountants' business (they refuse the rest by name).

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

from ...ground.validation import check_choice, check_noise_and_clip, check_positive, check_positive_int
from ...ground.validation import check_sampling_rate, check_steps
from ...ground.events import ADD_REMOVE, ZERO_OUT, check_relation
from .adaptive import DEFAULT_CLIP_LEARNING_RATE, DEFAULT_COUNT_NOISE_FRACTION, ClipState, check_adaptive_clipping
from .adaptive import gradient_noise_multiplier
from .common import CLIP_MODES
from .sampling import SAMPLINGS, Sampling, make_sampling

__all__ = ["LR_SCHEDULES", "SAMPLINGS", "CLIP_MODES", "DPSGDPlan", "plan_dp_sgd", "check_noise_and_clip"]

LR_SCHEDULES = ("constant", "linear")


@dataclass(frozen=True)
class DPSGDPlan:
    """What a DP-SGD run on ``n`` records will do and spend, fixed before the data is touched.

    Build it with :func:`plan_dp_sgd` (which checks every value); run it with :func:`dpedu.textbook.training.run_dp_sgd`.
    ``scheme`` draws the batches and says what is divided by (``divisor``: the expected batch size q n for
    (truncated) Poisson sampling, never the drawn size, docs/math.md §8; the fixed batch size m otherwise) and which
    event a step records. ``relation`` is the neighbouring relation the events are stated under.
    ``target_quantile`` (None: a fixed clip norm) turns on adaptive clipping (:mod:`dpedu.textbook.training.adaptive`):
    ``clip_norm`` is then the initial :math:`C_0`.
    """

    n: int
    noise_multiplier: float
    clip_norm: float
    scheme: Sampling
    steps: int
    learning_rate: float
    lr_schedule: str
    clip_mode: str
    loss_every: int
    relation: str = ADD_REMOVE
    target_quantile: float | None = None
    clip_learning_rate: float = DEFAULT_CLIP_LEARNING_RATE
    count_noise_std: float | None = None

    @property
    def sampling(self) -> str:
        """The scheme's name (``"poisson"``, ``"fixed"``, ...)."""
        return self.scheme.name

    @property
    def sampling_rate(self) -> float:
        """q: the rate the scheme was made with."""
        return self.scheme.sampling_rate

    @property
    def divisor(self) -> float:
        """What the noisy sum is divided by: the scheme's public constant (q n, m or n / b)."""
        return self.scheme.divisor

    @property
    def batch_size(self):
        """m for fixed-size schemes (``"fixed"``, ``"shuffle"``); None otherwise."""
        return getattr(self.scheme, "batch_size", None)

    @property
    def max_batch_size(self):
        """The cap of ``"truncated_poisson"``; None otherwise."""
        return getattr(self.scheme, "max_batch_size", None)

    @property
    def batches_per_epoch(self):
        """b for ``"balls_in_bins"``; None for the other schemes."""
        return getattr(self.scheme, "batches_per_epoch", None)

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
        return gradient_noise_multiplier(self.noise_multiplier, self.resolved_count_noise_std, self.relation)

    @property
    def resolved_count_noise_std(self):
        r"""sigma_b: ``count_noise_std``, or by default the larger of divisor / 20 (Andrew et al.'s m / 20) and z
        (2z under zero-out, where the count's sensitivity is 1, not 1/2).

        That floor keeps the count's share of the step's budget, :math:`(s/\sigma_b)^2` of :math:`1/z^2`, at most a
        quarter, so the gradient noise grows by at most :math:`1/\sqrt{3/4}` (docs/math.md §24.1).
        """
        if not self.adaptive:
            return None
        if self.count_noise_std is None:
            floor = 2.0 * self.noise_multiplier if self.relation == ZERO_OUT else self.noise_multiplier
            return max(DEFAULT_COUNT_NOISE_FRACTION * self.divisor, floor)
        return self.count_noise_std

    @property
    def event(self):
        """The privacy event of one step (of one epoch for balls-in-bins), under the plan's relation.

        With adaptive clipping the step releases a noisy count too; the two Gaussians together are one with
        multiplier z (docs/math.md §24.1), so the event is the same.
        """
        return self.scheme.event(self.noise_multiplier, self.relation)

    def event_at(self, noise_multiplier):
        """The event of one step of this plan with noise multiplier z (> 0): calibration probes z with it."""
        return self.scheme.event(noise_multiplier, self.relation)

    @property
    def ledger(self):
        """``[(event, steps)]`` (balls-in-bins: ``[(event, epochs)]``, epochs = ``ceil(steps / b)``), or ``None`` for
        the non-private sanity run (z = 0)."""
        return self.scheme.ledger(self.noise_multiplier, self.steps, self.relation) if self.private else None

    @property
    def noise_std(self):
        """The std z C of the noise on the clipped gradient sum (0 for the non-private run)."""
        return self.noise_multiplier * self.clip_norm if self.private else 0.0

    def clip_state(self):
        """A fresh :class:`~dpedu.textbook.training.adaptive.ClipState` at C_0 for an adaptive run; None for a fixed C."""
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
        _ = plan.gradient_noise_multiplier              # adaptive clipping: count_noise_std must exceed z / 2 (z)
        return plan


def _number_of_steps(steps, epochs, scheme):
    if (steps is None) == (epochs is None):
        raise ValueError(f"give exactly one of steps or epochs; got steps={steps!r}, epochs={epochs!r}")
    if steps is not None:
        return check_steps(steps, "steps")
    return scheme.steps(check_steps(epochs, "epochs", steps_per_epoch=scheme.steps_per_epoch))


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
                count_noise_std=None):
    r"""Check the settings of a DP-SGD run on ``n`` records and fix it as a :class:`DPSGDPlan`; nothing is drawn
    or spent. :func:`dpedu.textbook.training.run_dp_sgd` trains by it; :func:`dpedu.textbook.training.dp_sgd` is the plain case.

    Parameters
    ----------
    n : int
        The number of records.
    noise_multiplier, clip_norm, sampling_rate, steps, epochs, learning_rate
        Algorithm 1's parameters, as in :func:`dpedu.textbook.training.dp_sgd`. ``epochs`` means
        ``max(1, round(epochs / q))`` steps for (truncated) Poisson sampling, ``round(epochs * n / m)`` with
        ``"fixed"``, ``round(epochs * (n // m))`` with ``"shuffle"`` and ``round(epochs * b)`` with ``"balls_in_bins"``.
    lr_schedule : {"constant", "linear"}
        ``"constant"``: eta_t = eta (Abadi et al. §3.3 found a constant rate enough). ``"linear"``:
        :math:`\eta_t = \eta\,(1 - (t-1)/T)`, decaying to eta/T at the last step. A schedule is
        post-processing: it does not change the privacy.
    sampling : {"poisson", "fixed", "truncated_poisson", "shuffle", "balls_in_bins"}
        How :math:`B_t` is drawn: the scheme of that name in :mod:`dpedu.textbook.training.sampling`, whose table gives each
        one's divisor, epoch and event. ``"poisson"``: Algorithm 1, what the accountants analyse. ``"fixed"``: m =
        ``round(q n)`` records drawn without replacement at every step (covered under ``relation="replace_one"``).
        ``"truncated_poisson"``: a Poisson sample cut to ``max_batch_size`` records when larger (the PLD
        accountant covers it under both relations, docs/math.md §22.7; RDP under add/remove, §22.5). ``"shuffle"``:
        a permutation per epoch cut into batches of m; **no accountant covers it** (``run_dp_sgd`` warns).
        ``"balls_in_bins"``: each epoch puts every record into one of b = ``round(1/q)`` batches uniformly at random
        (Chua et al. 2025); the ledger holds ``BallsInBinsGaussianEvent(z, b)`` once per epoch (docs/math.md §22.8).
    clip_mode : {"gradients", "inputs"}
        ``"gradients"``: clip every per-example gradient to C at every step. ``"inputs"`` (logistic regression
        only): clip every row of X to norm C once; since :math:`\lVert\nabla\ell\rVert < \lVert x\rVert \le C`
        the gradient sum has the same sensitivity C (docs/math.md §5).
    loss_every : int, optional
        Record the mean training loss every this many steps (default: once per epoch) and after the last.
    relation : {"add_remove", "replace_one", "zero_out"}
        The neighbouring relation the events are stated under (docs/math.md §1.2, §22); training does not change.
        Add/remove treats n as public (the divisor q n, m or n / b is a constant of the plan); zero-out (a record
        replaced by one with a zero gradient) keeps n. A scheme refuses a relation its batches do not satisfy:
        ``"cyclic"`` (one split, a permutation modulo b) refuses add/remove, since adding a record moves the others.
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
    """
    n = check_positive_int(n, "n")
    noise_multiplier, clip_norm = check_noise_and_clip(noise_multiplier, clip_norm)
    sampling_rate = check_sampling_rate(sampling_rate)
    learning_rate = check_positive(learning_rate, "learning_rate")
    check_choice(lr_schedule, "lr_schedule", LR_SCHEDULES)
    check_choice(sampling, "sampling", tuple(SAMPLINGS))
    check_choice(clip_mode, "clip_mode", CLIP_MODES)
    relation = check_relation(relation)
    scheme = make_sampling(sampling, n, sampling_rate, max_batch_size)
    if relation not in scheme.relations:
        raise ValueError(f"sampling={sampling!r} does not hold under relation={relation!r}: its batches are the "
                         f"mechanism its event describes only under {scheme.relations}")
    steps = _number_of_steps(steps, epochs, scheme)
    loss_every = (max(1, round(scheme.steps_per_epoch)) if loss_every is None
                  else check_positive_int(loss_every, "loss_every"))
    adaptive = _adaptive_settings(target_quantile, clip_learning_rate, count_noise_std, clip_mode, clip_norm)
    plan = DPSGDPlan(n, noise_multiplier, clip_norm, scheme, steps, learning_rate, lr_schedule, clip_mode,
                     loss_every, relation, *adaptive)
    if plan.private:
        _ = plan.event, plan.gradient_noise_multiplier  # checks the event's fields; refuses count_noise_std <= z / 2
    return plan
