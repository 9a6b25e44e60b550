"""Output and objective perturbation, matrix-factorisation noise and its accounting (docs/math.md §25)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import benchmark_module
from scipy.optimize import minimize

from dpedu.accountants import ACCOUNTANT_NAMES, UnsupportedEventError, account, make_accountant
from dpedu.textbook.datasets import make_toy
from dpedu.ground.events import GaussianEvent, add_remove_equivalent
from dpedu.textbook.learners import (
    minimise_regularised_logistic,
    objective_perturbation,
    objective_perturbation_regularization,
    output_perturbation,
    output_perturbation_sensitivity,
)
from dpedu.textbook.learners.factorization import (
    FactorizedGaussianEvent,
    closed_form_error,
    cyclic_participations,
    make_factorization,
    prefix_sum_error,
    prefix_sum_matrix,
    sensitivity,
)
from dpedu.textbook.learners.ftrl import factorized_gradient_descent
from dpedu.textbook.models.logistic import accuracy, loss


@pytest.fixture(scope="module")
def data():
    X, y = make_toy(n=400, d=4, rng=3)
    return X / np.linalg.norm(X, axis=1).max(), y


# --- the convex learners ---------------------------------------------------------------------------


@pytest.mark.parametrize("lam", [1e-3, 0.1])
def test_minimiser_matches_scipy(data, lam):
    X, y = data
    theta, g = minimise_regularised_logistic(X, y, lam, tolerance=1e-10)
    reference = minimize(lambda t: loss(t, X, y) + 0.5 * lam * t @ t, np.zeros(X.shape[1]), method="BFGS",
                         options={"gtol": 1e-10}).x
    assert g <= 1e-10
    np.testing.assert_allclose(theta, reference, atol=1e-5)


def test_replace_one_moves_the_minimiser_by_at_most_the_sensitivity(data):
    X, y = data
    lam, n = 1.0, len(X)                              # the regulariser dominates the curvature
    bound = output_perturbation_sensitivity(n, lam, 1.0, "replace_one")
    theta, _ = minimise_regularised_logistic(X, y, lam, tolerance=1e-12)
    moves = []
    for i in range(0, n, 40):                         # replace record i by a far, mislabelled point
        X2, y2 = X.copy(), y.copy()
        X2[i] = -X[i] / np.linalg.norm(X[i])
        y2[i] = -y[i]
        moves.append(np.linalg.norm(minimise_regularised_logistic(X2, y2, lam, tolerance=1e-12)[0] - theta))
    assert max(moves) <= bound
    assert max(moves) > 0.1 * bound                    # the gradient at theta ~ 0 is |x|/2, not |x|


def test_output_perturbation_noise_has_the_stated_scale(data):
    X, y = data
    draws = np.array([output_perturbation(X, y, regularization=0.01, row_bound=1.0, noise_multiplier=2.0,
                                          tolerance=1e-9, rng=seed).theta for seed in range(300)])
    r = output_perturbation(X, y, regularization=0.01, row_bound=1.0, noise_multiplier=2.0, tolerance=1e-9, rng=0)
    assert r.noise_std == pytest.approx(2.0 * (1.0 / (len(X) * 0.01) + 2e-9 / 0.01))
    assert np.std(draws - r.minimiser, axis=0).mean() == pytest.approx(r.noise_std, rel=0.1)


@pytest.mark.parametrize("relation", ["zero_out", "replace_one"])
def test_output_perturbation_epsilon_is_accounted(data, relation):
    X, y = data
    r = output_perturbation(X, y, regularization=0.01, row_bound=1.0, epsilon=0.7, delta=1e-5, relation=relation,
                            rng=0)
    assert account(r.ledger, "pld", delta=1e-5).epsilon == pytest.approx(0.7, rel=2e-3)
    assert r.sensitivity == pytest.approx(output_perturbation_sensitivity(len(X), 0.01, 1.0, relation, 1e-8))


def test_objective_perturbation_trains_and_is_accounted(data):
    X, y = data
    r = objective_perturbation(X, y, epsilon=2.0, delta=1e-5, row_bound=1.0, rng=0)
    assert account(r.ledger, "sequential", delta=1e-5).epsilon <= 2.0 + 1e-9
    assert accuracy(r.theta, X, y) > 0.7


@pytest.mark.parametrize("kwargs, match", [
    ({"loss": "hinge"}, "smoothness"),
    ({"loss": "squared"}, "Lipschitz"),
    ({"loss": "cubic"}, "loss must be one of"),
    ({"regularization": 1e-6}, "regularization must be at least"),
    ({"row_bound": 0.5}, "row_bound"),
    ({"relation": "swap"}, "relation"),
    ({"output_share": 1.0}, "output_share"),
])
def test_objective_perturbation_refuses_by_name(data, kwargs, match):
    X, y = data
    arguments = dict(epsilon=1.0, delta=1e-5, row_bound=1.0, rng=0) | kwargs
    with pytest.raises(ValueError, match=match):
        objective_perturbation(X, y, **arguments)


def test_objective_perturbation_regularizer_is_two_beta_over_epsilon():
    assert objective_perturbation_regularization(0.5, 2.0) == pytest.approx(2 * 0.25 * 4 / 0.5)


def test_output_perturbation_refuses_by_name(data):
    X, y = data
    with pytest.raises(ValueError, match="exactly one of noise_multiplier and epsilon"):
        output_perturbation(X, y, regularization=0.1, row_bound=1.0, noise_multiplier=1.0, epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="regularization"):
        output_perturbation(X, y, regularization=-1.0, row_bound=1.0, noise_multiplier=1.0)
    with pytest.raises(RuntimeError, match="max_iterations"):
        minimise_regularised_logistic(X, y, 0.1, tolerance=1e-300, max_iterations=2)


# --- factorisations --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["identity", "tree", "tree_efficient", "square_root", "banded"])
@pytest.mark.parametrize("n", [1, 5, 16, 37])
def test_every_factorization_reproduces_the_prefix_sums(kind, n):
    f = make_factorization(kind, n)
    np.testing.assert_allclose(f.B @ f.C, prefix_sum_matrix(n), atol=1e-10)


@pytest.mark.parametrize("kind", ["identity", "tree", "square_root"])
@pytest.mark.parametrize("n", [16, 256, 1024])
def test_errors_match_the_closed_forms(kind, n):
    f = make_factorization(kind, n)
    sens2, total = closed_form_error(kind, n)
    assert sensitivity(f.C) ** 2 == pytest.approx(sens2, rel=1e-12)
    assert prefix_sum_error(f) == pytest.approx(total, rel=1e-10)


def test_efficient_tree_beats_the_naive_one_and_square_root_beats_both():
    errors = {kind: prefix_sum_error(make_factorization(kind, 256)) for kind in
              ("identity", "tree", "tree_efficient", "square_root")}
    assert errors["square_root"] < errors["tree_efficient"] < errors["tree"] < errors["identity"]


def test_multi_epoch_sensitivity_is_the_worst_pattern():
    f = make_factorization("square_root", 12)
    patterns = cyclic_participations(12, 4)
    brute = max(np.linalg.norm(f.C[:, p].sum(axis=1)) for p in patterns)   # all gradients equal: C^T C >= 0
    assert sensitivity(f.C, patterns) == pytest.approx(brute)
    banded = make_factorization("banded", 12, bands=4)
    assert sensitivity(banded.C, patterns) == pytest.approx(math.sqrt(3) * sensitivity(banded.C))


# --- the event and its accounting ------------------------------------------------------------------


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
def test_every_accountant_with_a_gaussian_theorem_reports_the_event(name):
    event = FactorizedGaussianEvent(6.0, 2.0)
    assert add_remove_equivalent(event) == GaussianEvent(3.0)
    direct = account([(GaussianEvent(3.0), 1)], name, delta=1e-5).epsilon
    assert account([(event, 1)], name, delta=1e-5).epsilon == pytest.approx(direct, rel=1e-12)


def test_replace_one_doubles_the_sensitivity():
    event = FactorizedGaussianEvent(6.0, 2.0, relation="replace_one")
    assert add_remove_equivalent(event) == GaussianEvent(1.5)


def test_sampling_is_refused_by_name():
    with pytest.raises(UnsupportedEventError, match="amplification by sampling"):
        make_accountant("rdp").compose(FactorizedGaussianEvent(6.0, 2.0, sampling_rate=0.1))
    with pytest.raises(ValueError, match="sensitivity"):
        FactorizedGaussianEvent(1.0, 0.0)


def test_tree_aggregation_matches_dp_accounting():
    # the rows benchmarks/bench_learners.py prints: dpedu's RDP of the tree equals dp_accounting's
    # SingleEpochTreeAggregationDpEvent under REPLACE_SPECIAL (a record's contribution replaced by zero is
    # add/remove here: one leaf moves by C), and dpedu's PLD is below both
    pytest.importorskip("dp_accounting")
    with benchmark_module("bench_learners") as bench:
        assert len(bench.TREE_SETTINGS) == 4
        for z, steps in bench.TREE_SETTINGS:
            ours, pld, theirs = bench.tree_aggregation_epsilons(z, steps, 1e-5)
            assert ours == pytest.approx(theirs, rel=1e-6)
            assert pld < ours


# --- training on noisy prefix sums -----------------------------------------------------------------


def test_factorized_training_learns_and_reports_its_ledger():
    X, y = make_toy(n=2000, d=3, rng=1)
    r = factorized_gradient_descent(X, y, kind="tree_efficient", noise_multiplier=2.0, clip_norm=1.0, batches=20,
                                    epochs=3, learning_rate=0.5, rng=0)
    event = r.ledger[0][0]
    assert event.sensitivity == pytest.approx(r.details.sensitivity) and r.details.steps == 60
    assert accuracy(r.theta, X, y) > 0.8


def test_factorized_training_is_reproducible_and_refuses_by_name():
    X, y = make_toy(n=300, d=2, rng=1)
    kwargs = dict(kind="square_root", noise_multiplier=1.0, clip_norm=1.0, batches=5, epochs=2)
    a, b = (factorized_gradient_descent(X, y, **kwargs, rng=7).theta for _ in range(2))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="kind must be one of"):
        factorized_gradient_descent(X, y, **(kwargs | {"kind": "svd"}))
    with pytest.raises(ValueError, match="noise_multiplier"):
        factorized_gradient_descent(X, y, **(kwargs | {"noise_multiplier": 0.0}))
    with pytest.raises(ValueError, match="batches"):
        factorized_gradient_descent(X, y, **(kwargs | {"batches": 301}))
