"""The PLD accountant: closed forms, brackets, monotonicity, exact pure events, tiny deltas."""

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.special import comb

from dpedu.accountants import (
    EpsilonDeltaEvent,
    GaussianEvent,
    LaplaceEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    UnsupportedEventError,
    make_accountant,
)
from dpedu.accountants.pld import PLDAccountant
from dpedu.ground.gaussian import gaussian_delta_exact, gaussian_epsilon_exact


def pld(ledger, **options):
    acc = PLDAccountant(**options)
    for event, count in ledger:
        acc.compose(event, count)
    return acc


# ---- closed forms -------------------------------------------------------------------------------------


@pytest.mark.parametrize("z, steps", [(0.5, 1), (1.0, 10), (2.0, 1000), (10.0, 10**4), (100.0, 10**4), (5.0, 10**6)])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_full_batch_gaussians_are_one_gaussian_in_closed_form(z, steps, delta):
    exact = gaussian_epsilon_exact(delta, z / math.sqrt(steps))
    for event in (GaussianEvent(z), SubsampledGaussianEvent(z, 1.0)):
        assert pld([(event, steps)]).get_epsilon(delta) == pytest.approx(exact, rel=1e-12)


def test_gaussians_with_different_multipliers_compose_exactly():
    # mu^2 = 50/100 + 50/25 = 2.5 : one Gaussian with noise multiplier 1/sqrt(2.5)
    acc = pld([(GaussianEvent(10.0), 50), (GaussianEvent(5.0), 50)])
    assert acc.get_epsilon(1e-5) == pytest.approx(gaussian_epsilon_exact(1e-5, 1 / math.sqrt(2.5)), rel=1e-12)


@pytest.mark.parametrize("z", [0.7, 1.0, 3.0])
def test_gaussian_on_the_grid_is_bracketed_by_the_exact_curve(z):
    # a negligible Laplace event forces the Gaussian through the grid
    acc = pld([(GaussianEvent(z), 1), (LaplaceEvent(1e-9), 1)])
    for epsilon in (0.1, 1.0, 3.0):
        low, high = acc.delta_bracket(epsilon)
        exact = gaussian_delta_exact(epsilon, z)
        # FFT round-off is about 1e-18 absolute: below that the bracket is not resolved
        assert low <= exact * (1 + 1e-9) + 1e-17 and high >= exact * (1 - 1e-9) - 1e-17
        assert high <= exact * 1.01 + 1e-11  # + the FFT round-off bound counted in delta (docs/math.md §15.8)


def test_get_delta_is_accurate_to_1e_15():
    acc = pld([(GaussianEvent(1.0), 1), (LaplaceEvent(1e-9), 1)])
    exact = gaussian_delta_exact(8.0, 1.0)  # 3.65e-15
    assert -1e-16 <= acc.get_delta(8.0) - exact <= 1e-11  # above by at most the round-off bound (§15.8)
    closed = pld([(GaussianEvent(1.0), 1)])
    assert closed.get_delta(8.0) == pytest.approx(exact, rel=1e-12)


# ---- pure and Laplace events ---------------------------------------------------------------------------


def test_pure_events_compose_exactly():
    acc = pld([(EpsilonDeltaEvent(1.0), 1), (EpsilonDeltaEvent(2.0), 1)])
    assert 0.0 <= acc.get_delta(3.0) <= 1e-11  # exact up to the FFT round-off bound counted in delta (§15.8)
    assert acc.get_epsilon(1e-10) == pytest.approx(3.0, abs=1e-9)


def _pure_composition_delta(epsilon0, k, epsilon):
    """Exact delta(epsilon) of k (epsilon0, 0) events: the loss is epsilon0 (k - 2j) with binomial weights."""
    p = math.exp(epsilon0) / (1 + math.exp(epsilon0))
    total = 0.0
    for j in range(k + 1):
        loss = epsilon0 * (k - 2 * j)
        if loss > epsilon:
            total += comb(k, j) * p ** (k - j) * (1 - p) ** j * (1 - math.exp(epsilon - loss))
    return total


