"""DPLogisticRegression: scikit-learn conventions, calibration, attributes, determinism, budget."""

import math
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpedu import calibrate
from dpedu.accountants import GaussianEvent, SubsampledGaussianEvent, compare, make_accountant
from dpedu.accountants.budget import BudgetExceededError, PrivacyBudget
from dpedu.textbook.datasets import AdultDataError, load_adult, make_toy
from dpedu.lab.estimator import TUNED_DEFAULTS, DPLogisticRegression, NonPrivateWarning, tuned_defaults

# A fixed, fast configuration for scikit-learn's generic checks: small data sets, full batches, modest noise
# (z = 0.5), so every check is deterministic (random_state) and quick. Its epsilon is large, and stated: the
# checks test the API, not privacy (a noise multiplier that costs more than epsilon is refused).
# No check is skipped or expected to fail (the three learner classifiers: tests/test_learner_estimators.py).
CHECK_CONFIG = dict(epsilon=1e6, noise_multiplier=0.5, clip_norm=1.0, sampling_rate=0.5, epochs=50, learning_rate=2.0,
                    random_state=0)


@parametrize_with_checks([DPLogisticRegression(**CHECK_CONFIG)])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def toy():
    return make_toy(n=1000, d=3, rng=1)


def _no_penalty():
    major, minor = (int(v) for v in sklearn.__version__.split(".")[:2])
    return {"C": np.inf} if (major, minor) >= (1, 8) else {"penalty": None}


def test_fitted_attributes_and_pro_active_calibration(toy):
    X, y = toy
    clf = DPLogisticRegression(epsilon=0.5, delta=1e-5, sampling_rate=0.1, epochs=3, random_state=0).fit(X, y)
    z = calibrate.noise_multiplier(target_epsilon=0.5, target_delta=1e-5, sampling_rate=0.1, steps=30)
    assert clf.noise_multiplier_ == z and clf.steps_ == 30 and clf.sampling_rate_ == 0.1
    assert clf.ledger_ == [(SubsampledGaussianEvent(z, 0.1), 30)]
    expected = make_accountant("rdp").compose(SubsampledGaussianEvent(z, 0.1), 30).get_epsilon(1e-5)
    assert clf.epsilon_ == expected
    assert 0.5 * (1 - 1e-2) < clf.epsilon_ <= 0.5          # calibrated: never over, and not wastefully under
    assert clf.coef_.shape == (1, 3) and clf.intercept_.shape == (1,) and clf.n_features_in_ == 3
    np.testing.assert_array_equal(clf.classes_, [-1.0, 1.0])
    assert clf.losses_.shape == (3,)
    assert compare(clf, delta=1e-5, accountants=("rdp",))["rdp"] == clf.epsilon_   # re-account the ledger


def test_full_batch_ledger_is_gaussian(toy):
    X, y = toy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = DPLogisticRegression(epsilon=1.0, sampling_rate=1.0, epochs=5, accountant="zcdp", random_state=0).fit(X, y)
    assert clf.ledger_ == [(GaussianEvent(clf.noise_multiplier_), 5)] and clf.epsilon_ <= 1.0


def test_other_accountant_is_used_for_calibration_and_report(toy):
    X, y = toy
    rdp = DPLogisticRegression(epsilon=1.0, sampling_rate=0.1, epochs=2, random_state=0).fit(X, y)
    pld = DPLogisticRegression(epsilon=1.0, sampling_rate=0.1, epochs=2, accountant="pld", random_state=0).fit(X, y)
    assert pld.noise_multiplier_ < rdp.noise_multiplier_       # PLD is tighter: less noise for the same epsilon
    assert pld.epsilon_ <= 1.0


def test_same_random_state_same_model(toy):
    X, y = toy
    a = DPLogisticRegression(epochs=2, random_state=42).fit(X, y)
    b = DPLogisticRegression(epochs=2, random_state=42).fit(X, y)
    c = DPLogisticRegression(epochs=2, random_state=43).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert not np.array_equal(a.coef_, c.coef_)


def test_any_two_labels(toy):
    X, y = toy
    labels = np.where(y > 0, "yes", "no")
    clf = DPLogisticRegression(epochs=4, random_state=0).fit(X, labels)
    np.testing.assert_array_equal(clf.classes_, ["no", "yes"])
    assert set(clf.predict(X)) <= {"no", "yes"}
    assert clf.score(X, labels) > 0.8
    # the same data with numeric labels {-1, +1} gives the same model (classes_[1] is the positive class)
    numeric = DPLogisticRegression(epochs=4, random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, numeric.coef_)


