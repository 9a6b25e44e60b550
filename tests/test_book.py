"""The rendered book (``docs/``), checked in a real headless browser.

The book has two editions (``python docs/build.py --edition both``): the **student** edition (every exercise a
stub, no reference solution anywhere in the site) and the **instructor** edition (the solutions, labelled).
Session fixtures provide the built sites: the directories named by ``DPEDU_BOOK_HTML`` (student) and
``DPEDU_BOOK_INSTRUCTOR_HTML`` when ``.ci/run`` has already built them, otherwise one fresh fast-mode build of
both (``python docs/build.py --edition both --out <tmp>``, warnings as errors). The browser checks below run on
the student edition; the edition tests compare the two.
A static file server on 127.0.0.1 serves it; headless Chromium (Selenium, ``/usr/bin/chromedriver``) loads:

* every chapter page and a sample of API pages: no console errors, every ``<img>`` decoded (naturalWidth > 0),
  MathJax rendered (``mjx-container`` elements where the page has math, no raw ``\\(``, ``\\[`` or ``$...$``
  left in the visible text);
* the index: every internal link answers HTTP 200;
* every figure: its smallest text at least ``MIN_TEXT_PX`` CSS pixels as displayed (see
  :func:`smallest_text_px`), and a click opens the image at full size;
* every code and output block: nothing cut at the column's edge (wrapped, no horizontal overflow).

Static checks: no raw TeX (``^{``, ``_{``, ``\\frac``, ...) in the visible text of any page; the student edition
holds no solution marker or solution line in any file (HTML, ``_sources/``, notebooks); the instructor edition
shows every solution inside a labelled box, under the "Instructor edition" banner.

A static check walks every built HTML page and verifies that each internal ``href`` names an existing file
and, when it has a ``#fragment``, an existing id in it. The site must load nothing from another host.
Screenshots of a few pages go to ``docs/_build/screenshots/`` (git-ignored).

Skips (with the reason) only when Sphinx, Selenium, Chromium or chromedriver is missing, and fails
instead when ``CI=true``.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SCREENSHOTS = DOCS / "_build" / "screenshots"
CHROMIUM = os.environ.get("DPEDU_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("DPEDU_CHROMEDRIVER", "/usr/bin/chromedriver")
BUILD_TIMEOUT = 1800        # seconds; a fast-mode build takes a few minutes
API_SAMPLE = 12             # API pages loaded in the browser (the static link check covers all of them)
IN_CI = os.environ.get("CI", "").strip().lower() == "true"


def _missing_tools():
    missing = [name for name in ("sphinx", "myst_nb", "numpydoc", "furo", "selenium")
               if importlib.util.find_spec(name) is None]
    missing += [path for path in (CHROMIUM, CHROMEDRIVER) if not Path(path).is_file()]
    return missing


def _require_tools():
    missing = _missing_tools()
    if missing:
        message = ("the book test needs " + ", ".join(missing) + " (pip install -r requirements.txt; "
                   "apt-get install -y chromium chromium-driver)")
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


# -- the site -----------------------------------------------------------------------------------------------------

def _build_both(tmp_path_factory):
    out = tmp_path_factory.mktemp("book")
    env = dict(os.environ, DPEDU_FAST="1", PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    result = subprocess.run([sys.executable, str(DOCS / "build.py"), "--edition", "both", "--out", str(out)],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    if result.returncode != 0:
        warnings = [line for line in result.stderr.splitlines() if "WARNING" in line or "ERROR" in line]
        pytest.fail("the book build failed (warnings are errors):\n" + "\n".join(warnings or
                    result.stderr.splitlines()[-40:]))
    return {"student": out / "student", "instructor": out / "instructor"}


@pytest.fixture(scope="session")
def editions(tmp_path_factory):
    """{"student": its directory, "instructor": its directory}: prebuilt (by .ci/run) or built once here."""
    _require_tools()
    prebuilt = {"student": os.environ.get("DPEDU_BOOK_HTML"),
                "instructor": os.environ.get("DPEDU_BOOK_INSTRUCTOR_HTML")}
    if all(prebuilt.values()):
        paths = {edition: Path(path) for edition, path in prebuilt.items()}
        for edition, path in paths.items():
            assert (path / "index.html").is_file(), f"the {edition} edition at {path} holds no index.html"
        return paths
    return _build_both(tmp_path_factory)


@pytest.fixture(scope="session")
def site(editions):
    """The student edition's directory (what a student reads; the browser checks run on it)."""
    return editions["student"]


