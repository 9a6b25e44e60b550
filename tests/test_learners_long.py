"""Long runs of the tree and the identity without a dense matrix (docs/math.md §25.8), and the size limits of the
dense factorisations and of every loop over a factorisation or closed form (issues 37 and 41)."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from conftest import benchmark_module

from dpedu.accountants import account
from dpedu.textbook.learners.factorization import (
    MAX_CLOSED_FORM_STEPS,
    MAX_COEFFICIENTS,
    MAX_FACTORIZATION_STEPS,
    FactorizedGaussianEvent,
    closed_form_error,
    cyclic_participations,
    make_factorization,
    prefix_sum_error,
    prefix_sum_matrix,
    sensitivity,
    square_root_coefficients,
)
from dpedu.textbook.learners.prefix_sums import MAX_STRUCTURED_STEPS, IdentityFactorization, TreeFactorization

STRUCTURED = ["identity", "tree", "tree_efficient"]


def _dense_pattern_sensitivity(C, patterns):
    """The definition, read off the dense Gram matrix: max over patterns of sqrt(sum |C^T C| over the pattern)."""
    gram = np.abs(C.T @ C)
    return max(math.sqrt(gram[np.ix_(p, p)].sum()) for p in patterns)


# --- the structured computations equal the dense matrices ------------------------------------------


@pytest.mark.parametrize("kind", STRUCTURED)
@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 31, 64, 100, 300])
def test_structured_noise_error_and_sensitivity_equal_the_dense_matrices(kind, n):
    f = make_factorization(kind, n)
    np.testing.assert_allclose(f.B @ f.C, prefix_sum_matrix(n), atol=1e-10)
    Z = np.random.default_rng(5).normal(0.0, 1.5, size=(f.rows, 3))
    np.testing.assert_allclose(f.noise(1.5, 3, 5), f.B @ Z, rtol=1e-12, atol=1e-12)   # same draw, same order
    assert f.squared_error() == pytest.approx(float(np.sum(f.B ** 2)), rel=1e-12)
    assert f.sensitivity() == pytest.approx(float(np.sqrt(np.max(np.sum(f.C ** 2, axis=0)))), rel=1e-14)
    for b in sorted({b for b in (1, 2, 3, n // 3, n) if 1 <= b <= n}):
        patterns = cyclic_participations(n, b)
        expected = _dense_pattern_sensitivity(f.C, patterns)
        assert f.cyclic_sensitivity(b) == pytest.approx(expected, rel=1e-12)
        assert f.sensitivity(patterns) == pytest.approx(expected, rel=1e-12)
        assert sensitivity(f, patterns) == pytest.approx(expected, rel=1e-12)
    rng = np.random.default_rng(n)                       # irregular patterns of distinct steps
    patterns = [rng.choice(n, size=rng.integers(1, n + 1), replace=False) for _ in range(5)]
    assert f.sensitivity(patterns) == pytest.approx(_dense_pattern_sensitivity(f.C, patterns), rel=1e-12)


def _tree_node_counts(steps, pattern):
    """sum over the complete dyadic nodes of |node & pattern|^2, node by node (the definition, no matrix)."""
    marks = np.zeros(steps, dtype=np.int64)
    marks[np.asarray(pattern)] = 1
    total, height = 0, 0
    while (1 << height) <= steps:
        size = 1 << height
        counts = marks[:steps // size * size].reshape(-1, size).sum(axis=1)
        total += int(np.sum(counts ** 2))
        height += 1
    return total


def test_ten_thousand_steps_without_a_dense_matrix():
    steps = 10_000
    f = make_factorization("tree", steps)
    with pytest.raises(ValueError, match="dense C of the tree factorisation is built for at most 4,096 steps"):
        f.C
    assert f.sensitivity() ** 2 == 14 == math.ceil(math.log2(steps + 1))
    for b in (100, 1_000, 3_333):
        worst = max(_tree_node_counts(steps, np.arange(j, steps, b)) for j in range(b))
        assert f.cyclic_sensitivity(b) ** 2 == pytest.approx(worst, rel=1e-14)
    assert f.squared_error() == sum(bin(t).count("1") for t in range(1, steps + 1))
    # the noise, row by row from the same draw: the nodes of the dyadic decomposition of [0, t], largest first
    Z = np.random.default_rng(3).normal(0.0, 2.0, size=(f.rows, 2))
    noise = f.noise(2.0, 2, 3)
    offsets = np.concatenate([[0], np.cumsum([steps >> h for h in range(steps.bit_length())])])
    for t in (0, 1, 2, 4094, 8191, 9998, 9999):
        start, expected = 0, np.zeros(2)
        for height in range((t + 1).bit_length() - 1, -1, -1):
            if (t + 1) >> height & 1:
                expected += Z[offsets[height] + (start >> height)]
                start += 1 << height
        np.testing.assert_allclose(noise[t], expected, rtol=1e-12)
    identity = make_factorization("identity", steps)
    assert identity.sensitivity(cyclic_participations(steps, 100)) == 10.0
    np.testing.assert_allclose(identity.noise(1.0, 2, 4),
                               np.cumsum(np.random.default_rng(4).normal(size=(steps, 2)), axis=0))


def test_the_efficient_tree_at_ten_thousand_steps_matches_its_variances():
    f = make_factorization("tree_efficient", 10_000)
    naive = make_factorization("tree", 10_000)
    assert f.sensitivity() == naive.sensitivity()               # the same C
    assert f.squared_error() < naive.squared_error()
    noise = np.stack([f.noise(1.0, 1, seed)[[4095, 9999], 0] for seed in range(400)])
    # row 4095 is one node of height 12: its estimate's variance is v_12
    v = 1.0
    for _ in range(12):
        v = 2 * v / (1 + 2 * v)
    assert np.var(noise[:, 0]) == pytest.approx(v, rel=0.25)


def test_the_tree_at_a_million_steps():
    f = TreeFactorization(MAX_STRUCTURED_STEPS)
    assert f.sensitivity() ** 2 == pytest.approx(20)
    assert f.squared_error() == closed_form_error("tree", MAX_STRUCTURED_STEPS)[1] / 20
    with pytest.raises(ValueError, match="at most 1,000,000 steps"):
        TreeFactorization(MAX_STRUCTURED_STEPS + 1)
    with pytest.raises(ValueError, match="at most 1,000,000 steps"):
        IdentityFactorization(MAX_STRUCTURED_STEPS + 1)


# --- accounting beside dp_accounting --------------------------------------------------------------


def test_tree_aggregation_at_ten_thousand_steps_and_more_matches_dp_accounting():
    pytest.importorskip("dp_accounting")
    with benchmark_module("bench_long_trees") as bench:
        assert min(steps for _, steps in bench.LONG_TREE_SETTINGS) >= 10_000
        for z, steps in bench.LONG_TREE_SETTINGS:
            ours, pld, theirs, _, _ = bench.tree_epsilons(z, steps, 1e-5)
            assert ours == pytest.approx(theirs, rel=1e-9)
            assert pld < ours
            event = FactorizedGaussianEvent(z, make_factorization("tree", steps).sensitivity())
            assert event.sensitivity ** 2 == pytest.approx(steps.bit_length())
            assert account([(event, 1)], "rdp", delta=1e-5).epsilon == ours


# --- closed forms and loops: bounded, and quick inside the bound ------------------------------------


def test_closed_forms_are_quick_at_any_allowed_size():
    def popcount_sum(n):                                # sum of popcount(t), t = 1..n, by the highest bit
        if n <= 0:
            return 0
        high = n.bit_length() - 1
        return high * (1 << high) // 2 + (n - (1 << high) + 1) + popcount_sum(n - (1 << high))

    start = time.perf_counter()
    for n in (10 ** 9, 10 ** 12, MAX_CLOSED_FORM_STEPS):
        depth, total = closed_form_error("tree", n)
        assert depth == n.bit_length() and total == pytest.approx(depth * popcount_sum(n), rel=1e-15)
    assert closed_form_error("identity", MAX_CLOSED_FORM_STEPS)[1] == pytest.approx(2.0 ** 105, rel=1e-15)
    assert time.perf_counter() - start < 30.0            # a hang guard (issue 41: 10**9 ran past 30 s), not a timing
    assert closed_form_error("tree", 10 ** 5)[1] == 17 * sum(bin(t).count("1") for t in range(1, 10 ** 5 + 1))


def test_square_root_coefficients_keep_the_recurrence():
    r = square_root_coefficients(2000)
    loop = np.ones(2000)
    for k in range(1, 2000):
        loop[k] = loop[k - 1] * (2 * k - 1) / (2 * k)
    np.testing.assert_allclose(r, loop, rtol=1e-13)


@pytest.mark.parametrize("call, match", [
    (lambda: make_factorization("square_root", MAX_FACTORIZATION_STEPS + 1),
     r"at most 4,096 for the square root: its B and C are dense n x n matrices .* GiB"),
    (lambda: make_factorization("banded", 10_000, bands=4),
     r"at most 4,096 for the banded square root: .*dense.*0.745 GiB at n = 10,000.*O\(n\^3\)"),
    (lambda: prefix_sum_matrix(10 ** 5), r"n must be at most 4,096 for the prefix-sum matrix: .*74.5 GiB"),
    (lambda: make_factorization("tree", 10 ** 7), "n must be at most 1,000,000 steps"),
    (lambda: make_factorization("identity", 20_000).B, "dense B of the identity factorisation"),
    (lambda: closed_form_error("tree", MAX_CLOSED_FORM_STEPS + 1), "n must be at most"),
    (lambda: closed_form_error("square_root", MAX_COEFFICIENTS + 1), "n must be at most 10,000,000"),
    (lambda: square_root_coefficients(10 ** 9), "n must be at most 10,000,000"),
    (lambda: cyclic_participations(10 ** 7, 10), "n must be at most 1,000,000"),
    (lambda: sensitivity(np.ones((2, 5000)), [[0, 1]]), "at most 4,096"),
    (lambda: make_factorization("tree", 100).noise(1.0, 10 ** 7), "noise entries"),
    (lambda: sensitivity(make_factorization("tree", 10_000), [np.arange(10_000)] * 1001), "at most 10,000,000 steps"),
], ids=lambda value: getattr(value, "__name__", str(value))[:40])
def test_every_size_is_bounded_and_refused_with_its_reason(call, match):
    with pytest.raises(ValueError, match=match):          # refused before the work (or the allocation) starts
        call()


def test_prefix_sum_error_of_a_long_tree():
    f = make_factorization("tree", 10_000)
    assert prefix_sum_error(f) == 14 * 64_613
    assert prefix_sum_error(f, cyclic_participations(10_000, 1_000), noise_multiplier=2.0) == pytest.approx(
        4 * f.cyclic_sensitivity(1_000) ** 2 * 64_613)
