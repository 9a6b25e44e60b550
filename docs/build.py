"""Build the dpedu book: ``python docs/build.py`` writes its two editions to ``docs/_build/``.

* the **student** edition (``docs/_build/student``): every exercise as the stub students receive (the same
  stripping as ``python -m dpedu strip-solutions``), no reference solution anywhere in the site;
* the **instructor** edition (``docs/_build/instructor``): the reference solutions, each labelled, under an
  "Instructor edition" banner.

``--edition student``, ``--edition instructor`` or ``--edition both`` (the default); with one edition,
``--out DIR`` names its directory, with both, ``--out DIR`` holds ``DIR/student`` and ``DIR/instructor``.
The chapters run once, before Sphinx starts: ``build.py`` stages them (``docs/_ext/staging.py``) and runs them
into a fresh jupyter-cache side by side, one kernel per CPU core (``--jobs N`` to choose; the longest chapters
first); both editions then read their outputs from that cache. A chapter that fails is left out of the cache, so
Sphinx runs it again and fails the build with its traceback.

The two editions share one doctree directory (``.doctrees`` beside the output, kept between builds): the API
pages are read by the first edition and reused by the second, and a later build re-reads only the pages whose
source or module changed, plus the chapters, which every build runs again. Pass ``-E`` to read everything afresh.

It installs MathJax 3 (the one thing the site serves that is not a Python package) into ``docs/_vendor`` with
npm if it is not there yet, then runs Sphinx with warnings as errors::

    python -m sphinx -W --keep-going -b html -d docs/_build/.doctrees docs docs/_build/student

The chapters run in **full mode**, the book the prose describes; ``--fast`` (or ``DPEDU_FAST=1`` in the
environment) runs them on the smaller grids of the fast mode, for a quick preview (see ``docs/conf.py``). Options:
``--out DIR`` for another output directory (see above); ``--jobs N`` (default: the CPU cores) for the chapters run
at once and Sphinx's ``-j``; ``--record-times FILE`` writes each chapter's run time in this build to FILE (JSON:
``python chapters/_times.py --table --measured-full FILE`` prints the course map with them; CI does); any further
arguments go to Sphinx. Every build starts from an empty output directory, so no page of a renamed or removed
module survives from an earlier build.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
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
CELL_TIMEOUT = 900          # seconds per cell, as docs/conf.py and tests/test_notebooks.py


def _run_chapter(path):
    """Execute one staged chapter in a fresh kernel, in its folder (as myst-nb does): (path, notebook, seconds, error)."""
    import nbformat
    from jupyter_cache.executors.utils import single_nb_execution

    notebook = nbformat.read(path, as_version=4)
    result = single_nb_execution(notebook, cwd=str(Path(path).parent), allow_errors=False, timeout=CELL_TIMEOUT,
                                 meta_override=True)
    return path, nbformat.writes(notebook), result.time, None if result.err is None else result.exc_string


def run_chapters_into(cache_path, jobs, fast):
    """Stage the chapters and run every one that ``cache_path`` (a jupyter-cache) does not hold yet, ``jobs`` at a
    time, the longest first (by the times of chapters/_times.json in that mode), in fast mode or not; cache each
    that succeeds. Returns the seconds of each chapter run, by name."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    sys.path[:0] = [str(ROOT), str(DOCS / "_ext")]
    os.environ["DPEDU_FAST"] = "1" if fast else "0"          # the kernels inherit it; so does Sphinx after us
    os.environ["DPEDU_PROGRESS"] = "0"                        # no progress bars on the pages (as docs/conf.py)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    from staging import stage

    if jobs > 1:    # one BLAS thread per kernel: two kernels with two threads each would fight over the cores
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")
    cache = get_cache(str(cache_path))
    todo = []
    for path in stage():
        try:
            cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            todo.append(path)
    times_file = ROOT / "chapters" / "_times.json"
    recorded = json.loads(times_file.read_text(encoding="utf-8")).get("fast" if fast else "full", {}) \
        if times_file.is_file() else {}
    todo.sort(key=lambda path: -recorded.get(path.stem, {}).get("seconds", 0.0))
    start, seconds_of = time.perf_counter(), {}
    with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(todo) or 1))) as pool:
        for future in as_completed([pool.submit(_run_chapter, str(path)) for path in todo]):
            path, text, seconds, error = future.result()
            if error is not None:
                print(f"{Path(path).name}: failed after {seconds:.1f} s (Sphinx runs it again and reports)", flush=True)
                continue
            cache.cache_notebook_bundle(CacheBundleIn(nbformat.reads(text, as_version=4), path,
                                                      data={"execution_seconds": seconds}),
                                        check_validity=False, overwrite=True)
            seconds_of[Path(path).stem] = seconds
            print(f"{Path(path).name}: ran in {seconds:.1f} s", flush=True)
    print(f"chapters ({'fast' if fast else 'full'} mode): {len(todo)} run with {jobs} at a time in "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    return seconds_of


def record_times(target, seconds_of, jobs):
    """Write each chapter's run time to ``target`` (JSON, as tests/test_notebooks.py's ``DPEDU_RECORD_TIMES``),
    with the machine and how many chapters ran at once (each with one BLAS thread when more than one)."""
    import platform

    times = {name: {"seconds": round(seconds, 1), "cpus": os.cpu_count(), "machine": platform.machine(),
                    "side_by_side": jobs} for name, seconds in sorted(seconds_of.items())}
    Path(target).write_text(json.dumps(times, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"chapter run times written to {target}", flush=True)


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
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="chapters run at once before Sphinx starts, and Sphinx's -j unless given "
                             "(default: the number of CPU cores)")
    parser.add_argument("--fast", action="store_true",
                        help="run the chapters in fast mode (smaller grids: a quick preview); also when DPEDU_FAST=1 "
                             "is set. Default: full mode, the book the prose describes")
    parser.add_argument("--record-times", metavar="FILE",
                        help="write each chapter's run time in this build to FILE (JSON)")
    args, extra = parser.parse_known_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be a positive integer; got {args.jobs}")
    if args.record_times is not None:
        target = Path(args.record_times)
        if not target.parent.is_dir():
            parser.error(f"--record-times: no directory {target.parent}")
        if args.edition != "both":
            parser.error("--record-times needs both editions built together (the chapters run once, timed, before "
                         "Sphinx); give --edition both")
        if os.environ.get("DPEDU_BOOK_EXECUTE", "force") != "force":
            parser.error("--record-times times the chapters this build runs; with DPEDU_BOOK_EXECUTE set it runs "
                         "none (unset it)")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))                  # dpedu from this checkout, installed or not
    from dpedu.course.notebook import fast_mode

    try:
        fast = args.fast or fast_mode()                # DPEDU_FAST from the environment, checked
    except ValueError as exc:
        parser.error(str(exc))
    # every option is checked: only now does the build set the environment its kernels inherit (a refused call
    # leaves it as it was: a test that calls main() in-process once left DPEDU_FAST=0 behind, and nbgrader then
    # graded the later chapters in full mode)
    os.environ["DPEDU_FAST"] = "1" if fast else "0"
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
    if cache is not None:
        seconds_of = run_chapters_into(cache, args.jobs, fast)
        if args.record_times is not None:
            record_times(args.record_times, seconds_of, args.jobs)
    if not any(arg.startswith("-j") or arg == "--jobs" for arg in extra):
        extra = ["-j", str(args.jobs), *extra]         # Sphinx reads and writes the pages in parallel too
    for edition in editions:
        code = build_edition(edition, outs[edition], extra, cache, doctrees)
        if code:
            return code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
