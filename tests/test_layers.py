"""The package's layers: imports point only downward, and no module imports another module's private names.

Every module of ``dpedu`` is read with :mod:`ast` (module-level imports and imports inside functions,
relative and absolute). Each module belongs to a layer by the longest matching entry of :data:`LAYERS`
(an entry ``"dpedu.lab.audit"`` covers ``dpedu.lab.audit`` and ``dpedu.lab.audit.*``). A module may
import from its own layer or a lower one. The order is the one stated in ``dpedu/__init__.py`` and in README.md ("Layout").
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dpedu"

# Lowest first. A new module must be placed here (the test fails for a module in no layer).
LAYERS = [
    ("dpedu.ground",),          # validation, the door, the search, events, the Gaussian closed forms
    ("dpedu.textbook",),        # what chapters 0-5 print and call: models, clipping, mechanisms, loops, sampling
    ("dpedu.accountants",),     # the privacy of a ledger; calibration, pro-active DP, budgets
    ("dpedu.lab",),             # audits, experiments, selection, tuning, statement, estimators, parallel, figures
    ("dpedu.course",),          # the course kit: notebooks' checks, listings, the instructor's tools
    ("dpedu.cli", "dpedu.__main__"),
]
# The package itself re-exports the public names of every layer, so it sits above all of them.
TOP = "dpedu"

# Known violations in modules owned by other helpers, to be removed by the integrator once merged:
# (importing module, imported module or "module.name").
KNOWN_VIOLATIONS = set()


def module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module):
    """Index of the layer of ``module`` (by the longest matching entry), len(LAYERS) for the package, else None."""
    if module == TOP:
        return len(LAYERS)
    best, best_length = None, -1
    for index, entries in enumerate(LAYERS):
        for entry in entries:
            if (module == entry or module.startswith(entry + ".")) and len(entry) > best_length:
                best, best_length = index, len(entry)
    return best


def is_private(part):
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def imports_of(module, path):
    """``[(line, imported module, imported name or None)]`` for every dpedu import in the module's source."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names if alias.name.split(".")[0] == "dpedu"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "dpedu":
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if submodule in MODULES:       # "from . import calibrate": the module itself is imported
                    found.append((node.lineno, submodule, None))
                else:
                    found.append((node.lineno, target, alias.name))
    return found


def test_every_module_is_in_a_layer():
    unplaced = [module for module in MODULES if layer_of(module) is None]
    assert not unplaced, f"modules in no layer (add them to LAYERS in tests/test_layers.py): {unplaced}"


def test_the_layer_table_is_the_documented_one():
    init_doc = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))).partition("Layers")[2]
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8").partition("Layers, lowest first")[2]
    for text in (init_doc, readme):
        # each layer's first entry as a whole name ("events" is not found inside "events_allocation")
        found = [re.search(r"(?<![\w.])" + re.escape(entries[0].removeprefix("dpedu.")) + r"(?![\w.])", text)
                 for entries in LAYERS if entries[0] != "dpedu.cli"]
        assert all(found), [entries[0] for entries, match in zip(LAYERS, found) if not match]
        positions = [match.start() for match in found]
        assert positions == sorted(positions)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_downward(module):
    own = layer_of(module)
    wrong = []
    for line, target, _ in imports_of(module, MODULES[module]):
        other = layer_of(target)
        if other is not None and other > own and (module, target) not in KNOWN_VIOLATIONS:
            wrong.append(f"{module} (layer {own}) imports {target} (layer {other}) at line {line}")
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_imports(module):
    wrong = []
    for line, target, name in imports_of(module, MODULES[module]):
        private_module = any(is_private(part) for part in target.split("."))
        private_name = name is not None and is_private(name)
        key = (module, f"{target}.{name}" if private_name else target)
        if (private_module or private_name) and key not in KNOWN_VIOLATIONS:
            wrong.append(f"{module} imports {key[1]} at line {line}")
    assert not wrong, "private imports across modules:\n" + "\n".join(wrong)


def test_the_checker_sees_violations(tmp_path):
    # the checker itself: a lazy import of a higher layer and a private name are both found
    path = tmp_path / "fake.py"
    path.write_text("def f():\n    from ..cli import main\n    from ..accountants.orders import _hidden\n")
    found = imports_of("dpedu.ground.gaussian", path)
    assert (2, "dpedu.cli", "main") in found and (3, "dpedu.accountants.orders", "_hidden") in found
    assert layer_of("dpedu.lab.audit.canary") == layer_of("dpedu.lab.audit") > layer_of("dpedu.textbook.training.dp_sgd")


def test_known_violations_still_exist():
    # once an owner fixes one, its entry must go (so the list never hides a new violation)
    seen = set()
    for module, path in MODULES.items():
        for _, target, name in imports_of(module, path):
            seen.add((module, target))
            seen.add((module, f"{target}.{name}"))
    stale = KNOWN_VIOLATIONS - seen
    assert not stale, f"fixed violations still listed in KNOWN_VIOLATIONS: {sorted(stale)}"


# --- the paths of earlier releases: aliases for users, never used inside the project ------------------------------

def test_an_old_path_imports_the_same_module_as_its_new_one():
    """``from dpedu.training import dp_sgd`` (a notebook written for an earlier release) still works, and the old
    name is the module itself, not a second copy with its own state."""
    import importlib

    import dpedu

    for old, new in dpedu.OLD_PATHS.items():
        assert importlib.import_module(old) is importlib.import_module(new), old
    from dpedu.research.audit.lira import lira_score as old_lira
    from dpedu.training.sgd import dp_sgd as old_dp_sgd

    assert old_dp_sgd is dpedu.dp_sgd and old_lira is importlib.import_module("dpedu.lab.audit").lira_score
    assert dpedu.new_path("dpedu.engine.parallel") == "dpedu.lab.parallel"        # the longer prefix wins
    assert dpedu.new_path("dpedu.engine.search") == "dpedu.ground.search"
    assert dpedu.new_path("dpedu.textbook.training") is None and dpedu.new_path("dpedu.course") is None
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("dpedu.training.no_such_module")


def _old_path_imports(path):
    """``[(line, module)]`` of the imports in a Python file that name an old path (absolute imports only)."""
    import dpedu

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                 [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
        found += [(node.lineno, name) for name in names if dpedu.new_path(name)]
    return found


def test_nothing_in_the_project_imports_an_old_path():
    root = PACKAGE.parent
    files = [p for folder in ("chapters/_src", "tests", "benchmarks", "docs") for p in (root / folder).rglob("*.py")
             if "_build" not in p.parts and "output" not in p.parts and p.name != "test_layers.py"]
    wrong = [f"{path.relative_to(root)}:{line} imports {name}" for path in files
             for line, name in _old_path_imports(path)]
    import dpedu

    for module, path in MODULES.items():
        wrong += [f"{module}:{line} imports {target}" for line, target, _ in imports_of(module, path)
                  if dpedu.new_path(target)]
    assert not wrong, "imports of the paths of an earlier release (use the layer folders):\n" + "\n".join(wrong)
