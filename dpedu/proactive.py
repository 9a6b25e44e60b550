r"""Pro-active DP: fix the noise *before* training (van Dijk, Nguyen, Nguyen, Nguyen & Nguyen).

The closed form of arXiv 2102.09030 (docs/math.md §16): DP-SGD on N records for k epochs is
:math:`(\varepsilon, \delta = 1/N)`-DP with :math:`\varepsilon \le 1/2` when

.. math:: z = \sqrt{\frac{2(\varepsilon + \ln(1/\delta))}{\varepsilon}}, \qquad
          T \ge \frac{2k^2}{\varepsilon}, \qquad \Bigl(\frac{2}{e}\Bigr)^2 k^2 - \frac12 \ge \ln N .

z depends on the budget only, not on the number of steps T, so it can be chosen first and the
schedule (T, batch size, sampling rate q = k/T) afterwards. **The formula is a guarantee only under
its conditions**: this module checks them, refuses (``strict=True``) or warns loudly
(:class:`ProactiveConditionWarning`) outside them, and prints beside every plan what the tight
accountants certify for the same run and the z that calibrating on them would have chosen.

>>> round(proactive_noise_multiplier(0.5, 1 / 60_000), 3)
6.783
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

from . import calibrate
from .accountants import account, check_accountant_names
from .events import gaussian_step_event
from .validation import check_delta, check_epsilon, check_noise_multiplier, check_positive_int, check_sampling_rate

__all__ = [
    "ProactiveConditionWarning",
    "Condition",
    "ProactiveConditions",
    "Plan",
    "proactive_noise_multiplier",
    "proactive_epsilon",
    "proactive_conditions",
    "minimum_epochs",
    "smallest_admissible_epochs",
    "minimum_steps",
    "plan",
]

# The paper's regime: epsilon <= 1/2, and the moment bound behind it needs q z <= 1/e (docs/math.md §16.2).
EPSILON_LIMIT = 0.5
QZ_LIMIT = 1.0 / math.e
DEFAULT_ACCOUNTANTS = ("moments", "rdp", "pld")


class ProactiveConditionWarning(UserWarning):
    """A pro-active DP formula was used outside the conditions under which it is a guarantee."""


def _check_strict(strict):
    """``strict`` must be exactly True or False: "yes", 1 or None would silently mean one or the other."""
    if strict is not True and strict is not False:
        raise TypeError(f"strict must be True or False; got {type(strict).__name__} {strict!r}")
    return strict


def _refuse_or_warn(message, strict, stacklevel=3):
    if strict:
        raise ValueError(message)
    warnings.warn(message + " [strict=False: continuing, but the closed form proves NOTHING here]",
                  ProactiveConditionWarning, stacklevel=stacklevel)


def _check_dataset_size(dataset_size):
    n = check_positive_int(dataset_size, "dataset_size")
    if n < 2:
        raise ValueError(f"dataset_size must be at least 2 (delta = 1/N must be < 1); got {n}")
    return n


def proactive_noise_multiplier(epsilon, delta, *, strict=True):
    r"""The pro-active closed form :math:`z = \sqrt{2(\varepsilon + \ln(1/\delta))/\varepsilon}`.

    Parameters
    ----------
    epsilon : float
        Total epsilon of the whole training run; the formula is stated for :math:`\varepsilon \le 1/2`.
    delta : float
        Total delta; the paper takes :math:`\delta = 1/N`.
    strict : bool, default True
        For :math:`\varepsilon > 1/2`: raise ``ValueError`` (True) or emit
        :class:`ProactiveConditionWarning` and return the formula's value (False).

    Returns
    -------
    float
        The noise multiplier z.

    Notes
    -----
    **Valid only under all the conditions of** :func:`proactive_conditions` (which also involve N, the
    epochs k and the steps T, unknown here): :math:`\varepsilon \le 1/2`, :math:`\delta = 1/N`,
    :math:`T \ge 2k^2/\varepsilon`, :math:`(2/e)^2k^2 - 1/2 \ge \ln N`. Outside them it is not a
    guarantee: one full-batch release with this z at :math:`\varepsilon = 1/2`, :math:`\delta = 10^{-5}`
    costs 0.508 exactly (:func:`dpedu.gaussian.gaussian_epsilon_exact`). Use :func:`plan`, which
    checks everything.

    Derivation (docs/math.md §16.2, a reconstruction): Abadi et al.'s tail bound with
    :math:`\alpha_T(\lambda) \le Tq^2\lambda(\lambda+1)/z^2` at :math:`\lambda = z^2` and
    :math:`Tq^2 \le \varepsilon/2` gives :math:`\delta \le \exp((\varepsilon/2)(z^2+1) - z^2\varepsilon)`, which is
    :math:`\le \delta` for this z. [vD21]_

    References
    ----------
    .. [vD21] van Dijk, N.V. Nguyen, T.N. Nguyen, L.M. Nguyen, P.H. Nguyen, arXiv 2102.09030 (2021-2024);
       ICML 2024 (PMLR 235).

    Examples
    --------
    >>> round(proactive_noise_multiplier(0.25, 1 / 60_000), 3)
    9.488
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    strict = _check_strict(strict)
    if epsilon > EPSILON_LIMIT:
        _refuse_or_warn(
            f"the pro-active closed form is proven only for epsilon <= 1/2; got epsilon={epsilon!r}. Split the "
            f"budget, or calibrate on an accountant instead (dpedu.calibrate.noise_multiplier)",
            strict,
        )
    return _closed_form(epsilon, delta)


