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
>>> check_epsilon(True)
Traceback (most recent call last):
...
TypeError: epsilon must be a real number, not a boolean; got True

The rules, the same for every argument of every public function:

* where a real number is meant, ``bool``, ``str``, ``complex``, ``None`` and arrays are refused with a
  :class:`TypeError` naming the argument (``True`` is not 1, ``"1"`` is not 1); NaN is refused with a
  :class:`ValueError` (it fails every range check silently otherwise);
* where an integer is meant, floats are refused by type (``10.0`` is not truncated to 10);
* work whose size is absurd is refused with a :class:`ValueError` stating the limit
  (:data:`MAX_STEPS`, checked by :func:`check_steps`), instead of running for days;
* a budget argument must be ``None`` or a budget (:func:`check_budget`); anything else is a
  :class:`TypeError` naming the argument, raised before any work or noise.

This module is the lowest layer of dpedu: it imports nothing from the package.
"""

from __future__ import annotations

import abc
import math
import numbers

import numpy as np

__all__ = [
    "check_norms", "check_noise_and_clip", "MAX_STEPS", "all_finite", "check_scalar", "check_epsilon", "check_delta",
    "check_positive", "check_nonnegative", "check_in_interval", "check_choice", "check_positive_int", "check_nonnegative_int", "check_confidence",
    "check_sampling_rate", "check_noise_multiplier", "check_array", "check_real_entries", "check_features",
    "check_labels", "check_theta", "check_rng", "check_count", "check_budget", "Budget", "check_steps",
    "MAX_NOISE_SCALE", "check_noise_scale",
]

# The most steps (or iterations) one training run may take. Training, the estimator and the CLI refuse
# more, by name. A million noisy steps is 150 times the tuned estimator's 6,400 and hours of NumPy work on
# Adult; a larger count is almost always a slip (epochs confused with steps, a tiny sampling rate, or
# epochs=1e300) that would otherwise fail deep inside NumPy or seem to run forever.
MAX_STEPS = 1_000_000


def check_scalar(value, name, *, allow_nan=False):
    """Return ``value`` as a Python float, or raise ``TypeError`` if it is not a real number.

    Booleans, strings, ``None``, arrays with more than one element and complex numbers are refused
    (``TypeError``) rather than silently converted; NaN is refused (``ValueError``) unless
    ``allow_nan``. Infinities pass: the range checks built on this decide about them.
    """
    if type(value) is float:                          # the common case, without the slower isinstance tests
        if math.isnan(value) and not allow_nan:
            raise ValueError(f"{name} must be a number, not NaN; got {value!r}")
        return value
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number, not a boolean; got {value!r}")
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise TypeError(f"{name} must be a scalar; got an array of shape {value.shape}")
        value = value.item()
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__} {value!r}")
    value = float(value)
    if math.isnan(value) and not allow_nan:
        raise ValueError(f"{name} must be a number, not NaN; got {value!r}")
    return value


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


def check_choice(value, name, allowed):
    """Check that ``value`` is one of ``allowed`` (strings or other hashable choices); return it.

    >>> check_choice("rdp", "accountant", ("rdp", "pld"))
    'rdp'
    >>> check_choice("RDP", "accountant", ("rdp", "pld"))
    Traceback (most recent call last):
    ...
    ValueError: accountant must be one of 'rdp', 'pld'; got 'RDP'
    """
    allowed = tuple(allowed)
    try:
        ok = value in allowed
    except TypeError:  # an unhashable or incomparable value is simply not one of the choices
        ok = False
    if isinstance(value, bool) and not any(a is value for a in allowed):  # True is not the choice 1
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
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


def check_positive_int(value, name, *, maximum=None):
    """An integer >= 1 (and <= ``maximum`` if given); Python or NumPy integer.

    Floats such as 10.0 (and NaN) are refused by type, not truncated.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 1; got {type(value).__name__} {value!r}")
    value = int(value)
    if value < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum:,}; got {value:,}")
    return value


