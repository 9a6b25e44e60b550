r"""Training loops: plain gradient descent, the book's noisy gradient descent, and DP-SGD.

===================  ==========================================================================================
:mod:`.full_batch`   :func:`gradient_descent`; the book's noisy gradient descent, :func:`run_noisy_gradient_descent`
                     (its loop) and :func:`noisy_gradient_descent` (the book's call)
:mod:`.sampling`     the batch sampling schemes (:func:`poisson_sample`, ...), one object and one file each
:mod:`.plan`         :func:`plan_dp_sgd`: a DP-SGD run (:class:`DPSGDPlan`) fixed before the data is touched
:mod:`.step`         :func:`dp_sgd_step`: one step of DP-SGD (Abadi et al.)
:mod:`.sgd`          :func:`run_dp_sgd`: the one DP-SGD loop; :func:`dp_sgd`: Algorithm 1's parameters
:mod:`.adaptive`     adaptive clipping (Andrew et al. 2021): its step and the noise split
:mod:`.common`       :class:`TrainingResult` and its typed ``details``, :class:`TrainingData` (checked once)
===================  ==========================================================================================

Every private loop returns a :class:`TrainingResult` whose ``ledger`` lists the privacy events
it performed, ``[(event, count), ...]``, so any accountant can account the run::

    result = noisy_gradient_descent(X, y, iterations=10, epsilon=0.1, delta=1e-5, rng=0)
    result.epsilon, result.delta                       # sequential composition, as the book
    dpedu.accountants.compare(result, delta=1e-5)      # every accountant side by side

A DP-SGD result is not accounted by the trainer: its ``epsilon`` raises :class:`NotAccountedError`, which
names the call that accounts it (``dpedu.accountants.compare(result, delta=...)``).

>>> from dpedu.textbook.datasets import make_toy
>>> X, y = make_toy(n=200, d=3, rng=0)
>>> noisy_gradient_descent(X, y, iterations=5, epsilon=0.5, delta=1e-5, clip_norm=1.0, rng=1).epsilon
3.0
>>> dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2, rng=0).ledger
[(SubsampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1), 20)]
"""

from .common import MAX_STEPS, DPSGDDiagnostics, NoisyGDDiagnostics, NotAccountedError, TrainingData, TrainingResult
from .common import training_data
from .sampling import SAMPLINGS, Sampling, poisson_sample
from .step import dp_sgd_step
from .adaptive import gradient_noise_multiplier
from .plan import CLIP_MODES, LR_SCHEDULES, DPSGDPlan, plan_dp_sgd
from .sgd import ShuffledBatchesWarning, dp_sgd, run_dp_sgd
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
    "Sampling",
    "SAMPLINGS",
    "gradient_noise_multiplier",
    "DPSGDPlan",
    "plan_dp_sgd",
    "dp_sgd_step",
    "run_dp_sgd",
    "dp_sgd",
    "ShuffledBatchesWarning",
    "LR_SCHEDULES",
    "CLIP_MODES",
    "BUDGET_SPLITS",
    "CALIBRATIONS",
    "MAX_STEPS",
]
