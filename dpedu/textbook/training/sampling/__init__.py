r"""How a DP-SGD run draws its batches: one :class:`Sampling` object per scheme, one file each.

=======================  ====================================  =======  =========  ===========================
``sampling``             :math:`B_t`                           divisor  per epoch  event (docs/math.md §22)
=======================  ====================================  =======  =========  ===========================
``"poisson"``            each record with prob. q              q n      1/q        ``SubsampledGaussianEvent``
``"fixed"``              m = round(q n) records, uniform       m        n/m        ``SampledWithoutReplacement``
                         without replacement, each step                            ``GaussianEvent``
``"truncated_poisson"``  Poisson, then a uniform subset of     q n      1/q        ``TruncatedPoisson``
                         ``max_batch_size`` if larger                              ``GaussianEvent``
``"shuffle"``            a permutation per epoch, cut          m        n // m     ``ShuffledBatchGaussianEvent``
``"balls_in_bins"``      each epoch, each record into one of   n / b    b          ``BallsInBinsGaussianEvent``
                         b = round(1/q) batches at random                          (once per epoch)
``"cyclic"``             one random split into b = round(1/q)  n / b    b          ``GaussianEvent`` (once per
                         fixed batches, visited in turn                            epoch; zero-out, replace-one)
=======================  ====================================  =======  =========  ===========================

The divisor is always a public constant, never the drawn size (a drawn size would put an un-noised count of the
batch into the update: docs/math.md §8). :func:`make_sampling` builds a scheme from its name; the plan
(:func:`dpedu.textbook.training.plan_dp_sgd`) holds it and the loop draws from ``plan.scheme.batches(rng)``.
"""

from __future__ import annotations

from .balls_in_bins import BallsInBins
from .base import Sampling
from .cyclic import Cyclic
from .fixed import FixedSize
from .poisson import Poisson, poisson_sample
from .shuffle import Shuffle
from .truncated import TruncatedPoisson

__all__ = ["Sampling", "SAMPLINGS", "make_sampling", "poisson_sample", "Poisson", "FixedSize", "TruncatedPoisson",
           "Shuffle", "BallsInBins", "Cyclic"]

#: The schemes by the name ``plan_dp_sgd(..., sampling=name)`` takes.
SAMPLINGS = {scheme.name: scheme for scheme in (Poisson, FixedSize, TruncatedPoisson, Shuffle, BallsInBins, Cyclic)}


def make_sampling(name, n, sampling_rate, max_batch_size=None):
    """The scheme called ``name`` for ``n`` records at rate ``sampling_rate`` (both already checked).

    ``max_batch_size`` is the cap of ``"truncated_poisson"``, required there and refused with any other scheme.
    """
    scheme = SAMPLINGS[name]
    if scheme is TruncatedPoisson:
        return TruncatedPoisson(n, sampling_rate, max_batch_size)
    if max_batch_size is not None:
        raise ValueError(f"max_batch_size is used only with sampling='truncated_poisson'; got "
                         f"max_batch_size={max_batch_size!r} with sampling={name!r}")
    return scheme(n, sampling_rate)
