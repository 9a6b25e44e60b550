"""The linear-loss last iterate: the PLD accountant's epsilon beside the exact value, with times (docs/math.md §28.1-28.3).

    python benchmarks/bench_last_iterate.py

For each (z, q, T), delta = 1e-5, add/remove: the exact epsilon (finite sums of normal tails at the loss's crossing
point, :func:`dpedu.accountants.last_iterate.linear_last_iterate_epsilon`), the PLD accountant's pessimistic value
(the guarantee it reports) and its optimistic one (a lower bound), the relative gap of the pessimistic value to the
exact one, and composition of the T steps by PLD. The first two rows are the checkpoints of the issue (0.41 and
1.28, composition 0.72 and 1.83). Times are wall-clock seconds of each computation, side by side in one run.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from dpedu.accountants import LinearLastIterateEvent, SubsampledGaussianEvent, make_accountant  # noqa: E402
from dpedu.accountants.last_iterate import linear_last_iterate_epsilon  # noqa: E402

DELTA = 1e-5
SETTINGS = ((1.0, 0.01, 100), (1.0, 0.01, 1000),          # the checkpoints
            (0.8, 0.05, 500), (2.0, 0.002, 20_000), (3.0, 0.3, 50))


def timed(function):
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def main():
    print(f"delta = {DELTA:g}, add/remove (both directions, the larger reported)")
    print(f"{'z':>4} {'q':>6} {'T':>6} | {'exact':>8} {'s':>5} | {'PLD':>8} {'PLD low':>8} {'rel. gap':>9} {'s':>5} | "
          f"{'composition':>11} {'s':>5}")
    for z, q, T in SETTINGS:
        exact, t_exact = timed(lambda: linear_last_iterate_epsilon(DELTA, noise_multiplier=z, sampling_rate=q, steps=T))
        (low, high), t_pld = timed(lambda: make_accountant("pld").compose(LinearLastIterateEvent(z, q, T))
                                   .epsilon_bracket(DELTA))
        composition, t_comp = timed(lambda: make_accountant("pld").compose(SubsampledGaussianEvent(z, q), T)
                                    .get_epsilon(DELTA))
        print(f"{z:4g} {q:6g} {T:6d} | {exact:8.4f} {t_exact:5.2f} | {high:8.4f} {low:8.4f} {(high - exact) / exact:9.2e} "
              f"{t_pld:5.2f} | {composition:11.4f} {t_comp:5.2f}")
    print("PLD: the pessimistic value (a guarantee for linear losses, a heuristic otherwise); PLD low: its optimistic "
          "lower bound; the exact value lies between them.")


if __name__ == "__main__":
    main()
