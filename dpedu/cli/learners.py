"""The learners beyond DP-SGD (docs/math.md §25) on the command line.

``python -m dpedu tradeoff --learner NAME``: one learner across an epsilon grid, each point a private selection
over the learner's fixed grid paid inside the total epsilon. ``python -m dpedu race``: chapter 11's race, all six
learners at the same total epsilons (the verdict of chapter 11 is this command's output at ``--seeds 10``).
"""

from __future__ import annotations

import csv

from ..lab.parallel import check_n_jobs
from ..ground.validation import check_delta, check_positive_int
from .common import check_output, check_positive_list, floats
from .common import figure as _figure
from .common import progress as _progress

__all__ = ["TRADEOFF_LEARNERS", "COMMANDS", "cmd_learner_tradeoff", "cmd_race"]

#: ``--learner`` choices: "dp_sgd" is the command's own DPLogisticRegression sweep; the others are
#: dpedu.lab.experiments.learners' (the names of its LEARNERS other than "dp_sgd").
TRADEOFF_LEARNERS = ("dp_sgd", "noisy_gd", "output_perturbation", "objective_perturbation", "dp_ftrl",
                     "matrix_factorization")


def cmd_learner_tradeoff(args):
    """Private selection of ``args.learner`` at every epsilon over ``args.seeds`` seeds: PNG, CSV and a table."""
    from ..textbook.datasets import load_adult
    from ..lab.experiments.learners import LEARNER_SPECS, compare_learners
    from ..lab.plotting import plot_accuracy_vs_epsilon

    check_positive_list(args.epsilons, "--epsilons")
    check_positive_int(args.seeds, "--seeds")
    check_delta(args.delta, "--delta")
    check_n_jobs(args.n_jobs, "--n-jobs")
    check_output(args.out, "--out")
    check_output(args.csv, "--csv")
    _progress("loading Adult ...")
    data = load_adult(args.data_home)
    result = compare_learners(data, args.epsilons, seeds=args.seeds, delta=args.delta, learners=(args.learner,),
                              rng=args.seed, n_jobs=args.n_jobs)
    name = LEARNER_SPECS[args.learner].name
    accuracies, chosen = result.accuracies[0], result.chosen[0]
    with open(args.csv, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["learner", "target_epsilon", "accounted_epsilon", "seed", "chosen_setting", "test_accuracy"])
        for j, eps in enumerate(result.epsilons):
            for s in range(args.seeds):
                writer.writerow([args.learner, f"{eps:g}", f"{result.accounted[0, j]:.6f}", s, int(chosen[j, s]),
                                 f"{accuracies[j, s]:.6f}"])
    fig, ax = _figure()
    plot_accuracy_vs_epsilon(result.epsilons, accuracies, baseline=result.non_private, delta=result.delta, ax=ax,
                             baseline_label="non-private (scikit-learn)", label=f"{name}, tuning paid")
    fig.savefig(args.out, dpi=150)
    print(f"{name} on Adult, private selection over {len(LEARNER_SPECS[args.learner].grid)} settings inside each "
          f"total epsilon (docs/math.md §25.7), {args.seeds} seeds\n")
    print(f"{'target eps':>10}  {'accounted eps':>13}  {'test accuracy (mean ± std)':>26}")
    for j, eps in enumerate(result.epsilons):
        acc = 100 * accuracies[j]
        sd = acc.std(ddof=1) if acc.size > 1 else 0.0
        print(f"{eps:>10g}  {result.accounted[0, j]:>13.4f}  {f'{acc.mean():.2f}% ± {sd:.2f}%':>26}")
    print(f"{'non-private':>10}  {'inf':>13}  {f'{100 * result.non_private:.2f}%':>26}")
    print(f"\nwrote {args.out} and {args.csv}")
    return 0


def _names(text):
    """'dp_sgd,noisy_gd' -> ['dp_sgd', 'noisy_gd'] (for argparse; the names are checked by the command)."""
    return [part.strip() for part in text.split(",") if part.strip()]


