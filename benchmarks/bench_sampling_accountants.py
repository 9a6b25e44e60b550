"""dpedu beside Google's dp_accounting for the fixed-size sampling schemes, in one run (docs/math.md §22.3, §22.5).

    python benchmarks/bench_sampling_accountants.py

1. Sampling without replacement under replace-one (RDP): dpedu with the Gaussian-specific bound (Wang, Balle &
   Kasiviswanathan 2019), dpedu with Theorem 9 alone, dp_accounting (given z / 2: its multiplier there is relative to
   the replace-one sensitivity 2C), and a valid lower bound (the Poisson add/remove pair at z / 2, optimistic PLD).
2. Truncated Poisson by PLD under both relations: dpedu's PLD, dp_accounting's ``TruncatedSubsampledGaussianDpEvent``
   (same multiplier convention: relative to C under both relations), and dpedu's RDP bound (add/remove).
3. Under add/remove, how far dpedu's PLD (the add/remove pair for the cut branch) is below dp_accounting's (the
   replace-one pair for it) over a small grid of settings (``GAP_SETTINGS``; ``--no-gap`` leaves it out).

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
from dpedu.accountants.pld.compose import PrivacyCurve, chernoff_window, self_compose  # noqa: E402
from dpedu.accountants.pld.truncated import discretise, truncated_poisson_model  # noqa: E402
from dpedu.ground.events import (SampledWithoutReplacementGaussianEvent, SubsampledGaussianEvent,  # noqa: E402
                          TruncatedPoissonGaussianEvent)

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


#: truncated Poisson: n, batch, T, z and the caps (the mean batch is 600; its standard deviation about 24)
N, BATCH, STEPS, Z = 60_000, 600, 1_000, 1.0
CAPS = (600, 620, 650, 700, 1_200)


def dp_accounting_construction(event, steps, delta=DELTA, spacing=2.0**-13, tail=1e-15):
    """Epsilon of ``steps`` copies of a truncated-Poisson ``event`` built as dp_accounting builds it: the cut branch's
    pair taken under replace-one whatever the relation, and only the dataset of size n holding the record
    (n_o = n - 1); dpedu's discretisation and FFT (one fixed grid)."""
    worst = 0.0
    for direction in (("remove", "add") if event.relation == "add_remove" else ("remove",)):
        model = truncated_poisson_model(event, direction, 0, tail, cut_relation="replace_one")
        g = discretise(model, spacing, True, 2**24)
        composed = self_compose(g, steps, tail, True, 2**24, chernoff_window([(g, steps)], tail))
        worst = max(worst, PrivacyCurve(composed).epsilon(delta))
    return worst


def truncated_rows():
    """``[(relation, cap, dpedu PLD, dpedu PLD optimistic, dpedu as dp_accounting builds it, dp_accounting,
    dpedu RDP or nan)]`` at DELTA for n = N, q = BATCH / N, T = STEPS, z = Z."""
    dpa = _dp_accounting()
    rows = []
    for relation in ("add_remove", "replace_one"):
        for cap in CAPS:
            event = TruncatedPoissonGaussianEvent(Z, BATCH / N, cap, N, relation=relation)
            acc = make_accountant("pld").compose(event, STEPS)
            low, high = acc.epsilon_bracket(DELTA)
            rdp = (make_accountant("rdp").compose(event, STEPS).get_epsilon(DELTA) if relation == "add_remove"
                   else float("nan"))
            theirs = float("nan")
            if dpa is not None:
                from dp_accounting import pld
                adjacency = (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE if relation == "add_remove"
                             else dpa.NeighboringRelation.REPLACE_ONE)
                other = pld.PLDAccountant(adjacency, value_discretization_interval=1e-4)
                other.compose(dpa.TruncatedSubsampledGaussianDpEvent(N, BATCH / N, cap, Z), STEPS)
                theirs = other.get_epsilon(DELTA)
            rows.append((relation, cap, high, low, dp_accounting_construction(event, STEPS), theirs, rdp))
    return rows


#: a small grid for the add/remove gap between dpedu's PLD and dp_accounting's (docs/math.md §22.7): (n, q) with the
#: cap at the mean batch and 2 and 4 standard deviations above it, two noise multipliers, T = 300 steps
GAP_SETTINGS = tuple((n, q, cap, z, 300) for n, q, caps in ((2_000, 0.05, (100, 120, 140)),
                                                            (60_000, 0.01, (600, 649, 697)))
                     for cap in caps for z in (1.0, 2.0)) + ((60_000, 0.01, 600, 1.0, 1_000),)


def gap_rows(settings=GAP_SETTINGS, delta=DELTA):
    """``[(n, q, cap, z, T, dpedu PLD, dp_accounting, 1 - dpedu / dp_accounting)]`` under add/remove at ``delta``."""
    dpa = _dp_accounting()
    rows = []
    for n, q, cap, z, steps in settings:
        ours = make_accountant("pld").compose(TruncatedPoissonGaussianEvent(z, q, cap, n), steps).get_epsilon(delta)
        theirs = float("nan")
        if dpa is not None:
            from dp_accounting import pld
            other = pld.PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-4)
            other.compose(dpa.TruncatedSubsampledGaussianDpEvent(n, q, cap, z), steps)
            theirs = other.get_epsilon(delta)
        rows.append((n, q, cap, z, steps, ours, theirs, 1.0 - ours / theirs))
    return rows


def main():
    print(f"Sampling without replacement, replace-one, RDP, delta = {DELTA:g}")
    print(f"{'n':>7} {'m':>6} {'T':>6} {'z':>4}  {'dpedu':>9} {'Thm 9':>9} {'dp_acc':>9} {'ratio':>9} {'lower':>9}")
    for n, m, steps, z, ours, general, theirs, lower in without_replacement_rows():
        print(f"{n:7d} {m:6d} {steps:6d} {z:4g}  {ours:9.4f} {general:9.4f} {theirs:9.4f} {ours / theirs:9.6f} "
              f"{lower:9.4f}")
    print()
    print(f"Truncated Poisson, PLD, n = {N}, q = {BATCH / N:g}, T = {STEPS}, z = {Z:g}, delta = {DELTA:g}")
    print("(as dp_acc: dpedu's PLD with dp_accounting's construction, the cut branch under replace-one)")
    print(f"{'relation':<12} {'cap':>5}  {'dpedu':>9} {'optim.':>9} {'as dp_acc':>9} {'dp_acc':>9} {'ratio':>9} "
          f"{'RDP':>9}")
    for relation, cap, high, low, built, theirs, rdp in truncated_rows():
        print(f"{relation:<12} {cap:5d}  {high:9.4f} {low:9.4f} {built:9.4f} {theirs:9.4f} {built / theirs:9.6f} "
              f"{rdp:9.4f}")
    if "--no-gap" not in sys.argv:
        print()
        print(f"Truncated Poisson, add/remove, PLD, delta = {DELTA:g}: dpedu (its own cut-branch pair) below "
              f"dp_accounting")
        print(f"{'n':>7} {'q':>5} {'cap':>5} {'z':>4} {'T':>6}  {'dpedu':>9} {'dp_acc':>9} {'below':>7}")
        for n, q, cap, z, steps, ours, theirs, gap in gap_rows():
            print(f"{n:7d} {q:5g} {cap:5d} {z:4g} {steps:6d}  {ours:9.4f} {theirs:9.4f} {100 * gap:6.1f}%")


if __name__ == "__main__":
    main()
