"""The course map, and the measured run time of every chapter: ``python chapters/_times.py``.

The map (:data:`COURSE`) is the one the README, ``docs/index.md`` and ``docs/syllabus.md`` follow: the core
path, then the chapters that go further, each with its prerequisites. For each chapter this script counts
the words of its prose and its exercises, executes it (nbclient, working directory ``chapters/``, as
``tests/test_notebooks.py`` does) and records the wall-clock seconds in ``chapters/_times.json`` under the
mode it ran in, together with the machine's CPU count. A time that was never measured stays absent and is
printed as "not yet measured"; nothing is estimated in its place.

    python chapters/_times.py                     # fast mode (DPEDU_FAST=1), every chapter
    python chapters/_times.py --full 04 10        # full mode, chapters 04 and 10 only
    python chapters/_times.py --table             # print the map with the recorded times, run nothing
    python chapters/_times.py --stamp             # write each chapter's time line and docs/syllabus.md
    python chapters/_times.py --table --measured ci_times.json --measured-full ci_full_times.json

CI measures both modes on every run and prints this table with them (the last line). The fast mode:
``tests/test_notebooks.py`` executes each chapter in fast mode and, when ``DPEDU_RECORD_TIMES`` names a file,
records the seconds there (``--measured``). The full mode: ``python docs/build.py --record-times FILE`` runs every
chapter in full mode for the book, as many side by side as the machine has cores (one BLAS thread each), and
records their seconds (``--measured-full``). ``chapters/_times.json`` keeps the times of ``python
chapters/_times.py [--full]`` runs, one chapter at a time, with the machine they ran on; the chapters' time lines
and ``docs/syllabus.md`` are stamped from it (``--stamp``).

The *estimated study time* of a chapter is computed, not guessed, at a newcomer's pace: reading at 100 words of
technical prose per minute, 10 seconds for every formula in a sentence and 2 minutes for every displayed formula
(a newcomer reads a formula symbol by symbol; the words alone miss a mathematical chapter's load), 15 minutes
per exercise, plus the chapter's fast-mode run time (a student runs it at least once in fast mode first),
rounded up to 5 minutes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TIMES = HERE / "_times.json"
READING_WORDS_PER_MINUTE = 100
SECONDS_PER_INLINE_FORMULA = 10
MINUTES_PER_DISPLAYED_FORMULA = 2
MINUTES_PER_EXERCISE = 15


@dataclass(frozen=True)
class Chapter:
    number: str
    title: str
    part: str            # "core" or "further"
    prerequisites: str


COURSE = (
    Chapter("00", "What differential privacy promises", "core", "Python, NumPy, basic probability"),
    Chapter("01", "Logistic regression from scratch", "core", "0"),
    Chapter("02", "Noisy gradient descent", "core", "0, 1"),
    Chapter("03", "Composition: what a whole training run costs", "core", "2"),
    Chapter("04", "DP-SGD", "core", "3"),
    Chapter("05", "The moments accountant", "core", "4"),
    Chapter("06", "Pro-active DP: choose the noise before training", "further", "5"),
    Chapter("07", "The effect of noise, and tuning", "further", "4"),
    Chapter("08", "What ε means: trade-off curves, Gaussian DP, a privacy statement", "further", "5"),
    Chapter("09", "Auditing: does the guarantee hold?", "further", "8"),
    # numbered 12 and 13 (the next free numbers, so that chapters 10 and 11 keep theirs), placed after 9 in the map
    Chapter("12", "What the released model reveals", "further", "9"),
    Chapter("13", "Attacks that measure privacy: LiRA and RMIA under the DP ceiling", "further", "9"),
    Chapter("10", "Does the accounting match the code?", "further", "4 (9 helps)"),
    Chapter("11", "Beyond DP-SGD: output and objective perturbation, DP-FTRL and matrix factorisation",
            "further", "4"),
)


def _build():
    """chapters/_build.py, the parser of the chapter sources, loaded from its file."""
    import importlib.util

    if "chapters_build" not in sys.modules:
        spec = importlib.util.spec_from_file_location("chapters_build", HERE / "_build.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["chapters_build"] = module
    return sys.modules["chapters_build"]


def source_of(number):
    found = sorted((HERE / "_src").glob(f"{number}_*.py"))
    return found[0] if found else None


def prose_words(source):
    """Words of the chapter's markdown cells, without math, code spans and link targets."""
    cells = _build().parse(source.read_text(encoding="utf-8"), source.name)
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    for pattern in (r"\$\$.*?\$\$", r"\$[^$\n]*\$", r"`[^`\n]*`", r"\]\([^)]*\)"):
        text = re.sub(pattern, " ", text, flags=re.S)
    return len(re.findall(r"[A-Za-zÀ-ÿεδ][\w'’-]*", text))


