"""Tuning on Adult at a total epsilon = 1, delta = 1e-5: a grid search paid by composition, or private selection.

One run is DP-SGD (Poisson rate q = 0.01, 16 epochs: T = 1,600 steps) plus a validation score: the number
of correct predictions on a random 20 % validation part plus Laplace noise (epsilon_s = 0.02). The search
space is learning rate in {1, 2, 4, 8, 16} x clip norm in {0.5, 1}: k = 10 settings.

1. Accounting (dpedu.lab.experiments.tuning_costs): for the noise of a single run at epsilon 1, the epsilon of a
   grid search of k settings (k runs composed) and of private selection with E[K] = k (geometric K); then, for a
   total of epsilon = 1, the smallest per-run noise multiplier each can use.
2. Training: (b) the grid search of all 10 settings with its affordable noise, (c) PrivateHyperparameterSearch
   with E[K] = 10 and its affordable noise; the test accuracy of the selected model, the selected settings,
   and the epsilon each reports (RDP accountant). One seed; the numbers vary from seed to seed.

Run: ``python benchmarks/bench_tuning_adult.py`` (about a minute on one core).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from dpedu import DPLogisticRegression, calibrate
from dpedu.accountants import LaplaceEvent, account
from dpedu.textbook.datasets import load_adult
from dpedu.lab.experiments.tuning_costs import affordable_noise, tuning_cost
from dpedu.textbook.mechanisms import laplace_mechanism
from dpedu.lab.tuning import PrivateHyperparameterSearch

Q, EPOCHS, DELTA, SCORE_EPSILON, TARGET = 0.01, 16, 1e-5, 0.02, 1.0
STEPS = round(EPOCHS / Q)
SPACE = {"learning_rate": [1.0, 2.0, 4.0, 8.0, 16.0], "clip_norm": [0.5, 1.0]}
K = 10


def accounting():
    z_one = calibrate.noise_multiplier(target_epsilon=TARGET, target_delta=DELTA, sampling_rate=Q, steps=STEPS)
    print(f"one run (q = {Q}, T = {STEPS}) at epsilon {TARGET}: z = {z_one:.3f}; each run adds a score with "
          f"epsilon_s = {SCORE_EPSILON}")
    print(f"{'k':>4}{'grid search eps':>18}{'selection eps':>16}{'grid z for eps=1':>20}{'selection z':>14}")
    costs = tuning_cost([2, 5, 10, 20, 50], noise_multiplier=z_one, sampling_rate=Q, steps=STEPS,
                        score_epsilon=SCORE_EPSILON, delta=DELTA)
    noises = affordable_noise([2, 5, 10, 20, 50], target_epsilon=TARGET, sampling_rate=Q, steps=STEPS,
                              score_epsilon=SCORE_EPSILON, delta=DELTA)
    for cost, (k, z_grid, z_selection) in zip(costs, noises):
        print(f"{k:>4}{cost.grid_epsilon:>18.3f}{cost.selection_epsilon:>16.3f}{z_grid:>20.3f}{z_selection:>14.3f}")
    return {k: (z_grid, z_selection) for k, z_grid, z_selection in noises}


def grid_search(X, y, X_test, y_test, z, rng):
    """(b) Every setting trained and privately scored; the best kept; epsilon by composing the 10 runs."""
    in_validation = rng.random(len(X)) < 0.2
    best, ledger = None, []
    for lr in SPACE["learning_rate"]:
        for clip in SPACE["clip_norm"]:
            model = DPLogisticRegression(epsilon=TARGET, delta=DELTA, sampling_rate=Q, epochs=EPOCHS,
                                         noise_multiplier=z, learning_rate=lr, clip_norm=clip, random_state=rng)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")          # noise_multiplier wins over the per-run epsilon target
                model.fit(X[~in_validation], y[~in_validation])
            correct = float(np.sum(model.predict(X[in_validation]) == y[in_validation]))
            score = laplace_mechanism(correct, l1_sensitivity=1.0, epsilon=SCORE_EPSILON, rng=rng)
            ledger += model.ledger_ + [(LaplaceEvent(SCORE_EPSILON), 1)]
            if best is None or score > best[0]:
                best = (score, model, {"learning_rate": lr, "clip_norm": clip})
    epsilon = account(ledger, "rdp", delta=DELTA).epsilon
    return best[1].score(X_test, y_test), best[2], epsilon


def main():
    noises = accounting()
    z_grid, z_selection = noises[K]
    X, y, X_test, y_test = load_adult()
    start = time.perf_counter()
    accuracy, params, epsilon = grid_search(X, y, X_test, y_test, z_grid, np.random.default_rng(0))
    print(f"\n(b) grid search of {K} settings, z = {z_grid:.3f}: test accuracy {accuracy:.4f}, {params}, "
          f"epsilon {epsilon:.3f} ({time.perf_counter() - start:.0f} s)")
    start = time.perf_counter()
    search = PrivateHyperparameterSearch(SPACE, mean_trials=K, shape=1.0, score_epsilon=SCORE_EPSILON,
                                         estimator_params=dict(epsilon=TARGET, delta=DELTA, sampling_rate=Q,
                                                               epochs=EPOCHS, noise_multiplier=z_selection),
                                         random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    print(f"(c) private selection, E[K] = {K}, z = {z_selection:.3f}: test accuracy {search.score(X_test, y_test):.4f}, "
          f"{search.best_params_}, epsilon {search.epsilon_:.3f} ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
