"""The built book as a student reads it (needs a built site: ``DPEDU_BOOK_HTML``, else skipped).

``.ci/run`` builds the book once and names it in ``DPEDU_BOOK_HTML`` (see tests/test_book.py). On every chapter
page: no formula outside math (the same patterns as tests/test_course_reading.py, on the rendered text outside
MathJax, code and output blocks) and no figure wider than the book's column can show at full size.
"""

from __future__ import annotations

import os
import struct
from html.parser import HTMLParser
from pathlib import Path

import pytest

from test_course_reading import RAW_MATH

MAX_FIGURE_WIDTH = 800          # px: a 7.3 in figure at dpi 100 plus its tight bounding box; the column is ~730


def _site():
    prebuilt = os.environ.get("DPEDU_BOOK_HTML")
    if not prebuilt:
        pytest.skip("DPEDU_BOOK_HTML is not set (.ci/run builds the book and sets it)")
    path = Path(prebuilt)
    assert (path / "index.html").is_file(), f"DPEDU_BOOK_HTML={prebuilt} holds no index.html"
    return path


def _chapter_pages(site):
    pages = sorted(p for p in site.rglob("[0-9][0-9]_*.html") if "_sources" not in p.parts)
    assert pages, f"no chapter pages (NN_*.html) under {site}"
    return pages


class _Prose(HTMLParser):
    """Text of the page's <article> (not the navigation, whose API names are identifiers) outside <pre>, <code>,
    <script>, <style>, <nav> and MathJax (class "math"); <img> sources."""

    SKIP = {"pre", "code", "script", "style", "math", "nav"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.text, self.images, self.articles = [], [], [], 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        if tag in ("img", "br", "hr", "meta", "link", "input"):
            return
        classes = (attrs.get("class") or "").split()
        self.stack.append(tag in self.SKIP or "math" in classes or "output" in classes)
        self.articles += tag == "article"

    def handle_endtag(self, tag):
        if tag not in ("img", "br", "hr", "meta", "link", "input") and self.stack:
            self.stack.pop()
        self.articles -= tag == "article" and self.articles > 0

    def handle_data(self, data):
        if self.articles and not any(self.stack):
            self.text.append(data)


def _png_width(path):
    with open(path, "rb") as handle:
        header = handle.read(24)
    assert header[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">I", header[16:20])[0]


def test_chapter_pages_typeset_every_formula():
    site = _site()
    problems = []
    for page in _chapter_pages(site):
        parser = _Prose()
        parser.feed(page.read_text(encoding="utf-8"))
        text = " ".join(parser.text)
        problems += [f"{page.name}: ...{text[max(0, m.start() - 30): m.end() + 30]!r}" for m in RAW_MATH.finditer(text)]
    assert not problems, "formulas outside math on the built pages:\n  " + "\n  ".join(problems[:40])


def test_chapter_figures_fit_the_column():
    site = _site()
    wide = []
    for page in _chapter_pages(site):
        parser = _Prose()
        parser.feed(page.read_text(encoding="utf-8"))
        for src in parser.images:
            path = (page.parent / src).resolve()
            if path.suffix == ".png" and path.is_file() and _png_width(path) > MAX_FIGURE_WIDTH:
                wide.append(f"{page.name}: {src} is {_png_width(path)} px wide")
    assert not wide, "figures wider than the column (shrunk to unreadable text):\n  " + "\n  ".join(wide)


def test_the_page_reader_skips_math_code_and_outputs():
    parser = _Prose()
    parser.feed('<nav><a>dpedu.accountants.advanced_composition</a></nav><article>'
                '<p>the loss <span class="math notranslate nohighlight">\\(e^{\\lambda c}\\)</span> and e^{x}</p>'
                '<div class="highlight"><pre>x = a_b ** 2  # e^{y}</pre></div><img src="../_images/a.png">'
                '<div class="cell_output output"><pre>10⁻⁵</pre><p>σ²</p></div><p>end</p></article><p>footer_x</p>')
    text = " ".join(parser.text)
    assert [m.group() for m in RAW_MATH.finditer(text)] == ["^"] and "end" in text and "σ²" not in text
    assert "advanced_composition" not in text and "footer_x" not in text
    assert parser.images == ["../_images/a.png"]
