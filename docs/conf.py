"""Sphinx configuration of the dpedu book: ``python docs/build.py`` (or the ``sphinx-build`` command it prints).

The book is the README (landing page), the chapter notebooks executed at build time, the mathematical
notes ``docs/math.md`` (when present), a glossary, the references and an API reference generated from the
numpydoc docstrings. Everything it loads in the browser is served from the site itself: MathJax 3 is copied
from a local npm install (``docs/_vendor``), never fetched from a CDN.

Files outside ``docs/`` are *staged* into ``docs/`` when this file is read (git-ignored copies, so Sphinx never
needs a symlink or a ``../`` path): ``chapters/NN_*.ipynb`` -> ``docs/chapters/`` and ``data/README.md`` ->
``docs/data/README.md``. A staged chapter's links are made the book's own references again
(``dpedu.course.booklinks.relink``): its API links (to the local build, in ``chapters/``) become dotted names Sphinx
resolves, its notes links ``../math.md#...``.

Environment variables:

* ``DPEDU_FAST`` (read by the chapters, ``dpedu.course.notebook.fast_mode``): the book runs the chapters in full mode,
  the one the prose describes, unless ``DPEDU_FAST=1`` asks for the fast mode's smaller grids (a quick preview;
  ``python docs/build.py --fast`` sets it).
* ``DPEDU_BOOK_EXECUTE``: ``force`` (default: every build re-runs every chapter) or ``cache`` (re-run only
  changed notebooks; outputs are *not* refreshed when only dpedu's code changed) or ``off``.
* ``DPEDU_BOOK_EDITION``: ``student`` (default: exercises as the stubs students receive, no solution anywhere in
  the site) or ``instructor`` (the reference solutions, labelled, under an "Instructor edition" banner); see
  ``docs/_ext/editions.py``. ``python docs/build.py --edition both`` builds both.
* ``DPEDU_BOOK_CACHE``: the jupyter-cache directory used when ``DPEDU_BOOK_EXECUTE=cache`` (``docs/build.py``
  gives both editions one fresh cache and runs the chapters into it before Sphinx starts, so they run once per build
  of the two).
* ``DPEDU_MATHJAX``: the directory holding MathJax 3's ``tex-chtml.js`` (default
  ``docs/_vendor/node_modules/mathjax/es5``, where ``python docs/build.py`` installs it with npm).
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from pathlib import Path

from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))          # document the working tree's dpedu, not an installed copy
sys.path.insert(0, str(DOCS / "_ext"))  # the book's own extensions: the editions, the API pages

from dpedu.course.booklinks import canonical_name  # noqa: E402  (the working tree's dpedu, just put on the path)

LOGGER = logging.getLogger("dpedu-book")
FAST_ENV_VAR = "DPEDU_FAST"            # the name dpedu.course.notebook.fast_mode reads
os.environ.setdefault(FAST_ENV_VAR, "0")
# no progress bars in the chapters' outputs: a bar is for the person waiting, and its widget would load scripts
# from a CDN (dpedu.course.notebook.progress_bar reads DPEDU_PROGRESS)
os.environ["DPEDU_PROGRESS"] = "0"
# the chapter kernels import the working tree's dpedu too
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)


# -- staging: copies of files that live outside docs/ (docs/_ext/staging.py; docs/build.py stages them too) --------

from staging import stage  # noqa: E402  (docs/_ext is on sys.path above)

stage()
HAS_MATH_NOTES = (DOCS / "math.md").is_file()


# -- project -----------------------------------------------------------------------------------------------------

project = "dpedu"
author = "the dpedu authors"
copyright = "the dpedu authors"
release = version = importlib.import_module("dpedu").__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx.ext.mathjax",
    "editions",
    # "[source]" pages of the library, in the instructor edition only: dpedu's code answers many exercises
    # (L2_clip, poisson_sample, ...), so docs/_ext/editions.py removes them from the student edition. Loaded in
    # both, so that the two editions share one build environment (the API pages are read once for both).
    "sphinx.ext.viewcode",
]
dpedu_edition = os.environ.get("DPEDU_BOOK_EDITION", "student")
templates_path = []
exclude_patterns = ["_build", "_vendor", "_ext", "_fragments", "**/.ipynb_checkpoints", "README.md"]
root_doc = "index"
# numpydoc turns a docstring's "References" section into citations that the docstring need not cite inline
suppress_warnings = ["ref.citation"]
nitpicky = False

# -- MyST and the notebooks --------------------------------------------------------------------------------------

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = os.environ.get("DPEDU_BOOK_EXECUTE", "force")
nb_execution_cache_path = os.environ.get("DPEDU_BOOK_CACHE") or str(DOCS / "_build" / f".jupyter_cache_{'fast' if os.environ[FAST_ENV_VAR] != '0' else 'full'}")
nb_execution_timeout = 900              # seconds per cell, as tests/test_notebooks.py
nb_execution_raise_on_error = True      # a failing chapter fails the build
nb_execution_show_tb = True
nb_merge_streams = True
nb_kernel_rgx_aliases = {".*": "python3"}

# -- API reference: one page per public module (docs/_ext/apipages.py) + numpydoc ------------------------------

# api/<module>.rst for every public module, from its __all__; rewritten only when its text changes, so an
# unchanged module's page is not read again by a later build that keeps its doctrees (docs/build.py does)
import apipages  # noqa: E402  (docs/_ext is on sys.path above)

apipages.write_api_pages(DOCS / "api")
autosummary_generate = False            # the pages above are the reference; autosummary only makes their tables
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"              # numpydoc's Parameters section is the reference
numpydoc_show_class_members = False     # autoclass :members: lists the members itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- HTML --------------------------------------------------------------------------------------------------------

html_theme = "furo"
html_title = f"dpedu {release}"
html_static_path = ["_static"]
html_css_files = ["book.css"]
html_favicon = "_static/favicon.svg"     # else browsers ask for /favicon.ico and log a 404
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {"navigation_with_keys": True}

MATHJAX_DIR = Path(os.environ.get("DPEDU_MATHJAX", DOCS / "_vendor" / "node_modules" / "mathjax" / "es5"))
MATHJAX_STATIC = "mathjax"              # copied to _static/mathjax/ of the built site
mathjax_path = f"{MATHJAX_STATIC}/tex-chtml.js"   # relative to _static: served by the site, no CDN
mathjax3_config = {"loader": {"load": []}, "options": {"enableMenu": False}}
# MathJax's own extra components (loaded on demand for rare TeX macros) sit next to it
_MATHJAX_PARTS = ("tex-chtml.js", "input", "output", "adaptors", "a11y", "ui", "sre")


def _copy_mathjax(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / MATHJAX_STATIC
    for part in _MATHJAX_PARTS:
        source = MATHJAX_DIR / part
        if source.is_dir():
            shutil.copytree(source, target / part, dirs_exist_ok=True)
        elif source.is_file():
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / part)


def _check_mathjax(app):
    if app.builder.format == "html" and not (MATHJAX_DIR / "tex-chtml.js").is_file():
        raise RuntimeError(
            f"MathJax 3 not found at {MATHJAX_DIR}: run `python docs/build.py` (it installs it with "
            "`npm install --prefix docs/_vendor mathjax@3.2.2`) or set DPEDU_MATHJAX to a directory "
            "holding tex-chtml.js")


# -- the math notes: in the table of contents only when docs/math.md exists --------------------------------------

def _toctree_without_missing_math(app, docname, source):
    if docname == "index" and not HAS_MATH_NOTES:
        LOGGER.info("docs/math.md not found: the book is built without the mathematical notes")
        source[0] = "\n".join(line for line in source[0].split("\n") if line.strip() != "math")


# -- links to dpedu objects by any public path (dpedu.course.booklinks.canonical_name) -----------------------------------


class CanonicalDpeduTargets(SphinxPostTransform):
    """Before the references are resolved, point ``dpedu.*`` targets at the object's documented name."""

    default_priority = 8                # before MyST's resolver (9) and Sphinx's (10)

    def run(self, **kwargs):
        objects = self.env.get_domain("py").objects
        for node in self.document.findall(addnodes.pending_xref):
            target = node.get("reftarget", "")
            if node.get("refdomain") not in (None, "", "py") or not target.startswith("dpedu"):
                continue
            if target in objects:
                continue
            name = canonical_name(target)
            if name and name != target and name in objects:
                node["reftarget"] = name


def resolve_citation_across_docstrings(app, env, node, contnode):
    """``[NTS21]_`` in a function's docstring may cite a reference listed in its module's docstring.

    numpydoc prefixes each docstring's citation labels (``R1a2b3c-NTS21``), so such a reference is looked up by
    its suffix, preferring a citation on the same page; unresolved ones still warn (and fail the build).
    """
    if node.get("refdomain") != "citation":
        return None
    target = node["reftarget"]
    citations = env.get_domain("citation").citations
    matches = [(docname, labelid) for label, (docname, labelid, _line) in citations.items()
               if label == target or label.endswith("-" + target)]
    if not matches:
        return None
    matches.sort(key=lambda match: match[0] != node.get("refdoc"))
    from sphinx.util.nodes import make_refnode
    return make_refnode(app.builder, node["refdoc"], matches[0][0], matches[0][1], contnode)


def setup(app):
    app.connect("missing-reference", resolve_citation_across_docstrings)
    app.connect("builder-inited", _check_mathjax)
    app.connect("source-read", _toctree_without_missing_math)
    app.connect("build-finished", _copy_mathjax)
    app.add_post_transform(CanonicalDpeduTargets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
