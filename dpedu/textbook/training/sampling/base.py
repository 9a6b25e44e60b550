r"""What every batch sampling scheme is: :class:`Sampling`.

A scheme is one object the plan holds (:func:`dpedu.textbook.training.plan_dp_sgd`): how it draws the batches
:math:`B_1, B_2, \dots` of a run on ``n`` records, the public constant the noisy sum is divided by, how many steps
an epoch is, which privacy event a step records, and under which neighbouring relations those events hold. The
training loop never looks at a scheme's name; adding a scheme is adding one file to this folder (a subclass of
:class:`Sampling`) and its name to :data:`dpedu.textbook.training.sampling.SAMPLINGS`.
"""

from __future__ import annotations

import abc

from ....ground.events import ADD_REMOVE, NEIGHBOURING_RELATIONS

__all__ = ["Sampling"]


class Sampling(abc.ABC):
    """A batch sampling scheme for ``n`` records at rate ``sampling_rate`` (checked by the plan that makes it).

    Subclasses set ``name``, ``relations`` (the neighbouring relations under which their event is the mechanism
    the loop runs: adding a record must not move the other records' batches for add/remove), ``divisor`` and
    ``steps_per_epoch``, and define :meth:`batches` and :meth:`event`.
    """

    name = "?"
    relations = NEIGHBOURING_RELATIONS
    #: ``None`` when one step is one event; b when the event is a whole epoch of b steps (balls-in-bins).
    steps_per_event = None
    #: A message the loop warns with before training (a scheme no accountant covers), or ``None``.
    warning = None

    def __init__(self, n, sampling_rate):
        self.n, self.sampling_rate = n, sampling_rate

    def __repr__(self):
        return f"{type(self).__name__}(n={self.n}, sampling_rate={self.sampling_rate})"

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self):
        return hash((type(self), tuple(sorted(vars(self).items()))))

    def steps(self, epochs):
        """The number of steps of ``epochs`` passes (at least 1)."""
        return max(1, round(epochs * self.steps_per_epoch))

    @abc.abstractmethod
    def batches(self, rng):
        """Endless batches (index arrays, or ``slice(None)`` for every record) drawn from ``rng``."""

    @abc.abstractmethod
    def event(self, noise_multiplier, relation=ADD_REMOVE):
        """The privacy event of one step (or of one epoch, when ``steps_per_event`` is set)."""

    def ledger(self, noise_multiplier, steps, relation=ADD_REMOVE):
        """``[(event, count)]`` for ``steps`` steps: one event per step, or per (started) epoch."""
        per = self.steps_per_event
        return [(self.event(noise_multiplier, relation), steps if per is None else -(-steps // per))]