def formulas(source):
    """(formulas in sentences, displayed formulas) of the chapter's markdown cells: ``$...$`` and ``$$...$$``."""
    cells = _build().parse(source.read_text(encoding="utf-8"), source.name)
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    displayed = len(re.findall(r"\$\$.*?\$\$", text, flags=re.S))
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    return len(re.findall(r"\$[^$\n]+\$", text)), displayed


def exercises(source):
    return len(re.findall(r"^# %% exercise=", source.read_text(encoding="utf-8"), flags=re.M))


EXERCISE_TITLE = re.compile(r"\*\*Exercise (?P<number>\d+\.\d+) — (?P<title>.+?)\.?\*\*")


def graded_exercises(source):
    """``[(number, title, points)]`` of a chapter source, in order: each exercise cell (``# %% exercise=N.M``), the
    title its statement gives it (``**Exercise N.M — title.**``) and the points of its check cell (the nbgrader
    metadata ``chapters/_build.py`` writes, which ``nbgrader autograde`` counts).

    Raises ValueError for an exercise without a graded check cell or without a titled statement, so that the
    syllabus's grading table can neither leave an exercise out nor name one that is not there.
    """
    cells = _build().parse(source.read_text(encoding="utf-8"), source.name)
    titles = {m["number"]: m["title"] for cell in cells if cell.cell_type == "markdown"
              for m in EXERCISE_TITLE.finditer(cell.source)}
    points = {cell.metadata["nbgrader"]["grade_id"][len("check-"):].replace("-", "."):
              cell.metadata["nbgrader"]["points"] for cell in cells if cell.metadata.get("nbgrader", {}).get("grade")}
    out = []
    for cell in cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution"):
            continue
        number = meta["grade_id"][len("exercise-"):].replace("-", ".")
        if number not in points:
            raise ValueError(f"{source.name}: exercise {number} has no graded check cell")
        if number not in titles:
            raise ValueError(f"{source.name}: exercise {number} has no statement '**Exercise {number} — title.**'")
        out.append((number, titles[number], points[number]))
    return out


def load():
    return json.loads(TIMES.read_text(encoding="utf-8")) if TIMES.is_file() else {"fast": {}, "full": {}}


def study_minutes(words, n_exercises, fast_seconds, inline=0, displayed=0):
    """Minutes to study a chapter at a newcomer's pace (see the module's docstring), rounded up to 5."""
    minutes = (words / READING_WORDS_PER_MINUTE + inline * SECONDS_PER_INLINE_FORMULA / 60
               + displayed * MINUTES_PER_DISPLAYED_FORMULA + MINUTES_PER_EXERCISE * n_exercises
               + (fast_seconds or 0) / 60)
    return 5 * math.ceil(minutes / 5)


