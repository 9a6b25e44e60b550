"""While a check runs the student's function, dpedu's own version of the exercise refuses to run.

Every exercise has a row in :data:`EXERCISES`: its number, its check and its *counterparts*, the dpedu
functions that compute what the exercise asks for (``"2.2"``: :func:`dpedu.textbook.clipping.L2_clip`). A check calls
the student's function inside :func:`refusing`; there, a call of a counterpart -- from the student's code
directly, through an alias taken long before (``from dpedu.textbook.clipping import L2_clip``), or through any dpedu
function that reaches it -- raises :class:`ExerciseRefused`: "Exercise 2.2 asks you to write this yourself".

No library module is changed for this. :func:`refusing` installs a trace function (:func:`sys.settrace`, for
the running thread only) that looks at each Python function call and refuses the ones whose *code object*
belongs to a counterpart. A name bound before the check, a method or a decorated function all run that same
code object, so none of them escapes; the textbook functions stay as they are. The trace function chains to
one that was already installed (a debugger, a coverage tool) and is removed when the student's function
returns. A refusal that a library ``except`` swallows is remembered and still fails the check.

>>> import numpy as np
>>> import dpedu as dp
>>> with refusing("2.2"):
...     dp.L2_clip(np.ones(2), 1.0)
Traceback (most recent call last):
...
dpedu.course.checks.guard.ExerciseRefused: Exercise 2.2 asks you to write this yourself: your function called dpedu.textbook.clipping.L2_clip, ...
>>> dp.L2_clip(np.array([3.0, 4.0]), 1.0)            # outside the check it works as always
array([0.6, 0.8])
"""

from __future__ import annotations

import importlib
import inspect
import sys
from contextlib import contextmanager
from dataclasses import dataclass

from ..booklinks import resolve
from ..notebook import CheckFailed

__all__ = ["ExerciseSpec", "EXERCISES", "ExerciseRefused", "exercise_of_check", "counterparts", "refusing",
           "refusal_message", "StudentCall"]


@dataclass(frozen=True)
class ExerciseSpec:
    """One exercise: its number (``"2.2"``), the name of its check, and the dotted names of dpedu's functions
    that compute its answer (``"module.function"`` or ``"module.Class.method"``)."""

    number: str
    check: str
    counterparts: tuple[str, ...] = ()


_L = "dpedu.textbook.models.logistic."
_M = "dpedu.textbook.models.logistic.LogisticModel."
_TRADEOFF = "dpedu.accountants.tradeoff."
_STATS = "dpedu.lab.audit.statistics."

