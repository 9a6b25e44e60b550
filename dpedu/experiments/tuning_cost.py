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

from ..accountants import LaplaceEvent, RepeatAndSelectEvent, account
from ..calibrate import monotone_search
from ..events import gaussian_step_event
from ..validation import check_delta, check_epsilon, check_positive_int

__all__ = ["TuningCost", "tuning_cost", "affordable_noise", "run_ledger"]


@dataclass(frozen=True)
class TuningCost:
    """One row: k settings tried by a grid search, or E[K] = k for private selection."""

    trials: int
    grid_epsilon: float
    selection_epsilon: float


def run_ledger(noise_multiplier, sampling_rate, steps, score_epsilon):
    """One DP-SGD run and its Laplace-noised score: ``[(step event, T), (LaplaceEvent(eps_s), 1)]``."""
    return [(gaussian_step_event(noise_multiplier, sampling_rate), steps), (LaplaceEvent(score_epsilon), 1)]


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


def affordable_noise(trials, *, target_epsilon=1.0, sampling_rate, steps, score_epsilon=0.02, delta=1e-5,
                     shape=1.0, rtol=1e-3):
    r"""The smallest noise multiplier per run that keeps the whole tuning within ``target_epsilon``.

    Returns
    -------
    list of (k, grid z, selection z)
        Found by :func:`dpedu.calibrate.monotone_search` (epsilon falls as z grows); ``inf`` when no
        noise is enough (the k noisy scores alone exceed the budget).
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    delta = check_delta(delta)
    score_epsilon = check_epsilon(score_epsilon, "score_epsilon")
    rows = []
    for k in trials:
        k = check_positive_int(k, "trials")
        found = []
        for which in (0, 1):
            def feasible(z, which=which):
                return _epsilons(k, run_ledger(z, sampling_rate, steps, score_epsilon), delta, shape)[which] \
                    <= target_epsilon

            found.append(monotone_search(feasible, 1.0, feasible_when="large", lowest=1e-3, highest=1e4, rtol=rtol,
                                         at_limit=lambda z, ok: z if ok else math.inf))
        rows.append((k, *found))
    return rows
