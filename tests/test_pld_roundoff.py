"""The PLD's FFT round-off (docs/math.md §15.8): measured by benchmarks/bench_pld_roundoff.py, bounded rigorously by
dpedu.accountants.pld.roundoff and counted in the pessimistic delta."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import benchmark_module
from scipy import fft as sp_fft

import dpedu.accountants.pld.compose as compose
import dpedu.accountants.pld.roundoff as roundoff
from dpedu.accountants.pld.compose import self_compose
from dpedu.accountants.pld.losses import GridPMF
from dpedu.accountants.pld.roundoff import convolve_bound, fft_error, power


@pytest.fixture(scope="module")
def bench():
    with benchmark_module("bench_pld_roundoff") as module:
        yield module


@pytest.mark.parametrize("setting", range(2))  # the first two
def test_the_round_off_bound_covers_the_measured_round_off_and_stays_small(bench, setting):
    saved = compose.sp_fft
    epsilon, masses, bound = bench.negative_fft_mass(*bench.SETTINGS[setting])
    assert compose.sp_fft is saved                                  # the recording is undone
    assert math.isfinite(epsilon) and masses                        # the FFT path ran
    assert max(masses) < 1e-10                                      # the visible round-off §15.8 states
    assert max(masses) <= bound < 1e-8                              # the bound covers it and §15.8 quotes its size
    if roundoff.SPECTRUM_DTYPE is not np.float64:                   # extended: 1e-15 to 1e-14 (§15.8)
        assert max(masses) < 1e-13 and bound < 1e-11


def _lopsided_pmf(seed, size, heavy):
    """A subsampled-like PMF: most mass at one point."""
    pmf = np.random.default_rng(seed).random(size) ** 8
    pmf[heavy] += 50.0
    return pmf / pmf.sum()


@pytest.mark.parametrize("seed, size, count", [(5, 64, 3_000), (6, 16, 20_000), (7, 200, 500)])
def test_the_double_bound_holds_against_an_extended_precision_composition(monkeypatch, seed, size, count):
    # the spectrum in double (the computation where NumPy has no x87 long double) against the whole composition in
    # long double: the reference's own error is far below the double bound (docs/math.md §15.8)
    monkeypatch.setattr(roundoff, "SPECTRUM_DTYPE", np.float64)
    pmf = _lopsided_pmf(seed, size, size // 6)
    tail = 1e-30
    composed = self_compose(GridPMF(0.01, 0, 0.0, pmf, 0.0), count, tail, True, 2**22)
    low = composed.start  # the window's first index (start 0)
    fft_size = sp_fft.next_fast_len(count * (size - 1) + 1, real=True)
    exact = sp_fft.irfft(sp_fft.rfft(pmf.astype(np.longdouble), fft_size) ** count, fft_size)
    reference = np.maximum(exact[low:low + composed.pmf.size], 0).astype(float)
    error = float(np.abs(composed.pmf - reference).sum())
    assert composed.roundoff > 0 and error <= composed.roundoff
    assert composed.infinity_mass >= composed.roundoff              # counted at +infinity


def _exact_power(masses, count):
    """The coefficients of (sum_i m_i x^i)^count for non-negative integers m_i, exactly (Kronecker substitution:
    x = 2^bits, with bits above the largest coefficient's length)."""
    bits = count * max(int(m).bit_length() for m in masses) + (len(masses) * count).bit_length() + 1
    value = sum(int(m) << (bits * i) for i, m in enumerate(masses)) ** count
    return [(value >> (bits * i)) & ((1 << bits) - 1) for i in range((len(masses) - 1) * count + 1)]


@pytest.mark.parametrize("dtype", [np.float64, roundoff.SPECTRUM_DTYPE])
@pytest.mark.parametrize("seed, count", [(1, 30), (2, 120), (3, 300)])
def test_the_bound_holds_against_the_exact_composition(monkeypatch, dtype, seed, count):
    # masses m_i / 2^24 (exact in double) composed exactly in integers: the true round-off of either precision
    monkeypatch.setattr(roundoff, "SPECTRUM_DTYPE", dtype)
    masses = np.random.default_rng(seed).integers(1, 2**10, 8)
    masses[2] = 2**24 - int(masses.sum()) + int(masses[2])           # sum 2^24: a PMF, mostly at one point
    pmf = masses / 2.0**24
    tail = 1e-30
    composed = self_compose(GridPMF(0.01, 0, 0.0, pmf, 0.0), count, tail, True, 2**22)
    scale = 2**(24 * count)
    exact = np.array([c / scale for c in _exact_power(masses, count)])  # int / int: correctly rounded
    low = composed.start
    reference = exact[low:low + composed.pmf.size]
    error = float(np.abs(composed.pmf - reference).sum())
    outside = float(exact[:low].sum() + exact[low + composed.pmf.size:].sum())   # <= the tails, wrapped circularly
    assert 0 < error <= composed.roundoff + outside + 1e-300


@pytest.mark.parametrize("z, q, steps", [(0.8, 0.01, 2_000), (1.0, 1e-3, 20_000)])
def test_the_extended_bound_is_never_above_the_double_bound(bench, z, q, steps):
    extended = bench.accounting(z, q, steps)
    double = bench.accounting(z, q, steps, spectrum_dtype=np.float64)
    assert 0 < extended.bound <= double.bound and extended.epsilon <= double.epsilon
    if roundoff.SPECTRUM_DTYPE is not np.float64:                   # x87 long double: u 2048 times smaller
        assert extended.bound < 1e-2 * double.bound


@pytest.mark.skipif(roundoff.SPECTRUM_DTYPE is np.float64, reason="no x87 long double on this platform")
def test_the_bound_costs_under_one_percent_of_epsilon_on_the_long_run(bench):
    # q = 1e-4, z = 0.58, T = 93,000, delta = 1e-8: the bound with the spectrum in double took epsilon from 2.32 to 2.80
    run = bench.accounting(0.58, 1e-4, 93_000)
    assert run.unbounded <= run.epsilon <= 1.01 * run.unbounded
    assert max(run.masses) <= run.bound < 1e-10


def test_pessimistic_delta_counts_the_bound_and_the_optimistic_does_not():
    from dpedu.accountants import SubsampledGaussianEvent, make_accountant
    from dpedu.accountants.pld.ledger import composed_curves, group_ledger
    acc = make_accountant("pld").compose(SubsampledGaussianEvent(1.0, 0.01), 2_000)
    options = (acc.accuracy, acc.discretization, acc.tail_mass, acc.max_grid_size)
    pessimistic = composed_curves(*group_ledger(acc.ledger), options, True).curves
    optimistic = composed_curves(*group_ledger(acc.ledger), options, False).curves
    assert all(c.roundoff > 0 and c.infinity_mass >= c.roundoff for c in pessimistic)
    assert all(c.roundoff == 0 for c in optimistic)
    for c in pessimistic:                           # below the top of the grid delta is never below the bound
        assert float(c.delta(c.top_loss - c.spacing)) >= c.roundoff > c.top_infinity
    # at and above the top no round-off can sit (docs/math.md §15.10): only the truncated tails remain at +infinity
    assert 50.0 > max(c.top_loss for c in pessimistic)
    assert float(acc.get_delta(50.0)) == max(c.top_infinity for c in pessimistic) < 1e-18


def test_the_bounds_grow_with_the_size_and_refuse_nothing():
    assert fft_error(2**10) < fft_error(2**20) < 1e-13
    assert 0 < convolve_bound(1.0, 1.0, 2**10, 2**10) < convolve_bound(1.0, 1.0, 2**20, 2**20) < 1e-9
    spectrum = np.array([1.0 + 0j, 0.5j, 0.0, -0.3 + 0.1j])
    assert np.allclose(power(spectrum, 7), spectrum**7, rtol=1e-13, atol=0)


@pytest.mark.parametrize("points, size", [(1, 10), (50, 64), (725, 78_125), (963, 43_740)])
def test_the_direct_transform_stays_within_its_bound(points, size):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x = _lopsided_pmf(points, points, points // 3)
    frequencies = np.unique(np.linspace(0, size // 2, 9).astype(int))
    computed = roundoff.direct_dft(x.astype(roundoff.SPECTRUM_DTYPE), frequencies, size, roundoff.SPECTRUM_DTYPE)
    bound = roundoff.dft_error(points, roundoff.unit_roundoff(roundoff.SPECTRUM_DTYPE)) * float(x.sum()) * 1.001
    for value, k in zip(computed, frequencies):
        exact = mpmath.fsum(mpmath.mpf(float(x[j])) * mpmath.expjpi(-2 * mpmath.mpf(int(j * k % size)) / size)
                            for j in range(points))
        assert abs(mpmath.mpc(str(value.real), str(value.imag)) - exact) <= bound


def test_each_frequency_within_its_bound_on_a_long_composition(monkeypatch):
    # 10,000 copies of a short PMF: few frequencies survive the power, so the extended spectrum takes the direct route
    pmf = np.zeros(4_000)
    pmf[:8] = [math.comb(7, i) / 128 for i in range(8)]               # spread: |p_hat| near 1 only at low k
    count = 10_000
    taken = []
    monkeypatch.setattr(roundoff, "direct_dft", lambda *args: taken.append(1) or _direct(*args))
    reference = sp_fft.rfft(pmf.astype(np.longdouble)) ** count         # all in long double
    double, double_error, rest = roundoff.composed_spectrum(pmf, count, np.float64)
    extended, extended_error, _ = roundoff.composed_spectrum(pmf, count)
    assert 0 < rest < 1e-300 and np.count_nonzero(double) < double.size / 4    # most frequencies set to 0
    assert np.all(np.abs(double - reference) <= double_error + rest)   # per frequency, in double
    if roundoff.SPECTRUM_DTYPE is not np.float64:
        assert taken and np.all(extended_error <= 1e-2 * double_error)
        assert np.all(np.abs(extended - reference) <= 1e-2 * double_error + rest)


_direct = roundoff.direct_dft
