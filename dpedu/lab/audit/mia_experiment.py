r"""The membership experiment of the course: one pool, several privacy levels, the attacks, and their table
(docs/math.md §20.5, §20.6).

For each privacy level (``None`` for the non-private run, else a target epsilon at ``delta``), the same algorithm
trains ``n_models`` shadow models: DP-SGD with Poisson sampling at rate :math:`q = b/(N/2)` (b the expected batch
size, N/2 the expected size of a random half), ``epochs`` passes and one learning rate; the private runs clip at
C and add the noise :func:`dpedu.accountants.calibrate.noise_multiplier` calibrates for the target with the PLD accountant;
the non-private run neither clips nor adds noise. Every attack then attacks every model (:func:`membership_attack`),
and :func:`attack_audit` turns the strongest-looking record into a lower bound on epsilon. Optionally a canary
audit (:func:`~dpedu.lab.audit.canary.canary_audit`) of the same algorithm stands beside it: a crafted
canary and many pairs of trainings, the worst case rather than a record of the pool.

>>> settings = ExperimentSettings(batch_size=32, epochs=100)
>>> round(settings.sampling_rate(1050), 5), settings.steps(1050)
(0.06095, 1641)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...accountants.calibrate import noise_multiplier
from ...ground.validation import check_delta, check_epsilon, check_positive, check_positive_int, check_rng
from ...ground.events import steps_from_epochs
from .canary import canary_audit
from .data import make_canary
from .mia_audit import ATTACKS, membership_attack
from .shadow import MODELS, MembershipPool, ShadowTrainer, train_shadow_models

__all__ = ["ExperimentSettings", "ExperimentRun", "privacy_trainer", "attack_experiment", "attack_table"]


@dataclass(frozen=True)
class ExperimentSettings:
    """The training of every model of the experiment (module docstring): model, expected batch size b, epochs,
    learning rate, the clip norm of the private runs and the MLP's width."""

    model: str = "logistic"
    batch_size: int = 32
    epochs: float = 100.0
    learning_rate: float = 1.0
    clip_norm: float = 1.0
    hidden_units: int = 16

    def __post_init__(self):
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}; got {self.model!r}")
        check_positive_int(self.batch_size, "batch_size")
        check_positive(self.epochs, "epochs")
        check_positive(self.learning_rate, "learning_rate")
        check_positive(self.clip_norm, "clip_norm")
        check_positive_int(self.hidden_units, "hidden_units")

    def sampling_rate(self, n_pool):
        """q = b / (N/2), at most 1: the expected batch size over the expected size of a random half."""
        return min(1.0, self.batch_size / (check_positive_int(n_pool, "n_pool") / 2))

    def steps(self, n_pool):
        return steps_from_epochs(self.epochs, self.sampling_rate(n_pool))


def privacy_trainer(settings, n_pool, epsilon, *, delta=1e-5, accountant="pld"):
    """The :class:`ShadowTrainer` of one privacy level: non-private for ``epsilon=None``, else with the noise
    multiplier that meets (``epsilon``, ``delta``) under ``accountant`` for the settings' q and T."""
    if not isinstance(settings, ExperimentSettings):
        raise TypeError(f"settings must be ExperimentSettings; got {type(settings).__name__}")
    q, steps = settings.sampling_rate(n_pool), settings.steps(n_pool)
    common = dict(model=settings.model, sampling_rate=q, epochs=settings.epochs, learning_rate=settings.learning_rate,
                  hidden_units=settings.hidden_units)
    if epsilon is None:
        return ShadowTrainer(noise_multiplier=0.0, clip_norm=math.inf, **common)
    z = noise_multiplier(check_epsilon(epsilon), check_delta(delta), q, steps, accountant=accountant)
    return ShadowTrainer(noise_multiplier=z, clip_norm=settings.clip_norm, **common)


@dataclass(frozen=True)
class ExperimentRun:
    """One privacy level of :func:`attack_experiment`: its label, target epsilon (None: non-private), trainer,
    shadow models, ``{attack: MembershipAttackReport}`` and, if asked for, the canary audit of the algorithm."""

    label: str
    epsilon: object
    trainer: ShadowTrainer
    shadow: object
    reports: dict
    canary: object = None


