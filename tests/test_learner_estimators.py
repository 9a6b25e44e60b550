"""The estimators of dpedu.learner_estimators, the comparison of dpedu.research.experiments.learners and
``python -m dpedu tradeoff --learner`` (docs/math.md §25)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import clone

from dpedu import cli, datasets
from dpedu.accountants import account
from dpedu.datasets import make_toy
from dpedu.research.experiments.learners import (
    LEARNER_SPECS,
    LEARNERS,
    calibrate_learner,
    compare_learners,
    prefix_sum_table,
    run_learner,
    with_intercept,
)
from dpedu.learner_estimators import (
    FactorizedNoiseClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
)

ESTIMATORS = [
    OutputPerturbationClassifier(epsilon=1.0, regularization=1e-2),
    ObjectivePerturbationClassifier(epsilon=1.0),
    FactorizedNoiseClassifier(epsilon=1.0, factorization="square_root", epochs=2),
]


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
