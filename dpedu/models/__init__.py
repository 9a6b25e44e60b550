r"""Models with hand-written losses and per-example gradients: ``logistic`` and ``mlp``.

The training loops in :mod:`dpedu.training` need very little from a model, so both models share one
small shape (:class:`Model`): the *model object* knows the shapes, the *parameters* are one flat
vector ``theta`` passed to every method.

===========================================================  ===================================================
``n_params``                                                 length of ``theta``
``init(rng)``                                                a data-independent starting point (no privacy cost)
``loss(theta, X, y)``                                        mean loss (labels in {-1, +1})
``per_example_gradients(theta, X, y)``                       (n, n_params) matrix, one gradient per row
``clipped_gradient_sum(theta, X, y, clip_norm, row_norms)``  :math:`\sum_i \mathrm{L2\_clip}(g_i, C)`
``decision_function`` / ``predict``                          scores / labels in {-1, +1}
===========================================================  ===================================================

A training loop validates its data once (validating ``X`` is itself a pass over the data, as costly as the
gradient) into a :class:`~dpedu.training.TrainingData`; ``batch_loss(theta, batch)`` and
``batch_clipped_gradient_sum(theta, batch, clip_norm)`` take such a batch and check only its shape.

>>> import numpy as np
>>> model = LogisticModel(n_features=2)
>>> model.n_params, model.init(rng=0)
(2, array([0., 0.]))
>>> X = np.array([[3.0, 4.0]]); y = np.array([1.0])
>>> model.clipped_gradient_sum(np.zeros(2), X, y, clip_norm=1.0)   # |g| = 5 * sigmoid(0) = 2.5 -> 1
array([-0.6, -0.8])
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from . import logistic, mlp
from .logistic import LogisticModel
from .mlp import MLP

__all__ = ["logistic", "mlp", "Model", "LogisticModel", "MLP", "is_model"]


@runtime_checkable
class Model(Protocol):
    """What :func:`dpedu.training.dp_sgd` needs from a model (see the module docstring)."""

    n_params: int

    def init(self, rng=None) -> np.ndarray: ...

    def loss(self, theta, X, y) -> float: ...

    def batch_loss(self, theta, batch) -> float: ...

    def per_example_gradients(self, theta, X, y) -> np.ndarray: ...

    def clipped_gradient_sum(self, theta, X, y, clip_norm, row_norms=None) -> np.ndarray: ...

    def batch_clipped_gradient_sum(self, theta, batch, clip_norm) -> np.ndarray: ...

    def decision_function(self, theta, X) -> np.ndarray: ...

    def predict(self, theta, X) -> np.ndarray: ...


def is_model(obj):
    """``isinstance(obj, Model)``, answered at once for dpedu's own models.

    Python 3.11's check of a protocol with a data member (``n_params``) looks up every member on every call
    (about 30 microseconds, a tenth of a DP-SGD step on Adult); :class:`LogisticModel` and :class:`MLP` skip it.

    >>> is_model(LogisticModel(3)), is_model("a model")
    (True, False)
    """
    return isinstance(obj, (LogisticModel, MLP)) or isinstance(obj, Model)
