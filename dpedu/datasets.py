r"""Datasets: the UCI Adult census data (checksum-verified) and a tiny synthetic problem.

:func:`load_adult` reads the original UCI files ``adult.data`` / ``adult.test`` (plain or gzipped), checks
their SHA-256 against the checksums kept in this module, and encodes them the way the book
*Programming Differential Privacy* (ch. 12) does: one-hot categories, numeric columns scaled to
[0, 1], labels in {-1, +1}. Every encoded row then has :math:`\|x\|_2 \le \sqrt{14}`, a bound that
follows from the encoding alone (see :data:`ADULT_NORM_BOUND`). :func:`make_toy` draws a small
synthetic logistic-regression problem for fast tests and doctests.

Where the Adult files are looked for, in order: the ``data_home`` argument, the ``DPEDU_DATA``
environment variable, then the project cache ``<repo>/data/adult/`` (git-ignored). See
``data/README.md`` for the source, licence (CC BY 4.0), citation and checksums.

>>> X, y = make_toy(n=100, d=3, rng=0)
>>> X.shape, sorted(set(y.tolist()))
((100, 3), [-1.0, 1.0])
>>> bool(np.linalg.norm(X, axis=1).max() <= 1.0)
True
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import http.client
import math
import os
import tempfile
import urllib.parse
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, NamedTuple

import numpy as np

from dpedu.validation import check_positive, check_positive_int, check_rng

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
    "load_adult",
    "make_toy",
]

# Base addresses tried in order; each holds the plain files ``adult.data`` and ``adult.test``.
# The second is the same UCI archive over plain HTTP (for networks whose TLS interception breaks
# HTTPS); the SHA-256 check below makes any address safe to use.
ADULT_BASE_URLS = (
    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/",
    "http://archive.ics.uci.edu/ml/machine-learning-databases/adult/",
)


class FileDigest(NamedTuple):
    """SHA-256 and size in bytes of a file's *decompressed* content."""

    sha256: str
    n_bytes: int


# Checksums of the plain UCI files. A gzipped copy is verified after decompression, so
# ``adult.data`` and ``adult.data.gz`` pass or fail the same check.
ADULT_FILES = {
    "adult.data": FileDigest("5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d", 3_974_305),
    "adult.test": FileDigest("a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05", 2_003_153),
}

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

# <repo>/data/adult/ (dpedu is installed editable, so this is inside the checkout; git-ignored).
CACHE_DIR = Path(__file__).resolve().parents[1] / "data" / "adult"

_ENV_VAR = "DPEDU_DATA"
_LABELS = {">50K": 1.0, "<=50K": -1.0}


