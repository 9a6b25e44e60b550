r"""The folder ``reference/`` that travels beside the course notebooks: the notes and API pages they link to.

JupyterLab serves one folder and nothing above it, so a notebook's "Uses:" and "Notes:" links
(:mod:`dpedu.course.booklinks`) point into a folder beside it. :func:`write_reference` writes that folder for the
notebooks of a directory, from the dpedu that is installed (a clone or a wheel):

* ``reference/math.md``: the mathematical notes, each heading of levels 1-3 with an anchor ``<a id="...">`` named
  as the book names the section (:func:`heading_slug`, MyST's GitHub-style slug), so that a link such as
  ``reference/math.md#5-l2-clipping-and-the-sensitivity-of-a-clipped-sum`` lands on its section in JupyterLab's
  Markdown viewer (which scrolls to the element whose id the fragment names, as the browser hands it on:
  percent-encoded, so an anchor with a non-ASCII letter gets its encoded form too) and in any viewer that honours
  ids; its figures in ``reference/_static/notes/``;
* ``reference/api/<module>.md``: one page per module a notebook links to, with the signature and docstring of
  each function and class the module defines and exports (and of any other object linked there), each under an
  anchor named by its dotted name;
* ``reference/<page>.md``: any other page of the book a notebook links to, anchored the same way;
* ``reference/README.md``: what the folder is and how to write it again.

The chapters and the notes come from the repository in a clone (``chapters/``, ``docs/``) and from the copies a
wheel ships in ``dpedu/course/_shipped/`` (``setup.py`` puts them there when the wheel is built):
:func:`course_dir`.

>>> heading_slug("5. L2 clipping and the sensitivity of a clipped sum")
'5-l2-clipping-and-the-sensitivity-of-a-clipped-sum'
>>> heading_slug(r"13.4 Conversion to $(\varepsilon, \delta)$"), heading_slug("20.3 One run (Steinke & Nasr)")
('134-conversion-to-', '203-one-run-steinke--nasr')
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import shutil
import urllib.parse
from pathlib import Path

from .booklinks import NOTES_PAGE, REFERENCE, canonical_name, defining_module, link_kind, markdown_links

__all__ = ["SHIPPED", "REPOSITORY", "HEADING_ANCHOR_LEVELS", "course_dir", "chapter_paths", "heading_slug",
           "anchored_page", "api_page", "write_reference"]

SHIPPED = Path(__file__).resolve().parent / "_shipped"      # in a wheel: chapters/ and docs/ (setup.py)
REPOSITORY = Path(__file__).resolve().parents[2]            # in a clone: the repository's chapters/ and docs/
HEADING_ANCHOR_LEVELS = 3        # the book's myst_heading_anchors: headings of levels 1-3 get an anchor
FIGURES = Path("_static") / "notes"                          # the notes' figures, relative to the notes page

_HEADING = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<text>.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_SLUG_DROP = re.compile(r"[^\w\u4e00-\u9fff\- ]")


def course_dir(what):
    """The folder of the course's ``"chapters"`` (the notebooks) or ``"docs"`` (the notes): the copy shipped in a
    wheel (``dpedu/course/_shipped/``) if there is one, else the repository's.

    Raises
    ------
    FileNotFoundError
        When neither exists (a package built without them).
    """
    if what not in ("chapters", "docs"):
        raise ValueError(f"what must be 'chapters' or 'docs'; got {what!r}")
    marker = "[0-9][0-9]_*.ipynb" if what == "chapters" else f"{NOTES_PAGE}.md"
    for base in (SHIPPED, REPOSITORY):
        if any((base / what).glob(marker)):
            return base / what
    raise FileNotFoundError(f"the course's {what} are neither shipped with dpedu ({SHIPPED / what}) nor in a "
                            f"repository beside it ({REPOSITORY / what}); reinstall dpedu from its wheel")


def chapter_paths(chapters_dir=None):
    """The chapter notebooks (``NN_name.ipynb``) of ``chapters_dir`` (default :func:`course_dir`), in order."""
    directory = Path(course_dir("chapters") if chapters_dir is None else chapters_dir)
    return sorted(directory.glob("[0-9][0-9]_*.ipynb"))


def heading_slug(title):
    """The anchor the book gives a heading: MyST's GitHub-style slug of its text.

    The text is what MyST counts (text and inline code; formulas, HTML and link targets left out), lowercased,
    spaces made hyphens, every character but word characters, hyphens and CJK ideographs dropped.
    """
    text = re.sub(r"(?<!\\)\$[^$]+\$", "", title)                    # formulas: not text
    text = re.sub(r"<[^>]*>", "", text)                              # inline HTML
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)           # a link: its text
    text = re.sub(r"`+([^`]*)`+", r"\1", text)                       # inline code: its content
    text = re.sub(r"(?<!\w)[*_]+|[*_]+(?!\w)", "", text)             # emphasis markers
    return _SLUG_DROP.sub("", text.lower().replace(" ", "-"))


def anchored_page(text):
    """The Markdown ``text`` with an ``<a id="slug"></a>`` at the start of each heading of levels 1-3 (outside
    code fences), the slug unique in the page as MyST makes it (``-1``, ``-2``, ... for repeats)."""
    out, fence, seen = [], None, set()
    for line in text.split("\n"):
        opening = _FENCE.match(line)
        if opening and (fence is None or opening.group(1).startswith(fence)):
            fence = None if fence else opening.group(1)[:3]
        match = None if fence or opening else _HEADING.match(line)
        if match and len(match["hashes"]) <= HEADING_ANCHOR_LEVELS:
            slug = heading_slug(match["text"].strip())
            if slug:
                unique, n = slug, 0
                while unique in seen:
                    n += 1
                    unique = f"{slug}-{n}"
                seen.add(unique)
                anchors = "".join(f'<a id="{anchor}"></a>' for anchor in dict.fromkeys((unique, _as_in_a_url(unique))))
                line = f'{match["hashes"]} {anchors}{match["text"].strip()}'
        out.append(line)
    return "\n".join(out)


def _as_in_a_url(anchor):
    """``anchor`` as a browser hands a link's fragment on (``a.hash``): non-ASCII characters percent-encoded in UTF-8.

    JupyterLab's Markdown viewer looks up that string itself, so a heading whose anchor has a non-ASCII character
    (``13-rényi-differential-privacy``) also carries its encoded form (``13-r%C3%A9nyi-differential-privacy``).
    """
    return urllib.parse.quote(anchor, safe="".join(chr(c) for c in range(33, 127) if chr(c) not in '"<>`%'))


def _signature(obj):
    """``name(params)`` with long default values shortened to ``...`` (an array of 100 orders says nothing)."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return obj.__name__
    params = []
    for param in signature.parameters.values():
        if param.default is not inspect.Parameter.empty and len(repr(param.default)) > 40:
            param = param.replace(default=_Elided())
        params.append(param)
    return obj.__name__ + str(signature.replace(parameters=params, return_annotation=inspect.Signature.empty))


