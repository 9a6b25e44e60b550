r"""Full-batch training of logistic regression: plain gradient descent and the book's noisy gradient descent.

The book is *Programming Differential Privacy* (Near & Abuah), chapter "Machine Learning". Its noisy gradient
descent is :func:`run_noisy_gradient_descent`, the loop chapter 2 prints and every noisy-GD run (the sweeps and the
benchmarks too) takes; :func:`noisy_gradient_descent` is the book's call, its plain case. Each iteration reads
``X`` twice (``X @ theta``, then ``X.T @ w``: :meth:`dpedu.textbook.models.LogisticModel.clipped_gradient_sum`).

>>> from dpedu.textbook.datasets import make_toy
>>> X, y = make_toy(n=200, d=3, rng=0)
>>> result = noisy_gradient_descent(X, y, iterations=5, epsilon=0.5, delta=1e-5, clip_norm=1.0, rng=1)
>>> round(result.epsilon, 2), result.delta               # 5 x 0.5 (gradients) + 0.5 (count)
(3.0, 5e-05)
>>> [type(event).__name__ for event, count in result.ledger]
['GaussianEvent', 'LaplaceEvent']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ground.events import GaussianEvent, LaplaceEvent
from ..mechanisms import gaussian_mechanism, gaussian_noise_multiplier, laplace_mechanism
from ..models import LogisticModel
from ..models.logistic import gradient, loss
from ...ground.door import budget_or_none
from ...ground.validation import check_choice, check_delta, check_epsilon, check_noise_scale
from ...ground.door import door, generator, positive
from ...ground.validation import check_positive, check_positive_int, check_steps
from .common import CLIP_MODES, NoisyGDDiagnostics, TrainingResult, initial_theta, overflow_guard, training_data

__all__ = ["gradient_descent", "noisy_gradient_descent", "NoisyGDPlan", "plan_noisy_gradient_descent",
           "run_noisy_gradient_descent", "CLIP_MODES", "BUDGET_SPLITS", "CALIBRATIONS"]

BUDGET_SPLITS = ("per_iteration", "total")
CALIBRATIONS = ("classic", "analytic")


def descent_arguments(arguments):
    """At most MAX_STEPS iterations."""
    arguments["iterations"] = check_steps(arguments["iterations"], "iterations")


@door(descent_arguments, learning_rate=positive)
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
    data = training_data(X, y)                  # X finite, y in {-1, +1}
    theta, losses = initial_theta(theta0, data.X.shape[1]), []
    with overflow_guard():
        for t in range(iterations):
            # gradient: (1/n) sum_i grad l(theta; x_i, y_i)
            theta = theta - learning_rate * gradient(theta, data.X, data.y)
            losses.append(loss(theta, data.X, data.y))
    return TrainingResult(theta=theta, losses=np.array(losses), ledger=None,
                          sequential=(np.inf, 0.0))


@dataclass(frozen=True)
class NoisyGDPlan:
    """What a noisy gradient descent run will do and spend, fixed before the data is touched
    (:func:`plan_noisy_gradient_descent`)."""

    iterations: int
    epsilon_per_iteration: float
    delta_per_iteration: float
    epsilon_count: float
    noise_multiplier: float
    clip_norm: float
    clip_mode: str
    learning_rate: float
    calibration: str
    loss_every: int = 1

    @property
    def ledger(self):
        """``[(GaussianEvent(z), iterations), (LaplaceEvent(epsilon_count), 1)]``."""
        return [(GaussianEvent(self.noise_multiplier), self.iterations), (LaplaceEvent(self.epsilon_count), 1)]

    @property
    def noise_std(self):
        """The std z C of the noise on each gradient sum."""
        return self.noise_multiplier * self.clip_norm

    def result(self, theta, losses, loss_steps, noisy_count):
        """The :class:`~dpedu.textbook.training.TrainingResult` of a run of this plan: its ledger and sequential total."""
        return TrainingResult(
            theta=theta, losses=np.array(losses), ledger=self.ledger,
            sequential=(self.iterations * self.epsilon_per_iteration + self.epsilon_count,
                        self.iterations * self.delta_per_iteration),
            epsilon_per_iteration=self.epsilon_per_iteration, delta_per_iteration=self.delta_per_iteration,
            details=NoisyGDDiagnostics(plan=self, noisy_count=noisy_count, loss_steps=np.array(loss_steps)),
        )


def plan_noisy_gradient_descent(iterations, epsilon, delta, *, clip_norm=5.0, clip_mode="gradients",
                                learning_rate=1.0, budget_split="per_iteration", calibration="classic", loss_every=1):
    r"""Check the settings of a noisy gradient descent run and fix it as a :class:`NoisyGDPlan`.

    Splits the budget and calibrates the noise multiplier, so a setting whose noise would overflow is refused
    here, before any budget is spent or any noise drawn. :func:`run_noisy_gradient_descent` runs it;
    :func:`noisy_gradient_descent` is the book's plain case.

    Parameters
    ----------
    iterations, epsilon, delta, clip_norm, learning_rate
        As in :func:`noisy_gradient_descent`.
    clip_mode : {"gradients", "inputs"}
        ``"gradients"``: clip every per-example gradient to C at every step. ``"inputs"``: clip every *row
        of X* to norm C once; for the logistic loss :math:`\lVert\nabla\ell\rVert < \lVert x\rVert`, so the
        gradient sum still has sensitivity C (book, "Sensitivity of the Gradient").
    budget_split : {"per_iteration", "total"}
        ``"per_iteration"`` (the book): every iteration is (epsilon, delta)-DP and the noisy count
        epsilon-DP, so the run costs :math:`((k+1)\varepsilon, k\delta)` by sequential composition.
        ``"total"``: the run costs (epsilon, delta) by sequential composition: each iteration and the count
        get :math:`\varepsilon/(k+1)`, each iteration :math:`\delta/k`. (Tighter accountants certify far less
        for the same noise: ``dpedu.accountants.compare``, :mod:`dpedu.accountants.calibrate`.)
    calibration : {"classic", "analytic"}
        ``"classic"`` (the book): :math:`z=\sqrt{2\ln(1.25/\delta)}/\varepsilon`, needs per-iteration
        epsilon < 1. ``"analytic"``: the exact Gaussian (Balle & Wang 2018), any epsilon, less noise.
    loss_every : int, default 1
        Record the mean training loss (a diagnostic on the private data, not privatised) after every this
        many iterations, and after the last; ``details.loss_steps`` says after which. The loss after
        iteration t is read off the margins the gradient of iteration t + 1 computes anyway, so recording it
        costs no extra pass over X, but its logarithm and exponential over n numbers still cost about a fifth
        of the two matrix-vector products on Adult; with a larger ``loss_every`` the other iterations run
        within 1.2x of those two products (``python benchmarks/bench_noisy_gd.py`` measures both).
    """
    iterations = check_steps(iterations, "iterations")
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    clip_norm = check_positive(clip_norm, "clip_norm")
    learning_rate = check_positive(learning_rate, "learning_rate")
    check_choice(clip_mode, "clip_mode", CLIP_MODES)
    check_choice(budget_split, "budget_split", BUDGET_SPLITS)
    if budget_split == "per_iteration":
        eps_iter, delta_iter, eps_count = epsilon, delta, epsilon
    else:
        eps_iter = eps_count = epsilon / (iterations + 1)
        delta_iter = delta / iterations
    z = gaussian_noise_multiplier(eps_iter, delta_iter, calibration)
    check_noise_scale(z * clip_norm, f"std (noise multiplier {z:.4g} for epsilon={eps_iter!r}) * "
                      f"clip_norm={clip_norm!r}", "a smaller clip_norm or a larger epsilon")
    loss_every = check_positive_int(loss_every, "loss_every")
    return NoisyGDPlan(iterations, eps_iter, delta_iter, eps_count, z, clip_norm, clip_mode, learning_rate,
                       calibration, loss_every)


def noisy_gd_arguments(arguments):
    """``run_noisy_gradient_descent``'s plan."""
    if not isinstance(arguments["plan"], NoisyGDPlan):
        raise TypeError(f"plan must be a NoisyGDPlan (from plan_noisy_gradient_descent); got "
                        f"{type(arguments['plan']).__name__}")


