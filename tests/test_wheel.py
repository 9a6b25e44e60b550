"""The package as a user installs it: the wheel, with the instructor extra, in a clean virtual environment.

The wheel is built from a copy of the files a source distribution holds (``tests/conftest.py``: pyproject.toml,
setup.py, MANIFEST.in, README.md, LICENSE, dpedu/, and the course it ships: the chapter notebooks, docs/*.md and the
notes' figures), installed with ``pip install "<wheel>[instructor]"`` into a fresh venv (no system site-packages),
and run from empty temporary directories with ``PYTHONPATH`` unset, so nothing can come from the repository:

* ``python -m dpedu demo`` (the Adult files shipped inside the wheel);
* a student's start: ``python -m dpedu chapters DIR --student`` writes the chapters with their ``reference/``;
* an instructor's round trip, each step timed and printed: ``python -m dpedu course-kit`` in an empty directory,
  the kit moved elsewhere (it holds no absolute path), ``nbgrader generate_assignment``, ``nbgrader autograde`` of
  one submission (the reference solution, plus a cell that prints where the kernel's dpedu lives), ``nbgrader
  generate_feedback``; the submission gets full marks, every check passes, and the feedback page carries the
  sections its links point at.

The venv is made once per session (``instructor_venv`` in conftest.py) and shared with tests/test_course_links.py,
which requests the links of the chapters written here from the venv's own Jupyter server.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT, run_checked

RUNTIME = {"numpy", "scipy", "matplotlib", "scikit-learn", "joblib", "tqdm"}
ROUND_TRIP_CHAPTER = "00_what_dp_promises"          # the shortest chapter: the round trip runs it once, graded

pytestmark = pytest.mark.slow


def test_the_wheel_ships_the_data_and_the_course_and_declares_only_runtime_dependencies(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    for data in ("adult.data.gz", "adult.test.gz", "adult.names", "README.txt"):
        assert f"dpedu/data/adult/{data}" in names, data
    assert not any(name.startswith(("tests/", "chapters/", "docs/")) for name in names)
    shipped = "dpedu/course/_shipped/"
    chapters = sorted(p.name for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    assert sorted(n[len(shipped + "chapters/"):] for n in names if n.startswith(shipped + "chapters/")) == chapters
    assert shipped + "docs/math.md" in names
    figures = sorted(p.name for p in (ROOT / "docs" / "_static" / "notes").glob("*.png"))
    assert figures and all(f"{shipped}docs/_static/notes/{name}" in names for name in figures)
    required = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    unconditional = {req.split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
                     for req in required if "extra ==" not in req}
    assert unconditional == RUNTIME, unconditional
    extras = {line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Provides-Extra:")}
    assert extras == {"course", "book", "instructor", "dev"}, extras


def _where(python, env, cwd):
    out = run_checked([str(python), "-c", "import dpedu, sys; print(dpedu.__file__); print(sys.prefix)"], cwd=cwd,
                      env=env).stdout.split()
    return Path(out[0]), Path(out[1])


def test_a_student_starts_from_pip_install(instructor_venv, tmp_path):
    python, env, _ = instructor_venv
    work = tmp_path / "work"               # an empty directory: nothing of the repository is importable here
    work.mkdir()
    dpedu_file, prefix = _where(python, env, work)
    assert dpedu_file.is_relative_to(prefix) and not dpedu_file.is_relative_to(ROOT), dpedu_file
    demo = run_checked([str(python), "-m", "dpedu", "demo"], cwd=work, env=env).stdout
    assert "accuracy" in demo.lower(), demo[-2000:]
    run_checked([str(python), "-m", "dpedu", "chapters", "my-course", "--student"], cwd=work, env=env)
    copies = sorted(p.name for p in (work / "my-course").glob("*.ipynb"))
    assert copies == sorted(p.name for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    assert (work / "my-course" / "reference" / "math.md").is_file()
    text = (work / "my-course" / copies[2]).read_text()
    assert "NotImplementedError" in text and "site-packages" not in text and "../docs/" not in text


def test_an_instructor_grades_a_course_from_pip_install(instructor_venv, tmp_path, capsys):
    """course-kit in an empty directory, the kit moved, generate -> autograde -> feedback with the venv's nbgrader;
    the times of each step (with the venv's) are printed."""
    python, env, seconds = instructor_venv
    nbgrader, name = python.parent / "nbgrader", ROUND_TRIP_CHAPTER
    times = dict(seconds)

    def timed(step, command, cwd):
        start = time.perf_counter()
        result = run_checked(command, cwd=cwd, env=env)
        times[step] = time.perf_counter() - start
        return result

    made = tmp_path / "made-here"
    made.mkdir()
    out = timed("course-kit", [str(python), "-m", "dpedu", "course-kit", "course"], made).stdout
    count = len(list((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")))
    assert f"with {count} assignment(s)" in out, out
    course = shutil.move(str(made / "course"), str(tmp_path / "moved" / "course"))   # no path of made-here left
    course = Path(course)
    assert not made.joinpath("course").exists()
    timed("generate_assignment", [str(nbgrader), "generate_assignment", name], course)
    released = course / "release" / name / f"{name}.ipynb"
    assert released.is_file() and (course / "release" / name / "reference" / "math.md").is_file()

    nb = json.loads((course / "source" / name / f"{name}.ipynb").read_text())
    nb["cells"].append({"cell_type": "code", "id": "where", "metadata": {}, "execution_count": None, "outputs": [],
                        "source": "import dpedu\nprint('kernel dpedu:', dpedu.__file__)"})
    submitted = course / "submitted" / "student" / name
    submitted.mkdir(parents=True)
    (submitted / f"{name}.ipynb").write_text(json.dumps(nb))
    timed("autograde", [str(nbgrader), "autograde", name], course)
    timed("generate_feedback", [str(nbgrader), "generate_feedback", name], course)

    graded = nbformat.read(course / "autograded" / "student" / name / f"{name}.ipynb", as_version=4)
    errors = [c for c in graded.cells if any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    assert not errors, errors[0]
    checks = [c for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert checks and all("passed" in "".join(o.get("text", "") for o in c.outputs) for c in checks)
    kernel_dpedu = "".join(o.get("text", "") for o in graded.cells[-1].outputs).split("kernel dpedu:")[1]
    assert Path(kernel_dpedu.split()[0]).is_relative_to(python.parent.parent), kernel_dpedu
    page = (course / "feedback" / "student" / name / f"{name}.html").read_text()
    score = re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)", page)
    assert score and score[1] == score[2] and float(score[2]) == len(checks), score and score.groups()
    targets = re.findall(r'href="#(dpedu-reference-[^"]+)"', page)
    assert targets and all(f'id="{target}"' in page for target in targets)
    for place in (str(made), str(ROOT)):
        assert not [p for p in course.rglob("*.py") if place in p.read_text()], place
    with capsys.disabled():
        print(f"\nwheel round trip ({os.cpu_count()} CPUs; chapter {name}): "
              + ", ".join(f"{step} {value:.1f} s" for step, value in times.items()))
