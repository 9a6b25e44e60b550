"""The final-model audit (docs/math.md §28.7) and its figure (dpedu.lab.plotting.plot_last_iterate)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from dpedu.textbook.learners import ProjectedStep, project_to_ball  # noqa: E402
from dpedu.textbook.models import LogisticModel  # noqa: E402
from dpedu.lab.plotting import plot_last_iterate  # noqa: E402
from dpedu.lab.audit.data import make_audit_data  # noqa: E402
from dpedu.lab.audit.last_iterate import (GradientCanaryStep, last_iterate_audit,  # noqa: E402
                                               last_iterate_bounds)
from dpedu.textbook.training import dp_sgd_step, training_data  # noqa: E402

SETTINGS = dict(noise_multiplier=1.0, sampling_rate=1.0, learning_rate=4.0, radius=0.1)


def _batch(with_canary):
    X, y = make_audit_data(n=6, d=2, rng=0)
    if with_canary:
        X, y = np.vstack([X, [0.0, 0.0, 1.0]]), np.append(y, -1.0)
    return training_data(X, y)


def test_the_gradient_canary_is_a_linear_loss_at_full_norm():
    settings = dict(model=LogisticModel(3), clip_norm=1.0, noise_multiplier=1.0, expected_batch_size=7.0,
                    learning_rate=2.0)
    theta = np.array([0.02, -0.01, 0.03])
    step = ProjectedStep(0.05, l2=0.1)
    got = GradientCanaryStep(step)(theta, _batch(True), rng=np.random.default_rng(1), **settings)
    noisy = dp_sgd_step(theta, _batch(False), rng=np.random.default_rng(1), **settings)
    canary_gradient = np.array([0.0, 0.0, 1.0])                       # -y C x / |x| with y = -1, C = 1
    expected = project_to_ball(noisy - 2.0 * canary_gradient / 7.0 - 2.0 * 0.1 * theta, 0.05)
    assert np.allclose(got, expected)
    # without the canary in the batch it is the projected step itself, draw for draw
    plain = step(theta, _batch(False), rng=np.random.default_rng(4), **settings)
    assert np.array_equal(GradientCanaryStep(step)(theta, _batch(False), rng=np.random.default_rng(4), **settings),
                          plain)


def test_bounds_are_ordered_as_theory_says():
    composition, heuristic, proven = last_iterate_bounds((1, 10, 100), dataset_size=50, **SETTINGS)
    assert np.all(proven <= composition + 1e-12)
    assert np.allclose(heuristic, composition)                        # a full batch: the linear pair is composition
    composition, heuristic, proven = last_iterate_bounds((10, 100), dataset_size=200, noise_multiplier=1.0,
                                                         sampling_rate=0.1, learning_rate=3.0, radius=0.3)
    assert np.all(heuristic < composition) and np.all(proven <= composition)


def test_audit_is_reproducible_and_below_the_upper_bounds():
    X, y = make_audit_data(n=30, d=2, rng=0)
    a = last_iterate_audit(0.01 * X, y, steps=(2, 8), runs=30, rng=3, **SETTINGS)
    b = last_iterate_audit(0.01 * X, y, steps=(8, 2), runs=30, rng=3, **SETTINGS)
    assert a.steps.tolist() == [2, 8] and np.array_equal(a.epsilon_lower, b.epsilon_lower)
    assert np.array_equal(a.scores_in, b.scores_in) and a.scores_in.shape == (30, 2)
    assert a.consistent and np.all(a.epsilon_lower >= 0) and "gradient canary" in str(a)
    # the canary is seen: its margin is larger, on average, in the models trained with it
    assert a.scores_in[:, 1].mean() > a.scores_out[:, 1].mean()


def test_a_leaky_run_is_caught():
    """A run with 1000 times less noise than claimed (z = 0.02, claimed 20): its audit exceeds every claimed bound."""
    X, y = make_audit_data(n=30, d=2, rng=0)
    leaky = last_iterate_audit(0.01 * X, y, steps=(5,), runs=60, rng=0, **dict(SETTINGS, noise_multiplier=0.02))
    claimed = last_iterate_bounds((5,), dataset_size=31, **dict(SETTINGS, noise_multiplier=20.0))
    assert leaky.epsilon_lower[0] > max(bound[0] for bound in claimed)


@pytest.mark.parametrize("change, name", [
    (dict(X_last=1.0), "last column"),
    (dict(runs=3), "runs"),
    (dict(canary="loud"), "canary"),
    (dict(steps=list(range(1, 70))), "steps"),
    (dict(steps=(0, 3)), "steps"),
    (dict(delta=2.0), "delta"),
])
def test_bad_input_is_refused_by_name(change, name):
    X, y = make_audit_data(n=10, d=2, rng=0)
    if change.pop("X_last", None):
        X[0, -1] = 1.0
    arguments = dict(steps=(2,), runs=8, **SETTINGS)
    arguments.update(change)
    with pytest.raises((TypeError, ValueError), match=name):
        last_iterate_audit(X, y, **arguments)


def test_the_figure_draws_every_curve_and_says_what_is_left_out():
    ax = Figure().subplots()
    plot_last_iterate([1, 10, 100], [1.0, 3.0, 9.0], [0.8, 2.0, 6.0], [1.0, 2.5, 2.5], delta=1e-5, ax=ax,
                      audits={"gradient canary": ([1, 10, 100], [0.3, 0.0, 0.5])})
    assert len(ax.lines) == 4 and ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert any("proven" in t for t in labels) and any("heuristic" in t for t in labels)
    assert any("1 point at 0 not drawn" in t for t in labels)
    assert ax.lines[3].get_xdata().tolist() == [1.0, 100.0]


@pytest.mark.parametrize("kwargs, error, name", [
    (dict(steps=[10, 1]), ValueError, "steps"),
    (dict(proven=[1.0, -1.0]), ValueError, "proven"),
    (dict(heuristic=[1.0]), ValueError, "heuristic"),
    (dict(audits=[1, 2]), TypeError, "audits"),
    (dict(audits={"a": ([1], [0.1, 0.2])}), ValueError, "audits"),
    (dict(delta=None), TypeError, "delta"),
])
def test_the_figure_refuses_bad_input_by_name(kwargs, error, name):
    arguments = dict(steps=[1, 10], composition=[1.0, 2.0], heuristic=[0.5, 1.0], proven=[1.0, 1.5], delta=1e-5,
                     ax=Figure().subplots())
    arguments.update(kwargs)
    with pytest.raises(error, match=name):
        plot_last_iterate(arguments.pop("steps"), arguments.pop("composition"), arguments.pop("heuristic"),
                          arguments.pop("proven"), **arguments)