@door(noisy_gd_arguments, budget=budget_or_none, rng=generator)
def run_noisy_gradient_descent(X, y, plan, *, theta0=None, budget=None, rng=None):
    r"""The book's noisy gradient descent as ``plan`` (a :class:`NoisyGDPlan`) fixes it (docs/math.md §7).

    Add/remove is literal here: the sums and the noisy count are released, and n is not assumed public
    (:func:`noisy_gradient_descent`, Notes; docs/math.md §1.2).

    ``theta0``: the starting point (zeros by default; it must not depend on the data). ``budget`` (a
    :class:`~dpedu.accountants.budget.PrivacyBudget`) is charged with ``plan.ledger`` before the data is touched; it refuses
    (trains nothing) if the run would overspend. ``rng`` draws the noisy count, then each iteration's noise.
    """
    C, z, eta = plan.clip_norm, plan.noise_multiplier, plan.learning_rate
    # X and y checked once; every row clipped to C first for clip_mode="inputs"
    data = training_data(X, y, clip_inputs_to=C if plan.clip_mode == "inputs" else None)
    theta, model = initial_theta(theta0, data.X.shape[1]), LogisticModel(data.X.shape[1])
    if budget is not None:
        budget.spend(plan.ledger)                   # before anything touches the data
    noisy_n = laplace_mechanism(data.n, l1_sensitivity=1.0, epsilon=plan.epsilon_count,
                                rng=rng)
    noisy_n = max(noisy_n, 1.0)                     # n + Lap(1/epsilon), at least 1
    losses, loss_steps = [], []
    with overflow_guard():
        for t in range(plan.iterations):
            # G = sum_i L2_clip(grad l(theta; x_i, y_i), C): L2 sensitivity C
            G = model.clipped_gradient_sum(theta, data.X, data.y, C, data.row_norms)
            noisy_G = gaussian_mechanism(G, l2_sensitivity=C, noise_multiplier=z, rng=rng)
            theta = theta - eta * noisy_G / noisy_n
            if (t + 1) % plan.loss_every == 0 or t + 1 == plan.iterations:
                losses.append(model.loss(theta, data.X, data.y))   # a diagnostic
                loss_steps.append(t + 1)
    return plan.result(theta, losses, loss_steps, noisy_n)


