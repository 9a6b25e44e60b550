"""The chapters as a student reads them (static and fast: nothing is executed).

* No answer before its exercise: in the *student* copy of a chapter (``student_notebook``, what
  ``python -m dpedu strip-solutions`` writes), no cell before an exercise shows the code of what that exercise
  asks for -- by ``show_source``, ``inspect.getsource``, ``??`` or a link to the source. "What it asks for" is
  every name the exercise cell defines (``def`` and ``class``), dpedu's own implementation of it (the
  ``COUNTERPARTS`` below, for exercises that name it differently), and any shown source containing two lines
  of the reference solution. Nor does any cell before an exercise *run* it: no call of a function the exercise
  defines, of dpedu's counterpart (the exercise's row in ``dpedu.course.checks.guard.EXERCISES``, matched by the object
  or, for a method such as ``curve.best_tpr``, by its name), and no expression of the shape of the reference
  solution's (``z * C / (q * n)`` is Exercise 7.1's ``noise_multiplier * clip_norm / (sampling_rate *
  dataset_size)``: the names of variables may differ, the operations and the library functions may not). Nor
  a call of a bigger dpedu function that returns what a counterpart computes (``plan_dp_sgd(...).event`` is
  Exercise 10.1's event, ``canary_audit(...)`` holds Exercise 9.3's bound: the callers are found in dpedu's
  source by :mod:`dpedu.course.callgraph`), nor a read of a counterpart that is a property
  (``plan.gradient_noise_multiplier``), unless :data:`NOT_THE_ANSWER` says why that call shows no answer. What
  an exercise asks for is given by examples written in the text instead. One call is not a run: dpedu's
  version of an *earlier* exercise's answer (its ``COUNTERPARTS`` row), called below that exercise -- the
  student has written it by then (Exercise 3.4 inverts 3.2's advanced composition).
* Every formula in math mode: the markdown of the chapters (their markdown cells) and of ``docs/*.md`` has no
  raw ``^{``, ``_{``, ``\\frac``, ``\\sum``, ``Σ_``/``Σᵢ`` or unicode subscript/superscript digits outside
  ``$...$``, ``$$...$$``, inline code and fenced code blocks: those only typeset in math mode.
* Code that fits the book's column: no line of a chapter's code cell is longer than 100 characters. The book's
  code column holds 102 from a window of 1152 px on (``docs/_static/book.css``; ``tests/test_book.py`` measures
  it); a longer line wraps mid-token.
"""

from __future__ import annotations

import ast
import copy
import functools
import importlib
import inspect
import re
from pathlib import Path

import nbformat
import pytest

from dpedu.course.callgraph import code_of, returning_callers
from dpedu.course.checks.guard import EXERCISES
from dpedu.course.exercises import BEGIN_SOLUTION, END_SOLUTION, student_notebook

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
DOCS = sorted((ROOT / "docs").glob("*.md"))

# Exercises whose answer dpedu implements under another name: showing that function before the exercise shows
# the answer. (Exercises that reuse dpedu's own name are found from the exercise cell itself.)
COUNTERPARTS = {
    "1.1": ["dpedu.textbook.models.logistic.per_example_loss", "dpedu.textbook.models.logistic.loss"],
    "1.2": ["dpedu.textbook.models.logistic.per_example_gradients", "dpedu.textbook.models.logistic.gradient"],
    "1.3": ["dpedu.textbook.training.gradient_descent"],
    "1.4": ["dpedu.textbook.models.logistic.accuracy"],
    "2.3": ["dpedu.textbook.mechanisms.laplace_mechanism"],
    "2.4": ["dpedu.textbook.mechanisms.gaussian_noise_multiplier"],
    "2.5": ["dpedu.textbook.training.noisy_gradient_descent", "dpedu.textbook.models.logistic.clipped_gradient_sum"],
    "3.2": ["dpedu.accountants.advanced.advanced_composition"],
    "3.4": ["dpedu.accountants.advanced.advanced_composition"],     # its source shows the formula 3.4 inverts
    "4.2": ["dpedu.textbook.models.logistic.clipped_gradient_sum"],
    "4.3": ["dpedu.textbook.training.dp_sgd_step", "dpedu.textbook.training.sgd.dp_sgd_step"],
    "4.4": ["dpedu.ground.events.steps_from_epochs"],
    "4.5": ["dpedu.ground.events.steps_from_epochs", "dpedu.textbook.training.plan.plan_dp_sgd"],
    "10.1": ["dpedu.lab.experiments.relations.scheme_events"],
    "5.1": ["dpedu.accountants.moments.event_log_moments"],
    "6.2": ["dpedu.accountants.proactive.minimum_steps"],
    "6.3": ["dpedu.accountants.proactive.proactive_conditions"],
    "8.1": ["dpedu.accountants.tradeoff.gaussian_tradeoff"],
    "8.2": ["dpedu.accountants.tradeoff.epsilon_delta_tradeoff"],
    "9.1": ["dpedu.lab.audit.epsilon_from_rates"],
    "9.2": ["dpedu.lab.audit.statistics.clopper_pearson"],
    "9.3": ["dpedu.lab.audit.epsilon_lower_bound"],
    "9.5": ["dpedu.lab.audit.epsilon_from_mu"],
    "9.6": ["dpedu.lab.audit.one_run_epsilon_lower_bound"],
    "11.1": ["dpedu.textbook.learners.convex.output_perturbation_sensitivity"],
    "11.2": ["dpedu.textbook.learners.factorization.square_root_coefficients"],
    "11.3": ["dpedu.textbook.learners.factorization.sensitivity"],
}


