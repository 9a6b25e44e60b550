"""The size of the PLD's FFT round-off that docs/math.md §15.8 states: the negative mass of the inverse FFTs."""

from __future__ import annotations

import types

import numpy as np
import pytest
from scipy import fft as scipy_fft

import dpedu.accountants.pld.compose as compose
from dpedu.accountants import SubsampledGaussianEvent, account


@pytest.mark.parametrize("z,q,steps", [(0.8, 0.01, 10_000), (1.0, 1e-4, 100_000)])
def test_the_round_off_of_a_long_composition_stays_below_1e_10(monkeypatch, z, q, steps):
    negative_masses = []

    def recording_irfft(spectrum, n=None, *args, **kwargs):
        out = scipy_fft.irfft(spectrum, n, *args, **kwargs)
        negative_masses.append(float(-out[out < 0].sum()))
        return out

    spy = types.SimpleNamespace(rfft=scipy_fft.rfft, irfft=recording_irfft, next_fast_len=scipy_fft.next_fast_len)
    monkeypatch.setattr(compose, "sp_fft", spy)
    epsilon = account([(SubsampledGaussianEvent(z, q), steps)], "pld", delta=1e-8).epsilon
    assert np.isfinite(epsilon) and negative_masses                # the FFT path ran
    assert max(negative_masses) < 1e-10                            # the bound §15.8 states
