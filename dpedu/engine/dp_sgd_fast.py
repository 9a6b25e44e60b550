r"""DP-SGD's loop for logistic regression with a fixed clip norm: the textbook's steps, without their checks.

:func:`dpedu.training.run_dp_sgd` calls :func:`dpedu.training.dp_sgd_step` once per step, and that step checks
all its arguments and builds the batch as a :class:`~dpedu.training.TrainingData`. In a run those checks repeat
what was checked once (the data, the plan) and cost more than the step's arithmetic: at q = 0.01 a batch of
Adult is about 300 rows. :func:`logistic_dp_sgd_steps` runs the same steps on the checked data:

.. math::
    \theta \leftarrow \theta - \frac{\eta_t}{qn}\Big(\sum_{i\in B_t}\mathrm{L2\_clip}(\nabla\ell(\theta; x_i, y_i), C)
    + \mathcal N(0, \sigma^2 I)\Big), \qquad \sigma = zC

with the batch's rows gathered by ``numpy.take``, the clipped sum from
:func:`dpedu.engine.logistic_fast.clipped_gradient_sum` (what ``LogisticModel.batch_clipped_gradient_sum``
calls) and the noise drawn as :func:`dpedu.mechanisms.gaussian_mechanism` draws it
(``rng.normal(0.0, sigma, size=d)``, nothing when z = 0). The same random numbers in the same order, the same
arithmetic in the same order: the result equals the textbook loop's to the bit (``tests/test_engine.py`` pins it
for both samplers, both learning-rate schedules, every sampling scheme and the non-private run).

Unchecked: ``X`` (n, d) finite float64 with ``row_norms`` its row norms, ``y`` in {-1, +1}, ``theta`` the float64
(d,) starting point (not changed), ``batches`` an iterator of integer index arrays (the plan's batches), and the
numbers as a :class:`~dpedu.training.DPSGDPlan` fixes them. Floating-point errors follow the caller's ``numpy.errstate``
(the training loop raises on overflow).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .logistic_fast import clipped_gradient_sum, mean_loss

__all__ = ["StepsRecord", "logistic_dp_sgd_steps"]


class StepsRecord(NamedTuple):
    """What :func:`logistic_dp_sgd_steps` did: the final parameters, every batch size, how many batches each record
    was in, and the mean training loss after the steps in ``loss_steps``."""

    theta: np.ndarray
    batch_sizes: np.ndarray
    inclusions: np.ndarray
    losses: list
    loss_steps: list


def logistic_dp_sgd_steps(X, y, row_norms, theta, batches, *, steps, clip_norm, noise_std, divisor, learning_rates,
                          loss_every, rng):
    """``steps`` DP-SGD steps of logistic regression from ``theta``; returns a :class:`StepsRecord`.

    ``learning_rates[t]`` is :math:`\\eta_t`; ``divisor`` is q n (never :math:`|B_t|`); ``noise_std`` is z C (0: no
    noise). The loss is recorded after every ``loss_every`` steps and after the last.
    """
    d = X.shape[1]
    batch_sizes = np.empty(steps, dtype=np.int64)
    inclusions = np.zeros(X.shape[0], dtype=np.int64)
    losses, loss_steps = [], []
    for t in range(steps):
        B = next(batches)
        batch_sizes[t] = B.size
        inclusions[B] += 1
        clipped_sum = clipped_gradient_sum(theta, X.take(B, axis=0), y.take(B), clip_norm, row_norms.take(B))
        noise = rng.normal(0.0, noise_std, size=d) if noise_std > 0 else 0.0      # N(0, z^2 C^2 I)
        theta = theta - learning_rates[t] * (clipped_sum + noise) / divisor         # / q n, never / |B|
        if (t + 1) % loss_every == 0 or t + 1 == steps:
            losses.append(mean_loss(theta, X, y))
            loss_steps.append(t + 1)
    return StepsRecord(theta, batch_sizes, inclusions, losses, loss_steps)
