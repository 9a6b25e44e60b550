r"""What the last-iterate bound buys: accuracy at a total epsilon, tuning paid by private selection (docs/math.md §28.8).

The same projected, L2-regularised run (:func:`dpedu.textbook.learners.run_projected`) is charged two ways: by composition of
its T steps, or by the proven last-iterate bound (:func:`dpedu.accountants.convex_last_iterate.convex_last_iterate_rdp`).
The settings are chosen as chapter 7 chooses them: private selection (Papernot & Steinke 2022; docs/math.md §23),
K runs with K drawn from a truncated negative binomial, random settings from a grid, each scored by a
Laplace-noised count of correct predictions on a private validation part, only the best released. Its RDP curve
needs one curve that bounds every run: the composition curve (the same for every setting), or the pointwise
largest of the settings' last-iterate curves. :func:`selection_noise` bisects the one noise multiplier z of every
run for which the selection's epsilon is the target; :func:`select_and_test` runs one selection and returns the
chosen model's test accuracy. With Poisson batches, the probability that some batch of some run exceeds the size
the bound was checked for is added to delta, times :math:`1 + e^\varepsilon` (the runs are compared with a
version that caps the batch, which differs only on that event).

>>> grid = ({"learning_rate": 4.0, "radius": 3.0},)
>>> z_composition, _ = selection_noise(1.0, accounting="composition", configs=grid, steps=1000, sampling_rate=1.0,
...                                    dataset_size=24_000, l2=3e-3)
>>> z_last, _ = selection_noise(1.0, accounting="last_iterate", configs=grid, steps=1000, sampling_rate=1.0,
...                             dataset_size=24_000, l2=3e-3)
>>> bool(z_last < z_composition)
True
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...accountants.analysis.conversions import epsilon_from_rdp
from ...accountants.analysis.orders import DEFAULT_ORDERS
from ...accountants.analysis.rdp_curves import rdp_laplace, rdp_sampled_gaussian
from ...accountants.analysis.selection import repeat_and_select_rdp
from ...accountants.analysis.trials import sample_trials
from ...accountants.convex_last_iterate import convex_last_iterate_rdp
from ...accountants.calibrate import monotone_search
from ...ground.validation import check_choice, check_delta, check_epsilon, check_rng
from ...textbook.learners.projected import run_projected
from ...textbook.mechanisms import laplace_mechanism
from ...textbook.training import plan_dp_sgd

__all__ = ["ACCOUNTINGS", "selection_epsilon", "selection_noise", "select_and_test"]

ACCOUNTINGS = ("composition", "last_iterate")


def _check_configs(configs):
    configs = tuple(configs)
    if not configs or not all(isinstance(c, dict) and set(c) == {"learning_rate", "radius"} for c in configs):
        raise ValueError(f"configs must be a non-empty sequence of dicts with the keys 'learning_rate' and 'radius'; "
                         f"got {configs!r}")
    return configs


def selection_epsilon(noise_multiplier, *, accounting, configs, steps, sampling_rate, dataset_size, l2,
                      score_epsilon=0.02, mean_trials=4.0, shape=1.0, delta=1e-5, clip_norm=1.0, target=None):
    r"""The epsilon at ``delta`` of private selection over ``configs`` (add/remove, divisor q n), each run of T steps
    with multiplier z charged by ``accounting`` ("composition" or "last_iterate"), plus its Laplace score.

    ``target`` (the largest epsilon the caller will accept) sets the factor :math:`1 + e^{\text{target}}` in front of
    the bad-batch probability; ``nan`` when that probability leaves no delta.
    """
    accounting = check_choice(accounting, "accounting", ACCOUNTINGS)
    configs, delta = _check_configs(configs), check_delta(delta)
    orders = DEFAULT_ORDERS
    if accounting == "composition":
        run, bad = steps * np.asarray(rdp_sampled_gaussian(sampling_rate, noise_multiplier, orders)), 0.0
    else:
        curves = [convex_last_iterate_rdp(orders, steps=steps, noise_multiplier=noise_multiplier,
                                          sampling_rate=sampling_rate, clip_norm=clip_norm, l2=l2,
                                          dataset_size=dataset_size, delta=delta, **config) for config in configs]
        run, bad = np.max([c for c, _ in curves], axis=0), max(b for _, b in curves)
    run = run + np.asarray(rdp_laplace(1.0 / check_epsilon(score_epsilon, "score_epsilon"), orders))
    left = delta - (1.0 + math.exp(target if target is not None else 0.0)) * mean_trials * bad
    if left <= 0:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")               # an order at the edge of the grid only makes epsilon larger
        return epsilon_from_rdp(orders, repeat_and_select_rdp(orders, run, mean_trials, shape), left)[0]


def selection_noise(target_epsilon, *, accounting, configs, steps, sampling_rate, dataset_size, l2,
                    score_epsilon=0.02, mean_trials=4.0, shape=1.0, delta=1e-5, clip_norm=1.0):
    """``(z, epsilon)``: the smallest noise multiplier (relative tolerance 1e-3) whose private selection costs at most
    ``target_epsilon``, and that cost (:func:`selection_epsilon`)."""
    target = check_epsilon(target_epsilon, "target_epsilon")

    def cost(z):
        return selection_epsilon(z, accounting=accounting, configs=configs, steps=steps, sampling_rate=sampling_rate,
                                 dataset_size=dataset_size, l2=l2, score_epsilon=score_epsilon,
                                 mean_trials=mean_trials, shape=shape, delta=delta, clip_norm=clip_norm,
                                 target=target)

    def feasible(z):
        value = cost(z)
        return not math.isnan(value) and value <= target

    z = monotone_search(feasible, 10.0, feasible_when="large", lowest=0.05, highest=1e5, rtol=1e-3,
                        at_limit=lambda z, ok: z if ok else math.inf)
    return z, cost(z)


def select_and_test(X, y, X_test, y_test, *, noise_multiplier, configs, steps, sampling_rate, l2, clip_norm=1.0,
                    score_epsilon=0.02, mean_trials=4.0, shape=1.0, validation=0.2, rng=None):
    r"""One private selection and the test accuracy of the model it releases.

    A validation part of exactly ``round(validation * n)`` records is drawn uniformly (its size is public, so the
    training part's n and the divisor q n are too); K runs (:func:`~dpedu.accountants.analysis.trials.sample_trials`)
    with settings drawn uniformly from ``configs``; each trains by :func:`dpedu.textbook.learners.run_projected` (rows clipped
    to C, divisor q n) and is scored by the count of correct validation predictions plus Laplace noise of scale
    1/``score_epsilon``; the best is released. Returns ``(test accuracy, chosen config)``; ``(nan, None)`` when K = 0.
    """
    rng = check_rng(rng)
    configs = _check_configs(configs)
    order = rng.permutation(len(X))
    valid, train = order[:round(validation * len(X))], order[round(validation * len(X)):]
    trials = sample_trials(mean_trials, shape, rng)
    best = None
    for _ in range(trials):
        config = configs[int(rng.integers(len(configs)))]
        plan = plan_dp_sgd(train.size, noise_multiplier=noise_multiplier, clip_norm=clip_norm,
                           sampling_rate=sampling_rate, steps=steps, learning_rate=config["learning_rate"],
                           clip_mode="inputs", loss_every=steps)
        run = run_projected(X[train], y[train], plan, radius=config["radius"], l2=l2,
                            theta0=np.zeros(X.shape[1]), rng=rng)
        correct = float(np.sum(np.where(X[valid] @ run.theta >= 0, 1.0, -1.0) == y[valid]))
        score = laplace_mechanism(correct, l1_sensitivity=1.0, epsilon=score_epsilon, rng=rng)
        if best is None or score > best[0]:
            best = (score, run.theta, config)
    if best is None:
        return math.nan, None
    return float(np.mean(np.where(X_test @ best[1] >= 0, 1.0, -1.0) == y_test)), best[2]
