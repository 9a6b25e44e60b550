r"""Models with hand-written losses and per-example gradients: ``logistic`` and ``mlp``.

Both models share one small shape, :class:`Model`: the *model object* knows the shapes, the *parameters* are one
flat vector ``theta`` passed to every method, and labels are in {-1, +1} with a logistic output. A model says four
things; :class:`Model` derives the rest from them:

===================================================  ==========================================================
``n_features``, ``n_params``                         the width of X and the length of ``theta``
``init(rng)``                                        a data-independent starting point (no privacy cost)
``decision_function(theta, X)``                      the scores s_i; the loss is :math:`\ln(1 + e^{-y_i s_i})`
``per_example_gradients(theta, X, y)``               (n, n_params) matrix, one gradient per row
===================================================  ==========================================================

``loss`` and ``predict`` follow from the scores, and ``clipped_gradient_sum(theta, X, y, clip_norm,
row_norms=None)`` is by default the formula :math:`\sum_i \mathrm{L2\_clip}(g_i, C)` on the per-example
gradients. A model may compute that sum in another form (both models here do, without the n x P matrix of
gradients); ``tests/test_logistic.py`` and ``tests/test_mlp.py`` pin each form to the formula.

>>> import numpy as np
>>> model = LogisticModel(n_features=2)
>>> model.n_params, model.init(rng=0)
(2, array([0., 0.]))
>>> X = np.array([[3.0, 4.0]]); y = np.array([1.0])
>>> model.clipped_gradient_sum(np.zeros(2), X, y, clip_norm=1.0)   # |g| = 5 * sigmoid(0) = 2.5 -> 1
array([-0.6, -0.8])
"""

from __future__ import annotations

from .base import Model
from . import logistic, mlp
from .logistic import LogisticModel
from .mlp import MLP

__all__ = ["logistic", "mlp", "Model", "LogisticModel", "MLP"]
