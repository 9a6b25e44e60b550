r"""A privacy statement for a training run: what a careful paper reports (docs/math.md §21.7).

``privacy_statement(run, delta=...)`` accounts the run's ledger and writes out, in one place, what
Ponomareva et al. (2023, "How to DP-fy ML", §5) ask a paper to report: the data set size, the sampling
scheme and rate, steps and epochs, noise multiplier and clip norm; the neighbouring relation and the unit
of privacy; epsilon at the stated delta by the tightest accountant (PLD) with RDP beside it; the
equivalent mu-GDP (certified, docs/math.md §21.4); what is protected; the guarantee for a person with
k examples (group privacy, §21.6); and the assumptions that would break it.

Every number comes from the accountants (:func:`dpedu.accountants.account`,
:func:`dpedu.accountants.gdp.certified_mu`), never from a table.

>>> from dpedu.ground.events import SubsampledGaussianEvent
>>> s = privacy_statement([(SubsampledGaussianEvent(4.0, 0.01), 10_000)], delta=1e-5, n=60_000, clip_norm=4.0)
>>> round(s.epsilon, 3), round(s.epsilon_rdp, 3), round(s.mu, 3)
(0.947, 1.035, 0.256)
"""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass, field

from ..accountants import account, as_ledger, make_accountant
from ..accountants.gdp import certified_mu, group_mu
from ..accountants.tradeoff import tradeoff_curve
from ..ground.events import (
    ADD_REMOVE, GaussianEvent, LaplaceEvent, SampledWithoutReplacementGaussianEvent, SubsampledGaussianEvent,
    TruncatedPoissonGaussianEvent, ZERO_OUT
)
from ..ground.gaussian import gaussian_epsilon_exact
from ..ground.validation import check_delta, check_in_interval, check_positive, check_positive_int

__all__ = ["PrivacyStatement", "privacy_statement", "covering_accountant", "STATEMENT_ACCOUNTANTS"]

#: The accountants a statement may rest on, tightest first: the first that covers every event of the ledger.
STATEMENT_ACCOUNTANTS = ("pld", "rdp")


@dataclass(frozen=True)
class PrivacyStatement:
    r"""What a run guarantees, with every number from an accountant; ``str()`` prints the report.

    Attributes
    ----------
    ledger : list of (event, count)
    delta : float
    epsilon : float
        The guarantee: epsilon at ``delta`` by ``accountant`` (the PLD's pessimistic epsilon when it covers the
        ledger: Poisson sampling under either relation, full batches; else RDP, e.g. fixed-size batches under
        replace-one, docs/math.md §22.3).
    epsilon_bracket : (float, float)
        The PLD's optimistic and pessimistic epsilon (the exact epsilon lies in between); (nan, nan) without PLD.
    epsilon_rdp : float
        The RDP accountant's epsilon (Mironov 2017; what Opacus and TF Privacy report), for comparison.
    accountant : str
        ``"pld"`` or ``"rdp"``: which accountant ``epsilon``, ``mu`` and ``best_tpr`` come from.
    relation : str
        The neighbouring relation of the ledger's events (docs/math.md §1.2, §22.1).
    mu : float
        Certified mu-GDP (up to an additive 1e-10 in the FNR; exact for full-batch Gaussians), against the
        curve of ``accountant``.
    epsilon_from_mu : float
        The epsilon of mu-GDP at ``delta``: at least ``epsilon`` (mu-GDP summarises the whole curve).
    best_tpr : float
        The best attack's true-positive rate at FPR ``fpr`` that the PLD curve allows.
    fpr : float
    group_size : int
        k, the examples one person may contribute.
    group_mu, group_epsilon : float
        :math:`k\mu` and its epsilon at ``delta`` (equal to ``mu``, ``epsilon_from_mu`` when k = 1).
    n, clip_norm, noise_multiplier, sampling_rate, steps : float or None
        The run's settings where known (a one-event DP-SGD or noisy-GD ledger, a
        :class:`~dpedu.textbook.training.TrainingResult`, a fitted estimator).
    sampling : str
    defaults_used : tuple of str
        The hyperparameters a fitted :class:`~dpedu.lab.estimator.DPLogisticRegression` took from its
        ``TUNED_DEFAULTS`` (its ``defaults_used_``): chosen non-privately on Adult's training data.
    notes : tuple of str
        Warnings about this run (e.g. delta not below 1/n).
    """

    ledger: list
    delta: float
    epsilon: float
    epsilon_bracket: tuple
    epsilon_rdp: float
    mu: float
    epsilon_from_mu: float
    best_tpr: float
    fpr: float
    group_size: int
    group_mu: float
    group_epsilon: float
    n: int | None = None
    clip_norm: float | None = None
    noise_multiplier: float | None = None
    sampling_rate: float | None = None
    steps: int | None = None
    sampling: str = "poisson"
    accountant: str = "pld"
    relation: str = ADD_REMOVE
    batch_size: int | None = None
    defaults_used: tuple = field(default=())
    notes: tuple = field(default=())

    def __str__(self):
        return "\n".join(folded for line in _report_lines(self) for folded in _fold(line))


