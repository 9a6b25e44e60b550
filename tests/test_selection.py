"""private_selection and PrivateHyperparameterSearch: the algorithm, its reproducibility, its refusals (docs/math.md §23)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpedu.accountants import GaussianEvent, LaplaceEvent, RepeatAndSelectEvent, account
from dpedu.accountants.analysis.trials import sample_trials
from dpedu.textbook.datasets import make_toy
from dpedu.lab.selection import Selection, private_selection, sample_config
from dpedu.lab.tuning import SEARCHABLE, PrivateHyperparameterSearch

RUN = [(GaussianEvent(2.0), 1)]
SPACE = {"x": [0.0, 1.0, 2.0, 3.0], "y": stats.uniform(0, 1)}


class Recorder:
    """A toy run that records each call: score = x + y + noise, model = the config."""

    def __init__(self):
        self.calls = []

    def __call__(self, config, rng):
        score = config["x"] + config["y"] + rng.normal(0, 0.1)
        self.calls.append((dict(config), score))
        return dict(config), score, RUN


def toy_run(config, rng):
    return dict(config), config["x"] + rng.normal(0, 0.1), RUN


@pytest.mark.parametrize("shape", [0.0, 1.0, 2.0, math.inf])
def test_k_runs_are_made_and_the_best_is_released(shape):
    recorder = Recorder()
    result = private_selection(recorder, SPACE, RUN, mean_trials=5, shape=shape, rng=42)
    assert len(recorder.calls) == sample_trials(5.0, shape, np.random.default_rng(42))
    assert result.event == RepeatAndSelectEvent(RUN, 5.0, shape)
    if recorder.calls:
        best_config, best_score = max(recorder.calls, key=lambda call: call[1])
        assert (result.config, result.score, result.model) == (best_config, best_score, best_config)
    assert not hasattr(result, "trials") and set(vars(result)) == {"config", "model", "score", "event"}


def test_same_seed_same_result_for_any_n_jobs():
    first = private_selection(toy_run, {"x": [0.0, 1.0, 2.0]}, RUN, mean_trials=6, rng=3)
    assert first == private_selection(toy_run, {"x": [0.0, 1.0, 2.0]}, RUN, mean_trials=6, rng=3)
    assert first == private_selection(toy_run, {"x": [0.0, 1.0, 2.0]}, RUN, mean_trials=6, rng=3, n_jobs=2)


def test_a_poisson_k_of_zero_releases_nothing():
    seed = next(s for s in range(100) if sample_trials(1.0, math.inf, np.random.default_rng(s)) == 0)
    recorder = Recorder()
    result = private_selection(recorder, SPACE, RUN, mean_trials=1.0, shape=math.inf, rng=seed)
    assert recorder.calls == [] and result == Selection(None, None, None, RepeatAndSelectEvent(RUN, 1.0, math.inf))


def test_a_run_with_another_ledger_is_refused_naming_its_config():
    def greedy(config, rng):
        return None, 1.0, [(GaussianEvent(0.5), 1)] if config["x"] == 2.0 else RUN

    with pytest.raises(ValueError, match=r"config \{'x': 2.0\}.*same private mechanism"):
        private_selection(greedy, {"x": [2.0]}, RUN, mean_trials=3, rng=0)


@pytest.mark.parametrize("score,kind", [(float("nan"), ValueError), (math.inf, ValueError), ("high", TypeError),
                                        (True, TypeError)])
def test_bad_scores_are_refused(score, kind):
    with pytest.raises(kind, match="score"):
        private_selection(lambda config, rng: (None, score, RUN), {"x": [1]}, RUN, mean_trials=3, rng=0)


def test_bad_arguments_are_refused_before_any_run():
    recorder = Recorder()
    with pytest.raises(ValueError, match="mean"):
        private_selection(recorder, SPACE, RUN, mean_trials=1.0, rng=0)
    with pytest.raises(ValueError, match="shape"):
        private_selection(recorder, SPACE, RUN, mean_trials=5, shape=-2, rng=0)
    with pytest.raises(TypeError, match="train"):
        private_selection("train", SPACE, RUN, mean_trials=5, rng=0)
    with pytest.raises(TypeError, match="search_space"):
        private_selection(recorder, ["x"], RUN, mean_trials=5, rng=0)
    with pytest.raises(TypeError, match=r"search_space\['x'\]"):
        private_selection(recorder, {"x": []}, RUN, mean_trials=5, shape=math.inf, rng=0)
    with pytest.raises(TypeError, match="ledger"):
        private_selection(recorder, SPACE, "run", mean_trials=5, rng=0)
    with pytest.raises(TypeError, match=r"\(model, score, ledger\)"):
        private_selection(lambda config, rng: 1.0, {"x": [1]}, RUN, mean_trials=5, rng=0)
    assert recorder.calls == []


def test_sample_config_draws_from_lists_distributions_and_callables():
    rng = np.random.default_rng(0)
    config = sample_config(SPACE, rng)
    assert config["x"] in SPACE["x"] and 0 <= config["y"] <= 1
    assert sample_config(lambda g: {"z": g.integers(3)}, rng).keys() == {"z"}
    with pytest.raises(TypeError, match=r"search_space\['x'\]"):
        sample_config({"x": []}, rng)
    with pytest.raises(TypeError, match="must return a dict"):
        sample_config(lambda g: 3, rng)


# --- the scikit-learn search -----------------------------------------------------------------------------

X, Y = make_toy(n=1200, d=3, rng=1)
FIXED = {"epsilon": 0.5, "epochs": 2}


def search(**options):
    settings = dict(mean_trials=3, estimator_params=FIXED, random_state=0)
    settings.update(options)
    return PrivateHyperparameterSearch({"learning_rate": [1.0, 4.0], "clip_norm": [0.5, 1.0]}, **settings)


def test_epsilon_covers_the_tuning_and_is_the_rdp_epsilon_of_the_event():
    fitted = search().fit(X, Y)
    (event, count), = fitted.ledger_
    assert isinstance(event, RepeatAndSelectEvent) and count == 1 and event.mean == 3.0
    assert event.run_ledger[-1] == (LaplaceEvent(0.1), 1)
    assert fitted.epsilon_ == account(fitted.ledger_, "rdp", delta=1e-5).epsilon
    assert fitted.run_epsilon_ < fitted.epsilon_
    assert set(fitted.best_params_) == {"learning_rate", "clip_norm"}
    assert fitted.best_estimator_.learning_rate_ == fitted.best_params_["learning_rate"]
    assert fitted.score(X, Y) > 0.7


def test_the_search_repeats_with_the_seed_for_any_n_jobs():
    first = search().fit(X, Y)
    for other in (search().fit(X, Y), search(n_jobs=2).fit(X, Y)):
        assert other.best_params_ == first.best_params_ and other.best_score_ == first.best_score_
        assert np.array_equal(other.best_estimator_.coef_, first.best_estimator_.coef_)


def test_validation_fraction_zero_trains_and_scores_on_every_record():
    fitted = search(validation_fraction=0.0, score_epsilon=50.0).fit(X, Y)
    model = fitted.best_estimator_
    assert model.n_samples_ == len(X)                    # no record held out of the training
    correct = int(np.sum(model.predict(X) == Y))         # the score counts the same records (Laplace scale 0.02)
    assert abs(fitted.best_score_ - correct) < 1.0
    assert fitted.ledger_[0][0].run_ledger[-1] == (LaplaceEvent(50.0), 1)   # and is paid for in every run
    split = search(validation_fraction=0.2, score_epsilon=50.0).fit(X, Y)
    assert split.best_estimator_.n_samples_ < len(X) and split.best_score_ < 0.3 * len(X)


def test_a_poisson_search_that_trained_nothing_says_so():
    seed = next(s for s in range(200) if _poisson_zero_after_split(s))
    fitted = search(shape=math.inf, mean_trials=1.0, random_state=seed).fit(X, Y)
    assert fitted.best_estimator_ is None and fitted.epsilon_ > 0
    with pytest.raises(ValueError, match="trained nothing"):
        fitted.predict(X)


def _poisson_zero_after_split(seed):
    rng = np.random.default_rng(seed)
    rng.random(len(X))                                   # the split is drawn first
    return sample_trials(1.0, math.inf, rng) == 0


@pytest.mark.parametrize("options,kind,word", [
    (dict(param_distributions={"epsilon": [1.0, 2.0]}), ValueError, "may vary only"),
    (dict(estimator_params={"random_state": 3}), ValueError, "random_state"),
    (dict(estimator_params={"budget": None}), ValueError, "budget"),
    (dict(estimator_params={"clip_norm": 1.0}), ValueError, "both searched and fixed"),
    (dict(estimator_params={"no_such_parameter": 1.0}), TypeError, "no_such_parameter"),
    (dict(validation_fraction=1.0), ValueError, "validation_fraction"),
    (dict(validation_fraction=-0.1), ValueError, "validation_fraction"),
    (dict(score_epsilon=0.0), ValueError, "score_epsilon"),
    (dict(mean_trials=0.5), ValueError, "mean"),
    (dict(estimator_params={"noise_multiplier": 0.0}), ValueError, "noise_multiplier=0"),
])
def test_the_search_refuses_by_name(options, kind, word):
    space = options.pop("param_distributions", {"learning_rate": [1.0, 4.0], "clip_norm": [0.5, 1.0]})
    settings = dict(mean_trials=3, estimator_params=FIXED, random_state=0)
    settings.update(options)
    estimator = PrivateHyperparameterSearch(space, **settings)
    with pytest.raises(kind, match=word):
        estimator.fit(X, Y)
    assert not hasattr(estimator, "epsilon_")


def test_searchable_settings_keep_the_run_ledger():
    assert set(SEARCHABLE) == {"clip_norm", "learning_rate", "lr_schedule", "fit_intercept"}
    with pytest.raises(ValueError, match="not fitted"):
        search().predict(X)