def noisy_gradient_descent(X, y, iterations, epsilon, delta, *, clip_norm=5.0,
                           learning_rate=1.0, rng=None):
    r"""The book's noisy gradient descent: full batch, add/remove neighbours taken literally
    (docs/math.md §7, §1.2).

    ::

        n~ = n + Lap(1/epsilon)                                         (once)
        for t in 1..iterations:
            G     = sum_i L2_clip(grad l(theta; x_i, y_i), C)            (L2 sensitivity C)
            G~    = G + N(0, z^2 C^2 I),   z = sqrt(2 ln(1.25/delta)) / epsilon
            theta = theta - learning_rate * G~ / n~

    ``run_noisy_gradient_descent(X, y, plan_noisy_gradient_descent(...), rng=rng)``: the variants
    (``clip_mode``, ``budget_split``, ``calibration``, ``loss_every``, ``theta0``, a budget) are settings of
    :func:`plan_noisy_gradient_descent` and :func:`run_noisy_gradient_descent`.

    Parameters
    ----------
    X, y : arrays
        Features (n, d) and labels in {-1, +1}.
    iterations : int
        Number of noisy steps k >= 1.
    epsilon, delta : float
        The budget of each iteration (and epsilon of the noisy count), as the book.
    clip_norm : float
        C > 0 (the book uses 5). A public constant: a bound read off the private data is not private.
        For Adult, every row has norm at most ``sqrt(14)`` by construction of the encoding.
    learning_rate : float
        Step size :math:`\eta > 0` applied to the noisy *average* gradient (the book uses 1).
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of all noise.

    Returns
    -------
    TrainingResult
        ``ledger = [(GaussianEvent(z), k), (LaplaceEvent(epsilon), 1)]``; ``epsilon``/``delta`` the
        sequential total :math:`((k+1)\varepsilon, k\delta)`; ``details`` a
        :class:`~dpedu.textbook.training.common.NoisyGDDiagnostics` (the plan, the noisy count, the loss steps).

    Notes
    -----
    The noisy count is floored at 1 before dividing (post-processing of a DP value, so free): with a tiny
    epsilon and a small dataset, ``n + Lap(1/epsilon)`` can be negative, which would flip the descent.

    **What add/remove assumes about n: nothing.** A literal removal changes n, and the mean of the n - 1 clipped
    gradients left differs from the mean of n by up to 2C/n, not C/n (``tests/test_literal_neighbours.py``
    measures 2.000 C for one noise-free step). The run does not release that mean: it releases the gradient sums
    (sensitivity C, literally) and the count with Laplace noise (sensitivity 1, in the ledger), and divides one by
    the other, which is post-processing. So the ledger holds for D and D plus one record with n not public
    (docs/math.md §1.2; the literal-neighbour audit, §20.7, measures delta at the claimed epsilon).
    """
    plan = plan_noisy_gradient_descent(iterations, epsilon, delta, clip_norm=clip_norm,
                                       learning_rate=learning_rate)
    return run_noisy_gradient_descent(X, y, plan, rng=rng)
