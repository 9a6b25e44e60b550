"""The ``strip-solutions`` command: student copies of the chapter notebooks.
"""

from __future__ import annotations

__all__ = ['COMMANDS', 'cmd_strip_solutions']


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
    p.set_defaults(func=cmd_strip_solutions)


def cmd_strip_solutions(args):
    from ..exercises import make_student_copies

    for path in make_student_copies(args.source, args.out_dir):
        print(f"wrote {path}")
    return 0


COMMANDS = [_add_strip]
