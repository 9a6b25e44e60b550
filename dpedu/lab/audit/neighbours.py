r"""A literal-neighbour audit of every learner: δ measured at the claimed ε on worst-case neighbouring datasets.

An accountant's ε is a claim about pairs of datasets that are neighbours under the relation the ledger names
(docs/math.md §1.2). This module builds such pairs *literally* (add/remove: D and D plus one record, so n changes
and the batches are drawn on n and n + 1 records; zero-out: one record replaced by a row of zeros; replace-one: one
record changed), runs or derives what the learner releases on each, and measures the hockey-stick divergence

.. math:: \delta(\varepsilon) = \max\big(E_P[(1 - e^{\varepsilon - L})_+],\ E_Q[(1 - e^{\varepsilon + L})_+]\big),
          \qquad L = \ln\frac{dP}{dQ},

at the smallest ε any dpedu accountant certifies for the learner's own ledger (:func:`claimed_epsilon`). The claim
holds when the measured δ (for Monte Carlo, the upper end of its 95 % Clopper-Pearson interval) is at most the
claimed δ times 1 + its tolerance: :data:`TOLERANCE`, or six standard errors of the Monte Carlo when they are more
(:func:`monte_carlo_tolerance`; docs/math.md §20.7).

* **Exactly**, when the output law is written down in closed form: noisy gradient descent (a Laplace count and
  Gaussian sums, :func:`audit_noisy_gd`), output and objective perturbation (one-dimensional densities,
  :mod:`~dpedu.lab.audit.neighbour_convex`).
* **By Monte Carlo on the privacy loss**, when it is a Gaussian mixture over the finitely many batch assignments
  (DP-SGD with every sampling scheme, :func:`audit_dp_sgd`; DP-FTRL and matrix factorisation, :func:`audit_ftrl`):
  draws from each law, the exact log-ratio of the two mixtures, and :math:`1\{U < 1 - e^{\varepsilon - L}\}`, a
  Bernoulli variable with mean exactly δ, whose Clopper-Pearson interval is the measurement
  (:func:`mixture_delta`). The laws come from :mod:`~dpedu.lab.audit.neighbour_laws`, which also checks them
  against the real loop.

:func:`neighbour_table` returns one :class:`NeighbourRow` per (learner, relation it claims);
:func:`format_neighbour_table` prints them. The relations a learner does not claim are not audited; a claim planted
by hand (``claim=``) is, and the old DP-FTRL claim under add/remove fails (issue 37, D1).

>>> row = audit_noisy_gd(delta=1e-3)
>>> row.verdict, row.method
('holds', 'exact')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...accountants import compare
from ...accountants.balls_in_bins import balls_in_bins_upper_bound
from ...ground.validation import check_choice, check_delta, check_positive, check_positive_int, check_rng
from ...ground.events import ADD_REMOVE, check_relation, ledger_pairs
from ...ground.events_allocation import BallsInBinsGaussianEvent
from ...textbook.learners import factorized_gradient_descent, make_factorization
from ...textbook.training import (
    noisy_gradient_descent, plan_dp_sgd, plan_noisy_gradient_descent, run_dp_sgd, run_noisy_gradient_descent
)
from ...textbook.training.sampling import Cyclic, make_sampling
from .neighbour_deltas import (
    SPREAD, TOLERANCE, cyclic_convexity_bound, gaussian_pair_delta, laplace_gaussian_delta, mixture_delta,
    monte_carlo_tolerance, with_bound
)
from .neighbour_laws import LEARNING_RATE, World, batch_sum_law, factorization_transform, literal_worlds

__all__ = [
    "DP_SGD_SCHEMES",
    "FTRL_CLAIMS",
    "SPREAD",
    "TOLERANCE",
    "NeighbourRow",
    "audit_dp_sgd",
    "audit_ftrl",
    "audit_noisy_gd",
    "claimed_epsilon",
    "cyclic_convexity_bound",
    "dp_sgd_claims",
    "format_neighbour_table",
    "gaussian_pair_delta",
    "laplace_gaussian_delta",
    "mixture_delta",
    "monte_carlo_tolerance",
    "neighbour_table",
    "removal_movement",
]

#: The DP-SGD schemes audited: every scheme of :data:`dpedu.textbook.training.SAMPLINGS` but the shuffled one, which no
#: accountant prices (docs/math.md §22.6).
DP_SGD_SCHEMES = ("poisson", "fixed", "truncated_poisson", "balls_in_bins", "cyclic")
#: The relations DP-FTRL / matrix factorisation claims (its fixed batches refuse add/remove).
FTRL_CLAIMS = ("zero_out", "replace_one")
#: The other records' gradients tried: for Poisson and balls-in-bins the other records' batches do not depend on the
#: differing one's and have one law in both datasets, so any other gradient is post-processing of gradient 0.
OTHERS = {"poisson": (0,), "balls_in_bins": (0,)}


@dataclass(frozen=True)
class NeighbourRow:
    """One audited claim: ``epsilon`` (by ``claimed_by``) at ``delta``, and the delta ``measured`` at that epsilon on
    the worst ``pair`` tried, with its interval [``lower``, ``upper``] (equal to it when ``method`` is exact)."""

    learner: str
    relation: str
    pair: str
    delta: float
    epsilon: float
    claimed_by: str
    measured: float
    lower: float
    upper: float
    method: str
    tolerance: float = TOLERANCE

    @property
    def holds(self) -> bool:
        """Whether the measured delta's upper end is within (1 + tolerance) times the claimed delta."""
        return self.upper <= self.delta * (1.0 + self.tolerance)

    @property
    def verdict(self) -> str:
        return "holds" if self.holds else "FAILS"


