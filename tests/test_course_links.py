"""Every link of every chapter, followed where the notebook is opened, and the table of what resolved.

A chapter's "Uses:" (API) and "Notes:" links point into the folder ``reference/`` beside the notebook
(:mod:`dpedu.course.booklinks`, :mod:`dpedu.course.reference`). This test opens the chapters in each place a
student or an instructor opens them and follows every link the way the place does:

* **JupyterLab** over ``chapters/`` (a copy, after ``python -m dpedu reference chapters`` as the README says), over a
  student copy (``python -m dpedu strip-solutions``), over nbgrader's ``release/`` of a course kit, and over the
  chapters a pip install writes (``python -m dpedu chapters``, run by the wheel's venv, whose own JupyterLab serves
  them): a real server (``python -m jupyterlab``, as ``jupyter lab DIR`` starts it) on a free localhost port with
  token auth. Each notebook is read through the server's contents API; each link is resolved against the
  notebook's folder as JupyterLab's link handler does (a path above the served folder is refused, not
  requested), the target is requested from the contents API and from ``/files/`` (200 both), and its fragment
  must be an anchor of the rendered page: an element id in the Markdown (JupyterLab keeps it as
  ``data-jupyter-id``, the attribute its Markdown viewer scrolls to) or the id JupyterLab gives a heading.
* **Feedback pages**: each chapter graded by nbgrader in a course kit without executing it (the links are in the
  markdown, which execution does not change; tests/test_instructor.py and tests/test_wheel.py grade executed
  submissions) and its feedback page opened in headless Chromium from a copy of its folder, as if emailed: every
  link is an anchor of the page, the element exists, and the browser scrolls to it.
* **The book**: when ``DPEDU_BOOK_HTML`` names a built student edition (CI builds it first), every link of each
  chapter page leads to an existing page and id; tests/test_book.py checks the book in full.

The table printed at the end counts, per kind of link and place, the links that resolved out of those followed.
Chromium (``/usr/bin/chromium`` and ``chromedriver``; the README says how to install them) is needed for the
feedback column: without it the column is skipped locally, and the test fails in CI (``CI=true``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import posixpath
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import ROOT, clean_env, run_checked
from dpedu.cli import main
from dpedu.course.booklinks import link_kind

pytest.importorskip("nbgrader")
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
CHROMIUM = os.environ.get("DPEDU_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("DPEDU_CHROMEDRIVER", "/usr/bin/chromedriver")
IN_CI = os.environ.get("CI", "").strip().lower() == "true"
KINDS = ("api", "notes", "doc")
# what the URL standard leaves as it is in a fragment (the fragment percent-encode set: controls, space, " < > `)
FRAGMENT_SAFE = "".join(chr(c) for c in range(33, 127) if chr(c) not in '"<>`')


# -- a Jupyter server over a folder -------------------------------------------------------------------------------

def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class JupyterServer:
    """``python -m jupyterlab --no-browser DIR`` on a free localhost port with a token, run by ``python``."""

    def __init__(self, root, python=sys.executable, env=None, home=None):
        self.root, self.token = Path(root), os.urandom(16).hex()
        self.port = _free_port()
        home = Path(home or root.parent) / f".jupyter-{self.port}"
        env = dict(env or clean_env(), JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
                   JUPYTER_RUNTIME_DIR=str(home / "run"), IPYTHONDIR=str(home / "ipython"))
        self.log = home / "server.log"
        home.mkdir(parents=True, exist_ok=True)
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [str(python), "-m", "jupyterlab", "--no-browser", f"--port={self.port}", "--ServerApp.ip=127.0.0.1",
                 "--ServerApp.port_retries=0", "--allow-root", f"--IdentityProvider.token={self.token}",
                 str(self.root)], env=env, stdout=log, stderr=subprocess.STDOUT)

    def wait(self, timeout=300):
        """Return once the server answers (servers started together start side by side)."""
        deadline = time.monotonic() + timeout
        while self.get("api/status")[0] != 200:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the Jupyter server over {self.root} did not start:\n{self.log.read_text()[-2000:]}")
            time.sleep(0.5)
        return self

    def get(self, path, **query):
        url = f"http://127.0.0.1:{self.port}/{urllib.parse.quote(path)}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        request = urllib.request.Request(url, headers={"Authorization": f"token {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, b""
        except OSError:
            return None, b""

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _markdown_ids(text):
    """The anchors JupyterLab's Markdown viewer can scroll to: element ids written in the page (its sanitizer keeps
    them as ``data-jupyter-id``), and each heading's id (its text, spaces made hyphens; createHeaderId)."""
    ids = set(re.findall(r"""\bid=["']([^"']+)["']""", text))
    fence = None
    for line in text.split("\n"):
        if re.match(r"^\s*(```|~~~)", line):
            fence = None if fence else line.strip()[:3]
            continue
        heading = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            ids.add(re.sub(r"<[^>]+>", "", heading[1]).replace(" ", "-"))
    return ids


