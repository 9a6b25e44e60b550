"""The PLD's FFT round-off (docs/math.md §15.8): measured by benchmarks/bench_pld_roundoff.py, bounded rigorously by
dpedu.accountants.pld.roundoff and counted in the pessimistic delta."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import benchmark_module
from scipy import fft as sp_fft

import dpedu.accountants.pld.compose as compose
from dpedu.accountants.pld.compose import self_compose
from dpedu.accountants.pld.losses import GridPMF
from dpedu.accountants.pld.roundoff import convolve_bound, fft_error, power



@pytest.fixture(scope="module")
def bench():
    with benchmark_module("bench_pld_roundoff") as module:
        yield module


@pytest.mark.parametrize("setting", range(2))
def test_the_round_off_bound_covers_the_measured_round_off_and_stays_small(bench, setting):
    saved = compose.sp_fft
    epsilon, masses, bound = bench.negative_fft_mass(*bench.SETTINGS[setting])
    assert compose.sp_fft is saved                                  # the recording is undone
    assert math.isfinite(epsilon) and masses                        # the FFT path ran
    assert max(masses) < 1e-10                                      # the visible round-off §15.8 states
    assert max(masses) <= bound < 1e-8                              # the bound covers it and §15.8 quotes its size


def test_the_bound_holds_against_an_extended_precision_composition():
    # a lopsided PMF (a subsampled loss: most mass at one point) composed 3000 times in float64 and in long double
    rng = np.random.default_rng(5)
    pmf = rng.random(64) ** 8
    pmf[10] += 50.0
    pmf /= pmf.sum()
    g = GridPMF(0.01, 0, 0.0, pmf, 0.0)
    count, tail = 3_000, 1e-30
    composed = self_compose(g, count, tail, True, 2**22)
    low = composed.start  # the window's first index (start 0)
    size = sp_fft.next_fast_len(count * 63 + 1, real=True)
    exact = sp_fft.irfft(sp_fft.rfft(pmf.astype(np.longdouble), size) ** count, size)
    reference = np.maximum(exact[low:low + composed.pmf.size], 0).astype(float)
    error = float(np.abs(composed.pmf - reference).sum())
    assert composed.roundoff > 0 and error <= composed.roundoff
    assert composed.infinity_mass >= composed.roundoff              # counted at +infinity


def test_pessimistic_delta_counts_the_bound_and_the_optimistic_does_not():
    from dpedu.accountants import SubsampledGaussianEvent, make_accountant
    from dpedu.accountants.pld.ledger import composed_curves, group_ledger
    acc = make_accountant("pld").compose(SubsampledGaussianEvent(1.0, 0.01), 2_000)
    options = (acc.accuracy, acc.discretization, acc.tail_mass, acc.max_grid_size)
    pessimistic = composed_curves(*group_ledger(acc.ledger), options, True).curves
    optimistic = composed_curves(*group_ledger(acc.ledger), options, False).curves
    assert all(c.roundoff > 0 and c.infinity_mass >= c.roundoff for c in pessimistic)
    assert all(c.roundoff == 0 for c in optimistic)
    assert float(acc.get_delta(50.0)) >= max(c.roundoff for c in pessimistic)   # delta never below it


def test_the_bounds_grow_with_the_size_and_refuse_nothing():
    assert fft_error(2**10) < fft_error(2**20) < 1e-13
    assert 0 < convolve_bound(1.0, 1.0, 2**10, 2**10) < convolve_bound(1.0, 1.0, 2**20, 2**20) < 1e-9
    spectrum = np.array([1.0 + 0j, 0.5j, 0.0, -0.3 + 0.1j])
    assert np.allclose(power(spectrum, 7), spectrum**7, rtol=1e-13, atol=0)
