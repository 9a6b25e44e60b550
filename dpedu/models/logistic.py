r"""Logistic regression from scratch, labels in {-1, +1}, no hidden intercept.

With score :math:`s = \theta\cdot x` and margin :math:`m = y\,\theta\cdot x` (docs/math.md §6):

.. math::
    \ell(\theta; x, y) = \ln(1 + e^{-m}),\qquad
    \nabla_\theta \ell = -y\,x\,\sigma(-m),\qquad
    \lVert\nabla_\theta\ell\rVert_2 < \lVert x\rVert_2 .

These are the textbook forms: each function reads as its formula, stable for every margin through
``np.logaddexp(0, -m)`` (the book's ``np.log(1 + np.exp(-m))`` overflows for m < -710) and
``scipy.special.expit`` (the sigmoid without overflow). A training loop uses the fast forms of
:mod:`dpedu.engine.logistic_fast` instead (the clipped sum in two matrix-vector products), which
tests/test_engine.py pins to these. :class:`LogisticModel` puts both in the :class:`dpedu.models.Model` shape.

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

from ..engine.validation import check_batch, check_features, check_labels
from ..engine.validation import check_positive, check_positive_int, check_theta
from ..clipping import L2_clip, check_norms
from ..engine import logistic_fast

__all__ = [
    "LogisticModel",
    "margins",
    "per_example_loss",
    "loss",
    "per_example_gradients",
    "gradient_sum",
    "gradient",
    "clipped_gradient_sum",
    "predict",
    "accuracy",
]


def margins(theta, X, y):
    r"""Margins :math:`m_i = y_i\,\theta\cdot x_i`, shape (n,), after checking ``theta``, ``X`` and ``y``.

    A margin beyond the float range (``X @ theta`` overflows: ``X`` is too large in magnitude for this ``theta``)
    is refused with a ``ValueError`` naming ``X``, never returned as inf.

    >>> margins(np.array([1.0, 2.0]), np.array([[1.0, 1.0]]), np.array([-1.0]))
    array([-3.])
    """
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    theta = check_theta(theta, X.shape[1])
    with np.errstate(over="ignore", invalid="ignore"):
        m = y * (X @ theta)
    if not np.all(np.isfinite(m)):
        raise ValueError("X @ theta overflows the float range: X is too large in magnitude for this theta; rescale X")
    return m


def per_example_loss(theta, X, y):
    r"""Logistic loss of each example, ln(1 + exp(-m_i)) with m_i = y_i θ·x_i, shape (n,).

    That is :math:`\ln(1+e^{-m_i})` with :math:`m_i = y_i\theta\cdot x_i`.

    ``np.logaddexp(0, -m)`` is :math:`\ln(e^0 + e^{-m})` without overflow (docs/math.md §6).
    """
    m = margins(theta, X, y)                           # m_i = y_i theta . x_i (arguments checked)
    return np.logaddexp(0.0, -m)                       # ln(1 + exp(-m)), finite for every margin


def loss(theta, X, y):
    """Mean logistic loss over the rows of ``X`` (``ln 2`` at ``theta = 0``)."""
    with np.errstate(over="ignore"):
        mean = float(np.mean(per_example_loss(theta, X, y)))
    if np.isinf(mean):
        raise ValueError("the mean loss overflows the float range: X is too large in magnitude; rescale X")
    return mean


def per_example_gradients(theta, X, y):
    r"""Matrix of per-example gradients, row i is -y_i σ(-m_i) x_i with m_i = y_i θ·x_i, shape (n, d).

    That is :math:`-y_i\,\sigma(-m_i)\,x_i`.

    :math:`\lVert g_i\rVert < \lVert x_i\rVert` since :math:`0 < \sigma < 1` (docs/math.md §6).
    """
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    m = margins(theta, X, y)                           # m_i = y_i theta . x_i (theta checked too)
    return (-y * expit(-m))[:, None] * X               # row i: -y_i sigmoid(-m_i) x_i


def gradient_sum(theta, X, y):
    """Sum of the per-example gradients (a training loop uses :mod:`dpedu.engine.logistic_fast` instead)."""
    with np.errstate(over="ignore"):
        total = per_example_gradients(theta, X, y).sum(axis=0)
    if not np.all(np.isfinite(total)):
        raise ValueError("the gradient sum overflows the float range: X is too large in magnitude; rescale X")
    return total


def gradient(theta, X, y):
    """Mean gradient of the logistic loss (the gradient of :func:`loss`)."""
    return gradient_sum(theta, X, y) / np.shape(X)[0]


def clipped_gradient_sum(theta, X, y, clip_norm):
    r""":math:`\sum_i \mathrm{L2\_clip}(\nabla\ell(\theta;x_i,y_i), C)`: the sum whose L2 sensitivity is C.

    ``clip_norm`` > 0; ``inf`` disables clipping (non-private). A training loop computes the same sum without
    the n x d matrix, in two matrix-vector products (:func:`dpedu.engine.logistic_fast.clipped_gradient_sum`).

    >>> X = np.array([[3.0, 4.0], [0.3, 0.4]]); y = np.array([1.0, 1.0])
    >>> clipped_gradient_sum(np.zeros(2), X, y, clip_norm=1.0)   # |g_1| = 2.5 -> 1; |g_2| = 0.25 kept
    array([-0.75, -1.  ])
    """
    clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
    return L2_clip(per_example_gradients(theta, X, y), clip_norm).sum(axis=0)


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


class LogisticModel:
    r"""Logistic regression in the :class:`dpedu.models.Model` shape.

    No hidden intercept: append a constant column to ``X`` for one (and count it in the row norms).
    Its clipped sum is the engine's two matrix-vector products
    (:func:`dpedu.engine.logistic_fast.clipped_gradient_sum`): per-example gradients are :math:`s_i x_i`, so
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

    def loss(self, theta, X, y):
        """Mean logistic loss (:func:`loss`)."""
        return loss(theta, self._check_width(X), y)

    def batch_loss(self, theta, batch):
        """Mean logistic loss over ``batch`` (a :class:`~dpedu.training.TrainingData`, checked when it was made),
        by the engine's form :func:`dpedu.engine.logistic_fast.mean_loss`."""
        check_batch(theta, batch, self.n_features, self.n_params)
        return logistic_fast.mean_loss(theta, batch.X, batch.y)

    def per_example_gradients(self, theta, X, y):
        """(n, d) matrix of per-example gradients (:func:`per_example_gradients`)."""
        return per_example_gradients(theta, self._check_width(X), y)

    def clipped_gradient_sum(self, theta, X, y, clip_norm, row_norms=None):
        r""":math:`\sum_i \mathrm{L2\_clip}(g_i, C)` in two matrix-vector products.

        Equals :func:`clipped_gradient_sum` (``L2_clip(per_example_gradients(theta, X, y), C).sum(0)``), computed
        as :math:`X^\top\big(s \odot \min(1, C/(|s|\,\lVert x\rVert))\big)` with :math:`g_i = s_i x_i` by
        :func:`dpedu.engine.logistic_fast.clipped_gradient_sum` (the derivation is there). ``row_norms``: the
        precomputed ``||x_i||``.
        """
        X = self._check_width(X)
        y, theta = check_labels(y, X.shape[0]), check_theta(theta, X.shape[1])
        clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
        if row_norms is not None:
            row_norms = check_norms(row_norms, "row_norms")
            if row_norms.shape != (X.shape[0],):
                raise ValueError(f"row_norms must have shape ({X.shape[0]},); got {row_norms.shape}")
        return logistic_fast.clipped_gradient_sum(theta, X, y, clip_norm, row_norms)

    def batch_clipped_gradient_sum(self, theta, batch, clip_norm):
        r""":meth:`clipped_gradient_sum` over ``batch`` (a :class:`~dpedu.training.TrainingData`: its records were
        checked and their norms computed once, when the run's data was made), for a training loop's every step."""
        check_batch(theta, batch, self.n_features, self.n_params)
        return logistic_fast.clipped_gradient_sum(theta, batch.X, batch.y, clip_norm, batch.row_norms)

    def decision_function(self, theta, X):
        """Scores ``X @ theta``."""
        X = self._check_width(X)
        return X @ check_theta(theta, self.n_features)

    def predict(self, theta, X):
        """Labels in {-1, +1} (:func:`predict`)."""
        return predict(theta, self._check_width(X))
