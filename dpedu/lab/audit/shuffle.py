r"""How private are shuffled batches? A Monte Carlo lower bound on epsilon beside the Poisson upper bound.

Training code usually shuffles the data once per epoch and cuts it into :math:`b = n/B` batches of B
records; the accountants price *Poisson* sampling at rate :math:`q = B/n` instead, and no accountant covers
shuffling (docs/math.md §1.3). Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang (ICML 2024) showed the
gap with pairs of neighbouring datasets whose other records all have the same gradient, so that a fixed-size
batch's sum is known except for the differing record (docs/math.md §22.6). The differing record is in exactly
one of the b batches of each epoch, uniformly, so one epoch's outputs, centred and in units of C, are

.. math::

    P = \frac1b\sum_{t=1}^{b} \mathcal N(h e_t, z^2 I_b), \qquad Q = \mathcal N(0, z^2 I_b),

with spike height h = 1 under **add/remove** (other gradients 0, the record's gradient of norm C present or
removed; valid when removal keeps b steps per epoch) and h = 2 under **replace-one** (other gradients -C,
the record's +C replaced by -C). The privacy loss is :math:`L(y) = \ln\frac1b\sum_t e^{(h y_t - h^2/2)/z^2}`;
E epochs add E independent copies. Any pair of neighbouring datasets gives a lower bound on the true curve:
:math:`\delta_{\text{true}}(\varepsilon) \ge \delta_{P,Q}(\varepsilon) = E_P[(1-e^{\varepsilon-L})_+]`.

We estimate it without bias: with :math:`U \sim \mathrm{Uniform}(0, 1)`, the indicator
:math:`1\{U \le 1 - e^{\varepsilon - L}\}` has mean exactly :math:`\delta_{P,Q}(\varepsilon)`, so the number of
hits among N draws is binomial and Clopper-Pearson bounds it from below (docs/math.md §20.1). The reported
:math:`\varepsilon_{\text{low}}` is the largest :math:`\varepsilon` whose lower confidence bound on
:math:`\delta_{P,Q}(\varepsilon)` exceeds the target :math:`\delta`. With probability at least ``confidence``,
the true :math:`\varepsilon(\delta)` of shuffled DP-SGD is at least it: the hits decrease in
:math:`\varepsilon` on the same draws, so one fixed :math:`\varepsilon` carries the whole argument (§22.6).

>>> low = shuffle_epsilon_lower_bound(0.5, batches_per_epoch=10, epochs=2, delta=1e-3, n_samples=20_000, rng=0)
>>> from dpedu.ground.gaussian import gaussian_epsilon_exact
>>> bool(low <= gaussian_epsilon_exact(1e-3, 0.5 / 2 ** 0.5))   # at most one Gaussian step per epoch
True
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from ...accountants import make_accountant
from ...ground.events import REPLACE_ONE, SubsampledGaussianEvent, check_relation
from ...ground.search import monotone_search
from ...ground.validation import (
    check_array, check_confidence, check_delta, check_noise_multiplier, check_positive_int, check_rng
)
from .statistics import clopper_pearson

__all__ = ["epoch_privacy_losses", "shuffle_privacy_losses", "shuffle_epsilon_lower_bound", "shuffle_gap", "MAX_DRAWS"]

#: n_samples * batches_per_epoch * epochs above this is refused (memory and time of the Monte Carlo).
MAX_DRAWS = 2 * 10**8
_CHUNK = 2**22  # Gaussian draws per chunk


def epoch_privacy_losses(outputs, noise_multiplier):
    r"""The pair's privacy loss :math:`\sum_e L(y_e)`, :math:`L(y) = \ln\frac1b\sum_t e^{(y_t - 1/2)/z^2}`, of
    centred outputs ``outputs`` of shape (..., E, b) in units of the spike (height 1; docs/math.md §22.6)."""
    b = outputs.shape[-1]
    z2 = noise_multiplier * noise_multiplier
    return (logsumexp((outputs - 0.5) / z2, axis=-1) - math.log(b)).sum(axis=-1)


def shuffle_privacy_losses(noise_multiplier, batches_per_epoch, epochs, n_samples, rng):
    r"""``n_samples`` draws of the composed privacy loss :math:`\sum_{e=1}^{E} L(y_e)`, :math:`y_e \sim P`, for spike
    height 1 (a spike of height h with multiplier z is the same pair as height 1 with multiplier z / h).

    Drawn in chunks with one explicit ``numpy.random.Generator`` (``rng``: a Generator or a seed), so the same
    seed gives the same losses.
    """
    z = check_noise_multiplier(noise_multiplier)
    b = check_positive_int(batches_per_epoch, "batches_per_epoch")
    epochs = check_positive_int(epochs, "epochs")
    n = check_positive_int(n_samples, "n_samples")
    if n * b * epochs > MAX_DRAWS:
        raise ValueError(f"n_samples * batches_per_epoch * epochs must be at most {MAX_DRAWS:g}; got "
                         f"{n} * {b} * {epochs}")
    rng = check_rng(rng)
    losses = np.zeros(n)
    rows = max(1, _CHUNK // (b * epochs))
    for start in range(0, n, rows):
        m = min(rows, n - start)
        y = z * rng.standard_normal((m, epochs, b))
        position = rng.integers(b, size=(m, epochs))             # the batch holding the differing record
        np.put_along_axis(y, position[..., None], np.take_along_axis(y, position[..., None], 2) + 1.0, 2)
        losses[start:start + m] = epoch_privacy_losses(y, z)
    return losses


def shuffle_epsilon_lower_bound(noise_multiplier, *, batches_per_epoch, epochs, delta, n_samples=200_000,
                                confidence=0.95, relation="add_remove", rng=None):
    r"""Lower bound on epsilon at ``delta`` of shuffled-batch DP-SGD, holding with probability ``confidence``.

    Parameters
    ----------
    noise_multiplier : float
        z (noise standard deviation over the clip norm).
    batches_per_epoch : int
        b = n / B, the steps per epoch (the Poisson rate with the same expected batch is q = 1/b).
    epochs : int
        E; the run has E b steps.
    delta : float
        Target delta; ``n_samples`` should be well above ``1 / delta`` or the bound is 0.
    n_samples : int
        Monte Carlo draws N.
    confidence : float
        Of the Clopper-Pearson bound, in (0, 1).
    relation : {"add_remove", "replace_one"}
        The neighbouring relation, which sets the spike height h (1 or 2).
    rng : numpy.random.Generator or int
        Required: the draws are random (docs/math.md §22.6).

    Returns
    -------
    float
        :math:`\varepsilon_{\text{low}} \ge 0` (0 when even :math:`\varepsilon = 0` is not shown).
    """
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    height = 2.0 if check_relation(relation) == REPLACE_ONE else 1.0
    if rng is None:
        raise TypeError("rng must be a numpy.random.Generator or a seed: the lower bound is a Monte Carlo estimate")
    rng = check_rng(rng)
    z = check_noise_multiplier(noise_multiplier)
    losses = shuffle_privacy_losses(z / height, batches_per_epoch, epochs, n_samples, rng)
    uniforms = rng.random(losses.size)
    # hit at epsilon  <=>  U <= 1 - e^(epsilon - L)  <=>  epsilon <= L + ln(1 - U): one threshold per draw
    thresholds = np.sort(losses + np.log1p(-uniforms))[::-1]   # descending: hits(eps) = #{thresholds >= eps}
    trials = losses.size

    def certifies(k):  # the Clopper-Pearson lower bound with k hits exceeds delta (increasing in k)
        return clopper_pearson(k, trials, confidence=confidence, side="lower") > delta

    if not certifies(trials):
        return 0.0
    hits = monotone_search(certifies, trials, feasible_when="large", lowest=0, highest=trials, rtol=None,
                           at_limit=lambda k, feasible: k)     # the fewest hits that certify
    return max(0.0, float(thresholds[hits - 1]))               # largest epsilon with at least that many hits


def shuffle_gap(noise_multipliers, *, batches_per_epoch, epochs, delta, n_samples=200_000, confidence=0.95,
                relation="add_remove", rng=None):
    """For each noise multiplier: ``(poisson_upper, shuffle_lower)`` epsilons at ``delta``, as two arrays.

    ``poisson_upper`` is the PLD accountant's epsilon for Poisson sampling at q = 1 / ``batches_per_epoch`` over
    the same number of steps, under ``relation``; ``shuffle_lower`` is :func:`shuffle_epsilon_lower_bound`. Where
    the second exceeds the first, the Poisson number is *not* a valid guarantee for shuffled training.
    """
    check_relation(relation)
    b = check_positive_int(batches_per_epoch, "batches_per_epoch")
    epochs = check_positive_int(epochs, "epochs")
    if rng is None:
        raise TypeError("rng must be a numpy.random.Generator or a seed: the lower bound is a Monte Carlo estimate")
    rng = check_rng(rng)
    zs = np.atleast_1d(check_array(noise_multipliers, "noise_multipliers", ndim=(0, 1)))
    upper, lower = np.empty(zs.shape), np.empty(zs.shape)
    for i, z in enumerate(zs):
        event = SubsampledGaussianEvent(float(z), 1.0 / b, relation=relation)
        upper[i] = make_accountant("pld").compose(event, b * epochs).get_epsilon(delta)
        lower[i] = shuffle_epsilon_lower_bound(float(z), batches_per_epoch=b, epochs=epochs, delta=delta,
                                               n_samples=n_samples, confidence=confidence, relation=relation, rng=rng)
    return upper, lower