@pytest.fixture(scope="session")
def instructor_site(editions):
    return editions["instructor"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@pytest.fixture(scope="session")
def server(site):
    """The site's base URL, served by http.server on 127.0.0.1 (a free port) in a thread."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser(server, tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1280,1000",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


# -- reading the built HTML ---------------------------------------------------------------------------------------

class _Page(HTMLParser):
    """The ids, hrefs and srcs of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.hrefs, self.srcs = set(), [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
        if tag in ("link",) and attrs.get("href"):
            self.srcs.append(attrs["href"])
        if tag in ("script", "img", "iframe", "source") and attrs.get("src"):
            self.srcs.append(attrs["src"])


@functools.lru_cache(maxsize=None)
def _parse(path):
    page = _Page()
    page.feed(Path(path).read_text(encoding="utf-8"))
    return page


def _pages(site):
    return sorted(site.rglob("*.html"))


def _chapters(site):
    return sorted((site / "chapters").glob("[0-9][0-9]_*.html"))


def _is_external(url):
    return urlsplit(url).scheme not in ("", "file")


def _wait_for_mathjax(driver, timeout=30):
    """Wait until MathJax 3 has finished its first typesetting pass (or the page has no MathJax)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(lambda d: d.execute_script(
        "return document.readyState === 'complete' && (typeof MathJax === 'undefined' || "
        "(MathJax.startup !== undefined && MathJax.startup.promise !== undefined && "
        "(window.__mjDone || (MathJax.startup.promise.then(() => { window.__mjDone = true; }), false))));"))


def _severe_console_messages(driver):
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


RAW_MATH = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$[^$\s][^$]*\$")


def _check_page(driver, url, *, expect_math=None):
    """Load ``url``; return the problems found (console errors, broken images, untypeset math)."""
    driver.get(url)
    _wait_for_mathjax(driver)
    problems = [f"console: {message}" for message in _severe_console_messages(driver)]
    broken = driver.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
        ".map(i => i.src);")
    problems += [f"image not loaded: {src}" for src in broken]
    has_math_source = driver.execute_script("return document.querySelectorAll('.math, div.math').length;")
    typeset = driver.execute_script("return document.querySelectorAll('mjx-container').length;")
    if (has_math_source or expect_math) and typeset == 0:
        problems.append(f"math not typeset ({has_math_source} math elements, no mjx-container)")
    text = driver.execute_script(
        "const c = document.querySelector('article') || document.body;"
        "const clone = c.cloneNode(true);"
        "clone.querySelectorAll('pre, code, script, style, mjx-container, .highlight, .sig').forEach(e => e.remove());"
        "return clone.innerText;")
    raw = RAW_MATH.findall(text)
    if raw:
        problems.append(f"raw TeX left in the text: {raw[:5]}")
    return problems


# -- tests --------------------------------------------------------------------------------------------------------

def test_every_internal_link_and_anchor_exists(site):
    """Static check of every page: each internal href names an existing file and, with #x, an existing id."""
    broken = []
    for page in _pages(site):
        parsed = _parse(str(page))
        for href in parsed.hrefs + parsed.srcs:
            if _is_external(href) or href.startswith(("mailto:", "javascript:", "data:")):
                continue
            parts = urlsplit(href)
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {href} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _parse(str(target)).ids:
                broken.append(f"{page.relative_to(site)}: {href} (no id {parts.fragment!r})")
    assert not broken, f"{len(broken)} broken internal links:\n" + "\n".join(broken[:50])


def test_site_loads_nothing_from_another_host(site):
    """No CDN: every script, stylesheet and image the pages load is served by the site itself."""
    remote = sorted({f"{page.relative_to(site)}: {src}" for page in _pages(site)
                     for src in _parse(str(page)).srcs if _is_external(src)})
    assert not remote, "resources loaded from another host:\n" + "\n".join(remote[:30])
    mathjax = site / "_static" / "mathjax" / "tex-chtml.js"
    assert mathjax.is_file(), "MathJax is not served from the site's _static/mathjax/"


def test_book_has_every_chapter_the_api_and_the_reference_pages(site):
    chapters = sorted(p.stem for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    assert chapters and [p.stem for p in _chapters(site)] == chapters
    for name in ("index", "glossary", "references", "api", "data/README"):
        assert (site / f"{name}.html").is_file(), name
    if (DOCS / "math.md").is_file():
        assert (site / "math.html").is_file()
    assert (site / "api" / "dpedu.html").is_file()
    assert any((site / "api").glob("dpedu.textbook.training*.html"))


def test_chapters_load_in_the_browser_with_math_and_figures(site, server, browser):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems, figures = {}, {}
    for page in _chapters(site):
        url = urljoin(server, page.relative_to(site).as_posix())
        found = _check_page(browser, url, expect_math=True)
        if found:
            problems[page.name] = found
        figures[page.name] = browser.execute_script("return document.images.length;")
    with_figure = max(figures, key=figures.get)
    assert figures[with_figure] > 0, "no chapter shows a figure"
    browser.get(urljoin(server, f"chapters/{with_figure}"))
    _wait_for_mathjax(browser)
    figure = max(browser.find_elements("css selector", "article img"),
                 key=lambda img: int(img.get_attribute("naturalWidth") or 0))
    browser.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});", figure)
    browser.save_screenshot(str(SCREENSHOTS / "chapter_with_figure.png"))
    assert not problems, problems


def test_sample_of_api_pages_load_in_the_browser(site, server, browser):
    pages = sorted((site / "api").glob("dpedu*.html"))
    assert pages, "no API pages"
    step = max(1, len(pages) // API_SAMPLE)
    sample = pages[::step][:API_SAMPLE] + [site / "api" / "dpedu.html"]
    problems = {}
    for page in sample:
        found = _check_page(browser, urljoin(server, page.relative_to(site).as_posix()))
        if found:
            problems[page.name] = found
    assert not problems, problems
    # a function page with math in its docstring, for the screenshot
    with_math = next((p for p in pages if "class=\"math" in p.read_text(encoding="utf-8")
                      and p.stem.count(".") >= 2), pages[0])
    browser.get(urljoin(server, with_math.relative_to(site).as_posix()))
    _wait_for_mathjax(browser)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "api_page.png"))