class AdultDataError(OSError):
    """The Adult files are missing, could not be downloaded, or fail their checksum.

    A subclass of :class:`OSError`: the problem is with files or the network, not with the
    arguments (bad arguments raise :class:`ValueError` / :class:`TypeError`). The message says
    where the files were looked for and where to get them.
    """


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
        A directory holding ``adult.data`` and ``adult.test`` (each plain or ``.gz``). Looked at first;
        then the directory in the ``DPEDU_DATA`` environment variable; then the project cache
        :data:`CACHE_DIR` (``<repo>/data/adult/``).
    download : bool, default True
        If no searched directory holds both files, download the missing ones from the UCI archive
        into ``data_home`` if given, else into ``$DPEDU_DATA`` if set, else into the cache.
    urls : sequence of str, optional
        Base URLs to try in order (each followed by the file name); default :data:`ADULT_BASE_URLS`.
    timeout : float, default 30.0
        Seconds to wait on each network operation before trying the next URL.

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
        or if a file (local or downloaded) does not match its SHA-256 in :data:`ADULT_FILES`. The
        message lists the directories searched, ``DPEDU_DATA`` and the URLs. A failed download
        leaves no file behind: it is written to a temporary file in the target directory, verified,
        then renamed.
    TypeError, ValueError
        For bad arguments (for example ``data_home`` naming a file).

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
    >>> X_train, y_train, X_test, y_test = load_adult()  # doctest: +SKIP
    >>> X_train.shape, X_test.shape  # doctest: +SKIP
    ((30162, 104), (15060, 104))
    """
    if not isinstance(download, bool):
        raise TypeError(f"download must be True or False; got {type(download).__name__} {download!r}")
    urls = _check_urls(ADULT_BASE_URLS if urls is None else urls)
    timeout = check_positive(timeout, "timeout")

    searched = _search_dirs(data_home)
    found = _find_complete_dir(searched)
    if found is None:
        # Download into the first directory named explicitly (argument, then environment), else the cache.
        target = searched[0][1]
        found = {name: _find_file(target, name) for name in ADULT_FILES}
        missing = [name for name, path in found.items() if path is None]
        if not download:
            raise AdultDataError(_missing_message(searched, missing, urls))
        for name in missing:
            found[name] = _download(name, target, urls, timeout, searched)

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


# --- where the files are -------------------------------------------------------------------------


def _as_dir(value, name):
    """A directory path (which may not exist yet); refuse non-paths and existing non-directories."""
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike naming a directory; got {type(value).__name__} {value!r}")
    path = Path(value).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name} must name a directory that holds the Adult files; got a file: {path}")
    return path


def _search_dirs(data_home):
    """[(label, directory)] in search order; the first entry is where a download goes."""
    dirs = []
    if data_home is not None:
        dirs.append(("data_home argument", _as_dir(data_home, "data_home")))
    env = os.environ.get(_ENV_VAR, "")
    if env:
        dirs.append((f"{_ENV_VAR} environment variable", _as_dir(env, _ENV_VAR)))
    dirs.append(("project cache", Path(CACHE_DIR)))
    return dirs


def _find_file(directory, name):
    """``directory/name`` or ``directory/name.gz``, whichever exists first; else None."""
    for candidate in (directory / name, directory / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def _find_complete_dir(searched):
    """{name: path} from the first directory holding both files, or None."""
    for _, directory in searched:
        found = {name: _find_file(directory, name) for name in ADULT_FILES}
        if all(path is not None for path in found.values()):
            return found
    return None


def _where_to_put_them(searched, urls):
    dirs = "\n".join(f"  - {directory}  ({label})" for label, directory in searched)
    links = "\n".join(f"  - {base.rstrip('/')}/{name}" for base in urls for name in ADULT_FILES)
    return (
        f"Directories searched, in order:\n{dirs}\n"
        f"Put adult.data and adult.test (plain or .gz) in one of them, or point the {_ENV_VAR} "
        f"environment variable (or load_adult(data_home=...)) at a directory holding them. "
        f"The files are available at:\n{links}\n"
        f"(UCI Machine Learning Repository, Adult, doi:10.24432/C5XW20; see data/README.md)."
    )


def _missing_message(searched, missing, urls):
    return (
        f"The Adult data files were not found ({', '.join(missing)} missing) and download=False.\n"
        + _where_to_put_them(searched, urls)
    )


# --- download ------------------------------------------------------------------------------------


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


def _download(name, directory, urls, timeout, searched):
    """Try each base URL in turn; return the path of the verified file or raise AdultDataError."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AdultDataError(f"cannot create {directory} to download {name} into: {exc}\n"
                             + _where_to_put_them(searched, urls)) from exc
    opener = urllib.request.build_opener()  # reads proxy settings from the environment now
    failures = []
    for base in urls:
        url = f"{base.rstrip('/')}/{name}"
        try:
            return _fetch_verified(opener, url, directory / name, ADULT_FILES[name], timeout)
        except (OSError, http.client.HTTPException) as exc:  # URLError, timeouts, bad checksum...
            failures.append(f"  - {url}: {exc}")
    raise AdultDataError(
        f"Could not download {name} into {directory}; every address failed:\n" + "\n".join(failures) + "\n"
        + _where_to_put_them(searched, urls)
    )


def _fetch_verified(opener, url, destination, expected, timeout):
    """Stream ``url`` to a temporary file next to ``destination``, verify it, then rename it.

    The temporary file is removed on any failure, so ``destination`` is either absent or verified.
    """
    fd, tmp_name = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".part", dir=destination.parent)
    try:
        digest, received = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out, opener.open(url, timeout=timeout) as response:
            announced = response.headers.get("Content-Length")
            while chunk := response.read(1 << 16):
                received += len(chunk)
                if received > expected.n_bytes:  # also stops a server that never ends the body
                    raise AdultDataError(f"response is larger than the expected {expected.n_bytes} bytes")
                digest.update(chunk)
                out.write(chunk)
        # http.client does not flag a body shorter than its Content-Length; check it ourselves.
        if announced is not None and announced.isdigit() and received != int(announced):
            raise AdultDataError(f"incomplete download: received {received} of {announced} bytes")
        _check_digest(destination.name, url, digest.hexdigest(), received, expected)
        os.chmod(tmp_name, 0o644)  # mkstemp makes it private (0o600); the data are public
        os.replace(tmp_name, destination)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return destination


