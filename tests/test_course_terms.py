"""Every term of the glossary is used only from the chapter that defines it on (static and fast).

``docs/glossary.md`` lists each term with ``*Defined in:* chapter N``. A chapter numbered below N that uses the
term in its prose (markdown cells, outside code, math and link targets) uses it before it is defined, unless
the same sentence points ahead to the defining chapter ("... moments accountant; chapter 5 shows ..."): a
pointer forward is not a use. ``test_a_planted_misuse_is_caught`` plants such a use in a temporary copy of the
chapter sources and checks that it is reported.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "chapters" / "_src"
GLOSSARY = ROOT / "docs" / "glossary.md"

_TERM = re.compile(r"^(?P<term>\S[^\n]*)\n(?P<body>(?:[ \t]+[^\n]*\n|\n)+)", re.M)
_DEFINED = re.compile(r"\*Defined in:\*\s*\[?chapter (\d+)", re.I)
_ALSO = re.compile(r"\*Also:\*\s*([^*\n]+)")
_CHAPTER_REF = re.compile(r"\bchapters? ((?:\d+(?:\s*(?:,|and|–|-|to)\s*)?)+)", re.I)
_STRIP = [re.compile(p, re.S) for p in (r"\$\$.*?\$\$", r"\$[^$\n]*\$", r"`[^`\n]*`", r"\]\([^)]*\)",
                                         r"<[^>\n]*>")]


@dataclass(frozen=True)
class Term:
    name: str
    chapter: int
    patterns: tuple


@dataclass(frozen=True)
class EarlyUse:
    chapter: int
    term: str
    defined_in: int
    sentence: str


def glossary_terms(path=GLOSSARY):
    """The glossary's terms, each with the chapter that defines it and the spellings that count as a use."""
    text = path.read_text(encoding="utf-8")
    block = text.split("```{glossary}", 1)[1].split("```", 1)[0]
    terms = []
    for match in _TERM.finditer(block):
        name, body = match["term"].strip(), match["body"]
        if name.startswith(":"):
            continue
        defined = _DEFINED.search(body)
        assert defined, f"glossary: {name!r} has no '*Defined in:* chapter N'"
        spellings = {re.sub(r"\s*\(.*?\)", "", name).strip()}
        also = _ALSO.search(body)
        if also:
            spellings |= {s.strip() for s in also[1].split(";") if s.strip()}
        patterns = tuple(re.compile(r"(?<![\w-])" + re.escape(s).replace(r"\ ", r"[\s-]+") + r"(?:s|es)?(?![\w-])",
                                    re.I) for s in sorted(spellings))
        terms.append(Term(name, int(defined[1]), patterns))
    return terms


