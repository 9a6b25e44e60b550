"""Every third-party module the project imports is declared where a fresh machine installs it from.

A module that happens to be installed on the developer's machine, but that neither ``pyproject.toml`` (what
``pip install dpedu`` brings) nor ``requirements.txt`` (the README's set-up command) names, works here and
breaks for a new user: this test reads every import statement and checks the declarations.
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
tomllib = pytest.importorskip("tomllib")  # Python 3.11+

# dpedu modules that import the course kit's packages (nbgrader and friends) only when an instructor calls them;
# those packages are in requirements.txt, not in the package's own dependencies
COURSE_KIT = {"dpedu/course/instructor.py", "dpedu/course/exercises.py", "dpedu/course/feedback.py"}


def _name(requirement):
    """The distribution name of a requirement line, normalised (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)).lower()


def _package_dependencies():
    with open(ROOT / "pyproject.toml", "rb") as f:
        return {_name(r) for r in tomllib.load(f)["project"]["dependencies"]}


def _extras(names):
    """The distributions the package's extras ``names`` bring (pyproject's optional-dependencies; an extra may
    name others as ``dpedu[...]``)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        optional = tomllib.load(f)["project"]["optional-dependencies"]
    found, todo = set(), list(names)
    while todo:
        for requirement in optional[todo.pop()]:
            inner = re.fullmatch(r"\s*dpedu\[([\w,\s-]+)\]\s*", requirement)
            if inner:
                todo += [n.strip() for n in inner.group(1).split(",")]
            else:
                found.add(_name(requirement))
    return found


def _requirements():
    """What ``pip install -r requirements.txt`` installs: its named requirements, and the package's dependencies
    and extras for an ``-e .[extra,...]`` line."""
    declared = set()
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.strip()
        own = re.fullmatch(r"-e\s+\.(?:\[([\w,\s-]+)\])?", line)
        if own:
            declared |= _package_dependencies() | _extras([n.strip() for n in (own.group(1) or "").split(",") if n.strip()])
        elif line and not line.startswith(("#", "-")):
            declared.add(_name(line))
    return declared


def _third_party_imports(paths):
    """{top-level module: [files]} for absolute imports of modules outside the standard library and dpedu."""
    found = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("dpedu", "conftest") and top not in OWN_TESTS:
                    found.setdefault(top, []).append(path.relative_to(ROOT).as_posix())
    return found


# a test may import a sibling test module (pytest puts tests/ on the path): the project's own code, no package
OWN_TESTS = {path.stem for path in (ROOT / "tests").glob("test_*.py")}
# and the book's configuration imports its own extensions from docs/_ext
OWN_TESTS |= {path.stem for path in (ROOT / "docs" / "_ext").glob("*.py")}


def _distributions(module):
    return {_name(d) for d in metadata.packages_distributions().get(module, [module])}


def test_the_package_declares_what_it_imports():
    declared = _package_dependencies()
    paths = [p for p in (ROOT / "dpedu").rglob("*.py") if p.relative_to(ROOT).as_posix() not in COURSE_KIT]
    undeclared = {m: files for m, files in _third_party_imports(paths).items() if not _distributions(m) & declared}
    assert not undeclared, f"imported by dpedu but not in pyproject.toml's dependencies: {undeclared}"


def test_the_readme_set_up_installs_what_the_project_imports():
    declared = _package_dependencies() | _requirements()
    paths = [*(ROOT / "dpedu").rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "chapters").rglob("*.py"),
             *(ROOT / "docs").glob("*.py")]
    imports = _third_party_imports(paths)
    # installed with a declared package, not on their own: nbgrader brings traitlets, jupyter the IPython kernel
    # and myst-nb the MyST parser (tests/test_booklinks.py checks the notes' anchors against it)
    brought = {"traitlets": "nbgrader", "IPython": "ipykernel", "myst_parser": "myst-nb", "markdown_it": "myst-nb"}
    undeclared = {m: files for m, files in imports.items()
                  if not _distributions(m) & declared and brought.get(m) not in declared}
    assert not undeclared, f"imported but not installed by requirements.txt: {undeclared}"
    assert "tqdm" in imports and "dask" in imports          # the check sees the imports it is about
