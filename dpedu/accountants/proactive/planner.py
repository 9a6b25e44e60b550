r"""The pro-active planner: choose (z, T, s, q) before training, and show what tight accountants say (docs/math.md §16.3).

>>> p = plan(epsilon=0.5, dataset_size=60_000, epochs=5, accountants=("rdp",))
>>> p.steps, p.sampling_rate, p.expected_batch_size
(100, 0.05, 3000.0)
>>> round(p.accountant_epsilons["rdp"], 3)   # the same run, accounted tightly: about half the budget
0.269
"""

from __future__ import annotations

import math
import textwrap
import warnings
from dataclasses import dataclass, field

from .. import calibrate
from .. import account, check_accountant_names
from ...ground.events import gaussian_step_event
from ...ground.validation import check_delta, check_epsilon, check_positive_int
from .closed_form import check_strict, closed_form_z, proactive_epsilon_formula, refuse_or_warn
from .conditions import ProactiveConditions, check_dataset_size, minimum_steps, proactive_conditions

__all__ = ["DEFAULT_ACCOUNTANTS", "Plan", "plan"]

DEFAULT_ACCOUNTANTS = ("moments", "rdp", "pld")


def _account(name, z, q, steps, epsilon, delta, rtol):
    """(epsilon of the run, z calibrated for the budget, note) on accountant ``name``; nan where it cannot.

    The run is accounted by :func:`dpedu.accountants.account` (its caveats and warnings become the note);
    the calibration's warnings go into the note too; numerical warnings (RuntimeWarning) are passed on.
    """
    run = account([(gaussian_step_event(z, q), steps)], name, delta=delta)
    if not run.applies:
        return math.nan, math.nan, run.note
    notes = list(run.notes)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            z_calibrated = calibrate.noise_multiplier(target_epsilon=epsilon, target_delta=delta, sampling_rate=q,
                                                      steps=steps, accountant=name, rtol=rtol)
        except ValueError as exc:  # e.g. this accountant cannot reach the budget with any noise
            z_calibrated = math.nan
            notes.append(str(exc))
    for w in caught:
        if issubclass(w.category, RuntimeWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        elif str(w.message) not in notes:
            notes.append(str(w.message))
    return run.epsilon, z_calibrated, "; ".join(notes)


@dataclass(frozen=True)
class Plan:
    r"""A pro-active DP-SGD schedule chosen before training, with what tight accountants say about it.

    Attributes
    ----------
    epsilon, delta : float
        The budget (delta defaults to 1/N, as the paper).
    dataset_size, epochs : int
        N and k.
    noise_multiplier : float
        z from the closed form (:func:`proactive_noise_multiplier`).
    steps : int
        T; by default the smallest admissible :math:`\lceil 2k^2/\varepsilon\rceil`.
    sampling_rate : float
        q = k/T (Poisson sampling).
    expected_batch_size : float
        s = kN/T = qN: the DP-SGD divisor.
    proactive_epsilon : float
        :math:`\max(2\ln(1/\delta)/(z^2-2), 2Tq^2)`, what the closed form claims (a guarantee only when
        ``conditions.all_hold``).
    conditions : ProactiveConditions
        Each condition, its value and whether it holds.
    accountant_epsilons : dict
        ``{accountant: epsilon}`` that accountant certifies for the same (z, q, T, delta); nan where it
        does not apply.
    calibrated_noise_multipliers : dict
        ``{accountant: z}`` that :func:`dpedu.accountants.calibrate.noise_multiplier` chooses on that accountant for
        (epsilon, delta, q, T); nan where it cannot.
    notes : dict
        ``{accountant: why}`` for each nan.
    """

    epsilon: float
    delta: float
    dataset_size: int
    epochs: int
    noise_multiplier: float
    steps: int
    sampling_rate: float
    expected_batch_size: float
    proactive_epsilon: float
    conditions: ProactiveConditions
    accountant_epsilons: dict = field(default_factory=dict)
    calibrated_noise_multipliers: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)

    def __str__(self):
        n, k = self.dataset_size, self.epochs
        delta_text = f"{self.delta:.4g}" + (" = 1/N" if math.isclose(self.delta * n, 1.0, rel_tol=1e-9) else "")
        smallest = minimum_steps(self.epsilon, k)
        lines = [
            "Pro-active DP plan (van Dijk et al., arXiv 2102.09030), fixed before training",
            f"  budget    epsilon = {self.epsilon:g}, delta = {delta_text}   (N = {n:,} records)",
            f"  noise     z = sqrt(2 (epsilon + ln(1/delta)) / epsilon) = {self.noise_multiplier:.4f}",
            f"  epochs    k = {k}   (K = k N = {k * n:,} per-example gradients)",
            f"  steps     T = {self.steps}" + ("   = ceil(2 k^2 / epsilon), the smallest admissible"
                                              if self.steps == smallest else f"   (smallest admissible: {smallest})"),
            f"  sampling  q = k / T = {self.sampling_rate:.4g}   (Poisson), "
            f"expected batch size s = k N / T = {self.expected_batch_size:,.1f}",
            f"  claimed   epsilon_pro = max(2 ln(1/delta)/(z^2 - 2), 2 T q^2) = {self.proactive_epsilon:.4f}",
            "",
            "Conditions of the closed form:",
        ]
        lines += ["  " + str(c) for c in self.conditions]
        if self.conditions.all_hold:
            lines.append("  => all hold: the closed form guarantees "
                         f"({self.epsilon:g}, {self.delta:.4g})-DP for this schedule.")
        else:
            lines.append("  => NOT a guarantee: the closed form proves nothing for this schedule;\n    "
                         "trust only the accountants below.")
        if self.accountant_epsilons:
            lines += ["", f"Tight accountants for the same run (z = {self.noise_multiplier:.4f}, q = "
                          f"{self.sampling_rate:.4g}, T = {self.steps}, delta = {self.delta:.4g}):",
                      f"  {'accountant':<11}{'epsilon':>9}   {'z by calibration':>16} for epsilon = {self.epsilon:g}"]
            for name, eps in self.accountant_epsilons.items():
                z_cal = self.calibrated_noise_multipliers.get(name, math.nan)
                eps_text = "n/a" if math.isnan(eps) else f"{eps:.4f}"
                z_text = "n/a" if math.isnan(z_cal) else f"{z_cal:.4f}"
                remark = "" if math.isnan(eps) else (
                    "EXCEEDS the budget" if eps > self.epsilon else f"{eps / self.epsilon:.0%} of the budget")
                if not math.isnan(z_cal):
                    change = 1.0 - z_cal / self.noise_multiplier
                    remark += f", {abs(change):.0%} {'less' if change >= 0 else 'MORE'} noise needed"
                if name in self.notes:
                    remark += (", " if remark else "") + "see note"
                lines.append(f"  {name:<11}{eps_text:>9}   {z_text:>16}   {remark}")
            for name, note in self.notes.items():
                lines += textwrap.wrap(f"note ({name}): {note}", width=96, initial_indent="  ",
                                       subsequent_indent="    ")
        return "\n".join(lines)


