"""The ``attack`` command: LiRA and RMIA membership attacks on shadow models trained on Adult, beside the DP ceiling.
"""

from __future__ import annotations

import math

from ..lab.parallel import check_n_jobs
from ..ground.validation import check_delta, check_positive, check_positive_int
from .common import CliError, check_input_dir, check_output, check_steps, floats, wrap
from .common import progress as _progress

__all__ = ["COMMANDS", "cmd_attack"]


def _names(text):
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _add_attack(sub):
    p = sub.add_parser(
        "attack",
        help="membership attacks (LiRA, RMIA) on shadow models trained on Adult, under the DP ceiling; writes a PNG",
        description="Train --models shadow models on random halves of an Adult pool (training-file rows, natural "
                    "outliers among them, and inserted canaries) at each privacy level, attack every model with the "
                    "others (leave one model out), and print the TPR at FPR 0.1%% and 1%% (bootstrap intervals over "
                    "the models) for all records and the vulnerable ones, an audit's lower bound on epsilon from the "
                    "attack and the accountant's epsilon. The PNG shows the ROCs on log-log axes beside the "
                    "ceiling each run's accountant certifies. An attack's success is a lower bound on the leakage; "
                    "its failure is no proof of privacy. Exit status 1 if an attack crosses its ceiling.",
        epilog="example: python -m dpedu attack --epsilons inf,1,8 --models 64 --n-jobs 2 --out attack.png",
    )
    p.add_argument("--epsilons", type=floats, default=[math.inf, 1.0, 8.0],
                   help="privacy levels; inf is the non-private run (default inf,1,8)")
    p.add_argument("--attacks", type=_names, default=("lira-online", "rmia-online"),
                   help="comma-separated, among lira-online, lira-offline, rmia-online, rmia-offline "
                        "(default lira-online,rmia-online)")
    p.add_argument("--model", choices=("logistic", "mlp"), default="logistic",
                   help="logistic regression or the 16-unit MLP (default logistic)")
    p.add_argument("--models", type=int, default=64, help="shadow models per privacy level (default 64)")
    p.add_argument("--records", type=int, default=1000, help="Adult training-file rows in the pool (default 1000)")
    p.add_argument("--canaries", type=int, default=50, help="inserted canaries (default 50)")
    p.add_argument("--population", type=int, default=2000, help="held-out population rows for RMIA (default 2000)")
    p.add_argument("--batch-size", type=int, default=32, help="expected batch size b; q = b / (pool / 2) (default 32)")
    p.add_argument("--epochs", type=float, default=100.0, help="epochs per training (default 100)")
    p.add_argument("--learning-rate", type=float, default=1.0, help="learning rate (default 1)")
    p.add_argument("--clip-norm", type=float, default=1.0, help="clip norm C of the private runs (default 1)")
    p.add_argument("--delta", type=float, default=1e-5, help="delta of every privacy level (default 1e-5)")
    p.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples of the models (default 200)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--n-jobs", type=int, default=1, help="joblib workers for the trainings; -1: every core (default 1)")
    p.add_argument("--data-home", default=None, help="directory with adult.data(.gz) and adult.test(.gz)")
    p.add_argument("--out", default="attack.png", help="output PNG (default attack.png)")
    p.set_defaults(func=cmd_attack)


def cmd_attack(args):
    from ..lab.audit import ATTACKS, adult_membership_pool
    from ..lab.audit.mia_experiment import ExperimentSettings, attack_experiment, attack_table

    # every option is checked before Adult is loaded or anything is trained
    for value in args.epsilons:
        if not value > 0:
            raise CliError(f"--epsilons must be positive numbers or inf (non-private); got {value:g}")
    unknown = [a for a in args.attacks if a not in ATTACKS]
    if not args.attacks or unknown:
        raise CliError(f"--attacks must be among {', '.join(ATTACKS)}; got {', '.join(unknown) or 'none'}")
    check_positive_int(args.models, "--models", maximum=10_000)
    if args.models < 8:
        raise CliError(f"--models must be >= 8 (the audit splits them in halves); got {args.models}")
    check_positive_int(args.records, "--records")
    if args.canaries < 0:
        raise CliError(f"--canaries must be >= 0; got {args.canaries}")
    check_positive_int(args.population, "--population")
    check_positive_int(args.batch_size, "--batch-size")
    check_positive(args.epochs, "--epochs")
    check_positive(args.learning_rate, "--learning-rate")
    check_positive(args.clip_norm, "--clip-norm")
    check_delta(args.delta, "--delta")
    check_positive_int(args.bootstrap, "--bootstrap", maximum=10_000)
    check_n_jobs(args.n_jobs, "--n-jobs")
    check_output(args.out, "--out")
    check_input_dir(args.data_home, "--data-home")
    settings = ExperimentSettings(model=args.model, batch_size=args.batch_size, epochs=args.epochs,
                                  learning_rate=args.learning_rate, clip_norm=args.clip_norm)
    n_pool = args.records + args.canaries
    steps = check_steps(args.epochs, settings.sampling_rate(n_pool))
    _progress("loading Adult ...")
    pool = adult_membership_pool(args.records, args.canaries, args.population, rng=args.seed, data_home=args.data_home)
    levels = [None if math.isinf(eps) else eps for eps in args.epsilons]
    runs = attack_experiment(pool, settings=settings, epsilons=levels, n_models=args.models, attacks=args.attacks,
                             delta=args.delta, n_bootstrap=args.bootstrap, rng=args.seed, n_jobs=args.n_jobs,
                             progress=_progress)
    print(wrap(pool.description, indent="", hanging=""))
    print(wrap(f"{settings.model}: q = {settings.sampling_rate(n_pool):.4g}, T = {steps}, learning rate "
               f"{settings.learning_rate:g}; private runs clip at C = {settings.clip_norm:g}; {args.models} shadow "
               "models per level; TPR at FPR 0.1% and 1% [95% bootstrap interval over the models]", indent="",
               hanging="") + "\n")
    print(attack_table(runs))
    crossed = []
    for run in runs:
        for attack, report in run.reports.items():
            if report.violations() or (report.audit is not None and not report.audit.consistent):
                crossed.append(f"{run.label}, {attack}")
    from ..lab.plotting import plot_attack_grid
    from .common import figure

    fig, _ = figure(figsize=(7.3, 2.9 * len(runs) + 1.0))
    fig.clear()
    fig.set_layout_engine(None)
    plot_attack_grid({run.label: list(run.reports.values()) for run in runs}, figure=fig)
    fig.savefig(args.out, dpi=150)
    print(f"\nwrote {args.out}")
    print("An attack's success is a lower bound on what the model leaks; its failure does not prove privacy.")
    if crossed:
        print(wrap(f"ABOVE THE DP CEILING: {'; '.join(crossed)}: the implementation or its accounting is wrong.",
                   indent="", hanging=""))
        return 1
    return 0


COMMANDS = [_add_attack]
