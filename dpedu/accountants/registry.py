r"""Account a history: the registry of accountants, and the one function that accounts a ledger.

:func:`account` is the single place where "compose this ledger on a fresh accountant, ask for epsilon,
collect the caveats" is written; :func:`compare` (every accountant side by side), calibration, the
pro-active plan and the experiments all call it, so they handle refusals and warnings the same way.

>>> from dpedu.ground.events import SubsampledGaussianEvent
>>> result = account([(SubsampledGaussianEvent(4.0, 0.01), 10_000)], "moments", delta=1e-5)
>>> result.accountant, round(result.epsilon, 4), result.notes[0].split(':')[0]
('moments', 1.2586, 'integer orders only and the classic tail bound')
>>> account([(SubsampledGaussianEvent(4.0, 0.01), 10)], "zcdp", delta=1e-5).applies
False
"""

from __future__ import annotations

import importlib
import math
import textwrap
import warnings
from dataclasses import dataclass, field

from ..ground.events import ledger_pairs
from ..ground.validation import check_choice, check_delta
from .base import Accountant, UnsupportedEventError

__all__ = [
    "ACCOUNTANT_NAMES",
    "accountant_class",
    "make_accountant",
    "check_accountant_names",
    "as_ledger",
    "Accounting",
    "account",
    "Comparison",
    "compare",
]

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
#: Registry names of the accountants, in the teaching order (loosest theorem first).
ACCOUNTANT_NAMES = tuple(_REGISTRY)


def accountant_class(name):
    """The accountant class registered under ``name`` (one of :data:`ACCOUNTANT_NAMES`).

    Raises
    ------
    TypeError
        If ``name`` is not a string (an accountant instance, a list of names, ...).
    ValueError
        If ``name`` is not registered; the message lists the registered names.
    """
    if isinstance(name, Accountant):
        raise TypeError("accountant must be a registry name such as 'rdp', not an accountant instance "
                        "(every computation here starts from a fresh, empty accountant)")
    if not isinstance(name, str):
        raise TypeError(f"accountant must be a registry name (a str), one of {', '.join(ACCOUNTANT_NAMES)}; "
                        f"got {type(name).__name__} {name!r}")
    module, cls = _REGISTRY[check_choice(name, "accountant", ACCOUNTANT_NAMES)]
    return getattr(importlib.import_module(module), cls)


def make_accountant(name, **options):
    """A fresh, empty accountant: ``make_accountant("rdp")``; ``options`` go to its constructor."""
    return accountant_class(name)(**options)


def check_accountant_names(accountants, name="accountants"):
    """A sequence of registry names as a tuple; a bare string or an unknown name is refused, by ``name``."""
    if isinstance(accountants, str):
        raise TypeError(f"{name} must be a sequence of names such as ('rdp', 'pld'); got the string {accountants!r}")
    try:
        names = tuple(accountants)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of accountant names; got {type(accountants).__name__} "
                        f"{accountants!r}") from None
    for entry in names:
        accountant_class(entry)
    return names


def as_ledger(history):
    """Normalise a history to a ledger ``[(event, count), ...]``.

    Accepts a ledger, a list of bare events (count 1 each), a single event (:func:`dpedu.ground.events.ledger_pairs`),
    or any object with a ``ledger`` attribute (an accountant, a training result, a fitted estimator's
    ``ledger_``). Anything else is refused with a ``TypeError`` naming ``history``.
    """
    if hasattr(history, "ledger_"):
        history = history.ledger_
    elif hasattr(history, "ledger"):
        history = history.ledger
    if history is None:
        raise TypeError("this run has no privacy ledger: it was not private (its epsilon is infinite)")
    return ledger_pairs(history, "history")


