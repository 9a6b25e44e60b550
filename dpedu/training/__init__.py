r"""Training loops: plain gradient descent, the book's noisy gradient descent, and DP-SGD.

===================  ==========================================================================================
:mod:`.full_batch`   full-batch :func:`gradient_descent` and the book's :func:`noisy_gradient_descent` (its plan)
:mod:`.plan`         :func:`plan_dp_sgd`: a DP-SGD run (:class:`DPSGDPlan`) fixed before the data is touched
:mod:`.adaptive`     adaptive clipping (Andrew et al. 2021): :class:`ClipState`, the noise split
:mod:`.sgd`          :func:`dp_sgd_step` (one step), :func:`run_dp_sgd` (a plan's loop), :func:`dp_sgd` (Abadi et al.)
:mod:`.common`       :class:`TrainingResult` and its typed ``details``, :class:`TrainingData` (checked once)
===================  ==========================================================================================

Every private loop returns a :class:`TrainingResult` whose ``ledger`` lists the privacy events
it performed, ``[(event, count), ...]``, so any accountant can account the run::

    result = noisy_gradient_descent(X, y, iterations=10, epsilon=0.1, delta=1e-5, rng=0)
    result.epsilon, result.delta                       # sequential composition, as the book
    dpedu.accountants.compare(result, delta=1e-5)      # every accountant side by side

A DP-SGD result is not accounted by the trainer: its ``epsilon`` raises :class:`NotAccountedError`, which
names the call that accounts it (``dpedu.accountants.compare(result, delta=...)``).

>>> from dpedu.datasets import make_toy
>>> X, y = make_toy(n=200, d=3, rng=0)
>>> noisy_gradient_descent(X, y, iterations=5, epsilon=0.5, delta=1e-5, clip_norm=1.0, rng=1).epsilon
3.0
>>> dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2, rng=0).ledger
[(SubsampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1), 20)]
"""

from .common import MAX_STEPS, DPSGDDiagnostics, NoisyGDDiagnostics, NotAccountedError, TrainingData, TrainingResult
from .common import training_data
from .adaptive import ClipState, gradient_noise_multiplier
from .plan import CLIP_MODES, LR_SCHEDULES, SAMPLERS, SAMPLINGS, DPSGDPlan, binomial_poisson_sample, plan_dp_sgd
from .plan import fixed_size_batches, poisson_batches, poisson_sample, shuffled_batches, truncated_poisson_batches
from .sgd import ShuffledBatchesWarning, dp_sgd, dp_sgd_adaptive_step, dp_sgd_step
from .sgd import run_dp_sgd
from .full_batch import BUDGET_SPLITS, CALIBRATIONS, NoisyGDPlan, gradient_descent, noisy_gradient_descent
from .full_batch import plan_noisy_gradient_descent, run_noisy_gradient_descent

__all__ = [
    "TrainingResult",
    "TrainingData",
    "training_data",
    "DPSGDDiagnostics",
    "NoisyGDDiagnostics",
    "NotAccountedError",
    "gradient_descent",
    "noisy_gradient_descent",
    "NoisyGDPlan",
    "plan_noisy_gradient_descent",
    "run_noisy_gradient_descent",
    "poisson_sample",
    "binomial_poisson_sample",
    "shuffled_batches",
    "poisson_batches",
    "fixed_size_batches",
    "truncated_poisson_batches",
    "ClipState",
    "gradient_noise_multiplier",
    "DPSGDPlan",
    "plan_dp_sgd",
    "dp_sgd_step",
    "dp_sgd_adaptive_step",
    "run_dp_sgd",
    "dp_sgd",
    "ShuffledBatchesWarning",
    "LR_SCHEDULES",
    "SAMPLINGS",
    "SAMPLERS",
    "CLIP_MODES",
    "BUDGET_SPLITS",
    "CALIBRATIONS",
    "MAX_STEPS",
]
