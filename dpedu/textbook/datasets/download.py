"""Downloading the Adult files over HTTP(S), with a total deadline and no partial files left behind.

:func:`dpedu.textbook.datasets.load_adult` imports this module only when no directory it searches holds the
files, so ``import dpedu`` never loads :mod:`urllib.request` or :mod:`http.client`.

Three guarantees, each with a regression test in ``tests/test_datasets.py``:

* **A total deadline.** ``timeout`` bounds the whole download of one file from one address
  (connecting, waiting for the headers, reading the body), not each network read: a server that
  sends one byte every few tenths of a second cannot keep it going. A timer shuts the connection's
  socket down when the time is up, which wakes a read that is blocked waiting for data.
* **Only verified files appear.** The body is streamed into a temporary file
  ``.adult.data.<random>.part`` next to the destination, its size and SHA-256 are checked, and only
  then is it renamed into place (:func:`os.replace`). Any failure deletes the temporary file.
* **Leftovers are swept.** A process killed mid-download cannot delete its temporary file, so
  before downloading into a directory, :func:`remove_stale_parts` deletes temporary files there
  that are older than any download may last (:data:`STALE_PART_AGE`); a download still in progress
  in another process is never touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import re
import socket
import tempfile
import threading
import time
import urllib.request

from .files import ADULT_FILES, MAX_TIMEOUT, AdultDataError, check_digest, where_to_put_them

__all__ = ["STALE_PART_AGE", "Deadline", "download", "fetch_verified", "remove_stale_parts"]

# A temporary file whose last change is older than this cannot belong to a download still running:
# every download ends (succeeds or is abandoned) within MAX_TIMEOUT of creating its file.
STALE_PART_AGE = MAX_TIMEOUT + 60.0

_PART_NAME = re.compile(r"\.adult\.(data|test)\.[A-Za-z0-9_]+\.part")
_CHUNK = 1 << 16


class Deadline:
    """A time limit shared by every connection of one download attempt (a context manager).

    When ``seconds`` have passed, every socket handed to :meth:`watch` is shut down, so a read
    blocked on it returns at once; :attr:`expired` then tells the caller why the read failed.
    """

    def __init__(self, seconds):
        self.seconds = seconds
        self.expired = False
        self._sockets = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self):
        self._timer.start()
        return self

    def __exit__(self, *exc_info):
        self._timer.cancel()

    def watch(self, sock):
        """Shut ``sock`` down when the deadline passes (at once if it already has)."""
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self):
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock):
    # socket.socket.shutdown also for an SSL socket: it acts on the file descriptor without
    # touching the TLS state, which the reading thread may be using.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _WatchedHTTPConnection(http.client.HTTPConnection):
    deadline = None  # set on each instance by _watched

    def connect(self):
        super().connect()
        self.deadline.watch(self.sock)


# MRO: HTTPSConnection.connect -> _WatchedHTTPConnection.connect (watches the plain socket during the
# TLS handshake) -> HTTPConnection.connect; then the TLS socket that replaces it is watched too.
class _WatchedHTTPSConnection(http.client.HTTPSConnection, _WatchedHTTPConnection):
    def connect(self):
        super().connect()
        self.deadline.watch(self.sock)


def _watched(connection_class, deadline):
    """A factory urllib calls like ``connection_class(host, timeout=..., ...)``; it attaches ``deadline``.

    (``HTTPSConnection.__init__`` does not pass unknown keyword arguments on, so the deadline is set
    after construction rather than passed to it.)
    """

    def make(*args, **kwargs):
        connection = connection_class(*args, **kwargs)
        connection.deadline = deadline
        return connection

    return make


def _watching_handlers(deadline):
    """urllib's HTTP and HTTPS handlers, each opening connections that watch ``deadline`` (urllib finds a
    handler's opener by the scheme in its method's name, so each scheme has its own class)."""

    class HTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(_watched(_WatchedHTTPConnection, deadline), req)

    class HTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(_watched(_WatchedHTTPSConnection, deadline), req)

    return HTTPHandler(), HTTPSHandler()


def remove_stale_parts(directory, *, older_than=STALE_PART_AGE):
    """Delete ``.adult.{data,test}.*.part`` files in ``directory`` last changed over ``older_than`` s ago.

    Only regular files with exactly that name pattern are considered; errors (a file deleted by
    someone else meanwhile, a read-only directory) are ignored. Returns the names removed.
    """
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        if not _PART_NAME.fullmatch(entry.name):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False) and now - entry.stat(follow_symlinks=False).st_mtime > older_than:
                os.unlink(entry.path)
                removed.append(entry.name)
    return sorted(removed)


def download(name, directory, urls, timeout, searched):
    """Try each base URL in turn; return the path of the verified file or raise AdultDataError."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AdultDataError(f"cannot create {directory} to download {name} into: {exc}\n"
                             + where_to_put_them(searched, urls)) from exc
    remove_stale_parts(directory)
    failures = []
    for base in urls:
        url = f"{base.rstrip('/')}/{name}"
        try:
            return fetch_verified(url, directory / name, ADULT_FILES[name], timeout)
        except (OSError, http.client.HTTPException) as exc:  # URLError, timeouts, bad checksum...
            failures.append(f"  - {url}: {exc}")
    raise AdultDataError(
        f"Could not download {name} into {directory}; every address failed:\n" + "\n".join(failures) + "\n"
        + where_to_put_them(searched, urls)
    )


def fetch_verified(url, destination, expected, timeout):
    """Stream ``url`` to a temporary file next to ``destination``, verify it, then rename it.

    ``timeout`` (seconds) bounds the whole attempt. The temporary file is removed on any failure
    (including ``KeyboardInterrupt``), so ``destination`` is either absent or verified.
    """
    fd, tmp_name = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".part", dir=destination.parent)
    try:
        with os.fdopen(fd, "wb") as out, Deadline(timeout) as deadline:
            try:
                digest, received, announced = _stream(url, out, expected, deadline, timeout)
            except (OSError, http.client.HTTPException) as exc:
                if deadline.expired and not isinstance(exc, AdultDataError):
                    raise AdultDataError(_timed_out(timeout)) from exc
                raise
            if deadline.expired:  # the shutdown can look like the end of the body
                raise AdultDataError(_timed_out(timeout))
        # http.client does not flag a body shorter than its Content-Length; check it ourselves.
        if announced is not None and announced.isdigit() and received != int(announced):
            raise AdultDataError(f"incomplete download: received {received} of {announced} bytes")
        check_digest(destination.name, url, digest.hexdigest(), received, expected)
        os.chmod(tmp_name, 0o644)  # mkstemp makes it private (0o600); the data are public
        os.replace(tmp_name, destination)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return destination


def _timed_out(timeout):
    return f"timed out: the download did not finish within timeout={timeout:g} seconds (a total deadline)"


def _stream(url, out, expected, deadline, timeout):
    """Copy the body of ``url`` into ``out``; return (sha256 object, bytes received, Content-Length)."""
    opener = urllib.request.build_opener(*_watching_handlers(deadline))  # + proxy settings
    digest, received = hashlib.sha256(), 0
    with opener.open(url, timeout=timeout) as response:
        announced = response.headers.get("Content-Length")
        while chunk := response.read(_CHUNK):
            received += len(chunk)
            if received > expected.n_bytes:  # also stops a server that never ends the body
                raise AdultDataError(f"response is larger than the expected {expected.n_bytes} bytes")
            digest.update(chunk)
            out.write(chunk)
    return digest, received, announced