@dataclass(frozen=True)
class Accounting:
    """What one accountant certifies for one history at one delta.

    Attributes
    ----------
    accountant : str
        Registry name of the accountant.
    epsilon : float
        The epsilon it certifies at ``delta``; ``nan`` when it does not apply (see ``notes``).
    delta : float
        The delta asked for.
    notes : tuple of str
        Caveats, in this order: the accountant's own caveat (e.g. "NOT a valid bound" for Abadi et al.'s
        paper recipe), why it does not apply (when ``epsilon`` is nan), and the messages of the warnings
        it raised (e.g. a best order at the edge of the grid). Empty when there is nothing to say.
    warnings : tuple of Warning
        The warnings behind those messages, with their categories, so a caller can re-issue them
        (:meth:`reissue_warnings`). Not part of equality.
    """

    accountant: str
    epsilon: float
    delta: float
    notes: tuple = ()
    warnings: tuple = field(default=(), repr=False, compare=False)

    @property
    def applies(self):
        """Whether the accountant certified an epsilon (``epsilon`` is not nan)."""
        return not math.isnan(self.epsilon)

    @property
    def note(self):
        """The notes as one line (``""`` when there are none)."""
        return "; ".join(self.notes)

    def reissue_warnings(self, stacklevel=2):
        """Emit the captured warnings again, each with its own category, at the caller's caller."""
        for warning in self.warnings:
            warnings.warn(warning, stacklevel=stacklevel + 1)


