r"""What every factorisation :math:`A = BC` of the prefix sums offers, and the identity and the binary tree
applied without a dense matrix, for runs of up to :data:`MAX_STRUCTURED_STEPS` steps (docs/math.md §25.8).

Training needs three things from a factorisation over T steps, d coordinates:

* its noise :math:`BZ`, :math:`Z \sim \mathcal N(0, \sigma^2)` of shape (rows of C, d): :meth:`Factorization.noise`;
* the sensitivity of :math:`CG` for a participation pattern: :meth:`Factorization.sensitivity`;
* its error :math:`\lVert B\rVert_F^2`: :meth:`Factorization.squared_error`.

The tree (Dwork, Naor, Pitassi & Rothblum 2010; Chan, Shi & Song 2011; DP-FTRL, Kairouz et al. 2021) and the
identity give all three in :math:`O(Td\log T)` time and :math:`O(Td)` memory: C's entries are 0 or 1, so
:math:`(C^\top C)_{st}` counts the nodes holding both s and t, and a pattern's squared sensitivity is
:math:`\sum_{\rm node}\lvert{\rm node}\cap\pi\rvert^2`; row t of :math:`BZ` adds the noise of the nodes of the dyadic
decomposition of :math:`[0, t]`, one per set bit of t + 1. Their dense B and C are built only for at most
:data:`MAX_DENSE_STEPS` steps (the tests compare both ways).

>>> f = TreeFactorization(10_000)
>>> f.rows, f.sensitivity() ** 2, f.squared_error()
(19995, 14.0, 64613.0)
>>> f.cyclic_sensitivity(100) ** 2                  # 100 fixed batches: each record in 100 steps, one tree
14349.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...ground.validation import (
    MAX_STEPS, check_choice, check_noise_scale, check_nonnegative, check_positive_int, check_rng
)

__all__ = [
    "MAX_DENSE_STEPS",
    "MAX_STRUCTURED_STEPS",
    "MAX_PARTICIPATION_ENTRIES",
    "MAX_NOISE_ENTRIES",
    "Factorization",
    "IdentityFactorization",
    "TreeFactorization",
    "participation_arrays",
    "set_bits_below",
]

#: The most steps a factorisation is built for as dense matrices: B and C are (up to 2n) x n float64 arrays,
#: 8 n^2 bytes each (128 MiB at 4,096), and a multi-pass sensitivity reads the n x n Gram matrix C^T C
#: (an O(n^3) product). The square root and the banded square root exist only in this form.
MAX_DENSE_STEPS = 4096
#: The most steps of the identity and the tree, which need no dense matrix: :data:`~dpedu.ground.validation.MAX_STEPS`
#: (a training run's own limit); their sensitivity is O(T log T) and their noise O(T d log T) time, O(T d) memory.
MAX_STRUCTURED_STEPS = MAX_STEPS
#: The most step indices a list of participation patterns may hold in all (each pattern is read once per tree level).
MAX_PARTICIPATION_ENTRIES = 10_000_000
#: The most noise entries (rows of C plus steps, times d) :meth:`Factorization.noise` draws at once (2 GiB of float64).
MAX_NOISE_ENTRIES = 1 << 28


def participation_arrays(participations, steps):
    """Participation patterns as ``(flat, labels, count)``: every pattern's steps, sorted, one pattern after the
    other, and for each entry the index of its pattern.

    ``participations`` is a non-empty sequence of non-empty 1-D arrays of distinct integer steps in
    [0, ``steps``); booleans, floats (``1.5`` and ``1.0`` alike), strings and complex numbers are refused by type,
    anything else by value, naming ``participations``. At most :data:`MAX_PARTICIPATION_ENTRIES` entries in all.

    >>> participation_arrays([[2, 0], [1]], 3)
    (array([0, 2, 1]), array([0, 0, 1]), 2)
    """
    if isinstance(participations, (str, bytes)) or (isinstance(participations, np.ndarray)
                                                    and participations.ndim < 2) \
            or not hasattr(participations, "__iter__"):
        raise TypeError(f"participations must be a sequence of arrays of steps (one per pattern); got "
                        f"{type(participations).__name__}")
    flat, labels, total = [], [], 0
    for i, pattern in enumerate(participations):
        try:
            array = np.asarray(pattern)
        except ValueError:
            raise ValueError(f"participations[{i}] must be a 1-D array of steps; it is ragged") from None
        if array.ndim != 1 or array.size == 0:
            raise ValueError(f"participations[{i}] must be a non-empty 1-D array of steps; got shape {array.shape}")
        if array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.integer):
            kind = "booleans" if array.dtype == np.bool_ else f"dtype {array.dtype}"
            raise TypeError(f"participations[{i}] must hold integer steps; got {kind}")
        array = np.sort(array.astype(np.int64))
        if array[0] < 0 or array[-1] >= steps:
            raise ValueError(f"participations[{i}] must hold steps in [0, {steps}); got a step "
                             f"{array[0] if array[0] < 0 else array[-1]}")
        if np.any(array[1:] == array[:-1]):
            raise ValueError(f"participations[{i}] repeats a step: a record takes part in a step at most once")
        total += array.size
        if total > MAX_PARTICIPATION_ENTRIES:
            raise ValueError(f"participations must hold at most {MAX_PARTICIPATION_ENTRIES:,} steps in all "
                             "(dpedu.textbook.learners.prefix_sums.MAX_PARTICIPATION_ENTRIES)")
        flat.append(array)
        labels.append(np.full(array.size, i, dtype=np.int64))
    if not flat:
        raise ValueError("participations must hold at least one pattern (None: single participation)")
    return np.concatenate(flat), np.concatenate(labels), len(flat)


def _cyclic_arrays(steps, b):
    """:func:`participation_arrays` of the b cyclic patterns j, j + b, j + 2b, ... < steps, without a list."""
    labels = np.arange(steps, dtype=np.int64) % b
    order = np.argsort(labels, kind="stable")             # pattern by pattern, each in increasing order
    return order.astype(np.int64), labels[order], b


def set_bits_below(n, bit):
    """How many integers t in [1, n] have ``bit`` set: the count of height-``bit`` nodes in the dyadic
    decompositions of [0, t), t = 1..n (O(1))."""
    period = 1 << (bit + 1)
    return (n + 1) // period * (period >> 1) + max(0, (n + 1) % period - (period >> 1))


class Factorization:
    """:math:`A = BC` for ``steps`` steps: ``B`` (steps x rows) decodes the prefix sums from the ``rows`` noisy
    rows of :math:`CG` (docs/math.md §25.4).

    Attributes: ``name``, ``steps``, ``rows``, and the dense ``B`` and ``C`` (refused, by name, past
    :data:`MAX_DENSE_STEPS`). Methods: :meth:`noise`, :meth:`sensitivity`, :meth:`squared_error`.
    """

    def noise(self, std, d, rng=None):
        r""":math:`BZ`, shape (steps, d), with :math:`Z` = ``rng.normal(0, std, size=(rows, d))`` (that draw, in that
        order: equal to ``B @ Z``). At most :data:`MAX_NOISE_ENTRIES` entries of Z and BZ together."""
        std = check_noise_scale(check_nonnegative(std, "std"), f"std = {std!r}", "a smaller std")
        d = check_positive_int(d, "d")
        if (self.rows + self.steps) * d > MAX_NOISE_ENTRIES:
            raise ValueError(f"d={d:,} with {self.steps:,} steps needs {(self.rows + self.steps) * d:,} noise entries; "
                             f"at most {MAX_NOISE_ENTRIES:,} (dpedu.textbook.learners.prefix_sums.MAX_NOISE_ENTRIES) are drawn "
                             f"at once")
        return self._noise(check_rng(rng).normal(0.0, std, size=(self.rows, d)))

    def _noise(self, Z):
        return self.B @ Z

    def sensitivity(self, participations=None):
        r"""L2 sensitivity of :math:`CG` per unit clip norm: :math:`\max_\pi\sqrt{\sum_{s,t\in\pi}|(C^\top C)_{st}|}`
        over the patterns ``participations`` (checked by :func:`participation_arrays`); ``None``: single
        participation, the largest column norm of C (docs/math.md §25.4)."""
        if participations is None:
            return self._single_sensitivity()
        return self._pattern_sensitivity(*participation_arrays(participations, self.steps))

    def cyclic_sensitivity(self, min_separation):
        """:meth:`sensitivity` for b = ``min_separation`` fixed batches visited in order (record j in steps j, j + b,
        j + 2b, ...), without a list of b patterns; b = ``steps`` is single participation."""
        b = check_positive_int(min_separation, "min_separation", maximum=self.steps)
        if b == self.steps:
            return self._single_sensitivity()
        return self._pattern_sensitivity(*_cyclic_arrays(self.steps, b))

    def squared_error(self):
        r""":math:`\lVert B\rVert_F^2`: the total squared error of the prefix sums per unit noise variance."""
        return float(np.sum(self.B ** 2))


def _check_structured_steps(steps):
    steps = check_positive_int(steps, "n")
    if steps > MAX_STRUCTURED_STEPS:
        raise ValueError(f"n must be at most {MAX_STRUCTURED_STEPS:,} steps (MAX_STRUCTURED_STEPS, a training run's "
                         f"own limit dpedu.ground.validation.MAX_STEPS; the noise takes O(n d) memory); got {steps:,}")
    return steps


def _dense_refusal(name, steps, what):
    gib = 8 * steps * (2 * steps if what == "C" and name.startswith("tree") else steps) / 2 ** 30
    return ValueError(f"the dense {what} of the {name} factorisation is built for at most {MAX_DENSE_STEPS:,} steps "
                      f"(here {steps:,}: {gib:.3g} GiB); use noise(), sensitivity() and squared_error(), which need "
                      f"no dense matrix")


@dataclass(frozen=True)
class IdentityFactorization(Factorization):
    r"""C = I, B = A: each step's gradient gets its own noise (noisy SGD without sampling); error T(T+1)/2,
    a pattern's squared sensitivity its length. ``steps`` at most :data:`MAX_STRUCTURED_STEPS`."""

    steps: int

    def __post_init__(self):
        object.__setattr__(self, "steps", _check_structured_steps(self.steps))

    name = "identity"

    @property
    def rows(self):
        return self.steps

    @cached_property
    def B(self):
        if self.steps > MAX_DENSE_STEPS:
            raise _dense_refusal(self.name, self.steps, "B")
        return np.tril(np.ones((self.steps, self.steps)))

    @cached_property
    def C(self):
        if self.steps > MAX_DENSE_STEPS:
            raise _dense_refusal(self.name, self.steps, "C")
        return np.eye(self.steps)

    def _noise(self, Z):
        return np.cumsum(Z, axis=0)

    def _single_sensitivity(self):
        return 1.0

    def _pattern_sensitivity(self, flat, labels, count):
        return math.sqrt(int(np.bincount(labels, minlength=count).max()))

    def squared_error(self):
        return self.steps * (self.steps + 1) / 2