def test_index_navigation_resolves(site, server, browser):
    """The index loads cleanly; every internal link on it (toctree, prev/next, README) answers HTTP 200."""
    index = urljoin(server, "index.html")
    assert _check_page(browser, index) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "index.png"))
    links = browser.execute_script("return Array.from(document.querySelectorAll('a[href]')).map(a => a.href);")
    internal = sorted({link.split("#")[0] for link in links if link.startswith(server)})
    assert any("chapters/01_" in link for link in internal), "the index does not link the first chapter"
    bad = []
    for link in internal:
        try:
            with urllib.request.urlopen(link, timeout=10) as response:
                status = response.status
        except urllib.error.HTTPError as error:
            status = error.code
        if status != 200:
            bad.append(f"{link}: HTTP {status}")
    assert not bad, bad
    # prev/next: consecutive chapters link each other
    chapters = _chapters(site)
    for previous, following in zip(chapters, chapters[1:]):
        hrefs = {urljoin(previous.name, h).split("#")[0] for h in _parse(str(previous)).hrefs}
        assert following.name in hrefs, f"{previous.name} has no link to the next chapter {following.name}"


def test_glossary_and_math_pages_typeset(site, server, browser):
    page = "math.html" if (site / "math.html").is_file() else "glossary.html"
    problems = _check_page(browser, urljoin(server, page), expect_math=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "math_page.png"))
    assert problems == [], problems
    glossary = _parse(str(site / "glossary.html")).ids
    for term in ("Epsilon", "Delta", "Neighbouring-datasets", "Sensitivity", "Clipping", "Noise-multiplier",
                 "Composition", "Moments-accountant", "RDP", "zCDP", "PLD", "Canary", "Audit"):
        assert f"term-{term}" in glossary, term


