r"""RMIA, the membership attack of Zarifzadeh, Liu, Cheng & Shokri (ICML 2024), online and offline
(docs/math.md §20.5).

RMIA compares a record x with population records z that no model was trained on. With
:math:`\Pr(x \mid \theta) = \sigma(\phi)`, the target model's probability of x's label, and :math:`\Pr(x)` its
average over reference models (models trained on random data, the shadow models here),

.. math::
    \mathrm{LR}_\theta(x, z) = \frac{\Pr(x \mid \theta) / \Pr(x)}{\Pr(z \mid \theta) / \Pr(z)}, \qquad
    \mathrm{Score}(x; \theta) = \Pr_{z}\big[\mathrm{LR}_\theta(x, z) \ge \gamma\big],

the share of population records that x "beats" by a factor :math:`\gamma \ge 1`: a model trained on x gives x a
higher probability *relative to what models usually give it* than it gives typical records.

* **Online** (reference models with and without x): :math:`\Pr(x) = \tfrac12(\bar p_{\mathrm{in}}(x) +
  \bar p_{\mathrm{out}}(x))`, the mean over the IN models and over the OUT models, i.e. the average over
  reference models that include x half of the time.
* **Offline** (OUT models only): the IN mean is approximated by a line in the OUT mean,
  :math:`\Pr(x) \approx \tfrac12\big((1 + a)\,\bar p_{\mathrm{out}}(x) + 1 - a\big)`, with a in [0, 1] chosen by
  attacking one reference model with the others (:func:`tune_offline_a`).

A population record is never IN, so :math:`\Pr(z)` is its mean over all reference models online, and the same
line of that mean offline (as the authors' code does). Probabilities near 1 are handled through
:math:`1 - p = \sigma(-\phi)`, so no logarithm of a rounded 1 occurs.

The score is a lower bound on what a model leaks, like every attack: its failure proves nothing.

>>> import numpy as np
>>> from dpedu.lab.audit.shadow import ShadowModels
>>> signals = np.array([[3.0, 0.0], [0.0, 0.0], [3.0, 0.0], [0.0, 0.0]])     # record 0 is IN in models 0, 2
>>> members = np.array([[True, False], [False, True], [True, False], [False, True]])
>>> shadow = ShadowModels(members, signals, np.zeros((4, 3)), None)
>>> rmia_scores(shadow, targets=[0])      # beats every z; record 1 is never better than the population
array([[1., 1.]])
"""

from __future__ import annotations

import math

import numpy as np

from ...ground.validation import check_array, check_in_interval, check_scalar
from .lira import model_sets
from .shadow import ShadowModels

__all__ = ["rmia_scores", "tune_offline_a", "DEFAULT_A_GRID", "MAX_A_GRID"]

DEFAULT_A_GRID = tuple(np.round(np.linspace(0.0, 1.0, 11), 2))
MAX_A_GRID = 1001            # values of a tried by tune_offline_a (each is one attack of one model)


def _sigmoid_sums(signals, members, reference, targets):
    """Per target and record: (count, sum of sigma(phi), sum of sigma(-phi)) over the reference models in one
    world, the target's own model left out."""
    ref, ref_members = signals[reference], members[reference]
    p, q = np.where(ref_members, _sigmoid(ref), 0.0), np.where(ref_members, _sigmoid(-ref), 0.0)
    own = np.isin(targets, reference)[:, None] & members[targets]
    n = ref_members.sum(axis=0)[None, :] - own
    sum_p = p.sum(axis=0)[None, :] - np.where(own, _sigmoid(signals[targets]), 0.0)
    sum_q = q.sum(axis=0)[None, :] - np.where(own, _sigmoid(-signals[targets]), 0.0)
    return n, sum_p, sum_q


def _sigmoid(x):
    return np.exp(-np.logaddexp(0.0, -x))


