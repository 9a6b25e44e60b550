"""Privacy accountants side by side.

One theorem family per module; every accountant has the same small interface
(:class:`~dpedu.accountants.base.Accountant`): ``compose(event, count)`` and
``get_epsilon(delta)``. :func:`account` accounts one history with one accountant (a fresh one) and
returns its epsilon with the caveats (:class:`Accounting`); :func:`compare` does it with every
accountant at once.

Modules: ``base`` (the interface), ``registry`` (the registry, :func:`account`, :func:`compare`), ``curve``
(what the moments and RDP accountants share), one module per theorem family (``sequential``, ``advanced``,
``strong``, ``moments``, ``rdp``, ``zcdp``, and the package ``pld``), and, apart from the accountant classes,
the mathematics they share in the subpackage ``analysis``: ``orders`` (grids of Rényi orders), ``log_moments``
and ``log_moments_integrated`` (the sampled Gaussian's moments), ``rdp_curves``, ``conversions`` (RDP to
(epsilon, delta)), ``composition`` (per-step conversions for the composition theorems), the bounds for
sampling without replacement and truncated Poisson sampling, and ``selection`` with ``trials`` (private
selection's RDP bounds and the law of its number of runs).

>>> from dpedu.accountants import compare, SubsampledGaussianEvent
>>> table = compare([(SubsampledGaussianEvent(4.0, 0.01), 10_000)], delta=1e-5)
>>> round(table["moments"], 2)
1.26
"""

from __future__ import annotations

from ..ground import events
from . import registry
from .registry import (
    ACCOUNTANT_NAMES, Accounting, Comparison, account, accountant_class, as_ledger, check_accountant_names, compare,
    make_accountant
)
from .analysis.orders import OrderGridEdgeWarning
from .base import Accountant, ConversionUnavailableError, UnsupportedEventError
from ..ground.events import (
    EpsilonDeltaEvent, Event, GaussianEvent, LaplaceEvent, SampledWithoutReplacementGaussianEvent, RepeatAndSelectEvent,
    ShuffledBatchGaussianEvent, SubsampledGaussianEvent, TruncatedPoissonGaussianEvent
)
from ..ground.events_last_iterate import LinearLastIterateEvent

# The accountants' own names, the event types (re-exported from dpedu.ground.events, so one import gives a ledger and
# its accounting; a new event type in events.__all__ is imported above too), and the registry's functions.
__all__ = ["Accountant", "UnsupportedEventError", "ConversionUnavailableError", "OrderGridEdgeWarning",
           *(name for name in events.__all__ if name.endswith("Event")), "LinearLastIterateEvent", *registry.__all__]