def _resolve(dotted):
    """The object named ``package.module.attr`` (an attribute path after the longest importable module)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


def _exercise_number(cell):
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
    match = re.fullmatch(r"exercise-(\d+)-(\d+)", grade_id)
    return f"{match[1]}.{match[2]}" if match and cell.metadata["nbgrader"].get("solution") else None


def _defined_names(source):
    return {node.name for node in ast.parse(source).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def _solution_lines(source):
    """The substantial lines of a reference solution (what a reveal would show), whitespace-normalised."""
    lines, inside = [], False
    for line in source.split("\n"):
        if line.strip() == BEGIN_SOLUTION:
            inside = True
        elif line.strip() == END_SOLUTION:
            inside = False
        elif inside:
            text = " ".join(line.split())
            if len(text) >= 20 and not text.startswith(("#", "from ", "import ")):
                lines.append(text)
    return lines


def _shown_objects(cell, namespace):
    """[(label, object or None)] of what a code cell displays as source: show_source(x), inspect.getsource(x), x??."""
    shown = []
    for line in cell.source.split("\n"):
        match = re.match(r"^\s*([\w.]+)\s*\?\?\s*$", line)
        if match:
            shown.append(match[1])
    try:
        tree = ast.parse("\n".join(l for l in cell.source.split("\n") if not l.rstrip().endswith("??")))
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = ast.unparse(node.func)
            if func.split(".")[-1] in ("show_source", "getsource", "getsourcelines"):
                shown.append(ast.unparse(node.args[0]))
    result = []
    for label in shown:
        try:
            obj = eval(label, namespace)                       # noqa: S307 -- names imported by the chapter
        except Exception:
            obj = None
        result.append((label, obj))
    return result


def _imports(cell, namespace):
    """Run the cell's top-level imports in ``namespace`` (only imports: nothing else of the chapter runs)."""
    try:
        tree = ast.parse(cell.source)
    except SyntaxError:
        return
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            exec(compile(ast.Module(body=[node], type_ignores=[]), "<chapter imports>", "exec"), namespace)


_SOURCE_LINK = re.compile(r"\]\((?P<target>[^)\s]*(?:_modules/|/blob/|\.py\b)[^)\s]*)\)")


def _linked_text(target):
    """The text of a linked dpedu source file (``../dpedu/x.py``, ``.../blob/main/dpedu/x.py``,
    ``_modules/dpedu/x.html``), or "" when it is not one of ours."""
    for start in (m.start() for m in re.finditer(r"dpedu/", target)):
        match = re.match(r"(dpedu/[\w/]+)\.(?:py|html)", target[start:])
        if match and (ROOT / f"{match[1]}.py").is_file():
            return (ROOT / f"{match[1]}.py").read_text(encoding="utf-8")
    return ""


def _canonical(node, imported):
    """``node``'s source with every name that the chapter did not import replaced by a numbered placeholder (in
    order of first use) and numbers written as floats: ``z * C / (q * n)`` -> ``_0 * _1 / (_2 * _3)``."""
    names = {}

    class Abstract(ast.NodeTransformer):
        def visit_Name(self, name):
            if name.id in imported:
                return name
            return ast.copy_location(ast.Name(id=names.setdefault(name.id, f"_{len(names)}"), ctx=name.ctx), name)

        def visit_Constant(self, constant):
            if isinstance(constant.value, (int, float)) and not isinstance(constant.value, bool):
                return ast.copy_location(ast.Constant(value=float(constant.value)), constant)
            return constant

    return ast.unparse(Abstract().visit(copy.deepcopy(node)))


def _operations(node):
    return sum(isinstance(n, (ast.BinOp, ast.Call, ast.Compare, ast.BoolOp, ast.UnaryOp)) for n in ast.walk(node))


def solution_shapes(source, imported):
    """The canonical forms of the expressions the reference solution returns or assigns (three operations or more)."""
    lines, inside, region = source.split("\n"), False, set()
    for number, line in enumerate(lines, start=1):
        if line.strip() == BEGIN_SOLUTION:
            inside = True
        elif line.strip() == END_SOLUTION:
            inside = False
        elif inside:
            region.add(number)
    shapes = set()
    for node in ast.walk(ast.parse(source)):
        value = getattr(node, "value", None) if isinstance(node, (ast.Return, ast.Assign)) else None
        if value is not None and node.lineno in region and _operations(value) >= 3:
            shapes.add(_canonical(value, imported))
    return shapes


def _runs(cell, namespace):
    """[(call or expression source, resolved callee or None, callee's last name, canonical form)] of a code cell."""
    try:
        tree = ast.parse("\n".join(l for l in cell.source.split("\n") if not l.rstrip().endswith("??")))
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or _operations(node) < 1:
            continue
        callee, last = None, None
        if isinstance(node, ast.Call):
            label = ast.unparse(node.func)
            last = label.rsplit(".", 1)[-1]
            try:
                callee = eval(label, namespace)                       # noqa: S307 -- names the chapter imported
            except Exception:
                callee = None
        found.append((ast.unparse(node), callee, last, _canonical(node, namespace) if _operations(node) >= 3 else None))
    return found


