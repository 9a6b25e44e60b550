"""Issue 41's training cases: every one refused by name (or answered), table-driven per function."""

from __future__ import annotations

import numpy as np
import pytest

from dpedu.textbook.datasets import make_toy
from dpedu.textbook.models import LogisticModel
from dpedu.textbook.training import dp_sgd, gradient_noise_multiplier, plan_dp_sgd, run_dp_sgd, training_data

X, Y = make_toy(n=40, d=3, rng=0)
GOOD_PLAN = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.2, steps=5)


@pytest.mark.parametrize("value, error", [(0.0, ValueError), (-1.0, ValueError), (np.nan, ValueError),
                                          (-np.inf, ValueError), (np.inf, ValueError), ("1", TypeError),
                                          (True, TypeError), (None, None), (1j, TypeError), ([1.0], TypeError)])
def test_training_data_names_clip_inputs_to(value, error):
    if error is None:                                  # None: no clipping, the data as given
        np.testing.assert_array_equal(training_data(X, Y, clip_inputs_to=value).X, X)
        return
    with pytest.raises(error, match=r"\bclip_inputs_to\b"):
        training_data(X, Y, clip_inputs_to=value)


@pytest.mark.parametrize("settings, name", [
    (dict(noise_multiplier=1e-300, target_quantile=0.5), "noise_multiplier"),     # was ZeroDivisionError
    (dict(noise_multiplier=1e-300), "noise_multiplier"),
    (dict(sampling_rate=1e-300, epochs=1, steps=None), "epochs"),                 # 1e300 steps
    (dict(sampling="shuffle", sampling_rate=2.0), "sampling_rate"),               # a batch larger than n
])
def test_plan_refuses_by_name(settings, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        plan_dp_sgd(40, **{**GOOD_PLAN, **settings})


@pytest.mark.parametrize("args, name", [((1e-300, 2.0), "noise_multiplier"), ((1.0, 0.4), "count_noise_std"),
                                        ((-1.0, 2.0), "noise_multiplier"), ((1.0, np.nan), "count_noise_std")])
def test_gradient_noise_multiplier_refuses_by_name(args, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        gradient_noise_multiplier(*args)


@pytest.mark.parametrize("model, error", [(LogisticModel, TypeError), ("logistic", TypeError),
                                          (LogisticModel(2), ValueError)])
def test_dp_sgd_names_model(model, error):
    with pytest.raises(error, match=r"\bmodel\b"):
        dp_sgd(X, Y, model=model, rng=0, **GOOD_PLAN)


def test_a_refused_run_draws_nothing_and_spends_nothing():
    from dpedu.accountants.budget import PrivacyBudget
    rng, budget = np.random.default_rng(5), PrivacyBudget(10.0, 1e-3)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=r"\btheta0\b"):
        run_dp_sgd(X, Y, plan_dp_sgd(40, **GOOD_PLAN), theta0=np.full(3, np.nan), budget=budget, rng=rng)
    assert rng.bit_generator.state == state and budget.ledger == [] and budget.spent() == 0.0
