"""Reproducibility: every randomised function gives identical results for the same seed or Generator.

For each randomised function and estimator of dpedu (the mechanisms, the snapping mechanism, the training
loops with logistic regression and the MLP, ``DPLogisticRegression(random_state=...)``, the data set helper
and the experiment drivers):

* the same int seed gives bit-identical output, and so does a fresh ``Generator`` seeded alike (an int seed
  means ``numpy.random.default_rng(seed)``), or a ``SeedSequence``;
* different seeds give different output;
* a ``Generator`` passed in is *used* (its stream advances), so two calls with one Generator differ.
"""

from __future__ import annotations

import warnings

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpedu
from dpedu.textbook.training.sampling import make_sampling
from dpedu import snapping, training
from dpedu.lab import experiments
from dpedu.textbook.datasets import make_toy
from dpedu.lab.estimator import DPLogisticRegression
from dpedu.textbook.models import MLP, LogisticModel

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
FEW = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])

X, Y = make_toy(n=60, d=3, rng=123)


def planned(X, y, *, model=None, rng=None, **settings):
    """A DP-SGD run with variants: ``run_dp_sgd`` on ``plan_dp_sgd(len(X), **settings)``."""
    return training.run_dp_sgd(X, y, training.plan_dp_sgd(len(X), **settings), model=model, rng=rng)


def _outputs(result):
    """The randomised parts of any return value, as a flat list of arrays (for exact comparison)."""
    if isinstance(result, training.TrainingResult):
        details = result.details
        if isinstance(details, training.NoisyGDDiagnostics):
            return [result.theta, result.losses, np.array([details.noisy_count])]
        return [result.theta, result.losses, details.batch_sizes, details.inclusions]
    if isinstance(result, DPLogisticRegression):
        return [result.coef_, result.intercept_, result.losses_]
    if isinstance(result, tuple):
        return [np.asarray(part) for part in result]
    if isinstance(result, experiments.NoisyGDResult):
        return [result.accuracies]
    if isinstance(result, experiments.TradeoffResult):
        return [result.accuracies, result.noise_multipliers]
    return [np.asarray(result, dtype=float)]


def _same(a, b):
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(_outputs(a), _outputs(b)))


