r"""Logistic regression's fast forms: the clipped gradient sum in two matrix-vector products.

Unchecked: the arguments must already be what :mod:`dpedu.models.logistic` checks (finite float arrays of
matching shapes, labels in {-1, +1}, ``clip_norm`` > 0 or ``inf``, ``row_norms`` the L2 norms of the rows of X).

Every per-example gradient is a scalar times its row, :math:`g_i = s_i x_i` with :math:`s_i = -y_i\sigma(-m_i)`
and margin :math:`m_i = y_i\theta\cdot x_i`, so :math:`\lVert g_i\rVert = |s_i|\,\lVert x_i\rVert` and clipping only
rescales the scalar (docs/math.md §6):

.. math:: \sum_i \mathrm{L2\_clip}(g_i, C)
          = X^\top\Big(s \odot \min\big(1, \tfrac{C}{|s|\,\lVert x\rVert}\big)\Big)
          = X^\top\big(-y \odot \min(\sigma(-m),\, C/\lVert x\rVert)\big),

one product :math:`X\theta` for the margins, one :math:`X^\top w` for the sum. The loss
:math:`\ln(1+e^{-m})` is computed as :math:`\max(-m, 0) + \ln(1 + e^{-|m|})` (what ``np.logaddexp(0, -m)``
computes, to the bit, at a third of its cost) and :math:`\sigma(-m)` as :math:`1/(1+e^{m})` in place (what
``scipy.special.expit(-m)`` computes, to the bit).

>>> import numpy as np
>>> X = np.array([[3.0, 4.0], [0.3, 0.4]]); y = np.array([1.0, 1.0])
>>> clipped_gradient_sum(np.zeros(2), X, y, 1.0)   # |g_1| = 2.5 -> 1; |g_2| = 0.25 kept
array([-0.75, -1.  ])
"""

from __future__ import annotations

import numpy as np

from ..clipping import l2_norms

__all__ = ["mean_loss", "mean_loss_of_margins", "clipped_gradient_sum", "loss_and_clipped_gradient_sum"]


def _margins(theta, X, y):
    """m_i = y_i theta . x_i, the product X @ theta scaled in place (no second n-vector)."""
    margins = X @ theta
    margins *= y
    return margins


def mean_loss_of_margins(margins):
    r"""The mean of :math:`\ln(1+e^{-m_i})` over the given margins (a float; equals ``np.logaddexp(0, -m).mean()``)."""
    return float(np.mean(np.maximum(-margins, 0.0) + np.log1p(np.exp(-np.abs(margins)))))


def mean_loss(theta, X, y):
    """Equals :func:`dpedu.models.logistic.loss` (to the bit), unchecked."""
    return mean_loss_of_margins(_margins(theta, X, y))


def _negative_sigmoids(margins):
    r""":math:`\sigma(-m_i) = 1/(1 + e^{m_i})`, computed in place (``margins`` is overwritten).

    Three passes over n numbers (exp, add, reciprocal). A large positive margin makes :math:`e^{m}` overflow
    to inf, whose reciprocal is the right answer 0; a large negative one gives 1.
    """
    with np.errstate(over="ignore"):
        np.exp(margins, out=margins)
    margins += 1.0
    return np.reciprocal(margins, out=margins)


def _clipped_sum_from_sigmoids(sigmoids, X, y, clip_norm, row_norms):
    """X^T (-y * min(sigma(-m), C / ||x||)): the second of the two products (``sigmoids`` is overwritten).

    |s_i| ||x_i|| <= C is sigma(-m_i) <= C / ||x_i||; the sign -y_i is applied to the d numbers of the result.
    """
    if not np.isinf(clip_norm):
        with np.errstate(divide="ignore"):            # a zero row: C / 0 = inf, no clipping needed
            np.minimum(sigmoids, clip_norm / row_norms, out=sigmoids)
    sigmoids *= y
    return -(X.T @ sigmoids)


def clipped_gradient_sum(theta, X, y, clip_norm, row_norms=None):
    """Equals ``L2_clip(per_example_gradients(theta, X, y), clip_norm).sum(0)`` (to rounding), unchecked.

    ``row_norms``: the precomputed ``l2_norms(X)[:, 0]`` (a training loop computes them once); computed here
    when None. Two matrix-vector products, memory O(n + d).
    """
    if row_norms is None:
        row_norms = l2_norms(X, name="X")[:, 0]
    return _clipped_sum_from_sigmoids(_negative_sigmoids(_margins(theta, X, y)), X, y, clip_norm, row_norms)


def loss_and_clipped_gradient_sum(theta, X, y, clip_norm, row_norms=None):
    """``(mean_loss(theta, X, y), clipped_gradient_sum(theta, X, y, clip_norm, row_norms))`` from one ``X @ theta``.

    The loss costs no extra pass over ``X``, and the sum is computed exactly as without it (to the bit), so
    recording the loss never changes a training run. Unchecked.
    """
    if row_norms is None:
        row_norms = l2_norms(X, name="X")[:, 0]
    margins = _margins(theta, X, y)
    loss = mean_loss_of_margins(margins)
    return loss, _clipped_sum_from_sigmoids(_negative_sigmoids(margins), X, y, clip_norm, row_norms)
