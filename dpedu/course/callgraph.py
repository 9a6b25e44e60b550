"""Which dpedu functions hand back what another one computes: a static call graph, read from the source.

An exercise's *counterparts* (:data:`dpedu.course.checks.guard.EXERCISES`) compute its answer. A bigger function
that calls a counterpart and returns what it got, or an object built from it (``plan_dp_sgd(...).event``,
``canary_audit(...).epsilon_lower``), computes the answer too, under another name. :func:`returning_callers`
finds those functions, so that a reader's check ("no cell above an exercise runs its answer") and the guard can
look at them beside the counterparts.

The graph is read with :mod:`ast` from every module of dpedu except the course machinery and the command line
(which run everything). In each function it resolves the called names through the function's own module
(``L2_clip(...)``, ``logistic.clipped_gradient_sum(...)``, ``self.method(...)``) and follows the value of such a
call to a ``return``: directly (``return f(x)``), inside the returned expression (``return Result(f(x), ...)``)
or through a name it was assigned to (``eps = f(x); ...; return Statement(eps)``). Calls on other objects
(``acc.get_epsilon()``) cannot be resolved without running the code and are not followed; a function reached
only through them is not found. One level is followed: the callers of a caller are not its callers.

>>> from dpedu.course.booklinks import resolve
>>> found = returning_callers([resolve("dpedu.lab.audit.statistics.gaussian_mu_lower_bound")])
>>> "dpedu.lab.audit.whitebox.whitebox_audit" in found.values()
True
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pkgutil
import textwrap
from pathlib import Path

__all__ = ["SKIPPED", "code_of", "functions", "returned_calls", "returning_callers"]

SKIPPED = ("dpedu.course", "dpedu.cli", "dpedu.__main__")     # the machinery that runs everything
PACKAGE = Path(__file__).resolve().parents[1]                 # dpedu/


def code_of(obj):
    """The code object that runs when ``obj`` is called (a function, method, property, or a wrapped one)."""
    obj = obj.fget if isinstance(obj, property) else obj
    obj = getattr(obj, "__func__", obj)
    try:
        obj = inspect.unwrap(obj)
    except ValueError:                      # a cycle of __wrapped__: not ours
        return None
    return getattr(obj, "__code__", None)


@functools.lru_cache(maxsize=1)
def functions():
    """``{code object: (dotted name, function, owning class or None)}`` of every function and method of dpedu
    outside :data:`SKIPPED` (properties by their getter)."""
    found = {}
    for info in pkgutil.walk_packages([str(PACKAGE)], "dpedu."):
        if info.name.startswith(SKIPPED):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj):          # a decorated function by its own code, not its wrapper's
                code = code_of(obj)
                if code is not None:
                    found[code] = (f"{module.__name__}.{obj.__qualname__}", inspect.unwrap(obj), None)
            elif inspect.isclass(obj):
                for attribute, member in vars(obj).items():
                    code = code_of(member) if callable(member) or isinstance(member, (property, staticmethod,
                                                                                       classmethod)) else None
                    if code is not None:
                        function = member.fget if isinstance(member, property) else getattr(member, "__func__",
                                                                                             member)
                        found[code] = (f"{module.__name__}.{obj.__qualname__}.{attribute}",
                                       inspect.unwrap(function), obj)
    return found


def _called(node, namespace, owner):
    """The code object a call node runs, when its name resolves in ``namespace`` (or on ``owner`` for self/cls)."""
    chain, target = [], node.func
    while isinstance(target, ast.Attribute):
        chain.append(target.attr)
        target = target.value
    if not isinstance(target, ast.Name):
        return None
    if target.id in ("self", "cls") and owner is not None:
        obj = owner
    elif target.id in namespace:
        obj = namespace[target.id]
    else:
        return None
    try:
        for attribute in reversed(chain):
            obj = getattr(obj, attribute)
    except AttributeError:
        return None
    return None if inspect.isclass(obj) else code_of(obj)


def returned_calls(function, owner=None):
    """The code objects of the calls whose value ``function`` returns (see the module's docstring). A decorated
    function is read as written: its own source, its own module's names (a wrapper's module has other names)."""
    function = inspect.unwrap(function)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return set()
    namespace, body = function.__globals__, tree.body[0]
    assigned = {}
    for node in ast.walk(body):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            codes = {_called(call, namespace, owner) for call in ast.walk(node.value) if isinstance(call, ast.Call)}
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        assigned.setdefault(name.id, set()).update(codes - {None})
    returned = set()
    for node in ast.walk(body):
        if isinstance(node, (ast.Return, ast.Yield)) and node.value is not None:
            for part in ast.walk(node.value):
                if isinstance(part, ast.Call):
                    returned.add(_called(part, namespace, owner))
                elif isinstance(part, ast.Name):
                    returned |= assigned.get(part.id, set())
    return returned - {None}


@functools.lru_cache(maxsize=1)
def _graph():
    callers = {}
    for code, (_, function, owner) in functions().items():
        for called in returned_calls(function, owner):
            callers.setdefault(called, set()).add(code)
    return callers


def returning_callers(targets):
    """``{code object: dotted name}`` of the dpedu functions that return what one of ``targets`` (functions,
    methods or properties) computes, the targets themselves left out."""
    codes = {code_of(target) for target in targets} - {None}
    names = functions()
    found = set().union(*(_graph().get(code, set()) for code in codes)) - codes if codes else set()
    return {code: names[code][0] for code in found}
