"""Private selection's accounting: RepeatAndSelectEvent, the trials distributions, the RDP bounds (docs/math.md §23).

The bounds are checked against closed forms (Papernot & Steinke 2022, Cor. 3 and Cor. 4), against an
independent loop over the theorems' expressions, and against the orderings the theorems imply.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

from dpedu.accountants import (
    ACCOUNTANT_NAMES,
    EpsilonDeltaEvent,
    GaussianEvent,
    LaplaceEvent,
    RepeatAndSelectEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    UnsupportedEventError,
    make_accountant,
)
from dpedu.accountants.analysis.conversions import delta_from_rdp
from dpedu.accountants.analysis.orders import DEFAULT_ORDERS
from dpedu.accountants.rdp import RDPAccountant, event_rdp_curve
from dpedu.accountants.analysis.rdp_curves import rdp_gaussian, rdp_laplace, rdp_sampled_gaussian
from dpedu.accountants.analysis.selection import (
    poisson_rdp,
    pure_selection_epsilon,
    repeat_and_select_rdp,
    truncated_negative_binomial_rdp,
)
from dpedu.accountants.analysis.trials import log_inverse_gamma, sample_trials, trials_mean, trials_pmf

SHAPES = (-0.5, 0.0, 0.5, 1.0, 2.0)
DPSGD_RUN = ((SubsampledGaussianEvent(1.0, 0.01), 1000), (LaplaceEvent(0.1), 1))


def _epsilon_of(ledger, delta):
    accountant = RDPAccountant()
    for event, count in ledger:
        accountant.compose(event, count)
    return accountant.get_epsilon(delta)


# --- the distribution of K ------------------------------------------------------------------------


def paper_mean(gamma, shape):
    """E[K] as Papernot & Steinke state it: eta (1 - gamma) / (gamma (1 - gamma^eta)); (1/gamma - 1) / ln(1/gamma)."""
    if shape == 0:
        return (1 / gamma - 1) / math.log(1 / gamma)
    return shape * (1 - gamma) / (gamma * (1 - gamma**shape))


def paper_pmf(k, gamma, shape):
    """Pr[K = k] as a product (eta != 0) or the logarithmic closed form (eta = 0)."""
    if shape == 0:
        return (1 - gamma) ** k / (k * math.log(1 / gamma))
    product = math.prod((ell + shape) / (ell + 1) for ell in range(k))
    return (1 - gamma) ** k / (gamma ** (-shape) - 1) * product


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mean", [1.5, 2.0, 10.0, 50.0])
def test_gamma_from_the_mean_inverts_the_papers_mean(mean, shape):
    gamma = math.exp(-log_inverse_gamma(mean, shape))
    assert paper_mean(gamma, shape) == pytest.approx(mean, rel=1e-9)
    assert trials_mean(-math.log(gamma), shape) == pytest.approx(mean, rel=1e-9)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_recursion_gives_the_papers_probabilities(shape):
    mean = 5.0
    gamma = math.exp(-log_inverse_gamma(mean, shape))
    for k in (1, 2, 3, 7, 20):
        assert trials_pmf(k, mean, shape) == pytest.approx(paper_pmf(k, gamma, shape), rel=1e-9)
    assert trials_pmf(0, mean, shape) == 0.0


def test_geometric_and_poisson_closed_forms():
    assert trials_pmf(4, 10.0, 1.0) == pytest.approx(0.1 * 0.9**3, rel=1e-12)
    assert log_inverse_gamma(10.0, 1.0) == math.log(10.0)
    assert trials_pmf(3, 2.5, math.inf) == pytest.approx(math.exp(-2.5) * 2.5**3 / 6, rel=1e-12)


@pytest.mark.parametrize("shape", SHAPES + (math.inf,))
def test_samples_have_the_asked_mean_and_repeat_with_the_seed(shape):
    mean = 4.0
    rng = np.random.default_rng(7)
    draws = np.array([sample_trials(mean, shape, rng) for _ in range(20_000)])
    if math.isfinite(shape):
        assert draws.min() >= 1
    standard_error = draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - mean) < 5 * standard_error
    first = [sample_trials(mean, shape, np.random.default_rng(3)) for _ in range(3)]
    assert len(set(first)) == 1


def test_sampled_frequencies_follow_the_pmf():
    rng = np.random.default_rng(11)
    draws = np.array([sample_trials(3.0, 0.0, rng) for _ in range(40_000)])
    for k in (1, 2, 3):
        p = trials_pmf(k, 3.0, 0.0)
        assert abs(np.mean(draws == k) - p) < 5 * math.sqrt(p * (1 - p) / draws.size)


# --- Theorem 2: the truncated negative binomial ---------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("rho,mean", [(0.01, 10.0), (0.1, 5.0), (0.02, 50.0)])
def test_gaussian_closed_form_of_corollary_4(rho, mean, shape):
    """Inner rho-zCDP Gaussian (eps(l) = rho l): with the best lambda-hat = sqrt(L / rho) on the grid, Thm 2 is
    rho (l - 1) + ln E[K] / (l - 1) + 2 (1 + eta) sqrt(rho L) - eta rho above l* = 1 + sqrt(ln E[K] / rho), and its
    value at l* below it."""
    L = log_inverse_gamma(mean, shape)
    assert rho < L
    log_mean = math.log(mean)
    best_order = 1 + math.sqrt(log_mean / rho)
    orders = np.array(sorted({1.5, 2.0, math.sqrt(L / rho), best_order, 3.0, 10.0, 100.0, 1000.0}))
    bound = truncated_negative_binomial_rdp(orders, rho * orders, mean, shape)
    constant = 2 * (1 + shape) * math.sqrt(rho * L) - shape * rho
    for order, value in zip(orders, bound):
        lam = max(order, best_order)
        expected = rho * (lam - 1) + log_mean / (lam - 1) + constant
        assert value == pytest.approx(expected, rel=1e-9), order


def theorem_2_by_loops(orders, rdp, mean, shape):
    """Papernot & Steinke Thm 2 written out with loops: every lambda, every lambda-hat, then monotonicity."""
    L = log_inverse_gamma(mean, shape)
    raw = []
    for lam, eps in zip(orders, rdp):
        best_hat = min((1 - 1 / hat) * eps_hat + L / hat for hat, eps_hat in zip(orders, rdp))
        raw.append(eps + (1 + shape) * best_hat + math.log(mean) / (lam - 1))
    return [min(r for other, r in zip(orders, raw) if other >= lam) for lam in orders]


@pytest.mark.parametrize("shape", SHAPES)
def test_theorem_2_matches_an_independent_loop_for_a_dpsgd_run(shape):
    orders = DEFAULT_ORDERS
    run = 1000 * rdp_sampled_gaussian(0.01, 1.0, orders) + rdp_laplace(10.0, orders)
    expected = theorem_2_by_loops(orders, run, 10.0, shape)
    assert truncated_negative_binomial_rdp(orders, run, 10.0, shape) == pytest.approx(expected, rel=1e-9)
    event = RepeatAndSelectEvent(DPSGD_RUN, mean=10.0, shape=shape)
    assert event_rdp_curve(event, tuple(orders.tolist())) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("shape", SHAPES)
def test_pure_dp_limit_is_corollary_3(shape):
    """Pure epsilon-DP runs: (2 + eta) epsilon (Liu & Talwar's 3 epsilon for the geometric K)."""
    event = RepeatAndSelectEvent([LaplaceEvent(0.3), EpsilonDeltaEvent(0.2, 0.0)], mean=10.0, shape=shape)
    assert pure_selection_epsilon(event) == pytest.approx((2 + shape) * 0.5, rel=1e-12)
    huge = np.array([1e13])   # the RDP bound at one enormous order tends to the same number
    assert truncated_negative_binomial_rdp(huge, [0.5], 10.0, shape)[0] == pytest.approx((2 + shape) * 0.5, rel=1e-6)


def test_liu_talwar_three_epsilon_for_the_geometric():
    assert pure_selection_epsilon(RepeatAndSelectEvent(LaplaceEvent(1.0), mean=2.0, shape=1.0)) == 3.0


# --- Theorem 6: Poisson -----------------------------------------------------------------------------


def test_poisson_pure_closed_form():
    """A Laplace run (b = 1/eps) at order l = 1 + 1/(e^eps - 1): eps-hat = eps, so delta-hat ~ 0 (order 1e100)
    and the bound is the Laplace curve plus ln(mu) (e^eps - 1) (as dp_accounting's own test)."""
    eps, mean = 1.0, 10.0
    order = 1 + 1 / math.expm1(eps)
    orders = np.array([order, 1e10, 1e100])
    bound = poisson_rdp(orders, rdp_laplace(1 / eps, orders), mean)
    expected = rdp_laplace(1 / eps, order) + math.log(mean) * math.expm1(eps)
    assert bound[0] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("sigma,mean", [(1.0, 10.0), (5.0, 2.0), (20.0, 1000.0)])
def test_poisson_matches_an_independent_loop_and_exceeds_the_exact_gaussian_delta_bound(sigma, mean):
    orders = DEFAULT_ORDERS
    run = rdp_gaussian(sigma, orders)
    raw = []
    for lam, eps in zip(orders, run):
        delta_hat = delta_from_rdp(orders, run, math.log1p(1 / (lam - 1)), "improved")[0]
        raw.append(eps + mean * delta_hat + math.log(mean) / (lam - 1))
    expected = [min(r for other, r in zip(orders, raw) if other >= lam) for lam in orders]
    bound = poisson_rdp(orders, run, mean)
    assert bound == pytest.approx(expected, rel=1e-12)
    # The exact Gaussian delta at eps-hat is never above the RDP-certified one, so the theorem with the exact
    # delta-hat (then the same monotone envelope) is a lower bound on what is certified.
    exact = []
    for lam in orders:
        e = math.log1p(1 / (lam - 1))
        delta = (math.erfc((e * sigma - 0.5 / sigma) / math.sqrt(2))
                 - math.exp(e) * math.erfc((e * sigma + 0.5 / sigma) / math.sqrt(2))) / 2
        exact.append(lam / (2 * sigma**2) + mean * delta + math.log(mean) / (lam - 1))
    for lam, value in zip(orders, bound):
        assert value >= min(r for other, r in zip(orders, exact) if other >= lam) * (1 - 1e-12)


# --- orderings ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES + (math.inf,))
def test_epsilon_grows_with_the_mean_number_of_runs(shape):
    values = [_epsilon_of([(RepeatAndSelectEvent(DPSGD_RUN, mean, shape), 1)], 1e-5) for mean in (2, 5, 10, 50, 500)]
    assert all(a < b for a, b in zip(values, values[1:]))


def test_epsilon_grows_with_the_shape_at_a_fixed_mean():
    values = [_epsilon_of([(RepeatAndSelectEvent(GaussianEvent(5.0), 10.0, s), 1)], 1e-5) for s in SHAPES]
    assert all(a < b for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("shape", SHAPES + (math.inf,))
def test_selection_costs_more_than_one_run_and_less_than_composing_the_mean(shape):
    run = _epsilon_of(DPSGD_RUN, 1e-5)
    selection = _epsilon_of([(RepeatAndSelectEvent(DPSGD_RUN, 10.0, shape), 1)], 1e-5)
    composed = _epsilon_of([(event, 10 * count) for event, count in DPSGD_RUN], 1e-5)
    assert run < selection < composed


def test_composing_two_selections_doubles_the_curve():
    event = RepeatAndSelectEvent(DPSGD_RUN, 10.0, 1.0)
    once = RDPAccountant().compose(event).rdp_curve()[1]
    assert RDPAccountant().compose(event, 2).rdp_curve()[1] == pytest.approx(2 * once)


def test_dispatch_by_shape():
    orders = np.array([2.0, 8.0])
    run = rdp_gaussian(3.0, orders)
    assert np.array_equal(repeat_and_select_rdp(orders, run, 5.0, math.inf), poisson_rdp(orders, run, 5.0))
    assert np.array_equal(repeat_and_select_rdp(orders, run, 5.0, 0.5),
                          truncated_negative_binomial_rdp(orders, run, 5.0, 0.5))


# --- conditions refused by name -------------------------------------------------------------------------


def test_the_event_normalises_its_ledger():
    event = RepeatAndSelectEvent(GaussianEvent(2.0), mean=3)
    assert event.run_ledger == ((GaussianEvent(2.0), 1),) and event.shape == 1.0 and event.mean == 3.0
    assert RepeatAndSelectEvent([GaussianEvent(2.0)], 3) == event and hash(event) == hash(RepeatAndSelectEvent(
        [(GaussianEvent(2.0), 1)], 3.0))


@pytest.mark.parametrize("kwargs,kind,word", [
    (dict(mean=1.0, shape=1.0), ValueError, "mean"),
    (dict(mean=0.5, shape=math.inf), ValueError, "mean"),
    (dict(mean=math.inf, shape=1.0), ValueError, "mean"),
    (dict(mean=float("nan"), shape=1.0), ValueError, "mean"),
    (dict(mean=True, shape=1.0), TypeError, "mean"),
    (dict(mean=5.0, shape=-1.0), ValueError, "shape"),
    (dict(mean=5.0, shape=float("nan")), ValueError, "shape"),
    (dict(mean=5.0, shape="geometric"), TypeError, "shape"),
])
def test_bad_parameters_are_refused_by_name(kwargs, kind, word):
    with pytest.raises(kind, match=word):
        RepeatAndSelectEvent(GaussianEvent(1.0), **kwargs)


@pytest.mark.parametrize("ledger,kind", [([], ValueError), ("run", TypeError), ([("a", 1)], TypeError),
                                         ([(GaussianEvent(1.0), 0)], ValueError),
                                         ([(GaussianEvent(1.0), 1.5)], TypeError)])
def test_bad_ledgers_are_refused_by_name(ledger, kind):
    with pytest.raises(kind, match="ledger"):
        RepeatAndSelectEvent(ledger, 5.0)


@pytest.mark.parametrize("name", [n for n in ACCOUNTANT_NAMES if n != "rdp"])
def test_every_other_accountant_refuses_it_naming_the_rdp_accountant(name):
    accountant = make_accountant(name)
    with pytest.raises(UnsupportedEventError, match=r"RepeatAndSelectEvent.*'rdp'"):
        accountant.compose(RepeatAndSelectEvent(GaussianEvent(1.0), 5.0))
    assert accountant.ledger == []


@pytest.mark.parametrize("inner", [EpsilonDeltaEvent(1.0, 1e-6), ShuffledBatchGaussianEvent(1.0, 10, 100)])
def test_the_rdp_accountant_refuses_a_selection_of_runs_it_cannot_account(inner):
    with pytest.raises(UnsupportedEventError, match="one-run ledger"):
        RDPAccountant().compose(RepeatAndSelectEvent([GaussianEvent(1.0), inner], 5.0))


def test_pure_selection_epsilon_refuses_poisson_and_non_pure_runs():
    with pytest.raises(UnsupportedEventError, match="Poisson"):
        pure_selection_epsilon(RepeatAndSelectEvent(LaplaceEvent(1.0), 5.0, math.inf))
    with pytest.raises(UnsupportedEventError, match="not pure DP"):
        pure_selection_epsilon(RepeatAndSelectEvent(GaussianEvent(1.0), 5.0))
    with pytest.raises(TypeError, match="RepeatAndSelectEvent"):
        pure_selection_epsilon(LaplaceEvent(1.0))


def test_poisson_bound_refuses_a_mean_below_one():
    with pytest.raises(ValueError, match="mean"):
        poisson_rdp([2.0], [0.1], 0.5)


# --- the bound holds for a mechanism whose selection we can compute exactly ------------------------------


def renyi(p, q, order):
    """D_order(p || q) of two discrete distributions (full support)."""
    return float(logsumexp(order * np.log(p) + (1 - order) * np.log(q))) / (order - 1)


def best_of_k(p, shape, mean):
    """Distribution of the largest of K i.i.d. draws from p (outcomes ordered by index), K ~ the trials law;
    a Poisson K = 0 is one more outcome, "nothing"."""
    cdf = np.concatenate([[0.0], np.cumsum(p)])
    if math.isinf(shape):
        pgf = np.exp(mean * (cdf - 1))                      # E[s^K] = exp(mean (s - 1))
        return np.concatenate([[pgf[0]], np.diff(pgf)])    # first entry: K = 0
    gamma = math.exp(-log_inverse_gamma(mean, shape))   # the negative binomial's PGF, truncated at K >= 1
    if shape == 0:
        pgf = np.log1p(-(1 - gamma) * cdf) / math.log(gamma)
    else:
        pgf = ((1 - (1 - gamma) * cdf) ** (-shape) - 1) / (gamma ** (-shape) - 1)
    return np.diff(pgf)


@pytest.mark.parametrize("shape", SHAPES + (math.inf,))
@pytest.mark.parametrize("mean", [2.0, 10.0])
def test_the_bound_holds_for_an_exactly_computed_selection(shape, mean):
    """Q: a discrete Laplace-like release on 0..40 centred at 20 (D) or 21 (D'). The Rényi divergences of the
    best of K runs, computed exactly in both directions, never exceed the accountant's bound."""
    y = np.arange(41)
    p = np.exp(-0.5 * np.abs(y - 20.0)); p /= p.sum()
    p_prime = np.exp(-0.5 * np.abs(y - 21.0)); p_prime /= p_prime.sum()
    orders = DEFAULT_ORDERS[(DEFAULT_ORDERS <= 64)]
    run = np.array([max(renyi(p, p_prime, a), renyi(p_prime, p, a)) for a in orders])
    bound = repeat_and_select_rdp(orders, run, mean, shape)
    best, best_prime = best_of_k(p, shape, mean), best_of_k(p_prime, shape, mean)
    for order, value in zip(orders, bound):
        true = max(renyi(best, best_prime, order), renyi(best_prime, best, order))
        assert true <= value + 1e-12, order


def test_a_bare_event_is_accounted_as_the_selection_not_as_one_run():
    """as_ledger reads any object with a ``ledger`` as a history: the event's field is ``run_ledger``, so
    account(event), a budget and compare all see the selection."""
    from dpedu.accountants import as_ledger, compare
    from dpedu.accountants.budget import PrivacyBudget

    event = RepeatAndSelectEvent(DPSGD_RUN, 10.0, 1.0)
    selection = _epsilon_of([(event, 1)], 1e-5)
    assert as_ledger(event) == [(event, 1)]
    assert account_epsilon(event) == pytest.approx(selection)
    assert compare(event, delta=1e-5)["rdp"] == pytest.approx(selection)
    assert PrivacyBudget(10.0, 1e-5).spend(event) == pytest.approx(selection)
    assert selection > _epsilon_of(DPSGD_RUN, 1e-5)


def account_epsilon(history):
    from dpedu.accountants import account

    return account(history, "rdp", delta=1e-5).epsilon


def test_the_order_of_the_grid_does_not_matter():
    orders = np.array([8.0, 2.0, 4.0, 32.0])
    ascending = np.argsort(orders)
    for shape in (1.0, math.inf):
        shuffled = repeat_and_select_rdp(orders, rdp_gaussian(3.0, orders), 5.0, shape)
        sorted_ = repeat_and_select_rdp(orders[ascending], rdp_gaussian(3.0, orders[ascending]), 5.0, shape)
        assert shuffled[ascending] == pytest.approx(sorted_, rel=1e-15)


def test_selection_of_replace_one_runs_is_accounted_at_their_add_remove_equivalent():
    """A replace-one Gaussian run is GaussianEvent(z / 2) (docs/math.md §22.2), also inside a selection."""
    from dpedu.ground.events import GaussianEvent, RepeatAndSelectEvent

    replace_one = RepeatAndSelectEvent([(GaussianEvent(8.0, relation="replace_one"), 3)], mean=5, shape=0.5)
    add_remove = RepeatAndSelectEvent([(GaussianEvent(4.0), 3)], mean=5, shape=0.5)
    accountant = make_accountant("rdp").compose(replace_one)
    assert accountant.relation == "replace_one"
    assert accountant.get_epsilon(1e-5) == make_accountant("rdp").compose(add_remove).get_epsilon(1e-5)
    with pytest.raises(ValueError, match="one neighbouring relation"):
        RepeatAndSelectEvent([(GaussianEvent(8.0, relation="replace_one"), 1), (GaussianEvent(8.0), 1)], mean=5)