def _closed_form(epsilon, delta):
    return math.sqrt(2.0 * (epsilon + math.log(1.0 / delta)) / epsilon)


def _proactive_epsilon_value(z, q, steps, delta):
    r""":math:`\max(2\ln(1/\delta)/(z^2-2),\ 2Tq^2)`, no checks (``z > sqrt(2)``)."""
    return max(2.0 * math.log(1.0 / delta) / (z * z - 2.0), 2.0 * steps * q * q)


def proactive_epsilon(*, noise_multiplier, sampling_rate, steps, delta, strict=True):
    r"""The epsilon the pro-active closed form certifies for a given run (docs/math.md §16.3).

    .. math:: \varepsilon_{\text{pro}} = \max\Bigl(\frac{2\ln(1/\delta)}{z^2-2},\ 2Tq^2\Bigr)

    The first term inverts :func:`proactive_noise_multiplier`; the second is the condition
    :math:`Tq^2 \le \varepsilon/2`.

    Parameters
    ----------
    noise_multiplier : float
        z; must exceed :math:`\sqrt2` (else the formula has no value).
    sampling_rate : float
        Poisson rate q in (0, 1].
    steps : int
        T >= 1.
    delta : float
        Total delta.
    strict : bool, default True
        The value means something only when :math:`\varepsilon_{\text{pro}} \le 1/2` and
        :math:`qz \le 1/e`. Outside: raise ``ValueError`` (True) or warn with
        :class:`ProactiveConditionWarning` and return the value (False).

    Returns
    -------
    float

    Examples
    --------
    >>> round(proactive_epsilon(noise_multiplier=proactive_noise_multiplier(0.5, 1 / 60_000),
    ...                         sampling_rate=0.05, steps=100, delta=1 / 60_000), 6)
    0.5
    """
    z = check_noise_multiplier(noise_multiplier)
    q = check_sampling_rate(sampling_rate)
    steps = check_positive_int(steps, "steps")
    delta = check_delta(delta)
    strict = _check_strict(strict)
    if not z > math.sqrt(2.0):
        raise ValueError(f"the pro-active formula needs noise_multiplier > sqrt(2) (it divides by z^2 - 2); got {z!r}")
    epsilon = _proactive_epsilon_value(z, q, steps, delta)
    problems = []
    # 1e-12: z from proactive_noise_multiplier(0.5, delta) maps back to 0.5 only up to rounding
    if epsilon > EPSILON_LIMIT * (1 + 1e-12):
        problems.append(f"its value {epsilon:.4g} exceeds 1/2")
    if q * z > QZ_LIMIT:
        problems.append(f"q z = {q * z:.4g} exceeds 1/e = {QZ_LIMIT:.4f} (the moment bound behind it does not hold)")
    if problems:
        _refuse_or_warn(
            f"the pro-active epsilon for noise_multiplier={z!r}, sampling_rate={q!r}, steps={steps} is not a "
            f"guarantee: " + "; ".join(problems) + ". Account this run with a tight accountant "
            "(dpedu.make_accountant('rdp') or 'pld') instead",
            strict,
        )
    return epsilon


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
        return text.rstrip() if self.holds else f"{text}-> {self.advice}"


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
    n = _check_dataset_size(dataset_size)
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
    n = _check_dataset_size(dataset_size)
    k = max(1, math.ceil(minimum_epochs(n)))
    # decide by the inequality itself, not by the rounded square root
    while k > 1 and _epochs_condition_value(k - 1) >= math.log(n):
        k -= 1
    while _epochs_condition_value(k) < math.log(n):
        k += 1
    return k


