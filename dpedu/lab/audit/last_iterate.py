r"""An audit of the final model only: the adversary sees :math:`\theta_T`, nothing else (docs/math.md §28.7).

Projected DP-SGD (:func:`dpedu.textbook.learners.projected_step`) trains ``runs`` times on
:math:`D_{\rm in} = D + \text{canary}` and ``runs`` times on :math:`D_{\rm out} = D + \text{a zero record}` (a record
whose gradient is 0: the same n, the same divisor, so the pair is add/remove with the plan's divisor fixed, the
relation of every bound here). Each model is scored by the canary's margin at the checkpoints T (one training of
the largest T records :math:`\theta_T` at every smaller checkpoint too: with a constant learning rate, the first T
steps of a longer run are a run of T steps); the threshold is chosen on the first half of the runs and the error
rates of the second half are bounded by Clopper-Pearson (:mod:`dpedu.lab.audit.statistics`, docs/math.md
§20.1). Two canaries, in the feature no other record uses (:func:`~dpedu.lab.audit.data.make_audit_data`):

* ``"gradient"`` (white box): the canary's gradient is the fixed vector of norm C along that feature, a linear loss
  (:class:`GradientCanaryStep`), the worst case of the linear-loss pair (docs/math.md §28.1);
* ``"input"``: a genuine record :math:`x = C e`, label -1, whose logistic gradient shrinks as the model fits it.

:class:`LastIterateAudit` holds the lower bounds beside the upper bounds at the same T: composition (PLD), the
linear-loss heuristic and the proven convex bound. A correct implementation has the audit below composition and
the proven bound (the heuristic is exact only for an unprojected linear loss, so it need not bound this run).

>>> from dpedu.lab.audit.data import make_audit_data
>>> X, y = make_audit_data(n=40, d=2, rng=0)
>>> audit = last_iterate_audit(X, y, steps=(5, 20), runs=40, noise_multiplier=1.0, sampling_rate=0.2,
...                            learning_rate=1.0, radius=0.5, rng=0)
>>> bool(np.all(audit.epsilon_lower <= audit.composition)), audit.steps.tolist()
(True, [5, 20])
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ...accountants import LinearLastIterateEvent, SubsampledGaussianEvent, account
from ...accountants.convex_last_iterate import convex_last_iterate_bound
from ..parallel import check_n_jobs, map_seeded
from ...ground.validation import (
    check_choice, check_confidence, check_delta, check_features, check_labels, check_nonnegative, check_positive,
    check_positive_int, check_sampling_rate
)
from ...textbook.learners.projected import ProjectedStep
from ...textbook.training import dp_sgd_step, plan_dp_sgd, run_dp_sgd
from .data import canary_scores
from .statistics import best_threshold, error_counts, rate_bounds_epsilon

__all__ = ["CANARIES", "GradientCanaryStep", "LastIterateAudit", "last_iterate_bounds", "last_iterate_audit"]

CANARIES = ("gradient", "input")
MAX_CHECKPOINTS = 64


class GradientCanaryStep:
    """A :class:`~dpedu.textbook.learners.projected.ProjectedStep` in which every record with a non-zero value in ``column``
    (the canary) contributes the fixed gradient :math:`-y\\,C\\,x/\\lVert x\\rVert` (norm C, a linear loss) instead
    of its clipped logistic gradient; the other records, the noise and the end of the step are unchanged."""

    def __init__(self, step, column=-1):
        if not isinstance(step, ProjectedStep):
            raise TypeError(f"step must be a ProjectedStep; got {type(step).__name__}")
        self.step, self.column = step, int(column)

    def __call__(self, theta, batch, *, model, clip_norm, noise_multiplier, expected_batch_size, learning_rate, rng):
        canary = batch.X[:, self.column] != 0
        present = bool(canary.any())
        noisy = dp_sgd_step(theta, batch[np.flatnonzero(~canary)] if present else batch, model=model,
                            clip_norm=clip_norm, noise_multiplier=noise_multiplier,
                            expected_batch_size=expected_batch_size, learning_rate=learning_rate, rng=rng)
        if present:                                   # the canary's linear loss: its gradient at full norm C
            rows, labels = batch.X[canary], batch.y[canary]
            gradient = (-labels[:, None] * clip_norm * rows / np.linalg.norm(rows, axis=1, keepdims=True)).sum(axis=0)
            noisy = noisy - learning_rate * gradient / expected_batch_size
        return self.step.finish(theta, noisy, learning_rate)


class _Checkpoints:
    """Wraps a step and keeps a copy of theta after each checkpoint step (one training, every checkpoint)."""

    def __init__(self, step, checkpoints):
        self.step, self.checkpoints, self.count, self.kept = step, set(checkpoints), 0, []

    def __call__(self, theta, batch, **settings):
        theta = self.step(theta, batch, **settings)
        self.count += 1
        if self.count in self.checkpoints:
            self.kept.append(theta.copy())
        return theta


class _PairTask:
    """One training on D_in and one on D_out (two generators spawned from one): their thetas at the checkpoints."""

    def __init__(self, X_in, y_in, X_out, y_out, plan, step, canary, checkpoints):
        self.data = ((X_in, y_in), (X_out, y_out))
        self.plan, self.step, self.canary, self.checkpoints = plan, step, canary, checkpoints

    def __call__(self, rng):
        out = []
        for (X, y), generator in zip(self.data, rng.spawn(2)):
            inner = GradientCanaryStep(self.step) if self.canary == "gradient" else self.step
            recorder = _Checkpoints(inner, self.checkpoints)
            run_dp_sgd(X, y, self.plan, theta0=np.zeros(X.shape[1]), rng=generator, step=recorder)
            out.append(np.array(recorder.kept))
        return np.stack(out)                             # (2, checkpoints, d)


@dataclass(frozen=True)
class LastIterateAudit:
    """Lower bounds on epsilon from the final model only, beside the upper bounds at the same T.

    Attributes
    ----------
    steps : ndarray of int
        The checkpoints T.
    epsilon_lower : ndarray
        The audit's lower bound at each T (each valid with probability >= ``confidence``).
    composition, heuristic, proven : ndarray
        Composition (PLD), the linear-loss last iterate (PLD; exact for linear losses, a heuristic otherwise) and
        the proven convex bound, at each T.
    canary : str
        ``"gradient"`` or ``"input"``.
    delta, confidence, seconds : float
    runs : int
        Trainings per world.
    scores_in, scores_out : ndarray, shape (runs, len(steps))
        The canary's margin in every model.
    """

    steps: np.ndarray
    epsilon_lower: np.ndarray
    composition: np.ndarray
    heuristic: np.ndarray
    proven: np.ndarray
    canary: str
    delta: float
    confidence: float
    runs: int
    seconds: float
    scores_in: np.ndarray
    scores_out: np.ndarray

    @property
    def consistent(self):
        """True when no audited lower bound exceeds composition or the proven bound at its T (no bug detected)."""
        return bool(np.all(self.epsilon_lower <= np.minimum(self.composition, self.proven)))

    def __str__(self):
        lines = [f"final-model audit, {self.canary} canary: {self.runs} trainings with and {self.runs} without,",
                 f"  delta = {self.delta:g}, {self.confidence:.0%} confidence ({self.seconds:.1f} s)",
                 f"  {'T':>7} {'audit':>8} {'proven':>8} {'heuristic':>10} {'composition':>12}"]
        for row in zip(self.steps, self.epsilon_lower, self.proven, self.heuristic, self.composition):
            lines.append(f"  {row[0]:>7d} {row[1]:>8.3f} {row[2]:>8.3f} {row[3]:>10.3f} {row[4]:>12.3f}")
        if not self.consistent:
            lines.append("  AUDIT FAILED: a lower bound exceeds an upper bound: look for a bug")
        return "\n".join(lines)


def _check_steps(steps):
    values = np.unique(np.array([check_positive_int(t, "steps") for t in np.atleast_1d(steps)], dtype=int))
    if values.size > MAX_CHECKPOINTS:
        raise ValueError(f"steps must hold at most {MAX_CHECKPOINTS} checkpoints; got {values.size}")
    return values


def last_iterate_bounds(steps, *, noise_multiplier, sampling_rate, clip_norm=1.0, learning_rate, radius, l2=0.0,
                        dataset_size, delta=1e-5):
    """``(composition, heuristic, proven)``: three arrays of epsilon at each T of ``steps`` (at most 64 values) for
    projected DP-SGD (add/remove, divisor q n): the PLD of the T steps, the PLD of the linear-loss last iterate
    (a heuristic for other losses) and :func:`~dpedu.accountants.convex_last_iterate.convex_last_iterate_bound`."""
    steps = _check_steps(steps)
    z, q = check_positive(noise_multiplier, "noise_multiplier"), check_sampling_rate(sampling_rate)
    delta = check_delta(delta)
    composition = [account([(SubsampledGaussianEvent(z, q), int(T))], "pld", delta=delta, strict=True).epsilon
                   for T in steps]
    heuristic = [account([(LinearLastIterateEvent(z, q, int(T)), 1)], "pld", delta=delta, strict=True).epsilon
                 for T in steps]
    proven = [convex_last_iterate_bound(steps=int(T), noise_multiplier=z, sampling_rate=q, clip_norm=clip_norm,
                                        learning_rate=learning_rate, radius=radius, l2=l2, dataset_size=dataset_size,
                                        delta=delta).epsilon for T in steps]
    return np.array(composition), np.array(heuristic), np.array(proven)


def last_iterate_audit(X, y, *, steps, runs, noise_multiplier, sampling_rate, learning_rate, radius, l2=0.0,
                       clip_norm=1.0, canary="gradient", delta=1e-5, confidence=0.95, rng=None, n_jobs=1):
    r"""Audit projected DP-SGD from :math:`\theta_T` alone, at each checkpoint T of ``steps``.

    Parameters
    ----------
    X, y : arrays
        D: features whose **last column is 0 in every row** (the feature only the canary uses,
        :func:`~dpedu.lab.audit.data.make_audit_data`), labels in {-1, +1}.
    steps : int or sequence of int
        The checkpoints T (at most 64); each training runs to the largest.
    runs : int
        Trainings per world (>= 4: half choose the threshold, half measure the rates).
    noise_multiplier, sampling_rate, learning_rate, radius, l2, clip_norm
        The run (rows clipped to ``clip_norm`` once, Poisson sampling, divisor q (n + 1)).
    canary : {"gradient", "input"}
        The fixed-gradient (linear-loss) canary or a genuine record :math:`C e_{\rm last}` with label -1.
    delta, confidence : float
    rng : seed or Generator
        The root of every training's generator (:func:`dpedu.lab.parallel.map_seeded`).
    n_jobs : int
        Workers; the result does not depend on it.

    Returns
    -------
    LastIterateAudit
    """
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    if np.any(X[:, -1] != 0):
        raise ValueError("X's last column must be 0 in every row: it is the feature only the canary uses "
                         "(make_audit_data builds such data)")
    checkpoints = _check_steps(steps)
    runs = check_positive_int(runs, "runs")
    if runs < 4:
        raise ValueError(f"runs must be >= 4 (half choose the threshold, half measure the rates); got {runs}")
    canary = check_choice(canary, "canary", CANARIES)
    delta, confidence = check_delta(delta), check_confidence(confidence)
    clip_norm = check_positive(clip_norm, "clip_norm")
    check_nonnegative(l2, "l2")
    step = ProjectedStep(radius, l2)
    n_jobs = check_n_jobs(n_jobs)
    x_c = np.zeros(X.shape[1])
    x_c[-1] = clip_norm
    X_in, y_in = np.vstack([X, x_c]), np.append(y, -1.0)
    X_out, y_out = np.vstack([X, np.zeros(X.shape[1])]), np.append(y, -1.0)     # zero-out: the same n
    plan = plan_dp_sgd(X_in.shape[0], noise_multiplier=noise_multiplier, clip_norm=clip_norm,
                       sampling_rate=sampling_rate, steps=int(checkpoints[-1]), learning_rate=learning_rate,
                       clip_mode="inputs")
    start = time.perf_counter()
    task = _PairTask(X_in, y_in, X_out, y_out, plan, step, canary, set(int(t) for t in checkpoints))
    thetas = np.array(map_seeded(task, runs, rng=rng, n_jobs=n_jobs, desc="last-iterate audit", unit="pairs"))
    scores = np.stack([canary_scores(thetas[:, world, j], (x_c, -1.0)) for j in range(checkpoints.size)
                       for world in (0, 1)]).reshape(checkpoints.size, 2, runs)
    alpha, half = 1.0 - confidence, runs // 2
    lower = []
    for s_in, s_out in scores:
        tau = best_threshold(s_in[:half], s_out[:half], delta, alpha / 2)
        fp, fn = error_counts(s_in[half:], s_out[half:], np.array([tau]))
        lower.append(float(rate_bounds_epsilon(fp, runs - half, fn, runs - half, delta, alpha / 2)[0][0]))
    composition, heuristic, proven = last_iterate_bounds(
        checkpoints, noise_multiplier=noise_multiplier, sampling_rate=sampling_rate, clip_norm=clip_norm,
        learning_rate=learning_rate, radius=radius, l2=l2, dataset_size=X_in.shape[0], delta=delta)
    return LastIterateAudit(steps=checkpoints, epsilon_lower=np.array(lower), composition=composition,
                            heuristic=heuristic, proven=proven, canary=canary, delta=delta, confidence=confidence,
                            runs=runs, seconds=time.perf_counter() - start, scores_in=scores[:, 0, :].T,
                            scores_out=scores[:, 1, :].T)
