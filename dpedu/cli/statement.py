"""``python -m dpedu statement``: the privacy statement of one DP-SGD run (docs/math.md §21.7)."""

from __future__ import annotations

from .common import steps_and_epochs

__all__ = ["COMMANDS", "cmd_statement"]


def _add_statement(sub):
    p = sub.add_parser(
        "statement",
        help="the privacy statement of one DP-SGD run: what a careful paper reports",
        description="Account one DP-SGD run (Poisson sampling rate q, noise multiplier z, T steps; add/remove "
                    "neighbours, one example as the unit of privacy) and print its privacy statement: the settings, "
                    "epsilon at delta by the PLD accountant with RDP beside it, the certified mu-GDP, the best "
                    "attack's TPR at a small FPR, group privacy, and the assumptions the guarantee rests on.",
        epilog="example: python -m dpedu statement -z 4 -q 0.01 --steps 10000 --n 60000 --clip-norm 4 --delta 1e-5",
    )
    p.add_argument("--noise-multiplier", "-z", type=float, required=True, help="z = noise std / clip norm")
    p.add_argument("--sampling-rate", "-q", type=float, required=True, help="Poisson sampling rate q in (0, 1]")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--epochs", type=float, help="epochs; steps = round(epochs / q)")
    group.add_argument("--steps", type=int, help="number of steps T")
    p.add_argument("--n", type=int, default=None, help="data set size (number of training examples)")
    p.add_argument("--clip-norm", type=float, default=None, help="clip norm C of the per-example gradients")
    p.add_argument("--delta", type=float, default=1e-5, help="delta (default 1e-5; choose it well below 1/n)")
    p.add_argument("--group-size", type=int, default=1, help="most examples one person contributes (default 1)")
    p.add_argument("--fpr", type=float, default=0.01, help="FPR at which the best attack's TPR is shown (default 0.01)")
    p.set_defaults(func=cmd_statement)


def cmd_statement(args):
    from ..events import SubsampledGaussianEvent
    from ..statement import privacy_statement
    from ..validation import (
        check_delta,
        check_in_interval,
        check_noise_multiplier,
        check_positive_int,
        check_sampling_rate,
    )

    # every option is checked, by its own name, before any accounting
    z = check_noise_multiplier(args.noise_multiplier, "--noise-multiplier")
    q = check_sampling_rate(args.sampling_rate, "--sampling-rate")
    delta = check_delta(args.delta, "--delta")
    n = None if args.n is None else check_positive_int(args.n, "--n")
    group_size = check_positive_int(args.group_size, "--group-size")
    fpr = check_in_interval(args.fpr, "--fpr", 0.0, 1.0, low_open=True, high_open=True)
    steps, _ = steps_and_epochs(args)
    statement = privacy_statement([(SubsampledGaussianEvent(z, q), steps)], delta=delta, n=n,
                                  clip_norm=args.clip_norm, group_size=group_size, fpr=fpr)
    print(statement)
    return 0


COMMANDS = [_add_statement]
