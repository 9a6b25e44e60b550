"""The one small shape every accountant shares.

An accountant stores only its ledger ``[(event, count), ...]`` and computes lazily when
asked, so ``compose`` is cheap and ``get_epsilon`` always reflects the whole history.

>>> from dpedu.accountants import make_accountant, GaussianEvent
>>> acc = make_accountant("zcdp").compose(GaussianEvent(1.0), 2)
>>> acc.ledger
[(GaussianEvent(noise_multiplier=1.0), 2)]
"""

from __future__ import annotations

import abc
from typing import ClassVar

import numpy as np

from ..ground.validation import check_delta, check_epsilon, check_positive_int
from ..ground.events import (
    ADD_REMOVE, NEIGHBOURING_RELATIONS, ZERO_OUT, ZERO_OUT_AS_ADD_REMOVE, EpsilonDeltaEvent, Event, GaussianEvent,
    LaplaceEvent, add_remove_equivalent
)

__all__ = ["Accountant", "UnsupportedEventError", "ConversionUnavailableError", "check_epsilons"]


def check_epsilons(values, name="epsilon"):
    """A one-dimensional array of epsilons (finite, > 0) as floats; bad input raises naming ``name``.

    Strings, booleans, complex numbers and objects are refused (``TypeError``), not converted; so are
    arrays of more than one dimension. NaN, infinite or non-positive entries and an empty array raise
    ``ValueError``.

    >>> check_epsilons([0.5, 1, 2.0])
    array([0.5, 1. , 2. ])
    """
    try:
        array = np.asarray(values)
    except (TypeError, ValueError):  # ragged nesting
        raise TypeError(f"{name} must be a number or a 1-D array of real numbers; got {values!r}") from None
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers (no strings, booleans, complex numbers or objects); "
                        f"got {array.dtype} values {values!r}")
    if array.ndim != 1:
        raise TypeError(f"{name} must be a number or a 1-D array of numbers; got shape {array.shape}")
    array = array.astype(float)
    if array.size == 0 or not np.all(np.isfinite(array)) or not np.all(array > 0):
        raise ValueError(f"{name} must hold finite values > 0 (and not be empty); got {values!r}")
    return array


class UnsupportedEventError(ValueError):
    """An accountant was given an event its theorem does not cover."""


class ConversionUnavailableError(ValueError):
    """The accountant's theory gives no conversion in the direction asked for (e.g. epsilon -> delta)."""


