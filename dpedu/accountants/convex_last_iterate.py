r"""A proven bound on what the last iterate of projected noisy GD / DP-SGD reveals, for convex smooth losses.

Only :math:`\theta_T` is released. When every step is a contraction (a convex, smooth loss and a small enough step)
and every iterate is projected onto a set of diameter D, the influence of the differing record at a step fades as
later steps move the two runs together, and the privacy of :math:`\theta_T` stops growing with T
(Feldman, Mironov, Talwar & Thakurta 2018; Altschuler & Talwar 2022; Bok, Su & Altschuler 2024). The proofs,
constants and conditions are in docs/math.md §28.5-28.6; in units of the noise on one step
(:math:`\eta\sigma`, :math:`\sigma = zC/\text{divisor}`), with :math:`s = 1/z` (add/remove; :math:`2/z`
replace-one), :math:`d = D\cdot\text{divisor}/(\eta z C)` and the contraction factor c of one step:

* **full batch** (Bok, Su & Altschuler 2024, constrained NoisyGD; tight for quadratics): :math:`\theta_T` is
  :math:`\mu`-GDP with :math:`\mu^2 = \min_{1 \le m \le T} A_m^2/W_m`, :math:`W_m = \sum_{j<m} c^{2j}`,
  :math:`A_m = c^m d + s\sum_{j<m}c^j` for m < T and :math:`A_T = s\sum_{j<T}c^j` (the runs start together);
* **Poisson sampling** (constants derived in docs/math.md §28.6): for every m < T and split :math:`\rho \in (0, 1)` of the noise, :math:`\theta_T` is dominated by
  m Poisson-subsampled Gaussian steps with multiplier :math:`z\sqrt{1-\rho}` composed with one Gaussian of
  :math:`\mu_D = c^m d/\sqrt{\rho W_m}`, plus the probability that some batch is too large for a step to contract
  (added to :math:`\delta`); for m = T the plain composition. The PLD accountant evaluates the ledgers; the
  smallest epsilon over the (m, rho) tried is reported (each one is a valid bound).

:func:`convex_last_iterate_bound` checks every condition before it reports a number and returns a
:class:`ConvexLastIterateClaim` with the numbers a reader needs to verify it; :func:`last_iterate_claim` reads them
from a :class:`~dpedu.textbook.learners.projected.ProjectedRun` and checks the run (logistic loss, rows clipped to C, Poisson
or full batch, constant learning rate). Anything else is refused by name.

>>> claim = convex_last_iterate_bound(steps=1000, noise_multiplier=10.0, sampling_rate=1.0, clip_norm=1.0,
...                                   learning_rate=4.0, radius=0.05, dataset_size=1000, delta=1e-5)
>>> round(claim.mu, 3), claim.window, round(claim.epsilon, 2), round(claim.composition_epsilon, 2)
(1.0, 25, 4.38, 17.86)
"""

from __future__ import annotations

import math
import textwrap
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from ..ground.search import monotone_search
from ..ground.validation import MAX_STEPS, check_delta, check_noise_multiplier, check_positive, check_positive_int
from ..ground.validation import check_nonnegative, check_sampling_rate
from ..ground.events import REPLACE_ONE, GaussianEvent, SubsampledGaussianEvent, check_relation
from ..ground.gaussian import gaussian_epsilon_exact
from ..textbook.learners.projected import ProjectedRun
from ..textbook.models import LogisticModel
from .analysis.orders import DEFAULT_ORDERS
from .analysis.rdp_curves import rdp_sampled_gaussian
from .analysis.conversions import epsilon_from_rdp
from .registry import Accounting, account

__all__ = ["ConvexLastIterateClaim", "convex_last_iterate_bound", "convex_last_iterate_rdp", "last_iterate_claim",
           "last_iterate_accountings",
           "BAD_BATCH_FRACTION", "THEOREM_FULL_BATCH", "THEOREM_POISSON", "HEURISTIC_LABEL", "PROVEN_LABEL"]

#: Poisson batches: the probability that any batch exceeds the size the step contracts for is kept below this
#: fraction of delta (it is added to delta).
BAD_BATCH_FRACTION = 1e-3
THEOREM_FULL_BATCH = ("Bok, Su & Altschuler (ICML 2024), shifted interpolation for constrained (strongly) convex "
                      "NoisyGD, with the window m optimised (docs/math.md §28.5)")
