"""Tests for dpedu.textbook.datasets: the Adult loader (parsing, checksums, search order, download) and make_toy.

All tests are offline. Real-data tests read the files where ``load_adult`` itself finds them (``$DPEDU_DATA``,
the project cache ``data/adult/``, or the copy shipped in ``dpedu/data/adult/``), and copy them into temporary
directories to test ``data_home`` and ``DPEDU_DATA``. The download tests serve files from an HTTP server on
127.0.0.1 started by the test itself. Most tests use a tiny hand-written file in the UCI format, with
``ADULT_FILES`` patched to its checksum, so their expected encodings can be worked out by hand.
"""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import math
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpedu import datasets
from dpedu.textbook.datasets import ADULT_NORM_BOUND, AdultData, AdultDataError, FileDigest, load_adult, make_toy
from dpedu.textbook.datasets import download as download_module
from dpedu.textbook.datasets import files as files_module

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = files_module.PACKAGE_DIR  # dpedu/data/adult/, captured before any test patches it
TIMEOUT = 5.0  # seconds allowed per download; every download test passes it, so none can hang
DRIP_INTERVAL, DRIP_BYTES = 0.3, 30  # a slow server: one byte every 0.3 s, 30 bytes (9 s) at most


@pytest.fixture(autouse=True)
def isolated_from_user_data(monkeypatch, tmp_path):
    """No test sees the developer's DPEDU_DATA, the repo cache or the shipped copy (each test that wants
    the shipped copy restores it), and 127.0.0.1 never goes through a proxy."""
    monkeypatch.delenv("DPEDU_DATA", raising=False)
    monkeypatch.setattr(files_module, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setattr(files_module, "PACKAGE_DIR", tmp_path / "no-package-copy")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


# --- a tiny file in the UCI format, with every quirk the parser must handle -----------------------

TINY_DATA = (
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, "
    "2174, 0, 40, United-States, <=50K\n"
    "50, Private, 83311, HS-grad, 9, Married-civ-spouse, Exec-managerial, Husband, Black, Female, "
    "0, 0, 13, Cuba, >50K\n"
    "38, ?, 215646, HS-grad, 9, Divorced, ?, Not-in-family, White, Male, 0, 0, 40, United-States, <=50K\n"
    "20, Private, 100000, Masters, 14, Divorced, Sales, Wife, White, Female, 0, 100, 60, United-States, >50K\n"
    "\n"
).encode()  # fmt: skip
TINY_TEST = (
    "|1x3 Cross validator\n"
    "25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, "
    "0, 0, 40, United-States, <=50K.\n"
    "95, Self-emp-inc, 50000, Bachelors, 13, Divorced, Sales, Husband, White, Male, 5000, 0, 40, ?, >50K.\n"
    "60, Private, 10, Doctorate, 16, Widowed, Sales, Wife, White, Female, 99999, 0, 99, Canada, >50K.\n"
    "\n"
).encode()  # fmt: skip
TINY = {"adult.data": TINY_DATA, "adult.test": TINY_TEST}

# Training ranges (rows 1, 2, 4; row 3 has a '?'): age [20, 50], fnlwgt [77516, 100000], education-num [9, 14],
# capital-gain [0, 2174], capital-loss [0, 100], hours-per-week [13, 60]. Categories: sorted, training rows only.
TINY_FEATURE_NAMES = (
    "age", "workclass=Private", "workclass=State-gov", "fnlwgt",
    "education=Bachelors", "education=HS-grad", "education=Masters", "education-num",
    "marital-status=Divorced", "marital-status=Married-civ-spouse", "marital-status=Never-married",
    "occupation=Adm-clerical", "occupation=Exec-managerial", "occupation=Sales",
    "relationship=Husband", "relationship=Not-in-family", "relationship=Wife",
    "race=Black", "race=White", "sex=Female", "sex=Male",
    "capital-gain", "capital-loss", "hours-per-week", "native-country=Cuba", "native-country=United-States",
)  # fmt: skip
TINY_TRAIN_ROWS = [  # the non-zero entries of each encoded row, worked out by hand
    {"age": 19 / 30, "workclass=State-gov": 1, "fnlwgt": 0, "education=Bachelors": 1, "education-num": 4 / 5,
     "marital-status=Never-married": 1, "occupation=Adm-clerical": 1, "relationship=Not-in-family": 1,
     "race=White": 1, "sex=Male": 1, "capital-gain": 1, "hours-per-week": 27 / 47,
     "native-country=United-States": 1},
    {"age": 1, "workclass=Private": 1, "fnlwgt": (83311 - 77516) / (100000 - 77516), "education=HS-grad": 1,
     "marital-status=Married-civ-spouse": 1, "occupation=Exec-managerial": 1, "relationship=Husband": 1,
     "race=Black": 1, "sex=Female": 1, "native-country=Cuba": 1},
    {"workclass=Private": 1, "fnlwgt": 1, "education=Masters": 1, "education-num": 1,
     "marital-status=Divorced": 1, "occupation=Sales": 1, "relationship=Wife": 1, "race=White": 1,
     "sex=Female": 1, "capital-loss": 1, "hours-per-week": 1, "native-country=United-States": 1},
]  # fmt: skip
TINY_TEST_ROWS = [
    # 11th, Machine-op-inspct, Own-child: unseen in training -> all-zero blocks; fnlwgt and education-num clipped
    {"age": 5 / 30, "workclass=Private": 1, "fnlwgt": 1, "education-num": 0, "marital-status=Never-married": 1,
     "race=Black": 1, "sex=Male": 1, "hours-per-week": 27 / 47, "native-country=United-States": 1},
    # Doctorate, Widowed, Canada unseen; age, education-num, capital-gain and hours clipped to 1, fnlwgt to 0
    {"age": 1, "workclass=Private": 1, "education-num": 1, "occupation=Sales": 1, "relationship=Wife": 1,
     "race=White": 1, "sex=Female": 1, "capital-gain": 1, "hours-per-week": 1},
]  # fmt: skip


def _dense(rows, names):
    X = np.zeros((len(rows), len(names)))
    for i, row in enumerate(rows):
        for name, value in row.items():
            X[i, names.index(name)] = value
    return X


def _digest(content):
    return FileDigest(hashlib.sha256(content).hexdigest(), len(content))


@pytest.fixture
def tiny(monkeypatch):
    """Make the tiny files the ones whose checksums the loader expects."""
    for name, content in TINY.items():
        monkeypatch.setitem(datasets.ADULT_FILES, name, _digest(content))
    return TINY


def _write(directory, files, *, gz=False):
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        if gz:
            (directory / f"{name}.gz").write_bytes(gzip.compress(content))
        else:
            (directory / name).write_bytes(content)
    return directory


# --- parsing and encoding (tiny files) -------------------------------------------------------------


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_tiny_files_encode_as_worked_out_by_hand(tiny, tmp_path, gz):
    data = load_adult(_write(tmp_path / "adult", tiny, gz=gz), download=False)
    assert data.feature_names == TINY_FEATURE_NAMES
    np.testing.assert_allclose(data.X_train, _dense(TINY_TRAIN_ROWS, TINY_FEATURE_NAMES), rtol=0, atol=1e-15)
    np.testing.assert_allclose(data.X_test, _dense(TINY_TEST_ROWS, TINY_FEATURE_NAMES), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(data.y_train, [-1.0, 1.0, 1.0])  # the '?' row is gone
    np.testing.assert_array_equal(data.y_test, [-1.0, 1.0])  # junk line, '?' row and trailing '.' handled
    assert data.train_file.name == ("adult.data.gz" if gz else "adult.data")
    assert (data.n_train, data.n_test, data.n_features) == (3, 2, 26)


def test_result_unpacks_in_the_documented_order(tiny, tmp_path):
    data = load_adult(_write(tmp_path, tiny), download=False)
    X_train, y_train, X_test, y_test = data
    assert X_train is data.X_train and y_train is data.y_train
    assert X_test is data.X_test and y_test is data.y_test
    assert data.norm_bound == math.sqrt(14) == ADULT_NORM_BOUND
    assert "n_train=3" in repr(data)


def test_in_memory_cache_returns_independent_copies(tiny, tmp_path):
    directory = _write(tmp_path, tiny)
    first = load_adult(directory, download=False)
    first.X_train[:] = 7.0
    first.y_test[:] = 0.0
    second = load_adult(directory, download=False)
    np.testing.assert_allclose(second.X_train, _dense(TINY_TRAIN_ROWS, TINY_FEATURE_NAMES), atol=1e-15)
    np.testing.assert_array_equal(second.y_test, [-1.0, 1.0])
    assert second.X_train.flags.writeable and second.X_train is not first.X_train


def test_a_file_changed_after_loading_is_verified_again(tiny, tmp_path):
    directory = _write(tmp_path, tiny)
    load_adult(directory, download=False)
    path = directory / "adult.test"
    stat = path.stat()
    path.write_bytes(TINY_TEST.replace(b"Canada", b"Kanada"))  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a new mtime even on coarse clocks
    with pytest.raises(AdultDataError, match="checksum mismatch"):
        load_adult(directory, download=False)


def test_local_checksum_mismatch_names_file_hashes_and_source(tiny, tmp_path):
    directory = _write(tmp_path, tiny)
    corrupted = TINY_DATA.replace(b"2174", b"2175")
    (directory / "adult.data").write_bytes(corrupted)
    with pytest.raises(AdultDataError) as info:
        load_adult(directory, download=False)
    message = str(info.value)
    assert str(directory / "adult.data") in message
    assert datasets.ADULT_FILES["adult.data"].sha256 in message
    assert hashlib.sha256(corrupted).hexdigest() in message
    assert datasets.ADULT_BASE_URLS[0] in message


def test_a_broken_gz_file_is_a_clear_error(tiny, tmp_path):
    directory = _write(tmp_path, {"adult.test": TINY_TEST})
    (directory / "adult.data.gz").write_bytes(gzip.compress(TINY_DATA)[:-20])  # truncated gzip stream
    with pytest.raises(AdultDataError, match="adult.data.gz"):
        load_adult(directory, download=False)


@pytest.mark.parametrize("name", ["adult.data", "adult.test"])
def test_a_small_gzip_bomb_is_refused_by_its_decompressed_size(tiny, tmp_path, name):
    directory = _write(tmp_path, tiny)
    (directory / name).unlink()
    bomb = gzip.compress(bytes(1 << 20), compresslevel=9)  # 1 MiB of zeros in about 1 KiB
    (directory / f"{name}.gz").write_bytes(bomb)
    expected = datasets.ADULT_FILES[name].n_bytes
    with pytest.raises(AdultDataError, match=f"decompresses to more than the {expected} bytes") as info:
        load_adult(directory, download=False)
    assert str(directory / f"{name}.gz") in str(info.value)


def test_a_gzip_bomb_is_refused_without_decompressing_it_in_full(tmp_path):
    """With the real checksums: 400 MiB of zeros (about 400 KiB gzipped, as small as the real adult.data.gz)
    are refused once 3.97 MB have come out, without ever holding much more than that in memory."""
    bomb = gzip.compress(bytes(64 << 20), compresslevel=9) * 6  # gzip members concatenate: 384 MiB
    assert len(bomb) < 500_000
    _write(tmp_path, {"adult.test": b""})
    (tmp_path / "adult.data.gz").write_bytes(bomb)
    limit = datasets.ADULT_FILES["adult.data"].n_bytes
    tracemalloc.start()
    start = time.monotonic()
    try:
        with pytest.raises(AdultDataError, match=f"decompresses to more than the {limit} bytes"):
            load_adult(tmp_path, download=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * limit, peak  # the content read so far, in 64 KiB chunks; not 384 MiB
    assert time.monotonic() - start < 5.0


def test_an_oversized_file_is_refused_before_it_is_read(tiny, tmp_path):
    directory = _write(tmp_path, tiny)
    (directory / "adult.data").write_bytes(TINY_DATA + b"x" * 100)  # plain: more bytes than expected
    with pytest.raises(AdultDataError, match="holds more than"):
        load_adult(directory, download=False)
    (directory / "adult.data").unlink()
    (directory / "adult.data.gz").write_bytes(os.urandom(10 * len(TINY_DATA) + 2048))  # larger than any gzip
    with pytest.raises(AdultDataError, match="larger than any gzip"):
        load_adult(directory, download=False)


def test_missing_with_download_false_says_where_to_put_the_files(tiny, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with pytest.raises(AdultDataError) as info:
        load_adult(home, download=False, urls=["http://127.0.0.1:9/adult/"])
    message = str(info.value)
    for expected in (str(home), str(files_module.CACHE_DIR), "DPEDU_DATA", "http://127.0.0.1:9/adult/adult.data"):
        assert expected in message
    assert list(home.iterdir()) == []
    assert isinstance(info.value, OSError)


# --- where the loader looks -------------------------------------------------------------------------


def test_search_order_argument_then_environment_then_cache(tiny, tmp_path, monkeypatch):
    home, env, cache = (_write(tmp_path / name, tiny) for name in ("home", "env", "cache"))
    monkeypatch.setenv("DPEDU_DATA", str(env))
    assert load_adult(home, download=False).train_file == home / "adult.data"
    assert load_adult(download=False).train_file == env / "adult.data"
    monkeypatch.delenv("DPEDU_DATA")
    assert load_adult(download=False).train_file == cache / "adult.data"
    # a named directory holding neither file is passed over; the cache may hold one (a download in progress)
    assert load_adult(tmp_path / "empty", download=False).train_file == cache / "adult.data"
    (cache / "adult.test").unlink()
    _write(tmp_path / "shipped", tiny)
    monkeypatch.setattr(files_module, "PACKAGE_DIR", tmp_path / "shipped")
    assert load_adult(download=False).train_file == tmp_path / "shipped" / "adult.data"


@pytest.mark.parametrize("download", [False, True])
@pytest.mark.parametrize("named, kept", [("data_home", "adult.data"), ("data_home", "adult.test"),
                                         ("DPEDU_DATA", "adult.data")])
def test_a_named_directory_with_one_file_is_refused_naming_the_other(tiny, tmp_path, monkeypatch, named, kept,
                                                                     download):
    """A data_home (or DPEDU_DATA) holding one file is refused, naming the missing one; it was passed over and the
    next complete directory (the shipped copy) loaded silently in its place. Refused before any download."""
    missing = ({"adult.data", "adult.test"} - {kept}).pop()
    partial = _write(tmp_path / "partial", {kept: tiny[kept]}, gz=kept == "adult.test")
    monkeypatch.setattr(files_module, "PACKAGE_DIR", _write(tmp_path / "shipped", tiny))   # complete, further on
    if named == "DPEDU_DATA":
        monkeypatch.setenv("DPEDU_DATA", str(partial))
    with pytest.raises(ValueError) as info:
        load_adult(partial if named == "data_home" else None, download=download, urls=["http://127.0.0.1:9/a/"])
    message = str(info.value)
    assert message.startswith(f"{named}: {partial} holds {kept}") and f"but not {missing} " in message, message
    assert sorted(p.name for p in partial.iterdir()) == [kept + (".gz" if kept == "adult.test" else "")]


def test_the_command_line_refuses_a_data_home_with_one_file(tmp_path, capsys):
    """``--data-home`` with one of the two files: one line naming the option and the missing file, no training."""
    from dpedu.cli import main

    partial = _write(tmp_path / "partial", {"adult.data": b"x"})
    assert main(["demo", "--data-home", str(partial), "--iterations", "1"]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: --data-home: {partial} holds adult.data but not "
                                                     "adult.test"), errors


# --- download from a local HTTP server -----------------------------------------------------------


@pytest.fixture
def server():
    """An HTTP server on 127.0.0.1 (port 0); ``routes[path] = (action, body)`` with action in
    'ok', 'truncate' (Content-Length 1000 bytes too large, half the body, then close), 'no-length'
    (no Content-Length; the body ends when the connection closes), 'drip-body' (headers at once, then
    one body byte every DRIP_INTERVAL s) or 'drip-headers' (the headers one byte at a time). A drip
    stops after DRIP_BYTES bytes (so a broken deadline costs seconds, not minutes). Unknown paths get 404."""
    routes, hits = {}, []

    class Handler(BaseHTTPRequestHandler):
        def _drip(self, data):
            for i in range(min(len(data), DRIP_BYTES)):
                time.sleep(DRIP_INTERVAL)
                try:
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                except OSError:  # the client gave up
                    return
            self.close_connection = True

        def do_GET(self):
            hits.append(self.path)
            action, body = routes.get(self.path, (None, b""))
            if action is None:
                self.send_error(404)
                return
            if action == "drip-headers":
                self._drip(f"HTTP/1.0 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
                return
            self.send_response(200)
            if action == "drip-body":
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.flush()
                self._drip(body)
                return
            if action == "ok":
                self.send_header("Content-Length", str(len(body)))
            elif action == "truncate":
                self.send_header("Content-Length", str(len(body) + 1000))
                body = body[: len(body) // 2]
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True

        def log_message(self, *args):  # keep pytest output clean
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    port = httpd.server_address[1]
    try:
        yield SimpleNamespace(url=lambda mirror: f"http://127.0.0.1:{port}/{mirror}/", routes=routes, hits=hits,
                              httpd=httpd)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _serve(server, mirror, files, action="ok"):
    for name, content in files.items():
        server.routes[f"/{mirror}/{name}"] = (action, content)


def test_download_verifies_saves_and_is_not_repeated(tiny, tmp_path, server):
    _serve(server, "m1", tiny)
    home = tmp_path / "new" / "home"  # created on demand
    data = load_adult(home, urls=(server.url("m1"),), timeout=TIMEOUT)
    assert sorted(server.hits) == ["/m1/adult.data", "/m1/adult.test"]
    assert sorted(p.name for p in home.iterdir()) == ["adult.data", "adult.test"]  # no temporary files left
    assert (home / "adult.test").read_bytes() == TINY_TEST
    assert (home / "adult.test").stat().st_mode & 0o777 == 0o644  # readable, like any downloaded file
    np.testing.assert_allclose(data.X_test, _dense(TINY_TEST_ROWS, TINY_FEATURE_NAMES), atol=1e-15)
    again = load_adult(home, urls=(server.url("m1"),), timeout=TIMEOUT)
    assert len(server.hits) == 2  # the second call reads the saved files
    np.testing.assert_array_equal(again.X_train, data.X_train)


def test_first_mirror_404_second_mirror_works(tiny, tmp_path, server):
    _serve(server, "good", tiny)
    data = load_adult(tmp_path, urls=[server.url("missing"), server.url("good")], timeout=TIMEOUT)
    assert server.hits == ["/missing/adult.data", "/good/adult.data", "/missing/adult.test", "/good/adult.test"]
    np.testing.assert_array_equal(data.y_train, [-1.0, 1.0, 1.0])


@pytest.mark.parametrize("corrupt", ["adult.data", "adult.test"])
def test_corrupted_download_is_refused_and_removed(tiny, tmp_path, server, corrupt):
    served = dict(tiny)
    served[corrupt] = served[corrupt].replace(b"Bachelors", b"Bachelorz")  # same length, other hash
    _serve(server, "m1", served)
    with pytest.raises(AdultDataError) as info:
        load_adult(tmp_path, urls=(server.url("m1"),), timeout=TIMEOUT)
    message = str(info.value)
    assert "checksum mismatch" in message and datasets.ADULT_FILES[corrupt].sha256 in message
    assert hashlib.sha256(served[corrupt]).hexdigest() in message
    assert server.url("m1") + corrupt in message
    # only verified files remain: adult.data survives when just adult.test was bad
    left = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert left == ({} if corrupt == "adult.data" else {"adult.data": TINY_DATA})


@pytest.mark.parametrize("action, reason", [("truncate", "incomplete download"), ("no-length", "larger than")])
def test_bad_length_response_is_refused_and_removed(tiny, tmp_path, server, monkeypatch, action, reason):
    if action == "no-length":  # a body longer than the expected file, with no Content-Length to announce it
        _serve(server, "m1", {name: content + b"x" * 10 for name, content in tiny.items()}, action)
    else:
        _serve(server, "m1", tiny, action)
    with pytest.raises(AdultDataError, match=reason):
        load_adult(tmp_path, urls=(server.url("m1"),), timeout=TIMEOUT)
    assert list(tmp_path.iterdir()) == []


def test_all_mirrors_failing_lists_every_address(tiny, tmp_path, server):
    with socket.socket() as closed:  # a port nobody listens on: connection refused
        closed.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{closed.getsockname()[1]}/adult/"
    with pytest.raises(AdultDataError) as info:
        load_adult(tmp_path, urls=(server.url("missing"), refused), timeout=TIMEOUT)
    message = str(info.value)
    assert server.url("missing") + "adult.data" in message and "404" in message
    assert refused + "adult.data" in message and "DPEDU_DATA" in message
    assert list(tmp_path.iterdir()) == []


def test_a_silent_server_times_out(tiny, tmp_path):
    with socket.socket() as silent:  # accepts connections (via the backlog) but never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/adult/"
        with pytest.raises(AdultDataError, match="timed out"):
            load_adult(tmp_path, urls=(url,), timeout=0.5)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("action", ["drip-body", "drip-headers"])
def test_a_dripping_server_hits_the_total_deadline(tiny, tmp_path, server, action):
    """One byte every 0.3 s never trips a per-read timeout of 1 s; the total deadline stops it."""
    _serve(server, "m1", tiny, action)
    start = time.monotonic()
    with pytest.raises(AdultDataError, match="timed out") as info:
        load_adult(tmp_path, urls=(server.url("m1"),), timeout=1.0)
    elapsed = time.monotonic() - start
    assert elapsed < 2.5, elapsed  # the deadline (1 s), plus scheduling slack; the drip would take 9 s
    assert "total deadline" in str(info.value)
    assert list(tmp_path.iterdir()) == []  # no .part left behind


@pytest.fixture
def https_server(server, tmp_path_factory, monkeypatch):
    """The ``server`` fixture behind TLS, with a self-signed certificate for 127.0.0.1 that the default
    context trusts (through SSL_CERT_FILE). Needs the openssl command; skipped without it."""
    import ssl

    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    return SimpleNamespace(url=lambda mirror: server.url(mirror).replace("http://", "https://"),
                           routes=server.routes, hits=server.hits)


@pytest.mark.parametrize("action", ["ok", "drip-body"])
def test_https_downloads_and_its_deadline(tiny, tmp_path, https_server, action):
    _serve(https_server, "m1", tiny, action)
    if action == "ok":
        data = load_adult(tmp_path, urls=(https_server.url("m1"),), timeout=TIMEOUT)
        np.testing.assert_array_equal(data.y_train, [-1.0, 1.0, 1.0])
        assert sorted(p.name for p in tmp_path.iterdir()) == ["adult.data", "adult.test"]
        return
    start = time.monotonic()
    with pytest.raises(AdultDataError, match="total deadline"):
        load_adult(tmp_path, urls=(https_server.url("m1"),), timeout=1.0)
    assert time.monotonic() - start < 2.5
    assert list(tmp_path.iterdir()) == []


def _part_name(name, tag):
    return f".{name}.{tag}.part"  # the name tempfile.mkstemp gives a download's temporary file


def test_stale_part_files_are_swept_before_a_download(tiny, tmp_path, server):
    _serve(server, "m1", tiny)
    old = time.time() - download_module.STALE_PART_AGE - 60
    stale = [_part_name("adult.data", "k1ll3d_a"), _part_name("adult.test", "zz9_w4x1")]
    fresh = _part_name("adult.data", "running1")  # a download still in progress elsewhere: kept
    unrelated = [".other.abc.part", "adult.data.part", "notes.txt"]  # not our pattern: kept
    for name in [*stale, fresh, *unrelated]:
        (tmp_path / name).write_bytes(b"partial")
    for name in [*stale, *unrelated]:
        os.utime(tmp_path / name, (old, old))
    load_adult(tmp_path, urls=(server.url("m1"),), timeout=TIMEOUT)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(["adult.data", "adult.test", fresh, *unrelated])


def test_remove_stale_parts_ignores_directories_and_missing_paths(tmp_path):
    directory = tmp_path / _part_name("adult.data", "adirect1")
    directory.mkdir()
    old = time.time() - download_module.STALE_PART_AGE - 60
    os.utime(directory, (old, old))
    assert download_module.remove_stale_parts(tmp_path) == [] and directory.is_dir()
    assert download_module.remove_stale_parts(tmp_path / "missing") == []


def test_a_download_killed_mid_way_leaves_a_part_that_a_later_download_removes(tiny, tmp_path, server):
    """SIGKILL cannot be cleaned up after by the dying process; the next download into the directory does it."""
    _serve(server, "slow", tiny, "drip-body")
    _serve(server, "m1", tiny)
    script = (
        "import sys\n"
        "from dpedu.textbook.datasets import FileDigest, files, load_adult\n"
        f"files.ADULT_FILES.update({{k: FileDigest(*v) for k, v in {dict(datasets.ADULT_FILES)!r}.items()}})\n"
        "files.CACHE_DIR = files.PACKAGE_DIR = files.Path(sys.argv[1]) / 'nothing-here'\n"
        f"load_adult(sys.argv[1], urls=[{server.url('slow')!r}], timeout=60)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
    child = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], env=env)
    try:
        deadline = time.monotonic() + 30
        while not list(tmp_path.glob(".adult.data.*.part")) and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(2 * DRIP_INTERVAL)  # a few bytes in
        assert child.poll() is None, "the child should still be downloading"
    finally:
        child.kill()
        child.wait(timeout=30)
    parts = list(tmp_path.glob(".adult.data.*.part"))
    assert len(parts) == 1  # the problem: the temporary file outlives its process
    old = time.time() - download_module.STALE_PART_AGE - 60
    os.utime(parts[0], (old, old))  # as if it had been left there long ago
    load_adult(tmp_path, urls=(server.url("m1"),), timeout=TIMEOUT)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adult.data", "adult.test"]


def test_an_interrupted_download_removes_its_part(tiny, tmp_path, server, monkeypatch):
    _serve(server, "m1", tiny)

    class Interrupting:
        def update(self, chunk):
            raise KeyboardInterrupt

    monkeypatch.setattr(download_module, "hashlib", SimpleNamespace(sha256=Interrupting))
    with pytest.raises(KeyboardInterrupt):
        load_adult(tmp_path, urls=(server.url("m1"),), timeout=TIMEOUT)
    assert list(tmp_path.iterdir()) == []


def test_download_goes_to_the_first_named_directory(tiny, tmp_path, server, monkeypatch):
    _serve(server, "m1", tiny)
    urls = (server.url("m1"),)
    env = tmp_path / "env"
    monkeypatch.setenv("DPEDU_DATA", str(env))
    assert load_adult(urls=urls, timeout=TIMEOUT).train_file == env / "adult.data"
    home = tmp_path / "home"
    assert load_adult(home, urls=urls, timeout=TIMEOUT).train_file == env / "adult.data"  # env dir now complete
    monkeypatch.delenv("DPEDU_DATA")
    (env / "adult.test").unlink()
    assert load_adult(home, urls=urls, timeout=TIMEOUT).test_file == home / "adult.test"
    assert not files_module.CACHE_DIR.exists()
    for path in (env / "adult.data", home / "adult.data"):
        path.unlink()
    assert load_adult(urls=urls, timeout=TIMEOUT).train_file == files_module.CACHE_DIR / "adult.data"


def test_only_the_missing_file_is_downloaded(tiny, tmp_path, server):
    """The project cache holding one file (a download cut short) gets only the other one."""
    _serve(server, "m1", tiny)
    _write(files_module.CACHE_DIR, {"adult.data": TINY_DATA})
    load_adult(urls=(server.url("m1"),), timeout=TIMEOUT)
    assert server.hits == ["/m1/adult.test"]


# --- bad input ---------------------------------------------------------------------------------------


def test_data_home_that_is_a_file_is_refused(tmp_path):
    path = tmp_path / "adult.data"
    path.write_text("not a directory")
    with pytest.raises(ValueError, match="data_home"):
        load_adult(path)


def test_blank_dpedu_data_is_refused_and_empty_means_unset(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("DPEDU_DATA", " ")
    with pytest.raises(ValueError, match="DPEDU_DATA"):
        load_adult(download=False)
    monkeypatch.setenv("DPEDU_DATA", "")  # the usual convention for environment variables
    monkeypatch.setattr(files_module, "CACHE_DIR", _write(tmp_path / "cache", tiny))
    assert load_adult(download=False).train_file == tmp_path / "cache" / "adult.data"


def test_the_downloader_is_off_the_import_path():
    """``import dpedu`` and loading local files never import urllib.request or http.client."""
    script = (
        "import sys, dpedu\n"
        "net = lambda: [m for m in sys.modules if m in ('urllib.request', 'http.client', 'dpedu.textbook.datasets.download')]\n"
        "before = net()\n"
        "dpedu.textbook.datasets.load_adult(download=False)\n"
        "print(before, net())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DPEDU_DATA"}
    out = subprocess.run([sys.executable, "-c", script], env=dict(env, PYTHONPATH=str(ROOT)), cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.split() == ["[]", "[]"]


def test_dpedu_data_that_is_a_file_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "file"
    path.write_text("")
    monkeypatch.setenv("DPEDU_DATA", str(path))
    with pytest.raises(ValueError, match="DPEDU_DATA"):
        load_adult(download=False)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"data_home": 3}, TypeError, "data_home"),
        ({"data_home": b"/tmp"}, TypeError, "data_home"),
        ({"download": "yes"}, TypeError, "download"),
        ({"download": 1}, TypeError, "download"),
        ({"urls": "http://example.org/adult/"}, TypeError, "urls"),
        ({"urls": ()}, ValueError, "urls"),
        ({"urls": ("ftp://example.org/adult/",)}, ValueError, "urls"),
        ({"urls": (None,)}, TypeError, "urls"),
        ({"timeout": 0}, ValueError, "timeout"),
        ({"timeout": "5"}, TypeError, "timeout"),
        ({"timeout": 1e300}, ValueError, r"timeout must be in \(0, 3600\]"),  # was an OverflowError
        ({"timeout": float("inf")}, ValueError, r"timeout must be in \(0, 3600\]"),
        ({"timeout": float("nan")}, ValueError, "timeout"),
        ({"data_home": ""}, ValueError, "data_home"),  # was silently the current directory
        ({"data_home": "  "}, ValueError, "data_home"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        load_adult(**kwargs)


# --- the real files --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def adult():
    """The real data, found the way load_adult finds it (module scope: before the isolation fixture runs)."""
    return load_adult(download=False)


def _copy_real(adult, directory, *, plain=False):
    """Copy the real files the loader read into ``directory`` (decompressed if ``plain``)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, source in (("adult.data", adult.train_file), ("adult.test", adult.test_file)):
        if plain:
            content = source.read_bytes()
            (directory / name).write_bytes(gzip.decompress(content) if source.suffix == ".gz" else content)
        else:
            shutil.copyfile(source, directory / source.name)
    return directory


@pytest.fixture(scope="module")
def plain_copies(adult, tmp_path_factory):
    return _copy_real(adult, tmp_path_factory.mktemp("adult_plain"), plain=True)


def _column(data, name):
    return data.feature_names.index(name)


def test_adult_shapes_labels_and_positive_rates(adult):
    # adult.names: 45222 instances without unknowns (train=30162, test=15060)
    assert adult.X_train.shape == (30162, 104) and adult.X_test.shape == (15060, 104)
    assert adult.y_train.shape == (30162,) and adult.y_test.shape == (15060,)
    assert (adult.n_train, adult.n_test, adult.n_features) == (30162, 15060, 104)
    assert adult.X_train.dtype == adult.X_test.dtype == np.float64
    assert set(np.unique(adult.y_train)) == set(np.unique(adult.y_test)) == {-1.0, 1.0}
    # '>50K' counts (grep -v '?' | grep -c '>50K'): 7508 and 3700; adult.names gives 24.78 % on both together
    assert int((adult.y_train == 1).sum()) == 7508 and int((adult.y_test == 1).sum()) == 3700
    assert (adult.y_train == 1).mean() == pytest.approx(0.249, abs=5e-4)
    assert (adult.y_test == 1).mean() == pytest.approx(0.246, abs=5e-4)
    assert (7508 + 3700) / 45222 == pytest.approx(0.2478, abs=5e-5)


def test_adult_rows_respect_the_public_norm_bound(adult):
    assert adult.norm_bound == math.sqrt(14)
    for X in (adult.X_train, adult.X_test):
        assert np.linalg.norm(X, axis=1).max() <= math.sqrt(14) + 1e-12


def test_adult_feature_names_and_blocks(adult):
    names = adult.feature_names
    assert len(names) == 104 == len(set(names))
    assert names[0] == "age" and "workclass=Private" in names and "native-country=Holand-Netherlands" in names
    numeric = [_column(adult, c) for c in datasets.ADULT_NUMERIC_COLUMNS]
    for X in (adult.X_train, adult.X_test):
        assert X[:, numeric].min() >= 0.0 and X[:, numeric].max() <= 1.0
    np.testing.assert_array_equal(adult.X_train[:, numeric].min(axis=0), 0.0)  # training min -> 0, max -> 1
    np.testing.assert_array_equal(adult.X_train[:, numeric].max(axis=0), 1.0)
    for column in datasets.ADULT_CATEGORICAL_COLUMNS:
        block = [i for i, name in enumerate(names) if name.startswith(f"{column}=")]
        assert [names[i] for i in block] == sorted(names[i] for i in block)
        assert set(np.unique(adult.X_train[:, block])) == {0.0, 1.0}
        np.testing.assert_array_equal(adult.X_train[:, block].sum(axis=1), 1.0)  # exactly one category
        np.testing.assert_array_equal(adult.X_test[:, block].sum(axis=1), 1.0)  # no unseen test category


def test_adult_categories_match_the_codebook(adult):
    """The categories of adult.names (section 7), except workclass 'Never-worked', whose 7 rows all have a '?'."""
    names_file = SHIPPED / "adult.names"  # shipped with the data
    codebook = {}
    for line in names_file.read_text().splitlines():
        column, sep, values = line.partition(": ")
        if sep and column in datasets.ADULT_CATEGORICAL_COLUMNS:
            codebook[column] = {v.strip() for v in values.rstrip(".").split(",")}
    codebook["workclass"].discard("Never-worked")
    data = adult
    for column in datasets.ADULT_CATEGORICAL_COLUMNS:
        seen = {name.split("=", 1)[1] for name in data.feature_names if name.startswith(f"{column}=")}
        assert seen == codebook[column], column
    assert 6 + sum(len(v) for v in codebook.values()) == 104


def test_adult_first_rows_decoded_by_hand(adult):
    """adult.data line 1 and adult.test line 2, scaled with the training ranges (checked with awk on the
    rows without '?'): age [17, 90], fnlwgt [13769, 1484705], education-num [1, 16], capital-gain [0, 99999],
    capital-loss [0, 4356], hours-per-week [1, 99]."""
    ranges = {"age": (17, 90), "fnlwgt": (13769, 1484705), "education-num": (1, 16),
              "capital-gain": (0, 99999), "capital-loss": (0, 4356), "hours-per-week": (1, 99)}  # fmt: skip
    rows = [
        (adult.X_train[0], adult.y_train[0], [39, 77516, 13, 2174, 0, 40],
         ["workclass=State-gov", "education=Bachelors", "marital-status=Never-married", "occupation=Adm-clerical",
          "relationship=Not-in-family", "race=White", "sex=Male", "native-country=United-States"], -1.0),
        (adult.X_test[0], adult.y_test[0], [25, 226802, 7, 0, 0, 40],
         ["workclass=Private", "education=11th", "marital-status=Never-married", "occupation=Machine-op-inspct",
          "relationship=Own-child", "race=Black", "sex=Male", "native-country=United-States"], -1.0),
    ]  # fmt: skip
    for x, label, numbers, ones, expected_label in rows:
        expected = np.zeros(104)
        for column, value in zip(datasets.ADULT_NUMERIC_COLUMNS, numbers):
            low, high = ranges[column]
            expected[_column(adult, column)] = (value - low) / (high - low)
        for name in ones:
            expected[_column(adult, name)] = 1.0
        np.testing.assert_allclose(x, expected, rtol=0, atol=1e-15)
        assert label == expected_label


def test_adult_test_values_outside_the_training_range_are_clipped(adult):
    # adult.test has fnlwgt 1490400 (> training max 1484705) and 13492 (< training min 13769)
    fnlwgt = adult.X_test[:, _column(adult, "fnlwgt")]
    assert int((fnlwgt == 1.0).sum()) >= 1 and int((fnlwgt == 0.0).sum()) >= 1


def test_dpedu_data_environment_variable_is_honoured(adult, monkeypatch, tmp_path):
    monkeypatch.setattr(files_module, "PACKAGE_DIR", SHIPPED)  # the shipped copy is there too, and loses
    env = _copy_real(adult, tmp_path / "env")
    monkeypatch.setenv("DPEDU_DATA", str(env))
    data = load_adult(download=False)
    assert data.train_file == env / adult.train_file.name and data.test_file == env / adult.test_file.name
    for mine, reference in zip(data, adult):
        np.testing.assert_array_equal(mine, reference)


def test_data_home_is_honoured_before_dpedu_data_and_the_shipped_copy(adult, monkeypatch, tmp_path, plain_copies):
    monkeypatch.setattr(files_module, "PACKAGE_DIR", SHIPPED)
    monkeypatch.setenv("DPEDU_DATA", str(_copy_real(adult, tmp_path / "env")))
    home = shutil.copytree(plain_copies, tmp_path / "home")
    data = load_adult(home, download=False)
    assert (data.train_file, data.test_file) == (home / "adult.data", home / "adult.test")
    for mine, reference in zip(data, adult):
        np.testing.assert_array_equal(mine, reference)


def test_the_shipped_copy_is_found_when_nothing_else_is_there(adult, monkeypatch):
    monkeypatch.setattr(files_module, "PACKAGE_DIR", SHIPPED)  # no DPEDU_DATA, empty project cache
    data = load_adult(download=False)
    assert (data.train_file, data.test_file) == (SHIPPED / "adult.data.gz", SHIPPED / "adult.test.gz")
    for mine, reference in zip(data, adult):
        np.testing.assert_array_equal(mine, reference)


def test_the_project_cache_comes_before_the_shipped_copy(adult, monkeypatch, plain_copies):
    monkeypatch.setattr(files_module, "PACKAGE_DIR", SHIPPED)
    monkeypatch.setattr(files_module, "CACHE_DIR", plain_copies)
    assert load_adult(download=False).train_file == plain_copies / "adult.data"


def test_the_shipped_files_match_their_recorded_checksums():
    """dpedu/data/adult/README.txt lists ``sha256  name`` for each shipped file; ADULT_GZ_SHA256 agrees."""
    listed = {}
    for line in (SHIPPED / "README.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and len(parts[0]) == 64:
            listed[parts[1]] = parts[0]
    shipped = sorted(p.name for p in SHIPPED.iterdir() if p.name != "README.txt")
    assert sorted(listed) == shipped == ["adult.data.gz", "adult.names", "adult.test.gz"]
    for name, sha256 in listed.items():
        assert hashlib.sha256((SHIPPED / name).read_bytes()).hexdigest() == sha256, name
    for name, sha256 in files_module.ADULT_GZ_SHA256.items():
        assert listed[f"{name}.gz"] == sha256


def test_the_shipped_files_are_declared_as_package_data():
    """A non-editable install copies only the files pyproject.toml lists; every shipped file must match one."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["dpedu"]
    package_root = SHIPPED.parents[1]
    for path in SHIPPED.iterdir():
        relative = path.relative_to(package_root).as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative


def test_plain_copies_load_identically(adult, plain_copies):
    data = load_adult(plain_copies, download=False)
    assert (data.train_file.name, data.test_file.name) == ("adult.data", "adult.test")
    assert data.feature_names == adult.feature_names
    for mine, reference in zip(data, adult):
        np.testing.assert_array_equal(mine, reference)


def test_real_files_download_from_a_local_mirror(adult, plain_copies, tmp_path, server):
    _serve(server, "uci", {name: (plain_copies / name).read_bytes() for name in ("adult.data", "adult.test")})
    data = load_adult(tmp_path, urls=(server.url("uci"),), timeout=TIMEOUT)  # real checksums, not patched
    for mine, reference in zip(data, adult):
        np.testing.assert_array_equal(mine, reference)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adult.data", "adult.test"]


# --- make_toy --------------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 60), d=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_make_toy_rows_in_unit_ball_and_labels_pm1(n, d, seed):
    X, y = make_toy(n=n, d=d, rng=seed)
    assert X.shape == (n, d) and y.shape == (n,)
    assert np.linalg.norm(X, axis=1).max() <= 1.0 + 1e-12  # rounding only: radii are U^(1/d) < 1
    assert set(np.unique(y)) <= {-1.0, 1.0}


def test_make_toy_is_deterministic_given_rng():
    X1, y1 = make_toy(n=50, d=4, rng=11)
    X2, y2 = make_toy(n=50, d=4, rng=np.random.default_rng(11))
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    X3, _ = make_toy(n=50, d=4, rng=12)
    assert not np.array_equal(X1, X3)


def test_make_toy_labels_follow_the_logistic_model():
    """Bayes accuracy E[max(p, 1 - p)], p = sigmoid(s theta.x), x uniform in the 5-ball: 0.876 for s = 10
    and 0.500 for s = 1e-3 (Monte Carlo, 4e5 draws). A fitted linear classifier on n = 2000 is within a few
    binomial standard deviations (0.0074 and 0.011) of that."""
    from sklearn.linear_model import LogisticRegression

    X, y = make_toy(n=2000, d=5, rng=3, signal=10.0)
    assert LogisticRegression().fit(X, y).score(X, y) > 0.84
    X, y = make_toy(n=2000, d=5, rng=3, signal=1e-3)
    assert LogisticRegression().fit(X, y).score(X, y) < 0.56


@pytest.mark.parametrize(
    "kwargs, error",
    [({"n": 0}, ValueError), ({"n": 2.5}, TypeError), ({"d": 0}, ValueError), ({"d": True}, TypeError),
     ({"signal": 0.0}, ValueError), ({"signal": float("inf")}, ValueError), ({"rng": "seed"}, TypeError),
     ({"rng": -1}, ValueError)],
)  # fmt: skip
def test_make_toy_bad_arguments(kwargs, error):
    with pytest.raises(error):
        make_toy(**kwargs)


def test_adult_data_is_a_frozen_dataclass(tiny, tmp_path):
    data = load_adult(_write(tmp_path, tiny), download=False)
    assert isinstance(data, AdultData)
    with pytest.raises(AttributeError):
        data.X_train = None
