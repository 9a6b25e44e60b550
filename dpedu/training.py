r"""Training loops: plain gradient descent and the book's noisy gradient descent.

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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._validation import (
    check_delta,
    check_epsilon,
    check_features,
    check_labels,
    check_positive,
    check_positive_int,
    check_rng,
    check_theta,
)
from .accountants.events import GaussianEvent, LaplaceEvent
from .clipping import L2_clip
from .mechanisms import gaussian_noise_multiplier
from .clipping import l2_norms
from .models.logistic import _clip_over_norms, _clipped_gradient_sum, _gradient_scalars

__all__ = ["TrainingResult", "gradient_descent", "noisy_gradient_descent"]


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
        accountants: ``dpedu.accountants.compare(result, delta)``.
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
                           theta0=None, rng=None):
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
    rng = check_rng(rng)
    theta = _initial_theta(theta0, X.shape[1])

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

    ledger = [(GaussianEvent(z), iterations), (LaplaceEvent(eps_count), 1)]
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
