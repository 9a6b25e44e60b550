"""``python -m dpedu tradeoff --learner NAME``: one of the learners beyond DP-SGD (docs/math.md §25) across an
epsilon grid, each point a private selection over the learner's fixed grid paid inside the total epsilon."""

from __future__ import annotations

import csv

from ..engine.parallel import check_n_jobs
from ..engine.validation import check_delta, check_positive_int
from .common import check_output, check_positive_list
from .common import figure as _figure
from .common import progress as _progress

__all__ = ["TRADEOFF_LEARNERS", "cmd_learner_tradeoff"]

#: ``--learner`` choices: "dp_sgd" is the command's own DPLogisticRegression sweep; the others are
#: dpedu.research.experiments.learners' (the names of its LEARNERS other than "dp_sgd").
TRADEOFF_LEARNERS = ("dp_sgd", "noisy_gd", "output_perturbation", "objective_perturbation", "dp_ftrl",
                     "matrix_factorization")


def cmd_learner_tradeoff(args):
    """Private selection of ``args.learner`` at every epsilon over ``args.seeds`` seeds: PNG, CSV and a table."""
    from ..datasets import load_adult
    from ..research.experiments.learners import LEARNER_SPECS, compare_learners
    from ..plotting import plot_accuracy_vs_epsilon

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
