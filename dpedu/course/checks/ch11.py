"""Checks for the exercises of chapter 11: beyond DP-SGD.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math

import numpy as np

from .common import CheckFailed, call, checker, close, expect, passed, scalar, settings

__all__ = ["check_output_sensitivity", "check_square_root_coefficients", "check_factorization_sensitivity"]


@checker
def check_output_sensitivity(fn, *, seed=None):
    r"""``fn(n, regularization, lipschitz, relation)``: the L2 sensitivity of the regularised minimiser,
    :math:`L/(n\Lambda)` under ``"zero_out"`` and :math:`2L/(n\Lambda)` under ``"replace_one"``."""
    draw = settings(seed)
    cases = [(int(draw.integers(500, 5000)), float(10.0 ** -draw.integers(1, 4)), round(float(draw.uniform(0.5, 2.0)), 2)),
             (int(draw.integers(10_000, 60_000)), float(10.0 ** -draw.integers(3, 6)),
              math.sqrt(int(draw.integers(5, 30)))),
             (int(draw.integers(20, 100)), round(float(draw.uniform(1.5, 3.0)), 1), round(float(draw.uniform(0.1, 0.5)), 2))]
    for n, lam, lipschitz in cases:
        for relation, factor in (("zero_out", 1.0), ("replace_one", 2.0)):
            out = scalar(call(fn, n, lam, lipschitz, relation), "sensitivity")
            expected = factor * lipschitz / (n * lam)
            if close(out, expected, rtol=1e-9):
                continue
            expect(not close(out, expected / factor, rtol=1e-9),
                   "under replace-one the two data sets differ in two loss terms (one removed, one added): the "
                   "gradient sums differ by up to 2L, so the sensitivity doubles")
            expect(not close(out, factor * lipschitz / lam, rtol=1e-9),
                   "divide by n as well: the loss is the mean over n records, so one record moves the gradient "
                   "by L/n")
            expect(not close(out, factor * lipschitz / (n * lam ** 2), rtol=1e-9) and
                   not close(out, factor * lipschitz * lam / n, rtol=1e-9),
                   "strong convexity gives |theta - theta'| <= (gradient difference) / Lambda: divide once by "
                   "Lambda")
            raise CheckFailed(f"for n = {n}, Lambda = {lam}, L = {lipschitz:g}, {relation}: expected {expected:.6g}; "
                              f"got {out:.6g}")
    passed("the minimiser moves by at most L/(n Lambda) (zero-out) or 2L/(n Lambda) (replace-one)")


@checker
def check_square_root_coefficients(fn, *, seed=None):
    r"""``fn(n)``: the first n coefficients :math:`r_k = \binom{2k}{k}/4^k` of the square root of the
    prefix-sum matrix (a 1-D array); the Toeplitz matrix they make, squared, is the all-ones lower triangle."""
    draw = settings(seed)
    for n in (1, 2, int(draw.integers(5, 12)), int(draw.integers(40, 100)), int(draw.integers(550, 800))):
        out = np.asarray(call(fn, n), dtype=float)
        expect(out.shape == (n,), f"return an array of n = {n} coefficients; got shape {out.shape}")
        expect(bool(np.all(np.isfinite(out))), f"at n = {n} your coefficients are not finite: binom(2k, k) and 4^k "
                                                "overflow for large k although their ratio is small; compute each "
                                                "coefficient from the one before it",
               more="r_k / r_(k−1) = (2k − 1)/(2k): start at r_0 = 1 and multiply")
        expected = np.ones(n)
        for k in range(1, n):
            expected[k] = expected[k - 1] * (2 * k - 1) / (2 * k)
        if close(out, expected, rtol=1e-9):
            continue
        expect(not close(out, 0.5 ** np.arange(n), rtol=1e-9),
               "2^-k is not the square root: check that the Toeplitz matrix of your r, times itself, is the "
               "lower triangle of ones (its k-th entry is sum_j r_j r_(k-j) = 1)",
               more="the coefficients are those of the power series of 1/√(1 − x): r_k = r_(k−1) (2k − 1)/(2k)")
        shifted = np.append(expected[1:], expected[-1] * (2 * n - 1) / (2 * n))      # r_1, ..., r_n
        expect(not close(out, shifted, rtol=1e-9), "start at r_0 = 1 (k = 0, 1, ..., n-1)")
        failure = CheckFailed(f"the coefficients for n = {n} are wrong: the Toeplitz matrix of r, times itself, must "
                              f"be the lower triangle of ones, so r_0² = 1 and r_0 r_1 + r_1 r_0 = 1 fix the first two")
        failure.more = "r_0 = 1 and r_k = r_(k−1) (2k − 1)/(2k): 1, 1/2, 3/8, 5/16, ..."
        raise failure
    passed("r_k = binom(2k, k) / 4^k: the square root of the prefix-sum matrix")


@checker
def check_factorization_sensitivity(fn, *, seed=None):
    r"""``fn(C, participations)``: :math:`\max_\pi \sqrt{\sum_{s,t\in\pi}(C^\top C)_{st}}` over the given
    participation patterns (lists of step indices), for a C with non-negative entries."""
    rng = settings(seed)
    for trial in range(4):
        n = 6 + 2 * trial
        C = np.tril(rng.uniform(0.0, 1.0, size=(n, n)))
        patterns = [list(range(j, n, 3)) for j in range(3)]
        out = scalar(call(fn, C, patterns), "sensitivity")
        gram = C.T @ C
        expected = max(math.sqrt(gram[np.ix_(p, p)].sum()) for p in patterns)
        if close(out, expected, rtol=1e-9):
            continue
        columns = max(math.sqrt(sum(np.sum(C[:, t] ** 2) for t in p)) for p in patterns)
        expect(not close(out, columns, rtol=1e-9),
               "the columns of one record's steps add up before the norm is taken: its contribution to C G is "
               "sum_t C[:, t] g_t^T, and with equal gradients the cross terms (C^T C)_st count too")
        expect(not close(out, expected ** 2, rtol=1e-9), "take the square root: that sum is the squared norm")
        expect(not close(out, float(np.sqrt(np.max(np.sum(C * C, axis=0)))), rtol=1e-9),
               "that is single participation (the largest column norm); each record here takes part in every "
               "step of its pattern")
        raise CheckFailed(f"for a {n} x {n} C and patterns {patterns}: expected {expected:.6g}; got {out:.6g}")
    passed("the sensitivity of C G over the participation patterns, read off C^T C")
