"""Membership attacks (LiRA, RMIA) against dpedu's models on Adult, beside the DP ceiling; and what shadow models cost.

    python benchmarks/bench_membership.py [--models 64] [--mlp-models 64] [--n-jobs 2] [--canary-runs 100]
                                          [--seed 0] [--out attack_roc.png] [--quick] [--timing-only]

Table 1, the shadow models at class scale: the time of ``--models`` shadow models of logistic regression on Adult
(:func:`dpedu.lab.audit.train_shadow_models`), with ``n_jobs=1`` and with ``--n-jobs``, side by side in one run,
for the experiment's pool (1,000 training-file rows + 50 canaries; b = 32, 100 epochs, T = 1641 steps) and for
the whole training file (30,162 rows + 50 canaries; b = 256, 10 epochs, T = 590 steps), non-private and at
epsilon = 8. The load average of the machine before and after is printed: other work slows every row alike.

Table 2, the attacks: for logistic regression and the 16-unit MLP, non-private and at epsilon 1, 2, 8 (delta = 1e-5,
noise calibrated with the PLD accountant), the TPR at FPR 0.1 % and 1 % of LiRA and RMIA (online and offline) for all
pool records and for the vulnerable ones (canaries and natural outliers), with 95 % percentile-bootstrap intervals
over the target models; the audit's lower bound on epsilon from the attack (95 %, Clopper-Pearson on the
evaluation half of the models); for logistic regression a canary audit of the same algorithm
(``--canary-runs`` trainings per world); and the accountant's epsilon. Every private row must stay under its
ceiling and every lower bound under the accountant's epsilon. ``--out`` writes the ROC figure of the logistic
regression (non-private, epsilon = 1, epsilon = 8; all and vulnerable records).

An attack's success is a lower bound on what a model leaks; its failure proves no privacy.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from dpedu.lab.audit import adult_membership_pool, train_shadow_models
from dpedu.lab.audit.mia_experiment import ExperimentSettings, attack_experiment, attack_table, privacy_trainer

DELTA = 1e-5
ATTACKS = ("lira-online", "lira-offline", "rmia-online", "rmia-offline")


def _load():
    return "load average %.2f, %.2f, %.2f" % os.getloadavg()


def table_timing(models, n_jobs, seed, quick):
    print(f"Table 1: {models} shadow models of logistic regression on Adult, seconds (n_jobs = 1 | n_jobs = {n_jobs}); "
          f"{os.cpu_count()} CPUs; {_load()}\n")
    head = (f"{'pool':<44} {'privacy':<12} {'T':>5} | {'n_jobs=1':>9} {f'n_jobs={n_jobs}':>9} {'ratio':>6} | "
            f"{'per model':>9}")
    print(head + "\n" + "-" * len(head))
    cases = [("1,000 rows + 50 canaries, b = 32, 100 epochs", 1000, ExperimentSettings())]
    if not quick:
        cases.append(("30,162 rows + 50 canaries, b = 256, 10 epochs", 30162,
                      ExperimentSettings(batch_size=256, epochs=10.0)))
    seconds = {}
    for name, n_records, settings in cases:
        pool = adult_membership_pool(n_records, 50, 100, rng=seed)
        for epsilon in (None, 8.0):
            trainer = privacy_trainer(settings, pool.n, epsilon, delta=DELTA)
            times = []
            for jobs in (1, n_jobs):
                train_shadow_models(pool, trainer, n_models=2, rng=seed, n_jobs=jobs)     # start the workers
                start = time.perf_counter()
                train_shadow_models(pool, trainer, n_models=models, rng=seed, n_jobs=jobs)
                times.append(time.perf_counter() - start)
            seconds[(name, epsilon)] = times
            privacy = "non-private" if epsilon is None else f"eps = {epsilon:g}"
            print(f"{name:<44} {privacy:<12} {trainer.steps:>5} | {times[0]:>9.1f} {times[1]:>9.1f} "
                  f"{times[0] / times[1]:>6.2f} | {times[1] / models:>8.3f}s", flush=True)
    print(f"\n({_load()} after Table 1)\n")
    return seconds


def table_attacks(models, mlp_models, n_jobs, canary_runs, seed, quick, out):
    pool = adult_membership_pool(1000, 50, 2000, rng=seed)
    epsilons = (None, 1.0, 8.0) if quick else (None, 1.0, 2.0, 8.0)
    print(f"Table 2: {pool.description}.")
    print("TPR at FPR 0.1% and 1% [95% bootstrap interval over the target models], 'all' and 'vuln'(erable) records; "
          "attack eps: the audit from the attack (95%); canary eps: a canary audit of the same algorithm (95%); "
          f"delta = {DELTA:g}\n")
    problems, figure_runs = [], None
    for model, k in (("logistic", models), ("mlp", mlp_models)):
        if k == 0:
            continue
        settings = ExperimentSettings(model=model)
        start = time.perf_counter()
        runs = attack_experiment(pool, settings=settings, epsilons=epsilons, n_models=k, attacks=ATTACKS,
                                 delta=DELTA, n_bootstrap=200, canary_runs=canary_runs if model == "logistic" else 0,
                                 rng=seed, n_jobs=n_jobs)
        print(f"{model}: q = {settings.sampling_rate(pool.n):.4g}, T = {settings.steps(pool.n)}, learning rate "
              f"{settings.learning_rate:g}, C = {settings.clip_norm:g} (private runs), {k} models per level "
              f"({time.perf_counter() - start:.0f} s, {_load()})")
        for run in runs:
            if run.epsilon is not None:
                print(f"  {run.label}: z = {run.trainer.noise_multiplier:.4f}")
        print(attack_table(runs) + "\n", flush=True)
        for run in runs:
            for attack, report in run.reports.items():
                if report.violations() or not report.audit.consistent or (run.canary and not run.canary.consistent):
                    problems.append(f"{model}, {run.label}, {attack}")
        if model == "logistic":
            figure_runs = [run for run in runs if run.epsilon in (None, 1.0, 8.0)]
    print("every private row under its ceiling and every lower bound under the accountant: "
          + ("yes" if not problems else "NO: " + "; ".join(problems)))
    if out and figure_runs:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure

        from dpedu.lab.plotting import plot_attack_grid

        figure = Figure(figsize=(7.3, 2.9 * len(figure_runs) + 1.0))
        plot_attack_grid({run.label: [run.reports["lira-online"], run.reports["rmia-online"]] for run in figure_runs},
                         figure=figure)
        figure.savefig(out, dpi=150)
        print(f"wrote {out}")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=64, help="shadow models (default 64)")
    parser.add_argument("--mlp-models", type=int, default=64, help="shadow models of the MLP; 0 skips it (default 64)")
    parser.add_argument("--n-jobs", type=int, default=2, help="workers (default 2)")
    parser.add_argument("--canary-runs", type=int, default=100, help="canary audit trainings per world (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the ROC figure (PNG) here")
    parser.add_argument("--quick", action="store_true", help="smaller: the experiment's pool only, fewer levels")
    parser.add_argument("--timing-only", action="store_true", help="Table 1 only")
    args = parser.parse_args(argv)
    np.seterr(all="ignore")
    print(f"bench_membership: {os.cpu_count()} CPUs, {_load()}\n")
    table_timing(args.models, args.n_jobs, args.seed, args.quick)
    if not args.timing_only:
        problems = table_attacks(args.models, args.mlp_models, args.n_jobs, args.canary_runs, args.seed, args.quick,
                                 args.out)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