def claimed_epsilon(ledger, delta):
    """``(epsilon, accountant)``: the smallest epsilon any dpedu accountant certifies for ``ledger`` at ``delta``.

    Balls-in-bins epochs are priced by the PLD accountant (random allocation, docs/math.md §22.9); where it refuses
    them, by the bound without amplification (§22.8). ``(nan, "no accountant")`` when nothing prices it.
    """
    pairs = ledger_pairs(ledger, "ledger")
    comparison = compare(pairs, delta)
    valid = {name: eps for name, eps in comparison.items()
             if math.isfinite(eps) and "NOT a valid" not in comparison.notes.get(name, "")}
    if valid:
        name = min(valid, key=valid.get)
        return float(valid[name]), name
    if all(isinstance(e, BallsInBinsGaussianEvent) and e.relation == ADD_REMOVE for e, _ in pairs):
        (event, epochs), = pairs
        return float(balls_in_bins_upper_bound(event.noise_multiplier, epochs, delta)), "proven bound (§22.8)"
    return math.nan, "no accountant"


def _worst(learner, relation, delta, claim, candidates, draws, bounded=False):
    """The row of the candidate pair with the largest upper end: ``candidates`` is [(pair text, (est, lo, hi))]."""
    epsilon, claimed_by = claim
    pair, (measured, lower, upper) = max(candidates, key=lambda item: item[1][2])
    method = f"Monte Carlo, {draws:.0e} draws per direction, 95 %" + ("; exact convexity bound" if bounded else "")
    tolerance = TOLERANCE if bounded else monte_carlo_tolerance(delta, draws)     # bounded: an exact upper end
    return NeighbourRow(learner, relation, pair, delta, epsilon, claimed_by, measured, lower, upper, method, tolerance)


def _claim(ledgers, delta, claim):
    """The claim to test: the given ``claim`` ledger's, else the smaller of the two worlds' own ledgers' epsilons."""
    if claim is not None:
        return claimed_epsilon(claim, delta)
    return min((claimed_epsilon(ledger, delta) for ledger in ledgers), key=lambda item: item[0])