def _settings(run, clip_norm):
    """(noise multiplier, sampling rate, steps, clip norm, sampling, n) read off a run, where it says them."""
    plan = getattr(getattr(run, "details", None), "plan", None)   # a TrainingResult's DPSGDPlan / NoisyGDPlan
    if hasattr(run, "ledger_"):                                 # a fitted DPLogisticRegression
        values = dict(noise_multiplier=getattr(run, "noise_multiplier_", None),
                      sampling_rate=getattr(run, "sampling_rate_", None), steps=getattr(run, "steps_", None),
                      clip_norm=getattr(run, "clip_norm_", None))
    else:
        values = {key: getattr(plan, key, None) for key in ("noise_multiplier", "sampling_rate", "steps", "clip_norm")}
    sampling = getattr(plan, "sampling", "poisson")
    ledger = as_ledger(run)
    if len(ledger) == 1 and isinstance(ledger[0][0], (GaussianEvent, SubsampledGaussianEvent,
                                                      SampledWithoutReplacementGaussianEvent)):
        event, count = ledger[0]
        values["noise_multiplier"] = event.noise_multiplier
        values["sampling_rate"] = getattr(event, "sampling_rate", 1.0)
        values["steps"] = count
        if isinstance(event, SampledWithoutReplacementGaussianEvent):   # the ledger says which scheme ran
            sampling, values["batch_size"], values["n"] = "fixed", event.batch_size, event.dataset_size
    if clip_norm is not None:
        values["clip_norm"] = clip_norm
    return values, sampling


def covering_accountant(ledger):
    """The first of :data:`STATEMENT_ACCOUNTANTS` that covers every (event, relation) of ``ledger``; when none
    does, the PLD accountant's own refusal (:class:`~dpedu.accountants.UnsupportedEventError`) is raised."""
    for name in STATEMENT_ACCOUNTANTS:
        accountant = make_accountant(name)
        if all(accountant.supports(event) for event, _ in ledger):
            return name
    account(ledger, "pld", delta=0.5, strict=True)   # raises, naming the event and what is covered
    raise AssertionError("unreachable: the PLD accountant accounted a ledger it does not support")


