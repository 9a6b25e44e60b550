"""One validation layer: every public numeric argument refuses bool, str, complex and NaN by name.

``NUMERIC_ARGUMENTS`` is a table (function, argument name, a valid call with that argument replaced): extend it
when a public function gains a numeric argument. The property test draws bad values of each kind - booleans
(Python and NumPy), strings, complex numbers, NaN (Python and NumPy) - and requires a ``TypeError`` or
``ValueError`` whose message contains the argument's name (as a word). Also here: the ``check_*`` helpers'
own rules (``check_scalar``, ``check_count``/``MAX_STEPS``, ``check_budget``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpedu import calibrate, clipping, mechanisms, proactive, snapping, training

from dpedu.ground import validation
from dpedu.accountants import GaussianEvent, LaplaceEvent, SubsampledGaussianEvent, make_accountant
from dpedu.accountants.budget import PrivacyBudget
from dpedu.textbook.datasets import make_toy
from dpedu.lab.estimator import DPLogisticRegression, tuned_defaults

X4 = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]])
Y4 = np.array([1.0, -1.0, 1.0, -1.0])


def _fit(**params):
    base = dict(epsilon=1.0, sampling_rate=0.5, epochs=1, random_state=0)
    return lambda: DPLogisticRegression(**{**base, **params}).fit(X4, Y4)


def _spend(**kw):
    return PrivacyBudget(epsilon=5.0, delta=1e-5).spend(GaussianEvent(5.0), **kw)


# (id, argument name, call(value)): each call is valid when value is a sensible number
NUMERIC_ARGUMENTS = [
    # validation
    ("check_epsilon", "epsilon", lambda v: validation.check_epsilon(v)),
    ("check_delta", "delta", lambda v: validation.check_delta(v)),
    ("check_positive", "alpha", lambda v: validation.check_positive(v, "alpha")),
    ("check_nonnegative", "beta", lambda v: validation.check_nonnegative(v, "beta")),
    ("check_in_interval", "gamma", lambda v: validation.check_in_interval(v, "gamma", 0, 1)),
    ("check_sampling_rate", "sampling_rate", lambda v: validation.check_sampling_rate(v)),
    ("check_count", "steps", lambda v: validation.check_count(v, "steps")),
    # budget
    ("PrivacyBudget.epsilon", "epsilon", lambda v: PrivacyBudget(epsilon=v, delta=1e-5)),
    ("PrivacyBudget.delta", "delta", lambda v: PrivacyBudget(epsilon=1.0, delta=v)),
    ("PrivacyBudget.spend.count", "count", lambda v: _spend(count=v)),
    # estimator (checked in fit)
    ("DPLR.epsilon", "epsilon", lambda v: _fit(epsilon=v)()),
    ("DPLR.delta", "delta", lambda v: _fit(delta=v)()),
    ("DPLR.epochs", "epochs", lambda v: _fit(epochs=v)()),
    ("DPLR.clip_norm", "clip_norm", lambda v: _fit(clip_norm=v)()),
    ("DPLR.learning_rate", "learning_rate", lambda v: _fit(learning_rate=v)()),
    ("DPLR.sampling_rate", "sampling_rate", lambda v: _fit(sampling_rate=v)()),
    ("DPLR.batch_size", "batch_size", lambda v: _fit(sampling_rate=None, batch_size=v)()),
    ("DPLR.noise_multiplier", "noise_multiplier", lambda v: _fit(noise_multiplier=v, epsilon=100.0)()),
    ("tuned_defaults", "epsilon", lambda v: tuned_defaults(v)),
    # events and accountants
    ("GaussianEvent", "noise_multiplier", lambda v: GaussianEvent(v)),
    ("SubsampledGaussianEvent.z", "noise_multiplier", lambda v: SubsampledGaussianEvent(v, 0.1)),
    ("SubsampledGaussianEvent.q", "sampling_rate", lambda v: SubsampledGaussianEvent(1.0, v)),
    ("LaplaceEvent", "epsilon", lambda v: LaplaceEvent(v)),
    ("rdp.compose.count", "count", lambda v: make_accountant("rdp").compose(GaussianEvent(2.0), v)),
    ("rdp.get_epsilon", "delta", lambda v: make_accountant("rdp").compose(GaussianEvent(2.0)).get_epsilon(v)),
    ("rdp.get_delta", "epsilon", lambda v: make_accountant("rdp").compose(GaussianEvent(2.0)).get_delta(v)),
    # mechanisms, clipping, snapping
    ("laplace_mechanism.epsilon", "epsilon",
     lambda v: mechanisms.laplace_mechanism(1.0, l1_sensitivity=1.0, epsilon=v, rng=0)),
    ("gaussian_mechanism.noise_multiplier", "noise_multiplier",
     lambda v: mechanisms.gaussian_mechanism(1.0, l2_sensitivity=1.0, noise_multiplier=v, rng=0)),
    ("L2_clip", "clip_norm", lambda v: clipping.L2_clip([3.0, 4.0], v)),
    ("snapping.bound", "bound", lambda v: snapping.snapping_mechanism(1.0, epsilon=1.0, bound=v, rng=0)),
    # calibrate, proactive
    ("calibrate.noise_multiplier.epsilon", "target_epsilon", lambda v: calibrate.noise_multiplier(
        target_epsilon=v, target_delta=1e-5, sampling_rate=0.1, steps=10)),
    ("calibrate.noise_multiplier.steps", "steps", lambda v: calibrate.noise_multiplier(
        target_epsilon=1.0, target_delta=1e-5, sampling_rate=0.1, steps=v)),
    ("steps_for_budget.z", "noise_multiplier", lambda v: calibrate.steps_for_budget(
        target_epsilon=5.0, target_delta=1e-5, noise_multiplier=v, sampling_rate=0.1)),
    ("proactive_noise_multiplier.delta", "delta", lambda v: proactive.proactive_noise_multiplier(0.5, v)),
    ("minimum_epochs", "dataset_size", lambda v: proactive.minimum_epochs(v)),
    # training
    ("dp_sgd.learning_rate", "learning_rate", lambda v: training.dp_sgd(
        X4, Y4, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.5, steps=2, learning_rate=v, rng=0)),
    ("dp_sgd.steps", "steps", lambda v: training.dp_sgd(
        X4, Y4, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.5, steps=v, rng=0)),
    ("noisy_gradient_descent.epsilon", "epsilon",
     lambda v: training.plan_noisy_gradient_descent(2, v, 1e-5, budget_split="total")),
    ("gradient_descent.iterations", "iterations", lambda v: training.gradient_descent(X4, Y4, v)),
    # datasets
    ("make_toy.n", "n", lambda v: make_toy(n=v, d=2, rng=0)),
]

#: Bad values by kind; each must be refused (TypeError or ValueError) with the argument named.
BAD_VALUES = st.one_of(
    st.sampled_from([True, False, np.bool_(True)]),                                   # bool
    st.text(max_size=4),                                                               # str (also "1", "nan")
    st.complex_numbers(allow_nan=False, allow_infinity=False).filter(lambda c: c.imag != 0),  # complex
    st.sampled_from([math.nan, np.float64("nan"), float("-nan")]),                     # NaN
)
EXAMPLES = 8   # per table row: the case count is len(NUMERIC_ARGUMENTS) * EXAMPLES


@pytest.mark.parametrize("case_id, name, call", NUMERIC_ARGUMENTS, ids=[row[0] for row in NUMERIC_ARGUMENTS])
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(bad=BAD_VALUES)
def test_bool_str_complex_and_nan_are_refused_by_name(case_id, name, call, bad):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises((TypeError, ValueError), match=rf"\b{name}\b"):
            call(bad)


@pytest.mark.parametrize("case_id, name, call", NUMERIC_ARGUMENTS, ids=[row[0] for row in NUMERIC_ARGUMENTS])
def test_every_table_row_is_a_valid_call_with_a_good_value(case_id, name, call):
    """Guards the table: the refusals above are about the value, not a broken call."""
    good = {"count": 2, "steps": 3, "batch_size": 2, "iterations": 2, "n": 10, "dataset_size": 1000,
            "delta": 1e-5, "gamma": 0.5, "sampling_rate": 0.5, "epochs": 1, "bound": 100.0, "clip_norm": 1.0,
            "learning_rate": 0.5, "noise_multiplier": 1.0}.get(name, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        call(good)


# --- the helpers' own rules ------------------------------------------------------------------------

@pytest.mark.parametrize("value, error", [(True, TypeError), ("1", TypeError), (1j, TypeError), (None, TypeError),
                                          (np.array([1.0, 2.0]), TypeError), (math.nan, ValueError)])
def test_check_scalar_refuses_non_reals_and_nan(value, error):
    with pytest.raises(error, match=r"^theta\b"):
        validation.check_scalar(value, "theta")


def test_check_scalar_keeps_infinity_and_nan_on_request():
    assert validation.check_scalar(np.float32(2.5), "a") == 2.5 and validation.check_scalar(math.inf, "a") == math.inf
    assert math.isnan(validation.check_scalar(math.nan, "a", allow_nan=True))


def test_check_count_states_its_limit():
    assert validation.check_count(validation.MAX_STEPS, "steps") == validation.MAX_STEPS
    with pytest.raises(ValueError, match=rf"^steps must be at most {validation.MAX_STEPS:,}"):
        validation.check_count(validation.MAX_STEPS + 1, "steps")
    with pytest.raises(ValueError, match="at most 10"):
        validation.check_count(11, "repeats", maximum=10)
    with pytest.raises(TypeError, match="repeats"):
        validation.check_count(3.0, "repeats")


@pytest.mark.parametrize("bad", ["x", 1.0, 0, None.__class__, object()])
def test_check_budget_names_the_argument(bad):
    with pytest.raises(TypeError, match=r"^budget must be None or a privacy budget"):
        validation.check_budget(bad)


@pytest.mark.parametrize("size", [3, 10_000])                       # below and above the summing fast path
def test_all_finite_is_exact_even_when_the_sum_overflows(size):
    values = np.full(size, 1e308)                                     # finite entries whose sum is inf
    assert validation.all_finite(values)
    for bad in (np.nan, np.inf, -np.inf):
        broken = values.copy()
        broken[size // 2] = bad
        assert not validation.all_finite(broken)
    mixed = np.zeros(size)
    mixed[0], mixed[-1] = np.inf, -np.inf                             # inf - inf = nan in the sum
    assert not validation.all_finite(mixed)
    with pytest.raises(ValueError, match="values contains NaN"):
        validation.check_array(mixed, "values")


def test_check_scalar_fast_path_for_floats_keeps_the_rules():
    assert validation.check_scalar(2.5, "x") == 2.5
    assert math.isinf(validation.check_scalar(math.inf, "x"))
    with pytest.raises(ValueError, match="x must be a number, not NaN"):
        validation.check_scalar(math.nan, "x")
    assert math.isnan(validation.check_scalar(math.nan, "x", allow_nan=True))


@pytest.mark.parametrize("bad", [[1.0, 2.0], 3.0, "x", np.array(["a"]), np.array([1j]), np.array([None])])
def test_all_finite_refuses_what_is_not_a_real_array(bad):
    with pytest.raises(TypeError, match="arr must be a numpy array of real numbers"):
        validation.all_finite(bad)
