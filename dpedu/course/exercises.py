r"""Student copies of the course notebooks: solutions replaced by a stub, outputs cleared.

The chapters mark each reference solution the way nbgrader does (``jupyter/nbgrader``,
``preprocessors/clearsolutions.py``)::

    def mean_of_squares(x):
        ### BEGIN SOLUTION
        x = np.asarray(x, dtype=float)
        return float(np.mean(x * x))
        ### END SOLUTION

:func:`strip_solutions` replaces everything from ``### BEGIN SOLUTION`` to ``### END SOLUTION`` by
``raise NotImplementedError(...)`` at the indentation of the ``BEGIN`` line (in Markdown cells by
"YOUR ANSWER HERE"). :func:`student_notebook` does that to every cell and clears outputs and execution
counts; :func:`make_student_copies` writes the student version of a folder of notebooks. The check
cell after each exercise then fails with "not written yet" until the student writes the code. Exercise
cells carry nbgrader metadata (``solution``/``grade``, a ``grade_id``), so nbgrader can also grade them.

>>> print(strip_solutions('''def f(x):
...     ### BEGIN SOLUTION
...     return 2 * x
...     ### END SOLUTION'''))
def f(x):
    raise NotImplementedError("write your solution here")
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BEGIN_SOLUTION",
    "END_SOLUTION",
    "STUB_MESSAGE",
    "strip_solutions",
    "without_markers",
    "student_notebook",
    "make_student_copies",
    "Exercise",
    "find_exercises",
]

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
STUB_MESSAGE = "write your solution here"
MARKDOWN_STUB = "YOUR ANSWER HERE"


def strip_solutions(source, *, message=STUB_MESSAGE, markdown=False):
    """Replace each ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region of ``source``.

    Parameters
    ----------
    source : str
        A cell's source.
    message : str
        Text of the ``NotImplementedError`` in the stub.
    markdown : bool
        For a Markdown cell: replace the region by "YOUR ANSWER HERE" instead of code.

    Returns
    -------
    str
        The source with every solution region replaced (unchanged when there is none).

    Raises
    ------
    ValueError
        For a ``BEGIN`` without ``END``, an ``END`` without ``BEGIN``, or nested regions: a marker
        typo must not leak a solution into the student copy.
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a str; got {type(source).__name__}")
    out, inside = [], False
    for number, line in enumerate(source.split("\n"), start=1):
        stripped = line.strip()
        if stripped == BEGIN_SOLUTION:
            if inside:
                raise ValueError(f"line {number}: nested {BEGIN_SOLUTION!r} (the previous region is not closed)")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + (MARKDOWN_STUB if markdown else f"raise NotImplementedError({json.dumps(message)})"))
        elif stripped == END_SOLUTION:
            if not inside:
                raise ValueError(f"line {number}: {END_SOLUTION!r} without a {BEGIN_SOLUTION!r} before it")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN_SOLUTION!r} without a matching {END_SOLUTION!r}: the solution would leak")
    return "\n".join(out)


