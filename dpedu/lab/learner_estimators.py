r"""Scikit-learn estimators for the learners of :mod:`dpedu.textbook.learners` (docs/math.md §25), each with a
``privacy_statement_``.

* :class:`OutputPerturbationClassifier` - the regularised minimiser plus Gaussian noise (§25.1-25.2);
* :class:`ObjectivePerturbationClassifier` - a random linear term in the objective (§25.3);
* :class:`FactorizedNoiseClassifier` - gradient descent on prefix sums released through a factorisation:
  DP-FTRL's tree, the square root, a banded one, or the identity (§25.4-25.6).

All three are binary logistic regression with an intercept (a constant feature 1, clipped and noised like
the others). Rows of X are first clipped to L2 norm ``row_bound`` (a per-record step: it costs no privacy),
so the Lipschitz constant is :math:`\sqrt{R^2+1}`. ``fit`` is atomic: a refused argument leaves the
estimator as it was. X and y follow :mod:`dpedu.lab.estimator_input` (scikit-learn's conventions, refusals by name);
``random_state`` is checked under its own name before anything is drawn. ``epsilon_`` is :func:`spent_epsilon`, the
smaller of two valid bounds (docs/math.md §25.3), so it never exceeds ``epsilon``. ``tests/test_learner_estimators.py``
runs every one of scikit-learn's estimator checks on all three at epsilon = 1 (none is skipped; the configuration
that makes a randomised estimator pass them, a fixed ``random_state``, is stated there).

What ``relation`` each assumes: output perturbation divides by n, so it claims zero-out (n public) or replace-one and
refuses add/remove (a literal addition or removal also changes n); objective perturbation does not use n; factorised training's b fixed batches are cut from
one random split of the n records, which adding a record would move, so it records zero-out (a record replaced by
one with zero gradient, n public; docs/math.md §1.2, §25.1, §25.3, §25.6).

>>> from dpedu.textbook.datasets import make_toy
>>> X, y = make_toy(n=2000, d=3, rng=0)
>>> clf = FactorizedNoiseClassifier(epsilon=1.0, random_state=0).fit(X, y)
>>> round(clf.epsilon_, 3), bool(clf.score(X, y) > 0.8)
(1.0, True)
>>> OutputPerturbationClassifier(epsilon=1.0, regularization=1e-2, random_state=0).fit(X, y).ledger_
[(GaussianEvent(noise_multiplier=3.730..., relation='zero_out'), 1)]
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..accountants import account
from ..textbook.clipping import L2_clip
from .estimator_input import MAX_ABS_FEATURE, feature_attributes, fit_data, predict_data
from ..ground.gaussian import analytic_noise_multiplier
from ..textbook.learners.convex import objective_perturbation, output_perturbation
from ..textbook.learners.factorization import FACTORIZATIONS, MAX_STEPS_BY_KIND, make_factorization
from ..textbook.learners.ftrl import factorized_gradient_descent
from ..ground.validation import check_choice, check_delta, check_epsilon, check_in_interval, check_positive_int
from ..ground.validation import MAX_STEPS, check_rng

__all__ = ["OutputPerturbationClassifier", "ObjectivePerturbationClassifier", "FactorizedNoiseClassifier",
           "spent_epsilon"]


def spent_epsilon(ledger, delta):
    r"""The epsilon a fit reports at ``delta``: the smaller of two valid upper bounds, the PLD accountant's
    (docs/math.md §15) and basic composition's (docs/math.md §9; where it covers the ledger).

    Both hold for the same run, so the smaller holds. The PLD's grid is pessimistic: for a run calibrated by basic
    composition (objective perturbation: an (ε₁, δ₁) release and a Gaussian at (ε₂, δ₂), ε₁ + ε₂ = ε) it can
    exceed the budget by a little (1.000325 at ε = 1, δ = 1e-9), while basic composition gives ε itself; for one
    Gaussian the two are equal. So ``epsilon_`` never exceeds the ``epsilon`` the fit was given.

    >>> from dpedu.ground.events import EpsilonDeltaEvent, GaussianEvent
    >>> from dpedu.ground.gaussian import analytic_noise_multiplier
    >>> ledger = [(EpsilonDeltaEvent(0.99, 0.99e-9), 1), (GaussianEvent(analytic_noise_multiplier(0.01, 0.01e-9)), 1)]
    >>> round(account(ledger, "pld", delta=1e-9).epsilon, 6), round(spent_epsilon(ledger, 1e-9), 12)
    (1.000325, 1.0)
    """
    tight = account(ledger, "pld", delta=delta, strict=True).epsilon
    basic = account(ledger, "sequential", delta=delta).epsilon      # nan where basic composition does not apply
    return min(tight, basic) if math.isfinite(basic) else tight


class _PrivateLinearClassifier(ClassifierMixin, BaseEstimator):
    """Shared data handling, prediction and the privacy statement; subclasses implement ``_train``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Check everything, train once, then set every fitted attribute together (a refused fit changes nothing)."""
        epsilon, delta = check_epsilon(self.epsilon), check_delta(self.delta)
        row_bound = check_in_interval(self.row_bound, "row_bound", 0.0, MAX_ABS_FEATURE, low_open=True)
        rng = check_rng(self.random_state, "random_state")            # named as the user knows it
        X, classes, y_pm, scratch = fit_data(self, X, y)
        design = np.hstack([L2_clip(X, row_bound), np.ones((X.shape[0], 1))])
        result, fitted = self._train(design, y_pm, epsilon, delta, math.hypot(row_bound, 1.0), rng)
        theta, ledger = result.theta, result.ledger
        fitted.update(coef_=theta[:-1].reshape(1, -1).copy(), intercept_=theta[-1:].copy(), classes_=classes,
                      ledger_=ledger, delta_=delta, n_samples_=X.shape[0], row_bound_=row_bound,
                      epsilon_=spent_epsilon(ledger, delta))
        fitted.update(feature_attributes(scratch, self))
        vars(self).update(fitted)
        return self

    def decision_function(self, X):
        r"""Scores :math:`\theta\cdot x + b` (X clipped to ``row_bound_`` as in training); positive: ``classes_[1]``."""
        X = predict_data(self, X)                       # NotFittedError before fit; X checked by name
        return L2_clip(X, self.row_bound_) @ self.coef_[0] + self.intercept_[0]

    def predict(self, X):
        """``classes_[1]`` where the score is >= 0, else ``classes_[0]``."""
        scores = self.decision_function(X)              # checks that the model is fitted
        return self.classes_[(scores >= 0).astype(int)]

    def predict_proba(self, X):
        """Columns :math:`1-\\sigma(s)` and :math:`\\sigma(s)`."""
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    @property
    def privacy_statement_(self):
        """What this fit guarantees (:func:`dpedu.lab.statement.privacy_statement`)."""
        from .statement import privacy_statement

        check_is_fitted(self)
        return privacy_statement(self, delta=self.delta_, n=self.n_samples_)


class OutputPerturbationClassifier(_PrivateLinearClassifier):
    r"""L2-regularised logistic regression released by output perturbation (docs/math.md §25.1-25.2).

    Parameters
    ----------
    epsilon, delta : float
        The run's budget; the noise is the analytic Gaussian's at the sensitivity
        :math:`gL/(n\Lambda) + 2\gamma/\Lambda` (n, the number of rows, treated as public).
    regularization : float
        :math:`\Lambda` > 0 (per-record scale). Larger: less noise, more bias.
    row_bound : float
        R in (0, :data:`~dpedu.lab.estimator_input.MAX_ABS_FEATURE`]: rows of X are clipped to it (``row_bound_``).
    relation : {"zero_out", "replace_one"}
        Zero-out (default): a record replaced by one that contributes nothing, n public. Add/remove is refused:
        the sensitivity divides by n, which a literal addition or removal changes (docs/math.md §1.2, §25.1).
    tolerance : float
        :math:`\gamma`, the solver's gradient-norm threshold.
    random_state : None, int or Generator
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, regularization=1e-3, row_bound=1.0, relation="zero_out",
                 tolerance=1e-8, random_state=None):
        self.epsilon, self.delta, self.regularization, self.row_bound = epsilon, delta, regularization, row_bound
        self.relation, self.tolerance, self.random_state = relation, tolerance, random_state

    def _train(self, X, y, epsilon, delta, lipschitz, rng):
        result = output_perturbation(X, y, regularization=self.regularization, row_bound=lipschitz, epsilon=epsilon,
                                     delta=delta, relation=self.relation, tolerance=self.tolerance, rng=rng)
        return result, {"sensitivity_": result.sensitivity, "noise_std_": result.noise_std}


