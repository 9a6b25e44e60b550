r"""``DPLogisticRegression``: DP-SGD logistic regression as a scikit-learn estimator.

Pro-active DP (docs/math.md §16-17): the noise multiplier is chosen *before* training from the budget
:math:`(\varepsilon, \delta)`, the sampling rate q and the number of steps T, by bisection on the chosen
accountant; after ``fit`` the estimator reports the :math:`\varepsilon` that accountant certifies
(``epsilon_ <= epsilon``) and the events it performed (``ledger_``), so the run can be re-accounted any way.

It inherits only ``ClassifierMixin`` and ``BaseEstimator`` and keeps scikit-learn's conventions (no
logic in ``__init__``, fitted attributes end in ``_``), so it works with ``clone``, ``Pipeline`` and
``cross_val_score``. Every ``fit`` on the private data is one training run and costs privacy: tuning by
cross-validation spends the budget once per fit (pass ``budget=`` to have that enforced).

>>> from dpedu.textbook.datasets import make_toy
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
from sklearn.utils.validation import check_is_fitted

from ..accountants import calibrate
from ..ground.validation import (
    check_budget, check_delta, check_epsilon, check_positive_int, check_rng, check_sampling_rate
)
from ..accountants import ACCOUNTANT_NAMES, UnsupportedEventError, account
from .estimator_input import MAX_ABS_FEATURE, feature_attributes, fit_data, predict_data
from ..textbook.training import plan_dp_sgd, run_dp_sgd

__all__ = ["DPLogisticRegression", "NonPrivateWarning", "TUNED_DEFAULTS", "TunedDefaults",
           "tuned_defaults", "MAX_ABS_FEATURE"]

#: The sampling schemes the estimator offers: those an accountant covers (under some relation).
ESTIMATOR_SAMPLINGS = ("poisson", "fixed")


class TunedDefaults(NamedTuple):
    """One row of :data:`TUNED_DEFAULTS`: the hyperparameters chosen for total budgets near ``epsilon``."""

    epsilon: float
    sampling_rate: float
    epochs: float
    clip_norm: float
    learning_rate: float


# Chosen NON-privately on a validation split of the Adult *training* set (never the test set) by
# benchmarks/bench_dpsgd_accuracy.py: per total epsilon, the best of its 54-point grid by mean validation accuracy
# over 3 seeds (epsilon 1, 2, 5, 10 chose the last row). Not privacy-accounted: Adult numbers with these defaults
# exclude the tuning (its composed cost: dpedu.lab.experiments.tuning_costs.defaults_provenance_cost).
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


class _Settings(NamedTuple):
    """The checked settings of one ``fit`` that are not part of the DP-SGD plan."""

    epsilon: float
    delta: float
    tuned: TunedDefaults
    budget: object
    rng: np.random.Generator


class NonPrivateWarning(UserWarning):
    """A model was trained without noise (the epsilon = inf sanity setting): it carries no privacy guarantee."""


class DPLogisticRegression(ClassifierMixin, BaseEstimator):
    r"""Binary logistic regression trained by DP-SGD (Abadi et al. 2016, Alg. 1), (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float, default 1.0
        Total epsilon of the training run (all steps together), > 0. When ``noise_multiplier`` is given,
        ``epsilon`` picks the tuned defaults and is the most the run may cost: if the noise multiplier makes
        it cost more (``epsilon_ > epsilon``), ``fit`` refuses with a ValueError naming both, and trains nothing.
    delta : float, default 1e-5
        Total delta, in (0, 1); choose it well below 1/n.
    clip_norm : float, optional
        C: every per-example gradient (of the weights *and* the intercept) is clipped to L2 norm C. A
        public constant: do not set it from the data (e.g. the largest row norm) - that leaks.
        ``inf`` only with ``noise_multiplier=0``. ``None`` (default): the tuned value for ``epsilon``
        (:func:`tuned_defaults`). The tuned values were chosen **non-privately** on a validation split of
        Adult's training data, so accuracies on Adult reported with them do not include the cost of tuning
        (``defaults_used_`` lists the ones a fit took; to tune privately, with the tuning inside
        ``epsilon_``, use :class:`dpedu.lab.tuning.PrivateHyperparameterSearch`).
    epochs : float, optional
        Passes over the data in expectation; the run has ``T = round(epochs / q)`` steps, at most
        :data:`dpedu.ground.validation.MAX_STEPS` (a longer run is refused with a ``ValueError`` naming
        ``epochs``). ``None`` (default): the tuned value (64).
    sampling_rate : float, optional
        Poisson rate q in (0, 1]. Give at most one of ``sampling_rate`` and ``batch_size``; if neither,
        the tuned value for ``epsilon``.
    batch_size : int, optional
        *Expected* batch size L; then q = L / n. (Like Opacus, this treats n as public.)
    learning_rate : float, optional
        eta, applied to the noisy average gradient. ``None`` (default): the tuned value for ``epsilon``.
    lr_schedule : {"linear", "constant"}, default "linear"
        See :func:`dpedu.textbook.training.dp_sgd`; ``"linear"`` decays eta to eta/T.
    fit_intercept : bool, default True
        Append a constant feature 1 (its weight is the intercept). It is part of every gradient, so it is
        clipped and noised like the other weights.
    accountant : str, default "rdp"
        Accountant used to calibrate the noise and to report ``epsilon_`` (any name in
        :data:`dpedu.accountants.ACCOUNTANT_NAMES` that supports ``SubsampledGaussianEvent``).
    noise_multiplier : float, optional
        z. ``None`` (default): calibrated from (epsilon, delta, q, T) by
        :func:`dpedu.accountants.calibrate.noise_multiplier` (the smallest z on the grid whose epsilon is within the
        target). ``0`` (with any ``clip_norm``, e.g. ``inf``): the **non-private** sanity setting;
        ``epsilon_`` is ``inf`` and a :class:`NonPrivateWarning` is raised.
        Given with ``epsilon``, the noise you name is the noise you get, as long as the run stays within
        ``epsilon`` (see ``epsilon``).
    budget : dpedu.accountants.budget.PrivacyBudget, optional
        Charged with the run before training; if it would be overspent, ``fit`` raises
        :class:`~dpedu.accountants.budget.BudgetExceededError` and trains nothing. Shared, not copied, by ``clone``.
    random_state : None, int, SeedSequence or numpy.random.Generator
        Source of sampling and noise; the same int gives the same model.
    relation : {"add_remove", "replace_one"}, default "add_remove"
        The neighbouring relation of the guarantee (docs/math.md §1.2, §22). The noise is calibrated, and
        ``epsilon_`` reported, for it; an ``accountant`` that cannot account the run under it is refused by
        name before training (e.g. replace-one Poisson sampling: ``accountant="pld"``).
    sampling : {"poisson", "fixed"}, default "poisson"
        Poisson sampling at rate q, or batches of exactly ``round(q n)`` records drawn uniformly without
        replacement at every step (the RDP accountant covers these under ``relation="replace_one"``); see
        :func:`dpedu.textbook.training.dp_sgd`. Schemes no accountant covers are not offered here.
    target_quantile : float in (0, 1), optional
        Adaptive clipping (Andrew et al. 2021; docs/math.md §24): ``clip_norm`` is the initial C, which then
        follows this quantile of the gradient norms; the privacy is the same (the count's noise is paid for
        by a little more noise on the gradients). ``None`` (default): a fixed clip norm. For logistic
        regression a median collapses C; choosing the quantile: docs/math.md §24.3.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class (+1 in the math).
    noise_multiplier_ : float
        The z used.
    sampling_rate_, epochs_, clip_norm_, learning_rate_ : float
        The values used (the tuned defaults where the parameter was ``None``); with ``target_quantile``,
        ``clip_norm_`` is the initial C (``clip_norms_`` holds every step's).
    steps_ : int
    epsilon_ : float
        The epsilon the chosen accountant certifies at ``delta`` for this run (``inf`` if non-private).
    ledger_ : list of (event, count) or None
        ``[(SubsampledGaussianEvent(z, q), T)]`` (``GaussianEvent(z)`` when q = 1); ``None`` if non-private.
        Account it another way with ``dpedu.accountants.compare(clf, delta)``.
    losses_ : ndarray
        Mean training loss once per epoch: a diagnostic on the private data, not privatised.
    clip_norms_ : ndarray
        The clip norm of every step (constant unless ``target_quantile`` is given).
    n_features_in_ : int
    n_samples_ : int
        The number of training rows (``privacy_statement_`` reports it).
    defaults_used_ : tuple of str
        The parameters taken from :data:`TUNED_DEFAULTS` (left ``None``); empty when all were given.

    Notes
    -----
    ``fit`` is atomic: a failed fit (bad input, refused budget) leaves every fitted attribute as it was.
    X must be real, 2-D, finite and at most :data:`MAX_ABS_FEATURE` in absolute value; y must hold two
    labels of one type (all strings or all numbers).

    Add/remove neighbours and Poisson sampling by default (``relation``, ``sampling``). The privacy covers
    ``coef_``/``intercept_`` and everything computed from them; ``losses_`` are not private.
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, clip_norm=None, epochs=None, sampling_rate=None, batch_size=None,
                 learning_rate=None, lr_schedule="linear", fit_intercept=True, accountant="rdp",
                 noise_multiplier=None, budget=None, random_state=None, relation="add_remove", sampling="poisson",
                 target_quantile=None):
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
        self.relation = relation
        self.sampling = sampling
        self.target_quantile = target_quantile

    # --- scikit-learn tags: binary only ----------------------------------------------------------

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

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

    def _checked_hyperparameters(self):
        """The settings the DP-SGD plan does not check (no data looked at, nothing stored)."""
        epsilon = check_epsilon(self.epsilon)
        if self.accountant not in ACCOUNTANT_NAMES:
            raise ValueError(f"accountant must be one of {', '.join(ACCOUNTANT_NAMES)}; got {self.accountant!r}")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be True or False; got {self.fit_intercept!r}")
        if not isinstance(self.sampling, str) or self.sampling not in ESTIMATOR_SAMPLINGS:
            raise ValueError(f"sampling must be one of {ESTIMATOR_SAMPLINGS} (the schemes an accountant can certify: "
                             f"the estimator reports epsilon_); got {self.sampling!r}. dpedu.textbook.training.dp_sgd runs "
                             f"the others")
        return _Settings(epsilon, check_delta(self.delta), tuned_defaults(epsilon), check_budget(self.budget),
                         check_rng(self.random_state, "random_state"))  # named as the user knows it

    def _run_epsilon(self, ledger, delta):
        """Epsilon of ``ledger`` at ``delta`` by the estimator's accountant (the one accounting call)."""
        if ledger is None:
            return math.inf
        result = account(ledger, self.accountant, delta=delta, strict=True)
        result.reissue_warnings(stacklevel=3)
        return result.epsilon

    def _plan(self, settings, n):
        """The :class:`~dpedu.textbook.training.DPSGDPlan` of the run (noise calibrated to its steps) and its epsilon."""
        tuned, epsilon, delta = settings.tuned, settings.epsilon, settings.delta
        z = self.noise_multiplier
        plan = plan_dp_sgd(
            n, noise_multiplier=0.0 if z is None else z, sampling_rate=self._sampling_rate(n, tuned.sampling_rate),
            clip_norm=tuned.clip_norm if self.clip_norm is None else self.clip_norm,
            epochs=tuned.epochs if self.epochs is None else self.epochs,
            learning_rate=tuned.learning_rate if self.learning_rate is None else self.learning_rate,
            lr_schedule=self.lr_schedule, relation=self.relation, sampling=self.sampling,
            target_quantile=self.target_quantile)
        if z is None:
            try:
                z = calibrate.noise_multiplier(target_epsilon=epsilon, target_delta=delta,
                                               sampling_rate=plan.sampling_rate, steps=plan.steps,
                                               accountant=self.accountant, step_event=plan.event_at)
            except UnsupportedEventError:               # the accountant's own message names the event and relation
                raise
            except (ValueError, ZeroDivisionError, OverflowError) as exc:
                raise ValueError(f"no noise reaches epsilon={epsilon!r} at delta={delta!r} for this run "
                                 f"({plan.steps} steps at sampling_rate={plan.sampling_rate:g}): {exc}") from None
            plan = plan.with_noise_multiplier(z)
        run_epsilon = self._run_epsilon(plan.ledger, delta)
        if not plan.private:
            warnings.warn("noise_multiplier=0: this model is NOT private (epsilon_ = inf). It is the sanity "
                          "setting for comparing with non-private training; never publish it as private.",
                          NonPrivateWarning, stacklevel=3)
        elif run_epsilon > epsilon:                    # two settings that disagree: refused, nothing trained
            raise ValueError(f"noise_multiplier={plan.noise_multiplier:g} and epsilon={epsilon:g} conflict: this run "
                             f"would cost epsilon_ = {run_epsilon:.4g} at delta={delta:g} ({self.accountant}). Leave "
                             f"noise_multiplier=None to calibrate the noise to epsilon, or raise epsilon to the cost "
                             f"you accept.")
        return plan, run_epsilon

    def planned_run(self, n_samples):
        """The :class:`~dpedu.textbook.training.DPSGDPlan` ``fit`` runs on ``n_samples`` rows (its ``ledger`` is the
        ``ledger_`` the fit will report); nothing is trained, stored or charged."""
        return self._plan(self._checked_hyperparameters(), check_positive_int(n_samples, "n_samples"))[0]

    def fit(self, X, y):
        """Train by DP-SGD; the budget (if any) is charged before the first step.

        Atomic: everything is checked and computed into local variables, and the fitted attributes are
        set together only after training succeeded. A failed fit (bad X or y, bad hyperparameters, a
        refused budget) leaves the estimator exactly as it was: still fitted with the previous model, or
        not fitted. The budget is charged only after every check passed.
        """
        settings = self._checked_hyperparameters()
        X, classes, y_pm, scratch = fit_data(self, X, y)
        n, d = X.shape
        plan, run_epsilon = self._plan(settings, n)
        design = np.hstack([X, np.ones((n, 1))]) if self.fit_intercept else X
        result = run_dp_sgd(design, y_pm, plan, budget=settings.budget, rng=settings.rng)
        theta = result.theta
        if not np.all(np.isfinite(theta)):             # the run took place (and was charged); store nothing
            raise ValueError("training on X produced non-finite weights (X too large for float64 margins); "
                             "standardise X. Any budget was charged: the run took place.")

        fitted = dict(
            coef_=theta[:d].reshape(1, -1).copy(), intercept_=theta[d:].copy() if self.fit_intercept else np.zeros(1),
            classes_=classes, noise_multiplier_=float(plan.noise_multiplier), sampling_rate_=plan.sampling_rate,
            epochs_=float(settings.tuned.epochs if self.epochs is None else self.epochs),
            clip_norm_=float(plan.clip_norm), learning_rate_=float(plan.learning_rate), steps_=plan.steps,
            ledger_=result.ledger, losses_=result.losses, clip_norms_=result.details.clip_norms,
            epsilon_=run_epsilon, delta_=settings.delta, n_samples_=n,
            defaults_used_=tuple(name for name, value in (("sampling_rate", self.sampling_rate or self.batch_size),
                                 ("epochs", self.epochs), ("clip_norm", self.clip_norm),
                                 ("learning_rate", self.learning_rate)) if value is None))
        fitted.update(feature_attributes(scratch, self))   # scikit-learn's n_features_in_, feature_names_in_
        vars(self).update(fitted)
        return self

    # --- prediction --------------------------------------------------------------------------------

    def decision_function(self, X):
        r"""Scores :math:`\theta\cdot x + b`; positive means ``classes_[1]``. Shape (n,)."""
        X = predict_data(self, X)                        # NotFittedError before fit; X checked by name
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

    @property
    def privacy_statement_(self):
        """What this fit guarantees, every number from an accountant (:func:`dpedu.lab.statement.privacy_statement`)."""
        from .statement import privacy_statement

        check_is_fitted(self)
        return privacy_statement(self, delta=self.delta_, n=self.n_samples_)
