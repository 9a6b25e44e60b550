r"""The canary audit game over many trainings, final model only (Jagielski, Ullman, Oprea 2020).

Train ``runs`` times on D and ``runs`` times on D' = D + canary, score each final model by the canary's
margin, threshold the scores, and bound the error rates with Clopper-Pearson (docs/math.md §20.1).
Model-free, so valid whatever the training code does, but it sees only the last model: compare
:mod:`dpedu.lab.audit.whitebox`, which sees every update.

>>> from dpedu.lab.audit.data import make_audit_data, make_canary
>>> X, y = make_audit_data(n=50, d=2, rng=0)
>>> train = dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4)
>>> result = canary_audit(train, X, y, make_canary(X, y), runs=100, delta=1e-5, rng=0)
>>> 0 <= result.epsilon_lower <= result.upper_bounds["pld"]
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ...accountants import compare
from ...textbook.training import TrainingResult, dp_sgd, plan_noisy_gradient_descent, run_noisy_gradient_descent
from ...ground.validation import (
    check_array, check_choice, check_confidence, check_delta, check_features, check_labels, check_nonnegative,
    check_positive, check_positive_int, check_sampling_rate
)
from .data import SCORES, canary_scores, check_canary
from ..parallel import check_n_jobs, map_seeded
from .results import AuditBound
from .statistics import best_threshold, error_counts, rate_bounds_epsilon

__all__ = ["dp_sgd_trainer", "noisy_gd_trainer", "AuditResult", "canary_audit", "upper_bounds"]


def check_trainer_settings(noise_multiplier, sampling_rate, steps, clip_norm, learning_rate):
    """A DP-SGD trainer's settings checked when it is made, not inside the audit: ``(z, q, T, C, learning_rate)``.

    ``noise_multiplier`` may be 0 (a non-private run, for the audit to catch); each bad value raises naming it.
    """
    noise_multiplier = check_nonnegative(noise_multiplier, "noise_multiplier")
    sampling_rate = check_sampling_rate(sampling_rate)
    steps = check_positive_int(steps, "steps")
    clip_norm = check_positive(clip_norm, "clip_norm")
    learning_rate = check_positive(learning_rate, "learning_rate")
    return noise_multiplier, sampling_rate, steps, clip_norm, learning_rate


def check_audit_inputs(train, X, y, canary, runs, delta, confidence, *, returns=""):
    """What every canary audit checks first: ``(X, y, (x, label), runs, delta, confidence)``, each bad one refused
    by name; ``returns`` completes the description of ``train`` in its message (e.g. ``" -> ObservedRun"``)."""
    if not callable(train):
        raise TypeError(f"train must be a callable train(X, y, rng){returns}; got {train!r}")
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    canary = check_canary(canary, X.shape[1])
    return X, y, canary, check_positive_int(runs, "runs"), check_delta(delta), check_confidence(confidence)


def dp_sgd_trainer(*, noise_multiplier, sampling_rate, steps, clip_norm=1.0, learning_rate=0.1):
    r"""``train(X, y, rng) -> TrainingResult``: :func:`dpedu.textbook.training.dp_sgd` with these settings.

    ``noise_multiplier=0`` trains without noise (the non-private baseline the audit must catch);
    ``sampling_rate=1`` is full-batch noisy gradient descent (``GaussianEvent`` steps). A small learning rate
    keeps the canary unfitted, so its gradient stays clipped at exactly C (see :func:`make_canary`); the
    privacy, and hence every accountant's bound, does not depend on it.
    """
    noise_multiplier, sampling_rate, steps, clip_norm, learning_rate = check_trainer_settings(
        noise_multiplier, sampling_rate, steps, clip_norm, learning_rate)

    def train(X, y, rng):
        return dp_sgd(X, y, noise_multiplier=noise_multiplier, clip_norm=clip_norm, sampling_rate=sampling_rate,
                      steps=steps, learning_rate=learning_rate, rng=rng)

    train.description = (f"DP-SGD: z = {noise_multiplier:g}, q = {sampling_rate:g}, T = {steps}, C = {clip_norm:g}, "
                         f"learning rate {learning_rate:g}")
    return train


def noisy_gd_trainer(*, iterations, epsilon, delta, clip_norm=1.0, learning_rate=0.1, calibration="classic"):
    """``train(X, y, rng) -> TrainingResult``: the book's :func:`dpedu.textbook.training.noisy_gradient_descent`.

    ``epsilon``/``delta`` are per iteration, as in the book; the ledger also holds the noisy count.
    """
    iterations = check_positive_int(iterations, "iterations")

    def train(X, y, rng):
        plan = plan_noisy_gradient_descent(iterations, epsilon, delta, clip_norm=clip_norm,
                                           learning_rate=learning_rate, calibration=calibration)
        return run_noisy_gradient_descent(X, y, plan, rng=rng)

    train(np.ones((1, 1)), np.ones(1), 0)              # validates the settings now, not inside the audit
    train.description = (f"noisy gradient descent (book): {iterations} iterations at ({epsilon:g}, {delta:g}) "
                         f"each, C = {clip_norm:g}, {calibration} calibration")
    return train


# --- the canary audit ----------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditResult(AuditBound):
    """What :func:`canary_audit` measured: an :class:`~dpedu.lab.audit.results.AuditBound` (``epsilon_lower``,
    ``upper_bounds``, ``delta``, ``confidence``, ``seconds``, ``description``, ``notes``, ``consistent``) and

    Attributes
    ----------
    fpr, fnr : float
        Empirical rates at the threshold, on the evaluation runs.
    fpr_upper, fnr_upper : float
        Their Clopper-Pearson upper bounds (each at level ``1 - (1 - confidence) / (2 m)``).
    threshold : float
        "in" means score > threshold.
    scores_in, scores_out : ndarray
        Scores of all runs with / without the canary (selection runs first).
    n_eval_in, n_eval_out : int
        Runs the rates were measured on.
    selection : str
        How the threshold was chosen (``"split"``, ``"fixed"`` or ``"bonferroni"``).
    runs : int
        Trainings per world.
    """

    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    threshold: float
    scores_in: np.ndarray
    scores_out: np.ndarray
    n_eval_in: int
    n_eval_out: int
    selection: str
    runs: int

    def __str__(self):
        how = {"split": "chosen on the first half of the runs, rates measured on the second half",
               "fixed": "fixed in advance",
               "bonferroni": "best of thresholds fixed in advance (Bonferroni-corrected)"}[self.selection]
        lines = [
            self.description or "canary audit",
            f"{self.runs} trainings with and {self.runs} without the canary; threshold {self.threshold:.4g}",
            f"  ({how})",
            f"  empirical FPR {self.fpr:.4f} (of {self.n_eval_out}), FNR {self.fnr:.4f} (of {self.n_eval_in})",
            f"  Clopper-Pearson upper bounds {self.fpr_upper:.4f}, {self.fnr_upper:.4f}",
        ]
        return "\n".join(lines + self.bound_lines(f"audit, {self.confidence:.0%} confidence"))


def _theta_of(output, name="train"):
    theta = output.theta if isinstance(output, TrainingResult) else output
    return check_array(theta, f"the parameters returned by {name}", ndim=1)


class _PairTask:
    """One pair of trainings, with and without the canary, on two generators spawned from one (picklable).

    Returns ``(thetas, ledger)``: the two parameter vectors as the rows of one array (one array, not two, to
    send back from a worker), and the run's ledger when ``keep_ledger`` (asked of the first pair only: every
    pair runs the same algorithm, so one ledger accounts for all).
    """

    def __init__(self, train, X_in, y_in, X, y):
        self.train, self.X_in, self.y_in, self.X, self.y = train, X_in, y_in, X, y

    def __call__(self, keep_ledger, rng):
        rng_in, rng_out = rng.spawn(2)
        result = self.train(self.X_in, self.y_in, rng_in)
        theta_in, theta_out = _theta_of(result), _theta_of(self.train(self.X, self.y, rng_out))
        if theta_in.shape != theta_out.shape:
            raise ValueError(f"train returned {theta_in.size} parameters with the canary and {theta_out.size} "
                             "without: the audit compares the same model trained on both datasets")
        ledger = None
        if keep_ledger and isinstance(result, TrainingResult):
            ledger = result.ledger if result.private else "non-private"
        return np.stack([theta_in, theta_out]), ledger


def upper_bounds(ledger, delta, accountants):
    """``({name: epsilon}, notes)`` of a run's ledger ("non-private": inf; None: no ledger, empty)."""
    if ledger is None:
        return {}, {"accountants": "train returned no TrainingResult, so there is no ledger to account"}
    if isinstance(ledger, str) and ledger == "non-private":
        return {name: math.inf for name in accountants}, {}
    comparison = compare(ledger, delta, accountants=accountants)
    return dict(comparison), dict(comparison.notes)


