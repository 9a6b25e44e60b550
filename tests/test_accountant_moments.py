"""Moments accountant (Abadi et al. 2016): dpedu/accountants/moments.py."""

import math
import warnings

import numpy as np
import pytest

from dpedu.accountants import (
    EpsilonDeltaEvent,
    GaussianEvent,
    LaplaceEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    UnsupportedEventError,
)
from dpedu.accountants.analysis.log_moments import log_moment
from dpedu.accountants.analysis.log_moments_integrated import abadi_log_moments_integrated
from dpedu.accountants.analysis.rdp_curves import rdp_laplace, rdp_pure_dp, rdp_sampled_gaussian
from dpedu.accountants.moments import (
    MomentsAccountant,
    OrderGridEdgeWarning,
    abadi_lemma3_bound,
    delta_from_log_moments,
    epsilon_from_log_moments,
    event_log_moments,
)
from dpedu.accountants.rdp import DEFAULT_ORDERS, RDPAccountant
from dpedu.accountants.calibrate import gaussian_epsilon_exact

ABADI_STEP = SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01)


# ------------------------------------------------------------------------------------------------
# the paper's numbers


@pytest.mark.parametrize("method", ["closed_form", "integration"])
@pytest.mark.parametrize(
    "steps, expected, best_lambda, paper",
    [
        # Abadi et al. 2016 §5.1 (q = 0.01, z = 4, delta = 1e-5): "1.26" after E = 100 epochs and "2.55"
        # after E = 400; exact log-moments at integer lambda <= 32 give 1.2586 / 2.5759 (docs/math.md §12.6).
        (10_000, 1.2586, 19, 1.26),
        (40_000, 2.5759, 9, 2.55),
    ],
)
def test_abadi_headline_numbers(method, steps, expected, best_lambda, paper):
    eps, lam = MomentsAccountant(method=method).compose(ABADI_STEP, steps).get_epsilon_and_moment_order(1e-5)
    assert eps == pytest.approx(expected, abs=5e-5)
    assert lam == best_lambda
    assert eps == pytest.approx(paper, abs=0.03)


def test_lemma3_as_an_accountant_gives_1_77():
    # docs/math.md §12.5: the Lemma 3 leading term through the tail bound at the headline setting: 1.77 vs 1.26
    lambdas = np.arange(1, 33)
    bound = np.array([abadi_lemma3_bound(0.01, 4.0, lam) for lam in lambdas])
    eps, lam = epsilon_from_log_moments(lambdas, 10_000 * bound, 1e-5)
    assert eps == pytest.approx(1.7693, abs=5e-5)
    assert lam == 14


@pytest.mark.parametrize("z, steps", [(1.0, 1), (10.0, 100), (4.0, 16)])
def test_moments_upper_bounds_the_exact_gaussian_epsilon(z, steps):
    # T Gaussians with multiplier z are one Gaussian with z / sqrt(T) (Dong, Roth & Su 2019); exact
    # epsilon by Balle & Wang 2018. mu_tot = 1: exact 4.3772 <= RDP classic 5.2985 <= moments.
    exact = gaussian_epsilon_exact(1e-5, z / math.sqrt(steps))
    for method in ("closed_form", "integration"):
        eps = MomentsAccountant(method=method).compose(GaussianEvent(z), steps).get_epsilon(1e-5)
        assert eps >= exact * (1 - 1e-12)
        if z / math.sqrt(steps) == 1.0:
            # integer orders only: alpha = lambda + 1 = 6, i.e. 6/2 + ln(1e5)/5
            assert eps == pytest.approx(3 + math.log(1e5) / 5, rel=1e-12)
            assert eps > 5.2985 > 4.3772


# ------------------------------------------------------------------------------------------------
# E1 <= E2, closed form vs integration