def execute(notebook, fast):
    """Seconds to run one notebook top to bottom in a fresh kernel."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    env = {"DPEDU_FAST": "1" if fast else "0", "MPLBACKEND": "module://matplotlib_inline.backend_inline",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        start = time.perf_counter()
        NotebookClient(nb, timeout=3600, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
        return time.perf_counter() - start
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def rows(times=None):
    """One row per chapter of the map: number, title, part, prerequisites, words, exercises, fast s, full s, study min."""
    times = load() if times is None else times
    out = []
    for chapter in COURSE:
        source = source_of(chapter.number)
        if source is None:
            out.append((chapter, None, None, None, None, None))
            continue
        words, n_ex = prose_words(source), exercises(source)
        fast = times["fast"].get(source.stem, {}).get("seconds")
        full = times["full"].get(source.stem, {}).get("seconds")
        out.append((chapter, words, n_ex, fast, full, study_minutes(words, n_ex, fast, *formulas(source))))
    return out


def _seconds(value):
    if value is None:
        return "not yet measured"
    return f"{value:.0f} s" if value < 119.5 else f"{value / 60:.1f} min"


def table(times=None):
    """The map as a markdown table (the one docs/syllabus.md shows)."""
    lines = ["| chapter | part | prerequisites | words of prose | exercises | run, fast mode | run, full mode "
             "| estimated study time |", "|---|---|---|---|---|---|---|---|"]
    for chapter, words, n_ex, fast, full, study in rows(times):
        part = "core" if chapter.part == "core" else "going further"
        if words is None:
            lines.append(f"| {int(chapter.number)}. {chapter.title} | {part} | {chapter.prerequisites} | "
                         "not yet written | | | | |")
            continue
        lines.append(f"| {int(chapter.number)}. {chapter.title} | {part} | {chapter.prerequisites} | {words} | {n_ex} "
                     f"| {_seconds(fast)} | {_seconds(full)} | {study} min |")
    return "\n".join(lines)


WORKSHOP_DAY_MINUTES = 360     # two days of six hours of sessions
SEMESTER_WEEKS = 14
WEEK_MINUTES = 180             # a week: a 90-minute session and as much again on one's own


def syllabus(times=None):
    """The text of ``docs/syllabus.md``: the map with its times, a semester plan and a two-day workshop plan.

    Both plans are built from the estimated study times: a chapter takes ceil(study / WEEK_MINUTES) weeks of
    the semester, in the order of the map, and the weeks left over go to a project; the workshop fills each
    day with whole core chapters, in order, while they fit in WORKSHOP_DAY_MINUTES.
    """
    table_rows = [r for r in rows(times) if r[1] is not None]
    lines = ["# Syllabus", "",
             "The course has a **core path** (chapters 0–5): from what differential privacy promises to DP-SGD with a",
             "tight accountant. The chapters that **go further** can follow in any order once their prerequisites are",
             "done. Every number below is computed by `python chapters/_times.py` (which wrote this page):",
             "",
             f"* *words of prose*: the markdown of the chapter, without formulas and code;",
             f"* *run*: the seconds the whole notebook takes, measured by executing it (fast mode: `DPEDU_FAST=1`,",
             "  smaller grids, same code), one chapter at a time; a time not measured yet says so. CI measures both "
             "modes again",
             "  on every run and prints this table with its own times;",
             f"* *estimated study time*, at a newcomer's pace: reading at {READING_WORDS_PER_MINUTE} words a minute, "
             f"{SECONDS_PER_INLINE_FORMULA} seconds",
             f"  for every formula in a sentence and {MINUTES_PER_DISPLAYED_FORMULA} minutes for every displayed "
             f"formula, {MINUTES_PER_EXERCISE} minutes per exercise, plus",
             "  one fast run, rounded up to 5 minutes. It is an estimate of the reading and the exercises, not a "
             "measurement.",
             "", table(times), ""]
    machine = {v.get("cpus") for mode in ("fast", "full") for v in (times or load())[mode].values()}
    if machine - {None}:
        lines += [f"The run times were measured on a machine with {', '.join(str(c) for c in sorted(machine - {None}))} "
                  "CPU cores shared with other work; on another machine they will differ.", ""]
    lines += ["## A semester", "",
              f"{SEMESTER_WEEKS} weeks, each a 90-minute session and as much again on one's own ({WEEK_MINUTES} "
              "minutes). A chapter", "gets as many weeks as its study time needs; the weeks left over go to a project.", "",
              "| week | chapter | estimated study time |", "|---|---|---|"]
    week = 1
    for chapter, words, n_ex, fast, full, study in table_rows:
        n_weeks = max(1, math.ceil(study / WEEK_MINUTES))
        span = f"{week}" if n_weeks == 1 else f"{week}–{week + n_weeks - 1}"
        lines.append(f"| {span} | {int(chapter.number)}. {chapter.title} | {study} min |")
        week += n_weeks
    if week <= SEMESTER_WEEKS:
        span = f"{week}" if week == SEMESTER_WEEKS else f"{week}–{SEMESTER_WEEKS}"
        lines.append(f"| {span} | project: audit or account a model of your choice (chapters 9 and 10) | |")
    else:
        lines.append(f"| | (the chapters need {week - 1} weeks: more than {SEMESTER_WEEKS}; drop a going-further chapter) | |")
    lines += grading()
    lines += ["", "## A two-day workshop", "",
              f"Two days of {WORKSHOP_DAY_MINUTES // 60} hours of sessions. The days take whole chapters in the order of "
              "the map while", "their study times fit, the core path first; a going-further chapter is taken only on "
              "day 2, after its", "prerequisites. What does not fit is reading for after the workshop.", ""]
    day, used, plan = 1, 0, {1: [], 2: [], "after": []}
    for row in table_rows:
        chapter, study = row[0], row[5]
        needs = {int(n) for n in re.findall(r"\d+", chapter.prerequisites.split("(")[0])}
        done = {int(r[0].number) for r in plan[1] + plan[2]}
        if chapter.part == "core" and used + study > WORKSHOP_DAY_MINUTES and day == 1:
            day, used = 2, 0
        if used + study > WORKSHOP_DAY_MINUTES or not needs <= done or (chapter.part != "core" and day == 1):
            plan["after"].append(row)
            continue
        plan[day].append(row)
        used += study
    for key, title in ((1, "Day 1"), (2, "Day 2")):
        total = sum(r[5] for r in plan[key])
        names = "; ".join(f"{int(r[0].number)}. {r[0].title} ({r[5]} min)" for r in plan[key]) or "–"
        lines.append(f"* **{title}** ({total} min): {names}.")
    lines.append("* **Afterwards**: " + ("; ".join(f"{int(r[0].number)}. {r[0].title}" for r in plan["after"]) or "–")
                 + ".")
    lines.append("")
    return "\n".join(lines)


EXERCISES_WEIGHT = 60          # per cent of the semester grade: the chapters' exercises, graded by their checks
PROJECT_WEIGHT = 100 - EXERCISES_WEIGHT
# the project's rubric: (criterion, points, what earns them); its points add up to PROJECT_POINTS
PROJECT_RUBRIC = (
    ("The privacy claim", 5, "ε and δ, the neighbouring relation, the sampling scheme and the accountant are "
                             "named, and they match what the code runs (chapter 10); each number is stated "
                             "with the theorem that gives it"),
    ("The accounting", 4, "the same run priced by at least two accountants, and the difference explained "
                          "(chapters 3 and 5)"),
    ("The audit", 5, "an empirical lower bound on ε with its confidence level, beside the upper bound, and what "
                     "the gap does and does not show (chapter 9)"),
    ("The utility", 3, "accuracy against ε beside the non-private baseline, the mean and spread over seeds, with "
                       "the cost of any tuning counted in the ε reported (chapter 7)"),
    ("Reproducible and readable", 3, "one command reruns every number from a clean install with fixed seeds; a "
                                     "privacy statement (chapter 8) closes the report"),
)
PROJECT_POINTS = sum(points for _, points, _ in PROJECT_RUBRIC)


def grading(sources=None):
    """The "Grading" section of the syllabus (lines): every exercise with its points, read from the chapter
    sources (:func:`graded_exercises`), the weights, and the project's rubric."""
    chapters = [(c, source_of(c.number)) for c in COURSE] if sources is None else sources
    graded = [(c, graded_exercises(source)) for c, source in chapters if source is not None]
    total = sum(points for _, exercises in graded for _, _, points in exercises)
    n_exercises = sum(len(exercises) for _, exercises in graded)
    lines = ["", "## Grading", "",
             f"For a semester course: the chapters' exercises are **{EXERCISES_WEIGHT} %** of the grade and the "
             f"project **{PROJECT_WEIGHT} %**. In", "the workshop the checks are feedback, not a grade.", "",
             f"**Exercises ({EXERCISES_WEIGHT} %).** Each exercise is graded by its check cell (`nbgrader "
             "autograde` in the course kit,", "`python -m dpedu course-kit`): the check passes or it does not, and a passed check "
             "earns the points below. The", f"{n_exercises} exercises are worth {total} points; the exercise grade "
             f"is the share of them earned, so a chapter weighs what its", "exercises are worth. The list is read "
             "from the chapters by `python chapters/_times.py`, as the times are.", "",
             "| chapter | exercises (points) | points | share of the exercise grade |", "|---|---|---|---|"]
    for chapter, exercises in graded:
        points = sum(p for _, _, p in exercises)
        listed = "; ".join(f"{number} {title} ({p})" for number, title, p in exercises)
        lines.append(f"| {int(chapter.number)}. {chapter.title} | {listed} | {points} | "
                     f"{100 * points / total:.1f} % |")
    lines += [f"| total | {n_exercises} exercises | {total} | 100 % |", "",
              f"**Project ({PROJECT_WEIGHT} %).** In the weeks left after the chapters: audit or account a model of "
              "your choice (chapters 9 and 10),", f"graded out of {PROJECT_POINTS} points by this rubric. A criterion "
              "earns its points in full when its description holds, half of", "them when it holds with a gap the "
              "report names, and none otherwise.", "",
              "| criterion | points | full points when |", "|---|---|---|"]
    lines += [f"| {criterion} | {points} | {what} |" for criterion, points, what in PROJECT_RUBRIC]
    lines += [f"| total | {PROJECT_POINTS} | |"]
    return lines


