r"""The instructor's kit: an nbgrader course made from the chapters, ready to grade.

Every exercise cell of a chapter carries nbgrader metadata (a solution cell, then a locked check cell
worth one point), so the chapters are nbgrader *source* notebooks as they stand. :func:`make_course`
lays them out the way nbgrader expects and writes a configuration that makes grading work for these
chapters:

* the chapters run in **fast mode** (``DPEDU_FAST=1``: smaller grids and fewer seeds, the same code),
  so every cell finishes well inside the cell timeout;
* the cell timeout is raised from nbgrader's 30 s to ``timeout`` seconds (default 600), since a full
  chapter cell can take a minute on a slow machine;
* dpedu and its Adult data come from the installed package (the data ship inside it), so the grader
  needs nothing else;
* the feedback pages (``nbgrader generate_feedback``) use ``templates/feedback/dpedu_feedback.html.j2``,
  which names each check in the contents ("Exercise 2.1 check", not nbgrader's "Test cell"), wraps long
  check messages at the page's edge, and typesets formulas with MathJax 3 *inlined in the page*
  (``templates/feedback/dpedu_mathjax.js.j2``: its SVG build, which needs no font files), so a feedback
  page is one self-contained file: sent by email and opened on a machine with neither dpedu nor MathJax,
  it shows its formulas typeset, loads nothing and points at no file of the grading machine;
* every assignment carries ``reference/`` (:func:`dpedu.course.reference.write_reference`: the notes and the API
  pages its links point to), which nbgrader releases with the notebook; its feedback pages carry the linked
  sections inside them (:mod:`dpedu.course.feedback`, given to nbgrader's HTML exporter by the configuration);
* the kit holds no absolute path: ``nbgrader_config.py`` finds the course from its own location, so the folder
  can be moved, copied to another machine or put under version control;
* the assignments hold no listing of dpedu's code: the chapters' ``show_source(...)`` cells ("compare with
  dpedu's version", which would print the implementation an exercise asks for under every failed check of
  the feedback) become a one-line note in the course's source notebooks (:func:`course_notebook`), so they
  are neither released nor executed by autograde.

The layout (``course/`` is the directory you choose)::

    course/nbgrader_config.py
    course/templates/feedback/dpedu_feedback.html.j2  (the feedback page, extending nbgrader's)
    course/templates/feedback/dpedu_mathjax.js.j2     (MathJax 3, inlined in every feedback page)
    course/source/01_logistic_regression/01_logistic_regression.ipynb
    course/source/01_logistic_regression/reference/  (the notes and API pages the notebook links to)
    ...
    course/submitted/<student>/<assignment>/<notebook>.ipynb      (collected submissions go here)

Then, from ``course/``: ``nbgrader generate_assignment 01_logistic_regression`` (the student version in
``release/``), collect submissions into ``submitted/``, ``nbgrader autograde 01_logistic_regression``,
``nbgrader generate_feedback 01_logistic_regression``. :func:`generate`, :func:`autograde` and
:func:`feedback` do the same from Python.

**What students can see.** The checks live in :mod:`dpedu.course.checks`, which students have installed: a
determined student can read how an answer is checked, and the reference solutions of the chapters in the
repository. The checks compute their expected values from their own data and seeds at run time (not from
stored answers), but they cannot hide the method. An instructor who needs secret tests adds them to the
*source* check cells between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``: nbgrader removes them
from the released notebooks and restores them when it autogrades, and gives students the chapters from
``release/`` rather than the repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from .booklinks import relink
from .reference import REPOSITORY, chapter_paths, write_reference
from .reference import course_dir as shipped_dir      # make_course's argument course_dir is the kit's folder
from ..ground.validation import check_positive

__all__ = ["chapter_names", "default_mathjax", "feedback_template", "mathjax_include", "course_notebook",
           "make_course", "generate", "autograde", "feedback", "score", "copy_submission"]

CONFIG_TEMPLATE = '''\
"""nbgrader configuration for the dpedu course (written by dpedu.course.instructor.make_course).

