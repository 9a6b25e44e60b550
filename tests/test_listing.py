"""``show_source`` and :mod:`dpedu.course.listing`: the code a chapter shows is the code that runs, readable in the book.

* Every listing is valid Python with the *same* syntax tree as the original once docstrings are set aside
  (nothing is re-wrapped), its docstrings are folded to their summary, and every object a chapter shows is
  written to fit the book's code column (``CHAPTER_LISTING_WIDTH`` columns).
* In a notebook the listing is a display output of its own (a fenced ``python`` block), so what a later
  statement prints never lands in the same box.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import pkgutil
import re
import textwrap
from pathlib import Path

import nbformat
import pytest

import dpedu
from dpedu.course.listing import CHAPTER_LISTING_WIDTH, SourceListing, fold_docstrings
from dpedu.course.notebook import show_source

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "chapters" / "_src").glob("[0-9][0-9]_*.py"))


def _without_docstrings(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                first.value.value = ""
    return ast.dump(tree)


def _same_code(original, listing):
    return _without_docstrings(ast.parse(original)) == _without_docstrings(ast.parse(listing))


def _chapter_objects():
    """(chapter, expression, object) of every show_source call in the chapter sources."""
    found = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        namespace = {}
        for node in ast.parse(text).body:                       # the chapter's own imports, nothing else
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                exec(compile(ast.Module(body=[node], type_ignores=[]), path.name, "exec"), namespace)
        for expression in re.findall(r"^show_source\((.+)\)\s*$", text, re.M):
            found.append((path.stem[:2], expression, eval(expression, namespace)))   # noqa: S307
    return found


CHAPTER_OBJECTS = _chapter_objects()


def test_the_chapters_show_something():
    assert len(CHAPTER_OBJECTS) >= 15


@pytest.mark.parametrize("chapter, expression, obj", CHAPTER_OBJECTS,
                         ids=[f"{c}-{e}" for c, e, _ in CHAPTER_OBJECTS])
def test_chapter_listings_are_readable(chapter, expression, obj):
    listing = SourceListing(obj)
    original = textwrap.dedent(inspect.getsource(obj))
    lines = listing.code.splitlines()
    wide = [line for line in lines if len(line) > CHAPTER_LISTING_WIDTH]
    assert not wide, f"{expression}: lines wider than the book's code column ({CHAPTER_LISTING_WIDTH}): {wide}"
    assert _same_code(original, listing.code)
    docstring = ast.get_docstring(ast.parse(listing.code).body[0])
    summary = " ".join(inspect.cleandoc(inspect.getdoc(obj)).split("\n\n")[0].split())
    summary = re.sub(r":(?:[a-z]+:)?[a-z]+:`~?([^`]*)`", r"`\1`", summary)      # roles shown as code
    assert docstring is not None and "\n\n" not in docstring and "Parameters\n---" not in docstring
    assert docstring.split()[:3] == summary.replace("``", "`").split()[:3]
    assert lines[0].startswith(("def ", "class ", "@")) and "``" not in docstring and ":math:" not in docstring
    markdown = listing._repr_markdown_()
    assert f"```python\n{listing.code}\n```" in markdown and listing.name in markdown


def _dpedu_objects():
    for info in pkgutil.walk_packages(dpedu.__path__, "dpedu."):
        module = importlib.import_module(info.name)
        for name, obj in sorted(vars(module).items()):
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == info.name:
                yield obj


def test_every_listing_of_dpedu_is_the_same_code():
    """Folding keeps the code: the same syntax tree for all of dpedu's functions and classes (over 400), and the
    code lines exactly as written (only docstrings change)."""
    checked = 0
    for obj in _dpedu_objects():
        listing = SourceListing(obj)
        original = textwrap.dedent(inspect.getsource(obj))
        assert _same_code(original, listing.code), obj.__qualname__
        code_lines = {line for line in original.splitlines() if line.strip() and not line.strip().startswith(('"', "r\""))}
        assert all(line in original.splitlines() for line in listing.code.splitlines()
                   if line in code_lines), obj.__qualname__
        checked += 1
    assert checked > 400


def test_fold_docstrings_keeps_the_summary_only():
    source = 'def f():\n    r"""Release ``value`` plus :math:`\\Delta_1/\\varepsilon`\n    noise.\n\n    Parameters\n' \
             '    ----------\n    value : float\n    """\n    return 1\n'
    folded = fold_docstrings(source)
    assert folded == 'def f():\n    r"""Release `value` plus `\\Delta_1/\\varepsilon` noise."""\n    return 1\n'


def test_show_source_prints_outside_ipython(capsys):
    from dpedu.textbook.clipping import L2_clip

    show_source(L2_clip)
    assert capsys.readouterr().out == SourceListing(L2_clip, width=CHAPTER_LISTING_WIDTH).code + "\n"
    with pytest.raises(TypeError, match="show_source needs a Python function"):
        show_source(len)


@pytest.mark.notebooks
def test_in_a_notebook_the_listing_is_an_output_of_its_own(monkeypatch):
    """The listing is display data (markdown with a python block); a print after it is a separate stream."""
    from nbclient import NotebookClient

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    cell = nbformat.v4.new_code_cell("from dpedu.course.notebook import show_source\nimport dpedu as dp\n"
                                     "show_source(dp.mechanisms.laplace_mechanism)\nprint('true count 30162')")
    nb = nbformat.v4.new_notebook(cells=[cell])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    assert [o.output_type for o in outputs] == ["display_data", "stream"], outputs
    markdown = outputs[0].data["text/markdown"]
    # the block opens with the function's contract (its @door decorator), then the def
    assert markdown.rstrip().endswith("```") and "```python\n@door(" in markdown
    assert "\ndef laplace_mechanism(" in markdown
    assert "true count" not in markdown and outputs[1].text == "true count 30162\n"
