"""What the chapters print is what runs: a default run executes every function chapters 0-5 print for it.

The functions are read off the chapter sources (``show_source(...)`` in ``chapters/_src``), not listed here, so a
chapter that prints another function is checked at once. The runs are the defaults a student meets:
``gradient_descent`` (chapter 1), ``noisy_gradient_descent`` (chapter 2), ``dp_sgd`` (chapter 4) and
``compare`` on both private runs (chapters 3 and 5: every accountant side by side). Each runs under
:func:`sys.setprofile`, which records the code object of every Python function called.

One printed function does not run as itself: ``L2_clip`` is the formula a model's clipped sum equals
(``L2_clip(per_example_gradients(theta, X, y), C).sum(0)``); the models compute that sum without the n x d matrix
of gradients, through ``clip_factor``, the one clip factor ``L2_clip`` applies too. ``tests/test_model_forms.py``
pins each form to the formula; here the test checks that ``clip_factor`` runs and that ``L2_clip`` is built on it.
"""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

import dpedu
from dpedu.accountants import compare
from dpedu.textbook.clipping import L2_clip, clip_factor
from dpedu.textbook.datasets import make_toy

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters" / "_src"
CORE = ("00", "01", "02", "03", "04", "05")
#: printed functions that are the formula of a faster form that runs, with the function both share
FORMULAS = {inspect.unwrap(L2_clip): clip_factor}


def printed_functions():
    """``{function: chapter}`` for every ``show_source(expr)`` of chapters 0-5, ``expr`` evaluated as the chapter
    would (its imports)."""
    found = {}
    for path in sorted(CHAPTERS.glob("*.py")):
        if not path.name.startswith(CORE):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        namespace = {}
        imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        exec(compile(ast.Module(body=imports, type_ignores=[]), str(path), "exec"), namespace)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "show_source":
                obj = eval(compile(ast.Expression(node.args[0]), str(path), "eval"), namespace)
                found[inspect.unwrap(getattr(obj, "__func__", obj))] = path.stem
    return found


def executed_code(run):
    """The code objects of every Python function ``run()`` calls."""
    seen = set()

    def profile(frame, event, arg):
        if event == "call":
            seen.add(frame.f_code)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


def default_runs():
    X, y = make_toy(n=300, d=3, rng=0)
    gd = dpedu.gradient_descent(X, y, 5)
    noisy = dpedu.noisy_gradient_descent(X, y, 5, 0.5, 1e-5, rng=0)
    sgd = dpedu.dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2, rng=0)
    compare(noisy, delta=1e-5)
    compare(sgd, delta=1e-5)
    return gd, noisy, sgd


def test_the_chapters_print_the_core():
    printed = printed_functions()
    names = {f.__qualname__ for f in printed}
    assert {"dp_sgd_step", "poisson_sample", "noisy_gradient_descent", "L2_clip"} <= names, names


def test_every_function_chapters_0_to_5_print_runs_in_a_default_run():
    executed = executed_code(default_runs)
    missing = []
    for function, chapter in printed_functions().items():
        shared = FORMULAS.get(function)
        if shared is not None:                         # its faster form runs: the factor they share must run
            assert inspect.unwrap(shared).__code__ in executed, function.__qualname__
            assert shared.__name__ in inspect.getsource(function), function.__qualname__
        elif function.__code__ not in executed:
            missing.append(f"{chapter}: {function.__module__}.{function.__qualname__}")
    assert not missing, f"printed but not run by a default run: {missing}"


def test_the_tracer_sees_a_function_that_does_not_run():
    # the test above can fail: a function no default run calls is reported missing
    def never():
        return 1

    executed = executed_code(default_runs)
    assert never.__code__ not in executed
    assert inspect.unwrap(dpedu.textbook.training.dp_sgd_step).__code__ in executed


@pytest.mark.parametrize("model", [None, "mlp"])
def test_a_default_dp_sgd_step_is_the_printed_step_at_every_step(model):
    # dp_sgd_step runs once per step (its code object is entered T times), for both models
    from dpedu.textbook.models import MLP
    X, y = make_toy(n=200, d=3, rng=1)
    net = MLP(3, hidden_units=4) if model else None
    step = inspect.unwrap(dpedu.textbook.training.dp_sgd_step).__code__
    calls = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is step:
            calls.append(1)

    sys.setprofile(profile)
    try:
        result = dpedu.dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=17, model=net,
                              rng=0)
    finally:
        sys.setprofile(None)
    assert len(calls) == 17 and np.all(np.isfinite(result.theta))
