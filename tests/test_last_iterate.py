"""The linear-loss last iterate: its event, its exact curve, and the PLD accountant against it (docs/math.md §28.1-28.3).

The reference (:mod:`dpedu.accountants.last_iterate`) is checked against an independent numerical integration of
``(P - e^eps Q)_+`` (scipy's ``quad``); the PLD accountant must lie within 0.1 % above the reference and its optimistic
estimate below it. Checkpoints from the issue (z = 1, q = 0.01, delta = 1e-5): 0.41 after 100 steps, 1.28 after 1000,
where composition gives 0.72 and 1.83.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpedu.accountants import (ACCOUNTANT_NAMES, GaussianEvent, LinearLastIterateEvent, SubsampledGaussianEvent,
                               UnsupportedEventError, account, make_accountant)
from dpedu.accountants.last_iterate import linear_last_iterate_delta, linear_last_iterate_epsilon
from dpedu.accountants.pld.last_iterate import binomial_window, last_iterate_loss_model
from dpedu.ground.events_last_iterate import LAST_ITERATE_CAVEAT, MAX_LAST_ITERATE_STEPS

DELTA = 1e-5
SETTINGS = [(1.0, 0.01, 100), (1.0, 0.01, 1000), (0.8, 0.05, 300), (2.0, 0.002, 5000), (0.5, 0.001, 1000)]


def _integrated_delta(epsilon, z, q, T, direction):
    """``int (P - e^eps Q)_+`` by adaptive quadrature on the densities themselves (no loss function, no crossing)."""
    sigma = z * math.sqrt(T)
    k = np.arange(T + 1)
    b = stats.binom.pmf(k, T, q)

    def mixture(x):
        return float(np.sum(b * stats.norm.pdf(x, loc=k, scale=sigma)))

    def gaussian(x):
        return float(stats.norm.pdf(x, scale=sigma))

    first, second = (mixture, gaussian) if direction == "remove" else (gaussian, mixture)
    edges = np.linspace(-12 * sigma, T * q + 12 * sigma + 12 * math.sqrt(T * q), 400)
    return sum(integrate.quad(lambda x: max(first(x) - math.exp(epsilon) * second(x), 0.0), a, b_, epsabs=1e-14,
                              epsrel=1e-10, limit=200)[0] for a, b_ in zip(edges[:-1], edges[1:]))


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("epsilon", [0.2, 0.6])
def test_reference_matches_an_independent_integration(direction, epsilon):
    z, q, T = 1.0, 0.05, 40
    exact = linear_last_iterate_delta(epsilon, noise_multiplier=z, sampling_rate=q, steps=T, direction=direction)
    assert exact > 1e-4
    assert exact == pytest.approx(_integrated_delta(epsilon, z, q, T, direction), rel=1e-6)


def test_checkpoints_of_the_issue():
    li = [linear_last_iterate_epsilon(DELTA, noise_multiplier=1.0, sampling_rate=0.01, steps=T) for T in (100, 1000)]
    comp = [account([(SubsampledGaussianEvent(1.0, 0.01), T)], "pld", delta=DELTA).epsilon for T in (100, 1000)]
    assert [round(v, 2) for v in li] == [0.41, 1.28]
    assert [round(v, 2) for v in comp] == [0.72, 1.83]


@pytest.mark.parametrize("z, q, T", SETTINGS)
def test_pld_is_within_a_tenth_of_a_percent_above_the_exact_value(z, q, T):
    exact = linear_last_iterate_epsilon(DELTA, noise_multiplier=z, sampling_rate=q, steps=T)
    low, high = make_accountant("pld").compose(LinearLastIterateEvent(z, q, T)).epsilon_bracket(DELTA)
    assert low <= exact <= high <= exact * 1.001


@pytest.mark.parametrize("z, q, T", SETTINGS[:3])
def test_the_last_iterate_never_exceeds_composition(z, q, T):
    """theta_T is a function of the trajectory: post-processing of the T composed steps."""
    last = linear_last_iterate_epsilon(DELTA, noise_multiplier=z, sampling_rate=q, steps=T)
    assert last <= account([(SubsampledGaussianEvent(z, q), T)], "pld", delta=DELTA).epsilon


def test_both_directions_are_taken_and_add_can_vanish():
    args = dict(noise_multiplier=1.0, sampling_rate=0.01, steps=100)
    remove = linear_last_iterate_delta(0.5, direction="remove", **args)
    add = linear_last_iterate_delta(0.5, direction="add", **args)
    assert linear_last_iterate_delta(0.5, **args) == max(remove, add) and remove != add
    # the add loss is at most -T ln(1 - q) = 1.005: beyond it that direction has delta exactly 0
    assert linear_last_iterate_delta(1.01, direction="add", **args) == 0.0


def test_full_batch_is_the_gaussian_and_every_accountant_takes_it():
    event = LinearLastIterateEvent(2.0, 1.0, 100)
    assert event.gaussian_equivalent == GaussianEvent(0.2)
    for name in ACCOUNTANT_NAMES:
        result = account([(event, 1)], name, delta=DELTA)
        assert result.epsilon == account([(GaussianEvent(0.2), 1)], name, delta=DELTA).epsilon
    exact = linear_last_iterate_epsilon(DELTA, noise_multiplier=2.0, sampling_rate=1.0, steps=100)
    assert exact == pytest.approx(account([(GaussianEvent(2.0), 100)], "pld", delta=DELTA).epsilon, rel=1e-9)


@pytest.mark.parametrize("name", [n for n in ACCOUNTANT_NAMES if n != "pld"])
def test_other_accountants_refuse_it_by_name(name):
    acc = make_accountant(name)
    with pytest.raises(UnsupportedEventError, match="only the 'pld' accountant"):
        acc.compose(LinearLastIterateEvent(1.0, 0.01, 100))
    assert acc.ledger == []


def test_pld_refuses_replace_one_and_labels_the_heuristic():
    with pytest.raises(UnsupportedEventError, match="replace-one"):
        make_accountant("pld").compose(LinearLastIterateEvent(1.0, 0.01, 100, relation="replace_one"))
    result = account([(LinearLastIterateEvent(1.0, 0.01, 100), 1)], "pld", delta=DELTA)
    assert result.notes == (LAST_ITERATE_CAVEAT,) and "heuristic" in result.note and "exact for linear" in result.note
    assert account([(SubsampledGaussianEvent(1.0, 0.01), 100)], "pld", delta=DELTA).notes == ()


def test_loss_model_is_consistent():
    event = LinearLastIterateEvent(1.0, 0.02, 200)
    for direction in ("remove", "add"):
        model = last_iterate_loss_model(event, direction, 1e-15)
        x = np.linspace(model.x_low, model.x_high, 50)
        losses = model.loss(x)
        assert np.all(np.diff(losses) > 0)
        assert np.allclose(model.preimage(losses), x, atol=1e-8)
        p, q = model.interval_masses(x)
        # the P-mass and the Q-mass of a bin are tied by the loss: e^(min loss) Q <= P <= e^(max loss) Q
        assert np.all(p <= np.exp(losses[1:]) * q * (1 + 1e-9)) and np.all(p >= np.exp(losses[:-1]) * q * (1 - 1e-9))
    k, _, dropped = binomial_window(1000, 0.01, 1e-19)
    assert k[0] == 0 and k[-1] < 60 and 0 < dropped <= 2e-19


@pytest.mark.parametrize("make, name", [
    (lambda: LinearLastIterateEvent(1.0, 0.01, 0), "steps"),
    (lambda: LinearLastIterateEvent(1.0, 0.01, 2.5), "steps"),
    (lambda: LinearLastIterateEvent(1.0, 0.01, True), "steps"),
    (lambda: LinearLastIterateEvent(1.0, 0.01, MAX_LAST_ITERATE_STEPS + 1), "steps"),
    (lambda: LinearLastIterateEvent(-1.0, 0.01, 10), "noise_multiplier"),
    (lambda: LinearLastIterateEvent(1.0, 0.0, 10), "sampling_rate"),
    (lambda: LinearLastIterateEvent(1.0, 0.01, 10, relation="swap"), "relation"),
    (lambda: linear_last_iterate_delta(0.0, noise_multiplier=1.0, sampling_rate=0.1, steps=5), "epsilon"),
    (lambda: linear_last_iterate_epsilon(1.5, noise_multiplier=1.0, sampling_rate=0.1, steps=5), "delta"),
    (lambda: linear_last_iterate_epsilon(1e-5, noise_multiplier=1.0, sampling_rate=0.1, steps=5, direction="up"),
     "direction"),
])
def test_bad_input_is_refused_by_name(make, name):
    with pytest.raises((TypeError, ValueError), match=name):
        make()
