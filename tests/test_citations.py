"""Every citation of the project's math notes points to a section that exists.

Docstrings, chapters, tests and documents cite ``docs/math.md §N`` (or ``§N.M``). This test collects
every such citation in the repository's tracked text files and checks that ``docs/math.md`` has a
heading with that number. It also checks that nothing cites a file the repository does not contain
(the developers' notes beside the project, or paths outside the checkout).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "docs" / "math.md"
TEXT_SUFFIXES = {".py", ".md", ".ipynb", ".txt", ".rst", ".cfg", ".toml"}

CITATION = re.compile(r"docs/math\.md((?:\s*(?:§\s*\d+(?:\.\d+)*|[-–]\s*§?\s*\d+(?:\.\d+)*|[/,]|and)\s*)+)")
NUMBER = re.compile(r"(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s", re.MULTILINE)


def _tracked_text_files():
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        paths = [ROOT / line for line in out.splitlines()]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (e.g. an sdist): walk the tree
        paths = [p for p in ROOT.rglob("*") if ".git" not in p.parts]
    return [p for p in paths if p.suffix in TEXT_SUFFIXES and p.is_file()]


def _sections():
    return set(HEADING.findall(NOTES.read_text(encoding="utf-8")))


def _citations():
    found = []
    for path in _tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in CITATION.finditer(text):
            for number in NUMBER.findall(match.group(1)):
                line = text.count("\n", 0, match.start()) + 1
                found.append((path.relative_to(ROOT).as_posix(), line, number))
    return found


def test_the_notes_exist_and_are_numbered():
    sections = _sections()
    assert NOTES.is_file()
    # the top-level sections 0..19 are cited throughout the code
    assert {str(i) for i in range(20)} <= sections


def test_the_heading_pattern_reads_numbered_headings():
    text = "## 4. The Gaussian mechanism\n### 4.2 The exact Gaussian\n#### not numbered\n"
    assert HEADING.findall(text) == ["4", "4.2"]


def test_the_citation_pattern_reads_ranges_and_lists():
    text = "see docs/math.md §13.6/§18 and docs/math.md §9-10, docs/math.md §4.3."
    numbers = [n for m in CITATION.finditer(text) for n in NUMBER.findall(m.group(1))]
    assert numbers == ["13.6", "18", "9", "10", "4.3"]


def test_there_are_citations():
    assert len(_citations()) > 50


def test_every_cited_section_exists():
    sections = _sections()
    missing = [f"{path}:{line}: §{number}" for path, line, number in _citations() if number not in sections]
    assert not missing, "citations of sections that docs/math.md does not have:\n" + "\n".join(missing)


@pytest.mark.parametrize("pattern", [r"\bMATH\.md", r"\.\./shared", r"\bshared/MATH", r"\bSTYLE\.md"])
def test_nothing_cites_files_outside_the_repository(pattern):
    regex = re.compile(pattern)
    this = Path(__file__).resolve()
    offending = []
    for path in _tracked_text_files():
        if path.resolve() == this:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in regex.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            offending.append(f"{path.relative_to(ROOT).as_posix()}:{line}")
    assert not offending, f"{pattern!r} found in:\n" + "\n".join(offending)