THEOREM_POISSON = ("privacy amplification by iteration with Poisson sampling (the noise split of Altschuler & "
                   "Talwar, NeurIPS 2022, §3, and of Bok, Su & Altschuler 2024's NoisySGD), constants as derived in "
                   "docs/math.md §28.6")
_SPLITS = (0.003, 0.01, 0.02, 0.04, 0.07, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True)
class ConvexLastIterateClaim:
    """A proven epsilon for the last iterate, with everything needed to check it (docs/math.md §28.5-28.6).

    ``epsilon`` holds at ``delta`` under ``relation``. The theorem (``theorem``) needs each line of ``conditions``;
    the numbers it used are the other fields: the per-record Lipschitz constant ``lipschitz`` (= C), the largest
    batch the steps were checked for (``max_batch_size``) and the smoothness there (``smoothness``), the
    contraction factor ``contraction``, the ``diameter`` 2R, the window ``window`` (the last m steps; T means plain
    composition), the noise split ``split`` (Poisson; None for a full batch), ``mu`` (full batch: the GDP
    parameter), ``bad_batch_probability`` (Poisson: added to delta) and ``composition_epsilon`` (the same run
    accounted by composition, PLD, for comparison).
    """

    epsilon: float
    delta: float
    relation: str
    theorem: str
    steps: int
    noise_multiplier: float
    sampling_rate: float
    clip_norm: float
    learning_rate: float
    l2: float
    radius: float
    dataset_size: int
    divisor: float
    lipschitz: float
    max_batch_size: int
    smoothness: float
    contraction: float
    diameter: float
    window: int
    split: float | None
    mu: float | None
    bad_batch_probability: float
    composition_epsilon: float
    conditions: tuple

    def __str__(self):
        lines = [f"last iterate, proven: epsilon = {self.epsilon:.4f} at delta = {self.delta:g} ({self.relation})",
                 f"  composition of the {self.steps} steps: epsilon = {self.composition_epsilon:.4f}",
                 *textwrap.wrap(f"theorem: {self.theorem}", 96, initial_indent="  ", subsequent_indent="    "),
                 "  conditions (each checked):"]
        for line in self.conditions:
            lines += textwrap.wrap(line, 96, initial_indent="    - ", subsequent_indent="      ")
        window = "all T steps (composition)" if self.window == self.steps else f"the last {self.window} steps"
        lines.append(f"  window: {window}" + (f"; noise split rho = {self.split:g}" if self.split is not None else "")
                     + (f"; mu = {self.mu:.4f}" if self.mu is not None else ""))
        return "\n".join(lines)


def _geometric_sums(c, m):
    """(sum_{j<m} c^j, sum_{j<m} c^(2j)) for arrays of m >= 1, stable as c -> 1."""
    m = np.asarray(m, dtype=float)
    if c >= 1.0:
        return m, m
    log_c = math.log(c)
    return -np.expm1(m * log_c) / -math.expm1(log_c), -np.expm1(2 * m * log_c) / -math.expm1(2 * log_c)


def _full_batch_mu(steps, c, s, d):
    """(mu, m): the smallest GDP parameter over the windows m = 1..T (docs/math.md §28.5)."""
    m = np.arange(1, steps + 1, dtype=float)
    linear, squares = _geometric_sums(c, m)
    start = np.where(m < steps, np.exp(m * math.log(c)) * d, 0.0)   # c > 0; the runs start together when m = T
    mu2 = (start + s * linear) ** 2 / squares
    best = int(np.argmin(mu2))
    return math.sqrt(float(mu2[best])), best + 1


