"""The instructor's kit: nbgrader generate -> autograde -> feedback on real chapters.

Chapter 01 is short; chapter 07 has the longest-running cells (its experiment grids), which hit
nbgrader's default 30 s cell limit before the kit raised the timeout and graded in fast mode. Each
chapter is graded twice: the reference solution (full marks, no error anywhere in the graded notebook)
and the released student copy left unanswered (every check fails, so no point is given).
"""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("nbgrader")

from dpedu import instructor  # noqa: E402

# nbgrader 0.9 with SQLAlchemy 2.x emits SAWarning (a RuntimeWarning, which this suite turns into errors)
# about its own session handling; it does not affect the grades.
pytestmark = [pytest.mark.notebooks, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

CHAPTERS = ["01_logistic_regression", "07_effect_of_noise"]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    instructor.make_course(root, chapters=CHAPTERS)
    return root


def _errors(notebook_path):
    nb = json.loads(notebook_path.read_text())
    return [cell for cell in nb["cells"] if cell["cell_type"] == "code"
            and any(out.get("output_type") == "error" for out in cell.get("outputs", []))]


@pytest.mark.parametrize("assignment", CHAPTERS)
def test_right_and_wrong_submissions_are_graded(course, assignment):
    instructor.generate(course, assignment)
    released = course / "release" / assignment / f"{assignment}.ipynb"
    assert released.is_file()
    assert "### BEGIN SOLUTION" not in released.read_text()

    instructor.copy_submission(course, assignment, "right", course / "source" / assignment / f"{assignment}.ipynb")
    instructor.copy_submission(course, assignment, "wrong", released)
    for student in ("right", "wrong"):
        instructor.autograde(course, assignment, student)
        instructor.feedback(course, assignment, student)
        assert (course / "feedback" / student / assignment / f"{assignment}.html").is_file()

    right, maximum = instructor.score(course, assignment, "right")
    wrong, _ = instructor.score(course, assignment, "wrong")
    assert maximum >= 3
    assert right == maximum
    assert wrong == 0

    graded = course / "autograded" / "right" / assignment / f"{assignment}.ipynb"
    assert _errors(graded) == [], "the reference solution raised an error when graded"
    failed = _errors(course / "autograded" / "wrong" / assignment / f"{assignment}.ipynb")
    assert failed, "an unanswered copy must fail its checks"


def test_make_course_refuses_to_overwrite_a_changed_file(course):
    config = course / "nbgrader_config.py"
    original = config.read_text()
    config.write_text(original + "\n# an instructor's own setting\n")
    with pytest.raises(FileExistsError, match="force=True"):
        instructor.make_course(course, chapters=CHAPTERS)
    assert config.read_text().endswith("# an instructor's own setting\n")
    instructor.make_course(course, chapters=CHAPTERS, force=True)
    assert config.read_text() == original


@pytest.mark.parametrize("kwargs, error", [
    ({"chapters": ["99_nope"]}, ValueError),
    ({"chapters": "01_logistic_regression"}, TypeError),
    ({"timeout": 0}, ValueError),
    ({"timeout": "600"}, TypeError),
    ({"force": "yes"}, TypeError),
    ({"course_id": "my course"}, ValueError),
])
def test_make_course_rejects_bad_arguments(tmp_path, kwargs, error):
    with pytest.raises(error):
        instructor.make_course(tmp_path / "c", **kwargs)
    assert not (tmp_path / "c").exists()


def test_the_config_grades_in_fast_mode_with_a_long_timeout(tmp_path):
    root = instructor.make_course(tmp_path / "c", chapters=CHAPTERS[:1], timeout=321)
    text = (root / "nbgrader_config.py").read_text()
    assert 'os.environ.setdefault("DPEDU_FAST", "1")' in text
    assert "c.ExecutePreprocessor.timeout = 321.0" in text
    shutil.rmtree(root)
