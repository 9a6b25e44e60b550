"""Commands that only account: ``epsilon`` (one run, every accountant), ``plan`` (pro-active DP) and ``figure2``.
"""

from __future__ import annotations

import math

import numpy as np

from .common import add_run_options, check_accountants, check_output, check_steps
from .common import figure as _figure
from .common import names as _names
from .common import progress as _progress
from .common import steps_and_epochs as _steps_and_epochs
from .common import wrap as _wrap

__all__ = ['COMMANDS', 'ADULT_TRAIN_SIZE', 'cmd_epsilon', 'cmd_plan', 'cmd_figure2', 'figure2_epochs']


def _add_epsilon(sub):
    from ..lab.experiments import ACCOUNTANT_KEYS

    p = sub.add_parser(
        "epsilon",
        help="the epsilon of one DP-SGD run by every accountant, side by side",
        description="Account one DP-SGD run (Poisson sampling rate q, noise multiplier z, T steps; add/remove "
                    "neighbours) with every accountant and print the total epsilon each certifies at delta, then "
                    "a sentence with the tightest valid bound. Beside the valid strong-composition recipe, the "
                    "recipe that reproduces Abadi et al.'s Figure 2 is shown and marked: it is NOT a valid bound.",
        epilog="example: python -m dpedu epsilon --noise-multiplier 4 --sampling-rate 0.01 --epochs 100 --delta 1e-5",
    )
    add_run_options(p, "Poisson sampling rate q in (0, 1]; 1 means full-batch steps (then zCDP applies)")
    p.add_argument("--delta", type=float, default=1e-5, help="total delta (default 1e-5)")
    p.add_argument("--accountants", type=_names, default=ACCOUNTANT_KEYS,
                   help=f"comma-separated subset of {','.join(ACCOUNTANT_KEYS)} (default: all)")
    last = p.add_argument_group(
        "the last iterate", "what the released model alone reveals (docs/math.md §28). The linear-loss heuristic is "
        "always shown; the proven bound needs projected logistic regression on rows clipped to C: give --radius, "
        "--learning-rate and --dataset-size (and --clip-norm, --l2 if not 1 and 0)")
    last.add_argument("--radius", type=float, default=None, help="R: every iterate projected onto the ball of radius R")
    last.add_argument("--learning-rate", type=float, default=None, help="the constant learning rate eta")
    last.add_argument("--dataset-size", "-n", type=int, default=None, help="n, the number of training records")
    last.add_argument("--clip-norm", type=float, default=1.0, help="C, the norm rows are clipped to (default 1)")
    last.add_argument("--l2", type=float, default=0.0, help="lambda of (lambda/2)|theta|^2 (default 0)")
    p.set_defaults(func=cmd_epsilon)


def cmd_epsilon(args):
    from ..lab.experiments import ACCOUNTANT_LABELS, INVALID_BOUNDS, epsilon_for_run

    steps, epochs = _steps_and_epochs(args)
    _check_last_iterate_options(args)
    values = epsilon_for_run(noise_multiplier=args.noise_multiplier, sampling_rate=args.sampling_rate,
                             steps=steps, delta=args.delta, accountants=args.accountants)
    notes = values.notes
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
    _print_last_iterate(args, steps)
    return 0


def _check_last_iterate_options(args):
    """The last-iterate options, each refused by its name before anything is printed."""
    from ..ground.validation import check_nonnegative, check_positive, check_positive_int

    for value, option in ((args.radius, "--radius"), (args.learning_rate, "--learning-rate"),
                          (args.clip_norm, "--clip-norm")):
        if value is not None:
            check_positive(value, option)
    if args.dataset_size is not None:
        check_positive_int(args.dataset_size, "--dataset-size")
    check_nonnegative(args.l2, "--l2")


def _print_last_iterate(args, steps):
    """The last-iterate lines of ``epsilon``: the linear-loss heuristic, and the proven bound when the options say the
    run is projected logistic regression (every condition checked by the bound itself)."""
    from ..accountants import LinearLastIterateEvent, account
    from ..accountants.convex_last_iterate import convex_last_iterate_bound

    heuristic = account([(LinearLastIterateEvent(args.noise_multiplier, args.sampling_rate, steps), 1)], "pld",
                        delta=args.delta)
    print("\nIf only the final model is released (the last iterate, docs/math.md §28):")
    print(f"  {'linear-loss heuristic (PLD)':<34}{heuristic.epsilon:>10.4f}  [h]")
    given = {"--radius": args.radius, "--learning-rate": args.learning_rate, "--dataset-size": args.dataset_size}
    missing = [option for option, value in given.items() if value is None]
    footnote = ("[h] exact when the loss is linear in theta; for any other loss a heuristic, NOT a guarantee "
                "(counterexamples exist). Composition above holds for every loss.")
    if args.sampling_rate == 1:
        footnote = "[h] with every record in every step this is the composition of the T steps: valid for every loss."
    if missing:
        print(f"  {'proven (convex, projected)':<34}{'n/a':>10}")
        print(_wrap(footnote, indent="  "))
        print(_wrap(f"The proven bound needs projected logistic regression on rows clipped to C: give "
                    f"{', '.join(missing)}.", indent="  "))
        return
    try:
        claim = convex_last_iterate_bound(
            steps=steps, noise_multiplier=args.noise_multiplier, sampling_rate=args.sampling_rate,
            clip_norm=args.clip_norm, learning_rate=args.learning_rate, radius=args.radius,
            dataset_size=args.dataset_size, l2=args.l2, delta=args.delta)
    except ValueError as exc:
        print(f"  {'proven (convex, projected)':<34}{'n/a':>10}")
        print(_wrap(footnote, indent="  "))
        print(_wrap(f"The proven bound does not apply: {exc}", indent="  "))
        return
    print(f"  {'proven (convex, projected)':<34}{claim.epsilon:>10.4f}  [p]")
    print(_wrap(footnote, indent="  "))
    print(_wrap(f"[p] {claim.theorem}. Conditions: " + "; ".join(claim.conditions) + ".", indent="  "))


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

    from ..accountants.proactive import ProactiveConditionWarning, plan, smallest_admissible_epochs
    from ..accountants.proactive.conditions import check_dataset_size
    from ..ground.validation import check_delta, check_epsilon, check_positive_int

    # every option is checked before anything is planned or printed
    check_epsilon(args.epsilon, "--epsilon")
    try:
        check_dataset_size(args.dataset_size)
    except ValueError as exc:
        raise ValueError(str(exc).replace("dataset_size", "--dataset-size", 1)) from None
    for value, option in ((args.epochs, "--epochs"), (args.steps, "--steps")):
        if value is not None:
            check_positive_int(value, option)
    if args.delta is not None:
        check_delta(args.delta, "--delta")
    check_accountants(args.accountants, "--accountants")
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
    from ..lab.experiments import ACCOUNTANT_LABELS, epsilon_curves
    from ..lab.plotting import plot_figure2

    check_output(args.out, "--out")
    check_output(args.csv, "--csv")
    epochs = figure2_epochs(args.max_epochs, args.points)
    check_steps(args.max_epochs, args.sampling_rate, "--max-epochs")
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


COMMANDS = [_add_epsilon, _add_plan, _add_figure2]
