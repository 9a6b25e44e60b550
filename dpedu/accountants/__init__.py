"""Privacy accountants side by side.

One theorem family per module; every accountant has the same small interface
(:class:`~dpedu.accountants.base.Accountant`): ``compose(event, count)`` and
``get_epsilon(delta)``. :func:`account` accounts one history with one accountant (a fresh one) and
returns its epsilon with the caveats (:class:`Accounting`); :func:`compare` does it with every
accountant at once.

Modules: ``base`` (the interface), ``accounting`` (registry, :func:`account`, :func:`compare`), one
module per theorem family (``sequential``, ``advanced``, ``strong``, ``moments``, ``rdp``, ``zcdp``,
``pld``), and the mathematics they share: ``orders`` (grids of Rényi orders), ``log_moments`` and
``log_moments_integrated`` (the sampled Gaussian's moments), ``rdp_curves``, ``conversions``
(RDP to (epsilon, delta)) and ``composition`` (per-step conversions for the composition theorems).

>>> from dpedu.accountants import compare, SubsampledGaussianEvent
>>> table = compare([(SubsampledGaussianEvent(4.0, 0.01), 10_000)], delta=1e-5)
>>> round(table["moments"], 2)
1.26
"""

from __future__ import annotations

from .accounting import (
    ACCOUNTANT_NAMES,
    Accounting,
    Comparison,
    account,
    accountant_class,
    as_ledger,
    check_accountant_names,
    compare,
    make_accountant,
)
from .orders import OrderGridEdgeWarning
from .base import Accountant, ConversionUnavailableError, UnsupportedEventError
from ..events import (
    EpsilonDeltaEvent,
    Event,
    GaussianEvent,
    LaplaceEvent,
    SampledWithoutReplacementGaussianEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    TruncatedPoissonGaussianEvent,
)

__all__ = [
    "Accountant",
    "UnsupportedEventError",
    "ConversionUnavailableError",
    "OrderGridEdgeWarning",
    "Event",
    "GaussianEvent",
    "SubsampledGaussianEvent",
    "LaplaceEvent",
    "EpsilonDeltaEvent",
    "ShuffledBatchGaussianEvent",
    "SampledWithoutReplacementGaussianEvent",
    "TruncatedPoissonGaussianEvent",
    "ACCOUNTANT_NAMES",
    "accountant_class",
    "make_accountant",
    "check_accountant_names",
    "as_ledger",
    "Accounting",
    "account",
    "compare",
    "Comparison",
]
