"""Commands that train on Adult: ``demo`` (noisy gradient descent) and ``tradeoff`` (DP-SGD over an epsilon grid).
"""

from __future__ import annotations

import numpy as np

from ..lab.parallel import check_n_jobs
from ..ground.validation import check_delta, check_epsilon, check_positive, check_positive_int, check_sampling_rate
from .common import check_accountants, check_input_dir, check_output, check_positive_list, check_steps
from .common import figure as _figure
from .common import floats as _floats
from .common import progress as _progress
from .common import wrap as _wrap
from .learners import TRADEOFF_LEARNERS, cmd_learner_tradeoff

__all__ = ['COMMANDS', 'cmd_demo', 'cmd_tradeoff']


def _add_demo(sub):
    p = sub.add_parser(
        "demo",
        help="train on Adult: non-private vs noisy gradient descent, accuracy and privacy spent",
        description="Load Adult, train scikit-learn's LogisticRegression (the non-private ceiling), the book's "
                    "gradient descent and noisy gradient descent over several seeds, and print test accuracy "
                    "beside the privacy each run spent.",
    )
    p.add_argument("--seeds", type=int, default=10, help="number of seeds for the noisy runs (default 10)")
    p.add_argument("--iterations", type=int, default=10, help="gradient descent iterations (default 10, as the book)")
    p.add_argument("--epsilon", type=float, default=0.1, help="per-iteration epsilon (default 0.1, as the book)")
    p.add_argument("--delta", type=float, default=1e-5, help="per-iteration delta (default 1e-5)")
    p.add_argument("--clip", type=float, default=5.0, help="clip norm C (default 5, as the book)")
    p.add_argument("--data-home", default=None, help="directory with adult.data(.gz) and adult.test(.gz)")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args):
    from ..accountants import compare
    from ..textbook.datasets import load_adult
    from ..lab.experiments import non_private_accuracy
    from ..textbook.models.logistic import accuracy
    from ..textbook.training import gradient_descent, plan_noisy_gradient_descent, run_noisy_gradient_descent

    check_positive_int(args.seeds, "--seeds")
    check_positive_int(args.iterations, "--iterations")
    check_epsilon(args.epsilon, "--epsilon")
    check_delta(args.delta, "--delta")
    check_input_dir(args.data_home, "--data-home")
    _progress("loading Adult ...")
    data = load_adult(args.data_home)
    X_train, y_train, X_test, y_test = data
    print(f"Adult: {X_train.shape[0]:,} training rows, {X_test.shape[0]:,} test rows, {X_train.shape[1]} features; "
          f"noisy runs over {args.seeds} seeds (mean ± std)\n")

    rows = []
    _progress("scikit-learn LogisticRegression ...")
    ceiling = non_private_accuracy(data)       # the one baseline: the same number as `tradeoff` and the chapters
    rows.append(("scikit-learn LogisticRegression", f"{100 * ceiling:.2f}%", "non-private (ceiling)"))

    _progress("gradient descent ...")
    gd = gradient_descent(X_train, y_train, args.iterations, learning_rate=1.0)
    rows.append((f"gradient descent, {args.iterations} it, lr 1", f"{100 * accuracy(gd.theta, X_test, y_test):.2f}%",
                 "non-private"))

    seeds = np.random.SeedSequence(2024).spawn(args.seeds)
    thetas = {}
    for clip_inputs in (False, True):
        name = "noisy GD, " + ("input clipping" if clip_inputs else "gradient clipping")
        results = []
        for i, s in enumerate(seeds, start=1):
            _progress(f"[{i}/{args.seeds}] {name}, seed {i}")
            plan = plan_noisy_gradient_descent(args.iterations, args.epsilon, args.delta, clip_norm=args.clip,
                                               clip_mode="inputs" if clip_inputs else "gradients")
            results.append(run_noisy_gradient_descent(X_train, y_train, plan, rng=np.random.default_rng(s)))
        accs = 100 * np.array([accuracy(r.theta, X_test, y_test) for r in results])
        r = results[0]
        thetas[clip_inputs] = r.theta
        spent = f"eps={r.epsilon:g}, delta={r.delta:g} (the book's sum, below)"
        rows.append((name, f"{accs.mean():.2f}% ± {accs.std(ddof=1) if len(accs) > 1 else 0.0:.2f}%", spent))

    width = max(len(row[0]) for row in rows)
    print(f"{'method':<{width}}  {'test accuracy':<16}  privacy spent (total)")
    for name, acc, spent in rows:
        print(f"{name:<{width}}  {acc:<16}  {spent}")

    if np.array_equal(thetas[False], thetas[True]):
        print(f"\n(The two noisy variants coincide: every Adult row has norm <= sqrt(14) ~ 3.74 < C = {args.clip:g}, "
              "so neither clipping ever triggers, and the same seeds draw the same noise.)")
    # The book adds up what each release was calibrated for; the accountants take the same run at the same total delta.
    steps, eps, delta = args.iterations, args.epsilon, args.delta
    table = compare(r, delta=r.delta)
    print("\n" + _wrap(f"Each noisy run: {steps} x GaussianEvent(z={r.details.plan.noise_multiplier:.3f}) plus one "
                       f"LaplaceEvent(eps={eps:g}) for the count. The book adds up what each release was calibrated "
                       f"for: {steps} x {eps:g} + {eps:g} = {r.epsilon:g} at delta {steps} x {delta:g} = {r.delta:g}. "
                       f"The same run, accounted every way at that total delta {r.delta:g}:", indent="", hanging=""))
    print(table)
    sequential = table.get("sequential", float("nan"))
    if sequential == sequential:
        relation = "<" if sequential < r.epsilon else ">="
        print("\n" + _wrap(f"('sequential' adds up the same {steps + 1} releases as the book, at the same delta "
                           f"{delta:g} per step, but takes each Gaussian step's exact epsilon at that delta (the "
                           f"analytic Gaussian mechanism) instead of the {eps:g} the classic calibration guarantees: "
                           f"{sequential:.4f} {relation} {r.epsilon:g}.)", indent="", hanging=""))
    return 0


