r"""Training loops: plain gradient descent, the book's noisy gradient descent, and DP-SGD.

Every private loop returns a :class:`TrainingResult` whose ``ledger`` lists the privacy events
it performed, ``[(event, count), ...]``, so any accountant can account the run::

    result = noisy_gradient_descent(X, y, iterations=10, epsilon=0.1, delta=1e-5, rng=0)
    result.epsilon, result.delta                       # sequential composition, as the book
    dpedu.accountants.compare(result, delta=1e-5)      # every accountant side by side

>>> from dpedu.datasets import make_toy
>>> X, y = make_toy(n=200, d=3, rng=0)
>>> result = noisy_gradient_descent(X, y, iterations=5, epsilon=0.5, delta=1e-5, clip=1.0, rng=1)
>>> round(result.epsilon, 2), result.delta               # 5 x 0.5 (gradients) + 0.5 (count)
(3.0, 5e-05)
>>> [type(event).__name__ for event, count in result.ledger]
['GaussianEvent', 'LaplaceEvent']

DP-SGD (Abadi et al. 2016, Algorithm 1) picks no accountant: it returns the events it performed.

>>> result = dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2, rng=0)
>>> result.ledger
[(SubsampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1), 20)]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import math
import warnings

import numpy as np

from .validation import (
    check_delta,
    check_epsilon,
    check_features,
    check_labels,
    check_positive,
    check_positive_int,
    check_nonnegative,
    check_rng,
    check_sampling_rate,
    check_theta,
)
from .events import GaussianEvent, LaplaceEvent, ShuffledBatchGaussianEvent, SubsampledGaussianEvent
from .clipping import L2_clip, l2_norms
from .mechanisms import gaussian_noise_multiplier
from .models import LogisticModel, Model
from .models.logistic import _clip_over_norms, _clipped_gradient_sum, _gradient_scalars

__all__ = [
    "TrainingResult",
    "gradient_descent",
    "noisy_gradient_descent",
    "poisson_sample",
    "dp_sgd_step",
    "dp_sgd",
    "ShuffledBatchesWarning",
    "LR_SCHEDULES",
]


@dataclass
class TrainingResult:
    """What a training run produced and what it spent.

    Attributes
    ----------
    theta : numpy.ndarray
        The trained parameters.
    losses : numpy.ndarray
        Mean training loss after each iteration. A *diagnostic* computed on the private data:
        it is not privatised, so do not publish it as if it were.
    ledger : list of (event, count) or None
        The privacy events performed; ``None`` for a non-private run (its epsilon is infinite).
    epsilon, delta : float
        Total privacy spent by *sequential composition* (``inf`` for a non-private run). Other
        accountants: ``dpedu.accountants.compare(result, delta)``. ``nan`` for :func:`dp_sgd`, whose
        subsampled events have no sequential total worth quoting: account its ledger instead.
    epsilon_per_iteration, delta_per_iteration : float
        The budget of one noisy iteration (``nan`` where not applicable).
    details : dict
        Parameters worth reporting (noise multiplier, noisy count, ...).
    """

    theta: np.ndarray
    losses: np.ndarray
    ledger: list | None
    epsilon: float
    delta: float
    epsilon_per_iteration: float = float("nan")
    delta_per_iteration: float = float("nan")
    details: dict = field(default_factory=dict)

    @property
    def private(self) -> bool:
        """Whether the run carries a privacy guarantee."""
        return self.ledger is not None


def _check_data(X, y):
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    return X, y


def _initial_theta(theta0, n_features):
    if theta0 is None:
        return np.zeros(n_features)
    return check_theta(theta0, n_features, "theta0").copy()


def _mean_loss(theta, X, y):
    return float(np.mean(np.logaddexp(0.0, -y * (X @ theta))))


def gradient_descent(X, y, iterations, *, learning_rate=1.0, theta0=None):
    r"""Non-private full-batch gradient descent on the mean logistic loss (the book's baseline).

    .. math:: \theta_t = \theta_{t-1} - \eta\,\frac{1}{n}\sum_i \nabla\ell(\theta_{t-1}; x_i, y_i),
              \qquad \theta_0 = 0

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,)
        Labels in {-1, +1}.
    iterations : int
        Number of steps, >= 1 (the book uses 10).
    learning_rate : float
        :math:`\eta > 0` (the book uses 1).
    theta0 : array_like, optional
        Starting point (zeros by default).

    Returns
    -------
    TrainingResult
        With ``ledger=None`` and ``epsilon=inf``: the output is not private.
    """
    X, y = _check_data(X, y)
    iterations = check_positive_int(iterations, "iterations")
    learning_rate = check_positive(learning_rate, "learning_rate")
    theta = _initial_theta(theta0, X.shape[1])
    n = X.shape[0]
    losses = np.empty(iterations)
    for t in range(iterations):
        theta = theta - learning_rate * (X.T @ _gradient_scalars(theta, X, y)) / n
        losses[t] = _mean_loss(theta, X, y)
    return TrainingResult(theta=theta, losses=losses, ledger=None, epsilon=np.inf, delta=0.0)


def noisy_gradient_descent(X, y, iterations, epsilon, delta, *, clip=5.0, clip_inputs=False,
                           learning_rate=1.0, budget="per_iteration", calibration="classic",
                           theta0=None, rng=None, privacy_budget=None):
    r"""The book's noisy gradient descent (*Programming Differential Privacy*, ch. "Machine Learning").

    Full batch, add/remove neighbours::

        n_noisy = n + Lap(1/eps_count)                          (once)
        for t in 1..iterations:
            G   = sum_i L2_clip(grad l(theta; x_i, y_i), C)     (sensitivity C)
            G~  = G + N(0, (z C)^2 I),   z from (eps_it, delta_it)
            theta <- theta - learning_rate * G~ / n_noisy

    Parameters
    ----------
    X, y : arrays
        Features (n, d) and labels in {-1, +1}.
    iterations : int
        Number of noisy steps k >= 1.
    epsilon, delta : float
        The privacy budget; see ``budget`` for whether it is per iteration or in total.
    clip : float
        Clip norm C > 0 (the book uses 5). A public constant: a bound read off the private data
        (e.g. the largest row norm) is not private. For Adult, every row has norm at most
        ``sqrt(14)`` by construction of the encoding.
    clip_inputs : bool
        If True, clip every *row of X* to norm C once instead of clipping gradients each step. For the
        logistic loss :math:`\lVert\nabla\ell\rVert \le \lVert x\rVert`, so the gradient sum still
        has sensitivity C (the loss is Lipschitz; book, "Sensitivity of the Gradient").
    learning_rate : float
        Step size :math:`\eta > 0` applied to the noisy *average* gradient (the book uses 1).
    budget : {"per_iteration", "total"}
        ``"per_iteration"`` (the book): every iteration is (epsilon, delta)-DP and the noisy count
        is epsilon-DP, so the run costs :math:`((k+1)\varepsilon, k\delta)` by sequential composition.
        ``"total"``: the run must cost (epsilon, delta) by sequential composition: each iteration and
        the count get :math:`\varepsilon/(k+1)`, each iteration :math:`\delta/k`. (Tighter accountants
        certify far less for the same noise: see ``dpedu.accountants.compare`` and
        :mod:`dpedu.calibrate`.)
    calibration : {"classic", "analytic"}
        ``"classic"`` (the book): :math:`z=\sqrt{2\ln(1.25/\delta)}/\varepsilon`, needs per-iteration
        epsilon < 1. ``"analytic"``: the exact Gaussian (Balle & Wang 2018), any epsilon, less noise.
    theta0 : array_like, optional
        Starting point; zeros by default (it must not depend on the data).
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of all noise.
    privacy_budget : dpedu.budget.PrivacyBudget, optional
        Charged with the whole ledger before the noisy count is drawn; refuses (trains nothing) if it
        would overspend. (Named so because ``budget`` already means the split above.)

    Returns
    -------
    TrainingResult
        ``ledger = [(GaussianEvent(z), k), (LaplaceEvent(eps_count), 1)]``; ``epsilon``/``delta``
        the sequential total; ``details`` holds z, the noise std, and the noisy count.

    Notes
    -----
    The noisy count is floored at 1 before dividing (post-processing of a DP value, so free): with
    a tiny epsilon and a small dataset, ``n + Lap(1/epsilon)`` can be negative, which would flip
    the descent direction.
    """
    X, y = _check_data(X, y)
    iterations = check_positive_int(iterations, "iterations")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    clip = check_positive(clip, "clip")
    learning_rate = check_positive(learning_rate, "learning_rate")
    if not isinstance(clip_inputs, (bool, np.bool_)):
        raise TypeError(f"clip_inputs must be True or False; got {clip_inputs!r}")
    if budget == "per_iteration":
        eps_iter, delta_iter, eps_count = epsilon, delta, epsilon
    elif budget == "total":
        eps_iter = eps_count = epsilon / (iterations + 1)
        delta_iter = delta / iterations
    else:
        raise ValueError(f"budget must be 'per_iteration' or 'total'; got {budget!r}")
    z = gaussian_noise_multiplier(eps_iter, delta_iter, calibration)
    if not z * clip < 1e300:  # an infinite noise std would make theta inf or nan
        raise ValueError(f"the noise std (noise multiplier {z:.4g} for epsilon={eps_iter!r}) * clip={clip!r} "
                         f"overflows; use a smaller clip or a larger epsilon")
    rng = check_rng(rng)
    theta = _initial_theta(theta0, X.shape[1])
    ledger = [(GaussianEvent(z), iterations), (LaplaceEvent(eps_count), 1)]
    if privacy_budget is not None:
        privacy_budget.spend(ledger)                   # before anything touches the data

    if clip_inputs:
        X = L2_clip(X, clip)
    clip_over_norms = _clip_over_norms(clip, l2_norms(X)[:, 0])  # computed once: rows do not change
    n = X.shape[0]
    noisy_count = max(n + rng.laplace(0.0, 1.0 / eps_count), 1.0)
    noise_std = z * clip
    losses = np.empty(iterations)
    for t in range(iterations):
        if clip_inputs:  # every gradient already has norm <= clip
            grad_sum = X.T @ _gradient_scalars(theta, X, y)
        else:
            grad_sum = _clipped_gradient_sum(theta, X, y, clip_over_norms)
        noisy_grad_sum = grad_sum + rng.normal(0.0, noise_std, size=grad_sum.shape)
        theta = theta - learning_rate * noisy_grad_sum / noisy_count
        losses[t] = _mean_loss(theta, X, y)

    return TrainingResult(
        theta=theta,
        losses=losses,
        ledger=ledger,
        epsilon=iterations * eps_iter + eps_count,
        delta=iterations * delta_iter,
        epsilon_per_iteration=eps_iter,
        delta_per_iteration=delta_iter,
        details={"noise_multiplier": z, "noise_std": noise_std, "noisy_count": noisy_count,
                 "clip": clip, "clip_inputs": bool(clip_inputs), "calibration": calibration},
    )


# --- DP-SGD (Abadi et al. 2016, Algorithm 1) -------------------------------------------------------

LR_SCHEDULES = ("constant", "linear")
SAMPLINGS = ("poisson", "shuffle")
CLIPS = ("gradients", "inputs")


class ShuffledBatchesWarning(UserWarning):
    """``sampling="shuffle"``: fixed-size batches from a shuffled pass, which no dpedu accountant covers."""


def poisson_sample(n, sampling_rate, rng=None):
    r"""Indices of a Poisson sample: each of ``n`` records joins independently with probability q.

    :math:`B = \{i : U_i < q\}` with :math:`U_i \sim \mathrm{Uniform}[0, 1)` drawn afresh for every record
    (Abadi et al. 2016, §3.1; MATH.md §8). The size :math:`|B| \sim \mathrm{Binomial}(n, q)` is random and
    can be 0. This is the sampling every subsampled-Gaussian accountant assumes; drawing a fixed number of
    indices is a different mechanism.

    >>> poisson_sample(10, 0.3, rng=0)
    array([1, 2, 3])
    """
    n = check_positive_int(n, "n")
    sampling_rate = check_sampling_rate(sampling_rate)
    rng = check_rng(rng)
    return np.flatnonzero(rng.random(n) < sampling_rate)


def _shuffled_batches(n, batch_size, rng):
    """Endless fixed-size batches: shuffle, cut into n // batch_size batches, drop the rest, repeat."""
    while True:
        order = rng.permutation(n)
        for start in range(0, n - batch_size + 1, batch_size):
            yield order[start : start + batch_size]


