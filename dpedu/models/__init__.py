"""Models with hand-written losses and per-example gradients (``logistic``)."""

from . import logistic

__all__ = ["logistic"]
