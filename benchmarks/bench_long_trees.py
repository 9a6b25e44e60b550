"""Tree aggregation over long runs (docs/math.md §25.8): dpedu's tree without a dense matrix beside dp_accounting.

Two tables, measured in one run:

1. epsilon at delta = 1e-5 of one pass of DP-FTRL's tree over T steps at noise multiplier z: dpedu's
   ``FactorizedGaussianEvent(z, sens)`` (sens = sqrt(ceil(log2(T + 1))) from
   ``make_factorization("tree", T).sensitivity()``) accounted by dpedu's RDP and PLD accountants, beside
   dp_accounting's ``SingleEpochTreeAggregationDpEvent(z, T)`` under its RDP accountant (REPLACE_SPECIAL: a
   record's contribution replaced by zero, which is dpedu's add/remove with n public here), with the time each
   takes (dpedu's: building the factorisation, its sensitivity and the RDP accounting);
2. what training needs from the tree at T steps (d = 10 coordinates): the sensitivity of one pass and of ten
   passes over T/10 fixed batches, the noise B Z and the error ||B||_F^2, with their times; at T = 4,096 also the
   dense matrices (B, C, the Gram matrix of ten passes) that every kind needed before, as a ratio.

Run: ``python benchmarks/bench_long_trees.py``. Last measured (a two-core machine shared with other jobs: the
millisecond timings of the accounting are noise, 0.3 to 10 ms either way; the seconds vary by about 2x between
runs)::

    tree aggregation (one pass), epsilon at delta = 1e-05: dpedu beside dp_accounting's SingleEpochTreeAggregationDpEvent (RDP, REPLACE_SPECIAL)
        z      steps  sens^2  dpedu RDP  dp_acc. RDP  rel. diff  dpedu PLD  dpedu ms  dp_acc. ms
        2     10,000      14     9.8888       9.8888    0.0e+00     9.2107      0.66        0.34
        5     10,000      14     3.3994       3.3994    0.0e+00     3.1388      0.47        0.32
        5    100,000      17     3.7941       3.7941    1.2e-16     3.5063      8.67        0.46
       10  1,000,000      20     1.9142       1.9142    2.3e-16     1.7601      0.47       10.36
    what training needs from the tree (d = 10): seconds, and the values
          steps  sens 1 pass        s  sens 10 passes       s         noise B Z       s     ||B||_F^2        s
          4,096       3.6056  6.5e-06         18.1384   0.001        (4096, 10)   0.023        24,577  8.6e-05
         10,000       3.7417  7.5e-06         15.9687   0.008       (10000, 10)   0.046        64,613  4.9e-05
        100,000       4.1231  9.0e-06         15.5242   0.133      (100000, 10)   0.961       815,030  7.4e-05
      1,000,000       4.4721  7.6e-06         15.6205   1.945     (1000000, 10)   9.754     9,884,999  6.5e-05
    at 4,096 steps, ten passes' sensitivity and the noise: dense matrices 27.34 s, without them 0.009 s (ratio 3126); same sensitivity True, noise max difference 3.6e-15
"""

from __future__ import annotations

import time

import numpy as np

from dpedu.accountants import account
from dpedu.textbook.learners.factorization import FactorizedGaussianEvent, make_factorization, sensitivity

#: (noise multiplier z, steps T) of the comparison with dp_accounting.
LONG_TREE_SETTINGS = ((2.0, 10_000), (5.0, 10_000), (5.0, 100_000), (10.0, 1_000_000))
DELTA = 1e-5


