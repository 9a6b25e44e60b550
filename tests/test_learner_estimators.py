"""The estimators of dpedu.lab.learner_estimators, the comparison of dpedu.lab.experiments.learners and
``python -m dpedu tradeoff --learner`` (docs/math.md §25)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpedu import cli, datasets
from dpedu.accountants import account
from dpedu.textbook.datasets import make_toy
from dpedu.lab.experiments.learners import (
    LEARNER_SPECS,
    LEARNERS,
    calibrate_learner,
    compare_learners,
    prefix_sum_table,
    run_learner,
    with_intercept,
)
from dpedu.lab.estimator import DPLogisticRegression
from dpedu.lab.learner_estimators import (
    FactorizedNoiseClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    spent_epsilon,
)

ESTIMATORS = [
    OutputPerturbationClassifier(epsilon=1.0, regularization=1e-2),
    ObjectivePerturbationClassifier(epsilon=1.0),
    FactorizedNoiseClassifier(epsilon=1.0, factorization="square_root", epochs=2),
]


# --- scikit-learn's contract ------------------------------------------------------------------------------------
# Every one of scikit-learn's estimator checks (legacy ones included) runs on each classifier at a realistic budget,
# epsilon = 1. What makes a private, randomised estimator pass them is its configuration, not a skip list:
# * random_state is fixed, so the checks that fit twice and compare (idempotence, subset invariance, pickling,
#   clone) see the same noise; a private estimator without a seed differs between fits by design;
# * FactorizedNoiseClassifier takes batches=5: the checks fit data sets of 10 rows, and a run with more fixed
#   batches than rows is refused (by name: the refusal names n_samples, which check_fit2d_1sample accepts).
# No check is expected to fail; xfail_strict makes any entry added here fail the day its check passes, so the list
# stays minimal. (scikit-learn itself skips its array-API check without SCIPY_ARRAY_API and its pandas check
# without pandas; DPLogisticRegression's run of the same checks is in tests/test_estimator.py.)
EXPECTED_FAILED_CHECKS = {}
CHECKED = [
    OutputPerturbationClassifier(epsilon=1.0, regularization=1e-2, random_state=0),
    ObjectivePerturbationClassifier(epsilon=1.0, random_state=0),
    FactorizedNoiseClassifier(epsilon=1.0, batches=5, random_state=0),
]


@parametrize_with_checks(CHECKED, expected_failed_checks=lambda e: EXPECTED_FAILED_CHECKS.get(type(e).__name__, {}),
                         xfail_strict=True)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


ALL_FOUR = ESTIMATORS + [DPLogisticRegression(epsilon=1.0, sampling_rate=0.1, epochs=2)]


@pytest.mark.parametrize("estimator", ALL_FOUR, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("method", ["predict", "predict_proba", "decision_function"])
def test_prediction_before_fit_and_after_clone_is_not_fitted_error(toy, estimator, method):
    X, y = toy
    with pytest.raises(NotFittedError):
        getattr(clone(estimator), method)(X)
    fitted = clone(estimator).set_params(random_state=0).fit(X, y)
    with pytest.raises(NotFittedError):
        getattr(clone(fitted), method)(X)


def _with_nan(X):
    X = X.copy()
    X[3, 1] = np.nan
    return X


@pytest.mark.parametrize("estimator", ALL_FOUR, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("make_X, kind, match", [
    (lambda X: X + 1j, ValueError, r"^X must be real"),
    (_with_nan, ValueError, r"\bX\b contains NaN"),
    (lambda X: X[:, :2], ValueError, r"^X has 2 features"),
    (lambda X: X[0], ValueError, r"^X must be a 2-D array"),
    (lambda X: 2e100 * X, ValueError, r"^X has a value of magnitude above MAX_ABS_FEATURE"),
], ids=["complex", "nan", "features", "1-D", "magnitude"])
def test_prediction_refuses_bad_X_by_name(toy, estimator, make_X, kind, match):
    X, y = toy
    clf = clone(estimator).set_params(random_state=0).fit(X, y)
    with pytest.raises(kind, match=match):
        clf.predict(make_X(X))


@pytest.mark.parametrize("estimator", ALL_FOUR, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("params, labels, kind, match", [
    ({}, "one", ValueError, r"^y must hold exactly 2 classes .*got 1 class$"),
    ({}, "three", ValueError, r"^Only binary classification is supported"),
    ({"random_state": "x"}, None, TypeError, r"^random_state must be None"),
    ({"random_state": -1}, None, ValueError, r"^random_state seed must be"),
    ({"random_state": 1.5}, None, TypeError, r"^random_state must be None"),
], ids=["one-class", "three-classes", "rs-str", "rs-negative", "rs-float"])
def test_fit_refuses_by_name_and_changes_nothing(toy, estimator, params, labels, kind, match):
    X, y = toy
    clf = clone(estimator).set_params(random_state=0).fit(X, y)
    before = clf.predict_proba(X)
    y_bad = {"one": np.full(len(y), "yes"), "three": np.resize(["a", "b", "c"], len(y)), None: y}[labels]
    with pytest.raises(kind, match=match):
        clf.set_params(**params).fit(X, y_bad)
    np.testing.assert_array_equal(clf.predict_proba(X), before)


@pytest.mark.parametrize("estimator, params, kind, match", [
    (ESTIMATORS[0], {"row_bound": 1e300}, ValueError, r"^row_bound must be in \(0, 1e\+100\]"),
    (ESTIMATORS[1], {"row_bound": 1e300}, ValueError, r"^row_bound must be in \(0, 1e\+100\]"),
    (ESTIMATORS[2], {"row_bound": 1e300}, ValueError, r"^row_bound must be in \(0, 1e\+100\]"),
    (ESTIMATORS[1], {"row_bound": np.nan}, ValueError, r"^row_bound must be a number"),
    (ESTIMATORS[2], {"row_bound": "1"}, TypeError, r"^row_bound must be a real number"),
    (ESTIMATORS[2], {"epochs": 10 ** 6}, ValueError, r"^epochs=1,000,000 with batches=20 means 20,000,000 steps; "
                                                     r"at most MAX_STEPS"),
    (ESTIMATORS[2], {"epochs": 300, "batches": 20}, ValueError, r"^epochs=300 with batches=20 means 6,000 steps, "
                                                                r"more than the 'square_root' factorization allows"),
    (ESTIMATORS[2], {"epochs": 2.0}, TypeError, r"^epochs must be an integer"),
    (ESTIMATORS[2], {"batches": 2000}, ValueError, r"^batches must be at most the number of samples"),
], ids=lambda value: str(value)[:40])
def test_learner_settings_are_refused_by_name(toy, estimator, params, kind, match):
    X, y = toy
    clf = clone(estimator).set_params(random_state=0).fit(X, y)
    before = clf.predict_proba(X)
    with pytest.raises(kind, match=match):
        clf.set_params(**params).fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), before)     # predictions use the fitted row_bound_


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-9), (20.0, 1e-9), (1.0, 1e-5), (0.1, 1e-5), (5.0, 0.01)])
def test_objective_perturbation_never_reports_more_than_its_budget(toy, epsilon, delta):
    # the run is an (0.99 eps, 0.99 delta) release and a Gaussian calibrated to (0.01 eps, 0.01 delta): (eps, delta)
    # by basic composition; the PLD's pessimistic grid puts it a little above eps at small delta (1.000325 at
    # (1, 1e-9)), and epsilon_ is the smaller of the two valid bounds
    X, y = toy
    clf = ObjectivePerturbationClassifier(epsilon=epsilon, delta=delta, random_state=0).fit(X, y)
    pld = account(clf.ledger_, "pld", delta=delta).epsilon
    basic = account(clf.ledger_, "sequential", delta=delta).epsilon
    assert clf.epsilon_ == min(pld, basic) == spent_epsilon(clf.ledger_, delta)
    assert epsilon * (1 - 1e-9) <= basic <= epsilon and clf.epsilon_ <= epsilon
    statement = clf.privacy_statement_                         # the statement reports the same, smaller bound
    assert statement.epsilon == clf.epsilon_ and statement.epsilon_bracket[1] <= epsilon
    if (epsilon, delta) == (1.0, 1e-9):
        assert pld == pytest.approx(1.000325, abs=1e-6)          # the overshoot this guards against
        assert "basic composition gives the smaller valid bound" in str(statement)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_every_classifier_reports_at_most_its_budget(toy, estimator):
    X, y = toy
    for epsilon in (0.3, 3.0):
        clf = clone(estimator).set_params(epsilon=epsilon, delta=1e-8, random_state=1).fit(X, y)
        assert 0.95 * epsilon < clf.epsilon_ <= epsilon


@pytest.fixture(scope="module")
def toy():
    X, y = make_toy(n=1500, d=3, rng=2)
    return X, np.where(y > 0, "yes", "no")


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_estimators_fit_predict_and_state_their_privacy(toy, estimator):
    X, y = toy
    clf = clone(estimator).set_params(random_state=0).fit(X, y)
    assert set(clf.predict(X)) <= {"no", "yes"} and clf.score(X, y) > 0.8
    assert clf.epsilon_ <= 1.0 + 1e-9 and clf.epsilon_ > 0.95
    statement = clf.privacy_statement_
    assert statement.epsilon == pytest.approx(clf.epsilon_, rel=1e-3) and statement.n == len(X)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    same = clone(estimator).set_params(random_state=0).fit(X, y)
    np.testing.assert_array_equal(same.coef_, clf.coef_)


@pytest.mark.parametrize("estimator, params, match", [
    (ESTIMATORS[0], {"epsilon": -1.0}, "epsilon"),
    (ESTIMATORS[0], {"relation": "swap"}, "relation"),
    (ESTIMATORS[0], {"relation": "add_remove"}, "relation='add_remove' is not covered"),
    (ESTIMATORS[1], {"regularization": 1e-9}, "regularization must be at least"),
    (ESTIMATORS[2], {"factorization": "svd"}, "factorization must be one of"),
    (ESTIMATORS[2], {"batches": 10 ** 6}, "batches"),
    (ESTIMATORS[2], {"row_bound": 0.0}, "row_bound"),
], ids=lambda value: str(value)[:30])
def test_a_refused_fit_changes_nothing(toy, estimator, params, match):
    X, y = toy
    clf = clone(estimator).set_params(random_state=0).fit(X, y)
    before = clf.coef_.copy()
    with pytest.raises(ValueError, match=match):
        clf.set_params(**params).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, before)


def test_factorized_classifier_is_exactly_calibrated(toy):
    X, y = toy
    clf = FactorizedNoiseClassifier(epsilon=0.5, factorization="tree", epochs=3, batches=8, random_state=1).fit(X, y)
    assert account(clf.ledger_, "pld", delta=1e-5).epsilon == pytest.approx(0.5, rel=1e-3)
    assert clf.sensitivity_ == pytest.approx(clf.ledger_[0][0].sensitivity)


# --- the comparison --------------------------------------------------------------------------------


@pytest.mark.parametrize("learner", LEARNERS)
def test_calibration_spends_the_target_and_no_more(learner):
    c = calibrate_learner(learner, 1.0, 1e-5, 5000)
    assert 0.98 <= c.epsilon <= 1.0


def test_run_learner_selects_within_the_grid():
    X, y = make_toy(n=1200, d=3, rng=5)
    X = with_intercept(X / np.linalg.norm(X, axis=1).max())
    for learner in ("output_perturbation", "dp_ftrl"):
        run = run_learner(calibrate_learner(learner, 4.0, 1e-5, len(X)), X, y, X, y, rng=0)
        assert 0 <= run.chosen < len(LEARNER_SPECS[learner].grid) and run.test_accuracy > 0.75


def test_compare_learners_shapes_and_refusals():
    X, y = make_toy(n=800, d=3, rng=5)
    X = 3 * X / np.linalg.norm(X, axis=1).max()
    result = compare_learners((X, y, X, y), [2.0], seeds=2, learners=("noisy_gd", "matrix_factorization"), rng=0)
    assert result.accuracies.shape == (2, 1, 2) and result.accuracy_of("noisy_gd").shape == (1, 2)
    assert np.all(result.accounted <= 2.0) and 0.5 < result.non_private <= 1.0
    with pytest.raises(ValueError, match="learners must be one of"):
        compare_learners((X, y, X, y), [1.0], seeds=1, learners=("svm",))
    with pytest.raises(ValueError, match="norm at most"):
        compare_learners((10 * X, y, X, y), [1.0], seeds=1)


def test_prefix_sum_table_matches_its_closed_forms():
    rows = prefix_sum_table(ns=(16, 64), kinds=("identity", "tree", "square_root"))
    assert len(rows) == 6
    for row in rows:
        assert row.total_error == pytest.approx(row.closed_total_error, rel=1e-10)
        assert row.sensitivity_squared == pytest.approx(row.closed_sensitivity_squared, rel=1e-12)


# --- the command ----------------------------------------------------------------------------------


def test_tradeoff_with_a_learner_writes_its_table(capsys, monkeypatch, tmp_path):
    X, y = make_toy(n=600, d=3, rng=4)
    X = 3 * X / np.linalg.norm(X, axis=1).max()
    monkeypatch.setattr(datasets, "load_adult", lambda *args, **kwargs: (X, y, X, y))
    csv = tmp_path / "t.csv"
    argv = ["tradeoff", "--learner", "output_perturbation", "--epsilons", "1,4", "--seeds", "2",
            "--out", str(tmp_path / "t.png"), "--csv", str(csv)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "output perturbation" in out and csv.read_text().count("\n") == 5
    assert (tmp_path / "t.png").stat().st_size > 0


def test_tradeoff_refuses_an_unknown_learner(capsys):
    with pytest.raises(SystemExit):
        cli.main(["tradeoff", "--learner", "svm"])
    assert "--learner" in capsys.readouterr().err
