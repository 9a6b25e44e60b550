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

``loss`` and ``clipped_gradient_sum`` take ``check_input=False`` for training loops that validated the
data once (validating ``X`` is itself a pass over the data, as costly as the gradient).

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
from ..validation import check_features, check_positive_int, check_theta
from .mlp import MLP

__all__ = ["logistic", "mlp", "Model", "LogisticModel", "MLP"]


@runtime_checkable
class Model(Protocol):
    """What :func:`dpedu.training.dp_sgd` needs from a model (see the module docstring)."""

    n_params: int

    def init(self, rng=None) -> np.ndarray: ...

    def loss(self, theta, X, y, *, check_input=True) -> float: ...

    def per_example_gradients(self, theta, X, y) -> np.ndarray: ...

    def clipped_gradient_sum(self, theta, X, y, clip_norm, row_norms=None, *, check_input=True) -> np.ndarray: ...

    def decision_function(self, theta, X) -> np.ndarray: ...

    def predict(self, theta, X) -> np.ndarray: ...


class LogisticModel:
    r"""Logistic regression (:mod:`dpedu.models.logistic`) in the :class:`Model` shape.

    No hidden intercept: append a constant column to ``X`` for one (and count it in the row norms).
    The clipped sum uses the two matrix-vector products of
    :func:`dpedu.models.logistic.clipped_gradient_sum`: per-example gradients are :math:`s_i x_i`, so
    clipping only rescales the scalars :math:`s_i` (docs/math.md §6).
    """

    def __init__(self, n_features):
        self.n_features = check_positive_int(n_features, "n_features")

    def __repr__(self):
        return f"LogisticModel(n_features={self.n_features})"

    @property
    def n_params(self) -> int:
        """One weight per feature."""
        return self.n_features

    def init(self, rng=None):
        """Zeros: the loss is convex, so no random start is needed (``rng`` is accepted and unused)."""
        return np.zeros(self.n_features)

    def _check_width(self, X):
        X = check_features(X)
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features but the model expects n_features={self.n_features}")
        return X

    def loss(self, theta, X, y, *, check_input=True):
        """Mean logistic loss (:func:`dpedu.models.logistic.loss`)."""
        if check_input:
            X = self._check_width(X)
        return logistic.loss(theta, X, y, check_input=check_input)

    def per_example_gradients(self, theta, X, y):
        """(n, d) matrix of per-example gradients (:func:`dpedu.models.logistic.per_example_gradients`)."""
        return logistic.per_example_gradients(theta, self._check_width(X), y)

    def clipped_gradient_sum(self, theta, X, y, clip_norm, row_norms=None, *, check_input=True):
        r""":math:`\sum_i \mathrm{L2\_clip}(g_i, C)` in two matrix-vector products.

        The clipped sum is :math:`X^\top\big(s \odot \min(1, C/(|s|\,\lVert x\rVert))\big)` with
        :math:`g_i = s_i x_i`: see :func:`dpedu.models.logistic.clipped_gradient_sum` for the derivation and
        the arguments (``row_norms``: precomputed ``||x_i||``; ``check_input=False`` skips validation).
        """
        if check_input:
            X = self._check_width(X)
        return logistic.clipped_gradient_sum(theta, X, y, clip_norm, row_norms, check_input=check_input)

    def decision_function(self, theta, X):
        """Scores ``X @ theta``."""
        X = self._check_width(X)
        return X @ check_theta(theta, self.n_features)

    def predict(self, theta, X):
        """Labels in {-1, +1} (:func:`dpedu.models.logistic.predict`)."""
        return logistic.predict(theta, self._check_width(X))