def privacy_statement(run, *, delta=None, n=None, clip_norm=None, group_size=1, fpr=0.01):
    r"""The privacy statement of ``run`` at ``delta``: every number a careful paper reports, computed here.

    The guarantee comes from the tightest accountant that covers the ledger (:func:`covering_accountant`):
    the PLD for Poisson sampling under add/remove or replace-one (docs/math.md §15, §22.4), for truncated
    Poisson under both (§22.7) and for full batches, the RDP accountant for fixed-size batches under
    replace-one (§22.3). The relation, the sampling scheme and the assumptions printed are the ledger's.

    Parameters
    ----------
    run : TrainingResult, fitted DPLogisticRegression, ledger, or anything with a ledger
        What was trained (:func:`dpedu.accountants.as_ledger`). A non-private run has no statement.
    delta : float, optional
        In (0, 1); well below 1/n. Default: a fitted estimator's ``delta_`` (required otherwise).
    n : int, optional
        Data set size (training examples), reported and checked against delta.
    clip_norm : float, optional
        C, when the run does not record it (a bare ledger).
    group_size : int, default 1
        k, the most examples one person contributes. The unit of privacy is one example; a person with k
        examples gets :math:`k\mu`-GDP (Dong, Roth & Su 2022, Thm 2.14; docs/math.md §21.6).
    fpr : float, default 0.01
        The false-positive rate at which the best attack's TPR is reported.

    Returns
    -------
    PrivacyStatement

    Raises
    ------
    TypeError, ValueError
        Bad arguments (by name); a run without a ledger; a ledger neither the PLD nor the RDP accountant
        covers (shuffled batches: no accountant covers them; fixed-size batches under add/remove).
    """
    if delta is None:
        delta = getattr(run, "delta_", None)
        if delta is None:
            raise TypeError("delta is required (in (0, 1), well below 1/n) unless run is a fitted estimator")
    delta = check_delta(delta)
    n = None if n is None else check_positive_int(n, "n")
    clip_norm = None if clip_norm is None else check_positive(clip_norm, "clip_norm")
    group_size = check_positive_int(group_size, "group_size")
    fpr = check_in_interval(fpr, "fpr", 0.0, 1.0, low_open=True, high_open=True)
    ledger = as_ledger(run)
    values, sampling = _settings(run, clip_norm)
    if values.get("n") is not None and n is not None and n != values["n"]:
        raise ValueError(f"n={n} but the ledger's fixed-size batches are drawn from {values['n']} records")
    n = values.get("n") if n is None else n

    name = covering_accountant(ledger)
    guarantee = account(ledger, name, delta=delta, strict=True)
    rdp = account(ledger, "rdp", delta=delta)
    bracket = (math.nan, math.nan)
    if name == "pld":
        accountant = make_accountant("pld")
        for event, count in ledger:
            accountant.compose(event, count)
        bracket = accountant.epsilon_bracket(delta)
    mu = certified_mu(ledger, accountant=name)
    curve = tradeoff_curve(ledger, name, alphas=[fpr])
    k_mu = group_mu(mu, group_size)
    notes = list(guarantee.notes)
    epsilon = guarantee.epsilon
    basic = account(ledger, "sequential", delta=delta).epsilon    # nan where basic composition does not apply
    if math.isfinite(basic) and basic < epsilon:       # two valid upper bounds: the smaller holds (docs/math.md §9)
        epsilon = basic
        if name == "pld":                               # the PLD bracket's upper end is now basic composition's
            bracket = (min(bracket[0], basic), basic)
        notes.append(f"basic composition gives the smaller valid bound, epsilon = {basic:.6g} (the {name.upper()} "
                     f"accountant's is {guarantee.epsilon:.6g}: its discretisation is pessimistic)")

    if n is not None and delta >= 1.0 / n:
        notes.append(f"delta = {delta:g} is not below 1/n = {1.0 / n:.3g}: a mechanism that publishes one random "
                     "example outright satisfies such a delta; choose delta well below 1/n")
    return PrivacyStatement(
        ledger=ledger, delta=delta, epsilon=epsilon, epsilon_bracket=tuple(float(e) for e in bracket),
        epsilon_rdp=rdp.epsilon, mu=mu, epsilon_from_mu=_mu_epsilon(mu, delta), best_tpr=float(curve.best_tpr(fpr)),
        fpr=fpr, group_size=group_size, group_mu=k_mu, group_epsilon=_mu_epsilon(k_mu, delta), n=n,
        clip_norm=values.get("clip_norm"), noise_multiplier=values.get("noise_multiplier"),
        sampling_rate=values.get("sampling_rate"), steps=values.get("steps"), sampling=sampling, accountant=name,
        relation=getattr(ledger[0][0], "relation", ADD_REMOVE), batch_size=values.get("batch_size"),
        defaults_used=tuple(getattr(run, "defaults_used_", ())), notes=tuple(notes))


