r"""Planted bugs, for teaching only: DP-SGD trainers that are WRONG on purpose, and the audits that catch them.

Each buggy trainer claims the ledger of correct DP-SGD with the same settings (what the buggy code would
report to its accountant), so no accountant can notice; the white-box audit
(:func:`dpedu.lab.audit.whitebox.whitebox_audit`) does, by proving an epsilon above the claim.

====================================  ==========================================================================
``"noise_not_scaled_by_clip"``        noise std z instead of z*C: with C = 10 the noise is 10 times too small
``"clip_after_sum"``                  clips the *sum* of the gradients to C instead of each gradient: one record
                                      can move the clipped sum by 2C (from +C to -C), twice the sensitivity
``"noise_reused"``                    one noise vector drawn once and added at every step: differences of two
                                      updates cancel the noise and expose the clipped gradients exactly
``"divide_by_batch_size"``            divides the noisy sum by the realised batch size :math:`|B_t|` instead of
                                      the public expected size q n (docs/math.md §8) while accounting Poisson
                                      sampling: the noise scale :math:`\sigma/|B_t|` of every update tells
                                      :math:`|B_t|`, and on a small data set :math:`|B_t|` tells whether the
                                      canary was sampled
``"microbatch_clipped_as_one"``       clips the mean gradient of each *microbatch* of 2 records to C and claims
                                      per-example privacy: one record can turn its microbatch's clipped
                                      gradient from +C to -C, sensitivity 2C (Ponomareva et al. 2023, on microbatches)
====================================  ==========================================================================

:func:`bug_setting` gives, for each bug, the audit setting that exposes it (data, canary, trainer settings,
statistic): the auditor may choose the worst-case neighbouring datasets, as the definition of DP allows.

For ``"divide_by_batch_size"`` the auditor chooses one record, a Dirac canary and 200 features that no
record uses, and q = 1/2. Without the canary :math:`|B_t| \in \{0, 1\}` (the buggy code divides by
:math:`\max(|B_t|, 1) = 1`); with it :math:`|B_t| = 2` at a quarter of the steps, where the noise on the
200 unused coordinates has half its scale. The statistic ``"scale_range"``
(:func:`dpedu.lab.audit.whitebox.update_scales`) is the spread of the log noise scale over the steps: about
0 for correct DP-SGD in both worlds (its noise has one scale), about ln 2 for the buggy run with the
canary. Through the *mean* of the updates alone the bug leaks at most twice the sensitivity (even when
the records' gradients are large and aligned): when the canary joins a batch :math:`B_o`, the update
:math:`\sum_{i \in B} \bar g_i / |B|` moves by at most :math:`2C/(|B_o|+1)`, against noise of std
:math:`zC/(|B_o|+1)`; the noise scale is the channel that leaks without bound.

>>> result = bug_hunt("noise_not_scaled_by_clip", runs=50, rng=0)
>>> result.epsilon_lower > result.upper_bounds["pld"]           # caught
True
"""

from __future__ import annotations

import math

import numpy as np

from ...textbook.clipping import L2_clip
from ...ground.validation import check_choice, check_positive, check_positive_int, check_rng, check_sampling_rate
from .data import make_audit_data, make_canary
from .whitebox import observed_run, observed_trainer, whitebox_audit

__all__ = ["BUGS", "buggy_trainer", "bug_setting", "bug_hunt"]

BUGS = {
    "noise_not_scaled_by_clip": "noise std z instead of z*C (wrong: the sensitivity of the clipped sum is C, so the "
                                "noise must be z*C for the claimed multiplier z)",
    "clip_after_sum": "clips the sum of the batch's gradients to C instead of each gradient (wrong: one record can move "
                      "the clipped sum from +C to -C, sensitivity 2C, while the claim assumes C)",
    "noise_reused": "draws one noise vector and adds it at every step (wrong: the T releases share their noise, so "
                    "the difference of two updates is noise-free and exposes the clipped gradients)",
    "divide_by_batch_size": "divides the noisy sum by the realised batch size |B_t| instead of the expected batch size "
                            "q n (wrong under Poisson sampling: |B_t| counts the canary when it is sampled and is not "
                            "noised, and the noise scale sigma/|B_t| of each update reveals it)",
    "microbatch_clipped_as_one": "clips the mean gradient of each microbatch of 2 records to C but claims the "
                                 "per-example ledger (wrong: a record can flip its microbatch's clipped gradient "
                                 "from +C to -C, sensitivity 2C)",
}

#: Records per microbatch in ``"microbatch_clipped_as_one"``.
MICROBATCH_SIZE = 2


def _buggy_step(bug):
    """A step with :func:`dpedu.textbook.training.dp_sgd_step`'s signature that releases the batch's sum with ``bug``."""
    def step(theta, batch, *, model, clip_norm, noise_multiplier, expected_batch_size, learning_rate, rng):
        grads = model.per_example_gradients(theta, batch.X, batch.y)
        if bug == "clip_after_sum":
            total = L2_clip(grads.sum(axis=0), clip_norm)                # WRONG: clip after summing
        elif bug == "microbatch_clipped_as_one" and batch.n:
            groups = np.array_split(grads, math.ceil(batch.n / MICROBATCH_SIZE))
            means = np.array([g.mean(axis=0) for g in groups])
            total = L2_clip(means, clip_norm).sum(axis=0)                # WRONG: a microbatch clipped as one example
        else:
            total = L2_clip(grads, clip_norm).sum(axis=0)
        std = noise_multiplier * (1.0 if bug == "noise_not_scaled_by_clip" else clip_norm)   # WRONG for that bug
        noisy = total + rng.normal(0.0, std, size=theta.size)
        divisor = max(batch.n, 1) if bug == "divide_by_batch_size" else expected_batch_size  # WRONG: |B_t|
        return theta - learning_rate * noisy / divisor

    return step