def account(history, accountant="rdp", *, delta, accountant_options=None, strict=False):
    r"""Account ``history`` with a fresh accountant and return its epsilon with the caveats.

    Parameters
    ----------
    history : ledger, list of events, event, or an object with ``ledger``
        What happened (see :func:`as_ledger`).
    accountant : str, default "rdp"
        A registry name (:data:`ACCOUNTANT_NAMES`). Never an instance: a fresh accountant is made for
        this call, so nothing the caller holds is changed.
    delta : float
        Target delta in (0, 1).
    accountant_options : dict, optional
        Keyword arguments for the accountant's constructor, e.g. ``{"recipe": "paper"}``.
    strict : bool, default False
        What to do when the accountant does not apply: ``False`` returns ``epsilon = nan`` with the reason
        in ``notes``; ``True`` raises (:class:`~dpedu.accountants.UnsupportedEventError` when an event is
        refused, ``ValueError`` when no epsilon exists at this delta, e.g. the ledger's own deltas exceed
        it), which is what a budget or a calibration needs.

    Returns
    -------
    Accounting

    Notes
    -----
    Warnings that are :class:`UserWarning` (the accountants' caveats, such as
    :class:`~dpedu.accountants.analysis.orders.OrderGridEdgeWarning`) are captured into ``notes`` and
    ``warnings`` instead of being printed; every other warning (e.g. a numerical ``RuntimeWarning``) is
    passed on unchanged.

    Examples
    --------
    >>> from dpedu.ground.events import GaussianEvent
    >>> result = account([(GaussianEvent(10.0), 100)], "zcdp", delta=1e-5)
    >>> round(result.epsilon, 4), result.notes
    (5.2985, ())
    """
    delta = check_delta(delta)
    if strict is not True and strict is not False:
        raise TypeError(f"strict must be True or False; got {type(strict).__name__} {strict!r}")
    if accountant_options is not None and not isinstance(accountant_options, dict):
        raise TypeError(f"accountant_options must be a dict of keyword arguments for the accountant or None; "
                        f"got {type(accountant_options).__name__}")
    ledger = as_ledger(history)
    acc = make_accountant(accountant, **(accountant_options or {}))
    reason = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for event, count in ledger:
                acc.compose(event, count)  # a bad count is bad input: it raises, strict or not
        except UnsupportedEventError as exc:
            if strict:
                raise
            reason = str(exc)
        if reason is None:
            try:
                epsilon = acc.get_epsilon(delta)
            except ValueError as exc:  # e.g. the history's own deltas already exceed the target delta
                if strict:
                    raise
                reason = f"no epsilon at this delta: {exc}"
        if reason is not None:
            epsilon = math.nan
    held = []
    for w in caught:
        if issubclass(w.category, UserWarning):
            held.append(w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    caveat = getattr(acc, "caveat", None) if reason is None else None
    notes = []
    for text in [caveat, reason, *(str(w) for w in held)]:
        if text and text not in notes:
            notes.append(text)
    return Accounting(accountant=accountant, epsilon=epsilon, delta=delta, notes=tuple(notes), warnings=tuple(held))


class Comparison(dict):
    """``{label: epsilon}`` for one history, one entry per accountant; ``nan`` where one does not apply.

    Built from :class:`Accounting` results. ``notes[label]`` is the one-line caveat of that entry (why it
    does not apply, or what it warns about); ``accountings[label]`` the full result; ``delta`` the delta
    asked for. ``str(comparison)`` is a printable table, :data:`WIDTH` columns wide at most: a long note wraps onto
    lines of its own, indented to where it starts.
    """

    WIDTH = 100             # columns of the printed table (a chapter's page, a terminal)

    def __init__(self, accountings, delta):
        super().__init__({label: result.epsilon for label, result in accountings.items()})
        self.accountings = dict(accountings)
        self.notes = {label: result.note for label, result in accountings.items() if result.notes}
        self.delta = delta

    def __str__(self):
        width = max(len(name) for name in self)
        lines = [f"{'accountant':<{width}}  epsilon (delta={self.delta:g})"]
        for name, eps in self.items():
            shown = "   n/a" if math.isnan(eps) else f"{eps:10.4f}"
            row = f"{name:<{width}}  {shown}"
            if name not in self.notes:
                lines.append(row)
                continue
            indent = " " * (len(row) + 3)
            note = textwrap.wrap(self.notes[name], max(self.WIDTH - len(indent), 40), break_long_words=False,
                                 break_on_hyphens=False)
            lines.append(f"{row}   {note[0]}")
            lines += [indent + part for part in note[1:]]
        return "\n".join(lines)


def compare(history, delta, *, accountants=ACCOUNTANT_NAMES, last_iterate=None):
    """Account the same history with every accountant in ``accountants`` (each by :func:`account`).

    Parameters
    ----------
    history : ledger, list of events, or an object with ``ledger``
        What happened (see :func:`as_ledger`).
    delta : float
        Target delta in (0, 1).
    accountants : sequence of str
        Registry names, in the order to report them.
    last_iterate : bool or None
        Also report what the released model alone reveals (docs/math.md §28), after the composition rows: the
        linear-loss heuristic and the proven convex bound
        (:func:`~dpedu.accountants.convex_last_iterate.last_iterate_accountings`; ``nan`` with the reason where
        the run does not qualify). ``None`` (default): only for a projected run
        (:class:`~dpedu.textbook.learners.projected.ProjectedRun`); ``True``: for any DP-SGD run; ``False``: never.

    Returns
    -------
    Comparison
        A dict of epsilons (``nan`` with a note where an accountant does not apply).

    Examples
    --------
    >>> from dpedu.ground.events import SubsampledGaussianEvent
    >>> table = compare([(SubsampledGaussianEvent(4.0, 0.01), 10_000)], delta=1e-5, accountants=("rdp", "zcdp"))
    >>> round(table["rdp"], 4), sorted(table.notes)
    (1.0355, ['zcdp'])
    """
    delta = check_delta(delta)
    if last_iterate is not None and not isinstance(last_iterate, bool):
        raise TypeError(f"last_iterate must be None, True or False; got {type(last_iterate).__name__} {last_iterate!r}")
    ledger = as_ledger(history)
    names = check_accountant_names(accountants)
    accountings = {name: account(ledger, name, delta=delta) for name in names}
    if last_iterate is not False:
        from .convex_last_iterate import last_iterate_accountings
        from ..textbook.learners.projected import ProjectedRun

        if last_iterate or isinstance(history, ProjectedRun):
            accountings.update(last_iterate_accountings(history, delta))
    return Comparison(accountings, delta)
