"""The course commands: ``chapters`` (the chapters, from a clone or a pip install), ``strip-solutions`` (student
copies), ``reference`` (the notes and API pages beside notebooks) and ``course-kit`` (an nbgrader course).

Every command that writes notebooks writes ``reference/`` beside them (:mod:`dpedu.course.reference`), the folder
their "Uses:" and "Notes:" links point into, so the links work in JupyterLab wherever the folder is opened.
"""

from __future__ import annotations

__all__ = ["COMMANDS", "cmd_chapters", "cmd_strip_solutions", "cmd_reference", "cmd_course_kit", "chapter_count"]


def chapter_count():
    """How many chapters ship with this dpedu (in the wheel, or in the clone's ``chapters/``); None if none."""
    from ..course.reference import chapter_paths

    try:
        return len(chapter_paths())
    except FileNotFoundError:
        return None


def _all_chapters():
    count = chapter_count()
    return "all of them" if count is None else f"all {count}"


def _add_chapters(sub):
    p = sub.add_parser(
        "chapters",
        help="write the course's chapters (with the notes and API pages they link to) into a folder",
        description="Write the chapter notebooks that ship with dpedu (from a pip install or a clone) into OUT_DIR, "
                    "with OUT_DIR/reference/: the mathematical notes and the API pages their links point to. "
                    f"Then open them: jupyter lab OUT_DIR. Writes {_all_chapters()} chapters; --student writes "
                    "the student copies (solutions replaced by stubs, as strip-solutions). A notebook that was "
                    "edited since it was written is never overwritten without --force.",
        epilog="example: python -m dpedu chapters my-course --student && jupyter lab my-course",
    )
    p.add_argument("out_dir", help="the folder to write the chapters into (created if needed)")
    p.add_argument("--student", action="store_true", help="write student copies: every solution a stub")
    p.add_argument("--force", action="store_true", help="overwrite notebooks that were edited since they were written")
    p.set_defaults(func=cmd_chapters)


def cmd_chapters(args):
    from ..course.reference import chapter_paths
    from .common import check_output_dir

    check_output_dir(args.out_dir, "out_dir")
    paths = chapter_paths()
    written = _write_copies(paths, args.out_dir, student=args.student, force=args.force)
    print(f"wrote {len(written)} {'student copies of the ' if args.student else ''}chapters and their reference/ "
          f"into {args.out_dir}")
    print(f"next: jupyter lab {args.out_dir}")
    return 0


def _write_copies(paths, out_dir, *, student, force):
    """Copies of the notebooks ``paths`` in ``out_dir`` (stubbed if ``student``), linked into ``out_dir/reference/``,
    which is written too; a copy edited since it was made is refused without ``force`` (nothing is written)."""
    import json
    import tempfile
    from pathlib import Path

    from ..course.booklinks import relink
    from ..course.exercises import make_student_copies
    from ..course.reference import write_reference

    out_dir = Path(out_dir)
    if any(path.parent.resolve() == out_dir.resolve() for path in paths):
        raise ValueError(f"out_dir {str(out_dir)!r} is the folder of the notebooks: the copies would overwrite "
                         "them; choose another folder")
    if not isinstance(force, bool):
        raise TypeError(f"force must be True or False; got {force!r}")
    with tempfile.TemporaryDirectory() as tmp:
        linked = []
        for path in paths:
            nb = relink(json.loads(path.read_text(encoding="utf-8")), to="jupyter")
            linked.append(Path(tmp) / path.name)
            linked[-1].write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if student:
            written = make_student_copies(linked, out_dir, force=force)
        else:
            texts = {out_dir / p.name: p.read_text(encoding="utf-8") for p in linked}
            # as make_student_copies: a copy that differs from a fresh one (edited since) is never overwritten
            changed = [t for t, text in texts.items() if t.exists() and t.read_text(encoding="utf-8") != text]
            if changed and not force:
                raise FileExistsError(f"{len(changed)} notebook(s) in {str(out_dir)!r} differ from a fresh copy "
                                      f"(edited since they were written?): {', '.join(t.name for t in changed)}. "
                                      "Move them away, or pass force=True to overwrite them")
            out_dir.mkdir(parents=True, exist_ok=True)
            for target, text in texts.items():
                target.write_text(text, encoding="utf-8")
            written = sorted(texts)
    write_reference(out_dir, written)
    return written


