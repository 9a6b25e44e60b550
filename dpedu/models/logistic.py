r"""Logistic regression from scratch, labels in {-1, +1}, no hidden intercept.

With score :math:`s = \theta\cdot x` and margin :math:`m = y\,\theta\cdot x` (docs/math.md §6):

.. math::
    \ell(\theta; x, y) = \ln(1 + e^{-m}),\qquad
    \nabla_\theta \ell = -y\,x\,\sigma(-m),\qquad
    \lVert\nabla_\theta\ell\rVert_2 < \lVert x\rVert_2 .

Every per-example gradient is a scalar times its row :math:`x_i`, so sums of gradients,
clipped or not, are matrix-vector products and never need the n x d matrix.
Numerically stable for any margin, with one formula for each: the loss as
:math:`\max(-m, 0) + \ln(1 + e^{-|m|})` (:func:`_losses`; the book's ``np.log(1 + np.exp(-m))`` overflows
for m < -710) and the sigmoid as :math:`\sigma(-m) = 1/(1 + e^{m})` (:func:`_negative_sigmoids`).
:class:`LogisticModel` puts these functions in the :class:`dpedu.models.Model` shape.

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

from ..validation import check_features, check_labels, check_positive, check_positive_int, check_theta
from ..clipping import check_norms, l2_norms

__all__ = [
    "LogisticModel",
    "per_example_loss",
    "loss_from_scores",
    "loss",
    "per_example_gradients",
    "gradient_sum",
    "gradient",
    "clipped_gradient_sum",
    "loss_and_clipped_gradient_sum",
    "predict",
    "accuracy",
]


def _check(theta, X, y):
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    theta = check_theta(theta, X.shape[1])
    return theta, X, y


def _margins(theta, X, y):
    """m_i = y_i theta . x_i, the product X @ theta scaled in place (no second n-vector)."""
    margins = X @ theta
    margins *= y
    return margins


def _gradient_scalars(theta, X, y):
    """s_i with per-example gradient g_i = s_i x_i:  s_i = -y_i sigmoid(-m_i)."""
    return -y * _negative_sigmoids(_margins(theta, X, y))


def _mean_loss_and_sigmoids(margins):
    r"""The mean of :math:`\ln(1+e^{-m_i})` and every :math:`\sigma(-m_i)` (see :func:`_negative_sigmoids`).

    Stable for every margin: :math:`\ln(1+e^{-m}) = \max(-m, 0) + \ln(1 + e^{-|m|})` (what ``np.logaddexp``
    computes, at a third of its cost). The sigmoids are computed exactly as without the loss, so recording
    the loss never changes a training run, not even in the last bit.
    """
    return _mean_loss(margins), _negative_sigmoids(margins.copy())


def _losses(margins):
    r""":math:`\ln(1+e^{-m_i})` as :math:`\max(-m, 0) + \ln(1 + e^{-|m|})`, stable for every margin.

    The one place the logistic loss is written: every loss in dpedu goes through it.
    """
    return np.maximum(-margins, 0.0) + np.log1p(np.exp(-np.abs(margins)))


def _mean_loss(margins):
    """The mean of :func:`_losses`."""
    return float(np.mean(_losses(margins)))


def _negative_sigmoids(margins):
    r""":math:`\sigma(-m_i) = 1/(1 + e^{m_i})` for every margin, computed in place (``margins`` is overwritten).

    Three passes over n numbers (exp, add, reciprocal): the cheapest stable form in NumPy, and accurate to a
    few ulps for every margin. A large positive margin makes :math:`e^{m}` overflow to inf, whose
    reciprocal is the right answer 0 (a well-classified example contributes nothing); a large negative one
    gives 1.
    """
    with np.errstate(over="ignore"):
        np.exp(margins, out=margins)
    margins += 1.0
    return np.reciprocal(margins, out=margins)


def _clipped_sum_from_sigmoids(sigmoids, X, y, clip_norm, row_norms):
    """X^T (s * min(1, C / (|s| ||x||))) with s_i = -y_i sigma(-m_i): the second of the two products.

    ``sigmoids`` is overwritten. The clip factor multiplies the sigmoid, since |s_i| ||x_i|| <= C is
    sigma(-m_i) <= C / ||x_i||; the sign -y_i is applied to the d numbers of the result, not the n inputs.
    """
    if not np.isinf(clip_norm):
        with np.errstate(divide="ignore"):            # a zero row: C / 0 = inf, no clipping needed
            np.minimum(sigmoids, clip_norm / row_norms, out=sigmoids)
    sigmoids *= y
    return -(X.T @ sigmoids)


def _check_clip_arguments(theta, X, y, clip_norm, row_norms):
    theta, X, y = _check(theta, X, y)
    clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
    if row_norms is not None:
        row_norms = check_norms(row_norms, "row_norms")
        if row_norms.shape != (X.shape[0],):
            raise ValueError(f"row_norms must have shape ({X.shape[0]},); got {row_norms.shape}")
    return theta, X, y, clip_norm, row_norms


def per_example_loss(theta, X, y):
    r"""Logistic loss of each example, ln(1 + exp(-y_i θ·x_i)), shape (n,).

    That is :math:`\ln(1+e^{-y_i\theta\cdot x_i})`.
    """
    theta, X, y = _check(theta, X, y)
    return _losses(_margins(theta, X, y))


def loss_from_scores(scores, y):
    r"""Mean logistic loss :math:`\frac1n\sum_i \ln(1+e^{-y_i s_i})` of given scores (``X @ theta`` here,
    a network's outputs in :class:`dpedu.models.MLP`). No validation: ``scores`` and ``y`` are float arrays of
    the same length, ``y`` in {-1, +1}. The one place dpedu writes the mean logistic loss.

    >>> loss_from_scores(np.array([0.0, 0.0]), np.array([1.0, -1.0]))   # ln 2
    0.6931471805599453
    """
    return _mean_loss(y * scores)


def loss(theta, X, y, *, check_input=True):
    """Mean logistic loss over the rows of ``X`` (``ln 2`` at ``theta = 0``).

    ``check_input=False`` skips validating ``theta``, ``X`` and ``y`` (a training loop that checked them
    once passes it; then they must already be finite float arrays of matching shapes, ``y`` in {-1, +1}).
    """
    if check_input:
        theta, X, y = _check(theta, X, y)
    return loss_from_scores(X @ theta, y)


def per_example_gradients(theta, X, y):
    r"""Matrix of per-example gradients, row i is -y_i x_i sigmoid(-y_i θ·x_i), shape (n, d).

    That is :math:`-y_i x_i\,\sigma(-y_i\theta\cdot x_i)`.
    """
    theta, X, y = _check(theta, X, y)
    return _gradient_scalars(theta, X, y)[:, None] * X


def gradient_sum(theta, X, y):
    """Sum of the per-example gradients, computed as ``X.T @ s`` without the n x d matrix."""
    theta, X, y = _check(theta, X, y)
    return X.T @ _gradient_scalars(theta, X, y)


def gradient(theta, X, y):
    """Mean gradient of the logistic loss (the gradient of :func:`loss`)."""
    return gradient_sum(theta, X, y) / np.shape(X)[0]


def clipped_gradient_sum(theta, X, y, clip_norm, row_norms=None, *, check_input=True):
    r""":math:`\sum_i \mathrm{L2\_clip}(\nabla\ell(\theta;x_i,y_i), C)` in two matrix-vector products.

    Equal (to rounding) to ``L2_clip(per_example_gradients(theta, X, y), clip_norm).sum(axis=0)``,
    which needs an n x d matrix. Every per-example gradient is a scalar times its row,
    :math:`g_i = s_i x_i` with :math:`s_i = -y_i\sigma(-m_i)`, so :math:`\lVert g_i\rVert = |s_i|\,\lVert x_i\rVert`
    and clipping only rescales the scalar:

    .. math:: \sum_i \mathrm{L2\_clip}(g_i, C)
              = X^\top\Big(s \odot \min\big(1, \tfrac{C}{|s|\,\lVert x\rVert}\big)\Big)
              = X^\top\big(-y \odot \min(\sigma(-m),\, C/\lVert x\rVert)\big),

    one product :math:`X\theta` for the margins, one :math:`X^\top w` for the sum (docs/math.md §6).

    Parameters
    ----------
    theta : array_like, shape (d,)
    X : array_like, shape (n, d)
    y : array_like, shape (n,)
        Labels in {-1, +1}.
    clip_norm : float
        C > 0; ``inf`` disables clipping (non-private).
    row_norms : array_like, shape (n,), optional
        Precomputed ``l2_norms(X)[:, 0]`` (they do not depend on theta, so a training loop computes them
        once).
    check_input : bool, default True
        ``False`` skips validating the arguments (for training loops that checked them once).

    >>> X = np.array([[3.0, 4.0], [0.3, 0.4]]); y = np.array([1.0, 1.0])
    >>> clipped_gradient_sum(np.zeros(2), X, y, clip_norm=1.0)   # |g_1| = 2.5 -> 1; |g_2| = 0.25 kept
    array([-0.75, -1.  ])
    """
    if check_input:
        theta, X, y, clip_norm, row_norms = _check_clip_arguments(theta, X, y, clip_norm, row_norms)
    if row_norms is None:
        row_norms = l2_norms(X, name="X")[:, 0]
    return _clipped_sum_from_sigmoids(_negative_sigmoids(_margins(theta, X, y)), X, y, clip_norm, row_norms)


def loss_and_clipped_gradient_sum(theta, X, y, clip_norm, row_norms=None, *, check_input=True):
    """``(loss(theta, X, y), clipped_gradient_sum(theta, X, y, clip_norm))`` from one shared ``X @ theta``.

    The loss costs no extra pass over ``X``: it is a function of the scores the clipped sum needs anyway.
    Noisy gradient descent records the training loss this way. Arguments as in :func:`clipped_gradient_sum`.
    """
    if check_input:
        theta, X, y, clip_norm, row_norms = _check_clip_arguments(theta, X, y, clip_norm, row_norms)
    if row_norms is None:
        row_norms = l2_norms(X, name="X")[:, 0]
    mean_loss, sigmoids = _mean_loss_and_sigmoids(_margins(theta, X, y))
    return mean_loss, _clipped_sum_from_sigmoids(sigmoids, X, y, clip_norm, row_norms)


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
    The clipped sum uses the two matrix-vector products of
    :func:`clipped_gradient_sum`: per-example gradients are :math:`s_i x_i`, so
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
        """Mean logistic loss (:func:`loss`)."""
        if check_input:
            X = self._check_width(X)
        return loss(theta, X, y, check_input=check_input)

    def per_example_gradients(self, theta, X, y):
        """(n, d) matrix of per-example gradients (:func:`per_example_gradients`)."""
        return per_example_gradients(theta, self._check_width(X), y)

    def clipped_gradient_sum(self, theta, X, y, clip_norm, row_norms=None, *, check_input=True):
        r""":math:`\sum_i \mathrm{L2\_clip}(g_i, C)` in two matrix-vector products.

        The clipped sum is :math:`X^\top\big(s \odot \min(1, C/(|s|\,\lVert x\rVert))\big)` with
        :math:`g_i = s_i x_i`: see :func:`clipped_gradient_sum` for the derivation and
        the arguments (``row_norms``: precomputed ``||x_i||``; ``check_input=False`` skips validation).
        """
        if check_input:
            X = self._check_width(X)
        return clipped_gradient_sum(theta, X, y, clip_norm, row_norms, check_input=check_input)

    def decision_function(self, theta, X):
        """Scores ``X @ theta``."""
        X = self._check_width(X)
        return X @ check_theta(theta, self.n_features)

    def predict(self, theta, X):
        """Labels in {-1, +1} (:func:`predict`)."""
        return predict(theta, self._check_width(X))