class Accountant(abc.ABC):
    """Base class: ``compose(event, count)`` then ``get_epsilon(delta)``.

    Subclasses set ``name`` (the registry key), ``supported_events`` and, when an event type
    is refused for a reason worth teaching, an entry in ``unsupported_reasons``.

    **Neighbouring relations** (docs/math.md §22.1). A supported event type is covered under add/remove
    only, unless ``relations`` lists more for it; an ``EpsilonDeltaEvent`` under either (its guarantee is
    already stated for its relation). A full-batch replace-one Gaussian or Laplace event is composed as its
    add/remove equivalent (:func:`~dpedu.ground.events.add_remove_equivalent`: the same privacy curve), so every
    accountant covers it, and the ledger holds that equivalent. One ledger has one relation
    (``self.relation``, None while empty): the composition theorems need all events under the same one.
    """

    name: ClassVar[str]
    supported_events: ClassVar[tuple[type, ...]]
    unsupported_reasons: ClassVar[dict[type, str]] = {}
    #: qualifiers shown beside a supported type in refusals, e.g. {EpsilonDeltaEvent: "delta = 0 only"}
    support_notes: ClassVar[dict[type, str]] = {}
    #: relations covered per event type beyond the default (add/remove only), e.g. {SubsampledGaussianEvent: (...)}
    relations: ClassVar[dict[type, tuple[str, ...]]] = {}

    def __init__(self) -> None:
        self.ledger: list[tuple[Event, int]] = []
        self.relation = None

    @classmethod
    def supported_relations(cls, event_type) -> tuple[str, ...]:
        """The neighbouring relations under which this accountant covers events of ``event_type``."""
        if not issubclass(event_type, cls.supported_events):
            return ()
        relations = cls.relations.get(event_type, (ADD_REMOVE,))
        if issubclass(event_type, EpsilonDeltaEvent) or (
                issubclass(event_type, (GaussianEvent, LaplaceEvent)) and ADD_REMOVE in relations):
            return NEIGHBOURING_RELATIONS  # as stated / through add_remove_equivalent
        if issubclass(event_type, ZERO_OUT_AS_ADD_REMOVE) and ADD_REMOVE in relations and ZERO_OUT not in relations:
            return tuple(relations) + (ZERO_OUT,)   # zero-out is add/remove's pair (add_remove_equivalent)
        return relations

    @classmethod
    def supported_pairs(cls) -> list[tuple[type, str]]:
        """Every (event type, relation) pair this accountant covers, e.g. for a table of what is accounted where."""
        return [(t, relation) for t in cls.supported_events for relation in cls.supported_relations(t)]

    def supports(self, event) -> bool:
        """Whether this accountant's theorem covers ``event`` (its type, under its relation)."""
        event = add_remove_equivalent(event)
        return getattr(event, "relation", ADD_REMOVE) in self.supported_relations(type(event))

    def compose(self, event, count: int = 1) -> "Accountant":
        """Record ``count`` repetitions of ``event``; returns ``self`` so calls chain."""
        if not isinstance(event, Event):
            raise TypeError(f"compose expects a dpedu.accountants event; got {type(event).__name__} {event!r}")
        count = check_positive_int(count, "count")
        if not self.supports(event):
            raise UnsupportedEventError(self._unsupported_message(event))
        relation = getattr(event, "relation", ADD_REMOVE)
        if self.ledger and relation != self.relation:
            raise UnsupportedEventError(
                f"the {self.name!r} accountant's ledger is under relation {self.relation!r}; {event!r} is under "
                f"{relation!r}. Composition theorems need one neighbouring relation: account each separately")
        self.ledger.append((add_remove_equivalent(event), count))
        self.relation = relation
        return self

    def _unsupported_message(self, event) -> str:
        relation = getattr(event, "relation", ADD_REMOVE)
        reason = (self.unsupported_reasons.get((type(event), relation)) or self.unsupported_reasons.get(type(event))
                  or getattr(event, "unsupported_reason", None))
        supported = ", ".join(
            t.__name__ + f" [{', '.join(self.supported_relations(t))}]"
            + (f" ({self.support_notes[t]})" if t in self.support_notes else "")
            for t in self.supported_events
        )
        message = f"the {self.name!r} accountant cannot account for {event!r}"
        if reason:
            message += f": {reason}"
        return message + f". It supports: {supported}."

    def get_epsilon(self, delta: float) -> float:
        """Smallest epsilon this accountant certifies for the whole ledger at ``delta``."""
        delta = check_delta(delta)
        if not self.ledger:
            return 0.0
        return self._epsilon(delta)

    def get_delta(self, epsilon):
        """Smallest delta this accountant certifies for the whole ledger at ``epsilon``.

        ``epsilon`` is a number (the answer is a float) or a 1-D array of numbers (the answer is an array
        of the same length, one delta per epsilon; :func:`check_epsilons` says what is refused).
        """
        try:
            scalar = np.ndim(epsilon) == 0
        except ValueError:  # ragged nesting: check_epsilons names it
            scalar = False
        values = np.array([check_epsilon(epsilon)]) if scalar else check_epsilons(epsilon)
        deltas = np.asarray(self._deltas(values), dtype=float) if self.ledger else np.zeros_like(values)
        return float(deltas[0]) if scalar else deltas

    @abc.abstractmethod
    def _epsilon(self, delta: float) -> float:
        """epsilon(delta) for a non-empty ledger; ``delta`` already validated."""

    def _delta(self, epsilon: float) -> float:
        """delta at one validated epsilon (non-empty ledger); an accountant implements this or :meth:`_deltas`."""
        raise ConversionUnavailableError(f"the {self.name!r} accountant gives no epsilon -> delta conversion")

    def _deltas(self, epsilons):
        """delta at each of ``epsilons`` (a validated float array, non-empty ledger): one ``_delta`` per value,
        unless the accountant computes them all at once (PLD). ``get_delta`` always comes here."""
        return np.array([self._delta(float(e)) for e in epsilons])

    def __repr__(self) -> str:
        steps = sum(count for _, count in self.ledger)
        return f"{type(self).__name__}({len(self.ledger)} ledger entries, {steps} events)"