def audit_dp_sgd(sampling, relation, *, n=8, sampling_rate=0.25, steps=8, noise_multiplier=1.0, max_batch_size=3,
                 delta=1e-2, draws=10**6, rng=0, claim=None, others=None):
    r"""Audit DP-SGD (:func:`dpedu.textbook.training.plan_dp_sgd` with ``sampling`` and ``relation``) on literal pairs.

    n records in D (q = ``sampling_rate``, ``steps`` a whole number of epochs, clip norm 1), the other records'
    gradient ``others`` (default: 0, -C and +C; only 0 for Poisson and balls-in-bins, :data:`OTHERS`). Each
    dataset gets its own plan (add/remove: n and n + 1 records) and the auditor reads the noisy sums, i.e. each
    run's updates times its own divisor over eta: the divisor is public (n public, docs/math.md §1.2). The claim
    is the plans' own ledger (or ``claim``, a ledger).
    """
    delta = check_delta(delta)
    check_choice(sampling, "sampling", DP_SGD_SCHEMES)
    noise_multiplier = check_positive(noise_multiplier, "noise_multiplier")
    settings = {"noise_multiplier": noise_multiplier, "clip_norm": 1.0, "sampling_rate": sampling_rate, "steps": steps,
                    "learning_rate": LEARNING_RATE, "sampling": sampling, "relation": relation,
                    "max_batch_size": max_batch_size if sampling == "truncated_poisson" else None}
    rng = check_rng(rng)
    epsilon, claimed_by = _claim([plan_dp_sgd(world.n, **settings).ledger
                                  for world in literal_worlds(relation, n, other_gradient=0)], delta, claim)
    candidates, target = [], delta / 2                    # a candidate far below the claim stops at a tenth
    for other in (others if others is not None else OTHERS.get(sampling, (0, -1, 1))):
        worlds = literal_worlds(relation, n, other_gradient=other)
        schemes = [plan_dp_sgd(world.n, **settings).scheme for world in worlds]
        laws = [batch_sum_law(scheme, world, steps=steps).mixture(noise_multiplier)
                for scheme, world in zip(schemes, worlds)]
        bound = (cyclic_convexity_bound(worlds, schemes[0].batches_per_epoch, steps, epsilon, noise_multiplier)
                 if sampling == "cyclic" else None)
        candidates.append((f"{worlds[0].describe()} | {worlds[1].describe()}",
                           with_bound(mixture_delta(*laws, epsilon, draws=draws, rng=rng, stop_below=target),
                                       bound)))
    return _worst(f"DP-SGD, {sampling}", relation, delta, (epsilon, claimed_by), candidates, draws,
                  sampling == "cyclic")


def audit_ftrl(kind, relation, *, n=8, batches=4, epochs=2, noise_multiplier=1.0, delta=1e-2, draws=10**6, rng=0,
               claim=None, others=(0, -1, 1)):
    r"""Audit DP-FTRL / matrix factorisation (:func:`dpedu.textbook.learners.factorized_gradient_descent` with ``kind``) on
    literal pairs of ``relation``.

    The claim is the learner's own ledger on D (it refuses add/remove: its batches move when a record is added),
    or ``claim``. The auditor sees every update, i.e. the noisy prefix sums :math:`AG + BZ`
    (:func:`~dpedu.lab.audit.neighbour_laws.factorization_transform` whitens them); the batches are the
    ``"cyclic"`` scheme's on each dataset's n records (n and n + 1 under add/remove).
    """
    delta, relation = check_delta(delta), check_relation(relation)
    noise_multiplier = check_positive(noise_multiplier, "noise_multiplier")
    steps = check_positive_int(batches, "batches") * check_positive_int(epochs, "epochs")
    bands = min(batches, 4) if kind == "banded" else None                      # as the learner builds it
    factorization = make_factorization(kind, steps, bands=bands)
    transform = factorization_transform(factorization)
    if claim is None:
        X, y = literal_worlds(relation, n, other_gradient=0)[0].data()
        claim = factorized_gradient_descent(X, y, kind=kind, noise_multiplier=noise_multiplier, clip_norm=1.0,
                                            batches=batches, epochs=epochs, learning_rate=LEARNING_RATE,
                                            relation=relation, rng=0).ledger
    epsilon, claimed_by = claimed_epsilon(claim, delta)
    rng = check_rng(rng)
    candidates, target = [], delta / 2                    # a candidate far below the claim stops at a tenth
    for other in others:
        worlds = literal_worlds(relation, n, other_gradient=other)
        laws = [batch_sum_law(Cyclic(world.n, 1.0 / batches), world, steps=steps).mixture(noise_multiplier, transform)
                for world in worlds]
        bound = cyclic_convexity_bound(worlds, batches, steps, epsilon, noise_multiplier, transform)
        candidates.append((f"{worlds[0].describe()} | {worlds[1].describe()}",
                           with_bound(mixture_delta(*laws, epsilon, draws=draws, rng=rng, stop_below=target),
                                       bound)))
    return _worst(f"DP-FTRL, {kind}", relation, delta, (epsilon, claimed_by), candidates, draws,
                  relation != ADD_REMOVE)


