"""benchmarks/bench_tuning_accuracy.py's core on toy data: every method spends at most the total epsilon."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from dpedu.accountants import RepeatAndSelectEvent, account
from dpedu.textbook.datasets import make_toy
from dpedu.lab.experiments.tuning_costs import grid_noise_multiplier
from dpedu.lab.tuning import run_ledger, search_noise_multiplier

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_tuning_accuracy.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_tuning_accuracy", _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module                    # dataclasses look their module up while it executes
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def _toy_setup(bench):
    return bench.Setup(space={"learning_rate": (1.0, 4.0), "clip_norm": (0.5, 1.0)}, sampling_rate=0.05, epochs=2,
                       mean_trials=3.0, fixed_clips=(0.5, 1.0), default_params=dict(epochs=2, sampling_rate=0.05))


@pytest.mark.parametrize("epsilon", [0.5, 4.0])
def test_every_method_spends_at_most_the_total_epsilon(bench, epsilon):
    X, y = make_toy(n=1200, d=3, rng=0)
    X_test, y_test = make_toy(n=400, d=3, rng=1)
    results = bench.compare_methods(X, y, X_test, y_test, epsilon, np.random.default_rng(0), setup=_toy_setup(bench))
    methods = [name for name in results if not name.endswith(" z")]
    assert set(methods) == {"defaults", "grid", "selection", "adaptive 0.5", "adaptive 0.8", "adaptive 0.9",
                            "fixed C=0.5", "fixed C=1"}
    for name in methods:
        accuracy, spent = results[name]
        assert 0 < spent <= epsilon, (name, spent)
        assert 0.5 < accuracy <= 1.0, (name, accuracy)
    assert results["grid"][1] > 0.9 * epsilon and results["selection"][1] > 0.9 * epsilon  # calibrated, not loose
    assert results["selection z"][0] < results["grid z"][0]     # 4 settings composed need more noise than E[K] = 3


def test_same_seed_same_results(bench):
    X, y = make_toy(n=800, d=3, rng=0)
    setup = _toy_setup(bench)
    first, second = (bench.compare_methods(X, y, X, y, 1.0, np.random.default_rng(3), setup=setup) for _ in range(2))
    assert first == second


def test_search_noise_multiplier_is_the_smallest_noise_within_the_target():
    common = dict(sampling_rate=0.01, steps=500, score_epsilon=0.05)
    z = search_noise_multiplier(1.0, mean_trials=10, shape=0.0, **common)

    def spent(noise):
        event = RepeatAndSelectEvent(run_ledger(noise, 0.01, 500, 0.05), 10, 0.0)
        return account([(event, 1)], "rdp", delta=1e-5).epsilon

    assert spent(z) <= 1.0 < spent(z * 0.99)
    assert search_noise_multiplier(1.0, mean_trials=10, shape=1.0, **common) > z    # geometric K costs more
    assert search_noise_multiplier(0.1, mean_trials=10, shape=0.0, sampling_rate=0.01, steps=500,
                                   score_epsilon=0.2) == math.inf     # the scores alone exceed the target


def test_grid_noise_multiplier_composes_the_runs():
    z = grid_noise_multiplier(1.0, trials=4, sampling_rate=0.01, steps=500, score_epsilon=0.05)

    def spent(noise):
        return account([(e, 4 * c) for e, c in run_ledger(noise, 0.01, 500, 0.05)], "rdp", delta=1e-5).epsilon

    assert spent(z) <= 1.0 < spent(z * 0.99)


@pytest.mark.parametrize("bad, match", [(dict(target_epsilon=0), "target_epsilon"), (dict(score_epsilon=-1), "score_epsilon"),
                                        (dict(mean_trials=0.5), "mean"), (dict(sampling_rate=2), "sampling_rate"),
                                        (dict(steps=0), "steps")])
def test_search_noise_multiplier_refuses_bad_arguments_by_name(bad, match):
    kwargs = dict(target_epsilon=1.0, sampling_rate=0.01, steps=100, score_epsilon=0.05, mean_trials=5)
    kwargs.update(bad)
    target = kwargs.pop("target_epsilon")
    with pytest.raises((ValueError, TypeError), match=match):
        search_noise_multiplier(target, **kwargs)
