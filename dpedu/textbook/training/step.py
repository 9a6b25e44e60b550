r"""One step of DP-SGD: :func:`dp_sgd_step`, the step chapter 4 prints and every DP-SGD run takes.

>>> import numpy as np
>>> from dpedu.textbook.models import LogisticModel
>>> from dpedu.textbook.training import training_data
>>> data = training_data(np.array([[3.0, 4.0], [0.3, 0.4]]), np.array([1.0, 1.0]))
>>> dp_sgd_step(np.zeros(2), data, model=LogisticModel(2), clip_norm=1.0, noise_multiplier=0.0,
...             expected_batch_size=2.0, learning_rate=1.0, rng=0)       # no noise: -(1/2) (clipped sum)
array([0.375, 0.5  ])
"""

from __future__ import annotations

from ...ground.door import door, generator, nonnegative, positive
from ...ground.validation import check_noise_and_clip, check_theta
from ...ground.door import positive_or_inf
from ..mechanisms import gaussian_mechanism
from ..models import Model
from .common import TrainingData

__all__ = ["dp_sgd_step"]


def step_arguments(arguments):
    """``dp_sgd_step``'s arguments that only make sense together: a batch, a model of its width, a theta of the
    model's length; C = inf only without noise."""
    batch, model = arguments["batch"], arguments["model"]
    if not isinstance(batch, TrainingData):
        raise TypeError(f"batch must be TrainingData (data[B]); got {type(batch).__name__}")
    if not isinstance(model, Model):
        raise TypeError(f"model must be a dpedu Model (LogisticModel, MLP); got {type(model).__name__}")
    if batch.X.shape[1] != model.n_features:
        raise ValueError(f"batch has {batch.X.shape[1]} features; the model expects n_features={model.n_features}")
    arguments["theta"] = check_theta(arguments["theta"], model.n_params)
    check_noise_and_clip(arguments["noise_multiplier"], arguments["clip_norm"])


@door(step_arguments, clip_norm=positive_or_inf, noise_multiplier=nonnegative,
      expected_batch_size=positive, learning_rate=positive, rng=generator)
def dp_sgd_step(theta, batch, *, model, clip_norm, noise_multiplier, expected_batch_size,
                learning_rate, rng):
    r"""One step of DP-SGD (Abadi et al. 2016, Alg. 1; docs/math.md §8) on the batch B already drawn.

    .. math::
        \theta \leftarrow \theta - \frac{\eta}{qn}\Big(\sum_{i\in B}\mathrm{L2\_clip}(\nabla\ell(\theta; x_i, y_i), C)
        + \mathcal N(0, z^2C^2 I)\Big)

    ``batch`` is ``data[B]``: the records of B with their row norms (computed once per run). ``expected_batch_size``
    is q n, a public constant, never :math:`|B|` (which is not noised: docs/math.md §8): under add/remove n is
    public (a literal removal moves the mean of the clipped gradients by up to 2C/n; docs/math.md §1.2). ``rng``
    draws the noise.
    """
    # sum_i L2_clip(grad l(theta; x_i, y_i), C); the row norms were computed once per run
    clipped_sum = model.clipped_gradient_sum(theta, batch.X, batch.y, clip_norm,
                                             batch.row_norms)
    noisy_sum = gaussian_mechanism(clipped_sum, l2_sensitivity=clip_norm,  # + N(0, z²C²I)
                                   noise_multiplier=noise_multiplier, rng=rng)
    return theta - learning_rate * noisy_sum / expected_batch_size   # / q n, never / |B|
