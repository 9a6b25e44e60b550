"""The ``python -m dpedu`` command line.

Each subcommand lives in a small function ``cmd_<name>(args)`` registered in :data:`COMMANDS`
with its argument parser, so ``python -m dpedu --help`` lists them all.
"""

from __future__ import annotations

import argparse
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
                                          clip=args.clip, clip_inputs=clip_inputs, rng=np.random.default_rng(s))
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


COMMANDS = [_add_demo]


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
