"""The course notebooks ``chapters/*.ipynb``: they run, they are stored clean, and they match their sources.

* ``test_chapter_executes`` runs every chapter (a glob: new chapters are picked up) with nbclient in fast mode
  (``DPEDU_FAST=1`` in the kernel's environment, working directory ``chapters/``); every check cell of the
  reference solution must print "passed".
* ``test_student_checks_fail_until_written`` tests the *student* version
  (:func:`dpedu.course.exercises.student_notebook`): every check cell must fail with "not written yet", every stubbed exercise cell may raise only
  ``NotImplementedError``, and every other cell from the first exercise on must still run.

Both come from **one** execution of each chapter, in one kernel (:func:`_execute`), so that CI runs each chapter
once in fast mode (and once in full mode, in the book). At each exercise the kernel is put in the student's state
(the names every exercise so far defines hold the student's stubs; the exercise's own names are deleted first, so a
check cannot see the reference answer), the stubbed exercise cell and its check run, then the reference state comes
back and the reference exercise cell and its check run. Every other cell runs once, with the reference solutions
in scope, unless it can tell the two states apart: a cell whose source differs in the student copy, or that reads
(anywhere in its code, function bodies included) a name an exercise binds, or a name bound by such a cell, found
by :func:`dependent_cells` from the sources. Such a cell runs in the reference state, then again in the student's,
where it must not fail; a cell that reads none of those names runs the same code on the same values in both
versions, which is why running it once tests both. Cells before the first exercise are the same in both versions.
* ``test_committed_notebooks_are_clean`` / ``test_notebooks_match_their_sources`` are static and fast.

The executing tests are marked ``notebooks`` and skip (with the reason) only when the Adult files are absent.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from dpedu import datasets
from dpedu.course.exercises import BEGIN_SOLUTION, find_exercises, student_notebook

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS_DIR = ROOT / "chapters"
NOTEBOOKS = sorted(CHAPTERS_DIR.glob("*.ipynb"))
ADULT_FILES = ("adult.data", "adult.test")
CELL_TIMEOUT = 900          # seconds per cell; a fast-mode chapter takes well under a minute per cell
NOT_WRITTEN = "not written yet"


def _ids(path):
    return path.stem


def _has_adult(directory):
    return all((Path(directory) / name).is_file() or (Path(directory) / f"{name}.gz").is_file()
               for name in ADULT_FILES)


def _adult_dir():
    """The directory ``load_adult`` reads without downloading: $DPEDU_DATA, the project cache or the shipped copy."""
    candidates = [os.environ.get("DPEDU_DATA"), datasets.CACHE_DIR, datasets.PACKAGE_DIR]
    for directory in candidates:
        if directory and _has_adult(directory):
            return Path(directory)
    return None


def _kind(cell):
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if meta.get("solution"):
        return "exercise"
    if meta.get("grade"):
        return "check"
    return "code" if cell.cell_type == "code" else "markdown"


def _top_level_names(source):
    """Names a cell binds at top level (functions, classes, assignment targets, imports): what its stub must not
    inherit, and what a later cell may read."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With)):
            names += [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    return sorted(set(names))


def _read_names(source):
    """Every name a cell reads, anywhere in its code (function bodies and comprehensions included)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {"<unparsable>"}
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def dependent_cells(reference, student):
    """``(dependent, tainted)``: the indices of the code cells from the first exercise on (exercise and check cells
    aside) that can behave differently in the student copy, and the names whose values differ between the two
    states. Tainted: the names every exercise cell binds, then, to a fixed point, the names bound by any cell that
    reads a tainted name (its functions may call a stub later). Dependent: a cell that reads or binds a tainted
    name, whose source differs in the student copy, or that cannot be parsed."""
    kinds = [_kind(cell) for cell in reference.cells]
    tainted = {name for cell, kind in zip(reference.cells, kinds) if kind == "exercise"
               for name in _top_level_names(cell.source)}
    code = [(i, cell) for i, (cell, kind) in enumerate(zip(reference.cells, kinds)) if kind == "code"]
    while True:
        grown = tainted | {name for _, cell in code if _read_names(cell.source) & tainted
                           for name in _top_level_names(cell.source)}
        if grown == tainted:
            break
        tainted = grown
    first = kinds.index("exercise") if "exercise" in kinds else len(kinds)
    dependent = [i for i, cell in code if i > first and (_read_names(cell.source) & (tainted | {"<unparsable>"})
                                                         or set(_top_level_names(cell.source)) & tainted
                                                         or student.cells[i].source != cell.source)]
    return dependent, sorted(tainted)


def _error(cell):
    """(ename, evalue, traceback text) of the first error output of an executed cell, or None."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output.get("ename", ""), output.get("evalue", ""), "\n".join(output.get("traceback", []))
    return None


def _stdout(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


@dataclass
class Run:
    """What one execution of a chapter produced."""

    reference_error: str | None = None
    output_problems: list = field(default_factory=list)       # [(cell index, what is wrong)]
    reference_checks: list = field(default_factory=list)      # [(grade_id, stdout)]
    student_cells: list = field(default_factory=list)         # [(kind, label, error or None)]
    seconds_reference: float = 0.0
    seconds_student: float = 0.0


_RUNS: dict[Path, Run] = {}


# the kernel keeps the student's values of the tainted names here, and the reference values while a cell runs in the
# student's state (names no chapter uses)
_STATE = "_dpedu_test_state"


def _swap_code(names, to):
    """Kernel code that puts ``names`` in the student's state (``to="student"``: the reference values are kept aside)
    or back in the reference state (``to="reference"``)."""
    names = repr(list(names))
    if to == "student":
        return (f"{_STATE}['reference'] = {{_n: globals()[_n] for _n in {names} if _n in globals()}}\n"
                f"[globals().pop(_n, None) for _n in {names}]\n"
                f"globals().update({_STATE}['student'])")
    return (f"{_STATE}['student'].update({{_n: globals()[_n] for _n in {names} if _n in globals()}})\n"
            f"[{_STATE}['student'].pop(_n, None) for _n in {names} if _n not in globals()]\n"
            f"[globals().pop(_n, None) for _n in {names}]\n"
            f"globals().update({_STATE}['reference'])")


def _execute(path, adult_dir):
    """Run the chapter once: the reference notebook, with the student's stubbed exercises, their checks and the cells
    that depend on them run in the student's state beside it (see the module's docstring)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    reference = nbformat.read(path, as_version=4)
    student = student_notebook(reference)
    dependent, tainted = dependent_cells(reference, student)
    run = Run()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DPEDU_FAST", "1")               # inherited by the kernel process
        mp.setenv("DPEDU_DATA", str(adult_dir))    # read the local copy; never download in a test
        mp.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        client = NotebookClient(reference, timeout=CELL_TIMEOUT, kernel_name="python3",
                                resources={"metadata": {"path": str(CHAPTERS_DIR)}})

        def aside(cell, index):
            """Execute ``cell`` in the kernel, keeping the reference notebook's cell ``index`` (nbclient stores the
            cell it executes at its index)."""
            kept = reference.cells[index]
            try:
                client.execute_cell(cell, index)
            finally:
                reference.cells[index] = kept

        def hidden(source, index, what):
            cell = nbformat.v4.new_code_cell(source)
            aside(cell, index)
            _expect_no_error(cell, f"cell {index}: {what}")

        def as_student(cell, index, kind):
            start = time.perf_counter()
            client.allow_errors = True
            try:
                aside(cell, index)
            finally:
                client.allow_errors = False
                run.seconds_student += time.perf_counter() - start
            label = cell.metadata.get("nbgrader", {}).get("grade_id", f"cell {index}")
            run.student_cells.append((kind, label, _error(cell)))

        def as_reference(index):
            start = time.perf_counter()
            try:
                client.execute_cell(reference.cells[index], index)
            finally:
                run.seconds_reference += time.perf_counter() - start

        with client.setup_kernel():
            kinds = [_kind(cell) for cell in reference.cells]
            index = 0
            try:
                while index < len(reference.cells):
                    cell, kind = reference.cells[index], kinds[index]
                    if kind == "exercise" and index == kinds.index("exercise"):
                        # up to here both versions ran the same cells: the student's state starts as the reference's
                        hidden(f"{_STATE} = {{'student': {{_n: globals()[_n] for _n in {tainted!r} if _n in "
                               f"globals()}}, 'reference': {{}}}}", index, "the test's state")
                    if kind == "exercise":
                        names = _top_level_names(cell.source)
                        check = index + 1                     # find_exercises: a check cell follows each exercise
                        hidden(_swap_code(tainted, "student"), index, "the student's state")
                        hidden(f"[globals().pop(_n, None) for _n in {names!r}]", index, f"forgetting {names}")
                        as_student(student.cells[index], index, "exercise")
                        as_student(student.cells[check], check, "check")
                        hidden(_swap_code(tainted, "reference"), index, "the reference state")
                        as_reference(index)
                        as_reference(check)
                        run.reference_checks.append((reference.cells[check].metadata["nbgrader"]["grade_id"],
                                                     _stdout(reference.cells[check])))
                        index = check + 1
                        continue
                    if cell.cell_type == "code":
                        as_reference(index)
                        if index in dependent:
                            hidden(_swap_code(tainted, "student"), index, "the student's state")
                            as_student(student.cells[index], index, kind)
                            hidden(_swap_code(tainted, "reference"), index, "the reference state")
                    index += 1
            except CellExecutionError as exc:
                run.reference_error = f"cell {index} of the reference notebook failed:\n{exc}"
                return run
            run.output_problems = output_problems(reference)
            run.reference_error = _check_claims(client, path)
    return run


OUTPUT_WIDTH = 100                         # columns of a printed line: wider ones are cut at the edge of the page
SHOWS_WARNING = "# shows-warning"          # a cell that shows a warning on purpose: then only its message
_WARNING = re.compile(r"\b[A-Z]\w*(?:Warning|Error):")
_LOCATION = re.compile(r"\.py:\d+:|File \"")
_ABSOLUTE_PATH = re.compile(r"(?:/work/|/home/|/tmp/|/usr/|/opt/|site-packages|[A-Z]:\\\\)")
# a NumPy array printed as it is: brackets around numbers in numpy's 8-digit scientific notation, or a bare inf/nan
_RAW_ARRAY = re.compile(r"\[\s*(?:[-+]?(?:\d\.\d{8}e[+-]\d\d|inf|nan)\s+)+[^\]]*\]")


def output_problems(nb):
    """[(cell index, problem)] of the outputs a reader should never see: a warning (a stderr stream or a
    ``SomethingWarning:`` line), a traceback, an absolute path, a printed line wider than the page. A cell whose source contains ``# shows-warning``
    may show a warning, but only its message: no file, line or path."""
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if any("image/png" in o.get("data", {}) for o in cell.get("outputs", [])) and not _alt_text(cell):
            problems.append((index, "a figure without alt text (start its source cell with '# alt: ...')"))
        shows_warning = SHOWS_WARNING in cell.source
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "error":
                problems.append((index, f"an error: {output.get('ename')}"))
                continue
            if kind == "stream":
                text = output.get("text", "")
                if output.get("name") == "stderr" and not shows_warning:
                    problems.append((index, f"stderr output: {text[:120]!r}"))
            else:
                text = "\n".join(str(v) for k, v in output.get("data", {}).items() if k.startswith("text/"))
            if "Traceback (most recent call last)" in text:
                problems.append((index, f"a traceback: {text[:120]!r}"))
            if _WARNING.search(text) and not shows_warning:
                problems.append((index, f"a warning: {_WARNING.search(text).group()} ... (mark the cell "
                                        f"{SHOWS_WARNING!r} if it shows it on purpose)"))
            if kind == "stream" and _RAW_ARRAY.search(text):
                problems.append((index, f"a raw NumPy array (format its numbers, e.g. a table): "
                                        f"{_RAW_ARRAY.search(text).group()[:60]!r}"))
            wide = [line for line in text.splitlines() if len(line) > OUTPUT_WIDTH]
            if wide and kind == "stream":
                problems.append((index, f"a line of {len(wide[0])} columns (keep printed lines to {OUTPUT_WIDTH}): "
                                        f"{wide[0][:60]!r}..."))
            if _ABSOLUTE_PATH.search(text) or (shows_warning and _LOCATION.search(text)):
                line = next(l for l in text.splitlines() if _ABSOLUTE_PATH.search(l) or _LOCATION.search(l))
                problems.append((index, f"a path or source location: {line[:120]!r}"))
    return problems


def _alt_text(cell):
    """The alt text the book gives a cell's figure (``chapters/_build.py`` writes it from ``# alt: ...``)."""
    return cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt", "")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
def test_every_figure_says_what_it_shows(path):
    """Static: a cell that shows a figure has alt text of a sentence or more, not a file name."""
    nb = nbformat.read(path, as_version=4)
    missing = [index for index, cell in enumerate(nb.cells)
               if cell.cell_type == "code" and "plt.show()" in cell.source and len(_alt_text(cell).split()) < 8]
    assert not missing, f"{path.name}: cells {missing} show a figure without alt text ('# alt: ...' in the source)"


def _check_claims(client, path):
    """Run ``chapters/_claims/<chapter>.py`` in the chapter's kernel: the prose's claims, asserted on its variables."""
    claims = CHAPTERS_DIR / "_claims" / f"{path.stem}.py"
    if not claims.is_file():
        return f"{path.name}: no claims file {claims.relative_to(ROOT)} (see chapters/_claims/README.md)"
    cell = nbformat.v4.new_code_cell(claims.read_text(encoding="utf-8"))
    client.nb.cells.append(cell)            # nbclient stores the executed cell at its index: give it its own
    client.allow_errors = True
    try:
        client.execute_cell(cell, len(client.nb.cells) - 1)
    finally:
        client.allow_errors = False
        client.nb.cells.pop()
    error = _error(cell)
    return None if error is None else f"{path.name}: a claim of its prose is false ({claims.name}): {error[0]}: {error[1]}"


def _expect_no_error(cell, what):
    error = _error(cell)
    if error is not None:
        raise RuntimeError(f"{what}: {error[0]}: {error[1]}")


@pytest.fixture
def chapter_run():
    """Execute a chapter once (both tests use the same run); skip when the Adult data cannot be found."""
    adult_dir = _adult_dir()
    if adult_dir is None:
        pytest.skip(f"Adult data files not found ({', '.join(ADULT_FILES)}[.gz] in $DPEDU_DATA, "
                    f"{datasets.CACHE_DIR} or {datasets.PACKAGE_DIR}); the chapters need them")

    def get(path):
        if path not in _RUNS:
            _RUNS[path] = _execute(path, adult_dir)
        return _RUNS[path]

    return get


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
def test_chapter_executes(path, chapter_run):
    run = chapter_run(path)
    assert run.reference_error is None, run.reference_error
    assert not run.output_problems, f"{path.name}: outputs a reader should not see:\n  " + \
        "\n  ".join(f"cell {index}: {problem}" for index, problem in run.output_problems)
    for grade_id, out in run.reference_checks:
        assert "passed" in out, f"{path.name} {grade_id}: the reference solution's check printed {out!r}"
    print(f"{path.name}: reference run {run.seconds_reference:.1f} s")
    record_time(path, run.seconds_reference)


def record_time(path, seconds):
    """Add the chapter's fast-mode run time to the JSON file named by ``DPEDU_RECORD_TIMES``, if set (CI sets it;
    ``python chapters/_times.py --table --measured FILE`` prints the course map with these times)."""
    target = os.environ.get("DPEDU_RECORD_TIMES")
    if not target:
        return
    target = Path(target)
    times = json.loads(target.read_text(encoding="utf-8")) if target.is_file() else {}
    times[path.stem] = {"seconds": round(seconds, 1), "cpus": os.cpu_count(), "machine": platform.machine()}
    target.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n", encoding="utf-8")


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
def test_student_checks_fail_until_written(path, chapter_run):
    run = chapter_run(path)
    if run.reference_error is not None:
        pytest.fail(f"the reference notebook does not run, so its student version cannot be tested:\n"
                    f"{run.reference_error}")
    problems = []
    for kind, label, error in run.student_cells:
        if kind == "check":
            if error is None:
                problems.append(f"{label}: the check passed in the student copy (does it test the stub at all?)")
            elif NOT_WRITTEN not in error[1] + error[2]:
                problems.append(f"{label}: the check must fail with {NOT_WRITTEN!r}; it failed with "
                                f"{error[0]}: {error[1]}")
        elif kind == "exercise":
            if error is not None and error[0] != "NotImplementedError":
                problems.append(f"{label}: the stubbed exercise cell raised {error[0]}: {error[1]}")
        elif error is not None:
            problems.append(f"{label} (not an exercise): fails in the student copy with {error[0]}: {error[1]}")
    assert not problems, f"{path.name}, student version:\n  " + "\n  ".join(problems)
    print(f"{path.name}: student cells {run.seconds_student:.1f} s")


@pytest.mark.notebooks
def test_one_run_finds_a_cell_that_fails_only_in_the_student_copy(tmp_path, monkeypatch):
    """The single run of :func:`_execute` still sees what a separate run of the student copy would: a later cell
    that calls the exercise's function (directly, or through a helper defined before the exercise) fails in the
    student copy and is reported; a cell that reads no exercise name runs once; the stub and its check are tested
    in the student's state, the reference and its check in the reference state."""
    def code(source, kind=None, number="9.1"):
        cell = nbformat.v4.new_code_cell(source)
        if kind:
            grade_id = f"{kind}-{number.replace('.', '-')}"
            cell.metadata["nbgrader"] = {"solution": kind == "exercise", "grade": kind == "check", "points": 1,
                                         "grade_id": grade_id}
        return cell

    check = ("from dpedu.course.notebook import CheckFailed\ntry:\n    value = double(2)\nexcept NotImplementedError:\n"
             f"    raise CheckFailed({NOT_WRITTEN!r}) from None\nassert value == 4\nprint('passed')")
    nb = nbformat.v4.new_notebook(cells=[
        code("def helper():\n    return double(1)"),                                   # 0: before the exercise
        code("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION", "exercise"),  # 1
        code(check, "check"),                                                           # 2
        code("h = 1 + 1"),                                                              # 3: independent
        code("g = double(3)"),                                                          # 4: calls the stub
        code("k = helper()"),                                                           # 5: through the helper
        code("m = g + 1"),                                                              # 6: reads a value made by 4
    ])
    path = tmp_path / "99_probe.ipynb"
    nbformat.write(nb, path)
    reference = nbformat.read(path, as_version=4)
    dependent, tainted = dependent_cells(reference, student_notebook(reference))
    assert dependent == [4, 5, 6] and {"double", "helper", "g", "m", "k"} <= set(tainted)
    monkeypatch.setattr(sys.modules[__name__], "_check_claims", lambda client, path: None)
    run = _execute(path, _adult_dir() or datasets.PACKAGE_DIR)
    assert run.reference_error is None, run.reference_error
    assert [(g, "passed" in out) for g, out in run.reference_checks] == [("check-9-1", True)]
    students = {label: (kind, error and error[0]) for kind, label, error in run.student_cells}
    assert students["exercise-9-1"] == ("exercise", None)            # the stub defines double; calls raise
    assert students["check-9-1"] == ("check", "CheckFailed")
    assert students["cell 4"][1] == students["cell 5"][1] == "NotImplementedError"
    assert students["cell 6"][1] == "NameError" and "cell 3" not in students


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
def test_committed_notebooks_are_clean(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    dirty = [i for i, cell in enumerate(nb["cells"])
             if cell.get("cell_type") == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or execution counts; rebuild with chapters/_build.py"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
def test_student_copy_has_no_solutions(path):
    nb = nbformat.read(path, as_version=4)
    exercises = find_exercises(nb)                    # raises if an exercise has no markers or no check cell
    student = student_notebook(nb)
    leaked = [i for i, cell in enumerate(student.cells) if BEGIN_SOLUTION in cell.source]
    assert not leaked, f"{path.name}: solution markers left in student cells {leaked}"
    stubbed = [cell for cell in student.cells if _kind(cell) == "exercise"]
    assert len(stubbed) == len(exercises)
    assert all("raise NotImplementedError" in cell.source for cell in stubbed)


def test_notebooks_match_their_sources():
    result = subprocess.run([sys.executable, str(CHAPTERS_DIR / "_build.py"), "--check"], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr + result.stdout


@pytest.mark.notebooks
def test_failed_check_shows_its_hint_without_a_traceback(monkeypatch):
    """In a real kernel a wrong answer shows one line (the hint), no traceback frames, and the cell is an error
    (so nbgrader scores it 0 and nbclient stops); a right answer prints "passed"."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    cells = ["import numpy as np\nfrom dpedu.course import checks",
             "checks.check_L2_clip(lambda v, c: np.clip(v, -c, c))",
             "def helper(v, c):\n    raise NotImplementedError('stub')\nchecks.check_L2_clip(helper)",
             "checks.check_L2_clip(lambda v, c: v * np.minimum(1.0, c / np.maximum(np.linalg.norm(v, axis=-1, "
             "keepdims=True), 1e-300)))",
             "1 / 0"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    for index, hint in ((1, "you clipped coordinates one by one"), (2, NOT_WRITTEN)):
        ename, evalue, traceback = _error(nb.cells[index])
        assert ename == "CheckFailed" and hint in evalue
        lines = traceback.splitlines()
        assert len(lines) <= 3 and hint in traceback, traceback
        assert not any(marker in traceback for marker in ("Traceback", "File ", "---->", "Cell In")), traceback
    assert _error(nb.cells[3]) is None and _stdout(nb.cells[3]).startswith("passed")
    assert "ZeroDivisionError" in _error(nb.cells[4])[2] and len(_error(nb.cells[4])[2].splitlines()) > 3  # others: as usual

    strict = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells[:2]])
    with pytest.raises(CellExecutionError, match="check failed: you clipped coordinates"):
        NotebookClient(strict, timeout=120, kernel_name="python3").execute()


def test_progress_bar_follows_the_counted_messages(capsys):
    """progress_bar turns "[done/total] ..." and "audit: done/total ..." messages into a tqdm bar that closes at
    its total; other messages are shown beside it."""
    from dpedu.course.notebook import progress_bar

    bar = progress_bar("grid", disable=False)
    bar("non-private baseline ...")
    for done in (1, 2):
        bar(f"[{done}/4] epsilon = 0.5, seed {done}/2")
    assert (bar.bar.n, bar.bar.total) == (2, 4)
    bar("[4/4] epsilon = 1, seed 2/2")
    assert bar.bar.n == 4 and bar.bar.disable          # tqdm marks a closed bar disabled
    audit = progress_bar("audit", disable=False)
    audit("audit: 5/10 pairs of trainings (0.1 s)")
    assert (audit.bar.n, audit.bar.total) == (5, 10)
    assert "grid" in capsys.readouterr().err
    assert progress_bar("quiet", disable=True).bar.disable


def test_the_book_hides_progress_bars_and_a_typo_is_refused(monkeypatch):
    """DPEDU_PROGRESS=0 (set by docs/build.py and docs/conf.py) hides every bar, in full mode too: a finished bar
    is no result, and its Jupyter widget would load scripts from a CDN."""
    from dpedu.course.notebook import progress_bar, progress_wanted

    monkeypatch.setenv("DPEDU_FAST", "0")
    monkeypatch.setenv("DPEDU_PROGRESS", "0")
    assert progress_bar("book").bar.disable
    monkeypatch.setenv("DPEDU_PROGRESS", "1")
    assert not progress_bar("terminal").bar.disable
    monkeypatch.delenv("DPEDU_PROGRESS")
    assert progress_wanted() and not progress_bar("default").bar.disable
    monkeypatch.setenv("DPEDU_PROGRESS", "nope")
    with pytest.raises(ValueError, match="DPEDU_PROGRESS must be one of"):
        progress_bar("typo")


def test_feedback_is_not_installed_outside_ipython():
    from dpedu.course.notebook import install_feedback

    assert install_feedback() is False or "IPython" in sys.modules


def test_output_problems_finds_warnings_tracebacks_and_paths():
    def cell(source, *outputs):
        c = nbformat.v4.new_code_cell(source)
        c.outputs = [nbformat.from_dict(o) for o in outputs]
        return c

    def stream(text, name="stdout"):
        return {"output_type": "stream", "name": name, "text": text}

    warning = ("/work/x/dpedu/experiments/sweeps.py:79: EpsilonTargetWarning: noise_multiplier=1 wins over "
               "epsilon=1\n  accuracies, fitted = _grid(")
    nb = nbformat.v4.new_notebook(cells=[
        cell("x = 1", stream("fine: 0.5 at delta = 1e-05\n")),
        cell("fit()", stream(warning, "stderr")),
        cell("print(path)", stream("saved to /tmp/figure.png\n")),
        cell("bad()", {"output_type": "error", "ename": "ValueError", "evalue": "x", "traceback": []}),
        cell("# shows-warning\nprint(message)", stream("EpsilonTargetWarning: noise_multiplier=1 wins\n")),
        cell("# shows-warning\nfit()", stream(warning, "stderr")),
        cell("display()", {"output_type": "display_data", "metadata": {},
                           "data": {"text/plain": "UserWarning: careful"}}),
        cell("print(table)", stream("x" * 101 + "\n")),
        cell("print(naive)", stream("naive formula  [          inf 1.00000454e+01 6.93147181e-01 4.53988992e-05]\n")),
        cell("print(rounded)", stream("canary x = [0. 0. 0. 5.]  label 1\n")),
    ])
    found = output_problems(nb)
    assert sorted({index for index, _ in found}) == [1, 2, 3, 5, 6, 7, 8], found
    assert any("raw NumPy array" in p for i, p in found if i == 8)
    assert any("stderr" in p for i, p in found if i == 1) and any("warning" in p for i, p in found if i == 1)
    assert [p for i, p in found if i == 5] and all("path" in p for i, p in found if i == 5)


def _times_module():
    if "chapters_times" in sys.modules:
        return sys.modules["chapters_times"]
    spec = importlib.util.spec_from_file_location("chapters_times", CHAPTERS_DIR / "_times.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module              # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_course_map_lists_every_chapter():
    """chapters/_times.py's map names every chapter source once, each after its prerequisites (a chapter added later
    keeps the next free number and takes its place in the map: 12 follows 9)."""
    times = _times_module()
    numbers = [c.number for c in times.COURSE]
    sources = sorted(p.name[:2] for p in (CHAPTERS_DIR / "_src").glob("[0-9][0-9]_*.py"))
    assert len(set(numbers)) == len(numbers) and set(sources) <= set(numbers), (numbers, sources)
    for position, chapter in enumerate(times.COURSE):
        needed = {int(n) for n in re.findall(r"\b\d+\b", chapter.prerequisites)}
        assert needed <= {int(c.number) for c in times.COURSE[:position]}, (chapter.number, chapter.prerequisites)


def test_chapter_times_and_syllabus_are_current():
    """Each chapter's prerequisites-and-time lines and docs/syllabus.md are what chapters/_times.py computes from
    the sources and the recorded run times (a chapter whose prose grew gets its new study time)."""
    times = _times_module()
    recorded = times.load()
    stale = [c.number for c in times.COURSE if times.source_of(c.number) is not None
             and times.stamped(times.source_of(c.number).read_text(encoding="utf-8"), c, recorded)
             != times.source_of(c.number).read_text(encoding="utf-8")]
    assert not stale, f"chapters {stale}: run `python chapters/_times.py --stamp` (then chapters/_build.py)"
    assert (ROOT / "docs" / "syllabus.md").read_text(encoding="utf-8") == times.syllabus(recorded), \
        "docs/syllabus.md is out of date: run `python chapters/_times.py --stamp`"


def test_the_syllabus_grades_every_exercise_of_the_notebooks():
    """docs/syllabus.md's grading table lists, chapter by chapter, exactly the exercises of the committed notebooks
    (:func:`find_exercises`, a second reading beside the sources ``_times.py`` parses) with the points nbgrader gives
    their check cells; the points, shares and weights add up, and so does the project's rubric."""
    text = (ROOT / "docs" / "syllabus.md").read_text(encoding="utf-8")
    grading = text.split("## Grading", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:-1] for line in grading.splitlines() if line.startswith("| ")]
    exercise_rows = [r for r in rows[1:] if r[0].strip()[:1].isdigit() and len(r) == 4]
    listed = {}
    for chapter, exercises, points, share in exercise_rows:
        found = re.findall(r"(\d+\.\d+) [^;]*? \((\d+)\)(?:;|\s*$)", exercises)
        assert sum(int(p) for _, p in found) == int(points), (chapter, exercises, points)
        listed[int(chapter.split(".")[0])] = [(number, int(p)) for number, p in found]
    expected = {}
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        points = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"] for c in nb.cells
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade")}
        expected[int(path.name[:2])] = [(e.grade_id[len("exercise-"):].replace("-", "."),
                                         points[e.grade_id.replace("exercise-", "check-")]) for e in find_exercises(nb)]
    assert listed == expected
    total = sum(p for exercises in expected.values() for _, p in exercises)
    assert f"| total | {sum(map(len, expected.values()))} exercises | {total} | 100 % |" in grading
    for chapter, _, points, share in exercise_rows:
        assert share.strip() == f"{100 * int(points) / total:.1f} %", (chapter, share)
    weights = re.findall(r"\*\*(?:Exercises|Project) \((\d+) %\)", grading)
    assert len(weights) == 2 and sum(map(int, weights)) == 100, weights
    rubric = [r for r in rows if len(r) == 3 and r[1].strip().isdigit() and r[0].strip() != "total"]
    assert len(rubric) >= 4 and f"| total | {sum(int(r[1]) for r in rubric)} | |" in grading


def test_recorded_times_are_measurements():
    """Every recorded time names the machine it was measured on; none is below a second (an invented 0)."""
    recorded = _times_module().load()
    for mode in ("fast", "full"):
        for chapter, entry in recorded.get(mode, {}).items():
            assert entry["seconds"] >= 1 and entry["cpus"] >= 1, (mode, chapter, entry)


_RAW_TEX = re.compile(r"\\(?:frac|sum|text|mathrm|mathcal|varepsilon|epsilon|delta|Delta|alpha|lambda|sqrt|cdot|"
                      r"le|ge|ln|log|exp|lceil|theta|sigma)\b|\^\{|_\{")


def _chapter_listings(source):
    """(expression, the listing show_source prints) for every ``show_source(...)`` of a chapter source."""
    from dpedu.course.listing import CHAPTER_LISTING_WIDTH, SourceListing

    text = source.read_text(encoding="utf-8")
    namespace = {}
    imports = [node for node in ast.parse(text).body if isinstance(node, (ast.Import, ast.ImportFrom))]
    exec(compile(ast.Module(body=imports, type_ignores=[]), source.name, "exec"), namespace)
    return [(expression, SourceListing(eval(expression, namespace), width=CHAPTER_LISTING_WIDTH).code)
            for expression in re.findall(r"show_source\(([\w.]+)\)", text)]


@pytest.mark.parametrize("source", sorted((CHAPTERS_DIR / "_src").glob("[0-9][0-9]_*.py")), ids=lambda p: p.stem)
def test_listings_a_chapter_shows_have_no_raw_tex(source):
    """show_source prints a docstring's summary line: it must read as text (words or Unicode), not as TeX."""
    raw = [f"{expression}: {line.strip()[:90]}" for expression, code in _chapter_listings(source)
           for line in code.splitlines() if _RAW_TEX.search(line)]
    assert not raw, f"{source.name}: listings print raw TeX:\n  " + "\n  ".join(raw)


@pytest.mark.parametrize("source", sorted((CHAPTERS_DIR / "_src").glob("[0-9][0-9]_*.py")), ids=lambda p: p.stem)
def test_listings_a_chapter_shows_fit_the_books_code_column(source):
    """show_source wraps at CHAPTER_LISTING_WIDTH; a line the wrapper cannot break would wrap on the page instead."""
    from dpedu.course.listing import CHAPTER_LISTING_WIDTH

    wide = [f"{expression}: {line}" for expression, code in _chapter_listings(source)
            for line in code.splitlines() if len(line) > CHAPTER_LISTING_WIDTH]
    assert not wide, f"{source.name}: listing lines wider than {CHAPTER_LISTING_WIDTH} columns:\n  " + "\n  ".join(wide)


def test_recorded_run_times_are_printed_by_the_map(tmp_path, monkeypatch, capsys):
    """What CI does: the notebook test records each chapter's seconds, and ``_times.py --table --measured`` prints
    the course map with those seconds (not the ones in chapters/_times.json)."""
    target = tmp_path / "ci_times.json"
    monkeypatch.setenv("DPEDU_RECORD_TIMES", str(target))
    record_time(CHAPTERS_DIR / "01_logistic_regression.ipynb", 1234.5)
    record_time(CHAPTERS_DIR / "03_composition.ipynb", 7.25)
    recorded = json.loads(target.read_text())
    assert recorded["01_logistic_regression"]["seconds"] == 1234.5 and len(recorded) == 2
    times = _times_module()
    assert times.main(["--table", "--measured", str(target)]) == 0
    printed = capsys.readouterr().out
    rows = {line.split("|")[1].strip().split(".")[0]: line for line in printed.splitlines() if line.startswith("| ")}
    assert "20.6 min" in rows["1"] and "| 7 s |" in rows["3"] and "not yet measured" in rows["2"].split("|")[6]
    with pytest.raises(SystemExit):
        times.main(["--table", "--measured", str(tmp_path / "missing.json")])


def test_book_build_run_times_are_printed_as_the_full_mode(tmp_path, capsys):
    """What CI does for the full mode: ``docs/build.py --record-times FILE`` writes each chapter's seconds, and
    ``_times.py --table --measured-full FILE`` prints them in the full-mode column, saying how they were run."""
    spec = importlib.util.spec_from_file_location("dpedu_book_build", CHAPTERS_DIR.parent / "docs" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    target = tmp_path / "ci_full_times.json"
    build.record_times(target, {"04_dp_sgd": 312.25, "00_what_dp_promises": 9.0}, jobs=2)
    recorded = json.loads(target.read_text())
    assert recorded["04_dp_sgd"]["seconds"] == 312.2 and recorded["04_dp_sgd"]["side_by_side"] == 2
    times = _times_module()
    assert times.main(["--table", "--measured-full", str(target)]) == 0
    printed = capsys.readouterr().out
    assert "full mode: measured by this book build (2 chapters, 2 side by side, one BLAS thread each)" in printed
    rows = {line.split("|")[1].strip().split(".")[0]: line for line in printed.splitlines() if line.startswith("| ")}
    assert rows["4"].split("|")[7].strip() == "5.2 min" and rows["0"].split("|")[7].strip() == "9 s"
    assert rows["1"].split("|")[7].strip() == "not yet measured"
    with pytest.raises(SystemExit):
        times.main(["--measured-full", str(target)])            # goes with --table