def _poisson_candidates(steps, z, q, s_factor, c, d, delta):
    """(m, rho) pairs worth a PLD computation: the best few by the RDP of the same ledgers (a proxy: any pair is a
    valid bound, docs/math.md §28.6)."""
    windows = np.unique(np.round(np.geomspace(1, max(steps - 1, 1), 60)).astype(int))
    windows = windows[windows < steps]
    orders = DEFAULT_ORDERS
    scored = []
    for rho in _SPLITS:
        per_step = rdp_sampled_gaussian(q, z * math.sqrt(1.0 - rho) / s_factor, orders)
        _, squares = _geometric_sums(c, windows)
        mu_d2 = (np.exp(windows * math.log(c)) * d) ** 2 / (rho * squares)
        for m, mu2 in zip(windows, mu_d2):
            value = epsilon_from_rdp(orders, m * per_step + orders * mu2 / 2.0, delta)[0]
            scored.append((value, int(m), rho))
    scored.sort()
    return [(m, rho) for _, m, rho in scored[:3]]


def _poisson_epsilon(steps, z, q, relation, c, d, delta, composition):
    """(epsilon, m, rho): the smallest PLD epsilon over the candidates and plain composition (m = T)."""
    s_factor = 2.0 if relation == REPLACE_ONE else 1.0
    best = (composition, steps, None)
    for m, rho in _poisson_candidates(steps, z, q, s_factor, c, d, delta):
        _, squares = _geometric_sums(c, m)
        mu_d = (c ** m) * d / math.sqrt(rho * float(squares))
        ledger = [(SubsampledGaussianEvent(z * math.sqrt(1.0 - rho), q, relation=relation), m)]
        if mu_d > 0:             # a replace-one Gaussian counts double (add_remove_equivalent): give it 2 / mu_d
            ledger.append((GaussianEvent(s_factor / mu_d, relation=relation), 1))
        epsilon = account(ledger, "pld", delta=delta, strict=True).epsilon
        if epsilon < best[0]:
            best = (epsilon, m, rho)
    return best


def _largest_batch(steps, others, q, delta):
    """(b, p): the smallest batch size b whose excess over the run, T P[Bin(others, q) >= b], is at most
    BAD_BATCH_FRACTION delta, and that probability (batches hold at most b records: b - 1 others and the record)."""
    target = BAD_BATCH_FRACTION * delta                # P[Bin >= others + 1] = 0: others + 1 always fits
    high = monotone_search(lambda b: steps * float(binom.sf(b - 1, others, q)) <= target, max(1, round(q * others)),
                           feasible_when="large", lowest=1, highest=others + 1, rtol=None,
                           at_limit=lambda b, feasible: b)
    return high + 1, min(1.0, steps * float(binom.sf(high - 1, others, q)))


def _setup(steps, noise_multiplier, sampling_rate, clip_norm, learning_rate, radius, dataset_size, delta, l2, divisor,
           relation):
    """Every argument checked, and the theorem's numbers: the largest batch b, the probability of a larger one, the
    smoothness there, the contraction factor c, the diameter D and d, D in units of one step's noise. Refuses a
    step size for which the gradient step does not contract (docs/math.md §28.5)."""
    steps = check_positive_int(steps, "steps")
    if steps > MAX_STEPS:
        raise ValueError(f"steps must be at most MAX_STEPS = {MAX_STEPS:,}; got {steps}")
    z = check_noise_multiplier(noise_multiplier)
    if z == 0:
        raise ValueError("noise_multiplier must be > 0: a noise-free run has no privacy to bound")
    q = check_sampling_rate(sampling_rate)
    C = check_positive(clip_norm, "clip_norm")
    eta = check_positive(learning_rate, "learning_rate")
    R = check_positive(radius, "radius")
    n = check_positive_int(dataset_size, "dataset_size")
    delta = check_delta(delta)
    lam = check_nonnegative(l2, "l2")
    if math.isinf(lam):
        raise ValueError("l2 must be finite")
    relation = check_relation(relation)
    divisor = q * n if divisor is None else check_positive(divisor, "divisor")
    per_record = C * C / (4.0 * divisor)            # the smoothness one record adds to the batch objective
    s_factor = 2.0 if relation == REPLACE_ONE else 1.0
    if q == 1.0:
        batch, bad = (n if relation == REPLACE_ONE else n + 1), 0.0
    else:
        batch, bad = _largest_batch(steps, n - 1 if relation == REPLACE_ONE else n, q, delta)
    smoothness = lam + batch * per_record
    if eta * smoothness > 2.0:
        what = "every step uses" if q == 1.0 else f"Poisson sampling draws with probability above {BAD_BATCH_FRACTION:g} delta"
        raise ValueError(f"learning_rate={eta!r} is too large for the theorem: a gradient step contracts only when "
                         f"learning_rate * (l2 + b C^2 / (4 divisor)) <= 2, and batches of b = {batch} records, which "
                         f"{what}, need learning_rate <= {2.0 / smoothness:.6g} (docs/math.md §28.5)")
    c = max(abs(1.0 - eta * lam), abs(1.0 - eta * smoothness))
    D = 2.0 * R
    d = D * divisor / (eta * z * C)                # the diameter in units of one step's noise, eta z C / divisor
    return steps, z, q, C, eta, R, n, delta, lam, relation, divisor, s_factor, batch, bad, smoothness, c, D, d