class ObjectivePerturbationClassifier(_PrivateLinearClassifier):
    r"""Logistic regression by objective perturbation, (epsilon, delta) form (docs/math.md §25.3).

    ``regularization`` is :math:`\Delta` of the *sum* objective; ``None`` takes the smallest the theorem
    allows, :math:`2\beta/\varepsilon_1` with :math:`\beta = (R^2+1)/4`. A smaller value is refused by name.
    Other parameters as :class:`OutputPerturbationClassifier`; ``output_share`` of the budget pays for the
    solver's residual.
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, regularization=None, row_bound=1.0, relation="add_remove",
                 tolerance=1e-8, output_share=0.01, random_state=None):
        self.epsilon, self.delta, self.regularization, self.row_bound = epsilon, delta, regularization, row_bound
        self.relation, self.tolerance, self.output_share = relation, tolerance, output_share
        self.random_state = random_state

    def _train(self, X, y, epsilon, delta, lipschitz, rng):
        result = objective_perturbation(X, y, epsilon=epsilon, delta=delta, row_bound=lipschitz,
                                        regularization=self.regularization, relation=self.relation,
                                        tolerance=self.tolerance, output_share=self.output_share, rng=rng)
        return result, {"noise_std_": result.noise_std}


class FactorizedNoiseClassifier(_PrivateLinearClassifier):
    r"""Logistic regression by gradient descent on noisy prefix sums (docs/math.md §25.4-25.6).

    Parameters
    ----------
    epsilon, delta : float
        The run is one Gaussian mechanism with multiplier z / sens(C): z is set so that it is exactly
        (epsilon, delta)-DP (the analytic Gaussian).
    factorization : str, default "tree_efficient"
        One of :data:`dpedu.textbook.learners.factorization.FACTORIZATIONS` (``"tree"``/``"tree_efficient"``: DP-FTRL).
    clip_norm : float
        Per-example gradient clip norm.
    batches : int
        Fixed batches per epoch (the minimum separation); at most the number of rows.
    epochs : int
        Passes: ``batches * epochs`` steps, at most 1,000,000 for the identity and the trees and 4,096 for the
        dense ``"square_root"`` and ``"banded"`` (:data:`dpedu.textbook.learners.factorization.MAX_STEPS_BY_KIND`); more is
        refused naming epochs.
    learning_rate : float
    row_bound : float
        In (0, :data:`~dpedu.lab.estimator_input.MAX_ABS_FEATURE`]: rows of X are clipped to it (keeps the features on
        the scale the learning rate expects).
    random_state : None, int or Generator
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, factorization="tree_efficient", clip_norm=1.0, batches=20,
                 epochs=2, learning_rate=1.0, row_bound=1.0, random_state=None):
        self.epsilon, self.delta, self.factorization, self.clip_norm = epsilon, delta, factorization, clip_norm
        self.batches, self.epochs, self.learning_rate = batches, epochs, learning_rate
        self.row_bound, self.random_state = row_bound, random_state

    def _train(self, X, y, epsilon, delta, lipschitz, rng):
        kind = check_choice(self.factorization, "factorization", FACTORIZATIONS)
        n = X.shape[0]
        batches = check_positive_int(self.batches, "batches")
        if batches > n:
            raise ValueError(f"batches must be at most the number of samples (n_samples={n}); got {batches}")
        epochs = check_positive_int(self.epochs, "epochs")
        steps = batches * epochs
        if steps > MAX_STEPS:
            raise ValueError(f"epochs={epochs:,} with batches={batches:,} means {steps:,} steps; at most MAX_STEPS = "
                             f"{MAX_STEPS:,} are allowed (dpedu.ground.validation.MAX_STEPS)")
        if steps > MAX_STEPS_BY_KIND[kind]:
            raise ValueError(f"epochs={epochs:,} with batches={batches:,} means {steps:,} steps, more than the {kind!r} "
                             f"factorization allows (at most {MAX_STEPS_BY_KIND[kind]:,}: it builds dense n x n "
                             f"matrices): lower epochs or batches")
        bands = {"bands": min(batches, 4)} if kind == "banded" else {}
        factorization = make_factorization(kind, steps, **bands)
        sens = factorization.cyclic_sensitivity(batches)
        z = sens * analytic_noise_multiplier(epsilon, delta)
        result = factorized_gradient_descent(X, y, kind=kind, noise_multiplier=z, clip_norm=self.clip_norm,
                                             batches=batches, epochs=epochs, learning_rate=self.learning_rate,
                                             rng=rng)
        return result, {"noise_multiplier_": z, "sensitivity_": sens, "steps_": steps,
                        "clip_norm_": float(self.clip_norm)}
