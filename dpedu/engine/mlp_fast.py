r"""The MLP's fast form: the clipped gradient sum from per-example norms, without the n x P gradient matrix.

Unchecked: the caller (:meth:`dpedu.models.MLP.clipped_gradient_sum`) validated the data and ran the backward
pass, which gives per example the hidden activations :math:`a_i` (n, h), the output error
:math:`r_i = \partial\ell/\partial s` (n,) and the hidden error :math:`\delta_i` (n, h). The gradient of example i is
:math:`(\delta_i x_i^\top, \delta_i, r_i a_i, r_i)`, so (Goodfellow 2015, arXiv:1510.01799)

.. math:: \lVert\nabla_\theta\ell_i\rVert^2 = \lVert\delta_i\rVert^2(\lVert x_i\rVert^2 + 1) + r_i^2(\lVert a_i\rVert^2 + 1),

and :math:`\sum_i c_i\nabla\ell_i` is one weighted backward pass. With :math:`c_i = \min(1, C/\lVert\nabla\ell_i\rVert)`
it equals ``L2_clip(MLP.per_example_gradients(theta, X, y), C).sum(0)`` (pinned by tests/test_engine.py).

>>> import numpy as np
>>> X = np.array([[3.0, 4.0]]); hidden = np.zeros((1, 2)); r = np.array([-0.5]); delta = np.zeros((1, 2))
>>> per_example_norms(hidden, r, delta, np.array([5.0]))    # |r| sqrt(|a|^2 + 1)
array([0.5])
"""

from __future__ import annotations

import numpy as np

from ..clipping import clip_factors, l2_norms

__all__ = ["per_example_norms", "weighted_gradient_sum", "clipped_gradient_sum"]


def per_example_norms(hidden, r, delta, row_norms):
    """``||grad_i||_2`` from ``||delta_i||^2 (||x_i||^2 + 1) + r_i^2 (||a_i||^2 + 1)``, shape (n,).

    Written with ``hypot`` so that rows of norm above 1e154 (whose square overflows) still give the
    finite gradient norm; abs(r) < 1 and abs(a) < 1 elementwise, so only ||x_i|| can be huge.
    """
    delta_norms = np.sqrt(np.einsum("ij,ij->i", delta, delta))
    output_part = np.abs(r) * np.sqrt(np.einsum("ij,ij->i", hidden, hidden) + 1.0)
    with np.errstate(over="ignore"):  # only if the true norm itself exceeds the float range (then inf)
        hidden_part = delta_norms * np.hypot(row_norms, 1.0)
    return np.hypot(hidden_part, output_part)


def weighted_gradient_sum(X, hidden, r, delta, weights):
    r""":math:`\sum_i c_i \nabla\ell_i` as one flat vector ``[W1, b1, w2, b2]``, without the per-example gradients."""
    weighted_delta = weights[:, None] * delta
    weighted_r = weights * r
    return np.concatenate([
        (weighted_delta.T @ X).ravel(),                   # sum_i c_i delta_i x_i^T
        weighted_delta.sum(axis=0),
        weighted_r @ hidden,
        [weighted_r.sum()],
    ])


def clipped_gradient_sum(X, hidden, r, delta, clip_norm, row_norms=None):
    """Equals ``L2_clip(MLP.per_example_gradients(theta, X, y), clip_norm).sum(0)`` (to rounding), unchecked.

    ``hidden``, ``r``, ``delta``: the backward pass at ``theta`` (module docstring); ``row_norms``: the
    precomputed ``l2_norms(X)[:, 0]``, computed here when None.
    """
    if row_norms is None:
        row_norms = l2_norms(X, name="X")[:, 0]
    norms = per_example_norms(hidden, r, delta, row_norms)
    return weighted_gradient_sum(X, hidden, r, delta, clip_factors(norms, clip_norm))
