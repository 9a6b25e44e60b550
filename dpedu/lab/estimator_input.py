r"""What the scikit-learn estimators accept as X and y: one set of rules for all of them.

:class:`dpedu.DPLogisticRegression` and the classifiers of :mod:`dpedu.lab.learner_estimators` are binary
classifiers. They follow scikit-learn's conventions (``validate_data``, ``n_features_in_``,
``NotFittedError`` before ``fit``) and refuse, with a message naming the argument:

* X that is complex, holds strings, is not 2-D, empty, holds NaN or inf, or has an entry above :data:`MAX_ABS_FEATURE`
  in absolute value (the scores :math:`x\cdot\theta` would overflow float64);
* y that does not hold exactly two labels of one type (all strings or all numbers);
* at prediction time, X with another number of features than at ``fit``.

No message prints a value of X or y: a refusal says what is wrong, never which record is.

>>> import numpy as np
>>> from sklearn.base import BaseEstimator
>>> X, classes, y_pm, scratch = fit_data(BaseEstimator(), [[0.0, 1.0], [1.0, 0.0]], ["no", "yes"])
>>> classes.tolist(), y_pm.tolist(), scratch.n_features_in_
(['no', 'yes'], [-1.0, 1.0], 2)
>>> fit_data(BaseEstimator(), [[0.0], [1.0]], [1, 1])
Traceback (most recent call last):
...
ValueError: y must hold exactly 2 classes (binary classification); got 1 class
"""

from __future__ import annotations

import copy
import numbers

import numpy as np
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["MAX_ABS_FEATURE", "fit_data", "predict_data", "feature_attributes"]

#: The largest absolute feature value the estimators accept. Beyond it the margins x . theta overflow float64 and
#: training returns inf/NaN weights; standardise the features instead (no real data set needs 1e100).
MAX_ABS_FEATURE = 1e100

_NO_Y = object()                                        # predict: no y (y=None in fit is an error)


def _refuse_kind(X, name="X"):
    """Refuse complex and wrongly-dimensioned X with a message naming X (before scikit-learn's checks)."""
    try:
        complex_input = np.iscomplexobj(X)
        ndim = np.ndim(X) if hasattr(X, "ndim") or isinstance(X, (list, tuple)) else None
    except (ValueError, TypeError):                    # ragged lists and the like: scikit-learn explains
        return
    if complex_input:
        dtype = getattr(X, "dtype", "complex")
        raise ValueError(f"{name} must be real, got complex dtype {dtype} (Complex data not supported)")
    try:
        kind = np.asarray(X).dtype.kind if not hasattr(X, "dtype") or isinstance(X, np.ndarray) else X.dtype.kind
    except (ValueError, TypeError):
        return
    if kind in "USa":                                  # strings are refused, never converted to numbers
        raise TypeError(f"{name} must hold numbers; got strings (dtype kind {kind!r}): convert the columns yourself")
    if ndim is not None and ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n_samples, n_features); got {ndim} dimension(s), "
                         f"shape {np.shape(X)}. Expected 2D array. Reshape your data with X.reshape(-1, 1) "
                         f"(one feature) or X.reshape(1, -1) (one sample)")


def _refuse_magnitude(X, name="X"):
    """Refuse |x| > MAX_ABS_FEATURE: the scores x . theta would overflow float64 (then inf, -inf or NaN at random).
    The message gives the limit, not the value found (a value of the data)."""
    if X.size and float(np.max(np.abs(X))) > MAX_ABS_FEATURE:
        raise ValueError(f"{name} has a value of magnitude above MAX_ABS_FEATURE = {MAX_ABS_FEATURE:g}: x . theta "
                         f"would overflow; standardise the features")


def _refuse_mixed_labels(y, name="y"):
    """Labels must be all strings or all numbers: ``['a', 1]`` cannot be ordered into ``classes_``."""
    values = np.asarray(y, dtype=object).ravel() if not hasattr(y, "dtype") or y.dtype == object else None
    if values is None:
        return
    kinds = {"str" if isinstance(v, str) else "number" if isinstance(v, numbers.Number) else "other"
             for v in values}
    if len(kinds) > 1:
        names = sorted({type(v).__name__ for v in values})
        raise ValueError(f"{name} must have labels of one type; got {' and '.join(names)}")


def _validate(estimator, X, y=_NO_Y, *, reset):
    """scikit-learn's ``validate_data`` (scikit-learn >= 1.6, the floor in requirements.txt), naming X or y."""
    _refuse_kind(X)
    try:
        # scikit-learn's quick finiteness test sums X: rows of +-1.7e308 make that sum inf - inf, a bare NumPy
        # warning, although X is finite; _refuse_magnitude then refuses such X by name.
        with np.errstate(over="ignore", invalid="ignore"):
            if y is _NO_Y:
                return validate_data(estimator, X, dtype=np.float64, reset=reset)
            return validate_data(estimator, X, y, dtype=np.float64, reset=reset)
    except (ValueError, TypeError) as exc:  # scikit-learn's messages do not always say which argument
        message = str(exc).splitlines()[0]
        named = "X" if y is _NO_Y else "X or y"
        if message.startswith(("X ", "y ", "X has", "Input y", "Input X")):
            named = ""
        kind = ValueError if isinstance(exc, ValueError) else TypeError
        raise kind(f"invalid {named}: {message}" if named else message) from None


def fit_data(estimator, X, y):
    """``(X, classes, y_pm, scratch)`` for ``estimator.fit``: X as a checked float array, the two labels in order,
    y as -1 (``classes[0]``) / +1 (``classes[1]``), and a shallow copy of ``estimator`` carrying what scikit-learn
    records at fit (``n_features_in_``, ``feature_names_in_``; see :func:`feature_attributes`). ``estimator`` itself
    is not changed, so a refused fit leaves it as it was."""
    _refuse_mixed_labels(y)
    scratch = copy.copy(estimator)                     # scikit-learn's checks record n_features_in_ on it
    X, y = _validate(scratch, X, y, reset=True)
    check_classification_targets(y)
    y_type = type_of_target(y, input_name="y")
    if y_type != "binary":
        raise ValueError(f"Only binary classification is supported. The type of the target y is {y_type}.")
    classes, y_index = np.unique(y, return_inverse=True)
    if len(classes) != 2:                              # a constant y is "binary" to type_of_target
        raise ValueError(f"y must hold exactly 2 classes (binary classification); got {len(classes)} class")
    _refuse_magnitude(X)
    return X, classes, 2.0 * y_index - 1.0, scratch


def feature_attributes(scratch, estimator):
    """The fitted attributes scikit-learn's checks recorded on ``scratch`` (``n_features_in_`` and, for named
    columns, ``feature_names_in_``), to set on ``estimator`` with the rest; one it no longer has is deleted from
    ``estimator`` now (a refit on unnamed columns)."""
    fitted = {}
    for name in ("n_features_in_", "feature_names_in_"):
        if hasattr(scratch, name):
            fitted[name] = getattr(scratch, name)
        elif name in vars(estimator):
            delattr(estimator, name)
    return fitted


def predict_data(estimator, X):
    """X for ``predict``/``decision_function`` of a fitted ``estimator``: ``NotFittedError`` before ``fit``; X
    checked as at fit and against ``n_features_in_``; entries above :data:`MAX_ABS_FEATURE` refused (an overflowing
    score has no reliable sign)."""
    check_is_fitted(estimator)
    X = _validate(estimator, X, reset=False)
    _refuse_magnitude(X)
    return X
