r"""Prefix sums released through a matrix factorisation :math:`A = BC` (docs/math.md §25.4-25.6).

Gradient descent needs only the prefix sums :math:`AG` of the clipped gradients (rows :math:`g_t`; A is the
lower-triangular all-ones matrix). Release :math:`B(CG + Z)`, :math:`Z \sim \mathcal N(0, \sigma^2)`: the noise
is on :math:`CG`, whose sensitivity is read off C, and the error of the prefix sums is
:math:`\sigma^2\lVert B\rVert_F^2`. The identity C = I is noisy SGD; the binary tree is DP-FTRL's
(Kairouz et al. 2021); the square root :math:`C = A^{1/2}` (Toeplitz, :math:`r_k = \binom{2k}{k}/4^k`) is
Fichtenberger, Henzinger & Upadhyay's (2023); a banded square root keeps its first bands (BandMF-like).

>>> A = prefix_sum_matrix(4); f = square_root_factorization(4)
>>> bool(np.allclose(f.B @ f.C, A)), f.C[:, 0]
(True, array([1.    , 0.5   , 0.375 , 0.3125]))
>>> [round(sensitivity(make_factorization(kind, 16).C) ** 2, 4) for kind in ("identity", "tree", "square_root")]
[1.0, 5.0, 1.9439]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import solve_triangular, toeplitz

from ..events import ADD_REMOVE, Event, GaussianEvent, check_relation
from ..engine.validation import check_choice, check_noise_multiplier, check_positive, check_positive_int, check_sampling_rate

__all__ = [
    "FACTORIZATIONS",
    "Factorization",
    "FactorizedGaussianEvent",
    "prefix_sum_matrix",
    "identity_factorization",
    "tree_factorization",
    "square_root_coefficients",
    "square_root_factorization",
    "banded_square_root_factorization",
    "make_factorization",
    "sensitivity",
    "cyclic_participations",
    "prefix_sum_error",
    "closed_form_error",
]

#: The factorisations :func:`make_factorization` builds.
FACTORIZATIONS = ("identity", "tree", "tree_efficient", "square_root", "banded")
#: The largest number of steps a factorisation is built for (C and B are dense n x n matrices).
MAX_FACTORIZATION_STEPS = 4096


@dataclass(frozen=True)
class Factorization:
    """:math:`A = BC` for n steps: ``B`` (n x m) decodes the prefix sums from the m noisy rows of ``C G``."""

    name: str
    B: np.ndarray
    C: np.ndarray

    @property
    def steps(self) -> int:
        return self.C.shape[1]


def prefix_sum_matrix(n):
    """A, the n x n lower-triangular matrix of ones: row t of ``A @ G`` is :math:`g_0 + \\dots + g_t`."""
    return np.tril(np.ones((check_positive_int(n, "n"), ) * 2))


def _check_steps(n):
    return check_positive_int(n, "n", maximum=MAX_FACTORIZATION_STEPS)


def identity_factorization(n):
    """C = I, B = A: each gradient gets its own noise (noisy SGD); error n(n+1)/2 per unit variance."""
    n = _check_steps(n)
    return Factorization("identity", prefix_sum_matrix(n), np.eye(n))


def _dyadic_nodes(n):
    """Every dyadic interval [start, start + 2^h) inside [0, n): the nodes of a binary tree over n leaves
    that are complete by step n (a partial tree for n not a power of two), as (start, height) pairs."""
    nodes, height = [], 0
    while (1 << height) <= n:
        size = 1 << height
        nodes += [(start, height) for start in range(0, n - size + 1, size)]
        height += 1
    return nodes


def tree_factorization(n, estimator="naive"):
    r"""The binary tree: one row of C per dyadic node (its leaves' sum). Each leaf is in at most
    :math:`\lceil\log_2(n+1)\rceil` nodes.

    ``estimator="naive"`` sums the nodes of the dyadic decomposition of :math:`[0, t]` (at most one per
    level); ``"efficient"`` first replaces each node by the minimum-variance combination of its own noisy sum
    and its two children's estimates (Honaker 2015), using only complete subtrees, so it stays causal.
    """
    n = _check_steps(n)
    check_choice(estimator, "estimator", ("naive", "efficient"))
    nodes = _dyadic_nodes(n)
    index = {node: i for i, node in enumerate(nodes)}
    C = np.zeros((len(nodes), n))
    for (start, height), i in index.items():
        C[i, start:start + (1 << height)] = 1.0
    estimate = np.eye(len(nodes))                  # node -> its estimate as a combination of noisy node rows
    if estimator == "efficient":
        variance = {0: 1.0}                          # per unit noise variance
        for (start, height), i in sorted(index.items(), key=lambda item: item[0][1]):
            if height == 0:
                continue
            half = 1 << (height - 1)
            children = estimate[index[(start, height - 1)]] + estimate[index[(start + half, height - 1)]]
            v_children = 2.0 * variance[height - 1]
            weight = v_children / (1.0 + v_children)  # inverse-variance weight of the node's own noisy sum
            estimate[i] = (1.0 - weight) * children
            estimate[i, i] += weight
            variance[height] = v_children / (1.0 + v_children)
    B = np.zeros((n, len(nodes)))
    for t in range(n):
        start, remaining = 0, t + 1                  # decompose [0, t] into dyadic nodes, largest first
        for height in range(remaining.bit_length() - 1, -1, -1):
            if remaining >> height & 1:
                B[t] += estimate[index[(start, height)]]
                start += 1 << height
    return Factorization("tree" if estimator == "naive" else "tree_efficient", B, C)


def square_root_coefficients(n):
    r""":math:`r_k = \binom{2k}{k}/4^k` for k < n, by :math:`r_k = r_{k-1}(2k-1)/(2k)` (no overflow)."""
    n = check_positive_int(n, "n")
    r = np.ones(n)
    for k in range(1, n):
        r[k] = r[k - 1] * (2 * k - 1) / (2 * k)
    return r


def _toeplitz_lower(coefficients, n):
    column = np.zeros(n)
    column[:min(n, len(coefficients))] = coefficients[:n]
    return toeplitz(column, np.zeros(n))


def square_root_factorization(n):
    """B = C = the lower-triangular Toeplitz square root of A (C @ C == A exactly)."""
    n = _check_steps(n)
    C = _toeplitz_lower(square_root_coefficients(n), n)
    return Factorization("square_root", C.copy(), C)


def banded_square_root_factorization(n, bands):
    """C: the square root's first ``bands`` diagonals (zero beyond); B = A C⁻¹ (C is invertible: unit diagonal).

    With ``bands`` at most the minimum separation b, a record's columns of C never overlap across its
    participations, so the multi-epoch sensitivity is sqrt(k) times the single-participation one.
    """
    n = _check_steps(n)
    bands = check_positive_int(bands, "bands")
    C = _toeplitz_lower(square_root_coefficients(min(bands, n)), n)
    B = solve_triangular(C, prefix_sum_matrix(n).T, lower=True, trans="T").T   # B C = A  <=>  C^T B^T = A^T
    return Factorization("banded", B, C)


def make_factorization(kind, n, *, bands=None):
    """The factorisation ``kind`` (one of :data:`FACTORIZATIONS`) for ``n`` steps; ``bands`` for ``"banded"``."""
    check_choice(kind, "kind", FACTORIZATIONS)
    if kind == "identity":
        return identity_factorization(n)
    if kind in ("tree", "tree_efficient"):
        return tree_factorization(n, "naive" if kind == "tree" else "efficient")
    if kind == "square_root":
        return square_root_factorization(n)
    return banded_square_root_factorization(n, 4 if bands is None else bands)


def cyclic_participations(n, min_separation):
    """The participation patterns of fixed batches visited in order: record j's steps are j, j+b, j+2b, ...
    (b = ``min_separation``, the number of batches per epoch)."""
    n = check_positive_int(n, "n")
    b = check_positive_int(min_separation, "min_separation", maximum=n)
    return [np.arange(j, n, b) for j in range(b)]


def sensitivity(C, participations=None):
    r"""L2 sensitivity of C G per unit clip norm: the largest, over participation patterns π, of √(Σ abs((CᵀC)[s, t])).

    The sum runs over s, t in π: :math:`\max_\pi \sqrt{\sum_{s,t\in\pi} |(C^\top C)_{st}|}`.

    ``participations``: the steps each record may take part in (a list of index arrays); ``None`` is single
    participation (every record in one step), where this is the largest column norm of C. For several
    steps the bound takes the worst signs of the gradients' inner products; it is exact when
    :math:`C^\top C \ge 0` entrywise (Choquette-Choo et al. 2023, Thm 2), as for every factorisation here.
    """
    C = np.asarray(C, dtype=float)
    if C.ndim != 2 or not np.all(np.isfinite(C)):
        raise ValueError(f"C must be a finite 2-D matrix; got shape {C.shape}")
    if participations is None:
        return float(np.sqrt(np.max(np.sum(C * C, axis=0))))
    gram = np.abs(C.T @ C)
    worst = 0.0
    for steps in participations:
        steps = np.asarray(steps, dtype=int)
        if steps.ndim != 1 or steps.size == 0 or steps.min() < 0 or steps.max() >= C.shape[1]:
            raise ValueError(f"participations must hold non-empty arrays of steps in [0, {C.shape[1]}); got {steps}")
        worst = max(worst, float(gram[np.ix_(steps, steps)].sum()))
    return math.sqrt(worst)


def prefix_sum_error(factorization, participations=None, noise_multiplier=1.0):
    r"""Total squared error of the n prefix sums, :math:`\sigma^2\lVert B\rVert_F^2` with
    :math:`\sigma = z\cdot\mathrm{sens}(C)` (unit clip norm): the error at equal privacy."""
    z = check_positive(noise_multiplier, "noise_multiplier")
    sens = sensitivity(factorization.C, participations)
    return float((z * sens) ** 2 * np.sum(factorization.B ** 2))


def closed_form_error(kind, n):
    r"""``(sens^2, total squared error)`` at unit noise multiplier, single participation, from the formulas of
    docs/math.md §25.5: identity (1, n(n+1)/2); tree with the naive estimator
    (:math:`\lceil\log_2(n+1)\rceil`, that times :math:`\sum_{t=1}^n \mathrm{popcount}(t)`); square root
    (:math:`\sum_{k<n} r_k^2`, that times :math:`\sum_k (n-k) r_k^2`).

    >>> closed_form_error("identity", 1024)[1] / 1024, round(closed_form_error("square_root", 1024)[1] / 1024, 2)
    (512.5, 9.67)
    """
    check_choice(kind, "kind", ("identity", "tree", "square_root"))
    n = check_positive_int(n, "n")
    if kind == "identity":
        return 1.0, n * (n + 1) / 2
    if kind == "tree":
        depth = math.ceil(math.log2(n + 1))
        return float(depth), float(depth * sum(bin(t).count("1") for t in range(1, n + 1)))
    r2 = square_root_coefficients(n) ** 2
    return float(r2.sum()), float(r2.sum() * np.sum((n - np.arange(n)) * r2))


@dataclass(frozen=True, repr=False)
class FactorizedGaussianEvent(Event):
    r"""One release of :math:`CG + Z`, :math:`Z\sim\mathcal N(0, z^2C_{\rm clip}^2 I)`, for a whole run.

    ``sensitivity`` is that of :math:`CG` per unit clip norm (:func:`sensitivity`, under the run's
    participation). The release is a Gaussian mechanism with multiplier ``noise_multiplier / sensitivity``
    (docs/math.md §25.6): :attr:`gaussian_equivalent` is that event, and every accountant accounts it
    through :func:`dpedu.events.add_remove_equivalent`. With Poisson sampling (``sampling_rate`` < 1) no
    accountant here has a theorem (amplification by sampling for correlated noise needs its own analysis,
    Choquette-Choo et al. 2024): refused by name.
    """

    noise_multiplier: float
    sensitivity: float
    sampling_rate: float = 1.0
    relation: str = field(default=ADD_REMOVE, kw_only=True)

    unsupported_reason = ("amplification by sampling is not covered for correlated (matrix-factorisation) noise: no "
                          "accountant here has that theorem; run with every record in its batches (sampling_rate=1)")

    def __post_init__(self):
        object.__setattr__(self, "noise_multiplier", check_noise_multiplier(self.noise_multiplier))
        if self.noise_multiplier == 0:
            raise ValueError("noise_multiplier must be > 0 for an accountable release")
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "sampling_rate", check_sampling_rate(self.sampling_rate))
        object.__setattr__(self, "relation", check_relation(self.relation))

    @property
    def gaussian_equivalent(self):
        """``GaussianEvent(noise_multiplier / sensitivity)`` under the same relation; None when sampled."""
        if self.sampling_rate < 1:
            return None
        return GaussianEvent(self.noise_multiplier / self.sensitivity, relation=self.relation)
