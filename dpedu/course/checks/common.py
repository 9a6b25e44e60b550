"""Machinery shared by the chapter checks: calling the student's function, judging its answer, failing.

Every ``check_*`` is wrapped by :func:`checker`: it runs with floating-point warnings silenced (a result is
judged by its value, not by a warning) and turns anything the check itself cannot handle into a
:class:`~dpedu.course.notebook.CheckFailed` hint, so a strange answer never crashes the check.

A check draws the settings it grades from :func:`settings`, afresh at every call (``seed=None``): a failure
may show the expected value for the settings it tried, and those settings are not the ones of the next run,
so a shown value cannot be copied into an answer. The noise a noisy answer must add is drawn by the student's
function from generators the check seeds itself, so a correct answer gets the same verdict every time.
:func:`expect_independent_noise` tests what makes a noisy vector private: independent noise in every
coordinate, at the stated scale, of the stated shape.
"""

from __future__ import annotations

import functools
import linecache
import math
import re
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from scipy.special import expit

from ...accountants import OrderGridEdgeWarning
from ..notebook import CheckFailed
from .guard import ExerciseRefused, exercise_of_check, refusing

__all__ = ["CheckFailed", "NOT_WRITTEN", "RUNNING", "LAST_FAILURE", "checker", "expect", "where_raised",
           "returned_from", "student", "call", "call_strict", "scalar",
           "vector", "settings", "expect_independent_noise", "excess_kurtosis", "close", "passed", "problem", "loss", "per_example_gradients", "clip_rows", "classic_z"]

NOT_WRITTEN = "not written yet: replace the line `raise NotImplementedError(...)` with your code"


class _Running:
    """The check now running: its exercise number, and the student's function it last called (with what
    :func:`~dpedu.course.checks.guard.refusing` saw of that call)."""

    number = None
    fn = None
    seen = None


RUNNING = _Running()
LAST_FAILURE = {}   # exercise number -> the CheckFailed of its last failed check (for checks.hint)


def checker(check):
    """Decorator for a ``check_*``: quiet floating point, and any unexpected error becomes a hint.

    While the check runs, :func:`call` refuses dpedu's own version of the exercise (:mod:`dpedu.course.checks.guard`),
    and a failure about a returned value names the line of the student's function that returned it.
    """
    number = exercise_of_check(check.__name__)

    @functools.wraps(check)
    def run(*args, **kwargs):
        RUNNING.number, RUNNING.fn, RUNNING.seen = number, None, None
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                # a check's settings are drawn afresh: an optimal order at the edge of an accountant's grid (the
                # reference and the student's value alike) is no news to the student
                warnings.simplefilter("ignore", OrderGridEdgeWarning)
                return check(*args, **kwargs)
        except CheckFailed as exc:
            raise _located(exc, number) from None
        except (NameError, ImportError):     # a bug of the check itself
            raise
        except Exception as exc:     # e.g. the check's own formula evaluated at an absurd answer
            raise _located(CheckFailed(f"your answer cannot be right: checking it led to {type(exc).__name__}: "
                                       f"{exc}"), number) from None
        finally:
            RUNNING.number = RUNNING.fn = RUNNING.seen = None

    return run


def _located(exc, number):
    """``exc`` with "where" added: the line the student's function returned from, when the hint is about it."""
    message = str(exc)
    seen, fn = RUNNING.seen, RUNNING.fn
    if (seen is not None and seen.return_line is not None and "(line " not in message
            and not isinstance(exc, ExerciseRefused) and NOT_WRITTEN not in message):
        located = type(exc)(message + returned_from(fn, seen.return_line))
        located.more = getattr(exc, "more", None)
        exc = located
    if number is not None:
        LAST_FAILURE[number] = exc
    return exc


def expect(condition, hint, more=None):
    """Fail with ``hint`` unless ``condition``; ``more``, a second level that says more, is what
    ``checks.hint(number)`` shows after the failure."""
    if not condition:
        failure = CheckFailed(hint)
        failure.more = more
        raise failure


# the file names IPython/ipykernel give a notebook cell's code: /tmp/ipykernel_123/456.py, <ipython-input-4-...>
_CELL_FILE = re.compile(r"(ipykernel_\d+[/\\]\d+\.py$)|(^<ipython-input-)")


def where_raised(exc, fn):
    """``" (line 3 of your cell: `x = v.nrm`)"``: where in ``fn``'s cell (or file) ``exc`` was raised, or ``""``.

    The line is the last one of the traceback in the file that defines ``fn`` (numpy's own frames below it
    are skipped), numbered as the reader sees it: from 1 at the top of the notebook cell.
    """
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == code.co_filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None:
        return ""
    filename = code.co_filename
    place = "your cell" if _CELL_FILE.search(filename) else Path(filename).name
    text = linecache.getline(filename, line).strip()
    return f" (line {line} of {place}: `{text}`)" if text else f" (line {line} of {place})"


