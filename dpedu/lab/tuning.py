r"""``PrivateHyperparameterSearch``: random search over ``DPLogisticRegression`` that pays for its tuning.

A scikit-learn-style search whose ``fit`` is :func:`dpedu.lab.selection.private_selection` (docs/math.md §23):
it splits the private data at random into a training and a validation part (or, with
``validation_fraction=0``, trains and scores on all of it), draws K from the chosen distribution, trains K
models with random settings, scores each by a **Laplace-noised count of correct predictions on the private
validation part** (a count changes by at most 1 when one record is added or removed, whatever the model:
:math:`\Delta_1 = 1`), and keeps only the best. ``epsilon_`` is the RDP accountant's epsilon for
the *whole* search, tuning included.

Only settings that leave each run's privacy unchanged are searched: ``clip_norm``, ``learning_rate``,
``lr_schedule`` and ``fit_intercept`` (the noise multiplier is calibrated from the per-run budget, not
from these). The per-run budget (``epsilon``, ``delta``, ``epochs``, ``sampling_rate``, ...) goes in
``estimator_params`` and is the same for every run, as the theorem requires.

>>> from dpedu.textbook.datasets import make_toy
>>> X, y = make_toy(n=1500, d=3, rng=0)
>>> search = PrivateHyperparameterSearch({"learning_rate": [1.0, 4.0], "clip_norm": [0.5, 1.0]}, mean_trials=3,
...                                      estimator_params={"epsilon": 0.5, "epochs": 2}, random_state=0).fit(X, y)
>>> sorted(search.best_params_), bool(search.epsilon_ > 0.5), bool(search.score(X, y) > 0.7)
(['clip_norm', 'learning_rate'], True, True)
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ..accountants import LaplaceEvent, RepeatAndSelectEvent, account
from ..accountants.calibrate import monotone_search
from .estimator import DPLogisticRegression
from ..ground.events import gaussian_step_event
from ..textbook.mechanisms import laplace_mechanism
from .selection import private_selection
from ..ground.validation import (
    check_delta, check_epsilon, check_in_interval, check_positive_int, check_rng, check_sampling_rate
)

__all__ = ["PrivateHyperparameterSearch", "SEARCHABLE", "run_ledger", "search_noise_multiplier"]

#: DPLogisticRegression parameters the search may vary: none of them changes a run's privacy ledger.
SEARCHABLE = ("clip_norm", "learning_rate", "lr_schedule", "fit_intercept")
#: Parameters the search sets itself: each run's generator, and no per-run budget (the search is one release).
_SET_BY_SEARCH = ("random_state", "budget")


def run_ledger(noise_multiplier, sampling_rate, steps, score_epsilon):
    """One DP-SGD run and its Laplace-noised score: ``[(step event, T), (LaplaceEvent(eps_s), 1)]``."""
    return [(gaussian_step_event(noise_multiplier, sampling_rate), steps), (LaplaceEvent(score_epsilon), 1)]


def search_noise_multiplier(target_epsilon, *, sampling_rate, steps, score_epsilon, mean_trials, shape=1.0,
                            delta=1e-5, rtol=1e-3):
    r"""The smallest per-run noise multiplier z whose private selection costs at most ``target_epsilon`` in total.

    The search is :math:`K` runs of :func:`run_ledger` (z, q, T, :math:`\varepsilon_s`) with
    :math:`\mathbb E[K]` = ``mean_trials`` and the given ``shape``, accounted as one
    :class:`~dpedu.ground.events.RepeatAndSelectEvent` by RDP at ``delta`` (docs/math.md §23). Epsilon falls as z
    grows, so :func:`dpedu.accountants.calibrate.monotone_search` bisects; the z returned was evaluated and is within the
    target. Pass it as ``estimator_params={"noise_multiplier": z, ...}`` of :class:`PrivateHyperparameterSearch`
    with the same ``sampling_rate``, T = ``steps_from_epochs(epochs, sampling_rate)``, ``score_epsilon``,
    ``mean_trials`` and ``shape``: its ``epsilon_`` is then at most ``target_epsilon``.

    Returns ``inf`` when no noise is enough (the scores alone exceed the target).

    >>> z = search_noise_multiplier(1.0, sampling_rate=0.01, steps=1000, score_epsilon=0.05, mean_trials=10)
    >>> event = RepeatAndSelectEvent(run_ledger(z, 0.01, 1000, 0.05), 10, 1.0)
    >>> bool(account([(event, 1)], "rdp", delta=1e-5).epsilon <= 1.0)
    True
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    score_epsilon = check_epsilon(score_epsilon, "score_epsilon")
    delta = check_delta(delta)
    sampling_rate, steps = check_sampling_rate(sampling_rate), check_positive_int(steps, "steps")
    RepeatAndSelectEvent(run_ledger(1.0, sampling_rate, steps, score_epsilon), mean_trials, shape)  # checks both

    def feasible(z):
        event = RepeatAndSelectEvent(run_ledger(z, sampling_rate, steps, score_epsilon), mean_trials, shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")             # an order at the grid's edge only makes epsilon larger
            return account([(event, 1)], "rdp", delta=delta, strict=True).epsilon <= target_epsilon

    return monotone_search(feasible, 1.0, feasible_when="large", lowest=1e-3, highest=1e4, rtol=rtol,
                           at_limit=lambda z, ok: z if ok else math.inf)


class _LogisticRun:
    """One run: fit on the training part, score by a noisy count of correct validation predictions."""

    def __init__(self, params, X_train, y_train, X_valid, y_valid, score_epsilon, run_ledger):
        self.params, self.score_epsilon, self.run_ledger = params, score_epsilon, run_ledger
        self.X_train, self.y_train, self.X_valid, self.y_valid = X_train, y_train, X_valid, y_valid

    def __call__(self, config, rng):
        model = DPLogisticRegression(**self.params, **config, random_state=rng).fit(self.X_train, self.y_train)
        if model.ledger_ != self.run_ledger:  # pragma: no cover - the estimator's planned_run is what fit runs
            raise RuntimeError(f"internal error: the run reported {model.ledger_}, the search planned {self.run_ledger}")
        correct = int(np.sum(model.predict(self.X_valid) == self.y_valid))
        score = laplace_mechanism(float(correct), l1_sensitivity=1.0, epsilon=self.score_epsilon, rng=rng)
        return model, score, model.ledger_ + [(LaplaceEvent(self.score_epsilon), 1)]


class PrivateHyperparameterSearch(ClassifierMixin, BaseEstimator):
    r"""Random search over :class:`~dpedu.lab.estimator.DPLogisticRegression` by private selection.

    Parameters
    ----------
    param_distributions : dict
        ``{name: list of values or scipy.stats distribution}`` for names in :data:`SEARCHABLE`.
    mean_trials : float, default 10.0
        :math:`\mathbb E[K]`, the mean number of trainings.
    shape : float, default 1.0
        Distribution of K: :math:`\eta` of the truncated negative binomial (1 geometric, 0
        logarithmic, any value in (-1, inf)), or ``math.inf`` for Poisson (docs/math.md §23.1).
    estimator_params : dict, optional
        Fixed :class:`DPLogisticRegression` parameters of every run (``epsilon`` is the per-run training
        budget, ``delta`` also the delta of ``epsilon_``). Not ``random_state`` or ``budget``.
    score_epsilon : float, default 0.1
        Epsilon of each run's Laplace-noised validation count.
    validation_fraction : float in [0, 1), default 0.2
        Each record goes to the validation part with this probability, independently. ``0``: no split, each
        run trains on all the records and is scored on the same records. That is still private: the score is
        a second mechanism run on the data after the training (adaptive composition), its count has
        sensitivity 1 for any model, and both are in each run's ledger. It is an optimistic estimate of
        accuracy, but only slightly: a private model cannot fit its training records much better than new
        ones (Dwork et al. 2015, "Generalization in adaptive data analysis"). It spares the trainings the
        records a split would hold out (docs/math.md §23.5).
    n_jobs : int, default 1
        Trainings in parallel; the result does not depend on it.
    random_state : None, int, SeedSequence or Generator
        The same int gives the same split, K, configurations, models and scores.

    Attributes
    ----------
    best_params_ : dict or None
        The selected settings (``None`` if a Poisson K was 0: nothing was trained).
    best_estimator_ : DPLogisticRegression or None
    best_score_ : float or None
        The selected run's noisy number of correct validation predictions.
    epsilon_ : float
        Epsilon of the whole search at ``delta_`` (RDP accountant; Papernot & Steinke 2022).
    run_epsilon_ : float
        Epsilon of one run (training and score) by the same accountant, for comparison.
    ledger_ : list
        ``[(RepeatAndSelectEvent(run ledger, mean_trials, shape), 1)]``.
    classes_ : ndarray
    """

    def __init__(self, param_distributions, *, mean_trials=10.0, shape=1.0, estimator_params=None,
                 score_epsilon=0.1, validation_fraction=0.2, n_jobs=1, random_state=None):
        self.param_distributions = param_distributions
        self.mean_trials = mean_trials
        self.shape = shape
        self.estimator_params = estimator_params
        self.score_epsilon = score_epsilon
        self.validation_fraction = validation_fraction
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _checked_params(self):
        params = dict(self.estimator_params or {})
        for name in params:
            if name in _SET_BY_SEARCH:
                raise ValueError(f"estimator_params must not set {name!r}: the search draws each run's generator, "
                                 f"and the whole search is one release (charge its ledger_ to a budget instead)")
        if not isinstance(self.param_distributions, dict) or not self.param_distributions:
            raise TypeError(f"param_distributions must be a non-empty dict; got {self.param_distributions!r}")
        for name in self.param_distributions:
            if name not in SEARCHABLE:
                raise ValueError(f"param_distributions may vary only {', '.join(SEARCHABLE)} (settings that keep "
                                 f"every run the same private mechanism); got {name!r}. Fix the per-run budget "
                                 f"in estimator_params")
            if name in params:
                raise ValueError(f"{name!r} is both searched and fixed in estimator_params")
        DPLogisticRegression(**params)                  # an unknown name raises TypeError here
        if params.get("noise_multiplier", None) == 0:
            raise ValueError("estimator_params noise_multiplier=0 trains without privacy; private selection needs "
                             "private runs")
        return params

    def fit(self, X, y):
        """Split, run the private selection, keep the best run; ``epsilon_`` covers the whole search."""
        params = self._checked_params()
        score_epsilon = check_epsilon(self.score_epsilon, "score_epsilon")
        fraction = check_in_interval(self.validation_fraction, "validation_fraction", 0.0, 1.0,
                                     low_open=False, high_open=True)
        rng = check_rng(self.random_state, "random_state")
        X, y = np.asarray(X), np.asarray(y)
        if X.ndim != 2 or len(X) != len(y):
            raise ValueError(f"X must be 2-D with one row per label in y; got X {X.shape}, y {y.shape}")
        if fraction == 0:                               # no split: train and score on every record
            X_train, y_train, X_valid, y_valid = X, y, X, y
        else:
            in_validation = rng.random(len(X)) < fraction
            X_train, y_train = X[~in_validation], y[~in_validation]
            X_valid, y_valid = X[in_validation], y[in_validation]
        base = DPLogisticRegression(**params)
        training = base.planned_run(len(X_train)).ledger   # the shared DP-SGD plan: what every run's fit reports
        run = _LogisticRun(params, X_train, y_train, X_valid, y_valid, score_epsilon, training)
        ledger_of_run = training + [(LaplaceEvent(score_epsilon), 1)]
        result = private_selection(run, self.param_distributions, ledger_of_run, mean_trials=self.mean_trials,
                                   shape=self.shape, rng=rng, n_jobs=self.n_jobs)
        delta = base.get_params()["delta"]
        ledger = [(result.event, 1)]
        vars(self).update(                               # all together, after everything succeeded
            best_params_=result.config, best_estimator_=result.model, best_score_=result.score, ledger_=ledger,
            epsilon_=account(ledger, "rdp", delta=delta, strict=True).epsilon,
            run_epsilon_=account(ledger_of_run, "rdp", delta=delta, strict=True).epsilon,
            delta_=delta, classes_=np.unique(y))
        return self

    def _selected(self):
        if not hasattr(self, "ledger_"):
            raise ValueError("this PrivateHyperparameterSearch is not fitted yet; call fit(X, y) first")
        if self.best_estimator_ is None:
            raise ValueError("the search trained nothing (a Poisson number of runs came out 0): there is no model")
        return self.best_estimator_

    def predict(self, X):
        """Predictions of the selected model."""
        return self._selected().predict(X)

    def predict_proba(self, X):
        """Class probabilities of the selected model."""
        return self._selected().predict_proba(X)

    def decision_function(self, X):
        """Scores of the selected model."""
        return self._selected().decision_function(X)
