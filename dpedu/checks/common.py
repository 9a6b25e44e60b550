"""Machinery shared by the chapter checks: calling the student's function, judging its answer, failing.

Every ``check_*`` is wrapped by :func:`checker`: it runs with floating-point warnings silenced (a result is
judged by its value, not by a warning) and turns anything the check itself cannot handle into a
:class:`~dpedu.notebook.CheckFailed` hint, so a strange answer never crashes the check.
"""

from __future__ import annotations

import functools
import linecache
import math
import re
import warnings
from pathlib import Path

import numpy as np
from scipy.special import expit

from ..notebook import CheckFailed

__all__ = ["CheckFailed", "NOT_WRITTEN", "checker", "expect", "where_raised", "call", "call_strict", "scalar",
           "vector", "close", "passed", "problem", "loss", "per_example_gradients", "clip_rows", "classic_z"]

NOT_WRITTEN = "not written yet: replace the line `raise NotImplementedError(...)` with your code"


def checker(check):
    """Decorator for a ``check_*``: quiet floating point, and any unexpected error becomes a hint."""

    @functools.wraps(check)
    def run(*args, **kwargs):
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return check(*args, **kwargs)
        except (CheckFailed, NameError, ImportError):     # a hint, or a bug of the check itself
            raise
        except Exception as exc:     # e.g. the check's own formula evaluated at an absurd answer
            raise CheckFailed(f"your answer cannot be right: checking it led to {type(exc).__name__}: {exc}") \
                from None

    return run


def expect(condition, hint):
    """Fail with ``hint`` unless ``condition``."""
    if not condition:
        raise CheckFailed(hint)


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


def _student_error(exc, fn=None):
    if isinstance(exc, NotImplementedError):
        return CheckFailed(NOT_WRITTEN)
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
    dpedu.notebook.CheckFailed: your function raised AttributeError: ... (line 2 of <doctest ...call[0]>: ...)
    """
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # overflow is judged by the result, not the warning
            return fn(*args, **kwargs)
    except Exception as exc:
        raise _student_error(exc, fn) from None


def call_strict(fn, *args, hint):
    """Like :func:`call`, but a floating-point division by zero or invalid operation fails with ``hint``."""
    try:
        with np.errstate(divide="raise", invalid="raise", over="ignore", under="ignore"):
            return fn(*args)
    except (FloatingPointError, ZeroDivisionError):
        raise CheckFailed(hint) from None
    except Exception as exc:
        raise _student_error(exc, fn) from None


def scalar(value, what):
    """``value`` as a float (may be inf or nan), or a hint when it is not a single number."""
    if value is None:  # an exercise that pre-sets its answers to None and was not filled in
        raise CheckFailed(f"{what}: {NOT_WRITTEN}")
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise CheckFailed(f"{what} must be a number; got {type(value).__name__} {value!r:.60}") from None
    expect(array.size == 1, f"{what} must be a single number; got an array of shape {array.shape}")
    return float(array.reshape(()))


def vector(value, shape, what):
    """``value`` as a float array of ``shape``, or a hint."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise CheckFailed(f"{what} must be a numpy array; got {type(value).__name__}") from None
    expect(array.shape == shape, f"{what} must have shape {shape}; got shape {array.shape}")
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
