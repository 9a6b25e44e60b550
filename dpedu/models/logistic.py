r"""Logistic regression from scratch, labels in {-1, +1}, no hidden intercept.

With score :math:`s = \theta\cdot x` and margin :math:`m = y\,\theta\cdot x` (MATH.md §6):

.. math::
    \ell(\theta; x, y) = \ln(1 + e^{-m}),\qquad
    \nabla_\theta \ell = -y\,x\,\sigma(-m),\qquad
    \lVert\nabla_\theta\ell\rVert_2 < \lVert x\rVert_2 .

Every per-example gradient is a scalar times its row :math:`x_i`, so sums of gradients,
clipped or not, are matrix-vector products and never need the n x d matrix.
Numerically stable for any margin: ``np.logaddexp`` for the loss and ``scipy.special.expit``
for the sigmoid (the book's ``np.log(1 + np.exp(-m))`` overflows for m < -710).

>>> import numpy as np
>>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([1.0, -1.0])
>>> float(loss(np.zeros(2), X, y))          # ln 2 at theta = 0
0.6931471805599453
>>> gradient(np.zeros(2), X, y)
array([-0.25,  0.25])
>>> predict(np.array([1.0, -1.0]), X)
array([ 1., -1.])
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..validation import check_features, check_labels, check_positive, check_theta
from ..clipping import _check_norms, l2_norms

__all__ = [
    "per_example_loss",
    "loss",
    "per_example_gradients",
    "gradient_sum",
    "gradient",
    "clipped_gradient_sum",
    "predict",
    "accuracy",
]


def _check(theta, X, y):
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    theta = check_theta(theta, X.shape[1])
    return theta, X, y


# --- kernels: no validation, used inside training loops after one up-front check ---------------

def _gradient_scalars(theta, X, y):
    """s_i with per-example gradient g_i = s_i x_i:  s_i = -y_i sigmoid(-m_i)."""
    margins = y * (X @ theta)
    return -y * expit(-margins)


def _clip_over_norms(clip_norm, row_norms):
    """C / ||x_i|| for each row (inf where the row is zero or C is inf): computed once per dataset."""
    return np.divide(clip_norm, row_norms, out=np.full_like(row_norms, np.inf), where=row_norms > 0)


def _clipped_gradient_sum(theta, X, y, clip_over_norms):
    """Sum of L2-clipped per-example gradients in two matrix-vector products.

    g_i = s_i x_i with |s_i| = sigmoid(-m_i), so L2_clip(g_i, C) = -y_i min(sigmoid(-m_i), C/||x_i||) x_i.
    """
    margins = y * (X @ theta)
    return X.T @ (-y * np.minimum(expit(-margins), clip_over_norms))


# --- public API ----------------------------------------------------------------------------------

def per_example_loss(theta, X, y):
    r"""Logistic loss of each example, :math:`\ln(1+e^{-y_i\theta\cdot x_i})`, shape (n,)."""
    theta, X, y = _check(theta, X, y)
    return np.logaddexp(0.0, -y * (X @ theta))


def loss(theta, X, y):
    """Mean logistic loss over the rows of ``X`` (``ln 2`` at ``theta = 0``)."""
    return float(np.mean(per_example_loss(theta, X, y)))


def per_example_gradients(theta, X, y):
    r"""Matrix of per-example gradients, row i is :math:`-y_i x_i\,\sigma(-y_i\theta\cdot x_i)`, shape (n, d)."""
    theta, X, y = _check(theta, X, y)
    return _gradient_scalars(theta, X, y)[:, None] * X


def gradient_sum(theta, X, y):
    """Sum of the per-example gradients, computed as ``X.T @ s`` without the n x d matrix."""
    theta, X, y = _check(theta, X, y)
    return X.T @ _gradient_scalars(theta, X, y)


def gradient(theta, X, y):
    """Mean gradient of the logistic loss (the gradient of :func:`loss`)."""
    return gradient_sum(theta, X, y) / np.shape(X)[0]


def clipped_gradient_sum(theta, X, y, clip_norm, *, row_norms=None):
    r""":math:`\sum_i \mathrm{L2\_clip}(\nabla\ell(\theta;x_i,y_i), C)` in two matrix-vector products.

    Equal (to rounding) to ``L2_clip(per_example_gradients(theta, X, y), clip_norm).sum(axis=0)``,
    which needs an n x d matrix. Here :math:`g_i = s_i x_i` with :math:`|s_i| = \sigma(-m_i)`, so

    .. math:: \mathrm{L2\_clip}(g_i, C) = -y_i \min\!\big(\sigma(-m_i),\; C/\lVert x_i\rVert\big)\, x_i

    and the whole sum is :math:`X^\top w` after one :math:`X\theta`.

    Parameters
    ----------
    clip_norm : float
        C > 0; ``inf`` disables clipping (non-private).
    row_norms : array_like, optional
        Precomputed ``np.linalg.norm(X, axis=1)`` (they do not depend on theta, so a training
        loop computes them once).
    """
    theta, X, y = _check(theta, X, y)
    clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
    if row_norms is None:
        row_norms = l2_norms(X)[:, 0]
    else:
        row_norms = _check_norms(row_norms, "row_norms")
        if row_norms.shape != (X.shape[0],):
            raise ValueError(f"row_norms must have shape ({X.shape[0]},); got {row_norms.shape}")
    return _clipped_gradient_sum(theta, X, y, _clip_over_norms(clip_norm, row_norms))


def predict(theta, X):
    """Labels in {-1, +1}: the sign of ``X @ theta`` (a score of exactly 0 predicts +1)."""
    X = check_features(X)
    theta = check_theta(theta, X.shape[1])
    return np.where(X @ theta >= 0, 1.0, -1.0)


def accuracy(theta, X, y):
    """Fraction of rows where :func:`predict` equals ``y`` (labels in {-1, +1})."""
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    return float(np.mean(predict(theta, X) == y))