def _noisy_gd_release(world, seed, settings):
    """(noisy count, sum of the k noisy gradient sums) of one run of noisy_gradient_descent, read off its result."""
    X, y = world.data()
    result = noisy_gradient_descent(X, y, rng=seed, learning_rate=LEARNING_RATE, clip_norm=1.0, **settings)
    count = result.details.noisy_count
    return count, -result.theta[0] * count / LEARNING_RATE, result


def audit_noisy_gd(*, n=8, iterations=4, epsilon=0.5, delta_per_iteration=1e-4, delta=1e-2, seeds=3):
    r"""Audit noisy gradient descent (:func:`dpedu.textbook.training.noisy_gradient_descent`) under literal add/remove.

    D: n rows of zeros; D' = D plus a record of gradient +C (n + 1 rows). The run releases a noisy count and k
    noisy gradient sums; the final theta is a function of the count and their total S (every gradient is constant).
    The code is run on both datasets with the same seeds (``seeds`` of them): the released count moves by exactly 1
    and S by exactly kC (checked; the count is noised, so n need not be public here). The two outputs are then
    :math:`(\mathrm{Lap}(n, 1/\varepsilon_c), \mathcal N(S, k z^2C^2))` and the same shifted, whose δ is computed
    exactly (:func:`laplace_gaussian_delta`); the claim is the run's own ledger.
    """
    delta = check_delta(delta)
    settings = {"iterations": iterations, "epsilon": epsilon, "delta": delta_per_iteration}
    worlds = World(check_positive_int(n, "n"), 0, None), World(n, 0, 1)
    shifts = set()
    for seed in range(check_positive_int(seeds, "seeds", maximum=100)):
        (c0, s0, result), (c1, s1, _) = (_noisy_gd_release(world, seed, settings) for world in worlds)
        shifts.add((round(c1 - c0, 9), round(s1 - s0, 6)))
    if len(shifts) != 1:
        raise RuntimeError(f"the released count and sum moved differently with the seed: {sorted(shifts)}")
    (count_shift, sum_shift), = shifts
    plan = result.details.plan
    mu = abs(sum_shift) / (plan.noise_std * math.sqrt(iterations))
    claim = claimed_epsilon(result.ledger, delta)
    measured = laplace_gaussian_delta(claim[0], laplace_shift=count_shift, laplace_scale=1.0 / plan.epsilon_count,
                                      mu=mu)
    pair = (f"{worlds[0].describe()} | {worlds[1].describe()}: count moves {count_shift:g}, the k sums "
            f"{sum_shift:g} C")
    return NeighbourRow("noisy GD", ADD_REMOVE, pair, delta, claim[0], claim[1], measured, measured, measured,
                        "exact")


def dp_sgd_claims(delta=1e-2, **settings):
    """The (scheme, relation) pairs of DP-SGD that make a claim: the plan accepts the relation and some accountant
    prices its ledger. Fixed-size batches are priced under replace-one only, truncated Poisson not under zero-out,
    balls-in-bins under add/remove only (docs/math.md §22)."""
    settings = {"n": 8, "sampling_rate": 0.25, "steps": 8, "max_batch_size": 3, **settings}
    pairs = []
    for sampling in DP_SGD_SCHEMES:
        scheme = make_sampling(sampling, settings["n"], settings["sampling_rate"],
                               settings["max_batch_size"] if sampling == "truncated_poisson" else None)
        for relation in scheme.relations:
            plan = plan_dp_sgd(settings["n"], noise_multiplier=1.0, clip_norm=1.0,
                               sampling_rate=settings["sampling_rate"],
                               steps=settings["steps"], sampling=sampling, relation=relation,
                               max_batch_size=settings["max_batch_size"] if sampling == "truncated_poisson" else None)
            if math.isfinite(claimed_epsilon(plan.ledger, delta)[0]):
                pairs.append((sampling, relation))
    return pairs