# Calls of a counterpart's caller that do not compute the exercise's answer, though their result holds what the
# counterpart returned: {(exercise, caller's dotted name, a fragment of the call): why}. An entry no chapter uses
# fails test_every_allowed_caller_is_used.
NOT_THE_ANSWER = {
    ("2.3", "dpedu.textbook.training.full_batch.run_noisy_gradient_descent", "run_noisy_gradient_descent("):
        "its result holds the run's noisy count, a random number the chapter never prints",
    ("2.4", "dpedu.textbook.training.full_batch.plan_noisy_gradient_descent", "plan_noisy_gradient_descent("):
        "the plan holds the classic z of (0.1, 1e-5), which the text gives as an example (48.448) before Exercise 2.4",
    ("4.4", "dpedu.textbook.training.sgd.dp_sgd", "dp_sgd("):
        "dp_sgd is given T and z; its plan neither counts steps from epochs nor accounts epsilon",
    ("4.5", "dpedu.textbook.training.sgd.dp_sgd", "dp_sgd("):
        "dp_sgd is given q and T; its plan does not derive them from a batch size and epochs",
    ("5.3", "dpedu.ground.gaussian.gaussian_epsilon_exact", "gaussian_epsilon_exact("):
        "it searches for the epsilon of one Gaussian with the one search; its result is that epsilon, not the "
        "smallest feasible z the exercise searches for",
    ("10.1", "dpedu.textbook.training.plan.plan_dp_sgd", "sampling='shuffle'"):
        "a shuffled plan records ShuffledBatchGaussianEvent, not the fixed-size event the exercise asks for",
}


@functools.lru_cache(maxsize=None)
def answer_callers(number):
    """``{code object: dotted name}``: the dpedu functions that return what a counterpart of ``number`` computes."""
    return returning_callers([_resolve(name) for name in EXERCISES[number].counterparts])


def _properties(number):
    """Names of the counterparts of ``number`` that are properties: reading one computes the answer."""
    names = set()
    for dotted in EXERCISES[number].counterparts:
        owner, _, attribute = dotted.rpartition(".")
        if isinstance(inspect.getattr_static(_resolve(owner), attribute, None), property):
            names.add(attribute)
    return names


def _read_attributes(cell):
    """[(attribute name, source)] of the attributes a code cell reads (``plan.gradient_noise_multiplier``)."""
    try:
        tree = ast.parse("\n".join(l for l in cell.source.split("\n") if not l.rstrip().endswith("??")))
    except SyntaxError:
        return []
    return [(node.attr, ast.unparse(node)) for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)]


def runs_before(nb, chapter=None, allowed=None):
    """Every (cell index, exercise, what) where a cell before an exercise runs what the exercise asks for: a call
    of a function the exercise defines or of dpedu's counterpart; a call of a dpedu function that returns what a
    counterpart computes (:func:`dpedu.course.callgraph.returning_callers`: ``plan_dp_sgd(...).event``,
    ``canary_audit(...)``); a read of a counterpart that is a property; an expression of the solution's shape.

    Not counted: a call, below an earlier exercise, of dpedu's version of *that* exercise's answer (its
    ``COUNTERPARTS`` row and its guard counterparts) or of their callers. The student has written it by then, and a
    later exercise that builds on it lists it among its counterparts only so that its check refuses it (8.3 takes
    the best of 8.2's curves). Nor the calls of ``allowed`` (default :data:`NOT_THE_ANSWER`), each with its reason;
    ``chapter`` receives the (exercise, caller, fragment) keys that were used.
    """
    allowed = NOT_THE_ANSWER if allowed is None else allowed
    namespace, seen, reads, problems, written = {}, [], [], [], []   # written: (exercise's index, object or code)
    for index, cell in enumerate(nb.cells):
        number = _exercise_number(cell)
        if number is not None:
            asked = _defined_names(cell.source)
            counterparts = EXERCISES[number].counterparts if number in EXERCISES else ()
            objects = [_resolve(name) for name in counterparts]
            methods = {name.rsplit(".", 1)[-1] for name in counterparts if name.rsplit(".", 2)[-2][:1].isupper()}
            callers = answer_callers(number) if number in EXERCISES else {}
            properties = _properties(number) if number in EXERCISES else set()
            shapes = solution_shapes(cell.source, namespace)
            for where, text, callee, last, canonical in seen:
                code = code_of(callee) if callee is not None else None
                if callee is not None and any((callee is obj or code is obj) and above < where
                                              for above, obj in written):
                    continue
                direct = next((name for name, obj in zip(counterparts, objects) if callee is not None and callee is obj),
                              None)
                caller = callers.get(code) if code is not None else None
                key = next(((n, name, fragment) for (n, name, fragment) in allowed
                            if n == number and name in (direct, caller) and fragment in text), None)
                if key is not None:
                    if chapter is not None:
                        chapter.add(key)
                    continue
                if direct is not None:
                    what = f"{text} (dpedu's version of the answer)"
                elif caller is not None:
                    what = f"{text} (calls {caller}, which returns what {number}'s answer computes)"
                elif last in asked:
                    what = f"{text} (calls the function the exercise writes)"
                elif callee is None and last in methods:
                    what = f"{text} (dpedu's version of the answer, a method)"
                elif canonical is not None and canonical in shapes:
                    what = f"{text} (the expression the exercise asks for)"
                else:
                    continue
                problems.append((where, number, what))
            problems += [(where, number, f"{source} (reads dpedu's answer, a property)")
                         for where, attribute, source in reads if attribute in properties]
            earlier = [_resolve(name) for name in COUNTERPARTS.get(number, [])] + objects
            written += [(index, obj) for obj in earlier]
            written += [(index, code) for code in (answer_callers(number) if number in EXERCISES else {})]
        if cell.cell_type == "code":
            _imports(cell, namespace)
            if number is None and not cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
                seen += [(index, *run) for run in _runs(cell, namespace)]
                reads += [(index, *read) for read in _read_attributes(cell)]
    return problems