# -- the two editions ---------------------------------------------------------------------------------------------

MARKERS = ("BEGIN SOLUTION", "END SOLUTION")
# Pages that document the marker machinery itself (dpedu.course.exercises and the strip-solutions command): they name the
# markers in examples, and hold no chapter's solution (the solution-line check below still covers them).
MARKER_DOCS = ("api/dpedu.course.exercises", "_modules/dpedu/course/exercises.html", "_modules/dpedu/cli/course.html")
MIN_SOLUTION_LINE = 16      # shorter solution lines ("C = 5.0", "return x") are not telling on their own


class _Text(HTMLParser):
    """The text of an HTML page, optionally without the contents of some tags or classes."""

    def __init__(self, skip_tags=(), skip_classes=()):
        super().__init__(convert_charrefs=True)
        self.skip_tags, self.skip_classes = set(skip_tags), set(skip_classes)
        self.stack, self.parts = [], []

    VOID = {"br", "img", "hr", "meta", "link", "input", "wbr", "source", "col", "area", "base"}

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        classes = set((dict(attrs).get("class") or "").split())
        self.stack.append(tag in self.skip_tags or bool(classes & self.skip_classes))

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not any(self.stack):
            self.parts.append(data)

    def text(self):
        return "".join(self.parts)


def _normal(text):
    return " ".join(text.split())


