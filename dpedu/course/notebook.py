"""Helpers for the course notebooks in ``chapters/``.

* :func:`fast_mode` and :func:`pick` read the ``DPEDU_FAST`` environment variable. CI sets
  ``DPEDU_FAST=1`` so every chapter runs in seconds: the notebooks then use smaller grids (fewer
  epsilons, seeds, epochs), but always the same code.
* :func:`show_source` shows the real source of a dpedu function (a highlighted listing of its own, docstring
  folded, lines wrapped: :mod:`dpedu.course.listing`), so a chapter shows the code that runs instead of a
  re-typed copy that could drift from it.
* :class:`CheckFailed` is what an exercise check (:mod:`dpedu.course.checks`) raises for a wrong answer.
  Imported inside an IPython kernel, this module registers a handler (:func:`install_feedback`) that
  shows such a failure as its one-line hint, without traceback frames; the cell still ends in an
  error, so nbgrader scores it 0.
* :func:`progress_bar` turns the progress messages of :mod:`dpedu.lab.experiments` and
  :func:`dpedu.lab.audit.canary_audit` (``"[3/10] epsilon = 0.5, seed 1/2"``) into a tqdm bar.
  ``DPEDU_PROGRESS=0`` hides every bar (the book sets it: a bar is for the person waiting, not for the page).

>>> fast_mode(environ={"DPEDU_FAST": "1"}), fast_mode(environ={})
(True, False)
>>> pick(10, 2, fast=True), pick(10, 2, fast=False)
(2, 10)
>>> from dpedu.textbook.clipping import L2_clip
>>> show_source(L2_clip)                                   # doctest: +ELLIPSIS
@door(...)
def L2_clip(v, clip_norm):
...
>>> print(feedback_text(CheckFailed("return the mean, not the sum")))
check failed: return the mean, not the sum
"""

from __future__ import annotations

import inspect
import os
import re
import sys

