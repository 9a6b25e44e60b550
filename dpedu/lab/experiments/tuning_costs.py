r"""What tuning costs: a grid search of k settings by composition, or private selection with E[K] = k.

Accounting only (no data, deterministic). One run is DP-SGD (noise multiplier z, rate q, T steps) plus a
Laplace-noised validation score (:math:`\varepsilon_s`). A grid search that trains and scores k settings
and keeps the best is k such runs composed (docs/math.md §13.3); private selection with a random K of
mean k releases only the best run (docs/math.md §23). :func:`tuning_cost` gives both epsilons for one z;
:func:`affordable_noise` the smallest z each can use for a total budget.

>>> row = tuning_cost([10], noise_multiplier=3.0, sampling_rate=0.01, steps=1000)[0]
>>> row.trials, bool(row.selection_epsilon < row.grid_epsilon)
(10, True)
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from ...accountants import RepeatAndSelectEvent, SubsampledGaussianEvent, account
from ...accountants.calibrate import monotone_search, noise_multiplier
from ...ground.events import steps_from_epochs
from ..tuning import run_ledger, search_noise_multiplier
from ...ground.validation import check_delta, check_epsilon, check_positive_int, check_sampling_rate

__all__ = ["TuningCost", "tuning_cost", "affordable_noise", "grid_noise_multiplier", "run_ledger",
           "ProvenanceCost", "defaults_provenance_cost"]


@dataclass(frozen=True)
class TuningCost:
    """One row: k settings tried by a grid search, or E[K] = k for private selection."""

    trials: int
    grid_epsilon: float
    selection_epsilon: float


def _epsilons(k, run, delta, shape):
    grid = [(event, k * count) for event, count in run]
    selection = [(RepeatAndSelectEvent(run, k, shape), 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # an order at the grid's edge only makes epsilon larger
        return (account(grid, "rdp", delta=delta, strict=True).epsilon,
                account(selection, "rdp", delta=delta, strict=True).epsilon)


def tuning_cost(trials, *, noise_multiplier, sampling_rate, steps, score_epsilon=0.02, delta=1e-5, shape=1.0):
    r"""Epsilon of a k-setting grid search (composition) and of private selection with E[K] = k, same runs.

    Parameters
    ----------
    trials : sequence of int
        The values of k, each >= 2.
    noise_multiplier, sampling_rate, steps : float, float, int
        One DP-SGD run.
    score_epsilon : float, default 0.02
        Epsilon of each run's noisy validation count.
    delta : float, default 1e-5
    shape : float, default 1.0
        :math:`\eta` of the truncated negative binomial (1 geometric), or ``math.inf`` for Poisson.

    Returns
    -------
    list of TuningCost
        RDP accountant, improved conversion, for both.
    """
    delta = check_delta(delta)
    run = run_ledger(noise_multiplier, sampling_rate, steps, check_epsilon(score_epsilon, "score_epsilon"))
    rows = []
    for k in trials:
        k = check_positive_int(k, "trials")
        if k < 2:
            raise ValueError(f"trials must be >= 2 (one setting needs no selection); got {k}")
        rows.append(TuningCost(k, *_epsilons(k, run, delta, shape)))
    return rows


def grid_noise_multiplier(target_epsilon, *, trials, sampling_rate, steps, score_epsilon, delta=1e-5, rtol=1e-3):
    r"""The smallest per-run z for which ``trials`` runs of :func:`run_ledger`, composed, cost at most ``target_epsilon``.

    A grid search that trains and privately scores k settings and keeps the best is k runs composed (RDP at
    ``delta``, docs/math.md §13.3). Bisection by :func:`dpedu.accountants.calibrate.monotone_search`: the z returned was
    evaluated and is within the target; ``inf`` when no noise is enough (the k scores alone exceed it).

    >>> z = grid_noise_multiplier(1.0, trials=4, sampling_rate=0.01, steps=1000, score_epsilon=0.05)
    >>> bool(account([(e, 4 * c) for e, c in run_ledger(z, 0.01, 1000, 0.05)], "rdp", delta=1e-5).epsilon <= 1.0)
    True
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    score_epsilon = check_epsilon(score_epsilon, "score_epsilon")
    delta, k = check_delta(delta), check_positive_int(trials, "trials")
    sampling_rate, steps = check_sampling_rate(sampling_rate), check_positive_int(steps, "steps")

    def feasible(z):
        composed = [(event, k * count) for event, count in run_ledger(z, sampling_rate, steps, score_epsilon)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")             # an order at the grid's edge only makes epsilon larger
            return account(composed, "rdp", delta=delta, strict=True).epsilon <= target_epsilon

    return monotone_search(feasible, 1.0, feasible_when="large", lowest=1e-3, highest=1e4, rtol=rtol,
                           at_limit=lambda z, ok: z if ok else math.inf)


def affordable_noise(trials, *, target_epsilon=1.0, sampling_rate, steps, score_epsilon=0.02, delta=1e-5,
                     shape=1.0, rtol=1e-3):
    r"""The smallest noise multiplier per run that keeps the whole tuning within ``target_epsilon``.

    Returns
    -------
    list of (k, grid z, selection z)
        :func:`grid_noise_multiplier` for k settings composed, and
        :func:`dpedu.lab.tuning.search_noise_multiplier` for private selection with E[K] = k; ``inf`` when no
        noise is enough (the k noisy scores alone exceed the budget).
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    common = dict(sampling_rate=sampling_rate, steps=steps, score_epsilon=score_epsilon, delta=delta, rtol=rtol)
    rows = []
    for k in trials:
        k = check_positive_int(k, "trials")
        rows.append((k, grid_noise_multiplier(target_epsilon, trials=k, **common),
                     search_noise_multiplier(target_epsilon, mean_trials=k, shape=shape, **common)))
    return rows


@dataclass(frozen=True)
class ProvenanceCost:
    """What the tuning behind one row of ``TUNED_DEFAULTS`` would have cost, composed (RDP, at ``delta``)."""

    epsilon: float
    runs: int
    composed_epsilon: float


def defaults_provenance_cost(epsilons=(0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0), *, grid=None, seeds=3, delta=1e-5):
    r"""The epsilon of composing the grid search that chose ``DPLogisticRegression``'s defaults, per total epsilon.

    ``benchmarks/bench_dpsgd_accuracy.py`` chose :data:`dpedu.lab.estimator.TUNED_DEFAULTS` by training, for each
    total epsilon, every configuration of its grid (sampling rate x epochs x clip norm x learning rate: 54)
    with ``seeds`` seeds, each run calibrated to that epsilon by RDP, and keeping the best mean validation
    accuracy. Composing those runs (RDP at ``delta``; the clip norm and learning rate do not change a run's
    ledger) gives ``composed_epsilon``: the accountant's bound for the training runs alone. The tuning as run
    also compared exact validation accuracies, which no finite epsilon covers (an exact argmax is not
    differentially private); a private version would add the noisy scores' cost on top.

    Parameters
    ----------
    epsilons : sequence of float
        The total epsilons tuned for (the benchmark's).
    grid : dict, optional
        ``{"sampling_rate": ..., "epochs": ..., "clip_norm": ..., "learning_rate": ...}``; default the
        benchmark's grid (q in {0.01, 0.05}, epochs in {8, 32, 64}, 3 clip norms, 3 learning rates).
    seeds : int, default 3
        Runs per configuration.

    Returns
    -------
    list of ProvenanceCost
    """
    grid = dict(_PROVENANCE_GRID if grid is None else grid)
    seeds, delta = check_positive_int(seeds, "seeds"), check_delta(delta)
    repeats = seeds * len(grid["clip_norm"]) * len(grid["learning_rate"])
    rows = []
    for epsilon in epsilons:
        epsilon = check_epsilon(epsilon)
        ledger = []
        for q in grid["sampling_rate"]:
            for epochs in grid["epochs"]:
                steps = steps_from_epochs(epochs, q)
                z = noise_multiplier(epsilon, delta, q, steps)
                ledger.append((SubsampledGaussianEvent(z, q), repeats * steps))
        runs = repeats * len(grid["sampling_rate"]) * len(grid["epochs"])
        rows.append(ProvenanceCost(epsilon, runs, account(ledger, "rdp", delta=delta, strict=True).epsilon))
    return rows


#: The grid of benchmarks/bench_dpsgd_accuracy.py (its GRID), which produced TUNED_DEFAULTS.
_PROVENANCE_GRID = {"sampling_rate": (0.01, 0.05), "epochs": (8, 32, 64), "clip_norm": (0.25, 1.0, 4.0),
                    "learning_rate": (4.0, 16.0, 64.0)}
