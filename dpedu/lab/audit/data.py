r"""Audit data and canaries: a dataset with an unused feature, canary records, and their scores.

>>> X, y = make_audit_data(n=50, d=2, rng=0)
>>> x, label = make_canary(X, y)
>>> np.round(np.abs(x), 6).tolist(), label
([0.0, 0.0, 5.0], 1.0)
"""

from __future__ import annotations

import numpy as np

from ...textbook.datasets import make_toy
from ...ground.validation import (
    check_array, check_choice, check_features, check_labels, check_positive, check_positive_int, check_rng, check_theta
)

__all__ = ["CANARY_KINDS", "SCORES", "make_audit_data", "make_canary", "check_canary", "canary_scores"]

CANARY_KINDS = ("least_used", "mislabeled")
SCORES = ("margin", "loss")


def make_audit_data(n=100, d=3, *, rng=None):
    r"""A small synthetic training set for audits: :func:`dpedu.textbook.datasets.make_toy` plus one unused feature.

    The last column is 0 in every row: a rare feature (think of a one-hot category nobody in the data
    has). Only a canary will use it, which makes it the direction where the data's gradients have zero
    variance, the best place for a gradient canary ([NTS21]_'s "Dirac canary").

    Parameters
    ----------
    n : int
        Number of rows (>= 1).
    d : int
        Number of informative features (>= 1); X has d + 1 columns.
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    X : ndarray, shape (n, d + 1), rows in the unit ball
    y : ndarray, shape (n,), labels in {-1, +1}

    Examples
    --------
    >>> X, y = make_audit_data(n=5, d=2, rng=0)
    >>> X.shape, float(abs(X[:, -1]).max())
    ((5, 3), 0.0)
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    X, y = make_toy(n=n, d=d, rng=check_rng(rng))
    return np.hstack([X, np.zeros((n, 1))]), y


def make_canary(X, y, *, kind="least_used", norm=5.0):
    r"""A canary record ``(x, label)`` crafted to be easy to detect in a model trained with it.

    ``kind="least_used"`` (default, the strongest here): :math:`x = R\,v_{\min}` with :math:`v_{\min}` the unit
    eigenvector of :math:`X^\top X` with the smallest eigenvalue, label +1. The data's gradients
    :math:`-y_i x_i\sigma(-m_i)` lie in the span of the rows, so along :math:`v_{\min}` they are (nearly) zero and
    the canary's clipped gradient is the only signal there; scoring a model by :math:`\theta\cdot v_{\min}`
    then sees the canary plus the DP noise alone. This is the clipping-aware direction of Jagielski et al.
    (2020) and, when a feature is unused (:func:`make_audit_data`), the "Dirac canary" of Nasr et al. (2021).

    ``kind="mislabeled"``: an outlier with an unusual label, :math:`x = R\,u` with u the unit direction from
    the mean of the negative rows to the mean of the positive rows, labelled **-1**, which the data says
    should be +1. Natural, but weaker: its gradient competes with the whole dataset along u.

    Parameters
    ----------
    X, y : arrays
        The training data the canary will be added to (labels in {-1, +1}).
    kind : {"least_used", "mislabeled"}
    norm : float
        R > 0. Keep it well above the clip norm C (the default 5 suits C = 1): the canary's gradient has norm
        :math:`R\,\sigma(-m)`, so it is clipped to exactly C (the largest contribution DP allows) as long as its
        margin m stays below :math:`\ln(R/C - 1)`.

    Returns
    -------
    x : ndarray, shape (d,)
    label : float

    Examples
    --------
    >>> X, y = make_audit_data(n=20, d=2, rng=0)
    >>> x, label = make_canary(X, y)
    >>> np.round(np.abs(x), 6).tolist(), label
    ([0.0, 0.0, 5.0], 1.0)
    """
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    norm = check_positive(norm, "norm")
    kind = check_choice(kind, "kind", CANARY_KINDS)
    largest = float(np.max(np.abs(X)))
    if largest > 0:                                       # both directions are scale-free: rescaled, X.T @ X and
        X = X / largest                                   # the class means stay finite for |X| up to 1.8e308
    if kind == "least_used":
        _, vectors = np.linalg.eigh(X.T @ X)              # eigenvalues ascending
        v = vectors[:, 0]
        v = v * np.sign(v[np.argmax(np.abs(v))])          # a deterministic sign
        return norm * v, 1.0
    if np.all(y == y[0]):                                  # kind == "mislabeled"
        raise ValueError("kind='mislabeled' needs both labels in y")
    u = X[y > 0].mean(axis=0) - X[y < 0].mean(axis=0)
    if not np.linalg.norm(u) > 0:
        raise ValueError("kind='mislabeled': the two classes have the same mean; use kind='least_used'")
    return norm * u / np.linalg.norm(u), -1.0


def check_canary(canary, n_features):
    """``canary`` as ``(x, label)``: x a nonzero vector of length ``n_features``, label in {-1, +1}."""
    if not (isinstance(canary, tuple) and len(canary) == 2):
        raise TypeError("canary must be a pair (x, label), e.g. make_canary(X, y)")
    x = check_theta(canary[0], n_features, "canary x")
    if not np.linalg.norm(x) > 0:
        raise ValueError("canary x must be a nonzero vector")
    label = check_labels(np.atleast_1d(canary[1]), 1, "canary label")[0]
    return x, float(label)


def canary_scores(thetas, canary, *, score="margin"):
    r"""How strongly each model in ``thetas`` looks trained *with* the canary (higher: more likely "in").

    ``"margin"``: :math:`s = y_c\,\theta\cdot x_c/\lVert x_c\rVert`, the model's signed margin on the canary
    direction. ``"loss"``: :math:`s = -\ell(\theta; x_c, y_c) = -\ln(1+e^{-y_c\theta\cdot x_c})`, the
    loss-threshold membership test. The loss is a decreasing function of the margin, so both rank models
    identically and give the **same** audit; the margin does not saturate in floating point.

    Parameters
    ----------
    thetas : array_like, shape (runs, d) or (d,)
    canary : (x, label)
    score : {"margin", "loss"}

    Returns
    -------
    ndarray, shape (runs,)
    """
    thetas = check_array(thetas, "thetas", ndim=(1, 2))
    thetas = np.atleast_2d(thetas)
    x, label = check_canary(canary, thetas.shape[1])
    score = check_choice(score, "score", SCORES)
    margins = label * (thetas @ x)
    if score == "margin":
        return margins / np.linalg.norm(x)
    return -np.logaddexp(0.0, -margins)                   # score == "loss"