def _add_tradeoff(sub):
    p = sub.add_parser(
        "tradeoff",
        help="train DP-SGD on Adult across an epsilon grid; write the accuracy-vs-epsilon PNG and a CSV",
        description="For every target epsilon, calibrate the noise so the whole run costs at most (epsilon, delta) "
                    "on the chosen accountant, train DPLogisticRegression (DP-SGD, Poisson sampling) over several "
                    "seeds, and record the test accuracy. Writes a PNG (mean and min-max band over seeds, "
                    "non-private line, log-scale total epsilon) and a CSV with one row per run.",
        epilog="example: python -m dpedu tradeoff --epsilons 0.05,0.1,0.5,1,5 --seeds 5 --out tradeoff.png",
    )
    p.add_argument("--epsilons", type=_floats, default=[0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0],
                   help="comma-separated total epsilons (default 0.02,0.05,0.1,0.2,0.5,1,2,5,10)")
    p.add_argument("--seeds", type=int, default=5, help="runs per epsilon (default 5)")
    p.add_argument("--delta", type=float, default=1e-5, help="total delta (default 1e-5)")
    p.add_argument("--accountant", default="rdp", help="accountant used to calibrate (default rdp)")
    p.add_argument("--epochs", type=float, default=32, help="epochs per run (default 32)")
    p.add_argument("--sampling-rate", "-q", type=float, default=0.05, help="Poisson sampling rate (default 0.05)")
    p.add_argument("--clip-norm", type=float, default=0.5, help="clip norm C (default 0.5)")
    p.add_argument("--learning-rate", type=float, default=16.0, help="learning rate (default 16, decayed linearly)")
    p.add_argument("--sampling", choices=("poisson", "fixed"), default="poisson",
                   help="batches: Poisson sampling at rate q, or exactly round(q n) records drawn without replacement "
                        "each step (default poisson)")
    p.add_argument("--relation", choices=("add_remove", "replace_one"), default="add_remove",
                   help="neighbouring relation of the guarantee (default add_remove); the accountant must cover the "
                        "(sampling, relation) pair: replace_one with poisson needs --accountant pld, fixed needs "
                        "replace_one and --accountant rdp")
    p.add_argument("--out", default="tradeoff.png", help="output PNG (default tradeoff.png)")
    p.add_argument("--csv", default="tradeoff.csv", help="output CSV (default tradeoff.csv)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--n-jobs", type=int, default=1,
                   help="joblib workers for the independent trainings; -1: every core; the numbers do not depend on it "
                        "(default 1)")
    p.add_argument("--data-home", default=None, help="directory with adult.data(.gz) and adult.test(.gz)")
    p.add_argument("--learner", choices=TRADEOFF_LEARNERS, default="dp_sgd",
                   help="dp_sgd (default: the options above) or a learner of docs/math.md §25, tuned by private "
                        "selection inside each total epsilon (the DP-SGD options are then unused)")
    p.set_defaults(func=cmd_tradeoff)


