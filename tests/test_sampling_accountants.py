"""Sampling schemes' accountants beside Google's dp_accounting and beside valid lower bounds (docs/math.md §22.3, §22.5).

The comparisons skip when dp_accounting is not installed (it is a benchmark/test-only dependency).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp

from dpedu.accountants import make_accountant
from dpedu.accountants.analysis.rdp_curves import rdp_sampled_gaussian
from dpedu.accountants.analysis.rdp_without_replacement import (forward_differences, log_moment_without_replacement,
                                                                rdp_without_replacement)
from dpedu.events import SampledWithoutReplacementGaussianEvent, SubsampledGaussianEvent

DELTA = 1e-5


def _wor_epsilon(z, m, n, steps):
    event = SampledWithoutReplacementGaussianEvent(z, m, n, relation="replace_one")
    return make_accountant("rdp").compose(event, steps).get_epsilon(DELTA)


@pytest.mark.parametrize("n, m, steps, z", [(10_000, 1_000, 200, 4.0), (60_000, 600, 1_000, 4.0),
                                            (60_000, 600, 1_000, 1.0), (1_000, 100, 50, 8.0)])
def test_without_replacement_matches_dp_accounting(n, m, steps, z):
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp
    theirs = rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    # dp_accounting's multiplier here is relative to the replace-one sensitivity 2C: it is given z / 2
    theirs.compose(dpa.SampledWithoutReplacementDpEvent(n, m, dpa.GaussianDpEvent(z / 2)), steps)
    assert _wor_epsilon(z, m, n, steps) == pytest.approx(theirs.get_epsilon(DELTA), rel=3e-3)


def test_the_gaussian_specific_bound_is_tighter_than_theorem_9_at_large_noise():
    orders = np.arange(2.0, 40.0)
    specific = rdp_without_replacement(4.0, 1_000, 10_000, orders)
    general = rdp_without_replacement(4.0, 1_000, 10_000, orders, gaussian_specific=False)
    assert np.all(specific <= general * (1 + 1e-12)) and np.any(specific < 0.95 * general)
    with pytest.raises(TypeError, match="gaussian_specific"):
        rdp_without_replacement(4.0, 1_000, 10_000, orders, gaussian_specific="yes")


def _renyi_of_pair(z, gamma, alpha, shift_q):
    """D_alpha of ((1-g)N(0,z^2) + g N(1,z^2), (1-g)N(0,z^2) + g N(shift_q,z^2)) by quadrature on a fine grid."""
    x = np.linspace(-2 - 40 * z, 2 + 40 * z, 400_001)

    def log_mix(shift):
        return np.logaddexp(np.log1p(-gamma) - x**2 / (2 * z * z), np.log(gamma) - (x - shift) ** 2 / (2 * z * z)) \
            - 0.5 * np.log(2 * np.pi * z * z)
    return (logsumexp(alpha * log_mix(1.0) + (1 - alpha) * log_mix(shift_q)) + np.log(x[1] - x[0])) / (alpha - 1)


@pytest.mark.parametrize("z, m, n", [(4.0, 1_000, 10_000), (8.0, 100, 1_000), (3.0, 30, 100)])
def test_without_replacement_stays_above_pairs_of_neighbouring_datasets(z, m, n):
    # other records 0, the replaced one +C against -C (shift 1 against -1), and other records -C with the
    # record's +C replaced by -C (shift 2 against 0, in units of C: rate gamma, multiplier z / 2) (§22.3)
    orders = np.array([2.0, 3.0, 4.0, 6.0, 9.0, 2.5])
    bound = rdp_without_replacement(z, m, n, orders)
    symmetric = np.array([_renyi_of_pair(z, m / n, a, -1.0) for a in orders])
    one_sided = np.asarray(rdp_sampled_gaussian(m / n, z / 2, orders), dtype=float)
    assert np.all(bound >= symmetric * (1 - 1e-9)) and np.all(bound >= one_sided * (1 - 1e-9))


@pytest.mark.parametrize("z", [1.5, 4.0])
def test_forward_differences_bound_the_moments_of_the_pair(z):
    # Delta_l = E_Q[(P/Q - 1)^l] for P = N(2, z^2), Q = N(0, z^2): by quadrature, l = 2, 4, 6
    x = np.linspace(-14 * z, 2 + 14 * z, 800_001)
    log_q = -x**2 / (2 * z * z) - 0.5 * np.log(2 * np.pi * z * z)
    ratio_minus_one = np.expm1((4 * x - 4) / (2 * z * z))
    bounds = forward_differences(z, 6)
    for index, ell in enumerate((2, 4, 6)):
        exact = np.sum(np.exp(log_q) * ratio_minus_one**ell) * (x[1] - x[0])
        assert bounds[index + 1] >= math.log(exact) - 1e-9
        assert bounds[index + 1] <= math.log(exact) + 1e-6        # and tight


def test_forward_differences_at_large_noise_against_an_exactly_rounded_sum():
    z = 50.0    # the alternating sum cancels to 1e-3 .. 1e-8 of its terms
    bounds = forward_differences(z, 6)
    for index, ell in enumerate((2, 4, 6)):
        exact = math.fsum(math.comb(ell, k) * (-1) ** (ell - k) * math.exp(2 * k * (k - 1) / z**2)
                          for k in range(ell + 1))
        assert math.log(exact) <= bounds[index + 1] <= math.log(exact) + 1e-4   # raised by the round-off bound


def test_log_moment_is_finite_at_extreme_noise():
    for z in (1e-3, 1e6):
        value = log_moment_without_replacement(z, 10, 100, 256)
        assert math.isfinite(value) and value >= 0
