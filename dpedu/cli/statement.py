"""``python -m dpedu statement``: the privacy statement of one DP-SGD run (docs/math.md §21.7)."""

from __future__ import annotations

from .common import CliError, add_run_options, steps_and_epochs

#: (sampling, relation) pairs an accountant covers: PLD for Poisson (docs/math.md §15, §22.4), RDP for fixed (§22.3).
COVERED = (("poisson", "add_remove"), ("poisson", "replace_one"), ("fixed", "replace_one"))

__all__ = ["COMMANDS", "cmd_statement"]


def _add_statement(sub):
    p = sub.add_parser(
        "statement",
        help="the privacy statement of one DP-SGD run: what a careful paper reports",
        description="Account one DP-SGD run (sampling rate q, noise multiplier z, T steps; one example as the unit "
                    "of privacy) and print its privacy statement: the settings, epsilon at delta by the accountant "
                    "that covers the (sampling, relation) pair (PLD for Poisson sampling under either relation, "
                    "with RDP beside it; RDP for fixed-size batches under replace-one), the certified mu-GDP, the "
                    "best attack's TPR at a small FPR, group privacy, and the assumptions the guarantee rests on.",
        epilog="example: python -m dpedu statement -z 4 -q 0.01 --steps 10000 --n 60000 --clip-norm 4 --delta 1e-5",
    )
    add_run_options(p, "sampling rate q in (0, 1]: Poisson rate, or m = round(q n) records with --sampling fixed")
    p.add_argument("--sampling", choices=("poisson", "fixed"), default="poisson",
                   help="batches: Poisson samples at rate q, or exactly m = round(q n) records drawn uniformly without "
                        "replacement afresh each step (needs --n and --relation replace_one) (default poisson)")
    p.add_argument("--relation", choices=("add_remove", "replace_one"), default="add_remove",
                   help="neighbouring relation of the guarantee (default add_remove)")
    p.add_argument("--n", type=int, default=None, help="data set size (number of training examples)")
    p.add_argument("--clip-norm", type=float, default=None, help="clip norm C of the per-example gradients")
    p.add_argument("--delta", type=float, default=1e-5, help="delta (default 1e-5; choose it well below 1/n)")
    p.add_argument("--group-size", type=int, default=1, help="most examples one person contributes (default 1)")
    p.add_argument("--fpr", type=float, default=0.01, help="FPR at which the best attack's TPR is shown (default 0.01)")
    p.set_defaults(func=cmd_statement)


def cmd_statement(args):
    from ..ground.events import SampledWithoutReplacementGaussianEvent, SubsampledGaussianEvent
    from ..lab.statement import privacy_statement
    from ..ground.validation import (
        check_delta, check_in_interval, check_noise_multiplier, check_positive_int, check_sampling_rate
    )

    # every option is checked, by its own name, before any accounting
    z = check_noise_multiplier(args.noise_multiplier, "--noise-multiplier")
    q = check_sampling_rate(args.sampling_rate, "--sampling-rate")
    delta = check_delta(args.delta, "--delta")
    n = None if args.n is None else check_positive_int(args.n, "--n")
    group_size = check_positive_int(args.group_size, "--group-size")
    fpr = check_in_interval(args.fpr, "--fpr", 0.0, 1.0, low_open=True, high_open=True)
    if (args.sampling, args.relation) not in COVERED:
        raise CliError(f"--sampling {args.sampling} with --relation {args.relation}: no accountant covers this pair; "
                       "covered are --sampling poisson with --relation add_remove or replace_one (PLD), and --sampling "
                       "fixed with --relation replace_one (RDP)")
    if args.sampling == "fixed":
        if n is None:
            raise CliError("--sampling fixed needs --n (the batch size is m = round(q n))")
        m = round(q * n)
        if m < 1:
            raise CliError(f"--sampling fixed: m = round(q n) = round({q:g} * {n}) = 0 records; raise -q or --n")
        event = SampledWithoutReplacementGaussianEvent(z, m, n, relation=args.relation)
    else:
        event = SubsampledGaussianEvent(z, q, relation=args.relation)
    steps, _ = steps_and_epochs(args)
    statement = privacy_statement([(event, steps)], delta=delta, n=n,
                                  clip_norm=args.clip_norm, group_size=group_size, fpr=fpr)
    print(statement)
    return 0


COMMANDS = [_add_statement]
