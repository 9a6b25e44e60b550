"""What the proven last-iterate bound buys on Adult: test accuracy at a total epsilon of 1 and 3 (delta = 1e-5).

    python benchmarks/bench_last_iterate_accuracy.py [--seeds 10] [--n-jobs 2]

Projected, L2-regularised logistic regression (lambda = 5e-3, rows clipped to C = 1, every iterate projected onto a
ball of radius R), trained by the one DP-SGD loop (dpedu.textbook.learners.run_projected):

* noisy GD: every record in every step (q = 1), T = 200 steps, learning rate in {4, 6} x R in {6, 10};
* DP-SGD: Poisson sampling q = 0.01, T = 3,000 steps (30 epochs), learning rate in {2, 4} x R in {6, 10}.

The settings are chosen by private selection as chapter 7 pays for it (Papernot & Steinke 2022, geometric K with
E[K] = 2, settings drawn uniformly from the grid, each run scored by the count of correct
predictions on a 20 % validation part plus Laplace noise of epsilon_s = 0.02; docs/math.md §23). The whole selection
costs the target epsilon, charged two ways: by composition of each run's T steps, or by the proven last-iterate bound
(the largest of the settings' RDP curves; docs/math.md §28.6). Each charge gets the one noise multiplier z that spends
exactly the target (bisection); the table gives z, the epsilon the selection costs, and the test accuracy of the
released model, mean and standard deviation over the seeds (dpedu.lab.parallel.map_seeded: the same numbers for
any --n-jobs).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

import numpy as np  # noqa: E402

from dpedu.textbook.datasets import load_adult  # noqa: E402
from dpedu.lab.parallel import map_seeded  # noqa: E402
from dpedu.lab.experiments.last_iterate import select_and_test, selection_noise  # noqa: E402

DELTA, L2, SCORE_EPSILON, MEAN_TRIALS, VALIDATION = 1e-5, 5e-3, 0.02, 2.0, 0.2
ALGORITHMS = (("noisy GD (q = 1, T = 200)", 1.0, 200, (4.0, 6.0)), ("DP-SGD (q = 0.01, T = 3000)", 0.01, 3000, (2.0, 4.0)))
RADII = (6.0, 10.0)


class _Seed:
    def __init__(self, data, z, q, steps, configs):
        self.data, self.z, self.q, self.steps, self.configs = data, z, q, steps, configs

    def __call__(self, rng):
        X, y, X_test, y_test = self.data
        return select_and_test(X, y, X_test, y_test, noise_multiplier=self.z, configs=self.configs, steps=self.steps,
                               sampling_rate=self.q, l2=L2, score_epsilon=SCORE_EPSILON, mean_trials=MEAN_TRIALS,
                               validation=VALIDATION, rng=rng)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args()
    data = load_adult()
    n_train = len(data.X_train) - round(VALIDATION * len(data.X_train))
    print(f"Adult: {n_train} training and {round(VALIDATION * len(data.X_train))} validation rows, {len(data.X_test)} "
          f"test rows; delta = {DELTA:g}; {args.seeds} seeds\n")
    print(f"{'algorithm':<30} {'target':>6} {'charged by':<13} {'z':>8} {'epsilon':>8} {'test accuracy':>17} {'s':>6}")
    for name, q, steps, rates in ALGORITHMS:
        configs = tuple({"learning_rate": lr, "radius": r} for lr in rates for r in RADII)
        for target in (1.0, 3.0):
            for accounting in ("composition", "last_iterate"):
                start = time.perf_counter()
                z, spent = selection_noise(target, accounting=accounting, configs=configs, steps=steps,
                                           sampling_rate=q, dataset_size=n_train, l2=L2, score_epsilon=SCORE_EPSILON,
                                           mean_trials=MEAN_TRIALS, delta=DELTA)
                accuracy = np.array(map_seeded(_Seed(tuple(data), z, q, steps, configs), args.seeds, rng=2025,
                                               n_jobs=args.n_jobs))
                accuracy = accuracy[np.isfinite(accuracy)]      # K = 0 releases nothing (probability 0 here: K >= 1)
                print(f"{name:<30} {target:6g} {accounting:<13} {z:8.3f} {spent:8.4f} "
                      f"{accuracy.mean():8.4f} ± {accuracy.std(ddof=1):6.4f} {time.perf_counter() - start:6.0f}",
                      flush=True)


if __name__ == "__main__":
    main()