Every path is found from this file's own folder, so the course can be moved or copied elsewhere.
"""
import os

# The chapters run in fast mode when graded: the same code on smaller grids, so every cell fits the timeout.
os.environ.setdefault("DPEDU_FAST", "1")
HERE = os.path.dirname(os.path.abspath(__file__))

c = get_config()  # noqa: F821 (provided by nbgrader)
c.CourseDirectory.root = HERE
c.CourseDirectory.course_id = {course_id!r}
# nbgrader's default is 30 s per cell; a chapter's experiment cell can need more on a slow machine.
c.ExecutePreprocessor.timeout = {timeout!r}
c.Exchange.root = os.path.join(HERE, "exchange")
# Feedback pages: dpedu's template (exercise names, wrapped messages, MathJax inlined) extends nbgrader's own.
import nbgrader  # noqa: E402
# nbgrader's template (named "feedback"), from dpedu's file, which extends it.
c.HTMLExporter.template_name = "feedback"
c.HTMLExporter.template_file = "dpedu_feedback.html.j2"
c.HTMLExporter.extra_template_basedirs = [
    os.path.join(HERE, "templates"),
    os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates"),
]
# The notes and API entries the notebook links to, carried inside each feedback page (its links point there).
c.HTMLExporter.preprocessors = ["dpedu.course.feedback.ReferenceAppendix"]
'''

# nbgrader's feedback template loads MathJax 2 from a CDN and lists every check as "Test cell"; this one replaces
# the CDN script by MathJax 3 inlined (configured for $...$ as the notebooks write math), names each check after
# its exercise (grade_id check-2-1 -> "Exercise 2.1 check", comments -> "Exercise 2.1: comment"), and wraps long
# outputs.
FEEDBACK_TEMPLATE = r'''{%- extends 'index.html.j2' -%}

{%- block header -%}
{%- set page = super() -%}
{%- if MATHJAX_INLINE -%}
{%- set script -%}{{ MATHJAX_CONFIG }}<script>{% include 'dpedu_mathjax.js.j2' %}</script>{%- endset -%}
{%- set page = page | replace(MATHJAX_CDN, script) -%}
{%- endif -%}
{{ page | replace('</head>', STYLE ~ '</head>') }}
{%- endblock header -%}

{% block body %}
{%- set ns = namespace(page=super()) -%}
{%- for cell in nb.cells if cell.metadata.nbgrader -%}
{%- set gid = cell.metadata.nbgrader.grade_id -%}
{%- if cell.metadata.nbgrader.grade and gid.startswith('check-') -%}
{%- set name = 'Exercise ' ~ (gid[6:] | replace('-', '.')) ~ ' check' -%}
{%- set ns.page = ns.page
    | replace('<a href="#' ~ gid ~ '">Test cell</a>', '<a href="#' ~ gid ~ '">' ~ name ~ '</a>')
    | replace('Grade cell: <code>' ~ gid ~ '</code>', name ~ ' <code>' ~ gid ~ '</code>') -%}
{%- endif -%}
{%- if cell.metadata.nbgrader.solution and gid.startswith('exercise-') -%}
{%- set name = 'Exercise ' ~ (gid[9:] | replace('-', '.')) ~ ': comment' -%}
{%- set ns.page = ns.page
    | replace('<a href="#comment-' ~ gid ~ '">Comment</a>', '<a href="#comment-' ~ gid ~ '">' ~ name ~ '</a>') -%}
{%- endif -%}
{%- endfor -%}
{{ ns.page }}
{%- endblock body %}
'''
# the script tag nbgrader's template writes (nbconvert's mathjax() macro with its default URL), and what replaces it
MATHJAX_CDN = ('<script src="https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js'
               '?config=TeX-AMS_CHTML-full,Safe"> </script>')
# SVG output: the glyphs are drawn as paths, so the inlined script needs no font file beside it; "-full": every
# TeX extension is in the file, so nothing is loaded on demand from a path the page would not have
MATHJAX_FILE = "tex-svg-full.js"
MATHJAX_CONFIG = ('<script>window.MathJax = {tex: {inlineMath: {"[+]": [["$", "$"]]}, processEscapes: true}, '
                  'svg: {fontCache: "global"}, loader: {load: []}, options: {enableMenu: false}};</script>')
FEEDBACK_STYLE = """<style>
/* dpedu: long check messages and outputs wrap at the box's edge instead of running past it */
div.output_area pre, div.output_subarea pre, div.output_text pre, div.input_area pre {
  white-space: pre-wrap; overflow-wrap: anywhere; word-break: normal;
}
div.output_subarea { max-width: 100%; overflow-x: visible; }
</style>
"""


def default_mathjax():
    """MathJax 3's ``tex-svg-full.js`` for the feedback pages: in ``$DPEDU_MATHJAX`` or the book's npm copy, or None."""
    candidates = [os.environ.get("DPEDU_MATHJAX"), REPOSITORY / "docs" / "_vendor" / "node_modules" / "mathjax" / "es5"]
    for directory in candidates:
        if directory and (Path(directory) / MATHJAX_FILE).is_file():
            return Path(directory).resolve() / MATHJAX_FILE
    return None


def mathjax_include(mathjax):
    """The template file that inlines the MathJax script ``mathjax`` (its text, escaped for an HTML ``<script>``).

    The script goes between ``{% raw %}`` and ``{% endraw %}``, so Jinja copies it as it is; ``<!--`` is written
    ``<\\!--`` (the same string or pattern in JavaScript) so that the HTML parser never reads a comment in it.

    Raises
    ------
    ValueError
        When ``mathjax`` is not a MathJax file that can be inlined.
    """
    if not isinstance(mathjax, (str, os.PathLike)) or not Path(mathjax).is_file():
        raise ValueError(f"mathjax must be the path of MathJax 3's {MATHJAX_FILE}, or None; got {mathjax!r}")
    text = Path(mathjax).read_text(encoding="utf-8")
    if "MathJax" not in text or re.search(r"</script|\{%-?\s*endraw", text, re.IGNORECASE):
        raise ValueError(f"mathjax must be MathJax 3's {MATHJAX_FILE} (a script that can be inlined); got {mathjax!r}")
    return "{% raw %}" + text.replace("<!--", "<\\!--") + "{% endraw %}"


def feedback_template(mathjax=None):
    """The text of the feedback template: MathJax inlined when ``mathjax`` (a path) is given, else nbgrader's CDN."""
    header = "".join(f"{{%- set {name} = {value!r} -%}}\n" for name, value in
                     (("MATHJAX_CDN", MATHJAX_CDN), ("MATHJAX_INLINE", mathjax is not None),
                      ("MATHJAX_CONFIG", MATHJAX_CONFIG), ("STYLE", FEEDBACK_STYLE)))
    return header + FEEDBACK_TEMPLATE


