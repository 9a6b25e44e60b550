"""Helpers shared by the commands: argument types, the steps of a run, figures, wrapping and progress."""

from __future__ import annotations

import argparse
import sys

from ..ground import validation
from ..ground.validation import MAX_STEPS

__all__ = ["MAX_STEPS", "CliError", "progress", "floats", "check_positive_list", "add_run_options", "check_accountants",
           "names", "check_input_dir", "check_input_path", "check_output_dir", "check_steps", "check_output",
           "steps_and_epochs", "figure", "wrap"]


class CliError(ValueError):
    """A user error found by the command line itself (shown as one line, exit status 1)."""


class Progress:
    """Progress on stderr, so tables on stdout stay clean for redirection.

    On a terminal, messages that start with a count (``"[3/10] ..."``, ``"audit: 3/10 ..."``) move a tqdm
    bar; elsewhere (a pipe, a log file, a test) every message is one line.
    """

    def __init__(self):
        self._bar = None

    def __call__(self, message):
        from ..course.notebook import progress_count

        count = progress_count(message) if sys.stderr.isatty() else None
        if count is None:
            self.close()
            print(message, file=sys.stderr, flush=True)
            return
        done, total, rest = count
        if self._bar is None or self._bar.total != total or done < self._bar.n:
            from tqdm import tqdm

            self.close()
            self._bar = tqdm(total=total, file=sys.stderr, leave=False)
        self._bar.update(done - self._bar.n)
        self._bar.set_postfix_str(rest)
        if done >= total:
            self.close()

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None


progress = Progress()


def floats(text):
    """'0.1,0.5,1' -> [0.1, 0.5, 1.0] (for argparse)."""
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers such as 0.1,1,10; got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one number")
    return values


def check_positive_list(values, option):
    """Every number of a comma-separated option finite and > 0, refused in the option's words.

    >>> check_positive_list([0.5, -1.0], "--epsilons")
    Traceback (most recent call last):
    ...
    dpedu.cli.common.CliError: --epsilons must be positive numbers; got -1
    """
    bad = [value for value in values if not (0 < value < float("inf"))]
    if bad:
        raise CliError(f"{option} must be positive numbers; got {', '.join(f'{value:g}' for value in bad)}")
    return values


def add_run_options(parser, sampling_help):
    """The options of one DP-SGD run to account: ``--noise-multiplier``/``-z``, ``--sampling-rate``/``-q`` (with
    ``sampling_help``) and exactly one of ``--epochs`` and ``--steps`` (read back by :func:`steps_and_epochs`)."""
    parser.add_argument("--noise-multiplier", "-z", type=float, required=True, help="z = noise std / clip norm")
    parser.add_argument("--sampling-rate", "-q", type=float, required=True, help=sampling_help)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--epochs", type=float, help="epochs; steps = round(epochs / q)")
    group.add_argument("--steps", type=int, help="number of steps T")


def check_accountants(names, option):
    """Accountant names, an unknown one refused naming ``option``
    ("--accountant: accountant must be one of ...; got 'rpd'")."""
    from ..accountants import check_accountant_names

    try:
        return check_accountant_names(names, option)
    except ValueError as exc:
        raise CliError(f"{option}: {exc}") from None


def names(text):
    """'rdp,pld' -> ('rdp', 'pld')."""
    parts = tuple(part.strip() for part in text.split(",") if part.strip())
    if not parts:
        raise argparse.ArgumentTypeError("expected comma-separated accountant names such as rdp,pld")
    return parts


def _steps_limit(value, option, steps_per_epoch=None):
    """:func:`dpedu.ground.validation.check_steps` (the one :data:`MAX_STEPS` check), reported as a :class:`CliError`."""
    try:
        return validation.check_steps(value, option, steps_per_epoch=steps_per_epoch)
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None


def check_steps(epochs, sampling_rate, option="--epochs"):
    """The steps of ``epochs`` epochs at sampling rate q; refused above :data:`MAX_STEPS` before any work."""
    if sampling_rate > 0:                              # nan or <= 0: validated below, by name
        _steps_limit(epochs, option, steps_per_epoch=1.0 / sampling_rate)
    from ..ground.events import steps_from_epochs

    return steps_from_epochs(epochs, sampling_rate)


def steps_and_epochs(args):
    """(steps, epochs) from --steps or --epochs (exactly one), with steps = max(1, round(epochs / q))."""
    if (args.steps is None) == (args.epochs is None):
        raise CliError("give exactly one of --epochs and --steps")
    if args.steps is not None:
        _steps_limit(args.steps, "--steps")
        return args.steps, args.steps * args.sampling_rate
    return check_steps(args.epochs, args.sampling_rate), args.epochs


def check_output(path, option):
    """Refuse, before any work, an output file whose folder does not exist."""
    from pathlib import Path

    if path is not None and not Path(path).expanduser().resolve().parent.is_dir():
        raise CliError(f"{option}: the folder of {path} does not exist")
    return path


def check_input_dir(path, option):
    """Refuse, before any work, an input folder (``--data-home``) that is not an existing directory (None: not given).

    A folder that does not exist is an error, not a silent fall-back to another copy of the data."""
    from pathlib import Path

    if path is None:
        return None
    if not str(path).strip():
        raise CliError(f"{option}: an empty path names no folder")
    if not Path(path).expanduser().is_dir():
        raise CliError(f"{option}: {path} is not an existing folder")
    return path


def check_input_path(path, option):
    """Refuse, before any work, an input file or folder that does not exist."""
    from pathlib import Path

    if not str(path).strip() or not Path(path).expanduser().exists():
        raise CliError(f"{option}: {path} does not exist")
    return path


def check_output_dir(path, option):
    """Refuse, before any work, an output folder whose parent does not exist or that names an existing file."""
    from pathlib import Path

    folder = Path(path).expanduser()
    if not str(path).strip() or folder.is_file() or not folder.resolve().parent.is_dir():
        raise CliError(f"{option}: {path} must be a folder whose parent exists")
    return path


def figure(nrows=1, ncols=1, figsize=(7, 4.5)):
    """A matplotlib Figure on an Agg canvas, not attached to pyplot: no GUI backend or global state is touched.

    The canvas gives the figure a renderer, which the plotting helpers use to place legends off the data.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(nrows, ncols)


def wrap(text, indent="    ", hanging="    "):
    """``text`` wrapped at 110 columns."""
    import textwrap

    return textwrap.fill(text, width=110, initial_indent=indent, subsequent_indent=hanging)
