"""Trade-off curves and Gaussian DP of a ledger (dpedu.accountants.tradeoff, dpedu.accountants.gdp; docs/math.md §21)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpedu.accountants import ACCOUNTANT_NAMES, GaussianEvent, LaplaceEvent, SubsampledGaussianEvent, make_accountant
from dpedu.accountants.gdp import (
    certified_mu,
    clt_mu,
    gdp_delta,
    group_mu,
)
from dpedu.ground.gaussian import analytic_noise_multiplier
from dpedu.accountants.tradeoff import (
    default_alphas,
    default_epsilons,
    epsilon_delta_tradeoff,
    gaussian_curve,
    gaussian_ledger_mu,
    gaussian_tradeoff,
    pld_tradeoff_bracket,
    privacy_profile,
    profile_tradeoff,
    tradeoff_curve,
)
from dpedu.ground.gaussian import gaussian_delta_exact, gaussian_epsilon_exact

ABADI = [(SubsampledGaussianEvent(4.0, 0.01), 10_000)]
GAUSSIAN = [(GaussianEvent(2.0), 4)]                 # exactly mu = 1
LINEAR = np.linspace(0.0, 1.0, 1001)
# A few accountants are slow per epsilon (advanced composition optimises a delta split at each): a coarse grid,
# which can only make their curves weaker (lower), keeps the suite fast.
COARSE = np.concatenate([np.linspace(0.05, 4.0, 40), np.linspace(4.5, 30.0, 20)])


def grid_for(name):
    return COARSE if name in ("advanced", "strong") else None


# --- closed forms ---------------------------------------------------------------------------------


def test_gaussian_tradeoff_closed_form_and_ends():
    a = np.array([0.0, 0.01, 0.05, 0.5, 1.0])
    expected = stats.norm.cdf(stats.norm.ppf(1 - a) - 1.3)
    expected[0], expected[-1] = 1.0, 0.0
    np.testing.assert_allclose(gaussian_tradeoff(a, 1.3), expected, atol=1e-15)
    assert gaussian_tradeoff(0.3, 0.0) == pytest.approx(0.7)                  # mu = 0: perfect privacy, 1 - alpha
    assert gaussian_tradeoff(0.3, math.inf) == 0.0


def test_gaussian_tradeoff_is_symmetric_convex_and_decreasing():
    beta = gaussian_tradeoff(LINEAR, 0.8)
    np.testing.assert_allclose(gaussian_tradeoff(beta, 0.8), LINEAR, atol=1e-12)   # G_mu is its own inverse
    assert np.all(np.diff(beta) <= 0) and np.all(np.diff(beta, 2) >= -1e-15)


def test_epsilon_delta_tradeoff_is_prop_2_5():
    a = np.array([0.0, 0.05, 0.3, 0.7, 1.0])
    eps, delta = 0.7, 0.01
    expected = np.maximum.reduce([np.zeros_like(a), 1 - delta - math.exp(eps) * a, math.exp(-eps) * (1 - delta - a)])
    np.testing.assert_allclose(epsilon_delta_tradeoff(a, eps, delta), expected, atol=1e-15)


def test_profile_of_the_gaussian_recovers_its_curve_from_below():
    """Prop. 2.12 on the exact delta(eps) of mu = 1 gives G_1 from below (finite grid), within 1e-5."""
    eps = default_epsilons()
    deltas = [gaussian_delta_exact(e, 1.0) for e in eps]
    alphas = default_alphas()
    curve = profile_tradeoff(alphas, eps, deltas)
    exact = gaussian_tradeoff(alphas, 1.0)
    assert np.all(curve <= exact + 1e-12)
    assert np.max(exact - curve) < 1e-5


# --- every accountant's curve ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
def test_every_accountant_gives_a_curve_below_the_exact_gaussian_one(name):
    curve = tradeoff_curve(GAUSSIAN, name, alphas=LINEAR, epsilons=grid_for(name))
    assert curve.applies, curve.notes
    assert np.all(curve.beta <= gaussian_tradeoff(LINEAR, 1.0) + 1e-12)      # never claims more than the truth
    assert np.all(np.diff(curve.beta) <= 1e-15)                               # non-increasing
    assert np.all(np.diff(curve.beta, 2) >= -1e-12)                           # convex (a max of lines)


@pytest.mark.parametrize("name", [n for n in ACCOUNTANT_NAMES if n != "zcdp"])
def test_abadi_curves_are_convex_decreasing_and_symmetric(name):
    curve = tradeoff_curve(ABADI, name, alphas=LINEAR, epsilons=grid_for(name))
    beta = curve.beta
    assert np.all(np.diff(beta) <= 1e-15) and np.all(np.diff(beta, 2) >= -1e-12)
    # symmetric (add/remove: both directions): reflecting a point of the graph lands on or above the graph
    assert np.all(curve.beta_at(beta) <= LINEAR + 1e-9)


def test_zcdp_gives_no_curve_for_subsampling_and_says_why():
    curve = tradeoff_curve(ABADI, "zcdp", alphas=LINEAR)
    assert not curve.applies and "subsampling" in curve.notes[0]


def test_ordering_pld_rdp_moments():
    """Pointwise pld >= rdp >= moments. On one epsilon grid the curve is monotone in each delta, and the deltas
    are ordered, except that the PLD keeps a tiny mass at infinite loss (its truncated tails and, below the top of
    its grid, the bound on its FFT round-off, notes §15.8, §15.10), which the RDP delta undercuts at large epsilon:
    the tolerance is that mass, the round-off bound plus the PLD's delta at epsilon = 100 (above the top: the tails)."""
    eps = default_epsilons()
    curves = {n: tradeoff_curve(ABADI, n, alphas=default_alphas(), epsilons=eps) for n in ("pld", "rdp", "moments")}
    pld = make_accountant("pld").compose(*ABADI[0])
    tails = float(pld.get_delta(100.0))
    floor = pld.roundoff_bound() + tails
    assert 0 < tails < pld.roundoff_bound() and floor < 1e-9
    assert np.all(curves["pld"].beta >= curves["rdp"].beta - floor)
    assert np.all(curves["rdp"].beta >= curves["moments"].beta - 1e-15)
    assert np.max(curves["pld"].beta - curves["rdp"].beta) > 0.03          # and the PLD is visibly stronger


