"""Private learners beyond DP-SGD (docs/math.md §25): output and objective perturbation for regularised
logistic regression, and prefix sums of gradients released through a matrix factorisation (DP-FTRL's tree,
the square root, a banded square root) with the training loop that uses them; and the projected, L2-regularised
step (:mod:`.projected`) that the one DP-SGD loop takes for the last-iterate bound (docs/math.md §28.5).
"""

from .convex import (
    ConvexResult, minimise_regularised_logistic, objective_perturbation, objective_perturbation_noise_std,
    objective_perturbation_regularization, output_perturbation, output_perturbation_sensitivity
)
from .factorization import FactorizedGaussianEvent, make_factorization, prefix_sum_error, sensitivity
from .ftrl import factorized_gradient_descent
from .projected import ProjectedRun, ProjectedStep, project_to_ball, projected_step, run_projected

__all__ = [
    "ConvexResult",
    "FactorizedGaussianEvent",
    "factorized_gradient_descent",
    "make_factorization",
    "prefix_sum_error",
    "sensitivity",
    "minimise_regularised_logistic",
    "objective_perturbation",
    "objective_perturbation_noise_std",
    "objective_perturbation_regularization",
    "output_perturbation",
    "output_perturbation_sensitivity",
    "ProjectedRun",
    "ProjectedStep",
    "project_to_ball",
    "projected_step",
    "run_projected",
]