def reveals(nb):
    """Every (cell index, exercise, what) where the student copy of ``nb`` shows an answer before its exercise."""
    student = student_notebook(nb)
    namespace, shown_before, problems = {}, [], []
    for index, (cell, reference) in enumerate(zip(student.cells, nb.cells)):
        number = _exercise_number(reference)
        if number is not None:
            asked = _defined_names(reference.source)
            counterparts = [_resolve(name) for name in COUNTERPARTS.get(number, [])]
            solution = _solution_lines(reference.source)
            for where, label, obj, source_file in shown_before:
                name = getattr(obj, "__name__", label.split(".")[-1])
                source = ""
                if obj is not None:
                    try:
                        source = " ".join(inspect.getsource(obj).split())
                    except (TypeError, OSError):
                        pass
                same_lines = [line for line in solution if line in source]
                if obj is None and source_file is not None:      # a link to a source file
                    linked = [n for n in asked | {c.__name__ for c in counterparts}
                              if re.search(rf"^\s*def {n}\(", source_file, re.M)]
                    if linked:
                        problems.append((where, number, f"{label} (links to the source of {linked[0]})"))
                elif name in asked or label.split(".")[-1] in asked:
                    problems.append((where, number, f"{label} (the exercise writes {name})"))
                elif obj is not None and any(obj is c for c in counterparts):
                    problems.append((where, number, f"{label} (dpedu's implementation of the answer)"))
                elif len(same_lines) >= 2:
                    problems.append((where, number, f"{label} (contains the reference solution: {same_lines[:2]})"))
        if cell.cell_type == "code":
            _imports(cell, namespace)
            shown_before += [(index, label, obj, None) for label, obj in _shown_objects(cell, namespace)]
        else:
            for match in _SOURCE_LINK.finditer(cell.source):
                shown_before.append((index, match["target"], None, _linked_text(match["target"])))
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_answer_is_shown_before_its_exercise(path):
    problems = reveals(nbformat.read(path, as_version=4))
    assert not problems, f"{path.name}: answers shown before their exercise (move the cell after it):\n  " + \
        "\n  ".join(f"cell {where}, before Exercise {number}: {what}" for where, number, what in problems)


USED_ALLOWANCES = set()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_nothing_before_an_exercise_runs_its_answer(path):
    problems = runs_before(nbformat.read(path, as_version=4), chapter=USED_ALLOWANCES)
    assert not problems, f"{path.name}: cells that run what an exercise asks for, before it (give examples in " \
        "the text instead):\n  " + "\n  ".join(f"cell {where}, before Exercise {number}: {what}"
                                             for where, number, what in problems)


CLIP_IMPORTS = "import numpy as np\nimport dpedu as dp\nfrom dpedu.textbook.clipping import L2_clip as clip"


@pytest.mark.parametrize("planted, found", [
    ("out = dp.L2_clip(np.ones(3), 1.0)", "dpedu's version of the answer"),
    ("print(clip(np.ones(3), 1.0))", "dpedu's version of the answer"),            # under another name
    ("out = dp.clipping.L2_clip(np.ones(3), 1.0)", "dpedu's version of the answer"),
    ("print(L2_clip(np.ones(3), 1.0))", "calls the function the exercise writes"),
    ("w = x * np.minimum(1.0, c / np.maximum(r, 1e-300))", "the expression the exercise asks for"),
])
def test_a_planted_run_before_the_exercise_is_found(planted, found):
    nb = _notebook_with([("code", CLIP_IMPORTS, {}), ("code", planted, {}), ("code", L2_CLIP_RUNNABLE, EXERCISE)])
    problems = runs_before(nb)
    assert [(where, number) for where, number, _ in problems] == [(1, "2.2")], problems
    assert found in problems[0][2]
    after = _notebook_with([("code", CLIP_IMPORTS, {}), ("code", L2_CLIP_RUNNABLE, EXERCISE), ("code", planted, {})])
    assert runs_before(after) == []                  # after the exercise, "compare with dpedu's version" is fine
    harmless = _notebook_with([("code", CLIP_IMPORTS, {}), ("code", "w = np.minimum(1.0, 2.0) + np.ones(3)", {}),
                               ("code", L2_CLIP_RUNNABLE, EXERCISE)])
    assert runs_before(harmless) == []


def test_the_expression_of_exercise_7_1_is_found():
    exercise = ("def noise_std_of_average(noise_multiplier, clip_norm, sampling_rate, dataset_size):\n"
                "    ### BEGIN SOLUTION\n    return noise_multiplier * clip_norm / (sampling_rate * dataset_size)\n"
                "    ### END SOLUTION")
    meta = {"nbgrader": dict(EXERCISE["nbgrader"], grade_id="exercise-7-1")}
    for planted, is_found in (("print(f'{z * C / (q * n):.5f}')", True), ("s = z * C / q", False),
                              ("s = z * z / (q * n)", False)):
        nb = _notebook_with([("code", "z, C, q, n = 1.0, 1.0, 0.01, 100", {}), ("code", planted, {}),
                             ("code", exercise, meta)])
        assert bool(runs_before(nb)) is is_found, planted


