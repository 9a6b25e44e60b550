"""Audits of the final model beside composition, the linear-loss last iterate and the proven bound (docs/math.md §28).

    python benchmarks/bench_last_iterate_audit.py [--runs N] [--out PNG] [--n-jobs J]

Projected DP-SGD on the audit data (:func:`dpedu.lab.audit.make_audit_data`, n = 99 rows scaled by 0.01 so that
the other records barely move the model, plus the canary or a zero record), rows clipped to C = 1, delta = 1e-5:

* full batch: z = 1, learning rate 4, radius 0.06 (the gradient canary and the input canary);
* Poisson, q = 0.1 (n = 199 + 1): z = 1, learning rate 2.5, radius 0.3 (the gradient canary).

Each audit trains ``--runs`` models per world to the largest T and reads theta_T at every checkpoint; the threshold is
chosen on half the runs and the rates of the other half are bounded by Clopper-Pearson (95 %). The bounds are drawn
on a finer grid of T. Writes the figure (default docs/_static/notes/last_iterate.png) and prints the tables. Each
panel's audits are kept in ``--cache`` (JSON) as they finish; ``--resume`` reuses the panels found there.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpedu.lab.plotting import plot_last_iterate  # noqa: E402
from dpedu.lab.audit.data import make_audit_data  # noqa: E402
from dpedu.lab.audit.last_iterate import last_iterate_audit, last_iterate_bounds  # noqa: E402

DELTA = 1e-5
PANELS = (
    ("full batch (noisy GD): z = 1, learning rate 4, R = 0.06", 99,
     dict(noise_multiplier=1.0, sampling_rate=1.0, learning_rate=4.0, radius=0.06), ("gradient", "input"),
     (1, 3, 10, 30, 100, 300), (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 1000)),
    ("Poisson, q = 0.1: z = 1, learning rate 2.5, R = 0.3", 199,
     dict(noise_multiplier=1.0, sampling_rate=0.1, learning_rate=2.5, radius=0.3), ("gradient",),
     (3, 10, 30, 100, 300), (3, 10, 30, 100, 300, 1000, 3000, 10_000)),
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500, help="trainings per world in each audit (default 500)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), os.pardir, "docs", "_static",
                                                      "notes", "last_iterate.png"))
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--cache", default="last_iterate_audits.json", help="JSON file of the finished audits")
    parser.add_argument("--resume", action="store_true", help="reuse the audits found in --cache")
    args = parser.parse_args()
    cache = json.load(open(args.cache)) if args.resume and os.path.exists(args.cache) else {}
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), layout="constrained")
    for ax, (title, n, settings, canaries, checkpoints, grid) in zip(axes, PANELS):
        X, y = make_audit_data(n=n, d=3, rng=0)
        X = 0.01 * X
        start = time.perf_counter()
        curves = last_iterate_bounds(grid, dataset_size=n + 1, delta=DELTA, **settings)
        print(f"\n{title}: bounds at {len(grid)} values of T in {time.perf_counter() - start:.1f} s")
        audits = {}
        for canary in canaries:
            key = f"{title} | {canary} | {args.runs}"
            if key not in cache:
                audit = last_iterate_audit(X, y, steps=checkpoints, runs=args.runs, canary=canary, delta=DELTA,
                                           rng=2025, n_jobs=args.n_jobs, **settings)
                print(audit, flush=True)
                cache[key] = [audit.steps.tolist(), audit.epsilon_lower.tolist()]
                json.dump(cache, open(args.cache, "w"), indent=1)
            audits[f"{canary} canary"] = (np.array(cache[key][0]), np.array(cache[key][1]))
        plot_last_iterate(grid, *curves, delta=DELTA, audits=audits, ax=ax, title=title)
    fig.savefig(args.out, dpi=120)
    print(f"\nwrote {os.path.normpath(args.out)}")


if __name__ == "__main__":
    main()
