"""Checks for the course exercises: each ``check_*`` calls the student's function on the checker's own data.

A check prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` (an ``AssertionError``) with a
*teaching* hint: where a common mistake can be recognised from its output (clipping coordinates one by
one, dividing by the batch size actually drawn, forgetting the noisy count, ...), the hint names it.
Checks draw the settings they grade afresh at every call, from their own generator (never from the student's
random state): a failure may show the expected value for the settings it tried, and the next run tries others,
so a value a failure showed cannot be copied into an answer (``seed=`` replays one draw, for tests). A noisy
answer draws its noise from generators the check seeds itself, so a correct answer passes every time, and the
checks of a noisy release test what makes it private: an independent draw in every coordinate, at the stated
scale, of the stated shape (:func:`~dpedu.course.checks.common.expect_independent_noise`). A function that still
raises the stub's ``NotImplementedError`` fails with "not written yet".

One module per chapter (``dpedu.course.checks.ch00`` ... ``ch13``; chapter 10's check lives in ``ch04``), sharing the
machinery of ``dpedu.course.checks.common``; this package re-exports every check. Chapter by chapter:

========  =========================================================================================
0         :func:`check_randomized_response`, :func:`check_estimate_share`,
          :func:`check_laplace_threshold_success`
1         :func:`check_logistic_loss`, :func:`check_logistic_gradient`, :func:`check_gradient_descent`,
          :func:`check_accuracy`
2         :func:`check_sensitivities`, :func:`check_L2_clip`, :func:`check_noisy_count`,
          :func:`check_classic_noise_multiplier`, :func:`check_noisy_gradient_sum`
3         :func:`check_book_total`, :func:`check_advanced_composition`, :func:`check_zcdp_epsilon`,
          :func:`check_per_iteration_epsilon`
4         :func:`check_poisson_sample`, :func:`check_clipped_gradient_sum`, :func:`check_dp_sgd_step`,
          :func:`check_steps_and_epsilon`, :func:`check_steps_and_sampling_rate`
5         :func:`check_log_moment`, :func:`check_epsilon_from_log_moments`, :func:`check_smallest_feasible`
6         :func:`check_proactive_noise_multiplier`, :func:`check_proactive_schedule`,
          :func:`check_closed_form_applies`
7         :func:`check_noise_std_of_average`, :func:`check_tuning_epsilon`,
          :func:`check_smallest_epsilon_reaching`, :func:`check_tuning_epsilons`,
          :func:`check_gradient_noise_multiplier`
8         :func:`check_gaussian_tradeoff`, :func:`check_epsilon_delta_tradeoff`, :func:`check_best_tpr`
9         :func:`check_epsilon_from_rates`, :func:`check_clopper_pearson_upper`,
          :func:`check_audit_lower_bound`, :func:`check_gaussian_shift_lower_bound`,
          :func:`check_epsilon_from_gdp`, :func:`check_one_run_bound`
10        :func:`check_fixed_batch_event`
11        :func:`check_output_sensitivity`, :func:`check_square_root_coefficients`,
          :func:`check_factorization_sensitivity`
12        :func:`check_last_iterate_delta`, :func:`check_flat_from`
13        :func:`check_lira_record_score`, :func:`check_min_fpr_for_tpr`
========  =========================================================================================

>>> import numpy as np
>>> def my_L2_clip(v, clip_norm):
...     norm = np.linalg.norm(v, axis=-1, keepdims=True)
...     return v * np.minimum(1.0, clip_norm / np.maximum(norm, 1e-300))
>>> check_L2_clip(my_L2_clip)
passed: L2_clip scales whole vectors (and each row of a matrix) to norm <= clip_norm
>>> check_L2_clip(lambda v, clip_norm: np.clip(v, -clip_norm, clip_norm))
Traceback (most recent call last):
...
dpedu.course.notebook.CheckFailed: you clipped coordinates one by one (np.clip), which changes the direction of the vector ...
>>> hint("2.2")
Exercise 2.2, more: scale the whole vector by one factor, min(1, C / ‖v‖), so its direction stays; np.clip acts on each coordinate alone.

A failure says what is wrong and where: for a wrong value, the line of the student's function that returned
it. :func:`hint` (``checks.hint("2.2")``) says more: what the last failure of that exercise suggests changing, or
the exercise's general hint (:mod:`dpedu.course.checks.hints`); where that would give the answer away, in two
levels, the idea first and the fix at the next call. While a check runs the
student's function, dpedu's own version of the exercise refuses to run (:mod:`dpedu.course.checks.guard`): "Exercise
2.2 asks you to write this yourself".
"""

