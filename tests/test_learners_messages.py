"""No refusal of a learner or a learner estimator shows a statistic of the private data (issue 37, D4 and item 6).

Each case plants distinctive values in X or y (entries whose digits appear nowhere else), provokes one data-dependent
refusal of a learner of ``dpedu.textbook.learners`` (output perturbation, objective perturbation, the solver, factorised
training) or an estimator of ``dpedu.lab.learner_estimators``, and checks the message (and any warning) three ways:

* no planted value, and no statistic of the data (a row norm, the largest norm, a sum, a mean, a label), appears in
  it in any of the usual formats;
* every number in it is one the caller passed (an argument), a constant of the package, or a small integer of the
  text ("L2", "{0, 1}");
* it names the argument (``X``, ``y``) and, where there is one, the public bound (``row_bound=...``).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from dpedu.lab.learner_estimators import (
    FactorizedNoiseClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
)
from dpedu.textbook.learners import minimise_regularised_logistic, objective_perturbation, output_perturbation
from dpedu.textbook.learners.convex import MAX_ROW_NORM
from dpedu.textbook.learners.ftrl import factorized_gradient_descent

PLANTED = (7.3718, 5.2291)                     # one row of X is (7.3718, 5.2291, 0): norm 9.03797...
LABEL = 7.25                                   # a planted label


def _data(n=400):
    rng = np.random.default_rng(17)
    X = rng.uniform(-0.4, 0.4, size=(n, 3))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return X, y


def _planted_row(X, scale=1.0):
    X = X.copy()
    X[11] = (PLANTED[0] * scale, PLANTED[1] * scale, 0.0)
    return X


def _numeric(values):
    """The real numbers behind a case's data (strings parsed, the real part of complex entries)."""
    array = np.asarray(values)
    if array.dtype.kind in "US":
        return array.astype(float)
    return np.real(array).astype(float)


def _statistics(X, y):
    """Numbers an adversary would like to read: entries that stand out, norms, sums, means, labels."""
    values = [*PLANTED, LABEL]
    with np.errstate(over="ignore"):                      # a sum or norm past the largest float is inf: left out
        for array in (_numeric(X), _numeric(y) if np.asarray(y).dtype.kind not in "US" else np.zeros(1)):
            finite = array[np.isfinite(array)]
            values += [float(np.max(np.abs(finite))), float(np.sum(finite)), float(np.mean(finite))]
        rows = _numeric(X)
        rows = rows[np.all(np.isfinite(rows), axis=1)]
        norms = np.hypot.reduce(rows, axis=1)
        values += [float(norms.max()), float(norms.min()), float(norms.mean())]
    return [v for v in values if np.isfinite(v) and abs(v) > 1e-3]


def _forms(value):
    forms = {repr(value), f"{value:g}", f"{value:.3g}", f"{value:.4g}", f"{value:.6g}", f"{value:.2f}", f"{value:.3f}",
             f"{value:.3e}", f"{value:.2e}"}
    return {form for form in forms if len(form.lstrip("-").replace(".", "").replace("0", "")) >= 3}


NUMBER = re.compile(r"(?<![A-Za-z_\d.])[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?")
SMALL = {0.0, 1.0, 2.0, 3.0}                     # "L2", "{0, 1}", "2 * y - 1", "2-D", ...


def _assert_private(message, X, y, allowed, names):
    for value in _statistics(X, y):
        for form in _forms(value):
            assert form not in message, f"{form!r} (a statistic of the data) in: {message}"
    for token in NUMBER.findall(message):
        number = abs(float(token))
        assert number in SMALL or any(np.isclose(number, abs(a), rtol=1e-6, atol=0) for a in allowed), \
            f"{token!r} is no argument or constant, in: {message}"
    for name in names:
        assert name in message, f"{name!r} not named in: {message}"


