"""PrivacyBudget: records releases, answers spent/remaining, refuses overspending before releasing."""

import copy
import math

import numpy as np
import pytest

from dpedu.accountants import (
    GaussianEvent,
    LaplaceEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    UnsupportedEventError,
    make_accountant,
)
from dpedu.accountants.budget import BudgetExceededError, PrivacyBudget
from dpedu.textbook.mechanisms import gaussian_mech, gaussian_mechanism, laplace_mech, laplace_mechanism
from dpedu.textbook.training import plan_noisy_gradient_descent, run_noisy_gradient_descent


def test_sequential_budget_adds_up_and_refuses_the_overspending_release():
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5, accountant="sequential")
    assert budget.spent() == 0.0 and budget.remaining() == 1.0
    assert budget.spend(LaplaceEvent(0.25)) == pytest.approx(0.25)
    assert budget.spend(LaplaceEvent(0.25), count=2) == pytest.approx(0.75)
    assert budget.remaining() == pytest.approx(0.25)
    before = list(budget.ledger)
    with pytest.raises(BudgetExceededError, match="Nothing was released"):
        budget.spend(LaplaceEvent(0.3))
    assert budget.ledger == before and budget.spent() == pytest.approx(0.75)    # state unchanged
    assert budget.spend(LaplaceEvent(0.25)) == pytest.approx(1.0)              # exactly the budget is allowed
    assert not budget.can_afford(LaplaceEvent(1e-9))


def test_can_afford_and_epsilon_after_do_not_record():
    budget = PrivacyBudget(epsilon=2.0, delta=1e-5)
    event = SubsampledGaussianEvent(2.0, 0.01)
    assert budget.can_afford(event, count=1000)
    assert budget.epsilon_after(event, 1000) == pytest.approx(
        make_accountant("rdp").compose(event, 1000).get_epsilon(1e-5))
    assert budget.ledger == [] and budget.spent() == 0.0


def test_rdp_remaining_is_not_a_subtraction():
    # Two Gaussian releases: each alone costs more than what "remains" after the first, yet both fit,
    # because RDP pays the conversion to (epsilon, delta) once for the whole ledger.
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5, accountant="rdp")
    release = GaussianEvent(7.0)
    alone = make_accountant("rdp").compose(release).get_epsilon(1e-5)
    budget.spend(release)
    assert alone > budget.remaining()
    assert budget.can_afford(release)
    assert budget.spend(release) <= 1.0


def test_ledger_and_event_forms_agree():
    a = PrivacyBudget(epsilon=5.0, delta=1e-5)
    b = PrivacyBudget(epsilon=5.0, delta=1e-5)
    a.spend(SubsampledGaussianEvent(2.0, 0.05), count=300)
    b.spend([(SubsampledGaussianEvent(2.0, 0.05), 300)])
    assert a.ledger == b.ledger and a.spent() == b.spent()
    with pytest.raises(ValueError, match="count"):
        a.spend([(GaussianEvent(2.0), 3)], count=2)


def test_unsupported_event_is_refused_without_recording():
    budget = PrivacyBudget(epsilon=10.0, delta=1e-5)
    with pytest.raises(UnsupportedEventError, match="shuffled"):
        budget.spend(ShuffledBatchGaussianEvent(1.0, 10, 100))
    assert budget.ledger == []


@pytest.mark.parametrize("kwargs, error", [
    (dict(epsilon=0.0, delta=1e-5), ValueError),
    (dict(epsilon=math.inf, delta=1e-5), ValueError),
    (dict(epsilon=1.0, delta=0.0), ValueError),
    (dict(epsilon=1.0, delta=1e-5, accountant="magic"), ValueError),
    (dict(epsilon="1", delta=1e-5), TypeError),
])
def test_bad_budgets_are_refused(kwargs, error):
    with pytest.raises(error):
        PrivacyBudget(**kwargs)


def test_a_budget_is_never_copied():
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    assert copy.copy(budget) is budget and copy.deepcopy({"b": budget})["b"] is budget


# --- mechanisms charge before they sample ------------------------------------------------------

def test_laplace_mechanism_charges_and_refuses_before_sampling():
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5, accountant="sequential")
    laplace_mechanism(3.0, l1_sensitivity=1.0, epsilon=0.6, rng=0, budget=budget)
    laplace_mech(3.0, 1.0, 0.4, rng=0, budget=budget)
    assert budget.ledger == [(LaplaceEvent(0.6), 1), (LaplaceEvent(0.4), 1)]
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):
        laplace_mechanism(3.0, l1_sensitivity=1.0, epsilon=0.1, rng=rng, budget=budget)
    assert rng.bit_generator.state == state        # no noise was drawn, nothing was returned