__all__ = ["fast_mode", "pick", "show_source", "FAST_ENV_VAR", "CheckFailed", "feedback_text",
           "install_feedback", "progress_bar", "progress_count", "progress_wanted", "PROGRESS_ENV_VAR"]

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

    Parameters
    ----------
    full, fast_value : object
        The values for the full and the fast mode.
    fast : bool, optional
        Overrides :func:`fast_mode` (for tests).

    Returns
    -------
    object
        ``fast_value`` or ``full``.
    """
    return fast_value if (fast_mode() if fast is None else fast) else full


def show_source(obj):
    """Show the source of a function, class or module as a listing: the code that runs, not a re-typed copy.

    Inside IPython (a notebook) the listing is displayed as a highlighted Python block of its own, so the
    output of a later statement can never run into it; elsewhere it is printed. Docstrings are folded to
    their summary line (``help(obj)`` shows the whole docstring) and lines are wrapped at 82 columns, which the
    book's code column holds (:data:`dpedu.course.listing.CHAPTER_LISTING_WIDTH`); see
    :class:`dpedu.course.listing.SourceListing`.

    Parameters
    ----------
    obj : function, class, method or module
        A dpedu object, e.g. ``dpedu.textbook.clipping.L2_clip``.

    Raises
    ------
    TypeError
        When ``obj`` has no Python source (a built-in, or a number).
    """
    from .listing import CHAPTER_LISTING_WIDTH, SourceListing

    listing = SourceListing(obj, width=CHAPTER_LISTING_WIDTH)
    ipython = sys.modules.get("IPython")                # never import IPython just to find out
    if ipython is not None and ipython.get_ipython() is not None:
        ipython.display.display(listing)                # IPython imports IPython.display itself
    else:
        print(listing)


# --- feedback of the exercise checks -------------------------------------------------------------------


class CheckFailed(AssertionError):
    """A wrong (or unwritten) answer to an exercise; the message is the hint for the student.

    A subclass of ``AssertionError``, so plain Python, pytest and nbgrader all see a failed check.
    """


def feedback_text(exc):
    """The one line a notebook shows for a failed check: ``check failed: <hint>``.

    Parameters
    ----------
    exc : CheckFailed
        The failure.

    Returns
    -------
    str
        The hint on one line (line breaks in the message become spaces).
    """
    return "check failed: " + " ".join(str(exc).split())


def _show_hint(shell, etype, value, tb, tb_offset=None):
    """IPython custom exception handler: the hint as the whole (structured) traceback."""
    stb = [feedback_text(value)]
    shell._showtraceback(etype, value, stb)       # the kernel's error output: ename, evalue, these lines
    return stb


def install_feedback(shell=None):
    """Show :class:`CheckFailed` in IPython as its hint only, with no traceback frames.

    The cell still fails (its error output has ``ename == "CheckFailed"``, the execute reply has status
    ``"error"``), so nbgrader scores the check 0 and nbclient stops a run that does not allow errors.
    Called when this module is imported inside IPython; outside IPython it does nothing.

    Parameters
    ----------
    shell : IPython.core.interactiveshell.InteractiveShell, optional
        Default: the running shell, if IPython is loaded and running.

    Returns
    -------
    bool
        Whether a handler was installed.
    """
    if shell is None:
        ipython = sys.modules.get("IPython")          # never import IPython just to find out
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    others = tuple(e for e in getattr(shell, "custom_exceptions", ()) if e is not CheckFailed)
    if others:                                        # someone else's handler: leave it alone
        return False
    shell.set_custom_exc((CheckFailed,), _show_hint)
    return True


install_feedback()


# --- progress bars ---------------------------------------------------------------------------------------

_COUNTER = re.compile(r"^\s*(?:[A-Za-z ]+:\s*)?\[?(?P<done>\d+)/(?P<total>\d+)\]?\s*(?P<rest>.*)$")


def progress_count(message):
    """``(done, total, rest)`` of a counted progress message (``"[3/10] ..."``, ``"audit: 3/10 ..."``), else None.

    >>> progress_count("[3/10] epsilon = 0.5, seed 1"), progress_count("non-private baseline ...")
    ((3, 10, 'epsilon = 0.5, seed 1'), None)
    """
    match = _COUNTER.match(str(message))
    if match is None:
        return None
    return int(match["done"]), int(match["total"]), match["rest"]


class _ProgressBar:
    """Callable ``progress(message)`` that moves a tqdm bar to the ``done/total`` the message starts with."""

    def __init__(self, desc, total, disable):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc=desc, disable=disable, file=sys.stderr, leave=False)

    def __call__(self, message):
        count = progress_count(message)
        if count is None:                             # a phase without a count ("non-private baseline ...")
            self.bar.set_postfix_str(str(message), refresh=True)
            return
        done, total, rest = count
        if self.bar.total != total:
            self.bar.total = total
        self.bar.update(done - self.bar.n)
        self.bar.set_postfix_str(rest, refresh=True)
        if done >= total:
            self.close()

    def close(self):
        self.bar.close()


def progress_bar(desc=None, *, total=None, disable=None):
    """A ``progress=`` callback for :mod:`dpedu.lab.experiments` and :func:`dpedu.lab.audit.canary_audit`.

    Messages starting with a count (``"[3/10] ..."`` or ``"audit: 3/10 ..."``) move a tqdm bar
    (``tqdm.auto``: a widget in Jupyter, text on stderr in a terminal); other messages are shown
    beside it. The bar closes itself when the count reaches its total.

    Parameters
    ----------
    desc : str, optional
        Label in front of the bar.
    total : int, optional
        Known total (otherwise taken from the first counted message).
    disable : bool, optional
        True hides the bar. Default: hidden when ``DPEDU_FAST`` is set (CI), so that test logs stay short, and
        when ``DPEDU_PROGRESS`` is ``0`` (the book build: a page shows results, not a finished bar).

    Returns
    -------
    callable
        ``progress(message)``, with a ``close()`` method.
    """
    if disable is None:
        disable = fast_mode() or not progress_wanted()
    return _ProgressBar(desc, total, bool(disable))


PROGRESS_ENV_VAR = "DPEDU_PROGRESS"


def progress_wanted(environ=None):
    """Whether ``DPEDU_PROGRESS`` lets :func:`progress_bar` show its bars: yes unless it is ``0``, ``false``,
    ``no`` or ``off``; any other value but ``1``/``true``/``yes``/``on`` raises ``ValueError``.

    >>> progress_wanted(environ={}), progress_wanted(environ={"DPEDU_PROGRESS": "0"})
    (True, False)
    """
    value = (os.environ if environ is None else environ).get(PROGRESS_ENV_VAR, "").strip().lower()
    if value in _FALSE - {""}:
        return False
    if value in _TRUE | {""}:
        return True
    raise ValueError(f"{PROGRESS_ENV_VAR} must be one of 1/true/yes/on or 0/false/no/off (or unset); got {value!r}")