def _noisy_step(model, theta, X_batch, y_batch, norms_batch, *, clip_norm, noise_std, divisor,
                learning_rate, rng):
    r"""theta - eta * (sum_i L2_clip(g_i, C) + N(0, noise_std^2 I)) / divisor, on an already drawn batch."""
    clipped_sum = model._clipped_gradient_sum(theta, X_batch, y_batch, clip_norm, norms_batch)
    noise = rng.normal(0.0, noise_std, size=clipped_sum.shape) if noise_std > 0 else 0.0
    return theta - learning_rate * (clipped_sum + noise) / divisor


def _check_model(model, n_features):
    if model is None:
        return LogisticModel(n_features)
    if not isinstance(model, Model):
        raise TypeError(f"model must be None (logistic regression), LogisticModel or MLP; got {model!r}")
    width = getattr(model, "n_features", n_features)
    if width != n_features:
        raise ValueError(f"model expects n_features={width} but X has {n_features} columns")
    return model


def _check_privacy_args(noise_multiplier, clip_norm):
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


def dp_sgd_step(theta, X, y, *, noise_multiplier, clip_norm, sampling_rate, learning_rate, model=None,
                rng=None):
    r"""One step of DP-SGD (Abadi et al. 2016, Alg. 1) with Poisson sampling; returns the new parameters.

    .. math::
        B \leftarrow \{i : U_i < q\},\qquad
        \theta \leftarrow \theta - \frac{\eta}{qn}\Big(\sum_{i\in B}\mathrm{L2\_clip}(\nabla\ell(\theta; x_i, y_i), C)
        + \mathcal N(0, z^2C^2 I)\Big)

    The privacy of this one step is ``SubsampledGaussianEvent(noise_multiplier, sampling_rate)``.
    The random stream is used in this order: n uniforms for the sample, then the noise vector.
    See :func:`dp_sgd` for the arguments.
    """
    X, y = _check_data(X, y)
    noise_multiplier, clip_norm = _check_privacy_args(noise_multiplier, clip_norm)
    sampling_rate = check_sampling_rate(sampling_rate)
    learning_rate = check_positive(learning_rate, "learning_rate")
    model = _check_model(model, X.shape[1])
    theta = check_theta(theta, model.n_params)
    rng = check_rng(rng)
    batch = poisson_sample(X.shape[0], sampling_rate, rng)
    return _noisy_step(model, theta, X[batch], y[batch], l2_norms(X[batch])[:, 0], clip_norm=clip_norm,
                       noise_std=noise_multiplier * clip_norm if noise_multiplier > 0 else 0.0,
                       divisor=sampling_rate * X.shape[0], learning_rate=learning_rate, rng=rng)


