"""The package as a user installs it: the wheel, with the course extra, in a clean virtual environment.

The wheel is built from a copy of the package's files (pyproject.toml, README.md, LICENSE, dpedu/), installed
with ``pip install "<wheel>[course]"`` into a fresh venv (no system site-packages), and run from an empty
temporary directory with ``PYTHONPATH`` unset, so nothing can come from the repository: ``python -m dpedu demo``
(which reads the Adult files shipped inside the wheel) and chapter 1, executed headless in fast mode.

pip installs the dependencies the way it is configured on the machine (its index, or a local mirror); on a
machine with neither the test fails, since CI runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = {"numpy", "scipy", "matplotlib", "scikit-learn", "joblib", "tqdm"}
CHAPTER = "01_logistic_regression"

pytestmark = pytest.mark.slow


def _run(command, cwd, env, timeout=1200):
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def _clean_env(**extra):
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel, built from a copy of the files a source distribution holds (the repository is not touched)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "dpedu", source / "dpedu", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out), str(source)],
         cwd=source, env=_clean_env())
    [built] = out.glob("dpedu-*.whl")
    return built


def test_the_wheel_ships_the_adult_files_and_declares_only_runtime_dependencies(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    for data in ("adult.data.gz", "adult.test.gz", "adult.names", "README.txt"):
        assert f"dpedu/data/adult/{data}" in names, data
    assert not any(name.startswith(("tests/", "chapters/", "docs/")) for name in names)
    required = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    unconditional = {req.split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
                     for req in required if "extra ==" not in req}
    assert unconditional == RUNTIME, unconditional
    extras = {line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Provides-Extra:")}
    assert extras == {"course", "book", "instructor", "dev"}, extras


def test_a_clean_install_with_the_course_extra_runs_the_demo_and_a_chapter(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path, env=_clean_env())
    python = venv / "bin" / "python"
    env = _clean_env(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                     DPEDU_FAST="1", MPLBACKEND="Agg", JUPYTER_DATA_DIR=str(tmp_path / "jupyter-data"),
                     JUPYTER_CONFIG_DIR=str(tmp_path / "jupyter-config"), IPYTHONDIR=str(tmp_path / "ipython"))
    _run([str(python), "-m", "pip", "install", "--quiet", f"{wheel}[course]"], cwd=tmp_path, env=env)
    work = tmp_path / "work"               # an empty directory: nothing of the repository is importable here
    work.mkdir()
    where = _run([str(python), "-c", "import dpedu, sys; print(dpedu.__file__); print(sys.prefix)"],
                 cwd=work, env=env).stdout.split()
    assert Path(where[0]).is_relative_to(venv) and not Path(where[0]).is_relative_to(ROOT), where
    demo = _run([str(python), "-m", "dpedu", "demo"], cwd=work, env=env).stdout
    assert "accuracy" in demo.lower(), demo[-2000:]

    nb = json.loads((ROOT / "chapters" / f"{CHAPTER}.ipynb").read_text(encoding="utf-8"))
    nb["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                        "source": "import dpedu\nprint('kernel dpedu:', dpedu.__file__)"})
    (work / f"{CHAPTER}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    script = ("import nbformat, nbclient, sys\n"
              f"nb = nbformat.read('{CHAPTER}.ipynb', as_version=4)\n"
              "nbclient.NotebookClient(nb, timeout=900, kernel_name='python3').execute()\n"
              "errors = [o for c in nb.cells for o in c.get('outputs', []) if o.get('output_type') == 'error']\n"
              "print('cells', len(nb.cells), 'errors', len(errors))\n"
              "print(nb.cells[-1].outputs[0]['text'] if nb.cells[-1].outputs else 'no output')\n"
              "sys.exit(1 if errors else 0)\n")
    ran = _run([str(python), "-c", script], cwd=work, env=env).stdout
    assert "errors 0" in ran, ran
    kernel_dpedu = ran.split("kernel dpedu:")[1].split()[0]
    assert Path(kernel_dpedu).is_relative_to(venv), kernel_dpedu