_LISTING = re.compile(r"^\s*show_source\((?P<what>[^()]*)\)\s*(#.*)?$")
LISTING_NOTE = ("*The book shows dpedu's own `{what}` here; the graded assignment leaves dpedu's listings out "
                "(compare your solution with it after the course).*")


def course_notebook(nb):
    """A chapter (a notebook dict, as ``json.load`` reads it) without its listings of dpedu's code.

    Each code cell made only of ``show_source(...)`` calls becomes a markdown note naming what the book shows
    there; a ``show_source(...)`` line in a cell with other code is removed from it. The notebook passed in is
    not changed.

    >>> nb = {"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": "show_source(dp.L2_clip)",
    ...                  "outputs": [], "execution_count": None}]}
    >>> course_notebook(nb)["cells"][0]["cell_type"], nb["cells"][0]["cell_type"]
    ('markdown', 'code')
    """
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise TypeError(f"nb must be a notebook (a dict with a list of cells); got {type(nb).__name__}")
    out = json.loads(json.dumps(nb))
    for index, cell in enumerate(out["cells"]):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        lines = ("".join(source) if isinstance(source, list) else source).split("\n")
        listed = [match["what"].strip() for match in map(_LISTING.match, lines) if match]
        if not listed:
            continue
        kept = [line for line in lines if not _LISTING.match(line)]
        if any(line.strip() and not line.strip().startswith("#") for line in kept):
            cell["source"] = "\n".join(kept)
            continue
        note = " ".join(LISTING_NOTE.format(what=what) for what in listed)
        out["cells"][index] = {"cell_type": "markdown", "id": cell.get("id", f"listing-{index}"),
                               "metadata": {}, "source": note}
    return out


def chapter_names(chapters_dir=None):
    """The chapter notebooks' names (``01_logistic_regression``, ...), in order.

    Parameters
    ----------
    chapters_dir : str or Path, optional
        Where the chapter notebooks are (default: the chapters that ship with dpedu, or the repository's
        ``chapters/`` in a clone: :func:`dpedu.course.reference.course_dir`).
    """
    return [path.stem for path in chapter_paths(chapters_dir)]