def _file_text(path, skip_classes=()):
    """What a reader can see in a file of the site: an HTML page's text, a notebook's sources and outputs."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".html":
        parser = _Text(skip_tags=("script", "style"), skip_classes=skip_classes)
        parser.feed(raw)
        return parser.text()
    if path.name.endswith((".ipynb", ".ipynb.txt")):
        import nbformat

        nb = nbformat.reads(raw, as_version=4)
        parts = []
        for cell in nb.cells:
            parts.append(cell.source)
            for output in cell.get("outputs", []):
                parts.append(output.get("text", "") if isinstance(output.get("text", ""), str) else "")
                parts.append(str(output.get("data", {}).get("text/plain", "")))
        return "\n".join(parts)
    return raw


def _solutions():
    """{exercise grade_id: (chapter, telling solution lines)} from the chapter notebooks."""
    import nbformat

    from dpedu.course.exercises import find_exercises, strip_solutions

    found = {}
    for chapter in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(chapter, as_version=4)
        outside = {_normal(line) for cell in nb.cells for line in strip_solutions(cell.source).split("\n")}
        for exercise in find_exercises(nb):
            lines, inside = [], False
            for line in exercise.solution.split("\n"):
                if line.strip() in ("### BEGIN SOLUTION", "### END SOLUTION"):
                    inside = line.strip() == "### BEGIN SOLUTION"
                elif inside and len(line.strip()) >= MIN_SOLUTION_LINE and _normal(line) not in outside:
                    lines.append(_normal(line))
            found[exercise.grade_id] = (chapter.stem, lines)
    return found


def _site_files(site):
    return sorted(path for path in site.rglob("*") if path.is_file()
                  and path.suffix in (".html", ".txt", ".ipynb", ".json", ".md", ".py")
                  and "_static" not in path.relative_to(site).parts)


def test_student_edition_holds_no_solution(site):
    """No marker and no line of a reference solution in any page, _sources/ copy or notebook of the site.

    dpedu's own source pages (``_modules/``) are the library the students use, not the chapters' answers; they
    are checked for markers only.
    """
    solutions = _solutions()
    assert sum(len(lines) for _, lines in solutions.values()) > 20, "too few solution lines to check against"
    leaks = []
    for path in _site_files(site):
        name = path.relative_to(site).as_posix()
        text = _file_text(path)
        if not name.startswith(MARKER_DOCS):       # prose may name the markers in an inline literal (the README)
            shown = _file_text(path, skip_classes=("literal",))
            leaks += [f"{name}: marker {marker!r}" for marker in MARKERS if marker in shown]
        if name.startswith("_modules/"):
            continue
        normal = _normal(text)
        for grade_id, (chapter, lines) in solutions.items():
            leaks += [f"{name}: line of {grade_id} ({chapter}): {line!r}" for line in lines if line in normal]
    assert not leaks, f"{len(leaks)} solution leaks in the student edition:\n" + "\n".join(leaks[:40])


def test_student_edition_links_to_no_library_source(site):
    """dpedu's own code answers many exercises, so the student edition has no "[source]" pages (the instructor's
    has them); a chapter shows each listing after its exercise."""
    assert not (site / "_modules").exists()
    assert not any("[source]" in _file_text(page) for page in (site / "api").glob("*.html"))


def test_student_edition_shows_every_exercise_as_its_stub(site):
    """Each exercise appears as the stub strip-solutions writes, with no output under it or its check."""
    for grade_id, (chapter, _) in _solutions().items():
        number = grade_id.removeprefix("exercise-").replace("-", ".")
        text = _normal(_file_text(site / "chapters" / f"{chapter}.html"))
        assert f'raise NotImplementedError("Exercise {number}: write your solution here")' in text, grade_id
    copy = (site / "_sources" / "chapters").glob("*.ipynb*")
    for path in copy:
        assert "BEGIN SOLUTION" not in path.read_text(encoding="utf-8"), path.name


def test_instructor_edition_shows_every_solution_labelled(editions):
    """Every solution sits in a marked box labelled with its exercise, under the edition's banner."""
    instructor_site = editions["instructor"]
    solutions = _solutions()
    for chapter in sorted({chapter for chapter, _ in solutions.values()}):
        page = instructor_site / "chapters" / f"{chapter}.html"
        html = page.read_text(encoding="utf-8")
        expected = [grade_id for grade_id, (c, _) in solutions.items() if c == chapter]
        boxes = re.findall(r'<div class="[^"]*\bdpedu-solution\b[^"]*"', html)
        assert len(boxes) >= len(expected), f"{chapter}: {len(boxes)} marked boxes for {len(expected)} exercises"
        for grade_id in expected:
            number = grade_id.removeprefix("exercise-").replace("-", ".")
            assert f"Reference solution \N{EN DASH} Exercise {number}</strong>" in html, (chapter, grade_id)
        inside = _normal(_file_text(page))
        for grade_id in expected:
            assert all(line in inside for line in solutions[grade_id][1]), (chapter, grade_id)
        assert "BEGIN SOLUTION" not in inside and "END SOLUTION" not in inside, f"{chapter}: nbgrader markers shown"
        outside = _normal(_file_text(page, skip_classes=("dpedu-solution",)))
        for grade_id in expected:
            assert not all(line in outside for line in solutions[grade_id][1]), f"{chapter}: {grade_id} outside a box"
    for page in ("index.html", f"chapters/{next(iter(solutions.values()))[0]}.html"):
        html = (instructor_site / page).read_text(encoding="utf-8")
        assert "<strong>Instructor edition</strong>" in html and "announcement" in html, page
        assert "(instructor edition)</title>" in html, page       # the title says which edition
    student = (editions["student"] / "index.html").read_text(encoding="utf-8")
    assert "(student edition)</title>" in student and "<strong>Instructor edition</strong>" not in student


