"""Zero-concentrated DP accountant (Bun & Steinke 2016; docs/math.md §14, §18)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpedu import calibrate
from dpedu.accountants import (
    EpsilonDeltaEvent,
    GaussianEvent,
    LaplaceEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    UnsupportedEventError,
)
from dpedu.accountants.zcdp import ZCDPAccountant, zcdp_delta, zcdp_epsilon

DELTA = 1e-5
CONVERSIONS = ("classic", "improved")


def improved_by_scan(rho, delta):
    """Independent reference: Balle et al. (2020) Thm 21 on the line rho * alpha, over a dense alpha grid."""
    alpha = 1.0 + np.exp(np.linspace(-10.0, 12.0, 400_001))
    values = rho * alpha + np.log1p(-1.0 / alpha) - (math.log(delta) + np.log(alpha)) / (alpha - 1.0)
    return max(float(values.min()), 0.0)


def test_book_noisy_gradient_descent():
    # docs/math.md §7 table: 10 Gaussian steps calibrated classically to (0.1, 1e-5) plus a 0.1-DP Laplace count
    # -> zCDP 0.580 at delta = 1e-5 (rho = 10 / (2 z^2) + 0.1^2 / 2)
    z = calibrate.classic_noise_multiplier(0.1, 1e-5)
    acc = ZCDPAccountant().compose(GaussianEvent(z), 10).compose(LaplaceEvent(0.1))
    assert acc.rho == pytest.approx(10 / (2 * z**2) + 0.005, rel=1e-14)
    assert round(acc.get_epsilon(DELTA), 3) == 0.580


@pytest.mark.parametrize("z, steps", [(1.0, 1), (10.0, 100), (2.0, 4)])
def test_gaussian_with_total_mu_one(z, steps):
    # docs/math.md §4.3/§18: mu_tot = 1 -> rho = 1/2, classic zCDP = 5.2985 (RDP classic is the same number),
    # exact 4.3772 below it
    acc = ZCDPAccountant().compose(GaussianEvent(z), steps)
    assert acc.rho == pytest.approx(0.5, rel=1e-14)
    eps = acc.get_epsilon(DELTA)
    assert eps == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)), rel=1e-14)
    assert round(eps, 4) == 5.2985
    improved = ZCDPAccountant(conversion="improved").compose(GaussianEvent(z), steps).get_epsilon(DELTA)
    # docs/math.md §13.6/§18: RDP improved 4.7284 on the Opacus order grid; the continuous minimum can only be lower
    assert improved <= 4.7284 + 5e-5
    assert improved >= calibrate.gaussian_epsilon_exact(DELTA, 1.0)


@pytest.mark.parametrize("rho", [5e-5, 1e-3, 0.5, 7.0, 2e3])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 0.1])
def test_improved_conversion_is_the_minimum_over_alpha(rho, delta):
    ours = zcdp_epsilon(rho, delta, "improved")
    reference = improved_by_scan(rho, delta)
    assert ours <= reference + 1e-9 * max(1.0, reference)  # as good as any alpha on a dense grid
    assert ours == pytest.approx(reference, rel=1e-6, abs=1e-9)
    assert ours <= zcdp_epsilon(rho, delta, "classic")  # never worse than Prop. 1.3


@pytest.mark.parametrize("conversion", CONVERSIONS)
@pytest.mark.parametrize("z, steps", [(1.0, 1), (4.0, 100), (10.0, 1000), (0.6, 7), (100.0, 1)])
def test_zcdp_upper_bounds_the_exact_gaussian(conversion, z, steps):
    # T Gaussians with z = one Gaussian with z / sqrt(T) (Dong, Roth & Su 2019); exact: Balle & Wang 2018
    exact = calibrate.gaussian_epsilon_exact(delta=DELTA, noise_multiplier=z / math.sqrt(steps))
    eps = ZCDPAccountant(conversion=conversion).compose(GaussianEvent(z), steps).get_epsilon(DELTA)
    assert eps >= exact * (1 - 1e-9)


@settings(max_examples=30, deadline=None)
@given(z=st.floats(0.2, 100.0), steps=st.integers(1, 10**6), delta=st.floats(1e-12, 0.5))
def test_zcdp_never_undercuts_the_exact_gaussian(z, steps, delta):
    exact = calibrate.gaussian_epsilon_exact(delta=delta, noise_multiplier=z / math.sqrt(steps))
    for conversion in CONVERSIONS:
        eps = ZCDPAccountant(conversion=conversion).compose(GaussianEvent(z), steps).get_epsilon(delta)
        assert math.isfinite(eps) and eps >= exact * (1 - 1e-9)


def test_rho_per_event():
    # Prop. 1.6 (Gaussian), Prop. 1.4 (pure DP); SubsampledGaussianEvent with q = 1 is a Gaussian
    assert ZCDPAccountant().compose(GaussianEvent(2.0)).rho == pytest.approx(1 / 8)
    assert ZCDPAccountant().compose(SubsampledGaussianEvent(2.0, 1.0)).rho == pytest.approx(1 / 8)
    assert ZCDPAccountant().compose(LaplaceEvent(0.3)).rho == pytest.approx(0.045)
    assert ZCDPAccountant().compose(EpsilonDeltaEvent(0.3)).rho == pytest.approx(0.045)
    mixed = ZCDPAccountant().compose(GaussianEvent(2.0), 3).compose(LaplaceEvent(0.3), 2)
    assert mixed.rho == pytest.approx(3 / 8 + 2 * 0.045, rel=1e-14)  # Lemma 2.3: rhos add


@pytest.mark.parametrize("event", [GaussianEvent(3.0), LaplaceEvent(0.7), SubsampledGaussianEvent(0.9, 1.0)])
@pytest.mark.parametrize("conversion", CONVERSIONS)
def test_count_is_repetition(event, conversion):
    repeated = ZCDPAccountant(conversion=conversion)
    for _ in range(5):
        repeated.compose(event)
    at_once = ZCDPAccountant(conversion=conversion).compose(event, 5)
    assert at_once.rho == repeated.rho
    assert at_once.get_epsilon(DELTA) == repeated.get_epsilon(DELTA)


@pytest.mark.parametrize("conversion", CONVERSIONS)
def test_empty_ledger_is_free(conversion):
    assert ZCDPAccountant(conversion=conversion).get_epsilon(DELTA) == 0.0
    assert ZCDPAccountant(conversion=conversion).get_delta(1.0) == 0.0
    assert ZCDPAccountant().rho == 0.0


@pytest.mark.parametrize("conversion", CONVERSIONS)
def test_monotone_in_steps_and_noise(conversion):
    def eps(z, steps):
        return ZCDPAccountant(conversion=conversion).compose(GaussianEvent(z), steps).get_epsilon(DELTA)

    assert np.all(np.diff([eps(3.0, t) for t in (1, 10, 100, 10_000)]) > 0)
    assert np.all(np.diff([eps(z, 100) for z in (0.5, 2.0, 8.0, 100.0)]) < 0)


@pytest.mark.parametrize("conversion", CONVERSIONS)
@pytest.mark.parametrize("rho", [5e-5, 0.02, 0.5, 30.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5, 1e-2])
def test_get_delta_inverts_get_epsilon(conversion, rho, delta):
    eps = zcdp_epsilon(rho, delta, conversion)
    if eps == 0.0:  # improved, rho = 5e-5, delta = 1e-2: already (0, delta)-DP; delta(0) is not asked for
        assert (conversion, rho, delta) == ("improved", 5e-5, 1e-2)
        return
    assert zcdp_delta(rho, eps, conversion) == pytest.approx(delta, rel=1e-6)


def test_classic_delta_formula_and_its_range():
    # delta = exp(-(eps - rho)^2 / (4 rho)) for eps >= rho; below rho Prop. 1.3 says nothing -> trivial delta = 1
    acc = ZCDPAccountant().compose(GaussianEvent(1.0))  # rho = 1/2
    assert acc.get_delta(2.5) == pytest.approx(math.exp(-4 / 2), rel=1e-14)
    assert acc.get_delta(0.4) == 1.0
    improved = ZCDPAccountant(conversion="improved").compose(GaussianEvent(1.0))
    assert improved.get_delta(2.5) <= acc.get_delta(2.5)
    # near eps = 0 the improved conversion still certifies something, above the exact delta_G (Balle & Wang)
    assert calibrate.gaussian_delta_exact(1e-3, 1.0) <= improved.get_delta(1e-3) < 1.0


@pytest.mark.parametrize(
    "event, reason",
    [
        (SubsampledGaussianEvent(1.0, 0.01), "no amplification-by-subsampling theorem; use rdp, moments or pld"),
        (EpsilonDeltaEvent(1.0, 1e-6), "delta > 0 implies no zCDP bound"),
        (ShuffledBatchGaussianEvent(1.0, 64, 60_000), "not Poisson sampling.*sampling_rate 1"),
    ],
)
def test_unsupported_events_are_refused_with_a_reason(event, reason):
    acc = ZCDPAccountant()
    assert not acc.supports(event)
    with pytest.raises(UnsupportedEventError, match=reason):
        acc.compose(event)
    assert acc.ledger == []


@pytest.mark.parametrize("conversion", CONVERSIONS)
@pytest.mark.parametrize("z, steps", [(100.0, 1), (100.0, 10**6), (0.5, 10**6), (1e-3, 1)])
def test_finite_at_the_extremes(conversion, z, steps):
    acc = ZCDPAccountant(conversion=conversion).compose(GaussianEvent(z), steps)
    eps = acc.get_epsilon(DELTA)
    assert math.isfinite(eps) and eps > 0
    assert 0 <= acc.get_delta(eps) <= DELTA * (1 + 1e-6)


def test_bad_parameters_name_the_argument():
    with pytest.raises(ValueError, match="conversion"):
        ZCDPAccountant(conversion="tight")
    with pytest.raises(ValueError, match="conversion"):
        zcdp_epsilon(0.5, 1e-5, "tight")
    with pytest.raises(ValueError, match="rho"):
        zcdp_epsilon(-0.5, 1e-5)
    with pytest.raises(ValueError, match="rho"):
        zcdp_delta(float("nan"), 1.0)
    with pytest.raises(ValueError, match="delta"):
        zcdp_epsilon(0.5, 1.0)
    with pytest.raises(ValueError, match="delta"):
        ZCDPAccountant().compose(GaussianEvent(1.0)).get_epsilon(0.0)
    with pytest.raises(ValueError, match="epsilon"):
        ZCDPAccountant().compose(GaussianEvent(1.0)).get_delta(-1.0)
    with pytest.raises(TypeError, match="count"):
        ZCDPAccountant().compose(GaussianEvent(1.0), 2.0)