@pytest.mark.parametrize("epsilon0, k", [(0.5, 10), (0.1, 200), (1.0, 3)])
def test_pure_events_against_the_exact_binomial_curve(epsilon0, k):
    acc = pld([(EpsilonDeltaEvent(epsilon0), k)])
    for epsilon in (0.05, 0.5, 1.3, 2.0):
        assert acc.get_delta(epsilon) == pytest.approx(_pure_composition_delta(epsilon0, k, epsilon), rel=1e-9,
                                                       abs=1e-15)


def test_epsilon_delta_event_keeps_its_delta():
    acc = pld([(EpsilonDeltaEvent(0.5, 1e-4), 3)])
    assert acc.get_delta(1.5) == pytest.approx(-math.expm1(3 * math.log1p(-1e-4)), rel=1e-9)


def _laplace_delta(epsilon0, epsilon):
    """One Laplace release: delta(eps) = 1 - exp((eps - eps0) / 2) for 0 <= eps <= eps0 (closed form)."""
    return max(0.0, -math.expm1((epsilon - epsilon0) / 2))


@pytest.mark.parametrize("epsilon0", [0.1, 1.0, 3.0])
def test_one_laplace_release_against_its_closed_form(epsilon0):
    acc = pld([(LaplaceEvent(epsilon0), 1)])
    for fraction in (0.0, 0.3, 0.7, 1.0):
        epsilon = max(fraction * epsilon0, 1e-9)
        low, high = acc.delta_bracket(epsilon)
        exact = _laplace_delta(epsilon0, epsilon)
        assert low <= exact + 1e-12 <= high + 2e-12
        assert high - exact <= 1e-3 * epsilon0


def _laplace_pair_delta(epsilon0, epsilon, n=400_001):
    """Two Laplace releases, by numerical integration over the output pair (a fine reference)."""
    b = 1 / epsilon0
    x = np.linspace(-40 * b, 40 * b + 1, n)
    w = np.gradient(x)
    p = np.exp(-np.abs(x - 1) / b) / (2 * b)
    loss = (np.abs(x) - np.abs(x - 1)) / b
    total = np.add.outer(loss, loss)
    weight = np.outer(p * w, p * w)
    return float(np.sum(weight * np.maximum(0.0, -np.expm1(epsilon - total))))


def test_laplace_composition_is_bracketed_by_the_reference():
    acc = pld([(LaplaceEvent(0.5), 2)])
    reference = _laplace_pair_delta(0.5, 0.4, n=3001)
    low, high = acc.delta_bracket(0.4)
    assert low <= reference * (1 + 1e-3) and high >= reference * (1 - 1e-3)


def test_many_laplace_releases_stay_below_the_certified_bracket():
    # Laplace eps = 0.01, 1e5 times, delta = 1e-5: the true epsilon lies in [17.686, 17.887]
    low, high = pld([(LaplaceEvent(0.01), 10**5)]).epsilon_bracket(1e-5)
    assert 17.686 <= low <= high <= 17.887


# ---- subsampled Gaussian --------------------------------------------------------------------------------

SETTINGS = [(0.01, 4.0, 10**4, 1e-5), (0.001, 1.1, 5 * 10**4, 1e-6), (0.001, 1.0, 10**4, 1e-5),
            (0.1, 2.0, 1000, 1e-6), (0.5, 5.0, 100, 1e-8), (1e-4, 0.6, 20_000, 1e-5)]


