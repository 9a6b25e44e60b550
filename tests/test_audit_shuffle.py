"""The white-box audit of shuffled DP-SGD runs (dpedu.lab.audit.shuffle_whitebox) beside the Monte Carlo bound of
the same pair (dpedu.lab.audit.shuffle, docs/math.md §22.6) and the Poisson PLD upper bound."""

import warnings

import numpy as np
import pytest

from dpedu.lab.audit import shuffle_whitebox_audit
from dpedu.lab.audit.shuffle import shuffle_epsilon_lower_bound, shuffle_privacy_losses
from dpedu.lab.audit.shuffle_whitebox import observed_updates, shuffle_audit_data
from dpedu.lab.audit.statistics import clopper_pearson
from dpedu.textbook.training import dp_sgd, plan_dp_sgd, run_dp_sgd


def planned(X, y, *, model=None, theta0=None, budget=None, rng=None, **settings):
    """A DP-SGD run with variants: ``run_dp_sgd`` on ``plan_dp_sgd(len(X), **settings)``."""
    return run_dp_sgd(X, y, plan_dp_sgd(len(X), **settings), model=model, theta0=theta0, budget=budget, rng=rng)


SETTING = dict(batches_per_epoch=20, epochs=1, delta=1e-3)   # the pair of §22.6 at b = 20, one epoch


def mc_upper_bound(z, relation, *, n_samples, confidence, rng):
    """An upper confidence bound on the pair's epsilon at delta from the same unbiased estimator: the smallest
    epsilon on a grid whose Clopper-Pearson *upper* bound on delta_PQ(epsilon) is below delta."""
    height = 2.0 if relation == "replace_one" else 1.0
    gen = np.random.default_rng(rng)
    losses = shuffle_privacy_losses(z / height, SETTING["batches_per_epoch"], SETTING["epochs"], n_samples, gen)
    thresholds = losses + np.log1p(-gen.random(losses.size))
    for eps in np.linspace(0.0, 30.0, 3001):
        if clopper_pearson(int(np.sum(thresholds >= eps)), losses.size, confidence=confidence) < SETTING["delta"]:
            return float(eps)
    raise AssertionError("grid too short")


def test_the_audit_reads_the_updates_of_dp_sgd_itself():
    (X, y), _ = shuffle_audit_data(4, 4, "replace_one")
    kwargs = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.25, steps=8, learning_rate=1e-6,
                  sampling="shuffle", relation="replace_one")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = planned(X, y, rng=5, **kwargs)
        kwargs.pop("steps")
        updates, thetas = observed_updates(X, y, plan_dp_sgd(16, steps=8, **kwargs), rng=5)
    np.testing.assert_array_equal(thetas[-1], result.theta)          # the same run, step for step
    assert updates.shape == (8, 1)


def test_the_data_sets_are_the_pair_of_section_22_6():
    (X_in, y_in), (X_out, y_out) = shuffle_audit_data(5, 3, "add_remove")
    assert X_out.shape[0] == 15 and X_in.shape[0] == 16 and np.all(X_out == 0)    # b batches per epoch in both
    (X_in, y_in), (X_out, y_out) = shuffle_audit_data(5, 3, "replace_one")
    np.testing.assert_array_equal(X_in, X_out)
    assert np.sum(y_in != y_out) == 1


def test_seeded_and_independent_of_n_jobs():
    kwargs = dict(batches_per_epoch=4, epochs=2, relation="replace_one", runs=20, rng=7)
    a = shuffle_whitebox_audit(1.0, **kwargs)
    b = shuffle_whitebox_audit(1.0, **kwargs, n_jobs=2)
    np.testing.assert_array_equal(a.statistics_in, b.statistics_in)
    np.testing.assert_array_equal(a.statistics_out, b.statistics_out)
    assert a.epsilon_lower == b.epsilon_lower
    assert shuffle_whitebox_audit(1.0, **{**kwargs, "rng": 8}).statistics_in[0] != a.statistics_in[0]


def test_replace_one_audit_lies_between_the_poisson_number_and_the_pair():
    """At z = 1 under replace-one, 1000 pairs of real shuffled runs already prove more than the Poisson PLD
    epsilon (the gap of issue 21), and stay below the pair's epsilon. Each bound holds with probability
    >= 95%, so all three inequalities together hold with probability >= 90%; the seeds are fixed."""
    audit = shuffle_whitebox_audit(1.0, relation="replace_one", runs=1000, rng=3, **SETTING)
    mc_low = shuffle_epsilon_lower_bound(1.0, relation="replace_one", n_samples=50_000, rng=1, **SETTING)
    mc_high = mc_upper_bound(1.0, "replace_one", n_samples=50_000, confidence=0.95, rng=2)
    assert audit.poisson_upper < audit.epsilon_lower <= mc_high
    assert audit.poisson_upper < mc_low <= mc_high
    assert audit.epsilon_lower <= mc_low          # the pair's value is far from reached by 1000 runs


def test_add_remove_audit_stays_below_the_pair_and_the_poisson_number():
    audit = shuffle_whitebox_audit(1.0, relation="add_remove", runs=500, rng=4, **SETTING)
    assert 0.0 <= audit.epsilon_lower <= mc_upper_bound(1.0, "add_remove", n_samples=50_000, confidence=0.95, rng=2)
    assert audit.epsilon_lower <= audit.poisson_upper


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_a_correct_poisson_run_is_not_flagged(relation):
    """The same auditor on correct Poisson runs: its bound stays below their own PLD accounting."""
    audit = shuffle_whitebox_audit(0.75, relation=relation, sampling="poisson", runs=500, rng=5, **SETTING)
    assert audit.epsilon_lower <= audit.poisson_upper


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="sampling"):
        shuffle_whitebox_audit(1.0, batches_per_epoch=4, epochs=1, sampling="fixed", rng=0)
    with pytest.raises(ValueError, match="runs"):
        shuffle_whitebox_audit(1.0, batches_per_epoch=4, epochs=1, runs=2, rng=0)
    with pytest.raises(TypeError, match="rng"):
        shuffle_whitebox_audit(1.0, batches_per_epoch=4, epochs=1)
    with pytest.raises(ValueError, match="batches_per_epoch"):
        shuffle_audit_data(1, 4)


def test_the_figure_draws_the_audit_points_beside_the_curves():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dpedu.lab.plotting.shuffle import plot_shuffle_gap
    fig, ax = plt.subplots(figsize=(7.0, 3.5))
    plot_shuffle_gap([0.5, 1.0], [17.3, 3.85], [13.2, 3.09], [22.2, 8.88], delta=1e-4, audits=([1.0], [2.5]), ax=ax)
    assert len(ax.lines) == 4 and list(ax.lines[-1].get_xdata()) == [1.0]
    assert any("white-box audit" in t.get_text() for t in ax.get_legend().get_texts())
    with pytest.raises(ValueError, match="audits"):
        plot_shuffle_gap([0.5, 1.0], [1, 1], [1, 1], [1, 1], delta=1e-4, audits=([1.0], [2.5, 1.0]), ax=ax)
    plt.close(fig)


@pytest.mark.parametrize("bad, error", [(["a"], TypeError), ([[1.0]], ValueError), ([float("nan")], ValueError)])
def test_shuffle_gap_refuses_bad_noise_multipliers_by_name(bad, error):
    from dpedu.lab.audit.shuffle import shuffle_gap

    with pytest.raises(error, match="noise_multipliers"):
        shuffle_gap(bad, batches_per_epoch=10, epochs=1, delta=1e-3, rng=0)