def _refusal(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises((ValueError, TypeError, RuntimeError)) as info:
            call()
    return str(info.value) + "".join(" | " + str(w.message) for w in caught)


X0, Y0 = _data()
XLONG = _planted_row(X0)                                 # one row longer than 1
YODD = Y0.copy()
YODD[5] = LABEL
XNAN = _planted_row(X0)
XNAN[3, 1] = np.nan
XHUGE = _planted_row(X0, 2e307)                          # entries below the largest float, the norm past it
XBIG = _planted_row(X0, 1e101)                           # past the solver's bound
XCOMPLEX = _planted_row(X0).astype(complex)
XCOMPLEX[11, 0] += 1j
XSTRING = _planted_row(X0).astype(str)
YCOMPLEX = np.where(Y0 > 0, 1 + 0j, 0j)
YCOMPLEX[5] = LABEL + 1j
YTHREE = np.where(Y0 > 0, 1.0, 0.0)
YTHREE[5] = LABEL

OUT = dict(regularization=0.1, row_bound=1.0, noise_multiplier=1.0, rng=0)
OBJ = dict(epsilon=1.0, delta=1e-5, row_bound=1.0, rng=0)
FTRL = dict(kind="tree", noise_multiplier=1.0, clip_norm=1.0, batches=4, epochs=1, rng=0)
PUBLIC = [0.1, 1.0, 1e-5, 4, 1e-8, 100]                 # the arguments above and the defaults in the messages

# (case, call, X, y, names that must appear, numbers the caller passed or the package states)
LEARNER_CASES = [
    ("output: a row longer than row_bound", lambda: output_perturbation(XLONG, Y0, **OUT), XLONG, Y0,
     ["X", "row_bound=1.0"], PUBLIC),
    ("output: NaN in X", lambda: output_perturbation(XNAN, Y0, **OUT), XNAN, Y0, ["X"], PUBLIC),
    ("output: a row past the largest float", lambda: output_perturbation(XHUGE, Y0, **OUT), XHUGE, Y0, ["X"],
     PUBLIC + [1.8e308]),
    ("output: a label not -1 or +1", lambda: output_perturbation(X0, YODD, **OUT), X0, YODD, ["y"], PUBLIC),
    ("output: labels in {0, 1}", lambda: output_perturbation(X0, (Y0 + 1) / 2, **OUT), X0, (Y0 + 1) / 2, ["y"],
     PUBLIC),
    ("output: the solver misses its tolerance", lambda: output_perturbation(X0, Y0, **(OUT | {"tolerance": 1e-300})),
     X0, Y0, ["tolerance"], PUBLIC + [1e-300]),
    ("objective: a row longer than row_bound", lambda: objective_perturbation(XLONG, Y0, **OBJ), XLONG, Y0,
     ["X", "row_bound=1.0"], PUBLIC),
    ("objective: NaN in X", lambda: objective_perturbation(XNAN, Y0, **OBJ), XNAN, Y0, ["X"], PUBLIC),
    ("objective: a label not -1 or +1", lambda: objective_perturbation(X0, YODD, **OBJ), X0, YODD, ["y"], PUBLIC),
    ("objective: the solver misses its tolerance",
     lambda: objective_perturbation(X0, Y0, **(OBJ | {"tolerance": 1e-300})), X0, Y0, ["tolerance"],
     PUBLIC + [1e-300]),
    ("solver: a row past its bound", lambda: minimise_regularised_logistic(XBIG, Y0, 0.1), XBIG, Y0, ["X"],
     PUBLIC + [MAX_ROW_NORM]),
    ("solver: misses its tolerance", lambda: minimise_regularised_logistic(X0, Y0, 0.1, tolerance=1e-300,
                                                                           max_iterations=3), X0, Y0,
     ["tolerance", "max_iterations"], PUBLIC + [1e-300, 3]),
    ("factorised: NaN in X", lambda: factorized_gradient_descent(XNAN, Y0, **FTRL), XNAN, Y0, ["X"], PUBLIC),
    ("factorised: a row past the largest float", lambda: factorized_gradient_descent(XHUGE, Y0, **FTRL), XHUGE, Y0,
     ["X"], PUBLIC + [1.8e308]),
    ("factorised: a label not -1 or +1", lambda: factorized_gradient_descent(X0, YODD, **FTRL), X0, YODD, ["y"],
     PUBLIC),
]


@pytest.mark.parametrize("case, call, X, y, names, allowed", LEARNER_CASES, ids=[c[0] for c in LEARNER_CASES])
def test_no_learner_refusal_shows_the_data(case, call, X, y, names, allowed):
    _assert_private(_refusal(call), X, y, allowed, names)


ESTIMATORS = [OutputPerturbationClassifier(random_state=0), ObjectivePerturbationClassifier(random_state=0),
              FactorizedNoiseClassifier(batches=4, random_state=0)]
LABELS = np.where(Y0 > 0, "yes", "no")
ESTIMATOR_CASES = [
    ("complex X", XCOMPLEX, LABELS, ["X"]),
    ("strings in X", XSTRING, LABELS, ["X"]),
    ("NaN in X", XNAN, LABELS, ["X"]),
    ("inf in X", np.where(np.isnan(XNAN), np.inf, XNAN), LABELS, ["X"]),
    ("complex y", X0, YCOMPLEX, ["y"]),
    ("three classes", X0, YTHREE, ["y"]),
    ("NaN in y", X0, np.where(np.arange(len(Y0)) == 5, np.nan, Y0), ["y"]),
]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("case, X, y, names", ESTIMATOR_CASES, ids=[c[0] for c in ESTIMATOR_CASES])
def test_no_estimator_refusal_shows_the_data(estimator, case, X, y, names):
    from sklearn.base import clone

    _assert_private(_refusal(lambda: clone(estimator).fit(X, y)), X, y, PUBLIC, names)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("case, X", [("complex X", XCOMPLEX), ("strings in X", XSTRING), ("NaN in X", XNAN)],
                         ids=["complex X", "strings in X", "NaN in X"])
def test_no_prediction_refusal_shows_the_data(estimator, case, X):
    from sklearn.base import clone

    fitted = clone(estimator).fit(X0, LABELS)
    _assert_private(_refusal(lambda: fitted.predict(X)), X, Y0, PUBLIC + [3], ["X"])


def test_the_planted_values_would_be_seen():
    # the check has teeth: the old message of D4 and a raw scikit-learn message are caught
    old = (f"every row of X must have L2 norm at most row_bound=1 (the Lipschitz constant of the logistic loss); "
           f"the largest is {np.linalg.norm(XLONG, axis=1).max():.6g}.")
    with pytest.raises(AssertionError, match="a statistic of the data"):
        _assert_private(old, XLONG, Y0, PUBLIC, ["X"])
    with pytest.raises(AssertionError):
        _assert_private(f"Complex data not supported\n{XCOMPLEX}", XCOMPLEX, LABELS, PUBLIC, ["X"])
    with pytest.raises(AssertionError, match="no argument or constant"):
        _assert_private("the solver did not converge (last 0.000417)", X0, Y0, PUBLIC, [])