@pytest.mark.parametrize("q, z, steps, delta", SETTINGS)
def test_pessimistic_is_above_optimistic_and_below_rdp(q, z, steps, delta):
    acc = pld([(SubsampledGaussianEvent(z, q), steps)])
    low, high = acc.epsilon_bracket(delta)
    assert 0 <= low <= high
    assert acc.get_epsilon(delta) == high
    rdp = make_accountant("rdp").compose(SubsampledGaussianEvent(z, q), steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # order-grid edge notes
        assert high <= rdp.get_epsilon(delta) * (1 + 1e-9)


@pytest.mark.parametrize("q, z, steps, delta, reference", [
    (0.01, 4.0, 10**4, 1e-5, 0.9470), (0.001, 1.1, 5 * 10**4, 1e-6, 1.094), (0.001, 1.0, 10**4, 1e-5, 0.4760)])
def test_tight_against_dp_accounting_anchors(q, z, steps, delta, reference):
    # references: dp_accounting's PLD (connect the dots, spacing 1e-4), itself slightly pessimistic
    epsilon = pld([(SubsampledGaussianEvent(z, q), steps)]).get_epsilon(delta)
    assert epsilon <= reference * 1.003


def test_bracket_closes_as_the_grid_refines():
    ledger = [(SubsampledGaussianEvent(4.0, 0.01), 2000)]
    widths = []
    for spacing in (4e-4, 1e-4, 2.5e-5):
        low, high = pld(ledger, discretization=spacing).epsilon_bracket(1e-5)
        widths.append(high - low)
    assert widths[0] > widths[1] > widths[2] > 0


@pytest.mark.parametrize("z, q, steps", [(0.58, 1e-4, 93_000), (0.76, 1e-3, 16_000), (0.6, 5e-4, 50_000)])
def test_small_delta_cases_answer(z, q, steps):
    epsilon = pld([(SubsampledGaussianEvent(z, q), steps)]).get_epsilon(1e-8)
    assert 0 < epsilon < math.inf


def test_monotone_in_steps_noise_and_rate():
    def eps(z, q, steps):
        return pld([(SubsampledGaussianEvent(z, q), steps)], discretization=1e-4).get_epsilon(1e-5)

    base = eps(2.0, 0.01, 1000)
    assert eps(2.0, 0.01, 2000) >= base
    assert eps(4.0, 0.01, 1000) <= base
    assert eps(2.0, 0.02, 1000) >= base


def test_heterogeneous_ledger_equals_its_parts_composed():
    a, b = SubsampledGaussianEvent(2.0, 0.01), SubsampledGaussianEvent(3.0, 0.05)
    together = pld([(a, 300), (b, 200)], discretization=1e-4).get_epsilon(1e-6)
    interleaved = pld([(a, 100), (b, 200), (a, 200)], discretization=1e-4).get_epsilon(1e-6)
    assert together == interleaved
    alone = pld([(a, 300)], discretization=1e-4).get_epsilon(1e-6)
    assert together > alone


def test_deltas_for_an_array_of_epsilons():
    acc = pld([(SubsampledGaussianEvent(2.0, 0.01), 1000)])
    epsilons = np.array([0.1, 0.5, 1.0])
    deltas = acc.get_deltas(epsilons)
    assert deltas.shape == (3,) and np.all(np.diff(deltas) < 0)
    assert deltas[1] == acc.get_delta(0.5)
    with pytest.raises(ValueError, match="epsilons"):
        acc.get_deltas([0.1, -1.0])
    with pytest.raises(TypeError, match="epsilons"):
        acc.get_deltas([["a"]])


def test_explicit_accuracy_beyond_the_grid_cap_is_refused():
    acc = pld([(SubsampledGaussianEvent(1.0, 0.001), 10**6)], accuracy=1e-6, max_grid_size=2**16)
    with pytest.raises(ValueError, match="max_grid_size"):
        acc.get_epsilon(1e-5)
    # the default accuracy coarsens instead, and says so
    acc = pld([(SubsampledGaussianEvent(1.0, 0.001), 10**6)], max_grid_size=2**16)
    assert math.isfinite(acc.get_epsilon(1e-5)) and "coarsened" in acc.caveat


def test_shuffled_batches_are_refused():
    with pytest.raises(UnsupportedEventError, match="dominating pair"):
        PLDAccountant().compose(ShuffledBatchGaussianEvent(1.0, 10, 100))


@pytest.mark.parametrize("name, value", [("accuracy", 0.0), ("accuracy", 0.5), ("tail_mass", 1.0)])
def test_bad_options_are_refused_by_name(name, value):
    with pytest.raises(ValueError, match=name):
        PLDAccountant(**{name: value})


def test_both_directions_are_accounted():
    # remove and add differ for q < 1; the reported curve is the larger one at every epsilon
    acc = pld([(SubsampledGaussianEvent(1.0, 0.2), 50)])
    curves = acc._curves(True)
    assert len(curves) == 2
    grid = np.array([0.5, 1.0, 2.0])
    assert np.allclose(acc.get_deltas(grid), np.maximum(curves[0].delta(grid), curves[1].delta(grid)))


def test_pessimistic_at_least_the_closed_form_for_many_steps_and_multipliers():
    for z, steps in itertools.product((0.8, 2.0), (1, 50)):
        exact = gaussian_epsilon_exact(1e-6, z / math.sqrt(steps))
        acc = pld([(GaussianEvent(z), steps), (LaplaceEvent(1e-9), 1)])
        low, high = acc.epsilon_bracket(1e-6)
        assert low <= exact * (1 + 1e-9) <= high * (1 + 2e-9)


def test_optimistic_estimate_on_a_finer_grid_is_tighter_and_still_below(monkeypatch):
    import dpedu.accountants.pld.grid as pld_module

    event, steps, delta = SubsampledGaussianEvent(1.0, 0.001), 200_000, 1e-5
    low, high = pld([(event, steps)]).epsilon_bracket(delta)
    monkeypatch.setattr(pld_module, "OPTIMISTIC_REFINEMENT", 1)  # the optimistic estimate on the pessimistic grid
    same_grid_low, same_grid_high = pld([(event, steps)]).epsilon_bracket(delta)
    assert same_grid_high == high
    assert same_grid_low < low <= high
    assert (high - low) < 0.5 * (high - same_grid_low)


def test_explicit_discretization_is_used_for_both_estimates():
    event = SubsampledGaussianEvent(2.0, 0.01)
    low, _ = pld([(event, 1000)], discretization=1e-3).epsilon_bracket(1e-5)
    assert low == pld([(event, 1000)], discretization=1e-3, pessimistic=False).get_epsilon(1e-5)
    finer, _ = pld([(event, 1000)], discretization=2.5e-4).epsilon_bracket(1e-5)
    assert finer > low


@pytest.mark.parametrize("name", ["sequential", "advanced", "moments", "rdp", "zcdp", "pld"])
def test_get_delta_takes_an_array_of_epsilons(name):
    from dpedu.accountants import GaussianEvent, make_accountant

    acc = make_accountant(name).compose(GaussianEvent(2.0), 3)
    epsilons = [0.5, 1.0, 2.0]
    deltas = acc.get_delta(np.array(epsilons))
    assert isinstance(deltas, np.ndarray) and deltas.shape == (3,)
    assert np.allclose(deltas, [acc.get_delta(e) for e in epsilons], rtol=1e-12, atol=0)
    assert isinstance(acc.get_delta(1.0), float)
    assert np.all(make_accountant(name).get_delta(epsilons) == 0.0)   # empty ledger: zeros, one per epsilon
    for bad, error in (([1.0, math.nan], ValueError), ([1.0, "2"], TypeError), ([True], TypeError),
                       ([1 + 1j], TypeError)):
        with pytest.raises(error, match="epsilon"):
            acc.get_delta(bad)


# ---- monotonicity: adding an event never lowers epsilon ----------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_EVENTS = st.one_of(
    st.builds(SubsampledGaussianEvent, st.floats(0.5, 6.0), st.floats(1e-3, 0.5)),
    st.builds(GaussianEvent, st.floats(0.5, 30.0)),
    st.builds(LaplaceEvent, st.floats(0.005, 2.0)),
    st.builds(EpsilonDeltaEvent, st.floats(0.005, 1.0), st.sampled_from([0.0, 1e-7])),
)
_LEDGERS = st.lists(st.tuples(_EVENTS, st.integers(1, 2000)), min_size=1, max_size=3)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ledger=_LEDGERS, extra=_EVENTS, count=st.integers(1, 300), delta=st.sampled_from([1e-5, 1e-8]))
def test_adding_an_event_never_lowers_the_pessimistic_epsilon(ledger, extra, count, delta):
    # each entry keeps its own grid (a power of two that never gets finer as its count grows) and the entries
    # are composed exactly on the finest of them, so one more event is one more dominating PMF convolved in
    # (docs/math.md §15.9). FFT round-off (about 1e-18 of probability) is the only slack allowed.
    before = pld(ledger).get_epsilon(delta)
    after = pld(ledger + [(extra, count)]).get_epsilon(delta)
    assert after >= before * (1 - 1e-9)
    more = pld([(ledger[0][0], ledger[0][1] + count)] + ledger[1:]).get_epsilon(delta)  # one entry counted more
    assert more >= before * (1 - 1e-9)


