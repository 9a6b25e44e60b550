"""Source listings for the course: the code of a dpedu function as a reader sees it.

:class:`SourceListing` (what :func:`dpedu.course.notebook.show_source` displays) is the function's source with every
docstring folded to its summary line; the code itself is shown as it is written. Code a chapter prints is written
to fit the book's code column (:data:`CHAPTER_LISTING_WIDTH` columns, checked by ``tests/test_listing.py``), so
nothing is re-wrapped for display. In Jupyter and in the book a listing renders as a highlighted ``python`` block.

>>> from dpedu.textbook.clipping import L2_clip
>>> print(SourceListing(L2_clip).code.splitlines()[1])
def L2_clip(v, clip_norm):
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

__all__ = ["SourceListing", "CHAPTER_LISTING_WIDTH", "fold_docstrings"]

#: The columns of the book's code column in furo's own layout (windows below 1152 pixels; 103 from there on,
#: docs/_static/book.css): every line a chapter prints is at most this wide, so none wraps on the page.
CHAPTER_LISTING_WIDTH = 90
_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`~?([^`]*)`")


class SourceListing:
    '''The source of ``obj`` as a reader sees it: docstrings folded to their summary line (wrapped at ``width``).

    ``str()`` is the code; ``_repr_markdown_`` a fenced ``python`` block (Jupyter and the book highlight it).
    '''

    def __init__(self, obj, *, width=CHAPTER_LISTING_WIDTH):
        try:
            source = inspect.getsource(obj)
        except (TypeError, OSError) as exc:
            raise TypeError(f"show_source needs a Python function, class or module; got {obj!r} ({exc})") from None
        module = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None)
        self.name = f"{module}.{qualname}" if module and qualname else getattr(obj, "__name__", repr(obj))
        self.code = fold_docstrings(textwrap.dedent(source).rstrip("\n"), width)

    def __str__(self):
        return self.code

    def __repr__(self):
        return self.code

    def _repr_markdown_(self):
        fence = "~~~~" if "```" in self.code else "```"
        return f"`{self.name}` (docstring shortened to its summary; `help()` shows all of it)\n\n{fence}python\n{self.code}\n{fence}\n"


def _summary(docstring):
    """The first paragraph of a docstring on one line, with reST roles and double backquotes made plain."""
    paragraph = inspect.cleandoc(docstring).split("\n\n")[0]
    text = " ".join(paragraph.split())
    return _ROLE.sub(r"`\1`", text).replace("``", "`")


def fold_docstrings(source, width=CHAPTER_LISTING_WIDTH):
    """``source`` with every docstring (module, class, function) replaced by its summary line, wrapped at ``width``."""
    lines = source.split("\n")
    tree = ast.parse(source)
    folds = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                folds.append(first)
    for doc in sorted(folds, key=lambda n: n.lineno, reverse=True):
        indent = lines[doc.lineno - 1][: doc.col_offset]
        summary = _summary(doc.value.value)
        prefix = "r" if "\\" in summary else ""
        quoted = f'{prefix}"""{summary}"""'
        wrapped = textwrap.wrap(quoted, width - len(indent), break_long_words=False,
                                break_on_hyphens=False) or [quoted]
        lines[doc.lineno - 1: doc.end_lineno] = [indent + part for part in wrapped]
    return "\n".join(lines)
