r"""Prefix sums released through a matrix factorisation :math:`A = BC` (docs/math.md §25.4-25.6, §25.8).

Gradient descent needs only the prefix sums :math:`AG` of the clipped gradients (rows :math:`g_t`; A is the
lower-triangular all-ones matrix). Release :math:`B(CG + Z)`, :math:`Z \sim \mathcal N(0, \sigma^2)`: the noise
is on :math:`CG`, whose sensitivity is read off C, and the error of the prefix sums is
:math:`\sigma^2\lVert B\rVert_F^2`. The identity C = I is noisy SGD; the binary tree is DP-FTRL's
(Kairouz et al. 2021); the square root :math:`C = A^{1/2}` (Toeplitz, :math:`r_k = \binom{2k}{k}/4^k`) is
Fichtenberger, Henzinger & Upadhyay's (2023); a banded square root keeps its first bands (BandMF-like).

Sizes (each refused past its bound, naming the argument and the reason): the identity and the tree need no
dense matrix and go to :data:`~dpedu.textbook.learners.prefix_sums.MAX_STRUCTURED_STEPS` (1,000,000) steps
(:mod:`dpedu.textbook.learners.prefix_sums`); the square root and the banded square root are dense n x n matrices,
at most :data:`MAX_FACTORIZATION_STEPS` (4,096) steps; the closed forms are O(1) or O(log n) (identity, tree:
n at most :data:`MAX_CLOSED_FORM_STEPS`) or O(n) (square root: :data:`MAX_COEFFICIENTS`).

>>> A = prefix_sum_matrix(4); f = square_root_factorization(4)
>>> bool(np.allclose(f.B @ f.C, A)), f.C[:, 0]
(True, array([1.    , 0.5   , 0.375 , 0.3125]))
>>> [round(sensitivity(make_factorization(kind, 16).C) ** 2, 4) for kind in ("identity", "tree", "square_root")]
[1.0, 5.0, 1.9439]
>>> f = make_factorization("tree", 10_000)                 # no dense matrix: f.C would be refused
>>> f.sensitivity() ** 2, round(f.cyclic_sensitivity(1_000) ** 2, 9)   # one pass; ten over 1,000 batches
(14.0, 255.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import solve_triangular, toeplitz

from ...ground.events import ADD_REMOVE, Event, GaussianEvent, check_relation
from ...ground.door import count, door
from ...ground.validation import (
    check_array, check_choice, check_noise_multiplier, check_positive, check_positive_int, check_real_entries,
    check_sampling_rate
)
from .prefix_sums import (
    MAX_DENSE_STEPS, MAX_STRUCTURED_STEPS, Factorization, IdentityFactorization, TreeFactorization,
    participation_arrays, set_bits_below
)

__all__ = [
    "FACTORIZATIONS",
    "MAX_FACTORIZATION_STEPS",
    "MAX_STEPS_BY_KIND",
    "MAX_CLOSED_FORM_STEPS",
    "MAX_COEFFICIENTS",
    "MAX_GRAM_READS",
    "Factorization",
    "DenseFactorization",
    "IdentityFactorization",
    "TreeFactorization",
    "FactorizedGaussianEvent",
    "prefix_sum_matrix",
    "identity_factorization",
    "tree_factorization",
    "square_root_coefficients",
    "square_root_factorization",
    "banded_square_root_factorization",
    "make_factorization",
    "sensitivity",
    "gram_patterns",
    "cyclic_participations",
    "prefix_sum_error",
    "closed_form_error",
]

#: The factorisations :func:`make_factorization` builds.
FACTORIZATIONS = ("identity", "tree", "tree_efficient", "square_root", "banded")
#: The most steps of a dense factorisation (the square root, the banded one, :func:`prefix_sum_matrix`, and the
#: dense B and C of the others): n x n float64 matrices, 8 n^2 bytes each, and an O(n^3) Gram matrix C^T C.
MAX_FACTORIZATION_STEPS = MAX_DENSE_STEPS
#: The most steps :func:`make_factorization` builds each kind for.
MAX_STEPS_BY_KIND = {"identity": MAX_STRUCTURED_STEPS, "tree": MAX_STRUCTURED_STEPS,
                     "tree_efficient": MAX_STRUCTURED_STEPS, "square_root": MAX_DENSE_STEPS, "banded": MAX_DENSE_STEPS}
#: The largest n of :func:`closed_form_error` for the identity and the tree (O(1) and O(log n) integer work; every
#: integer up to 2^53 is a float64).
MAX_CLOSED_FORM_STEPS = 2 ** 53
#: The most square-root coefficients computed at once (an O(n) array: 80 MB, well under a second).
MAX_COEFFICIENTS = 10_000_000
#: The most entries of C^T C that :func:`sensitivity` sums over a dense C's patterns (sum of squared pattern
#: lengths), about a second of work.
MAX_GRAM_READS = 100_000_000

_FLOAT_MAX = np.finfo(float).max


@dataclass(frozen=True, eq=False)
class DenseFactorization(Factorization):
    """:math:`A = BC` held as dense matrices: ``B`` (n x m) decodes the prefix sums from the m noisy rows of
    ``C G``. The square root and the banded square root (n at most :data:`MAX_FACTORIZATION_STEPS`)."""

    name: str
    B: np.ndarray
    C: np.ndarray

    @property
    def steps(self) -> int:
        return self.C.shape[1]

    @property
    def rows(self) -> int:
        return self.C.shape[0]

    def _single_sensitivity(self):
        return sensitivity(self.C)

    def _pattern_sensitivity(self, flat, labels, count):
        return sensitivity(self.C, gram_patterns(self.steps, flat, labels, count))


def dense_steps(kind):
    """The contract of n for a dense ``kind``: an integer from 1 to :data:`MAX_FACTORIZATION_STEPS`, refused past
    it with the memory the matrices would take."""
    def check(n, name):
        n = check_positive_int(n, name)
        if n > MAX_DENSE_STEPS:
            gib = f"{8 * n * n / 2 ** 30:.3g} GiB at {name} = {n:,}"
            why = (f"it is a dense n x n matrix (8 n^2 bytes: {gib})" if kind == "the prefix-sum matrix" else
                   f"its B and C are dense n x n matrices (8 n^2 bytes each: {gib}) and its multi-pass "
                   f"sensitivity needs the n x n Gram matrix C^T C (O(n^3) time)")
            raise ValueError(f"{name} must be at most {MAX_DENSE_STEPS:,} for {kind}: {why}; got {name} = {n:,}. The "
                             f"tree and the identity (make_factorization) need no dense matrix: up to "
                             f"{MAX_STRUCTURED_STEPS:,} steps")
        return n
    return check


@door(n=dense_steps("the prefix-sum matrix"))
def prefix_sum_matrix(n):
    """A, the n x n lower-triangular matrix of ones: row t of ``A @ G`` is :math:`g_0 + \\dots + g_t`.
    Dense: n at most :data:`MAX_FACTORIZATION_STEPS`."""
    return np.tril(np.ones((n, n)))


def identity_factorization(n):
    """C = I, B = A: each gradient gets its own noise (noisy SGD); error n(n+1)/2 per unit variance.
    No dense matrix (:class:`~dpedu.textbook.learners.prefix_sums.IdentityFactorization`): n up to 1,000,000."""
    return IdentityFactorization(n)


def tree_factorization(n, estimator="naive"):
    r"""The binary tree: one row of C per complete dyadic node (its leaves' sum). Each leaf is in at most
    :math:`\lceil\log_2(n+1)\rceil` nodes. No dense matrix
    (:class:`~dpedu.textbook.learners.prefix_sums.TreeFactorization`): n up to 1,000,000.

    ``estimator="naive"`` sums the nodes of the dyadic decomposition of :math:`[0, t]` (at most one per
    level); ``"efficient"`` first replaces each node by the minimum-variance combination of its own noisy sum
    and its two children's estimates (Honaker 2015), using only complete subtrees, so it stays causal.
    """
    return TreeFactorization(n, estimator)


def square_root_coefficients(n):
    r""":math:`r_k = \binom{2k}{k}/4^k` for k < n, by :math:`r_k = r_{k-1}(2k-1)/(2k)` (no overflow); n at most
    :data:`MAX_COEFFICIENTS`."""
    n = check_positive_int(n, "n", maximum=MAX_COEFFICIENTS)
    k = np.arange(1, n, dtype=float)
    return np.cumprod(np.concatenate([[1.0], (2.0 * k - 1.0) / (2.0 * k)]))


@door(n=dense_steps("the square root"))
def square_root_factorization(n):
    """B = C = the lower-triangular Toeplitz square root of A (C @ C == A exactly); dense, n at most 4,096.

    Column 0 of C holds the coefficients :math:`r_k` (:func:`square_root_coefficients`), each diagonal one of
    them: :math:`C_{ij} = r_{i-j}` on and below the diagonal, 0 above (docs/math.md §25.5)."""
    C = toeplitz(square_root_coefficients(n), np.zeros(n))   # column r, row (r_0, 0, ...)
    return DenseFactorization("square_root", C.copy(), C)


@door(n=dense_steps("the banded square root"), bands=count)
def banded_square_root_factorization(n, bands):
    """C: the square root's first ``bands`` diagonals (zero beyond); B = A C⁻¹ (C is invertible: unit diagonal).
    Dense (C⁻¹ is not banded): n at most 4,096.

    With ``bands`` at most the minimum separation b, a record's columns of C never overlap across its
    participations, so the multi-epoch sensitivity is sqrt(k) times the single-participation one.
    """
    column = np.zeros(n)
    column[:bands] = square_root_coefficients(min(bands, n))
    C = toeplitz(column, np.zeros(n))
    B = solve_triangular(C, prefix_sum_matrix(n).T, lower=True, trans="T").T   # B C = A  <=>  C^T B^T = A^T
    return DenseFactorization("banded", B, C)


def make_factorization(kind, n, *, bands=None):
    """The factorisation ``kind`` (one of :data:`FACTORIZATIONS`) for ``n`` steps, at most
    ``MAX_STEPS_BY_KIND[kind]``; ``bands`` (default 4) only for ``"banded"``, refused for the others.

    >>> make_factorization("tree", 16, bands=3)
    Traceback (most recent call last):
    ...
    ValueError: bands is only for kind='banded' (the diagonals kept); got bands=3 with kind='tree'
    """
    check_choice(kind, "kind", FACTORIZATIONS)
    if bands is not None and kind != "banded":
        raise ValueError(f"bands is only for kind='banded' (the diagonals kept); got bands={bands!r} with "
                         f"kind={kind!r}")
    if kind == "identity":
        return identity_factorization(n)
    if kind in ("tree", "tree_efficient"):
        return tree_factorization(n, "naive" if kind == "tree" else "efficient")
    if kind == "square_root":
        return square_root_factorization(n)
    return banded_square_root_factorization(n, 4 if bands is None else bands)


def cyclic_participations(n, min_separation):
    """The participation patterns of fixed batches visited in order: record j's steps are j, j+b, j+2b, ...
    (b = ``min_separation``, the number of batches per epoch); n at most 1,000,000. For a factorisation,
    ``f.cyclic_sensitivity(b)`` gives their sensitivity without this list."""
    n = check_positive_int(n, "n", maximum=MAX_STRUCTURED_STEPS)
    b = check_positive_int(min_separation, "min_separation", maximum=n)
    return [np.arange(j, n, b) for j in range(b)]


def matrix_or_factorization(C, name):
    """The contract of C: a :class:`Factorization` as it is, or a real 2-D matrix (a float array)."""
    if isinstance(C, Factorization):
        return C
    if isinstance(C, (str, bytes)) or C is None:
        raise TypeError(f"{name} must be a matrix or a Factorization; got {type(C).__name__} {C!r}")
    return check_array(check_real_entries(C, name), name, ndim=2)


def gram_patterns(steps, flat, labels, count):
    """The patterns of :func:`participation_arrays` (``flat, labels, count``) as a list of sorted arrays of steps,
    for the multi-pass sensitivity of a dense C with ``steps`` columns (docs/math.md §25.4). That sensitivity forms
    the ``steps`` x ``steps`` Gram matrix C^T C (``steps`` at most :data:`MAX_FACTORIZATION_STEPS`) and sums as many
    of its entries as the patterns' squared lengths add up to (at most :data:`MAX_GRAM_READS`); refused past either.

    >>> gram_patterns(3, *participation_arrays([[2, 0], [1]], 3))
    [array([0, 2]), array([1])]
    """
    if steps > MAX_DENSE_STEPS:
        raise ValueError(f"C has {steps:,} columns; a multi-pass sensitivity of a dense C reads its n x n Gram "
                         f"matrix, so n must be at most {MAX_DENSE_STEPS:,} (the tree and the identity of "
                         f"make_factorization need none)")
    lengths = np.bincount(labels, minlength=count)
    reads = int(np.sum(lengths.astype(np.int64) ** 2))
    if reads > MAX_GRAM_READS:
        raise ValueError(f"participations would read {reads:,} entries of C^T C; at most {MAX_GRAM_READS:,} (the "
                         f"sum of the patterns' squared lengths)")
    return np.split(flat, np.cumsum(lengths)[:-1])


def dense_participations(arguments):
    """The patterns of a dense C, checked (:func:`participation_arrays`, :func:`gram_patterns`) and sorted."""
    C, participations = arguments["C"], arguments["participations"]
    if participations is not None and not isinstance(C, Factorization):
        steps = C.shape[1]
        arguments["participations"] = gram_patterns(steps, *participation_arrays(participations, steps))


@door(dense_participations, C=matrix_or_factorization)
def sensitivity(C, participations=None):
    r"""L2 sensitivity of C G per unit clip norm: the largest, over participation patterns π, of √(Σ abs((CᵀC)[s, t])).

    The sum runs over s, t in π: :math:`\max_\pi \sqrt{\sum_{s,t\in\pi} |(C^\top C)_{st}|}`.

    ``C``: a real 2-D matrix, or a :class:`Factorization` (then its own :meth:`~Factorization.sensitivity`, which
    for the tree and the identity needs no matrix). ``participations``: the steps each record may take part
    in (a non-empty list of non-empty arrays of distinct integer steps); ``None`` is single participation
    (every record in one step), where this is the largest column norm of C. For several steps the bound takes
    the worst signs of the gradients' inner products; it is exact when :math:`C^\top C \ge 0` entrywise
    (Choquette-Choo et al. 2023, Thm 2), as for every factorisation here (docs/math.md §25.4). A dense C with
    patterns: at most :data:`MAX_FACTORIZATION_STEPS` columns and :data:`MAX_GRAM_READS` Gram entries.

    The matrix is first scaled by a power of two, :math:`C = 2^e S` with every :math:`|S_{ij}| < 1`: exact, and
    no square of an entry overflows, nor does one that matters underflow. The result is :math:`2^e` times the
    sensitivity of S, refused past the largest float.

    >>> sensitivity(np.eye(3), [])
    Traceback (most recent call last):
    ...
    ValueError: participations must hold at least one pattern (None: single participation)
    """
    if isinstance(C, Factorization):       # the tree and the identity need no matrix
        return C.sensitivity(participations)
    e = math.frexp(np.max(np.abs(C)))[1]   # C = 2^e S, every |S_ij| < 1
    S = np.ldexp(C, -e)
    if participations is None:             # one step each: the largest column norm
        root = math.sqrt(np.max(np.sum(S**2, axis=0)))
    else:
        gram = np.abs(S.T @ S)
        root = max(math.sqrt(gram[np.ix_(p, p)].sum()) for p in participations)
    if math.frexp(root)[1] + e > 1024:     # 2^e root >= 2^1024, past the largest float
        raise ValueError("the sensitivity of C exceeds the largest float "
                         "(about 1.8e308): rescale C")
    return math.ldexp(root, e)             # 2^e times the sensitivity of S


def prefix_sum_error(factorization, participations=None, noise_multiplier=1.0):
    r"""Total squared error of the n prefix sums, :math:`\sigma^2\lVert B\rVert_F^2` with
    :math:`\sigma = z\cdot\mathrm{sens}(C)` (unit clip norm): the error at equal privacy. ``factorization``: a
    :class:`Factorization` (:func:`make_factorization`); a result past the largest float is refused, naming
    ``noise_multiplier`` and its largest value here.

    >>> prefix_sum_error(make_factorization("tree", 10_000))       # 14 * 64,613: no dense matrix
    904582.0
    """
    if not isinstance(factorization, Factorization):
        raise TypeError(f"factorization must be a Factorization (make_factorization(kind, n)); got "
                        f"{type(factorization).__name__} {factorization!r}")
    z = check_positive(noise_multiplier, "noise_multiplier")
    scale = factorization.sensitivity(participations) ** 2 * factorization.squared_error()
    error = z * z * scale
    if not math.isfinite(error):
        raise ValueError(f"noise_multiplier={z!r} makes the error z^2 sens^2 ||B||_F^2 exceed the largest float; "
                         f"here noise_multiplier must be at most {math.sqrt(_FLOAT_MAX / scale):.6g}")
    return float(error)


def closed_form_error(kind, n):
    r"""``(sens^2, total squared error)`` at unit noise multiplier, single participation, from the formulas of
    docs/math.md §25.5: identity (1, n(n+1)/2); tree with the naive estimator
    (:math:`\lceil\log_2(n+1)\rceil`, that times :math:`\sum_{t=1}^n \mathrm{popcount}(t)`, counted bit by bit in
    O(log n)); square root (:math:`\sum_{k<n} r_k^2`, that times :math:`\sum_k (n-k) r_k^2`, O(n)). n at most
    :data:`MAX_CLOSED_FORM_STEPS` (identity, tree) or :data:`MAX_COEFFICIENTS` (square root).

    >>> closed_form_error("identity", 1024)[1] / 1024, round(closed_form_error("square_root", 1024)[1] / 1024, 2)
    (512.5, 9.67)
    >>> closed_form_error("tree", 10 ** 9)                     # 30 levels, 14,846,928,141 set bits
    (30.0, 445407844230.0)
    """
    check_choice(kind, "kind", ("identity", "tree", "square_root"))
    n = check_positive_int(n, "n", maximum=MAX_COEFFICIENTS if kind == "square_root" else MAX_CLOSED_FORM_STEPS)
    if kind == "identity":
        return 1.0, n * (n + 1) / 2
    if kind == "tree":
        depth = n.bit_length()                         # = ceil(log2(n + 1))
        return float(depth), float(depth * sum(set_bits_below(n, h) for h in range(depth)))
    r2 = square_root_coefficients(n) ** 2
    return float(r2.sum()), float(r2.sum() * np.sum((n - np.arange(n)) * r2))


@dataclass(frozen=True, repr=False)
class FactorizedGaussianEvent(Event):
    r"""One release of :math:`CG + Z`, :math:`Z\sim\mathcal N(0, z^2C_{\rm clip}^2 I)`, for a whole run.

    ``sensitivity`` is that of :math:`CG` per unit clip norm (:func:`sensitivity`, under the run's
    participation). The release is a Gaussian mechanism with multiplier ``noise_multiplier / sensitivity``
    (docs/math.md §25.6): :attr:`gaussian_equivalent` is that event, and every accountant accounts it
    through :func:`dpedu.ground.events.add_remove_equivalent`. With Poisson sampling (``sampling_rate`` < 1) no
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
