r"""Does a run's ledger describe what its sampler did? A consistency check, and the planted bugs it catches.

An accountant trusts the ledger: ``SubsampledGaussianEvent(z, q)`` x T says "T steps, each record joined each
batch independently with probability q". Three common mistakes break that sentence without touching the noise,
so the white-box audit of one canary's updates is a poor way to find them, while the batches themselves give
them away. :func:`check_claims` compares the batches a run drew (its ``details.batch_sizes`` and
``details.inclusions``, recorded by the sampler as it draws) with the ledger it claims:

* **steps**: the ledger counts as many steps as batches were drawn;
* **batch sizes**: Poisson sizes are :math:`\mathrm{Binomial}(n, q)`: their total is
  :math:`\mathrm{Binomial}(nT, q)` (exact two-sided test) and they vary (the dispersion
  :math:`S = \sum_t (|B_t| - nq)^2 / (nq(1-q))` has mean T; a one-sided normal test with its exact variance
  :math:`T(2 + (1 - 6q(1-q))/(nq(1-q)))`, conservative in the lower tail of this right-skewed sum); fixed-size
  and shuffled batches have exactly m records, truncated ones at most the cap;
* **per-record rates**: a record's count over T steps is :math:`\mathrm{Binomial}(T, q)` (or at most one per
  epoch when shuffling); the largest count is tested with a Bonferroni bound over the n records (exact);
* **balls-in-bins** (``BallsInBinsGaussianEvent``, counted per epoch): the ledger's epochs are ``ceil(T / b)``,
  each whole epoch's b batches hold n records and every record is in exactly one batch per epoch, and the sizes
  vary as multinomial cells do (Pearson's :math:`\sum (|B| - n/b)^2/(n/b)` over E whole epochs is about
  :math:`\chi^2_{E(b-1)}`; one-sided test of its lower tail, so equal sizes, e.g. shuffling, are refused).

Each test has false-alarm probability at most ``alpha`` (default 1e-6), so correct code is flagged with
probability at most a few ``alpha``. The dispersion test needs about :math:`T \ge 50` steps before even
constant sizes (:math:`S = 0`) are rejected at that level; shorter runs pass it. The check reads what the sampler recorded: it catches a sampler that
does not match its claim, not a trainer that records false diagnostics.

=======================================  ==========================================================================
``"shuffle_accounted_as_poisson"``       shuffled fixed-size batches, ledger ``SubsampledGaussianEvent(z, m/n)``
``"steps_counted_in_epochs"``            E epochs = E/q steps trained, the ledger counts E steps
``"oversampling_at_nominal_rate"``       class-balanced sampling (each class half of every batch in expectation),
                                         accounted at the nominal rate q: minority records join at a multiple of q
``"accumulation_at_microbatch_rate"``    k Poisson micro-batches of rate q summed into each update (gradient
                                         accumulation), the ledger counts the updates at the micro-batch rate q
                                         instead of k q (jax_privacy PR #271; docs/math.md §27.3)
=======================================  ==========================================================================

>>> check = claim_hunt("steps_counted_in_epochs", rng=0)
>>> check.consistent, check.problems[0][:52]
(False, 'the ledger counts 5 steps but the sampler drew 100 b')
>>> claim_hunt("steps_counted_in_epochs", correct=True, rng=0).consistent
True
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

from ...ground.events import GaussianEvent, SampledWithoutReplacementGaussianEvent, ShuffledBatchGaussianEvent
from ...ground.events import SubsampledGaussianEvent, TruncatedPoissonGaussianEvent
from ...ground.events_allocation import BallsInBinsGaussianEvent
from ...ground.events import ADD_REMOVE
from ...textbook.training import ShuffledBatchesWarning, plan_dp_sgd, poisson_sample, run_dp_sgd
from ...textbook.training.sampling import Poisson, Shuffle
from ...ground.validation import check_choice, check_in_interval, check_rng

__all__ = ["ClaimCheck", "check_claims", "CLAIM_BUGS", "claim_buggy_trainer", "claim_hunt"]

CLAIM_BUGS = {
    "shuffle_accounted_as_poisson": "trains on shuffled fixed-size batches but records SubsampledGaussianEvent(z, m/n) "
                                    "(wrong: no Poisson analysis covers shuffling, and the batch sizes never vary)",
    "steps_counted_in_epochs": "trains E/q steps for E epochs but the ledger counts E steps (wrong: every step is a "
                               "release, the claim undercounts them by 1/q)",
    "oversampling_at_nominal_rate": "samples class-balanced batches (minority records at a multiple of q) but "
                                    "accounts Poisson sampling at the nominal q (wrong: a minority record's privacy "
                                    "is that of its own, larger rate)",
    "accumulation_at_microbatch_rate": "sums k = 4 Poisson micro-batches of rate q into each update but accounts the "
                                       "updates at the micro-batch rate q (wrong: an update's batch is sampled at "
                                       "about k q; jax_privacy PR #271)",
}

#: Micro-batches per update in ``"accumulation_at_microbatch_rate"``.
ACCUMULATION_STEPS = 4


@dataclass
class ClaimCheck:
    """What :func:`check_claims` found: ``problems`` (empty when the run matches its ledger)."""

    problems: list = field(default_factory=list)
    description: str = ""

    @property
    def consistent(self):
        """True when no test rejected the claim."""
        return not self.problems

    def __str__(self):
        head = self.description or "consistency check"
        if self.consistent:
            return f"{head}: the batches match the ledger"
        return "\n".join([f"{head}: CLAIM REFUSED"] + [f"  - {p}" for p in self.problems])


def _binomial_two_sided(k, trials, p):
    return min(1.0, 2.0 * min(stats.binom.cdf(k, trials, p), stats.binom.sf(k - 1, trials, p)))


def _largest_count(inclusions, steps, rate, alpha, problems):
    """Bonferroni over the n records: P(some count >= c_max) <= n P(Binomial(T, rate) >= c_max)."""
    n, largest = inclusions.size, int(inclusions.max())
    p_value = min(1.0, n * stats.binom.sf(largest - 1, steps, rate))
    if p_value < alpha:
        problems.append(f"record {int(np.argmax(inclusions))} was in {largest} of {steps} batches; at the claimed rate "
                        f"{rate:.4g} that has probability <= {p_value:.2g} for any of the {n} records")


def _poisson_sizes(sizes, n, q, alpha, problems):
    steps, total = sizes.size, int(sizes.sum())
    p_value = _binomial_two_sided(total, n * steps, q)
    if p_value < alpha:
        problems.append(f"the batches hold {total} records in all; Poisson sampling at q = {q:.4g} gives "
                        f"Binomial({n * steps}, {q:.4g}), mean {n * steps * q:.1f} (two-sided p = {p_value:.2g})")
    spread = n * q * (1 - q)
    dispersion = float(np.sum((sizes - n * q) ** 2) / spread)
    sd = math.sqrt(steps * (2.0 + (1.0 - 6.0 * q * (1 - q)) / spread))
    p_value = stats.norm.cdf((dispersion - steps) / sd)
    if p_value < alpha:
        problems.append(f"the batch sizes barely vary (dispersion {dispersion:.3g}, expected {steps} +- {sd:.3g} for "
                        f"Binomial({n}, {q:.4g}) sizes; p = {p_value:.2g}): these are not Poisson samples")


def _balls_in_bins(event, epochs, sizes, inclusions, alpha, problems):
    """One balls-in-bins ledger entry (``epochs`` epochs of b batches) against the batches drawn."""
    b, n, steps = event.batches_per_epoch, inclusions.size, sizes.size
    if epochs != -(-steps // b):
        problems.append(f"the ledger counts {epochs} balls-in-bins epochs of {b} batches but the sampler drew {steps} "
                        f"batches")
        return
    whole = steps // b
    per_epoch = sizes[: whole * b].reshape(whole, b)
    if np.any(per_epoch.sum(axis=1) != n):
        problems.append(f"balls-in-bins epochs hold every record once, but epochs of {b} batches held "
                        f"{per_epoch.sum(axis=1).min()} to {per_epoch.sum(axis=1).max()} of the {n} records")
    if inclusions.min() < whole or inclusions.max() > epochs:
        problems.append(f"records were in {inclusions.min()} to {inclusions.max()} batches over {whole} whole "
                        f"epochs of balls-in-bins batches (exactly one per epoch)")
    if whole and b > 1:
        pearson = float(np.sum((per_epoch - n / b) ** 2) / (n / b))
        p_value = stats.chi2.cdf(pearson, whole * (b - 1))
        if p_value < alpha:
            problems.append(f"the batch sizes barely vary (Pearson {pearson:.3g} against chi2 with {whole * (b - 1)} "
                            f"degrees of freedom, p = {p_value:.2g}): these are not balls-in-bins batches")


def check_claims(result, *, alpha=1e-6, description=""):
    """Compare the batches a DP-SGD run drew with the ledger it claims (see the module docstring).

    ``result`` is a :class:`~dpedu.textbook.training.TrainingResult` of :func:`dpedu.textbook.training.dp_sgd` (or a trainer
    recording the same :class:`~dpedu.textbook.training.DPSGDDiagnostics`). Returns a :class:`ClaimCheck`.
    """
    alpha = check_in_interval(alpha, "alpha", 0.0, 1.0, low_open=True, high_open=True)
    details = getattr(result, "details", None)
    if not hasattr(result, "ledger") or not all(hasattr(details, name) for name in ("batch_sizes", "inclusions")):
        raise TypeError(f"result must be a TrainingResult of dpedu.textbook.training.dp_sgd (a ledger and details recording "
                        f"batch_sizes and inclusions); got {type(result).__name__}")
    check = ClaimCheck(description=description)
    if result.ledger is None:
        return check                                   # no claim: nothing to contradict
    sizes = np.asarray(result.details.batch_sizes)
    inclusions = np.asarray(result.details.inclusions)
    n, steps, problems = inclusions.size, sizes.size, check.problems
    claimed = sum(count for event, count in result.ledger if not isinstance(event, BallsInBinsGaussianEvent))
    if claimed != steps and claimed:
        problems.append(f"the ledger counts {claimed} steps but the sampler drew {steps} batches")
    for event, count in result.ledger:
        if isinstance(event, BallsInBinsGaussianEvent):
            _balls_in_bins(event, count, sizes, inclusions, alpha, problems)
        elif isinstance(event, GaussianEvent) or (isinstance(event, SubsampledGaussianEvent) and event.sampling_rate == 1):
            if np.any(sizes != n):
                problems.append(f"{event!r} claims every record in every step, but batches had {sizes.min()} to "
                                f"{sizes.max()} of the {n} records")
        elif isinstance(event, SubsampledGaussianEvent):
            _poisson_sizes(sizes, n, event.sampling_rate, alpha, problems)
            _largest_count(inclusions, steps, event.sampling_rate, alpha, problems)
        elif isinstance(event, (SampledWithoutReplacementGaussianEvent, ShuffledBatchGaussianEvent)):
            if event.dataset_size != n or np.any(sizes != event.batch_size):
                problems.append(f"{event!r} claims batches of {event.batch_size} of {event.dataset_size} records; "
                                f"the run drew {sizes.min()} to {sizes.max()} of {n}")
            elif isinstance(event, ShuffledBatchGaussianEvent):
                epochs = math.ceil(steps / (n // event.batch_size))
                if inclusions.max() > epochs:
                    problems.append(f"a record was in {inclusions.max()} batches in {epochs} shuffled epochs")
            else:
                _largest_count(inclusions, steps, event.sampling_rate, alpha, problems)
        elif isinstance(event, TruncatedPoissonGaussianEvent):
            if event.dataset_size != n or sizes.max() > event.max_batch_size:
                problems.append(f"{event!r} caps batches at {event.max_batch_size}; the run drew up to {sizes.max()}")
            _largest_count(inclusions, steps, event.sampling_rate, alpha, problems)
        else:
            problems.append(f"no consistency rule for {event!r}")
    return check


# --- the planted bugs: the correct loop (run_dp_sgd) with a wrong sampler or a wrong count ---------------------

class _ShuffledButPoisson(Poisson):
    def batches(self, rng):
        return Shuffle(self.n, self.sampling_rate).batches(rng)      # WRONG: not Poisson


class _EpochsAsSteps(Poisson):
    def __init__(self, n, sampling_rate, epochs):
        super().__init__(n, sampling_rate)
        self.epochs = epochs

    def ledger(self, noise_multiplier, steps, relation=ADD_REMOVE):
        return [(self.event(noise_multiplier, relation), round(self.epochs))]   # WRONG: epochs, not epochs / q steps


class _Oversampling(Poisson):
    def __init__(self, n, sampling_rate, rates):
        super().__init__(n, sampling_rate)
        self.rates = np.array(rates)

    def batches(self, rng):
        while True:                                    # WRONG: record i joins with probability rates[i] != q
            yield np.flatnonzero(rng.random(self.n) < self.rates)


class _AccumulatedAtMicroRate(Poisson):
    def __init__(self, n, sampling_rate, micro_rate):
        super().__init__(n, sampling_rate)
        self.micro_rate = micro_rate

    def batches(self, rng):
        while True:                                    # k micro-batches of rate q summed into one update
            yield np.concatenate([poisson_sample(self.n, self.micro_rate, rng) for _ in range(ACCUMULATION_STEPS)])

    def event(self, noise_multiplier, relation=ADD_REMOVE):
        return SubsampledGaussianEvent(noise_multiplier, self.micro_rate)   # WRONG: rate q, not k q


def _imbalanced_data(n=200, minority=20, d=3):
    """``n`` standard normal rows, the first ``minority`` labelled +1 (the rest -1)."""
    X = np.random.default_rng(0).normal(size=(n, d)) / math.sqrt(d)
    return X, np.where(np.arange(n) < minority, 1.0, -1.0)


def claim_buggy_trainer(bug, *, correct=False, noise_multiplier=1.0, sampling_rate=0.05, epochs=5, clip_norm=1.0):
    """``train(X, y, rng) -> TrainingResult``: DP-SGD with the planted ``bug`` of :data:`CLAIM_BUGS`, or
    (``correct=True``) the correct run it pretends to be: ``dp_sgd`` with ``sampling="shuffle"``, the same
    epochs, or Poisson sampling (at the update's rate k q for the accumulation bug: one Poisson sample per update,
    which may be split into micro-batches without changing the sum). **Teaching only: never train with the buggy
    one.**"""
    bug = check_choice(bug, "bug", CLAIM_BUGS)
    _check_correct(correct)
    settings = dict(noise_multiplier=noise_multiplier, clip_norm=clip_norm, sampling_rate=sampling_rate,
                    epochs=epochs, learning_rate=0.5)

    def train(X, y, rng):
        shuffle, accumulate = bug == "shuffle_accounted_as_poisson", bug == "accumulation_at_microbatch_rate"
        rate = dict(sampling_rate=ACCUMULATION_STEPS * sampling_rate) if accumulate else {}
        plan = plan_dp_sgd(X.shape[0], sampling="shuffle" if shuffle and correct else "poisson", **{**settings, **rate})
        n, q = X.shape[0], plan.sampling_rate
        if not correct and accumulate:                 # a planted bug is a sampling scheme (or its ledger)
            plan = replace(plan, scheme=_AccumulatedAtMicroRate(n, q, micro_rate=sampling_rate))
        elif not correct and bug == "shuffle_accounted_as_poisson":
            plan = replace(plan, scheme=_ShuffledButPoisson(n, q))
        elif not correct and bug == "steps_counted_in_epochs":
            plan = replace(plan, scheme=_EpochsAsSteps(n, q, epochs=epochs))
        elif not correct:                              # class-balanced: each class fills half a batch on average
            share = np.where(y > 0, 0.5 / np.mean(y > 0), 0.5 / np.mean(y < 0))
            plan = replace(plan, scheme=_Oversampling(n, q, rates=np.minimum(1.0, sampling_rate * share)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ShuffledBatchesWarning)
            return run_dp_sgd(X, y, plan, rng=rng)

    train.description = f"{'correct' if correct else 'BUGGY'} DP-SGD ({bug})"
    return train


def _check_correct(correct):
    """``correct`` picks the planted or the correct code: only True or False (a string such as "no" is truthy)."""
    if not isinstance(correct, bool):
        raise TypeError(f"correct must be True or False; got {type(correct).__name__} {correct!r}")


def claim_hunt(bug, *, correct=False, alpha=1e-6, rng=None):
    """Train once with ``claim_buggy_trainer(bug, correct=correct)`` on imbalanced data and check its claims."""
    check_choice(bug, "bug", CLAIM_BUGS)
    _check_correct(correct)
    alpha = check_in_interval(alpha, "alpha", 0.0, 1.0, low_open=True, high_open=True)
    rng = check_rng(rng)
    train = claim_buggy_trainer(bug, correct=correct)
    X, y = _imbalanced_data()
    result = train(X, y, rng)
    return check_claims(result, alpha=alpha, description=train.description)
