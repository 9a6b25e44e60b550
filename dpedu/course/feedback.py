"""The notes and API entries a feedback page links to, carried inside the page.

A feedback page (``nbgrader generate_feedback`` in a course kit, :mod:`dpedu.course.instructor`) is one HTML file
that a student receives by email and opens anywhere, with neither dpedu nor the course's folders at hand. The
graded notebook's "Uses:" and "Notes:" links point into ``reference/`` beside the notebook
(:mod:`dpedu.course.booklinks`), which a browser opening the page from an inbox does not have. So the page carries
what its links point at: :class:`ReferenceAppendix`, an nbconvert preprocessor that the kit's configuration
gives nbgrader's HTML exporter, appends one Markdown cell holding every notes section, API entry and book page
section the notebook links to, each under an anchor of its own, and rewrites each link into an anchor of the
page. The formulas of the notes are typeset by the MathJax the page already inlines; the notes' figures are
inlined as ``data:`` images.

>>> anchor_of(("notes", "5-l2-clipping")), anchor_of(("api", "dpedu.textbook.clipping.L2_clip"))
('dpedu-reference-notes-5-l2-clipping', 'dpedu-reference-api-dpedu.textbook.clipping.L2_clip')
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

from nbconvert.preprocessors import Preprocessor

from .booklinks import NOTES_PAGE, REFERENCE, canonical_name, defining_module, link_kind
from .reference import FIGURES, anchored_page, api_page, course_dir

__all__ = ["APPENDIX_TITLE", "ReferenceAppendix", "anchor_of", "appendix_markdown", "section"]

APPENDIX_TITLE = "The notes and the API entries this notebook links to"
_LINK = re.compile(r"(\]\()(?P<target>[^)\s]+)(\))")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.*)$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)")


def anchor_of(kind):
    """The id, in a feedback page, of what a link of ``kind`` (:func:`dpedu.course.booklinks.link_kind`) names:
    ASCII only (another character ``c`` is written ``_<hex of ord(c)>``), so that the link's ``href`` and the id are
    the same string however the page's Markdown renderer encodes URLs.

    >>> anchor_of(("notes", "13-rényi-differential-privacy"))
    'dpedu-reference-notes-13-r_e9nyi-differential-privacy'
    """
    what, value = kind
    if what == "api":
        value = canonical_name(value) or value
    value = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else f"_{ord(c):x}" for c in value)
    return f"dpedu-reference-{what}-{value or 'top'}"


def _headings(lines):
    """``{index: level}`` of the Markdown headings of ``lines``, outside code fences."""
    found, fence = {}, None
    for index, line in enumerate(lines):
        opening = _FENCE.match(line)
        if opening:
            fence = None if fence and opening[1].startswith(fence) else fence or opening[1][:3]
            continue
        match = None if fence else _HEADING.match(line)
        if match:
            found[index] = len(match["hashes"])
    return found


def section(text, anchor):
    """The lines of the section of an anchored Markdown page (:func:`dpedu.course.reference.anchored_page`,
    :func:`~dpedu.course.reference.api_page`) whose heading holds ``<a id="anchor">``: from that heading up to the
    next heading of the same or a higher level, the anchors removed; None if no heading holds it."""
    lines, marker = text.split("\n"), f'<a id="{anchor}"></a>'
    headings = _headings(lines)
    start = next((i for i in headings if marker in lines[i]), None)
    if start is None:
        return None
    end = next((i for i, level in headings.items() if i > start and level <= headings[start]), len(lines))
    return [re.sub(r'<a id="[^"]*"></a>', "", line) for line in lines[start:end]]


def _demoted(lines, to=3):
    """``lines`` with their headings shifted so that the first is of level ``to`` (under the appendix's own)."""
    headings = _headings(lines)
    shift = to - next(iter(headings.values()), to)
    return [("#" * min(6, headings[i] + shift) + line.lstrip("#")) if i in headings else line
            for i, line in enumerate(lines)]


def _inline_figures(lines, folder):
    """``![alt](_static/notes/x.png)`` as ``data:`` images (the page loads no file); an image not found is left."""
    def replace(match):
        path = Path(folder) / match["src"]
        if not match["src"].startswith(FIGURES.as_posix()) or not path.is_file():
            return match[0]
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f"![{match['alt']}](data:image/png;base64,{data})"
    return [_IMAGE.sub(replace, line) for line in lines]


def _page_text(page, reference_dir):
    """A page of the notes, from the reference folder beside the notebook if it has it, else the installed docs."""
    for folder in (reference_dir, course_dir("docs")):
        if folder is not None and (Path(folder) / f"{page}.md").is_file():
            return Path(folder) / f"{page}.md"
    return None


def appendix_markdown(kinds, reference_dir=None):
    """The Markdown of the appendix for the links ``kinds`` (``[(what, value)]``, in order, without repeats)."""
    lines = [f"## {APPENDIX_TITLE}", "",
             "*This page carries the sections its links point at, so that they work wherever the page is opened.*"]
    for kind in kinds:
        what, value = kind
        lines += ["", f'<div id="{anchor_of(kind)}"></div>', ""]
        if what == "api":
            name = canonical_name(value)
            module = defining_module(name)
            body = section(api_page(module, [] if name == module else [name]), name)
            if name == module:                        # a module: its title and summary, not every entry
                body = body[:next((i for i, line in enumerate(body) if line.startswith("## ")), len(body))]
            lines += _demoted(body)
            continue
        page, _, slug = (NOTES_PAGE, "", value) if what == "notes" else value.partition("#")
        path = _page_text(page, reference_dir)
        text = None if path is None else anchored_page(path.read_text(encoding="utf-8"))
        body = None if text is None else (section(text, slug) if slug else text.split("\n")[:1])
        if body is None:
            raise ValueError(f"a link points at {page}.md#{slug}, which the course's {page}.md has no section for")
        lines += _inline_figures(_demoted(body), path.parent)
    return "\n".join(lines) + "\n"


class ReferenceAppendix(Preprocessor):
    """Append the linked notes and API entries to a notebook converted to HTML, and make its links anchors.

    Given to the exporter by the course kit's configuration (``c.HTMLExporter.preprocessors``); the appended cell
    has no nbgrader metadata, so nothing is graded or listed for it.
    """

    def preprocess(self, nb, resources):
        kinds, cells = [], [c for c in nb.cells if c.cell_type == "markdown"]

        def replace(match):
            kind = link_kind(match["target"])
            if kind is None:
                return match[0]
            if kind[0] == "api" and canonical_name(kind[1]) is None:
                return match[0]
            if kind not in kinds:
                kinds.append(kind)
            return f"{match[1]}#{anchor_of(kind)}{match[3]}"

        for cell in cells:
            cell.source = _LINK.sub(replace, cell.source)
        if kinds:
            folder = resources.get("metadata", {}).get("path")
            reference_dir = Path(folder) / REFERENCE if folder else None
            from nbformat.v4 import new_markdown_cell

            nb.cells.append(new_markdown_cell(appendix_markdown(kinds, reference_dir)))
        return nb, resources
