"""Calibration by bisection on an accountant (docs/math.md §17): never overshoots, tight, matches closed forms."""

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpedu import calibrate
from dpedu.accountants import (
    GaussianEvent,
    SubsampledGaussianEvent,
    UnsupportedEventError,
    make_accountant,
)

RTOL = 1e-3
DELTA = 1e-5


def run_epsilon(accountant, z, q, steps, delta=DELTA, **options):
    """epsilon of ``steps`` identical Gaussian steps on a fresh accountant (the quantity calibrated)."""
    event = GaussianEvent(z) if q == 1.0 else SubsampledGaussianEvent(z, q)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # order-grid edge notes are not under test here
        return make_accountant(accountant, **options).compose(event, steps).get_epsilon(delta)


def assert_calibrated(accountant, target, q, steps, delta=DELTA, rtol=RTOL):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        z = calibrate.noise_multiplier(target_epsilon=target, target_delta=delta, sampling_rate=q, steps=steps,
                                       accountant=accountant, rtol=rtol)
    assert run_epsilon(accountant, z, q, steps, delta) <= target  # never overshoots
    assert run_epsilon(accountant, z * (1 - 2 * rtol), q, steps, delta) > target  # and is tight
    return z


# --- noise_multiplier ---------------------------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(target=st.floats(0.3, 8.0), log10_q=st.floats(-3.0, -0.5), steps=st.integers(1, 5000),
       accountant=st.sampled_from(["rdp", "moments"]))
def test_calibration_never_overshoots_and_is_tight_subsampled(target, log10_q, steps, accountant):
    if accountant == "moments" and target < 0.6:
        target += 0.6  # moments' 32 integer orders floor epsilon at about ln(1/delta)/32 = 0.36
    assert_calibrated(accountant, target, 10.0**log10_q, steps)


@settings(max_examples=12, deadline=None)
@given(target=st.floats(0.05, 20.0), steps=st.integers(1, 10_000), accountant=st.sampled_from(["rdp", "zcdp"]))
def test_calibration_never_overshoots_and_is_tight_full_batch(target, steps, accountant):
    assert_calibrated(accountant, target, 1.0, steps)


@pytest.mark.parametrize("target, q, steps", [(1.0, 0.01, 1000), (0.5, 1.0, 10), (3.0, 0.05, 200)])
def test_calibration_on_pld_never_overshoots_and_is_tight(target, q, steps):
    assert_calibrated("pld", target, q, steps)


@pytest.mark.parametrize("target", [0.1, 1.0, 8.0])
@pytest.mark.parametrize("steps", [1, 100, 10_000])
def test_zcdp_calibration_matches_the_closed_form(target, steps):
    # rho + 2 sqrt(rho ln(1/delta)) = epsilon  <=>  sqrt(rho) = sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta))
    # and T Gaussians with multiplier z are (T/(2 z^2))-zCDP, so z = sqrt(T / (2 rho)) (docs/math.md §17)
    log_inv_delta = math.log(1 / DELTA)
    rho = (math.sqrt(log_inv_delta + target) - math.sqrt(log_inv_delta)) ** 2
    closed_form = math.sqrt(steps / (2 * rho))
    z = calibrate.noise_multiplier(target_epsilon=target, target_delta=DELTA, sampling_rate=1.0, steps=steps,
                                   accountant="zcdp", accountant_options={"conversion": "classic"})
    # lo < closed_form <= hi = z with hi - lo <= rtol * hi
    assert closed_form * (1 - 1e-12) <= z <= closed_form / (1 - RTOL)


@pytest.mark.parametrize("target, steps", [(0.5, 1), (1.0, 1), (3.0, 1), (10.0, 1), (1.0, 4), (1.0, 100)])
def test_full_batch_calibration_on_pld_against_the_exact_gaussian(target, steps):
    # T Gaussians with multiplier z are exactly one Gaussian with z / sqrt(T) (docs/math.md §4.3), whose smallest
    # z is Balle & Wang's analytic one. PLD's (pessimistic) epsilon is an upper bound, so its z is never
    # smaller and never overshoots the exact epsilon; it is tight up to rtol and the discretisation error
    # that the PLD accountant itself reports (its pessimistic - optimistic bracket).
    exact_z = math.sqrt(steps) * calibrate.analytic_noise_multiplier(target, DELTA)
    z = calibrate.noise_multiplier(target_epsilon=target, target_delta=DELTA, sampling_rate=1.0, steps=steps,
                                   accountant="pld")
    assert z >= exact_z * (1 - 1e-9)
    assert calibrate.gaussian_epsilon_exact(DELTA, z / math.sqrt(steps)) <= target
    below = z * (1 - 2 * RTOL)  # infeasible for PLD: its pessimistic epsilon there exceeds the target
    optimistic, pessimistic = make_accountant("pld").compose(GaussianEvent(below), steps).epsilon_bracket(DELTA)
    assert pessimistic > target
    assert calibrate.gaussian_epsilon_exact(DELTA, below / math.sqrt(steps)) > target - (pessimistic - optimistic)


