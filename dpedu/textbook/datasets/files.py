"""Where the Adult files are, and how a copy on disk is verified before it is parsed.

The loader looks in these directories, in order, and takes the first one that holds both files
(``adult.data`` and ``adult.test``, each plain or gzipped):

1. the ``data_home`` argument of :func:`dpedu.textbook.datasets.load_adult`;
2. the directory named by the ``DPEDU_DATA`` environment variable;
3. the project cache :data:`CACHE_DIR` (``<repo>/data/adult/``, git-ignored);
4. the copy shipped inside the package, :data:`PACKAGE_DIR` (``dpedu/data/adult/``).

A name you give explicitly wins over the shipped copy, so you can always point elsewhere; the
shipped copy makes the loader work offline with no setup. A directory you name (``data_home`` or
``DPEDU_DATA``) that holds only one of the two files is refused, naming the missing one: it is never passed
over for another copy, which would load data you did not choose.

Every file is checked against the SHA-256 of the plain UCI file (:data:`ADULT_FILES`) before it is
parsed. A gzipped copy is decompressed in chunks, and reading stops as soon as the content grows
past the expected size, so a corrupt or malicious file (a "gzip bomb") costs at most that many bytes.

>>> sorted(ADULT_FILES)
['adult.data', 'adult.test']
>>> ADULT_FILES["adult.data"].n_bytes
3974305
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "ADULT_BASE_URLS",
    "ADULT_FILES",
    "ADULT_GZ_SHA256",
    "CACHE_DIR",
    "ENV_VAR",
    "PACKAGE_DIR",
    "AdultDataError",
    "FileDigest",
    "MAX_TIMEOUT",
    "check_digest",
    "find_complete_dir",
    "find_file",
    "read_verified",
    "search_dirs",
    "where_to_put_them",
]

# Base addresses tried in order; each holds the plain files ``adult.data`` and ``adult.test``.
# The second is the same UCI archive over plain HTTP (for networks whose TLS interception breaks
# HTTPS); the SHA-256 check makes any address safe to use.
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

# SHA-256 of the ``.gz`` files shipped in PACKAGE_DIR. gzip output is not canonical (the header may
# record a name and a time), so another good ``.gz`` can hash differently: these identify the shipped
# copies (``sha256sum dpedu/data/adult/*.gz``); the loader's check is the one on the content.
ADULT_GZ_SHA256 = {
    "adult.data": "fb986d3609cdf068a1c234ed2695603b74c66c4be723467d9d69542024847442",
    "adult.test": "74aa81a0e0880467a50de97be6ba8130df14a3ef8c0c3a14de2a9a997d068fbf",
}

ENV_VAR = "DPEDU_DATA"

# dpedu/data/adult/: the copy installed with the package (package data in pyproject.toml).
PACKAGE_DIR = Path(__file__).resolve().parents[2] / "data" / "adult"      # this file is dpedu/textbook/datasets/

# <repo>/data/adult/ next to the package (in a source checkout; git-ignored).
CACHE_DIR = Path(__file__).resolve().parents[3] / "data" / "adult"

# The largest ``timeout`` of load_adult (seconds): a download of one file from one address is
# abandoned after at most this long, so a temporary ``.part`` file older than this is stale.
MAX_TIMEOUT = 3600.0

_CHUNK = 1 << 16


class AdultDataError(OSError):
    """The Adult files are missing, could not be downloaded, or fail their checksum.

    A subclass of :class:`OSError`: the problem is with files or the network, not with the
    arguments (bad arguments raise :class:`ValueError` / :class:`TypeError`). The message says
    where the files were looked for and where to get them.
    """


# --- where the files are -------------------------------------------------------------------------


def _as_dir(value, name):
    """A directory path (which may not exist yet); refuse non-paths, '' and existing non-directories."""
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike naming a directory; got {type(value).__name__} {value!r}")
    if not os.fspath(value).strip():  # Path('') would silently mean the current directory
        raise ValueError(f"{name} must name a directory (a non-empty, non-blank path); got {value!r}")
    path = Path(value).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name} must name a directory that holds the Adult files; got a file: {path}")
    return path


def search_dirs(data_home):
    """``[(label, directory)]`` in search order; the first entry is where a download goes.

    ``data_home`` (if not None), then ``$DPEDU_DATA`` (if set and not empty), then :data:`CACHE_DIR`,
    then :data:`PACKAGE_DIR`. Raises ``TypeError``/``ValueError`` naming ``data_home`` or
    ``DPEDU_DATA`` if either is not a usable directory name.
    """
    dirs = []
    if data_home is not None:
        dirs.append(("data_home argument", _as_dir(data_home, "data_home")))
    env = os.environ.get(ENV_VAR, "")
    if env:
        dirs.append((f"{ENV_VAR} environment variable", _as_dir(env, ENV_VAR)))
    dirs.append(("project cache", Path(CACHE_DIR)))
    dirs.append(("copy shipped with dpedu", Path(PACKAGE_DIR)))
    return dirs


def find_file(directory, name):
    """``directory/name`` or ``directory/name.gz``, whichever exists first; else None."""
    for candidate in (directory / name, directory / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


# the directories a user names, by their label in search_dirs, and the argument each label stands for
_NAMED = {"data_home argument": "data_home", f"{ENV_VAR} environment variable": ENV_VAR}


def find_complete_dir(searched):
    """``{name: path}`` from the first directory holding both files, or None.

    A directory the user named (``data_home``, ``$DPEDU_DATA``) that holds one file but not the other raises
    ``ValueError`` naming the argument and the missing file, instead of being passed over for a later directory
    (the shipped copy would then be loaded in its place). A named directory holding neither file is passed
    over, as the search order says; the project cache may hold one file (a download in progress).
    """
    for label, directory in searched:
        found = {name: find_file(directory, name) for name in ADULT_FILES}
        if all(path is not None for path in found.values()):
            return found
        present = [path.name for path in found.values() if path is not None]
        if present and label in _NAMED:
            [missing] = [name for name, path in found.items() if path is None]
            raise ValueError(
                f"{_NAMED[label]}: {directory} holds {present[0]} but not {missing} (plain or .gz); put {missing} "
                f"there too ({ADULT_BASE_URLS[0]}{missing}), or name a directory that holds both Adult files")
    return None


def where_to_put_them(searched, urls):
    """The part of an error message that lists the directories searched and the download addresses."""
    dirs = "\n".join(f"  - {directory}  ({label})" for label, directory in searched)
    links = "\n".join(f"  - {base.rstrip('/')}/{name}" for base in urls for name in ADULT_FILES)
    return (
        f"Directories searched, in order:\n{dirs}\n"
        f"Put adult.data and adult.test (plain or .gz) in one of them, or point the {ENV_VAR} "
        f"environment variable (or load_adult(data_home=...)) at a directory holding them. "
        f"The files are available at:\n{links}\n"
        f"(UCI Machine Learning Repository, Adult, doi:10.24432/C5XW20; see data/README.md)."
    )


# --- verification --------------------------------------------------------------------------------


def check_digest(name, source, actual_sha256, n_bytes, expected):
    """Raise :class:`AdultDataError` unless ``actual_sha256`` is ``expected.sha256``."""
    if actual_sha256 != expected.sha256:
        raise AdultDataError(
            f"checksum mismatch for {name} from {source}: expected SHA-256 {expected.sha256} "
            f"({expected.n_bytes} bytes), got {actual_sha256} ({n_bytes} bytes)"
        )


def _advice(name):
    return (f"The file is corrupt or not the UCI original; delete it and run load_adult() again, "
            f"or get a good copy from {ADULT_BASE_URLS[0]}{name}.")


def read_verified(path, name):
    """The text of ``path`` (plain or ``.gz``) after checking it against ``ADULT_FILES[name]``.

    The content is read in chunks of 64 KiB and hashed as it comes. Reading stops with an
    :class:`AdultDataError` as soon as it exceeds the expected size, so neither a huge file nor a
    small ``.gz`` that expands enormously is ever held in memory or decompressed in full.
    """
    expected = ADULT_FILES[name]
    gz = path.suffix == ".gz"
    digest, chunks, n_bytes = hashlib.sha256(), [], 0
    try:
        # gzip adds under 0.1 % to incompressible data (plus a header): a larger .gz cannot be right
        if gz and path.stat().st_size > expected.n_bytes + expected.n_bytes // 100 + 1024:
            raise AdultDataError(f"{path} is {path.stat().st_size} bytes, larger than any gzip of the "
                                 f"{expected.n_bytes}-byte {name}. {_advice(name)}")
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as stream:
            while chunk := stream.read(_CHUNK):
                n_bytes += len(chunk)
                if n_bytes > expected.n_bytes:
                    what = "decompresses to" if gz else "holds"
                    raise AdultDataError(f"{path} {what} more than the {expected.n_bytes} bytes of {name}; "
                                         f"reading stopped there. {_advice(name)}")
                digest.update(chunk)
                chunks.append(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, AdultDataError):
            raise
        raise AdultDataError(f"cannot read {path}: {exc}. Replace it with a good copy from "
                             f"{ADULT_BASE_URLS[0]}{name} (or delete it to re-download).") from exc
    actual = digest.hexdigest()
    if actual != expected.sha256:
        raise AdultDataError(
            f"checksum mismatch for {path}: expected SHA-256 {expected.sha256} ({expected.n_bytes} bytes "
            f"decompressed), got {actual} ({n_bytes} bytes). {_advice(name)}"
        )
    return b"".join(chunks).decode("ascii")
