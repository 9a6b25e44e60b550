"""dpedu beside Google's dp_accounting for the fixed-size sampling schemes, in one run (docs/math.md §22.3, §22.5).

    python benchmarks/bench_sampling_accountants.py

1. Sampling without replacement under replace-one (RDP): dpedu with the Gaussian-specific bound (Wang, Balle &
   Kasiviswanathan 2019), dpedu with Theorem 9 alone, dp_accounting (given z / 2: its multiplier there is relative to
   the replace-one sensitivity 2C), and a valid lower bound (the Poisson add/remove pair at z / 2, optimistic PLD).
2. Truncated Poisson by PLD under both relations: dpedu's PLD, dp_accounting's ``TruncatedSubsampledGaussianDpEvent``
   (same multiplier convention: relative to C under both relations), and dpedu's RDP bound (add/remove).

dp_accounting is a benchmark/test-only dependency (``pip install dp-accounting``); without it its columns are nan.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from dpedu.accountants import make_accountant  # noqa: E402
from dpedu.accountants.analysis.conversions import epsilon_from_rdp  # noqa: E402
from dpedu.accountants.analysis.orders import DEFAULT_ORDERS  # noqa: E402
from dpedu.accountants.analysis.rdp_without_replacement import rdp_without_replacement  # noqa: E402
from dpedu.events import SampledWithoutReplacementGaussianEvent, SubsampledGaussianEvent  # noqa: E402

DELTA = 1e-5
#: (n, m, T, z): the issue's two settings at z = 4 and two at smaller noise
WOR_CASES = ((10_000, 1_000, 200, 4.0), (60_000, 600, 1_000, 4.0), (60_000, 600, 1_000, 2.0),
             (60_000, 600, 1_000, 1.0))


def _dp_accounting():
    try:
        import dp_accounting
    except ImportError:
        return None
    return dp_accounting


def without_replacement_rows():
    """``[(n, m, T, z, dpedu, dpedu_thm9, dp_accounting, lower)]`` at DELTA."""
    dpa = _dp_accounting()
    rows = []
    for n, m, steps, z in WOR_CASES:
        ours = make_accountant("rdp").compose(SampledWithoutReplacementGaussianEvent(z, m, n, relation="replace_one"),
                                              steps).get_epsilon(DELTA)
        thm9 = steps * rdp_without_replacement(z, m, n, DEFAULT_ORDERS, gaussian_specific=False)
        general = epsilon_from_rdp(DEFAULT_ORDERS, thm9, DELTA)[0]
        lower = make_accountant("pld").compose(SubsampledGaussianEvent(z / 2, m / n), steps).epsilon_bracket(DELTA)[0]
        theirs = float("nan")
        if dpa is not None:
            from dp_accounting import rdp
            acc = rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
            acc.compose(dpa.SampledWithoutReplacementDpEvent(n, m, dpa.GaussianDpEvent(z / 2)), steps)
            theirs = acc.get_epsilon(DELTA)
        rows.append((n, m, steps, z, ours, general, theirs, lower))
    return rows


def main():
    print(f"Sampling without replacement, replace-one, RDP, delta = {DELTA:g}")
    print(f"{'n':>7} {'m':>6} {'T':>6} {'z':>4}  {'dpedu':>9} {'Thm 9':>9} {'dp_acc':>9} {'ratio':>9} {'lower':>9}")
    for n, m, steps, z, ours, general, theirs, lower in without_replacement_rows():
        print(f"{n:7d} {m:6d} {steps:6d} {z:4g}  {ours:9.4f} {general:9.4f} {theirs:9.4f} {ours / theirs:9.6f} "
              f"{lower:9.4f}")


if __name__ == "__main__":
    main()
