"""The door: a public function declares what it accepts, and the checks run once, where a user calls it.

:func:`door` binds a call's arguments, runs the contract checks named beside each parameter (the small functions
below, each ``check(value, name) -> value``, built on the checks of :mod:`dpedu.ground.validation`) and the
relations between arguments, and only then runs the body. Inside that call nothing checks again, so the body of
a public function is its formula.

>>> @door(scale=positive)
... def noisy(answer, scale):
...     return answer + scale
>>> noisy(1.0, 0.5)
1.5
>>> noisy(1.0, float("nan"))
Traceback (most recent call last):
...
ValueError: scale must be a number, not NaN; got nan
"""

from __future__ import annotations

import functools
import inspect
import threading

import numpy as np

from .validation import (
    check_array, check_budget, check_features, check_in_interval, check_nonnegative, check_norms, check_positive,
    check_nonnegative_int, check_positive_int, check_rng, check_scalar
)

__all__ = [
    "door", "inside_a_call", "positive", "positive_or_inf", "nonnegative", "probability", "real", "count",
    "count_or_zero", "delta_or_zero", "generator", "budget_or_none", "features", "vectors", "open_unit", "answer",
    "norms",
]

_CALL = threading.local()   # .inside is True while a door-checked call of dpedu runs in this thread


def inside_a_call():
    """Whether this thread is inside a call that a :func:`door` already checked (its checks are skipped there)."""
    return getattr(_CALL, "inside", False)


def door(*relations, overflow=None, **contract):
    r"""Declare what a public function accepts; the checks run once, at the door where a user calls it.

    ``contract`` maps a parameter to a check ``check(value, name) -> value`` (e.g. ``positive``,
    ``generator``); ``relations`` are checks of several arguments at once, ``relation(arguments)`` with the
    checked arguments in a dict (they may replace values in it). When a user calls the function, its arguments
    are bound, defaults filled in, every check and relation runs, and only then does the body run: a refused
    call changes nothing, draws nothing and spends no budget. Inside that call (the body and everything it
    calls, in this thread) every other door-checked function runs its body at once: the training loop calls
    ``dp_sgd_step``, the model and the mechanism at every step, and none of them checks again what the run
    already checked. So the body of a public function is its formula, and its contract is the decorator above it.

    Code a user hands to a run (a step, a model, a noise source) runs inside the call too: what it passes to
    dpedu's functions is trusted, as the run's own values are.

    ``overflow="X"``: a body that overflows the float range at the door (finite inputs too large in magnitude)
    is refused with a ``ValueError`` naming ``X``, never returned as inf or NaN (a training loop does the same for
    its steps: :func:`dpedu.textbook.training.common.overflow_guard`).

    >>> @door(x=positive)
    ... def half(x):
    ...     return x / 2
    >>> half(3)
    1.5
    >>> half(-1)
    Traceback (most recent call last):
    ...
    ValueError: x must be a finite positive number; got -1.0
    """
    def decorate(fn):
        signature = inspect.signature(fn)
        unknown = sorted(set(contract) - set(signature.parameters))
        if unknown:
            raise TypeError(f"door: {fn.__qualname__} has no parameter(s) {unknown}")

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            if getattr(_CALL, "inside", False):
                return fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)           # a missing or unknown argument: Python's TypeError
            bound.apply_defaults()
            arguments = bound.arguments
            for name, check in contract.items():
                arguments[name] = check(arguments[name], name)
            for relation in relations:
                relation(arguments)
            _CALL.inside = True
            try:
                if overflow is None:
                    return fn(*bound.args, **bound.kwargs)
                with np.errstate(over="raise", invalid="raise", under="ignore"):
                    return fn(*bound.args, **bound.kwargs)
            except FloatingPointError as exc:
                raise ValueError(f"{fn.__name__} overflowed the float range ({exc}): {overflow} is too large in "
                                 f"magnitude for these arguments; rescale {overflow}") from None
            finally:
                _CALL.inside = False

        checked.contract = dict(contract)
        return checked

    return decorate


# The checks a contract names: each is ``check(value, name) -> the checked value``.

def positive(value, name):
    """A finite number > 0."""
    return check_positive(value, name)


def positive_or_inf(value, name):
    """A number > 0, ``inf`` allowed (a clip norm of inf means no clipping)."""
    return check_positive(value, name, allow_inf=True)


def nonnegative(value, name):
    """A finite number >= 0."""
    return check_nonnegative(value, name)


def probability(value, name):
    """A rate in (0, 1] (a sampling rate)."""
    return check_in_interval(value, name, 0.0, 1.0, low_open=True)


def real(value, name):
    """Any real number (inf allowed, NaN refused)."""
    return check_scalar(value, name)


def count(value, name):
    """An integer >= 1."""
    return check_positive_int(value, name)


def count_or_zero(value, name):
    """An integer >= 0 (a count of events that may not have happened)."""
    return check_nonnegative_int(value, name)


def delta_or_zero(value, name):
    """A delta in [0, 1) (0: a pure guarantee)."""
    return check_in_interval(value, name, 0.0, 1.0, high_open=True)


def generator(value, name):
    """A :class:`numpy.random.Generator` from ``None``, a seed, a SeedSequence or a Generator."""
    return check_rng(value, name)


def budget_or_none(value, name):
    """``None`` or a privacy budget."""
    return check_budget(value, name)


def vectors(value, name):
    """A finite float array of one vector (d,) or of row vectors (n, d); empty allowed."""
    return check_array(value, name, ndim=(1, 2), allow_empty=True)


def norms(value, name):
    """An array of norms: real, >= 0, not NaN (``inf`` allowed)."""
    return check_norms(value, name)


def open_unit(value, name):
    """A number strictly inside (0, 1) (a delta)."""
    return check_in_interval(value, name, 0.0, 1.0, low_open=True, high_open=True)


def answer(value, name):
    """The true answer f(D) of a release: a finite number (a 0-d array) or a finite array of any shape."""
    if np.ndim(value) == 0:
        scalar = check_scalar(value, name)
        if not np.isfinite(scalar):
            raise ValueError(f"{name} must be finite; got {scalar!r}")
        return np.asarray(scalar)
    return check_array(value, name, allow_empty=True)


def features(value, name):
    """A finite 2-D float array with at least one row and column."""
    return check_features(value, name)