def test_probabilities_and_scores_agree(toy):
    X, y = toy
    clf = DPLogisticRegression(epochs=2, random_state=0).fit(X, y)
    scores = clf.decision_function(X)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-scores)))
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(proba), rtol=1e-6)   # log(p) loses digits near 1
    from scipy.special import log_expit
    exact = np.column_stack([log_expit(-scores), log_expit(scores)])                 # scipy's stable log-sigmoid
    np.testing.assert_allclose(clf.predict_log_proba(X), exact, rtol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), np.where(scores >= 0, 1.0, -1.0))
    np.testing.assert_allclose(scores, X @ clf.coef_[0] + clf.intercept_[0])


def test_batch_size_is_an_expected_batch_size(toy):
    X, y = toy
    by_rate = DPLogisticRegression(sampling_rate=0.05, epochs=1, random_state=0).fit(X, y)
    by_size = DPLogisticRegression(batch_size=50, epochs=1, random_state=0).fit(X, y)
    assert by_size.sampling_rate_ == 0.05
    np.testing.assert_array_equal(by_rate.coef_, by_size.coef_)
    assert DPLogisticRegression(epochs=1, random_state=0).fit(X, y).sampling_rate_ == tuned_defaults(1.0).sampling_rate
    with pytest.raises(ValueError, match="at most one of sampling_rate and batch_size"):
        DPLogisticRegression(sampling_rate=0.1, batch_size=10).fit(X, y)
    with pytest.raises(ValueError, match="batch_size"):
        DPLogisticRegression(batch_size=5000).fit(X, y)


def test_without_intercept(toy):
    X, y = toy
    clf = DPLogisticRegression(fit_intercept=False, epochs=2, random_state=0).fit(X, y)
    assert clf.intercept_.tolist() == [0.0] and clf.coef_.shape == (1, 3)


@pytest.mark.parametrize("params, error", [
    (dict(epsilon=0.0), ValueError),
    (dict(delta=1.0), ValueError),
    (dict(accountant="magic"), ValueError),
    (dict(lr_schedule="cosine"), ValueError),
    (dict(fit_intercept="yes"), TypeError),
    (dict(clip_norm=np.inf), ValueError),          # infinite clip norm with calibrated (positive) noise
    (dict(epochs=0), ValueError),
])
def test_bad_parameters_are_refused_in_fit(toy, params, error):
    X, y = toy
    clf = DPLogisticRegression(**params)               # no logic in __init__: nothing is checked yet
    with pytest.raises(error):
        clf.fit(X, y)


def test_non_private_sanity_setting_says_so(toy):
    X, y = toy
    with pytest.warns(NonPrivateWarning, match="NOT private"):
        clf = DPLogisticRegression(noise_multiplier=0.0, clip_norm=np.inf, sampling_rate=1.0, epochs=50,
                                   random_state=0).fit(X, y)
    assert clf.epsilon_ == math.inf and clf.ledger_ is None


def test_non_private_setting_agrees_with_scikit_learn_on_toy():
    X, y = make_toy(n=3000, d=5, rng=3, signal=4.0)
    X_test, _ = make_toy(n=2000, d=5, rng=4, signal=4.0)
    with pytest.warns(NonPrivateWarning):
        ours = DPLogisticRegression(noise_multiplier=0.0, clip_norm=np.inf, sampling_rate=0.05, epochs=30,
                                    learning_rate=4.0, random_state=0).fit(X, y)
    reference = LogisticRegression(max_iter=2000, **_no_penalty()).fit(X, y)
    assert np.mean(ours.predict(X_test) == reference.predict(X_test)) >= 0.98


@pytest.mark.slow                                        # ~10 s: trains on the full Adult set
def test_non_private_setting_agrees_with_scikit_learn_on_adult():
    try:
        X_train, y_train, X_test, _ = load_adult(download=False)
    except AdultDataError as exc:
        pytest.skip(f"Adult data not available: {exc}")
    with pytest.warns(NonPrivateWarning):
        ours = DPLogisticRegression(noise_multiplier=0.0, clip_norm=np.inf, sampling_rate=0.01, epochs=50,
                                    learning_rate=8.0, random_state=0).fit(X_train, y_train)
    reference = LogisticRegression(max_iter=5000, **_no_penalty()).fit(X_train, y_train)
    assert np.mean(ours.predict(X_test) == reference.predict(X_test)) >= 0.98


# --- scikit-learn composition --------------------------------------------------------------------

