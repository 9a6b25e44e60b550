"""The README's Python examples run as written, in a fresh interpreter, and print what their comments say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)


def _run(code, tmp_path):
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.splitlines()


def test_the_readme_has_its_two_examples():
    assert len(BLOCKS) == 2 and "noisy_gradient_descent" in BLOCKS[0] and "parallel_backend" in BLOCKS[1]


def test_the_minimal_example_prints_what_its_comments_say(tmp_path):
    lines = _run(BLOCKS[0], tmp_path)
    assert abs(float(lines[0]) - 0.78) < 0.01                       # "about 0.78, as in the book"
    assert lines[1] == "1.1 0.0001"                                  # sequential composition, as the book
    assert lines[2].startswith("accountant") and any(line.startswith("pld") for line in lines)
    accuracy, epsilon = map(float, lines[-1].split())
    assert abs(accuracy - 0.843) < 0.002 and epsilon <= 1.0          # "about 0.843; epsilon_ <= 1.0"


def test_the_dask_example_gives_the_serial_number(tmp_path):
    lines = _run(BLOCKS[1], tmp_path)
    from dpedu.lab import audit

    X, y = audit.make_audit_data(n=100, d=3, rng=0)
    train = audit.dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4)
    serial = audit.canary_audit(train, X, y, audit.make_canary(X, y), runs=2000, rng=0)
    assert float(lines[-1]) == pytest.approx(serial.epsilon_lower, rel=1e-12)


def test_the_cost_of_the_tuning_behind_the_defaults_is_the_computed_one():
    from dpedu.lab.experiments.tuning_costs import defaults_provenance_cost

    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    low, one, high = defaults_provenance_cost((0.1, 1.0, 10.0))
    assert one.runs == 162 and "162 models per ε (54 configurations × 3 seeds)" in text
    assert (f"ε = {one.composed_epsilon:.1f} at δ = 1e-5 for the ε = 1 row ({low.composed_epsilon:.1f} for ε = 0.1, "
            f"{high.composed_epsilon:.1f} for ε = 10" in text)
