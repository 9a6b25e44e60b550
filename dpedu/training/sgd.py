r"""DP-SGD (Abadi et al. 2016, Algorithm 1): Poisson sampling, per-example clipping, Gaussian noise.

:func:`dp_sgd` checks its arguments, fixes the run as a :class:`~dpedu.training.plan.DPSGDPlan` and runs it
(:func:`run_dp_sgd`): T calls of :func:`dp_sgd_update`, one step of the algorithm in its order (sample, clip and
sum, add Gaussian noise, descend), from public pieces (the plan's sampler, ``model.clipped_gradient_sum``,
:func:`dpedu.mechanisms.gaussian_mechanism`). :func:`dp_sgd_step` is that step alone, on unchecked input.
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

import numpy as np

from ..clipping import L2_clip, l2_norms
from ..events import ADD_REMOVE
from ..mechanisms import gaussian_mechanism
from ..models import LogisticModel, Model
from ..validation import check_budget, check_rng, check_theta
from .common import CLIP_MODES, MAX_STEPS, TrainingResult, check_training_data, overflow_guard
from .plan import LR_SCHEDULES, SAMPLINGS, DPSGDPlan, plan_dp_sgd, poisson_sample, shuffled_batches

__all__ = ["dp_sgd_update", "dp_sgd_step", "run_dp_sgd", "dp_sgd", "ShuffledBatchesWarning", "TruncatedPoissonWarning",
           "gradient_norms", "poisson_sample",
           "shuffled_batches", "DPSGDPlan", "plan_dp_sgd", "LR_SCHEDULES", "SAMPLINGS", "CLIP_MODES", "MAX_STEPS"]


class ShuffledBatchesWarning(UserWarning):
    """``sampling="shuffle"``: fixed-size batches from a shuffled pass, which no dpedu accountant covers."""


class TruncatedPoissonWarning(UserWarning):
    """``sampling="truncated_poisson"`` under replace-one: capped Poisson samples, which no dpedu accountant covers
    under that relation (under add/remove the RDP accountant does: docs/math.md §22.5)."""


def dp_sgd_update(theta, X, y, t, *, plan, model, batches, rng, row_norms, clip=None):
    r"""Step t (from 0) of DP-SGD (Abadi et al. 2016, Alg. 1; docs/math.md §8) as ``plan`` fixes it.

    .. math::
        \theta_{t+1} = \theta_t - \frac{\eta_t}{qn}\Big(\sum_{i\in B_t}\mathrm{L2\_clip}(\nabla\ell(\theta_t; x_i, y_i), C)
        + \mathcal N(0, z^2C^2 I)\Big)

    ``batches`` draws :math:`B_t` (``plan.batches(rng)``; Poisson: :math:`B_t = \{i : U_i < q\}`) and
    ``row_norms`` are the norms of the rows of X. No checks: :func:`dp_sgd` and :func:`dp_sgd_step` call it
    on checked data. Its privacy is ``plan.event``; ``rng`` is used in this order: the sample, then the noise.
    Returns the new parameters.

    **Adaptive clipping** (``clip``: the plan's :class:`~dpedu.training.adaptive.ClipState`, Andrew et al.
    2021, docs/math.md §24): C is this step's :math:`C_t`, the sum gets the multiplier :math:`z_\Delta`
    (``plan.gradient_noise_multiplier``), and step 3b releases the noisy count of unclipped gradients that
    moves C; the two releases are one Gaussian step with multiplier z. ``clip=None``: C and z, as above.
    """
    C = plan.clip_norm if clip is None else clip.clip_norm                      # adaptive clipping: C_t
    batch = next(batches)                                                       # 1. sample B_t
    clipped_sum = model.clipped_gradient_sum(theta, X[batch], y[batch], plan.gradient_clip_norm(C),
                                             row_norms[batch], check_input=False)   # 2. sum of L2_clip(g_i, C)
    noisy_sum = gaussian_mechanism(clipped_sum, l2_sensitivity=C,               # 3. + N(0, z^2 C^2 I)
                                   noise_multiplier=plan.gradient_noise_multiplier, rng=rng)
    if clip is not None:                                                        # 3b. noisy count, C <- C e^(...)
        clip.update(gradient_norms(model, theta, X[batch], y[batch]), rng)
    return theta - plan.learning_rate_at(t) * noisy_sum / plan.divisor          # 4. descend (divisor q n, not |B_t|)


def gradient_norms(model, theta, X, y):
    """The L2 norm of each per-example gradient (adaptive clipping counts those at most C)."""
    if X.shape[0] == 0:
        return np.zeros(0)
    return np.linalg.norm(model.per_example_gradients(theta, X, y), axis=1)


def check_model(model, n_features, clip_mode="gradients"):
    """``None`` becomes ``LogisticModel(n_features)``; anything else must be a :class:`~dpedu.models.Model` of that width."""
    if model is None:
        model = LogisticModel(n_features)
    if not isinstance(model, Model):
        raise TypeError(f"model must be None (logistic regression), LogisticModel or MLP; got {model!r}")
    width = getattr(model, "n_features", n_features)
    if width != n_features:
        raise ValueError(f"model expects n_features={width} but X has {n_features} columns")
    if clip_mode == "inputs" and not isinstance(model, LogisticModel):
        raise ValueError(
            "clip_mode='inputs' is valid for logistic regression only: there ||grad l|| < ||x||, so rows of norm <= C "
            "give gradients of norm <= C. A neural network's gradient is not bounded by ||x||; use clip_mode='gradients'"
        )
    return model


def dp_sgd_step(theta, X, y, *, noise_multiplier, clip_norm, sampling_rate, learning_rate, model=None, rng=None):
    r"""One checked step of DP-SGD with Poisson sampling: :func:`dp_sgd_update` on a one-step plan.

    .. math::
        B \leftarrow \{i : U_i < q\},\qquad
        \theta \leftarrow \theta - \frac{\eta}{qn}\Big(\sum_{i\in B}\mathrm{L2\_clip}(\nabla\ell(\theta; x_i, y_i), C)
        + \mathcal N(0, z^2C^2 I)\Big)

    Its privacy is ``SubsampledGaussianEvent(noise_multiplier, sampling_rate)``. The random stream is used in
    this order: n uniforms for the sample, then the noise vector. See :func:`dp_sgd` for the arguments.
    """
    X, y = check_training_data(X, y)
    plan = plan_dp_sgd(X.shape[0], noise_multiplier=noise_multiplier, clip_norm=clip_norm,
                       sampling_rate=sampling_rate, steps=1, learning_rate=learning_rate)
    model = check_model(model, X.shape[1])
    theta, rng = check_theta(theta, model.n_params), check_rng(rng)
    return dp_sgd_update(theta, X, y, 0, plan=plan, model=model, batches=plan.batches(rng), rng=rng,
                         row_norms=l2_norms(X)[:, 0])


def run_dp_sgd(X, y, plan, *, model=None, theta0=None, budget=None, rng=None):
    """Train by DP-SGD as ``plan`` (a :class:`DPSGDPlan` from :func:`plan_dp_sgd`) fixes the run.

    The loop of :func:`dp_sgd`, which documents the arguments and the result. Every argument is checked, and
    ``budget`` charged with ``plan.ledger``, before the first random number is drawn.
    """
    X, y = check_training_data(X, y)
    if not isinstance(plan, DPSGDPlan):
        raise TypeError(f"plan must be a DPSGDPlan (from plan_dp_sgd); got {type(plan).__name__}")
    if plan.n != X.shape[0]:
        raise ValueError(f"plan is for n={plan.n} records but X has {X.shape[0]} rows")
    model = check_model(model, X.shape[1], plan.clip_mode)
    theta0 = None if theta0 is None else check_theta(theta0, model.n_params, "theta0").copy()
    rng = check_rng(rng)
    if check_budget(budget) is not None and not plan.private:
        raise ValueError("a non-private run (noise_multiplier=0) has infinite epsilon and cannot be charged to a budget")
    if plan.sampling == "shuffle":
        warnings.warn(
            "sampling='shuffle' trains on fixed-size batches from a shuffled pass. No accountant in dpedu (and no "
            "Poisson-subsampling analysis: moments, RDP, PLD) covers this; the ledger holds "
            "ShuffledBatchGaussianEvent, which every accountant refuses. Use sampling='poisson' for a guarantee.",
            ShuffledBatchesWarning, stacklevel=3,
        )
    if plan.sampling == "truncated_poisson" and plan.relation != ADD_REMOVE:
        warnings.warn(
            "sampling='truncated_poisson' caps each Poisson sample at max_batch_size records. That is no longer "
            "Poisson sampling; its bound (docs/math.md §22.5) is for add/remove neighbours only, so under "
            f"relation={plan.relation!r} every accountant refuses the ledger's TruncatedPoissonGaussianEvent. "
            "Use relation='add_remove' (the RDP accountant) or sampling='poisson' for a guarantee.",
            TruncatedPoissonWarning, stacklevel=3,
        )
    if budget is not None:
        budget.spend(plan.ledger)                      # last check: raises before any step if it would overspend
    theta = model.init(rng) if theta0 is None else theta0
    if plan.clip_mode == "inputs":
        X = L2_clip(X, plan.clip_norm)                 # once: every row now has norm <= C
    row_norms = l2_norms(X)[:, 0]                      # rows never change: computed once
    batch_sizes, inclusions = [], np.zeros(plan.n, dtype=np.int64)
    batches = _recording_sizes(plan.batches(rng), batch_sizes, inclusions)
    clip = plan.clip_state()                           # None unless adaptive clipping
    losses, loss_steps, quantiles = [], [], []
    with overflow_guard():
        for t in range(plan.steps):
            theta = dp_sgd_update(theta, X, y, t, plan=plan, model=model, batches=batches, rng=rng,
                                  row_norms=row_norms, clip=clip)
            if (t + 1) % plan.loss_every == 0 or t + 1 == plan.steps:
                losses.append(model.loss(theta, X, y, check_input=False))
                loss_steps.append(t + 1)
                if clip is not None:                   # what C tracks, measured on all the data (a diagnostic)
                    quantiles.append(np.quantile(gradient_norms(model, theta, X, y), plan.target_quantile))

    z, C = plan.noise_multiplier, plan.clip_norm
    return TrainingResult(
        theta=theta,
        losses=np.array(losses),
        ledger=plan.ledger,
        epsilon=math.nan if plan.private else math.inf,
        delta=math.nan if plan.private else 0.0,
        details={"noise_multiplier": z, "noise_std": z * C if plan.private else 0.0, "clip_norm": C,
                 "sampling_rate": plan.sampling_rate, "steps": plan.steps, "sampling": plan.sampling,
                 "clip_mode": plan.clip_mode, "divisor": plan.divisor, "batch_size": plan.batch_size,
                 "learning_rate": plan.learning_rate, "lr_schedule": plan.lr_schedule, "model": model,
                 "loss_steps": np.array(loss_steps), "batch_sizes": np.array(batch_sizes, dtype=np.int64),
                 "inclusions": inclusions, "relation": plan.relation, "max_batch_size": plan.max_batch_size,
                 "target_quantile": plan.target_quantile, "count_noise_std": plan.resolved_count_noise_std,
                 "gradient_noise_multiplier": plan.gradient_noise_multiplier,
                 "clip_norms": np.array(clip.clip_norms) if clip is not None else np.full(plan.steps, C),
                 "gradient_norm_quantiles": np.array(quantiles)},
    )


def _recording_sizes(batches, sizes, inclusions):
    """The same batches, each one's size appended to ``sizes`` and each record's count in ``inclusions``
    increased as it is drawn (diagnostics, not privatised)."""
    for batch in batches:
        sizes.append(batch.size)
        inclusions[batch] += 1
        yield batch


def dp_sgd(X, y, *, noise_multiplier, clip_norm, sampling_rate, steps=None, epochs=None, learning_rate=1.0,
           lr_schedule="constant", model=None, sampling="poisson", clip_mode="gradients", theta0=None,
           loss_every=None, budget=None, rng=None, relation="add_remove", max_batch_size=None, target_quantile=None,
           clip_learning_rate=None, count_noise_std=None):
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
    sampling : {"poisson", "fixed", "truncated_poisson", "shuffle"}
        How :math:`B_t` is drawn; each scheme records its own event (the table in
        :mod:`dpedu.training.plan`). ``"poisson"`` (Algorithm 1, what the accountants analyse).
        ``"fixed"``: exactly m = ``round(q n)`` records, a fresh uniform draw without replacement at every
        step, divided by m (``SampledWithoutReplacementGaussianEvent``: the RDP accountant, and the
        sequential and advanced bounds, cover it under ``relation="replace_one"``; none under add/remove). ``"truncated_poisson"``: a Poisson sample cut
        to a uniform subset of ``max_batch_size`` records when larger, divided by q n
        (``TruncatedPoissonGaussianEvent``: the RDP accountant covers it under add/remove, docs/math.md §22.5;
        under replace-one every accountant refuses it and a :class:`TruncatedPoissonWarning` says so). ``"shuffle"``: what most code does - shuffle each epoch
        and cut batches of exactly m records (dividing by m). **No accountant in dpedu covers it**: the
        ledger holds ``ShuffledBatchGaussianEvent`` and every accountant refuses it; a
        :class:`ShuffledBatchesWarning` says so.
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
    relation : {"add_remove", "replace_one"}
        The neighbouring relation the recorded events are stated under (docs/math.md §1.2, §22); the
        training itself does not change. Which accountant covers the run depends on (sampling, relation).
    max_batch_size : int, optional
        The cap of ``sampling="truncated_poisson"``, required there and refused with any other scheme.
    target_quantile : float in (0, 1), optional
        Turns on **adaptive clipping** (Andrew et al. 2021, Alg. 1; docs/math.md §24): ``clip_norm`` is the
        initial :math:`C_0`, and after every step C moves geometrically towards the ``target_quantile``
        :math:`\gamma` of the per-example gradient norms, :math:`C \leftarrow C e^{-\eta_C(\tilde b - \gamma)}`,
        driven by a noisy count :math:`\tilde b` of the unclipped gradients. The privacy is unchanged: the
        gradient noise grows to :math:`z_\Delta = (z^{-2} - (2\sigma_b)^{-2})^{-1/2}` so that sum and count
        together are one Gaussian step with multiplier z. ``details["clip_norms"]`` holds every :math:`C_t`.
    clip_learning_rate : float, optional
        :math:`\eta_C > 0` (adaptive clipping only; default 0.2, the paper's).
    count_noise_std : float, optional
        :math:`\sigma_b`, the noise std of the count (adaptive clipping only); must exceed z / 2. Default:
        the larger of the divisor / 20 (the paper's expected batch size / 20) and z (then the count takes
        at most a quarter of the step's privacy).

    Returns
    -------
    TrainingResult
        ``ledger = [(SubsampledGaussianEvent(z, q), T)]`` (or ``GaussianEvent(z)`` when q = 1, or the
        event of the other ``sampling`` schemes, under ``relation``); account it with any accountant, e.g.
        ``dpedu.accountants.compare(result, delta=1e-5)``. ``epsilon`` and ``delta`` are ``nan``: dp_sgd
        does not pick an accountant. ``losses`` (at ``details["loss_steps"]``),
        ``details["batch_sizes"]``, ``details["inclusions"]`` (how many batches each record was in) and, with
        adaptive clipping, ``details["gradient_norm_quantiles"]`` (the ``target_quantile`` of all the
        per-example gradient norms at the loss steps: what C tracks) are diagnostics computed on the private
        data, not privatised.

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
    X, y = check_training_data(X, y)
    plan = plan_dp_sgd(X.shape[0], noise_multiplier=noise_multiplier, clip_norm=clip_norm,
                       sampling_rate=sampling_rate, steps=steps, epochs=epochs, learning_rate=learning_rate,
                       lr_schedule=lr_schedule, sampling=sampling, clip_mode=clip_mode, loss_every=loss_every,
                       relation=relation, max_batch_size=max_batch_size, target_quantile=target_quantile,
                       clip_learning_rate=clip_learning_rate, count_noise_std=count_noise_std)
    return run_dp_sgd(X, y, plan, model=model, theta0=theta0, budget=budget, rng=rng)
