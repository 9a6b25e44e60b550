"""Build the chapter notebooks ``chapters/NN_*.ipynb`` from their sources in ``chapters/_src/``.

The sources are plain Python files in the "percent" format (also read by jupytext), so a chapter diffs
like code::

    # %% [markdown]
    # ## A heading
    # Some text.

    # %%
    x = 1

    # %% exercise=2.1
    def L2_clip(v, clip_norm):
        ### BEGIN SOLUTION
        ...
        ### END SOLUTION

    # %% check=2.1
    checks.check_L2_clip(L2_clip)

``exercise=N.M`` and ``check=N.M`` cells get nbgrader metadata (a solution cell and a locked, graded
check cell). A code cell that draws a figure starts with its alt text, which the book gives the image (it
becomes the cell's ``mystnb.image.alt`` metadata and leaves the code)::

    # %%
    # alt: Test accuracy against the total epsilon, one line per accountant, rising towards the
    #   non-private baseline.
    ax = plot_accuracy(...) The notebooks are written without outputs; cell ids are derived from the chapter and the
cell's position, so building twice gives identical files.

    python chapters/_build.py            # rebuild every chapter
    python chapters/_build.py --check    # exit 1 if a committed notebook differs from its source
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))        # the repository's dpedu (its booklinks places the chapters' links)
SOURCES = HERE / "_src"
HEADER = re.compile(r"^# %%(?P<markdown> \[markdown\])?(?: (?P<kind>exercise|check)=(?P<number>\d+\.\d+))?\s*$")
ALT, ALT_MORE = "# alt: ", "#   "        # a figure's alt text, and its continuation lines
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def _nbgrader(kind, number):
    grade_id = f"{kind}-{number.replace('.', '-')}"
    if kind == "exercise":
        return {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3, "solution": True,
                "task": False}
    return {"grade": True, "grade_id": grade_id, "locked": True, "points": 1, "schema_version": 3,
            "solution": False, "task": False}


def parse(text, name="<source>"):
    """The cells of a percent-format source: a list of nbformat cells (ids not yet set)."""
    cells, current = [], None

    def close():
        if current is None:
            return
        kind, meta, lines = current
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if not lines:
            raise ValueError(f"{name}: empty cell")
        if kind == "code" and lines[0].startswith(ALT):
            alt = [lines.pop(0)[len(ALT):].strip()]
            while lines and lines[0].startswith(ALT_MORE):
                alt.append(lines.pop(0)[len(ALT_MORE):].strip())
            meta = dict(meta, mystnb={"image": {"alt": " ".join(alt)}})
            if not lines:
                raise ValueError(f"{name}: a cell with alt text and no code")
        source = "\n".join(lines)
        if kind == "markdown":
            cells.append(nbformat.v4.new_markdown_cell(source, metadata=meta))
        else:
            cells.append(nbformat.v4.new_code_cell(source, metadata=meta))

    for number, line in enumerate(text.split("\n"), start=1):
        match = HEADER.match(line)
        if match:
            close()
            if match["markdown"]:
                if match["kind"]:
                    raise ValueError(f"{name}:{number}: exercise/check cells must be code cells")
                current = ("markdown", {}, [])
            else:
                meta = {"nbgrader": _nbgrader(match["kind"], match["number"])} if match["kind"] else {}
                current = ("code", meta, [])
            continue
        if line.startswith("# %%"):
            raise ValueError(f"{name}:{number}: unrecognised cell header {line!r}")
        if current is None:
            if line.strip():
                raise ValueError(f"{name}:{number}: text before the first cell header")
            continue
        if current[0] == "markdown":
            if line.strip() and not (line == "#" or line.startswith("# ")):
                raise ValueError(f"{name}:{number}: markdown lines must start with '# ': {line!r}")
            line = line[2:] if line.startswith("# ") else ""
        current[2].append(line)
    close()
    return cells


def build(source_path):
    """The notebook for one source file."""
    path = Path(source_path)
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    nb.cells = parse(path.read_text(encoding="utf-8"), path.name)
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"{path.stem[:2]}-{index:03d}"
    # API and notes links go into the folder reference/ beside the notebook, which JupyterLab serves with it
    # (dpedu.course.booklinks; `python -m dpedu reference chapters` writes chapters/reference/, and so does this
    # script; every copy of a chapter carries its own); the book relinks them to its own references
    from dpedu.course.booklinks import relink

    nb = nbformat.from_dict(relink(nb, to="jupyter"))
    nbformat.validate(nb)
    return nb


def target_of(source_path):
    return HERE / (Path(source_path).stem + ".ipynb")


def render(nb):
    return nbformat.writes(nb) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build chapters/*.ipynb from chapters/_src/*.py")
    parser.add_argument("--check", action="store_true", help="only check that the notebooks are up to date")
    args = parser.parse_args(argv)
    stale = []
    for source in sorted(SOURCES.glob("[0-9][0-9]_*.py")):
        target = target_of(source)
        text = render(build(source))
        if args.check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(target.name)
        else:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target.relative_to(HERE.parent)}")
    if not args.check:
        from dpedu.course.reference import write_reference

        write_reference(HERE)
        print("wrote chapters/reference/ (the notes and API pages the chapters link to; git-ignored)")
    if stale:
        print("out of date (run python chapters/_build.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