def neighbour_table(*, delta=1e-2, draws=10**6, rng=0, ftrl_kinds=("identity", "tree"), convex=True):
    """One :class:`NeighbourRow` per learner and relation it claims (docs/math.md §20.7), at ``delta``.

    Noisy GD; DP-SGD with every (scheme, relation) of :func:`dp_sgd_claims`; DP-FTRL with each of ``ftrl_kinds``
    under :data:`FTRL_CLAIMS`; output and objective perturbation
    (:func:`~dpedu.lab.audit.neighbour_convex.convex_rows`). Monte Carlo rows use ``draws`` per direction and
    one generator seeded by ``rng``.
    """
    from .neighbour_convex import convex_rows

    rng = check_rng(rng)
    rows = [audit_noisy_gd(delta=delta)]
    rows += [audit_dp_sgd(sampling, relation, delta=delta, draws=draws, rng=rng)
             for sampling, relation in dp_sgd_claims(delta)]
    rows += [audit_ftrl(kind, relation, delta=delta, draws=draws, rng=rng) for kind in ftrl_kinds
             for relation in FTRL_CLAIMS]
    return rows + (convex_rows(delta=delta) if convex else [])


def removal_movement(learner, *, n=8):
    r"""How far a literal removal moves one noise-free update, in units of C (docs/math.md §1.2).

    D: n - 1 records of gradient -C and one of +C; D minus that record: the n - 1 others. One step from theta = 0
    on each, with the learning rate eta; returns ``(over len(X), n public)``: the change of the update times D's
    divisor over eta, and the change of the released noisy sums (each update times its *own* divisor over eta).
    ``learner="dp_sgd"``: :func:`dpedu.textbook.training.run_dp_sgd`, every record in the batch (q = 1, divisor n), noise
    multiplier 0. ``learner="noisy_gd"``: :func:`dpedu.textbook.training.run_noisy_gradient_descent` at epsilon = 10**6
    (analytic calibration: the noise is about 7e-4 C and the count n to 1e-6), the same seed on both.
    The first is 2 (the mean of n - 1 clipped gradients differs from the mean of n by up to 2C/n); the second is 1.
    """
    check_choice(learner, "learner", ("dp_sgd", "noisy_gd"))
    if check_positive_int(n, "n") < 2:
        raise ValueError(f"n must be >= 2 (the removed record and one other); got {n}")
    worlds = World(n - 1, -1, 1), World(n - 1, -1, None)
    moves, divisors = [], []
    for world in worlds:
        X, y = world.data()
        if learner == "dp_sgd":
            plan = plan_dp_sgd(world.n, noise_multiplier=0.0, clip_norm=1.0, sampling_rate=1.0, steps=1,
                               learning_rate=LEARNING_RATE)
            theta = run_dp_sgd(X, y, plan, theta0=np.zeros(1), rng=0).theta
            divisors.append(plan.divisor)
        else:
            plan = plan_noisy_gradient_descent(1, 1e6, 1e-5, clip_norm=1.0, learning_rate=LEARNING_RATE,
                                               calibration="analytic")
            result = run_noisy_gradient_descent(X, y, plan, rng=0)
            theta = result.theta
            divisors.append(result.details.noisy_count)
        moves.append(float(-theta[0]) / LEARNING_RATE)          # the update over eta (theta_0 = 0)
    return abs(moves[0] - moves[1]) * divisors[0], abs(moves[0] * divisors[0] - moves[1] * divisors[1])


def format_neighbour_table(rows):
    """The rows as aligned text (at most 100 columns for learners of up to 26 characters): learner, relation, claimed
    epsilon at delta, measured delta with its 95 % interval (or "exact"), verdict."""
    width = max([26] + [len(row.learner) for row in rows])
    lines = [(f"{'learner':<{width}} {'relation':<11} {'eps':>7} {'at delta':>8} {'delta measured':>14} "
              f"{'interval (95 %)':<20} verdict")]
    for row in rows:
        interval = "exact" if row.method == "exact" else f"[{row.lower:.2e}, {row.upper:.2e}]"
        lines.append(f"{row.learner:<{width}} {row.relation:<11} {row.epsilon:>7.4g} {row.delta:>8.2g} "
                     f"{row.measured:>14.3e} {interval:<20} {row.verdict}")
    return "\n".join(lines)