@pytest.mark.parametrize("accountant", ["rdp", "moments", "zcdp", "sequential", "advanced"])
def test_every_accountant_needs_at_least_the_exact_noise(accountant):
    # every accountant upper-bounds the exact epsilon, so none may calibrate below the analytic z
    exact = math.sqrt(10) * calibrate.analytic_noise_multiplier(2.0, DELTA)
    z = calibrate.noise_multiplier(target_epsilon=2.0, target_delta=DELTA, sampling_rate=1.0, steps=10,
                                   accountant=accountant)
    assert z >= exact * (1 - 1e-9)


def test_tighter_accountants_need_less_noise():
    # Abadi et al.'s setting, q = 0.01, T = 10,000, target epsilon 1: pld <= rdp <= moments
    z = {name: calibrate.noise_multiplier(target_epsilon=1.0, target_delta=DELTA, sampling_rate=0.01,
                                          steps=10_000, accountant=name) for name in ("moments", "rdp", "pld")}
    assert z["pld"] <= z["rdp"] * (1 + RTOL) and z["rdp"] <= z["moments"] * (1 + RTOL)
    # RDP certifies 1.0355 at z = 4 (docs/math.md §13.6), so epsilon 1 needs a little more than 4
    assert 4.0 < z["rdp"] < 4.3


def test_accountant_options_reach_the_accountant():
    common = dict(target_epsilon=1.0, target_delta=DELTA, sampling_rate=0.01, steps=10_000)
    improved = calibrate.noise_multiplier(**common)
    classic = calibrate.noise_multiplier(**common, accountant_options={"conversion": "classic"})
    assert classic > improved  # the classic RDP conversion is looser (docs/math.md §13.4)
    assert run_epsilon("rdp", classic, 0.01, 10_000, conversion="classic") <= 1.0


@pytest.mark.parametrize("rtol", [1e-2, 1e-4])
def test_rtol_is_the_bracket_width(rtol):
    assert_calibrated("rdp", 1.0, 0.02, 500, rtol=rtol)


def test_noise_multiplier_is_monotone():
    def z(target, steps):
        return calibrate.noise_multiplier(target_epsilon=target, target_delta=DELTA, sampling_rate=0.01, steps=steps)

    by_steps = [z(1.0, steps) for steps in (100, 1000, 10_000)]
    by_target = [z(target, 1000) for target in (0.5, 1.0, 2.0)]
    assert by_steps == sorted(by_steps) and by_target == sorted(by_target, reverse=True)


def test_calibration_emits_at_most_the_returned_probes_warnings():
    # moments at a large z: the best order is the grid's last (32) at many probes; only the answer's warns
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        calibrate.noise_multiplier(target_epsilon=0.5, target_delta=DELTA, sampling_rate=0.05, steps=100,
                                   accountant="moments")
    assert len(caught) <= 1


# --- steps_for_budget ---------------------------------------------------------------------------------

@pytest.mark.parametrize("accountant, z, q, target", [
    ("rdp", 4.0, 0.01, 1.0),
    ("rdp", 1.1, 256 / 60_000, 3.0),
    ("moments", 4.0, 0.01, 2.0),
    ("zcdp", 10.0, 1.0, 5.0),
    ("pld", 2.0, 0.05, 2.0),
])
def test_steps_for_budget_is_the_largest_feasible_T(accountant, z, q, target):
    steps = calibrate.steps_for_budget(target_epsilon=target, target_delta=DELTA, noise_multiplier=z,
                                       sampling_rate=q, accountant=accountant)
    assert run_epsilon(accountant, z, q, steps) <= target < run_epsilon(accountant, z, q, steps + 1)


