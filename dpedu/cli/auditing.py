"""The ``audit`` command: a canary audit of DP-SGD (an empirical lower bound on epsilon).
"""

from __future__ import annotations

import math

import numpy as np

from ..lab.parallel import check_n_jobs
from ..ground.validation import (
    check_count, check_delta, check_epsilon, check_in_interval, check_nonnegative, check_positive, check_positive_int,
    check_sampling_rate
)
from .common import progress as _progress
from .common import wrap as _wrap

__all__ = ['COMMANDS', 'cmd_audit']


def _add_audit(sub):
    p = sub.add_parser(
        "audit",
        help="audit DP-SGD: an empirical LOWER bound on epsilon beside the accountants' upper bounds",
        description="Empirical lower bounds on epsilon. --mode canary (default): train many times with and without "
                    "a canary, score the final models, Clopper-Pearson (Jagielski, Ullman, Oprea 2020). --mode "
                    "whitebox: the auditor sees every noisy update; a Dirac gradient canary's coordinate gives a "
                    "Gaussian (mu-GDP) bound (Nasr et al. 2023). --mode one-run: m canaries in ONE training on "
                    "Adult (Steinke, Nasr, Jagielski 2023). --mode bugs: planted bugs caught by the white-box "
                    "audit or refused by the consistency check of the batches against the ledger. A correct implementation has lower bound <= every accountant's upper bound.",
        epilog="example: python -m dpedu audit --mode whitebox --noise-multiplier 1 --sampling-rate 1 --steps 4",
    )
    p.add_argument("--mode", choices=("canary", "whitebox", "one-run", "bugs"), default="canary",
                   help="which audit (default canary)")
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
    p.add_argument("--n-jobs", type=int, default=1, help="joblib workers for the trainings; -1: every core (default 1)")
    p.add_argument("--epsilon", type=float, default=8.0, help="one-run: target epsilon of the run (default 8)")
    p.add_argument("--canaries", type=int, default=500, help="one-run: number m of canaries (default 500)")
    p.add_argument("--one-run-mode", choices=("whitebox", "blackbox"), default="whitebox",
                   help="one-run: gradient canaries seen in every update, or input canaries in the final model")
    p.set_defaults(func=cmd_audit)


def cmd_audit(args):
    from ..lab import audit

    if args.runs < 4:
        raise ValueError(f"--runs must be >= 4 (half choose the threshold, half measure it); got {args.runs}")
    check_n_jobs(args.n_jobs, "--n-jobs")
    # every option is checked before any training (or, for one-run, before Adult is loaded)
    check_delta(args.delta, "--delta")
    check_in_interval(args.confidence, "--confidence", 0.0, 1.0, low_open=True, high_open=True)
    check_nonnegative(args.noise_multiplier, "--noise-multiplier")
    check_sampling_rate(args.sampling_rate, "--sampling-rate")
    check_count(args.steps, "--steps")
    check_positive_int(args.n, "--n")
    check_positive(args.learning_rate, "--learning-rate")
    if args.mode == "one-run":
        check_epsilon(args.epsilon, "--epsilon")
        check_positive_int(args.canaries, "--canaries")
    if args.mode == "bugs":
        width = max(map(len, list(audit.BUGS) + list(audit.CLAIM_BUGS)))
        print(f"{'bug':<{width}} {'claimed eps (PLD)':>17} {'audited lower':>14}  caught  correct code flagged")
        for bug in audit.BUGS:
            kwargs = dict(runs=args.runs, delta=args.delta, confidence=args.confidence, rng=args.seed, n_jobs=args.n_jobs)
            result, control = audit.bug_hunt(bug, **kwargs), audit.bug_hunt(bug, correct=True, **kwargs)
            print(f"{bug:<{width}} {result.upper_bounds['pld']:>17.3f} {result.epsilon_lower:>14.3f}  "
                  f"{str(not result.consistent):<6}  {not control.consistent}")
        print(f"\nrefused by the consistency check of the batches against the ledger (audit.check_claims, "
              f"alpha = 1e-6):")
        for bug in audit.CLAIM_BUGS:
            check, control = audit.claim_hunt(bug, rng=args.seed), audit.claim_hunt(bug, correct=True, rng=args.seed)
            print(f"{bug:<{width}} caught {str(not check.consistent):<6} correct code flagged {not control.consistent}"
                  f"\n    {check.problems[0] if check.problems else 'no problem found'}")
        return 0
    if args.mode == "one-run":
        from ..textbook.datasets import load_adult

        X_train, y_train, X_test, y_test = load_adult()
        rows = np.random.default_rng(args.seed).choice(X_train.shape[0], min(args.n * 30, X_train.shape[0]),
                                                       replace=False)
        _progress(f"one DP-SGD run on {rows.size} Adult rows with {args.canaries} canaries ...")
        result = audit.one_run_audit(X_train[rows], y_train[rows], m=args.canaries, target_epsilon=args.epsilon,
                                     delta=args.delta, sampling_rate=args.sampling_rate, steps=args.steps,
                                     mode=args.one_run_mode, X_canary_pool=X_test, y_canary_pool=y_test,
                                     confidence=args.confidence, rng=args.seed)
        print(result)
        return 0
    X, y = audit.make_audit_data(n=args.n, d=3, rng=np.random.SeedSequence(args.seed).spawn(1)[0])
    canary = audit.make_canary(X, y, kind=args.canary, norm=5.0 * args.clip_norm)
    settings = dict(noise_multiplier=args.noise_multiplier, sampling_rate=args.sampling_rate, steps=args.steps,
                    clip_norm=args.clip_norm, learning_rate=args.learning_rate)
    if args.mode == "whitebox":
        train = audit.observed_trainer(**settings)
        _progress(f"auditing {train.description} with {args.runs} + {args.runs} observed runs ...")
        result = audit.whitebox_audit(train, X, y, canary, runs=args.runs, delta=args.delta,
                                      confidence=args.confidence, rng=args.seed, n_jobs=args.n_jobs)
    else:
        train = audit.dp_sgd_trainer(**settings)
        _progress(f"auditing {train.description} with {args.runs} + {args.runs} trainings ...")
        result = audit.canary_audit(train, X, y, canary, runs=args.runs, delta=args.delta, confidence=args.confidence,
                                    rng=args.seed, progress=_progress, n_jobs=args.n_jobs)
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


COMMANDS = [_add_audit]