@pytest.mark.parametrize("q", [1e-3, 0.01, 0.1, 0.5, 0.9, 0.99])
@pytest.mark.parametrize("z", [0.5, 1.0, 2.0, 4.0, 10.0])
def test_e2_dominates_e1_and_matches_the_closed_form(q, z):
    # Abadi et al. need max(E1, E2); Mironov, Talwar & Zhang (2019, §3) show E1 <= E2 for the sampled
    # Gaussian. Both computed here by numerical integration; E2 also equals the binomial closed form.
    lambdas = np.array([1, 2, 4, 8, 16, 32])
    log_e1, log_e2 = abadi_log_moments_integrated(q, z, lambdas)
    assert np.all(log_e1 <= log_e2 + 1e-12 * log_e2)
    np.testing.assert_allclose(log_e2, log_moment(q, z, lambdas), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("z", [0.5, 1.0, 3.0])
def test_without_sampling_both_directions_are_equal(z):
    # q = 1: N(0, z^2) vs N(1, z^2) is symmetric, E1 = E2 = exp(lambda (lambda + 1) / (2 z^2))
    lambdas = np.array([1, 5, 32])
    log_e1, log_e2 = abadi_log_moments_integrated(1.0, z, lambdas)
    np.testing.assert_allclose(log_e1, lambdas * (lambdas + 1) / (2 * z * z), rtol=1e-12)
    np.testing.assert_allclose(log_e2, lambdas * (lambdas + 1) / (2 * z * z), rtol=1e-12)


@pytest.mark.parametrize("event", [SubsampledGaussianEvent(1.1, 0.01), SubsampledGaussianEvent(0.7, 0.3),
                                   GaussianEvent(2.0), ABADI_STEP])
def test_integration_method_agrees_with_closed_form(event):
    key = tuple(range(1, 33))
    np.testing.assert_allclose(event_log_moments(event, key, "integration"),
                               event_log_moments(event, key, "closed_form"), rtol=1e-9, atol=1e-15)


def test_leading_term_of_the_log_moment():
    # As q -> 0, alpha(lambda) = C(lambda + 1, 2) q^2 (e^{1/z^2} - 1) + O(q^3): about half of Lemma 3's
    # q^2 lambda (lambda + 1) / ((1 - q) z^2) for large z (docs/math.md §12.5).
    q, z = 1e-5, 4.0
    for lam in (1, 5, 20):
        leading = lam * (lam + 1) / 2 * q * q * math.expm1(1 / z**2)
        assert log_moment(q, z, lam) == pytest.approx(leading, rel=1e-3)
        assert log_moment(q, z, lam) < abadi_lemma3_bound(q, z, lam)


# ------------------------------------------------------------------------------------------------
# relation to RDP


@pytest.mark.parametrize("event, steps", [(ABADI_STEP, 10_000), (ABADI_STEP, 40_000), (GaussianEvent(3.0), 10),
                                          (SubsampledGaussianEvent(1.0, 0.1), 500), (LaplaceEvent(0.5), 7),
                                          (EpsilonDeltaEvent(0.3), 20)])
def test_moments_is_classic_rdp_at_orders_lambda_plus_one(event, steps):
    # alpha(lambda) = lambda * eps_RDP(lambda + 1), and the tail bound is the classic conversion there
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridEdgeWarning)
        moments = MomentsAccountant().compose(event, steps)
        same_orders = RDPAccountant(orders=np.arange(2, 34), conversion="classic").compose(event, steps)
        assert moments.get_epsilon(1e-5) == pytest.approx(same_orders.get_epsilon(1e-5), rel=1e-12)
        assert moments.get_delta(1.0) == pytest.approx(same_orders.get_delta(1.0), rel=1e-9)
        classic = RDPAccountant(conversion="classic").compose(event, steps).get_epsilon(1e-5)
        improved = RDPAccountant().compose(event, steps).get_epsilon(1e-5)
        assert moments.get_epsilon(1e-5) >= classic * (1 - 1e-14) and classic >= improved


