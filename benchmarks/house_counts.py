"""How many of each idea a checkout of dpedu holds: the counts issue 36 ("one house") asks for, side by side.

Run:  python benchmarks/house_counts.py [--against CHECKOUT]

For this checkout (and, with ``--against``, another one, e.g. ``git worktree add /tmp/before <commit>``), read
with :mod:`ast` and by tracing, never by hand:

* **training loops over steps**: ``for`` loops in ``dpedu/`` whose body assigns ``theta`` (a parameter update);
* **searches**: functions that bisect by hand (a ``while`` loop that halves a bracket: ``0.5 * (`` or ``// 2``)
  or call ``brentq`` / ``bisect``;
* **check_* functions**: module-level ``def check_...`` outside the course's exercise checks, and how many of
  them live outside the validation module;
* **Result/Diagnostics classes**: classes whose name ends in ``Result`` or ``Diagnostics``;
* **public names**: distinct names across every ``__all__`` of the package;
* **lines run by default**: the lines of the package's files that a default ``dp_sgd``, a default
  ``noisy_gradient_descent`` and the sequential, advanced, moments, RDP and PLD accountants execute (traced in a
  fresh process of the checkout);
* **duplicate pairs**: what the ``duplicates`` tool reports for ``dpedu/`` (when it is on the PATH).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TRACE = r"""
import json, os, sys
import numpy as np
sys.path.insert(0, os.getcwd())
import dpedu
root = os.path.dirname(dpedu.__file__)
files = set()
def tracer(frame, event, arg):
    if event == "call" and frame.f_code.co_filename.startswith(root):
        files.add(frame.f_code.co_filename)
    return None
try:
    from dpedu.textbook.datasets import make_toy
except ImportError:                # a checkout from before the layer folders
    from dpedu.datasets import make_toy
X, y = make_toy(n=300, d=3, rng=0)
names = ("sequential", "advanced", "moments", "rdp", "pld")
sys.setprofile(tracer)
try:
    sgd = dpedu.dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2, rng=0)
    gd = dpedu.noisy_gradient_descent(X, y, 5, 0.5, 1e-5, rng=0)
    for name in names:
        for run in (sgd, gd):
            accountant = dpedu.make_accountant(name)
            for event, count in run.ledger:
                accountant.compose(event, count)
            accountant.get_epsilon(1e-5)
finally:
    sys.setprofile(None)
print(json.dumps(sorted(files)))
"""


def python_files(tree):
    return sorted((Path(tree) / "dpedu").rglob("*.py"))


def is_exercise_checks(path):
    return "checks" in path.parts and "course" in path.parts


def counts(tree):
    loops, searches, checks, outside, results, public = [], [], [], [], [], set()
    for path in python_files(tree):
        text = path.read_text(encoding="utf-8")
        module = ast.parse(text)
        rel = str(path.relative_to(tree))
        for node in ast.walk(module):
            if isinstance(node, ast.For) and any(isinstance(n, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "theta" for t in n.targets) for b in node.body
                    for n in ast.walk(b)):
                loops.append(f"{rel}:{node.lineno}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = ast.get_source_segment(text, node) or ""
                halves = any(isinstance(n, ast.While) for n in ast.walk(node)) and re.search(
                    r"0\.5 \* \(|// 2\b|math\.sqrt\(feasible\)", body)
                if halves or re.search(r"\b(brentq|bisect)\(", body):
                    searches.append(f"{rel}:{node.lineno} {node.name}")
            if isinstance(node, ast.ClassDef) and re.search(r"(Result|Diagnostics)$", node.name):
                results.append(f"{rel}:{node.name}")
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                # a literal list; or a computed one (its starred parts re-export other modules' __all__, counted
                # there): its literal names
                public |= {item.value for item in getattr(node.value, "elts", ())
                           if isinstance(item, ast.Constant) and isinstance(item.value, str)}
        for node in module.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("check_") and not is_exercise_checks(path):
                checks.append(f"{rel}:{node.name}")
                if "validation" not in path.name:
                    outside.append(f"{rel}:{node.name}")
    traced = json.loads(subprocess.run([sys.executable, "-c", TRACE], cwd=tree, capture_output=True, text=True,
                                       check=True).stdout)
    lines_run = sum(len(Path(f).read_text(encoding="utf-8").splitlines()) for f in traced)
    duplicate_pairs = None
    if shutil.which("duplicates"):
        out = subprocess.run(["duplicates", "--repo", "dpedu", "--seconds", "60", "--most", "1"], cwd=tree,
                             capture_output=True, text=True).stdout
        match = re.match(r"(\d+) pairs", out)
        duplicate_pairs = int(match.group(1)) if match else (0 if out.startswith("no duplicates") else None)
    return {
        "training loops over steps (for ... theta = ...)": loops,
        "hand-written searches (bisection, brentq)": searches,
        "check_* functions (outside the exercise checks)": checks,
        "  of which outside the validation module": outside,
        "Result/Diagnostics classes": results,
        "public names (distinct, across the __all__s)": sorted(public),
        "files run by a default dp_sgd, noisy GD and five accountants": traced,
        "  their lines": lines_run,
        "lines in dpedu/": sum(len(p.read_text(encoding="utf-8").splitlines()) for p in python_files(tree)),
        "duplicates pairs in dpedu/": duplicate_pairs,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="CHECKOUT", help="another checkout of dpedu, counted beside this one")
    parser.add_argument("--list", action="store_true", help="also list what was counted (file:line)")
    args = parser.parse_args(argv)
    here = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
    trees = [args.against, here] if args.against else [here]
    results = [counts(tree) for tree in trees]
    width = max(len(key) for key in results[0])
    print(f"{'':<{width}}  " + "  ".join(f"{Path(t).name[-14:]:>14}" for t in trees))
    for key in results[0]:
        values = [r[key] for r in results]
        shown = [len(v) if isinstance(v, list) else ("-" if v is None else v) for v in values]
        print(f"{key:<{width}}  " + "  ".join(f"{v:>14}" for v in shown))
    if args.list:
        for tree, result in zip(trees, results):
            print(f"\n{tree}")
            for key, value in result.items():
                if isinstance(value, list) and not key.startswith("public"):
                    print(f"  {key}:")
                    for item in value:
                        print(f"    {item}")


if __name__ == "__main__":
    main()
