"""Shared pytest configuration.

Hypothesis runs *derandomized* by default: the examples are a fixed function of each test, so a clean checkout,
CI and a student's machine all run the same cases and a failure reproduces exactly. To let hypothesis explore new
random examples (as a developer hunting for bugs would), run ``DPEDU_HYPOTHESIS=explore python -m pytest``.
"""

import os

from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile("explore" if os.environ.get("DPEDU_HYPOTHESIS") == "explore" else "deterministic")