ADVANCED_IMPORTS = "from dpedu.accountants.advanced import advanced_composition\nfrom dpedu.accountants.calibrate import monotone_search"
ADVANCED_EXERCISE = ("def advanced_composition_theorem(epsilon, delta, k, delta_prime):\n    ### BEGIN SOLUTION\n"
                     "    return epsilon * k, k * delta + delta_prime\n    ### END SOLUTION")
SPLIT_EXERCISE = ("def per_iteration_epsilon(total_epsilon, k, delta_prime):\n    ### BEGIN SOLUTION\n"
                  "    return total_epsilon / k\n    ### END SOLUTION")


def _exercise_meta(number):
    return {"nbgrader": dict(EXERCISE["nbgrader"], grade_id=f"exercise-{number.replace('.', '-')}")}


def test_an_earlier_exercises_answer_may_run_below_it():
    """Below Exercise 3.2, dpedu's advanced_composition (3.2's answer) may run before 3.4, which only inverts it;
    above 3.2 the same call is a run of 3.2's answer (and of 3.4's counterpart), and 3.4's own counterpart
    (monotone_search, the bisection it asks for) is still found between the two."""
    call = "eps, _ = advanced_composition(1.0, 0.0, 500, 1e-5)"
    below = _notebook_with([("code", ADVANCED_IMPORTS, {}), ("code", ADVANCED_EXERCISE, _exercise_meta("3.2")),
                            ("code", call, {}), ("code", SPLIT_EXERCISE, _exercise_meta("3.4"))])
    assert runs_before(below) == []
    above = _notebook_with([("code", ADVANCED_IMPORTS, {}), ("code", call, {}),
                            ("code", ADVANCED_EXERCISE, _exercise_meta("3.2")),
                            ("code", SPLIT_EXERCISE, _exercise_meta("3.4"))])
    assert [(where, number) for where, number, _ in runs_before(above)] == [(1, "3.2"), (1, "3.4")]
    search = "z = monotone_search(lambda z: z > 1.0, 1.0, feasible_when='high', lowest=0.1, highest=10.0, at_limit='raise')"
    between = _notebook_with([("code", ADVANCED_IMPORTS, {}), ("code", ADVANCED_EXERCISE, _exercise_meta("3.2")),
                              ("code", search, {}), ("code", SPLIT_EXERCISE, _exercise_meta("3.4"))])
    assert [(where, number) for where, number, _ in runs_before(between)] == [(2, "3.4")]


def test_counterparts_exist():
    for names in COUNTERPARTS.values():
        for name in names:
            assert callable(_resolve(name)), name


def _notebook_with(cells):
    nb = nbformat.v4.new_notebook()
    for kind, source, meta in cells:
        cell = (nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell)(source)
        cell.metadata.update(meta)
        nb.cells.append(cell)
    return nb


EXERCISE = {"nbgrader": {"solution": True, "grade": False, "grade_id": "exercise-2-2", "locked": False,
                         "schema_version": 3, "task": False}}
L2_CLIP_EXERCISE = ("def L2_clip(v, clip_norm):\n    ### BEGIN SOLUTION\n"
                    "    norms = np.linalg.norm(v, axis=-1, keepdims=True)\n    return v\n    ### END SOLUTION")


L2_CLIP_RUNNABLE = ("def L2_clip(v, clip_norm):\n    ### BEGIN SOLUTION\n    v = np.asarray(v, dtype=float)\n"
                    "    norms = np.linalg.norm(v, axis=-1, keepdims=True)\n"
                    "    return v * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))\n    ### END SOLUTION")


@pytest.mark.parametrize("reveal", [
    "from dpedu.course.notebook import show_source\nimport dpedu as dp\nshow_source(dp.clipping.L2_clip)",
    "import inspect\nfrom dpedu.textbook.clipping import L2_clip as f\nprint(inspect.getsource(f))",
    "from dpedu.textbook.clipping import L2_clip\nL2_clip??",
])
def test_a_reveal_before_the_exercise_is_found(reveal):
    nb = _notebook_with([("code", reveal, {}), ("code", L2_CLIP_EXERCISE, EXERCISE)])
    assert [(where, number) for where, number, _ in reveals(nb)] == [(0, "2.2")]
    after = _notebook_with([("code", L2_CLIP_EXERCISE, EXERCISE), ("code", reveal, {})])
    assert reveals(after) == []                      # after the exercise, "compare with dpedu's version" is fine


def test_a_renamed_reveal_is_found_by_its_solution_lines():
    # the solution's lines are lines of the logistic model's clipped sum, so showing that method shows this
    # answer under another name (the method is not among exercise 2.2's counterparts: only its lines give it away)
    exercise = ("def clip_rows(v, c):\n    ### BEGIN SOLUTION\n"
                "    sigmoids = expit(-y * (X @ theta))\n"
                "    factors = clip_factor(sigmoids * row_norms, clip_norm)\n"
                "    ### END SOLUTION")
    shown = ("from dpedu.course.notebook import show_source\nfrom dpedu.textbook.models import LogisticModel\n"
             "show_source(LogisticModel.clipped_gradient_sum)")
    problems = reveals(_notebook_with([("code", shown, {}), ("code", exercise, EXERCISE)]))
    assert [(where, number) for where, number, _ in problems] == [(0, "2.2")]
    assert "contains the reference solution" in problems[0][2]


@pytest.mark.parametrize("target", ["../dpedu/textbook/clipping.py",
                                    "https://github.com/x/dpedu/blob/main/dpedu/textbook/clipping.py#L5",
                                    "../_modules/dpedu/textbook/clipping.html"])