def test_log_moments_of_laplace_and_pure_dp_events():
    lambdas = np.arange(1, 33)
    acc = MomentsAccountant().compose(LaplaceEvent(0.5)).compose(EpsilonDeltaEvent(0.2), 3)
    _, total = acc.log_moments()
    expected = lambdas * rdp_laplace(2.0, lambdas + 1) + 3 * lambdas * rdp_pure_dp(0.2, lambdas + 1)
    np.testing.assert_allclose(total, expected, rtol=1e-13)
    np.testing.assert_allclose(log_moment(0.01, 4.0, lambdas), lambdas * rdp_sampled_gaussian(0.01, 4.0, lambdas + 1.0),
                               rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# conversions and the accountant's contract


def test_tail_bound_by_hand():
    lambdas, alpha = [1, 2, 3], [0.5, 1.5, 4.0]
    candidates = [(a + math.log(1e3)) / lam for lam, a in zip(lambdas, alpha)]  # 7.41, 4.20, 3.64
    assert epsilon_from_log_moments(lambdas, alpha, 1e-3) == (pytest.approx(min(candidates)), 3)
    deltas = [math.exp(a - lam * 2.0) for lam, a in zip(lambdas, alpha)]
    assert delta_from_log_moments(lambdas, alpha, 2.0) == (pytest.approx(min(deltas)), 2)
    assert delta_from_log_moments(lambdas, [5.0, 50.0, 500.0], 0.1)[0] == 1.0  # capped, no overflow


@pytest.mark.parametrize("steps", [100, 10_000])
def test_get_delta_inverts_get_epsilon(steps):
    acc = MomentsAccountant().compose(ABADI_STEP, steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridEdgeWarning)
        for delta in (1e-9, 1e-5, 1e-2):
            assert acc.get_delta(acc.get_epsilon(delta)) == pytest.approx(delta, rel=1e-9)


def test_compose_count_equals_repetition():
    event = SubsampledGaussianEvent(1.0, 0.05)
    repeated = MomentsAccountant()
    for _ in range(5):
        repeated.compose(event)
    assert MomentsAccountant().compose(event, 5).get_epsilon(1e-5) == pytest.approx(
        repeated.get_epsilon(1e-5), rel=1e-12)


def test_empty_ledger():
    acc = MomentsAccountant()
    assert acc.get_epsilon(1e-5) == 0.0
    assert acc.get_epsilon_and_moment_order(1e-5) == (0.0, None)
    assert acc.get_delta(1.0) == 0.0


def test_identical_steps_are_evaluated_once():
    event_log_moments.cache_clear()
    event = SubsampledGaussianEvent(noise_multiplier=1.7, sampling_rate=0.02)
    for _ in range(3):
        MomentsAccountant().compose(event, 10_000).get_epsilon(1e-5)
    info = event_log_moments.cache_info()
    assert info.misses == 1 and info.hits == 2


# monotonicity in steps, sampling rate and noise: tests/test_accountant_contract.py (every accountant)


def test_supported_and_refused_events():
    acc = MomentsAccountant()
    assert acc.supports(EpsilonDeltaEvent(1.0)) and acc.supports(LaplaceEvent(1.0))
    assert not acc.supports(EpsilonDeltaEvent(1.0, 1e-6))
    with pytest.raises(UnsupportedEventError, match="delta > 0"):
        acc.compose(EpsilonDeltaEvent(1.0, 1e-6))
    with pytest.raises(UnsupportedEventError, match="Poisson"):
        acc.compose(ShuffledBatchGaussianEvent(1.0, batch_size=100, dataset_size=10_000))
    assert acc.ledger == []


def test_edge_warnings():
    # one step with z = 4: the best lambda is beyond 32
    with pytest.warns(OrderGridEdgeWarning, match="largest.*moment_orders"):
        MomentsAccountant().compose(ABADI_STEP).get_epsilon(1e-5)
    _, lam = MomentsAccountant(moment_orders=range(1, 257)).compose(ABADI_STEP).get_epsilon_and_moment_order(1e-5)
    assert 32 < lam < 256
    # lambda = 1 is the smallest integer order: the advice points to fractional RDP orders instead
    with pytest.warns(OrderGridEdgeWarning, match="fractional orders"):
        MomentsAccountant().compose(SubsampledGaussianEvent(0.5, 0.5), 10_000).get_epsilon(1e-5)


@pytest.mark.parametrize("q", [1e-6, 0.01, 1.0])
@pytest.mark.parametrize("z", [0.3, 100.0])
@pytest.mark.parametrize("steps", [1, 10**6])
def test_extreme_parameters_stay_finite(q, z, steps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridEdgeWarning)
        acc = MomentsAccountant().compose(SubsampledGaussianEvent(z, q), steps)
        eps, delta = acc.get_epsilon(1e-5), acc.get_delta(1.0)
    assert np.all(np.isfinite(acc.log_moments()[1]))
    assert math.isfinite(eps) and eps > 0 and 0 <= delta <= 1


# ------------------------------------------------------------------------------------------------
# Lemma 3 and bad parameters


def test_lemma3_value():
    assert abadi_lemma3_bound(0.01, 4.0, 19) == pytest.approx(0.01**2 * 19 * 20 / (0.99 * 16), rel=1e-15)


@pytest.mark.parametrize(
    "args, message",
    [
        ((0.01, 0.9, 1), "noise_multiplier >= 1"),
        ((0.02, 4.0, 1), r"sampling_rate < 1/\(16 z\)"),
        ((0.01, 4.0, 52), r"moment_order <= z\^2 ln"),   # 16 ln(25) = 51.5
        ((0.01, 4.0, 0), "moment_order"),
        ((0.0, 4.0, 1), "sampling_rate"),
        ((0.01, -4.0, 1), "noise_multiplier"),
    ],
)
def test_lemma3_conditions_are_checked(args, message):
    with pytest.raises(ValueError, match=message):
        abadi_lemma3_bound(*args)
    assert abadi_lemma3_bound(0.01, 4.0, 51) > 0  # the largest admissible order


def test_lemma3_rejects_non_integer_order():
    with pytest.raises(TypeError, match="moment_order"):
        abadi_lemma3_bound(0.01, 4.0, 2.5)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: MomentsAccountant(moment_orders=[1, 2.5]), "moment_orders"),
        (lambda: MomentsAccountant(moment_orders=[0, 1]), "moment_orders"),
        (lambda: MomentsAccountant(moment_orders=[]), "moment_orders"),
        (lambda: MomentsAccountant(method="quadrature"), "method"),
        (lambda: MomentsAccountant().compose(ABADI_STEP).get_epsilon(1.0), "delta"),
        (lambda: MomentsAccountant().compose(ABADI_STEP).get_epsilon_and_moment_order(0.0), "delta"),
        (lambda: MomentsAccountant().compose(ABADI_STEP).get_delta(0.0), "epsilon"),
        (lambda: log_moment(0.01, 4.0, 0), "moment_orders"),
        (lambda: epsilon_from_log_moments([1, 2], [0.1], 1e-5), "log_moments"),
        (lambda: epsilon_from_log_moments([1, 2], [0.1, -1.0], 1e-5), "log_moments"),
    ],
)
def test_bad_parameters_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_default_rdp_grid_is_at_least_as_tight():
    # same log-moments, more orders (fractional ones too) and a better conversion
    moments = MomentsAccountant().compose(ABADI_STEP, 10_000).get_epsilon(1e-5)
    rdp = RDPAccountant(orders=DEFAULT_ORDERS).compose(ABADI_STEP, 10_000).get_epsilon(1e-5)
    assert rdp < moments


@pytest.mark.parametrize("orders, values, name", [
    ([1], ["0.5"], "log_moments"), ([1], [True], "log_moments"), ([1], [0.5 + 0j], "log_moments"),
    ([True, 2], [0.5, 0.5], "moment_orders"),
])
def test_epsilon_from_log_moments_refuses_non_real_input(orders, values, name):
    with pytest.raises(TypeError, match=name):
        epsilon_from_log_moments(orders, values, 1e-5)
