r"""Adaptive clipping (Andrew, Thakkar, McMahan & Ramaswamy, NeurIPS 2021, Alg. 1 and Thm 1; docs/math.md §24).

Instead of a clip norm C tuned by hand, C follows a target quantile :math:`\gamma` of the per-example gradient
norms. Each step also releases a noisy count of the batch's gradients that were *not* clipped,

.. math:: \tilde b_t = \frac{\sum_{i\in B_t}\big(\mathbb 1[\lVert g_i\rVert \le C_t] - \tfrac12\big)
          + \mathcal N(0, \sigma_b^2)}{qn} + \tfrac12 ,

and moves C geometrically towards the quantile: :math:`C_{t+1} = C_t\,e^{-\eta_C(\tilde b_t - \gamma)}`. The
shifted indicators :math:`\pm\tfrac12` give the count sensitivity 1/2 (add/remove, with the divisor qn public as
in DP-SGD: docs/math.md §1.2). Releasing the count costs privacy, so the gradient sum gets a little more noise,
:math:`z_\Delta = (z^{-2} - (2\sigma_b)^{-2})^{-1/2}`, and the two releases together are exactly one Gaussian step
with the requested multiplier z: the ledger does not change (docs/math.md §24.1). This needs :math:`2\sigma_b > z`.
Under zero-out a clipped record replaced by the zero-gradient record, which counts as unclipped, moves the count
by 1, not 1/2, so there :math:`z_\Delta = (z^{-2} - \sigma_b^{-2})^{-1/2}` and :math:`\sigma_b > z` is needed.

>>> round(gradient_noise_multiplier(1.0, count_noise_std=5.0), 6)      # (1 - 1/100) ** -0.5
1.005038
>>> state = ClipState(1.0, target_quantile=0.5, clip_learning_rate=0.2, count_noise_std=0.0, divisor=4.0)
>>> state.update(np.array([0.5, 0.5, 0.5, 2.0]), np.random.default_rng(0))   # 3 of 4 unclipped: C shrinks
>>> round(state.clip_norm, 6)                                             # exp(-0.2 (0.75 - 0.5))
0.951229
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...ground.events import ADD_REMOVE, MIN_EVENT_NOISE_MULTIPLIER, ZERO_OUT, check_relation
from ..mechanisms import gaussian_mechanism
from ...ground.validation import check_in_interval, check_nonnegative, check_positive
from .step import dp_sgd_step

__all__ = ["ClipState", "AdaptiveClipping", "gradient_noise_multiplier", "check_adaptive_clipping",
           "DEFAULT_CLIP_LEARNING_RATE", "DEFAULT_COUNT_NOISE_FRACTION"]

#: eta_C of Andrew et al. (2021), who found 0.2 to work across their tasks.
DEFAULT_CLIP_LEARNING_RATE = 0.2
#: Default sigma_b as a fraction of the expected batch size: their recommendation sigma_b = m / 20.
DEFAULT_COUNT_NOISE_FRACTION = 1.0 / 20.0


def gradient_noise_multiplier(noise_multiplier, count_noise_std, relation=ADD_REMOVE):
    r"""The noise multiplier :math:`z_\Delta` of the gradient sum when a count with noise std :math:`\sigma_b` is
    released beside it, so that together they are one Gaussian step with multiplier z (docs/math.md §24.1):

    .. math:: z_\Delta = \big(z^{-2} - (s/\sigma_b)^2\big)^{-1/2}, \qquad\text{defined when } \sigma_b > s z,

    with :math:`s = 1/2` the count's share of the record's unit under add/remove and replace-one, and :math:`s = 1`
    under zero-out: a clipped record's indicator :math:`-\tfrac12` becomes the zero-gradient record's
    :math:`+\tfrac12` while its gradient moves by at most C, as under add/remove (docs/math.md §24.1).
    ``noise_multiplier=0`` (the non-private sanity setting) returns 0 for any ``count_noise_std``.
    """
    z = check_nonnegative(noise_multiplier, "noise_multiplier")
    count_noise_std = check_nonnegative(count_noise_std, "count_noise_std")
    share = 1.0 if check_relation(relation) == ZERO_OUT else 0.5
    if z == 0:
        return 0.0
    if z < MIN_EVENT_NOISE_MULTIPLIER:
        raise ValueError(f"noise_multiplier must be 0 or in [{MIN_EVENT_NOISE_MULTIPLIER:g}, inf) (below it the "
                         f"privacy loss is beyond the float range); got {z!r}")
    if not count_noise_std > share * z:
        raise ValueError(
            f"count_noise_std must exceed {share:g} x noise_multiplier = {share * z:g} under {relation}: the noisy "
            f"count alone would then spend the whole step's privacy (Andrew et al. 2021, Thm 1: z_grad = "
            f"(z^-2 - ({share:g} / count_noise_std)^2)^-1/2); got count_noise_std={count_noise_std!r}. Use a larger "
            "count_noise_std (e.g. the expected batch size / 20)")
    remaining = 1.0 / (z * z) - (share / count_noise_std) ** 2
    return 1.0 / math.sqrt(remaining)


def check_adaptive_clipping(target_quantile, clip_learning_rate, count_noise_std):
    """gamma in (0, 1), eta_C > 0 and sigma_b >= 0, checked and named; returns them as floats."""
    return (check_in_interval(target_quantile, "target_quantile", 0.0, 1.0, low_open=True, high_open=True),
            check_positive(clip_learning_rate, "clip_learning_rate"),
            check_nonnegative(count_noise_std, "count_noise_std"))


@dataclass
class ClipState:
    r"""The clip norm :math:`C_t` of an adaptive-clipping run, updated in place after every step.

    ``divisor`` is the run's public batch-size constant (qn for Poisson sampling, m for fixed-size batches);
    ``clip_norms`` lists :math:`C_0, C_1, \dots` as they were used (a diagnostic: each is a function of the
    noisy counts already released, so publishing them costs nothing more).
    """

    clip_norm: float
    target_quantile: float
    clip_learning_rate: float
    count_noise_std: float
    divisor: float

    def __post_init__(self):
        self.clip_norms = []

    def update(self, gradient_norms, rng):
        r"""Release the noisy unclipped fraction :math:`\tilde b_t` of this step's gradients (norms given) and
        set :math:`C \leftarrow C\,e^{-\eta_C(\tilde b_t - \gamma)}` (Andrew et al. 2021, Alg. 1)."""
        self.clip_norms.append(self.clip_norm)
        shifted_count = np.sum(gradient_norms <= self.clip_norm) - gradient_norms.size / 2.0  # sum of b_i - 1/2
        noisy = gaussian_mechanism(float(shifted_count), l2_sensitivity=0.5,          # + N(0, sigma_b^2)
                                   noise_multiplier=2.0 * self.count_noise_std, rng=rng)
        unclipped_fraction = noisy / self.divisor + 0.5
        self.clip_norm *= math.exp(-self.clip_learning_rate * (unclipped_fraction - self.target_quantile))


def gradient_norms(model, theta, X, y):
    """The L2 norm of each per-example gradient (adaptive clipping counts those at most C)."""
    if X.shape[0] == 0:
        return np.zeros(0)
    return np.linalg.norm(model.per_example_gradients(theta, X, y), axis=1)


class AdaptiveClipping:
    r"""The step of an adaptive-clipping run (Andrew et al. 2021, Alg. 1): :func:`~dpedu.textbook.training.dp_sgd_step` at
    the current :math:`C_t`, then the noisy count of the batch's unclipped gradients moves C.

    The loop calls it as it calls ``dp_sgd_step`` (the ``clip_norm`` it passes, the plan's :math:`C_0`, is replaced
    by :math:`C_t`; ``noise_multiplier`` is the gradient's :math:`z_\Delta`). ``rng``: the gradient noise, then the
    count's noise. ``clip_norms`` lists every :math:`C_t` used; ``quantiles`` the ``target_quantile`` of all the
    gradient norms at each loss step (what C tracks, a diagnostic on the private data).
    """

    def __init__(self, plan):
        self.state, self.target_quantile, self.quantiles = plan.clip_state(), plan.target_quantile, []

    @property
    def clip_norms(self):
        return self.state.clip_norms

    def __call__(self, theta, batch, *, model, clip_norm, noise_multiplier, expected_batch_size, learning_rate, rng):
        norms = gradient_norms(model, theta, batch.X, batch.y)                    # ||g_i|| at theta_t
        new_theta = dp_sgd_step(theta, batch, model=model, clip_norm=self.state.clip_norm,
                                noise_multiplier=noise_multiplier, expected_batch_size=expected_batch_size,
                                learning_rate=learning_rate, rng=rng)
        self.state.update(norms, rng)                                             # noisy count; C <- C e^(...)
        return new_theta

    def record(self, theta, data, model):
        """Measure the quantile C tracks, on all the data (a diagnostic)."""
        self.quantiles.append(np.quantile(gradient_norms(model, theta, data.X, data.y), self.target_quantile))
