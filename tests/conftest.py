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
