"""dpedu beside Google's dp_accounting for the replace-one relation and the fixed-size schemes (docs/math.md §22).

Prints, for each case, dpedu's epsilon, dp_accounting's, and their ratio, then the (scheme x relation x
accountant) table of dpedu for n = 60,000, batch 600 (q = 0.01), z = 1, T = 1,000, delta = 1e-5. Without
dp_accounting installed (``pip install dp-accounting``, benchmark only) the comparison is skipped.

Conventions: dpedu's noise multiplier is the noise over each record's norm bound C in every event; under
replace-one the accountant applies the sensitivity 2C. dp_accounting's PLD does the same for Poisson sampling
(its REPLACE adjacency), but its RDP bound for sampling without replacement takes the multiplier relative to
the replace-one sensitivity, so it is given z / 2 there.

    python benchmarks/bench_relations.py
"""

from __future__ import annotations

from dpedu.accountants import make_accountant
from dpedu.events import SampledWithoutReplacementGaussianEvent, SubsampledGaussianEvent
from dpedu.experiments.relations import format_relations_table, relations_table

N, BATCH, STEPS, DELTA = 60_000, 600, 1_000, 1e-5


def compare():
    try:
        import dp_accounting as dpa
        from dp_accounting import pld, rdp
    except ImportError:
        print("dp_accounting is not installed: comparison skipped (pip install dp-accounting)")
        return
    replace = dpa.NeighboringRelation.REPLACE_ONE
    # "lower": dpedu's optimistic PLD of the replace-one Poisson pair, a pair of neighbouring datasets for both
    # schemes (docs/math.md §22.3, §22.4): no valid upper bound may be below it
    print(f"{'case':<44} {'dpedu':>10} {'dp_acc':>10} {'ratio':>8} {'lower':>10}")
    for z in (0.8, 1.0, 2.0, 4.0):
        ours = make_accountant("pld").compose(SubsampledGaussianEvent(z, BATCH / N, relation="replace_one"), STEPS)
        lower = ours.epsilon_bracket(DELTA)[0]
        theirs = pld.PLDAccountant(replace, value_discretization_interval=1e-4)
        theirs.compose(dpa.PoissonSampledDpEvent(BATCH / N, dpa.GaussianDpEvent(z)), STEPS)
        a, b = ours.get_epsilon(DELTA), theirs.get_epsilon(DELTA)
        print(f"{f'Poisson, replace-one, PLD, z={z}':<44} {a:>10.5f} {b:>10.5f} {a / b:>8.5f} {lower:>10.5f}")
        assert a >= lower and abs(a / b - 1) < 3e-3, "replace-one Poisson PLD: outside 0.3% or below the lower bound"
    for z in (1.0, 2.0, 4.0):
        ours = make_accountant("rdp").compose(
            SampledWithoutReplacementGaussianEvent(z, BATCH, N, relation="replace_one"), STEPS)
        lower = make_accountant("pld").compose(SubsampledGaussianEvent(z, BATCH / N, relation="replace_one"),
                                               STEPS).epsilon_bracket(DELTA)[0]
        theirs = rdp.RdpAccountant(neighboring_relation=replace)
        theirs.compose(dpa.SampledWithoutReplacementDpEvent(N, BATCH, dpa.GaussianDpEvent(z / 2)), STEPS)
        a, b = ours.get_epsilon(DELTA), theirs.get_epsilon(DELTA)
        label = f"without replacement, replace-one, RDP, z={z}"
        print(f"{label:<44} {a:>10.5f} {b:>10.5f} {a / b:>8.5f} {lower:>10.5f}")
        assert a >= b * (1 - 1e-9) and a >= lower, "WOR RDP below dp_accounting's bound or below the lower bound"
    theirs = pld.PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-4)
    theirs.compose(dpa.TruncatedSubsampledGaussianDpEvent(N, BATCH / N, 2 * BATCH, 1.0), STEPS)
    print(f"{'truncated Poisson (cap 1200), add/remove, PLD':<44} {'refused':>10} {theirs.get_epsilon(DELTA):>10.5f}")


if __name__ == "__main__":
    compare()
    print()
    print(format_relations_table(relations_table(dataset_size=N, batch_size=BATCH, noise_multiplier=1.0,
                                                 steps=STEPS, delta=DELTA)))