def _add_strip(sub):
    p = sub.add_parser(
        "strip-solutions",
        help="write student copies of the chapter notebooks (solutions replaced by stubs, outputs cleared)",
        description="Copy every notebook of SOURCE to OUT_DIR with each '### BEGIN SOLUTION' ... '### END "
                    "SOLUTION' region replaced by raise NotImplementedError(...), as nbgrader does, and all outputs "
                    "cleared, with OUT_DIR/reference/ (the notes and API pages the notebooks link to). OUT_DIR must "
                    "not be the source folder. From a pip install: python -m dpedu chapters OUT_DIR --student.",
        epilog="example: python -m dpedu strip-solutions chapters build/student",
    )
    p.add_argument("source", help="a folder of notebooks (or one notebook)")
    p.add_argument("out_dir", help="where to write the student copies")
    p.add_argument("--force", action="store_true",
                   help="overwrite student copies that were edited since they were made (refused by default)")
    p.set_defaults(func=cmd_strip_solutions)


def cmd_strip_solutions(args):
    from pathlib import Path

    from .common import check_input_path, check_output_dir

    check_input_path(args.source, "source")
    check_output_dir(args.out_dir, "out_dir")
    source = Path(args.source)
    paths = sorted(source.glob("*.ipynb")) if source.is_dir() else [source]
    if not all(path.is_file() for path in paths) or not paths:
        raise ValueError(f"source must be a folder of notebooks or one notebook; got {args.source!r}")
    written = _write_copies(paths, args.out_dir, student=True, force=args.force)
    for path in written:
        print(f"wrote {path}")
    print(f"wrote {Path(args.out_dir) / 'reference'} (the notes and API pages the copies link to)")
    return 0


def _add_reference(sub):
    p = sub.add_parser(
        "reference",
        help="write FOLDER/reference/: the notes and API pages the notebooks of FOLDER link to",
        description="Write (or bring up to date) FOLDER/reference/ for the notebooks in FOLDER: the mathematical "
                    "notes and the API pages of the dpedu objects their 'Uses:' and 'Notes:' links name, from the "
                    "installed dpedu. In a clone, before opening the chapters: python -m dpedu reference chapters.",
        epilog="example: python -m dpedu reference chapters && jupyter lab chapters",
    )
    p.add_argument("folder", help="a folder of notebooks")
    p.set_defaults(func=cmd_reference)


def cmd_reference(args):
    from pathlib import Path

    from ..course.reference import write_reference
    from .common import check_input_dir

    check_input_dir(args.folder, "folder")
    notebooks = sorted(Path(args.folder).glob("*.ipynb"))
    if not notebooks:
        raise ValueError(f"folder {args.folder!r} holds no notebook (*.ipynb)")
    written = write_reference(args.folder, notebooks)
    print(f"wrote {Path(args.folder) / 'reference'} ({len(written)} files) for {len(notebooks)} notebook(s)")
    return 0


def _add_course_kit(sub):
    p = sub.add_parser(
        "course-kit",
        help="make an nbgrader course from the chapters (configured to grade them in fast mode)",
        description="Lay out COURSE_DIR as an nbgrader course with one assignment per chapter (the chapters that ship "
                    "with dpedu: from a pip install or a clone), each with the notes and API pages it links to, and "
                    "write an nbgrader_config.py that grades in fast mode (DPEDU_FAST=1) with a cell timeout the "
                    "chapters fit; the course holds no absolute path, so it can be moved. Then, inside COURSE_DIR: "
                    "nbgrader generate_assignment NAME, collect submissions into submitted/STUDENT/NAME/, nbgrader "
                    "autograde NAME, nbgrader generate_feedback NAME.",
        epilog="example: python -m dpedu course-kit course --chapters 01_logistic_regression 07_effect_of_noise",
    )
    p.add_argument("course_dir", help="the course directory to create")
    p.add_argument("--chapters", nargs="+", metavar="NAME", help=f"chapter names (default: {_all_chapters()})")
    p.add_argument("--timeout", type=float, default=600.0, help="cell timeout in seconds when grading (default 600)")
    p.add_argument("--force", action="store_true", help="overwrite a configuration or source notebook that differs")
    p.set_defaults(func=cmd_course_kit)


def cmd_course_kit(args):
    from ..course.instructor import chapter_names, default_mathjax, make_course
    from .common import check_output_dir

    check_output_dir(args.course_dir, "course_dir")
    mathjax = default_mathjax()
    root = make_course(args.course_dir, chapters=args.chapters, timeout=args.timeout, force=args.force,
                       mathjax=mathjax)
    names = args.chapters or chapter_names()
    print(f"nbgrader course in {root} with {len(names)} assignment(s): {', '.join(names)}")
    if mathjax is None:
        print("feedback pages: no local MathJax 3 found (python docs/build.py installs one with npm, or set "
              "DPEDU_MATHJAX to a directory holding tex-svg-full.js); formulas will load MathJax from a CDN")
    else:
        print(f"feedback pages: self-contained, formulas typeset by MathJax 3 inlined from {mathjax}")
    print(f"next: cd {root} && nbgrader generate_assignment {names[0]}")
    return 0


COMMANDS = [_add_chapters, _add_strip, _add_reference, _add_course_kit]
