r"""Output and objective perturbation on literal neighbouring pairs, exactly (docs/math.md §20.7).

Both learners release one point, so on one feature their output laws are one-dimensional densities that can be
written down and integrated:

* **output perturbation** releases :math:`\hat\theta + \mathcal N(0, s^2)`, with :math:`\hat\theta` and s what
  :func:`dpedu.textbook.learners.output_perturbation` itself computed on each dataset (``minimiser``, ``noise_std``): two
  Gaussians, whose δ(ε) is exact (:func:`gaussian_1d_delta`, unequal variances allowed);
* **objective perturbation** releases the minimiser of
  :math:`J(\theta) = \sum_i \ell(\theta; u_i) + \frac\Delta2\theta^2 + b\theta`, :math:`b \sim \mathcal N(0, \zeta^2)`
  (docs/math.md §25.3). The map :math:`\theta \mapsto b = -(\sum_i\ell_i'(\theta) + \Delta\theta)` is a strictly
  decreasing bijection, so the minimiser has density
  :math:`p(\theta) = \varphi_\zeta(b(\theta))\,(\sum_i\ell_i''(\theta) + \Delta)` (:func:`objective_density`),
  integrated on a fine grid whose total mass is checked (:func:`grid_delta`).

The pairs are every combination of a small grid of feature values u = y x in [-1, 1] (rows of norm at most
``row_bound`` = 1): n - 1 equal records and a differing one. :func:`recovered_linear_terms` checks the derived
density against the code: it recovers b from the minimisers the learner returns.

>>> row = audit_output_perturbation("replace_one", delta=1e-2)
>>> row.verdict, row.method
('holds', 'exact')
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from ...ground.validation import check_delta, check_positive_int, check_rng
from ...ground.events import ADD_REMOVE, REPLACE_ONE, ZERO_OUT, check_relation
from ...textbook.learners import (
    objective_perturbation, objective_perturbation_noise_std, objective_perturbation_regularization, output_perturbation
)
from .neighbours import NeighbourRow, claimed_epsilon

__all__ = [
    "FEATURES",
    "RECORDS_TRIED",
    "audit_objective_perturbation",
    "audit_output_perturbation",
    "convex_rows",
    "gaussian_1d_delta",
    "grid_delta",
    "objective_density",
    "recovered_linear_terms",
]

#: The feature values u = y x of the n - 1 equal records tried.
FEATURES = (-1.0, -0.5, 0.0, 0.5, 1.0)
#: The differing record's value, and (replace-one) what it becomes.
RECORDS_TRIED = (-1.0, -0.5, 0.5, 1.0)
#: Points of the grid on which objective perturbation's densities are integrated.
GRID_POINTS = 100_001


def _mass(low, high, mean, std):
    """P(low < Y < high) for Y ~ N(mean, std^2), from the nearer tail (no cancellation far out)."""
    if low > mean:
        return float(norm.sf(low, mean, std) - norm.sf(high, mean, std))
    return float(norm.cdf(high, mean, std) - norm.cdf(low, mean, std))


def _one_direction(epsilon, m1, s1, m2, s2):
    """H at e^eps of N(m1, s1^2) from N(m2, s2^2): P(R) - e^eps Q(R) on R = {ln p/q > eps}, a quadratic's sign."""
    a = 0.5 / s2 ** 2 - 0.5 / s1 ** 2
    b = m1 / s1 ** 2 - m2 / s2 ** 2
    c = -0.5 * m1 ** 2 / s1 ** 2 + 0.5 * m2 ** 2 / s2 ** 2 + math.log(s2 / s1) - epsilon
    if abs(a) <= 1e-14 * (0.5 / s1 ** 2):
        if b == 0:
            intervals = [(-math.inf, math.inf)] if c > 0 else []
        else:
            root = -c / b
            intervals = [(root, math.inf)] if b > 0 else [(-math.inf, root)]
    else:
        disc = b * b - 4 * a * c
        if disc <= 0:
            intervals = [(-math.inf, math.inf)] if a > 0 else []
        else:
            r1, r2 = sorted(((-b - math.sqrt(disc)) / (2 * a), (-b + math.sqrt(disc)) / (2 * a)))
            intervals = [(-math.inf, r1), (r2, math.inf)] if a > 0 else [(r1, r2)]
    value = sum(_mass(lo, hi, m1, s1) - math.exp(epsilon) * _mass(lo, hi, m2, s2) for lo, hi in intervals)
    return max(value, 0.0)


