"""The PLD accountant's FFT round-off, as docs/math.md §15.8 states it: the negative mass of its inverse FFTs beside
the rigorous bound the pessimistic PLD adds to delta, with the spectrum in extended precision and in double.

    python benchmarks/bench_pld_roundoff.py

Raising the spectrum of one step's privacy-loss PMF to the power T multiplies the transform's relative error by
about T. Part of that error shows as negative probabilities in the composed PMF, which
``dpedu.accountants.pld.compose.self_compose`` sets to 0. This script records, for each inverse FFT an
accounting makes, the total negative mass it returned (a visible part of the round-off), and prints the largest
beside the bound of :mod:`dpedu.accountants.pld.roundoff` (a worst case over all rounding errors, added to the mass at
infinity of the pessimistic PLD), the epsilon at delta = 1e-8 with that bound and without it (the same curve with the
bound taken out of its mass at infinity: no guarantee), and the accountant's time; each twice: with the forward FFT
and the power in ``SPECTRUM_DTYPE`` (x87 extended where NumPy's long double is that) and in double (the computation
before extended precision). ``tests/test_pld_roundoff.py`` asserts on the same measurements.
"""

from __future__ import annotations

import copy
import os
import sys
import time
import types

import numpy as np
from scipy import fft as scipy_fft

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

import dpedu.accountants.pld.compose as compose  # noqa: E402
import dpedu.accountants.pld.roundoff as roundoff  # noqa: E402
from dpedu.accountants import SubsampledGaussianEvent, make_accountant  # noqa: E402
from dpedu.accountants.pld.ledger import composed_curves, group_ledger  # noqa: E402

#: (noise multiplier, sampling rate, steps): a short and a long composition, the long run at delta = 1e-8 where the
#: bound in double cost 20 % of epsilon, and Abadi et al.'s 10,000 steps.
SETTINGS = ((0.8, 0.01, 10_000), (1.0, 1e-4, 100_000), (0.58, 1e-4, 93_000), (4.0, 0.01, 10_000))
DELTA = 1e-8


def negative_fft_mass(noise_multiplier, sampling_rate, steps, delta=DELTA, spectrum_dtype=None):
    """``(epsilon, [negative mass of each inverse FFT], round-off bound)`` of the pessimistic PLD accounting of T
    sampled-Gaussian steps (the bound: the largest over the two directions); ``spectrum_dtype`` replaces
    ``roundoff.SPECTRUM_DTYPE`` for the run."""
    result = accounting(noise_multiplier, sampling_rate, steps, delta, spectrum_dtype)
    return result.epsilon, result.masses, result.bound


def accounting(noise_multiplier, sampling_rate, steps, delta=DELTA, spectrum_dtype=None):
    """One cold pessimistic accounting, recorded: a namespace with ``epsilon``, ``masses``, ``bound``, ``seconds``
    and ``unbounded`` (epsilon of the same curves with the bound taken out of their mass at infinity)."""
    masses = []

    def recording_irfft(spectrum, n=None, *args, **kwargs):
        out = scipy_fft.irfft(spectrum, n, *args, **kwargs)
        masses.append(float(-out[out < 0].sum()))
        return out

    saved, saved_dtype = compose.sp_fft, roundoff.SPECTRUM_DTYPE
    compose.sp_fft = types.SimpleNamespace(rfft=scipy_fft.rfft, irfft=recording_irfft,
                                           next_fast_len=scipy_fft.next_fast_len)
    if spectrum_dtype is not None:
        roundoff.SPECTRUM_DTYPE = spectrum_dtype
    composed_curves.cache_clear()  # a cold start, and no curves of the other precision
    try:
        start = time.perf_counter()
        accountant = make_accountant("pld").compose(SubsampledGaussianEvent(noise_multiplier, sampling_rate), steps)
        epsilon = accountant.get_epsilon(delta)
        seconds = time.perf_counter() - start
        options = (accountant.accuracy, accountant.discretization, accountant.tail_mass, accountant.max_grid_size)
        curves = composed_curves(*group_ledger(accountant.ledger), options, True).curves
    finally:
        compose.sp_fft, roundoff.SPECTRUM_DTYPE = saved, saved_dtype
        composed_curves.cache_clear()
    unbounded = []
    for curve in curves:
        bare = copy.copy(curve)
        bare.infinity_mass = curve.infinity_mass - curve.roundoff
        unbounded.append(bare.epsilon(delta))
    return types.SimpleNamespace(epsilon=epsilon, masses=masses, bound=max(float(c.roundoff) for c in curves),
                                 seconds=seconds, unbounded=max(unbounded))


def main():
    name = np.dtype(roundoff.SPECTRUM_DTYPE).name
    print(f"spectrum in {name} (unit round-off {roundoff.unit_roundoff(roundoff.SPECTRUM_DTYPE):.2e}) and in "
          f"float64; delta = {DELTA:g}")
    print(f"{'z':>5} {'q':>7} {'T':>7} {'spectrum':>10}  {'eps (bound)':>11}  {'eps (none)':>10}  {'FFTs':>4}  "
          f"{'neg. mass':>9}  {'bound':>8}  {'time s':>6}")
    for z, q, steps in SETTINGS:
        for dtype in dict.fromkeys((roundoff.SPECTRUM_DTYPE, np.float64)):
            r = accounting(z, q, steps, DELTA, dtype)
            print(f"{z:5g} {q:7g} {steps:7d} {np.dtype(dtype).name:>10}  {r.epsilon:11.6f}  {r.unbounded:10.6f}  "
                  f"{len(r.masses):4d}  {max(r.masses):9.2e}  {r.bound:8.2e}  {r.seconds:6.3f}", flush=True)


if __name__ == "__main__":
    main()