def convex_last_iterate_bound(*, steps, noise_multiplier, sampling_rate, clip_norm, learning_rate, radius,
                              dataset_size, delta, l2=0.0, divisor=None, relation="add_remove"):
    r"""The proven epsilon of :math:`\theta_T` for projected noisy GD (``sampling_rate`` = 1) or DP-SGD with Poisson
    sampling on an L2-regularised logistic loss whose rows have norm at most C (docs/math.md §28.5-28.6).

    Parameters
    ----------
    steps, noise_multiplier, sampling_rate, clip_norm, learning_rate
        T (at most ``MAX_STEPS``), z > 0, q in (0, 1], C (every row of X has norm at most C: the loss is convex,
        C-Lipschitz and (C²/4)-smooth per record), and the constant step size :math:`\eta`.
    radius : float
        R: every iterate is projected onto the ball of radius R (diameter D = 2R).
    dataset_size : int
        n, the records the run trains on (a neighbour may hold n + 1 under add/remove).
    delta : float
        In (0, 1).
    l2 : float
        :math:`\lambda \ge 0` of the regulariser :math:`\frac\lambda2\lVert\theta\rVert^2` (> 0: strongly convex).
    divisor : float, optional
        What the noisy sum is divided by (default q n, the plan's rule; n for a full batch).
    relation : {"add_remove", "replace_one"}

    Returns
    -------
    ConvexLastIterateClaim

    Raises
    ------
    ValueError
        Naming the condition that fails: a step size :math:`\eta(\lambda + bC^2/(4\,\text{divisor})) > 2` for a
        batch of b records the run can draw (the step would not contract), or a bad argument.
    """
    setup = _setup(steps, noise_multiplier, sampling_rate, clip_norm, learning_rate, radius, dataset_size, delta, l2,
                   divisor, relation)
    steps, z, q, C, eta, R, n, delta, lam, relation, divisor, s_factor, batch, bad, smoothness, c, D, d = setup
    composition = account([(SubsampledGaussianEvent(z, q, relation=relation), steps)], "pld", delta=delta,
                          strict=True).epsilon
    if q == 1.0:
        mu, window = _full_batch_mu(steps, c, s_factor / z, d)
        epsilon, split, theorem = gaussian_epsilon_exact(delta, 1.0 / mu), None, THEOREM_FULL_BATCH
        epsilon = min(epsilon, composition)
        sampling_line = f"full batch: all {n} records in every step (a neighbour: {batch})"
    else:
        if bad >= delta:
            raise ValueError(f"delta={delta:g} is below the probability {bad:.3g} that some batch is too large")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # an order at the edge of the grid only makes the proxy larger
            epsilon, window, split = _poisson_epsilon(steps, z, q, relation, c, d, delta - bad, composition)
        mu, theorem = None, THEOREM_POISSON
        sampling_line = (f"Poisson sampling, rate q = {q:g}: a batch of more than {batch} records has probability "
                         f"at most {bad:.3g} over the {steps} steps, added to delta")
    conditions = (
        f"loss: logistic on rows of norm <= C = {C:g}: convex, {C:g}-Lipschitz, {C * C / 4:g}-smooth per record",
        f"objective: the mean over the fixed divisor {divisor:g} plus (l2/2)|theta|^2, l2 = {lam:g} "
        f"({'strongly convex' if lam > 0 else 'convex'})",
        f"step size: learning_rate * (l2 + b C^2/(4 divisor)) = {eta * smoothness:.4g} <= 2 for batches of b <= "
        f"{batch} records: each gradient step is {c:.6g}-Lipschitz",
        f"domain: every iterate projected onto the ball of radius R = {R:g} (diameter {D:g})",
        sampling_line,
        f"constant learning rate; noise N(0, z^2 C^2 I) on the clipped sum, z = {z:g}; relation {relation}",
    )
    return ConvexLastIterateClaim(
        epsilon=float(epsilon), delta=delta, relation=relation, theorem=theorem, steps=steps, noise_multiplier=z,
        sampling_rate=q, clip_norm=C, learning_rate=eta, l2=lam, radius=R, dataset_size=n, divisor=float(divisor),
        lipschitz=C, max_batch_size=int(batch), smoothness=float(smoothness), contraction=float(c), diameter=D,
        window=int(window), split=split, mu=mu, bad_batch_probability=float(bad),
        composition_epsilon=float(composition), conditions=conditions)


