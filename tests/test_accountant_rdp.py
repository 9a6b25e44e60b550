"""RDP accountant and the sampled-Gaussian math (dpedu/accountants/log_moments*.py, rdp_curves.py, conversions.py, rdp.py)."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from dpedu.accountants import (
    EpsilonDeltaEvent,
    GaussianEvent,
    LaplaceEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    UnsupportedEventError,
)
from dpedu.accountants.analysis.conversions import delta_from_rdp, epsilon_from_rdp
from dpedu.accountants.analysis.log_moments import log_a, log_a_fractional, log_a_integer
from dpedu.accountants.analysis.log_moments_integrated import log_a_integrated
from dpedu.accountants.analysis.orders import DEFAULT_ORDERS
from dpedu.accountants.analysis.rdp_curves import rdp_gaussian, rdp_laplace, rdp_pure_dp, rdp_sampled_gaussian
from dpedu.accountants.rdp import OrderGridEdgeWarning, RDPAccountant, event_rdp_curve
from dpedu.accountants.calibrate import gaussian_epsilon_exact

# Opacus's default grid (opacus/accountants/rdp.py): [1 + x / 10 for x in 1..99] + [12..63].
OPACUS_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))


def rdp_epsilon(event, steps, delta=1e-5, **options):
    return RDPAccountant(**options).compose(event, steps).get_epsilon_and_order(delta)


# ------------------------------------------------------------------------------------------------
# published values


@pytest.mark.parametrize("orders", [OPACUS_ORDERS, DEFAULT_ORDERS], ids=["opacus-grid", "default-grid"])
@pytest.mark.parametrize(
    "steps, conversion, expected, best_order",
    [
        # docs/math.md §13.6 (q = 0.01, z = 4, delta = 1e-5; Abadi et al. 2016 §5.1 setting, 100 / 400 epochs)
        (10_000, "classic", 1.2586, 20.0),
        (40_000, "classic", 2.5737, 10.4),
        (10_000, "improved", 1.0355, 17.0),
        (40_000, "improved", 2.2097, 9.4),
    ],
)
def test_abadi_setting(orders, steps, conversion, expected, best_order):
    eps, order = rdp_epsilon(SubsampledGaussianEvent(4.0, 0.01), steps, orders=orders, conversion=conversion)
    assert eps == pytest.approx(expected, abs=5e-5)
    assert order == best_order


@pytest.mark.parametrize("conversion, expected", [("classic", 3.008), ("improved", 2.597)])
def test_mnist_60_epochs(conversion, expected):
    # docs/math.md §13.6: q = 256/60000, z = 1.1, T = 14063 (60 epochs), delta = 1e-5
    eps, _ = rdp_epsilon(SubsampledGaussianEvent(1.1, 256 / 60_000), 14_063, conversion=conversion)
    assert eps == pytest.approx(expected, abs=5e-4)


def test_opacus_golden_value():
    # opacus tests/accountants_test.py: eps = 7.3291 for z = 1.5, q = 0.04, 2250 steps, delta = 1e-5, on
    # opacus's order grid with the improved conversion (get_privacy_spent).
    eps, _ = rdp_epsilon(SubsampledGaussianEvent(1.5, 0.04), 2250, orders=OPACUS_ORDERS)
    assert eps == pytest.approx(7.3291, abs=5e-5)


@pytest.mark.parametrize("z, steps", [(1.0, 1), (10.0, 100)])
def test_gaussian_composed_to_mu_one(z, steps):
    # docs/math.md §4.3/§18: mu_tot = sqrt(T)/z = 1 at delta = 1e-5: exact 4.3772 (Balle & Wang 2018),
    # RDP classic 5.2985, RDP improved 4.7284 (the optimum over continuous orders; the default grid's
    # 0.1 spacing costs 1.2e-4 there).
    exact = gaussian_epsilon_exact(1e-5, z / math.sqrt(steps))
    assert exact == pytest.approx(4.3772, abs=5e-5)
    classic, _ = rdp_epsilon(GaussianEvent(z), steps, conversion="classic")
    improved, _ = rdp_epsilon(GaussianEvent(z), steps)
    fine, _ = rdp_epsilon(GaussianEvent(z), steps, orders=np.linspace(1.5, 20, 18_501))
    assert classic == pytest.approx(5.2985, abs=5e-5)
    assert fine == pytest.approx(4.7284, abs=5e-5)
    assert fine <= improved <= fine + 2e-4
    assert exact <= fine <= improved <= classic


@pytest.mark.parametrize("z, steps, q", [(1.0, 1, 1.0), (4.0, 100, 1.0), (10.0, 1000, 1.0), (2.0, 50, 1.0)])
def test_rdp_upper_bounds_the_exact_gaussian_epsilon(z, steps, q):
    # T Gaussians with multiplier z are one Gaussian with z / sqrt(T) (Dong, Roth & Su 2019)
    exact = gaussian_epsilon_exact(1e-5, z / math.sqrt(steps))
    for conversion in ("classic", "improved"):
        eps, _ = rdp_epsilon(SubsampledGaussianEvent(z, q), steps, conversion=conversion)
        assert eps >= exact * (1 - 1e-12)


# ------------------------------------------------------------------------------------------------
# identities of the sampled-Gaussian math


@pytest.mark.parametrize("z", [0.3, 1.0, 4.0, 100.0])
def test_q_one_is_the_plain_gaussian(z):
    orders = np.array([1.1, 1.5, 2.0, 7.3, 63.0, 1024.0])
    np.testing.assert_array_equal(rdp_sampled_gaussian(1.0, z, orders), orders / (2 * z * z))
    np.testing.assert_array_equal(rdp_gaussian(z, orders), orders / (2 * z * z))
    np.testing.assert_array_equal(
        event_rdp_curve(SubsampledGaussianEvent(z, 1.0), tuple(orders)),
        event_rdp_curve(GaussianEvent(z), tuple(orders)),
    )


@pytest.mark.parametrize("q", [1e-6, 1e-3, 0.01, 0.2, 0.5, 0.9, 0.999])
@pytest.mark.parametrize("z", [0.3, 0.7, 1.0, 4.0, 30.0])
def test_fractional_series_equals_binomial_at_integer_orders(q, z):
    # MTZ 2019 §3.3: at integer alpha the generalised binomials vanish past i = alpha and the two
    # erfc halves add up to 1, so the series must reproduce the closed form.
    orders = np.array([2, 3, 5, 8, 13, 21, 40])
    series = log_a_fractional(q, z, orders)
    closed = log_a_integer(q, z, orders)
    np.testing.assert_allclose(series, closed, rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("q", [1e-3, 0.01, 0.1, 0.5, 0.9])
@pytest.mark.parametrize("z", [0.3, 0.8, 2.0, 4.0, 20.0])
def test_series_matches_numerical_integration(q, z):
    # log A_alpha by two independent routes: the MTZ series and a fine trapezoid grid of the integral.
    # The series drops terms below e^-30 (MTZ 2019 §3.3), an absolute error < 1e-13 in ln A.
    for alpha in (1.05, 1.5, 2.5, 4.7, 10.9, 33.3):
        assert log_a(q, z, alpha) == pytest.approx(log_a_integrated(q, z, alpha), rel=1e-8, abs=1e-13)


@pytest.mark.parametrize("q, z, alpha", [(0.5, 0.3, 100.5), (0.5, 1.0, 200.5), (0.01, 4.0, 500.5), (0.9, 2.0, 60.5)])
def test_series_at_large_fractional_orders(q, z, alpha):
    # large orders: huge terms of both signs; the separate positive/negative accumulation must hold
    assert log_a_fractional(q, z, alpha) == pytest.approx(log_a_integrated(q, z, alpha), rel=1e-12)


def test_integer_closed_form_matches_integration_with_tiny_sampling_rate():
    # A - 1 ~ q^2 is ~1e-12 here; the A - 1 form keeps relative precision (summing to 1 + 1e-12 would not)
    for alpha in (2, 3, 10):
        assert log_a_integer(1e-6, 1.0, alpha) == pytest.approx(log_a_integrated(1e-6, 1.0, alpha), rel=1e-6)
        expected = alpha * (alpha - 1) / 2 * 1e-12 * math.expm1(1.0)  # leading term C(a,2) q^2 (e^{1/z^2} - 1)
        assert log_a_integer(1e-6, 1.0, alpha) == pytest.approx(expected, rel=1e-5 * alpha**2)
    # ... until q^j e^{(j^2-j)/(2 z^2)} wins: at alpha = 64 the j = 64 term alone is e^{1132}
    assert log_a_integer(1e-6, 1.0, 64) == pytest.approx(log_a_integrated(1e-6, 1.0, 64), rel=1e-12)
    assert log_a_integer(1e-6, 1.0, 64) == pytest.approx(64 * math.log(1e-6) + 64 * 63 / 2, rel=1e-6)


@pytest.mark.parametrize("q, z", [(0.01, 4.0), (0.1, 1.0), (0.5, 0.5), (0.9, 2.0), (1e-4, 10.0)])
def test_log_a_is_convex_and_rdp_nondecreasing_in_the_order(q, z):
    # ln A_alpha is a log moment-generating function, hence convex in alpha, and the Renyi divergence
    # is non-decreasing in its order (van Erven & Harremoes 2014). Mixing integer (closed form) and
    # fractional (series) orders on one fine grid checks that the two branches join up.
    alphas = np.round(np.arange(1.5, 12.01, 0.25), 2)
    values = np.asarray(log_a(q, z, alphas))
    second_difference = values[2:] - 2 * values[1:-1] + values[:-2]
    assert np.all(second_difference >= -1e-12 * np.abs(values[1:-1]) - 1e-15)
    rdp = rdp_sampled_gaussian(q, z, DEFAULT_ORDERS)
    assert np.all(np.diff(rdp) >= -1e-12 * rdp[1:])


def test_sampled_gaussian_is_amplified():
    # subsampling can only help: the curve lies below the plain Gaussian's and grows with q
    orders = DEFAULT_ORDERS
    previous = np.zeros_like(orders)
    for q in (1e-4, 1e-3, 0.01, 0.1, 0.5, 1.0):
        current = rdp_sampled_gaussian(q, 2.0, orders)
        assert np.all(current >= previous)
        assert np.all(current <= orders / 8 * (1 + 1e-12))
        previous = current


# ------------------------------------------------------------------------------------------------
# Laplace and pure DP


@pytest.mark.parametrize("b", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("alpha", [1.1, 2.0, 3.7, 10.0])
def test_laplace_matches_the_renyi_divergence_integral(b, alpha):
    # D_alpha(Lap(0, b) || Lap(1, b)) = 1/(alpha-1) ln int p^alpha q^(1-alpha), by quadrature
    def integrand(x):
        return math.exp(-(alpha * abs(x) + (1 - alpha) * abs(x - 1)) / b) / (2 * b)

    integral = sum(integrate.quad(integrand, lo, hi, epsabs=0, epsrel=1e-13)[0]
                   for lo, hi in ((-np.inf, 0), (0, 1), (1, np.inf)))
    assert rdp_laplace(b, alpha) == pytest.approx(math.log(integral) / (alpha - 1), rel=1e-10)


@pytest.mark.parametrize("b", [0.01, 0.5, 2.0, 100.0])
def test_laplace_limits_and_pure_dp_bound(b):
    orders = np.concatenate([DEFAULT_ORDERS, [1e4, 1e6]])
    curve = rdp_laplace(b, orders)
    assert np.all(np.isfinite(curve))
    assert np.all(np.diff(curve) >= -1e-12 * curve[1:])
    assert np.all(curve <= rdp_pure_dp(1 / b, orders) * (1 + 1e-12))  # Laplace is (1/b)-DP
    assert curve[-1] == pytest.approx(1 / b, rel=1e-4)  # -> 1/b as alpha -> infinity


def test_pure_dp_curve():
    np.testing.assert_allclose(rdp_pure_dp(0.5, [1.5, 4.0, 100.0]), [0.1875, 0.5, 0.5])


# ------------------------------------------------------------------------------------------------
# conversions


@settings(max_examples=200, deadline=None)
@given(
    rdp=st.lists(st.floats(0, 50), min_size=3, max_size=3),
    orders=st.lists(st.floats(1.01, 500), min_size=3, max_size=3, unique=True),
    delta=st.floats(1e-12, 0.5),
)
def test_improved_conversion_never_exceeds_classic(rdp, orders, delta):
    classic, _ = epsilon_from_rdp(orders, rdp, delta, "classic")
    improved, _ = epsilon_from_rdp(orders, rdp, delta, "improved")
    assert 0 <= improved <= classic


def test_classic_conversion_by_hand():
    orders, rdp = [2.0, 5.0, 33.0], [0.1, 0.3, 2.0]
    expected = [r + math.log(1e5) / (a - 1) for a, r in zip(orders, rdp)]  # 11.61, 3.18, 2.36
    assert epsilon_from_rdp(orders, rdp, 1e-5, "classic") == (pytest.approx(min(expected)), 33.0)
    assert epsilon_from_rdp(orders, rdp, 1e-2, "classic") == (pytest.approx(0.3 + math.log(100) / 4), 5.0)
    improved = [r + math.log((a - 1) / a) - (math.log(1e-5) + math.log(a)) / (a - 1) for a, r in zip(orders, rdp)]
    assert epsilon_from_rdp(orders, rdp, 1e-5, "improved")[0] == pytest.approx(min(improved))


@pytest.mark.parametrize("conversion", ["classic", "improved"])
@pytest.mark.parametrize("z, q, steps", [(4.0, 0.01, 10_000), (1.1, 0.004, 3000), (2.0, 1.0, 10)])
def test_get_delta_inverts_get_epsilon(conversion, z, q, steps):
    # the best order for epsilon(delta) attains delta exactly, and every other order needs more delta
    acc = RDPAccountant(conversion=conversion).compose(SubsampledGaussianEvent(z, q), steps)
    for delta in (1e-9, 1e-5, 1e-2):
        assert acc.get_delta(acc.get_epsilon(delta)) == pytest.approx(delta, rel=1e-9)


def test_conversion_clamps_at_zero():
    eps, _ = epsilon_from_rdp([2.0, 3.0], [0.0, 0.0], 0.9, "improved")
    assert eps == 0.0


def test_delta_is_capped_at_one_and_never_overflows():
    acc = RDPAccountant().compose(SubsampledGaussianEvent(0.3, 0.5), 10**6)
    assert acc.get_delta(1.0) == 1.0
    assert acc.get_delta(1e7) < 1e-5


# ------------------------------------------------------------------------------------------------
# the accountant


def test_compose_count_equals_repetition_and_mixed_ledgers_add():
    event = SubsampledGaussianEvent(1.1, 0.01)
    repeated = RDPAccountant()
    for _ in range(5):
        repeated.compose(event)
    assert RDPAccountant().compose(event, 5).get_epsilon(1e-5) == pytest.approx(repeated.get_epsilon(1e-5), rel=1e-12)

    events = [(GaussianEvent(3.0), 2), (LaplaceEvent(0.5), 3), (event, 100), (EpsilonDeltaEvent(0.2), 1)]
    acc = RDPAccountant()
    for e, count in events:
        acc.compose(e, count)
    orders, total = acc.rdp_curve()
    expected = (2 * rdp_gaussian(3.0, orders) + 3 * rdp_laplace(2.0, orders)
                + 100 * rdp_sampled_gaussian(0.01, 1.1, orders) + rdp_pure_dp(0.2, orders))
    np.testing.assert_allclose(total, expected, rtol=1e-13)


def test_empty_ledger():
    acc = RDPAccountant()
    assert acc.get_epsilon(1e-5) == 0.0
    assert acc.get_epsilon_and_order(1e-5) == (0.0, None)
    assert acc.get_delta(1.0) == 0.0
    orders, total = acc.rdp_curve()
    assert np.all(total == 0) and orders.shape == DEFAULT_ORDERS.shape


def test_orders_are_a_set():
    event = SubsampledGaussianEvent(1.0, 0.05)
    shuffled = [7.0, 2.5, 1.5, 32.0, 2.5]
    a = RDPAccountant(orders=shuffled).compose(event, 100)
    b = RDPAccountant(orders=sorted(set(shuffled))).compose(event, 100)
    assert a.get_epsilon_and_order(1e-5) == b.get_epsilon_and_order(1e-5)


def test_identical_steps_are_evaluated_once():
    event_rdp_curve.cache_clear()
    event = SubsampledGaussianEvent(noise_multiplier=1.3, sampling_rate=0.02)
    for _ in range(3):
        RDPAccountant().compose(event, 10_000).get_epsilon(1e-5)
    info = event_rdp_curve.cache_info()
    assert info.misses == 1 and info.hits == 2
    curve = event_rdp_curve(event, tuple(DEFAULT_ORDERS.tolist()))
    assert not curve.flags.writeable  # the cached array cannot be corrupted by a caller


# monotonicity in steps, sampling rate and noise: tests/test_accountant_contract.py (every accountant)


@pytest.mark.parametrize("conversion", ["classic", "improved"])
def test_supported_and_refused_events(conversion):
    acc = RDPAccountant(conversion=conversion)
    assert acc.supports(EpsilonDeltaEvent(1.0)) and acc.supports(LaplaceEvent(1.0))
    assert not acc.supports(EpsilonDeltaEvent(1.0, 1e-6))
    with pytest.raises(UnsupportedEventError, match="delta > 0"):
        acc.compose(EpsilonDeltaEvent(1.0, 1e-6))
    with pytest.raises(UnsupportedEventError, match="Poisson"):
        acc.compose(ShuffledBatchGaussianEvent(1.0, batch_size=100, dataset_size=10_000))
    assert acc.ledger == []


def test_many_pure_dp_events_use_the_zcdp_side_of_the_curve():
    # 1000 releases of 0.1-DP: each is (0.1^2/2)-zCDP (Bun & Steinke 2016, Prop. 3.3), so the total curve
    # is 5 alpha wherever that is below 1000 * 0.1 = 100; far below sequential composition's 100.
    acc = RDPAccountant().compose(EpsilonDeltaEvent(0.1), 1000)
    orders, total = acc.rdp_curve()
    np.testing.assert_allclose(total, np.minimum(100.0, 5.0 * orders), rtol=1e-12)
    eps, order = acc.get_epsilon_and_order(1e-5)
    assert eps == pytest.approx(epsilon_from_rdp(orders, 5.0 * orders, 1e-5)[0], rel=1e-12)
    assert 5.0 * order < 100 and eps < 25


def test_edge_warnings():
    with pytest.warns(OrderGridEdgeWarning, match="largest.*extend orders with larger orders"):
        RDPAccountant(orders=OPACUS_ORDERS).compose(GaussianEvent(100.0)).get_epsilon(1e-5)
    with pytest.warns(OrderGridEdgeWarning, match="smallest"):
        RDPAccountant().compose(SubsampledGaussianEvent(0.3, 0.5), 10**6).get_epsilon_and_order(1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OrderGridEdgeWarning)  # z = 100 is inside the extended grid
        _, order = RDPAccountant().compose(GaussianEvent(100.0)).get_epsilon_and_order(1e-5)
    assert order == 320.0


@pytest.mark.parametrize("q", [1e-6, 1e-3, 0.5, 1.0])
@pytest.mark.parametrize("z", [0.3, 1.0, 100.0])
@pytest.mark.parametrize("steps", [1, 10**6])
def test_extreme_parameters_stay_finite(q, z, steps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridEdgeWarning)
        acc = RDPAccountant().compose(SubsampledGaussianEvent(z, q), steps)
        _, curve = acc.rdp_curve()
        eps = acc.get_epsilon(1e-5)
        delta = acc.get_delta(1.0)
    assert np.all(np.isfinite(curve)) and np.all(curve >= 0)
    assert math.isfinite(eps) and eps > 0
    assert 0 <= delta <= 1


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: RDPAccountant(orders=[0.5, 2.0]), "orders"),
        (lambda: RDPAccountant(orders=[1.0, 2.0]), "orders"),
        (lambda: RDPAccountant(orders=[2.0, np.nan]), "orders"),
        (lambda: RDPAccountant(orders=[]), "orders"),
        (lambda: RDPAccountant(conversion="tight"), "conversion"),
        (lambda: RDPAccountant().compose(GaussianEvent(1.0)).get_epsilon(0.0), "delta"),
        (lambda: RDPAccountant().compose(GaussianEvent(1.0)).get_epsilon_and_order(1.5), "delta"),
        (lambda: RDPAccountant().compose(GaussianEvent(1.0)).get_delta(-1.0), "epsilon"),
        (lambda: rdp_sampled_gaussian(0.0, 1.0, 2.0), "sampling_rate"),
        (lambda: rdp_sampled_gaussian(1.5, 1.0, 2.0), "sampling_rate"),
        (lambda: rdp_sampled_gaussian(0.1, 0.0, 2.0), "noise_multiplier"),
        (lambda: rdp_sampled_gaussian(0.1, 1.0, [2.0, 1.0]), "orders"),
        (lambda: log_a_integer(0.1, 1.0, 2.5), "orders"),
        (lambda: rdp_laplace(-1.0, 2.0), "scale"),
        (lambda: rdp_pure_dp(0.0, 2.0), "epsilon"),
        (lambda: epsilon_from_rdp([2.0, 3.0], [1.0], 1e-5), "rdp"),
        (lambda: delta_from_rdp([2.0], [1.0], 1.0, conversion="x"), "conversion"),
    ],
)
def test_bad_parameters_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("orders, rdp, name", [
    ([2.0], ["0.5"], "rdp"), ([2.0], [True], "rdp"), ([2.0], [0.5 + 0j], "rdp"), ([True, 2.0], [0.5, 0.5], "orders"),
    (["2"], [0.5], "orders"),
])
def test_epsilon_from_rdp_refuses_non_real_input(orders, rdp, name):
    with pytest.raises(TypeError, match=name):
        epsilon_from_rdp(orders, rdp, 1e-5)
    with pytest.raises(TypeError, match=name):
        delta_from_rdp(orders, rdp, 1.0)


# --- the curve of each event: one registered function per event type --------------------------------------------


def test_rdp_supports_exactly_the_event_types_with_a_registered_curve():
    from dpedu.accountants.rdp import RDP_EVENTS, rdp_of

    registered = {t for t in rdp_of.registry if t is not object}
    assert set(RDPAccountant.supported_events) == registered == set(RDP_EVENTS)
    alphas = np.array([2.0, 8.0])
    for event, expected in [(GaussianEvent(2.0), rdp_gaussian(2.0, alphas)),
                            (SubsampledGaussianEvent(2.0, 0.1), rdp_sampled_gaussian(0.1, 2.0, alphas)),
                            (LaplaceEvent(0.5), rdp_laplace(2.0, alphas)),
                            (EpsilonDeltaEvent(0.5), rdp_pure_dp(0.5, alphas))]:
        assert np.array_equal(rdp_of(event, alphas), expected)
        assert np.array_equal(event_rdp_curve(event, (2.0, 8.0)), expected)


def test_an_event_without_a_registered_curve_is_refused():
    from dpedu.accountants.rdp import rdp_of

    with pytest.raises(TypeError, match="no RDP curve"):
        rdp_of(ShuffledBatchGaussianEvent(1.0, 10, 100), np.array([2.0]))
    with pytest.raises(TypeError, match="only pure DP"):
        rdp_of(EpsilonDeltaEvent(1.0, 1e-6), np.array([2.0]))
