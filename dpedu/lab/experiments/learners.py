r"""Which private learner wins where: six learners on one task, each tuned privately inside one total epsilon.

For a target :math:`(\varepsilon, \delta)` and a learner, :func:`calibrate_learner` finds the noise at which
the learner's *whole private selection* costs :math:`\varepsilon`: all k settings of its grid trained, each
model scored by a Gaussian-noised count of correct training predictions, the best released
(docs/math.md §25.7). :func:`run_learner` then runs that selection on the data and reports the test
accuracy of the selected model. The ledger is accounted by the PLD accountant (docs/math.md §15).

>>> [spec.name for spec in LEARNER_SPECS.values()][:2]
['noisy GD', 'DP-SGD']
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...accountants import account
from ...ground.search import monotone_search
from ...ground.events import ADD_REMOVE, ZERO_OUT, EpsilonDeltaEvent, GaussianEvent, gaussian_step_event
from ...ground.gaussian import analytic_noise_multiplier
from ...textbook.learners.convex import (
    objective_perturbation, objective_perturbation_regularization, output_perturbation
)
from ...textbook.learners.ftrl import factorized_gradient_descent, factorized_sensitivity
from ...textbook.learners.factorization import (
    FactorizedGaussianEvent, closed_form_error, make_factorization, prefix_sum_error, sensitivity
)
from ..parallel import map_seeded
from .sweeps import non_private_accuracy
from ...textbook.models.logistic import accuracy, predict
from ...textbook.training import dp_sgd
from ...ground.validation import check_choice, check_delta, check_epsilon, check_positive_int, check_rng

__all__ = ["LEARNERS", "LEARNER_SPECS", "LearnerSpec", "Calibration", "LearnerRun", "LearnersComparison",
           "PrefixSumRow", "calibrate_learner", "run_learner", "compare_learners", "prefix_sum_table",
           "score_noise_multiplier", "with_intercept"]

#: Share of the target epsilon (and delta) the k noisy scores get, together.
SCORE_SHARE = 0.1


@dataclass(frozen=True)
class LearnerSpec:
    """A learner, its grid of settings (fixed before seeing the data) and what its noise parameter is.

    ``grid`` holds tuples of keyword arguments for the trainer; ``noise`` is ``"z"`` (a noise multiplier:
    larger is more private) or ``"epsilon"`` (objective perturbation's per-run epsilon: smaller is more private).
    """

    name: str
    grid: tuple
    noise: str = "z"


LEARNER_SPECS = {
    "noisy_gd": LearnerSpec("noisy GD", ((("epochs", 10), ("learning_rate", 4.0)),
                                         (("epochs", 30), ("learning_rate", 2.0)),
                                         (("epochs", 90), ("learning_rate", 1.0)))),
    "dp_sgd": LearnerSpec("DP-SGD", ((("epochs", 2), ("learning_rate", 2.0)),
                                     (("epochs", 6), ("learning_rate", 2.0)),
                                     (("epochs", 6), ("learning_rate", 0.5)))),
    "output_perturbation": LearnerSpec("output perturbation", ((("regularization", 1e-4),),
                                                               (("regularization", 1e-3),),
                                                               (("regularization", 1e-2),))),
    "objective_perturbation": LearnerSpec("objective perturbation", ((("regularization", 1e-5),),
                                                                     (("regularization", 1e-4),),
                                                                     (("regularization", 1e-3),)), "epsilon"),
    "dp_ftrl": LearnerSpec("DP-FTRL (tree)", ((("epochs", 1), ("learning_rate", 2.0)),
                                              (("epochs", 4), ("learning_rate", 2.0)),
                                              (("epochs", 4), ("learning_rate", 0.5)))),
    "matrix_factorization": LearnerSpec("MF (square root)", ((("epochs", 1), ("learning_rate", 2.0)),
                                                             (("epochs", 4), ("learning_rate", 2.0)),
                                                             (("epochs", 4), ("learning_rate", 0.5)))),
}
#: The learners, in the order of the chart.
LEARNERS = tuple(LEARNER_SPECS)
CLIP_NORM = 1.0          # the gradient clip norm of the gradient-based learners
BATCH_SIZE = 256         # DP-SGD's expected batch; the factorised learners use n // FTRL_BATCHES records per step
FTRL_BATCHES = 30
#: The public bound on a row's norm after the intercept column: Adult's sqrt(14) (dpedu.textbook.datasets) and 1.
_ROW_BOUND = math.sqrt(15.0)
_FACTORIZED_KIND = {"noisy_gd": "identity", "dp_ftrl": "tree_efficient", "matrix_factorization": "square_root"}
#: The relation each learner's runs (and the selection's scores) are accounted under: DP-FTRL and matrix
#: factorisation train on fixed batches from one random split of the n records, which adding a record would move,
#: so their claim is zero-out (a record replaced by one with zero gradient, n public), not add/remove
#: (docs/math.md §1.2); output perturbation's noise scale divides by n, so it claims zero-out too (§25.1); noisy GD
#: is one batch of every record, which holds under add/remove (n public).
RELATIONS = {"noisy_gd": ADD_REMOVE, "dp_sgd": ADD_REMOVE, "output_perturbation": ZERO_OUT,
             "objective_perturbation": ADD_REMOVE, "dp_ftrl": ZERO_OUT, "matrix_factorization": ZERO_OUT}


@dataclass(frozen=True)
class Calibration:
    """The noise of one learner's selection at a target: ``noise`` (z or the per-run epsilon), the score's
    multiplier ``score_z``, and the selection's accounted ``epsilon`` (at most the target)."""

    learner: str
    target_epsilon: float
    delta: float
    noise: float
    score_z: float
    epsilon: float


@dataclass(frozen=True)
class LearnerRun:
    """One private selection: the chosen grid index, its model's test accuracy, the selection's epsilon, and
    its ``ledger``: every training's own ledger, each followed by its score's ``GaussianEvent`` (checked
    equal to the ledger the calibration accounted)."""

    learner: str
    target_epsilon: float
    chosen: int
    test_accuracy: float
    epsilon: float
    ledger: tuple = ()


@dataclass(frozen=True)
class LearnersComparison:
    """Test accuracies of every learner at every target epsilon over seeds, with the non-private ceiling.

    ``accuracies[i, j, s]``: learner ``learners[i]`` at ``epsilons[j]``, seed s; ``chosen`` the grid index each
    selection kept; ``accounted[i, j]`` the PLD epsilon of the whole selection (at most the target)."""

    learners: tuple
    epsilons: np.ndarray
    delta: float
    accuracies: np.ndarray
    chosen: np.ndarray
    accounted: np.ndarray
    non_private: float

    def accuracy_of(self, learner):
        """Shape (n_epsilons, n_seeds): one learner's accuracies."""
        return self.accuracies[self.learners.index(check_choice(learner, "learner", self.learners))]

    def leaders(self):
        """At each epsilon: ``(best, close)``, the learner of the highest mean accuracy over seeds and the others
        whose mean is within one standard deviation over seeds (the larger of the two learners') of it: a race
        whose seeds cannot tell them apart."""
        means, spreads = self.accuracies.mean(axis=2), self.accuracies.std(axis=2)
        out = []
        for j in range(len(self.epsilons)):
            best = int(np.argmax(means[:, j]))
            close = tuple(self.learners[i] for i in range(len(self.learners)) if i != best
                          and means[best, j] - means[i, j] <= max(spreads[i, j], spreads[best, j]))
            out.append((self.learners[best], close))
        return out

    def table(self):
        """The race as text: test accuracy in % (mean ± standard deviation over seeds) per learner and epsilon, the
        leader at each epsilon with the learners its seeds cannot separate from it, and the accounting check."""
        width = 16
        header = f"{'learner':<24}" + "".join(f"{'eps ' + format(e, 'g'):>{width}}" for e in self.epsilons)
        lines = [f"test accuracy, % (mean ± std over {self.accuracies.shape[2]} seeds); non-private ceiling "
                 f"{100 * self.non_private:.2f} %", header]
        for i, name in enumerate(self.learners):
            cells = [f"{100 * a.mean():.2f} ± {100 * a.std():.2f}" for a in self.accuracies[i]]
            lines.append(f"{LEARNER_SPECS[name].name:<24}" + "".join(f"{c:>{width}}" for c in cells))
        lines.append("best at each epsilon (and those within one std over seeds of it):")
        for eps, (best, close) in zip(self.epsilons, self.leaders()):
            tied = f" ({', '.join(LEARNER_SPECS[n].name for n in close)} within the spread)" if close else ""
            lines.append(f"  {eps:g}: {LEARNER_SPECS[best].name}{tied}")
        inside = bool(np.all(self.accounted <= self.epsilons[None, :]))
        lines.append(f"every selection's accounted epsilon <= its target: {inside}")
        return "\n".join(lines)


@dataclass(frozen=True)
class PrefixSumRow:
    """One factorisation at n steps: sens(C)^2 and the total squared error of the n prefix sums at unit noise
    multiplier (single participation), beside the closed forms of docs/math.md §25.5 (nan where none)."""

    kind: str
    n: int
    sensitivity_squared: float
    total_error: float
    closed_sensitivity_squared: float
    closed_total_error: float


def with_intercept(X):
    """``X`` with a column of ones appended (its weight is the intercept)."""
    X = np.asarray(X, dtype=float)
    return np.hstack([X, np.ones((X.shape[0], 1))])


def score_noise_multiplier(epsilon, delta, k):
    """The multiplier of each of k Gaussian-noised counts so that the k together cost SCORE_SHARE of (eps, delta)."""
    return analytic_noise_multiplier(SCORE_SHARE * epsilon, SCORE_SHARE * delta) * math.sqrt(k)


def _run_ledger(learner, setting, noise, n, delta):
    """The ledger of one training of ``learner`` with ``setting`` at ``noise`` on n records (no data needed)."""
    options = dict(setting)
    if learner == "dp_sgd":
        q = BATCH_SIZE / n
        return [(gaussian_step_event(noise, q), max(1, round(options["epochs"] / q)))]
    if learner == "output_perturbation":
        return [(GaussianEvent(noise, relation=RELATIONS[learner]), 1)]
    if learner == "objective_perturbation":   # each run (eps_r, delta / 8): the 3 runs leave PLD room below delta
        return [(EpsilonDeltaEvent(0.99 * noise, 0.99 * delta / 8), 1), (GaussianEvent(
            analytic_noise_multiplier(0.01 * noise, 0.01 * delta / 8)), 1)]
    batches = 1 if learner == "noisy_gd" else FTRL_BATCHES
    epochs = options["epochs"]
    factorization = make_factorization(_FACTORIZED_KIND[learner], batches * epochs)
    return [(FactorizedGaussianEvent(noise, factorized_sensitivity(factorization, batches, epochs),
                                     relation=RELATIONS[learner]), 1)]


def _score_event(learner, score_z):
    """The noisy count of correct training predictions: sensitivity 1 under every relation, stated under the run's."""
    return GaussianEvent(score_z, relation=RELATIONS[learner])


def _selection_ledger(learner, noise, score_z, n, delta):
    ledger = []
    for setting in LEARNER_SPECS[learner].grid:
        ledger += _run_ledger(learner, setting, noise, n, delta) + [(_score_event(learner, score_z), 1)]
    return ledger


def calibrate_learner(learner, epsilon, delta, n, *, rtol=1e-3):
    """The least noise at which ``learner``'s whole selection on ``n`` records costs at most ``epsilon``."""
    check_choice(learner, "learner", LEARNERS)
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    spec = LEARNER_SPECS[learner]
    score_z = score_noise_multiplier(epsilon, delta, len(spec.grid))

    def cost(noise):
        return account(_selection_ledger(learner, noise, score_z, n, delta), "pld", delta=delta, strict=True).epsilon

    def refuse(x, is_feasible):
        raise ValueError(f"no noise brings {spec.name}'s selection to epsilon={epsilon:g} at delta={delta:g}")

    if spec.noise == "epsilon":                       # objective perturbation: the per-run epsilon
        noise = monotone_search(lambda e: cost(e) <= epsilon, epsilon / len(spec.grid), feasible_when="small",
                                lowest=1e-4 * epsilon, highest=epsilon, rtol=rtol, at_limit=refuse)
    else:
        noise = monotone_search(lambda z: cost(z) <= epsilon, 1.0, feasible_when="large", lowest=1e-2,
                                highest=1e6, rtol=rtol, at_limit=refuse)
    return Calibration(learner, epsilon, delta, float(noise), float(score_z), float(cost(noise)))


def _train(learner, setting, noise, X, y, delta, rng):
    options = dict(setting)
    if learner == "dp_sgd":
        return dp_sgd(X, y, noise_multiplier=noise, clip_norm=CLIP_NORM, sampling_rate=BATCH_SIZE / len(X),
                      epochs=options["epochs"], learning_rate=options["learning_rate"], rng=rng)
    if learner == "output_perturbation":
        return output_perturbation(X, y, regularization=options["regularization"], row_bound=_ROW_BOUND,
                                   noise_multiplier=noise, relation=RELATIONS[learner], rng=rng)
    if learner == "objective_perturbation":
        smallest = objective_perturbation_regularization(0.99 * noise, _ROW_BOUND)
        return objective_perturbation(X, y, epsilon=noise, delta=delta / 8, row_bound=_ROW_BOUND,
                                      regularization=max(smallest, options["regularization"] * len(X)), rng=rng)
    batches = 1 if learner == "noisy_gd" else FTRL_BATCHES
    return factorized_gradient_descent(X, y, kind=_FACTORIZED_KIND[learner], noise_multiplier=noise,
                                       clip_norm=CLIP_NORM, batches=batches, epochs=options["epochs"],
                                       learning_rate=options["learning_rate"], relation=RELATIONS[learner], rng=rng)


def run_learner(calibration, X_train, y_train, X_test, y_test, rng=None):
    """One private selection of ``calibration.learner`` on the training rows (with the intercept column
    appended by the caller); returns a :class:`LearnerRun` with the chosen model's test accuracy."""
    learner = calibration.learner
    rng = check_rng(rng)
    best, best_score, chosen, ledger = None, -math.inf, -1, []
    for index, setting in enumerate(LEARNER_SPECS[learner].grid):
        trained = _train(learner, setting, calibration.noise, X_train, y_train, calibration.delta, rng)
        ledger += list(trained.ledger) + [(_score_event(learner, calibration.score_z), 1)]
        theta = trained.theta
        if not np.all(np.isfinite(theta)):
            theta = np.zeros_like(theta)                # a diverged run predicts nothing useful (still paid for)
        correct = float(np.sum(predict(theta, X_train) == y_train))
        score = correct + rng.normal(0.0, calibration.score_z)
        if score > best_score:
            best, best_score, chosen = theta, score, index
    if ledger != _selection_ledger(learner, calibration.noise, calibration.score_z, len(X_train), calibration.delta):
        raise RuntimeError(f"{LEARNER_SPECS[learner].name}'s trainings spent another ledger than the calibrated one")
    return LearnerRun(learner, calibration.target_epsilon, chosen, accuracy(best, X_test, y_test),
                      calibration.epsilon, tuple(ledger))


def compare_learners(data, epsilons, *, seeds, delta=1e-5, learners=LEARNERS, rng=None, n_jobs=1, progress=None):
    """Every learner's private selection at every target epsilon, ``seeds`` times, on ``data``
    (``X_train, y_train, X_test, y_test``; rows of norm at most sqrt(14), as Adult's; the intercept column is
    appended here). The non-private ceiling is scikit-learn's unpenalised logistic regression."""
    X_train, y_train, X_test, y_test = data
    X_train, X_test = with_intercept(X_train), with_intercept(X_test)
    if np.max(np.linalg.norm(X_train, axis=1)) > _ROW_BOUND * (1 + 1e-12):
        raise ValueError(f"data rows must have norm at most sqrt(14) (the public bound the learners assume)")
    epsilons = np.array([check_epsilon(e, "epsilons") for e in np.atleast_1d(epsilons)], dtype=float)
    learners = tuple(check_choice(name, "learners", LEARNERS) for name in learners)
    seeds = check_positive_int(seeds, "seeds")
    ceiling = non_private_accuracy(data)             # the project's one baseline, on the data as given
    calibrations = [[calibrate_learner(name, e, delta, len(X_train)) for e in epsilons] for name in learners]
    items = [(i, j) for i in range(len(learners)) for j in range(len(epsilons)) for _ in range(seeds)]

    def task(item, generator):
        i, j = item
        return run_learner(calibrations[i][j], X_train, y_train, X_test, y_test, generator)

    runs = map_seeded(task, len(items), items=items, rng=rng, n_jobs=n_jobs, progress=progress, desc="selections")
    shape = (len(learners), len(epsilons), seeds)
    accuracies = np.array([r.test_accuracy for r in runs]).reshape(shape)
    chosen = np.array([r.chosen for r in runs]).reshape(shape)
    accounted = np.array([[c.epsilon for c in row] for row in calibrations])
    return LearnersComparison(learners, epsilons, delta, accuracies, chosen, accounted, ceiling)


def prefix_sum_table(ns=(16, 256, 1024), kinds=("identity", "tree", "tree_efficient", "square_root", "banded")):
    """One :class:`PrefixSumRow` per (kind, n): measured from the matrices, and from the closed forms."""
    rows = []
    for n in ns:
        for kind in kinds:
            f = make_factorization(kind, n)
            closed = closed_form_error(kind, n) if kind in ("identity", "tree", "square_root") else (math.nan,) * 2
            rows.append(PrefixSumRow(kind, int(n), sensitivity(f.C) ** 2, prefix_sum_error(f), *closed))
    return rows