def tree_epsilons(z, steps, delta=DELTA):
    """``(dpedu RDP, dpedu PLD, dp_accounting RDP, dpedu seconds, dp_accounting seconds)`` for one pass of the tree.

    dpedu's seconds cover building the factorisation, its sensitivity and the RDP accounting. Needs dp_accounting.
    """
    import dp_accounting as dpa
    from dp_accounting import rdp

    start = time.perf_counter()
    event = FactorizedGaussianEvent(z, make_factorization("tree", steps).sensitivity())
    ours = account([(event, 1)], "rdp", delta=delta).epsilon
    ours_seconds = time.perf_counter() - start
    pld = account([(event, 1)], "pld", delta=delta).epsilon
    start = time.perf_counter()
    accountant = rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_SPECIAL)
    accountant.compose(dpa.SingleEpochTreeAggregationDpEvent(z, steps))
    theirs = accountant.get_epsilon(delta)
    return ours, pld, theirs, ours_seconds, time.perf_counter() - start


def _timed(function):
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def print_accounting_table(delta=DELTA):
    try:
        import dp_accounting  # noqa: F401
    except ImportError:
        print("tree aggregation beside dp_accounting: skipped (pip install dp-accounting)")
        return
    print(f"tree aggregation (one pass), epsilon at delta = {delta:g}: dpedu beside dp_accounting's "
          "SingleEpochTreeAggregationDpEvent (RDP, REPLACE_SPECIAL)")
    print(f"{'z':>5}{'steps':>11}{'sens^2':>8}{'dpedu RDP':>11}{'dp_acc. RDP':>13}{'rel. diff':>11}{'dpedu PLD':>11}"
          f"{'dpedu ms':>10}{'dp_acc. ms':>12}")
    tree_epsilons(1.0, 16, delta)                     # imports and caches warmed up, outside the timings
    for z, steps in LONG_TREE_SETTINGS:
        ours, pld, theirs, t_ours, t_theirs = tree_epsilons(z, steps, delta)
        print(f"{z:>5g}{steps:>11,}{steps.bit_length():>8}{ours:>11.4f}{theirs:>13.4f}"
              f"{abs(ours - theirs) / theirs:>11.1e}{pld:>11.4f}{1e3 * t_ours:>10.2f}{1e3 * t_theirs:>12.2f}")


def print_cost_table(d=10):
    print(f"what training needs from the tree (d = {d}): seconds, and the values")
    print(f"{'steps':>11}{'sens 1 pass':>13}{'s':>9}{'sens 10 passes':>16}{'s':>8}{'noise B Z':>18}{'s':>8}"
          f"{'||B||_F^2':>14}{'s':>9}")
    for steps in (4_096, 10_000, 100_000, 1_000_000):
        f = make_factorization("tree", steps)
        one, t_one = _timed(f.sensitivity)
        ten, t_ten = _timed(lambda: f.cyclic_sensitivity(steps // 10))
        noise, t_noise = _timed(lambda: f.noise(1.0, d, 0))
        error, t_error = _timed(f.squared_error)
        print(f"{steps:>11,}{one:>13.4f}{t_one:>9.1e}{ten:>16.4f}{t_ten:>8.3f}{str(noise.shape):>18}{t_noise:>8.3f}"
              f"{error:>14,.0f}{t_error:>9.1e}")
    steps = 4_096
    from dpedu.textbook.learners.factorization import cyclic_participations

    structured = make_factorization("tree", steps)
    (ten, noise), t_structured = _timed(lambda: (structured.cyclic_sensitivity(steps // 10 + 1),
                                                 structured.noise(1.0, d, 0)))
    dense = make_factorization("tree", steps)

    def dense_work():
        B, C = dense.B, dense.C
        value = sensitivity(C, cyclic_participations(steps, steps // 10 + 1))
        return value, B @ np.random.default_rng(0).normal(0.0, 1.0, size=(C.shape[0], d))

    (ten_dense, noise_dense), t_dense = _timed(dense_work)
    print(f"at {steps:,} steps, ten passes' sensitivity and the noise: dense matrices {t_dense:.2f} s, without "
          f"them {t_structured:.3f} s (ratio {t_dense / t_structured:.0f}); same sensitivity "
          f"{abs(ten - ten_dense) < 1e-9 * ten}, noise max difference {np.max(np.abs(noise - noise_dense)):.1e}")


def main():
    print_accounting_table()
    print_cost_table()


if __name__ == "__main__":
    main()
