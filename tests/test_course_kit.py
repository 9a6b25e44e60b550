"""Student copies never overwrite a student's work; the course-kit command lays out an nbgrader course."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

from dpedu.cli import main
from dpedu.course import exercises
from dpedu.course.exercises import make_student_copies

CHAPTER = "01_logistic_regression.ipynb"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def chapter(tmp_path):
    from dpedu.course.reference import course_dir

    source = tmp_path / "source"
    source.mkdir()
    (source / CHAPTER).write_bytes((course_dir("chapters") / CHAPTER).read_bytes())
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
    assert (root / "source" / "01_logistic_regression" / "reference" / "math.md").is_file()
    assert "generate_assignment 01_logistic_regression" in capsys.readouterr().out
    assert main(["course-kit", str(root), "--chapters", "99_none"]) == 1
    assert "chapters" in capsys.readouterr().err


def test_the_kit_holds_no_absolute_path(tmp_path):
    """Nothing in a course kit names the folder it was made in, or this machine's dpedu: nbgrader_config.py finds
    the course from its own location, so the folder can be moved (tests/test_wheel.py grades in a moved kit)."""
    root = tmp_path / "made-here"
    assert main(["course-kit", str(root), "--chapters", "00_what_dp_promises"]) == 0
    places = (str(root), str(tmp_path), str(ROOT), str(Path(sys.prefix)))
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".j2", ".ipynb", ".md"):
            text = path.read_text(encoding="utf-8")
            assert not [place for place in places if place in text], (path, [p for p in places if p in text])
    config = (root / "nbgrader_config.py").read_text()
    assert "c.CourseDirectory.root = HERE" in config and 'os.path.join(HERE, "exchange")' in config


def test_help_texts_count_the_chapters_there_are(capsys):
    """course-kit's and chapters' help name the number of chapters that ship (12 in this repository), not a
    number written by hand."""
    from dpedu.course.reference import chapter_paths

    count = len(chapter_paths())
    assert count == len(list((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))) >= 12
    for command in ("course-kit", "chapters"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert f"all {count}" in " ".join(capsys.readouterr().out.split())


@pytest.fixture
def installed_without_a_clone(tmp_path, monkeypatch):
    """dpedu as a wheel installs it: the chapters and notes in dpedu/course/_shipped/, no repository beside it."""
    from dpedu.course import reference

    shipped = tmp_path / "site-packages" / "dpedu" / "course" / "_shipped"
    (shipped / "chapters").mkdir(parents=True)
    for name in ("00_what_dp_promises.ipynb", CHAPTER):
        (shipped / "chapters" / name).write_bytes((ROOT / "chapters" / name).read_bytes())
    (shipped / "docs" / "_static" / "notes").mkdir(parents=True)
    (shipped / "docs" / "math.md").write_bytes((ROOT / "docs" / "math.md").read_bytes())
    monkeypatch.setattr(reference, "SHIPPED", shipped)
    monkeypatch.setattr(reference, "REPOSITORY", tmp_path / "no-clone")
    monkeypatch.chdir(tmp_path)
    return shipped


def test_course_kit_and_chapters_work_without_a_clone(installed_without_a_clone, tmp_path, capsys):
    """Outside a clone (the chapters from the wheel) course-kit makes every shipped chapter an assignment (it
    refused with "--chapters must be names among []"), and `chapters` writes them with their reference folder."""
    assert main(["course-kit", "kit"]) == 0, capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "kit" / "source").iterdir()) == ["00_what_dp_promises",
                                                                             "01_logistic_regression"]
    assert main(["chapters", "mine", "--student"]) == 0, capsys.readouterr().err
    assert (tmp_path / "mine" / CHAPTER).is_file() and (tmp_path / "mine" / "reference" / "math.md").is_file()
    assert "NotImplementedError" in (tmp_path / "mine" / CHAPTER).read_text()
    assert main(["chapters", "full"]) == 0 and "### BEGIN SOLUTION" in (tmp_path / "full" / CHAPTER).read_text()
    nb = nbformat.read(tmp_path / "full" / CHAPTER, as_version=4)
    nb.cells[-1].source += "\n# my notes"
    nbformat.write(nb, tmp_path / "full" / CHAPTER)
    assert main(["chapters", "full"]) == 1 and "--force" in capsys.readouterr().err
    assert "# my notes" in (tmp_path / "full" / CHAPTER).read_text()
    for links in (str(tmp_path / "no-clone"), "site-packages"):
        assert links not in (tmp_path / "mine" / CHAPTER).read_text()


def test_no_chapters_anywhere_is_a_clear_error(tmp_path, monkeypatch, capsys):
    from dpedu.course import reference

    monkeypatch.setattr(reference, "SHIPPED", tmp_path / "none")
    monkeypatch.setattr(reference, "REPOSITORY", tmp_path / "none")
    assert main(["course-kit", str(tmp_path / "kit")]) == 1
    assert "reinstall dpedu" in capsys.readouterr().err


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
