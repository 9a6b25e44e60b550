"""Student copies never overwrite a student's work; the course-kit command lays out an nbgrader course."""

from __future__ import annotations

import nbformat
import pytest

from dpedu.cli import main
from dpedu.course import exercises
from dpedu.course.exercises import make_student_copies

CHAPTER = "01_logistic_regression.ipynb"


@pytest.fixture
def chapter(tmp_path):
    from dpedu.course.instructor import CHAPTERS_DIR

    source = tmp_path / "source"
    source.mkdir()
    (source / CHAPTER).write_bytes((CHAPTERS_DIR / CHAPTER).read_bytes())
    return source


def test_making_the_copies_twice_is_allowed(chapter, tmp_path):
    first = make_student_copies(chapter, tmp_path / "student")
    text = first[0].read_text()
    second = make_student_copies(chapter, tmp_path / "student")
    assert second == first and second[0].read_text() == text


def test_an_edited_copy_is_not_overwritten_without_force(chapter, tmp_path):
    [copy] = make_student_copies(chapter, tmp_path / "student")
    nb = nbformat.read(copy, as_version=4)
    nb.cells[-1].source += "\n# my answer"
    nbformat.write(nb, copy)
    edited = copy.read_text()
    with pytest.raises(FileExistsError, match="force"):
        make_student_copies(chapter, tmp_path / "student")
    assert copy.read_text() == edited
    make_student_copies(chapter, tmp_path / "student", force=True)
    assert "# my answer" not in copy.read_text()


def test_force_must_be_a_bool(chapter, tmp_path):
    with pytest.raises(TypeError, match="force"):
        make_student_copies(chapter, tmp_path / "student", force="yes")


def test_cli_refuses_then_forces(chapter, tmp_path, capsys):
    out = tmp_path / "student"
    assert main(["strip-solutions", str(chapter), str(out)]) == 0
    (out / CHAPTER).write_text((out / CHAPTER).read_text().replace("NotImplementedError", "ValueError"))
    assert main(["strip-solutions", str(chapter), str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--force" in err[0]
    assert main(["strip-solutions", str(chapter), str(out), "--force"]) == 0


def test_cli_course_kit(tmp_path, capsys):
    root = tmp_path / "course"
    assert main(["course-kit", str(root), "--chapters", "01_logistic_regression", "--timeout", "120"]) == 0
    assert (root / "nbgrader_config.py").is_file()
    assert (root / "source" / "01_logistic_regression" / CHAPTER).is_file()
    assert "generate_assignment 01_logistic_regression" in capsys.readouterr().out
    assert main(["course-kit", str(root), "--chapters", "99_none"]) == 1
    assert "chapters" in capsys.readouterr().err


@pytest.mark.parametrize("call, error, name", [
    (lambda: exercises.student_notebook(nb="x"), TypeError, "nb"),
    (lambda: exercises.student_notebook(None), TypeError, "nb"),
    (lambda: exercises.student_notebook({"cells": [{"cell_type": "code"}]}), TypeError, "nb"),
    (lambda: exercises.find_exercises(nb=None), TypeError, "nb"),
    (lambda: exercises.find_exercises(["cell"]), TypeError, "nb"),
    (lambda: exercises.make_student_copies(source=None, out_dir="x"), TypeError, "source"),
    (lambda: exercises.make_student_copies(source=[None], out_dir="x"), TypeError, "source"),
    (lambda: exercises.make_student_copies(source=3, out_dir="x"), TypeError, "source"),
    (lambda: exercises.make_student_copies(source=".", out_dir="x", pattern=None), TypeError, "pattern"),
])
def test_bad_notebook_arguments_are_refused_by_name(call, error, name):
    with pytest.raises(error, match=rf"^{name}\b"):
        call()


def test_make_student_copies_refuses_a_missing_out_dir_by_name(tmp_path):
    import nbformat

    path = tmp_path / "a.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), path)
    with pytest.raises(TypeError, match=r"^out_dir\b"):
        exercises.make_student_copies([path], None)
