r"""Experiments behind the course figures and the ``python -m dpedu`` commands.

Two kinds, in three modules:

* :mod:`dpedu.lab.experiments.accounting` - **accounting only** (no data, fast, deterministic):
  :func:`epsilon_for_run`, :func:`epsilon_curves`, :func:`noise_for_target`.
* :mod:`dpedu.lab.experiments.sweeps` - **training** (Adult or any data, over several seeds):
  :func:`run_tradeoff`, :func:`run_epochs_tradeoff`, :func:`run_clipping_noise_grid`,
  :func:`run_noisy_gd_tradeoff`.
* :mod:`dpedu.lab.experiments.tuning_costs` - **accounting only**: what tuning costs, a grid search by composition
  or private selection (:func:`tuning_cost`, :func:`affordable_noise`, :func:`grid_noise_multiplier`), and what
  the tuning behind the estimator's defaults would have cost (:func:`defaults_provenance_cost`).

Every epsilon here is the **total** epsilon of a whole training run, after composition.

>>> table = epsilon_for_run(noise_multiplier=4.0, sampling_rate=0.01, steps=10_000, delta=1e-5, accountants=("rdp",))
>>> round(table["rdp"], 4)
1.0355
"""

from . import accounting, sweeps
from .accounting import (
    ACCOUNTANT_KEYS, ACCOUNTANT_LABELS, INVALID_BOUNDS, EpsilonCurves, accountant_for_key, check_accountant_keys,
    check_grid, epsilon_curves, epsilon_for_run, noise_for_target, steps_from_epochs
)
from .sweeps import (
    ClippingNoiseResult, EpochsResult, GridSettings, NoisyGDResult, TradeoffResult, non_private_accuracy,
    run_clipping_noise_grid, run_epochs_tradeoff, run_noisy_gd_tradeoff, run_tradeoff
)
from .tuning_costs import TuningCost, affordable_noise, defaults_provenance_cost, grid_noise_multiplier, tuning_cost

# What each module exports, in its order (accounting, then training, then tuning costs but for its run_ledger).
__all__ = [*accounting.__all__, *sweeps.__all__, "TuningCost", "tuning_cost", "affordable_noise",
           "grid_noise_multiplier", "defaults_provenance_cost"]
