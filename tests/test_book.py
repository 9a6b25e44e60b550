"""The rendered book (``docs/``), checked in a real headless browser.

One session fixture provides the built site: the directory named by ``DPEDU_BOOK_HTML`` when ``.ci/run`` has
already built it, otherwise a fresh fast-mode build (``python docs/build.py --out <tmp>``, warnings as errors).
A static file server on 127.0.0.1 serves it; headless Chromium (Selenium, ``/usr/bin/chromedriver``) loads:

* every chapter page and a sample of API pages: no console errors, every ``<img>`` decoded (naturalWidth > 0),
  MathJax rendered (``mjx-container`` elements where the page has math, no raw ``\\(``, ``\\[`` or ``$...$``
  left in the visible text);
* the index: every internal link answers HTTP 200.

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

@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The built site's directory."""
    _require_tools()
    prebuilt = os.environ.get("DPEDU_BOOK_HTML")
    if prebuilt:
        path = Path(prebuilt)
        assert (path / "index.html").is_file(), f"DPEDU_BOOK_HTML={prebuilt} holds no index.html"
        return path
    out = tmp_path_factory.mktemp("book") / "html"
    env = dict(os.environ, DPEDU_FAST="1", PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    result = subprocess.run([sys.executable, str(DOCS / "build.py"), "--out", str(out)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    if result.returncode != 0:
        warnings = [line for line in result.stderr.splitlines() if "WARNING" in line or "ERROR" in line]
        pytest.fail("the book build failed (warnings are errors):\n" + "\n".join(warnings or
                    result.stderr.splitlines()[-40:]))
    return out


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
    assert any((site / "api").glob("dpedu.training*.html"))


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
