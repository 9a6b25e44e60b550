r"""DP-SGD (Abadi et al. 2016, Algorithm 1): Poisson sampling, per-example clipping, Gaussian noise.

:func:`dp_sgd` takes Algorithm 1's parameters; it fixes the run as a :class:`~dpedu.training.plan.DPSGDPlan`
(:func:`plan_dp_sgd`) and runs it (:func:`run_dp_sgd`). Every variant (other sampling schemes, relations,
adaptive clipping, schedules, ``theta0``, a budget, loss recording) opts in through the plan:
``run_dp_sgd(X, y, plan_dp_sgd(n, ...), ...)``. The loop draws each batch from the plan's sampler and calls
:func:`dp_sgd_step`, one step in the algorithm's order (clip and sum, add Gaussian noise, descend by
:math:`\eta/(qn)`); adaptive clipping calls :func:`dp_sgd_adaptive_step`. (Logistic regression at a fixed C runs
the same steps, to the bit, without their per-step checks: :mod:`dpedu.engine.dp_sgd_fast`.) DP-SGD picks no
accountant: it returns the events it performed.

>>> from dpedu.datasets import make_toy
>>> X, y = make_toy(n=200, d=3, rng=0)
>>> result = dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2, rng=0)
>>> result.ledger
[(SubsampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1), 20)]
"""

from __future__ import annotations

import warnings

import numpy as np

from ..mechanisms import gaussian_mechanism
from ..models import LogisticModel, is_model
from ..engine.dp_sgd_fast import StepsRecord, logistic_dp_sgd_steps
from ..engine.validation import check_budget, check_positive, check_rng, check_theta
from .adaptive import ClipState
from .common import CLIP_MODES, MAX_STEPS, DPSGDDiagnostics, TrainingData, TrainingResult, overflow_guard
from .common import training_data
from .plan import LR_SCHEDULES, SAMPLINGS, DPSGDPlan, check_noise_and_clip, plan_dp_sgd, poisson_sample
from .plan import shuffled_batches

__all__ = ["dp_sgd_step", "dp_sgd_adaptive_step", "run_dp_sgd", "dp_sgd", "ShuffledBatchesWarning",
           "gradient_norms", "poisson_sample", "shuffled_batches", "DPSGDPlan",
           "plan_dp_sgd", "LR_SCHEDULES", "SAMPLINGS", "CLIP_MODES", "MAX_STEPS"]


class ShuffledBatchesWarning(UserWarning):
    """``sampling="shuffle"``: fixed-size batches from a shuffled pass, which no dpedu accountant covers."""


def dp_sgd_step(theta, batch, *, model, clip_norm, noise_multiplier, expected_batch_size, learning_rate, rng):
    r"""One step of DP-SGD (Abadi et al. 2016, Alg. 1; docs/math.md §8) on the batch B already drawn.

    .. math::
        \theta \leftarrow \theta - \frac{\eta}{qn}\Big(\sum_{i\in B}\mathrm{L2\_clip}(\nabla\ell(\theta; x_i, y_i), C)
        + \mathcal N(0, z^2C^2 I)\Big)

    ``batch`` is the :class:`~dpedu.training.TrainingData` of the records in B (``data[B]`` with
    ``B = poisson_sample(n, q, rng)``: :math:`B = \{i : U_i < q\}`), so it carries their norms, computed once per
    run. ``model.clipped_gradient_sum`` equals ``L2_clip(model.per_example_gradients(...), C).sum(axis=0)``.
    ``expected_batch_size`` is q n, a public constant, never :math:`|B|` (which is not noised: docs/math.md §8).
    ``rng`` draws the noise vector. Returns the new parameters.
    """
    if not isinstance(batch, TrainingData) or not is_model(model):
        raise TypeError(f"batch must be TrainingData (data[B]) and model a Model; got {type(batch).__name__}, "
                        f"{type(model).__name__}")
    theta = check_theta(theta, model.n_params)
    noise_multiplier, clip_norm = check_noise_and_clip(noise_multiplier, clip_norm)     # z >= 0, C > 0
    expected_batch_size = check_positive(expected_batch_size, "expected_batch_size")
    learning_rate = check_positive(learning_rate, "learning_rate")
    clipped_sum = model.batch_clipped_gradient_sum(theta, batch, clip_norm)   # sum_i L2_clip(grad l_i, C)
    noisy_sum = gaussian_mechanism(clipped_sum, l2_sensitivity=clip_norm,      # + N(0, z^2 C^2 I)
                                   noise_multiplier=noise_multiplier, rng=rng)
    return theta - learning_rate * noisy_sum / expected_batch_size            # / q n, never / |B|