def last_iterate_claim(run, delta):
    """:func:`convex_last_iterate_bound` for a :class:`~dpedu.textbook.learners.projected.ProjectedRun`, after checking that
    the run is one the theorem covers: logistic regression (:class:`~dpedu.textbook.models.LogisticModel`), rows clipped to
    C once (``clip_mode="inputs"``: per-example gradient clipping breaks the gradient-step structure), Poisson
    sampling (q = 1 is the full batch), a constant learning rate, no adaptive clipping, a private run.
    Anything else raises ``ValueError`` naming what is not covered."""
    if not isinstance(run, ProjectedRun):
        raise TypeError(f"run must be a ProjectedRun (from dpedu.textbook.learners.run_projected); got {type(run).__name__}")
    plan = run.plan
    problems = []
    if not plan.private:
        problems.append("the run adds no noise (noise_multiplier=0)")
    if type(run.model) is not LogisticModel:
        problems.append(f"the model is {type(run.model).__name__}, not logistic regression (the theorem needs a "
                        "convex loss)")
    if plan.clip_mode != "inputs":
        problems.append("clip_mode is 'gradients': clipping each gradient breaks the gradient step the theorem needs; "
                        "use clip_mode='inputs' (rows clipped to C once)")
    if plan.sampling != "poisson":
        problems.append(f"sampling is {plan.sampling!r}: the theorem here covers Poisson sampling and the full batch")
    if plan.lr_schedule != "constant" or plan.adaptive:
        problems.append("the learning rate or the clip norm changes during the run: the theorem takes constants")
    if problems:
        raise ValueError("the proven last-iterate bound does not cover this run: " + "; ".join(problems))
    return convex_last_iterate_bound(
        steps=plan.steps, noise_multiplier=plan.noise_multiplier, sampling_rate=plan.sampling_rate,
        clip_norm=plan.clip_norm, learning_rate=plan.learning_rate, radius=run.step.radius, l2=run.step.l2,
        dataset_size=plan.n, divisor=plan.divisor, delta=delta, relation=plan.relation)


HEURISTIC_LABEL = "last iterate, heuristic"
PROVEN_LABEL = "last iterate, proven"


def _plan_of(history):
    from ..textbook.training import DPSGDPlan

    plan = history.plan if isinstance(history, ProjectedRun) else getattr(getattr(history, "details", None), "plan",
                                                                           None)
    return plan if isinstance(plan, DPSGDPlan) else None


def _not_applicable(name, delta, reason):
    return Accounting(accountant=name, epsilon=math.nan, delta=delta, notes=(reason,))