class ReusedNoise:
    """A noise source that draws one vector (from ``rng``, at the first step) and returns it at every step: WRONG."""

    def __init__(self, rng):
        self.rng, self.draw = rng, None

    def normal(self, loc, scale, size):
        if self.draw is None:
            self.draw = self.rng.normal(0.0, scale, size=size)
        return loc + self.draw


def buggy_trainer(bug, *, noise_multiplier, sampling_rate, steps, clip_norm=1.0, learning_rate=0.01):
    """``train(X, y, rng) -> ObservedRun``: teaching-only DP-SGD (logistic regression) with a planted bug.

    **Wrong on purpose; never use it to train.** ``bug`` is a key of :data:`BUGS`. The run is the one DP-SGD loop
    (:func:`dpedu.lab.audit.whitebox.observed_run`) given a wrong step, or for ``"noise_reused"`` a wrong noise
    source. It claims the ledger of correct DP-SGD with these settings. Updates are observed as parameter deltas,
    exactly as for :func:`dpedu.lab.audit.whitebox.observed_trainer`.
    """
    bug = check_choice(bug, "bug", BUGS)
    noise_multiplier = check_positive(noise_multiplier, "noise_multiplier")
    sampling_rate = check_sampling_rate(sampling_rate)
    steps = check_positive_int(steps, "steps")
    clip_norm = check_positive(clip_norm, "clip_norm")
    learning_rate = check_positive(learning_rate, "learning_rate")

    def train(X, y, rng):
        rng = check_rng(rng)
        wrong = dict(noise=ReusedNoise(rng)) if bug == "noise_reused" else dict(step=_buggy_step(bug))
        return observed_run(X, y, noise_multiplier=noise_multiplier, clip_norm=clip_norm, sampling_rate=sampling_rate,
                            steps=steps, learning_rate=learning_rate, rng=rng, **wrong)

    train.description = (f"BUGGY DP-SGD ({bug}), claims z = {noise_multiplier:g}, q = {sampling_rate:g}, T = {steps}, "
                         f"C = {clip_norm:g}")
    return train


def _counterweight_data(radius=5.0):
    """D = one record along the last feature whose gradient the canary (twice as large, opposite label) flips."""
    X = np.zeros((1, 4))
    X[0, -1] = radius
    canary = (np.array([0.0, 0.0, 0.0, 2.0 * radius]), 1.0)
    return X, np.array([-1.0]), canary


def _batch_size_data(quiet=200, radius=5.0):
    """D = one record (gradient on coordinate 0) and a Dirac canary (coordinate 1), ``quiet`` noise-only coordinates.

    With one record and q = 1/2, |B_t| is 0 or 1 without the canary, and 2 (probability 1/4 per step) only
    with it; a trainer that divides by the realised |B_t| then halves its noise at exactly those steps.
    """
    X = np.zeros((1, 2 + quiet))
    X[0, 0] = radius
    x_canary = np.zeros(2 + quiet)
    x_canary[1] = 2.0 * radius
    return X, np.array([-1.0]), (x_canary, 1.0)


def bug_setting(bug):
    """The audit setting that exposes ``bug``: ``dict(X, y, canary, trainer, audit)``.

    ``trainer`` holds the claimed settings (for :func:`buggy_trainer` and the correct
    :func:`dpedu.lab.audit.whitebox.observed_trainer`), ``audit`` the options of the white-box audit.
    """
    bug = check_choice(bug, "bug", BUGS)
    if bug == "noise_not_scaled_by_clip":
        X, y = make_audit_data(n=50, d=3, rng=0)
        return {"X": X, "y": y, "canary": make_canary(X, y, norm=50.0),
                "trainer": dict(noise_multiplier=4.0, sampling_rate=1.0, steps=2, clip_norm=10.0), "audit": {}}
    if bug in ("clip_after_sum", "microbatch_clipped_as_one"):
        X, y, canary = _counterweight_data()
        return {"X": X, "y": y, "canary": canary,
                "trainer": dict(noise_multiplier=2.0, sampling_rate=1.0, steps=4, clip_norm=1.0),
                "audit": {"coordinates": [3]}}
    if bug == "divide_by_batch_size":
        X, y, canary = _batch_size_data()
        return {"X": X, "y": y, "canary": canary,
                "trainer": dict(noise_multiplier=5.0, sampling_rate=0.5, steps=16, clip_norm=1.0),
                "audit": {"statistic": "scale_range", "bound": "clopper_pearson"}}
    X, y = make_audit_data(n=50, d=3, rng=0)
    return {"X": X, "y": y, "canary": make_canary(X, y),
            "trainer": dict(noise_multiplier=5.0, sampling_rate=0.5, steps=8, clip_norm=1.0),
            "audit": {"statistic": "range", "bound": "clopper_pearson"}}


def bug_hunt(bug, *, correct=False, runs=200, delta=1e-5, confidence=0.95, rng=None, n_jobs=1, progress=None):
    """White-box audit of ``buggy_trainer(bug)`` (or, ``correct=True``, of correct DP-SGD) in its setting.

    Returns the :class:`~dpedu.lab.audit.whitebox.WhiteBoxResult`; the bug is caught when
    ``epsilon_lower`` exceeds the claimed epsilon (``not result.consistent``).
    """
    setting = bug_setting(bug)
    settings = setting["trainer"]
    train = observed_trainer(**settings) if correct else buggy_trainer(bug, **settings)
    return whitebox_audit(train, setting["X"], setting["y"], setting["canary"], runs=runs, delta=delta,
                          confidence=confidence, rng=rng, n_jobs=n_jobs, progress=progress, **setting["audit"])
