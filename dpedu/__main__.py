"""``python -m dpedu``: the command line (see ``python -m dpedu --help``)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
