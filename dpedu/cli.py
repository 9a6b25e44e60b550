"""The ``python -m dpedu`` command line.

Each subcommand lives in a small function ``cmd_<name>(args)`` registered in :data:`COMMANDS`
with its argument parser, so ``python -m dpedu --help`` lists them all.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

__all__ = ["main", "build_parser"]


def _progress(message):
    """Progress goes to stderr so tables on stdout stay clean for redirection."""
    print(message, file=sys.stderr, flush=True)


# --- demo ----------------------------------------------------------------------------------------

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
    from sklearn.linear_model import LogisticRegression

    from .accountants import compare
    from .datasets import load_adult
    from .models.logistic import accuracy
    from .training import gradient_descent, noisy_gradient_descent

    if args.seeds < 1:
        raise SystemExit("--seeds must be >= 1")
    _progress("loading Adult ...")
    data = load_adult(args.data_home)
    X_train, y_train, X_test, y_test = data
    print(f"Adult: {X_train.shape[0]:,} training rows, {X_test.shape[0]:,} test rows, {X_train.shape[1]} features; "
          f"noisy runs over {args.seeds} seeds (mean ± std)\n")

    rows = []
    _progress("scikit-learn LogisticRegression ...")
    sk = LogisticRegression(max_iter=5000).fit(X_train, y_train)
    rows.append(("scikit-learn LogisticRegression", f"{100 * sk.score(X_test, y_test):.2f}%", "non-private (ceiling)"))

    _progress("gradient descent ...")
    gd = gradient_descent(X_train, y_train, args.iterations, learning_rate=1.0)
    rows.append((f"gradient descent, {args.iterations} it, lr 1", f"{100 * accuracy(gd.theta, X_test, y_test):.2f}%",
                 "non-private"))

    seeds = np.random.SeedSequence(2024).spawn(args.seeds)
    thetas = {}
    for clip_inputs in (False, True):
        name = "noisy GD, " + ("input clipping" if clip_inputs else "gradient clipping")
        _progress(f"{name} x {args.seeds} seeds ...")
        results = [noisy_gradient_descent(X_train, y_train, args.iterations, args.epsilon, args.delta,
                                          clip_norm=args.clip, clip_mode="inputs" if clip_inputs else "gradients",
                                          rng=np.random.default_rng(s))
                   for s in seeds]
        accs = 100 * np.array([accuracy(r.theta, X_test, y_test) for r in results])
        r = results[0]
        thetas[clip_inputs] = r.theta
        spent = f"eps={r.epsilon:g}, delta={r.delta:g} (sequential, as the book)"
        rows.append((name, f"{accs.mean():.2f}% ± {accs.std(ddof=1) if len(accs) > 1 else 0.0:.2f}%", spent))

    width = max(len(row[0]) for row in rows)
    print(f"{'method':<{width}}  {'test accuracy':<16}  privacy spent (total)")
    for name, acc, spent in rows:
        print(f"{name:<{width}}  {acc:<16}  {spent}")

    if np.array_equal(thetas[False], thetas[True]):
        print(f"\n(The two noisy variants coincide: every Adult row has norm <= sqrt(14) ~ 3.74 < C = {args.clip:g}, "
              "so neither clipping ever triggers, and the same seeds draw the same noise.)")
    print(f"\nEach noisy run: {args.iterations} x GaussianEvent(z={r.details['noise_multiplier']:.3f}) plus one "
          f"LaplaceEvent(eps={args.epsilon:g}) for the count. The same run, accounted every way:")
    print(compare(r, delta=args.delta))
    return 0


# --- shared helpers ------------------------------------------------------------------------------

def _floats(text):
    """'0.1,0.5,1' -> [0.1, 0.5, 1.0] (for argparse)."""
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers such as 0.1,1,10; got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one number")
    return values


def _names(text):
    """'rdp,pld' -> ('rdp', 'pld')."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        raise argparse.ArgumentTypeError("expected comma-separated accountant names such as rdp,pld")
    return names


def _steps_and_epochs(args):
    """(steps, epochs) from --steps or --epochs (exactly one), with steps = round(epochs / q)."""
    from .experiments import steps_from_epochs

    if (args.steps is None) == (args.epochs is None):
        raise ValueError("give exactly one of --epochs and --steps")
    if args.steps is not None:
        if args.steps < 1:
            raise ValueError(f"--steps must be >= 1; got {args.steps}")
        return args.steps, args.steps * args.sampling_rate
    steps = steps_from_epochs(args.epochs, args.sampling_rate)
    return steps, args.epochs


