r"""What every audit reports: a lower bound on epsilon beside the accountants' upper bounds for the same run.

An audit turns an attack's success into a lower bound :math:`\hat\varepsilon` that holds with probability at
least ``confidence`` (docs/math.md §20.1); the accountants certify upper bounds for the same training. A correct
implementation has :math:`\hat\varepsilon \le \varepsilon_{\mathrm{acc}}` for every accountant that applies: an
audit above one is a bug (``consistent`` is False). :class:`AuditBound` holds these fields once; each audit's
result (:class:`~dpedu.lab.audit.canary.AuditResult`, :class:`~dpedu.lab.audit.whitebox.WhiteBoxResult`,
:class:`~dpedu.lab.audit.one_run.OneRunResult`) adds what its attack measured.

>>> bound = AuditBound(epsilon_lower=0.4, upper_bounds={"rdp": 1.1, "zcdp": float("nan")}, delta=1e-5,
...                    confidence=0.95, seconds=2.0)
>>> bound.consistent
True
>>> print("\n".join(bound.bound_lines("audit, 95% confidence")))
  epsilon lower bound (audit, 95% confidence)     0.4000
  epsilon upper bound, rdp                        1.1000
  epsilon upper bound, zcdp                          n/a
  (delta = 1e-05; 2.0 s)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .statistics import bound_is_consistent

__all__ = ["AuditBound"]


@dataclass(frozen=True)
class AuditBound:
    """A lower bound on epsilon from an audit, and the accountants' upper bounds for the same run.

    Attributes
    ----------
    epsilon_lower : float
        The audit's lower bound on epsilon at ``delta``, valid with probability at least ``confidence``.
    upper_bounds : dict
        ``{accountant: epsilon}`` for the same run (``inf`` for a non-private run, ``nan`` where an
        accountant does not apply).
    delta, confidence : float
    seconds : float
        Wall time.
    description : str
        What was audited (the trainer's ``description``), keyword only.
    notes : dict
        ``{accountant: caveat}`` of the upper bounds, keyword only.
    """

    epsilon_lower: float
    upper_bounds: dict
    delta: float
    confidence: float
    seconds: float
    description: str = field(default="", kw_only=True)
    notes: dict = field(default_factory=dict, kw_only=True)

    @property
    def consistent(self):
        """True when the lower bound does not exceed any finite upper bound (no bug detected)."""
        return bound_is_consistent(self.epsilon_lower, self.upper_bounds)

    def bound_lines(self, lower_label):
        """The lines every audit prints: its lower bound (labelled ``lower_label``), each upper bound, delta and
        wall time, and a warning when the bounds disagree."""
        lines = [f"  {'epsilon lower bound (' + lower_label + ')':<44}{self.epsilon_lower:10.4f}"]
        for name, eps in self.upper_bounds.items():
            shown = "       n/a" if math.isnan(eps) else f"{eps:10.4f}"
            lines.append(f"  {'epsilon upper bound, ' + name:<44}{shown}")
        lines.append(f"  (delta = {self.delta:g}; {self.seconds:.1f} s)")
        if not self.consistent:
            lines.append("  AUDIT FAILED: the lower bound exceeds an accountant's upper bound: look for a bug")
        return lines
