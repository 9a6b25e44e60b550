"""Build the dpedu book: ``python docs/build.py`` writes the HTML site to ``docs/_build/html``.

It installs MathJax 3 (the one thing the site serves that is not a Python package) into ``docs/_vendor`` with
npm if it is not there yet, then runs Sphinx with warnings as errors::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The chapters run in fast mode unless ``DPEDU_FAST=0`` is set (see ``docs/conf.py``). Options: ``--out DIR``
for another output directory; any further arguments go to Sphinx (e.g. ``-j 2``). Every build starts from an
empty output directory, so no page of a renamed or removed module survives from an earlier build.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

DOCS = Path(__file__).resolve().parent
MATHJAX_VERSION = "3.2.2"
VENDOR = DOCS / "_vendor"


def ensure_mathjax():
    """The directory of MathJax 3's es5 build: $DPEDU_MATHJAX, or an npm install into docs/_vendor."""
    if os.environ.get("DPEDU_MATHJAX"):
        return Path(os.environ["DPEDU_MATHJAX"])
    es5 = VENDOR / "node_modules" / "mathjax" / "es5"
    if not (es5 / "tex-chtml.js").is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("npm not found: install Node.js (apt-get install -y nodejs npm), or set DPEDU_MATHJAX "
                             "to a directory holding MathJax 3's tex-chtml.js")
        VENDOR.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(VENDOR),
                        f"mathjax@{MATHJAX_VERSION}"], check=True)
    return es5


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(DOCS / "_build" / "html"), help="output directory")
    args, extra = parser.parse_known_args(argv)
    ensure_mathjax()
    shutil.rmtree(args.out, ignore_errors=True)      # a fresh build: nothing stale from an earlier one
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", *extra, str(DOCS), args.out]
    print("+", " ".join(command), flush=True)
    start = time.perf_counter()
    code = subprocess.call(command)
    print(f"book build: exit {code} after {time.perf_counter() - start:.0f} s -> {args.out}", flush=True)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
