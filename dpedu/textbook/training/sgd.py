r"""DP-SGD (Abadi et al. 2016, Algorithm 1): the one loop every DP-SGD run in dpedu takes.

:func:`dp_sgd` takes Algorithm 1's parameters; it fixes the run as a :class:`~dpedu.textbook.training.plan.DPSGDPlan`
(:func:`plan_dp_sgd`) and runs it with :func:`run_dp_sgd`. The loop draws each batch from the plan's scheme
(:func:`~dpedu.textbook.training.sampling.poisson_sample` for Poisson sampling) and takes :func:`dp_sgd_step`: clip and
sum (the model's ``clipped_gradient_sum``), add Gaussian noise (:func:`~dpedu.textbook.mechanisms.gaussian_mechanism`),
descend by :math:`\eta/(qn)`. A variant is something the loop is given, never a copy of it:

===========================  ===================================================================================
``plan_dp_sgd(...)``         the sampling scheme, relation, schedule, clip mode, adaptive clipping (its step)
``step=``                    another step with :func:`dp_sgd_step`'s signature (a projection after it; a planted bug)
``noise=``                   where the Gaussian noise comes from: anything with ``normal(loc, scale, size)`` (the
                             run's generator by default; correlated noise for DP-FTRL, whose ``ledger(plan)``
                             is then the run's ledger)
``observe=``                 ``observe(t, theta)`` after every step (an auditor reading every update)
===========================  ===================================================================================

DP-SGD picks no accountant: it returns the events it performed.

>>> from dpedu.textbook.datasets import make_toy
>>> X, y = make_toy(n=200, d=3, rng=0)
>>> result = dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2, rng=0)
>>> result.ledger
[(SubsampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1), 20)]
"""

from __future__ import annotations

import warnings

from ...ground.door import door, generator
from ...ground.validation import check_budget, check_features, check_theta
from ..models import LogisticModel, Model
from .adaptive import AdaptiveClipping
from .common import RunLog, overflow_guard, training_data
from .plan import DPSGDPlan, plan_dp_sgd
from .sampling.shuffle import ShuffledBatchesWarning
from .step import dp_sgd_step

__all__ = ["run_dp_sgd", "dp_sgd", "ShuffledBatchesWarning"]


def run_arguments(arguments):
    """``run_dp_sgd``'s plan, model, start, budget and injected parts, checked together before anything runs."""
    plan, model = arguments["plan"], arguments["model"]
    if not isinstance(plan, DPSGDPlan):
        raise TypeError(f"plan must be a DPSGDPlan (from plan_dp_sgd); got {type(plan).__name__}")
    if isinstance(model, type):
        raise TypeError(f"model must be a model instance such as LogisticModel(n_features); got the class "
                        f"{model.__name__}")
    if model is not None and not isinstance(model, Model):
        raise TypeError(f"model must be None (logistic regression), LogisticModel or MLP; got {model!r}")
    if plan.clip_mode == "inputs" and model is not None and not isinstance(model, LogisticModel):
        raise ValueError(
            "clip_mode='inputs' is valid for logistic regression only: there ||grad l|| < ||x||, so rows of norm <= C "
            "give gradients of norm <= C. A neural network's gradient is not bounded by ||x||; use clip_mode='gradients'")
    if check_budget(arguments["budget"]) is not None and not plan.private:
        raise ValueError("a non-private run (noise_multiplier=0) has infinite epsilon and cannot be charged to a budget")
    for name in ("step", "observe"):
        if arguments[name] is not None and not callable(arguments[name]):
            raise TypeError(f"{name} must be None or callable; got {arguments[name]!r}")
    if arguments["step"] is not None and plan.adaptive:
        raise ValueError("step is not supported with adaptive clipping (target_quantile): give one or the other")
    noise = arguments["noise"]
    if noise is not None and not callable(getattr(noise, "normal", None)):
        raise TypeError(f"noise must be None (the run's rng) or a noise source with normal(loc, scale, size); "
                        f"got {type(noise).__name__}")