from __future__ import annotations

from ..notebook import CheckFailed
from .ch00 import check_estimate_share, check_laplace_threshold_success, check_randomized_response
from .guard import ExerciseRefused
from .hints import hint
from .ch01 import check_accuracy, check_gradient_descent, check_logistic_gradient, check_logistic_loss
from .ch02 import (
    check_classic_noise_multiplier, check_L2_clip, check_noisy_count, check_noisy_gradient_sum, check_sensitivities
)
from .ch03 import check_advanced_composition, check_book_total, check_per_iteration_epsilon, check_zcdp_epsilon
from .ch04 import (
    check_clipped_gradient_sum, check_dp_sgd_step, check_fixed_batch_event, check_poisson_sample,
    check_steps_and_epsilon, check_steps_and_sampling_rate
)
from .ch05 import check_epsilon_from_log_moments, check_log_moment, check_smallest_feasible
from .ch06 import check_closed_form_applies, check_proactive_noise_multiplier, check_proactive_schedule
from .ch07 import (
    check_gradient_noise_multiplier, check_noise_std_of_average, check_smallest_epsilon_reaching, check_tuning_epsilon,
    check_tuning_epsilons
)
from .ch08 import check_best_tpr, check_epsilon_delta_tradeoff, check_gaussian_tradeoff
from .ch09 import (
    check_audit_lower_bound, check_epsilon_from_gdp, check_gaussian_shift_lower_bound, check_one_run_bound,
    check_clopper_pearson_upper, check_epsilon_from_rates
)
from .ch11 import check_factorization_sensitivity, check_output_sensitivity, check_square_root_coefficients
from .ch12 import check_flat_from, check_last_iterate_delta
from .ch13 import check_lira_record_score, check_min_fpr_for_tpr

__all__ = [
    "CheckFailed",
    "check_randomized_response",
    "check_estimate_share",
    "check_laplace_threshold_success",
    "ExerciseRefused",
    "hint",
    "check_logistic_loss",
    "check_logistic_gradient",
    "check_gradient_descent",
    "check_accuracy",
    "check_sensitivities",
    "check_L2_clip",
    "check_noisy_count",
    "check_classic_noise_multiplier",
    "check_noisy_gradient_sum",
    "check_book_total",
    "check_advanced_composition",
    "check_zcdp_epsilon",
    "check_per_iteration_epsilon",
    "check_poisson_sample",
    "check_clipped_gradient_sum",
    "check_dp_sgd_step",
    "check_steps_and_epsilon",
    "check_steps_and_sampling_rate",
    "check_fixed_batch_event",
    "check_log_moment",
    "check_epsilon_from_log_moments",
    "check_smallest_feasible",
    "check_proactive_noise_multiplier",
    "check_proactive_schedule",
    "check_closed_form_applies",
    "check_noise_std_of_average",
    "check_tuning_epsilon",
    "check_smallest_epsilon_reaching",
    "check_tuning_epsilons",
    "check_gradient_noise_multiplier",
    "check_gaussian_tradeoff",
    "check_epsilon_delta_tradeoff",
    "check_best_tpr",
    "check_epsilon_from_rates",
    "check_clopper_pearson_upper",
    "check_audit_lower_bound",
    "check_gaussian_shift_lower_bound",
    "check_epsilon_from_gdp",
    "check_one_run_bound",
    "check_output_sensitivity",
    "check_square_root_coefficients",
    "check_factorization_sensitivity",
    "check_last_iterate_delta",
    "check_flat_from",
    "check_lira_record_score",
    "check_min_fpr_for_tpr",
]
