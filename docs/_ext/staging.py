"""Staging: copies, inside docs/, of the files the book shows that live outside it (Sphinx reads only docs/).

``chapters/NN_*.ipynb`` -> ``docs/chapters/`` with their links rewritten for the book, ``data/README.md`` ->
``docs/data/``. ``docs/conf.py`` stages when Sphinx starts; ``docs/build.py`` stages first, so that it can run the
staged chapters into the jupyter-cache before Sphinx reads them.
"""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
STAGED_CHAPTERS = DOCS / "chapters"


def _stage_file(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` unless identical (an unchanged copy keeps its mtime for incremental builds)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists() or not filecmp.cmp(source, target, shallow=False):
        shutil.copy2(source, target)


def stage():
    """Stage the chapters and the data README; returns the staged chapter notebooks, in order."""
    from dpedu.course.booklinks import relink     # the working tree's dpedu (conf.py and build.py put it on the path)

    sources = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    for old in STAGED_CHAPTERS.glob("*.ipynb"):             # a chapter renamed or removed upstream
        if not (ROOT / "chapters" / old.name).exists():
            old.unlink()
    staged = []
    for source in sources:
        # chapters/ links the reference folder beside each notebook (booklinks); in the book the same links are
        # references Sphinx resolves: dotted names, and ../math.md from docs/chapters/
        text = json.dumps(relink(json.loads(source.read_text(encoding="utf-8")), to="book"), indent=1,
                          ensure_ascii=False) + "\n"
        target = STAGED_CHAPTERS / source.name
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        staged.append(target)
    _stage_file(ROOT / "data" / "README.md", DOCS / "data" / "README.md")
    return staged