def follow_in_jupyter(server, notebook_path):
    """``[(kind, link, problem or None)]`` for the links of the notebook at server path ``notebook_path``."""
    status, body = server.get(f"api/contents/{notebook_path}", content=1)
    assert status == 200, f"{notebook_path}: the server answered {status}"
    cells = json.loads(body)["content"]["cells"]
    links = [m for c in cells if c["cell_type"] == "markdown"
             for m in re.findall(r"\]\(([^)\s]+)\)", "".join(c["source"]))]
    results = []
    for link in links:
        kind = link_kind(link)
        parts = urllib.parse.urlsplit(link)
        if parts.scheme in ("http", "https", "mailto"):
            continue                                    # the browser opens it; nothing of the course
        what = kind[0] if kind else "other"
        target = posixpath.normpath(posixpath.join(posixpath.dirname(notebook_path), urllib.parse.unquote(parts.path)))
        if parts.scheme or link.startswith("/") or target == ".." or target.startswith("../"):
            results.append((what, link, "outside the folder the server serves"))
            continue
        status, body = server.get(f"api/contents/{target}", content=1, type="file", format="text")
        files_status, _ = server.get(f"files/{target}")
        if status != 200 or files_status != 200:
            results.append((what, link, f"HTTP {status} (contents), {files_status} (files)"))
            continue
        # the fragment as the browser hands it to JupyterLab's link handler (a.hash: non-ASCII percent-encoded),
        # which its Markdown viewer then looks up as it is
        fragment = urllib.parse.quote(urllib.parse.unquote(parts.fragment), safe=FRAGMENT_SAFE)
        text = json.loads(body)["content"]
        if fragment and fragment not in _markdown_ids(text):
            results.append((what, link, f"no anchor {fragment!r} in {target}"))
            continue
        results.append((what, link, None))
    return results


