r"""Per-step conversions shared by the composition accountants (sequential, advanced, strong).

Composition theorems (docs/math.md §9-10) speak about steps that are each
:math:`(\varepsilon_i, \delta_i)`-DP, so a Gaussian step must first be turned into one such pair:

1. the Gaussian itself, for a chosen :math:`\delta_0`: the *exact* analytic epsilon of Balle & Wang (2018,
   Thm 8), valid for every :math:`\varepsilon_0` (the classic formula needs :math:`\varepsilon_0 < 1`);
2. Poisson subsampling with rate q amplifies it to (Li, Qardaji & Su 2012; Balle, Barthe & Gaboardi 2018,
   Thm 9; docs/math.md §11.1)

   .. math:: \varepsilon_1 = \ln\bigl(1 + q\,(e^{\varepsilon_0} - 1)\bigr), \qquad \delta_1 = q\,\delta_0.

>>> round(amplify_by_subsampling(1.0, 0.0, sampling_rate=0.01)[0], 6)
0.017037
>>> step = gaussian_step(SubsampledGaussianEvent(4.0, 0.01), count=1, step_delta=1e-9)
>>> round(step.delta0, 12), round(step.epsilon0, 4), round(step.epsilon1, 5)
(1e-07, 1.1817, 0.02235)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...ground import gaussian
from ...ground.validation import check_in_interval, check_nonnegative, check_sampling_rate
from ...ground.events import (
    REPLACE_ONE, GaussianEvent, SampledWithoutReplacementGaussianEvent, ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent, TruncatedPoissonGaussianEvent
)

__all__ = [
    "GAUSSIAN_EVENTS",
    "SHUFFLED_BATCH",
    "SHUFFLED_BATCH_REASON",
    "WITHOUT_REPLACEMENT",
    "CompositionBreakdown",
    "GaussianStep",
    "amplify_by_subsampling",
    "fixed_delta",
    "gaussian_step",
    "group_ledger",
    "sampling_rate_of",
    "split_ledger",
]

GAUSSIAN_EVENTS = (GaussianEvent, SubsampledGaussianEvent, SampledWithoutReplacementGaussianEvent)

SHUFFLED_BATCH_REASON = (
    "fixed-size shuffled batches are not Poisson sampling; no theorem here covers them - use Poisson sampling, "
    "or account conservatively with sampling_rate 1"
)
SHUFFLED_BATCH = {
    ShuffledBatchGaussianEvent: SHUFFLED_BATCH_REASON,
    TruncatedPoissonGaussianEvent: "a Poisson sample cut at a maximum batch size is not Poisson sampling; the 'rdp' "
    "accountant bounds it under add/remove (docs/math.md §22.5), the 'pld' accountant under both relations (§22.7)",
    (SampledWithoutReplacementGaussianEvent, "add_remove"): "amplification by sampling without replacement is "
    "stated for replace-one neighbours (docs/math.md §11.2); record the event with relation='replace_one'",
}
#: the extra relation the composition accountants cover (amplification without replacement, docs/math.md §11.2)
WITHOUT_REPLACEMENT = {SampledWithoutReplacementGaussianEvent: (REPLACE_ONE,)}


def group_ledger(ledger):
    """``{event: total count}`` in first-seen order (events are frozen, hence hashable).

    Grouping makes ``compose(e, 5)`` and five ``compose(e)`` calls give bit-identical results.
    """
    counts = {}
    for event, count in ledger:
        counts[event] = counts.get(event, 0) + count
    return counts


def split_ledger(ledger):
    """Group the ledger and split it into ``(fixed, gaussians)``, two ``{event: count}`` dicts.

    ``fixed`` holds the events with a given (epsilon, delta): :class:`LaplaceEvent` (pure epsilon-DP)
    and :class:`EpsilonDeltaEvent`; ``gaussians`` the Gaussian-type events, whose delta is a choice.
    """
    fixed, gaussians = {}, {}
    for event, count in group_ledger(ledger).items():
        (gaussians if isinstance(event, GAUSSIAN_EVENTS) else fixed)[event] = count
    return fixed, gaussians


def fixed_delta(fixed):
    """Total delta of the fixed events (a LaplaceEvent has delta 0)."""
    return math.fsum(count * getattr(event, "delta", 0.0) for event, count in fixed.items())


def sampling_rate_of(event):
    """q of a Gaussian-type event: 1 for a full-batch :class:`GaussianEvent`."""
    return 1.0 if isinstance(event, GaussianEvent) else event.sampling_rate


def amplify_by_subsampling(epsilon, delta, sampling_rate):
    r"""Amplification by Poisson subsampling (add/remove): :math:`(\varepsilon, \delta) \mapsto
    (\ln(1 + q(e^{\varepsilon}-1)),\ q\delta)`.

    Li, Qardaji & Su (2012); Balle, Barthe & Gaboardi (2018), Thm 9 (docs/math.md §11.1). ``log1p`` and
    ``expm1`` keep small q and small epsilon accurate; above epsilon = 700, where :math:`e^{\varepsilon}`
    would overflow, the same value is computed as
    :math:`\varepsilon + \ln q + \ln(1 + (1-q)e^{-\varepsilon}/q)`.

    Returns
    -------
    (float, float)
        The amplified (epsilon, delta).
    """
    epsilon = check_nonnegative(epsilon, "epsilon")
    delta = check_in_interval(delta, "delta", 0.0, 1.0)  # a probability
    q = check_sampling_rate(sampling_rate)
    if epsilon <= 700.0:
        amplified = math.log1p(q * math.expm1(epsilon))
    else:
        amplified = epsilon + math.log(q) + math.log1p((1.0 - q) * math.exp(-epsilon) / q)
    return amplified, q * delta


@dataclass(frozen=True)
class GaussianStep:
    r"""One Gaussian-type event turned into a per-step :math:`(\varepsilon_1, \delta_1)` pair.

    Attributes
    ----------
    event, count
        The ledger entry (``count`` identical steps).
    delta0, epsilon0
        The Gaussian release itself (before subsampling) is :math:`(\varepsilon_0, \delta_0)`-DP.
    delta1, epsilon1
        After amplification by Poisson subsampling with rate q: what each step contributes to a
        composition theorem (equal to ``delta0, epsilon0`` when q = 1).
    """

    event: object
    count: int
    delta0: float
    epsilon0: float
    delta1: float
    epsilon1: float


def gaussian_step(event, count, step_delta):
    r"""Convert ``count`` Gaussian-type steps so that each step's amplified delta is ``step_delta``.

    The underlying Gaussian gets :math:`\delta_0 = \delta_1/q` and the exact (analytic) epsilon for
    it (Balle & Wang 2018, Thm 8); then :func:`amplify_by_subsampling`. A batch sampled without replacement
    is under replace-one: its Gaussian has multiplier z / 2 (sensitivity 2C) and the same amplification
    holds with q = m/n (Balle, Barthe & Gaboardi 2018; docs/math.md §11.2, §22.3). When :math:`\delta_0` is at
    least the Gaussian's total-variation distance :math:`\delta_G(0)` (possible when q is tiny), the
    release is :math:`(0, \delta_G(0))`-DP: we report that (smaller, honest) :math:`\delta_0` and
    :math:`\varepsilon_0 = 0`.
    """
    z = event.noise_multiplier
    if isinstance(event, SampledWithoutReplacementGaussianEvent):  # replace-one: the batch sum moves by 2C
        z = z / 2.0
    q = sampling_rate_of(event)
    delta0 = step_delta / q
    total_variation = gaussian.gaussian_delta_exact(0.0, z)  # delta_G(0): the delta at epsilon = 0
    if delta0 >= total_variation:
        delta0, epsilon0 = total_variation, 0.0
    else:
        epsilon0 = gaussian.gaussian_epsilon_exact(delta=delta0, noise_multiplier=z)
    epsilon1, delta1 = amplify_by_subsampling(epsilon0, delta0, q)
    return GaussianStep(event, count, delta0, epsilon0, delta1, epsilon1)


@dataclass(frozen=True)
class CompositionBreakdown:
    r"""What a composition accountant did, number by number (for printing in a lesson).

    Attributes
    ----------
    epsilon : float
        The composed epsilon.
    delta : float
        The total delta actually spent: :math:`\sum` (fixed deltas) :math:`+ \sum_i k_i\,\delta_{1,i}
        + \delta'`; never more than the delta asked for.
    gaussian_steps : tuple of GaussianStep
        One conversion per distinct Gaussian-type event in the ledger.
    delta_slack : float
        :math:`\delta'` of advanced composition (0 for basic composition).
    """

    epsilon: float
    delta: float
    gaussian_steps: tuple
    delta_slack: float = 0.0
