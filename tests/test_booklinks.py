"""dpedu.course.booklinks: a chapter's links placed for where the notebook is opened, and back for the book.

The links are followed to their pages and anchors in a built book by tests/test_book.py
(test_chapter_links_work_wherever_a_notebook_is_opened); these tests need no build.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dpedu.course.booklinks import BOOK_ENV_VAR, LOCAL_BOOK, api_link, book_location, link_kind, relink

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))


def _links(nb):
    return [t for c in nb["cells"] if c["cell_type"] == "markdown"
            for t in re.findall(r"\]\(([^)\s]+)\)", "".join(c["source"]))]


def _nb(text):
    return {"cells": [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": text}]}


def test_chapters_link_the_local_book_and_the_repository_notes():
    links = [link for chapter in CHAPTERS for link in _links(json.loads(chapter.read_text()))]
    assert len(links) > 60
    kinds = [link_kind(link) for link in links]
    assert None not in kinds, [link for link, kind in zip(links, kinds) if kind is None]
    for link, (kind, _) in zip(links, kinds):
        if kind == "api":
            assert link.startswith("../docs/_build/student/api/dpedu."), link
        else:
            assert link.startswith("../docs/math.md#"), link
    assert Path("..", LOCAL_BOOK.relative_to(ROOT)).as_posix() == "../docs/_build/student"


def test_relinking_for_a_place_and_back_to_the_book():
    source = _nb("[clip](dpedu.L2_clip) · [sgd](dpedu.training.dp_sgd) · [§5](../docs/math.md#5-l2) · "
                 "[g](../docs/glossary.md#epsilon) · [web](https://example.org/a.html)")
    copy = relink(source, base="/course/release/a", book="/books/site", notes="math.md")
    assert _links(copy) == ["../../../books/site/api/dpedu.clipping.html#dpedu.clipping.L2_clip",
                            "../../../books/site/api/dpedu.training.sgd.html#dpedu.training.sgd.dp_sgd",
                            "math.md#5-l2", "../../../books/site/glossary.html#epsilon",
                            "https://example.org/a.html"]
    online = relink(copy, base="/elsewhere", book="https://dpedu.example/book", notes="math.md")
    assert _links(online)[:3] == ["https://dpedu.example/book/api/dpedu.clipping.html#dpedu.clipping.L2_clip",
                                  "https://dpedu.example/book/api/dpedu.training.sgd.html#dpedu.training.sgd.dp_sgd",
                                  "math.md#5-l2"]
    book = relink(online, base=None)
    assert _links(book)[:3] == ["dpedu.clipping.L2_clip", "dpedu.training.sgd.dp_sgd", "../math.md#5-l2"]
    assert source["cells"][0]["source"].startswith("[clip](dpedu.L2_clip)"), "relink changed its argument"


def test_an_unknown_name_is_left_as_written():
    assert _links(relink(_nb("[x](dpedu.no_such_thing)"), base="/a", book="/b")) == ["dpedu.no_such_thing"]
    assert api_link("dpedu.no_such_thing") is None


def test_the_book_location_can_be_set(monkeypatch):
    monkeypatch.delenv(BOOK_ENV_VAR, raising=False)
    assert book_location() == LOCAL_BOOK
    monkeypatch.setenv(BOOK_ENV_VAR, "https://dpedu.example/book")
    assert book_location() == "https://dpedu.example/book/"
    assert book_location("/some/dir") == Path("/some/dir")


@pytest.mark.parametrize("kwargs, error, name", [
    ({"nb": ["cells"], "base": "/a"}, TypeError, "nb"),
    ({"nb": {"cells": []}, "base": "/a", "notes": ""}, TypeError, "notes"),
    ({"nb": {"cells": []}, "base": "/a", "docs": 3}, TypeError, "docs"),
    ({"nb": {"cells": []}, "base": "/a", "book": 3}, TypeError, "book"),
])
def test_bad_arguments_are_refused_by_name(kwargs, error, name):
    with pytest.raises(error, match=rf"^{name}\b"):
        relink(**kwargs)
