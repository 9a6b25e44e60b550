"""Argument checks shared by every public function.

Each ``check_*`` helper returns the cleaned value or raises a :class:`ValueError` /
:class:`TypeError` whose message names the argument, the allowed range and the value
received, so a student reading the traceback knows what to change.

>>> check_epsilon(0.5)
0.5
>>> check_delta(0.0)
Traceback (most recent call last):
...
ValueError: delta must be in (0, 1); got 0.0
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "MAX_STEPS",
    "check_scalar",
    "check_epsilon",
    "check_delta",
    "check_positive",
    "check_nonnegative",
    "check_in_interval",
    "check_positive_int",
    "check_sampling_rate",
    "check_noise_multiplier",
    "check_array",
    "check_real_entries",
    "check_features",
    "check_labels",
    "check_theta",
    "check_rng",
]

# The most steps (or iterations) one training run may take. Training, the estimator and the CLI refuse
# more, by name: 10^7 DP-SGD steps on Adult already take hours, and a request such as epochs=1e300 is a
# mistake that would otherwise fail deep inside NumPy or run for days.
MAX_STEPS = 10_000_000


def check_scalar(value, name):
    """Return ``value`` as a Python float, or raise ``TypeError`` if it is not a real number.

    Booleans, strings, arrays with more than one element and complex numbers are refused
    rather than silently converted.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number, not a boolean; got {value!r}")
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise TypeError(f"{name} must be a scalar; got an array of shape {value.shape}")
        value = value.item()
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__} {value!r}")
    return float(value)


def check_in_interval(value, name, low, high, *, low_open=False, high_open=False):
    """Check ``low < value`` (or ``<=``) and ``value < high`` (or ``<=``); NaN always fails."""
    value = check_scalar(value, name)
    ok_low = low < value if low_open else low <= value
    ok_high = value < high if high_open else value <= high
    if not (ok_low and ok_high):  # NaN makes both comparisons False
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        raise ValueError(f"{name} must be in {left}{low:g}, {high:g}{right}; got {value!r}")
    return value


def check_positive(value, name, *, allow_inf=False):
    """A finite (or, with ``allow_inf``, possibly infinite) number > 0."""
    value = check_scalar(value, name)
    if not value > 0 or (math.isinf(value) and not allow_inf):
        allowed = "a positive number (inf allowed)" if allow_inf else "a finite positive number"
        raise ValueError(f"{name} must be {allowed}; got {value!r}")
    return value


def check_nonnegative(value, name, *, allow_inf=False):
    """A finite (or, with ``allow_inf``, possibly infinite) number >= 0."""
    value = check_scalar(value, name)
    if not value >= 0 or (math.isinf(value) and not allow_inf):
        allowed = "a number >= 0 (inf allowed)" if allow_inf else "a finite number >= 0"
        raise ValueError(f"{name} must be {allowed}; got {value!r}")
    return value


def check_epsilon(value, name="epsilon"):
    """Privacy parameter epsilon: finite and > 0."""
    return check_positive(value, name)


def check_delta(value, name="delta"):
    """Privacy parameter delta: strictly inside (0, 1)."""
    return check_in_interval(value, name, 0.0, 1.0, low_open=True, high_open=True)


def check_sampling_rate(value, name="sampling_rate"):
    """Poisson inclusion probability q in (0, 1]."""
    return check_in_interval(value, name, 0.0, 1.0, low_open=True)


def check_noise_multiplier(value, name="noise_multiplier"):
    """Noise multiplier z = sigma / sensitivity: finite and > 0."""
    return check_positive(value, name)


def check_positive_int(value, name):
    """An integer >= 1 (Python or NumPy integer; floats such as 10.0 are refused, not truncated)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 1; got {type(value).__name__} {value!r}")
    value = int(value)
    if value < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {value}")
    return value


def check_array(value, name, *, ndim=None, allow_empty=False):
    """Convert to a float64 array, refusing non-numeric data, NaN/inf, wrong ``ndim`` and empty input."""
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be converted to an array: {exc}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise TypeError(f"{name} must be numeric; got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be real; got complex dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if ndim is not None and arr.ndim not in np.atleast_1d(ndim):
        raise ValueError(f"{name} must have {ndim} dimension(s); got shape {arr.shape}")
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} is empty; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def check_real_entries(values, name):
    """Refuse booleans, strings, bytes and complex numbers anywhere in ``values`` (a scalar or nested sequence).

    NumPy would convert them silently (``True`` to 1.0, ``"0.5"`` to 0.5 with ``dtype=float``); here they
    raise a ``TypeError`` naming ``name``. Returns ``values`` unchanged.
    """
    if isinstance(values, np.ndarray) and (np.issubdtype(values.dtype, np.integer)
                                           or np.issubdtype(values.dtype, np.floating)):
        return values  # a real array: nothing to look for (the common case, kept fast)
    raw = np.asarray(values, dtype=object)
    refused = (bool, np.bool_, str, bytes, complex, np.complexfloating)
    if any(isinstance(v, refused) for v in raw.ravel()):
        raise TypeError(f"{name} must hold real numbers (no booleans, strings or complex numbers); got {values!r}")
    return values


def check_features(X, name="X"):
    """A finite 2-D float array of shape (n_samples, n_features) with at least one row and column."""
    X = check_array(X, name, ndim=2)
    if X.shape[1] == 0:
        raise ValueError(f"{name} must have at least one feature column; got shape {X.shape}")
    return X


def check_labels(y, n_samples, name="y"):
    """Labels in {-1, +1} as a float array of length ``n_samples``.

    Labels in {0, 1} are *not* converted silently: convert them with ``2 * y - 1`` (or fit
    :class:`dpedu.DPLogisticRegression`, which accepts any two labels).
    """
    y = check_array(y, name, ndim=1)
    if y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} labels but X has {n_samples} rows")
    values = np.unique(y)
    if not np.all(np.isin(values, (-1.0, 1.0))):
        hint = " (labels in {0, 1}: pass 2 * y - 1)" if np.all(np.isin(values, (0.0, 1.0))) else ""
        raise ValueError(f"{name} must contain only -1 and +1{hint}; got values {values[:5].tolist()}")
    return y


def check_theta(theta, n_features, name="theta"):
    """A finite parameter vector of length ``n_features``."""
    theta = check_array(theta, name, ndim=1)
    if theta.shape[0] != n_features:
        raise ValueError(f"{name} has length {theta.shape[0]} but X has {n_features} features")
    return theta


def check_rng(rng, name="rng"):
    """Normalise ``rng`` to a :class:`numpy.random.Generator` (SPEC 7).

    Accepts ``None`` (fresh OS entropy: not reproducible), an integer seed, a
    :class:`~numpy.random.SeedSequence`, a :class:`~numpy.random.BitGenerator` or a
    :class:`~numpy.random.Generator` (used as is, so the caller's stream advances).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, numbers.Integral):
        raise TypeError(
            f"{name} must be None, a non-negative integer seed, a SeedSequence or a numpy.random.Generator; "
            f"got {type(rng).__name__} (the legacy np.random.RandomState is not accepted)"
        )
    if rng < 0:
        raise ValueError(f"{name} seed must be a non-negative integer; got {rng}")
    return np.random.default_rng(int(rng))