def gaussian_1d_delta(epsilon, mean_1, std_1, mean_2, std_2):
    r"""δ(ε) of :math:`\mathcal N(m_1, s_1^2)` and :math:`\mathcal N(m_2, s_2^2)`, exactly, both directions (the
    larger): the set where the log-ratio exceeds ε is bounded by the roots of a quadratic.

    >>> round(gaussian_1d_delta(1.0, 1.0, 1.0, 0.0, 1.0), 6)      # Phi(-1/2) - e Phi(-3/2): the Gaussian, mu = 1
    0.126937
    """
    return max(_one_direction(epsilon, mean_1, std_1, mean_2, std_2),
               _one_direction(epsilon, mean_2, std_2, mean_1, std_1))


def _data(values):
    values = np.asarray(values, dtype=float)
    return values[:, None], np.ones(len(values))


def _pairs(relation, n):
    """``[(text, D values, D' values)]``: n - 1 records of each FEATURES value and one differing record."""
    out = []
    for value in FEATURES:
        for record in RECORDS_TRIED:
            first = [value] * (n - 1) + [record]
            if relation == REPLACE_ONE:
                seconds = [[value] * (n - 1) + [other] for other in RECORDS_TRIED if other != record]
            elif relation == ADD_REMOVE:
                seconds = [[value] * (n - 1)]                 # removed: n - 1 rows
            else:
                seconds = [[value] * (n - 1) + [0.0]]         # a row of zeros: zero gradient, n kept
            out += [(f"{n - 1} x u={value:g} + u={record:g} | "
                     + (f"u={second[-1]:g}" if len(second) == n else "removed"), first, second) for second in seconds]
    return out


def audit_output_perturbation(relation, *, n=4, regularization=1.0, noise_multiplier=1.0, delta=1e-2):
    r"""Audit :func:`dpedu.textbook.learners.output_perturbation` under ``relation`` on the pairs of :data:`FEATURES` and
    :data:`RECORDS_TRIED`, exactly.

    Zero-out is the pair "a record against a row of zeros, n kept" (the objective's divisor stays n, docs/math.md
    §1.2, §25.1); replace-one changes the record. The learner refuses to claim add/remove, so
    ``relation="add_remove"`` audits the literal removal (n - 1 rows: the learner recomputes its divisor and its
    noise) against the zero-out claim it does make, which shows why: that row fails.
    """
    relation, delta = check_relation(relation), check_delta(delta)
    n = check_positive_int(n, "n")
    claim = ZERO_OUT if relation == ADD_REMOVE else relation
    settings = {"regularization": regularization, "row_bound": 1.0, "noise_multiplier": noise_multiplier,
                "relation": claim, "rng": 0}
    runs = {}

    def run(values):                                   # each data set once
        if tuple(values) not in runs:
            runs[tuple(values)] = output_perturbation(*_data(values), **settings)
        return runs[tuple(values)]

    pairs = _pairs(relation, n)
    ledgers = {repr(run(values).ledger) for _, first, second in pairs for values in (first, second)}
    if len(ledgers) != 1:
        raise RuntimeError(f"the runs claimed different ledgers: {sorted(ledgers)}")
    epsilon, claimed_by = claimed_epsilon(run(pairs[0][1]).ledger, delta)
    candidates = []
    for text, first, second in pairs:
        (m1,), (m2,) = run(first).minimiser, run(second).minimiser
        candidates.append((text, gaussian_1d_delta(epsilon, m1, run(first).noise_std, m2, run(second).noise_std)))
    text, measured = max(candidates, key=lambda item: item[1])
    if relation == ADD_REMOVE:
        learner, claimed_by = "output pert., literal", f"its zero-out claim ({claimed_by})"
    else:
        learner = "output perturbation"
    return NeighbourRow(learner, relation, text, delta, epsilon, claimed_by, measured, measured, measured, "exact")


def objective_density(theta, values, regularization, zeta):
    r"""The density at ``theta`` (an array) of objective perturbation's exact minimiser on one feature with
    records u = ``values``:
    :math:`\varphi_\zeta(b(\theta))\,(\sum_i u_i^2\sigma(u_i\theta)\sigma(-u_i\theta) + \Delta)`,
    :math:`b(\theta) = \sum_i u_i\sigma(-u_i\theta) - \Delta\theta` (the sign of b does not change its law)."""
    u = np.asarray(values, dtype=float)[:, None]
    margins = u * theta[None, :]
    b = np.sum(u * expit(-margins), axis=0) - regularization * theta
    curvature = np.sum(u ** 2 * expit(margins) * expit(-margins), axis=0) + regularization
    return norm.pdf(b, 0.0, zeta) * curvature