def returned_from(fn, line):
    """``" (your function returned it from line 3 of your cell: `return v`)"``, or ``""`` without a source."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    filename = code.co_filename
    place = "your cell" if _CELL_FILE.search(filename) else Path(filename).name
    text = linecache.getline(filename, line).strip()
    return f" (your function returned it from line {line} of {place}: `{text}`)" if text else \
        f" (your function returned it from line {line} of {place})"


@contextmanager
def student(fn):
    """Run the student's ``fn`` inside the block: dpedu's version of the running check's exercise refuses
    (:func:`~dpedu.course.checks.guard.refusing`), and the line ``fn`` returns from is remembered for the hint."""
    RUNNING.fn = fn
    with refusing(RUNNING.number, fn) as seen:
        RUNNING.seen = seen
        yield seen


def _student_error(exc, fn=None):
    if isinstance(exc, NotImplementedError):
        return CheckFailed(NOT_WRITTEN)
    if isinstance(exc, ExerciseRefused):
        return ExerciseRefused(f"{exc}{where_raised(exc, fn)}")
    if isinstance(exc, CheckFailed):
        return exc
    return CheckFailed(f"your function raised {type(exc).__name__}: {exc}{where_raised(exc, fn)}")


def call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``; a stub's NotImplementedError and any crash become a failed check.

    A crash names the line of the student's code that raised:

    >>> def norm(v):
    ...     return v.nrm
    >>> call(norm, np.ones(2))
    Traceback (most recent call last):
    ...
    dpedu.course.notebook.CheckFailed: your function raised AttributeError: ... (line 2 of <doctest ...call[0]>: ...)
    """
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings(), student(fn):
            warnings.simplefilter("ignore", RuntimeWarning)  # overflow is judged by the result, not the warning
            return fn(*args, **kwargs)
    except Exception as exc:
        raise _student_error(exc, fn) from None


def call_strict(fn, *args, hint, more=None):
    """Like :func:`call`, but a floating-point division by zero or invalid operation fails with ``hint`` (and the
    second level ``more``)."""
    try:
        with np.errstate(divide="raise", invalid="raise", over="ignore", under="ignore"), student(fn):
            return fn(*args)
    except (FloatingPointError, ZeroDivisionError):
        failure = CheckFailed(hint)
        failure.more = more
        raise failure from None
    except Exception as exc:
        raise _student_error(exc, fn) from None


_NO_RETURN = "a function that ends without `return` returns None"


def _shape_words(shape):
    return "a single number" if shape == () else f"an array of shape {shape}"


def scalar(value, what):
    """``value`` as a float (may be inf or nan), or a hint when it is not a single number."""
    if value is None:
        if RUNNING.fn is None:      # an exercise that pre-sets its answers to None and was not filled in
            raise CheckFailed(f"{what}: {NOT_WRITTEN}")
        raise CheckFailed(f"{what}: your function returned None; expected a single number ({_NO_RETURN})")
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise CheckFailed(f"{what}: expected a single number; got {type(value).__name__} {value!r:.60}") from None
    expect(array.size == 1, f"{what}: expected a single number; got an array of shape {array.shape}",
           more="reduce the array to one number (a sum, a mean, a max, ...) or return the one entry you mean")
    return float(array.reshape(()))


def _shape_hint(got, shape):
    """What a result of shape ``got`` instead of ``shape`` usually means."""
    if got == ():
        return "a single number instead of one value per coordinate"
    if len(got) == len(shape) + 1 and got[1:] == shape:
        return f"one row per example (shape {got}); the answer is one vector: reduce over the rows (axis 0)"
    if int(np.prod(got)) == int(np.prod(shape)):
        return "the right number of entries in another shape: keep the shape of the input (keepdims=True)"
    if len(got) == len(shape) and got[::-1] == shape:
        return "the axes are swapped"
    return ""


def vector(value, shape, what):
    """``value`` as a float array of ``shape``, or a hint that says which shape was expected."""
    if value is None:
        raise CheckFailed(f"{what}: your function returned None; expected {_shape_words(shape)} ({_NO_RETURN})")
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise CheckFailed(f"{what}: expected {_shape_words(shape)}; got {type(value).__name__}") from None
    if array.shape != shape:
        hint = _shape_hint(array.shape, shape)
        raise CheckFailed(f"{what}: expected {_shape_words(shape)}; got shape {array.shape}"
                          + (f": {hint}" if hint else ""))
    return array


def close(a, b, rtol=1e-6, atol=1e-10):
    """Finite and close to ``b``."""
    return bool(np.all(np.isfinite(a)) and np.allclose(a, b, rtol=rtol, atol=atol))


def passed(what):
    """The success line."""
    print(f"passed: {what}")