def _log_probability(p, q):
    """ln of a probability given as (p, q = 1 - p), each computed without cancellation: the better-conditioned one."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p < 0.5, np.log(p), np.log1p(-q))


def _log_reference_probability(signals, members, targets, reference, a, *, population):
    """ln Pr(.) of every record (or, ``population=True``, population record) for every target model: online
    (``a`` None) the mean of the IN and OUT means (a population record's OUT mean), offline the line in the OUT
    mean; NaN where no reference model can be averaged."""
    n_out, p_out, q_out = _sigmoid_sums(signals, ~members, reference, targets)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_out, q_out = p_out / n_out, q_out / n_out
        if a is not None:
            p, q = 0.5 * ((1.0 + a) * p_out + 1.0 - a), 0.5 * (1.0 + a) * q_out
            return np.where(n_out >= 1, _log_probability(p, q), math.nan)
        if population:
            return np.where(n_out >= 1, _log_probability(p_out, q_out), math.nan)
        n_in, p_in, q_in = _sigmoid_sums(signals, members, reference, targets)
        p, q = 0.5 * (p_in / n_in + p_out), 0.5 * (q_in / n_in + q_out)
        return np.where((n_in >= 1) & (n_out >= 1), _log_probability(p, q), math.nan)


def rmia_scores(shadow, *, online=True, offline_a=None, gamma=1.0, targets=None, reference=None):
    r"""RMIA scores of every record against every target model: shape ``(len(targets), n_records)``, in [0, 1].

    Parameters
    ----------
    shadow : ShadowModels
        With population signals (at least one population record).
    online : bool
        True: Pr(x) from IN and OUT reference models; False: from OUT models and the line with slope ``offline_a``.
    offline_a : float in [0, 1], optional
        Offline only, required there: a (:func:`tune_offline_a` chooses it on reference models).
    gamma : float
        :math:`\gamma \ge 1`: x must beat z by this factor.
    targets, reference : sequences of model indices, optional
        As in :func:`~dpedu.lab.audit.lira.lira_scores` (a target in ``reference`` is left out of its own
        reference average).

    Returns
    -------
    ndarray
        Larger for "member"; NaN for a record whose Pr(x) has no reference model to average.
    """
    if not isinstance(shadow, ShadowModels):
        raise TypeError(f"shadow must be ShadowModels (from train_shadow_models); got {type(shadow).__name__}")
    gamma = check_scalar(gamma, "gamma")
    if not (gamma >= 1 and math.isfinite(gamma)):
        raise ValueError(f"gamma must be a finite number >= 1; got {gamma!r}")
    if online:
        if offline_a is not None:
            raise ValueError("offline_a is for the offline attack (online=False); the online attack has no a")
        a = None
    else:
        if offline_a is None:
            raise ValueError("the offline attack needs offline_a in [0, 1]: choose it with tune_offline_a")
        a = check_in_interval(offline_a, "offline_a", 0.0, 1.0)
    targets, reference = model_sets(shadow, targets, reference)
    if reference.size - (1 if np.isin(targets, reference).any() else 0) < 1:
        raise ValueError("reference must hold at least one model besides the target")
    population = check_array(shadow.population_signals, "shadow.population_signals", ndim=2)
    if population.shape[1] < 1:
        raise ValueError("RMIA needs population records (shadow.population_signals is empty)")
    never = np.zeros(population.shape, dtype=bool)
    log_pr_x = _log_reference_probability(shadow.signals, shadow.memberships, targets, reference, a, population=False)
    log_pr_z = _log_reference_probability(population, never, targets, reference, a, population=True)
    log_ratio_x = -np.logaddexp(0.0, -shadow.signals[targets]) - log_pr_x       # ln Pr(x|theta) - ln Pr(x)
    log_ratio_z = -np.logaddexp(0.0, -population[targets]) - log_pr_z
    scores = np.full(log_ratio_x.shape, math.nan)
    for row in range(targets.size):                  # LR >= gamma  <=>  ln r_z <= ln r_x - ln gamma
        z = np.sort(log_ratio_z[row][np.isfinite(log_ratio_z[row])])
        if z.size == 0:
            continue
        finite = np.isfinite(log_ratio_x[row])
        scores[row, finite] = np.searchsorted(z, log_ratio_x[row, finite] - math.log(gamma), side="right") / z.size
    return scores


def tune_offline_a(shadow, *, target, reference=None, grid=DEFAULT_A_GRID, gamma=1.0):
    """The a of the offline attack: the value on ``grid`` (at most :data:`MAX_A_GRID` values in [0, 1]) whose
    offline scores against model ``target`` (a model whose memberships the attacker knows, e.g. one of its own
    reference models) have the largest AUC, every record counted (ties: the first on the grid). ``reference``
    defaults to every other model.

    Choose a on models that are not attacked afterwards, or the choice has seen the answers.
    """
    from .mia_stats import auc

    grid = check_array(grid, "grid", ndim=1)
    if np.any(grid < 0) or np.any(grid > 1) or grid.size > MAX_A_GRID:
        raise ValueError(f"grid must hold at most {MAX_A_GRID} values of a in [0, 1]; got {grid!r}")
    target = int(model_sets(shadow, [target], None)[0][0])
    best, best_auc = None, -1.0
    for a in grid:
        scores = rmia_scores(shadow, online=False, offline_a=float(a), gamma=gamma, targets=[target],
                             reference=reference)[0]
        ok = np.isfinite(scores)
        value = auc(scores[ok], shadow.memberships[target, ok])
        if value > best_auc:
            best, best_auc = float(a), value
    return best