def test_a_link_to_the_source_before_the_exercise_is_found(target):
    link = _notebook_with([("markdown", f"See [the code]({target}).", {}), ("code", L2_CLIP_EXERCISE, EXERCISE)])
    assert [(where, number) for where, number, _ in reveals(link)] == [(0, "2.2")]
    other = _notebook_with([("markdown", "See [the notes](../docs/math.md#5-l2-clipping).", {}),
                            ("code", L2_CLIP_EXERCISE, EXERCISE)])
    assert reveals(other) == []


# --- every formula in math mode ----------------------------------------------------------------------------

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,}).*?^(?P=indent)(?P=fence)[ \t]*$", re.M | re.S)
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:\\.|[^$\\])+?\$", re.S)   # may wrap, within a paragraph
_CODE_SPAN = re.compile(r"(?P<ticks>`+).+?(?P=ticks)", re.S)
_MATH_ROLE = re.compile(r"\{math\}`[^`]*`")
_LINK_TARGET = re.compile(r"\]\([^)]*\)|<https?://[^>]*>|https?://\S+")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_SUPERSCRIPTS_SUBSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿ₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓₔₕₖₗₘₙₚₛₜᵢⱼᵣᵤᵥ"
# what only typesets in math mode: TeX commands, ^ and _ scripts, unicode scripts, Σ/∑/∏ with limits
RAW_MATH = re.compile(
    r"\\(?:frac|sum|prod|sqrt|ln|log|exp|varepsilon|epsilon|delta|alpha|lambda|sigma|theta|mu|rho|Delta|"
    r"mathbb|mathcal|mathrm|lVert|left|right|le|ge|cdot|infty|binom|text)\b"
    rf"|\^|(?<![\w`])[A-Za-zα-ωΑ-Ω′]_\{{?[\w′α-ω]|[\w)\]}}]_\{{|[{_SUPERSCRIPTS_SUBSCRIPTS}]"
    r"|[Σ∑∏]"
    # roots, norms and set membership: √k, ‖x‖, x ∈ S
    r"|[√‖∥∈]"
    # a subscript on a name: min_λ, max_t, RMS_t, ℓ_i (and bare snake_case names, which belong in `backticks`)
    r"|(?<=[\w′)])_(?=[A-Za-zα-ωΑ-Ωℓ−+])"
    # a function applied in a formula: ln(1/δ), ln 2, exp(α(λ) − λε)
    r"|(?<![\w\\])(?:ln|log|exp)\s*\(|(?<![\w\\])ln\s*[\dA-Za-zα-ω]"
    # operators that only make sense in a formula: ±1000, δ ≪ 1/N, ∝ √T, ∇ℓ, a sign −m, {−1, +1}
    r"|[±∓≪≫∝∇∂∫∞]|(?<![\w\\])−(?=[\w(])"
    # a relation on a one-letter symbol or a bracket: ε = 1/2, δ = 1/N, λ ≤ 32, q = k/T, C = 5, |c(o)| ≤ ε, norm ≤ C
    r"|(?<![\w\\$])[A-Za-zα-ωℓ]\s*[=≠≤≥<>≈]\s*[-−\w(√|{]|[)|]\s*[≤≥≈]\s*[-−\w(√|{]|[≤≥]\s*[A-Za-zα-ω](?!\w)"
    # a product written with a centred dot: q·z
    r"|(?<=[\w)])·(?=[\w(√])")


def _blank(match):
    """A removed span keeps its line breaks, so line numbers still count the source's lines."""
    return " " + "\n" * match.group().count("\n")


def _without_indented_code(text):
    lines, inside = text.split("\n"), False
    for number, line in enumerate(lines):
        previous_blank = number == 0 or not lines[number - 1].strip()
        if line.startswith("    ") and (inside or previous_blank):
            inside, lines[number] = True, ""
        elif line.strip():
            inside = False
    return "\n".join(lines)


def prose(markdown):
    """The prose of a markdown text: without code blocks, math, code spans, link targets and comments."""
    text = _COMMENT.sub(_blank, markdown)
    text = _FENCE.sub(_blank, text)
    text = _without_indented_code(text)
    text = _DISPLAY_MATH.sub(_blank, text)
    text = _MATH_ROLE.sub(_blank, text)
    text = _CODE_SPAN.sub(_blank, text)
    text = _INLINE_MATH.sub(lambda m: _blank(m) if "\n\n" not in m.group() else m.group(), text)
    return _LINK_TARGET.sub("]", text)


def raw_math(markdown):
    """[(line, snippet)] of formulas written outside math mode in ``markdown``."""
    found = []
    for number, line in enumerate(prose(markdown).split("\n"), start=1):
        for match in RAW_MATH.finditer(line):
            start = max(0, match.start() - 25)
            found.append((number, line[start: match.end() + 25].strip()))
    return found


def _markdown_sources():
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                yield f"{path.name} cell {index}", cell.source
    for path in DOCS:
        yield path.name, path.read_text(encoding="utf-8")


MARKDOWN = list(_markdown_sources())


@pytest.mark.parametrize("where, text", [pytest.param(where, text, id=where) for where, text in MARKDOWN])
def test_every_formula_is_in_math_mode(where, text):
    found = raw_math(text)
    assert not found, f"{where}: formulas outside $...$ (they do not typeset):\n  " + \
        "\n  ".join(f"line {line}: {snippet}" for line, snippet in found)


