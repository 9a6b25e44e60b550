"""Source listings for the course: the code of a dpedu function as a reader sees it.

:class:`SourceListing` (what :func:`dpedu.course.notebook.show_source` displays) folds docstrings to their summary
line and wraps long lines at :data:`LISTING_WIDTH` columns, keeping the code valid Python; in Jupyter and
in the book it renders as a highlighted ``python`` block.

>>> print(wrap_code("total = some_function(first_argument, second_argument, third_argument)", width=40))
total = some_function(first_argument,
                      second_argument,
                      third_argument)
"""

from __future__ import annotations

import inspect
import re
import textwrap

__all__ = ["SourceListing", "LISTING_WIDTH", "CHAPTER_LISTING_WIDTH", "fold_docstrings", "wrap_code"]

LISTING_WIDTH = 100          # columns of a listing: wider lines are wrapped
#: The columns of a listing a chapter shows (``show_source``): in the book a listing's block holds 90 characters in
#: furo's own layout (windows below 1152 pixels) and 103 from there on (docs/_static/book.css), so 82 never wraps
#: where the wrapper cannot place the break.
CHAPTER_LISTING_WIDTH = 82
_CONTINUATION = " " * 8      # extra indent of a wrapped line
_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`~?([^`]*)`")


class SourceListing:
    '''The source of ``obj`` as a reader sees it: docstrings folded, lines at most ``width`` columns.

    ``str()`` is the code; ``_repr_markdown_`` a fenced ``python`` block (Jupyter and the book highlight it).
    The code stays valid Python: long lines are broken between tokens inside brackets (or with a backslash),
    long strings are cut into adjacent literals, and trailing comments move onto their own line.

    >>> from dpedu.clipping import L2_clip
    >>> listing = SourceListing(L2_clip)
    >>> listing.name, max(len(line) for line in listing.code.splitlines()) <= LISTING_WIDTH
    ('dpedu.clipping.L2_clip', True)
    >>> for line in listing.code.splitlines()[:3]:
    ...     print(line)
    def L2_clip(v, clip_norm):
        """Scale `v` so its L2 norm is at most `clip_norm`: v · min(1, C / ‖v‖) (docs/math.md §5)."""
        C = check_positive(clip_norm, "clip_norm", allow_inf=True)
    '''

    def __init__(self, obj, *, width=LISTING_WIDTH):
        try:
            source = inspect.getsource(obj)
        except (TypeError, OSError) as exc:
            raise TypeError(f"show_source needs a Python function, class or module; got {obj!r} ({exc})") from None
        module = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None)
        self.name = f"{module}.{qualname}" if module and qualname else getattr(obj, "__name__", repr(obj))
        self.code = wrap_code(fold_docstrings(textwrap.dedent(source).rstrip("\n"), width), width)

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


def fold_docstrings(source, width=LISTING_WIDTH):
    """``source`` with every docstring (module, class, function) replaced by its summary line."""
    import ast

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


_BREAK_BEFORE = {"+", "-", "*", "/", "//", "@", "and", "or", "if", "else", "for"}


def wrap_code(source, width=LISTING_WIDTH):
    """Wrap the statements of Python ``source`` that have a line longer than ``width``; the code stays valid.

    Such a statement is reflowed: its comments move above it, and its tokens are filled into lines of at most
    ``width`` columns, broken inside brackets after a comma or an opening bracket or before an operator (a
    backslash only outside brackets), continued under the first opening bracket. Long strings inside
    brackets are cut into adjacent literals. Other statements keep their layout.
    """
    import io
    import tokenize

    lines = source.split("\n")
    statements, current, depth = [], [], 0
    for tok in tokenize.generate_tokens(io.StringIO(source + "\n").readline):
        if tok.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            continue
        current.append((tok, depth))
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        if tok.type in (tokenize.NEWLINE, tokenize.NL) and depth == 0:
            statements.append(current)
            current = []
    out, done = [], 0                                   # done: lines (1-based) already written
    for statement in statements:
        first, last = statement[0][0].start[0], statement[-1][0].end[0]
        if first <= done:
            continue
        out += lines[done: first - 1]
        own = lines[first - 1: last]
        code = [(t, d) for t, d in statement if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT)]
        if all(len(line) <= width for line in own) or any(t.start[0] != t.end[0] for t, _ in code):
            out += own
        else:
            out += _reflow(statement, own[0], width)
        done = last
    out += lines[done:]
    return "\n".join(out)


def _reflow(statement, first_line, width):
    """The lines of one statement (tokens with their bracket depth) refilled to ``width`` columns."""
    import textwrap
    import tokenize

    indent = first_line[: len(first_line) - len(first_line.lstrip())]
    lines = []
    for tok, _ in statement:                            # comments first, on lines of their own
        if tok.type == tokenize.COMMENT:
            lines += textwrap.wrap(tok.string.lstrip("#").strip(), width - len(indent) - 2,
                                   initial_indent=indent + "# ", subsequent_indent=indent + "# ",
                                   break_long_words=False)
    code = [(t, d) for t, d in statement if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT)]
    if not code:
        return lines
    opening = next((t for t, _ in code if t.type == tokenize.OP and t.string in "([{"), None)
    hang = indent + _CONTINUATION
    segments, previous, width_so_far = [], None, 0      # [gap, text, depth, longest string, offset, its depth]
    for tok, depth in code:
        if previous is None:
            gap = ""
        elif previous.end[0] == tok.start[0]:
            gap = " " if tok.start[1] > previous.end[1] else ""
        else:                                           # the statement continued on a new line
            gap = "" if previous.string in "([{" or tok.string in ")]}" else " "
        breakable = previous is not None and tok.string not in (")", "]", "}", ",", ":", ".") and (
            (previous.type == tokenize.OP and previous.string == ",")
            or (tok.type == tokenize.STRING and previous.type == tokenize.STRING)
            or (depth > 0 and tok.string in _BREAK_BEFORE) or tok.string in ("+", "-", "and", "or", "if", "else"))
        if segments and not breakable:                  # glue onto the segment before
            segment = segments[-1]
            if tok.type == tokenize.STRING and (segment[3] is None or len(tok.string) > len(segment[3])):
                segment[3:] = tok.string, len(segment[1]) + len(gap), depth
            segment[1] += gap + tok.string
        else:
            literal = tok.string if tok.type == tokenize.STRING else None
            segments.append([gap, tok.string, depth, literal, 0, depth])
        width_so_far += len(gap) + len(tok.string)
        if tok is opening and width_so_far <= width // 2:
            hang = indent + " " * width_so_far
        previous = tok
    current, fresh = indent, True                       # fresh: nothing on the current line yet
    for gap, text, depth, literal, offset, literal_depth in segments:
        cont = hang if depth > 0 else indent + _CONTINUATION
        end = "" if depth > 0 else " \\"             # outside brackets a line break needs a backslash
        gap = "" if fresh else gap
        if len(current) + len(gap) + len(text) <= width - len(end):
            current += gap + text
        elif literal is not None:                       # cut the string into adjacent literals
            head, tail = text[:offset], text[offset + len(literal):]
            inner_cont, inner_end = (hang, "") if literal_depth > 0 else (cont, end)
            room = width - len(current) - len(gap) - len(head) - len(inner_end)
            pieces = _split_string(literal, room, width - len(inner_cont) - len(inner_end), len(tail))
            if not fresh and len(pieces[0]) + (len(tail) if len(pieces) == 1 else 0) > room:
                lines.append(current.rstrip() + end)
                current, gap = cont, ""
                room = width - len(cont) - len(head) - len(inner_end)
                pieces = _split_string(literal, room, width - len(inner_cont) - len(inner_end), len(tail))
            current += gap + head + pieces[0]
            for piece in pieces[1:]:
                lines.append(current.rstrip() + inner_end)
                current = inner_cont + piece
            current += tail
        elif fresh:
            current += text                             # nowhere to break it
        else:
            lines.append(current.rstrip() + end)
            current = cont + text
        fresh = False
    lines.append(current)
    return lines


def _split_string(literal, first_room, room, tail=0):
    """Cut one string literal into adjacent literals at spaces (never inside ``{...}`` of an f-string): the
    first at most ``first_room`` characters, the others at most ``room``, the last leaving ``tail`` more."""
    match = re.fullmatch(r"([A-Za-z]*)(['\"])(.*)\2", literal, re.S)
    if match is None or literal[len(match[1]):].startswith(match[2] * 3):
        return [literal]
    prefix, quote, body = match[1], match[2], match[3]
    overhead = len(prefix) + 2
    cuts, level, start = [], 0, 0                       # cut after a space at level 0
    spaces = []
    for i, ch in enumerate(body):
        if "f" in prefix.lower():
            level += (ch == "{") - (ch == "}")
        if ch == " " and level == 0 and (i == 0 or body[i - 1] != "\\"):
            spaces.append(i + 1)
    pieces, limit = [], first_room
    while len(body) - start + overhead + tail > limit:
        fitting = [c for c in spaces if start < c <= start + limit - overhead]
        if not fitting:
            break
        pieces.append(body[start: fitting[-1]])
        start, limit = fitting[-1], room
    pieces.append(body[start:])
    return [f"{prefix}{quote}{piece}{quote}" for piece in pieces]
