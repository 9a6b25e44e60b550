"""The shuffle gap, measured twice: the Monte Carlo lower bound of the §22.6 pair (dpedu.lab.audit.shuffle) and a
white-box audit of real shuffled DP-SGD runs on that pair (dpedu.lab.audit.shuffle_whitebox), beside the Poisson PLD
upper bound for the same (z, q = 1/b, T = b E, relation, delta) (docs/math.md §20.1, §22.6).

Both lower bounds hold with probability >= 95%; the audit's is also capped by its number of runs (about
ln(runs / ln 40)). Where a lower bound exceeds the Poisson number, that number is no guarantee for shuffled batches.

    python benchmarks/bench_shuffle_audit.py [--runs 4000] [--figure shuffle_audit.png]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpedu.lab.audit.shuffle import shuffle_gap
from dpedu.lab.audit.shuffle_whitebox import shuffle_whitebox_audit
from dpedu.ground.gaussian import gaussian_epsilon_exact

BATCHES, EPOCHS, DELTA = 20, 1, 1e-3
ZS = (0.75, 1.0, 1.5, 2.0, 3.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000, help="pairs of DP-SGD runs per audit (default 4000)")
    parser.add_argument("--n-samples", type=int, default=200_000, help="Monte Carlo draws (default 200000)")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--figure", default=None, help="save the figure (two panels) to this path")
    args = parser.parse_args()
    print(f"b = {BATCHES} batches per epoch, E = {EPOCHS}, delta = {DELTA:g}, {args.runs} pairs of runs per audit, "
          f"{args.n_samples} Monte Carlo draws; 95% bounds")
    print(f"{'relation':<12} {'z':>5} {'MC lower':>10} {'audit lower':>12} {'Poisson PLD':>12} {'audit s':>8}")
    results = {}
    for relation in ("add_remove", "replace_one"):
        upper, lower = shuffle_gap(ZS, batches_per_epoch=BATCHES, epochs=EPOCHS, delta=DELTA,
                                   n_samples=args.n_samples, relation=relation, rng=1)
        audits = []
        for z, up, low in zip(ZS, upper, lower):
            start = time.perf_counter()
            audit = shuffle_whitebox_audit(z, batches_per_epoch=BATCHES, epochs=EPOCHS, relation=relation,
                                           runs=args.runs, delta=DELTA, rng=2, n_jobs=args.n_jobs)
            audits.append(audit.epsilon_lower)
            print(f"{relation:<12} {z:5.2f} {low:10.4f} {audit.epsilon_lower:12.4f} {up:12.4f} "
                  f"{time.perf_counter() - start:8.1f}")
        results[relation] = (upper, lower, np.array(audits))
    if args.figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from dpedu.lab.plotting.shuffle import plot_shuffle_gap

        fig, axes = plt.subplots(2, 1, figsize=(7.0, 9.2))
        for ax, (relation, (upper, lower, audits)) in zip(axes, results.items()):
            height = 2.0 if relation == "replace_one" else 1.0
            one_step = [gaussian_epsilon_exact(DELTA, z / height / EPOCHS ** 0.5) for z in ZS]
            shown = audits > 0                                   # a log axis cannot show a bound of 0
            plot_shuffle_gap(ZS, upper, lower, one_step, delta=DELTA, relation=relation,
                             audits=(np.array(ZS)[shown], audits[shown]), ax=ax)
        handles, labels = axes[0].get_legend_handles_labels()
        for ax in axes:
            ax.get_legend().remove()
        fig.legend(handles, labels, loc="lower center", ncol=1, fontsize=9)     # one legend, off the points
        fig.tight_layout(rect=(0, 0.12, 1, 1))
        fig.savefig(args.figure, dpi=100)
        print(f"figure: {args.figure}")


if __name__ == "__main__":
    main()