def test_clone_pipeline_and_cross_validation(toy):
    X, y = toy
    clf = DPLogisticRegression(epsilon=2.0, epochs=2, random_state=0)
    copy = clone(clf)
    assert copy.get_params() == clf.get_params() and not hasattr(copy, "coef_")
    pipe = make_pipeline(FunctionTransformer(), DPLogisticRegression(epsilon=2.0, epochs=2, random_state=0)).fit(X, y)
    assert pipe.score(X, y) > 0.8
    scores = cross_val_score(clf, X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.7)


def test_budget_is_charged_and_shared_through_clone_and_cross_validation(toy):
    X, y = toy
    one_run = DPLogisticRegression(epsilon=0.5, epochs=2, random_state=0).fit(X, y).epsilon_
    budget = PrivacyBudget(epsilon=0.9, delta=1e-5)
    clf = DPLogisticRegression(epsilon=0.5, epochs=2, budget=budget, random_state=0)
    assert clone(clf).budget is budget                      # a budget is shared, never copied
    clf.fit(X, y)
    assert budget.spent() == pytest.approx(one_run)
    # Under RDP, k identical runs of epsilon 0.5 cost 0.50, 0.70, 0.86, 0.995 (not 0.5 k): the fit and two
    # folds of cross-validation fit in 0.9, the third fold is refused before it trains.
    with pytest.raises(BudgetExceededError):
        cross_val_score(clf, X, y, cv=3, error_score="raise")
    assert len(budget.ledger) == 3 and budget.spent() <= 0.9
    event, steps = clf.ledger_[0]
    assert budget.spent() == pytest.approx(make_accountant("rdp").compose(event, 3 * steps).get_epsilon(1e-5))


def test_refused_fit_trains_nothing(toy):
    X, y = toy
    budget = PrivacyBudget(epsilon=0.1, delta=1e-5)
    clf = DPLogisticRegression(epsilon=0.5, epochs=2, budget=budget, random_state=0)
    with pytest.raises(BudgetExceededError):
        clf.fit(X, y)
    assert budget.ledger == [] and not hasattr(clf, "coef_")
    with pytest.warns(NonPrivateWarning), pytest.raises(ValueError, match="cannot be charged"):
        DPLogisticRegression(noise_multiplier=0.0, budget=budget).fit(X, y)


@pytest.mark.parametrize("epsilon", [0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 3.0, 10.0])
def test_unset_hyperparameters_take_the_tuned_defaults_for_the_budget(toy, epsilon):
    X, y = toy
    row = min(TUNED_DEFAULTS, key=lambda r: abs(math.log(epsilon / r.epsilon)))     # nearest on a log scale
    assert tuned_defaults(epsilon) == row
    clf = DPLogisticRegression(epsilon=epsilon, epochs=1, random_state=0).fit(X, y)   # epochs given: kept
    assert (clf.sampling_rate_, clf.clip_norm_, clf.learning_rate_, clf.epochs_) == (
        row.sampling_rate, row.clip_norm, row.learning_rate, 1)
    assert clf.get_params()["clip_norm"] is None                                     # the parameter stays unset
    given = DPLogisticRegression(epsilon=epsilon, epochs=1, clip_norm=3.0, learning_rate=0.5, sampling_rate=0.2,
                                 random_state=0).fit(X, y)
    assert (given.sampling_rate_, given.clip_norm_, given.learning_rate_) == (0.2, 3.0, 0.5)


def test_tuned_defaults_refuse_a_bad_epsilon():
    with pytest.raises(ValueError, match="epsilon"):
        tuned_defaults(-1.0)


# --- issue 13: atomic fit, numerics, messages ------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from dpedu.lab.estimator import MAX_ABS_FEATURE  # noqa: E402
from dpedu.ground.validation import MAX_STEPS  # noqa: E402

FAST = dict(epsilon=1.0, sampling_rate=0.2, epochs=1, random_state=0)


def _fitted_state(clf):
    """Every fitted attribute (name ends in "_", not dunder) with a comparable copy of its value."""
    return {name: repr(value) if not isinstance(value, np.ndarray) else (value.dtype, value.shape, value.tolist())
            for name, value in vars(clf).items() if name.endswith("_") and not name.startswith("__")}


def test_refused_refit_with_new_labels_keeps_the_old_model():
    """Reproducer: a refused refit used to leave the new classes_ with the old coefficients."""
    X, y = make_toy(n=200, d=2, rng=0)
    budget = PrivacyBudget(epsilon=1.05, delta=1e-5)
    clf = DPLogisticRegression(**FAST, budget=budget).fit(X, y)
    before, predictions = _fitted_state(clf), clf.predict(X)
    with pytest.raises(BudgetExceededError):
        clf.fit(X, np.where(y > 0, "yes", "no"))
    assert _fitted_state(clf) == before
    np.testing.assert_array_equal(clf.predict(X), predictions)