def test_pld_bracket_holds_the_exact_curve_and_the_fine_grid():
    alphas = default_alphas()
    lower, upper = pld_tradeoff_bracket(ABADI, alphas=alphas)
    assert np.all(lower.beta <= upper.beta + 1e-15)
    fine_lower, fine_upper = pld_tradeoff_bracket(ABADI, alphas=alphas, accountant_options={"accuracy": 1e-4})
    assert np.all(lower.beta <= fine_upper.beta + 1e-15) and np.all(fine_lower.beta <= upper.beta + 1e-15)
    assert np.max(upper.beta - lower.beta) < 0.01
    # a Laplace + Gaussian ledger: no closed form, but mu-GDP of the Gaussian part alone is an upper bound
    mixed = [(GaussianEvent(2.0), 4), (LaplaceEvent(0.5), 1)]
    low, _ = pld_tradeoff_bracket(mixed, alphas=alphas)
    assert np.all(low.beta <= gaussian_tradeoff(alphas, 1.0) + 1e-12)


def test_curve_reads_best_tpr():
    curve = gaussian_curve(1.0)
    assert curve.best_tpr(0.01) == pytest.approx(1 - stats.norm.cdf(stats.norm.ppf(0.99) - 1.0))
    tpr = tradeoff_curve(ABADI, "pld").best_tpr(0.01)
    assert 0.01 < tpr < 0.03                             # Abadi's run: TPR at most about 2 % at FPR 1 %


def test_privacy_profile_collects_warnings_as_notes(recwarn):
    eps, deltas, notes = privacy_profile(ABADI, "moments", [0.5, 60.0])
    assert deltas.shape == (2,) and not [w for w in recwarn.list if issubclass(w.category, UserWarning)]
    assert any("orders" in n for n in notes)


@pytest.mark.parametrize("bad, error", [([-0.1, 0.5], ValueError), ([0.5, 1.5], ValueError), (["a"], TypeError),
                                        ([[0.1]], ValueError), ([np.nan], ValueError)])
def test_bad_alphas_are_refused_by_name(bad, error):
    with pytest.raises(error, match="alpha"):
        tradeoff_curve(GAUSSIAN, "rdp", alphas=bad)


def test_bad_accountant_is_refused():
    with pytest.raises(ValueError, match="accountant must be one of"):
        tradeoff_curve(GAUSSIAN, "nope")


# --- Gaussian DP ----------------------------------------------------------------------------------


def test_gaussian_ledger_mu():
    assert gaussian_ledger_mu([(GaussianEvent(2.0), 4), (SubsampledGaussianEvent(1.0, 1.0), 1)]) == pytest.approx(
        math.sqrt(2.0))
    assert gaussian_ledger_mu(ABADI) is None