def grid_delta(epsilon, grid, density_1, density_2):
    """δ(ε) of two densities on one uniform grid, both directions (the larger), by the trapezoid rule; refuses when
    either density's mass on the grid is not 1 to 1e-6 (the grid misses part of it)."""
    step = grid[1] - grid[0]

    def integral(values):
        return float(step * (values.sum() - 0.5 * (values[0] + values[-1])))

    for density in (density_1, density_2):
        if abs(integral(density) - 1.0) > 1e-6:
            raise RuntimeError(f"a density's mass on the grid is {integral(density):.8f}, not 1: widen the grid")
    return max(integral(np.maximum(p - math.exp(epsilon) * q, 0.0)) for p, q in ((density_1, density_2),
                                                                                  (density_2, density_1)))


def audit_objective_perturbation(relation, *, n=4, epsilon=1.0, delta=1e-2):
    r"""Audit :func:`dpedu.textbook.learners.objective_perturbation` at (``epsilon``, ``delta``) under ``relation``, exactly.

    The claim is the ledger's first event, :math:`(\varepsilon_1, \delta_1)` for the exact minimiser (the second,
    the output noise for the solver's stopping point, is post-processing of it here). The objective does not use n,
    so add/remove is audited literally (the record removed).
    """
    relation, delta = check_relation(relation), check_delta(delta)
    probe = objective_perturbation(*_data([0.0] * n), epsilon=epsilon, delta=delta, row_bound=1.0,
                                   relation=relation, rng=0)
    event = probe.ledger[0][0]
    regularization = objective_perturbation_regularization(event.epsilon, 1.0)
    zeta = objective_perturbation_noise_std(event.epsilon, event.delta, 1.0)
    half = (13.0 * zeta + n) / regularization
    grid = np.linspace(-half, half, GRID_POINTS)
    densities = {}

    def density(values):                               # each data set once
        if tuple(values) not in densities:
            densities[tuple(values)] = objective_density(grid, values, regularization, zeta)
        return densities[tuple(values)]

    candidates = [(text, grid_delta(event.epsilon, grid, density(first), density(second)))
                  for text, first, second in _pairs(relation, n)]
    text, measured = max(candidates, key=lambda item: item[1])
    return NeighbourRow("objective perturbation", relation, text, event.delta, event.epsilon,
                        "its (epsilon_1, delta_1) event", measured, measured, measured, "exact")


def recovered_linear_terms(values, *, epsilon, delta, runs, rng, relation=ADD_REMOVE):
    r"""The b of ``runs`` runs of :func:`dpedu.textbook.learners.objective_perturbation` on the records u = ``values``,
    recovered from the minimisers it returns, :math:`b = -(\sum_i\ell_i'(\hat\theta) + \Delta\hat\theta)`, and the
    :math:`\zeta` of the ledger's event: if the code minimises the objective the density assumes, the b are
    :math:`\mathcal N(0, \zeta^2)` draws (to the solver's tolerance)."""
    rng = check_rng(rng)
    X, y = _data(values)
    out, zeta = [], None
    for seed in rng.spawn(check_positive_int(runs, "runs")):
        result = objective_perturbation(X, y, epsilon=epsilon, delta=delta, row_bound=1.0, relation=relation, rng=seed)
        event = result.ledger[0][0]
        regularization = objective_perturbation_regularization(event.epsilon, 1.0)
        zeta = objective_perturbation_noise_std(event.epsilon, event.delta, 1.0)
        theta = result.minimiser[0]
        u = np.asarray(values, dtype=float)
        out.append(float(np.sum(u * expit(-u * theta)) - regularization * theta))
    return np.array(out), zeta


def convex_rows(*, delta=1e-2):
    """The rows of output perturbation (zero-out, replace-one: the relations it claims) and objective perturbation
    (add/remove, zero-out, replace-one). The literal add/remove pair of output perturbation, which it refuses to
    claim, is ``audit_output_perturbation("add_remove")``."""
    rows = [audit_output_perturbation(relation, delta=delta) for relation in (ZERO_OUT, REPLACE_ONE)]
    return rows + [audit_objective_perturbation(relation, delta=delta) for relation in (ADD_REMOVE, ZERO_OUT,
                                                                                      REPLACE_ONE)]
