"""The course commands: ``strip-solutions`` (student copies) and ``course-kit`` (an nbgrader course)."""

from __future__ import annotations

__all__ = ["COMMANDS", "cmd_strip_solutions", "cmd_course_kit"]


def _add_strip(sub):
    p = sub.add_parser(
        "strip-solutions",
        help="write student copies of the chapter notebooks (solutions replaced by stubs, outputs cleared)",
        description="Copy every notebook of SOURCE to OUT_DIR with each '### BEGIN SOLUTION' ... '### END "
                    "SOLUTION' region replaced by raise NotImplementedError(...), as nbgrader does, and all outputs "
                    "cleared. OUT_DIR must not be the source folder.",
        epilog="example: python -m dpedu strip-solutions chapters build/student",
    )
    p.add_argument("source", help="a folder of notebooks (or one notebook)")
    p.add_argument("out_dir", help="where to write the student copies")
    p.add_argument("--force", action="store_true",
                   help="overwrite student copies that were edited since they were made (refused by default)")
    _add_book_option(p)
    p.set_defaults(func=cmd_strip_solutions)


def _add_book_option(p):
    p.add_argument("--book", default=None, metavar="URL_OR_DIR",
                   help="the built book the notebooks' API links point at: a URL, or a folder (default "
                        "$DPEDU_BOOK_URL, else the local build docs/_build/student, linked relative to the copies)")


def cmd_strip_solutions(args):
    import json
    import tempfile
    from pathlib import Path

    from ..course.booklinks import relink
    from ..course.exercises import make_student_copies
    from ..course.instructor import NOTES_SOURCE
    from .common import check_input_path, check_output_dir

    check_input_path(args.source, "source")
    check_output_dir(args.out_dir, "out_dir")
    source, out_dir = Path(args.source), Path(args.out_dir)
    paths = sorted(source.glob("*.ipynb")) if source.is_dir() else [source]
    if not all(path.is_file() for path in paths) or not paths:
        raise ValueError(f"source must be a folder of notebooks or one notebook; got {args.source!r}")
    if any(path.parent.resolve() == out_dir.resolve() for path in paths):
        raise ValueError(f"out_dir {str(out_dir)!r} is the folder of the notebooks: the student copies would "
                         "overwrite the solutions; choose another folder")
    # the links of each copy are placed for out_dir (API pages in the book, the notes in a copy of math.md
    # beside the copies), then the solutions are stripped
    with tempfile.TemporaryDirectory() as tmp:
        linked = []
        for path in paths:
            nb = relink(json.loads(path.read_text(encoding="utf-8")), base=out_dir, book=args.book, notes="math.md")
            linked.append(Path(tmp) / path.name)
            linked[-1].write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written = make_student_copies(linked, out_dir, force=args.force)
    for path in written:
        print(f"wrote {path}")
    if NOTES_SOURCE.is_file():
        (out_dir / "math.md").write_bytes(NOTES_SOURCE.read_bytes())
        print(f"wrote {out_dir / 'math.md'} (the mathematical notes the copies link to)")
    return 0


def _add_course_kit(sub):
    p = sub.add_parser(
        "course-kit",
        help="make an nbgrader course from the chapters (configured to grade them in fast mode)",
        description="Lay out COURSE_DIR as an nbgrader course with one assignment per chapter, and write an "
                    "nbgrader_config.py that grades in fast mode (DPEDU_FAST=1) with a cell timeout the chapters fit. "
                    "Then, inside COURSE_DIR: nbgrader generate_assignment NAME, collect submissions into "
                    "submitted/STUDENT/NAME/, nbgrader autograde NAME, nbgrader generate_feedback NAME.",
        epilog="example: python -m dpedu course-kit course --chapters 01_logistic_regression 07_effect_of_noise",
    )
    p.add_argument("course_dir", help="the course directory to create")
    p.add_argument("--chapters", nargs="+", metavar="NAME", help="chapter names (default: all eight)")
    p.add_argument("--timeout", type=float, default=600.0, help="cell timeout in seconds when grading (default 600)")
    p.add_argument("--force", action="store_true", help="overwrite a configuration or source notebook that differs")
    _add_book_option(p)
    p.set_defaults(func=cmd_course_kit)


def cmd_course_kit(args):
    from ..course.instructor import chapter_names, default_mathjax, make_course
    from .common import check_output_dir

    check_output_dir(args.course_dir, "course_dir")
    mathjax = default_mathjax()
    root = make_course(args.course_dir, chapters=args.chapters, timeout=args.timeout, force=args.force,
                       mathjax=mathjax, book=args.book)
    names = args.chapters or chapter_names()
    print(f"nbgrader course in {root} with {len(names)} assignment(s): {', '.join(names)}")
    if mathjax is None:
        print("feedback pages: no local MathJax 3 found (python docs/build.py installs one with npm, or set "
              "DPEDU_MATHJAX to a directory holding tex-svg-full.js); formulas will load MathJax from a CDN")
    else:
        print(f"feedback pages: self-contained, formulas typeset by MathJax 3 inlined from {mathjax}")
    print(f"next: cd {root} && nbgrader generate_assignment {names[0]}")
    return 0


COMMANDS = [_add_strip, _add_course_kit]