@door(run_arguments, rng=generator)
def run_dp_sgd(X, y, plan, *, model=None, theta0=None, budget=None, rng=None, step=None,
               noise=None, observe=None):
    """Train by DP-SGD as ``plan`` (a :class:`DPSGDPlan` from :func:`plan_dp_sgd`) fixes the run.

    The rows of X are checked, clipped (``clip_mode="inputs"``) and their norms computed once
    (:func:`~dpedu.textbook.training.common.training_data`). ``model``: None (logistic regression on the columns of X),
    a ``LogisticModel`` or an ``MLP``. ``theta0``: the starting point (default ``model.init(rng)``; it must not
    depend on the data). ``budget`` (a :class:`~dpedu.accountants.budget.PrivacyBudget`) is charged with ``plan.ledger`` after
    every argument was checked and before the first random number is drawn; if the run would overspend it,
    :class:`~dpedu.accountants.budget.BudgetExceededError` is raised and nothing is trained. ``step``, ``noise`` and ``observe``
    are what a variant injects (the module docstring). ``rng`` is used in this order: the initialisation, then
    per step the batch and the noise (and, with adaptive clipping, the count's noise).

    The events are stated under ``plan.relation``; under add/remove they hold for the noisy sums with n public (the
    divisor is a public constant: :func:`dp_sgd`, Notes; docs/math.md §1.2). Which relation a scheme supports is its
    ``relations`` (the fixed batches of ``"cyclic"`` refuse add/remove: adding a record moves the others).
    """
    data = run_data(X, y, plan)              # checked once (and rows clipped if "inputs")
    model = run_model(model, data)           # None: logistic regression on X's columns
    theta0 = None if theta0 is None else check_theta(theta0, model.n_params, "theta0")
    if plan.scheme.warning is not None:      # shuffled batches: no accountant covers them
        warnings.warn(plan.scheme.warning, ShuffledBatchesWarning, stacklevel=3)
    # correlated noise (DP-FTRL) records its own event
    ledger = noise.ledger(plan) if hasattr(noise, "ledger") else plan.ledger
    if budget is not None:
        budget.spend(ledger)                 # raises before any step if it overspends
    theta = model.init(rng) if theta0 is None else theta0
    step = AdaptiveClipping(plan) if plan.adaptive else (step or dp_sgd_step)
    batches, log = plan.scheme.batches(rng), RunLog(plan, data, model, step)
    C, z, divisor = plan.clip_norm, plan.gradient_noise_multiplier, plan.divisor
    with overflow_guard():
        for t in range(plan.steps):
            B = next(batches)                # B_t: poisson_sample(n, q, rng) for Poisson
            eta = plan.learning_rate_at(t)
            theta = step(theta, data[B], model=model, clip_norm=C, noise_multiplier=z,
                         expected_batch_size=divisor, learning_rate=eta, rng=noise or rng)
            log.after(t, B, theta)           # batch sizes, inclusions, the loss
            if observe is not None:
                observe(t, theta)
    return log.result(theta, ledger)


def run_data(X, y, plan):
    """The run's :class:`TrainingData` (rows clipped once for ``clip_mode="inputs"``), of the plan's size."""
    data = training_data(X, y, clip_inputs_to=plan.clip_norm if plan.clip_mode == "inputs" else None)
    if plan.n != data.n:
        raise ValueError(f"plan is for n={plan.n} records but X has {data.n} rows")
    return data


def run_model(model, data):
    """``model``, or logistic regression on the columns of the data when it is None; of the data's width."""
    model = LogisticModel(data.X.shape[1]) if model is None else model
    if model.n_features != data.X.shape[1]:
        raise ValueError(f"model expects n_features={model.n_features} but X has {data.X.shape[1]} columns")
    return model