def without_markers(source):
    """``source`` with the ``### BEGIN SOLUTION`` and ``### END SOLUTION`` lines left out: the reference solution
    as a reader of the instructor edition sees it (the markers are for the tools, not for people).

    >>> print(without_markers('''def f(x):
    ...     ### BEGIN SOLUTION
    ...     return 2 * x
    ...     ### END SOLUTION'''))
    def f(x):
        return 2 * x
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a str; got {type(source).__name__}")
    return "\n".join(line for line in source.split("\n") if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION))


def _has_solution(source):
    return any(line.strip() == BEGIN_SOLUTION for line in source.split("\n"))


def _check_notebook(nb, name="nb"):
    """An ``nbformat`` notebook node (``nbformat.read(path, as_version=4)``), else a ``TypeError`` naming ``nb``."""
    cells = nb.get("cells") if isinstance(nb, Mapping) else None
    if not (isinstance(cells, list) and hasattr(nb, "cells")
            and all(isinstance(cell, Mapping) and isinstance(cell.get("source"), str) and "cell_type" in cell
                    for cell in cells)):
        raise TypeError(f"{name} must be a notebook as nbformat.read(path, as_version=4) returns it (cells with a "
                        f"cell_type and a str source); got {type(nb).__name__} {str(nb)[:60]!r}")
    return nb


def _check_paths(source, pattern):
    """The notebook files of ``source``: a folder (files matching ``pattern``), a file, or an iterable of files."""
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a glob string such as '*.ipynb'; got {pattern!r}")
    if isinstance(source, (str, os.PathLike)):
        source = Path(source)
        if not source.exists():
            raise ValueError(f"source {str(source)!r} does not exist")
        return sorted(source.glob(pattern)) if source.is_dir() else [source]
    if not isinstance(source, Iterable) or isinstance(source, (bytes, Mapping)):
        raise TypeError(f"source must be a folder, a notebook file or an iterable of notebook files; got "
                        f"{type(source).__name__} {source!r}")
    paths = list(source)
    for path in paths:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"source must hold notebook paths (str or os.PathLike); got {type(path).__name__} "
                            f"{path!r}")
    return sorted(Path(path) for path in paths)


def student_notebook(nb):
    """A copy of the notebook ``nb`` (an ``nbformat`` node) with solutions stubbed and outputs cleared.

    Stubs name the exercise: ``raise NotImplementedError("Exercise 2.1: write your solution here")``
    when the cell has an nbgrader ``grade_id`` such as ``"exercise-2-1"``.
    """
    student = copy.deepcopy(_check_notebook(nb))
    for index, cell in enumerate(student.cells):
        try:
            if _has_solution(cell.source):
                grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
                match = re.fullmatch(r"exercise-(\d+)-(\d+)", grade_id)
                message = f"Exercise {match[1]}.{match[2]}: {STUB_MESSAGE}" if match else STUB_MESSAGE
                cell.source = strip_solutions(cell.source, message=message, markdown=cell.cell_type == "markdown")
        except ValueError as exc:
            raise ValueError(f"cell {index}: {exc}") from None
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return student


def make_student_copies(source, out_dir, *, pattern="*.ipynb", force=False):
    """Write the student version of each notebook in ``source`` (a folder or a list of files) to ``out_dir``.

    Parameters
    ----------
    source : str, os.PathLike or iterable of them
        A folder (every file matching ``pattern``) or notebook files.
    out_dir : str or os.PathLike
        Created if needed. Must differ from every notebook's own folder, so the originals (with their
        solutions) can never be overwritten.
    pattern : str
        Glob for a source folder.
    force : bool
        Overwrite student copies that already exist and differ from a fresh copy (a student's edited work).
        Without it such files are refused with ``FileExistsError`` and nothing is written.

    Returns
    -------
    list of pathlib.Path
        The files written, in sorted order.
    """
    import nbformat

    paths = _check_paths(source, pattern)
    if not paths:
        raise ValueError(f"no notebooks matching {pattern!r} in {str(source)!r}")
    if not isinstance(force, bool):
        raise TypeError(f"force must be True or False; got {force!r}")
    if not isinstance(out_dir, (str, os.PathLike)):
        raise TypeError(f"out_dir must be a folder path (str or os.PathLike); got {type(out_dir).__name__} {out_dir!r}")
    out_dir = Path(out_dir)
    for path in paths:
        if path.parent.resolve() == out_dir.resolve():
            raise ValueError(f"out_dir {str(out_dir)!r} is the folder of {path.name}: the student copy would "
                             "overwrite the solutions; choose another folder")
    copies = {out_dir / path.name: nbformat.writes(student_notebook(nbformat.read(path, as_version=4))) + "\n"
              for path in paths}
    changed = [target for target, text in copies.items()
               if target.exists() and target.read_text(encoding="utf-8") != text]
    if changed and not force:  # a student's edited copy is never overwritten silently
        names = ", ".join(target.name for target in changed)
        raise FileExistsError(f"{len(changed)} student copy(ies) in {str(out_dir)!r} differ from a fresh copy "
                              f"(edited since they were made?): {names}. Move them away, or pass force=True "
                              f"to overwrite them")
    out_dir.mkdir(parents=True, exist_ok=True)
    for target, text in copies.items():
        target.write_text(text, encoding="utf-8")
    return sorted(copies)


@dataclass(frozen=True)
class Exercise:
    """One exercise of a notebook: its ``grade_id``, the solution cell's source and the check cell's source."""

    grade_id: str
    solution: str
    check: str

    @property
    def stub(self):
        """The solution cell as students receive it."""
        return strip_solutions(self.solution)


def find_exercises(nb):
    """The exercises of a notebook in order: each solution cell (nbgrader ``solution: true``) paired with the
    check cell (nbgrader ``grade: true``) that follows it.

    Raises
    ------
    ValueError
        When a solution cell has no solution markers, or is not followed by a check cell.
    """
    exercises, cells = [], list(_check_notebook(nb).cells)
    for index, cell in enumerate(cells):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not meta.get("solution"):
            continue
        if not _has_solution(cell.source):
            raise ValueError(f"cell {index} ({meta.get('grade_id')}) is marked as a solution but has no "
                             f"{BEGIN_SOLUTION!r} region")
        following = cells[index + 1] if index + 1 < len(cells) else None
        if following is None or not following.get("metadata", {}).get("nbgrader", {}).get("grade"):
            raise ValueError(f"cell {index} ({meta.get('grade_id')}) is not followed by a check cell")
        exercises.append(Exercise(meta.get("grade_id", f"cell-{index}"), cell.source, following.source))
    return exercises