def cmd_tradeoff(args):
    from ..textbook.datasets import load_adult
    from ..lab.experiments import run_tradeoff
    from ..lab.plotting import plot_accuracy_vs_epsilon

    if args.learner != "dp_sgd":
        return cmd_learner_tradeoff(args)
    # every option is checked before Adult is loaded or anything is trained
    check_positive_list(args.epsilons, "--epsilons")
    check_positive_int(args.seeds, "--seeds")
    check_delta(args.delta, "--delta")
    check_accountants([args.accountant], "--accountant")
    check_positive(args.epochs, "--epochs")
    check_sampling_rate(args.sampling_rate, "--sampling-rate")
    check_positive(args.clip_norm, "--clip-norm")
    check_positive(args.learning_rate, "--learning-rate")
    check_n_jobs(args.n_jobs, "--n-jobs")
    steps = check_steps(args.epochs, args.sampling_rate)
    check_output(args.out, "--out")
    check_output(args.csv, "--csv")
    check_input_dir(args.data_home, "--data-home")
    _progress("loading Adult ...")
    data = load_adult(args.data_home)
    result = run_tradeoff(data, epsilons=args.epsilons, seeds=args.seeds, delta=args.delta, accountant=args.accountant,
                          epochs=args.epochs, sampling_rate=args.sampling_rate, clip_norm=args.clip_norm,
                          learning_rate=args.learning_rate, rng=args.seed, progress=_progress, n_jobs=args.n_jobs,
                          estimator_params={"sampling": args.sampling, "relation": args.relation})
    result.to_csv(args.csv)
    fig, ax = _figure()
    plot_accuracy_vs_epsilon(result.epsilons, result.accuracies, baseline=result.baseline, delta=result.delta, ax=ax,
                             baseline_label="non-private (scikit-learn)", label=f"DP-SGD, calibrated on {args.accountant}")
    ax.set_title(f"Adult, logistic regression: {args.epochs:g} epochs, q = {args.sampling_rate:g}, "
                 f"C = {args.clip_norm:g}", fontsize="medium")
    fig.savefig(args.out, dpi=150)
    print(f"DP-SGD logistic regression on Adult, {steps} steps per run, {args.seeds} seeds per epsilon; "
          f"{args.sampling} sampling, {args.relation.replace('_', '/')} neighbours\n")
    print(f"{'target eps':>10}  {'certified eps':>13}  {'z':>8}  {'test accuracy (mean ± std)':>26}")
    for i, eps in enumerate(result.epsilons):
        acc = 100 * result.accuracies[i]
        sd = acc.std(ddof=1) if acc.size > 1 else 0.0
        print(f"{eps:>10g}  {result.achieved_epsilons[i]:>13.4f}  {result.noise_multipliers[i]:>8.3f}  "
              f"{f'{acc.mean():.2f}% ± {sd:.2f}%':>26}")
    print(f"{'non-private':>10}  {'inf':>13}  {0:>8.3f}  {f'{100 * result.baseline:.2f}%':>26}")
    print(f"\nwrote {args.out} and {args.csv}")
    return 0


COMMANDS = [_add_demo, _add_tradeoff]