EXERCISES = {spec.number: spec for spec in (
    ExerciseSpec("0.1", "check_randomized_response"),           # dpedu has no randomized response to call
    ExerciseSpec("0.2", "check_estimate_share"),                # one formula on the student's counts
    ExerciseSpec("0.3", "check_laplace_threshold_success"),     # one formula
    ExerciseSpec("1.1", "check_logistic_loss", (_L + "loss", _L + "per_example_loss", "dpedu.textbook.models.base.Model.loss")),
    ExerciseSpec("1.2", "check_logistic_gradient", (_L + "gradient", _L + "per_example_gradients",
                                                    _M + "per_example_gradients")),
    ExerciseSpec("1.3", "check_gradient_descent", ("dpedu.textbook.training.full_batch.gradient_descent", _L + "gradient")),
    ExerciseSpec("1.4", "check_accuracy", (_L + "accuracy", _L + "predict")),
    ExerciseSpec("2.1", "check_sensitivities"),                  # three numbers: nothing of dpedu's to call
    ExerciseSpec("2.2", "check_L2_clip", ("dpedu.textbook.clipping.L2_clip", "dpedu.textbook.clipping.clip_factor")),
    ExerciseSpec("2.3", "check_noisy_count", ("dpedu.textbook.mechanisms.laplace_mechanism", "dpedu.textbook.mechanisms.laplace_mech")),
    ExerciseSpec("2.4", "check_classic_noise_multiplier", ("dpedu.textbook.mechanisms.gaussian_noise_multiplier",
                                                           "dpedu.ground.gaussian.classic_noise_multiplier")),
    ExerciseSpec("2.5", "check_noisy_gradient_sum", ("dpedu.textbook.mechanisms.gaussian_mechanism",   # it allows dp.L2_clip
                                                     "dpedu.textbook.mechanisms.gaussian_mech_vec", "dpedu.textbook.mechanisms.gaussian_mech",
                                                     _L + "clipped_gradient_sum", _M + "clipped_gradient_sum",
                                                     "dpedu.textbook.models.base.Model.clipped_gradient_sum")),
    ExerciseSpec("3.1", "check_book_total", ("dpedu.accountants.base.Accountant.get_epsilon",
                                             "dpedu.accountants.sequential.SequentialAccountant.breakdown")),
    ExerciseSpec("3.2", "check_advanced_composition", ("dpedu.accountants.advanced.advanced_composition",
                                                       "dpedu.accountants.advanced.advanced_composition_bound")),
    ExerciseSpec("3.3", "check_zcdp_epsilon", ("dpedu.accountants.zcdp.zcdp_epsilon",
                                               "dpedu.accountants.base.Accountant.get_epsilon")),
    ExerciseSpec("3.4", "check_per_iteration_epsilon", ("dpedu.accountants.advanced.advanced_composition",
                                                        "dpedu.accountants.advanced.advanced_composition_bound",
                                                        "dpedu.ground.search.monotone_search")),
    ExerciseSpec("4.1", "check_poisson_sample", ("dpedu.textbook.training.sampling.poisson.poisson_sample",
                                                 "dpedu.textbook.training.sampling.poisson.Poisson.batches")),
    ExerciseSpec("4.2", "check_clipped_gradient_sum", ("dpedu.textbook.clipping.L2_clip", "dpedu.textbook.clipping.clip_factor",
                                                       _L + "clipped_gradient_sum", _M + "clipped_gradient_sum",
                                                       "dpedu.textbook.models.base.Model.clipped_gradient_sum")),
    ExerciseSpec("4.3", "check_dp_sgd_step", ("dpedu.textbook.training.step.dp_sgd_step",
                                              "dpedu.textbook.training.adaptive.AdaptiveClipping.__call__",
                                              _L + "clipped_gradient_sum", _M + "clipped_gradient_sum",
                                              "dpedu.textbook.models.base.Model.clipped_gradient_sum", "dpedu.textbook.clipping.L2_clip",
                                              "dpedu.textbook.clipping.clip_factor")),
    ExerciseSpec("4.4", "check_steps_and_epsilon", ("dpedu.ground.events.steps_from_epochs",
                                                    "dpedu.textbook.training.plan.plan_dp_sgd",
                                                    "dpedu.lab.experiments.accounting.epsilon_for_run",
                                                    "dpedu.accountants.registry.compare")),
    ExerciseSpec("4.5", "check_steps_and_sampling_rate", ("dpedu.ground.events.steps_from_epochs",
                                                          "dpedu.textbook.training.plan.plan_dp_sgd")),
    ExerciseSpec("5.1", "check_log_moment", ("dpedu.accountants.moments.event_log_moments",
                                             "dpedu.accountants.analysis.log_moments.log_moment",
                                             "dpedu.accountants.analysis.log_moments.log_a",
                                             "dpedu.accountants.moments.abadi_lemma3_bound")),
    ExerciseSpec("5.2", "check_epsilon_from_log_moments", (
        "dpedu.accountants.moments.epsilon_from_log_moments",
        "dpedu.accountants.moments.MomentsAccountant.get_epsilon_and_moment_order")),
    ExerciseSpec("5.3", "check_smallest_feasible", ("dpedu.ground.search.monotone_search",)),
    ExerciseSpec("6.1", "check_proactive_noise_multiplier", ("dpedu.accountants.proactive.closed_form.proactive_noise_multiplier",
                                                             "dpedu.accountants.proactive.closed_form.closed_form_z")),
    ExerciseSpec("6.2", "check_proactive_schedule", ("dpedu.accountants.proactive.conditions.minimum_steps",
                                                     "dpedu.accountants.proactive.planner.plan")),
    ExerciseSpec("6.3", "check_closed_form_applies", ("dpedu.accountants.proactive.conditions.proactive_conditions",
                                                      "dpedu.accountants.proactive.planner.plan")),
    ExerciseSpec("7.1", "check_noise_std_of_average"),          # one expression; dpedu has no function for it
    ExerciseSpec("7.2", "check_tuning_epsilon", ("dpedu.lab.experiments.tuning_costs.tuning_cost",)),
    ExerciseSpec("7.3", "check_smallest_epsilon_reaching"),     # numpy on the student's own arrays
    ExerciseSpec("7.4", "check_tuning_epsilons", ("dpedu.lab.experiments.tuning_costs.tuning_cost",)),
    ExerciseSpec("7.5", "check_gradient_noise_multiplier", ("dpedu.textbook.training.adaptive.gradient_noise_multiplier",
                                                            "dpedu.textbook.training.plan.DPSGDPlan.gradient_noise_multiplier")),
    ExerciseSpec("8.1", "check_gaussian_tradeoff", (_TRADEOFF + "gaussian_tradeoff", "dpedu.accountants.gdp.gdp_delta")),
    ExerciseSpec("8.2", "check_epsilon_delta_tradeoff", (_TRADEOFF + "epsilon_delta_tradeoff",
                                                         _TRADEOFF + "profile_tradeoff")),
    ExerciseSpec("8.3", "check_best_tpr", (_TRADEOFF + "TradeoffCurve.best_tpr", _TRADEOFF + "TradeoffCurve.beta_at",
                                           _TRADEOFF + "profile_tradeoff", _TRADEOFF + "epsilon_delta_tradeoff")),
    ExerciseSpec("9.1", "check_epsilon_from_rates", (_STATS + "epsilon_from_rates", _STATS + "epsilon_from_rate_arrays")),
    ExerciseSpec("9.2", "check_clopper_pearson_upper", (_STATS + "clopper_pearson",)),
    ExerciseSpec("9.3", "check_audit_lower_bound", (_STATS + "epsilon_lower_bound", _STATS + "rate_bounds_epsilon",
                                                    _STATS + "clopper_pearson", _STATS + "epsilon_from_rates")),
    ExerciseSpec("9.4", "check_gaussian_shift_lower_bound", (_STATS + "gaussian_mu_lower_bound",)),
    ExerciseSpec("9.5", "check_epsilon_from_gdp", (_STATS + "epsilon_from_mu", "dpedu.accountants.gdp.gdp_delta")),
    ExerciseSpec("9.6", "check_one_run_bound", ("dpedu.lab.audit.one_run.one_run_epsilon_lower_bound",
                                                "dpedu.lab.audit.one_run.one_run_p_value")),
    ExerciseSpec("10.1", "check_fixed_batch_event", ("dpedu.lab.experiments.relations.scheme_events",
                                                     "dpedu.textbook.training.plan.plan_dp_sgd")),
    ExerciseSpec("11.1", "check_output_sensitivity", ("dpedu.textbook.learners.convex.output_perturbation_sensitivity",)),
    ExerciseSpec("11.2", "check_square_root_coefficients", ("dpedu.textbook.learners.factorization.square_root_coefficients",
                                                            "dpedu.textbook.learners.factorization.square_root_factorization")),
    ExerciseSpec("11.3", "check_factorization_sensitivity", ("dpedu.textbook.learners.factorization.sensitivity",)),
    ExerciseSpec("12.1", "check_last_iterate_delta", ("dpedu.accountants.last_iterate.linear_last_iterate_delta",
                                                      "dpedu.accountants.last_iterate.linear_last_iterate_epsilon")),
    ExerciseSpec("12.2", "check_flat_from", ("dpedu.accountants.convex_last_iterate.convex_last_iterate_bound",)),
    ExerciseSpec("13.1", "check_lira_record_score", ("dpedu.lab.audit.lira.lira_score",
                                                     "dpedu.lab.audit.lira.lira_scores")),
    ExerciseSpec("13.2", "check_min_fpr_for_tpr", ("dpedu.lab.audit.mia_stats.min_fpr_for_tpr",)),
)}

