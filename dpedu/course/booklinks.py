"""Links of the chapters that work wherever a notebook is opened.

A chapter's markdown links to two things: dpedu's API reference ("Uses:" links, written with the object's
dotted name, ``[L2_clip](dpedu.clipping.L2_clip)``) and the mathematical notes ("Notes:" links,
``[§5](../docs/math.md#5-l2-clipping-...)``). Inside the book Sphinx resolves both; anywhere else a bare
dotted name is no link at all, and ``../docs/math.md`` exists only beside the repository's ``chapters/``.
:func:`relink` rewrites a notebook's links for the place where it will be opened:

* API links point at the API page of the module that defines the object, in a built book: a URL
  (``https://.../``) or a local directory, written relative to the notebook's folder (default: the local
  build ``docs/_build/student``, where ``python docs/build.py`` writes the student edition);
* notes links point at a copy of ``math.md`` that travels with the notebook (a student copy and an
  nbgrader release ship it beside the notebook), or at ``../docs/math.md`` in the repository;
* links to the book's other pages (``../docs/glossary.md#...``) stay as they are in the repository and point
  at their page in the book anywhere else.

:func:`relink` recognises a link it wrote itself, so notebooks can be relinked from one place to another
(the repository's chapters to a student copy, or back to the book's own references with ``book=None``).

>>> link_kind("dpedu.clipping.L2_clip"), link_kind("../../docs/_build/student/api/dpedu.clipping.html#dpedu.clipping.L2_clip")
(('api', 'dpedu.clipping.L2_clip'), ('api', 'dpedu.clipping.L2_clip'))
>>> link_kind("../docs/math.md#6-logistic-loss"), link_kind("math.md#6-logistic-loss"), link_kind("https://x.org")
(('notes', '6-logistic-loss'), ('notes', '6-logistic-loss'), None)
"""

from __future__ import annotations

import copy
import importlib
import inspect
import os
import re
from pathlib import Path, PurePosixPath

__all__ = ["BOOK_ENV_VAR", "LOCAL_BOOK", "NOTES_FILE", "canonical_name", "resolve", "api_link", "link_kind", "relink",
           "book_location"]

BOOK_ENV_VAR = "DPEDU_BOOK_URL"
LOCAL_BOOK = Path(__file__).resolve().parents[2] / "docs" / "_build" / "student"
NOTES_FILE = "math.md"

_LINK = re.compile(r"(\]\()(?P<target>[^)\s]+)(\))")
_NAME = re.compile(r"dpedu(?:\.[A-Za-z_]\w*)*")
_API_PAGE = re.compile(r"(?:^|.*/)api/(?P<module>dpedu(?:\.\w+)*)\.html(?:#(?P<fragment>[\w.]+))?")
_NOTES = re.compile(r"(?:^|.*/)math\.md(?:#(?P<anchor>[^#]*))?")
_DOC = re.compile(r"(?:^|.*/)docs/(?P<page>[\w-]+)\.md(?:#(?P<anchor>[^#]*))?")


def canonical_name(dotted):
    """The name under which the API reference documents ``dotted`` (the module that defines it), or None.

    Chapters and docstrings may name an object by where a reader imports it (``dpedu.dp_sgd``,
    ``dpedu.training.dp_sgd``); the API pages document it in its defining module.

    >>> canonical_name("dpedu.L2_clip"), canonical_name("dpedu.clipping"), canonical_name("dpedu.nope")
    ('dpedu.clipping.L2_clip', 'dpedu.clipping', None)
    """
    if not isinstance(dotted, str) or not _NAME.fullmatch(dotted):
        return None
    try:
        obj = resolve(dotted)
    except (ImportError, AttributeError):
        return None
    if inspect.ismodule(obj):
        return obj.__name__
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if module and qualname and module.startswith("dpedu"):
        return f"{module}.{qualname}"
    return None


def resolve(dotted):
    """The object named ``package.module.attr[.attr]``: the longest importable module, then its attributes.

    Raises ImportError when no prefix imports and AttributeError when an attribute is missing.

    >>> resolve("dpedu.clipping.L2_clip").__name__
    'L2_clip'
    """
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attr in parts[split:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"no module of {dotted!r} can be imported")