def test_gaussian_mechanisms_charge_their_noise_multiplier():
    budget = PrivacyBudget(epsilon=3.0, delta=1e-5)
    gaussian_mechanism([1.0, 2.0], l2_sensitivity=2.0, noise_multiplier=3.0, rng=0, budget=budget)
    gaussian_mech(1.0, 1.0, 0.5, 1e-5, rng=0, budget=budget)
    z_classic = math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    assert budget.ledger[0] == (GaussianEvent(3.0), 1)
    assert budget.ledger[1][0].noise_multiplier == pytest.approx(z_classic)
    with pytest.raises(ValueError, match="cannot be charged"):
        gaussian_mechanism(1.0, l2_sensitivity=1.0, noise_multiplier=0.0, budget=budget)
    assert len(budget.ledger) == 2


def test_noisy_gradient_descent_charges_its_whole_ledger():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3)) / 3
    y = np.where(rng.random(100) < 0.5, 1.0, -1.0)
    budget = PrivacyBudget(epsilon=1.2, delta=1e-3, accountant="sequential")   # one run 0.658, two 1.41
    plan = plan_noisy_gradient_descent(5, 0.2, 1e-5)
    result = run_noisy_gradient_descent(X, y, plan, rng=1, budget=budget)
    assert budget.ledger == result.ledger
    with pytest.raises(BudgetExceededError):
        run_noisy_gradient_descent(X, y, plan, rng=1, budget=budget)


# --- issue 13: a malformed history changes nothing; check() asks first; budget arguments are checked ----

from dpedu.ground.validation import Budget, check_budget  # noqa: E402

MALFORMED = [
    ([(LaplaceEvent(0.1), 1), (LaplaceEvent(0.1), 0)], ValueError),       # a count of 0 after a good entry
    ([(LaplaceEvent(0.1), 1), (LaplaceEvent(0.1), -2)], ValueError),
    ([(LaplaceEvent(0.1), 1), (LaplaceEvent(0.1), 2.0)], TypeError),      # a float count is not truncated
    ([(LaplaceEvent(0.1), 1), (LaplaceEvent(0.1), True)], TypeError),
    ([(LaplaceEvent(0.1), 1), (LaplaceEvent(0.1), "3")], TypeError),
    ([(LaplaceEvent(0.1), 1), "LaplaceEvent(0.1)"], TypeError),
    ([(LaplaceEvent(0.1), 1), (0.1, 1)], TypeError),
    ([LaplaceEvent(0.1), ShuffledBatchGaussianEvent(1.0, 10, 100)], UnsupportedEventError),
    (None, TypeError),
    (1.0, TypeError),
]


@pytest.mark.parametrize("accountant", ["sequential", "rdp"])
@pytest.mark.parametrize("history, error", MALFORMED, ids=[f"malformed{i}" for i in range(len(MALFORMED))])
def test_a_malformed_history_changes_nothing(accountant, history, error):
    budget = PrivacyBudget(epsilon=5.0, delta=1e-5, accountant=accountant)
    if accountant == "sequential" or error is not UnsupportedEventError:
        budget.spend(LaplaceEvent(0.5))
    before, spent = budget.ledger, budget.spent()
    for method in (budget.spend, budget.check, budget.can_afford, budget.epsilon_after):
        with pytest.raises(error):
            method(history)
        assert budget.ledger == before and budget.spent() == spent


def test_a_bad_count_argument_changes_nothing():
    budget = PrivacyBudget(epsilon=5.0, delta=1e-5)
    for count, error in [(0, ValueError), (2.5, TypeError), (True, TypeError), ("2", TypeError)]:
        with pytest.raises(error, match="count"):
            budget.spend(GaussianEvent(5.0), count=count)
    assert budget.ledger == []


def test_check_raises_what_spend_would_and_records_nothing():
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5, accountant="sequential")
    assert budget.check(LaplaceEvent(0.4), count=2) == pytest.approx(0.8)
    assert budget.ledger == []
    budget.spend(LaplaceEvent(0.5))
    with pytest.raises(BudgetExceededError, match="Nothing was released"):
        budget.check(LaplaceEvent(0.6))
    assert budget.ledger == [(LaplaceEvent(0.5), 1)]


def test_a_budget_is_a_budget_and_other_things_are_not():
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    assert isinstance(budget, Budget) and check_budget(budget) is budget and check_budget(None) is None

    class OwnBudget:                                   # duck typing: spend and can_afford are enough
        def spend(self, history, count=None):
            return 0.0

        def can_afford(self, history, count=None):
            return True

    assert isinstance(OwnBudget(), Budget)
    for bad in ["x", 1.0, 0, True, [budget], PrivacyBudget]:
        with pytest.raises(TypeError, match=r"^privacy_budget must be None or a privacy budget"):
            check_budget(bad, "privacy_budget")
