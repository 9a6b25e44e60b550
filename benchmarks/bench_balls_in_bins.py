"""Balls-in-bins batches on an Adult-like setting: the proven PLD bound, its Monte Carlo check, and Poisson sampling
(docs/math.md §22.8, §22.9).

    python benchmarks/bench_balls_in_bins.py [--samples N]

n = 30,162 records (Adult's training rows), z = 1, b = 100 batches per epoch (mean batch 302), delta = 1e-5, 1 and
10 epochs. Balls-in-bins: the Monte Carlo estimate of epsilon (estimate, then verify on fresh draws, raised until the
verify pass's 95% upper limit on delta is at most delta: the first estimate, the returned one, delta at it with its
standard error, and the lower confidence end), which is an ESTIMATE, not a guarantee; and the proven upper bound (the
PLD accountant: random allocation, docs/math.md §22.9). Beside them: Poisson sampling at q = 1/b = 0.01 for 100 steps
per epoch by the PLD accountant (a guarantee).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from dpedu.accountants import SubsampledGaussianEvent, make_accountant  # noqa: E402
from dpedu.accountants.balls_in_bins import balls_in_bins_epsilon  # noqa: E402

N, Z, BATCHES, DELTA = 30_162, 1.0, 100, 1e-5


def rows(n_samples, epochs_list=(1, 10), seed=2025):
    """``[(epochs, BallsInBinsEstimate, Poisson PLD epsilon, seconds)]``."""
    out = []
    for epochs in epochs_list:
        start = time.perf_counter()
        estimate = balls_in_bins_epsilon(Z, BATCHES, epochs=epochs, delta=DELTA, n_samples=n_samples, rng=seed)
        seconds = time.perf_counter() - start
        poisson = make_accountant("pld").compose(SubsampledGaussianEvent(Z, 1.0 / BATCHES), epochs * BATCHES)
        out.append((epochs, estimate, poisson.get_epsilon(DELTA), seconds))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50_000, help="Monte Carlo draws per stage (default 50,000)")
    args = parser.parse_args()
    print(f"n = {N}, z = {Z:g}, b = {BATCHES} batches per epoch, delta = {DELTA:g}, {args.samples} draws per stage")
    print(f"{'epochs':>6}  {'first est.':>10}  {'BiB eps (estimate)':>18}  {'delta(eps) verify':>17}  {'s.e.':>9}  "
          f"{'lower end':>9}  {'BiB proven (PLD)':>16}  {'Poisson PLD':>11}  {'seconds':>7}")
    for epochs, e, poisson, seconds in rows(args.samples):
        print(f"{epochs:6d}  {e.first_estimate:10.4f}  {e.epsilon:18.4f}  {e.delta_estimate:17.3e}  "
              f"{e.delta_standard_error:9.2e}  {e.epsilon_lower:9.4f}  {e.epsilon_upper_bound:16.4f}  {poisson:11.4f}  "
              f"{seconds:7.1f}")
    print(f"balls-in-bins epsilon: {e.label}")


if __name__ == "__main__":
    main()