def check_nonnegative_int(value, name):
    """An integer >= 0 (a count that may be zero: false positives, successes, events that did not happen).

    >>> check_nonnegative_int(0, "false_positives")
    0
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 0; got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be an integer >= 0; got {value}")
    return int(value)


def check_confidence(value, name="confidence"):
    """A confidence level strictly inside (0, 1) (of a confidence bound)."""
    return check_in_interval(value, name, 0.0, 1.0, low_open=True, high_open=True)


def check_steps(value, name="steps", *, steps_per_epoch=None):
    """A training run of at most :data:`MAX_STEPS` steps; the one place that limit is checked.

    ``value`` is the number of steps (an integer >= 1) or, with ``steps_per_epoch``, a number of epochs
    (a real > 0), checked *before* rounding: ``round(1e300 / q)`` is no step count. Returns ``value``.

    >>> check_steps(0.5, "epochs", steps_per_epoch=100)
    0.5
    >>> check_steps(2e6, "epochs", steps_per_epoch=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: epochs=2000000.0 means 2e+06 steps; at most MAX_STEPS = 1,000,000 are allowed ...
    """
    if steps_per_epoch is None:
        value = total = check_positive_int(value, name)
    else:
        value = check_positive(value, name)
        total = value * steps_per_epoch
    if not total <= MAX_STEPS:
        shown = f"{total:,}" if isinstance(total, int) else f"{total:.3g}"
        raise ValueError(f"{name}={value!r} means {shown} steps; at most MAX_STEPS = {MAX_STEPS:,} are allowed "
                         f"(dpedu.ground.validation.MAX_STEPS)")
    return value


# Noise of scale (std) at or above this is refused: NumPy would draw inf or nan, and the release would be
# inf or nan rather than private. No sensible query needs noise anywhere near 1e300.
MAX_NOISE_SCALE = 1e300


def check_noise_scale(scale, formula, remedy):
    """Refuse a noise scale that overflows (or is nan): ``formula`` says how it was computed, ``remedy`` what to change.

    >>> check_noise_scale(1e300 * 1e300, "std z * C = 1e300 * 1e300", "a smaller z or C")
    Traceback (most recent call last):
    ...
    ValueError: the noise std z * C = 1e300 * 1e300 overflows; use a smaller z or C
    """
    if not scale < MAX_NOISE_SCALE:
        raise ValueError(f"the noise {formula} overflows; use {remedy}")
    return scale


def check_noise_and_clip(noise_multiplier, clip_norm):
    """z >= 0 and C > 0; C = inf only together with z = 0 (the non-private sanity setting)."""
    noise_multiplier = check_nonnegative(noise_multiplier, "noise_multiplier")
    clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
    if noise_multiplier > 0 and math.isinf(clip_norm):
        raise ValueError(
            "clip_norm=inf gives the clipped sum infinite sensitivity, so no finite noise protects it; "
            "clip_norm=inf is allowed only in the non-private sanity setting noise_multiplier=0"
        )
    if noise_multiplier > 0:
        check_noise_scale(noise_multiplier * clip_norm, f"std noise_multiplier * clip_norm = {noise_multiplier!r} * "
                          f"{clip_norm!r}", "a smaller noise_multiplier or clip_norm")
    return noise_multiplier, clip_norm



def check_count(value, name, maximum=MAX_STEPS):
    """An integer in [1, ``maximum``]: a number of steps or repetitions, refused when absurdly large.

    >>> check_count(100, "steps")
    100
    >>> check_count(10**9, "steps")
    Traceback (most recent call last):
    ...
    ValueError: steps must be at most 1,000,000; got 1,000,000,000
    """
    return check_positive_int(value, name, maximum=maximum)


def check_array(value, name, *, ndim=None, allow_empty=False, finite=True):
    """Convert to a float64 array, refusing non-numeric data, NaN/inf, wrong ``ndim`` and empty input.

    ``finite=False`` leaves out the NaN/inf pass over the entries, for a caller that settles it another way and
    refuses by ``name`` itself (:func:`dpedu.textbook.training.training_data`: finite row norms mean finite rows).
    """
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        arr = value                                    # the common case in training loops: nothing to convert
    else:
        try:
            arr = np.asarray(value)
        except Exception as exc:  # ragged lists and the like
            raise ValueError(f"{name} could not be converted to an array: {exc}") from None
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
            raise TypeError(f"{name} must be numeric; got dtype {arr.dtype}")
        if np.issubdtype(arr.dtype, np.complexfloating):
            raise TypeError(f"{name} must be real; got complex dtype {arr.dtype}")
        arr = arr.astype(np.float64, copy=False)
    if ndim is not None and arr.ndim not in ((ndim,) if isinstance(ndim, (int, np.integer)) else tuple(ndim)):
        raise ValueError(f"{name} must have {ndim} dimension(s); got shape {arr.shape}")
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} is empty; got shape {arr.shape}")
    if finite and not all_finite(arr):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def all_finite(arr):
    """Whether every entry of a real array is finite, in one pass and without an n-sized temporary.

    A sum of finite numbers is finite unless it overflows, and NaN or inf anywhere makes the sum NaN or inf;
    so a finite sum settles it, and only an overflowing one needs the entry-wise check. Raises ``TypeError``
    for anything but an array of real numbers (or booleans).

    >>> all_finite(np.array([1.0, 1e308, 1e308])), all_finite(np.array([1.0, np.nan]))
    (True, False)
    """
    if isinstance(arr, np.ndarray) and arr.dtype == np.float64 and arr.size < 4096:
        return bool(np.isfinite(arr).all())           # the common small case, without the dtype tests below
    if not isinstance(arr, np.ndarray) or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_) \
            or np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"arr must be a numpy array of real numbers; got {type(arr).__name__}"
                        + (f" of dtype {arr.dtype}" if isinstance(arr, np.ndarray) else ""))
    if arr.size < 4096:                                # small: the direct check is cheaper than the errstate
        return bool(np.isfinite(arr).all())
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add.reduce(arr, axis=None)
    return bool(np.isfinite(total)) or bool(np.isfinite(arr).all())


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


def check_features(X, name="X", *, finite=True):
    """A finite 2-D float array of shape (n_samples, n_features) with at least one row and column
    (``finite=False``: see :func:`check_array`)."""
    X = check_array(X, name, ndim=2, finite=finite)
    if X.shape[1] == 0:
        raise ValueError(f"{name} must have at least one feature column; got shape {X.shape}")
    return X


def check_labels(y, n_samples, name="y"):
    """Labels in {-1, +1} as a float array of length ``n_samples``.

    Labels in {0, 1} are *not* converted silently: convert them with ``2 * y - 1`` (or fit
    :class:`dpedu.DPLogisticRegression`, which accepts any two labels). The refusal does not print the labels
    found: they are private data.
    """
    y = check_array(y, name, ndim=1, allow_empty=n_samples == 0)
    if y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} labels but X has {n_samples} rows")
    if not np.all(np.abs(y) == 1.0):                  # one pass, no sort: every label is -1 or +1
        hint = " (labels in {0, 1}: pass 2 * y - 1)" if np.all((y == 0.0) | (y == 1.0)) else ""
        raise ValueError(f"{name} must contain only -1 and +1{hint}; it holds other values")
    return y


def check_batch(theta, batch, n_features, n_params):
    """A model's check of a training loop's batch: a ``TrainingData`` (``X``, ``y``, ``row_norms``, checked when it
    was made) of ``n_features`` columns, and ``theta`` of shape ``(n_params,)``. Only shapes: nothing is copied."""
    if not all(hasattr(batch, name) for name in ("X", "y", "row_norms")):
        raise TypeError(f"batch must be a TrainingData (dpedu.textbook.training.training_data(X, y)[B]); "
                        f"got {type(batch).__name__}")
    if batch.X.shape[1] != n_features or np.shape(theta) != (n_params,):
        expected = f"n_features={n_features}" + (f" and n_params={n_params}" if n_params != n_features else "")
        raise ValueError(f"batch has {batch.X.shape[1]} features and theta shape {np.shape(theta)}; the model "
                         f"expects {expected}")


def check_norms(norms, name="norms"):
    """A float array of norms: real, >= 0, not NaN (``inf`` allowed: such a row is clipped to 0).

    Raises ``TypeError`` for non-real input and ``ValueError`` naming ``name`` for NaN or negative entries.

    >>> check_norms([0, 2.5])
    array([0. , 2.5])
    """
    arr = np.asarray(norms)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be an array of real numbers; got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 (inf allowed), never NaN or negative")
    return arr


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


class Budget(abc.ABC):
    """What a ``budget=`` argument must be: an object that can be charged (``spend``) and asked (``can_afford``).

    :class:`dpedu.accountants.budget.PrivacyBudget` is one (it registers itself); any class with callable ``spend``
    and ``can_afford`` methods counts as one too, so a student's own budget can be passed. It lives here,
    in the lowest layer, so that every module can check a budget argument without importing the budget.
    """

    @abc.abstractmethod
    def spend(self, history, count=None):
        """Charge ``history``, or raise before recording anything."""

    @abc.abstractmethod
    def can_afford(self, history, count=None):
        """Whether ``history`` could be charged now."""

    @classmethod
    def __subclasshook__(cls, other):
        if cls is Budget:
            has = all(callable(getattr(other, method, None)) for method in ("spend", "can_afford"))
            return True if has else NotImplemented
        return NotImplemented


def check_budget(value, name="budget"):
    """``None`` (no budget) or a :class:`Budget`; anything else is a ``TypeError`` naming the argument.

    Call it with the other argument checks, before any work, so a wrong ``budget=1.0`` fails with a
    message rather than an ``AttributeError`` deep inside (and never after noise was drawn).

    >>> check_budget(None) is None
    True
    >>> check_budget(1.0)
    Traceback (most recent call last):
    ...
    TypeError: budget must be None or a privacy budget (e.g. dpedu.PrivacyBudget(epsilon, delta)); got float 1.0
    """
    if value is None or isinstance(value, Budget):
        return value
    raise TypeError(f"{name} must be None or a privacy budget (e.g. dpedu.PrivacyBudget(epsilon, delta)); "
                    f"got {type(value).__name__} {value!r}")
