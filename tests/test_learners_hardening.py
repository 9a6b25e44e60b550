"""Hardening of the learners (issue 41, "Learners" and "Runs that never return"): one table per function.

Each row is a call and what it must do: raise ``ValueError``/``TypeError`` whose message names the argument
(``match``), or return the right answer (``error`` is None, ``match`` the expected value). A bare NumPy
``RuntimeWarning`` is an error (pytest config), so a refusal preceded by an overflow warning fails here too.
Every row of the issue's cases failed at b46db15 (run against that tree: the report lists them).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpedu.textbook.datasets import make_toy
from dpedu.lab.learner_estimators import FactorizedNoiseClassifier
from dpedu.textbook.learners import (
    minimise_regularised_logistic,
    objective_perturbation,
    objective_perturbation_noise_std,
    objective_perturbation_regularization,
    output_perturbation,
    output_perturbation_sensitivity,
)
from dpedu.textbook.learners.factorization import (
    DenseFactorization,
    closed_form_error,
    make_factorization,
    prefix_sum_error,
    prefix_sum_matrix,
    sensitivity,
)
from dpedu.textbook.learners.ftrl import factorized_gradient_descent

X, Y = make_toy(n=60, d=3, rng=0)
XN = X / np.linalg.norm(X, axis=1).max()              # rows of norm <= 1
TREE = make_factorization("tree", 16)
WIDE = DenseFactorization("wide", np.ones((4096, 1)), np.ones((1, 4096)))   # 4,096 columns: 6 full passes read
ALL_STEPS_SIX_TIMES = [np.arange(4096)] * 6                                # 6 x 4,096^2 > 1e8 Gram entries


def _check(call, error, match):
    if error is None:
        assert call() == pytest.approx(match, rel=1e-12, abs=0)
        return
    with pytest.raises(error, match=match):
        call()


def _ids(cases):
    return [case[0] for case in cases]


SENSITIVITY = [
    ("no patterns", lambda: sensitivity(np.eye(3), []), ValueError, "participations must hold at least one pattern"),
    ("float step", lambda: sensitivity(np.eye(3), [[1.5]]), TypeError, r"participations\[0\] must hold integer"),
    ("integral float", lambda: sensitivity(np.eye(3), [[1.0]]), TypeError, r"participations\[0\] must hold integer"),
    ("boolean step", lambda: sensitivity(np.eye(3), [[True]]), TypeError, r"participations\[0\] .*booleans"),
    ("string step", lambda: sensitivity(np.eye(3), [["0"]]), TypeError, r"participations\[0\] must hold integer"),
    ("empty pattern", lambda: sensitivity(np.eye(3), [[0], []]), ValueError, r"participations\[1\] must be a non-empty"),
    ("repeated step", lambda: sensitivity(np.eye(3), [[0, 0]]), ValueError, r"participations\[0\] repeats a step"),
    ("step past n", lambda: sensitivity(np.eye(3), [[3]]), ValueError, r"participations\[0\] must hold steps in \[0, 3\)"),
    ("negative step", lambda: sensitivity(np.eye(3), [[-1]]), ValueError, r"participations\[0\] must hold steps"),
    ("flat array", lambda: sensitivity(np.eye(3), np.arange(3)), TypeError, "participations must be a sequence"),
    ("string patterns", lambda: sensitivity(np.eye(3), "01"), TypeError, "participations must be a sequence"),
    ("2-D pattern", lambda: sensitivity(np.eye(3), [[[0]]]), ValueError, r"participations\[0\] must be a non-empty 1-D"),
    ("empty C", lambda: sensitivity(np.zeros((0, 0))), ValueError, "C is empty"),
    ("no columns", lambda: sensitivity(np.zeros((3, 0))), ValueError, "C is empty"),
    ("complex C", lambda: sensitivity(np.eye(3) * 1j), TypeError, "C must hold real numbers"),
    ("string C", lambda: sensitivity([["a"]]), TypeError, "C must hold real numbers"),
    ("boolean C", lambda: sensitivity([[True]]), TypeError, "C must hold real numbers"),
    ("1-D C", lambda: sensitivity(np.ones(3)), ValueError, "C must have 2 dimension"),
    ("NaN C", lambda: sensitivity([[np.nan]]), ValueError, "C contains NaN"),
    ("kind as C", lambda: sensitivity("tree"), TypeError, "C must be a matrix or a Factorization"),
    ("overflowing C", lambda: sensitivity(np.full((4, 2), 1e308)), ValueError, "exceeds the largest float"),
    ("huge entries", lambda: sensitivity(np.full((2, 2), 1e200)), None, math.sqrt(2) * 1e200),
    ("huge entries, patterns", lambda: sensitivity(np.full((2, 2), 1e200), [[0, 1]]), None, math.sqrt(8) * 1e200),
    ("tiny entries", lambda: sensitivity(np.full((2, 2), 1e-200)), None, math.sqrt(2) * 1e-200),
    # the Gram limit holds for a dense factorisation too, called alone or through sensitivity (whose door is then
    # already passed, so the factorisation must check it itself)
    ("Gram reads, matrix", lambda: sensitivity(WIDE.C, ALL_STEPS_SIX_TIMES), ValueError, "100,663,296 entries"),
    ("Gram reads, method", lambda: WIDE.sensitivity(ALL_STEPS_SIX_TIMES), ValueError, "100,663,296 entries"),
    ("Gram reads, factorisation", lambda: sensitivity(WIDE, ALL_STEPS_SIX_TIMES), ValueError, "100,663,296 entries"),
    ("dense cyclic", lambda: make_factorization("banded", 12, bands=2).cyclic_sensitivity(3), None,
     math.sqrt(4 * 1.25)),                                            # steps 0, 3, 6, 9: columns (1, 0.5)
]


@pytest.mark.parametrize("case, call, error, match", SENSITIVITY, ids=_ids(SENSITIVITY))
def test_sensitivity(case, call, error, match):
    _check(call, error, match)


PREFIX_SUM_ERROR = [
    ("kind as factorization", lambda: prefix_sum_error("tree"), TypeError, "factorization must be a Factorization"),
    ("matrix as factorization", lambda: prefix_sum_error(np.eye(3)), TypeError, "factorization must be a"),
    ("overflowing noise", lambda: prefix_sum_error(TREE, noise_multiplier=1e300), ValueError,
     r"noise_multiplier=1e\+300 .*must be at most"),
    ("NaN noise", lambda: prefix_sum_error(TREE, noise_multiplier=math.nan), ValueError, "noise_multiplier"),
    ("string noise", lambda: prefix_sum_error(TREE, noise_multiplier="1"), TypeError, "noise_multiplier"),
    ("no patterns", lambda: prefix_sum_error(TREE, []), ValueError, "participations must hold at least one"),
    ("large noise", lambda: prefix_sum_error(TREE, noise_multiplier=1e150), None, 1e300 * 5 * 33),
]


@pytest.mark.parametrize("case, call, error, match", PREFIX_SUM_ERROR, ids=_ids(PREFIX_SUM_ERROR))
def test_prefix_sum_error(case, call, error, match):
    _check(call, error, match)


CLOSED_FORMS = [
    ("tree at 1e9, quickly", lambda: closed_form_error("tree", 10 ** 9)[1], None, 30 * 14_846_928_141),
    ("tree past 2^53", lambda: closed_form_error("tree", 2 ** 53 + 1), ValueError, "n must be at most"),
    ("square root past its bound", lambda: closed_form_error("square_root", 10 ** 8), ValueError, "n must be at most"),
    ("float n", lambda: closed_form_error("tree", 16.0), TypeError, "n must be an integer"),
    ("boolean n", lambda: closed_form_error("identity", True), TypeError, "n must be an integer"),
    ("banded has none", lambda: closed_form_error("banded", 4), ValueError, "kind must be one of"),
    ("prefix-sum matrix of 1e5", lambda: prefix_sum_matrix(10 ** 5), ValueError, r"n must be at most 4,096.*GiB"),
    ("prefix-sum matrix of 0", lambda: prefix_sum_matrix(0), ValueError, "n must be an integer >= 1"),
]


@pytest.mark.parametrize("case, call, error, match", CLOSED_FORMS, ids=_ids(CLOSED_FORMS))
def test_closed_forms_and_the_prefix_sum_matrix(case, call, error, match):
    _check(call, error, match)


MAKE_FACTORIZATION = [(f"bands with {kind}", lambda kind=kind: make_factorization(kind, 16, bands=3), ValueError,
                       f"bands is only for kind='banded'.*kind='{kind}'")
                      for kind in ("tree", "tree_efficient", "identity", "square_root")] + [
    ("zero bands", lambda: make_factorization("banded", 16, bands=0), ValueError, "bands must be an integer >= 1"),
    ("float bands", lambda: make_factorization("banded", 16, bands=2.0), TypeError, "bands must be an integer"),
    ("square root past 4,096", lambda: make_factorization("square_root", 4097), ValueError,
     r"n must be at most 4,096 for the square root: its B and C are dense"),
    ("tree past a million", lambda: make_factorization("tree", 10 ** 6 + 1), ValueError, "n must be at most 1,000,000"),
]


@pytest.mark.parametrize("case, call, error, match", MAKE_FACTORIZATION, ids=_ids(MAKE_FACTORIZATION))
def test_make_factorization(case, call, error, match):
    _check(call, error, match)


def test_banded_is_still_built_with_its_bands():
    assert make_factorization("banded", 16, bands=3).C[3, 0] == 0.0 < make_factorization("banded", 16, bands=4).C[3, 0]


OBJECTIVE = [
    ("regularization, huge row_bound", lambda: objective_perturbation_regularization(1.0, 1e300), ValueError,
     r"row_bound=1e\+300"),
    ("regularization, 1e200 row_bound", lambda: objective_perturbation_regularization(1.0, 1e200), ValueError,
     "row_bound"),
    ("regularization, subnormal epsilon", lambda: objective_perturbation_regularization(1e-320, 1.0), ValueError,
     "epsilon"),
    ("regularization, large row_bound", lambda: objective_perturbation_regularization(1.0, 1e100), None, 0.5e200),
    ("noise std, tiny epsilon", lambda: objective_perturbation_noise_std(1e-300, 1e-5, 1.0), ValueError, "epsilon"),
    ("noise std, huge lipschitz", lambda: objective_perturbation_noise_std(1.0, 1e-5, 1e300), ValueError, "lipschitz"),
    ("tiny epsilon", lambda: objective_perturbation(XN, Y, epsilon=1e-300, delta=1e-5, row_bound=1.0, rng=0),
     ValueError, "epsilon"),
    ("epsilon 1e-260", lambda: objective_perturbation(XN, Y, epsilon=1e-260, delta=1e-5, row_bound=1.0, rng=0),
     ValueError, "epsilon=1e-260 is too small for the solver"),
    ("X times 1e300", lambda: objective_perturbation(X * 1e300, Y, epsilon=1.0, delta=1e-5, row_bound=1.0, rng=0),
     ValueError, r"every row of X must have L2 norm at most row_bound=1\.0"),
    ("huge tolerance", lambda: objective_perturbation(XN, Y, epsilon=1.0, delta=1e-5, row_bound=1.0, tolerance=1e300,
                                                      rng=0), ValueError, "tolerance"),
]


@pytest.mark.parametrize("case, call, error, match", OBJECTIVE, ids=_ids(OBJECTIVE))
def test_objective_perturbation(case, call, error, match):
    _check(call, error, match)


OUTPUT = [
    ("tolerance array", lambda: output_perturbation_sensitivity(100, .1, 2, tolerance=np.ones(2)), TypeError,
     "tolerance must be a scalar"),
    ("tolerance string", lambda: output_perturbation_sensitivity(100, .1, 2, tolerance="0"), TypeError, "tolerance"),
    ("tolerance boolean", lambda: output_perturbation_sensitivity(100, .1, 2, tolerance=True), TypeError, "tolerance"),
    ("tolerance NaN", lambda: output_perturbation_sensitivity(100, .1, 2, tolerance=math.nan), ValueError, "tolerance"),
    ("tolerance negative", lambda: output_perturbation_sensitivity(100, .1, 2, tolerance=-1e-3), ValueError,
     "tolerance"),
    ("overflowing sensitivity", lambda: output_perturbation_sensitivity(1, 1e-300, 1e300), ValueError,
     "regularization"),
    ("tolerance zero", lambda: output_perturbation_sensitivity(100, .1, 2, tolerance=0), None, 0.2),
    ("X times 1e300", lambda: output_perturbation(X * 1e300, Y, regularization=0.1, row_bound=1.0,
                                                  noise_multiplier=1.0, rng=0), ValueError,
     r"every row of X must have L2 norm at most row_bound=1\.0"),
    ("overflowing noise", lambda: output_perturbation(XN, Y, regularization=0.1, row_bound=1.0, noise_multiplier=1e308,
                                                      rng=0), ValueError, "noise_multiplier"),
]


@pytest.mark.parametrize("case, call, error, match", OUTPUT, ids=_ids(OUTPUT))
def test_output_perturbation(case, call, error, match):
    _check(call, error, match)


SOLVER = [
    ("string linear", lambda: minimise_regularised_logistic(X, Y, 0.1, linear=np.array(["1"] * 3)), TypeError,
     "linear must hold real numbers"),
    ("boolean linear", lambda: minimise_regularised_logistic(X, Y, 0.1, linear=[True, False, True]), TypeError,
     "linear"),
    ("complex linear", lambda: minimise_regularised_logistic(X, Y, 0.1, linear=[1j, 0, 0]), TypeError, "linear"),
    ("short linear", lambda: minimise_regularised_logistic(X, Y, 0.1, linear=[1.0, 2.0]), ValueError,
     "linear must be a vector of length 3"),
    ("NaN linear", lambda: minimise_regularised_logistic(X, Y, 0.1, linear=[math.nan, 0, 0]), ValueError, "linear"),
    ("huge linear", lambda: minimise_regularised_logistic(X, Y, 0.1, linear=[1e301, 0, 0]), ValueError, "linear"),
    ("overflowing objective", lambda: minimise_regularised_logistic(XN, Y, 1e-10, linear=[1e299, 0, 0]), ValueError,
     "the objective overflows during the solve.*regularization=1e-10"),
    ("X times 1e300", lambda: minimise_regularised_logistic(X * 1e300, Y, 0.1), ValueError,
     "every row of X must have L2 norm at most 1e"),
    ("endless iterations", lambda: minimise_regularised_logistic(X, Y, 0.1, max_iterations=10 ** 9), ValueError,
     "max_iterations must be at most"),
]


@pytest.mark.parametrize("case, call, error, match", SOLVER, ids=_ids(SOLVER))
def test_minimise_regularised_logistic(case, call, error, match):
    _check(call, error, match)


def _ftrl(**kwargs):
    arguments = dict(kind="tree", noise_multiplier=1.0, clip_norm=1.0, batches=3, epochs=1, rng=0) | kwargs
    return factorized_gradient_descent(X, Y, **arguments).theta


# The theta0 and bands rows need dpedu/textbook/learners/ftrl.py to check theta0 and to pass bands for "banded" only
# (the integrator's change; the report gives it).
FACTORIZED = [
    ("NaN theta0", lambda: _ftrl(theta0=np.full(3, np.nan)), ValueError, "theta0 contains NaN"),
    ("string theta0", lambda: _ftrl(theta0="abc"), TypeError, "theta0"),
    ("boolean theta0", lambda: _ftrl(theta0=[True, False, True]), TypeError, "theta0"),
    ("short theta0", lambda: _ftrl(theta0=np.zeros(2)), ValueError, "theta0"),
    ("bands with the tree", lambda: _ftrl(bands=3), ValueError, "bands is only for kind='banded'"),
    ("square root past 4,096 steps", lambda: _ftrl(kind="square_root", epochs=2000), ValueError, "epochs"),
    ("estimator epochs", lambda: FactorizedNoiseClassifier(epochs=10 ** 6, batches=3).fit(X, Y), ValueError,
     r"^epochs=1,000,000 with batches=3 means"),
]


@pytest.mark.parametrize("case, call, error, match", FACTORIZED, ids=_ids(FACTORIZED))
def test_factorized_gradient_descent(case, call, error, match):
    _check(call, error, match)


NOISE = [
    ("NaN std", lambda: TREE.noise(math.nan, 2), ValueError, "std"),
    ("negative std", lambda: TREE.noise(-1.0, 2), ValueError, "std"),
    ("overflowing std", lambda: TREE.noise(1e300, 2), ValueError, "std"),
    ("zero d", lambda: TREE.noise(1.0, 0), ValueError, "d must be an integer >= 1"),
    ("float d", lambda: TREE.noise(1.0, 2.0), TypeError, "d must be an integer"),
    ("bad rng", lambda: TREE.noise(1.0, 2, rng="x"), TypeError, "rng"),
    ("cyclic past steps", lambda: TREE.cyclic_sensitivity(17), ValueError, "min_separation must be at most 16"),
]


@pytest.mark.parametrize("case, call, error, match", NOISE, ids=_ids(NOISE))
def test_factorization_methods(case, call, error, match):
    _check(call, error, match)