def _number_of_steps(steps, epochs, steps_per_epoch):
    if (steps is None) == (epochs is None):
        raise ValueError(f"give exactly one of steps or epochs; got steps={steps!r}, epochs={epochs!r}")
    if steps is not None:
        return check_positive_int(steps, "steps")
    epochs = check_positive(epochs, "epochs")
    return max(1, round(epochs * steps_per_epoch))


def dp_sgd(X, y, *, noise_multiplier, clip_norm, sampling_rate, steps=None, epochs=None, learning_rate=1.0,
           lr_schedule="constant", model=None, sampling="poisson", clip="gradients", theta0=None,
           loss_every=None, budget=None, rng=None):
    r"""DP-SGD: Abadi et al. (2016), Algorithm 1, for logistic regression or a small neural network.

    For t = 1..T (MATH.md §8)::

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
        Give exactly one. ``epochs`` means ``round(epochs / q)`` steps (one epoch is 1/q steps in
        expectation), or ``round(epochs * (n // batch))`` with ``sampling="shuffle"``.
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
    clip : {"gradients", "inputs"}
        ``"gradients"``: clip every per-example gradient to C at every step. ``"inputs"`` (logistic
        regression only): clip every *row of X* to norm C once; since
        :math:`\lVert\nabla\ell\rVert < \lVert x\rVert \le C` the gradient sum has the same sensitivity C
        (MATH.md §5). Refused for the MLP, whose gradient is not bounded by :math:`\lVert x\rVert`.
    theta0 : array_like, optional
        Starting point; by default ``model.init(rng)`` (zeros for logistic regression). Must not depend
        on the data.
    loss_every : int, optional
        Record the mean training loss every this many steps (default: once per epoch) and after the last.
    budget : dpedu.budget.PrivacyBudget, optional
        Charged with the whole run *before* the first step; if the run would overspend it,
        :class:`~dpedu.budget.BudgetExceededError` is raised and nothing is trained.
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
    X, y = _check_data(X, y)
    n = X.shape[0]
    noise_multiplier, clip_norm = _check_privacy_args(noise_multiplier, clip_norm)
    sampling_rate = check_sampling_rate(sampling_rate)
    learning_rate = check_positive(learning_rate, "learning_rate")
    if lr_schedule not in LR_SCHEDULES:
        raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}; got {lr_schedule!r}")
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {SAMPLINGS}; got {sampling!r}")
    if clip not in CLIPS:
        raise ValueError(f"clip must be one of {CLIPS}; got {clip!r}")
    model = _check_model(model, X.shape[1])
    if clip == "inputs" and not isinstance(model, LogisticModel):
        raise ValueError(
            "clip='inputs' is valid for logistic regression only: there ||grad l|| < ||x||, so rows of norm <= C "
            "give gradients of norm <= C. A neural network's gradient is not bounded by ||x||; use clip='gradients'"
        )
    private = noise_multiplier > 0

    if sampling == "poisson":
        batch_size = None
        divisor = sampling_rate * n                    # expected batch size: public, never |B_t|
        steps_per_epoch = 1.0 / sampling_rate
    else:
        batch_size = max(1, round(sampling_rate * n))
        divisor = batch_size                           # every batch has exactly this size
        steps_per_epoch = n // batch_size
    steps = _number_of_steps(steps, epochs, steps_per_epoch)
    loss_every = max(1, round(steps_per_epoch)) if loss_every is None else check_positive_int(loss_every, "loss_every")

    if not private:
        ledger = None
    elif sampling == "shuffle":
        ledger = [(ShuffledBatchGaussianEvent(noise_multiplier, batch_size, n), steps)]
    elif sampling_rate == 1.0:
        ledger = [(GaussianEvent(noise_multiplier), steps)]       # every record, every step
    else:
        ledger = [(SubsampledGaussianEvent(noise_multiplier, sampling_rate), steps)]
    if sampling == "shuffle":
        warnings.warn(
            "sampling='shuffle' trains on fixed-size batches from a shuffled pass. No accountant in dpedu (and no "
            "Poisson-subsampling analysis: moments, RDP, PLD) covers this; the ledger holds "
            "ShuffledBatchGaussianEvent, which every accountant refuses. Use sampling='poisson' for a guarantee.",
            ShuffledBatchesWarning, stacklevel=2,
        )
    if budget is not None:
        if ledger is None:
            raise ValueError("a non-private run (noise_multiplier=0) has infinite epsilon and cannot be charged to a budget")
        budget.spend(ledger)                           # raises before any step if it would overspend

    rng = check_rng(rng)
    theta = model.init(rng) if theta0 is None else check_theta(theta0, model.n_params, "theta0").copy()
    if clip == "inputs":
        X = L2_clip(X, clip_norm)                      # once: every row now has norm <= C
    gradient_clip = np.inf if clip == "inputs" else clip_norm   # input clipping already bounds each gradient
    row_norms = l2_norms(X)[:, 0]                      # rows never change: computed once
    noise_std = noise_multiplier * clip_norm if private else 0.0
    shuffled = _shuffled_batches(n, batch_size, rng) if sampling == "shuffle" else None

    losses, loss_steps, batch_sizes = [], [], np.empty(steps, dtype=np.int64)
    for t in range(steps):
        batch = poisson_sample(n, sampling_rate, rng) if shuffled is None else next(shuffled)
        rate = learning_rate if lr_schedule == "constant" else learning_rate * (1.0 - t / steps)
        theta = _noisy_step(model, theta, X[batch], y[batch], row_norms[batch], clip_norm=gradient_clip,
                            noise_std=noise_std, divisor=divisor, learning_rate=rate, rng=rng)
        batch_sizes[t] = batch.size
        if (t + 1) % loss_every == 0 or t + 1 == steps:
            losses.append(model._loss(theta, X, y))
            loss_steps.append(t + 1)

    return TrainingResult(
        theta=theta,
        losses=np.array(losses),
        ledger=ledger,
        epsilon=math.nan if private else math.inf,
        delta=math.nan if private else 0.0,
        details={"noise_multiplier": noise_multiplier, "noise_std": noise_std, "clip_norm": clip_norm,
                 "sampling_rate": sampling_rate, "steps": steps, "sampling": sampling, "clip": clip,
                 "divisor": divisor, "batch_size": batch_size, "learning_rate": learning_rate,
                 "lr_schedule": lr_schedule, "model": model, "loss_steps": np.array(loss_steps),
                 "batch_sizes": batch_sizes},
    )
