r"""Projected, L2-regularised noisy gradient descent and DP-SGD: one step injected into the one DP-SGD loop.

:func:`projected_step` (a :class:`ProjectedStep`) is a step with :func:`dpedu.textbook.training.dp_sgd_step`'s signature:

.. math::
    \theta \leftarrow \Pi_R\Big(\theta - \eta\Big(\frac{1}{qn}\Big(\sum_{i \in B}\mathrm{L2\_clip}(\nabla\ell_i, C)
    + \mathcal N(0, z^2C^2I)\Big) + \lambda\theta\Big)\Big),\qquad
    \Pi_R(v) = v\,\min\big(1, R/\lVert v\rVert\big),

``dp_sgd_step`` itself, then the step of the regulariser :math:`\frac\lambda2\lVert\theta\rVert^2` (data-independent),
then the projection onto the ball of radius R. :func:`run_projected` trains with it through
:func:`dpedu.textbook.training.run_dp_sgd` (no loop of its own) and returns a :class:`ProjectedRun`: the run's result
(whose ledger is the composition of its steps, as for any DP-SGD run) together with the step and the plan, which
is what :func:`dpedu.accountants.convex_last_iterate.last_iterate_claim` needs to check the conditions of the
last-iterate theorem (docs/math.md §28.5) before it reports a number. The privacy of the steps does not depend on
R or :math:`\lambda` (the ledger is unchanged); the last-iterate bound does.

>>> import numpy as np
>>> from dpedu.textbook.datasets import make_toy
>>> from dpedu.textbook.training import plan_dp_sgd
>>> X, y = make_toy(n=200, d=3, rng=0)
>>> plan = plan_dp_sgd(200, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=50, learning_rate=2.0,
...                    clip_mode="inputs")
>>> run = run_projected(X, y, plan, radius=0.5, l2=0.01, rng=0)
>>> bool(np.linalg.norm(run.theta) <= 0.5 + 1e-12), run.ledger
(True, [(SubsampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1), 50)])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...ground.validation import check_nonnegative, check_positive
from ..training import DPSGDPlan, TrainingResult, dp_sgd_step, run_dp_sgd

__all__ = ["project_to_ball", "ProjectedStep", "projected_step", "ProjectedRun", "run_projected"]


def project_to_ball(theta, radius):
    r""":math:`\Pi_R(\theta) = \theta\,\min(1, R/\lVert\theta\rVert)`: the nearest point of the ball of radius R (a
    1-Lipschitz map).

    >>> project_to_ball(np.array([3.0, 4.0]), 1.0)
    array([0.6, 0.8])
    """
    norm = float(np.linalg.norm(theta))
    return theta if norm <= radius else theta * (radius / norm)


class ProjectedStep:
    """A step for :func:`dpedu.textbook.training.run_dp_sgd`: ``dp_sgd_step``, the regulariser's step, the projection.

    Parameters
    ----------
    radius : float
        R > 0: every iterate after the first step lies in the ball of radius R (diameter 2R).
    l2 : float, default 0
        :math:`\\lambda \\ge 0`, the weight of :math:`\\frac\\lambda2\\lVert\\theta\\rVert^2` in the objective.
    """

    def __init__(self, radius, l2=0.0):
        self.radius = check_positive(radius, "radius")
        self.l2 = check_nonnegative(l2, "l2")
        if math.isinf(self.l2):
            raise ValueError("l2 must be finite")

    def __call__(self, theta, batch, *, model, clip_norm, noise_multiplier,
                 expected_batch_size, learning_rate, rng):
        noisy = dp_sgd_step(theta, batch, model=model, clip_norm=clip_norm,
                            noise_multiplier=noise_multiplier,
                            expected_batch_size=expected_batch_size,
                            learning_rate=learning_rate, rng=rng)
        return self.finish(theta, noisy, learning_rate)

    def finish(self, theta, noisy, learning_rate):
        """The end of the step from the noisy DP-SGD update ``noisy`` of ``theta``: the regulariser's step, then the
        projection Π_R (an audit that adds a canary's gradient to ``noisy`` finishes the same way)."""
        regularised = noisy - learning_rate * self.l2 * theta   # step of (l2/2)|theta|^2
        return project_to_ball(regularised, self.radius)         # then Pi_R

    def __repr__(self):
        return f"ProjectedStep(radius={self.radius!r}, l2={self.l2!r})"

    def __eq__(self, other):
        if not isinstance(other, ProjectedStep):
            return False
        return (self.radius, self.l2) == (other.radius, other.l2)

    __hash__ = None


def projected_step(radius, l2=0.0):
    """The :class:`ProjectedStep` with radius R and regularisation ``l2``: pass it as ``run_dp_sgd(..., step=...)``."""
    return ProjectedStep(radius, l2)


@dataclass(frozen=True)
class ProjectedRun:
    """A projected run: the training result, the step it took, and its plan (what the last-iterate claim checks).

    Attributes
    ----------
    result : TrainingResult
        What :func:`dpedu.textbook.training.run_dp_sgd` returned; its ``ledger`` is the composition of the steps.
    step : ProjectedStep
        The radius R and the regularisation :math:`\\lambda` of every step.
    plan : DPSGDPlan
        z, C, q, T, the learning rate, the sampling scheme, the clip mode, n and the divisor.
    model : Model
        The model trained.
    theta0 : numpy.ndarray or None
        The starting point given (data-independent), or None for ``model.init(rng)``. The bound does not depend on
        it: the runs on neighbouring datasets start from the same point.
    """

    result: TrainingResult
    step: ProjectedStep
    plan: DPSGDPlan
    model: object
    theta0: np.ndarray | None

    @property
    def theta(self):
        """The released model, :math:`\\theta_T`."""
        return self.result.theta

    @property
    def ledger(self):
        """The run's ledger: its T steps, composed (what any accountant accounts)."""
        return self.result.ledger


def run_projected(X, y, plan, *, radius, l2=0.0, model=None, theta0=None, budget=None, rng=None):
    """Train by ``plan`` (:func:`dpedu.textbook.training.plan_dp_sgd`) with :func:`projected_step` ``(radius, l2)``.

    Everything else is :func:`dpedu.textbook.training.run_dp_sgd`'s (the same loop, the same checks, the same random stream:
    initialisation, then per step the sample and the noise). ``theta0`` defaults to ``model.init(rng)`` drawn from
    ``rng`` first, as ``run_dp_sgd`` does.

    Returns
    -------
    ProjectedRun
    """
    step = projected_step(radius, l2)
    if not isinstance(plan, DPSGDPlan):
        raise TypeError(f"plan must be a DPSGDPlan (from plan_dp_sgd); got {type(plan).__name__}")
    result = run_dp_sgd(X, y, plan, model=model, theta0=theta0, budget=budget, rng=rng, step=step)
    start = None if theta0 is None else np.array(theta0, dtype=float)
    return ProjectedRun(result, step, plan, result.details.model, start)
