r"""A one-hidden-layer neural network in NumPy: forward, backward and per-example gradients by hand.

The non-convex model DP-SGD was made for (Abadi et al. 2016 train deep networks; this is the smallest
network that is not a linear model). Labels are in {-1, +1}, as for logistic regression:

.. math::
    a = \tanh(W_1 x + b_1) \in \mathbb R^h,\qquad s = w_2\cdot a + b_2,\qquad
    \ell(\theta; x, y) = \ln(1 + e^{-y s}).

All parameters live in **one flat vector** ``theta = [W_1 (h x d, row-major), b_1 (h), w_2 (h), b_2]``,
so :func:`dpedu.textbook.training.dp_sgd` clips and noises it exactly as it does the logistic weights: the
per-example gradient of the *whole* vector is clipped to norm C (docs/math.md §5).

Backward pass for one example, with :math:`r = \partial\ell/\partial s = -y\,\sigma(-ys)` and
:math:`\delta = r\, w_2 \odot (1 - a^2)` (the error at the hidden pre-activations):

.. math::
    \nabla_{W_1}\ell = \delta\, x^\top,\quad \nabla_{b_1}\ell = \delta,\quad
    \nabla_{w_2}\ell = r\, a,\quad \nabla_{b_2}\ell = r .

Why tanh and not ReLU: tanh is smooth, so the gradients can be checked against finite differences at
every point (ReLU has a kink where a check can fail for no fault of the code), and its outputs lie in
(-1, 1), which keeps the output-layer gradient bounded, :math:`\lVert\nabla_{w_2}\ell\rVert < \sqrt h`.
Abadi et al. used ReLU on MNIST; for the privacy argument the choice does not matter (clipping bounds
every per-example gradient whatever the activation).

Per-example gradient *norms* never need the n x P matrix of gradients (Goodfellow 2015, "Efficient
per-example gradient computations", arXiv:1510.01799): since :math:`\nabla_{W_1}\ell = \delta x^\top`
is an outer product, :math:`\lVert\nabla_{W_1}\ell\rVert_F = \lVert\delta\rVert\,\lVert x\rVert`, so

.. math:: \lVert\nabla_\theta\ell\rVert^2 = \lVert\delta\rVert^2(\lVert x\rVert^2 + 1) + r^2(\lVert a\rVert^2 + 1),

and the clipped sum is a weighted backward pass. :meth:`MLP.per_example_gradients` builds the full
matrix with ``einsum`` (for teaching and tests); :meth:`MLP.clipped_gradient_sum` uses the norms
(pinned to the formula by ``tests/test_mlp.py``).

>>> import numpy as np
>>> net = MLP(n_features=3, hidden_units=4)
>>> net.n_params                          # 4*3 + 4 + 4 + 1
21
>>> theta = net.init(rng=0)
>>> X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]); y = np.array([1.0, -1.0])
>>> net.per_example_gradients(theta, X, y).shape
(2, 21)
>>> bool(np.linalg.norm(net.per_example_gradients(theta, X, y), axis=1).max() > 0)
True
>>> bool(np.allclose(net.clipped_gradient_sum(theta, X, y, clip_norm=np.inf),
...                  net.per_example_gradients(theta, X, y).sum(axis=0)))
True
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..clipping import clip_factor, l2_norms
from ...ground.door import count, door, generator, positive_or_inf
from .base import Model, batch_arguments, model_arguments

__all__ = ["MLP"]


class MLP(Model):
    r"""One hidden layer of ``hidden_units`` tanh units and a logistic output, parameters in one vector.

    Parameters
    ----------
    n_features : int
        Input dimension d.
    hidden_units : int, default 16
        Width h of the hidden layer. ``n_params = h*d + 2*h + 1``.

    Notes
    -----
    The model object holds only the *shape* of the network, never data or parameters: every method
    takes ``theta`` explicitly, as the logistic functions do, so training loops treat both models alike.
    """

    @door(n_features=count, hidden_units=count)
    def __init__(self, n_features, hidden_units=16):
        self.n_features, self.hidden_units = n_features, hidden_units

    def __repr__(self):
        return f"MLP(n_features={self.n_features}, hidden_units={self.hidden_units})"

    @property
    def n_params(self) -> int:
        """Length of the flat parameter vector, :math:`hd + 2h + 1`."""
        h, d = self.hidden_units, self.n_features
        return h * d + 2 * h + 1

    def unpack(self, theta):
        """Views ``(W1 (h, d), b1 (h,), w2 (h,), b2 ())`` into the flat vector (no copies).

        Raises ``ValueError`` naming ``theta`` and the expected length ``n_params`` if the length is wrong.
        """
        h, d = self.hidden_units, self.n_features
        if np.ndim(theta) != 1 or np.shape(theta)[0] != self.n_params:
            raise ValueError(f"theta must be a flat vector of length n_params = h*d + 2h + 1 = {self.n_params} "
                             f"(h={h}, d={d}); got shape {np.shape(theta)}")
        W1 = theta[: h * d].reshape(h, d)
        b1 = theta[h * d : h * d + h]
        w2 = theta[h * d + h : h * d + 2 * h]
        b2 = theta[h * d + 2 * h]
        return W1, b1, w2, b2

    @door(rng=generator)
    def init(self, rng=None):
        r"""Random starting point: :math:`W_1 \sim \mathcal N(0, 1/d)`, :math:`w_2 \sim \mathcal N(0, 1/h)`, biases 0.

        The variance 1/fan-in keeps tanh out of saturation at the start (LeCun et al. 1998). The draw uses
        only ``rng``, never the data, so it costs no privacy.
        """
        h, d = self.hidden_units, self.n_features
        W1 = rng.normal(0.0, 1.0 / np.sqrt(d), size=(h, d))
        w2 = rng.normal(0.0, 1.0 / np.sqrt(h), size=h)
        return np.concatenate([W1.ravel(), np.zeros(h), w2, [0.0]])

    def forward(self, theta, X):
        """Hidden activations a (n, h) and output scores s (n,)."""
        W1, b1, w2, b2 = self.unpack(theta)
        hidden = np.tanh(X @ W1.T + b1)
        return hidden, hidden @ w2 + b2

    @door(batch_arguments, overflow="X")
    def backward(self, theta, X, y):
        r"""The per-example pieces of the gradient: hidden :math:`a` (n, h), :math:`r = \partial\ell/\partial s` (n,)
        and :math:`\delta = r\,w_2\odot(1 - a^2)` (n, h) (the module docstring)."""
        _, _, w2, _ = self.unpack(theta)
        hidden, scores = self.forward(theta, X)
        r = -y * expit(-y * scores)                           # d loss / d score
        delta = r[:, None] * w2 * (1.0 - hidden**2)           # d loss / d hidden pre-activation
        return hidden, r, delta

    @door(model_arguments, overflow="X")
    def decision_function(self, theta, X):
        r"""Output scores :math:`s = w_2\cdot\tanh(W_1x+b_1) + b_2`, shape (n,)."""
        return self.forward(theta, X)[1]

    @door(batch_arguments, overflow="X")
    def per_example_gradients(self, theta, X, y):
        """Matrix of per-example gradients of the flat vector, shape (n, n_params), built with ``einsum``."""
        hidden, r, delta = self.backward(theta, X, y)
        grad_W1 = np.einsum("nh,nd->nhd", delta, X).reshape(X.shape[0], -1)   # delta_i x_i^T per example
        return np.concatenate([grad_W1, delta, r[:, None] * hidden, r[:, None]], axis=1)

    @door(batch_arguments, clip_norm=positive_or_inf, overflow="X")
    def clipped_gradient_sum(self, theta, X, y, clip_norm, row_norms=None):
        r""":math:`\sum_i \mathrm{L2\_clip}(\nabla_\theta\ell(\theta; x_i, y_i), C)` from the per-example norms.

        One forward and one weighted backward pass, memory O(n h + P), never the n x P matrix: each norm is
        :math:`\sqrt{\lVert\delta_i\rVert^2(\lVert x_i\rVert^2 + 1) + r_i^2(\lVert a_i\rVert^2 + 1)}` (the module
        docstring, written with ``hypot`` so rows of norm above 1e154 still give a finite norm), and the clipped
        sum is the gradient sum weighted by the clip factors. Equals ``L2_clip(per_example_gradients(...), C).sum(0)``
        to rounding.
        """
        if row_norms is None:
            row_norms = l2_norms(X)[:, 0]                                   # ||x_i||
        hidden, r, delta = self.backward(theta, X, y)
        delta_norms = np.sqrt(np.einsum("ij,ij->i", delta, delta))
        output_part = np.abs(r) * np.sqrt(np.einsum("ij,ij->i", hidden, hidden) + 1.0)
        with np.errstate(over="ignore"):   # only if the true norm itself exceeds the float range (then inf)
            norms = np.hypot(delta_norms * np.hypot(row_norms, 1.0), output_part)   # ||grad_i||
        weights = clip_factor(norms, clip_norm)                             # min(1, C / ||grad_i||)
        weighted_delta, weighted_r = weights[:, None] * delta, weights * r
        return np.concatenate([(weighted_delta.T @ X).ravel(), weighted_delta.sum(axis=0),  # sum_i w_i grad_i
                               weighted_r @ hidden, [weighted_r.sum()]])
