"""The edges, fixed at the root (issue 29, item 7): each pinned here. pytest runs with RuntimeWarning as an error, so a
bare warning fails these tests as surely as a wrong value."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from dpedu.accountants.analysis.composition import amplify_by_subsampling
from dpedu.accountants.analysis.log_moments import log_a_fractional, log_a_integer
from dpedu.accountants.analysis.log_moments_integrated import log_a_integrated
from dpedu.accountants.analysis.rdp_curves import rdp_gaussian, rdp_pure_dp, rdp_sampled_gaussian
from dpedu.accountants.zcdp import zcdp_delta
from dpedu.lab.audit.data import make_audit_data, make_canary

ORDERS = np.array([1.5, 2.0, 10.0, 256.0])


@pytest.mark.parametrize("delta", [1e300, 1.5, -0.1, -1e300, math.inf, math.nan])
def test_amplification_refuses_a_delta_outside_zero_one(delta):
    with pytest.raises(ValueError, match="delta"):
        amplify_by_subsampling(epsilon=1.0, delta=delta, sampling_rate=0.1)
    assert amplify_by_subsampling(epsilon=1.0, delta=1.0, sampling_rate=0.1)[1] == pytest.approx(0.1)


# the analysis functions of a noise multiplier z, each at a fixed rate and order
OF_Z = [
    lambda z: rdp_sampled_gaussian(0.01, z, ORDERS),
    lambda z: rdp_gaussian(z, ORDERS),
    lambda z: log_a_fractional(0.01, z, 2.5),
    lambda z: log_a_integer(0.01, z, 3.0),
    lambda z: log_a_integrated(0.01, z, 2.5),
]


@pytest.mark.parametrize("function", OF_Z)
def test_analysis_functions_refuse_a_tiny_noise_multiplier_by_name(function):
    for z in (1e-300, 5e-324, 1e-51):
        with pytest.raises(ValueError, match="noise_multiplier"):
            function(z)


@pytest.mark.parametrize("function", OF_Z)
def test_analysis_functions_stay_finite_at_a_huge_noise_multiplier(function):
    for z in (1e300, 1e154, 1e40):
        values = np.atleast_1d(function(z))
        assert np.all(np.isfinite(values)) and np.all(values >= 0) and np.all(values < 1e-12)


def test_pure_dp_curve_at_extreme_epsilons_is_finite_and_right():
    assert np.array_equal(rdp_pure_dp(1e300, ORDERS), np.full(4, 1e300))          # min(eps, alpha eps^2 / 2) = eps
    assert np.all(rdp_pure_dp(1e-300, ORDERS) >= 0)
    assert np.allclose(rdp_pure_dp(0.1, ORDERS), np.minimum(0.1, ORDERS * 0.01 / 2))


@pytest.mark.parametrize("conversion", ["classic", "improved"])
def test_zcdp_delta_at_a_huge_epsilon_is_zero_without_warnings(conversion):
    assert zcdp_delta(1.0, 1e300, conversion) == 0.0
    assert zcdp_delta(1.0, 60.0, conversion) <= zcdp_delta(1.0, 30.0, conversion) < 1e-90
    assert zcdp_delta(1e300, 1.0, conversion) == 1.0


def test_make_canary_is_scale_free_and_finite_at_huge_features():
    X, y = make_audit_data(n=30, d=3, rng=1)
    for kind in ("least_used", "mislabeled"):
        x, label = make_canary(X, y, kind=kind)
        big, big_label = make_canary(X * 1e300, y, kind=kind)
        assert np.all(np.isfinite(big)) and big_label == label
        assert np.allclose(big, x) and np.linalg.norm(big) == pytest.approx(5.0)
    with pytest.raises(ValueError, match="kind"):
        make_canary(X, y, kind="loudest")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "dpedu", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args", [
    ("tradeoff", "--epsilons", "1", "--seeds", "1", "--data-home", "/nonexistent_dir"),
    ("demo", "--data-home", "/nonexistent_dir"),
    ("tradeoff", "--epsilons", "1", "--seeds", "1", "--data-home", ""),
    ("strip-solutions", "/nonexistent_dir", "/tmp"),
    ("course-kit", "/nonexistent_dir/a/b"),
])
def test_cli_path_options_are_checked_before_any_work(args, tmp_path):
    result = _cli(*args)
    assert result.returncode != 0
    assert "exist" in result.stderr or "names no folder" in result.stderr
    assert "loading Adult" not in result.stderr + result.stdout       # no work started
