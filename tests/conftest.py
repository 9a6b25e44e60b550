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
