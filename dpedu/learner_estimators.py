r"""Scikit-learn estimators for the learners of :mod:`dpedu.learners` (docs/math.md §25), each with a
``privacy_statement_``.

* :class:`OutputPerturbationClassifier` - the regularised minimiser plus Gaussian noise (§25.1-25.2);
* :class:`ObjectivePerturbationClassifier` - a random linear term in the objective (§25.3);
* :class:`FactorizedNoiseClassifier` - gradient descent on prefix sums released through a factorisation:
  DP-FTRL's tree, the square root, a banded one, or the identity (§25.4-25.6).

All three are binary logistic regression with an intercept (a constant feature 1, clipped and noised like
the others). Rows of X are first clipped to L2 norm ``row_bound`` (a per-record step: it costs no privacy),
so the Lipschitz constant is :math:`\sqrt{R^2+1}`. ``fit`` is atomic: a refused argument leaves the
estimator as it was. No refusal shows a value or statistic of X or y (complex, non-numeric and non-finite X are
refused by dpedu before scikit-learn, whose messages print the data).

What ``relation="add_remove"`` assumes about n: output perturbation divides by n (n public: a record replaced
by one that contributes nothing; a literal addition or removal also changes n); objective perturbation does not use n (literal add/remove);
factorised training divides each prefix sum by the batch size n / b, and its b fixed batches are cut from a
random permutation of the n records, so its add/remove means a record replaced by one with zero gradient, n
public (docs/math.md §25.1, §25.3, §25.6).

>>> from dpedu.datasets import make_toy
>>> X, y = make_toy(n=2000, d=3, rng=0)
>>> clf = FactorizedNoiseClassifier(epsilon=1.0, random_state=0).fit(X, y)
>>> round(clf.epsilon_, 3), bool(clf.score(X, y) > 0.8)
(1.0, True)
>>> OutputPerturbationClassifier(epsilon=1.0, regularization=1e-2, random_state=0).fit(X, y).ledger_
[(GaussianEvent(noise_multiplier=3.730...), 1)]
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, check_is_fitted, check_X_y

from .accountants import account
from .clipping import L2_clip
from .gaussian import analytic_noise_multiplier
from .learners.convex import objective_perturbation, output_perturbation
from .learners.factorization import FACTORIZATIONS, MAX_STEPS_BY_KIND, make_factorization
from .learners.ftrl import factorized_gradient_descent
from .engine.validation import check_array as check_numeric_array
from .engine.validation import check_choice, check_delta, check_epsilon, check_positive, check_positive_int

__all__ = ["OutputPerturbationClassifier", "ObjectivePerturbationClassifier", "FactorizedNoiseClassifier"]


class _PrivateLinearClassifier(ClassifierMixin, BaseEstimator):
    """Shared data handling, prediction and the privacy statement; subclasses implement ``_train``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _design(self, X, row_bound):
        return np.hstack([L2_clip(X, row_bound), np.ones((X.shape[0], 1))])

    @staticmethod
    def _check_real(X, y=None):
        """Refuse complex, non-numeric or non-finite X (and complex y) by name, before scikit-learn, whose messages
        for these print the data (the whole array, or an entry) or do not name X: no message may show a value of the
        private data."""
        check_numeric_array(X, "X", ndim=2, allow_empty=True)
        if y is not None and np.iscomplexobj(y):
            raise TypeError("y must hold class labels, not complex numbers")

    def fit(self, X, y):
        """Check everything, train once, then set every fitted attribute together."""
        epsilon, delta = check_epsilon(self.epsilon), check_delta(self.delta)
        row_bound = check_positive(self.row_bound, "row_bound")
        self._check_real(X, y)
        X, y = check_X_y(X, y, dtype=float)
        if type_of_target(y) != "binary":
            raise ValueError(f"y must hold exactly 2 classes (binary classification); got {type_of_target(y)}")
        classes, index = np.unique(y, return_inverse=True)
        y_pm = 2.0 * index - 1.0
        result, fitted = self._train(self._design(X, row_bound), y_pm, epsilon, delta, math.sqrt(row_bound ** 2 + 1))
        theta = result.theta
        ledger = result.ledger
        fitted.update(coef_=theta[:-1].reshape(1, -1).copy(), intercept_=theta[-1:].copy(), classes_=classes,
                      ledger_=ledger, delta_=delta, n_samples_=X.shape[0], n_features_in_=X.shape[1],
                      epsilon_=account(ledger, "pld", delta=delta, strict=True).epsilon)
        vars(self).update(fitted)
        return self

    def decision_function(self, X):
        r"""Scores :math:`\theta\cdot x + b` (X clipped to ``row_bound`` as in training); positive: ``classes_[1]``."""
        check_is_fitted(self)
        self._check_real(X)
        X = check_array(X, dtype=float)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features; this model was fitted with {self.n_features_in_}")
        return L2_clip(X, self.row_bound) @ self.coef_[0] + self.intercept_[0]

    def predict(self, X):
        """``classes_[1]`` where the score is >= 0, else ``classes_[0]``."""
        return self.classes_[(self.decision_function(X) >= 0).astype(int)]

    def predict_proba(self, X):
        """Columns :math:`1-\\sigma(s)` and :math:`\\sigma(s)`."""
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    @property
    def privacy_statement_(self):
        """What this fit guarantees (:func:`dpedu.research.statement.privacy_statement`)."""
        from .research.statement import privacy_statement

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
        R: rows of X are clipped to it.
    relation : {"add_remove", "replace_one"}
    tolerance : float
        :math:`\gamma`, the solver's gradient-norm threshold.
    random_state : None, int or Generator
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, regularization=1e-3, row_bound=1.0, relation="add_remove",
                 tolerance=1e-8, random_state=None):
        self.epsilon, self.delta, self.regularization, self.row_bound = epsilon, delta, regularization, row_bound
        self.relation, self.tolerance, self.random_state = relation, tolerance, random_state

    def _train(self, X, y, epsilon, delta, lipschitz):
        result = output_perturbation(X, y, regularization=self.regularization, row_bound=lipschitz, epsilon=epsilon,
                                     delta=delta, relation=self.relation, tolerance=self.tolerance,
                                     rng=self.random_state)
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

    def _train(self, X, y, epsilon, delta, lipschitz):
        result = objective_perturbation(X, y, epsilon=epsilon, delta=delta, row_bound=lipschitz,
                                        regularization=self.regularization, relation=self.relation,
                                        tolerance=self.tolerance, output_share=self.output_share,
                                        rng=self.random_state)
        return result, {"noise_std_": result.noise_std}


