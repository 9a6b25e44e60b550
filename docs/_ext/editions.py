"""The book's two editions, and figures that open at full size.

``DPEDU_BOOK_EDITION`` (set by ``python docs/build.py --edition ...``) chooses the edition:

* ``student`` (the default): every exercise cell shows the stub students receive, made by the same code as
  ``python -m dpedu strip-solutions`` (:func:`dpedu.course.exercises.student_notebook`); the outputs of exercise and
  check cells are dropped, and so are those of any ``show_source`` cell after the chapter's first exercise
  (the "compare with dpedu's version" reveals). The ``_sources/`` copies of the chapters are the student
  notebooks themselves (outputs cleared, as students get them).
* ``instructor``: the reference solutions are shown, without their nbgrader markers
  (:func:`dpedu.course.exercises.without_markers`), each labelled "Reference solution - Exercise N.M" in a
  marked box, and every page carries the banner "Instructor edition - contains the reference solutions".

The two editions share one build environment (``docs/build.py`` gives both the same doctree directory): the
API pages are read once, by the first edition built, and each edition re-reads only the chapters, which every
build reads again (their cells run against the current code, and their exercise cells differ by edition).
``sphinx.ext.viewcode`` is loaded in both; the student edition removes its "[source]" links and writes none of
its ``_modules/`` pages.

Every figure of a page (an ``<img>`` not already inside a link) is wrapped in a link to the image file itself,
so a click opens it at full size.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

EDITIONS = ("student", "instructor")
SOLUTION_CLASS = "dpedu-solution"
LABEL_CLASS = "dpedu-solution-label"
FIGURE_LINK_CLASS = "dpedu-figure-link"
REVEAL_CLASS = "dpedu-reveal-note"
REVEAL_NOTE = "Run this cell once your own solution passes its check, to compare it with dpedu's version."
BANNER = ("<strong>Instructor edition</strong> &mdash; contains the reference solutions of every exercise. "
          "Give students the student edition.")


def _exercise_label(metadata):
    grade_id = metadata.get("nbgrader", {}).get("grade_id", "")
    match = re.fullmatch(r"exercise-(\d+)-(\d+)", grade_id)
    return f"Exercise {match[1]}.{match[2]}" if match else "Exercise"


def _student_cells(path):
    """The cells of the student version of the notebook at ``path`` (dpedu.course.exercises.student_notebook)."""
    import nbformat

    from dpedu.course.exercises import student_notebook

    return student_notebook(nbformat.read(str(path), as_version=4)).cells


def _code_cells(doctree):
    for node in doctree.findall(nodes.container):
        if node.get("nb_element") == "cell_code":
            yield node


def _part(cell, element):
    return next((child for child in cell.children if isinstance(child, nodes.Element)
                 and child.get("nb_element") == element), None)


def _is_reveal(source):
    return re.search(r"(^|\W)show_source\(", source) is not None


def _edit_chapter(app, doctree):
    """doctree-read: stub (student) or label (instructor) the exercise cells of a notebook page."""
    path = Path(app.env.doc2path(app.env.docname))
    if path.suffix != ".ipynb":
        return
    edition = app.config.dpedu_edition
    student = _student_cells(path) if edition == "student" else None
    after_first_exercise = False
    for cell in list(_code_cells(doctree)):
        metadata = cell.get("cell_metadata", {})
        nbgrader = metadata.get("nbgrader", {})
        source_part = _part(cell, "cell_code_source")
        block = next(iter(source_part.findall(nodes.literal_block)), None) if source_part is not None else None
        source = block.astext() if block is not None else ""
        is_solution = bool(nbgrader.get("solution")) or "### BEGIN SOLUTION" in source
        is_reveal = after_first_exercise and (_is_reveal(source) or "reveal" in metadata.get("tags", []))
        after_first_exercise = after_first_exercise or bool(nbgrader.get("solution"))
        if edition == "instructor":
            if is_solution:
                from dpedu.course.exercises import without_markers

                shown = without_markers(source)           # the nbgrader markers are for the tools
                if block is not None and shown != source:
                    block.children = [nodes.Text(shown)]
                    block.rawsource = shown
                cell["classes"].append(SOLUTION_CLASS)
                label = nodes.paragraph("", "", classes=[LABEL_CLASS])
                label += nodes.strong("", f"Reference solution \N{EN DASH} {_exercise_label(metadata)}")
                label += nodes.Text(" (instructor edition: students see a stub here)")
                cell.insert(0, label)
            continue
        stub = student[cell["cell_index"]].source
        if block is not None and stub != source:
            block.children = [nodes.Text(stub)]
            block.rawsource = stub
        if is_solution or nbgrader.get("grade") or is_reveal:
            output = _part(cell, "cell_code_output")
            if output is not None:
                cell.remove(output)
            if is_reveal:
                cell += nodes.paragraph("", REVEAL_NOTE, classes=[REVEAL_CLASS])


def _student_sources(app, exception):
    """build-finished: the student edition's _sources/ copy of each chapter is the student notebook."""
    if exception is not None or app.config.dpedu_edition != "student" or app.builder.format != "html":
        return
    import nbformat

    from dpedu.course.exercises import student_notebook

    for copy in Path(app.outdir, "_sources").rglob("*.ipynb*"):
        nb = nbformat.reads(copy.read_text(encoding="utf-8"), as_version=4)
        copy.write_text(nbformat.writes(student_notebook(nb)) + "\n", encoding="utf-8")