def dp_sgd(X, y, *, noise_multiplier, clip_norm, sampling_rate, steps=None, epochs=None, learning_rate=1.0,
           model=None, rng=None):
    r"""DP-SGD: Abadi et al. (2016), Algorithm 1, for logistic regression or a small neural network.

    For t = 1..T (docs/math.md §8)::

        B_t   <- {i : U_i < q}                              Poisson: each record independently, prob. q
        g~_t  <- ( sum_{i in B_t} L2_clip(grad l(theta; x_i, y_i), C) + N(0, z^2 C^2 I) ) / (q n)
        theta <- theta - eta * g~_t

    The plain case of ``run_dp_sgd(X, y, plan_dp_sgd(n, ...), model=model, rng=rng)``: every variant (sampling
    schemes, relations, adaptive clipping, schedules, ``theta0``, a budget, loss recording) is a setting of
    :func:`plan_dp_sgd` or something :func:`run_dp_sgd` is given.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,)
        Labels in {-1, +1}.
    noise_multiplier : float
        z >= 0: the noise std on the clipped sum is z*C. Choose it with
        ``dpedu.accountants.calibrate.noise_multiplier(target_epsilon, target_delta, sampling_rate, steps)``.
        ``0`` is the non-private sanity setting (below).
    clip_norm : float
        C > 0, a public constant fixed before looking at the data. ``inf`` (no clipping) only together
        with ``noise_multiplier=0``.
    sampling_rate : float
        q in (0, 1]; the expected batch size is q*n. ``q = 1`` uses every record at every step: full-batch
        noisy gradient descent, whose steps are plain Gaussian releases (``GaussianEvent(z)``).
    steps, epochs : int / float
        Give exactly one. ``epochs`` means ``max(1, round(epochs / q))`` steps (one epoch is 1/q steps in
        expectation; :func:`dpedu.ground.events.steps_from_epochs`). At most ``MAX_STEPS`` steps.
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
        ``result.epsilon`` raises :class:`~dpedu.textbook.training.common.NotAccountedError` naming that call.
        ``losses`` (once per epoch, at ``details.loss_steps``) and ``details``
        (:class:`~dpedu.textbook.training.common.DPSGDDiagnostics`: the plan, ``batch_sizes``, ``inclusions``, ...) are
        diagnostics computed on the private data, not privatised.

    Notes
    -----
    **Why divide by q n and not by |B_t|.** Under add/remove neighbours, :math:`|B_t|` is
    :math:`\mathrm{Binomial}(n, q)` on D and gets one more exactly when the extra record is sampled. The
    subsampling argument rests on hiding *whether* that record took part; dividing by :math:`|B_t|` would
    put this count (unnoised) into every update. :math:`qn` is a constant fixed in advance (Abadi et al.
    divide by the lot size L; Opacus by ``expected_batch_size``). Like them, we treat n as public
    (docs/math.md §1.2); the book instead divides by a noisy count.

    **What add/remove assumes about n: that it is public.** The guarantee is for the noisy sums; dividing them by
    the constant q n is post-processing only when q n is public. Under a literal removal n itself changes: the
    mean of n - 1 clipped gradients differs from the mean of n by up to 2C/n, not C/n (one noise-free full-batch
    step moves by exactly 2C in units of eta / n, while the noisy sums move by C: ``tests/test_literal_neighbours.py``),
    and a divisor computed from ``len(X)`` shows n in the scale of the updates. Zero-out (a record replaced by one
    with a zero gradient) keeps n, and is covered by the same events (docs/math.md §1.2, §22.1).

    **Empty batches** (:math:`|B_t| = 0`, likely when qn is small) are normal steps: the update is pure
    noise, and the step still counts in the ledger.

    **Privacy** depends only on (z, q, T) and the neighbouring relation (add/remove with n public): not on eta,
    the model or d. **Non-private sanity setting:** ``noise_multiplier=0`` (with any clip norm, including
    ``inf``) trains without noise; the result has ``ledger=None`` and ``epsilon=inf``. Clipping alone gives no
    privacy.
    """
    X = check_features(X, finite=False)                # the shape, for the plan; the run checks the rest once
    plan = plan_dp_sgd(X.shape[0], noise_multiplier=noise_multiplier, clip_norm=clip_norm, sampling_rate=sampling_rate,
                       steps=steps, epochs=epochs, learning_rate=learning_rate)
    return run_dp_sgd(X, y, plan, model=model, rng=rng)
