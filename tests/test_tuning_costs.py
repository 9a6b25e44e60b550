"""dpedu.lab.experiments.tuning_costs: a grid search by composition against private selection (docs/math.md §23)."""

from __future__ import annotations

import math

import pytest

from dpedu.accountants import account
from dpedu.lab.experiments.tuning_costs import affordable_noise, run_ledger, tuning_cost

RUN = dict(sampling_rate=0.01, steps=500)


def test_the_grid_search_is_k_runs_composed_and_selection_wins_for_large_k():
    rows = tuning_cost([2, 10, 50], noise_multiplier=2.0, **RUN)
    ledger = run_ledger(2.0, 0.01, 500, 0.02)
    for row in rows:
        composed = [(event, row.trials * count) for event, count in ledger]
        assert row.grid_epsilon == pytest.approx(account(composed, "rdp", delta=1e-5).epsilon)
    assert rows[-1].selection_epsilon < rows[-1].grid_epsilon / 3
    assert [r.selection_epsilon for r in rows] == sorted(r.selection_epsilon for r in rows)


def test_affordable_noise_meets_the_target_and_selection_needs_less_noise_for_many_settings():
    (k, z_grid, z_selection), = affordable_noise([20], target_epsilon=1.0, **RUN)
    assert k == 20 and z_selection < z_grid
    for z, column in ((z_grid, "grid_epsilon"), (z_selection, "selection_epsilon")):
        assert getattr(tuning_cost([20], noise_multiplier=z, **RUN)[0], column) <= 1.0
        assert getattr(tuning_cost([20], noise_multiplier=z * 0.99, **RUN)[0], column) > 1.0


def test_no_noise_is_enough_when_the_scores_alone_exceed_the_budget():
    (_, z_grid, _), = affordable_noise([50], target_epsilon=0.5, score_epsilon=0.05, **RUN)
    assert z_grid == math.inf


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="trials"):
        tuning_cost([1], noise_multiplier=2.0, **RUN)
    with pytest.raises(ValueError, match="score_epsilon"):
        tuning_cost([5], noise_multiplier=2.0, score_epsilon=0, **RUN)
    with pytest.raises(ValueError, match="target_epsilon"):
        affordable_noise([5], target_epsilon=-1, **RUN)


def test_defaults_provenance_cost_composes_every_tuning_run():
    import importlib.util
    import sys
    from pathlib import Path

    from dpedu.accountants.calibrate import noise_multiplier
    from dpedu.ground.events import SubsampledGaussianEvent, steps_from_epochs
    from dpedu.lab.experiments.tuning_costs import _PROVENANCE_GRID, defaults_provenance_cost

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_dpsgd_accuracy.py"
    spec = importlib.util.spec_from_file_location("bench_dpsgd_accuracy_for_test", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    try:
        spec.loader.exec_module(bench)
    finally:
        sys.modules.pop(spec.name, None)
    assert _PROVENANCE_GRID == bench.GRID and len(bench.TUNING_SEEDS) == 3   # the search that chose the defaults

    rows = defaults_provenance_cost((0.5, 1.0))
    assert [row.runs for row in rows] == [162, 162]
    ledger = []
    for q in (0.01, 0.05):
        for epochs in (8, 32, 64):
            steps = steps_from_epochs(epochs, q)
            ledger.append((SubsampledGaussianEvent(noise_multiplier(1.0, 1e-5, q, steps), q), 27 * steps))
    assert rows[1].composed_epsilon == account(ledger, "rdp", delta=1e-5).epsilon
    assert 1.0 < rows[0].composed_epsilon < rows[1].composed_epsilon            # far above the run's own epsilon
    small = defaults_provenance_cost([1.0], grid={"sampling_rate": (0.01,), "epochs": (8,), "clip_norm": (1.0,),
                                                  "learning_rate": (1.0,)}, seeds=1)[0]
    assert small.runs == 1 and small.composed_epsilon <= 1.0                   # one run: its own epsilon
    with pytest.raises(ValueError, match="seeds"):
        defaults_provenance_cost([1.0], seeds=0)