def dp_sgd_adaptive_step(theta, batch, *, model, clip, noise_multiplier, expected_batch_size, learning_rate, rng):
    r"""One DP-SGD step with adaptive clipping (Andrew et al. 2021, Alg. 1; docs/math.md §24).

    As :func:`dp_sgd_step` with C the current :math:`C_t` of ``clip`` (a
    :class:`~dpedu.training.adaptive.ClipState`) and ``noise_multiplier`` the gradient's :math:`z_\Delta`; then
    ``clip.update`` releases the noisy count of the batch's unclipped gradients and moves C. The two releases
    together are one Gaussian step with multiplier z. ``rng``: the gradient noise, then the count's noise.
    """
    if not isinstance(clip, ClipState):
        raise TypeError(f"clip must be a ClipState; got {type(clip).__name__}")
    norms = gradient_norms(model, theta, batch.X, batch.y)                    # ||g_i|| at theta_t
    new_theta = dp_sgd_step(theta, batch, model=model, clip_norm=clip.clip_norm, noise_multiplier=noise_multiplier,
                            expected_batch_size=expected_batch_size, learning_rate=learning_rate, rng=rng)
    clip.update(norms, rng)                                                   # noisy count; C <- C e^(...)
    return new_theta


def gradient_norms(model, theta, X, y):
    """The L2 norm of each per-example gradient (adaptive clipping counts those at most C)."""
    if X.shape[0] == 0:
        return np.zeros(0)
    return np.linalg.norm(model.per_example_gradients(theta, X, y), axis=1)


def check_model(model, n_features, clip_mode="gradients"):
    """``None`` becomes ``LogisticModel(n_features)``; anything else must be a :class:`~dpedu.models.Model` of that width."""
    if model is None:
        model = LogisticModel(n_features)
    if not is_model(model):
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


def run_dp_sgd(X, y, plan, *, model=None, theta0=None, budget=None, rng=None, step=None):
    """Train by DP-SGD as ``plan`` (a :class:`DPSGDPlan` from :func:`plan_dp_sgd`) fixes the run.

    Every variant opts in through the plan (:func:`plan_dp_sgd` documents them); ``model``, ``rng`` and the
    result are as in :func:`dp_sgd`. ``theta0`` is the starting point (default ``model.init(rng)``; it must not
    depend on the data). ``budget`` (a :class:`~dpedu.budget.PrivacyBudget`) is charged with ``plan.ledger``
    after every argument was checked and before the first random number is drawn; if the run would overspend
    it, :class:`~dpedu.budget.BudgetExceededError` is raised and nothing is trained. A non-private plan
    (z = 0) cannot be charged. The rows of X are checked, clipped (``clip_mode="inputs"``) and their norms
    computed once (:func:`~dpedu.training.common.training_data`); then each step draws :math:`B_t` from the
    plan's sampler and calls :func:`dp_sgd_step` (or :func:`dp_sgd_adaptive_step`). ``rng`` is used in this
    order: the initialisation, then per step the sample and the noise (and the count's noise).

    Logistic regression at a fixed C runs these steps without their per-step checks
    (:func:`dpedu.engine.dp_sgd_fast.logistic_dp_sgd_steps`: the same draws and arithmetic, equal to the bit,
    pinned by ``tests/test_engine.py``); at q = 0.01 on Adult the checks cost more than a step's arithmetic.

    ``step`` (default :func:`dp_sgd_step`) is the step the loop takes: any callable with
    :func:`dp_sgd_step`'s signature, ``step(theta, batch, *, model, clip_norm, noise_multiplier,
    expected_batch_size, learning_rate, rng) -> theta`` (e.g. a step followed by a projection). Not with adaptive
    clipping.
    """
    if step is not None and not callable(step):
        raise TypeError(f"step must be None or a callable with dp_sgd_step's signature; got {step!r}")
    if step is not None and plan.adaptive:
        raise ValueError("step is not supported with adaptive clipping (target_quantile): give one or the other")
    if not isinstance(plan, DPSGDPlan):
        raise TypeError(f"plan must be a DPSGDPlan (from plan_dp_sgd); got {type(plan).__name__}")
    data = training_data(X, y, clip_inputs_to=plan.clip_norm if plan.clip_mode == "inputs" else None)
    return _run_on(data, plan, model=model, theta0=theta0, budget=budget, rng=rng, step=step)