@pytest.mark.parametrize("text, bad", [
    ("the loss e^{λc} grows", True), ("ε₁ = ln(1 + q(e^{ε₀} − 1))", True), ("1 − (α/2)^{1/n}", True),
    ("α(λ) = ln Σ_{j=0}^{λ+1} C(λ+1, j)", True), (r"z = \frac{1}{2}", True), ("δ = 10⁻⁵", True),
    ("θ_{t−1} and B_t", True), ("σ²", True),
    ("the loss $e^{\\lambda c}$ grows", False), ("$$\\sum_{j=0}^{n} x_j$$", False),
    ("`noise_multiplier` and `x**2`", False), ("```python\nx = a_b ** 2  # e^{x}\n```", False),
    ("[the notes](../docs/math.md#5-l2_clip)", False), ("a (ε, δ)-DP guarantee, ‖x‖ ≤ C", True),
    ("z = √(2 ln(1.25/δ))/ε", True), ("δ = min_λ exp(α(λ) − λε)", True), ("the loss ℓ_i of a record", True),
    ("the RMS_t of the noise", True), ("ε = ρ + 2 ln(1/δ)", True), ("with ε = 1/2 and N", True),
    ("λ ≤ 32", True), ("q·z at most 1/e", True), ("with q = k/T", True), ("at C = 5", True),
    ("|c(o)| ≤ ε", True), ("a norm ≤ C", True), ('predicting "≤ 50K" for all', False), ("> 1. a quoted list", False), ("every x ∈ D", True), ("loss ln 2", True), ("margins of ±1000", True),
    ("labels in {−1, +1}", True), ("the window [u_−, u_+]", True), ("δ ≪ 1/N", True), ("10 000 steps — then", False), ("bare noise_multiplier", True),
    ("a (ε, δ)-DP guarantee at a small δ", False), ("the `noise_multiplier` and `sampling_rate`", False),
    ("see <https://x.org/a_b/c_d> and [it](https://x.org/e_f)", False), ("an _emphasised_ word", False),
    ("$\\varepsilon = \\sqrt{k}\\,\\lVert x\\rVert_2$ and $\\min_\\lambda$", False),
    ("ε-DP with ε_0 per step", True), ("the ε of the run, the δ of the plan", False),
    ("$a$ and $b_{1}$, then c", False), ("price \\$5 and $x^2$", False),
    ("text:\n\n    G ← Σ_i L2_clip(x_i)\n    θ ← θ\n\nafter", False), ("a $x +\n y^2$ wraps", False),
    ("a $x$\n\nnew paragraph e^{x} $y$", True),
])
def test_raw_math_finds_formulas_outside_math_mode(text, bad):
    assert bool(raw_math(text)) is bad, raw_math(text)


BOOK_CODE_COLUMN = 100        # characters of a code line; the book's column holds 102 from 1152 px (docs/_static/book.css)


def long_code_lines(nb, limit=BOOK_CODE_COLUMN):
    """[(cell index, length, first 60 characters)] of the lines of ``nb``'s code cells longer than ``limit``."""
    return [(index, len(line), line[:60]) for index, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for line in cell.source.split("\n") if len(line) > limit]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_code_lines_fit_the_book_column(path):
    found = long_code_lines(nbformat.read(path, as_version=4))
    assert not found, f"{path.name}: code lines longer than {BOOK_CODE_COLUMN} characters (the book wraps them " \
        "mid-token; break them inside brackets or split the string):\n  " + \
        "\n  ".join(f"{path.name}, cell {index}, {length} characters: {start!r}" for index, length, start in found)


def test_every_allowed_caller_is_used():
    """NOT_THE_ANSWER holds no stale entry: each one lets through a call some chapter makes."""
    used = set()
    for path in NOTEBOOKS:
        runs_before(nbformat.read(path, as_version=4), chapter=used)
    assert used == set(NOT_THE_ANSWER), f"unused entries: {sorted(set(NOT_THE_ANSWER) - used)}"


AUDIT_EXERCISE = ("def audit_lower_bound(false_positives, n_out, false_negatives, n_in, delta, confidence):\n"
                  "    ### BEGIN SOLUTION\n    return 0.0\n    ### END SOLUTION")
ADAPTIVE_EXERCISE = ("def gradient_noise_multiplier(noise_multiplier, count_noise_std):\n"
                     "    ### BEGIN SOLUTION\n    return noise_multiplier\n    ### END SOLUTION")
FIXED_EXERCISE = ("def fixed_batch_event(noise_multiplier, batch_size, dataset_size):\n"
                  "    ### BEGIN SOLUTION\n    return None\n    ### END SOLUTION")
COUNT_EXERCISE = ("def noisy_count(true_count, epsilon, rng):\n"
                  "    ### BEGIN SOLUTION\n    return true_count\n    ### END SOLUTION")
CALLER_IMPORTS = "import dpedu as dp\nfrom dpedu.lab import audit"


