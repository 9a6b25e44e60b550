"""Small helpers for the course notebooks in ``chapters/``.

* :func:`fast_mode` reads the ``DPEDU_FAST`` environment variable. CI sets ``DPEDU_FAST=1`` so every
  chapter runs in seconds: the notebooks then use smaller grids (fewer epsilons, seeds, epochs), but
  always the same code.
* :func:`show_source` prints the real source of a dpedu function, so a chapter shows the code that
  runs instead of a re-typed copy that could drift from it.

>>> fast_mode(environ={"DPEDU_FAST": "1"}), fast_mode(environ={})
(True, False)
>>> pick(10, 2, fast=True), pick(10, 2, fast=False)
(2, 10)
>>> from dpedu.clipping import L2_clip
>>> show_source(L2_clip)                                   # doctest: +ELLIPSIS
def L2_clip(v, clip_norm):
...
    return v * clip_factors(l2_norms(v), clip_norm)
"""

from __future__ import annotations

import inspect
import os

__all__ = ["fast_mode", "pick", "show_source", "FAST_ENV_VAR"]

FAST_ENV_VAR = "DPEDU_FAST"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def fast_mode(environ=None):
    """Whether ``DPEDU_FAST`` asks for the fast (CI) mode.

    Parameters
    ----------
    environ : mapping, optional
        Where to look (default ``os.environ``).

    Returns
    -------
    bool
        True for ``1``/``true``/``yes``/``on`` (any case), False when unset or ``0``/``false``/``no``/``off``.

    Raises
    ------
    ValueError
        For any other value, so that a typo such as ``DPEDU_FAST=ture`` is not silently a full run.
    """
    value = (os.environ if environ is None else environ).get(FAST_ENV_VAR, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{FAST_ENV_VAR} must be one of 1/true/yes/on or 0/false/no/off (or unset); got {value!r}")


def pick(full, fast_value, *, fast=None):
    """``fast_value`` in fast mode, else ``full``: ``epochs = pick(30, 5)``.

    Only sizes should differ between the modes (grid lengths, seeds, epochs), never which code runs.
    ``fast`` overrides :func:`fast_mode` (for tests).
    """
    return fast_value if (fast_mode() if fast is None else fast) else full


def show_source(obj):
    """Print the source code of a function, class or module (``inspect.getsource``).

    Parameters
    ----------
    obj : function, class, method or module
        A dpedu object, e.g. ``dpedu.clipping.L2_clip``.

    Raises
    ------
    TypeError
        When ``obj`` has no Python source (a built-in, or a number).
    """
    try:
        source = inspect.getsource(obj)
    except (TypeError, OSError) as exc:
        raise TypeError(f"show_source needs a Python function, class or module; got {obj!r} ({exc})") from None
    print(source.rstrip("\n"))