STAMP = "# *Prerequisites:* "


def prerequisites_text(chapter):
    """"chapters 0, 1" from "0, 1"; other text as it is."""
    text = chapter.prerequisites
    if not text[:1].isdigit():
        return text
    return ("chapters " if "," in text.split(" (")[0] else "chapter ") + text


def stamp_lines(chapter, times=None):
    """The markdown lines (percent format) that state a chapter's prerequisites and time, from the map."""
    row = next(r for r in rows(times) if r[0] is chapter)
    _, words, n_ex, fast, full, study = row
    fast_text = "fast mode (`DPEDU_FAST=1`) not yet measured" if fast is None else \
        f"{_seconds(fast)} in fast mode (`DPEDU_FAST=1`)"
    full_text = "full mode not yet measured" if full is None else f"{_seconds(full)} in full mode"
    return [f"{STAMP}{prerequisites_text(chapter)}. *Time:* about {study} min of reading and exercises.",
            f"# *Run time* (measured by `chapters/_times.py`): {fast_text}, {full_text}.",
            "#"]


def stamped(text, chapter, times=None):
    """The source ``text`` with its prerequisites-and-time lines replaced (or inserted after the objectives)."""
    lines = text.split("\n")
    new = stamp_lines(chapter, times)
    if any(line.startswith(STAMP) for line in lines):
        start = next(i for i, line in enumerate(lines) if line.startswith(STAMP))
        end = start
        while end < len(lines) and lines[end] not in ("#", "") and not lines[end].startswith("# %%"):
            end += 1
        return "\n".join(lines[:start] + new[:-1] + lines[end:])
    quote = next(i for i, line in enumerate(lines) if line.startswith("# >"))
    end = next(i for i in range(quote, len(lines)) if not lines[i].startswith("# >"))
    return "\n".join(lines[:end + 1] + new + lines[end + 1:])