def plan(*, epsilon, dataset_size, epochs, delta=None, steps=None, accountants=DEFAULT_ACCOUNTANTS, strict=True,
         rtol=1e-3):
    r"""Choose (z, T, s, q) before training, as the pro-active procedure does (docs/math.md §16.3).

    1. z from the budget (:func:`proactive_noise_multiplier`); 2. the epochs k the user can afford;
    3. :math:`T = \lceil 2k^2/\varepsilon \rceil`, the smallest admissible (fewest updates, least
    aggregated noise; any larger T keeps the guarantee); 4. :math:`s = kN/T`, :math:`q = k/T`.
    Beside it, each accountant in ``accountants`` accounts the very same run and calibrates its own z
    for the same (epsilon, delta, q, T), so the closed form's conservatism is visible.

    Parameters
    ----------
    epsilon : float
        Total budget, at most 1/2 for the closed form.
    dataset_size : int
        N >= 2.
    epochs : int
        k >= 1: the passes over the data the user can afford.
    delta : float, optional
        Total delta; default ``1 / dataset_size`` (the paper's setting).
    steps : int, optional
        T; default the smallest admissible. Pass a smaller T to *see* a violated schedule (with
        ``strict=False``).
    accountants : sequence of str, default ("moments", "rdp", "pld")
        Registry names to compare with (``()`` for none).
    strict : bool, default True
        When a condition fails: raise ``ValueError`` naming it and what to change (True), or warn with
        :class:`ProactiveConditionWarning` and still plan (False).
    rtol : float, default 1e-3
        Relative tolerance of the accountants' calibrations.

    Returns
    -------
    Plan
        ``print(plan(...))`` shows the report.

    Examples
    --------
    >>> p = plan(epsilon=0.5, dataset_size=10**6, epochs=6, accountants=())
    >>> round(p.noise_multiplier, 3), p.steps, round(p.sampling_rate, 4)
    (7.567, 144, 0.0417)
    """
    epsilon = check_epsilon(epsilon)
    n = check_dataset_size(dataset_size)
    k = check_positive_int(epochs, "epochs")
    delta = 1.0 / n if delta is None else check_delta(delta)
    steps = minimum_steps(epsilon, k) if steps is None else check_positive_int(steps, "steps")
    accountants = check_accountant_names(accountants)  # unknown name -> ValueError before any work
    strict = check_strict(strict)

    conditions = proactive_conditions(epsilon=epsilon, delta=delta, dataset_size=n, epochs=k, steps=steps)
    if not conditions.all_hold:
        failed = "; ".join(f"{c.name} fails ({c.value:.4g} vs {c.bound:.4g}): {c.advice}" for c in conditions.failed)
        refuse_or_warn(f"pro-active DP plan for epsilon={epsilon!r}, N={n}, k={k}, T={steps}: {failed}", strict)

    z = closed_form_z(epsilon, delta)  # the conditions were checked (and reported) above
    q = k / steps
    claimed = proactive_epsilon_formula(z, q, steps, delta) if z > math.sqrt(2.0) else math.inf

    epsilons, calibrated, notes = {}, {}, {}
    for name in accountants:
        epsilons[name], calibrated[name], note = _account(name, z, q, steps, epsilon, delta, rtol)
        if note:
            notes[name] = note
    return Plan(epsilon=epsilon, delta=delta, dataset_size=n, epochs=k, noise_multiplier=z, steps=steps,
                sampling_rate=q, expected_batch_size=k * n / steps, proactive_epsilon=claimed,
                conditions=conditions, accountant_epsilons=epsilons, calibrated_noise_multipliers=calibrated,
                notes=notes)