def _add_race(sub):
    from ..lab.experiments.learners import LEARNERS

    p = sub.add_parser(
        "race",
        help="chapter 11's race: six private learners on Adult at the same total epsilons, tuning paid",
        description="Every learner of docs/math.md §25 (noisy GD, DP-SGD, output and objective perturbation, DP-FTRL, "
                    "matrix factorisation) at each target epsilon: a private selection over its fixed grid of three "
                    "settings, the whole selection (three trainings, three noisy scores) calibrated to the target by "
                    "the PLD accountant, repeated over seeds. Prints the mean and standard deviation of the test "
                    "accuracy, the leader at each epsilon with the learners its seeds cannot separate from it, and "
                    "the accounting check. The defaults are chapter 11's verdict (10 seeds, all training rows: "
                    "about 10 minutes on two cores; --n-jobs uses more).",
        epilog="example: python -m dpedu race --seeds 3 --epsilons 0.3,3 --rows 6000",
    )
    p.add_argument("--epsilons", type=floats, default=[0.1, 0.3, 1.0, 3.0, 10.0],
                   help="comma-separated total epsilons (default 0.1,0.3,1,3,10)")
    p.add_argument("--seeds", type=int, default=10, help="selections per learner and epsilon (default 10)")
    p.add_argument("--learners", type=_names, default=list(LEARNERS),
                   help=f"comma-separated learners (default all: {','.join(LEARNERS)})")
    p.add_argument("--rows", type=int, default=None,
                   help="train on the first ROWS training rows only (default all; chapter 11's fast mode uses 6000)")
    p.add_argument("--delta", type=float, default=1e-5, help="total delta of each selection (default 1e-5)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0, the verdict's)")
    p.add_argument("--n-jobs", type=int, default=1,
                   help="joblib workers for the independent selections; -1: every core; the numbers do not depend "
                        "on it (default 1)")
    p.add_argument("--data-home", default=None, help="directory with adult.data(.gz) and adult.test(.gz)")
    p.add_argument("--out", default=None, help="also draw the chart to this PNG")
    p.add_argument("--csv", default=None, help="also write one row per selection to this CSV")
    p.set_defaults(func=cmd_race)


def cmd_race(args):
    """Chapter 11's race: every learner at every epsilon over ``args.seeds`` seeds; a table, and a PNG or CSV."""
    from ..textbook.datasets import load_adult
    from ..lab.plotting import plot_accuracy_vs_epsilon
    from ..lab.experiments.learners import LEARNER_SPECS, compare_learners

    check_positive_list(args.epsilons, "--epsilons")
    check_positive_int(args.seeds, "--seeds")
    check_delta(args.delta, "--delta")
    check_n_jobs(args.n_jobs, "--n-jobs")
    if args.rows is not None:
        check_positive_int(args.rows, "--rows")
    for option, path in (("--out", args.out), ("--csv", args.csv)):
        if path is not None:
            check_output(path, option)
    _progress("loading Adult ...")
    X_train, y_train, X_test, y_test = load_adult(args.data_home)
    if args.rows is not None:
        if args.rows > len(y_train):
            raise ValueError(f"--rows must be at most the {len(y_train)} training rows; got {args.rows}")
        X_train, y_train = X_train[:args.rows], y_train[:args.rows]
    result = compare_learners((X_train, y_train, X_test, y_test), args.epsilons, seeds=args.seeds,
                              delta=args.delta, learners=args.learners, rng=args.seed, n_jobs=args.n_jobs,
                              progress=_progress)
    _progress.close()
    print(f"Adult, {len(y_train)} training rows, delta = {result.delta:g}, root seed {args.seed}\n")
    print(result.table())
    if args.csv is not None:
        with open(args.csv, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["learner", "target_epsilon", "accounted_epsilon", "seed", "chosen_setting",
                             "test_accuracy"])
            for i, name in enumerate(result.learners):
                for j, eps in enumerate(result.epsilons):
                    for s in range(args.seeds):
                        writer.writerow([name, f"{eps:g}", f"{result.accounted[i, j]:.6f}", s,
                                         int(result.chosen[i, j, s]), f"{result.accuracies[i, j, s]:.6f}"])
        print(f"wrote {args.csv}")
    if args.out is not None:
        fig, ax = _figure(figsize=(8, 5))
        for i, name in enumerate(result.learners):
            plot_accuracy_vs_epsilon(result.epsilons, result.accuracies[i], ax=ax, label=LEARNER_SPECS[name].name,
                                     marker="osD^vP"[i % 6], delta=result.delta, spread="std",
                                     baseline=result.non_private if i == len(result.learners) - 1 else None)
        ax.set_title(f"Adult: {len(result.learners)} private learners, {args.seeds} seeds, tuning paid")
        fig.savefig(args.out, dpi=150)
        print(f"wrote {args.out}")
    return 0


COMMANDS = [_add_race]