_BY_CHECK = {spec.check: spec.number for spec in EXERCISES.values()}


def exercise_of_check(check_name):
    """The exercise number (``"2.2"``) whose check is called ``check_name``, or None."""
    return _BY_CHECK.get(check_name)


def counterparts(number):
    """``{code object: dotted name}`` of the counterparts of exercise ``number`` (wrapped functions unwrapped).

    A counterpart behind :func:`functools.lru_cache` has its cache cleared here: a cached answer would be
    returned without running the code that refuses.
    """
    if number not in EXERCISES:
        raise ValueError(f"number must be an exercise such as '2.2', one of {sorted(EXERCISES)}; got {number!r}")
    codes = {}
    for dotted in EXERCISES[number].counterparts:
        obj = resolve(dotted)
        obj = obj.fget if isinstance(obj, property) else obj
        if hasattr(obj, "cache_clear"):
            obj.cache_clear()
        function = inspect.unwrap(obj)                 # the function itself, never a decorator's shared wrapper
        if hasattr(function, "__code__"):
            codes[function.__code__] = dotted
    return codes


class ExerciseRefused(CheckFailed):
    """dpedu's counterpart of an exercise was called while the exercise's check ran the student's function."""


def refusal_message(number, dotted):
    """The refusal's text: which exercise, which function of dpedu's was reached."""
    return f"Exercise {number} asks you to write this yourself: your function called {dotted}, dpedu's own version"


@dataclass
class StudentCall:
    """What :func:`refusing` saw: a refusal (its message) and the line the student's function returned from."""

    refused: str | None = None
    return_line: int | None = None


@contextmanager
def refusing(number, student=None):
    """Within the block, a call of a counterpart of exercise ``number`` raises :class:`ExerciseRefused`.

    ``student`` (the student's function, optional): the line from which its outermost call returns is
    recorded in the :class:`StudentCall` the block receives, so a hint can say where the answer came from.
    A refusal swallowed by an ``except`` inside the block is raised again when the block ends.
    """
    guarded = counterparts(number) if number is not None else {}
    student_code = getattr(student, "__code__", None)
    seen = StudentCall()
    previous = sys.gettrace()

    def local(frame, event, arg):
        if event == "return" and frame.f_code is student_code:
            seen.return_line = frame.f_lineno
        return local

    def trace(frame, event, arg):
        if event == "call":
            dotted = guarded.get(frame.f_code)
            if dotted is not None:
                seen.refused = refusal_message(number, dotted)
                raise ExerciseRefused(seen.refused)
            if frame.f_code is student_code and seen.return_line is None:
                return local
        return previous(frame, event, arg) if previous is not None else None

    sys.settrace(trace)
    try:
        yield seen
    finally:
        sys.settrace(previous)
    if seen.refused is not None:        # the student's code (or dpedu) caught the refusal and carried on
        raise ExerciseRefused(seen.refused)