def canary_audit(train, X, y, canary, *, runs=1000, delta=1e-5, confidence=0.95, threshold="split",
                 score="margin", accountants=("rdp", "pld"), rng=None, progress=None, n_jobs=1):
    r"""Audit a training algorithm with a canary: an empirical lower bound on its epsilon.

    For r = 1..``runs`` (one generator per pair, spawned from ``rng``: :func:`dpedu.lab.parallel.map_seeded`)::

        theta_in  <- train(D + canary)        score s_in  = score(theta_in)
        theta_out <- train(D)                 score s_out = score(theta_out)

    The test "the canary was in iff s > tau" has false-positive rate FPR = P(s_out > tau) and false-negative
    rate FNR = P(s_in <= tau). Each training is an independent Bernoulli trial of the test, so the counts
    are binomial and Clopper-Pearson bounds them; :func:`epsilon_lower_bound` turns the bounds into
    :math:`\varepsilon_{\mathrm{lb}}`, valid with probability >= ``confidence`` (Jagielski et al. 2020, Alg. 2;
    Nasr et al. 2021). The accountants' upper bounds for the same run come from its ledger.

    Parameters
    ----------
    train : callable
        ``train(X, y, rng) -> TrainingResult`` (or a parameter vector), e.g. :func:`dp_sgd_trainer`. It must
        use ``rng`` for all its randomness.
    X, y : arrays
        The training data D without the canary (labels in {-1, +1}).
    canary : (x, label)
        From :func:`make_canary`; added as the last row of D'.
    runs : int
        Trainings per world (>= 4 with ``threshold="split"``). The bound cannot exceed about
        :math:`\ln(n_{\mathrm{eval}}/\ln(2/\alpha))` however leaky the model: more runs, sharper audits.
    delta : float
        The delta at which epsilon is audited and accounted, in (0, 1).
    confidence : float
        In (0, 1): the probability that the returned bound is valid.
    threshold : "split", float or array of floats
        ``"split"`` (default): choose tau on the first half of the runs (maximising the same bound there) and
        measure the rates on the other half, so the threshold is independent of the evaluation runs and no
        correction is needed. A float: one threshold fixed in advance, all runs evaluate it. An array of m
        thresholds fixed in advance: all runs evaluate each, the best is reported, and every bound is taken
        at level :math:`1-\alpha/(2m)` (Bonferroni).
    score : {"margin", "loss"}
        See :func:`canary_scores` (same ranking, same audit).
    accountants : sequence of str
        Accountants for the upper bounds (:func:`dpedu.accountants.compare`).
    rng : None, int, SeedSequence or Generator
        Root of all seeds; the same value gives the same result.
    progress : None, True or callable
        ``True``: a progress bar; a callable: called with a short message about every 10% of the trainings.
    n_jobs : int
        Workers for the independent trainings (joblib; ``-1``: every core; under
        ``joblib.parallel_backend("dask")`` a Dask cluster). The result does not depend on it.

    Returns
    -------
    AuditResult
    """
    X, y, (x_c, y_c), runs, delta, confidence = check_audit_inputs(train, X, y, canary, runs, delta, confidence)
    score = check_choice(score, "score", SCORES)
    if isinstance(threshold, str):
        if threshold != "split":
            raise ValueError(f"threshold must be 'split', a number or an array of numbers; got {threshold!r}")
        if runs < 4:
            raise ValueError(f"runs must be >= 4 with threshold='split' (half select, half evaluate); got {runs}")
        thresholds = None
    else:
        thresholds = check_array(threshold, "threshold", ndim=(0, 1)).reshape(-1)
    n_jobs = check_n_jobs(n_jobs)

    X_in = np.vstack([X, x_c])
    y_in = np.append(y, y_c)
    start = time.perf_counter()
    pairs = map_seeded(_PairTask(train, X_in, y_in, X, y), runs, items=[True] + [False] * (runs - 1), rng=rng,
                       n_jobs=n_jobs, progress=progress, desc="audit", unit="pairs of trainings")
    thetas = np.array([p[0] for p in pairs])          # (runs, 2, d): with, without the canary
    ledger = pairs[0][1]
    s_in = canary_scores(thetas[:, 0], (x_c, y_c), score=score)
    s_out = canary_scores(thetas[:, 1], (x_c, y_c), score=score)

    alpha = 1.0 - confidence
    if thresholds is None:
        half = runs // 2
        tau = best_threshold(s_in[:half], s_out[:half], delta, alpha / 2)
        eval_in, eval_out, m, selection = s_in[half:], s_out[half:], 1, "split"
    else:
        eval_in, eval_out, m = s_in, s_out, thresholds.size
        selection = "fixed" if m == 1 else "bonferroni"
    candidates = np.array([tau]) if thresholds is None else thresholds
    fp, fn = error_counts(eval_in, eval_out, candidates)
    eps, fpr_u, fnr_u = rate_bounds_epsilon(fp, eval_out.size, fn, eval_in.size, delta, alpha / (2 * m))
    best = int(np.argmax(eps))

    upper, notes = upper_bounds(ledger, delta, accountants)
    return AuditResult(
        epsilon_lower=float(eps[best]), upper_bounds=upper,
        fpr=float(fp[best] / eval_out.size), fnr=float(fn[best] / eval_in.size),
        fpr_upper=float(fpr_u[best]), fnr_upper=float(fnr_u[best]), threshold=float(candidates[best]),
        scores_in=s_in, scores_out=s_out, n_eval_in=int(eval_in.size), n_eval_out=int(eval_out.size),
        selection=selection, delta=delta, confidence=confidence, runs=runs,
        seconds=time.perf_counter() - start, description=getattr(train, "description", ""), notes=notes,
    )