def _check_digest(name, source, actual_sha256, n_bytes, expected):
    if actual_sha256 != expected.sha256:
        raise AdultDataError(
            f"checksum mismatch for {name} from {source}: expected SHA-256 {expected.sha256} "
            f"({expected.n_bytes} bytes), got {actual_sha256} ({n_bytes} bytes)"
        )


# --- verify and parse ----------------------------------------------------------------------------


def _file_key(path, name):
    """Cache key: the parse is redone if the file (or the expected checksum) changes."""
    stat = path.stat()
    return (str(path), stat.st_size, stat.st_mtime_ns, name, ADULT_FILES[name].sha256)


def _read_verified(path, name):
    """The decompressed text of ``path`` after checking it against ``ADULT_FILES[name]``."""
    expected = ADULT_FILES[name]
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise AdultDataError(f"cannot read {path}: {exc}. Replace it with a good copy from "
                             f"{ADULT_BASE_URLS[0]}{name} (or delete it to re-download).") from exc
    actual = hashlib.sha256(raw).hexdigest()
    if actual != expected.sha256:
        raise AdultDataError(
            f"checksum mismatch for {path}: expected SHA-256 {expected.sha256} ({expected.n_bytes} bytes "
            f"decompressed), got {actual} ({len(raw)} bytes). The file is corrupt or not the UCI original; "
            f"delete it and run load_adult() again to download it, or get a good copy from "
            f"{ADULT_BASE_URLS[0]}{name}."
        )
    return raw.decode("ascii")


def _parse_rows(text, source):
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


@functools.lru_cache(maxsize=4)
def _load_cached(train_key, test_key):
    """Verify, parse and encode both files; the arrays are read-only (callers get copies)."""
    train_path, test_path = Path(train_key[0]), Path(test_key[0])
    train_rows = _parse_rows(_read_verified(train_path, "adult.data"), train_path)
    test_rows = _parse_rows(_read_verified(test_path, "adult.test"), test_path)
    train_columns = dict(zip(ADULT_COLUMNS, zip(*train_rows)))
    test_columns = dict(zip(ADULT_COLUMNS, zip(*test_rows)))
    encoding = _fit_encoding(train_columns)  # training rows only
    names = _feature_names(encoding)
    X_train = _transform(train_columns, encoding, len(names))
    X_test = _transform(test_columns, encoding, len(names))
    y_train = _labels(train_columns["income"], train_path)
    y_test = _labels(test_columns["income"], test_path)
    for array in (X_train, y_train, X_test, y_test):
        array.flags.writeable = False
    return X_train, y_train, X_test, y_test, names


# --- synthetic data ------------------------------------------------------------------------------


def make_toy(n=200, d=5, *, rng=None, signal=10.0):
    r"""A small, nearly separable logistic-regression problem with rows in the unit ball.

    Parameters
    ----------
    n : int, default 200
        Number of rows.
    d : int, default 5
        Number of features.
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness; the same seed gives the same data.
    signal : float, default 10.0
        :math:`s` below: larger means fewer labels on the "wrong" side of the true hyperplane.

    Returns
    -------
    X : ndarray of shape (n, d)
        Rows uniform in the unit ball, so :math:`\|x_i\|_2 \le 1` (a public clip norm of 1 never clips).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.

    Notes
    -----
    Draw a direction :math:`\theta^\*` uniformly on the unit sphere and, for each row, a direction
    :math:`g_i/\|g_i\|` (Gaussian :math:`g_i`) and radius :math:`U_i^{1/d}` (:math:`U_i \sim U[0,1)`), which
    is uniform in the ball. Then

    .. math:: \Pr[y_i = +1 \mid x_i] = \operatorname{sigmoid}(s\, \theta^{*\top} x_i),

    a logistic model, so the labels are separable except near the hyperplane :math:`\theta^{*\top} x = 0`.
    For very small ``n`` all labels can be equal.

    Examples
    --------
    >>> X, y = make_toy(n=4, d=2, rng=1)
    >>> X.shape, y.shape
    ((4, 2), (4,))
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    signal = check_positive(signal, "signal")
    rng = check_rng(rng)
    theta_star = rng.standard_normal(d)
    theta_star /= np.linalg.norm(theta_star)
    directions = rng.standard_normal((n, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    radii = rng.random(n) ** (1.0 / d)  # P(radius <= r) = r^d: uniform in the ball
    X = directions * radii[:, None]
    # sigmoid(t) = (1 + tanh(t/2)) / 2 never overflows
    p_positive = 0.5 * (1.0 + np.tanh(0.5 * signal * (X @ theta_star)))
    y = np.where(rng.random(n) < p_positive, 1.0, -1.0)
    return X, y
