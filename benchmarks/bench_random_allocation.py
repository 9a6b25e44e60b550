"""Balls-in-bins batches (random allocation) by dpedu's PLD beside dp_accounting's random-allocation accountant, in
one run (docs/math.md §22.9).

    DPEDU_RA_REFERENCE=/path/to/differential-privacy/python/dp_accounting python benchmarks/bench_random_allocation.py
        [--fine]

For each setting (z, b batches per epoch, E epochs, delta = 1e-5): dpedu's proven epsilon at its default accuracy and
at a fixed grid of 2^-10 (both cold: caches cleared), the reference's epsilon at a grid of 1e-3 (finer than dpedu's
default 2^-7, about equal to 2^-10), the relative difference, both times and their ratio. ``--fine`` adds the reference
at grids of 5e-4 and 2.5e-4 for z = 1, b = 100, 10 epochs (minutes each): its pessimistic estimate rounds each loss
up, so its error is of first order in the grid and it approaches dpedu's from above.

The reference is the random-allocation accountant proposed to dp_accounting in google/differential-privacy PR #414
(``dp_accounting.pld.random_allocation.gaussian_allocation_pld``; not in the released dp_accounting 0.6.0). The
variable ``DPEDU_RA_REFERENCE`` names a checkout of ``python/dp_accounting`` that holds it; it is put first on the
path of this process only. Without it the reference columns read n/a.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from dpedu.accountants import make_accountant  # noqa: E402
from dpedu.accountants.pld.allocation import epoch_atoms  # noqa: E402
from dpedu.accountants.pld.ledger import composed_curves  # noqa: E402
from dpedu.ground.events_allocation import BallsInBinsGaussianEvent  # noqa: E402

DELTA = 1e-5
#: (z, b, epochs): the issue's two settings, then few batches at larger noise, and many batches at smaller noise
SETTINGS = ((1.0, 100, 1), (1.0, 100, 10), (2.0, 10, 10), (0.8, 1000, 3))


def _reference():
    """``gaussian_allocation_pld`` and its parameter classes, or None."""
    path = os.environ.get("DPEDU_RA_REFERENCE")
    if path:
        sys.path.insert(0, path)
    try:
        module = importlib.import_module("dp_accounting.pld.random_allocation")
    except ImportError:
        return None
    return module


def dpedu_epsilon(z, b, epochs, **options):
    """``(epsilon, seconds)``, cold."""
    epoch_atoms.cache_clear()
    composed_curves.cache_clear()
    start = time.perf_counter()
    epsilon = make_accountant("pld", **options).compose(BallsInBinsGaussianEvent(z, b), epochs).get_epsilon(DELTA)
    return epsilon, time.perf_counter() - start


def reference_epsilon(module, z, b, epochs, grid):
    """``(epsilon, seconds)`` of the reference at ``grid``, or (nan, nan)."""
    if module is None:
        return float("nan"), float("nan")
    start = time.perf_counter()
    params = module.PrivacyParams(sigma=z, num_steps=b, num_selected=1, num_epochs=epochs)
    pld = module.gaussian_allocation_pld(params, module.AllocationSchemeConfig(value_discretization_interval=grid))
    return float(pld.get_epsilon_for_delta(DELTA)), time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fine", action="store_true", help="also the reference at 5e-4 and 2.5e-4 (slow)")
    args = parser.parse_args()
    module = _reference()
    print(f"delta = {DELTA:g}; reference: "
          + ("dp_accounting.pld.random_allocation (PR #414)" if module else "n/a (set DPEDU_RA_REFERENCE)"))
    print(f"{'z':>4} {'b':>5} {'E':>3}  {'dpedu':>8} {'s':>6}  {'dpedu 2^-10':>11} {'s':>6}  {'ref 1e-3':>8} {'s':>7}  "
          f"{'dpedu/ref-1':>11}  {'ref s/dpedu s':>13}")
    for z, b, epochs in SETTINGS:
        ours, ours_s = dpedu_epsilon(z, b, epochs)
        fixed, fixed_s = dpedu_epsilon(z, b, epochs, discretization=2.0**-10)
        theirs, theirs_s = reference_epsilon(module, z, b, epochs, 1e-3)
        print(f"{z:4g} {b:5d} {epochs:3d}  {ours:8.4f} {ours_s:6.2f}  {fixed:11.4f} {fixed_s:6.2f}  {theirs:8.4f} "
              f"{theirs_s:7.1f}  {ours / theirs - 1:+11.2%}  {theirs_s / ours_s:13.0f}")
    if args.fine:
        ours, ours_s = dpedu_epsilon(1.0, 100, 10)
        for grid in (5e-4, 2.5e-4):
            theirs, theirs_s = reference_epsilon(module, 1.0, 100, 10, grid)
            print(f"z = 1, b = 100, E = 10, reference at {grid:g}: {theirs:.4f} in {theirs_s:.0f} s; dpedu (default) "
                  f"{ours:.4f} in {ours_s:.2f} s: {ours / theirs - 1:+.2%}")


if __name__ == "__main__":
    main()
