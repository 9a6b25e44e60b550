"""The size of the PLD's FFT round-off that docs/math.md §15.8 states (benchmarks/bench_pld_roundoff.py prints it)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

import dpedu.accountants.pld.compose as compose

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_pld_roundoff.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_pld_roundoff", _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


@pytest.mark.parametrize("setting", range(2))
def test_the_round_off_of_a_long_composition_stays_below_1e_10(bench, setting):
    saved = compose.sp_fft
    epsilon, masses = bench.negative_fft_mass(*bench.SETTINGS[setting])
    assert compose.sp_fft is saved                                  # the recording is undone
    assert math.isfinite(epsilon) and masses                        # the FFT path ran
    assert max(masses) < 1e-10                                      # the bound §15.8 states
