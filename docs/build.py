"""Build the dpedu book: ``python docs/build.py`` writes its two editions to ``docs/_build/``.

* the **student** edition (``docs/_build/student``): every exercise as the stub students receive (the same
  stripping as ``python -m dpedu strip-solutions``), no reference solution anywhere in the site;
* the **instructor** edition (``docs/_build/instructor``): the reference solutions, each labelled, under an
  "Instructor edition" banner.

``--edition student``, ``--edition instructor`` or ``--edition both`` (the default); with one edition,
``--out DIR`` names its directory, with both, ``--out DIR`` holds ``DIR/student`` and ``DIR/instructor``.
The chapters run once: the first edition executes them into a fresh jupyter-cache, the second reads it.

The two editions share one doctree directory (``.doctrees`` beside the output, kept between builds): the API
pages are read by the first edition and reused by the second, and a later build re-reads only the pages whose
source or module changed, plus the chapters, which every build runs again. Pass ``-E`` to read everything afresh.

It installs MathJax 3 (the one thing the site serves that is not a Python package) into ``docs/_vendor`` with
npm if it is not there yet, then runs Sphinx with warnings as errors::

    python -m sphinx -W --keep-going -b html -d docs/_build/.doctrees docs docs/_build/student

The chapters run in fast mode unless ``DPEDU_FAST=0`` is set (see ``docs/conf.py``). Options: ``--out DIR``
for another output directory (see above); any further arguments go to Sphinx (e.g. ``-j 2``). Every build starts from an
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


EDITIONS = ("student", "instructor")


def build_edition(edition, out, extra=(), cache=None, doctrees=None):
    """Run Sphinx for one edition into ``out`` (emptied first); returns its exit status.

    ``doctrees``: Sphinx's environment and doctrees (default ``.doctrees`` beside ``out``: outside the site,
    never served), shared by the editions and kept between builds.
    """
    shutil.rmtree(out, ignore_errors=True)      # a fresh site: no page of a removed module survives
    doctrees = Path(out).parent / ".doctrees" if doctrees is None else Path(doctrees)
    env = dict(os.environ, DPEDU_BOOK_EDITION=edition)
    if cache is not None:
        env.update(DPEDU_BOOK_EXECUTE="cache", DPEDU_BOOK_CACHE=str(cache))
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-d", str(doctrees), *extra,
               str(DOCS), str(out)]
    print(f"+ DPEDU_BOOK_EDITION={edition}", " ".join(command), flush=True)
    start = time.perf_counter()
    code = subprocess.call(command, env=env)
    print(f"book build ({edition} edition): exit {code} after {time.perf_counter() - start:.0f} s -> {out}",
          flush=True)
    return code


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edition", choices=(*EDITIONS, "both"), default="both",
                        help="student (solutions stripped), instructor (solutions shown, marked) or both (default)")
    parser.add_argument("--out", default=None,
                        help="output directory (default docs/_build/<edition>; with both: DIR/student, DIR/instructor)")
    args, extra = parser.parse_known_args(argv)
    ensure_mathjax()
    editions = EDITIONS if args.edition == "both" else (args.edition,)
    if args.out is None:
        outs = {edition: DOCS / "_build" / edition for edition in editions}
    elif args.edition == "both":
        outs = {edition: Path(args.out) / edition for edition in editions}
    else:
        outs = {args.edition: Path(args.out)}
    cache = None
    if len(editions) > 1 and os.environ.get("DPEDU_BOOK_EXECUTE", "force") == "force":
        cache = DOCS / "_build" / ".jupyter_cache_editions"       # fresh: this build's code, run once
        shutil.rmtree(cache, ignore_errors=True)
    # one environment for the editions built together (beside their folders); a lone --out DIR gets its own
    doctrees = (Path(args.out).parent / f".doctrees-{Path(args.out).name}" if args.out and len(editions) == 1
                else next(iter(outs.values())).parent / ".doctrees")
    for edition in editions:
        code = build_edition(edition, outs[edition], extra, cache, doctrees)
        if code:
            return code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