def test_steps_for_budget_matches_the_closed_form_for_full_batch_zcdp():
    # T steps are (T / (2 z^2))-zCDP: the largest T has rho(T) <= rho* < rho(T + 1)
    z, target = 10.0, 5.0
    rho_star = (math.sqrt(math.log(1 / DELTA) + target) - math.sqrt(math.log(1 / DELTA))) ** 2
    steps = calibrate.steps_for_budget(target_epsilon=target, target_delta=DELTA, noise_multiplier=z,
                                       sampling_rate=1.0, accountant="zcdp")
    assert steps == math.floor(2 * z * z * rho_star)


def test_steps_for_budget_is_monotone():
    def steps(z):
        return calibrate.steps_for_budget(target_epsilon=1.0, target_delta=DELTA, noise_multiplier=z,
                                          sampling_rate=0.01)

    assert steps(2.0) < steps(4.0) < steps(8.0)


def test_steps_for_budget_refuses_when_one_step_is_too_many():
    with pytest.raises(ValueError, match="single step"):
        calibrate.steps_for_budget(target_epsilon=0.1, target_delta=DELTA, noise_multiplier=1.0, sampling_rate=1.0)


def test_steps_for_budget_refuses_beyond_max_steps():
    with pytest.raises(ValueError, match="max_steps"):
        calibrate.steps_for_budget(target_epsilon=10.0, target_delta=DELTA, noise_multiplier=50.0,
                                   sampling_rate=0.001, max_steps=1000)


# --- sampling_rate_for_budget ------------------------------------------------------------------------

@pytest.mark.parametrize("accountant", ["rdp", "moments"])
def test_sampling_rate_for_budget_is_feasible_and_tight(accountant):
    q = calibrate.sampling_rate_for_budget(target_epsilon=2.0, target_delta=DELTA, noise_multiplier=1.0,
                                           steps=1000, accountant=accountant)
    assert run_epsilon(accountant, 1.0, q, 1000) <= 2.0 < run_epsilon(accountant, 1.0, q * (1 + 2 * RTOL), 1000)


def test_sampling_rate_for_budget_returns_full_batch_when_it_fits():
    assert calibrate.sampling_rate_for_budget(target_epsilon=5.0, target_delta=DELTA, noise_multiplier=10.0,
                                              steps=10, accountant="zcdp") == 1.0


# --- refusals and bad input ---------------------------------------------------------------------------

def test_unreachable_target_is_refused():
    # moments tops out at order 32: epsilon >= ln(1/delta)/32 = 0.36 however much noise
    with pytest.raises(ValueError, match="cannot certify"):
        calibrate.noise_multiplier(target_epsilon=0.1, target_delta=DELTA, sampling_rate=0.01, steps=100,
                                   accountant="moments")


def test_zcdp_refuses_subsampling_with_its_reason():
    with pytest.raises(UnsupportedEventError, match="amplification"):
        calibrate.noise_multiplier(target_epsilon=1.0, target_delta=DELTA, sampling_rate=0.01, steps=100,
                                   accountant="zcdp")


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(target_epsilon=0.0), ValueError, "target_epsilon"),
    (dict(target_epsilon=math.nan), ValueError, "target_epsilon"),
    (dict(target_delta=0.0), ValueError, "target_delta"),
    (dict(target_delta=1.0), ValueError, "target_delta"),
    (dict(sampling_rate=0.0), ValueError, "sampling_rate"),
    (dict(sampling_rate=1.5), ValueError, "sampling_rate"),
    (dict(steps=0), ValueError, "steps"),
    (dict(steps=10.0), TypeError, "steps"),
    (dict(accountant="renyi"), ValueError, "accountant must be one of"),
    (dict(rtol=0.0), ValueError, "rtol"),
    (dict(rtol=0.5), ValueError, "rtol"),
    (dict(accountant_options=[("conversion", "classic")]), TypeError, "accountant_options"),
])
def test_noise_multiplier_bad_input(kwargs, error, match):
    args = dict(target_epsilon=1.0, target_delta=DELTA, sampling_rate=0.01, steps=100) | kwargs
    with pytest.raises(error, match=match):
        calibrate.noise_multiplier(**args)


def test_an_accountant_instance_is_refused():
    with pytest.raises(TypeError, match="name"):
        calibrate.noise_multiplier(target_epsilon=1.0, target_delta=DELTA, sampling_rate=0.01, steps=100,
                                   accountant=make_accountant("rdp"))