def test_instructor_banner_and_labels_are_visible(instructor_site, browser):
    """Loaded in the browser: the banner is on screen and each label is shown above its solution's code (the code
    itself, without nbgrader's markers)."""
    chapter = sorted((instructor_site / "chapters").glob("0[2-9]_*.html"))[0]
    browser.get(chapter.as_uri())
    banner = browser.execute_script(
        "const b = document.querySelector('.announcement'); if (!b) return null;"
        "const r = b.getBoundingClientRect(); return [b.innerText, r.height, getComputedStyle(b).display];")
    assert banner and "Instructor edition" in banner[0] and banner[1] > 10 and banner[2] != "none", banner
    labels = browser.execute_script(
        "return Array.from(document.querySelectorAll('div.dpedu-solution')).map(box => {"
        "const label = box.querySelector('p.dpedu-solution-label'); const code = box.querySelector('pre');"
        "return [label ? label.innerText : '',"
        "code ? code.innerText.trim().length > 0 && !code.innerText.includes('BEGIN SOLUTION') : false,"
        "label && code ? label.getBoundingClientRect().bottom <= code.getBoundingClientRect().top + 1 : false];});")
    assert labels and all(label.startswith("Reference solution") and has_code and above
                          for label, has_code, above in labels), labels


# -- figures, wide blocks, raw TeX ----------------------------------------------------------------------------------

MIN_TEXT_PX = 9.0           # the smallest text of a figure, in CSS pixels as displayed
SMALLEST_FONT_PT = 10 / 1.2  # matplotlib's "small" (legends in dpedu.lab.plotting and the chapters); ticks are 10 pt
DEFAULT_DPI = 100.0         # matplotlib's figure.dpi, used when a PNG does not record its resolution


def png_dpi(path):
    """The resolution a PNG records (its pHYs chunk, in dots per inch), or None."""
    import struct

    data = Path(path).read_bytes()
    at = data.find(b"pHYs")
    if at < 0:
        return None
    x, _, unit = struct.unpack(">IIB", data[at + 4:at + 13])
    return x * 0.0254 if unit == 1 else None


def smallest_text_px(dpi, natural_width, displayed_width, font_pt=SMALLEST_FONT_PT):
    """The height in CSS pixels of ``font_pt``-point text of a figure saved at ``dpi``, as displayed.

    Matplotlib draws a ``font_pt``-point font ``font_pt * dpi / 72`` image pixels high (its em size); the browser
    scales the image by ``displayed_width / natural_width``. With legends at "small" (8.33 pt) and dpi 100 the
    text is 11.6 image pixels, so a figure must be shown at >= 9 / 11.6 = 0.78 of its natural width: a figure
    at most ~940 px wide (figsize width ~9.4 in at dpi 100) in the book's ~730 px column.

    >>> round(smallest_text_px(100, 700, 700), 1)
    11.6
    >>> smallest_text_px(100, 1311, 730) < MIN_TEXT_PX
    True
    """
    return font_pt * dpi / 72.0 * displayed_width / natural_width


def test_figures_are_readable_and_open_at_full_size(site, server, browser):
    """Every figure's smallest text is >= MIN_TEXT_PX CSS pixels as displayed; each figure links to its image.

    The text-size assert is real: figures wider than ~940 px at dpi 100 fail it until they are resized.
    """
    too_small, unlinked = [], []
    clicked = None
    for page in _chapters(site):
        browser.get(urljoin(server, page.relative_to(site).as_posix()))
        images = browser.execute_script(
            "return Array.from(document.querySelectorAll('article img')).map(i => {"
            "const a = i.closest('a'); return [i.getAttribute('src'), i.naturalWidth, i.getBoundingClientRect().width,"
            "a ? a.getAttribute('href') : null, a ? a.className : ''];});")
        for src, natural, displayed, href, classes in images:
            if not natural:
                continue
            dpi = png_dpi((page.parent / unquote(src)).resolve()) if src.endswith(".png") else None
            text_px = smallest_text_px(dpi or DEFAULT_DPI, natural, displayed)
            if text_px < MIN_TEXT_PX:
                too_small.append(f"{page.name}: {src.rsplit('/', 1)[-1][:16]}... {natural} px shown at "
                                 f"{displayed:.0f} px (x{displayed / natural:.2f}): text {text_px:.1f} px")
            if href != src:
                unlinked.append(f"{page.name}: {src} (link: {href})")
            elif clicked is None:
                clicked = (page, src)
    assert not unlinked, "figures without a link to their full-size image:\n" + "\n".join(unlinked)
    assert clicked, "no figure in the book"
    page, src = clicked
    browser.get(urljoin(server, page.relative_to(site).as_posix()))
    link = browser.find_element("css selector", f"a.dpedu-figure-link[href='{src}']")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});", link)
    link.click()
    assert browser.current_url == urljoin(urljoin(server, page.relative_to(site).as_posix()), src)
    assert browser.execute_script("return document.images.length === 1 && document.images[0].naturalWidth > 0;")
    assert not too_small, (f"{len(too_small)} figures with text under {MIN_TEXT_PX:g} CSS px as displayed "
                           f"(smallest font {SMALLEST_FONT_PT:.2f} pt):\n" + "\n".join(too_small))


