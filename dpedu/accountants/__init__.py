"""Privacy accountants side by side.

One theorem family per module; every accountant has the same small interface
(:class:`~dpedu.accountants.base.Accountant`): ``compose(event, count)`` and
``get_epsilon(delta)``. :func:`compare` accounts one history every way at once.

>>> from dpedu.accountants import compare, SubsampledGaussianEvent
>>> table = compare([(SubsampledGaussianEvent(4.0, 0.01), 10_000)], delta=1e-5)
>>> round(table["moments"], 2)
1.26
"""

from __future__ import annotations

import importlib
import math
import warnings

from ..validation import check_delta
from .orders import OrderGridEdgeWarning
from .base import Accountant, ConversionUnavailableError, UnsupportedEventError
from ..events import (
    EpsilonDeltaEvent,
    Event,
    GaussianEvent,
    LaplaceEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
)

# name -> (module, class).  The order is the teaching order: loosest theorem first.
_REGISTRY = {
    "sequential": ("dpedu.accountants.sequential", "SequentialAccountant"),
    "advanced": ("dpedu.accountants.advanced", "AdvancedAccountant"),
    "strong": ("dpedu.accountants.strong", "StrongCompositionAccountant"),
    "moments": ("dpedu.accountants.moments", "MomentsAccountant"),
    "rdp": ("dpedu.accountants.rdp", "RDPAccountant"),
    "zcdp": ("dpedu.accountants.zcdp", "ZCDPAccountant"),
    "pld": ("dpedu.accountants.pld", "PLDAccountant"),
}
ACCOUNTANT_NAMES = tuple(_REGISTRY)

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
    "ACCOUNTANT_NAMES",
    "accountant_class",
    "make_accountant",
    "as_ledger",
    "compare",
    "Comparison",
]


def accountant_class(name):
    """The accountant class registered under ``name`` (one of :data:`ACCOUNTANT_NAMES`)."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown accountant {name!r}; choose one of {', '.join(ACCOUNTANT_NAMES)}")
    module, cls = _REGISTRY[name]
    return getattr(importlib.import_module(module), cls)


def make_accountant(name, **options):
    """A fresh, empty accountant: ``make_accountant("rdp")``; ``options`` go to its constructor."""
    if isinstance(name, Accountant):
        raise TypeError("make_accountant takes a name such as 'rdp', not an accountant instance")
    return accountant_class(name)(**options)


def as_ledger(history):
    """Normalise a history to a ledger ``[(event, count), ...]``.

    Accepts a ledger, a list of bare events (count 1 each), a single event, or any object with a
    ``ledger`` attribute (an accountant, a training result, a fitted estimator's ``ledger_``).
    """
    if hasattr(history, "ledger_"):
        history = history.ledger_
    elif hasattr(history, "ledger"):
        history = history.ledger
    if history is None:
        raise TypeError("this run has no privacy ledger: it was not private (its epsilon is infinite)")
    if isinstance(history, Event):
        return [(history, 1)]
    ledger = []
    for item in history:
        if isinstance(item, Event):
            ledger.append((item, 1))
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Event):
            ledger.append((item[0], item[1]))
        else:
            raise TypeError(f"a history holds events or (event, count) pairs; got {item!r}")
    return ledger


class Comparison(dict):
    """``{accountant name: epsilon}`` for one history; ``nan`` where an accountant does not apply.

    ``notes[name]`` says why an accountant was not applicable (or any caveat it carries).
    ``str(comparison)`` is a printable table.
    """

    def __init__(self, values, notes, delta):
        super().__init__(values)
        self.notes = dict(notes)
        self.delta = delta

    def __str__(self):
        width = max(len(name) for name in self)
        lines = [f"{'accountant':<{width}}  epsilon (delta={self.delta:g})"]
        for name, eps in self.items():
            shown = "   n/a" if math.isnan(eps) else f"{eps:10.4f}"
            note = f"   {self.notes[name]}" if name in self.notes else ""
            lines.append(f"{name:<{width}}  {shown}{note}")
        return "\n".join(lines)


def compare(history, delta, *, accountants=ACCOUNTANT_NAMES):
    """Account the same history with every accountant in ``accountants``.

    Parameters
    ----------
    history : ledger, list of events, or an object with ``ledger``
        What happened (see :func:`as_ledger`).
    delta : float
        Target delta in (0, 1).
    accountants : sequence of str
        Registry names, in the order to report them.

    Returns
    -------
    Comparison
        A dict of epsilons (``nan`` with a note where an accountant does not apply).
    """
    delta = check_delta(delta)
    ledger = as_ledger(history)
    values, notes = {}, {}
    for name in accountants:
        acc = make_accountant(name)
        try:
            for event, count in ledger:
                acc.compose(event, count)
        except UnsupportedEventError as exc:
            values[name] = math.nan
            notes[name] = str(exc)
            continue
        try:
            # a table is read as a whole: an order at the edge of the grid becomes that row's note instead of
            # a warning printed in the middle of it (the epsilon is still a valid, possibly loose, bound)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", OrderGridEdgeWarning)
                values[name] = acc.get_epsilon(delta)
        except ValueError as exc:  # e.g. the history's own deltas already exceed the target delta
            values[name] = math.nan
            notes[name] = f"no epsilon at this delta: {exc}"
            continue
        for warning in caught:
            if not issubclass(warning.category, OrderGridEdgeWarning):
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        edge = [str(w.message) for w in caught if issubclass(w.category, OrderGridEdgeWarning)]
        caveat = "; ".join(filter(None, [getattr(acc, "caveat", None)] + edge[:1]))
        if caveat:
            notes[name] = caveat
    return Comparison(values, notes, delta)