@dataclass(frozen=True)
class TreeFactorization(Factorization):
    r"""The binary tree over ``steps`` leaves: one row of C per complete dyadic node [s, s + 2^h) (heights
    ascending, then starts), (T >> h) nodes of height h, :math:`2T - \mathrm{popcount}(T)` rows in all.

    ``estimator="naive"`` sums the noisy nodes of the dyadic decomposition of [0, t]; ``"efficient"`` first
    replaces each node by the inverse-variance combination of its noisy sum and its children's estimates
    (Honaker 2015; variance :math:`v_h = 2v_{h-1}/(1 + 2v_{h-1})`, :math:`v_0 = 1`), complete subtrees only, so it
    stays causal. Row t of B is then the sum of the estimates of the nodes of [0, t]; C is the same for both.
    """

    steps: int
    estimator: str = "naive"

    def __post_init__(self):
        object.__setattr__(self, "steps", _check_structured_steps(self.steps))
        check_choice(self.estimator, "estimator", ("naive", "efficient"))

    @property
    def name(self):
        return "tree" if self.estimator == "naive" else "tree_efficient"

    @property
    def heights(self):
        """The number of levels, :math:`\\lfloor\\log_2 T\\rfloor + 1 = \\lceil\\log_2(T + 1)\\rceil`."""
        return self.steps.bit_length()

    @property
    def rows(self):
        return 2 * self.steps - bin(self.steps).count("1")

    def _offsets(self):
        counts = [self.steps >> h for h in range(self.heights)]
        return counts, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def _weights(self):
        """Per height: the weight of a node's own noisy sum in its estimate, and the estimate's variance."""
        weights, variances = [1.0], [1.0]
        for _ in range(1, self.heights):
            children = 2.0 * variances[-1]
            weights.append(children / (1.0 + children) if self.estimator == "efficient" else 1.0)
            variances.append(children / (1.0 + children) if self.estimator == "efficient" else 1.0)
        return weights, variances

    def _noise(self, Z):
        counts, offsets = self._offsets()
        if self.estimator == "efficient":             # node estimates, level by level, in place
            weights, _ = self._weights()
            for h in range(1, self.heights):
                below = Z[offsets[h - 1]:offsets[h - 1] + 2 * counts[h]]
                Z[offsets[h]:offsets[h + 1]] = ((1.0 - weights[h]) * (below[0::2] + below[1::2])
                                                + weights[h] * Z[offsets[h]:offsets[h + 1]])
        lengths = np.arange(1, self.steps + 1, dtype=np.int64)   # row t decomposes [0, t + 1)
        out = np.zeros((self.steps, Z.shape[1]))
        for h in range(self.heights):
            rows = np.flatnonzero(lengths >> h & 1)
            out[rows] += Z[offsets[h] + ((lengths[rows] >> (h + 1)) << 1)]
        return out

    def _single_sensitivity(self):
        return math.sqrt(self.heights)                    # leaf 0 lies in one complete node per height

    def _pattern_sensitivity(self, flat, labels, count):
        squared = np.zeros(count)                         # flat: by pattern, then step (participation_arrays)
        for h in range(self.heights):
            node = flat >> h
            keep = node < (self.steps >> h)               # complete nodes only
            node, label = node[keep], labels[keep]
            if node.size == 0:
                continue
            new = np.ones(node.size, dtype=bool)
            new[1:] = (node[1:] != node[:-1]) | (label[1:] != label[:-1])
            starts = np.flatnonzero(new)
            runs = np.diff(np.append(starts, node.size)).astype(float)
            squared += np.bincount(label[starts], weights=runs * runs, minlength=count)
        return math.sqrt(float(squared.max()))

    def squared_error(self):
        _, variances = self._weights()
        return float(sum(v * set_bits_below(self.steps, h) for h, v in enumerate(variances)))

    @cached_property
    def C(self):
        if self.steps > MAX_DENSE_STEPS:
            raise _dense_refusal(self.name, self.steps, "C")
        counts, offsets = self._offsets()
        C = np.zeros((self.rows, self.steps))
        for h in range(self.heights):
            for k in range(counts[h]):
                C[offsets[h] + k, k << h:(k + 1) << h] = 1.0
        return C

    @cached_property
    def B(self):
        r"""Row t: every noisy node's coefficient in the sum of the estimates of the nodes of [0, t]; a node of
        height h puts :math:`w_{h'}\prod_{j=h'+1}^{h}(1-w_j)` on each descendant of height h' (its recursion
        unrolled; :math:`w \equiv 1` for the naive estimator). Built entry by entry, as a check of :meth:`noise`."""
        if self.steps > MAX_DENSE_STEPS:
            raise _dense_refusal(self.name, self.steps, "B")
        _, offsets = self._offsets()
        weights, _ = self._weights()
        B = np.zeros((self.steps, self.rows))
        for t in range(self.steps):
            start, remaining = 0, t + 1                  # decompose [0, t] into dyadic nodes, largest first
            for h in range(remaining.bit_length() - 1, -1, -1):
                if not remaining >> h & 1:
                    continue
                k, coefficient = start >> h, 1.0
                for below in range(h, -1, -1):           # the node itself, then each level of its subtree
                    if coefficient == 0.0:
                        break
                    first = offsets[below] + (k << (h - below))
                    B[t, first:first + (1 << (h - below))] += coefficient * weights[below]
                    coefficient *= 1.0 - weights[below]
                start += 1 << h
        return B
