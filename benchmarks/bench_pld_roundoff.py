"""The PLD accountant's FFT round-off, as docs/math.md §15.8 states it: the negative mass of its inverse FFTs.

    python benchmarks/bench_pld_roundoff.py

Raising the spectrum of one step's privacy-loss PMF to the power T multiplies the transform's relative error by
about T. Part of that error shows as negative probabilities in the composed PMF, which
``dpedu.accountants.pld.compose.self_compose`` sets to 0. This script records, for each inverse FFT an
accounting makes, the total negative mass it returned, and prints the largest beside the epsilon at delta = 1e-8.
``tests/test_pld_roundoff.py`` asserts that it stays below 1e-10 for the settings here.
"""

from __future__ import annotations

import os
import sys
import types

from scipy import fft as scipy_fft

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

import dpedu.accountants.pld.compose as compose  # noqa: E402
from dpedu.accountants import SubsampledGaussianEvent, account  # noqa: E402

#: (noise multiplier, sampling rate, steps): a short and a long composition.
SETTINGS = ((0.8, 0.01, 10_000), (1.0, 1e-4, 100_000))
DELTA = 1e-8


def negative_fft_mass(noise_multiplier, sampling_rate, steps, delta=DELTA):
    """``(epsilon, [negative mass of each inverse FFT])`` of the PLD accounting of T sampled-Gaussian steps."""
    masses = []

    def recording_irfft(spectrum, n=None, *args, **kwargs):
        out = scipy_fft.irfft(spectrum, n, *args, **kwargs)
        masses.append(float(-out[out < 0].sum()))
        return out

    saved = compose.sp_fft
    compose.sp_fft = types.SimpleNamespace(rfft=scipy_fft.rfft, irfft=recording_irfft,
                                           next_fast_len=scipy_fft.next_fast_len)
    try:
        epsilon = account([(SubsampledGaussianEvent(noise_multiplier, sampling_rate), steps)], "pld",
                          delta=delta).epsilon
    finally:
        compose.sp_fft = saved
    return epsilon, masses


def main():
    print(f"{'z':>5} {'q':>7} {'T':>8}  {'epsilon(1e-8)':>13}  {'FFTs':>4}  {'largest negative mass':>21}")
    for z, q, steps in SETTINGS:
        epsilon, masses = negative_fft_mass(z, q, steps)
        print(f"{z:5g} {q:7g} {steps:8d}  {epsilon:13.6f}  {len(masses):4d}  {max(masses):21.2e}")


if __name__ == "__main__":
    main()
