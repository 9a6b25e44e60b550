"""Build hook: a wheel of dpedu carries the course's chapters and notes (everything else is in pyproject.toml).

The chapter notebooks (``chapters/NN_*.ipynb``) and the pages of the book they link to (``docs/math.md``, its
figures in ``docs/_static/notes/``, and any other ``docs/<page>.md`` a chapter links) live outside the package in
the repository. When a wheel is built they are copied into it as ``dpedu/course/_shipped/chapters/`` and
``dpedu/course/_shipped/docs/``, where ``dpedu.course.reference.course_dir`` finds them after ``pip install
dpedu``: ``python -m dpedu chapters`` and ``python -m dpedu course-kit`` then work without a clone. An editable
install reads them from the repository itself, so nothing is copied for it. ``MANIFEST.in`` puts the same files
in a source distribution, so a wheel built from it carries them too.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SHIPPED = Path("dpedu") / "course" / "_shipped"


def course_files():
    """``{path inside _shipped: source path}``: the chapters, the notes and their figures, and linked doc pages."""
    chapters = sorted((HERE / "chapters").glob("[0-9][0-9]_*.ipynb"))
    pages = {"math"} | {page for path in chapters
                        for page in re.findall(r"\]\((?:reference|\.\./docs)/([\w-]+)\.md", path.read_text("utf-8"))}
    files = {Path("chapters") / path.name: path for path in chapters}
    files.update({Path("docs") / f"{page}.md": HERE / "docs" / f"{page}.md" for page in sorted(pages)})
    files.update({Path("docs") / "_static" / "notes" / p.name: p
                  for p in sorted((HERE / "docs" / "_static" / "notes").glob("*.png"))})
    return files


class BuildWithCourse(build_py):
    """``build_py`` that also copies the course's chapters and notes into the built package."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return                              # an editable install reads chapters/ and docs/ in place
        files = course_files()
        if not any(name.parts[0] == "chapters" for name in files):
            raise SystemExit("setup.py: no chapters/NN_*.ipynb beside setup.py; a wheel of dpedu carries the course")
        for name, source in files.items():
            target = Path(self.build_lib) / SHIPPED / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


setup(cmdclass={"build_py": BuildWithCourse})
