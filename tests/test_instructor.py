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


# -- the feedback page, as a student reads it in a browser -------------------------------------------------------------

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
LONG_MESSAGE = "this message is long on purpose, far wider than the box that shows it, " * 6


def test_feedback_template_names_checks_and_uses_a_local_mathjax(course):
    template = (course / "templates" / "feedback" / "dpedu_feedback.html.j2").read_text()
    config = (course / "nbgrader_config.py").read_text()
    assert 'c.HTMLExporter.template_file = "dpedu_feedback.html.j2"' in config
    mathjax = instructor.default_mathjax()
    if mathjax is not None:
        assert mathjax.as_uri() in template
    with pytest.raises(ValueError, match="mathjax"):
        instructor.make_course(course / "other", chapters=CHAPTERS[:1], mathjax=course / "missing.js")


def test_feedback_page_in_a_browser(course):
    """Messages wrap inside their box (no horizontal overflow), formulas are typeset by the local MathJax (no
    CDN: the browser is offline), and the contents name each check after its exercise."""
    import os
    from pathlib import Path

    pytest.importorskip("selenium")
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        message = "the feedback page test needs chromium and chromedriver"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    if instructor.default_mathjax() is None:
        pytest.skip("no local MathJax 3 (python docs/build.py installs it into docs/_vendor)")
    assignment = CHAPTERS[0]
    released = course / "release" / assignment / f"{assignment}.ipynb"
    if not released.is_file():          # the grading test above makes it; run alone, make it here
        instructor.generate(course, assignment)
    # a submission whose answer to Exercise 1.1 raises with a long message: the check's hint quotes it in full
    nb = json.loads(released.read_text())
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "exercise-1-1")
    cell["source"] = "def logistic_loss(theta, X, y):\n    raise ValueError('" + LONG_MESSAGE + "')\n"
    submission = course / "long_submission.ipynb"
    submission.write_text(json.dumps(nb))
    instructor.copy_submission(course, assignment, "long", submission)
    instructor.autograde(course, assignment, "long")
    instructor.feedback(course, assignment, "long")
    page = course / "feedback" / "long" / assignment / f"{assignment}.html"
    html = page.read_text()
    assert "Test cell" not in html and "Exercise 1.1 check" in html
    assert "cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js?config" not in html.split("text/x-mathjax-config")[0]

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1000", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"):
        options.add_argument(flag)                  # a dead proxy: anything fetched from the network fails
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(page.as_uri())
        WebDriverWait(driver, 30).until(lambda d: d.execute_script(
            "return window.MathJax && MathJax.startup && MathJax.startup.promise && "
            "(window.__done || (MathJax.startup.promise.then(() => { window.__done = true; }), false));"))
        typeset = driver.execute_script("return document.querySelectorAll('mjx-container').length;")
        assert typeset > 0, "no formula was typeset"
        overflowing = driver.execute_script(
            "return Array.from(document.querySelectorAll('div.output_area pre, div.output_subarea pre'))"
            ".filter(p => p.scrollWidth > p.clientWidth + 1).map(p => p.innerText.slice(0, 80));")
        assert overflowing == [], overflowing
        messages = driver.execute_script(
            "return Array.from(document.querySelectorAll('div.output_area pre')).filter(p => "
            "p.innerText.includes('your function raised ValueError')).map(p => "
            "[p.innerText, p.getBoundingClientRect().height, parseFloat(getComputedStyle(p).lineHeight)]);")
        assert len(messages) == 1, messages
        text, height, line_height = messages[0]
        assert " ".join(LONG_MESSAGE.split()) in " ".join(text.split()), "the message is not shown in full"
        assert "(line 2 of your cell: `raise ValueError(" in " ".join(text.split()), text
        assert height > 2.5 * line_height, "the long message is not wrapped onto several lines"
        assert any("not written yet" in row for row in driver.execute_script(
            "return Array.from(document.querySelectorAll('div.output_area pre')).map(p => p.innerText);"))
        names = driver.execute_script("return Array.from(document.querySelectorAll('#toc a')).map(a => a.innerText);")
        assert [name for name in names if name.endswith(" check")] == [f"Exercise 1.{i} check" for i in (1, 2, 3, 4)]
        assert "Comment" not in names and "Exercise 1.2: comment" in names      # 1.2 unanswered: "No response."
    finally:
        driver.quit()