def attack_experiment(pool, *, settings=None, epsilons=(None, 1.0, 8.0), n_models=64, attacks=("lira-online",
                      "rmia-online"), delta=1e-5, n_bootstrap=200, confidence=0.95, audit=True, canary_runs=0,
                      rng=0, n_jobs=1, progress=None):
    """Train and attack the shadow models of every privacy level in ``epsilons`` (module docstring).

    Parameters
    ----------
    pool : MembershipPool
    settings : ExperimentSettings, optional
        Default ``ExperimentSettings()`` (logistic regression, b = 32, 100 epochs, learning rate 1, C = 1).
    epsilons : sequence of (None or float)
        Privacy levels; None is the non-private run.
    n_models : int
        Shadow models per level (:func:`train_shadow_models`); the audit needs at least 8.
    attacks : sequence of str
        Among :data:`~dpedu.lab.audit.mia_audit.ATTACKS`.
    delta, n_bootstrap, confidence, audit :
        As in :func:`membership_attack`.
    canary_runs : int
        If > 0 (logistic regression only: the canary is scored by its margin), a canary audit with that many
        trainings per world on a random half of the pool, with the same trainer.
    rng : int or SeedSequence
        Root seed: each level gets its own child (trainings, bootstrap, canary audit).
    n_jobs, progress :
        For the trainings (:func:`dpedu.lab.parallel.map_seeded`).

    Returns
    -------
    list of ExperimentRun
    """
    if not isinstance(pool, MembershipPool):
        raise TypeError(f"pool must be a MembershipPool; got {type(pool).__name__}")
    settings = ExperimentSettings() if settings is None else settings
    if not isinstance(settings, ExperimentSettings):
        raise TypeError(f"settings must be ExperimentSettings; got {type(settings).__name__}")
    attacks = tuple(attacks)
    unknown = [a for a in attacks if a not in ATTACKS]
    if not attacks or unknown:
        raise ValueError(f"attacks must be a non-empty sequence of {ATTACKS}; got {attacks!r}")
    levels = list(epsilons)
    if not levels:
        raise ValueError("epsilons must name at least one privacy level (None: non-private)")
    for eps in levels:
        if eps is not None:
            check_epsilon(eps, "epsilons")
    canary_runs = 0 if canary_runs == 0 else check_positive_int(canary_runs, "canary_runs")
    if canary_runs and settings.model != "logistic":
        raise ValueError("canary_runs: the canary audit scores a linear model's margin; use model='logistic'")
    delta = check_delta(delta)
    trainers = [privacy_trainer(settings, pool.n, eps, delta=delta) for eps in levels]   # all refused up front
    seeds = check_rng(rng).bit_generator.seed_seq.spawn(len(levels))
    runs = []
    for eps, trainer, seed in zip(levels, trainers, seeds):
        label = "non-private" if eps is None else f"epsilon = {eps:g}"
        train_seed, attack_seed, canary_seed = seed.spawn(3)
        shadow = train_shadow_models(pool, trainer, n_models=n_models, rng=train_seed, n_jobs=n_jobs,
                                     progress=progress)
        reports = {attack: membership_attack(shadow, attack, delta=delta, n_bootstrap=n_bootstrap,
                                             confidence=confidence, audit=audit, rng=attack_seed)
                   for attack in attacks}
        canary = None
        if canary_runs:
            generator = np.random.default_rng(canary_seed)
            half = generator.random(pool.n) < 0.5
            X, y = pool.X[half], pool.y[half]
            canary = canary_audit(trainer, X, y, make_canary(X, y), runs=canary_runs, delta=delta,
                                  confidence=confidence, accountants=("pld",), rng=generator, n_jobs=n_jobs)
        runs.append(ExperimentRun(label, eps, trainer, shadow, reports, canary))
    return runs


def attack_table(runs, *, groups=("all", "vulnerable")):
    """The table model x privacy x attack, one block per (model, privacy level), under 100 columns wide.

    A block's header names the model, the privacy level, the accountant's epsilon and (if run) the canary audit's
    lower bound; each row gives an attack's TPR at each reported FPR with its bootstrap interval, for each group,
    and the lower bound on epsilon of the audit from that attack.
    """
    lines = []
    for run in runs:
        if not isinstance(run, ExperimentRun):
            raise TypeError(f"runs must hold ExperimentRun objects; got {type(run).__name__}")
        model = "logistic regression" if run.trainer.model == "logistic" else f"MLP ({run.trainer.hidden_units} units)"
        first = next(iter(run.reports.values()))
        accountant = "inf" if math.isinf(first.epsilon) else f"{first.epsilon:.3f}"
        header = f"{model}, {run.label}: accountant ({first.accountant}) epsilon {accountant}"
        if run.canary is not None:
            header += f"; canary audit epsilon >= {run.canary.epsilon_lower:.3f}"
        fprs = first.rocs[next(iter(first.rocs))].fprs if first.rocs else ()
        columns = "".join(f"{f'TPR at FPR {a:.1%} [95%]':<24}" for a in fprs)
        lines += [header, f"  {'attack':<13} {'records':<10} {columns}attack audit"]
        for attack, report in run.reports.items():
            for k, group in enumerate(g for g in groups if g in report.rocs):
                roc = report.rocs[group]
                cells = "".join(f"{f'{100 * t:6.2f}% [{100 * lo:5.2f}, {100 * hi:5.2f}]':<24}"
                                for t, lo, hi in zip(roc.tpr_at, roc.tpr_low, roc.tpr_high))
                audit = "" if k or report.audit is None else f"epsilon >= {report.audit.epsilon_lower:.3f}"
                lines.append(f"  {attack if k == 0 else '':<13} {group[:10]:<10} {cells}{audit}".rstrip())
        lines.append("")
    return "\n".join(lines[:-1])