class _Elided:
    def __repr__(self):
        return "..."


def _fenced(text):
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return [f"{fence}text", text, fence]


def _entry(name, obj, level="##"):
    kind = "class" if inspect.isclass(obj) else "function"
    lines = ["", f'{level} <a id="{name}"></a>`{name}` ({kind})', "", *_fenced(_signature(obj))]
    doc = inspect.getdoc(obj)
    if doc:
        lines += ["", *_fenced(doc)]
    if inspect.isclass(obj):
        for attr, member in vars(obj).items():
            if not attr.startswith("_") and inspect.isfunction(member) and inspect.getdoc(member):
                lines += ["", f'### <a id="{name}.{attr}"></a>`{attr}`', "", *_fenced(_signature(member)), "",
                          *_fenced(inspect.getdoc(member))]
    return lines


def api_page(module_name, names=()):
    """The Markdown API page of ``module_name``: its docstring's summary, then the functions and classes it defines
    and exports (``__all__``) and the objects ``names`` (canonical dotted names defined there), each under an
    anchor named by its dotted name."""
    module = importlib.import_module(module_name)
    exported = [f"{module_name}.{n}" for n in getattr(module, "__all__", ())]
    entries = []
    for name in dict.fromkeys([*exported, *names]):
        if name == module_name or canonical_name(name) != name or defining_module(name) != module_name:
            continue                                  # a re-export: documented where it is defined
        obj = _resolve_attribute(module, name[len(module_name) + 1:])
        if inspect.isclass(obj) or inspect.isfunction(obj):
            entries.append((name, obj))
    summary = (inspect.getdoc(module) or "").split("\n\n")[0]
    lines = [f'# <a id="{module_name}"></a>`{module_name}`', "",
             "*dpedu's API reference for this module, written beside the notebooks from the installed package's "
             "docstrings (the book has the same pages, typeset).*", ""]
    if summary:
        lines += _fenced(summary)
    for name, obj in entries:
        lines += _entry(name, obj)
    return "\n".join(lines) + "\n"


