"""Pro-active DP (van Dijk et al., arXiv 2102.09030; docs/math.md §16): closed form, conditions, planner."""

import dataclasses
import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpedu import calibrate
from dpedu.accountants import GaussianEvent, SubsampledGaussianEvent, make_accountant
from dpedu.accountants.rdp import OrderGridEdgeWarning
from dpedu.accountants.proactive import (
    ProactiveConditionWarning,
    minimum_epochs,
    minimum_steps,
    plan,
    proactive_conditions,
    proactive_epsilon,
    proactive_noise_multiplier,
    smallest_admissible_epochs,
)


def quiet_plan(**kwargs):
    """plan() with the accountants' order-grid notes silenced (they go into plan.notes anyway)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridEdgeWarning)
        return plan(**kwargs)


# --- docs/math.md §16.4 ------------------------------------------------------------------------------------
# N, epsilon, k, z, T, q, RDP improved, PLD (None: not tabulated)
TABLE = [
    (60_000, 0.5, 5, 6.783, 100, 0.05, 0.269, 0.241),
    (60_000, 0.25, 5, 9.488, 200, 0.025, 0.126, None),
    (10**6, 0.5, 6, 7.567, 144, 6 / 144, 0.285, None),
]


@pytest.mark.parametrize("n, epsilon, k, z, steps, q, eps_rdp, eps_pld", TABLE)
def test_plan_reproduces_the_table(n, epsilon, k, z, steps, q, eps_rdp, eps_pld):
    p = quiet_plan(epsilon=epsilon, dataset_size=n, epochs=k, accountants=("rdp", "pld") if eps_pld else ("rdp",))
    assert p.delta == 1 / n
    assert p.noise_multiplier == pytest.approx(z, abs=5e-4)
    assert (p.steps, p.sampling_rate, p.expected_batch_size) == (steps, pytest.approx(q), pytest.approx(q * n))
    assert p.conditions.all_hold
    assert p.accountant_epsilons["rdp"] == pytest.approx(eps_rdp, abs=5e-4)
    if eps_pld:
        # the PLD accountant is an upper bound: its pessimistic value is at most a discretisation step above
        optimistic, pessimistic = make_accountant("pld").compose(
            SubsampledGaussianEvent(p.noise_multiplier, q), steps).epsilon_bracket(p.delta)
        assert p.accountant_epsilons["pld"] == pessimistic
        assert optimistic - 5e-4 <= eps_pld <= pessimistic + 5e-4
    # inside the conditions the closed form is conservative: the tight accountants certify much less ...
    assert all(eps < epsilon for eps in p.accountant_epsilons.values())
    # ... and calibrating on them would have chosen less noise (which still meets the budget)
    for name, z_cal in p.calibrated_noise_multipliers.items():
        assert z_cal < p.noise_multiplier
        assert make_accountant(name).compose(SubsampledGaussianEvent(z_cal, q), steps).get_epsilon(p.delta) <= epsilon


def test_a_quarter_of_the_steps_violates_the_budget():
    # docs/math.md §16.4: T = 25 instead of 100 -> RDP 0.583, PLD 0.525: the tight accountants exceed 0.5
    with pytest.warns(ProactiveConditionWarning, match="T >= 2 k"):
        p = quiet_plan(epsilon=0.5, dataset_size=60_000, epochs=5, steps=25, accountants=("rdp", "pld"),
                       strict=False)
    assert p.sampling_rate == 0.2
    assert [c.name for c in p.conditions.failed] == ["T >= 2 k^2 / epsilon", "q z <= 1/e"]
    assert p.accountant_epsilons["rdp"] == pytest.approx(0.583, abs=5e-4)
    assert p.accountant_epsilons["pld"] == pytest.approx(0.525, abs=1.5e-3)
    assert all(eps > 0.5 for eps in p.accountant_epsilons.values())
    assert all(z > p.noise_multiplier for z in p.calibrated_noise_multipliers.values())  # it needed MORE noise
    report = str(p)
    assert "EXCEEDS the budget" in report and "NOT a guarantee" in report and "FAILS" in report


def test_the_closed_form_is_no_guarantee_for_one_full_batch_release():
    # docs/math.md §16.4: one Gaussian release with the closed-form z at epsilon = 1/2 costs more than 1/2
    delta = 1e-5  # = 1/N for N = 100,000
    z = proactive_noise_multiplier(0.5, delta)
    assert calibrate.gaussian_epsilon_exact(delta, z) == pytest.approx(0.508, abs=5e-4)
    assert calibrate.gaussian_epsilon_exact(1 / 60_000, proactive_noise_multiplier(0.5, 1 / 60_000)) > 0.5
    # ... and the module says so instead of certifying 1/2
    with pytest.raises(ValueError, match="not a guarantee"):
        proactive_epsilon(noise_multiplier=z, sampling_rate=1.0, steps=1, delta=delta)
    with pytest.warns(ProactiveConditionWarning):
        proactive_epsilon(noise_multiplier=z, sampling_rate=1.0, steps=1, delta=delta, strict=False)
    conditions = proactive_conditions(epsilon=0.5, delta=delta, dataset_size=100_000, epochs=1, steps=1)
    assert {c.name for c in conditions.failed} == {"T >= 2 k^2 / epsilon", "(2/e)^2 k^2 - 1/2 >= ln N",
                                                   "q z <= 1/e"}
    with pytest.raises(ValueError, match="k = 5"):
        plan(epsilon=0.5, dataset_size=100_000, epochs=1, accountants=())


# --- the closed form ----------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(epsilon=st.floats(0.01, 0.5), log10_inv_delta=st.floats(1.0, 12.0))
def test_proactive_epsilon_inverts_the_closed_form(epsilon, log10_inv_delta):
    delta = 10.0**-log10_inv_delta
    z = proactive_noise_multiplier(epsilon, delta)
    assert z * z == pytest.approx(2 * (epsilon + math.log(1 / delta)) / epsilon, rel=1e-12)
    # a schedule with T q^2 = epsilon/2 exactly and a tiny q: both terms of the max equal epsilon
    q = 1e-3 / z
    steps = epsilon / (2 * q * q)
    value = proactive_epsilon(noise_multiplier=z, sampling_rate=q, steps=max(1, math.floor(steps)), delta=delta)
    assert value == pytest.approx(epsilon, rel=1e-9)


@pytest.mark.parametrize("n, epsilon, k", [(60_000, 0.5, 5), (60_000, 0.25, 5), (10**6, 0.5, 6), (1000, 0.1, 4)])
def test_the_moment_bound_behind_the_closed_form(n, epsilon, k):
    # docs/math.md §16.2: with lambda = z^2 and alpha_T(lambda) <= T q^2 lambda (lambda + 1) / z^2 the tail bound
    # gives alpha_T(lambda) - lambda * epsilon <= ln(delta) at the plan's (z, q, T)
    p = plan(epsilon=epsilon, dataset_size=n, epochs=k, accountants=())
    lam = p.noise_multiplier**2
    bound = p.steps * p.sampling_rate**2 * lam * (lam + 1) / p.noise_multiplier**2 - lam * epsilon
    assert bound <= math.log(p.delta) + 1e-9
    # the moment bound itself needs lambda <= z^2 ln(1/(q z)) (Abadi Lemma 3), i.e. q z <= 1/e
    assert p.sampling_rate * p.noise_multiplier <= 1 / math.e


@settings(max_examples=6, deadline=None)
@given(log10_n=st.floats(3.0, 7.0), epsilon=st.floats(0.05, 0.5), extra_epochs=st.integers(0, 3))
def test_inside_the_conditions_rdp_certifies_the_budget(log10_n, epsilon, extra_epochs):
    n = round(10.0**log10_n)
    k = smallest_admissible_epochs(n) + extra_epochs
    p = quiet_plan(epsilon=epsilon, dataset_size=n, epochs=k, accountants=("rdp",))
    assert p.conditions.all_hold
    assert p.proactive_epsilon == pytest.approx(epsilon, rel=1e-9)
    assert p.accountant_epsilons["rdp"] <= epsilon


def test_noise_does_not_depend_on_the_steps():
    short = plan(epsilon=0.5, dataset_size=60_000, epochs=5, accountants=())
    long = plan(epsilon=0.5, dataset_size=60_000, epochs=5, steps=400, accountants=())
    assert short.noise_multiplier == long.noise_multiplier and long.conditions.all_hold
    assert long.sampling_rate == 5 / 400 and long.expected_batch_size == 750.0


# --- epochs and steps ---------------------------------------------------------------------------------

def test_minimum_epochs():
    assert minimum_epochs(60_000) == pytest.approx(4.6095, abs=1e-4)  # (e/2) sqrt(ln N + 1/2)
    assert smallest_admissible_epochs(60_000) == 5 and smallest_admissible_epochs(10**6) == 6


@pytest.mark.parametrize("n", [2, 10, 1000, 60_000, 10**6, 10**9])
def test_smallest_admissible_epochs_is_the_threshold(n):
    k = smallest_admissible_epochs(n)

    def holds(epochs):
        return (2 / math.e) ** 2 * epochs**2 - 0.5 >= math.log(n)

    assert holds(k) and (k == 1 or not holds(k - 1))
    assert k == math.ceil(minimum_epochs(n))


def test_minimum_steps():
    assert [minimum_steps(0.5, 5), minimum_steps(0.25, 5), minimum_steps(0.5, 6), minimum_steps(0.3, 5)] == \
        [100, 200, 144, 167]
    assert minimum_steps(100.0, 3) == 3  # never below k: q = k / T <= 1


# --- conditions, strictness ---------------------------------------------------------------------------

def test_conditions_list_each_value_and_bound():
    c = proactive_conditions(epsilon=0.5, delta=1 / 60_000, dataset_size=60_000, epochs=5, steps=100)
    assert [x.name for x in c] == ["epsilon <= 1/2", "delta = 1/N", "T >= 2 k^2 / epsilon",
                                   "(2/e)^2 k^2 - 1/2 >= ln N", "q z <= 1/e"]
    assert c.all_hold and c.failed == ()
    assert c["T >= 2 k^2 / epsilon"].value == 100 and c["T >= 2 k^2 / epsilon"].bound == 100
    assert c["(2/e)^2 k^2 - 1/2 >= ln N"].bound == pytest.approx(math.log(60_000))
    assert c["q z <= 1/e"].value == pytest.approx(0.05 * 6.78295, rel=1e-5)


def test_too_few_epochs_is_refused_with_the_fix():
    with pytest.raises(ValueError, match=r"4\.609 epochs, i\.e\. k = 5"):
        plan(epsilon=0.5, dataset_size=60_000, epochs=4, accountants=())
    with pytest.warns(ProactiveConditionWarning, match="k = 5"):
        p = plan(epsilon=0.5, dataset_size=60_000, epochs=4, accountants=(), strict=False)
    assert not p.conditions.all_hold


def test_epsilon_above_one_half_is_refused():
    with pytest.raises(ValueError, match="epsilon <= 1/2"):
        proactive_noise_multiplier(0.8, 1e-5)
    with pytest.warns(ProactiveConditionWarning, match="epsilon <= 1/2"):
        z = proactive_noise_multiplier(0.8, 1e-5, strict=False)
    assert z == pytest.approx(math.sqrt(2 * (0.8 + math.log(1e5)) / 0.8))
    with pytest.raises(ValueError, match="epsilon <= 1/2"):
        plan(epsilon=0.8, dataset_size=60_000, epochs=8, accountants=())


def test_delta_other_than_one_over_n_is_flagged():
    with pytest.raises(ValueError, match="delta = 1/N"):
        plan(epsilon=0.5, dataset_size=60_000, epochs=5, delta=1e-5, accountants=())
    with pytest.warns(ProactiveConditionWarning, match="delta = 1/N"):
        p = plan(epsilon=0.5, dataset_size=60_000, epochs=5, delta=1e-5, accountants=(), strict=False)
    assert p.noise_multiplier == proactive_noise_multiplier(0.5, 1e-5)


def test_an_accountant_that_does_not_apply_shows_nan_and_why():
    p = quiet_plan(epsilon=0.5, dataset_size=60_000, epochs=5, accountants=("zcdp", "rdp"))
    assert math.isnan(p.accountant_epsilons["zcdp"]) and math.isnan(p.calibrated_noise_multipliers["zcdp"])
    assert "subsampling" in p.notes["zcdp"]
    assert "zcdp" in str(p)


def test_report():
    p = quiet_plan(epsilon=0.5, dataset_size=60_000, epochs=5, accountants=("rdp",))
    report = str(p)
    # z = sqrt(4 (1/2 + ln 60000)) = 6.78295 (docs/math.md §18 prints 6.7831: a rounding slip)
    for text in ("z = sqrt(2 (epsilon + ln(1/delta)) / epsilon) = 6.7829", "T = 100", "q = k / T = 0.05",
                 "expected batch size s = k N / T = 3,000", "all hold", "0.2692", "rdp"):
        assert text in report
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.steps = 10


def test_full_batch_plan_uses_gaussian_events():
    # epsilon > 2k gives T = k, q = 1: the accountants then see full-batch GaussianEvents (zcdp applies)
    with pytest.warns(ProactiveConditionWarning, match="epsilon <= 1/2"):
        p = plan(epsilon=4.0, dataset_size=1000, epochs=1, accountants=("zcdp",), strict=False)
    assert (p.steps, p.sampling_rate) == (1, 1.0)
    assert p.accountant_epsilons["zcdp"] == make_accountant("zcdp").compose(
        GaussianEvent(p.noise_multiplier), 1).get_epsilon(p.delta)


# --- bad input ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, match", [
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(dataset_size=1), ValueError, "dataset_size"),
    (dict(dataset_size=6e4), TypeError, "dataset_size"),
    (dict(epochs=0), ValueError, "epochs"),
    (dict(epochs=4.5), TypeError, "epochs"),
    (dict(delta=1.0), ValueError, "delta"),
    (dict(steps=4), ValueError, "steps must be >= epochs"),
    (dict(accountants="rdp"), TypeError, "sequence of names"),
    (dict(accountants=("renyi",)), ValueError, "accountant must be one of"),
])
def test_plan_bad_input(kwargs, error, match):
    args = dict(epsilon=0.5, dataset_size=60_000, epochs=5, accountants=()) | kwargs
    with pytest.raises(error, match=match):
        plan(**args)


def test_proactive_epsilon_needs_z_above_sqrt2():
    with pytest.raises(ValueError, match="sqrt"):
        proactive_epsilon(noise_multiplier=1.4, sampling_rate=0.01, steps=10, delta=1e-5)


@pytest.mark.parametrize("args, error", [((0.0, 1e-5), ValueError), ((0.5, 0.0), ValueError),
                                         (("0.5", 1e-5), TypeError)])
def test_proactive_noise_multiplier_bad_input(args, error):
    with pytest.raises(error):
        proactive_noise_multiplier(*args)


@pytest.mark.parametrize("strict", ["yes", 1, 0, None, 1.0])
def test_strict_must_be_a_bool(strict):
    with pytest.raises(TypeError, match="strict"):
        proactive_noise_multiplier(0.25, 1e-5, strict=strict)
    with pytest.raises(TypeError, match="strict"):
        proactive_epsilon(noise_multiplier=10.0, sampling_rate=0.01, steps=100, delta=1e-5, strict=strict)
    with pytest.raises(TypeError, match="strict"):
        plan(epsilon=0.5, dataset_size=60_000, epochs=5, accountants=(), strict=strict)
