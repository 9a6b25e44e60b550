"""Links of the chapters that work wherever a notebook is opened.

A chapter's markdown links to dpedu's API reference ("Uses:" links) and to the mathematical notes ("Notes:"
links). The chapter *sources* (``chapters/_src/``) write them as the book does: an API link is the object's dotted
name, ``[L2_clip](dpedu.textbook.clipping.L2_clip)``; a notes link names a section of ``docs/math.md`` by its heading's
anchor, ``[§5](../docs/math.md#5-l2-clipping-and-the-sensitivity-of-a-clipped-sum)``; a link to another page of
the book is ``../docs/<page>.md#<anchor>``.

Outside the book a notebook is opened in JupyterLab, which serves one folder and nothing above it: a link into
``../docs/`` or into a built book is a 404 there. So every notebook the course hands out (``chapters/``, a
student copy, an nbgrader assignment and its ``release/``, the chapters written from a pip install) carries a
folder ``reference/`` beside it (:mod:`dpedu.course.reference` writes it from the installed dpedu) and links
into it, relative to the notebook:

* an API link: ``reference/api/<module>.md#<name>``, the module that defines the object (:func:`api_link`);
* a notes link: ``reference/math.md#<anchor>``, the same anchor as the book's;
* another page of the book: ``reference/<page>.md#<anchor>``.

:func:`relink` writes a notebook's links for one of two places: ``"jupyter"`` (the form above; the committed
chapters carry it, so a copy keeps its links as they are) or ``"book"`` (dotted names and ``../math.md#...``,
which Sphinx resolves, for the book's staged chapters). It recognises every form it writes, so a notebook can go
from one to the other. A feedback page (``dpedu.course.feedback``) turns the same links into anchors inside
the page.

>>> link_kind("dpedu.textbook.clipping.L2_clip"), link_kind("reference/api/dpedu.textbook.clipping.md#dpedu.textbook.clipping.L2_clip")
(('api', 'dpedu.textbook.clipping.L2_clip'), ('api', 'dpedu.textbook.clipping.L2_clip'))
>>> link_kind("../docs/math.md#6-logistic-loss"), link_kind("reference/math.md#6-logistic-loss")
(('notes', '6-logistic-loss'), ('notes', '6-logistic-loss'))
>>> link_kind("../docs/glossary.md#term-epsilon"), link_kind("https://x.org")
(('doc', 'glossary#term-epsilon'), None)
"""

from __future__ import annotations

import copy
import importlib
import inspect
import re

__all__ = ["REFERENCE", "NOTES_PAGE", "PLACES", "canonical_name", "resolve", "api_link", "link_kind", "relink",
           "markdown_links"]

REFERENCE = "reference"          # the folder beside every notebook outside the book
NOTES_PAGE = "math"              # the notes: docs/math.md, and reference/math.md beside a notebook
PLACES = ("jupyter", "book")

_LINK = re.compile(r"(\]\()(?P<target>[^)\s]+)(\))")
_NAME = re.compile(r"dpedu(?:\.[A-Za-z_]\w*)*")
_API = re.compile(rf"(?:\./)?{REFERENCE}/api/(?P<module>dpedu(?:\.\w+)*)\.md(?:#(?P<fragment>[\w.]+))?")
_PAGE = re.compile(rf"(?:(?:\.\./)?docs/|\.\./|(?:\./)?{REFERENCE}/)(?P<page>[\w-]+)\.md(?:#(?P<anchor>[^#]*))?")