def _resolve_attribute(obj, dotted):
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


README = """\
# The reference beside these notebooks

The notebooks in the folder above link here: "Notes:" links to the mathematical notes (`math.md`), "Uses:"
links to the API pages of the dpedu functions they use (`api/`). dpedu wrote this folder from the installed
package; write it again (after upgrading dpedu) with

    python -m dpedu reference <the folder of the notebooks>

The book (`python docs/build.py` in a clone of dpedu) has the same notes and API pages, typeset.
"""


def write_reference(folder, notebooks=None):
    """Write ``folder/reference/`` for the notebooks of ``folder`` (or the given notebook paths); returns the files
    written or already up to date, sorted.

    Files are written only when their text changes; API pages of modules no notebook links any more are removed
    (only ``reference/api/dpedu*.md``: nothing else in the folder is touched).

    Raises
    ------
    ValueError
        When a notebook links to a dpedu name that does not exist, or to a page the course does not have.
    """
    folder = Path(folder)
    paths = sorted(folder.glob("*.ipynb")) if notebooks is None else [Path(p) for p in notebooks]
    api, pages = {}, {NOTES_PAGE}
    for path in paths:
        for target in markdown_links(json.loads(path.read_text(encoding="utf-8"))):
            kind = link_kind(target)
            if kind is None:
                continue
            if kind[0] == "api":
                name = canonical_name(kind[1])
                if name is None:
                    raise ValueError(f"{path.name} links to {kind[1]!r}, which dpedu does not define")
                api.setdefault(defining_module(name), set()).add(name)
            elif kind[0] == "doc":
                pages.add(kind[1].partition("#")[0])
    docs = course_dir("docs")
    root = folder / REFERENCE
    texts = {root / "README.md": README}
    for page in sorted(pages):
        source = docs / f"{page}.md"
        if not source.is_file():
            raise ValueError(f"a notebook links to the page {page!r}, which the course's docs do not have")
        texts[root / f"{page}.md"] = anchored_page(source.read_text(encoding="utf-8"))
    for module, names in sorted(api.items()):
        texts[root / "api" / f"{module}.md"] = api_page(module, sorted(names))
    written = []
    for path, text in texts.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    for figure in sorted((docs / FIGURES).glob("*.png")):
        target = root / FIGURES / figure.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.is_file() or target.read_bytes() != figure.read_bytes():
            shutil.copyfile(figure, target)
        written.append(target)
    for stale in (root / "api").glob("dpedu*.md"):
        if stale not in texts:
            stale.unlink()
    return sorted(written)
