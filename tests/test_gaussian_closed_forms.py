"""Closed-form Gaussian calibration (dpedu.accountants.calibrate, single release): anchors and identities."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpedu import calibrate


@pytest.mark.parametrize("mu, eps", [(1.0, 4.3772), (0.5, 1.9931)])
def test_exact_epsilon_anchors(mu, eps):
    # docs/math.md §4.3: mu = 1 gives 4.3772 and mu = 0.5 gives 1.9931 at delta = 1e-5
    assert calibrate.gaussian_epsilon_exact(1e-5, 1 / mu) == pytest.approx(eps, abs=6e-5)


@pytest.mark.parametrize("z, eps", [(0.5, 0.3), (1.0, 1.0), (3.0, 0.2), (10.0, 0.05)])
def test_delta_formula_equals_hockey_stick_integral(z, eps):
    # delta(eps) = integral (p(x) - e^eps q(x))_+ dx with P = N(1, z^2), Q = N(0, z^2)
    p, q = stats.norm(1, z), stats.norm(0, z)
    value, _ = integrate.quad(lambda x: max(p.pdf(x) - math.exp(eps) * q.pdf(x), 0.0), -50 * z, 50 * z,
                              points=[0.5 + eps * z * z], limit=400)
    assert calibrate.gaussian_delta_exact(eps, z) == pytest.approx(value, rel=1e-7, abs=1e-15)


def test_epsilon_is_on_the_feasible_side_and_tight():
    for z in (0.3, 1.0, 4.0, 40.0):
        for delta in (1e-10, 1e-5, 0.1):
            eps = calibrate.gaussian_epsilon_exact(delta, z)
            assert calibrate.gaussian_delta_exact(eps, z) <= delta
            if eps > 0:
                assert calibrate.gaussian_delta_exact(eps * (1 - 1e-9), z) > delta * (1 - 1e-6)


def test_composition_identity():
    # T Gaussians with z compose to one with z / sqrt(T): monotone in T, and equal at equal mu
    assert calibrate.gaussian_epsilon_exact(1e-5, 10 / math.sqrt(100)) == pytest.approx(
        calibrate.gaussian_epsilon_exact(1e-5, 1.0))


def test_extremes_stay_finite():
    assert calibrate.gaussian_delta_exact(1e4, 0.01) >= 0.0
    assert math.isfinite(calibrate.gaussian_epsilon_exact(1e-12, 0.01))
    assert calibrate.gaussian_epsilon_exact(0.5, 1e3) == 0.0  # tiny loss: delta >= TV distance
    assert 0 < calibrate.analytic_noise_multiplier(1e-3, 1e-10) < np.inf


def test_classic_is_more_conservative_than_analytic_in_range():
    for eps in (0.05, 0.3, 0.9):
        assert calibrate.classic_noise_multiplier(eps, 1e-5) > calibrate.analytic_noise_multiplier(eps, 1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda: calibrate.classic_noise_multiplier(1.0, 1e-5), "0 < epsilon < 1"),
    (lambda: calibrate.classic_noise_multiplier(0.5, 2.0), "delta"),
    (lambda: calibrate.gaussian_delta_exact(-1.0, 1.0), "epsilon"),
    (lambda: calibrate.gaussian_delta_exact(1.0, 0.0), "noise_multiplier"),
    (lambda: calibrate.gaussian_epsilon_exact(0.0, 1.0), "delta"),
    (lambda: calibrate.analytic_noise_multiplier(np.nan, 1e-5), "epsilon"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
