"""The chapter-11 checks (dpedu.course.checks.ch11) have teeth: right answers pass, stubs and common mistakes fail."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import comb

from dpedu.course import checks
from dpedu.course.checks import CheckFailed


# The references are the student's own answers: while a check runs, dpedu's versions refuse (Exercise 11.x asks
# you to write this yourself).
def square_root_coefficients(n):
    r = np.ones(n)
    for k in range(1, n):
        r[k] = r[k - 1] * (2 * k - 1) / (2 * k)
    return r


def sensitivity(C, participations=None):
    C = np.asarray(C, dtype=float)
    if participations is None:
        return float(np.sqrt((C ** 2).sum(axis=0)).max())
    gram = np.abs(C.T @ C)
    return float(max(math.sqrt(gram[np.ix_(steps, steps)].sum()) for steps in map(np.asarray, participations)))


def _sensitivity(n, lam, lipschitz, relation):
    return (2.0 if relation == "replace_one" else 1.0) * lipschitz / (n * lam)


def _stub(*args):
    raise NotImplementedError


CASES = [
    (checks.check_output_sensitivity, _sensitivity, [
        (lambda n, lam, L, r: L / (n * lam), "sensitivity doubles"),
        (lambda n, lam, L, r: _sensitivity(n, lam, L, r) * n, "divide by n"),
        (lambda n, lam, L, r: _sensitivity(n, lam, L, r) / lam, "divide once"),
    ]),
    (checks.check_square_root_coefficients, square_root_coefficients, [
        (lambda n: 0.5 ** np.arange(n), "is not the square root"),
        (lambda n: np.array([comb(2 * k, k) / 4.0 ** k for k in range(n)]), "overflow"),
        (lambda n: square_root_coefficients(n + 1)[1:], "start at r_0 = 1"),
    ]),
    (checks.check_factorization_sensitivity, sensitivity, [
        (lambda C, p: max(math.sqrt(sum(np.sum(C[:, t] ** 2) for t in q)) for q in p), "cross terms"),
        (lambda C, p: sensitivity(C, p) ** 2, "take the square root"),
        (lambda C, p: sensitivity(C), "single participation"),
    ]),
]


@pytest.mark.parametrize("check, reference, wrong", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_check_passes_the_reference_and_names_each_mistake(check, reference, wrong, capsys):
    check(reference)
    assert capsys.readouterr().out.startswith("passed")
    with pytest.raises(CheckFailed, match="not written yet"):
        check(_stub)
    for answer, hint in wrong:
        with pytest.raises(CheckFailed, match=hint):
            check(answer)
