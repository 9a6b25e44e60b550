"""Shared pytest configuration.

Hypothesis runs *derandomized* by default: the examples are a fixed function of each test, so a clean checkout,
CI and a student's machine all run the same cases and a failure reproduces exactly. To let hypothesis explore new
random examples (as a developer hunting for bugs would), run ``DPEDU_HYPOTHESIS=explore python -m pytest``.
"""

import importlib.util
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile("explore" if os.environ.get("DPEDU_HYPOTHESIS") == "explore" else "deterministic")


# -- two workers (pytest-xdist) -------------------------------------------------------------------------------------
# pyproject's addopts run the suite with ``-n auto --dist loadgroup --no-loadscope-reorder`` (one worker per CPU core;
# ``-n 0`` runs it in one process). The hook below puts every test in its module's group, so a module's tests run
# in one worker, in file order, and its module-scoped fixtures (a chapter's single run, a fitted model) run once. The
# three modules that install the wheel into a fresh venv share one group, so the venv is built once. The longest
# modules are handed out first (xdist gives out groups in collection order), so that no worker is left with a long
# one at the end while the other waits; the list is by measured time (``--durations``), longest first.
SHARE_THE_WHEEL = ("tests/test_wheel.py", "tests/test_course_kit.py", "tests/test_course_links.py")
# measured on a 2-core machine like CI's (seconds, summed over a module's tests, two workers): the chapters ~330, the
# wheel group ~300 (a venv, four Jupyter servers, Chromium), nbgrader grading ~190, the book in Chromium ~100
LONGEST_FIRST = ("tests/test_notebooks.py", SHARE_THE_WHEEL[0], "tests/test_instructor.py", "tests/test_book.py",
                 "tests/test_tradeoff.py", "tests/test_dependencies.py", "tests/test_readme.py")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    def module_of(item):                # relative to the repository, wherever pytest was started
        path = Path(item.path).resolve()
        return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()

    def group_of(item):
        module = module_of(item)        # its stem names the group (xdist appends it to the test's id: ...@test_pld)
        return "wheel" if module in SHARE_THE_WHEEL else Path(module).stem

    def rank(item):
        module = module_of(item)
        if module in SHARE_THE_WHEEL:
            module = SHARE_THE_WHEEL[0]
        return LONGEST_FIRST.index(module) if module in LONGEST_FIRST else len(LONGEST_FIRST)

    for item in items:
        item.add_marker(pytest.mark.xdist_group(group_of(item)))
    items.sort(key=rank)                         # stable: the order inside a module, and of the rest, is kept


@pytest.fixture(autouse=True)
def _dpedu_settings_do_not_outlive_a_test():
    """The ``DPEDU_*`` environment as it was before each test. nbgrader's config (``os.environ.setdefault("DPEDU_FAST",
    "1")``) runs in this process when a test grades through nbgrader's API, and the mode it sets would otherwise
    reach every later test in the same worker, in an order that pytest-xdist does not fix."""
    before = {key: value for key, value in os.environ.items() if key.startswith("DPEDU_")}
    yield
    for key in [key for key in os.environ if key.startswith("DPEDU_") and key not in before]:
        del os.environ[key]
    os.environ.update(before)


@contextmanager
def benchmark_module(name):
    """The module ``benchmarks/<name>.py``, loaded for a test (its rows are what the notes quote), then unloaded."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


# -- the package as a user installs it (tests/test_wheel.py, tests/test_course_links.py) ----------------------------

ROOT = Path(__file__).resolve().parents[1]
# what a source distribution holds (MANIFEST.in): the package, and the course a wheel ships (setup.py copies it in)
SDIST_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE")
SDIST_GLOBS = ("chapters/[0-9][0-9]_*.ipynb", "docs/*.md", "docs/_static/notes/*.png")


def run_checked(command, cwd, env, timeout=1200):
    """``subprocess.run`` that fails the test with the command's output tail when it exits non-zero."""
    import subprocess

    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, command))} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def clean_env(**extra):
    """The environment without anything that would let the repository's dpedu in (PYTHONPATH, a virtualenv)."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "DPEDU_DATA")}
    env.update(extra)
    return env


def _build_wheel(tmp_path_factory):
    import shutil

    source = tmp_path_factory.mktemp("source")
    for name in SDIST_FILES:
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "dpedu", source / "dpedu", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_shipped"))
    for pattern in SDIST_GLOBS:
        for path in ROOT.glob(pattern):
            target = source / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    out = tmp_path_factory.mktemp("wheel")
    run_checked([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out), str(source)],
                cwd=source, env=clean_env())
    [built] = out.glob("dpedu-*.whl")
    return built


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    """The wheel, built from a copy of the files a source distribution holds (the repository is not touched)."""
    return _build_wheel(tmp_path_factory)


@pytest.fixture(scope="session")
def instructor_venv(wheel, tmp_path_factory):
    """A fresh venv (no system site-packages) with ``pip install "<wheel>[instructor]"`` (the course extra and
    nbgrader), and the environment to run it in: ``(python, env, seconds per step)``. pip installs the
    dependencies the way it is configured on the machine (its index, or a local mirror); on a machine with neither
    the test fails, since CI runs it."""
    import time

    home = tmp_path_factory.mktemp("venv")
    venv, seconds = home / "venv", {}
    start = time.perf_counter()
    run_checked([sys.executable, "-m", "venv", str(venv)], cwd=home, env=clean_env())
    seconds["venv"] = time.perf_counter() - start
    env = clean_env(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                    DPEDU_FAST="1", MPLBACKEND="Agg", JUPYTER_DATA_DIR=str(home / "jupyter-data"),
                    JUPYTER_CONFIG_DIR=str(home / "jupyter-config"), JUPYTER_RUNTIME_DIR=str(home / "jupyter-run"),
                    IPYTHONDIR=str(home / "ipython"))
    start = time.perf_counter()
    run_checked([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", f"{wheel}[instructor]"], cwd=home,
                env=env)
    seconds["pip install"] = time.perf_counter() - start
    return venv / "bin" / "python", env, seconds