def _mu_epsilon(mu, delta):
    if math.isinf(mu):
        return math.inf
    return 0.0 if mu == 0 else gaussian_epsilon_exact(delta, 1.0 / mu)


def _describe_event(event, count):
    if isinstance(event, SampledWithoutReplacementGaussianEvent):
        return (f"{count:,} x DP-SGD step: fixed-size batch of m = {event.batch_size:,} of n = {event.dataset_size:,}, "
                f"noise multiplier z = {event.noise_multiplier:g}")
    if isinstance(event, SubsampledGaussianEvent) and event.sampling_rate < 1:
        return f"{count:,} x DP-SGD step: Poisson rate q = {event.sampling_rate:g}, noise multiplier z = {event.noise_multiplier:g}"
    if isinstance(event, (GaussianEvent, SubsampledGaussianEvent)):
        return f"{count:,} x full-batch Gaussian release, noise multiplier z = {event.noise_multiplier:g}"
    if isinstance(event, LaplaceEvent):
        return f"{count:,} x Laplace release, epsilon = {event.epsilon:g} each"
    return f"{count:,} x {event!r}"


def _report_lines(s):
    lines = ["Privacy statement (docs/math.md §21.7; reporting as in Ponomareva et al. 2023, §5)", "", "Training run"]
    lines.append(f"  data set size n:          {s.n:,} examples" if s.n else
                 "  data set size n:          not given (pass n=): report it")
    one_sgd = s.steps is not None and s.sampling_rate is not None and len(s.ledger) == 1
    if one_sgd and s.batch_size is not None:
        lines.append(f"  sampling:                 fixed-size batches of m = {s.batch_size:,} examples, uniformly at "
                     f"random without replacement, drawn afresh each step (m / n = {s.sampling_rate:g})")
        lines.append(f"  steps T:                  {s.steps:,} ({s.steps * s.sampling_rate:,.4g} epochs)")
    elif one_sgd and s.sampling_rate < 1:
        batch = f", expected batch size q n = {s.sampling_rate * s.n:,.1f}" if s.n else ""
        lines.append(f"  sampling:                 Poisson, rate q = {s.sampling_rate:g}{batch}")
        lines.append(f"  steps T:                  {s.steps:,} ({s.steps * s.sampling_rate:,.4g} epochs in expectation)")
    elif one_sgd:
        lines.append("  sampling:                 none (every example at every step: full-batch noisy gradient descent)")
        lines.append(f"  steps T:                  {s.steps:,}")
    else:
        for event, count in s.ledger:
            lines.append(f"  release:                  {_describe_event(event, count)}")
    if s.noise_multiplier is not None:
        std = f" (noise std z C = {s.noise_multiplier * s.clip_norm:g})" if s.clip_norm else ""
        lines.append(f"  noise multiplier z:       {s.noise_multiplier:g}{std}")
    lines.append(f"  clip norm C:              {s.clip_norm:g} (per-example gradient, L2)" if s.clip_norm else
                 "  clip norm C:              not given (pass clip_norm=): report it")
    relation = {ADD_REMOVE: "add/remove one example (D' = D with one example more or less)",
                ZERO_OUT: "zero out one example (D' = D with one example replaced by one that contributes nothing; "
                          "n is public)"}.get(s.relation, "replace one example (D' = D with one example replaced; "
                                                           "n is public)")
    if s.accountant == "pld":
        how = (f"PLD accountant, pessimistic; exact value in [{s.epsilon_bracket[0]:.4g}, "
               f"{s.epsilon_bracket[1]:.4g}]")
        beside = "not applicable" if math.isnan(s.epsilon_rdp) else f"epsilon = {s.epsilon_rdp:.4g}"
        beside = f"  beside it, RDP:           {beside} (Mironov 2017; what Opacus / TF Privacy report)"
    else:
        how = "RDP accountant (Mironov 2017; Wang, Balle & Kasiviswanathan 2019 for fixed-size batches): an upper bound"
        beside = "  beside it, PLD:           not applicable (no PLD covers this sampling scheme and relation)"
    lines += ["", "Guarantee",
              f"  neighbouring relation:    {relation}",
              "  unit of privacy:          one example (one row of the training data)",
              f"  (epsilon, delta):         epsilon = {s.epsilon:.4g} at delta = {s.delta:g}  ({how})", beside]
    lines.append(f"  Gaussian DP:              mu = {s.mu:.4g} (certified: the {s.accountant.upper()} curve lies above "
                 f"G_mu - 1e-10); its epsilon at delta = {s.delta:g} is {s.epsilon_from_mu:.4g}")
    lines.append(f"  what an attacker can do:  at FPR {s.fpr:.0%} no test of 'was this example in?' has TPR above {s.best_tpr:.2%}")
    lines.append(f"  what is protected:        every intermediate model (all {_updates(s)}), hence the final model and "
                 "anything computed from it")
    if s.group_size > 1:
        lines.append(f"  a person with {s.group_size} examples: {s.group_mu:.4g}-GDP = epsilon {s.group_epsilon:.4g} "
                     f"at delta = {s.delta:g} (group privacy: k mu, Dong, Roth & Su 2022, Thm 2.14)")
    else:
        lines.append(f"  a person with k examples: k mu-GDP (Dong, Roth & Su 2022, Thm 2.14), e.g. k = 2: mu = "
                     f"{2 * s.mu:.4g}, epsilon {_mu_epsilon(2 * s.mu, s.delta):.4g} at delta = {s.delta:g}")
    poisson = any(isinstance(e, SubsampledGaussianEvent) and e.sampling_rate < 1 for e, _ in s.ledger)
    fixed = any(isinstance(e, SampledWithoutReplacementGaussianEvent) for e, _ in s.ledger)
    truncated = any(isinstance(e, TruncatedPoissonGaussianEvent) for e, _ in s.ledger)
    sampled = poisson or fixed or truncated
    if truncated:
        scheme = ("  - batches are Poisson samples cut to a uniformly random subset of at most the cap, as "
                  "implemented; shuffled fixed-size batches are NOT covered")
    elif fixed:
        scheme = ("  - batches are uniformly random fixed-size samples drawn afresh each step, as implemented; batches "
                  "cut from one shuffled pass per epoch are NOT covered")
    elif poisson:
        scheme = "  - batches are Poisson samples, as implemented; shuffled fixed-size batches are NOT covered"
    else:
        scheme = "  - every example is used at every step (no sampling), as implemented"
    lines += ["", "Assumptions (the guarantee does not hold without them)", scheme,
              "  - C, z, q, T and every hyperparameter were fixed without looking at the private data; tuning on "
              "the same data is not included unless its runs are accounted too"]
    if s.defaults_used:
        lines.append(f"  - {', '.join(s.defaults_used)} came from DPLogisticRegression's TUNED_DEFAULTS, chosen "
                     "NON-privately on a validation split of Adult's training data: on Adult this epsilon does not "
                     "include that tuning (dpedu.lab.experiments.tuning_costs.defaults_provenance_cost: what it would "
                     "have cost); dpedu.lab.tuning.PrivateHyperparameterSearch tunes with the tuning accounted")
    if fixed:
        lines.append("  - n is treated as public (the batch size m is fixed, and each update divides by it)")
    elif sampled:
        lines.append("  - n is treated as public (each update divides by the expected batch size q n)")
    lines += ["  - the training loss and other diagnostics computed on the data are not released",
              "  - floating-point noise is not hardened against precision attacks (Mironov 2012)"]
    for note in s.notes:
        lines.append(f"  ! {note}")
    return lines


def _fold(line, width=100):
    """One report line folded at ``width`` columns, its continuation lines under the value (or the item's text)."""
    if len(line) <= width:
        return [line]
    label = re.match(r"  (?:[-!] |[^:]+:\s+)", line)
    indent = " " * (label.end() if label else 2)
    return textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def _updates(s):
    if s.steps is not None and len(s.ledger) == 1:
        return f"{s.steps:,} noisy updates"
    return "noisy releases"