def test_clt_mu_formula_and_overflow():
    assert clt_mu(4.0, 0.01, 10_000) == pytest.approx(0.01 * math.sqrt(10_000 * math.expm1(1 / 16)))
    assert clt_mu(0.01, 0.5, 10) == math.inf
    with pytest.raises(ValueError, match="sampling_rate"):
        clt_mu(1.0, 0.0, 10)
    with pytest.raises(TypeError, match="steps"):
        clt_mu(1.0, 0.1, 10.0)


def test_mu_from_epsilon_inverts_the_gaussian_curve():
    assert 1 / analytic_noise_multiplier(4.3772, 1e-5) == pytest.approx(1.0, abs=2e-5)
    assert gdp_delta(gaussian_epsilon_exact(1e-5, 1 / 0.7), 0.7) == pytest.approx(1e-5, rel=1e-9)


def test_certified_mu_is_exact_for_gaussians_and_a_guarantee_otherwise():
    assert certified_mu(GAUSSIAN) == 1.0
    mu = certified_mu(ABADI)
    lower, _ = pld_tradeoff_bracket(ABADI)
    # G_mu - tau - r lies below the PLD's pessimistic curve everywhere on the grid (r: its FFT round-off bound)
    slack = 1e-10 + make_accountant("pld").compose(*ABADI[0]).roundoff_bound()
    assert 0 < slack < 1e-9
    assert np.all(gaussian_tradeoff(lower.alpha, mu) - slack <= lower.beta + 1e-12)
    # and no smaller mu would (the bisection returns a near-minimal feasible mu)
    assert np.any(gaussian_tradeoff(lower.alpha, 0.98 * mu) - slack > lower.beta)
    # mu-GDP's epsilon at delta is at least the PLD's lower bound on the true epsilon
    low_eps, _ = make_accountant("pld").compose(*ABADI[0]).epsilon_bracket(1e-5)
    assert gaussian_epsilon_exact(1e-5, 1 / mu) >= low_eps


def test_clt_under_reports_where_it_should():
    """q = 0.01, z = 1.1, T = 1000: the CLT mu gives an epsilon below the PLD's lower bound on the true one."""
    ledger = [(SubsampledGaussianEvent(1.1, 0.01), 1000)]
    clt = clt_mu(1.1, 0.01, 1000)
    low_eps, _ = make_accountant("pld").compose(*ledger[0]).epsilon_bracket(1e-5)
    assert gaussian_epsilon_exact(1e-5, 1 / clt) < low_eps
    assert clt < certified_mu(ledger)


def test_group_mu_and_bad_input():
    assert group_mu(0.5, 3) == 1.5
    with pytest.raises(TypeError, match="group_size"):
        group_mu(0.5, 2.0)
    with pytest.raises(ValueError, match="slack"):
        certified_mu(ABADI, slack=0.0)


def test_pld_bracket_of_a_gaussian_ledger_holds_the_exact_curve():
    """For a Gaussian ledger the PLD's two deltas are the exact one: lower <= G_mu <= upper. The gap is the epsilon
    grids' alone: second order for the lower curve, first order (spacing 0.001) for the upper one."""
    alphas = default_alphas()
    lower, upper = pld_tradeoff_bracket(GAUSSIAN, alphas=alphas)
    exact = gaussian_tradeoff(alphas, 1.0)
    assert np.all(lower.beta <= exact + 1e-12) and np.all(upper.beta >= exact - 1e-12)
    assert np.max(upper.beta - lower.beta) < 1e-3 and np.max(exact - lower.beta) < 1e-5


@pytest.mark.parametrize("name", [n for n in ACCOUNTANT_NAMES if n != "zcdp"])
def test_no_accountant_claims_more_than_the_true_subsampled_curve(name):
    """The exact curve of Abadi et al.'s run lies below the PLD's upper curve (optimistic delta, fine grid): every
    accountant's floor must lie below it too."""
    _, upper = pld_tradeoff_bracket(ABADI, alphas=LINEAR)
    curve = tradeoff_curve(ABADI, name, alphas=LINEAR, epsilons=grid_for(name))
    assert np.all(curve.beta <= upper.beta + 1e-12)


def test_accountant_options_must_be_a_dict():
    with pytest.raises(TypeError, match="accountant_options"):
        tradeoff_curve(GAUSSIAN, "rdp", accountant_options=["orders"])
    with pytest.raises(TypeError, match="accountant_options"):
        pld_tradeoff_bracket(GAUSSIAN, accountant_options="fine")