def _run_on(data, plan, *, model, theta0, budget, rng, step=None):
    """:func:`run_dp_sgd` on its checked :class:`TrainingData` (which :func:`dp_sgd` makes once)."""
    if plan.n != data.n:
        raise ValueError(f"plan is for n={plan.n} records but X has {data.n} rows")
    model = check_model(model, data.X.shape[1], plan.clip_mode)
    theta0 = None if theta0 is None else check_theta(theta0, model.n_params, "theta0").copy()
    rng = check_rng(rng)
    if check_budget(budget) is not None and not plan.private:
        raise ValueError("a non-private run (noise_multiplier=0) has infinite epsilon and cannot be charged to a budget")
    _warn_if_unaccounted(plan)
    if budget is not None:
        budget.spend(plan.ledger)                      # last check: raises before any step if it would overspend
    theta = model.init(rng) if theta0 is None else theta0
    batches, clip = plan.batches(rng), plan.clip_state()       # clip: None unless adaptive clipping
    with overflow_guard():
        if clip is None and step is None and type(model) is LogisticModel:   # the same steps, checked once
            run, quantiles = logistic_dp_sgd_steps(
                data.X, data.y, data.row_norms, theta, batches, steps=plan.steps, clip_norm=plan.clip_norm,
                noise_std=plan.noise_std, divisor=plan.divisor, loss_every=plan.loss_every, rng=rng,
                learning_rates=[plan.learning_rate_at(t) for t in range(plan.steps)]), []
        else:
            run, quantiles = _steps(data, plan, model, theta, batches, clip, rng, step or dp_sgd_step)
    clip_norms = np.array(clip.clip_norms) if clip is not None else np.full(plan.steps, plan.clip_norm)
    details = DPSGDDiagnostics(plan=plan, model=model, batch_sizes=run.batch_sizes, inclusions=run.inclusions,
                               loss_steps=np.array(run.loss_steps), clip_norms=clip_norms,
                               gradient_norm_quantiles=np.array(quantiles))
    return TrainingResult(theta=run.theta, losses=np.array(run.losses), ledger=plan.ledger, details=details)


def _steps(data, plan, model, theta, batches, clip, rng, step=dp_sgd_step):
    """The steps of :func:`run_dp_sgd`, one :func:`dp_sgd_step` (or :func:`dp_sgd_adaptive_step`) each: a
    :class:`~dpedu.engine.dp_sgd_fast.StepsRecord` and, with adaptive clipping, the quantiles C tracks."""
    batch_sizes, inclusions = np.empty(plan.steps, dtype=np.int64), np.zeros(plan.n, dtype=np.int64)
    losses, loss_steps, quantiles = [], [], []
    for t in range(plan.steps):
        B = next(batches)                              # B_t = {i : U_i < q} for Poisson sampling
        batch_sizes[t] = B.size
        inclusions[B] += 1
        settings = dict(model=model, noise_multiplier=plan.gradient_noise_multiplier,
                    expected_batch_size=plan.divisor, learning_rate=plan.learning_rate_at(t), rng=rng)
        if clip is None:
            theta = step(theta, data[B], clip_norm=plan.clip_norm, **settings)
        else:
            theta = dp_sgd_adaptive_step(theta, data[B], clip=clip, **settings)
        if (t + 1) % plan.loss_every == 0 or t + 1 == plan.steps:
            losses.append(model.batch_loss(theta, data))
            loss_steps.append(t + 1)
            if clip is not None:                       # what C tracks, measured on all the data (a diagnostic)
                quantiles.append(np.quantile(gradient_norms(model, theta, data.X, data.y), plan.target_quantile))
    return StepsRecord(theta, batch_sizes, inclusions, losses, loss_steps), quantiles