def _load_build():
    spec = importlib.util.spec_from_file_location("chapters_build", ROOT / "chapters" / "_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chapter_prose(sources=SOURCES):
    """{chapter number: its markdown prose, code, math and link targets removed}."""
    build = _load_build()
    prose = {}
    for path in sorted(Path(sources).glob("[0-9][0-9]_*.py")):
        cells = build.parse(path.read_text(encoding="utf-8"), path.name)
        text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        text = re.sub(r"```.*?```", " ", text, flags=re.S)
        for pattern in _STRIP:
            text = pattern.sub(" ", text)
        prose[int(path.name[:2])] = text
    return prose


def _points_ahead(sentence, chapter):
    for match in _CHAPTER_REF.finditer(sentence):
        numbers = [int(n) for n in re.findall(r"\d+", match[1])]
        if chapter in numbers or (len(numbers) == 2 and numbers[0] <= chapter <= numbers[1]):
            return True
    return False


def early_uses(sources=SOURCES, glossary=GLOSSARY):
    """Every use of a glossary term in a chapter before the one that defines it (pointers ahead excepted)."""
    found = []
    terms = glossary_terms(glossary)
    for chapter, text in chapter_prose(sources).items():
        sentences = re.split(r"(?<=[.!?:;])\s+|\n\s*\n", text)
        for term in terms:
            if chapter >= term.chapter:
                continue
            for sentence in sentences:
                if any(p.search(sentence) for p in term.patterns) and not _points_ahead(sentence, term.chapter):
                    found.append(EarlyUse(chapter, term.name, term.chapter, " ".join(sentence.split())[:160]))
                    break
    return found


def test_every_term_has_a_defining_chapter_that_exists():
    chapters = set(chapter_prose())
    for term in glossary_terms():
        assert term.chapter in chapters, f"{term.name}: defined in chapter {term.chapter}, which does not exist"


def test_no_chapter_uses_a_term_before_it_is_defined():
    found = early_uses()
    assert not found, "terms used before the chapter that defines them:\n  " + "\n  ".join(
        f"chapter {u.chapter} uses {u.term!r} (defined in chapter {u.defined_in}): {u.sentence!r}" for u in found)


def _plant(tmp_path, sentence):
    """A copy of the chapter sources with ``sentence`` appended to chapter 1 as a markdown cell."""
    copy = tmp_path / "_src"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(SOURCES, copy)
    first = sorted(copy.glob("01_*.py"))[0]
    first.write_text(first.read_text(encoding="utf-8") + f"\n# %% [markdown]\n# {sentence}\n", encoding="utf-8")
    return copy


def test_a_planted_misuse_is_caught(tmp_path):
    found = early_uses(_plant(tmp_path, "A membership inference attack would find the rows of this model."))
    planted = [u for u in found if u.chapter == 1 and u.term == "Membership inference"]
    assert planted and planted[0].defined_in == 9, found
    print("\n".join(f"caught: chapter {u.chapter} uses {u.term!r} (defined in chapter {u.defined_in}): "
                    f"{u.sentence!r}" for u in planted))
    # the same term in a sentence that points ahead to its chapter is not a use
    found = early_uses(_plant(tmp_path, "Chapter 9 shows a membership inference attack on such a model."))
    assert not [u for u in found if u.chapter == 1 and u.term == "Membership inference"], found


# --- "Defined in" is read off the chapters ----------------------------------------------------------------------

_EMPHASIS = re.compile(r"\*\*([^*]+)\*\*|^#+ (.+)$|(?<![*\w])\*([^*\n]+)\*(?![*\w])", re.M)
_CODE_NAME = re.compile(r"`(dpedu(?:\.\w+)+)`")


def chapter_markdown(sources=SOURCES):
    """{chapter number: its markdown cells, as written (emphasis and code spans kept)}."""
    build = _load_build()
    return {int(path.name[:2]): "\n".join(c.source for c in build.parse(path.read_text(encoding="utf-8"), path.name)
                                          if c.cell_type == "markdown")
            for path in sorted(Path(sources).glob("[0-9][0-9]_*.py"))}


def defining_chapter(term, markdown):
    """The first chapter that defines ``term``: whose prose sets one of its spellings in bold, italics or a heading
    (how a chapter marks the word it defines), or None."""
    for chapter in sorted(markdown):
        spans = [a or b or c for a, b, c in _EMPHASIS.findall(markdown[chapter])]
        if any(pattern.search(span) for span in spans for pattern in term.patterns):
            return chapter
    return None


def test_every_glossary_entry_names_the_chapter_that_defines_it():
    """The glossary's "Defined in: chapter N" is the chapter that marks the term as defined (the first to set it
    in bold, italics or a heading), and the dpedu names an entry quotes appear in that chapter."""
    markdown = chapter_markdown()
    block = GLOSSARY.read_text(encoding="utf-8").split("```{glossary}", 1)[1].split("```", 1)[0]
    bodies = {m["term"].strip(): m["body"] for m in _TERM.finditer(block)}
    wrong = []
    for term in glossary_terms():
        derived = defining_chapter(term, markdown)
        if derived != term.chapter:
            wrong.append(f"{term.name!r}: glossary says chapter {term.chapter}, the chapters define it in "
                         f"{'no chapter' if derived is None else f'chapter {derived}'}")
            continue
        source = SOURCES.glob(f"{term.chapter:02d}_*.py").__next__().read_text(encoding="utf-8")
        missing = [name for name in _CODE_NAME.findall(bodies[term.name])
                   if name.rsplit(".", 1)[-1] not in source]
        if missing:
            wrong.append(f"{term.name!r}: the entry quotes {missing}, which chapter {term.chapter} never mentions")
    assert not wrong, "glossary entries that do not match the chapters:\n  " + "\n  ".join(wrong)


def test_the_defining_chapter_is_read_from_the_emphasis(tmp_path):
    """A term only mentioned in passing is defined nowhere; emphasising it in a chapter defines it there."""
    term = Term("Widget", 3, (re.compile(r"(?<![\w-])widget(?:s|es)?(?![\w-])", re.I),))
    assert defining_chapter(term, {1: "a widget in passing", 3: "the **widget** is", 5: "# Widgets"}) == 3
    assert defining_chapter(term, {1: "a widget in passing", 2: "no emphasis on widgets"}) is None
    assert defining_chapter(term, {4: "a *widget* is"}) == 4