def _shuffle_quietly(call):
    def wrapped(rng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", training.ShuffledBatchesWarning)
            return call(rng)
    return wrapped


RANDOMISED = [
    ("laplace_mechanism", lambda r: dpedu.laplace_mechanism([1.0, 2.0, 3.0], l1_sensitivity=1.0, epsilon=0.5, rng=r)),
    ("laplace_mechanism.scalar", lambda r: dpedu.laplace_mechanism(5.0, l1_sensitivity=1.0, epsilon=0.5, rng=r)),
    ("gaussian_mechanism.z", lambda r: dpedu.gaussian_mechanism([1.0, 2.0], l2_sensitivity=1.0, noise_multiplier=2.0,
                                                                rng=r)),
    ("gaussian_mechanism.eps", lambda r: dpedu.gaussian_mechanism([1.0, 2.0], l2_sensitivity=1.0, epsilon=1.0,
                                                                  delta=1e-5, rng=r)),
    ("laplace_mech", lambda r: dpedu.laplace_mech(10.0, 1.0, 1.0, r)),
    ("gaussian_mech", lambda r: dpedu.gaussian_mech(10.0, 1.0, 0.5, 1e-5, r)),
    ("gaussian_mech_vec", lambda r: dpedu.gaussian_mech_vec([10.0, 20.0], 1.0, 0.5, 1e-5, r)),
    ("snapping_mechanism", lambda r: snapping.snapping_mechanism([0.0, 3.0, -7.0, 1.5] * 4, epsilon=0.5, bound=100.0,
                                                                 rng=r)),
    ("full_precision_uniform", lambda r: snapping.full_precision_uniform(8, rng=r)),
    ("make_toy", lambda r: make_toy(n=20, d=3, rng=r)),
    ("poisson_sample", lambda r: np.isin(np.arange(200), training.poisson_sample(200, 0.5, rng=r))),
    ("MLP.init", lambda r: MLP(3, 4).init(rng=r)),
    ("noisy_gradient_descent", lambda r: dpedu.noisy_gradient_descent(X, Y, 3, 0.5, 1e-5, clip_norm=1.0, rng=r)),
    ("noisy_gradient_descent.total", lambda r: training.run_noisy_gradient_descent(
        X, Y, training.plan_noisy_gradient_descent(3, 1.0, 1e-5, budget_split="total", calibration="analytic"), rng=r)),
    ("balls_in_bins batches", lambda r: np.concatenate(list(itertools.islice(
        make_sampling("balls_in_bins", 200, 0.1).batches(np.random.default_rng(r)), 10)))),
    ("dp_sgd_step", lambda r: training.dp_sgd_step(np.zeros(3), training.training_data(X, Y)[:20], model=LogisticModel(3),
                                                   clip_norm=1.0, noise_multiplier=1.0, expected_batch_size=18.0,
                                                   learning_rate=1.0, rng=r)),
    ("dp_sgd.logistic", lambda r: training.dp_sgd(X, Y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.2,
                                                  steps=5, rng=r)),
    ("dp_sgd.logistic.inputs", lambda r: planned(X, Y, noise_multiplier=1.0, clip_norm=0.5, sampling_rate=0.2,
                                                         steps=5, clip_mode="inputs", lr_schedule="linear", rng=r)),
    ("dp_sgd.logistic.shuffle", _shuffle_quietly(lambda r: planned(
        X, Y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.2, steps=5, sampling="shuffle", rng=r))),
    ("dp_sgd.mlp", lambda r: training.dp_sgd(X, Y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.2, steps=5,
                                             model=MLP(3, 4), rng=r)),
    ("dp_sgd.mlp.shuffle", _shuffle_quietly(lambda r: planned(
        X, Y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.2, steps=5, model=MLP(3, 4), sampling="shuffle",
        rng=r))),
    ("dp_sgd.mlp.nonprivate", lambda r: training.dp_sgd(X, Y, noise_multiplier=0.0, clip_norm=1.0, sampling_rate=0.2,
                                                        steps=5, model=MLP(3, 4), rng=r)),
    ("DPLogisticRegression", lambda r: DPLogisticRegression(epsilon=1.0, epochs=2, sampling_rate=0.2,
                                                            random_state=r).fit(X, Y)),
    ("DPLogisticRegression.fixed_z", lambda r: DPLogisticRegression(epsilon=10.0, noise_multiplier=1.0, epochs=1,
                                                                    sampling_rate=0.5, batch_size=None,
                                                                    random_state=r).fit(X, Y)),
]

IDS = [name for name, _ in RANDOMISED]


@pytest.mark.parametrize("name, call", RANDOMISED, ids=IDS)
@FEW
@given(seed=SEEDS)
def test_same_seed_same_result(name, call, seed):
    first = call(seed)
    assert _same(first, call(seed))
    assert _same(first, call(np.random.default_rng(seed)))          # an int seed means default_rng(seed)
    assert _same(first, call(np.random.SeedSequence(seed)))
    assert _same(first, call(np.random.PCG64(seed)))


@pytest.mark.parametrize("name, call", RANDOMISED, ids=IDS)
@FEW
@given(seeds=st.lists(SEEDS, min_size=2, max_size=2, unique=True))
def test_different_seeds_different_results(name, call, seeds):
    assert not _same(call(seeds[0]), call(seeds[1]))


@pytest.mark.parametrize("name, call", RANDOMISED, ids=IDS)
def test_a_generator_is_used_not_copied(name, call):
    rng = np.random.default_rng(2024)
    first, second = call(rng), call(rng)
    assert not _same(first, second)                 # the stream advanced
    rng = np.random.default_rng(2024)
    assert _same(call(rng), first)                  # and replays from the same state


@pytest.mark.parametrize("name, call", RANDOMISED, ids=IDS)
def test_none_gives_fresh_randomness(name, call):
    assert not _same(call(None), call(None))


def test_noise_is_independent_of_the_value():
    """The same seed draws the same noise whatever the query answer: output - value is identical."""
    a = dpedu.laplace_mechanism(np.zeros(5), l1_sensitivity=1.0, epsilon=1.0, rng=7)
    b = dpedu.laplace_mechanism(np.full(5, 100.0), l1_sensitivity=1.0, epsilon=1.0, rng=7)
    np.testing.assert_allclose(b - 100.0, a, atol=1e-12)
    g0 = dpedu.gaussian_mechanism(np.zeros(5), l2_sensitivity=2.0, noise_multiplier=1.5, rng=7)
    g1 = dpedu.gaussian_mechanism(np.ones(5), l2_sensitivity=2.0, noise_multiplier=1.5, rng=7)
    np.testing.assert_allclose(g1 - 1.0, g0, atol=1e-12)


def test_dp_sgd_step_replays_inside_dp_sgd():
    """One dp_sgd step from theta0 equals dp_sgd_step with the same stream (sample first, then noise)."""
    theta0 = np.zeros(3)
    plan = training.plan_dp_sgd(len(X), noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.3, steps=1)
    one = training.run_dp_sgd(X, Y, plan, theta0=theta0, rng=5)
    rng = np.random.default_rng(5)
    batch = training.training_data(X, Y)[training.poisson_sample(len(X), 0.3, rng)]
    step = training.dp_sgd_step(theta0, batch, model=LogisticModel(3), clip_norm=1.0, noise_multiplier=1.0,
                                expected_batch_size=0.3 * len(X), learning_rate=1.0, rng=rng)
    np.testing.assert_array_equal(one.theta, step)


def test_estimator_refit_is_deterministic_and_clone_safe():
    from sklearn.base import clone

    clf = DPLogisticRegression(epsilon=1.0, epochs=2, sampling_rate=0.2, random_state=3)
    a = clf.fit(X, Y).coef_.copy()
    b = clf.fit(X, Y).coef_.copy()                      # refitting with an int seed repeats the run
    c = clone(clf).fit(X, Y).coef_
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_estimator_with_a_generator_advances_it():
    rng = np.random.default_rng(3)
    clf = DPLogisticRegression(epsilon=1.0, epochs=2, sampling_rate=0.2, random_state=rng)
    a = clf.fit(X, Y).coef_.copy()
    b = clf.fit(X, Y).coef_.copy()
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, DPLogisticRegression(epsilon=1.0, epochs=2, sampling_rate=0.2,
                                                          random_state=3).fit(X, Y).coef_)


# --- experiment drivers (cheap settings) -------------------------------------------------------------

DATA = (X[:40], Y[:40], X[40:], Y[40:])

EXPERIMENTS = [
    ("run_noisy_gd_tradeoff", lambda r: experiments.run_noisy_gd_tradeoff(
        DATA, epsilons_per_iteration=[0.1, 0.5], iterations=2, seeds=2, accountants=(), rng=r)),
    ("run_tradeoff", lambda r: experiments.run_tradeoff(
        DATA, epsilons=[0.5], seeds=2, epochs=1, sampling_rate=0.25, baseline=False, rng=r)),
]


@pytest.mark.parametrize("name, call", EXPERIMENTS, ids=[n for n, _ in EXPERIMENTS])
def test_experiments_are_reproducible(name, call):
    first = call(11)
    assert _same(first, call(11))
    assert _same(first, call(np.random.SeedSequence(11)))
    assert not _same(first, call(12))
    # a Generator works too: seeded alike it repeats, and it is consumed
    assert _same(call(np.random.default_rng(11)), call(np.random.default_rng(11)))
    rng = np.random.default_rng(11)
    assert not _same(call(rng), call(rng))