def test_no_code_or_output_block_is_cut(site, server, browser):
    """Every code and output block wraps at the column's edge: no horizontal overflow, no hidden text."""
    cut = {}
    for page in _chapters(site) + [site / "index.html"]:
        browser.get(urljoin(server, page.relative_to(site).as_posix()))
        found = browser.execute_script(
            "return Array.from(document.querySelectorAll('article pre')).filter(p => p.offsetParent !== null && "
            "p.scrollWidth > p.clientWidth + 1).map(p => [p.scrollWidth, p.clientWidth, p.innerText.slice(0, 60)]);")
        if found:
            cut[page.name] = found
    assert not cut, cut


#: Window widths (CSS px) of common screens from a small laptop up; from 1152 on the book's code column must hold
#: a chapter's longest code line, BOOK_CODE_COLUMN characters (tests/test_course_reading.py), unwrapped.
LAPTOP_WIDTHS = (1152, 1280, 1366, 1440, 1920)
BOOK_CODE_COLUMN = 100


def test_code_column_holds_a_chapter_line_on_laptop_screens(site, server, browser):
    """The code column holds 100 monospace characters at every width of LAPTOP_WIDTHS (docs/_static/book.css), with
    no horizontal scroll of the page; chapter code lines are at most that long, so none wraps mid-token."""
    page = urljoin(server, (site / "chapters" / "04_dp_sgd.html").relative_to(site).as_posix())
    measure = (
        "const pre = Array.from(document.querySelectorAll('div.cell_input pre'))[0];"
        "const probe = document.createElement('span'); probe.style.whiteSpace = 'pre';"
        "probe.textContent = 'x'.repeat(200); pre.appendChild(probe);"
        "const perChar = probe.getBoundingClientRect().width / 200; probe.remove();"
        "const style = getComputedStyle(pre);"
        "const inner = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);"
        "const root = document.scrollingElement;"
        "return [Math.floor(inner / perChar), root.scrollWidth > root.clientWidth];")
    too_narrow = {}
    try:
        for width in LAPTOP_WIDTHS:
            browser.set_window_size(width, 1000)
            browser.get(page)
            characters, scrolls = browser.execute_script(measure)
            if characters < BOOK_CODE_COLUMN or scrolls:
                too_narrow[width] = (characters, "page scrolls sideways" if scrolls else "")
    finally:
        browser.set_window_size(1280, 1000)
    assert not too_narrow, f"window width: (characters the code column holds, ...): {too_narrow}"


RAW_TEX = re.compile(r"\^\{|_\{|\\frac|\\sum|\\sqrt|\\varepsilon|\\epsilon|\\delta|\\sigma|\\ln\b|\\log\b|"
                     r"\\mathbb|\\mathcal|\\le\b|\\ge\b|\\cdot|\\in\b|[ΣΠ]_\{?|\$\$")


def raw_tex(html):
    """TeX left in the visible text of an HTML page (outside code, pre, math and scripts).

    >>> raw_tex('<p>the bound e^{epsilon} and <span class="math">\\\\(e^{x}\\\\)</span></p>')
    ['^{']
    >>> raw_tex('<pre>x_{i}</pre><code>\\\\frac</code>')
    []
    """
    parser = _Text(skip_tags=("script", "style", "pre", "code", "math", "mjx-container"),
                   skip_classes=("math", "highlight", "notranslate", "sig"))
    parser.feed(html)
    return RAW_TEX.findall(parser.text())