def stamp(times=None):
    """Write every chapter's prerequisites-and-time lines; the names of the sources that changed."""
    changed = []
    for chapter in COURSE:
        source = source_of(chapter.number)
        if source is None:
            continue
        text = source.read_text(encoding="utf-8")
        new = stamped(text, chapter, times)
        if new != text:
            source.write_text(new, encoding="utf-8")
            changed.append(source.name)
    return changed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter numbers to run (default: all)")
    parser.add_argument("--full", action="store_true", help="run in full mode (DPEDU_FAST=0); takes far longer")
    parser.add_argument("--table", action="store_true", help="only print the map with the recorded times")
    parser.add_argument("--measured", metavar="FILE",
                        help="with --table: take the fast-mode times from FILE (written by tests/test_notebooks.py "
                             "under DPEDU_RECORD_TIMES) instead of chapters/_times.json")
    parser.add_argument("--measured-full", metavar="FILE",
                        help="with --table: take the full-mode times from FILE (written by python docs/build.py "
                             "--record-times FILE) instead of chapters/_times.json")
    parser.add_argument("--stamp", action="store_true",
                        help="only write each chapter's prerequisites-and-time lines and docs/syllabus.md from the "
                             "recorded times")
    args = parser.parse_args(argv)
    times = load()
    sources = {"fast": "recorded in chapters/_times.json by `python chapters/_times.py`",
               "full": "recorded in chapters/_times.json by `python chapters/_times.py --full`"}
    for mode, option, value in (("fast", "--measured", args.measured), ("full", "--measured-full", args.measured_full)):
        if value is None:
            continue
        if not args.table:
            parser.error(f"{option} goes with --table")
        measured = Path(value)
        if not measured.is_file():
            parser.error(f"{option}: no file {measured}")
        try:
            times[mode] = json.loads(measured.read_text(encoding="utf-8"))
        except ValueError as exc:
            parser.error(f"{option}: {measured} is not JSON ({exc})")
        side = {entry.get("side_by_side", 1) for entry in times[mode].values()}
        sources[mode] = (f"measured by this {'test run' if mode == 'fast' else 'book build'} "
                         f"({len(times[mode])} chapters" + (f", {max(side)} side by side, one BLAS thread each)"
                                                           if max(side, default=1) > 1 else ")"))
    if args.table and (args.measured or args.measured_full):
        print(f"fast mode: {sources['fast']}; full mode: {sources['full']}")
    if args.stamp:
        for name in stamp(times):
            print(f"stamped {name}")
        (ROOT / "docs" / "syllabus.md").write_text(syllabus(times), encoding="utf-8")
        print("wrote docs/syllabus.md")
        return 0
    if not args.table:
        mode = "full" if args.full else "fast"
        for chapter in COURSE:
            if args.chapters and chapter.number not in args.chapters:
                continue
            notebook = HERE / f"{source_of(chapter.number).stem}.ipynb" if source_of(chapter.number) else None
            if notebook is None or not notebook.is_file():
                continue
            seconds = execute(notebook, fast=not args.full)
            times[mode][notebook.stem] = {"seconds": round(seconds, 1), "cpus": os.cpu_count(),
                                          "machine": platform.machine()}
            print(f"{notebook.stem}: {seconds:.1f} s ({mode} mode)", flush=True)
            TIMES.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(table(times))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
