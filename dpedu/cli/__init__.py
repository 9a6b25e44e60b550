"""The ``python -m dpedu`` command line.

Each subcommand lives in a small function ``cmd_<name>(args)`` in one module per command group
(:mod:`~dpedu.cli.training`: demo, tradeoff; :mod:`~dpedu.cli.accounting`: epsilon, plan, figure2;
:mod:`~dpedu.cli.learners`: race; :mod:`~dpedu.cli.auditing`: audit; :mod:`~dpedu.cli.attacks`: attack;
:mod:`~dpedu.cli.course`: chapters, strip-solutions, reference, course-kit;
:mod:`~dpedu.cli.statement`: statement), registered with its
argument parser, so ``python -m dpedu --help`` lists them all.

A user error (a bad number, a missing file, the Adult data not found) prints ONE line on stderr,
``error: ...``, naming the command-line option, and exits with status 1; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys

from . import accounting, attacks, auditing, course, learners, statement, training
from .common import MAX_STEPS, CliError

__all__ = ["main", "build_parser", "user_message", "CliError", "MAX_STEPS"]

COMMANDS = [*training.COMMANDS[:1], *accounting.COMMANDS, training.COMMANDS[1], *learners.COMMANDS,
            *auditing.COMMANDS, *attacks.COMMANDS, *course.COMMANDS, *statement.COMMANDS]

# argument names of dpedu's functions that a command fills from an option of another name
ALIASES = {
    "audit": {"norm": "--clip-norm (the canary's norm is 5 x --clip-norm)", "rng": "--seed", "runs": "--runs"},
    "attack": {"n_records": "--records", "n_canaries": "--canaries", "n_population": "--population", "rng": "--seed",
               "n_models": "--models", "n_bootstrap": "--bootstrap"},
    "tradeoff": {"rng": "--seed", "epsilons": "--epsilons", "seeds": "--seeds"},
    "race": {"rng": "--seed", "epsilons": "--epsilons", "seeds": "--seeds", "learners": "--learners"},
    "demo": {"clip": "--clip", "iterations": "--iterations"},
    "plan": {"dataset_size": "--dataset-size"},
}


def build_parser():
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="python -m dpedu",
        description="dpedu: differentially private machine learning, for teaching. Run a subcommand with --help "
                    "for its options.",
    )
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


POSITIONAL = {"command", "func", "debug", "source", "out_dir", "strict", "folder"}


def _option_names(args):
    """{argument name used inside dpedu: option string} for the command of ``args``.

    Every option ``--some-name`` is stored as ``some_name``, the name dpedu's functions use too.
    """
    options = {dest: "--" + dest.replace("_", "-") for dest in vars(args) if dest not in POSITIONAL}
    options.update(ALIASES.get(args.command, {}))
    return options


def user_message(exc, options=None):
    """One line for a user error: internal argument names replaced by ``options[name]``.

    >>> user_message(ValueError("noise_multiplier must be >= 0; got -1.0"), {"noise_multiplier": "--noise-multiplier"})
    '--noise-multiplier must be >= 0; got -1.0'
    >>> user_message(FileExistsError("2 files differ; pass force=True to overwrite them"), {"force": "--force"})
    '2 files differ; pass --force to overwrite them'
    """
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}"
    else:
        text = str(exc) or type(exc).__name__
    text = "; ".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
    if text.startswith("expected non-negative integer") and options and "seed" in options:
        text = f"{options['seed']} must be an integer >= 0 ({text})"        # numpy's SeedSequence names nothing
    for name, option in sorted((options or {}).items(), key=lambda item: -len(item[0])):
        if name.startswith("-"):
            continue
        text = re.sub(rf"\b{re.escape(name)}=True\b", option, text)        # "pass force=True" -> "pass --force"
        text = re.sub(rf"(^|; ){re.escape(name)}(?= must| should| is |:)", rf"\g<1>{option}", text)
    return text


def _check_common(args):
    """Options many commands share, checked before any work."""
    from ..ground.validation import check_positive

    for dest in ("clip_norm", "clip"):
        if getattr(args, dest, None) is not None:
            check_positive(getattr(args, dest), "--" + dest.replace("_", "-"))
    seed = getattr(args, "seed", None)
    if seed is not None and seed < 0:
        raise CliError(f"--seed must be an integer >= 0; got {seed}")


def _command_word(parser, argv):
    """The first word of ``argv`` that is not an option: the subcommand the user typed (or None)."""
    for word in argv:
        if not word.startswith("-"):
            return word
    return None


def check_command(parser, argv):
    """Refuse an unknown subcommand with the closest known ones (argparse would list all of them)."""
    sub = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    word = _command_word(parser, argv)
    if word is None or word in sub.choices:
        return
    close = difflib.get_close_matches(word, list(sub.choices), n=2, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(name) for name in close)}?" if close else ""
    parser.error(f"unknown command {word!r}{hint} (commands: {', '.join(sub.choices)})")


def main(argv=None):
    """Run the command line; returns the exit status (1 for a user error, 2 for a malformed command line)."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    check_command(parser, argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        _check_common(args)
        return args.func(args)
    except (ValueError, TypeError, OSError, OverflowError) as exc:     # the user's numbers or files
        if args.debug:
            raise
        print(f"error: {user_message(exc, _option_names(args))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("error: interrupted", file=sys.stderr)
        return 1
