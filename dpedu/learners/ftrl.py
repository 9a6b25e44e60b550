r"""Gradient descent on noisy prefix sums: DP-FTRL (the tree) and matrix-factorisation noise (docs/math.md §25.6).

The records are split once, at random, into b fixed batches, visited in the same order every epoch, so
record j takes part in steps j, j + b, j + 2b, ... (minimum separation b). At step t::

    g_t     = sum over batch t of L2_clip(grad l(theta_t; x_i, y_i), C_clip)
    S_t     = g_0 + ... + g_t + (B Z)_t           Z ~ N(0, (z C_clip)^2), one row per row of C
    theta_{t+1} = theta_0 - eta * S_t / (batch size)

the FTRL update with a quadratic regulariser around :math:`\theta_0` (Kairouz et al. 2021). Only
:math:`CG + Z` touches the data, once for the whole run: one :class:`FactorizedGaussianEvent` with the
sensitivity of C under that participation.

>>> from dpedu.datasets import make_toy
>>> X, y = make_toy(n=600, d=3, rng=0)
>>> r = factorized_gradient_descent(X, y, kind="tree", noise_multiplier=1.0, clip_norm=1.0, batches=10, epochs=2, rng=0)
>>> r.ledger, r.details.steps
([(FactorizedGaussianEvent(noise_multiplier=1.0, sensitivity=3.464..., sampling_rate=1.0), 1)], 20)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.logistic_fast import clipped_gradient_sum, mean_loss
from ..training.common import TrainingResult, training_data
from ..engine.validation import check_noise_multiplier, check_positive, check_positive_int, check_rng
from .factorization import FactorizedGaussianEvent, cyclic_participations, make_factorization, sensitivity

__all__ = ["factorized_gradient_descent", "factorized_sensitivity", "FactorizedDiagnostics"]


@dataclass(frozen=True)
class FactorizedDiagnostics:
    """What a run of :func:`factorized_gradient_descent` did (:attr:`TrainingResult.details`).

    Attributes
    ----------
    steps : int
        Batches times epochs.
    sensitivity : float
        The L2 sensitivity of C G per unit clip norm under the run's participation.
    factorization : str
        The factorisation's name.
    noise_multiplier, clip_norm : float
        z and C of the run.
    """

    steps: int
    sensitivity: float
    factorization: str
    noise_multiplier: float
    clip_norm: float


def factorized_sensitivity(factorization, batches, epochs):
    """Sensitivity of ``C G`` per unit clip norm when each record is in one of ``batches`` fixed batches,
    every epoch: the cyclic participation patterns (single participation when ``epochs`` is 1)."""
    steps = factorization.steps
    if epochs == 1:
        return sensitivity(factorization.C)
    return sensitivity(factorization.C, cyclic_participations(steps, batches))


def factorized_gradient_descent(X, y, *, kind, noise_multiplier, clip_norm, batches, epochs, learning_rate=1.0,
                                bands=None, theta0=None, rng=None):
    r"""Train logistic regression on noisy prefix sums released through the factorisation ``kind``.

    Parameters
    ----------
    X, y : arrays
        Features (n, d) and labels in {-1, +1}.
    kind : str
        One of :data:`dpedu.learners.factorization.FACTORIZATIONS`: ``"identity"`` (noisy SGD without
        sampling), ``"tree"`` / ``"tree_efficient"`` (DP-FTRL), ``"square_root"``, ``"banded"``.
    noise_multiplier : float
        z > 0: the noise on each row of C G has std :math:`z C_{\rm clip}`; the run is a Gaussian mechanism
        with multiplier z / sens(C).
    clip_norm : float
        C_clip.
    batches : int
        b, fixed batches per epoch (the minimum separation between a record's steps).
    epochs : int
        Passes; the run has T = epochs * batches steps (at most 4096).
    learning_rate : float
        eta, applied to the noisy prefix sum divided by the batch size n / b.
    bands : int, optional
        For ``"banded"``: the number of bands (default min(b, 4)).
    rng : None, int, SeedSequence or Generator
        The batches and the noise.

    Returns
    -------
    TrainingResult
        ``ledger`` is ``[(FactorizedGaussianEvent(z, sens), 1)]``; ``details`` (a :class:`FactorizedDiagnostics`) has
        the steps, the sensitivity and the factorisation's name.
    """
    data = training_data(X, y)                        # checked once, row norms computed once
    X, y = data.X, data.y
    z = check_noise_multiplier(noise_multiplier)
    if z == 0:
        raise ValueError("noise_multiplier must be > 0 (use dpedu.training.gradient_descent without noise)")
    clip_norm = check_positive(clip_norm, "clip_norm")
    n, d = X.shape
    batches = check_positive_int(batches, "batches", maximum=n)
    epochs = check_positive_int(epochs, "epochs")
    learning_rate = check_positive(learning_rate, "learning_rate")
    steps = batches * epochs
    if bands is not None:
        bands = check_positive_int(bands, "bands")
    factorization = make_factorization(kind, steps, bands=min(batches, 4) if bands is None else bands)
    sens = factorized_sensitivity(factorization, batches, epochs)
    event = FactorizedGaussianEvent(z, sens)          # checked before any data is touched
    rng = check_rng(rng)
    theta = np.zeros(d) if theta0 is None else np.array(theta0, dtype=float)
    if theta.shape != (d,):
        raise ValueError(f"theta0 must have shape ({d},); got {theta.shape}")
    start = theta.copy()
    assignment = rng.permutation(n) % batches        # record -> its fixed batch
    members = [np.flatnonzero(assignment == j) for j in range(batches)]
    noise = factorization.B @ rng.normal(0.0, z * clip_norm, size=(factorization.C.shape[0], d))
    row_norms = data.row_norms
    batch_size = n / batches                          # public: n and b are
    running, losses = np.zeros(d), []
    for t in range(steps):
        rows = members[t % batches]
        running += clipped_gradient_sum(theta, X[rows], y[rows], clip_norm, row_norms[rows])
        theta = start - learning_rate * (running + noise[t]) / batch_size
        if (t + 1) % batches == 0:
            losses.append(mean_loss(theta, X, y))
    return TrainingResult(theta, np.array(losses), [(event, 1)],
                          details=FactorizedDiagnostics(steps, sens, factorization.name, z, clip_norm))
