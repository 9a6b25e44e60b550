"""Synthetic data: :func:`make_toy`, a small logistic-regression problem with rows in the unit ball.

>>> X, y = make_toy(n=100, d=3, rng=0)
>>> X.shape, sorted(set(y.tolist()))
((100, 3), [-1.0, 1.0])
>>> bool(np.linalg.norm(X, axis=1).max() <= 1.0)
True
"""

from __future__ import annotations

import numpy as np

from dpedu.ground.validation import check_positive, check_positive_int, check_rng

__all__ = ["make_toy"]

def make_toy(n=200, d=5, *, rng=None, signal=10.0):
    r"""A small, nearly separable logistic-regression problem with rows in the unit ball.

    Parameters
    ----------
    n : int, default 200
        Number of rows.
    d : int, default 5
        Number of features.
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness; the same seed gives the same data.
    signal : float, default 10.0
        :math:`s` below: larger means fewer labels on the "wrong" side of the true hyperplane.

    Returns
    -------
    X : ndarray of shape (n, d)
        Rows uniform in the unit ball, so :math:`\|x_i\|_2 \le 1` (a public clip norm of 1 never clips).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.

    Notes
    -----
    Draw a direction :math:`\theta^\*` uniformly on the unit sphere and, for each row, a direction
    :math:`g_i/\|g_i\|` (Gaussian :math:`g_i`) and radius :math:`U_i^{1/d}` (:math:`U_i \sim U[0,1)`), which
    is uniform in the ball. Then

    .. math:: \Pr[y_i = +1 \mid x_i] = \operatorname{sigmoid}(s\, \theta^{*\top} x_i),

    a logistic model, so the labels are separable except near the hyperplane :math:`\theta^{*\top} x = 0`.
    For very small ``n`` all labels can be equal.

    Examples
    --------
    >>> X, y = make_toy(n=4, d=2, rng=1)
    >>> X.shape, y.shape
    ((4, 2), (4,))
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    signal = check_positive(signal, "signal")
    rng = check_rng(rng)
    theta_star = rng.standard_normal(d)
    theta_star /= np.linalg.norm(theta_star)
    directions = rng.standard_normal((n, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    radii = rng.random(n) ** (1.0 / d)  # P(radius <= r) = r^d: uniform in the ball
    X = directions * radii[:, None]
    # sigmoid(t) = (1 + tanh(t/2)) / 2 never overflows
    p_positive = 0.5 * (1.0 + np.tanh(0.5 * signal * (X @ theta_star)))
    y = np.where(rng.random(n) < p_positive, 1.0, -1.0)
    return X, y
