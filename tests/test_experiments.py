"""dpedu.lab.experiments: the accounting tables give the same answers as the accountants; grids are validated."""

import math

import numpy as np
import pytest

from dpedu.lab import experiments
from dpedu.accountants import Comparison, SubsampledGaussianEvent, compare
from dpedu.textbook.datasets import make_toy

RUN = dict(noise_multiplier=4.0, sampling_rate=0.01, steps=2_000, delta=1e-5)


def test_epsilon_for_run_is_a_comparison_equal_to_compare_on_the_ledger():
    names = ("sequential", "moments", "rdp", "zcdp")
    table = experiments.epsilon_for_run(**RUN, accountants=names)
    direct = compare([(SubsampledGaussianEvent(4.0, 0.01), 2_000)], delta=1e-5, accountants=names)
    assert isinstance(table, Comparison) and tuple(table) == names
    for name in names:
        assert (math.isnan(table[name]) and math.isnan(direct[name])) or table[name] == direct[name]
    assert table.notes == direct.notes and table.delta == direct.delta


def test_the_paper_recipe_is_marked_as_no_bound():
    table = experiments.epsilon_for_run(**RUN, accountants=("strong", "strong_paper"))
    assert "NOT a valid bound" in table.notes["strong_paper"] and "strong" not in table.notes


def test_epsilon_curves_match_epsilon_for_run():
    curves = experiments.epsilon_curves(noise_multiplier=4.0, sampling_rate=0.01, delta=1e-5, epochs=[5, 20],
                                        accountants=("rdp",))
    for epochs, value in zip((5, 20), curves.epsilons["rdp"]):
        steps = experiments.steps_from_epochs(epochs, 0.01)
        single = experiments.epsilon_for_run(noise_multiplier=4.0, sampling_rate=0.01, steps=steps, delta=1e-5,
                                             accountants=("rdp",))
        assert value == single["rdp"]


@pytest.mark.parametrize("z", [1e-300, 1e-160])
def test_a_vanishing_noise_multiplier_is_refused_with_the_range(z):
    with pytest.raises(ValueError, match=r"noise_multiplier must be in \[1e-50"):
        experiments.epsilon_for_run(noise_multiplier=z, sampling_rate=0.01, steps=10, delta=1e-5)


@pytest.mark.parametrize("bad", [["1"], "1", [True], True, [1 + 1j], [1.0, False]])
def test_epsilon_curves_refuses_non_real_epochs(bad):
    with pytest.raises(TypeError, match="epochs"):
        experiments.epsilon_curves(noise_multiplier=1.0, sampling_rate=0.1, delta=1e-5, epochs=bad)


@pytest.mark.parametrize("bad", [["1"], "1", [True], [1 + 1j]])
def test_run_tradeoff_refuses_non_real_epsilons_before_training(bad):
    X, y = make_toy(n=20, d=2, rng=0)
    with pytest.raises(TypeError, match="epsilons"):
        experiments.run_tradeoff((X, y, X, y), epsilons=bad, seeds=1, baseline=False)


def test_check_grid():
    assert np.array_equal(experiments.check_grid([1, 2.5], "x"), [1.0, 2.5])
    for bad in ([], [0.0], [math.inf], [[1.0, 2.0]]):
        with pytest.raises(ValueError, match="x"):
            experiments.check_grid(bad, "x")


def test_accountant_keys():
    assert experiments.accountant_for_key("strong_paper") == ("strong", {"recipe": "paper"})
    with pytest.raises(ValueError, match="accountant must be one of"):
        experiments.accountant_for_key("nope")
    with pytest.raises(TypeError, match="accountants"):
        experiments.check_accountant_keys("rdp")


def test_clipping_noise_grid_states_each_runs_cost_and_never_warns():
    """The grid fixes z, so each fit is told the epsilon its run costs: never refused as overspending (the estimator's
    warning, triggered by the library's own sweep, used to show up three times in chapter 7)."""
    import warnings

    X, y = make_toy(n=60, d=3, rng=3)
    data = (X[:40], y[:40], X[40:], y[40:])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = experiments.run_clipping_noise_grid(data, clip_norms=[0.5, 1.0], noise_multipliers=[0.6, 2.0],
                                                     seeds=1, rng=5,
                                                     settings=experiments.GridSettings(epochs=2, sampling_rate=0.25))
    expected = [compare([(SubsampledGaussianEvent(z, 0.25), 8)], 1e-5, accountants=("rdp",))["rdp"]
                for z in (0.6, 2.0)]
    assert result.epsilons[0] > 1.0                        # z = 0.6 costs more than the default target 1.0
    np.testing.assert_allclose(result.epsilons, expected, rtol=1e-12)
