r"""A privacy budget that cannot be overspent.

A :class:`PrivacyBudget` holds a total :math:`(\varepsilon, \delta)` for one dataset and the ledger of
everything already released about it. Before each release or training run it composes the new events
with the old ones *hypothetically*, on a fresh accountant, and refuses with :class:`BudgetExceededError`
if the total would exceed :math:`\varepsilon` at :math:`\delta`. The refusal happens before any noise
is drawn or any step is taken, and leaves the budget unchanged.

**"Remaining" is not a subtraction.** Under sequential composition epsilons add, so
``remaining = epsilon - spent`` answers "can I afford this?". Under RDP, zCDP or PLD they do not: the
total of two runs is usually *less* than the sum of their separate epsilons (the conversion to
:math:`(\varepsilon, \delta)` is paid once, not twice), and with a fixed order grid it is not guaranteed
to be at most the sum either. So :meth:`PrivacyBudget.remaining` is a guide; the decision is always
made by :meth:`PrivacyBudget.can_afford`, which accounts the whole would-be ledger.

>>> from dpedu.accountants import LaplaceEvent
>>> budget = PrivacyBudget(epsilon=1.0, delta=1e-5, accountant="sequential")
>>> budget.spend(LaplaceEvent(0.4))                   # returns the total spent so far
0.4
>>> budget.can_afford(LaplaceEvent(0.7)), round(budget.remaining(), 10)
(False, 0.6)
>>> budget.spend(LaplaceEvent(0.7))
Traceback (most recent call last):
...
dpedu.budget.BudgetExceededError: refused: this release would bring the total to epsilon=1.1 at delta=1e-05 ...
>>> budget.ledger                                     # unchanged by the refusal
[(LaplaceEvent(epsilon=0.4), 1)]
"""

from __future__ import annotations

from .validation import check_delta, check_epsilon
from .accountants import ACCOUNTANT_NAMES, as_ledger, make_accountant

__all__ = ["PrivacyBudget", "BudgetExceededError"]


class BudgetExceededError(RuntimeError):
    """A release or training run would take the total privacy loss past the budget; nothing was released.

    A :class:`RuntimeError`, not a :class:`ValueError`: the request itself is well formed (the same call
    succeeds on a fresh budget); it is refused because of what has *already* been spent.
    """


class PrivacyBudget:
    r"""Total privacy budget :math:`(\varepsilon, \delta)` for one dataset, with a ledger of what was spent.

    Parameters
    ----------
    epsilon : float
        Total epsilon allowed over every release, > 0.
    delta : float
        The delta at which totals are measured, in (0, 1).
    accountant : str, default "rdp"
        Registry name (:data:`dpedu.accountants.ACCOUNTANT_NAMES`) of the accountant that composes the
        ledger. It must support every event charged (an unsupported event raises
        :class:`~dpedu.accountants.UnsupportedEventError` before anything is recorded).

    Attributes
    ----------
    ledger : list of (event, count)
        Everything charged so far, in order.

    Notes
    -----
    A budget is a fact about the world (how much of the data's privacy is gone), so it is never
    duplicated: ``copy.copy`` and ``copy.deepcopy`` return the same object. That is what makes
    ``DPLogisticRegression(budget=b)`` inside ``clone``, ``Pipeline`` or ``cross_val_score`` charge
    ``b`` itself (scikit-learn deep-copies non-estimator parameters). Pickling (e.g. ``n_jobs > 1``)
    *does* copy it, and charges made in another process are lost: use ``n_jobs=1`` with a budget.

    All events assume add/remove neighbours (docs/math.md §1.2), as the accountants do.
    """

    def __init__(self, epsilon, delta, accountant="rdp"):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        if accountant not in ACCOUNTANT_NAMES:
            raise ValueError(f"accountant must be one of {', '.join(ACCOUNTANT_NAMES)}; got {accountant!r}")
        self.accountant = accountant
        self.ledger = []

    def __repr__(self):
        return (f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:g}, accountant={self.accountant!r}; "
                f"spent {self.spent():.4g})")

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    # --- accounting -----------------------------------------------------------------------------

    @staticmethod
    def _entries(history, count):
        """Normalise ``(event, count)`` or a ledger to a list of (event, count)."""
        entries = as_ledger(history)
        if count is not None:
            if len(entries) != 1 or entries[0][1] != 1:
                raise ValueError("count= applies to a single event; a ledger already carries its counts")
            entries = [(entries[0][0], count)]
        return entries

    def _epsilon_of(self, ledger):
        """Total epsilon of ``ledger`` at this budget's delta, on a fresh accountant."""
        acc = make_accountant(self.accountant)
        for event, count in ledger:
            acc.compose(event, count)
        return acc.get_epsilon(self.delta)

    def spent(self):
        """Epsilon spent so far (at ``delta``) by the budget's accountant; 0 for an empty ledger."""
        return self._epsilon_of(self.ledger)

    def remaining(self):
        """``epsilon - spent()``: a guide only; under RDP/zCDP/PLD ask :meth:`can_afford` (module docstring)."""
        return self.epsilon - self.spent()

    def epsilon_after(self, history, count=None):
        """Total epsilon if ``history`` (an event, with optional ``count``, or a ledger) were charged now."""
        return self._epsilon_of(self.ledger + self._entries(history, count))

    def can_afford(self, history, count=None):
        """Whether charging ``history`` would keep the total within ``epsilon`` (nothing is recorded)."""
        return self.epsilon_after(history, count) <= self.epsilon

    def spend(self, history, count=None):
        """Charge ``history`` (an event with optional ``count``, or a ledger) *before* releasing anything.

        Returns
        -------
        float
            The total epsilon spent after this charge.

        Raises
        ------
        BudgetExceededError
            If the total would exceed ``epsilon``; the ledger is left unchanged.
        """
        entries = self._entries(history, count)
        total = self._epsilon_of(self.ledger + entries)
        if total > self.epsilon:
            raise BudgetExceededError(
                f"refused: this release would bring the total to epsilon={total:.4g} at delta={self.delta:g} "
                f"({self.accountant} accountant), over the budget epsilon={self.epsilon:g} "
                f"(already spent {self.spent():.4g}). Nothing was released."
            )
        self.ledger.extend(entries)
        return total