def last_iterate_accountings(history, delta):
    """``{label: Accounting}``: what the released model alone reveals, for a DP-SGD run (what
    :func:`dpedu.accountants.compare` adds beside the composition accountants; docs/math.md §28).

    * :data:`HEURISTIC_LABEL`: the PLD of :class:`~dpedu.ground.events_last_iterate.LinearLastIterateEvent` (z, q, T) of the
      run's plan, exact for linear losses and a heuristic otherwise (its note says so);
    * :data:`PROVEN_LABEL`: :func:`last_iterate_claim` for a :class:`~dpedu.textbook.learners.projected.ProjectedRun`.

    Each is ``nan`` with the reason when the run does not qualify (another sampling scheme, a learning-rate
    schedule, no projection, ...). ``history`` without a DP-SGD plan gives ``{}``.
    """
    from ..ground.events_last_iterate import LinearLastIterateEvent

    delta = check_delta(delta)
    plan = _plan_of(history)
    if plan is None:
        return {}
    if not plan.private:
        reason = "the run adds no noise (noise_multiplier=0): its epsilon is infinite"
        return {HEURISTIC_LABEL: _not_applicable("pld", delta, reason),
                PROVEN_LABEL: _not_applicable("convex_last_iterate", delta, reason)}
    if plan.sampling != "poisson" or plan.lr_schedule != "constant" or plan.adaptive:
        heuristic = _not_applicable("pld", delta, "the linear-loss pair assumes Poisson sampling (or the full batch), a "
                                    "constant learning rate and a fixed clip norm")
    else:
        event = LinearLastIterateEvent(plan.noise_multiplier, plan.sampling_rate, plan.steps, relation=plan.relation)
        heuristic = account([(event, 1)], "pld", delta=delta)
    if isinstance(history, ProjectedRun):
        try:
            claim = last_iterate_claim(history, delta)
        except ValueError as exc:
            proven = _not_applicable("convex_last_iterate", delta, str(exc))
        else:
            proven = Accounting(accountant="convex_last_iterate", epsilon=claim.epsilon, delta=delta,
                                notes=(claim.theorem,))
    else:
        proven = _not_applicable("convex_last_iterate", delta, "the proven bound needs a projected run "
                                 "(dpedu.textbook.learners.run_projected: logistic loss, rows clipped to C, every iterate in a "
                                 "ball)")
    return {HEURISTIC_LABEL: heuristic, PROVEN_LABEL: proven}


def convex_last_iterate_rdp(orders, *, steps, noise_multiplier, sampling_rate, clip_norm, learning_rate, radius,
                            dataset_size, delta, l2=0.0, divisor=None):
    r"""The same bound as a Rényi-DP curve, under add/remove: ``(rdp, bad)`` at ``orders`` (docs/math.md §28.6).

    Full batch: :math:`\alpha\mu^2/2` (a :math:`\mu`-GDP mechanism is :math:`(\alpha, \alpha\mu^2/2)`-RDP). Poisson:
    at each order the smallest of :math:`m\,\varepsilon_{\rm SG}(\alpha; q, z\sqrt{1-\rho}) + \alpha\mu_D^2/2` over the
    windows m and splits :math:`\rho` tried, and T times the sampled Gaussian's curve (composition); the RDP form of
    the argument holds order by order. ``bad`` is the probability that some batch exceeds the size the steps were
    checked for (``delta`` sets it: at most ``BAD_BATCH_FRACTION * delta``); whoever converts the curve adds it to
    delta. For private selection (:func:`dpedu.accountants.analysis.selection.repeat_and_select_rdp`), which needs
    an RDP curve of one run.
    """
    from .analysis.orders import check_orders

    alphas = np.asarray(check_orders(orders), dtype=float).reshape(-1)
    setup = _setup(steps, noise_multiplier, sampling_rate, clip_norm, learning_rate, radius, dataset_size, delta, l2,
                   divisor, "add_remove")
    steps, z, q, _, _, _, _, _, _, _, _, _, _, bad, _, c, _, d = setup
    if q == 1.0:
        mu, _ = _full_batch_mu(steps, c, 1.0 / z, d)
        return alphas * mu * mu / 2.0, 0.0
    best = steps * np.asarray(rdp_sampled_gaussian(q, z, alphas), dtype=float)
    windows = np.unique(np.round(np.geomspace(1, max(steps - 1, 1), 60)).astype(int))
    windows = windows[windows < steps]
    _, squares = _geometric_sums(c, windows)
    for rho in _SPLITS:
        per_step = np.asarray(rdp_sampled_gaussian(q, z * math.sqrt(1.0 - rho), alphas), dtype=float)
        mu_d2 = (np.exp(windows * math.log(c)) * d) ** 2 / (rho * squares)
        candidates = windows[:, None] * per_step[None, :] + alphas[None, :] * mu_d2[:, None] / 2.0
        best = np.minimum(best, candidates.min(axis=0))
    return best, bad
