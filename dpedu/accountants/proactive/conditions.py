r"""The conditions under which the pro-active closed form is a guarantee, each checked (docs/math.md §16.1-16.2).

:math:`\varepsilon \le 1/2`, :math:`\delta = 1/N`, :math:`T \ge 2k^2/\varepsilon` and
:math:`(2/e)^2k^2 - 1/2 \ge \ln N` (van Dijk et al., arXiv 2102.09030), and what follows from them:
:math:`qz \le 1/e`. :func:`proactive_conditions` evaluates them all; :func:`minimum_steps` and
:func:`smallest_admissible_epochs` give the smallest schedule that satisfies them.

>>> minimum_steps(0.5, 5), smallest_admissible_epochs(60_000)
(100, 5)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...ground.validation import check_delta, check_epsilon, check_positive_int
from .closed_form import EPSILON_LIMIT, QZ_LIMIT, closed_form_z

__all__ = ["Condition", "ProactiveConditions", "check_dataset_size", "minimum_epochs", "smallest_admissible_epochs",
           "minimum_steps", "proactive_conditions"]


def check_dataset_size(dataset_size):
    """N as an int >= 2 (delta = 1/N must be < 1); ``ValueError``/``TypeError`` otherwise."""
    n = check_positive_int(dataset_size, "dataset_size")
    if n < 2:
        raise ValueError(f"dataset_size must be at least 2 (delta = 1/N must be < 1); got {n}")
    return n


@dataclass(frozen=True)
class Condition:
    """One condition of the closed form: ``value`` compared with ``bound``, and what to change if it fails."""

    name: str
    value: float
    bound: float
    holds: bool
    advice: str

    def __str__(self):
        mark = "holds" if self.holds else "FAILS"
        text = f"[{mark}] {self.name:<28}{self.value:>11.4g}  vs {self.bound:<10.4g}"
        if self.holds:
            return text.rstrip()
        line = f"{text}-> {self.advice}"                  # the advice on a line of its own if it is long
        return line if len(line) <= 92 else f"{text.rstrip()}\n{'':10}-> {self.advice}"


@dataclass(frozen=True)
class ProactiveConditions:
    """The conditions of the pro-active closed form for one (epsilon, delta, N, k, T), each checked."""

    conditions: tuple

    @property
    def all_hold(self):
        """True when the closed form is a guarantee for these parameters."""
        return all(c.holds for c in self.conditions)

    @property
    def failed(self):
        """The conditions that do not hold."""
        return tuple(c for c in self.conditions if not c.holds)

    def __iter__(self):
        return iter(self.conditions)

    def __getitem__(self, name):
        for c in self.conditions:
            if c.name == name:
                return c
        raise KeyError(name)

    def __str__(self):
        return "\n".join(str(c) for c in self.conditions)


def minimum_epochs(dataset_size):
    r"""The real bound :math:`k \ge (e/2)\sqrt{\ln N + 1/2}` on the epochs (4.61 for N = 60,000).

    It is :math:`(2/e)^2k^2 - 1/2 \ge \ln N` solved for k: at :math:`\varepsilon = 1/2`,
    :math:`\delta = 1/N`, :math:`T = 2k^2/\varepsilon` it is exactly :math:`qz \le 1/e` (docs/math.md §16.2).

    >>> round(minimum_epochs(60_000), 2)
    4.61
    """
    n = check_dataset_size(dataset_size)
    return math.e / 2.0 * math.sqrt(math.log(n) + 0.5)


def _epochs_condition_value(epochs):
    return (2.0 / math.e) ** 2 * epochs**2 - 0.5


def smallest_admissible_epochs(dataset_size):
    r"""The smallest whole number of epochs k with :math:`(2/e)^2k^2 - 1/2 \ge \ln N`.

    For a user who cannot afford the epochs they asked for: fewer than this and the closed form
    proves nothing (train longer, or calibrate on an accountant instead).

    >>> smallest_admissible_epochs(60_000), smallest_admissible_epochs(10**6)
    (5, 6)
    """
    n = check_dataset_size(dataset_size)
    k = max(1, math.ceil(minimum_epochs(n)))
    # decide by the inequality itself, not by the rounded square root
    while k > 1 and _epochs_condition_value(k - 1) >= math.log(n):
        k -= 1
    while _epochs_condition_value(k) < math.log(n):
        k += 1
    return k


def minimum_steps(epsilon, epochs):
    r"""The smallest admissible number of steps, T = ⌈2k²/ε⌉ (never below k, so that q = k/T <= 1).

    That is :math:`T = \lceil 2k^2/\varepsilon \rceil`.

    >>> minimum_steps(0.5, 5), minimum_steps(0.25, 5)
    (100, 200)
    """
    epsilon = check_epsilon(epsilon)
    epochs = check_positive_int(epochs, "epochs")
    return max(math.ceil(2.0 * epochs**2 / epsilon), epochs)


def proactive_conditions(*, epsilon, delta, dataset_size, epochs, steps):
    r"""Check every condition of the pro-active closed form (docs/math.md §16.1-16.2).

    Parameters
    ----------
    epsilon, delta : float
        The total budget.
    dataset_size : int
        N >= 2.
    epochs : int
        k >= 1 (total work K = kN per-example gradients).
    steps : int
        T >= k; the sampling rate is q = k/T.

    Returns
    -------
    ProactiveConditions
        In order: :math:`\varepsilon \le 1/2`; :math:`\delta = 1/N` (the paper's setting);
        :math:`T \ge 2k^2/\varepsilon` (i.e. :math:`Tq^2 \le \varepsilon/2`);
        :math:`(2/e)^2k^2 - 1/2 \ge \ln N`; and :math:`qz \le 1/e` at the chosen T with the
        closed-form z (what the moment bound behind the formula needs; implied by the others).

    Examples
    --------
    >>> c = proactive_conditions(epsilon=0.5, delta=1 / 60_000, dataset_size=60_000, epochs=5, steps=25)
    >>> c.all_hold, [x.name for x in c.failed]
    (False, ['T >= 2 k^2 / epsilon', 'q z <= 1/e'])
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    n = check_dataset_size(dataset_size)
    k = check_positive_int(epochs, "epochs")
    steps = check_positive_int(steps, "steps")
    if steps < k:
        raise ValueError(f"steps must be >= epochs, so that the sampling rate q = epochs/steps is at most 1; "
                         f"got steps={steps}, epochs={k}")
    z = closed_form_z(epsilon, delta)
    q = k / steps
    log_n = math.log(n)
    k_min = smallest_admissible_epochs(n)
    conditions = (
        Condition("epsilon <= 1/2", epsilon, EPSILON_LIMIT, epsilon <= EPSILON_LIMIT,
                  "the closed form is proven for epsilon <= 1/2 only: calibrate on an accountant instead "
                  "(dpedu.accountants.calibrate.noise_multiplier)"),
        Condition("delta = 1/N", delta, 1.0 / n, math.isclose(delta * n, 1.0, rel_tol=1e-9),
                  f"the paper states the guarantee for delta = 1/N = {1.0 / n:.4g}: pass delta=None"),
        Condition("T >= 2 k^2 / epsilon", steps, 2.0 * k * k / epsilon, steps >= 2.0 * k * k / epsilon,
                  f"use at least T = {minimum_steps(epsilon, k)} steps"),
        Condition("(2/e)^2 k^2 - 1/2 >= ln N", _epochs_condition_value(k), log_n, _epochs_condition_value(k) >= log_n,
                  f"train at least k >= (e/2) sqrt(ln N + 1/2) = {minimum_epochs(n):.3f} epochs, i.e. k = {k_min}"),
        Condition("q z <= 1/e", q * z, QZ_LIMIT, q * z <= QZ_LIMIT,
                  "use more steps (a smaller sampling rate q = k/T)"),
    )
    return ProactiveConditions(conditions)