def canonical_name(dotted):
    """The name under which the API reference documents ``dotted`` (the module that defines it), or None.

    Chapters and docstrings may name an object by where a reader imports it (``dpedu.dp_sgd``,
    ``dpedu.textbook.training.dp_sgd``); the API pages document it in its defining module.

    >>> canonical_name("dpedu.L2_clip"), canonical_name("dpedu.textbook.clipping"), canonical_name("dpedu.nope")
    ('dpedu.textbook.clipping.L2_clip', 'dpedu.textbook.clipping', None)
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

    >>> resolve("dpedu.textbook.clipping.L2_clip").__name__
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


def defining_module(name):
    """The module of a canonical name: the name itself for a module, else its longest module prefix."""
    module = name
    while module and not inspect.ismodule(_imported(module)):
        module = module.rpartition(".")[0]
    return module


def api_link(dotted):
    """``reference/api/<module>.md#<name>``: where the reference beside a notebook documents ``dotted`` (None if
    nowhere).

    >>> api_link("dpedu.dp_sgd"), api_link("dpedu.textbook.clipping")
    ('reference/api/dpedu.textbook.training.sgd.md#dpedu.textbook.training.sgd.dp_sgd', 'reference/api/dpedu.textbook.clipping.md')
    """
    name = canonical_name(dotted)
    if name is None:
        return None
    module = defining_module(name)
    return f"{REFERENCE}/api/{module}.md" + ("" if module == name else f"#{name}")


def _imported(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def link_kind(target):
    """What a chapter's link points at: ``("api", name)``, ``("notes", anchor)``, ``("doc", page#anchor)`` or None.

    Recognises the sources' forms (a dotted name, ``../docs/math.md#a``, ``../docs/glossary.md#a``), the book's
    (``../math.md#a``) and the reference folder's (``reference/api/<module>.md#<name>``, ``reference/math.md#a``).
    """
    if not isinstance(target, str):
        return None
    if _NAME.fullmatch(target):
        return ("api", target)
    match = _API.fullmatch(target)
    if match:
        return ("api", match["fragment"] or match["module"])
    match = _PAGE.fullmatch(target)
    if match:
        anchor = match["anchor"] or ""
        if match["page"] == NOTES_PAGE:
            return ("notes", anchor)
        return ("doc", match["page"] + (f"#{anchor}" if anchor else ""))
    return None


def markdown_links(nb):
    """Every link target of a notebook's markdown cells (a notebook dict or node), in order."""
    return [match["target"] for cell in nb["cells"] if cell.get("cell_type") == "markdown"
            for match in _LINK.finditer(_text(cell.get("source", "")))]


def _text(source):
    return "".join(source) if isinstance(source, list) else source


def relink(nb, *, to="jupyter"):
    """A copy of notebook ``nb`` (a dict, as ``json.load`` reads it) with its API, notes and page links written
    for ``to``.

    Parameters
    ----------
    nb : dict
        The notebook (not changed).
    to : {"jupyter", "book"}
        ``"jupyter"``: links into the ``reference/`` folder beside the notebook (:mod:`dpedu.course.reference`
        writes it); ``"book"``: the book's own references (dotted names that Sphinx resolves, ``../math.md#...``
        and ``../<page>.md#...`` from the book's ``chapters/``).

    Returns
    -------
    dict
        The relinked notebook.

    Raises
    ------
    ValueError
        For an API link to a name dpedu does not define (it would lead nowhere in either place).
    """
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise TypeError(f"nb must be a notebook (a dict with a list of cells); got {type(nb).__name__}")
    if to not in PLACES:
        raise ValueError(f"to must be one of {PLACES}; got {to!r}")

    def replace(match):
        kind = link_kind(match["target"])
        if kind is None:
            return match[0]
        what, value = kind
        if what == "api":
            name = canonical_name(value)
            if name is None:
                raise ValueError(f"a link names {value!r}, which dpedu does not define (API links are dotted names "
                                 "of dpedu objects)")
            target = name if to == "book" else api_link(name)
        else:
            page, _, anchor = (NOTES_PAGE, "", value) if what == "notes" else value.partition("#")
            target = (f"../{page}.md" if to == "book" else f"{REFERENCE}/{page}.md") + (f"#{anchor}" if anchor else "")
        return f"{match[1]}{target}{match[3]}"

    out = copy.deepcopy(nb)
    for cell in out["cells"]:
        if cell.get("cell_type") == "markdown":
            cell["source"] = _LINK.sub(replace, _text(cell.get("source", "")))
    return out