def test_positional_order_is_the_documented_one():
    # noise_multiplier(target_epsilon, target_delta, sampling_rate, steps, accountant); options are keyword-only
    assert calibrate.noise_multiplier(1.0, DELTA, 0.01, 100, "rdp") == calibrate.noise_multiplier(
        target_epsilon=1.0, target_delta=DELTA, sampling_rate=0.01, steps=100, accountant="rdp")
    with pytest.raises(TypeError):
        calibrate.noise_multiplier(1.0, DELTA, 0.01, 100, "rdp", 1e-3)


@pytest.mark.parametrize("kwargs, error", [
    (dict(noise_multiplier=0.0), ValueError),
    (dict(max_steps=0), ValueError),
    (dict(sampling_rate=-0.1), ValueError),
])
def test_steps_for_budget_bad_input(kwargs, error):
    args = dict(target_epsilon=1.0, target_delta=DELTA, noise_multiplier=4.0, sampling_rate=0.01) | kwargs
    with pytest.raises(error, match=next(iter(kwargs))):
        calibrate.steps_for_budget(**args)


# --- the shared search, and issue 13 ---------------------------------------------------------------

def test_monotone_search_returns_the_evaluated_feasible_end():
    probes = []

    def feasible(x):
        probes.append(x)
        return x * x >= 2.0

    x = calibrate.monotone_search(feasible, 1.0, feasible_when="large", lowest=1e-9, highest=1e9, rtol=1e-6,
                                  at_limit=None)
    assert x in probes and feasible(x) and x * x >= 2.0 and x - math.sqrt(2.0) <= 1e-6 * x


def test_monotone_search_integer_gives_neighbours():
    x = calibrate.monotone_search(lambda t: t <= 37, 1, feasible_when="small", lowest=1, highest=1000,
                                  at_limit=None)
    assert x == 37


def test_monotone_search_calls_at_limit_at_either_end():
    seen = []
    result = calibrate.monotone_search(lambda q: True, 1.0, feasible_when="small", lowest=1e-9, highest=1.0,
                                       rtol=1e-3, at_limit=lambda x, ok: seen.append((x, ok)) or x)
    assert result == 1.0 and seen == [(1.0, True)]
    seen.clear()
    with pytest.raises(ValueError, match="at 1"):
        calibrate.monotone_search(lambda t: False, 1, feasible_when="small", lowest=1, highest=10,
                                  at_limit=lambda x, ok: (_ for _ in ()).throw(ValueError(f"at {x}")))


def test_each_probe_uses_a_fresh_accountant(monkeypatch):
    made = []
    real = calibrate.account

    def spy(history, accountant, **kwargs):
        made.append(history)
        return real(history, accountant, **kwargs)

    monkeypatch.setattr(calibrate, "account", spy)
    calibrate.noise_multiplier(target_epsilon=1.0, target_delta=DELTA, sampling_rate=0.01, steps=100)
    assert len(made) > 3 and all(len(history) == 1 for history in made)


@pytest.mark.parametrize("target", [1e-16, 1e-300])
def test_a_vanishing_target_epsilon_is_refused_by_name(target):
    with pytest.raises(ValueError, match="target_epsilon"):
        calibrate.noise_multiplier(target, 1e-5, 0.01, 1000)


def test_a_vanishing_noise_multiplier_is_refused_by_name():
    with pytest.raises(ValueError, match=r"noise_multiplier must be in \[1e-50"):
        calibrate.steps_for_budget(1, 1e-5, 1e-300, 0.01)


def test_noise_multiplier_calibrates_the_event_it_is_given():
    from dpedu.accountants import UnsupportedEventError, account
    from dpedu.ground.events import SubsampledGaussianEvent
    from dpedu.accountants.calibrate import noise_multiplier

    def replace_one(z):
        return SubsampledGaussianEvent(z, 0.01, relation="replace_one")

    z = noise_multiplier(1.0, 1e-5, 0.01, 1000, accountant="pld", step_event=replace_one)
    assert account([(replace_one(z), 1000)], "pld", delta=1e-5).epsilon <= 1.0
    assert account([(replace_one(z * 0.99), 1000)], "pld", delta=1e-5).epsilon > 1.0     # within rtol of the boundary
    assert z > noise_multiplier(1.0, 1e-5, 0.01, 1000, accountant="pld")                  # the default is add/remove
    with pytest.raises(UnsupportedEventError, match=r"'rdp' accountant cannot account for SubsampledGaussianEvent"):
        noise_multiplier(1.0, 1e-5, 0.01, 1000, accountant="rdp", step_event=replace_one)
    with pytest.raises(TypeError, match="step_event"):
        noise_multiplier(1.0, 1e-5, 0.01, 1000, step_event="replace_one")