def test_no_raw_tex_in_the_visible_text(site):
    """Formulas are typeset: no ``^{``, ``_{``, ``\\\\frac``, ``Σ_{`` ... outside code and math in any page."""
    found = {}
    for page in _pages(site):
        name = page.relative_to(site).as_posix()
        if name.startswith("_modules/"):
            continue
        raw = raw_tex(page.read_text(encoding="utf-8"))
        if raw:
            found[name] = sorted(set(raw))
    assert not found, f"{len(found)} pages with raw TeX in their text:\n" + "\n".join(
        f"{name}: {tokens}" for name, tokens in sorted(found.items()))


# -- the chapters' links in the book (elsewhere: tests/test_course_links.py) -------------------------------------------

def _follow(link, page, site):
    """Why ``link`` (an href of the built ``page``) leads nowhere, or None if it arrives at its page and id."""
    parts = urlsplit(link)
    if parts.scheme in ("http", "https", "mailto"):
        return None
    if parts.scheme or link.startswith("/"):
        return "not a relative link"
    target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
    if not target.is_file():
        return "no such file"
    if parts.fragment and unquote(parts.fragment) not in _parse(str(target)).ids:
        return f"no id {parts.fragment!r} in {target.name}"
    return None


def test_chapter_links_reach_their_page_and_anchor_in_the_book(site):
    """Every link of every chapter page, as Sphinx resolved it, reaches an existing page and id; and every notes
    anchor and API name a chapter links to is an id of the book's notes page or of its module's API page (the
    folder reference/ beside the notebooks uses the same anchors, tests/test_course_links.py follows them there)."""
    import json

    from dpedu.course.booklinks import canonical_name, defining_module, link_kind, markdown_links

    broken, followed = [], 0
    for page in _chapters(site):
        for href in _parse(str(page)).hrefs:
            if _is_external(href) or href.startswith(("mailto:", "javascript:", "data:")):
                continue
            problem = _follow(href, page, site)
            followed += 1
            if problem:
                broken.append(f"{page.name}: {href} ({problem})")
    for chapter in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        for link in markdown_links(json.loads(chapter.read_text(encoding="utf-8"))):
            kind = link_kind(link)
            if kind is None:
                continue
            if kind[0] == "api":
                name = canonical_name(kind[1])
                module = defining_module(name)
                target, anchor = site / "api" / f"{module}.html", ("" if name == module else name)
            else:
                page, _, anchor = ("math", "", kind[1]) if kind[0] == "notes" else kind[1].partition("#")
                target = site / f"{page}.html"
            if not target.is_file() or (anchor and anchor not in _parse(str(target)).ids):
                broken.append(f"{chapter.name}: {link} (no id {anchor!r} in {target.name})")
    assert not broken, f"{len(broken)} broken links:\n" + "\n".join(broken[:40])
    assert followed >= 60, followed


@pytest.mark.parametrize("argv, message", [
    (["--record-times", "/nonexistent_dir/times.json"], "--record-times: no directory /nonexistent_dir"),
    (["--edition", "student", "--record-times", "times.json"], "--record-times needs both editions"),
    (["--jobs", "0"], "--jobs must be a positive integer"),
])
def test_build_refuses_bad_options_before_any_work(argv, message, tmp_path, capsys, monkeypatch):
    # before MathJax is installed or a chapter runs: parse errors exit 2 with the option named
    spec = importlib.util.spec_from_file_location("dpedu_book_build", DOCS / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    monkeypatch.setattr(build, "ensure_mathjax",
                        lambda: pytest.fail("ensure_mathjax ran before the options were checked"))
    monkeypatch.chdir(tmp_path)
    environment = dict(os.environ)
    with pytest.raises(SystemExit) as exit_info:
        build.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert dict(os.environ) == environment      # a refused build sets nothing (DPEDU_FAST=0 once leaked into nbgrader)