@pytest.mark.parametrize("z, q, steps", [(0.7, 0.05, 3000), (3.85, 0.485, 1481), (0.511, 0.134, 1542)])
def test_a_small_laplace_release_never_lowers_epsilon(z, q, steps):
    # the cases: a finer grid chosen for the larger ledger used to give 47.8529 < 47.8628
    alone = pld([(SubsampledGaussianEvent(z, q), steps)]).get_epsilon(1e-5)
    assert pld([(SubsampledGaussianEvent(z, q), steps), (LaplaceEvent(0.01), 1)]).get_epsilon(1e-5) >= alone


@pytest.mark.parametrize("steps", [1000, 10**6, 10**8])
def test_tiny_noise_gives_a_finite_answer_or_infinity(steps):
    acc = pld([(SubsampledGaussianEvent(noise_multiplier=0.001, sampling_rate=0.01), steps)])
    epsilon = acc.get_epsilon(1e-5)
    assert epsilon > 1e4 and not math.isnan(epsilon)  # one sampled step alone leaks a loss of about 1/(2 z^2)
    assert 0.0 <= acc.get_delta(1e-9) <= 1.0 and "coarsened" in acc.caveat


def test_a_query_changes_nothing():
    acc = pld([(SubsampledGaussianEvent(1.0, 0.001), 10**6)], max_grid_size=2**16)
    state = dict(vars(acc))
    acc.get_epsilon(1e-5), acc.epsilon_bracket(1e-5), acc.get_delta([0.5, 1.0]), acc.caveat
    assert vars(acc) == state and "caveat" not in vars(acc)


