r"""The UCI Adult census data: find the files, verify them, and encode them as in the book.

:func:`load_adult` reads the original UCI files ``adult.data`` / ``adult.test`` (plain or gzipped),
checks their SHA-256 (:data:`dpedu.textbook.datasets.files.ADULT_FILES`), and encodes them the way
*Programming Differential Privacy* (ch. 12) does: one-hot categories, numeric columns scaled to
[0, 1], labels in {-1, +1}. Every encoded row then has :math:`\|x\|_2 \le \sqrt{14}`, a bound that
follows from the encoding alone (:data:`ADULT_NORM_BOUND`). A copy of the files ships with the
package, so no download is needed; :mod:`dpedu.textbook.datasets.files` says where else the loader looks.

>>> round(ADULT_NORM_BOUND**2, 12)
14.0
"""

from __future__ import annotations

import functools
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from dpedu.ground.validation import check_in_interval

from .encoding import ADULT_NORM_BOUND, encode_split
from .files import (
    ADULT_BASE_URLS, ADULT_FILES, MAX_TIMEOUT, AdultDataError, find_complete_dir, find_file, read_verified, search_dirs,
    where_to_put_them
)

__all__ = ["AdultData", "load_adult"]


@dataclass(frozen=True, eq=False, repr=False)
class AdultData:
    r"""The encoded Adult split; unpacks as ``X_train, y_train, X_test, y_test``.

    Attributes
    ----------
    X_train, X_test : ndarray of shape (n, 104), float64
        Encoded features (see :func:`load_adult`).
    y_train, y_test : ndarray of shape (n,), float64
        Labels in {-1, +1}; +1 means income >50K.
    feature_names : tuple of str
        ``'age'``, ``'workclass=Private'``, ... in column order.
    train_file, test_file : pathlib.Path
        The files that were read.
    norm_bound : float
        :math:`\sqrt{14}`, a public bound on every row's L2 norm (:data:`ADULT_NORM_BOUND`).
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    feature_names: tuple[str, ...]
    train_file: Path
    test_file: Path
    norm_bound: ClassVar[float] = ADULT_NORM_BOUND

    def __iter__(self):
        return iter((self.X_train, self.y_train, self.X_test, self.y_test))

    @property
    def n_train(self) -> int:
        return self.X_train.shape[0]

    @property
    def n_test(self) -> int:
        return self.X_test.shape[0]

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]

    def __repr__(self) -> str:
        return (
            f"AdultData(n_train={self.n_train}, n_test={self.n_test}, n_features={self.n_features}, "
            f"train_file='{self.train_file}', test_file='{self.test_file}')"
        )


def load_adult(data_home=None, *, download=True, urls=None, timeout=30.0):
    r"""Load the UCI Adult data set with the standard split (train = ``adult.data``, test = ``adult.test``).

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        A directory holding ``adult.data`` and ``adult.test`` (each plain or ``.gz``); not ``''``.
        The first directory holding both files wins, in this order: ``data_home``; the directory
        in the ``DPEDU_DATA`` environment variable; the project cache ``<repo>/data/adult/``
        (:data:`~dpedu.textbook.datasets.files.CACHE_DIR`); the copy shipped with the package
        (:data:`~dpedu.textbook.datasets.files.PACKAGE_DIR`). So the shipped copy is used unless you point
        elsewhere. A directory named here or in ``DPEDU_DATA`` that holds only one of the two files is
        refused (``ValueError`` naming the missing file), never passed over for another copy.
    download : bool, default True
        If no searched directory holds both files (for instance in an installation without the
        shipped copy), download the missing ones from the UCI archive into ``data_home`` if given,
        else into ``$DPEDU_DATA`` if set, else into the project cache.
    urls : sequence of str, optional
        Base URLs to try in order (each followed by the file name); default
        :data:`~dpedu.textbook.datasets.files.ADULT_BASE_URLS`.
    timeout : float, default 30.0
        Seconds, in (0, 3600] (:data:`~dpedu.textbook.datasets.files.MAX_TIMEOUT`), allowed for downloading
        one file from one address *in total* before the next address is tried.

    Returns
    -------
    AdultData
        Attributes ``X_train`` (30162, 104), ``y_train``, ``X_test`` (15060, 104), ``y_test``,
        ``feature_names``, ``n_train``, ``n_test``, ``norm_bound``, ``train_file``, ``test_file``.
        It unpacks as ``X_train, y_train, X_test, y_test = load_adult()``. The arrays are fresh copies.

    Raises
    ------
    AdultDataError
        (an :class:`OSError`) if the files are missing and ``download=False``, if every URL fails,
        or if a file (local or downloaded) does not match its SHA-256 in
        :data:`~dpedu.textbook.datasets.files.ADULT_FILES` (a ``.gz`` is decompressed in chunks and refused
        as soon as it outgrows the expected size). The message lists the directories searched,
        ``DPEDU_DATA`` and the URLs. A failed download leaves no file behind
        (:mod:`dpedu.textbook.datasets.download`).
    TypeError, ValueError
        For bad arguments (for example ``data_home`` naming a file or ``''``, ``timeout=1e300``), and
        for a ``data_home`` (or ``DPEDU_DATA``) directory that holds one of the two files but not the
        other (the message names the missing file).

    Notes
    -----
    Preprocessing (plain Python parsing; fields are separated by ``', '``):

    * the test file's first line (``|1x3 Cross validator``), blank lines and the ``'.'`` after
      the test labels are dropped, and so is every row with a missing value (``'?'``);
    * the 8 categorical columns (:data:`ADULT_CATEGORICAL_COLUMNS`) are one-hot encoded with the
      sorted categories seen in the **training** rows; a test category never seen in training
      encodes as all zeros (none occurs in the standard split);
    * the 6 numeric columns (:data:`ADULT_NUMERIC_COLUMNS`) are scaled to [0, 1] with the training
      minimum and maximum, :math:`(x - \min)/(\max - \min)`; test values outside the training range
      are clipped into [0, 1] (the clip uses only training statistics, nothing from the test rows);
    * labels: ``'>50K'`` :math:`\to +1`, ``'<=50K'`` :math:`\to -1`.

    Columns keep the file's order: ``age``, ``workclass=...``, ``fnlwgt``, ``education=...``, ...

    **Public norm bound.** With 6 numeric features in [0, 1] and at most one 1 per categorical
    column,

    .. math:: \|x\|_2^2 \le 6 + 8 = 14, \qquad \|x\|_2 \le \sqrt{14} \approx 3.742

    for every row, whatever the data. This bound is derived from the encoding, not read off the
    data, so a student may use it as a clip norm without spending privacy budget (input clipping
    at :math:`C \ge \sqrt{14}` never triggers; [Nea21]_, "Sensitivity of the Gradient"). The
    min/max used for scaling do come from the training data, as in the book; a strict DP pipeline
    would take them from public knowledge of the census codebook instead. The bound holds either way.

    Parsed arrays are cached in memory per file (path, size, modification time, checksum), so a
    second call only checks the files' ``stat`` and copies the arrays.

    References
    ----------
    .. [BK96] Becker, B. & Kohavi, R. (1996). Adult. UCI Machine Learning Repository.
       https://doi.org/10.24432/C5XW20 (CC BY 4.0).
    .. [Koh96] Kohavi, R. (1996). Scaling Up the Accuracy of Naive-Bayes Classifiers: a
       Decision-Tree Hybrid. KDD-96.
    .. [Nea21] Near, J. & Abuah, C. Programming Differential Privacy, ch. 12 (the Adult encoding).

    Examples
    --------
    >>> round(AdultData.norm_bound**2, 12)  # the public bound, known before any data is read
    14.0
    >>> X_train, y_train, X_test, y_test = load_adult()
    >>> X_train.shape, X_test.shape
    ((30162, 104), (15060, 104))
    """
    if not isinstance(download, bool):
        raise TypeError(f"download must be True or False; got {type(download).__name__} {download!r}")
    urls = _check_urls(ADULT_BASE_URLS if urls is None else urls)
    timeout = check_in_interval(timeout, "timeout", 0.0, MAX_TIMEOUT, low_open=True)

    searched = search_dirs(data_home)
    found = find_complete_dir(searched)
    if found is None:
        # Download into the first directory named explicitly (argument, then environment), else the cache.
        target = searched[0][1]
        found = {name: find_file(target, name) for name in ADULT_FILES}
        missing = [name for name, path in found.items() if path is None]
        if not download:
            raise AdultDataError(_missing_message(searched, missing, urls))
        from .download import download as fetch

        for name in missing:
            found[name] = fetch(name, target, urls, timeout, searched)

    train_file, test_file = found["adult.data"], found["adult.test"]
    arrays = _load_cached(_file_key(train_file, "adult.data"), _file_key(test_file, "adult.test"))
    X_train, y_train, X_test, y_test, feature_names = arrays
    return AdultData(
        X_train=X_train.copy(),
        y_train=y_train.copy(),
        X_test=X_test.copy(),
        y_test=y_test.copy(),
        feature_names=feature_names,
        train_file=train_file,
        test_file=test_file,
    )


def _missing_message(searched, missing, urls):
    return (
        f"The Adult data files were not found ({', '.join(missing)} missing) and download=False.\n"
        + where_to_put_them(searched, urls)
    )


def _check_urls(urls):
    if isinstance(urls, (str, bytes)) or not isinstance(urls, (tuple, list)):
        raise TypeError(f"urls must be a tuple or list of base URL strings; got {type(urls).__name__} {urls!r}")
    if len(urls) == 0:
        raise ValueError("urls must hold at least one base URL; got an empty sequence")
    for url in urls:
        if not isinstance(url, str):
            raise TypeError(f"urls must contain strings; got {type(url).__name__} {url!r}")
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"urls must be http:// or https:// addresses; got {url!r}")
    return tuple(urls)


# --- verify and parse ----------------------------------------------------------------------------


def _file_key(path, name):
    """Cache key: the parse is redone if the file (or the expected checksum) changes."""
    stat = path.stat()
    return (str(path), stat.st_size, stat.st_mtime_ns, name, ADULT_FILES[name].sha256)



@functools.lru_cache(maxsize=4)
def _load_cached(train_key, test_key):
    """Verify, parse and encode both files; the arrays are read-only (callers get copies)."""
    train_path, test_path = Path(train_key[0]), Path(test_key[0])
    X_train, y_train, X_test, y_test, names = encode_split(
        read_verified(train_path, "adult.data"), read_verified(test_path, "adult.test"), train_path, test_path
    )
    for array in (X_train, y_train, X_test, y_test):
        array.flags.writeable = False
    return X_train, y_train, X_test, y_test, names