def problem(seed, n=40, d=4, scale=1.0):
    """theta, X, y for the logistic checks (labels in {-1, +1}, no score exactly 0)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    theta = scale * rng.normal(size=d)
    return theta, X, y


def overflowing(theta, X, y):
    """``theta`` rescaled so that its most negative margin is -1000: exp(-m) = exp(1000) overflows float64."""
    margins = y * (X @ theta)
    if margins.min() >= 0.0:                   # every row classified correctly: flip so that one is wrong
        theta, margins = -theta, -margins
    return theta * (1000.0 / -margins.min())


def loss(theta, X, y):
    """Mean logistic loss."""
    return float(np.mean(np.logaddexp(0.0, -y * (X @ theta))))


def per_example_gradients(theta, X, y):
    """One logistic-loss gradient per row."""
    return (-y * expit(-y * (X @ theta)))[:, None] * X


def clip_rows(G, clip_norm):
    """Each row scaled to L2 norm at most ``clip_norm``."""
    norms = np.linalg.norm(G, axis=-1, keepdims=True)
    return G * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))


def classic_z(epsilon, delta):
    """The classic Gaussian calibration sqrt(2 ln(1.25/delta)) / epsilon."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def settings(seed=None):
    """The generator a check draws its settings from: fresh entropy at every call when ``seed`` is None (what
    the chapters use), a fixed stream for a given seed (what the tests use to replay a check).

    Never the student's random state: a student's ``np.random.seed`` changes nothing here.
    """
    return np.random.default_rng(seed)


def excess_kurtosis(x):
    """The excess kurtosis of a sample: 0 for a Gaussian, 3 for Laplace."""
    centred = x - x.mean()
    return float(np.mean(centred**4) / np.mean(centred**2) ** 2 - 3.0)


def expect_independent_noise(noise, std, what="the noise", *, mechanism="Gaussian"):
    """Fail unless ``noise`` (one row per call of the student's function, one column per coordinate) looks like
    independent draws of N(0, std²) in every coordinate (or Laplace with that standard deviation).

    What is tested, in the order a wrong answer meets it: noise at all; the coordinates *not* sharing one draw
    (sample correlations, each within 6/√draws of 0: one scalar added to every coordinate has correlation 1);
    every coordinate at the stated standard deviation (within 8 %); mean 0; and the shape of the distribution
    (excess kurtosis 0 for a Gaussian, 3 for Laplace). With 2000 draws of 3 or more coordinates a correct answer
    passes each test with a wide margin, and one shared draw is told from independent ones every time.
    """
    noise = np.asarray(noise, dtype=float)
    draws, d = noise.shape
    expect(np.all(np.isfinite(noise)), f"{what} is not finite")
    spread = noise.std(axis=0)
    expect(np.all(spread > 0), f"{what} is missing: with a positive noise multiplier every coordinate must change "
                               f"from call to call", more="draw the noise from the rng you are given, one value per "
                                                           "coordinate")
    if d > 1:
        correlation = np.corrcoef(noise, rowvar=False)[~np.eye(d, dtype=bool)]
        worst = float(np.max(np.abs(correlation)))
        if worst > 6.0 / math.sqrt(draws):
            shared = worst > 0.99
            expect(False, (f"every coordinate got the same noise draw (correlation {worst:.2f} between "
                           f"coordinates): one draw shared by all {d} coordinates hides a change only along "
                           f"(1, ..., 1); any other difference between the sums of neighbouring datasets is "
                           f"released with no noise at all. That is not differential privacy for a vector"
                           if shared else
                           f"the noise of different coordinates is correlated ({worst:.2f}): each coordinate "
                           f"needs its own, independent draw"),
                   more=f"draw {d} independent values at once, e.g. rng.normal(0.0, std, size={d}) for a vector "
                        f"of {d} coordinates")
    target = std
    low, high = float(spread.min()), float(spread.max())
    if low < 0.92 * target or high > 1.08 * target:
        raise CheckFailed(f"{what} must have standard deviation {target:.4g} in every coordinate; yours ranges from "
                          f"{low:.4g} to {high:.4g}")
    means = noise.mean(axis=0)
    expect(np.all(np.abs(means) < 5.0 * target / math.sqrt(draws)), f"{what} must have mean 0 in every coordinate")
    kurtosis = excess_kurtosis(noise.ravel() / target)
    expected_kurtosis = 3.0 if mechanism == "Laplace" else 0.0
    shaped = abs(kurtosis) < 0.75 if mechanism == "Gaussian" else kurtosis > 1.5   # standard errors 0.05, 0.4
    expect(shaped,
           f"{what} is not {mechanism}: its tails are too {'heavy' if kurtosis > expected_kurtosis else 'light'} "
           f"(excess kurtosis {kurtosis:.2f}; {expected_kurtosis:g} for the {mechanism} distribution)",
           more=("the Gaussian mechanism draws rng.normal(0.0, std, size=d)" if mechanism == "Gaussian" else
                 "the Laplace mechanism draws rng.laplace(0.0, scale, size=d)"))