class FactorizedNoiseClassifier(_PrivateLinearClassifier):
    r"""Logistic regression by gradient descent on noisy prefix sums (docs/math.md §25.4-25.6).

    Parameters
    ----------
    epsilon, delta : float
        The run is one Gaussian mechanism with multiplier z / sens(C): z is set so that it is exactly
        (epsilon, delta)-DP (the analytic Gaussian).
    factorization : str, default "tree_efficient"
        One of :data:`dpedu.learners.factorization.FACTORIZATIONS` (``"tree"``/``"tree_efficient"``: DP-FTRL).
    clip_norm : float
        Per-example gradient clip norm.
    batches : int
        Fixed batches per epoch (the minimum separation); at most the number of rows.
    epochs : int
        Passes: ``batches * epochs`` steps, at most 1,000,000 for the identity and the trees and 4,096 for the
        dense ``"square_root"`` and ``"banded"`` (:data:`dpedu.learners.factorization.MAX_STEPS_BY_KIND`).
    learning_rate : float
    row_bound : float
        Rows of X are clipped to it (keeps the features on the scale the learning rate expects).
    random_state : None, int or Generator
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, factorization="tree_efficient", clip_norm=1.0, batches=20,
                 epochs=2, learning_rate=1.0, row_bound=1.0, random_state=None):
        self.epsilon, self.delta, self.factorization, self.clip_norm = epsilon, delta, factorization, clip_norm
        self.batches, self.epochs, self.learning_rate = batches, epochs, learning_rate
        self.row_bound, self.random_state = row_bound, random_state

    def _train(self, X, y, epsilon, delta, lipschitz):
        check_choice(self.factorization, "factorization", FACTORIZATIONS)
        batches = check_positive_int(self.batches, "batches", maximum=X.shape[0])
        most = max(1, MAX_STEPS_BY_KIND[self.factorization] // batches)      # steps = batches * epochs
        epochs = check_positive_int(self.epochs, "epochs", maximum=most)
        bands = {"bands": min(batches, 4)} if self.factorization == "banded" else {}
        factorization = make_factorization(self.factorization, batches * epochs, **bands)
        sens = factorization.cyclic_sensitivity(batches)
        z = sens * analytic_noise_multiplier(epsilon, delta)
        result = factorized_gradient_descent(X, y, kind=self.factorization, noise_multiplier=z,
                                             clip_norm=self.clip_norm, batches=batches, epochs=epochs,
                                             learning_rate=self.learning_rate, rng=self.random_state)
        return result, {"noise_multiplier_": z, "sensitivity_": sens, "steps_": batches * epochs,
                        "clip_norm_": float(self.clip_norm)}
