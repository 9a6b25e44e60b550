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

**Check and record are one step.** :meth:`PrivacyBudget.spend` holds a lock from "account the ledger
plus the new events" through "compare with epsilon" to "record": two threads sharing a budget (joblib's
threading backend, ``cross_val_score(..., n_jobs=2)``, a web server) can never both pass the check and
together overspend. Without the lock, both would account the same old ledger, both fit, and both record.

>>> from dpedu.accountants import LaplaceEvent
>>> budget = PrivacyBudget(epsilon=1.0, delta=1e-5, accountant="sequential")
>>> budget.spend(LaplaceEvent(0.4))                   # returns the total spent so far
0.4
>>> budget.can_afford(LaplaceEvent(0.7)), round(budget.remaining(), 10)
(False, 0.6)
>>> budget.spend(LaplaceEvent(0.7))
Traceback (most recent call last):
...
dpedu.accountants.budget.BudgetExceededError: refused: this release would bring the total to epsilon=1.1 at delta=1e-05 ...
>>> budget.ledger                                     # unchanged by the refusal
[(LaplaceEvent(epsilon=0.4), 1)]
"""

from __future__ import annotations

import numbers
import threading

from ..ground.validation import check_choice, Budget, check_delta, check_epsilon
from . import ACCOUNTANT_NAMES, account, as_ledger

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
        Everything charged so far, in order (a copy: the budget's own record changes only by
        :meth:`spend`).

    Notes
    -----
    **A refused spend changes nothing.** :meth:`spend` first checks the whole history (every item an
    event or an ``(event, count)`` pair with an integer count >= 1, every event supported by the
    accountant), then accounts it, and records only if the total fits. Any exception - a malformed
    history, an unsupported event, :class:`BudgetExceededError` - leaves the ledger exactly as it was.
    Callers that must validate their own arguments before charging can ask first with :meth:`check` or
    :meth:`can_afford`, which never record.

    **Threads.** A budget is safe to share between threads: :meth:`spend` is atomic (one lock held across
    "account spent + new, compare, record"), so concurrent charges are serialised and the total never
    exceeds ``epsilon``. Accounting happens under the lock, so concurrent charges wait for each other
    (a PLD budget accounts for a noticeable time per charge).

    **Copies and processes.** A budget is a fact about the world (how much of the data's privacy is
    gone), so it is never duplicated within a process: ``copy.copy`` and ``copy.deepcopy`` return the
    same object. That is what makes ``DPLogisticRegression(budget=b)`` inside ``clone``, ``Pipeline`` or
    ``cross_val_score`` charge ``b`` itself (scikit-learn deep-copies non-estimator parameters).
    A budget is in-process state: pickling it (multiprocessing, joblib's default ``loky`` backend with
    ``n_jobs > 1``) *does* make a copy with its own lock and ledger, and charges made to that copy in
    another process are never seen by the original - several processes could each spend the whole
    budget. Across processes, keep one process as the budget holder and have the workers ask it (or use
    ``n_jobs=1``, or joblib's threading backend: ``with joblib.parallel_backend("threading")``).

    All events assume add/remove neighbours (docs/math.md §1.2), as the accountants do.
    """

    def __init__(self, epsilon, delta, accountant="rdp"):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.accountant = check_choice(accountant, "accountant", ACCOUNTANT_NAMES)
        self._ledger = []
        self._lock = threading.RLock()

    def __repr__(self):
        return (f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:g}, accountant={self.accountant!r}; "
                f"spent {self.spent():.4g})")

    # --- copies: shared in a process, a separate budget through pickle (class docstring) --------

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        with self._lock:
            state = self.__dict__.copy()
            state["_ledger"] = list(self._ledger)
        del state["_lock"]                               # a lock cannot be pickled; the copy gets its own
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()

    @property
    def ledger(self):
        """Everything charged so far, as a new list of ``(event, count)``."""
        with self._lock:
            return list(self._ledger)

    # --- accounting -----------------------------------------------------------------------------

    @staticmethod
    def _entries(history, count):
        """Normalise ``(event, count)`` or a ledger (:func:`~dpedu.accountants.as_ledger`: events only) to a list of
        (event, int count) with the counts checked; touches no state."""
        entries = as_ledger(history)
        if count is not None:
            if len(entries) != 1 or entries[0][1] != 1:
                raise ValueError("count= applies to a single event; a ledger already carries its counts")
            entries = [(entries[0][0], count)]
        checked = []
        for event, n in entries:
            if isinstance(n, bool) or not isinstance(n, numbers.Integral):
                raise TypeError(f"count must be an integer >= 1; got {type(n).__name__} {n!r} for {event!r}")
            if n < 1:
                raise ValueError(f"count must be an integer >= 1; got {n} for {event!r}")
            checked.append((event, int(n)))
        return checked

    def _epsilon_of(self, ledger):
        """Total epsilon of ``ledger`` at this budget's delta, on a fresh accountant.

        The budget's only accounting call: :func:`dpedu.accountants.account`, strict (an event the
        accountant refuses raises), with the accountant's warnings shown to the caller.
        """
        result = account(ledger, self.accountant, delta=self.delta, strict=True)
        result.reissue_warnings(stacklevel=3)
        return result.epsilon

    def spent(self):
        """Epsilon spent so far (at ``delta``) by the budget's accountant; 0 for an empty ledger."""
        return self._epsilon_of(self.ledger)

    def remaining(self):
        """``epsilon - spent()``: a guide only; under RDP/zCDP/PLD ask :meth:`can_afford` (module docstring)."""
        return self.epsilon - self.spent()

    def epsilon_after(self, history, count=None):
        """Total epsilon if ``history`` (an event, with optional ``count``, or a ledger) were charged now."""
        entries = self._entries(history, count)
        return self._epsilon_of(self.ledger + entries)

    def can_afford(self, history, count=None):
        """Whether charging ``history`` would keep the total within ``epsilon`` (nothing is recorded).

        A malformed history raises, as in :meth:`spend`; only the answer "too expensive" is ``False``.
        """
        return self.epsilon_after(history, count) <= self.epsilon

    def check(self, history, count=None):
        """Raise exactly what :meth:`spend` would raise now, but record nothing; return the would-be total.

        For callers that validate all their arguments before charging. Under concurrency the answer can
        be stale by the time of the real :meth:`spend`, which checks again (atomically).
        """
        entries = self._entries(history, count)
        with self._lock:
            total = self._epsilon_of(self._ledger + entries)
            self._refuse_if_over(total)
        return total

    def _refuse_if_over(self, total):
        if total > self.epsilon:
            raise BudgetExceededError(
                f"refused: this release would bring the total to epsilon={total:.4g} at delta={self.delta:g} "
                f"({self.accountant} accountant), over the budget epsilon={self.epsilon:g} "
                f"(already spent {self._epsilon_of(self._ledger):.4g}). Nothing was released."
            )

    def spend(self, history, count=None):
        """Charge ``history`` (an event with optional ``count``, or a ledger) *before* releasing anything.

        The history is checked whole before anything is accounted; accounting, the comparison with
        ``epsilon`` and the recording happen under one lock (thread-safe; class docstring).

        Returns
        -------
        float
            The total epsilon spent after this charge.

        Raises
        ------
        TypeError, ValueError
            If ``history`` or ``count`` is malformed; nothing is recorded.
        BudgetExceededError
            If the total would exceed ``epsilon``; the ledger is left unchanged.
        """
        entries = self._entries(history, count)
        with self._lock:
            total = self._epsilon_of(self._ledger + entries)
            self._refuse_if_over(total)
            self._ledger.extend(entries)
        return total


Budget.register(PrivacyBudget)
