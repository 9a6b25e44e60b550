"""dpedu.course.booklinks and dpedu.course.reference: a chapter's links, and the folder they point into.

The links are requested from a running Jupyter server, wherever a notebook is opened, by tests/test_course_links.py;
these tests need no server.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dpedu.course.booklinks import api_link, link_kind, markdown_links, relink
from dpedu.course.reference import anchored_page, api_page, course_dir, heading_slug, write_reference

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))


def _nb(text):
    return {"cells": [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": text}]}


def test_chapters_link_into_the_reference_folder_beside_them():
    links = [link for chapter in CHAPTERS for link in markdown_links(json.loads(chapter.read_text()))]
    assert len(links) > 60
    kinds = [link_kind(link) for link in links]
    assert None not in kinds, [link for link, kind in zip(links, kinds) if kind is None]
    assert {kind for kind, _ in kinds} == {"api", "notes"}
    for link, (kind, _) in zip(links, kinds):
        assert link.startswith("reference/api/dpedu." if kind == "api" else "reference/math.md#"), link


def test_relinking_for_jupyter_and_for_the_book():
    source = _nb("[clip](dpedu.L2_clip) · [sgd](dpedu.textbook.training.dp_sgd) · [§5](../docs/math.md#5-l2) · "
                 "[g](../docs/glossary.md#epsilon) · [mod](dpedu.textbook.clipping) · [web](https://example.org/a.html)")
    jupyter = relink(source, to="jupyter")
    assert markdown_links(jupyter) == ["reference/api/dpedu.textbook.clipping.md#dpedu.textbook.clipping.L2_clip",
                                       "reference/api/dpedu.textbook.training.sgd.md#dpedu.textbook.training.sgd.dp_sgd",
                                       "reference/math.md#5-l2", "reference/glossary.md#epsilon",
                                       "reference/api/dpedu.textbook.clipping.md", "https://example.org/a.html"]
    assert relink(jupyter, to="jupyter") == jupyter, "relinking is idempotent"
    book = relink(jupyter, to="book")
    assert markdown_links(book) == ["dpedu.textbook.clipping.L2_clip", "dpedu.textbook.training.sgd.dp_sgd", "../math.md#5-l2",
                                    "../glossary.md#epsilon", "dpedu.textbook.clipping", "https://example.org/a.html"]
    assert relink(book, to="jupyter") == jupyter
    assert source["cells"][0]["source"].startswith("[clip](dpedu.L2_clip)"), "relink changed its argument"


def test_an_unknown_name_is_refused_naming_it():
    with pytest.raises(ValueError, match="dpedu.no_such_thing"):
        relink(_nb("[x](dpedu.no_such_thing)"))
    assert api_link("dpedu.no_such_thing") is None


@pytest.mark.parametrize("kwargs, error, name", [
    ({"nb": ["cells"]}, TypeError, "nb"),
    ({"nb": {"cells": []}, "to": "lab"}, ValueError, "to"),
])
def test_bad_arguments_are_refused_by_name(kwargs, error, name):
    with pytest.raises(error, match=rf"^{name}\b"):
        relink(**kwargs)


def test_notes_anchors_are_the_books_slugs():
    """Every heading anchor written into reference/math.md is the id MyST gives it in the book (its own parser and
    slug function, run here on docs/math.md), in order; a heading MyST gives no anchor gets none."""
    pytest.importorskip("myst_parser")
    from markdown_it.renderer import RendererHTML
    from markdown_it.tree import SyntaxTreeNode
    from myst_parser.config.main import MdParserConfig
    from myst_parser.mdit_to_docutils.base import compute_unique_slug
    from myst_parser.parsers.mdit import create_md_parser

    text = (ROOT / "docs" / "math.md").read_text(encoding="utf-8")
    md = create_md_parser(MdParserConfig(enable_extensions={"dollarmath", "amsmath", "colon_fence", "deflist"},
                                         heading_anchors=3), RendererHTML)
    slugs = {}
    for node in SyntaxTreeNode(md.parse(text)).walk():
        if node.type == "heading" and int(node.tag[1]) <= 3:
            slugs[compute_unique_slug(node, slugs)] = True
    ours = re.findall(r'^#+ <a id="([^"]*)"></a>', anchored_page(text), flags=re.M)     # each heading's first
    assert len(ours) > 100 and ours == list(slugs)


def test_a_non_ascii_anchor_is_also_written_as_a_browser_hands_it_on():
    """JupyterLab looks the fragment up as the browser gives it (a.hash: UTF-8 percent-encoded), so a heading whose
    anchor has a non-ASCII letter carries that form too; an ASCII anchor is written once."""
    page = anchored_page("## 13. Rényi differential privacy\n\n## 14. Zero-concentrated DP\n")
    assert '<a id="13-rényi-differential-privacy"></a><a id="13-r%C3%A9nyi-differential-privacy"></a>' in page
    assert page.count('<a id="14-zero-concentrated-dp"></a>') == 1


@pytest.mark.parametrize("title, slug", [
    ("5. L2 clipping and the sensitivity of a clipped sum", "5-l2-clipping-and-the-sensitivity-of-a-clipped-sum"),
    (r"13.4 Conversion to $(\varepsilon, \delta)$", "134-conversion-to-"),
    ("Pure DP: Liu & Talwar's $3\\varepsilon$", "pure-dp-liu--talwars-"),
    ("The `L2_clip` *step* and [a link](x.md)", "the-l2_clip-step-and-a-link"),
    ("What ε means", "what-ε-means"),
])
def test_heading_slugs(title, slug):
    assert heading_slug(title) == slug


def test_repeated_headings_get_numbered_anchors_and_code_is_left_alone():
    text = "# A\n\n## Notes\n\n```\n# not a heading\n```\n\n## Notes\n\n#### deep\n"
    assert re.findall(r'<a id="([^"]*)"></a>', anchored_page(text)) == ["a", "notes", "notes-1"]


def test_the_reference_folder_holds_every_page_and_anchor_the_notebooks_link(tmp_path):
    """write_reference writes the notes (anchored), their figures and one API page per linked module, with an
    anchor for every linked object; a module page documents what its module defines, not its re-exports."""
    nb = relink(_nb("[clip](dpedu.L2_clip) [§5](../docs/math.md#5-l2-clipping-and-the-sensitivity-of-a-clipped-sum)"
                    " [train](dpedu.textbook.training.sgd.dp_sgd) [mod](dpedu.textbook.models.logistic)"))
    (tmp_path / "a.ipynb").write_text(json.dumps(nb))
    written = write_reference(tmp_path)
    root = tmp_path / "reference"
    assert {p.relative_to(root).as_posix() for p in written} >= {
        "README.md", "math.md", "api/dpedu.textbook.clipping.md", "api/dpedu.textbook.training.sgd.md", "api/dpedu.textbook.models.logistic.md",
        "_static/notes/tradeoff.png"}
    for link in markdown_links(nb):
        path, _, anchor = link.partition("#")
        assert (tmp_path / path).is_file(), link
        assert not anchor or f'<a id="{anchor}"></a>' in (tmp_path / path).read_text(), link
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (root / "math.md").read_text()):
        assert (root / image).is_file(), image
    page = api_page("dpedu.textbook.training")                          # the package re-exports dp_sgd: not documented here
    assert "dpedu.textbook.training.sgd.dp_sgd" not in page
    (root / "api" / "dpedu.old_module.md").write_text("stale")
    write_reference(tmp_path)
    assert not (root / "api" / "dpedu.old_module.md").exists()
    assert course_dir("docs") == ROOT / "docs" and course_dir("chapters") == ROOT / "chapters"
    with pytest.raises(ValueError, match="what"):
        course_dir("tests")


def test_a_link_to_a_missing_page_is_refused(tmp_path):
    (tmp_path / "a.ipynb").write_text(json.dumps(_nb("[x](../docs/no_such_page.md#a)")))
    with pytest.raises(ValueError, match="no_such_page"):
        write_reference(tmp_path)


def test_a_feedback_page_carries_what_its_links_point_at():
    """ReferenceAppendix (the kit gives it to nbgrader's HTML exporter) turns each reference link into an anchor of the
    page and appends the sections and API entries; rendered by nbconvert, every such link finds its id in the page,
    the notes keep their formulas for MathJax and their figures are inlined, and no link leaves the page."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbconvert")
    from nbconvert import HTMLExporter

    from dpedu.course.feedback import APPENDIX_TITLE, ReferenceAppendix

    nb = nbformat.read(ROOT / "chapters" / "02_noisy_gradient_descent.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell(
        "[§4.3](reference/math.md#43-the-privacy-loss-of-a-gaussian-and-composition-of-gaussians) "
        "[§5 again](reference/math.md#5-l2-clipping-and-the-sensitivity-of-a-clipped-sum) "
        "[the module](reference/api/dpedu.textbook.models.logistic.md)"))
    links = markdown_links(nb)
    processed, _ = ReferenceAppendix().preprocess(nb, {})
    appendix = processed.cells[-1].source
    assert appendix.startswith(f"## {APPENDIX_TITLE}") and "L2_clip(v, clip_norm)" in appendix
    assert "### 4.3 The privacy loss of a Gaussian" in appendix and "data:image/png;base64," in appendix
    assert "$$" in appendix or "$" in appendix                           # formulas left for the page's MathJax
    assert appendix.count('<div id="dpedu-reference-notes-5-l2-clipping') == 1    # two links, one entry
    html, _ = HTMLExporter(template_name="classic").from_notebook_node(processed)
    hrefs = re.findall(r'href="([^"]+)"', html)
    ours = [h for h in hrefs if h.startswith("#dpedu-reference-")]
    assert len(ours) == len(links) and not [h for h in hrefs if h.startswith("reference/")]
    assert all(f'id="{h[1:]}"' in html for h in ours), [h for h in ours if f'id="{h[1:]}"' not in html]
