r"""``DPLogisticRegression``: DP-SGD logistic regression as a scikit-learn estimator.

Pro-active DP (docs/math.md §16-17): the noise multiplier is chosen *before* training from the budget
:math:`(\varepsilon, \delta)`, the sampling rate q and the number of steps T, by bisection on the chosen
accountant; after ``fit`` the estimator reports the :math:`\varepsilon` that accountant certifies
(``epsilon_ <= epsilon``) and the events it performed (``ledger_``), so the run can be re-accounted any way.

It inherits only ``ClassifierMixin`` and ``BaseEstimator`` and keeps scikit-learn's conventions (no
logic in ``__init__``, fitted attributes end in ``_``), so it works with ``clone``, ``Pipeline`` and
``cross_val_score``. Every ``fit`` on the private data is one training run and costs privacy: tuning by
cross-validation spends the budget once per fit (pass ``budget=`` to have that enforced).

>>> from dpedu.datasets import make_toy
>>> X, y = make_toy(n=2000, d=3, rng=0)
>>> clf = DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
>>> bool(clf.epsilon_ <= 1.0), clf.coef_.shape, clf.classes_.tolist()
(True, (1, 3), [-1.0, 1.0])
>>> bool(clf.score(X, y) > 0.8)
True
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted

from . import calibrate
from .validation import (
    check_delta,
    check_epsilon,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_rng,
    check_sampling_rate,
)
from .accountants import ACCOUNTANT_NAMES, make_accountant
from .training import LR_SCHEDULES, dp_sgd

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn
    _validate_data = None

__all__ = ["DPLogisticRegression", "NonPrivateWarning", "TUNED_DEFAULTS", "TunedDefaults", "tuned_defaults"]


class TunedDefaults(NamedTuple):
    """One row of :data:`TUNED_DEFAULTS`: the hyperparameters chosen for total budgets near ``epsilon``."""

    epsilon: float
    sampling_rate: float
    epochs: float
    clip_norm: float
    learning_rate: float


# Chosen on a validation split of the Adult *training* set (never the test set) by
# benchmarks/bench_dpsgd_accuracy.py: per total epsilon, the configuration of its grid with the best mean
# validation accuracy (epsilon 1, 2, 5 and 10 all chose the last row). Tuning is not privacy-accounted.
TUNED_DEFAULTS = (
    TunedDefaults(epsilon=0.1, sampling_rate=0.05, epochs=64, clip_norm=0.25, learning_rate=4.0),
    TunedDefaults(epsilon=0.25, sampling_rate=0.01, epochs=64, clip_norm=0.25, learning_rate=4.0),
    TunedDefaults(epsilon=0.5, sampling_rate=0.05, epochs=64, clip_norm=1.0, learning_rate=4.0),
    TunedDefaults(epsilon=1.0, sampling_rate=0.01, epochs=64, clip_norm=1.0, learning_rate=16.0),
)


def tuned_defaults(epsilon):
    """The row of :data:`TUNED_DEFAULTS` whose epsilon is nearest to ``epsilon`` on a log scale.

    Below 0.1 the first row and above 1 the last row are used: more noise wants a smaller clip norm and a
    smaller learning rate, less noise the opposite, and the tuning found no change between epsilon 1 and 10.

    >>> tuned_defaults(0.3).clip_norm, tuned_defaults(8.0).learning_rate
    (0.25, 16.0)
    """
    epsilon = check_epsilon(epsilon)
    return min(TUNED_DEFAULTS, key=lambda row: abs(math.log(epsilon / row.epsilon)))


class NonPrivateWarning(UserWarning):
    """A model was trained without noise (the epsilon = inf sanity setting): it carries no privacy guarantee."""


def _check_fit_data(estimator, X, y):
    """scikit-learn input validation for fit: ``validate_data`` on >= 1.6, ``check_X_y`` before."""
    if _validate_data is not None:
        return _validate_data(estimator, X, y, dtype=np.float64)
    from sklearn.utils.validation import check_X_y  # pragma: no cover

    X, y = check_X_y(X, y, dtype=np.float64)  # pragma: no cover
    estimator.n_features_in_ = X.shape[1]  # pragma: no cover
    return X, y  # pragma: no cover


def _check_predict_data(estimator, X):
    """Validation for predict: same number of features as in fit."""
    if _validate_data is not None:
        return _validate_data(estimator, X, dtype=np.float64, reset=False)
    from sklearn.utils.validation import check_array  # pragma: no cover

    X = check_array(X, dtype=np.float64)  # pragma: no cover
    if X.shape[1] != estimator.n_features_in_:  # pragma: no cover
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
                         f"{estimator.n_features_in_} features as input")
    return X  # pragma: no cover


class DPLogisticRegression(ClassifierMixin, BaseEstimator):
    r"""Binary logistic regression trained by DP-SGD (Abadi et al. 2016, Alg. 1), (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float, default 1.0
        Total epsilon of the training run (all steps together), > 0. Ignored for calibration when
        ``noise_multiplier`` is given.
    delta : float, default 1e-5
        Total delta, in (0, 1); choose it well below 1/n.
    clip_norm : float, optional
        C: every per-example gradient (of the weights *and* the intercept) is clipped to L2 norm C. A
        public constant: do not set it from the data (e.g. the largest row norm) - that leaks.
        ``inf`` only with ``noise_multiplier=0``. ``None`` (default): the tuned value for ``epsilon``
        (:func:`tuned_defaults`, chosen on public grounds: a validation split of Adult's training set).
    epochs : float, optional
        Passes over the data in expectation; the run has ``T = round(epochs / q)`` steps. ``None``
        (default): the tuned value (64).
    sampling_rate : float, optional
        Poisson rate q in (0, 1]. Give at most one of ``sampling_rate`` and ``batch_size``; if neither,
        the tuned value for ``epsilon``.
    batch_size : int, optional
        *Expected* batch size L; then q = L / n. (Like Opacus, this treats n as public.)
    learning_rate : float, optional
        eta, applied to the noisy average gradient. ``None`` (default): the tuned value for ``epsilon``.
    lr_schedule : {"linear", "constant"}, default "linear"
        See :func:`dpedu.training.dp_sgd`; ``"linear"`` decays eta to eta/T.
    fit_intercept : bool, default True
        Append a constant feature 1 (its weight is the intercept). It is part of every gradient, so it is
        clipped and noised like the other weights.
    accountant : str, default "rdp"
        Accountant used to calibrate the noise and to report ``epsilon_`` (any name in
        :data:`dpedu.accountants.ACCOUNTANT_NAMES` that supports ``SubsampledGaussianEvent``).
    noise_multiplier : float, optional
        z. ``None`` (default): calibrated from (epsilon, delta, q, T) by
        :func:`dpedu.calibrate.noise_multiplier` (the smallest z on the grid whose epsilon is within the
        target). ``0`` (with any ``clip_norm``, e.g. ``inf``): the **non-private** sanity setting;
        ``epsilon_`` is ``inf`` and a :class:`NonPrivateWarning` is raised.
    budget : dpedu.budget.PrivacyBudget, optional
        Charged with the run before training; if it would be overspent, ``fit`` raises
        :class:`~dpedu.budget.BudgetExceededError` and trains nothing. Shared, not copied, by ``clone``.
    random_state : None, int, SeedSequence or numpy.random.Generator
        Source of sampling and noise; the same int gives the same model.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class (+1 in the math).
    noise_multiplier_ : float
        The z used.
    sampling_rate_, epochs_, clip_norm_, learning_rate_ : float
        The values used (the tuned defaults where the parameter was ``None``).
    steps_ : int
    epsilon_ : float
        The epsilon the chosen accountant certifies at ``delta`` for this run (``inf`` if non-private).
    ledger_ : list of (event, count) or None
        ``[(SubsampledGaussianEvent(z, q), T)]`` (``GaussianEvent(z)`` when q = 1); ``None`` if non-private.
        Account it another way with ``dpedu.accountants.compare(clf, delta)``.
    losses_ : ndarray
        Mean training loss once per epoch: a diagnostic on the private data, not privatised.
    n_features_in_ : int

    Notes
    -----
    Add/remove neighbours and Poisson sampling, as the accountants assume. The privacy covers
    ``coef_``/``intercept_`` and everything computed from them; ``losses_`` are not private.
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, clip_norm=None, epochs=None, sampling_rate=None, batch_size=None,
                 learning_rate=None, lr_schedule="linear", fit_intercept=True, accountant="rdp",
                 noise_multiplier=None, budget=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.epochs = epochs
        self.sampling_rate = sampling_rate
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.lr_schedule = lr_schedule
        self.fit_intercept = fit_intercept
        self.accountant = accountant
        self.noise_multiplier = noise_multiplier
        self.budget = budget
        self.random_state = random_state

    # --- scikit-learn tags: binary only ----------------------------------------------------------

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"binary_only": True}

    # --- fitting ---------------------------------------------------------------------------------

    def _sampling_rate(self, n, default):
        if self.sampling_rate is not None and self.batch_size is not None:
            raise ValueError(f"give at most one of sampling_rate and batch_size; got sampling_rate={self.sampling_rate!r} "
                             f"and batch_size={self.batch_size!r}")
        if self.batch_size is not None:
            batch_size = check_positive_int(self.batch_size, "batch_size")
            if batch_size > n:
                raise ValueError(f"batch_size must be at most the number of samples {n}; got {batch_size}")
            return batch_size / n
        if self.sampling_rate is not None:
            return check_sampling_rate(self.sampling_rate)
        return default

    def fit(self, X, y):
        """Train by DP-SGD; the budget (if any) is charged before the first step."""
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        tuned = tuned_defaults(epsilon)
        epochs = check_positive(tuned.epochs if self.epochs is None else self.epochs, "epochs")
        clip_norm = tuned.clip_norm if self.clip_norm is None else self.clip_norm
        learning_rate = tuned.learning_rate if self.learning_rate is None else self.learning_rate
        if self.accountant not in ACCOUNTANT_NAMES:
            raise ValueError(f"accountant must be one of {', '.join(ACCOUNTANT_NAMES)}; got {self.accountant!r}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}; got {self.lr_schedule!r}")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be True or False; got {self.fit_intercept!r}")

        random_state = check_rng(self.random_state, "random_state")  # named as the user knows it
        try:
            X, y = _check_fit_data(self, X, y)
        except (ValueError, TypeError) as exc:  # scikit-learn's messages do not always say which argument
            raise (ValueError if isinstance(exc, ValueError) else TypeError)(f"invalid X or y: {exc}") from exc
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y")
        if y_type != "binary":
            raise ValueError(f"Only binary classification is supported. The type of the target is {y_type}.")
        self.classes_, y_index = np.unique(y, return_inverse=True)
        if len(self.classes_) != 2:
            raise ValueError(f"DPLogisticRegression needs exactly 2 classes in y; got {len(self.classes_)} class "
                             f"({self.classes_.tolist()})")
        y_pm = 2.0 * y_index - 1.0                       # classes_[0] -> -1, classes_[1] -> +1
        design = np.hstack([X, np.ones((X.shape[0], 1))]) if self.fit_intercept else X

        n = X.shape[0]
        sampling_rate = self._sampling_rate(n, tuned.sampling_rate)
        steps = max(1, round(epochs / sampling_rate))
        if self.noise_multiplier is None:
            z = calibrate.noise_multiplier(target_epsilon=epsilon, target_delta=delta,
                                           sampling_rate=sampling_rate, steps=steps, accountant=self.accountant)
        else:
            z = check_nonnegative(self.noise_multiplier, "noise_multiplier")
        if z == 0:
            warnings.warn("noise_multiplier=0: this model is NOT private (epsilon_ = inf). It is the sanity "
                          "setting for comparing with non-private training; never publish it as private.",
                          NonPrivateWarning, stacklevel=2)
        result = dp_sgd(design, y_pm, noise_multiplier=z, clip_norm=clip_norm, sampling_rate=sampling_rate,
                        steps=steps, learning_rate=learning_rate, lr_schedule=self.lr_schedule,
                        budget=self.budget, rng=random_state)

        theta = result.theta
        self.coef_ = theta[: X.shape[1]].reshape(1, -1).copy()
        self.intercept_ = theta[X.shape[1] :].copy() if self.fit_intercept else np.zeros(1)
        self.noise_multiplier_ = float(result.details["noise_multiplier"])
        self.sampling_rate_ = sampling_rate
        self.epochs_, self.clip_norm_, self.learning_rate_ = epochs, float(clip_norm), float(learning_rate)
        self.steps_ = steps
        self.ledger_ = result.ledger
        self.losses_ = result.losses
        if result.ledger is None:
            self.epsilon_ = math.inf
        else:
            acc = make_accountant(self.accountant)
            for event, count in result.ledger:
                acc.compose(event, count)
            self.epsilon_ = acc.get_epsilon(delta)
        self.delta_ = delta
        return self

    # --- prediction --------------------------------------------------------------------------------

    def decision_function(self, X):
        r"""Scores :math:`\theta\cdot x + b`; positive means ``classes_[1]``. Shape (n,)."""
        check_is_fitted(self)
        X = _check_predict_data(self, X)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X):
        """The class with the higher probability (``classes_[1]`` when the score is >= 0)."""
        scores = self.decision_function(X)               # checks that the model is fitted
        return self.classes_[(scores >= 0).astype(int)]

    def predict_proba(self, X):
        r"""Columns :math:`1-\sigma(s)` and :math:`\sigma(s)` for ``classes_[0]`` and ``classes_[1]``."""
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, computed stably."""
        s = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, s), -np.logaddexp(0.0, -s)])
