"""The PLD accountant's FFT round-off, as docs/math.md §15.8 states it: the negative mass of its inverse FFTs beside the
rigorous bound the pessimistic PLD adds to delta.

    python benchmarks/bench_pld_roundoff.py

Raising the spectrum of one step's privacy-loss PMF to the power T multiplies the transform's relative error by
about T. Part of that error shows as negative probabilities in the composed PMF, which
``dpedu.accountants.pld.compose.self_compose`` sets to 0. This script records, for each inverse FFT an
accounting makes, the total negative mass it returned (a visible part of the round-off), and prints the largest
beside the bound of :mod:`dpedu.accountants.pld.roundoff` (a worst case over all rounding errors, added to the mass at
infinity of the pessimistic PLD) and the epsilon at delta = 1e-8. ``tests/test_pld_roundoff.py`` asserts on the same
measurements.
"""

from __future__ import annotations

import os
import sys
import types

from scipy import fft as scipy_fft

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

import dpedu.accountants.pld.compose as compose  # noqa: E402
from dpedu.accountants import SubsampledGaussianEvent, make_accountant  # noqa: E402
from dpedu.accountants.pld.ledger import composed_curves, group_ledger  # noqa: E402

#: (noise multiplier, sampling rate, steps): a short and a long composition.
SETTINGS = ((0.8, 0.01, 10_000), (1.0, 1e-4, 100_000))
DELTA = 1e-8


def negative_fft_mass(noise_multiplier, sampling_rate, steps, delta=DELTA):
    """``(epsilon, [negative mass of each inverse FFT], round-off bound)`` of the pessimistic PLD accounting of T
    sampled-Gaussian steps (the bound: the largest over the two directions)."""
    masses = []

    def recording_irfft(spectrum, n=None, *args, **kwargs):
        out = scipy_fft.irfft(spectrum, n, *args, **kwargs)
        masses.append(float(-out[out < 0].sum()))
        return out

    saved = compose.sp_fft
    compose.sp_fft = types.SimpleNamespace(rfft=scipy_fft.rfft, irfft=recording_irfft,
                                           next_fast_len=scipy_fft.next_fast_len)
    try:
        accountant = make_accountant("pld").compose(SubsampledGaussianEvent(noise_multiplier, sampling_rate), steps)
        epsilon = accountant.get_epsilon(delta)
        options = (accountant.accuracy, accountant.discretization, accountant.tail_mass, accountant.max_grid_size)
        curves = composed_curves(*group_ledger(accountant.ledger), options, True).curves
    finally:
        compose.sp_fft = saved
    return epsilon, masses, max(float(c.roundoff) for c in curves)


def main():
    print(f"{'z':>5} {'q':>7} {'T':>8}  {'epsilon(1e-8)':>13}  {'FFTs':>4}  {'largest negative mass':>21}  "
          f"{'round-off bound':>15}")
    for z, q, steps in SETTINGS:
        epsilon, masses, bound = negative_fft_mass(z, q, steps)
        print(f"{z:5g} {q:7g} {steps:8d}  {epsilon:13.6f}  {len(masses):4d}  {max(masses):21.2e}  {bound:15.2e}")


if __name__ == "__main__":
    main()