def _figure(nrows=1, ncols=1, figsize=(7, 4.5)):
    """A matplotlib Figure not attached to pyplot: no GUI backend and no global state are touched."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(nrows, ncols)


def _wrap(text, indent="    ", hanging="    "):
    import textwrap

    return textwrap.fill(text, width=110, initial_indent=indent, subsequent_indent=hanging)


# --- epsilon --------------------------------------------------------------------------------------

def _add_epsilon(sub):
    from .experiments import ACCOUNTANT_KEYS

    p = sub.add_parser(
        "epsilon",
        help="the epsilon of one DP-SGD run by every accountant, side by side",
        description="Account one DP-SGD run (Poisson sampling rate q, noise multiplier z, T steps; add/remove "
                    "neighbours) with every accountant and print the total epsilon each certifies at delta, then "
                    "a sentence with the tightest valid bound. Beside the valid strong-composition recipe, the "
                    "recipe that reproduces Abadi et al.'s Figure 2 is shown and marked: it is NOT a valid bound.",
        epilog="example: python -m dpedu epsilon --noise-multiplier 4 --sampling-rate 0.01 --epochs 100 --delta 1e-5",
    )
    p.add_argument("--noise-multiplier", "-z", type=float, required=True, help="z = noise std / clip norm")
    p.add_argument("--sampling-rate", "-q", type=float, required=True,
                   help="Poisson sampling rate q in (0, 1]; 1 means full-batch steps (then zCDP applies)")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--epochs", type=float, help="epochs; steps = round(epochs / q)")
    group.add_argument("--steps", type=int, help="number of steps T")
    p.add_argument("--delta", type=float, default=1e-5, help="total delta (default 1e-5)")
    p.add_argument("--accountants", type=_names, default=ACCOUNTANT_KEYS,
                   help=f"comma-separated subset of {','.join(ACCOUNTANT_KEYS)} (default: all)")
    p.set_defaults(func=cmd_epsilon)


def cmd_epsilon(args):
    from .experiments import ACCOUNTANT_LABELS, INVALID_BOUNDS, epsilon_for_run

    steps, epochs = _steps_and_epochs(args)
    values, notes = epsilon_for_run(noise_multiplier=args.noise_multiplier, sampling_rate=args.sampling_rate,
                                    steps=steps, delta=args.delta, accountants=args.accountants)
    q = args.sampling_rate
    batches = "full batch (every record, every step)" if q == 1 else f"Poisson sampling rate q = {q:g}"
    print(f"DP-SGD: noise multiplier z = {args.noise_multiplier:g}, {batches}, T = {steps:,} steps "
          f"({epochs:g} epochs), delta = {args.delta:g}; add/remove neighbours\n")
    width = max(len(ACCOUNTANT_LABELS[key]) for key in values)
    print(f"{'accountant':<{width}}  {'epsilon':>10}")
    footnotes = []
    for key, eps in values.items():
        mark = ""
        if key in notes:
            footnotes.append((key, notes[key]))
            mark = f"  [{len(footnotes)}]"
        shown = "n/a" if math.isnan(eps) else f"{eps:.4f}"
        print(f"{ACCOUNTANT_LABELS[key]:<{width}}  {shown:>10}{mark}")
    if footnotes:
        print()
        for number, (key, note) in enumerate(footnotes, start=1):
            print(_wrap(f"[{number}] {key}: {note}", indent=""))
    valid = {key: eps for key, eps in values.items() if key not in INVALID_BOUNDS and not math.isnan(eps)}
    print()
    if not valid:
        print("No valid accountant applies to this run.")
        return 1
    best = min(valid, key=valid.get)
    step_text = "full-batch" if q == 1 else f"Poisson-subsampled (q = {q:g})"
    print(_wrap(f"An algorithm that runs {steps:,} {step_text} Gaussian steps with noise multiplier "
                f"z = {args.noise_multiplier:g} is ({valid[best]:.4g}, {args.delta:g})-DP by the "
                f"{ACCOUNTANT_LABELS[best]} accountant, the tightest valid bound above.", indent="", hanging=""))
    return 0


# --- plan -----------------------------------------------------------------------------------------

ADULT_TRAIN_SIZE = 30_162


def _add_plan(sub):
    p = sub.add_parser(
        "plan",
        help="pro-active DP: choose the noise and the schedule for a budget before training",
        description="Pro-active DP (van Dijk et al., arXiv 2102.09030): from a budget (epsilon, delta = 1/N) choose "
                    "the noise multiplier z = sqrt(2 (epsilon + ln(1/delta)) / epsilon) (independent of the number "
                    "of steps), then the steps T = ceil(2 k^2 / epsilon), sampling rate q = k/T and expected batch "
                    "size s = kN/T. Every condition of the closed form is checked; the tight accountants account "
                    "the same run and calibrate their own z beside it.",
        epilog="example: python -m dpedu plan --epsilon 0.5 --dataset-size 60000 --epochs 5",
    )
    p.add_argument("--epsilon", type=float, required=True, help="total epsilon of the training run (<= 0.5)")
    p.add_argument("--dataset-size", "-n", type=int, default=ADULT_TRAIN_SIZE,
                   help=f"number of training records N (default {ADULT_TRAIN_SIZE:,}, Adult's training set)")
    p.add_argument("--epochs", "-k", type=int, default=None,
                   help="epochs k (default: the smallest admissible for N, k >= (e/2) sqrt(ln N + 1/2))")
    p.add_argument("--delta", type=float, default=None, help="total delta (default 1/N, the paper's setting)")
    p.add_argument("--steps", type=int, default=None, help="steps T (default: the smallest admissible)")
    p.add_argument("--accountants", type=_names, default=("moments", "rdp", "pld"),
                   help="accountants to compare with (default moments,rdp,pld)")
    p.add_argument("--no-strict", dest="strict", action="store_false",
                   help="plan even when a condition fails (with a warning) instead of refusing")
    p.set_defaults(func=cmd_plan)


def cmd_plan(args):
    import warnings

    from .proactive import ProactiveConditionWarning, plan, smallest_admissible_epochs

    epochs = args.epochs
    if epochs is None:
        epochs = smallest_admissible_epochs(args.dataset_size)
        _progress(f"epochs: the smallest admissible for N = {args.dataset_size:,} is k = {epochs}")
    _progress("planning and accounting ...")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ProactiveConditionWarning)
        result = plan(epsilon=args.epsilon, dataset_size=args.dataset_size, epochs=epochs, delta=args.delta,
                      steps=args.steps, accountants=args.accountants, strict=args.strict)
    print(result)
    for w in caught:
        if issubclass(w.category, ProactiveConditionWarning):
            print("\n" + _wrap(f"WARNING: {w.message}", indent=""))
    return 0


# --- figure2 --------------------------------------------------------------------------------------

def _add_figure2(sub):
    p = sub.add_parser(
        "figure2",
        help="Figure 2 of Abadi et al. (2016) with every accountant: epsilon against epochs",
        description="Draw the total epsilon of DP-SGD against the number of epochs for every accountant that "
                    "applies (Abadi et al. 2016, Figure 2: q = 0.01, z = 4, delta = 1e-5, epochs 1..400). Left: the "
                    "paper's two curves (moments accountant; strong composition as in the paper, NOT a valid "
                    "bound) with the valid strong-composition recipe. Right: every accountant, log scale.",
        epilog="example: python -m dpedu figure2 --out figure2.png",
    )
    p.add_argument("--out", default="figure2.png", help="output PNG (default figure2.png)")
    p.add_argument("--csv", default=None, help="also write the numbers to this CSV file")
    p.add_argument("--noise-multiplier", "-z", type=float, default=4.0, help="z (default 4, as the paper)")
    p.add_argument("--sampling-rate", "-q", type=float, default=0.01, help="q (default 0.01, as the paper)")
    p.add_argument("--delta", type=float, default=1e-5, help="delta (default 1e-5, as the paper)")
    p.add_argument("--max-epochs", type=float, default=400, help="last epoch on the x axis (default 400)")
    p.add_argument("--points", type=int, default=20, help="evenly spaced epoch values, plus 1, 2, 5, 10 (default 20)")
    p.set_defaults(func=cmd_figure2)


def figure2_epochs(max_epochs, points):
    """1, 2, 5, 10 (the early curve) and ``points`` evenly spaced values up to ``max_epochs``."""
    if points < 1:
        raise ValueError(f"--points must be >= 1; got {points}")
    if not max_epochs > 0:
        raise ValueError(f"--max-epochs must be > 0; got {max_epochs}")
    grid = np.concatenate([[1, 2, 5, 10], np.linspace(0, max_epochs, points + 1)[1:]])
    return np.unique(grid[grid <= max_epochs])


def cmd_figure2(args):
    from .experiments import ACCOUNTANT_LABELS, epsilon_curves
    from .plotting import plot_figure2

    epochs = figure2_epochs(args.max_epochs, args.points)
    curves = epsilon_curves(noise_multiplier=args.noise_multiplier, sampling_rate=args.sampling_rate, delta=args.delta,
                            epochs=epochs, progress=_progress)
    fig, axes = _figure(1, 2, figsize=(13, 5))
    plot_figure2(curves, axes)
    fig.savefig(args.out, dpi=150)
    print(f"wrote {args.out}")
    if args.csv:
        curves.to_csv(args.csv)
        print(f"wrote {args.csv}")
    shown = [e for e in (100, 400) if e in curves.epochs]
    if shown:
        print(f"\ntotal epsilon at delta = {args.delta:g}:")
        print(f"  {'accountant':<55}" + "".join(f"{f'{e:g} epochs':>13}" for e in shown))
        for key, values in curves.epsilons.items():
            cells = "".join(f"{values[list(curves.epochs).index(e)]:>13.4f}" for e in shown)
            print(f"  {ACCOUNTANT_LABELS[key]:<55}{cells}")
    for key, note in curves.notes.items():
        if key not in curves.epsilons:
            print(_wrap(f"{key}: not drawn. {note}", indent="  "))
    return 0


# --- tradeoff -------------------------------------------------------------------------------------

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
    p.add_argument("--out", default="tradeoff.png", help="output PNG (default tradeoff.png)")
    p.add_argument("--csv", default="tradeoff.csv", help="output CSV (default tradeoff.csv)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--data-home", default=None, help="directory with adult.data(.gz) and adult.test(.gz)")
    p.set_defaults(func=cmd_tradeoff)


def cmd_tradeoff(args):
    from .datasets import load_adult
    from .experiments import run_tradeoff
    from .plotting import plot_accuracy_vs_epsilon

    if args.seeds < 1:
        raise ValueError(f"--seeds must be >= 1; got {args.seeds}")
    _progress("loading Adult ...")
    data = load_adult(args.data_home)
    result = run_tradeoff(data, epsilons=args.epsilons, seeds=args.seeds, delta=args.delta, accountant=args.accountant,
                          epochs=args.epochs, sampling_rate=args.sampling_rate, clip_norm=args.clip_norm,
                          learning_rate=args.learning_rate, rng=args.seed, progress=_progress)
    result.to_csv(args.csv)
    fig, ax = _figure()
    plot_accuracy_vs_epsilon(result.epsilons, result.accuracies, baseline=result.baseline, delta=result.delta, ax=ax,
                             baseline_label="non-private (scikit-learn)", label=f"DP-SGD, calibrated on {args.accountant}")
    ax.set_title(f"Adult, logistic regression: {args.epochs:g} epochs, q = {args.sampling_rate:g}, "
                 f"C = {args.clip_norm:g}", fontsize="medium")
    fig.savefig(args.out, dpi=150)
    steps = round(args.epochs / args.sampling_rate)
    print(f"DP-SGD logistic regression on Adult, {steps} steps per run, {args.seeds} seeds per epsilon\n")
    print(f"{'target eps':>10}  {'certified eps':>13}  {'z':>8}  {'test accuracy (mean ± std)':>26}")
    for i, eps in enumerate(result.epsilons):
        acc = 100 * result.accuracies[i]
        sd = acc.std(ddof=1) if acc.size > 1 else 0.0
        print(f"{eps:>10g}  {result.achieved_epsilons[i]:>13.4f}  {result.noise_multipliers[i]:>8.3f}  "
              f"{f'{acc.mean():.2f}% ± {sd:.2f}%':>26}")
    print(f"{'non-private':>10}  {'inf':>13}  {0:>8.3f}  {f'{100 * result.baseline:.2f}%':>26}")
    print(f"\nwrote {args.out} and {args.csv}")
    return 0


# --- audit ----------------------------------------------------------------------------------------

def _add_audit(sub):
    p = sub.add_parser(
        "audit",
        help="canary audit of DP-SGD: an empirical LOWER bound on epsilon beside the RDP/PLD upper bounds",
        description="Train DP-SGD logistic regression many times on a small synthetic dataset with and without a "
                    "canary record (a large-norm row along a feature no other row uses), score every model by its "
                    "margin on the canary, choose a threshold on half of the runs and turn the false-positive and "
                    "false-negative rates of the other half into a lower bound on epsilon with Clopper-Pearson "
                    "confidence bounds (Jagielski, Ullman, Oprea 2020; Nasr et al. 2021). A correct "
                    "implementation has lower bound <= every accountant's upper bound.",
        epilog="example: python -m dpedu audit --noise-multiplier 1 --sampling-rate 1 --steps 4 --runs 1000",
    )
    p.add_argument("--noise-multiplier", "-z", type=float, default=1.0,
                   help="z = noise std / clip norm; 0 trains without noise (default 1)")
    p.add_argument("--sampling-rate", "-q", type=float, default=1.0,
                   help="Poisson sampling rate q in (0, 1]; 1 is full-batch noisy gradient descent (default 1)")
    p.add_argument("--steps", type=int, default=4, help="steps T per training (default 4)")
    p.add_argument("--runs", type=int, default=1000, help="trainings with and trainings without the canary (default 1000)")
    p.add_argument("--delta", type=float, default=1e-5, help="delta at which epsilon is audited (default 1e-5)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence of the lower bound (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="root seed of all trainings (default 0)")
    p.add_argument("--n", type=int, default=100, help="records in the synthetic dataset (default 100)")
    p.add_argument("--canary", choices=("least_used", "mislabeled"), default="least_used",
                   help="canary design (default least_used, the stronger)")
    p.add_argument("--clip-norm", type=float, default=1.0, help="clip norm C (default 1)")
    p.add_argument("--learning-rate", type=float, default=0.1, help="learning rate (default 0.1)")
    p.set_defaults(func=cmd_audit)


def cmd_audit(args):
    from .audit import canary_audit, dp_sgd_trainer, make_audit_data, make_canary

    if args.runs < 4:
        raise ValueError(f"--runs must be >= 4 (half choose the threshold, half measure it); got {args.runs}")
    X, y = make_audit_data(n=args.n, d=3, rng=np.random.SeedSequence(args.seed).spawn(1)[0])
    canary = make_canary(X, y, kind=args.canary, norm=5.0 * args.clip_norm)
    train = dp_sgd_trainer(noise_multiplier=args.noise_multiplier, sampling_rate=args.sampling_rate,
                           steps=args.steps, clip_norm=args.clip_norm, learning_rate=args.learning_rate)
    _progress(f"auditing {train.description} with {args.runs} + {args.runs} trainings ...")
    result = canary_audit(train, X, y, canary, runs=args.runs, delta=args.delta, confidence=args.confidence,
                          rng=args.seed, progress=_progress)
    print(f"Synthetic data: {args.n} records, 3 features + 1 unused; canary: {args.canary}")
    print(result)
    valid = {k: v for k, v in result.upper_bounds.items() if not math.isnan(v)}
    tightest = min(valid.values()) if valid else math.inf
    print()
    if not result.consistent:
        print(_wrap(f"The audit proves epsilon >= {result.epsilon_lower:.3f} at delta = {args.delta:g}, above the "
                    f"accountants' {tightest:.3f}: the implementation or its accounting is wrong.", indent="",
                    hanging=""))
        return 1
    upper = "no finite upper bound (a non-private run)" if math.isinf(tightest) else         f"the accountants prove epsilon <= {tightest:.3f}"
    print(_wrap(f"With {result.confidence:.0%} confidence this run leaks epsilon >= {result.epsilon_lower:.3f} at "
                f"delta = {args.delta:g}; {upper}. The true epsilon lies in between.", indent="", hanging=""))
    return 0


# --- strip-solutions ------------------------------------------------------------------------------

def _add_strip(sub):
    p = sub.add_parser(
        "strip-solutions",
        help="write student copies of the chapter notebooks (solutions replaced by stubs, outputs cleared)",
        description="Copy every notebook of SOURCE to OUT_DIR with each '### BEGIN SOLUTION' ... '### END "
                    "SOLUTION' region replaced by raise NotImplementedError(...), as nbgrader does, and all outputs "
                    "cleared. OUT_DIR must not be the source folder.",
        epilog="example: python -m dpedu strip-solutions chapters build/student",
    )
    p.add_argument("source", help="a folder of notebooks (or one notebook)")
    p.add_argument("out_dir", help="where to write the student copies")
    p.set_defaults(func=cmd_strip_solutions)


def cmd_strip_solutions(args):
    from .exercises import make_student_copies

    for path in make_student_copies(args.source, args.out_dir):
        print(f"wrote {path}")
    return 0


COMMANDS = [_add_demo, _add_epsilon, _add_plan, _add_figure2, _add_tradeoff, _add_audit, _add_strip]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m dpedu",
        description="dpedu: differentially private machine learning, for teaching. Run a subcommand with --help "
                    "for its options.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except ValueError as exc:  # bad numbers from the user: say what is wrong, no traceback
        parser.exit(2, f"error: {exc}\n")
