"""The API reference's pages: one page per public module of dpedu, written from the modules' ``__all__``.

Each module whose dotted name has no part starting with ``_`` gets ``api/<module>.rst``: the module's
docstring, a summary table of the functions and classes it defines and exports (its ``__all__``), each of
them documented in full below it, the names it re-exports from other modules (as links to where they are
documented), and a list of links to its submodules' pages. A new module (``dpedu.ground``, ...) appears with no
edit here.

Only the package's page (``api/dpedu``) sits in the book's table of contents; the other module pages are
``:orphan:`` and reached through those lists of links, so the sidebar stays short. (A toctree holding every module
page made the theme lay out a 150-entry navigation tree on every page of the book: two thirds of the time Sphinx
spent writing each edition.)

Pages are rewritten only when their text changes and pages of modules that no longer exist are removed, so
Sphinx re-reads an API page only when its module's code or its page changed (autodoc records each module's
file as a dependency of its page).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path


def public_modules(package="dpedu"):
    """The dotted names of ``package`` and of its public submodules (no ``_`` part, no ``__main__``), sorted."""
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return sorted(names)


def _exports(module):
    """``(own, elsewhere)``: the functions and classes ``module`` exports, split by where they are defined."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name in vars(module) if not name.startswith("_")]
    own, elsewhere = [], []
    for name in names:
        obj = getattr(module, name, None)
        if obj is None and hasattr(module, "__getattr__"):
            continue
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue                              # modules get their own page; constants are described in prose
        target = own if getattr(obj, "__module__", None) == module.__name__ else elsewhere
        target.append((name, obj))
    return own, elsewhere


def _title(text):
    return f"{text}\n{'=' * len(text)}\n"


def module_page(name, modules):
    """The reStructuredText of the API page of module ``name`` (``modules``: all documented module names)."""
    module = importlib.import_module(name)
    own, elsewhere = _exports(module)
    lines = ([] if name == "dpedu" else [":orphan:", ""]) + \
        [_title(name), f".. automodule:: {name}", "", f".. currentmodule:: {name}", ""]
    if own:
        lines += [".. rubric:: Contents", "", ".. autosummary::", "   :nosignatures:", ""]
        lines += [f"   {item}" for item, _ in own] + [""]
    elsewhere = [(item, obj) for item, obj in elsewhere if obj.__module__ in modules]
    if elsewhere:
        links = ", ".join(f":py:obj:`{item} <{obj.__module__}.{obj.__qualname__}>`" for item, obj in elsewhere)
        lines += [f"Also exported here: {links}.", ""]
    for item, obj in own:
        # a class is documented by its docstring (numpydoc: Parameters, Attributes, Methods), as each object's
        # own page did before; its inherited scikit-learn methods are scikit-learn's to document
        kind = "exception" if inspect.isclass(obj) and issubclass(obj, BaseException) else \
            "class" if inspect.isclass(obj) else "function"
        lines += [f".. auto{kind}:: {item}", ""]
    children = [other for other in modules if other.rpartition(".")[0] == name]
    if children:
        lines += [".. rubric:: Modules", ""]
        lines += [f"* :doc:`{child}`" for child in children] + [""]
    return "\n".join(lines)


def write_api_pages(directory, package="dpedu"):
    """Write ``directory/<module>.rst`` for every public module; returns the number of pages written afresh."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    modules = public_modules(package)
    wanted = {directory / f"{name}.rst": module_page(name, modules) for name in modules}
    for stale in set(directory.iterdir()) - set(wanted):
        if stale.is_file():
            stale.unlink()
    written = 0
    for path, text in wanted.items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written += 1
    return written