_IMG = re.compile(r"<img\b[^>]*?\bsrc=\"([^\"]+)\"[^>]*>")
_LINK = re.compile(r"<a\b[^>]*>.*?</a>", re.S)


def link_images(body):
    """Wrap every ``<img>`` of ``body`` that is not inside a link in ``<a href="its src">``.

    >>> link_images('<p><img alt="f" src="f.png" /></p>')  # doctest: +ELLIPSIS
    '<p><a class="dpedu-figure-link" href="f.png" title="open the figure at full size"><img ... /></a></p>'
    >>> link_images('<a href="x"><img src="y.png" /></a>')
    '<a href="x"><img src="y.png" /></a>'
    """
    linked = [match.span() for match in _LINK.finditer(body)]

    def wrap(match):
        if any(start <= match.start() < end for start, end in linked):
            return match[0]
        return (f'<a class="{FIGURE_LINK_CLASS}" href="{match[1]}" title="open the figure at full size">'
                f"{match[0]}</a>")

    return _IMG.sub(wrap, body)


def _page_context(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = link_images(context["body"])


def _configure(app, config):
    if config.dpedu_edition not in EDITIONS:
        raise ValueError(f"DPEDU_BOOK_EDITION must be one of {EDITIONS}; got {config.dpedu_edition!r}")
    options = dict(config.html_theme_options or {})
    if config.dpedu_edition == "instructor":
        options["announcement"] = BANNER
    config.html_theme_options = options
    config.html_title = f"{config.html_title} ({config.dpedu_edition} edition)"


class _NoSourceLinks(SphinxPostTransform):
    """Student edition: remove viewcode's "[source]" anchors before viewcode turns them into links."""

    default_priority = 99               # viewcode's own transform runs at 100

    def run(self, **kwargs):
        if self.config.dpedu_edition != "student":
            return
        from sphinx.ext.viewcode import viewcode_anchor

        for node in list(self.document.findall(viewcode_anchor)):
            node.parent.remove(node)


def _chapters_always_read(app, env, added, changed, removed):
    """env-get-outdated: the chapter notebooks are read again by every build (and by each edition)."""
    return [doc for doc in env.found_docs if Path(env.doc2path(doc)).suffix == ".ipynb"
            and doc not in added and doc not in changed]


def _no_source_pages(app):
    """builder-inited, student edition: disconnect viewcode's writer of the ``_modules/`` pages."""
    if app.config.dpedu_edition != "student":
        return
    from sphinx.ext import viewcode

    for listener in list(app.events.listeners.get("html-collect-pages", [])):
        if listener.handler is viewcode.collect_pages:
            app.disconnect(listener.id)


def setup(app):
    # "" (not "env"): switching the edition keeps the build environment; the chapters are re-read anyway
    app.add_config_value("dpedu_edition", "student", "")
    app.add_post_transform(_NoSourceLinks)
    app.connect("env-get-outdated", _chapters_always_read)
    app.connect("builder-inited", _no_source_pages)
    app.connect("config-inited", _configure)
    app.connect("doctree-read", _edit_chapter)
    app.connect("build-finished", _student_sources)
    app.connect("html-page-context", _page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
