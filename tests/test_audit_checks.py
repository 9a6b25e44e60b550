"""The chapter-9 checks of dpedu.course.checks.ch09 have teeth: right answers pass, stubs and wrong ones fail."""

from __future__ import annotations

import math
import re

import pytest
from scipy import optimize, stats

from dpedu.course import checks


def _stub(*args):
    raise NotImplementedError


def shift_ref(mi, mo, s, n1, n0, c):
    return (mi - mo) / s - stats.norm.ppf(c) * math.sqrt(1 / n1 + 1 / n0)


def gdp_ref(mu, delta):
    def excess(eps):
        return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2) - delta
    return optimize.brentq(excess, 0.0, 100.0, xtol=1e-12)


def one_run_ref(r, v, c):
    def excess(eps):
        return stats.binom.sf(v - 1, r, 1 / (1 + math.exp(-eps))) - (1 - c)
    return 0.0 if excess(0.0) > 0 else optimize.brentq(excess, 0.0, 50.0, xtol=1e-10)


CASES = [
    (checks.check_gaussian_shift_lower_bound, shift_ref, [
        (lambda mi, mo, s, n1, n0, c: (mi - mo) / s - stats.norm.ppf(1 - (1 - c) / 2) * math.sqrt(1 / n1 + 1 / n0),
         "TWO-sided"),
        (lambda mi, mo, s, n1, n0, c: (mi - mo) / s, "point estimate"),
        (lambda mi, mo, s, n1, n0, c: (mi - mo) / s - stats.norm.ppf(c) * math.sqrt(1 / n1), "both samples"),
        (lambda mi, mo, s, n1, n0, c: (mi - mo) - stats.norm.ppf(c) * math.sqrt(1 / n1 + 1 / n0) * s, "divide"),
    ]),
    (checks.check_epsilon_from_gdp, gdp_ref, [
        (lambda mu, d: mu * math.sqrt(2 * math.log(1.25 / d)), "classic calibration"),
        (lambda mu, d: gdp_ref(mu / math.sqrt(2), d), "sigma * sqrt(2)"),
    ]),
    (checks.check_one_run_bound, one_run_ref, [
        (lambda r, v, c: one_run_ref(r, min(v + 1, r), c), "binom.sf(v - 1"),
    ]),
]


@pytest.mark.parametrize("check, reference, wrong", CASES, ids=lambda x: getattr(x, "__name__", ""))
def test_check_has_teeth(check, reference, wrong, capsys):
    check(reference)
    assert "passed" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="not written yet"):
        check(_stub)
    for answer, hint in wrong:
        with pytest.raises(AssertionError, match=re.escape(hint)):
            check(answer)


def test_reexported_from_checks():
    from dpedu.course import checks as package

    assert package.check_one_run_bound is checks.check_one_run_bound
