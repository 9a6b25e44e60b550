r"""Logistic regression from scratch, labels in {-1, +1}, no hidden intercept.

With score :math:`s = \theta\cdot x` and margin :math:`m = y\,\theta\cdot x` (docs/math.md §6):

.. math::
    \ell(\theta; x, y) = \ln(1 + e^{-m}),\qquad
    \nabla_\theta \ell = -y\,x\,\sigma(-m),\qquad
    \lVert\nabla_\theta\ell\rVert_2 < \lVert x\rVert_2 .

Each function reads as its formula, stable for every margin through ``np.logaddexp(0, -m)`` (the book's
``np.log(1 + np.exp(-m))`` overflows for m < -710) and ``scipy.special.expit`` (the sigmoid without overflow).
:class:`LogisticModel` is the same model in the :class:`~dpedu.textbook.models.Model` shape; its clipped sum is computed
in two matrix-vector products (:meth:`LogisticModel.clipped_gradient_sum`, pinned to :func:`clipped_gradient_sum`
by ``tests/test_logistic.py``).

>>> import numpy as np
>>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([1.0, -1.0])
>>> loss(np.zeros(2), X, y)          # ln 2 at theta = 0
0.6931471805599453
>>> gradient(np.zeros(2), X, y)
array([-0.25,  0.25])
>>> predict(np.array([1.0, -1.0]), X)
array([ 1., -1.])
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..clipping import L2_clip, clip_factor, l2_norms
from ...ground.door import count, door
from ...ground.validation import check_array, check_features, check_labels, check_theta
from ...ground.door import positive_or_inf
from .base import Model, model_arguments
from .base import batch_arguments as model_batch_arguments

__all__ = ["LogisticModel", "per_example_loss", "loss", "per_example_gradients", "gradient",
           "clipped_gradient_sum", "predict", "accuracy"]


def data_arguments(arguments):
    """``X`` (n, d) finite, ``y`` in {-1, +1} of length n (when given) and ``theta`` of length d."""
    X = arguments["X"] = check_features(arguments["X"])
    labels_and_theta(X, arguments)


def batch_arguments(arguments):
    """As :func:`data_arguments`, and ``X`` may have no rows (an empty batch: its gradients sum to zero)."""
    X = arguments["X"] = check_array(arguments["X"], "X", ndim=2, allow_empty=True)
    if X.shape[1] == 0:
        raise ValueError(f"X must have at least one feature column; got shape {X.shape}")
    labels_and_theta(X, arguments)


def labels_and_theta(X, arguments):
    """``y`` (when given) and ``theta`` against ``X``."""
    if "y" in arguments:
        arguments["y"] = check_labels(arguments["y"], X.shape[0])
    arguments["theta"] = check_theta(arguments["theta"], X.shape[1])


@door(data_arguments, overflow="X")
def per_example_loss(theta, X, y):
    r"""Logistic loss of each example, ln(1 + exp(-m_i)) with m_i = y_i θ·x_i, shape (n,)."""
    m = y * (X @ theta)                     # margins m_i = y_i theta . x_i
    return np.logaddexp(0.0, -m)            # ln(1 + exp(-m)), finite for every margin


@door(data_arguments, overflow="X")
def loss(theta, X, y):
    """Mean logistic loss over the rows of ``X`` (``ln 2`` at ``theta = 0``)."""
    return float(np.mean(per_example_loss(theta, X, y)))


@door(batch_arguments, overflow="X")
def per_example_gradients(theta, X, y):
    r"""Per-example gradients, row i is -y_i σ(-m_i) x_i with m_i = y_i θ·x_i, shape (n, d)."""
    m = y * (X @ theta)                     # margins m_i = y_i theta . x_i
    return (-y * expit(-m))[:, None] * X    # row i: -y_i sigmoid(-m_i) x_i


@door(data_arguments, overflow="X")
def gradient(theta, X, y):
    """Mean gradient of the logistic loss (the gradient of :func:`loss`)."""
    return per_example_gradients(theta, X, y).mean(axis=0)


@door(batch_arguments, clip_norm=positive_or_inf, overflow="X")
def clipped_gradient_sum(theta, X, y, clip_norm):
    r"""Σᵢ L2_clip(∇ℓ(θ; xᵢ, yᵢ), C): the sum whose L2 sensitivity is C.

    >>> X = np.array([[3.0, 4.0], [0.3, 0.4]]); y = np.array([1.0, 1.0])
    >>> clipped_gradient_sum(np.zeros(2), X, y, clip_norm=1.0)   # |g_1| = 2.5 -> 1; |g_2| = 0.25 kept
    array([-0.75, -1.  ])
    """
    return L2_clip(per_example_gradients(theta, X, y), clip_norm).sum(axis=0)


@door(data_arguments, overflow="X")
def predict(theta, X):
    """Labels in {-1, +1}: the sign of ``X @ theta`` (a score of exactly 0 predicts +1)."""
    return np.where(X @ theta >= 0, 1.0, -1.0)


@door(data_arguments, overflow="X")
def accuracy(theta, X, y):
    """Fraction of rows where :func:`predict` equals ``y`` (labels in {-1, +1})."""
    return float(np.mean(predict(theta, X) == y))


class LogisticModel(Model):
    r"""Logistic regression in the :class:`~dpedu.textbook.models.Model` shape: one weight per feature, no intercept.

    Append a constant column to ``X`` for an intercept (and count it in the row norms).
    """

    @door(n_features=count)
    def __init__(self, n_features):
        self.n_features = n_features

    def __repr__(self):
        return f"LogisticModel(n_features={self.n_features})"

    @property
    def n_params(self) -> int:
        """One weight per feature."""
        return self.n_features

    def init(self, rng=None):
        """Zeros: the loss is convex, so no random start is needed (``rng`` is accepted and unused)."""
        return np.zeros(self.n_features)

    @door(model_arguments, overflow="X")
    def decision_function(self, theta, X):
        """Scores ``X @ theta``."""
        return X @ theta

    @door(model_batch_arguments, overflow="X")
    def per_example_gradients(self, theta, X, y):
        """(n, d) matrix of per-example gradients (:func:`per_example_gradients`)."""
        return per_example_gradients(theta, X, y)

    @door(model_batch_arguments, clip_norm=positive_or_inf, overflow="X")
    def clipped_gradient_sum(self, theta, X, y, clip_norm, row_norms=None):
        r"""Σᵢ L2_clip(gᵢ, C) in two matrix-vector products, without the n × d gradients.

        Every gradient is a scalar times its row, :math:`g_i = s_i x_i` with :math:`s_i = -y_i\sigma(-m_i)`, so
        :math:`\lVert g_i\rVert = \sigma(-m_i)\lVert x_i\rVert` and clipping rescales the scalar (docs/math.md §6):
        :math:`\sum_i \mathrm{L2\_clip}(g_i, C) = X^\top(s\odot f)` with :math:`f_i` the clip factor
        :math:`\min(1, C/\lVert g_i\rVert)`. Equals :func:`clipped_gradient_sum` to rounding.
        """
        if row_norms is None:
            row_norms = l2_norms(X)[:, 0]                     # ||x_i||
        sigmoids = expit(-y * (X @ theta))                    # sigma(-m_i)
        # ||g_i|| = sigma(-m_i) ||x_i||: the clip factor of each scalar s_i = -y_i sigma(-m_i)
        factors = clip_factor(sigmoids * row_norms, clip_norm)
        return -(X.T @ (y * sigmoids * factors))              # sum_i f_i s_i x_i