@pytest.mark.parametrize("planted, number, exercise, found", [
    ("r = audit.canary_audit(trainer, X, y, canary, runs=10, delta=1e-5)", "9.3", AUDIT_EXERCISE,
     "calls dpedu.lab.audit.canary.canary_audit, which returns what 9.3's answer computes"),
    ("w = audit.whitebox_audit(trainer, X, y, canary, runs=10, delta=1e-5)", "9.3", AUDIT_EXERCISE,
     "calls dpedu.lab.audit.whitebox.whitebox_audit"),
    ("print(f'{plan.gradient_noise_multiplier:.4f}')", "7.5", ADAPTIVE_EXERCISE, "reads dpedu's answer, a property"),
    ("e = dp.training.plan_dp_sgd(100, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=1, "
     "sampling='fixed', relation='replace_one').event", "10.1", FIXED_EXERCISE, "dpedu's version of the answer"),
    ("r = dp.training.dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=1)", "10.1",
     FIXED_EXERCISE, "calls dpedu.textbook.training.sgd.dp_sgd, which returns what 10.1's answer computes"),
    # a caller behind a decorator (@door): found by its own code, read in its own module
    ("r = dp.training.run_noisy_gradient_descent(X, y, plan, rng=0)", "2.3", COUNT_EXERCISE,
     "calls dpedu.textbook.training.full_batch.run_noisy_gradient_descent, which returns what 2.3's answer computes"),
])
def test_a_planted_call_of_a_bigger_function_is_found(planted, number, exercise, found):
    """A dpedu function that returns what a counterpart computes, or a counterpart read as a property, runs the
    answer as surely as the counterpart itself; below the exercise it is fine."""
    nb = _notebook_with([("code", CALLER_IMPORTS, {}), ("code", planted, {}),
                         ("code", exercise, _exercise_meta(number))])
    problems = runs_before(nb, allowed={})
    assert [(where, n) for where, n, _ in problems] == [(1, number)], problems
    assert found in problems[0][2]
    after = _notebook_with([("code", CALLER_IMPORTS, {}), ("code", exercise, _exercise_meta(number)),
                            ("code", planted, {})])
    assert runs_before(after, allowed={}) == []


def test_an_allowed_call_needs_its_fragment():
    shuffled = ("p = dp.training.plan_dp_sgd(100, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=1, "
                "sampling='shuffle')")
    fixed = shuffled.replace("'shuffle'", "'fixed'")
    for planted, problems in ((shuffled, 0), (fixed, 1)):
        nb = _notebook_with([("code", CALLER_IMPORTS, {}), ("code", planted, {}),
                             ("code", FIXED_EXERCISE, _exercise_meta("10.1"))])
        assert len(runs_before(nb)) == problems, planted


def test_the_instructor_edition_shows_solutions_without_nbgrader_markers(tmp_path):
    """docs/_ext/editions.py on a solution cell as myst-nb reads it: the instructor edition labels the cell and
    shows the reference solution with the ### BEGIN/END SOLUTION lines left out; the student edition shows the
    stub."""
    import importlib.util
    from types import SimpleNamespace

    nodes = pytest.importorskip("docutils.nodes")        # installed with the book's tools (sphinx)

    spec = importlib.util.spec_from_file_location("editions", ROOT / "docs" / "_ext" / "editions.py")
    editions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(editions)
    nb = _notebook_with([("code", L2_CLIP_RUNNABLE, EXERCISE)])
    path = tmp_path / "chapter.ipynb"
    nbformat.write(nb, path)

    def solution_cell():             # a code cell as myst-nb puts it in the doctree
        source = nodes.container("", nodes.literal_block(L2_CLIP_RUNNABLE, L2_CLIP_RUNNABLE),
                                 nb_element="cell_code_source")
        return nodes.container("", source, nb_element="cell_code", cell_metadata=dict(EXERCISE), cell_index=0)

    shown = {}
    for edition in ("instructor", "student"):
        cell = solution_cell()
        root = nodes.section("", cell)
        app = SimpleNamespace(env=SimpleNamespace(docname="chapter", doc2path=lambda name: str(path)),
                              config=SimpleNamespace(dpedu_edition=edition))
        editions._edit_chapter(app, root)
        shown[edition] = next(iter(cell.findall(nodes.literal_block))).astext()
    assert "BEGIN SOLUTION" not in shown["instructor"] and "END SOLUTION" not in shown["instructor"]
    assert "np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))" in shown["instructor"]
    assert "raise NotImplementedError" in shown["student"] and "np.minimum" not in shown["student"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_alt_texts_have_no_word_broken_at_a_line_end(path):
    """The alt text of a figure is written over several source lines and joined with spaces: a word hyphenated
    at a line end would read "pro- active"."""
    broken = [(index, match.group()) for index, cell in enumerate(nbformat.read(path, as_version=4).cells)
              for match in re.finditer(r"\w+- \w+", cell.get("metadata", {}).get("mystnb", {})
                                       .get("image", {}).get("alt", ""))]
    assert not broken, f"{path.name}: alt texts with a word broken across lines: {broken}"




def _notes_anchors():
    """The anchors of docs/math.md's headings, as the chapters' notes links write them."""
    text = (ROOT / "docs" / "math.md").read_text(encoding="utf-8")
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#{1,6}\s+(.*)$", text, re.M)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notes_reference_in_the_prose_is_a_link_to_its_section(path):
    """A chapter's prose cites the notes by a link ([§12.4](../docs/math.md#124-...)), whose anchor is a heading of
    docs/math.md, never as the plain text "docs/math.md §12.4" that no reader can follow."""
    anchors = _notes_anchors()
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type != "markdown":
            continue
        assert not re.search(r"math\.md\s*§", cell.source), f"{path.name} cell {index}: a plain 'math.md §N'"
        for anchor in re.findall(r"math\.md#([^)\s]+)\)", cell.source):
            assert anchor in anchors, f"{path.name} cell {index}: no heading of docs/math.md has the anchor {anchor!r}"
