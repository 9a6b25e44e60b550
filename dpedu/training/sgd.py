r"""DP-SGD (Abadi et al. 2016, Algorithm 1): Poisson sampling, per-example clipping, Gaussian noise.

One step, :func:`dp_sgd_step`, reads as the algorithm; :func:`dp_sgd` runs T of them with the same public
pieces (:func:`poisson_sample`, ``model.clipped_gradient_sum``, :func:`dpedu.mechanisms.gaussian_mechanism`).
DP-SGD picks no accountant: it returns the events it performed.

>>> from dpedu.datasets import make_toy
>>> X, y = make_toy(n=200, d=3, rng=0)
>>> result = dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2, rng=0)
>>> result.ledger
[(SubsampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1), 20)]
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..clipping import L2_clip, l2_norms
from ..events import ShuffledBatchGaussianEvent, gaussian_step_event, steps_from_epochs
from ..mechanisms import gaussian_mechanism
from ..models import LogisticModel, Model
from ..validation import check_nonnegative, check_positive, check_positive_int, check_rng, check_sampling_rate
from ..validation import check_budget, check_theta
from .common import CLIP_MODES, MAX_STEPS, TrainingResult, check_steps, check_training_data, overflow_guard

__all__ = ["poisson_sample", "shuffled_batches", "dp_sgd_step", "dp_sgd", "ShuffledBatchesWarning",
           "LR_SCHEDULES", "SAMPLINGS", "CLIP_MODES", "MAX_STEPS", "DPSGDPlan", "check_step_arguments",
           "check_dp_sgd_arguments"]

LR_SCHEDULES = ("constant", "linear")
SAMPLINGS = ("poisson", "shuffle")


class ShuffledBatchesWarning(UserWarning):
    """``sampling="shuffle"``: fixed-size batches from a shuffled pass, which no dpedu accountant covers."""


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
    return np.flatnonzero(rng.random(n) < sampling_rate)


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


def check_model(model, n_features):
    """``None`` becomes ``LogisticModel(n_features)``; anything else must be a :class:`~dpedu.models.Model` of that width."""
    if model is None:
        return LogisticModel(n_features)
    if not isinstance(model, Model):
        raise TypeError(f"model must be None (logistic regression), LogisticModel or MLP; got {model!r}")
    width = getattr(model, "n_features", n_features)
    if width != n_features:
        raise ValueError(f"model expects n_features={width} but X has {n_features} columns")
    return model


def check_noise_and_clip(noise_multiplier, clip_norm):
    """z >= 0 and C > 0; C = inf only together with z = 0 (the non-private sanity setting)."""
    noise_multiplier = check_nonnegative(noise_multiplier, "noise_multiplier")
    clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
    if noise_multiplier > 0 and math.isinf(clip_norm):
        raise ValueError(
            "clip_norm=inf gives the clipped sum infinite sensitivity, so no finite noise protects it; "
            "clip_norm=inf is allowed only in the non-private sanity setting noise_multiplier=0"
        )
    if noise_multiplier > 0 and not noise_multiplier * clip_norm < 1e300:  # inf std: inf/nan parameters
        raise ValueError(f"the noise std noise_multiplier * clip_norm = {noise_multiplier!r} * {clip_norm!r} "
                         f"overflows; use a smaller noise_multiplier or clip_norm")
    return noise_multiplier, clip_norm


def check_step_arguments(theta, X, y, noise_multiplier, clip_norm, sampling_rate, learning_rate, model, rng):
    """Check every argument of :func:`dp_sgd_step` at once; returns them cleaned, in the same order."""
    X, y = check_training_data(X, y)
    noise_multiplier, clip_norm = check_noise_and_clip(noise_multiplier, clip_norm)
    sampling_rate = check_sampling_rate(sampling_rate)
    learning_rate = check_positive(learning_rate, "learning_rate")
    model = check_model(model, X.shape[1])
    theta = check_theta(theta, model.n_params)
    return theta, X, y, noise_multiplier, clip_norm, sampling_rate, learning_rate, model, check_rng(rng)


def dp_sgd_step(theta, X, y, *, noise_multiplier, clip_norm, sampling_rate, learning_rate, model=None, rng=None):
    r"""One step of DP-SGD (Abadi et al. 2016, Alg. 1) with Poisson sampling; returns the new parameters.

    .. math::
        B \leftarrow \{i : U_i < q\},\qquad
        \theta \leftarrow \theta - \frac{\eta}{qn}\Big(\sum_{i\in B}\mathrm{L2\_clip}(\nabla\ell(\theta; x_i, y_i), C)
        + \mathcal N(0, z^2C^2 I)\Big)

    Its privacy is ``SubsampledGaussianEvent(noise_multiplier, sampling_rate)``. The random stream is used in
    this order: n uniforms for the sample, then the noise vector. See :func:`dp_sgd` for the arguments.
    """
    theta, X, y, z, C, q, eta, model, rng = check_step_arguments(
        theta, X, y, noise_multiplier, clip_norm, sampling_rate, learning_rate, model, rng)
    n = X.shape[0]
    batch = poisson_sample(n, q, rng)                                        # B = {i : U_i < q}
    clipped_sum = model.clipped_gradient_sum(theta, X[batch], y[batch], C, check_input=False)
    noisy_sum = gaussian_mechanism(clipped_sum, l2_sensitivity=C, noise_multiplier=z, rng=rng)  # + N(0, z^2 C^2 I)
    return theta - eta * noisy_sum / (q * n)          # divide by the expected batch size q n, never |B|; descend


@dataclass(frozen=True)
class DPSGDPlan:
    """What a :func:`dp_sgd` run will do and spend, fixed before the data is touched."""

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
    ledger: list | None

    def learning_rate_at(self, t):
        """eta_t for step t = 0, 1, ...: eta, or eta (1 - t/T) for the linear schedule."""
        if self.lr_schedule == "constant":
            return self.learning_rate
        return self.learning_rate * (1.0 - t / self.steps)


def _number_of_steps(steps, epochs, sampling, sampling_rate, steps_per_epoch):
    if (steps is None) == (epochs is None):
        raise ValueError(f"give exactly one of steps or epochs; got steps={steps!r}, epochs={epochs!r}")
    if steps is not None:
        return check_steps(steps, "steps")
    total = check_positive(epochs, "epochs") * steps_per_epoch
    if not total <= MAX_STEPS:                         # checked before rounding: round(1e300) is no step count
        raise ValueError(f"epochs={epochs!r} gives {total:.3g} steps, more than MAX_STEPS = {MAX_STEPS:,} "
                         f"(dpedu.validation.MAX_STEPS)")
    if sampling == "poisson":
        return steps_from_epochs(epochs, sampling_rate)
    return max(1, round(total))


def check_dp_sgd_arguments(X, y, *, noise_multiplier, clip_norm, sampling_rate, steps, epochs, learning_rate,
                           lr_schedule, model, sampling, clip_mode, theta0, loss_every, budget, rng):
    """Check every argument of :func:`dp_sgd` at once; returns ``(X, y, model, theta0, rng, plan)``.

    Nothing is spent and no random number is drawn: ``theta0`` is checked (a copy) or left ``None``.
    """
    X, y = check_training_data(X, y)
    n = X.shape[0]
    noise_multiplier, clip_norm = check_noise_and_clip(noise_multiplier, clip_norm)
    sampling_rate = check_sampling_rate(sampling_rate)
    learning_rate = check_positive(learning_rate, "learning_rate")
    for name, value, allowed in (("lr_schedule", lr_schedule, LR_SCHEDULES), ("sampling", sampling, SAMPLINGS),
                                 ("clip_mode", clip_mode, CLIP_MODES)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    model = check_model(model, X.shape[1])
    if clip_mode == "inputs" and not isinstance(model, LogisticModel):
        raise ValueError(
            "clip_mode='inputs' is valid for logistic regression only: there ||grad l|| < ||x||, so rows of norm <= C "
            "give gradients of norm <= C. A neural network's gradient is not bounded by ||x||; use clip_mode='gradients'"
        )
    if sampling == "poisson":
        batch_size, divisor, steps_per_epoch = None, sampling_rate * n, 1.0 / sampling_rate  # q n: never |B_t|
    else:
        batch_size = max(1, round(sampling_rate * n))
        divisor, steps_per_epoch = batch_size, n // batch_size   # every batch has exactly this size
    steps = _number_of_steps(steps, epochs, sampling, sampling_rate, steps_per_epoch)
    loss_every = max(1, round(steps_per_epoch)) if loss_every is None else check_positive_int(loss_every, "loss_every")
    if noise_multiplier == 0:
        ledger = None
    elif sampling == "shuffle":
        ledger = [(ShuffledBatchGaussianEvent(noise_multiplier, batch_size, n), steps)]
    else:
        ledger = [(gaussian_step_event(noise_multiplier, sampling_rate), steps)]  # GaussianEvent when q = 1
    if check_budget(budget) is not None and ledger is None:
        raise ValueError("a non-private run (noise_multiplier=0) has infinite epsilon and cannot be charged to a budget")
    theta0 = None if theta0 is None else check_theta(theta0, model.n_params, "theta0").copy()
    plan = DPSGDPlan(noise_multiplier, clip_norm, sampling_rate, steps, learning_rate, lr_schedule, sampling,
                     clip_mode, divisor, batch_size, loss_every, ledger)
    return X, y, model, theta0, check_rng(rng), plan


def dp_sgd(X, y, *, noise_multiplier, clip_norm, sampling_rate, steps=None, epochs=None, learning_rate=1.0,
           lr_schedule="constant", model=None, sampling="poisson", clip_mode="gradients", theta0=None,
           loss_every=None, budget=None, rng=None):
    r"""DP-SGD: Abadi et al. (2016), Algorithm 1, for logistic regression or a small neural network.

    For t = 1..T (docs/math.md §8)::

        B_t   <- {i : U_i < q}                              Poisson: each record independently, prob. q
        g~_t  <- ( sum_{i in B_t} L2_clip(grad l(theta; x_i, y_i), C) + N(0, z^2 C^2 I) ) / (q n)
        theta <- theta - eta_t * g~_t

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,)
        Labels in {-1, +1}.
    noise_multiplier : float
        z >= 0: the noise std on the clipped sum is z*C. Choose it with
        ``dpedu.calibrate.noise_multiplier(target_epsilon, target_delta, sampling_rate, steps)``.
        ``0`` is the non-private sanity setting (below).
    clip_norm : float
        C > 0, a public constant fixed before looking at the data. ``inf`` (no clipping) only together
        with ``noise_multiplier=0``.
    sampling_rate : float
        q in (0, 1]; the expected batch size is q*n. ``q = 1`` uses every record at every step: full-batch
        noisy gradient descent, whose steps are plain Gaussian releases (``GaussianEvent(z)``).
    steps, epochs : int / float
        Give exactly one. ``epochs`` means ``max(1, round(epochs / q))`` steps (one epoch is 1/q steps in
        expectation; :func:`dpedu.events.steps_from_epochs`), or ``round(epochs * (n // batch))`` with
        ``sampling="shuffle"``. At most :data:`MAX_STEPS` steps.
    learning_rate : float
        eta > 0, applied to the noisy *average* gradient.
    lr_schedule : {"constant", "linear"}
        ``"constant"``: eta_t = eta (Abadi et al. §3.3 found a constant rate enough). ``"linear"``:
        :math:`\eta_t = \eta\,(1 - (t-1)/T)`, decaying to eta/T at the last step; the late small steps
        average out the noise. A schedule is post-processing: it does not change the privacy.
    model : None, LogisticModel or MLP
        ``None`` is logistic regression on the columns of X (no hidden intercept).
    sampling : {"poisson", "shuffle"}
        ``"poisson"`` (Algorithm 1, what the accountants analyse). ``"shuffle"``: what most code does -
        shuffle each epoch and cut batches of exactly ``round(q n)`` records (dividing by that fixed size).
        **No accountant in dpedu covers it**: the ledger holds ``ShuffledBatchGaussianEvent`` and every
        accountant refuses it; a :class:`ShuffledBatchesWarning` says so.
    clip_mode : {"gradients", "inputs"}
        ``"gradients"``: clip every per-example gradient to C at every step. ``"inputs"`` (logistic
        regression only): clip every *row of X* to norm C once; since
        :math:`\lVert\nabla\ell\rVert < \lVert x\rVert \le C` the gradient sum has the same sensitivity C
        (docs/math.md §5). Refused for the MLP, whose gradient is not bounded by :math:`\lVert x\rVert`.
    theta0 : array_like, optional
        Starting point; by default ``model.init(rng)`` (zeros for logistic regression). Must not depend
        on the data.
    loss_every : int, optional
        Record the mean training loss every this many steps (default: once per epoch) and after the last.
    budget : dpedu.budget.PrivacyBudget, optional
        Charged with the whole run after every argument was checked and *before* the first step; if the run
        would overspend it, :class:`~dpedu.budget.BudgetExceededError` is raised and nothing is trained. A
        call that raises for any other reason spends nothing.
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of all randomness (initialisation, sampling, noise).

    Returns
    -------
    TrainingResult
        ``ledger = [(SubsampledGaussianEvent(z, q), T)]`` (or ``GaussianEvent(z)`` when q = 1, or
        ``ShuffledBatchGaussianEvent(z, batch, n)`` when shuffling); account it with any accountant, e.g.
        ``dpedu.accountants.compare(result, delta=1e-5)``. ``epsilon`` and ``delta`` are ``nan``: dp_sgd
        does not pick an accountant. ``losses`` (at ``details["loss_steps"]``) and
        ``details["batch_sizes"]`` are diagnostics computed on the private data, not privatised.

    Notes
    -----
    **Why divide by q n and not by |B_t|.** Under add/remove neighbours, :math:`|B_t|` is
    :math:`\mathrm{Binomial}(n, q)` on D and gets one more exactly when the extra record is sampled. The
    subsampling argument rests on hiding *whether* that record took part; dividing by :math:`|B_t|` would
    put this count (unnoised) into every update. :math:`qn` is a constant fixed in advance (Abadi et al.
    divide by the lot size L; Opacus by ``expected_batch_size``). Like them, we treat n as public; the
    book instead divides by a noisy count.

    **Empty batches** (:math:`|B_t| = 0`, likely when qn is small) are normal steps: the update is pure
    noise, and the step still counts in the ledger.

    **Privacy** depends only on (z, q, T) and the neighbouring relation (add/remove): not on eta, the
    schedule, the model or d. **Non-private sanity setting:** ``noise_multiplier=0`` (with any clip norm,
    including ``inf``) trains without noise; the result has ``ledger=None`` and ``epsilon=inf``, and it
    cannot be charged to a budget. Clipping alone gives no privacy.
    """
    X, y, model, theta0, rng, plan = check_dp_sgd_arguments(
        X, y, noise_multiplier=noise_multiplier, clip_norm=clip_norm, sampling_rate=sampling_rate, steps=steps,
        epochs=epochs, learning_rate=learning_rate, lr_schedule=lr_schedule, model=model, sampling=sampling,
        clip_mode=clip_mode, theta0=theta0, loss_every=loss_every, budget=budget, rng=rng)
    if sampling == "shuffle":
        warnings.warn(
            "sampling='shuffle' trains on fixed-size batches from a shuffled pass. No accountant in dpedu (and no "
            "Poisson-subsampling analysis: moments, RDP, PLD) covers this; the ledger holds "
            "ShuffledBatchGaussianEvent, which every accountant refuses. Use sampling='poisson' for a guarantee.",
            ShuffledBatchesWarning, stacklevel=2,
        )
    if budget is not None:
        budget.spend(plan.ledger)                      # last check: raises before any step if it would overspend
    theta = model.init(rng) if theta0 is None else theta0
    n, z, C, q = X.shape[0], plan.noise_multiplier, plan.clip_norm, plan.sampling_rate
    if clip_mode == "inputs":
        X = L2_clip(X, C)                              # once: every row now has norm <= C
    gradient_clip = np.inf if clip_mode == "inputs" else C   # input clipping already bounds each gradient
    row_norms = l2_norms(X)[:, 0]                      # rows never change: computed once
    batches = shuffled_batches(n, plan.batch_size, rng) if sampling == "shuffle" else None

    losses, loss_steps, batch_sizes = [], [], np.empty(plan.steps, dtype=np.int64)
    with overflow_guard():
        for t in range(plan.steps):                    # the pieces of dp_sgd_step, on checked data
            batch = poisson_sample(n, q, rng) if batches is None else next(batches)
            clipped_sum = model.clipped_gradient_sum(theta, X[batch], y[batch], gradient_clip, row_norms[batch],
                                                     check_input=False)
            noisy_sum = gaussian_mechanism(clipped_sum, l2_sensitivity=C, noise_multiplier=z, rng=rng)
            theta = theta - plan.learning_rate_at(t) * noisy_sum / plan.divisor
            batch_sizes[t] = batch.size
            if (t + 1) % plan.loss_every == 0 or t + 1 == plan.steps:
                losses.append(model.loss(theta, X, y, check_input=False))
                loss_steps.append(t + 1)

    private = plan.ledger is not None
    return TrainingResult(
        theta=theta,
        losses=np.array(losses),
        ledger=plan.ledger,
        epsilon=math.nan if private else math.inf,
        delta=math.nan if private else 0.0,
        details={"noise_multiplier": z, "noise_std": z * C if private else 0.0, "clip_norm": C,
                 "sampling_rate": q, "steps": plan.steps, "sampling": sampling, "clip_mode": clip_mode,
                 "divisor": plan.divisor, "batch_size": plan.batch_size, "learning_rate": plan.learning_rate,
                 "lr_schedule": lr_schedule, "model": model, "loss_steps": np.array(loss_steps),
                 "batch_sizes": batch_sizes},
    )