def _warn_if_unaccounted(plan):
    """Warn when no accountant in dpedu covers the plan's (sampling, relation)."""
    if plan.sampling == "shuffle":
        warnings.warn(
            "sampling='shuffle' trains on fixed-size batches from a shuffled pass. No accountant in dpedu (and no "
            "Poisson-subsampling analysis: moments, RDP, PLD) covers this; the ledger holds "
            "ShuffledBatchGaussianEvent, which every accountant refuses. Use sampling='poisson' for a guarantee.",
            ShuffledBatchesWarning, stacklevel=3,
        )


def dp_sgd(X, y, *, noise_multiplier, clip_norm, sampling_rate, steps=None, epochs=None, learning_rate=1.0,
           model=None, rng=None):
    r"""DP-SGD: Abadi et al. (2016), Algorithm 1, for logistic regression or a small neural network.

    For t = 1..T (docs/math.md §8)::

        B_t   <- {i : U_i < q}                              Poisson: each record independently, prob. q
        g~_t  <- ( sum_{i in B_t} L2_clip(grad l(theta; x_i, y_i), C) + N(0, z^2 C^2 I) ) / (q n)
        theta <- theta - eta * g~_t

    The plain case of ``run_dp_sgd(X, y, plan_dp_sgd(n, ...), model=model, rng=rng)``: every variant (sampling
    schemes, relations, adaptive clipping, schedules, ``theta0``, a budget, loss recording) is a setting of
    :func:`plan_dp_sgd`.

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
        expectation; :func:`dpedu.events.steps_from_epochs`). At most :data:`MAX_STEPS` steps.
    learning_rate : float
        eta > 0, applied to the noisy *average* gradient.
    model : None, LogisticModel or MLP
        ``None`` is logistic regression on the columns of X (no hidden intercept).
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of all randomness: the initialisation (``model.init``), then per step the sample and the noise.

    Returns
    -------
    TrainingResult
        ``ledger = [(SubsampledGaussianEvent(z, q), T)]`` (``GaussianEvent(z)`` when q = 1); account it with any
        accountant, e.g. ``dpedu.accountants.compare(result, delta=1e-5)``. DP-SGD picks no accountant, so
        ``result.epsilon`` raises :class:`~dpedu.training.common.NotAccountedError` naming that call.
        ``losses`` (once per epoch, at ``details.loss_steps``) and ``details``
        (:class:`~dpedu.training.common.DPSGDDiagnostics`: the plan, ``batch_sizes``, ``inclusions``, ...) are
        diagnostics computed on the private data, not privatised.

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
    model or d. **Non-private sanity setting:** ``noise_multiplier=0`` (with any clip norm, including
    ``inf``) trains without noise; the result has ``ledger=None`` and ``epsilon=inf``. Clipping alone gives no
    privacy.
    """
    data = training_data(X, y)                         # X and y checked, the row norms computed: once
    plan = plan_dp_sgd(data.n, noise_multiplier=noise_multiplier, clip_norm=clip_norm, sampling_rate=sampling_rate,
                       steps=steps, epochs=epochs, learning_rate=learning_rate)
    return _run_on(data, plan, model=model, theta0=None, budget=None, rng=rng)
