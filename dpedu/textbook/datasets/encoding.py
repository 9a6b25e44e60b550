r"""The book's encoding of the Adult rows: one-hot categories, numeric columns in [0, 1], labels ±1.

:func:`encode_split` turns the text of ``adult.data`` and ``adult.test`` into arrays. Every statistic
it uses (the categories, each numeric column's minimum and maximum) comes from the training rows
only. :data:`ADULT_NORM_BOUND` is the public bound :math:`\sqrt{14}` on every encoded row's L2 norm.

>>> round(ADULT_NORM_BOUND**2, 12)
14.0
>>> text = ("39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, "
...         "Male, 2174, 0, 40, United-States, <=50K\n\n|a comment line\n")
>>> [row[0] for row in parse_rows(text, "example")], len(parse_rows(text, "example")[0])
(['39'], 15)
"""

from __future__ import annotations

import math

import numpy as np

from .files import AdultDataError

__all__ = [
    "ADULT_CATEGORICAL_COLUMNS",
    "ADULT_COLUMNS",
    "ADULT_NORM_BOUND",
    "ADULT_NUMERIC_COLUMNS",
    "encode_split",
    "parse_rows",
]

ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
    "income",
)  # fmt: skip
ADULT_NUMERIC_COLUMNS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
ADULT_CATEGORICAL_COLUMNS = (
    "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country",
)  # fmt: skip

# Each numeric feature lies in [0, 1] and each categorical column contributes at most one 1, so
# ||x||^2 <= 6 * 1^2 + 8 * 1^2 = 14. The bound comes from the encoding, not from the data.
ADULT_NORM_BOUND = math.sqrt(len(ADULT_NUMERIC_COLUMNS) + len(ADULT_CATEGORICAL_COLUMNS))

_LABELS = {">50K": 1.0, "<=50K": -1.0}


def parse_rows(text, source):
    """Complete rows (15 fields each) as lists of strings, skipping comments, blanks and '?' rows."""
    rows = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("|"):  # blank, or '|1x3 Cross validator' in adult.test
            continue
        fields = line.split(", ")
        if len(fields) != len(ADULT_COLUMNS):
            raise AdultDataError(f"{source} line {line_number}: expected {len(ADULT_COLUMNS)} fields "
                                 f"separated by ', ', got {len(fields)}")
        if "?" in fields:  # a missing value
            continue
        rows.append(fields)
    if not rows:
        raise AdultDataError(f"{source} holds no complete rows")
    return rows


def _labels(values, source):
    try:
        return np.array([_LABELS[v.removesuffix(".")] for v in values])  # adult.test writes '>50K.'
    except KeyError as exc:
        raise AdultDataError(f"{source}: unknown income label {exc.args[0]!r}; expected '>50K' or '<=50K'") from None


def _fit_encoding(train_columns):
    """Per feature column: ('numeric', (min, max)) or ('categorical', sorted categories), from training rows."""
    encoding = {}
    for column in ADULT_COLUMNS[:-1]:
        if column in ADULT_NUMERIC_COLUMNS:
            values = np.array(train_columns[column], dtype=np.float64)
            low, high = values.min(), values.max()
            if not high > low:
                raise AdultDataError(f"numeric column {column!r} is constant in the training rows")
            encoding[column] = ("numeric", (low, high))
        else:
            encoding[column] = ("categorical", sorted(set(train_columns[column])))
    return encoding


def _feature_names(encoding):
    names = []
    for column, (kind, params) in encoding.items():
        names.extend([column] if kind == "numeric" else [f"{column}={category}" for category in params])
    return tuple(names)


def _transform(columns, encoding, n_features):
    """Encode parsed columns with a fitted encoding; one column block after another, in file order."""
    n_rows = len(columns[ADULT_COLUMNS[0]])
    X = np.zeros((n_rows, n_features))
    start = 0
    for column, (kind, params) in encoding.items():
        if kind == "numeric":
            low, high = params
            values = np.array(columns[column], dtype=np.float64)
            # training rows land in [0, 1] exactly; test values outside the training range are clipped
            X[:, start] = np.clip((values - low) / (high - low), 0.0, 1.0)
            start += 1
        else:
            index = {category: i for i, category in enumerate(params)}
            codes = np.array([index.get(v, -1) for v in columns[column]])  # -1: unseen in training
            seen = np.flatnonzero(codes >= 0)  # an unseen category leaves its block all zeros
            X[seen, start + codes[seen]] = 1.0
            start += len(params)
    return X


def encode_split(train_text, test_text, train_source, test_source):
    """Parse and encode both files; return ``X_train, y_train, X_test, y_test, feature_names``.

    ``*_source`` name the files in error messages. The encoding is fitted on the training rows.
    """
    train_rows = parse_rows(train_text, train_source)
    test_rows = parse_rows(test_text, test_source)
    train_columns = dict(zip(ADULT_COLUMNS, zip(*train_rows)))
    test_columns = dict(zip(ADULT_COLUMNS, zip(*test_rows)))
    encoding = _fit_encoding(train_columns)  # training rows only
    names = _feature_names(encoding)
    X_train = _transform(train_columns, encoding, len(names))
    X_test = _transform(test_columns, encoding, len(names))
    y_train = _labels(train_columns["income"], train_source)
    y_test = _labels(test_columns["income"], test_source)
    return X_train, y_train, X_test, y_test, names
