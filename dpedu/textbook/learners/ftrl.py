r"""Gradient descent on noisy prefix sums: DP-FTRL (the tree) and matrix-factorisation noise (docs/math.md §25.6).

The one DP-SGD loop (:func:`dpedu.textbook.training.run_dp_sgd`) with two parts injected: the batches are the ``"cyclic"``
scheme (the records split once, at random, into b fixed batches visited in the same order every epoch, so
record j takes part in steps j, j + b, j + 2b, ...) and the noise is :class:`FactorizedNoise`, the increments of
:math:`BZ`. The loop's update :math:`\theta_{t+1} = \theta_t - \eta(g_t + \xi_t)/(n/b)` then gives::

    theta_{t+1} = theta_0 - eta * (g_0 + ... + g_t + (B Z)_t) / (n / b),   Z ~ N(0, (z C_clip)^2)

the FTRL update with a quadratic regulariser around :math:`\theta_0` (Kairouz et al. 2021). Only
:math:`CG + Z` touches the data, once for the whole run: one :class:`FactorizedGaussianEvent` with the
sensitivity of C under that participation.

**Relation.** The split depends on n (a permutation taken modulo b): adding a record moves the others, so the
run is **not** covered under add/remove, whatever is assumed about n (with n = 30,000 records of gradient +C, one
added at -C, the identity factorisation, b = 30, one epoch and z = 1, the claimed epsilon(1e-5) = 4.377 has delta
4.3e-3 on that pair: docs/math.md §22.10). It is under zero-out (a record replaced by one whose gradient is zero,
n unchanged and public, so the split and the divisor n / b are the same for both datasets: the default) and
replace-one (sensitivity 2C); docs/math.md §1.2. ``dpedu.lab.audit.neighbours`` measures delta at the claimed
epsilon on literal pairs of both (docs/math.md §20.7).

>>> from dpedu.textbook.datasets import make_toy
>>> X, y = make_toy(n=600, d=3, rng=0)
>>> r = factorized_gradient_descent(X, y, kind="tree", noise_multiplier=1.0, clip_norm=1.0, batches=10, epochs=2, rng=0)
>>> r.ledger, r.details.steps
([(FactorizedGaussianEvent(noise_multiplier=1.0, sensitivity=3.464..., sampling_rate=1.0, relation='zero_out'), 1)], 20)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ground.validation import (
    check_array, check_choice, check_noise_multiplier, check_noise_scale, check_positive, check_positive_int,
    check_real_entries, check_rng, check_theta
)
from ...ground.events import ZERO_OUT, check_relation
from ..training import plan_dp_sgd, run_dp_sgd
from .factorization import FACTORIZATIONS, MAX_STEPS_BY_KIND, FactorizedGaussianEvent, make_factorization

__all__ = ["factorized_gradient_descent", "factorized_sensitivity", "FactorizedDiagnostics", "FactorizedNoise"]


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
    return factorization.cyclic_sensitivity(batches)  # batches == steps (one epoch): single participation


class FactorizedNoise:
    r"""A noise source for the DP-SGD loop: step t gets :math:`(BZ)_t - (BZ)_{t-1}`, so the noise of the first t
    steps sums to :math:`(BZ)_t`, with :math:`Z \sim \mathcal N(0, \sigma^2)` (one row per row of C).

    ``normal(loc, scale, size)`` is what :func:`~dpedu.textbook.mechanisms.gaussian_mechanism` calls; ``scale`` is the run's
    :math:`\sigma = z C`, and :math:`BZ` is drawn from ``rng`` at the first call (after the first batch), by the
    factorisation itself (no dense B for the tree and the identity: :mod:`dpedu.textbook.learners.prefix_sums`).
    ``ledger(plan)`` is the run's one :class:`FactorizedGaussianEvent`.
    """

    def __init__(self, factorization, sensitivity, rng):
        self.factorization, self.sensitivity, self.rng = factorization, sensitivity, rng
        self.rows, self.t = None, 0

    def normal(self, loc, scale, size):
        if self.rows is None:                         # B Z, Z ~ N(0, scale^2): the whole run's noise
            self.rows = self.factorization.noise(scale, int(np.prod(size)), self.rng)
        previous = self.rows[self.t - 1] if self.t > 0 else 0.0
        increment = self.rows[self.t] - previous
        self.t += 1
        return loc + increment

    def ledger(self, plan):
        return [(FactorizedGaussianEvent(plan.noise_multiplier, self.sensitivity, relation=plan.relation), 1)]


def factorized_gradient_descent(X, y, *, kind, noise_multiplier, clip_norm, batches, epochs, learning_rate=1.0,
                                bands=None, theta0=None, relation=ZERO_OUT, rng=None, observe=None):
    r"""Train logistic regression on noisy prefix sums released through the factorisation ``kind``.

    Parameters
    ----------
    X, y : arrays
        Features (n, d) and labels in {-1, +1}.
    kind : str
        One of :data:`dpedu.textbook.learners.factorization.FACTORIZATIONS`: ``"identity"`` (noisy SGD without
        sampling), ``"tree"`` / ``"tree_efficient"`` (DP-FTRL), ``"square_root"``, ``"banded"``.
    noise_multiplier : float
        z > 0: the noise on each row of C G has std :math:`z C_{\rm clip}`; the run is a Gaussian mechanism
        with multiplier z / sens(C).
    clip_norm : float
        C_clip.
    batches : int
        b, fixed batches per epoch (the minimum separation between a record's steps), at most n.
    epochs : int
        Passes; the run has T = epochs * batches steps: at most 1,000,000 for ``"identity"`` and the trees
        (no dense matrix), 4,096 for ``"square_root"`` and ``"banded"`` (dense n x n matrices;
        :data:`dpedu.textbook.learners.factorization.MAX_STEPS_BY_KIND`).
    learning_rate : float
        eta, applied to the noisy prefix sum divided by the batch size n / b (n is public).
    bands : int, optional
        For ``"banded"`` only (refused for the other kinds): the number of bands (default min(b, 4)).
    theta0 : array_like, optional
        The starting point (zeros by default; it must not depend on the data).
    relation : {"zero_out", "replace_one"}
        The neighbouring relation of the event (the module docstring: add/remove does not hold for fixed batches).
    rng : None, int, SeedSequence or Generator
        The batches and the noise.
    observe : callable, optional
        ``observe(t, theta)`` after every step, as :func:`dpedu.textbook.training.run_dp_sgd` calls it (an auditor reading
        every update: :mod:`dpedu.lab.audit.neighbours`).

    Returns
    -------
    TrainingResult
        ``ledger`` is ``[(FactorizedGaussianEvent(z, sens), 1)]``; ``details`` (a :class:`FactorizedDiagnostics`) has
        the steps, the sensitivity and the factorisation's name.
    """
    X = check_array(X, "X", ndim=2, finite=False)
    n, d = X.shape
    z = check_noise_multiplier(noise_multiplier)
    clip_norm = check_positive(clip_norm, "clip_norm")
    check_noise_scale(z * clip_norm, f"std z * clip_norm = {z!r} * {clip_norm!r}", "a smaller noise_multiplier or "
                      "clip_norm")
    check_choice(kind, "kind", FACTORIZATIONS)
    batches = check_positive_int(batches, "batches", maximum=n)
    epochs = check_positive_int(epochs, "epochs", maximum=max(1, MAX_STEPS_BY_KIND[kind] // batches))
    relation = check_relation(relation)
    if kind == "banded":
        bands = min(batches, 4) if bands is None else bands
    factorization = make_factorization(kind, batches * epochs, bands=bands)   # bands with another kind: refused
    sens = factorized_sensitivity(factorization, batches, epochs)
    if theta0 is not None:
        theta0 = check_theta(check_real_entries(theta0, "theta0"), d, "theta0")
    plan = plan_dp_sgd(n, noise_multiplier=z, clip_norm=clip_norm, sampling_rate=1.0 / batches,
                       steps=batches * epochs, learning_rate=learning_rate, sampling="cyclic", relation=relation)
    rng = check_rng(rng)
    noise = FactorizedNoise(factorization, sens, rng)
    FactorizedGaussianEvent(z, sens, relation=relation)   # the event's fields checked before any data is touched
    result = run_dp_sgd(X, y, plan, theta0=theta0, rng=rng, noise=noise, observe=observe)
    result.details = FactorizedDiagnostics(plan.steps, sens, factorization.name, z, clip_norm)
    return result