def follow_places(places):
    """``{place: results}`` for ``{place: (root, notebooks, python, env)}``: one server per place, started together."""
    servers = {place: JupyterServer(root, python=python, env=env) for place, (root, _, python, env) in places.items()}
    try:
        return {place: [r for notebook in places[place][1] for r in
                        follow_in_jupyter(server.wait(), notebook.relative_to(server.root).as_posix())]
                for place, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()


# -- the places -----------------------------------------------------------------------------------------------------

def _chapters_place(tmp_path):
    folder = tmp_path / "chapters"
    folder.mkdir()
    for chapter in CHAPTERS:
        shutil.copy2(chapter, folder / chapter.name)
    assert main(["reference", str(folder)]) == 0            # as the README says, before `jupyter lab chapters`
    return folder, sorted(folder.glob("*.ipynb"))


def _student_place(tmp_path):
    assert main(["strip-solutions", str(ROOT / "chapters"), str(tmp_path / "student")]) == 0
    return tmp_path / "student", sorted((tmp_path / "student").glob("*.ipynb"))


def _course(tmp_path):
    from dpedu.course import instructor

    course = instructor.make_course(tmp_path / "course", mathjax=instructor.default_mathjax())
    for chapter in CHAPTERS:
        instructor.generate(course, chapter.stem)
    return course


def _feedback_pages(course):
    """Every chapter graded (its source as the submission) without executing it, and its feedback page."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    from dpedu.course import instructor

    config = Config()
    config.merge(PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config())
    default = Autograde.class_traits()["autograde_preprocessors"].default()
    config.Autograde.autograde_preprocessors = [p for p in default if p is not Execute]
    api = NbGraderAPI(config=config)
    pages = []
    for chapter in CHAPTERS:
        instructor.copy_submission(course, chapter.stem, "links", course / "source" / chapter.stem / chapter.name)
        for step in (api.autograde(chapter.stem, "links", create=True), api.generate_feedback(chapter.stem, "links")):
            assert step["success"], step.get("error") or step.get("log")
        pages.append(course / "feedback" / "links" / chapter.stem / f"{chapter.stem}.html")
    return pages


def _follow_in_chromium(pages, tmp_path):
    """``[(kind, link, problem or None)]`` for every link of the feedback pages, each page copied elsewhere (as
    if emailed) and opened in headless Chromium, every link followed to its anchor."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
                 "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    results = []
    try:
        for page in pages:
            inbox = tmp_path / "inbox" / page.parent.name
            inbox.mkdir(parents=True)
            emailed = Path(shutil.copy2(page, inbox / page.name))
            driver.get(emailed.as_uri())
            WebDriverWait(driver, 120).until(lambda d: d.execute_script(   # formulas typeset: the layout is final
                "return !(window.MathJax && MathJax.startup && MathJax.startup.promise) || window.__done || "
                "(MathJax.startup.promise.then(() => { window.__done = true; }), false);"))
            hrefs = driver.execute_script("return Array.from(document.querySelectorAll('a[href]'))"
                                          ".map(a => a.getAttribute('href'));")
            for href in hrefs:
                if href.startswith(("http:", "https:", "mailto:", "data:")) or not href.startswith("#dpedu-reference"):
                    if not href.startswith(("http:", "https:", "mailto:", "data:", "#")):
                        results.append(("other", href, "a relative link: nothing beside an emailed page"))
                    continue
                kind = next((k for k in KINDS if href.startswith(f"#dpedu-reference-{k}-")), "other")
                driver.get(emailed.as_uri() + href)
                landed = driver.execute_script(
                    "const e = document.getElementById(arguments[0]); if (!e) return null;"
                    "const r = e.getBoundingClientRect(); return r.top >= -1 && r.top < window.innerHeight;", href[1:])
                results.append((kind, href, None if landed else
                                ("no element with this id" if landed is None else "the page did not scroll to it")))
    finally:
        driver.quit()
    return results


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


def _parsed(path, cache={}):  # noqa: B006 (a cache of parsed pages for one run)
    if path not in cache:
        parser = _Ids()
        parser.feed(Path(path).read_text(encoding="utf-8"))
        cache[path] = parser
    return cache[path]


def follow_in_book(site):
    """``[(kind, link, problem or None)]`` for the API and notes links of every chapter page of a built book."""
    results = []
    for page in sorted((Path(site) / "chapters").glob("[0-9][0-9]_*.html")):
        for href in _parsed(page).hrefs:
            parts = urllib.parse.urlsplit(href)
            if parts.scheme or not parts.path or not (parts.path.startswith("../api/") or parts.path == "../math.html"):
                continue
            kind = "notes" if parts.path == "../math.html" else "api"
            target = (page.parent / parts.path).resolve()
            problem = None if target.is_file() else "no such page"
            if problem is None and parts.fragment and urllib.parse.unquote(parts.fragment) not in _parsed(target).ids:
                problem = f"no id {parts.fragment!r} in {target.name}"
            results.append((kind, href, problem))
    return results


def _table(columns):
    """The markdown table: one row per kind of link (API and notes always; others when some place has them), one
    column per place, "resolved/followed" in each cell (a column that could not be checked says why)."""
    lines = ["| link kind | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for kind in KINDS + ("other",):
        found = {place: [r for r in results if r[0] == kind] for place, results in columns.items()
                 if not isinstance(results, str)}
        if kind not in ("api", "notes") and not any(found.values()):
            continue
        cells = [results if isinstance(results, str) else
                 f"{sum(r[2] is None for r in found[place])}/{len(found[place])}" if found[place] else "–"
                 for place, results in columns.items()]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def test_every_link_resolves_where_the_notebook_is_opened(tmp_path, instructor_venv, capsys):
    broken, here, seconds, start = [], (sys.executable, None), {}, time.perf_counter()
    course = _course(tmp_path)
    python, env, _ = instructor_venv            # the wheel's venv: its dpedu writes the chapters, its server serves
    work = tmp_path / "pip"
    work.mkdir()
    run_checked([str(python), "-m", "dpedu", "chapters", "my-course"], cwd=work, env=env)
    places = {"chapters/": (*_chapters_place(tmp_path), *here), "student copy": (*_student_place(tmp_path), *here),
              "release/": (course / "release", sorted((course / "release").glob("*/*.ipynb")), *here),
              "pip install": (work / "my-course", sorted((work / "my-course").glob("*.ipynb")), python, env)}
    seconds["the places"], start = time.perf_counter() - start, time.perf_counter()
    columns = follow_places(places)
    seconds["four Jupyter servers"], start = time.perf_counter() - start, time.perf_counter()
    pages = _feedback_pages(course)
    seconds["feedback pages"], start = time.perf_counter() - start, time.perf_counter()
    if Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file() and importlib.util.find_spec("selenium"):
        columns["feedback"] = _follow_in_chromium(pages, tmp_path)
        seconds["Chromium"] = time.perf_counter() - start
    elif IN_CI:
        pytest.fail(f"the feedback column needs {CHROMIUM} and {CHROMEDRIVER} (CI installs them)")
    else:
        columns["feedback"] = "no Chromium here"
    site = os.environ.get("DPEDU_BOOK_HTML")
    columns["book"] = follow_in_book(site) if site else "not built here"

    for place, results in columns.items():
        if isinstance(results, str):
            continue
        broken += [f"{place}: {link} ({problem})" for _, link, problem in results if problem]
    with capsys.disabled():
        print("\nchapter links: resolved / followed, by kind of link and place opened\n" + _table(columns) + "\n("
              + ", ".join(f"{what} {value:.0f} s" for what, value in seconds.items()) + ")")
    assert not broken, f"{len(broken)} links lead nowhere:\n" + "\n".join(broken[:40])
    expected = sum(len(re.findall(r"\]\((?:dpedu\.|\.\./docs/)", p.read_text())) for p in
                   (ROOT / "chapters" / "_src").glob("[0-9][0-9]_*.py"))
    for place in ("chapters/", "student copy", "release/", "pip install"):
        assert len(columns[place]) == expected, (place, len(columns[place]), expected)
    if not isinstance(columns["feedback"], str):
        assert len(columns["feedback"]) == expected, ("feedback", len(columns["feedback"]), expected)


def test_a_link_above_the_served_folder_or_to_a_missing_anchor_is_reported(tmp_path):
    """The follower fails what JupyterLab cannot open: ``../docs/math.md`` from a notebook at the server's root
    (what the chapters linked before), a missing file and an anchor the page does not have."""
    folder, _ = _chapters_place(tmp_path)
    nb = json.loads(CHAPTERS[0].read_text())
    nb["cells"] = [{"cell_type": "markdown", "id": "x", "metadata": {}, "source":
                    "[a](../docs/math.md#2-sensitivity) [b](reference/nope.md) [c](reference/math.md#no-such-anchor) "
                    "[d](reference/math.md#2-sensitivity) [e](reference/math.md#13-rényi-differential-privacy)"}]
    (folder / "probe.ipynb").write_text(json.dumps(nb))
    results = follow_places({"probe": (folder, [folder / "probe.ipynb"], sys.executable, None)})["probe"]
    problems = [problem for _, _, problem in results]
    assert problems[0] == "outside the folder the server serves"
    assert problems[1].startswith("HTTP 404") and "no anchor 'no-such-anchor'" in problems[2]
    assert problems[3] is None and problems[4] is None, problems
    # JupyterLab is handed the fragment percent-encoded (a.hash): without that form of the anchor, e lands nowhere
    notes = folder / "reference" / "math.md"
    notes.write_text(notes.read_text().replace('<a id="13-r%C3%A9nyi-differential-privacy"></a>', ""))
    results = follow_places({"probe": (folder, [folder / "probe.ipynb"], sys.executable, None)})["probe"]
    assert "no anchor '13-r%C3%A9nyi-differential-privacy'" in results[4][2]
