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
COURSE_KIT = {"dpedu/instructor.py", "dpedu/exercises.py"}


def _name(requirement):
    """The distribution name of a requirement line, normalised (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)).lower()


def _package_dependencies():
    with open(ROOT / "pyproject.toml", "rb") as f:
        return {_name(r) for r in tomllib.load(f)["project"]["dependencies"]}


def _requirements():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return {_name(line) for line in lines if line.strip() and not line.lstrip().startswith(("#", "-"))}


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
    brought = {"traitlets": "nbgrader", "IPython": "ipykernel"}
    undeclared = {m: files for m, files in imports.items()
                  if not _distributions(m) & declared and brought.get(m) not in declared}
    assert not undeclared, f"imported but not installed by requirements.txt: {undeclared}"
    assert "tqdm" in imports and "dask" in imports          # the check sees the imports it is about