@pytest.mark.parametrize("event", [SubsampledGaussianEvent(1.0, 1e-4), SubsampledGaussianEvent(0.7, 0.3),
                                   GaussianEvent(2.0), LaplaceEvent(0.05), EpsilonDeltaEvent(0.5)])
def test_entry_spacing_is_a_power_of_two_that_never_gets_finer_with_the_count(event):
    from dpedu.accountants.pld.grid import entry_spacing
    from dpedu.accountants.pld.losses import loss_model, loss_moments

    mean, variance = loss_moments(loss_model(event, "remove", 1e-20))
    atom = getattr(event, "epsilon", None)
    spacings = [entry_spacing(mean, variance, count, 1e-3, atom) for count in (1, 2, 10, 10**3, 10**5, 10**8)]
    assert all(math.log2(s) == round(math.log2(s)) for s in spacings)
    assert all(a <= b for a, b in zip(spacings, spacings[1:]))


# ---- refusals that name their cause (docs/math.md §15.10) -----------------------------------------------------

PURE_PAIR = [(EpsilonDeltaEvent(1.0, 0.1), 1), (EpsilonDeltaEvent(2.0, 0.2), 1)]   # dp_accounting's test_epsilon_delta
LAPLACES = [(LaplaceEvent(1.0), 3), (LaplaceEvent(0.5), 2)]                 # its test_laplace_basic: b = 1 x3, b = 2 x2


def test_the_mass_at_infinity_is_answered_as_dp_accounting_answers_it():
    # (1, 0.1) and (2, 0.2): mass 1 - 0.9 * 0.8 = 0.28 at +infinity, finite losses at most 1 + 2 = 3, so delta(3) is
    # 0.28 exactly and 3 is the smallest epsilon at delta = 0.28 (dp_accounting's test asserts both). Before: delta(3)
    # = 0.280000000000138 (the round-off bound, 1.4e-13, where no round-off can sit) and "below the truncated tail mass"
    acc = pld(PURE_PAIR)
    mass = 0.28
    assert mass == pytest.approx(1.0 - (1.0 - 0.1) * (1.0 - 0.2), abs=1e-15) and acc.roundoff_bound() > 1e-14
    assert acc.get_delta(3.0) == mass and acc.get_epsilon(mass) == 3.0
    assert acc.get_epsilon(0.27) == math.inf                 # below the events' own mass: no epsilon, as dp_accounting
    # just above it, never below the truth: delta(3 - x) = 0.28 + p (1 - e^{-x}), p the mass at loss 3
    p = (1.0 - 0.1) * (1.0 - 0.2) / ((1.0 + math.exp(-1.0)) * (1.0 + math.exp(-2.0)))
    answers = [acc.get_epsilon(mass + extra) for extra in (1e-15, 1e-13, 1e-11, 1e-9, 1e-6)]
    assert all(a >= b for a, b in zip(answers, answers[1:]))
    for extra, answer in zip((1e-15, 1e-13, 1e-11, 1e-9, 1e-6), answers):
        assert 3.0 + math.log1p(-extra / p) - 1e-12 <= answer <= 3.0