def make_course(course_dir, *, chapters=None, chapters_dir=None, course_id="dpedu", timeout=600, force=False,
                mathjax="default"):
    """Lay out an nbgrader course with one assignment per chapter and write its configuration.

    Parameters
    ----------
    course_dir : str or Path
        The course directory to create (or to update, with ``force``).
    chapters : list of str, optional
        Chapter names to include (default: all, see :func:`chapter_names`).
    chapters_dir : str or Path, optional
        Where the chapter notebooks are (default: those that ship with dpedu, or the repository's ``chapters/``).
    course_id : str
        nbgrader's course id.
    timeout : float
        Cell timeout in seconds for autograding, > 0.
    force : bool
        Overwrite an existing configuration and source notebooks. Without it, a course directory that
        already has a different ``nbgrader_config.py`` or source notebook is refused (nothing is written).
    mathjax : str, Path or None
        MathJax 3's ``tex-svg-full.js``, inlined in every feedback page (:func:`mathjax_include`).
        ``"default"``: :func:`default_mathjax` (``$DPEDU_MATHJAX`` or the copy ``python docs/build.py``
        installs); ``None``: nbgrader's CDN script (the pages then need the network for their formulas).

    Returns
    -------
    Path
        The course directory.
    """
    if not isinstance(course_dir, (str, os.PathLike)) or not str(course_dir):
        raise TypeError(f"course_dir must be a non-empty path; got {course_dir!r}")
    if not isinstance(course_id, str) or not course_id.isidentifier():
        raise ValueError(f"course_id must be a simple name (letters, digits, _); got {course_id!r}")
    timeout = check_positive(timeout, "timeout")
    if not isinstance(force, bool):
        raise TypeError(f"force must be True or False; got {force!r}")
    if isinstance(mathjax, str) and mathjax == "default":
        mathjax = default_mathjax()
    include = None if mathjax is None else mathjax_include(mathjax)
    source_dir = shipped_dir("chapters") if chapters_dir is None else Path(chapters_dir)
    available = chapter_names(source_dir)
    if chapters is None:
        chapters = available
    if isinstance(chapters, str) or not all(isinstance(name, str) for name in chapters):
        raise TypeError(f"chapters must be a list of chapter names; got {chapters!r}")
    unknown = [name for name in chapters if name not in available]
    if unknown or not chapters:
        raise ValueError(f"chapters must be names among {available}; got {list(chapters)!r}")

    root = Path(course_dir).resolve()
    config = CONFIG_TEMPLATE.format(course_id=course_id, timeout=float(timeout))
    writes = {root / "nbgrader_config.py": config.encode(),
              root / "templates" / "feedback" / "dpedu_feedback.html.j2": feedback_template(mathjax).encode()}
    if include is not None:
        writes[root / "templates" / "feedback" / "dpedu_mathjax.js.j2"] = include.encode()
    for name in chapters:
        # the chapter's links point into reference/ beside it (dpedu.course.booklinks), written below
        nb = relink(course_notebook(json.loads((source_dir / f"{name}.ipynb").read_text(encoding="utf-8"))))
        writes[root / "source" / name / f"{name}.ipynb"] = (json.dumps(nb, indent=1, ensure_ascii=False) +
                                                             "\n").encode()
    clashes = [path for path, data in writes.items() if path.exists() and path.read_bytes() != data]
    if clashes and not force:
        raise FileExistsError(f"{len(clashes)} file(s) in {root} differ from what make_course would write "
                              f"(e.g. {clashes[0]}); pass force=True to overwrite them")
    for path, data in writes.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for name in chapters:
        write_reference(root / "source" / name)
    (root / "exchange").mkdir(exist_ok=True)
    return root


def _api(course_dir):
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    root = Path(course_dir).resolve()
    config_file = root / "nbgrader_config.py"
    if not config_file.is_file():
        raise FileNotFoundError(f"{config_file} not found: make the course with dpedu.course.instructor.make_course first")
    config = Config()
    config.merge(PyFileConfigLoader(config_file.name, path=str(root)).load_config())
    return NbGraderAPI(config=config)


def _checked(result, what):
    if not result.get("success"):
        raise RuntimeError(f"nbgrader {what} failed:\n{result.get('error') or result.get('log')}")
    return result


def generate(course_dir, assignment):
    """``nbgrader generate_assignment``: the student version of ``assignment`` in ``release/``."""
    return _checked(_api(course_dir).generate_assignment(assignment), f"generate_assignment {assignment}")


def autograde(course_dir, assignment, student):
    """``nbgrader autograde`` of one student's submission (in ``submitted/<student>/<assignment>/``)."""
    return _checked(_api(course_dir).autograde(assignment, student, create=True), f"autograde {assignment}")


def feedback(course_dir, assignment, student):
    """``nbgrader generate_feedback``: HTML feedback in ``feedback/<student>/<assignment>/``."""
    return _checked(_api(course_dir).generate_feedback(assignment, student), f"generate_feedback {assignment}")


def score(course_dir, assignment, student):
    """``(score, max_score)`` of an autograded submission."""
    submission = _api(course_dir).get_submission(assignment, student)
    return submission["score"], submission["max_score"]


def copy_submission(course_dir, assignment, student, notebook):
    """Put ``notebook`` (a path) where nbgrader looks for ``student``'s submission of ``assignment``."""
    target = Path(course_dir).resolve() / "submitted" / student / assignment
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(notebook, target / f"{assignment}.ipynb")
    (target / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
    return target

