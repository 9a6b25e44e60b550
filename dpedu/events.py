"""Privacy events: *what happened*, never how to count it.

An event records the mathematical behaviour of one release, with everything an
accountant needs and nothing an accountant decides (no delta split, no order grid).
Training functions return a ledger ``[(event, count), ...]`` so the same run can be
accounted by every accountant in :mod:`dpedu.accountants`.

All events assume **add/remove** neighbouring datasets (MATH.md §1.2) and are
*sensitivity-normalised*: a Gaussian with standard deviation ``noise_std`` on a query of
L2 sensitivity ``l2_sensitivity`` is ``GaussianEvent(noise_std / l2_sensitivity)``.

>>> SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01)
SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01)
>>> LaplaceEvent(epsilon=0.5).scale
2.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .validation import (
    check_in_interval,
    check_noise_multiplier,
    check_positive,
    check_positive_int,
    check_sampling_rate,
)

__all__ = [
    "Event",
    "GaussianEvent",
    "SubsampledGaussianEvent",
    "LaplaceEvent",
    "EpsilonDeltaEvent",
    "ShuffledBatchGaussianEvent",
    "gaussian_step_event",
    "steps_from_epochs",
]


# A per-release epsilon above this carries no information (e^epsilon overflowed long before), and squaring it
# (zCDP's rho = epsilon^2 / 2, RDP's curves, advanced composition) would overflow: refused, by name.
MAX_EVENT_EPSILON = 1e100


def _check_event_epsilon(epsilon):
    return check_in_interval(epsilon, "epsilon", 0.0, MAX_EVENT_EPSILON, low_open=True)


class Event:
    """Base class of every privacy event (a marker: events carry data, not behaviour)."""

    __slots__ = ()


@dataclass(frozen=True)
class GaussianEvent(Event):
    r"""One full-batch Gaussian release with noise multiplier :math:`z = \sigma/\Delta_2`.

    Dominating pair :math:`(\mathcal N(1, z^2), \mathcal N(0, z^2))` (MATH.md §4).
    """

    noise_multiplier: float

    def __post_init__(self):
        object.__setattr__(self, "noise_multiplier", check_noise_multiplier(self.noise_multiplier))


@dataclass(frozen=True)
class SubsampledGaussianEvent(Event):
    r"""One DP-SGD step: Poisson-sample each record with probability ``sampling_rate`` = q,
    release the clipped sum plus :math:`\mathcal N(0, z^2 C^2 I)` (Abadi et al. 2016, Alg. 1).

    With ``sampling_rate == 1`` this is exactly :class:`GaussianEvent`.
    """

    noise_multiplier: float
    sampling_rate: float

    def __post_init__(self):
        object.__setattr__(self, "noise_multiplier", check_noise_multiplier(self.noise_multiplier))
        object.__setattr__(self, "sampling_rate", check_sampling_rate(self.sampling_rate))


@dataclass(frozen=True)
class LaplaceEvent(Event):
    r"""One Laplace release that is ``epsilon``-DP: noise scale :math:`b = \Delta_1/\varepsilon`.

    Sensitivity-normalised, so the dominating pair is :math:`(\mathrm{Lap}(1, b), \mathrm{Lap}(0, b))`
    with ``b = scale = 1/epsilon`` (MATH.md §3, §15.2).
    """

    epsilon: float

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _check_event_epsilon(self.epsilon))

    @property
    def scale(self) -> float:
        """Noise scale per unit of L1 sensitivity, :math:`b = 1/\\varepsilon`."""
        return 1.0 / self.epsilon


@dataclass(frozen=True)
class EpsilonDeltaEvent(Event):
    """A black-box release known only to be (``epsilon``, ``delta``)-DP (``delta`` in [0, 1))."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _check_event_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_in_interval(self.delta, "delta", 0.0, 1.0, high_open=True))


@dataclass(frozen=True)
class ShuffledBatchGaussianEvent(Event):
    """One step on a fixed-size batch from a *shuffled* pass (``batch_size`` of ``dataset_size``).

    This is what most training loops really do, and **no Poisson accountant covers it**
    (MATH.md §1.3): accountants refuse it instead of silently treating it as Poisson sampling.
    """

    noise_multiplier: float
    batch_size: int
    dataset_size: int

    def __post_init__(self):
        object.__setattr__(self, "noise_multiplier", check_noise_multiplier(self.noise_multiplier))
        object.__setattr__(self, "batch_size", check_positive_int(self.batch_size, "batch_size"))
        object.__setattr__(self, "dataset_size", check_positive_int(self.dataset_size, "dataset_size"))
        if self.batch_size > self.dataset_size:
            raise ValueError(f"batch_size ({self.batch_size}) must not exceed dataset_size ({self.dataset_size})")


def gaussian_step_event(noise_multiplier, sampling_rate):
    """The event of one noisy-gradient step: ``GaussianEvent(z)`` if q == 1, else ``SubsampledGaussianEvent(z, q)``.

    >>> gaussian_step_event(1.0, 1.0), gaussian_step_event(1.0, 0.1)
    (GaussianEvent(noise_multiplier=1.0), SubsampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1))
    """
    if check_sampling_rate(sampling_rate) == 1.0:
        return GaussianEvent(noise_multiplier)
    return SubsampledGaussianEvent(noise_multiplier, sampling_rate)


def steps_from_epochs(epochs, sampling_rate):
    """Steps of ``epochs`` passes at Poisson rate q (1/q steps per epoch in expectation): max(1, round(epochs / q)).

    >>> steps_from_epochs(3, 0.04)
    75
    """
    epochs = check_positive(epochs, "epochs")
    steps = epochs / check_sampling_rate(sampling_rate)
    if not math.isfinite(steps):
        raise ValueError(f"epochs / sampling_rate = {epochs!r} / {sampling_rate!r} overflows; use fewer epochs")
    return max(1, round(steps))
