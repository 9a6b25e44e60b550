"""Sequential, advanced and strong composition accountants (docs/math.md §9-12.6, §18)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from dpedu import calibrate
from dpedu.accountants import (
    ConversionUnavailableError,
    EpsilonDeltaEvent,
    GaussianEvent,
    LaplaceEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    UnsupportedEventError,
)
from dpedu.accountants.analysis.composition import amplify_by_subsampling, gaussian_step
from dpedu.accountants.advanced import (
    AdvancedAccountant,
    advanced_composition,
    advanced_composition_simplified,
)
from dpedu.accountants.sequential import SequentialAccountant
from dpedu.accountants.strong import PAPER_CAVEAT, StrongCompositionAccountant

DELTA = 1e-5
VALID = {  # every accountant here that claims a valid bound
    "sequential": SequentialAccountant,
    "advanced": AdvancedAccountant,
    "strong": StrongCompositionAccountant,
}


def exact_gaussian_epsilon(delta, z):
    """Independent reference: solve Balle & Wang (2018) Thm 8, delta_G(eps) = delta, with scipy.stats.norm."""
    mu = 1.0 / z

    def delta_g(eps):
        return stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu) - delta

    if delta_g(0.0) <= 0:
        return 0.0
    return optimize.brentq(delta_g, 0.0, 200.0, xtol=1e-14, rtol=1e-13)


# ----------------------------------------------------------------------------------------------------
# Per-step conversions


def test_amplification_anchor():
    # docs/math.md §18: amplification of eps = 1 at q = 0.01 gives 0.017037 (Balle, Barthe & Gaboardi 2018, Thm 9)
    eps, delta = amplify_by_subsampling(1.0, 1e-6, 0.01)
    assert eps == pytest.approx(math.log(1 + 0.01 * (math.e - 1)), rel=1e-14)
    assert round(eps, 6) == 0.017037
    assert delta == pytest.approx(1e-8, rel=1e-14)


def test_amplification_is_stable_at_the_extremes():
    # both branches agree at the switch point, and huge epsilon / tiny q stay finite
    below = amplify_by_subsampling(700.0, 0.0, 1e-6)[0]
    above = amplify_by_subsampling(700.0 + 1e-9, 0.0, 1e-6)[0]
    assert above == pytest.approx(below, abs=1e-8)
    assert amplify_by_subsampling(1e4, 0.0, 1e-6)[0] == pytest.approx(1e4 + math.log(1e-6), rel=1e-14)
    assert amplify_by_subsampling(1e-12, 0.0, 1e-6)[0] == pytest.approx(1e-18, rel=1e-9)  # log1p/expm1
    assert amplify_by_subsampling(3.0, 1e-3, 1.0) == (3.0, 1e-3)


@pytest.mark.parametrize("z, q, step_delta", [(4.0, 0.01, 1e-9), (1.0, 1.0, 1e-5), (0.7, 0.2, 1e-12)])
def test_gaussian_step_uses_the_exact_gaussian_then_amplifies(z, q, step_delta):
    event = GaussianEvent(z) if q == 1 else SubsampledGaussianEvent(z, q)
    step = gaussian_step(event, 3, step_delta)
    assert step.delta0 == pytest.approx(step_delta / q, rel=1e-14)
    assert step.epsilon0 == pytest.approx(exact_gaussian_epsilon(step.delta0, z), rel=1e-9)
    assert step.epsilon1 == pytest.approx(math.log(1 + q * math.expm1(step.epsilon0)), rel=1e-12)
    assert step.delta1 == pytest.approx(step_delta, rel=1e-14)


def test_gaussian_step_with_more_delta_than_the_total_variation_is_free():
    # q tiny: delta0 = step_delta / q exceeds delta_G(0) = 2 Phi(1/(2z)) - 1, so the release is (0, delta_G(0))-DP
    step = gaussian_step(SubsampledGaussianEvent(4.0, 1e-6), 1, 1e-5)
    total_variation = 2 * stats.norm.cdf(1 / 8) - 1
    assert step.epsilon0 == 0.0 and step.epsilon1 == 0.0
    assert step.delta0 == pytest.approx(total_variation, rel=1e-9)
    assert step.delta1 <= 1e-5


# ----------------------------------------------------------------------------------------------------
# Advanced composition: the theorem


def test_advanced_composition_book_anchor():
    # book ch6 / programming-dp#56 (docs/math.md §10): k = 500, eps = 1, delta' = 1e-5 -> 966.44 > 500 = k * eps
    eps, delta = advanced_composition(epsilon=1.0, delta=0.0, k=500, delta_prime=1e-5)
    assert eps == pytest.approx(math.sqrt(2 * 500 * math.log(1e5)) + 500 * (math.e - 1), rel=1e-14)
    assert round(eps, 2) == 966.44
    assert delta == 1e-5
    assert eps > 500  # worse than basic composition, reported anyway


def test_advanced_composition_simplified_is_the_book_formula():
    # 2 eps sqrt(2k ln(1/delta')): under-reports for eps = 1 (214.60 < 966.44); agrees with the theorem's order
    # of magnitude only for small eps (Dwork & Roth Cor. 3.21 needs the result < 1)
    assert advanced_composition_simplified(1.0, 500, 1e-5) == pytest.approx(2 * math.sqrt(1000 * math.log(1e5)))
    small = 1e-4
    simplified = advanced_composition_simplified(small, 500, 1e-5)
    assert simplified < 1
    assert advanced_composition(small, 0.0, 500, 1e-5)[0] <= simplified


def test_advanced_accountant_matches_the_homogeneous_theorem():
    # k (eps, delta) steps at total delta k*delta + delta' -> exactly Dwork & Roth Thm 3.20
    k, eps, delta, delta_prime = 300, 0.05, 1e-8, 1e-6
    acc = AdvancedAccountant().compose(EpsilonDeltaEvent(eps, delta), k)
    expected, total = advanced_composition(eps, delta, k, delta_prime)
    assert acc.get_epsilon(total) == pytest.approx(expected, rel=1e-12)
    assert acc.breakdown(total).delta_slack == pytest.approx(delta_prime, rel=1e-9)


def test_advanced_accountant_heterogeneous_form():
    # sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1), delta' = delta - sum delta_i
    # (Kairouz, Oh & Viswanath 2015, Thm 3.5, relaxed)
    acc = AdvancedAccountant().compose(LaplaceEvent(0.1), 10).compose(EpsilonDeltaEvent(0.2, 1e-7), 5)
    slack = 1e-5 - 5e-7
    expected = math.sqrt(2 * math.log(1 / slack) * (10 * 0.01 + 5 * 0.04)) + 10 * 0.1 * math.expm1(0.1) + (
        5 * 0.2 * math.expm1(0.2)
    )
    assert acc.get_epsilon(1e-5) == pytest.approx(expected, rel=1e-12)


def test_advanced_is_worse_than_sequential_for_large_steps():
    # the teaching point: eps = 1 per step, k = 500
    ledger = [(EpsilonDeltaEvent(1.0), 500)]
    seq = SequentialAccountant().compose(*ledger[0]).get_epsilon(DELTA)
    adv = AdvancedAccountant().compose(*ledger[0]).get_epsilon(DELTA)
    assert seq == pytest.approx(500.0)
    assert adv == pytest.approx(966.44, abs=5e-3)
    assert adv > seq


def test_advanced_beats_sequential_for_many_small_steps():
    seq = SequentialAccountant().compose(GaussianEvent(50.0), 10_000).get_epsilon(DELTA)
    adv = AdvancedAccountant().compose(GaussianEvent(50.0), 10_000).get_epsilon(DELTA)
    assert seq >= adv
    assert adv < seq / 5


def _scan_reference(z, q, steps, delta, grid):
    """Independent dense scan of the advanced-composition split for a homogeneous Gaussian ledger."""
    best = math.inf
    for u in grid:
        share = 1 / (1 + math.exp(-u))
        delta_prime, step_delta = delta * share, delta * (1 - share) / steps
        eps0 = exact_gaussian_epsilon(min(step_delta / q, 0.999), z)
        eps1 = math.log(1 + q * math.expm1(eps0))
        eps = math.sqrt(2 * math.log(1 / delta_prime) * steps * eps1**2) + steps * eps1 * math.expm1(eps1)
        best = min(best, eps)
    return best


@pytest.mark.parametrize("z, q, steps", [(4.0, 0.01, 10_000), (1.0, 1.0, 10), (50.0, 1.0, 10_000)])
def test_advanced_split_is_optimised(z, q, steps):
    event = GaussianEvent(z) if q == 1 else SubsampledGaussianEvent(z, q)
    ours = AdvancedAccountant().compose(event, steps).get_epsilon(DELTA)
    reference = _scan_reference(z, q, steps, DELTA, np.linspace(-12, 12, 241))
    assert ours <= reference * (1 + 1e-9)  # at least as good as every split on the scan
    assert ours >= reference * (1 - 1e-3)  # and the scan (spacing 0.1) is close to the optimum


def test_breakdown_accounts_for_every_bit_of_delta():
    acc = AdvancedAccountant().compose(SubsampledGaussianEvent(2.0, 0.05), 500).compose(
        EpsilonDeltaEvent(0.1, 1e-7), 3
    )
    result = acc.breakdown(DELTA)
    (step,) = result.gaussian_steps
    assert result.delta == pytest.approx(result.delta_slack + step.count * step.delta1 + 3e-7, rel=1e-12)
    assert result.delta <= DELTA * (1 + 1e-12)
    assert result.epsilon == acc.get_epsilon(DELTA)


# ----------------------------------------------------------------------------------------------------
# Sequential composition


def test_sequential_book_statement():
    # docs/math.md §7 / book ch12: 10 steps of (0.1, 1e-5) plus a 0.1-DP count -> (1.1, 1e-4)
    acc = SequentialAccountant().compose(EpsilonDeltaEvent(0.1, 1e-5), 10).compose(LaplaceEvent(0.1))
    result = acc.breakdown(1e-4)
    assert result.epsilon == pytest.approx(1.1, rel=1e-14)
    assert result.delta == pytest.approx(1e-4, rel=1e-12)


def test_sequential_book_noisy_gd_with_per_step_delta():
    # the same run as Gaussian events: z classic for (0.1, 1e-5); the exact eps0 of that z is below 0.1
    z = calibrate.classic_noise_multiplier(0.1, 1e-5)
    eps0 = exact_gaussian_epsilon(1e-5, z)
    assert eps0 <= 0.1
    acc = SequentialAccountant(per_step_delta=1e-5).compose(GaussianEvent(z), 10).compose(LaplaceEvent(0.1))
    result = acc.breakdown(1e-4)
    assert result.epsilon == pytest.approx(0.1 + 10 * eps0, rel=1e-9)
    assert result.epsilon <= 1.1
    assert result.delta == pytest.approx(1e-4, rel=1e-12)
    # with delta = 1e-4 the default even split gives each step 1e-5 too
    even = SequentialAccountant().compose(GaussianEvent(z), 10).compose(LaplaceEvent(0.1))
    assert even.get_epsilon(1e-4) == pytest.approx(result.epsilon, rel=1e-12)
    # asking for less delta than the fixed per-step deltas spend is refused
    with pytest.raises(ValueError, match="per_step_delta"):
        acc.get_epsilon(5e-5)
    # asking for more is fine: the ledger spends 1e-4 and that is what is reported
    assert acc.breakdown(1e-3).delta == pytest.approx(1e-4, rel=1e-12)


def test_sequential_per_step_delta_is_before_subsampling():
    event = SubsampledGaussianEvent(3.0, 0.1)
    result = SequentialAccountant(per_step_delta=1e-6).compose(event, 20).breakdown(DELTA)
    (step,) = result.gaussian_steps
    assert step.delta0 == pytest.approx(1e-6) and step.delta1 == pytest.approx(1e-7)
    assert result.delta == pytest.approx(20 * 1e-7)
    assert result.epsilon == pytest.approx(20 * math.log(1 + 0.1 * math.expm1(exact_gaussian_epsilon(1e-6, 3.0))))


def test_sequential_even_split():
    acc = SequentialAccountant().compose(GaussianEvent(2.0), 4).compose(EpsilonDeltaEvent(0.3, 2e-6), 1)
    acc.compose(SubsampledGaussianEvent(1.0, 0.5), 6)
    result = acc.breakdown(DELTA)
    step_delta = (DELTA - 2e-6) / 10
    expected = 0.3 + 4 * exact_gaussian_epsilon(step_delta, 2.0) + 6 * math.log(
        1 + 0.5 * math.expm1(exact_gaussian_epsilon(step_delta / 0.5, 1.0))
    )
    assert result.epsilon == pytest.approx(expected, rel=1e-9)
    assert result.delta == pytest.approx(DELTA, rel=1e-12)


def test_sequential_refuses_when_given_deltas_use_up_delta():
    acc = SequentialAccountant().compose(EpsilonDeltaEvent(0.1, 1e-5), 2).compose(GaussianEvent(1.0))
    with pytest.raises(ValueError, match="already spend delta"):
        acc.get_epsilon(2e-5)  # nothing left for the Gaussian step
    with pytest.raises(ValueError, match="already spend delta"):
        SequentialAccountant().compose(EpsilonDeltaEvent(0.1, 1e-5), 2).get_epsilon(1e-5)
    with pytest.raises(ValueError, match="delta"):
        AdvancedAccountant().compose(EpsilonDeltaEvent(0.1, 1e-5), 2).get_epsilon(2e-5)  # no room for delta'


def test_sequential_get_delta_pure_ledger():
    # basic composition: (2, 0)-DP and no statement below eps = 2 -> the trivial delta = 1
    acc = SequentialAccountant().compose(LaplaceEvent(0.5), 4)
    assert acc.get_delta(2.0) == 0.0
    assert acc.get_delta(5.0) == 0.0
    assert acc.get_delta(1.999) == 1.0
    fixed = SequentialAccountant(per_step_delta=1e-6).compose(GaussianEvent(5.0), 3)
    eps = fixed.get_epsilon(1e-5)
    assert fixed.get_delta(eps) == pytest.approx(3e-6)
    assert fixed.get_delta(eps * 0.99) == 1.0


@pytest.mark.parametrize("make", [SequentialAccountant, AdvancedAccountant, StrongCompositionAccountant])
@pytest.mark.parametrize("delta", [1e-8, 1e-5, 1e-2])
def test_get_delta_inverts_get_epsilon(make, delta):
    acc = make().compose(SubsampledGaussianEvent(2.0, 0.02), 2000)
    target = acc.get_epsilon(delta)
    found = acc.get_delta(target)
    assert found == pytest.approx(delta, rel=1e-4)  # both directions optimise the same split
    assert acc.get_epsilon(found) <= target * (1 + 1e-6)  # certified at the delta returned
    assert acc.get_epsilon(found * 0.98) > target  # and not much less delta would do


def test_get_delta_is_one_when_nothing_is_certified():
    acc = AdvancedAccountant().compose(EpsilonDeltaEvent(1.0), 500)
    assert acc.get_delta(800.0) == 1.0  # below the drift term 500 (e - 1) = 859
    assert acc.get_delta(966.44) == pytest.approx(1e-5, rel=1e-3)
    assert SequentialAccountant().compose(LaplaceEvent(1.0), 3).compose(GaussianEvent(1.0)).get_delta(2.5) == 1.0


# ----------------------------------------------------------------------------------------------------
# Strong composition (Abadi et al. 2016, Fig. 2)


@pytest.mark.parametrize("steps, expected, paper", [(10_000, 9.339, 9.34), (40_000, 24.205, 24.22)])
def test_strong_paper_recipe_reproduces_figure_2(steps, expected, paper):
    # docs/math.md §12.6: q = 0.01, z = 4, delta = 1e-5; the paper prints 9.34 (E = 100) and 24.22 (E = 400)
    acc = StrongCompositionAccountant(recipe="paper").compose(SubsampledGaussianEvent(4.0, 0.01), steps)
    eps = acc.get_epsilon(DELTA)
    assert eps == pytest.approx(expected, abs=5e-4)
    assert eps == pytest.approx(paper, rel=2e-3)
    (step,) = acc.breakdown(DELTA).gaussian_steps
    assert step.delta0 == pytest.approx(DELTA / (2 * steps * 0.01))
    assert step.epsilon0 == pytest.approx(math.sqrt(2 * math.log(1.25 / step.delta0)) / 4.0)
    assert step.epsilon0 > 1  # outside the classic formula's range: why it is not a valid bound
    assert step.epsilon1 == pytest.approx(0.01 * step.epsilon0)
    assert acc.caveat == PAPER_CAVEAT and "NOT a valid bound" in acc.caveat
    with pytest.raises(ConversionUnavailableError, match="valid"):
        acc.get_delta(10.0)


@pytest.mark.parametrize("steps", [10_000, 40_000])
def test_strong_valid_recipe(steps):
    event = SubsampledGaussianEvent(4.0, 0.01)
    valid = StrongCompositionAccountant().compose(event, steps)
    assert valid.caveat is None
    eps = valid.get_epsilon(DELTA)
    # the same theorem as the advanced accountant on a Gaussian ledger
    assert eps == AdvancedAccountant().compose(event, steps).get_epsilon(DELTA)
    # a valid bound sits above the true epsilon (PLD bracket [0.942, 0.952] at T = 1e4, docs/math.md §15.4)
    # and above the moments accountant's 1.2586 / 2.5759 (docs/math.md §12.6)
    assert eps >= {10_000: 1.2586, 40_000: 2.5759}[steps]
    assert eps > StrongCompositionAccountant(recipe="paper").compose(event, steps).get_epsilon(DELTA)
    result = valid.breakdown(DELTA)
    (step,) = result.gaussian_steps
    assert step.epsilon0 == pytest.approx(exact_gaussian_epsilon(step.delta0, 4.0), rel=1e-9)
    assert result.delta == pytest.approx(DELTA, rel=1e-9)


def test_strong_refuses_non_gaussian_events_with_a_reason():
    for event in (LaplaceEvent(1.0), EpsilonDeltaEvent(1.0, 1e-6)):
        with pytest.raises(UnsupportedEventError, match="advanced"):
            StrongCompositionAccountant().compose(event)
    with pytest.raises(ValueError, match="empty"):
        StrongCompositionAccountant().breakdown(DELTA)


def test_strong_paper_refuses_a_delta0_above_one():
    acc = StrongCompositionAccountant(recipe="paper").compose(SubsampledGaussianEvent(4.0, 1e-6))
    with pytest.raises(ValueError, match="delta0"):
        acc.get_epsilon(DELTA)


# ----------------------------------------------------------------------------------------------------
# Contract and properties shared by the three accountants


def all_accountants():
    return [SequentialAccountant(), SequentialAccountant(per_step_delta=5e-12), AdvancedAccountant(),
            StrongCompositionAccountant(), StrongCompositionAccountant(recipe="paper")]


@pytest.mark.parametrize("index", range(5))
def test_empty_ledger_is_free(index):
    acc = all_accountants()[index]
    assert acc.get_epsilon(DELTA) == 0.0
    if acc.name != "strong" or acc.recipe == "valid":
        assert acc.get_delta(1.0) == 0.0


@pytest.mark.parametrize("index", range(5))
@pytest.mark.parametrize("event", [GaussianEvent(3.0), SubsampledGaussianEvent(1.5, 0.02)])
def test_count_is_repetition(index, event):
    repeated = all_accountants()[index]
    for _ in range(5):
        repeated.compose(event)
    at_once = all_accountants()[index].compose(event, 5)
    assert at_once.get_epsilon(1e-5) == repeated.get_epsilon(1e-5)


@pytest.mark.parametrize("make", list(VALID.values()))
def test_shuffled_batches_are_refused_with_a_reason(make):
    with pytest.raises(UnsupportedEventError, match="not Poisson sampling.*sampling_rate 1"):
        make().compose(ShuffledBatchGaussianEvent(1.0, batch_size=64, dataset_size=60_000))


@pytest.mark.parametrize("name", list(VALID))
@pytest.mark.parametrize("z, steps", [(1.0, 1), (4.0, 100), (10.0, 1000), (0.8, 3)])
def test_every_accountant_upper_bounds_the_exact_epsilon(name, z, steps):
    # T Gaussians with multiplier z = one Gaussian with z / sqrt(T) (Dong, Roth & Su 2019); Balle & Wang 2018
    exact = calibrate.gaussian_epsilon_exact(delta=DELTA, noise_multiplier=z / math.sqrt(steps))
    eps = VALID[name]().compose(GaussianEvent(z), steps).get_epsilon(DELTA)
    assert eps >= exact * (1 - 1e-9)
    if steps == 1 and name == "sequential":
        assert eps == pytest.approx(exact, rel=1e-9)  # one step: basic composition is exact


@settings(max_examples=20, deadline=None)
@given(z=st.floats(0.3, 60.0), steps=st.integers(1, 5000), delta=st.floats(1e-10, 1e-2))
def test_valid_accountants_never_undercut_the_exact_gaussian(z, steps, delta):
    exact = calibrate.gaussian_epsilon_exact(delta=delta, noise_multiplier=z / math.sqrt(steps))
    for make in VALID.values():
        assert make().compose(GaussianEvent(z), steps).get_epsilon(delta) >= exact * (1 - 1e-9)


@pytest.mark.parametrize("index", range(5))
def test_monotone_in_steps_noise_and_sampling_rate(index):
    def eps(z, q, steps):
        return all_accountants()[index].compose(SubsampledGaussianEvent(z, q), steps).get_epsilon(DELTA)

    by_steps = [eps(2.0, 0.05, t) for t in (10, 100, 1000, 10_000)]
    by_noise = [eps(z, 0.05, 1000) for z in (0.8, 1.5, 3.0, 8.0)]
    by_rate = [eps(2.0, q, 1000) for q in (0.001, 0.01, 0.1, 1.0)]
    assert np.all(np.diff(by_steps) > 0)
    assert np.all(np.diff(by_noise) < 0)
    assert np.all(np.diff(by_rate) > 0)


@pytest.mark.parametrize("index", range(5))
@pytest.mark.parametrize("z, q, steps", [(100.0, 1.0, 10**6), (0.5, 1e-6, 10**6), (100.0, 1e-6, 1), (1.0, 1.0, 1)])
def test_finite_at_the_extremes(index, z, q, steps):
    acc = all_accountants()[index].compose(SubsampledGaussianEvent(z, q), steps)
    if index == 4 and q * steps < 1:  # the paper recipe needs delta0 = delta / (2 T q) < 1
        with pytest.raises(ValueError, match="delta0"):
            acc.get_epsilon(DELTA)
        return
    eps = acc.get_epsilon(DELTA)
    assert math.isfinite(eps) and eps >= 0


def test_bad_parameters_name_the_argument():
    with pytest.raises(ValueError, match="per_step_delta"):
        SequentialAccountant(per_step_delta=0.0)
    with pytest.raises(TypeError, match="per_step_delta"):
        SequentialAccountant(per_step_delta="1e-5")
    with pytest.raises(ValueError, match="recipe"):
        StrongCompositionAccountant(recipe="abadi")
    with pytest.raises(ValueError, match="delta"):
        AdvancedAccountant().compose(GaussianEvent(1.0)).get_epsilon(0.0)
    with pytest.raises(ValueError, match="delta"):
        SequentialAccountant().compose(GaussianEvent(1.0)).breakdown(1.5)
    with pytest.raises(ValueError, match="epsilon"):
        SequentialAccountant().compose(GaussianEvent(1.0)).get_delta(-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        advanced_composition(epsilon=-1.0, delta=0.0, k=3, delta_prime=1e-5)
    with pytest.raises(ValueError, match="delta"):
        advanced_composition(epsilon=1.0, delta=1.0, k=3, delta_prime=1e-5)
    with pytest.raises(ValueError, match="k"):
        advanced_composition(epsilon=1.0, delta=0.0, k=0, delta_prime=1e-5)
    with pytest.raises(TypeError, match="k"):
        advanced_composition(epsilon=1.0, delta=0.0, k=2.5, delta_prime=1e-5)
    with pytest.raises(ValueError, match="delta_prime"):
        advanced_composition_simplified(epsilon=1.0, k=3, delta_prime=0.0)
    with pytest.raises(ValueError, match="sampling_rate"):
        amplify_by_subsampling(1.0, 0.0, sampling_rate=0.0)


def test_advanced_composition_of_a_huge_epsilon_is_infinite_not_an_overflow():
    epsilon, delta = advanced_composition(1e300, 0.0, 10, 1e-5)
    assert epsilon == math.inf and delta == pytest.approx(1e-5)


def test_the_bound_strong_and_advanced_share():
    from dpedu.accountants.advanced import advanced_composition_bound

    k, eps, slack = 500, 1.0, 1e-5
    assert advanced_composition_bound(k * eps * eps, k * math.expm1(eps), slack) == advanced_composition(
        eps, 0.0, k, slack)[0]