def minimum_steps(epsilon, epochs):
    r"""The smallest admissible number of steps :math:`T = \lceil 2k^2/\varepsilon \rceil` (never below k,
    so that q = k/T <= 1).

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
    n = _check_dataset_size(dataset_size)
    k = check_positive_int(epochs, "epochs")
    steps = check_positive_int(steps, "steps")
    if steps < k:
        raise ValueError(f"steps must be >= epochs, so that the sampling rate q = epochs/steps is at most 1; "
                         f"got steps={steps}, epochs={k}")
    z = _closed_form(epsilon, delta)
    q = k / steps
    log_n = math.log(n)
    k_min = smallest_admissible_epochs(n)
    conditions = (
        Condition("epsilon <= 1/2", epsilon, EPSILON_LIMIT, epsilon <= EPSILON_LIMIT,
                  "the closed form is proven for epsilon <= 1/2 only: calibrate on an accountant instead "
                  "(dpedu.calibrate.noise_multiplier)"),
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
        ``{accountant: z}`` that :func:`dpedu.calibrate.noise_multiplier` chooses on that accountant for
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
            lines.append("  => NOT a guarantee: the closed form proves nothing for this schedule; "
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
                lines += textwrap.wrap(f"note ({name}): {note}", width=110, initial_indent="  ",
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
    n = _check_dataset_size(dataset_size)
    k = check_positive_int(epochs, "epochs")
    delta = 1.0 / n if delta is None else check_delta(delta)
    steps = minimum_steps(epsilon, k) if steps is None else check_positive_int(steps, "steps")
    accountants = check_accountant_names(accountants)  # unknown name -> ValueError before any work
    strict = _check_strict(strict)

    conditions = proactive_conditions(epsilon=epsilon, delta=delta, dataset_size=n, epochs=k, steps=steps)
    if not conditions.all_hold:
        failed = "; ".join(f"{c.name} fails ({c.value:.4g} vs {c.bound:.4g}): {c.advice}" for c in conditions.failed)
        _refuse_or_warn(f"pro-active DP plan for epsilon={epsilon!r}, N={n}, k={k}, T={steps}: {failed}", strict)

    z = _closed_form(epsilon, delta)  # the conditions were checked (and reported) above
    q = k / steps
    claimed = _proactive_epsilon_value(z, q, steps, delta) if z > math.sqrt(2.0) else math.inf

    epsilons, calibrated, notes = {}, {}, {}
    for name in accountants:
        epsilons[name], calibrated[name], note = _account(name, z, q, steps, epsilon, delta, rtol)
        if note:
            notes[name] = note
    return Plan(epsilon=epsilon, delta=delta, dataset_size=n, epochs=k, noise_multiplier=z, steps=steps,
                sampling_rate=q, expected_batch_size=k * n / steps, proactive_epsilon=claimed,
                conditions=conditions, accountant_epsilons=epsilons, calibrated_noise_multipliers=calibrated,
                notes=notes)
