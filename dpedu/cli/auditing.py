"""The ``audit`` command: a canary audit of DP-SGD (an empirical lower bound on epsilon).
"""

from __future__ import annotations

import math

import numpy as np

from .common import progress as _progress
from .common import wrap as _wrap

__all__ = ['COMMANDS', 'cmd_audit']


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
    from ..audit import canary_audit, dp_sgd_trainer, make_audit_data, make_canary

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


COMMANDS = [_add_audit]
