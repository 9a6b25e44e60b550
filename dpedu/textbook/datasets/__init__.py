r"""Datasets: the UCI Adult census data (shipped with the package, checksum-verified) and a toy problem.

:func:`load_adult` reads the original UCI files ``adult.data`` / ``adult.test``, checks their
SHA-256, and encodes them as the book *Programming Differential Privacy* (ch. 12) does: one-hot
categories, numeric columns scaled to [0, 1], labels in {-1, +1}, every row with
:math:`\|x\|_2 \le \sqrt{14}` (:data:`ADULT_NORM_BOUND`). :func:`make_toy` draws a small synthetic
logistic-regression problem for fast tests and doctests.

The package is split by what a reader wants to know:

* :mod:`dpedu.textbook.datasets.adult`: :func:`load_adult`;
* :mod:`dpedu.textbook.datasets.encoding`: the book's encoding of the rows;
* :mod:`dpedu.textbook.datasets.files`: where the files are looked for (``data_home``, ``DPEDU_DATA``,
  ``<repo>/data/adult/``, then the copy shipped in ``dpedu/data/adult/``) and how a copy is verified;
* :mod:`dpedu.textbook.datasets.download`: the HTTP download, imported only when no directory holds the files;
* :mod:`dpedu.textbook.datasets.toy`: :func:`make_toy`.

The Adult data: Becker, B. & Kohavi, R. (1996), UCI Machine Learning Repository,
doi:10.24432/C5XW20, licensed CC BY 4.0; see ``data/README.md`` and ``dpedu/data/adult/README.txt``.

>>> X, y = make_toy(n=100, d=3, rng=0)
>>> X.shape, sorted(set(y.tolist()))
((100, 3), [-1.0, 1.0])
"""

from .adult import AdultData, load_adult
from .encoding import ADULT_CATEGORICAL_COLUMNS, ADULT_COLUMNS, ADULT_NORM_BOUND, ADULT_NUMERIC_COLUMNS
from .files import ADULT_BASE_URLS, ADULT_FILES, CACHE_DIR, PACKAGE_DIR, AdultDataError, FileDigest
from .toy import make_toy

__all__ = [
    "ADULT_BASE_URLS",
    "ADULT_CATEGORICAL_COLUMNS",
    "ADULT_COLUMNS",
    "ADULT_FILES",
    "ADULT_NORM_BOUND",
    "ADULT_NUMERIC_COLUMNS",
    "AdultData",
    "AdultDataError",
    "CACHE_DIR",
    "FileDigest",
    "PACKAGE_DIR",
    "load_adult",
    "make_toy",
]