def api_link(dotted):
    """``api/<module>.html#<name>``: where the book's API reference documents ``dotted`` (None if nowhere).

    >>> api_link("dpedu.dp_sgd"), api_link("dpedu.clipping")
    ('api/dpedu.training.sgd.html#dpedu.training.sgd.dp_sgd', 'api/dpedu.clipping.html')
    """
    name = canonical_name(dotted)
    if name is None:
        return None
    module = name
    while module and not inspect.ismodule(_imported(module)):
        module = module.rpartition(".")[0]
    return f"api/{module}.html" + ("" if module == name else f"#{name}")


def _imported(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def link_kind(target):
    """What a chapter's link points at: ``("api", name)``, ``("notes", anchor)``, ``("doc", page#anchor)`` or None.

    Recognises the chapters' own forms (a dotted name, ``../docs/math.md#a``, ``../docs/glossary.md#a``) and
    the API and notes links :func:`relink` writes (``.../api/<module>.html#<name>``, ``math.md#a``).
    """
    if not isinstance(target, str):
        return None
    if _NAME.fullmatch(target):
        return ("api", target)
    match = _API_PAGE.fullmatch(target)
    if match:
        return ("api", match["fragment"] or match["module"])
    match = _NOTES.fullmatch(target)
    if match:
        return ("notes", match["anchor"] or "")
    match = _DOC.fullmatch(target)
    if match:
        return ("doc", match["page"] + (f"#{match['anchor']}" if match["anchor"] else ""))
    return None


def book_location(book=None):
    """The built book links point at: ``book``, else ``$DPEDU_BOOK_URL``, else the local build (a Path).

    A URL (``http://``, ``https://``, ``file://``) is returned as a string ending in ``/``; anything else as a Path.
    """
    if book is None:
        book = os.environ.get(BOOK_ENV_VAR) or LOCAL_BOOK
    if isinstance(book, str) and re.match(r"^(https?|file)://", book):
        return book.rstrip("/") + "/"
    if not isinstance(book, (str, os.PathLike)) or not str(book):
        raise TypeError(f"book must be a URL or a folder path; got {book!r}")
    return Path(book)


def _book_prefix(book, base):
    if isinstance(book, str):
        return book
    relative = os.path.relpath(Path(book).resolve(), Path(base).resolve())
    return PurePosixPath(*Path(relative).parts).as_posix().rstrip("/") + "/"


def relink(nb, *, base, book=None, notes="../docs/math.md", docs=None):
    """A copy of notebook ``nb`` (a dict, as ``json.load`` reads it) with its API and notes links rewritten.

    Parameters
    ----------
    nb : dict
        The notebook (not changed).
    base : str or Path, or None
        The folder the notebook will be opened from (relative links are written from there). ``None``: the
        book itself: API links become dotted names and notes links ``../math.md#...`` again, as the book's
        sources write them.
    book : str or Path, optional
        The built book (see :func:`book_location`).
    notes : str
        The notes file as seen from ``base``: ``"math.md"`` when a copy travels beside the notebook.
    docs : str, optional
        The repository's ``docs/`` as seen from ``base`` (``"../docs"`` from ``chapters/``): links to the
        book's other pages then stay links to their sources there; by default they go to the built book.

    Returns
    -------
    dict
        The relinked notebook; a link it cannot place (an unknown dpedu name) is left as it was.
    """
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise TypeError(f"nb must be a notebook (a dict with a list of cells); got {type(nb).__name__}")
    if not isinstance(notes, str) or not notes:
        raise TypeError(f"notes must be the notes file's path relative to base (a str); got {notes!r}")
    if docs is not None and (not isinstance(docs, str) or not docs):
        raise TypeError(f"docs must be the docs folder's path relative to base (a str), or None; got {docs!r}")
    prefix = None if base is None else _book_prefix(book_location(book), base)

    def replace(match):
        kind = link_kind(match["target"])
        if kind is None:
            return match[0]
        what, value = kind
        if what == "api":
            if base is None:
                name = canonical_name(value)
                target = name or value
            else:
                page = api_link(value)
                target = prefix + page if page else None
        elif what == "notes":
            target = ("../math.md" if base is None else notes) + (f"#{value}" if value else "")
        else:
            page, _, anchor = value.partition("#")
            if base is None:
                target = f"../{page}.md"
            else:
                target = f"{docs}/{page}.md" if docs else f"{prefix}{page}.html"
            target += f"#{anchor}" if anchor else ""
        return match[0] if target is None else f"{match[1]}{target}{match[3]}"

    out = copy.deepcopy(nb)
    for cell in out["cells"]:
        if cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else source
        cell["source"] = _LINK.sub(replace, text)
    return out