def test_bounded_losses_at_a_delta_below_the_roundoff_bound_are_answered():
    # the composed Laplace losses end at 3 * 1 + 2 * 0.5 = 4: delta(4) = 0, so epsilon(1e-14) = 4 (dp_accounting: 4),
    # though the round-off bound (2.9e-12) is far above 1e-14: no round-off sits at the grid's top
    acc = pld(LAPLACES, tail_mass=1e-15)
    assert acc.roundoff_bound() > 1e-12 and acc.get_delta(4.0) == 0.0
    epsilon = acc.get_epsilon(1e-14)
    # the atom at loss 4 holds (1/2)^5, so the true epsilon at 1e-14 is above 4 - 32e-14 / (1 - ...) > 4 - 3.3e-13
    assert 4.0 - 3.3e-13 <= epsilon <= 4.0
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import pld as dpa_pld
    theirs = dpa_pld.PLDAccountant()
    theirs.compose(dpa.LaplaceDpEvent(noise_multiplier=1), 3)
    theirs.compose(dpa.LaplaceDpEvent(noise_multiplier=2), 2)
    assert epsilon == pytest.approx(theirs.get_epsilon(1e-14), abs=1e-6)


@pytest.mark.parametrize("ledger, options, delta, match", [
    ([(SubsampledGaussianEvent(1.0, 0.01), 1000)], {}, 1e-16,
     r"^PLD cannot certify delta=1e-16 below the top of its grid: the bound on its FFT round-off, 5\.\de-14, .*"
     r"Pass a delta of at least 5\.\d+e-14 .*or use an accountant without FFT round-off \(e\.g\. 'rdp'\)$"),
    ([(SubsampledGaussianEvent(1.0, 0.01), 1000)], {}, 1e-19,
     r"^PLD cannot certify delta=1e-19: the mass its truncation puts at \+infinity \(6\.\de-19 beyond the events' own "
     r"0\) exceeds what delta allows; pass a smaller tail_mass \(now 1e-18\) or a larger delta$"),
    ([(SubsampledGaussianEvent(1.0, 0.01), 1000)], {"tail_mass": 1e-6}, 1e-7, r"tail_mass \(now 1e-06\)"),
    ([(EpsilonDeltaEvent(1.0, 0.1), 1), (SubsampledGaussianEvent(1.0, 0.01), 100)], {}, 0.1,
     r"FFT round-off, 3\.\de-12.*at least 0\.100000000003"),
], ids=["roundoff", "tails", "tail_mass", "roundoff-beside-a-mass"])
def test_an_uncertifiable_delta_is_refused_with_its_real_cause(ledger, options, delta, match):
    with pytest.raises(ValueError, match=match):
        pld(ledger, **options).get_epsilon(delta)


def test_the_mass_beyond_the_top_is_the_mass_at_infinity_less_what_cannot_sit_there():
    from dataclasses import replace

    from dpedu.accountants.pld.compose import _slack
    from dpedu.accountants.pld.losses import GridPMF
    g = GridPMF(0.5, 0, 0.0, np.ones(3) / 3, 0.3, roundoff=0.1, top_slack=0.1)
    assert g.infinity_beyond_top == pytest.approx(0.2)
    assert replace(g, infinity_mass=0.5).infinity_beyond_top == pytest.approx(0.4)   # more mass: more beyond the top
    assert GridPMF(0.5, 0, 0.0, np.ones(1), 0.25).infinity_beyond_top == 0.25          # no FFT: all of it
    rng = np.random.default_rng(0)
    for top, extra in zip(rng.uniform(0, 1, 200) ** 8, rng.uniform(0, 1, 200) ** 30):
        slack = _slack(top + extra, top)
        assert 0.0 <= slack and (top + extra) - slack >= top                          # rounding never lowers it