def test_refused_first_fit_leaves_the_estimator_unfitted():
    """Reproducer: a refused first fit used to set classes_, so predict raised AttributeError: coef_."""
    X, y = make_toy(n=200, d=2, rng=0)
    clf = DPLogisticRegression(**FAST, budget=PrivacyBudget(epsilon=0.1, delta=1e-5))
    with pytest.raises(BudgetExceededError):
        clf.fit(X, y)
    assert _fitted_state(clf) == {}
    with pytest.raises(NotFittedError):
        clf.predict(X)


_X, _Y = make_toy(n=120, d=2, rng=5)
FAILING_FITS = [
    ("X with NaN", {}, lambda: (np.where(_X == _X[3, 1], np.nan, _X), _Y)),
    ("X 3-D", {}, lambda: (_X[None], _Y)),
    ("X complex", {}, lambda: (_X + 1j, _Y)),
    ("X huge", {}, lambda: (_X * 1e300, _Y)),
    ("y three classes", {}, lambda: (_X, np.arange(len(_Y)) % 3)),
    ("y mixed types", {}, lambda: (_X, np.array(["a", 1] * (len(_Y) // 2), dtype=object))),
    ("y wrong length", {}, lambda: (_X, _Y[:-1])),
    ("budget refused", dict(budget=PrivacyBudget(epsilon=0.01, delta=1e-5, accountant="sequential")),
     lambda: (_X, _Y)),
    ("budget not a budget", dict(budget=1.0), lambda: (_X, _Y)),
    ("epsilon bool", dict(epsilon=True), lambda: (_X, _Y)),
    ("epsilon tiny", dict(epsilon=1e-300), lambda: (_X, _Y)),
    ("epochs huge", dict(epochs=1e6), lambda: (_X, _Y)),
    ("delta NaN", dict(delta=math.nan), lambda: (_X, _Y)),
    ("clip_norm str", dict(clip_norm="1"), lambda: (_X, _Y)),
    ("learning_rate 0", dict(learning_rate=0.0), lambda: (_X, _Y)),
    ("noise_multiplier complex", dict(noise_multiplier=1j), lambda: (_X, _Y)),
    ("accountant unknown", dict(accountant="nope"), lambda: (_X, _Y)),
    ("random_state float", dict(random_state=1.5), lambda: (_X, _Y)),
]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first_fitted=st.booleans(), failing=st.sampled_from(FAILING_FITS), seed=st.integers(0, 3))
def test_a_failed_fit_changes_no_fitted_attribute(first_fitted, failing, seed):
    """Property: whatever makes fit fail, every attribute ending in "_" keeps its value (or stays absent)."""
    _, params, data = failing
    clf = DPLogisticRegression(**{**FAST, "random_state": seed})
    if first_fitted:
        clf.fit(_X, np.where(_Y > 0, 7, 3))
    before = _fitted_state(clf)
    clf.set_params(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises((ValueError, TypeError, BudgetExceededError)):
            clf.fit(*data())
    assert _fitted_state(clf) == before


def test_huge_but_finite_X_is_refused_by_name_not_trained_to_nan():
    X, y = make_toy(n=100, d=2, rng=0)
    with pytest.raises(ValueError, match=r"\bX\b.*MAX_ABS_FEATURE"):
        DPLogisticRegression(**FAST).fit(X * 1e307, y)
    clf = DPLogisticRegression(**FAST).fit(X * MAX_ABS_FEATURE / np.max(np.abs(X)), y)   # at the limit: finite
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.intercept_))
    fitted = DPLogisticRegression(**FAST).fit(X, y)
    with pytest.raises(ValueError, match=r"\bX\b.*MAX_ABS_FEATURE.*overflow"):  # no silent classes_[0] or -inf
        fitted.predict(np.full((3, 2), 1.7e308))


def test_tiny_epsilon_is_a_value_error_naming_epsilon():
    X, y = make_toy(n=100, d=2, rng=0)
    with pytest.raises(ValueError, match=r"\bepsilon=1e-300\b"):
        DPLogisticRegression(epsilon=1e-300, epochs=1).fit(X, y)


def test_the_number_of_steps_is_limited_by_name():
    X, y = make_toy(n=100, d=2, rng=0)
    with pytest.raises(ValueError, match=rf"\bepochs\b.*MAX_STEPS = {MAX_STEPS:,}"):
        DPLogisticRegression(epochs=1e6).fit(X, y)
    with pytest.raises(ValueError, match=r"\bepochs\b"):
        DPLogisticRegression(epochs=MAX_STEPS * 0.5 + 1, sampling_rate=0.5).fit(X, y)


def test_a_noise_multiplier_that_overspends_epsilon_is_refused_by_name():
    X, y = make_toy(n=200, d=2, rng=0)
    clf = DPLogisticRegression(epsilon=1.0, noise_multiplier=0.3, sampling_rate=0.2, epochs=2, random_state=0)
    with pytest.raises(ValueError, match=r"noise_multiplier=0.3 and epsilon=1 conflict: this run would cost"):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_") and not hasattr(clf, "epsilon_")   # nothing trained, nothing stored
    with warnings.catch_warnings():
        warnings.simplefilter("error")                               # within epsilon: silent
        ok = DPLogisticRegression(epsilon=100.0, noise_multiplier=2.0, sampling_rate=0.2, epochs=1).fit(X, y)
    assert ok.epsilon_ <= 100.0


@pytest.mark.parametrize("bad, message", [
    (lambda X: X[None], r"X must be a 2-D array.*got 3 dimension"),
    (lambda X: X[:0], r"\bX\b.*0 sample"),
    (lambda X: X + 1j, r"^X must be real, got complex dtype complex128"),
])
def test_predict_messages_name_X(bad, message):
    X, y = make_toy(n=100, d=2, rng=0)
    clf = DPLogisticRegression(**FAST).fit(X, y)
    with pytest.raises(ValueError, match=message) as info:
        clf.predict(bad(X))
    assert "\n" not in str(info.value)                             # the array is not dumped


def test_mixed_label_types_are_named():
    X, _ = make_toy(n=4, d=2, rng=0)
    with pytest.raises(ValueError, match=r"^y must have labels of one type; got int and str$"):
        DPLogisticRegression(**FAST).fit(X, np.array(["a", 1, "a", 1], dtype=object))
    with pytest.raises(ValueError, match="one type"):
        DPLogisticRegression(**FAST).fit(X, ["a", 1, "a", 1])


@pytest.mark.parametrize("budget", ["x", 1.0, 0, object()])
def test_a_budget_that_is_not_a_budget_is_a_type_error_naming_it(budget):
    X, y = make_toy(n=50, d=2, rng=0)
    with pytest.raises(TypeError, match=r"^budget must be None or a privacy budget"):
        DPLogisticRegression(**FAST, budget=budget).fit(X, y)


def test_finite_huge_features_are_refused_by_name_without_a_numpy_warning():
    # +-1.7e308 rows are finite, but scikit-learn's quick finiteness test sums them to inf - inf = nan
    X, y = make_toy(n=100, d=2, rng=0)
    huge = np.array([[1.7e308, 1.7e308], [-1.7e308, -1.7e308]])
    fitted = DPLogisticRegression(**FAST).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for call in (fitted.predict, fitted.predict_proba, fitted.decision_function):
            with pytest.raises(ValueError, match=r"\bX\b.*MAX_ABS_FEATURE"):
                call(huge)
        with pytest.raises(ValueError, match=r"\bX\b.*MAX_ABS_FEATURE"):
            DPLogisticRegression(**FAST).fit(np.vstack([huge] * 5), np.tile([1, -1], 5))


def test_fit_records_the_training_rows_and_which_parameters_came_from_the_tuned_defaults(toy):
    X, y = toy
    clf = DPLogisticRegression(epsilon=1.0, epochs=1, random_state=0).fit(X[:700], y[:700])
    assert clf.n_samples_ == 700
    assert clf.defaults_used_ == ("sampling_rate", "clip_norm", "learning_rate")
    clf = DPLogisticRegression(epsilon=1.0, epochs=1, batch_size=50, clip_norm=1.0, learning_rate=2.0,
                               random_state=0).fit(X, y)
    assert clf.n_samples_ == 1000 and clf.defaults_used_ == ()


@pytest.mark.parametrize("params", [dict(epsilon=0.5, epochs=2), dict(epsilon=2.0, batch_size=40, epochs=1),
                                    dict(epsilon=1.0, epochs=1, sampling="fixed", relation="replace_one"),
                                    dict(epsilon=1.0, epochs=1, target_quantile=0.5, clip_norm=0.1)])
def test_planned_run_is_the_run_fit_performs(toy, params):
    X, y = toy
    clf = DPLogisticRegression(random_state=0, **params)
    plan = clf.planned_run(len(X))
    clf.fit(X, y)
    assert plan.ledger == clf.ledger_ and plan.noise_multiplier == clf.noise_multiplier_ and plan.steps == clf.steps_
    assert not hasattr(DPLogisticRegression(**params), "n_samples_")
    with pytest.raises((ValueError, TypeError), match="n_samples"):
        clf.planned_run(0)
