r"""Pitfalls from real code: five mistakes users reported in 2025–2026, planted, and the check that catches each
(docs/math.md §27). **Teaching only: the planted code is wrong on purpose.**

===========================================  ======================================  ==============================
pitfall (:data:`PITFALLS`)                   the issue it comes from                 what catches it
===========================================  ======================================  ==============================
``"adaptive_clipping_gradient_multiplier"``  opacus issue #757                       :func:`check_noise`
``"sum_noise_added_to_mean"``                jax_privacy issue #383                  :func:`check_noise`
``"accumulation_at_microbatch_rate"``        jax_privacy PR #271 (#287)              :func:`~.claims.check_claims`
``"replace_one_sensitivity_C"``              google/differential-privacy #378, #464  :func:`check_noise`
``"classic_gaussian_above_one"``             scikit-learn issue #30114               :func:`check_gaussian_claim`
===========================================  ======================================  ==============================

Two consistency checks are new here.

* :func:`check_noise` **measures** the multiplier of one step's Gaussian release and compares it with the multiplier
  its accountant was fed. The auditor picks the worst-case neighbouring batches of per-example gradients for the
  stated relation (add/remove: a record of norm C added; replace-one: a record +C e_1 replaced by one clipped to
  -C e_1, which also flips its clipped/unclipped count), releases each ``draws`` times, and estimates
  :math:`\hat\mu^2 = \sum_k \big((\hat\Delta_k/\hat\sigma_k)^2 - 2/N\big)` over the released coordinates (each
  coordinate's shift over its noise std; :math:`2/N` removes the bias of the squared estimate). Independent Gaussian
  coordinates compose to one Gaussian with :math:`\mu^2 = \sum_k \mu_k^2` (docs/math.md §27.1), so the measured
  multiplier is :math:`\hat z = 1/\hat\mu`. The claim :math:`z_c` is refused when
  :math:`|\hat\mu^2 - z_c^{-2}|` exceeds ``threshold`` standard errors of :math:`\hat\mu^2` under the claim:
  *under-reports* (less noise than claimed: the ε is too small) or *over-noised* (more noise than claimed: the ε
  holds but the update is drowned).
* :func:`check_gaussian_claim` compares a claimed (ε, δ) of one Gaussian release with its exact curve
  (:func:`dpedu.ground.gaussian.gaussian_delta_exact`, Balle & Wang 2018, Thm 8).

>>> pitfall_hunt("replace_one_sensitivity_C", rng=0).caught
True
>>> pitfall_hunt("replace_one_sensitivity_C", correct=True, rng=0).caught
False
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from ...textbook.clipping import L2_clip
from ...ground.events import REPLACE_ONE, add_remove_equivalent, check_relation
from ...ground.gaussian import analytic_noise_multiplier, gaussian_delta_exact
from ...textbook.mechanisms import gaussian_mechanism
from ...textbook.training import plan_dp_sgd
from ...ground.search import monotone_search
from ...ground.validation import check_choice, check_delta, check_epsilon, check_in_interval, check_noise_multiplier
from ...ground.validation import check_positive, check_positive_int, check_rng
from .claims import ClaimCheck, claim_hunt

__all__ = ["Pitfall", "PITFALLS", "NoiseCheck", "check_noise", "noise_check_power", "draws_to_detect",
           "GaussianClaimCheck", "check_gaussian_claim", "classic_noise_anywhere", "PitfallResult", "pitfall_hunt",
           "BASE_RECORDS"]


@dataclass(frozen=True)
class Pitfall:
    """One planted mistake: what the code does, the issue it comes from, and the check that catches it."""

    description: str
    issue: str
    check: str


PITFALLS = {
    "adaptive_clipping_gradient_multiplier": Pitfall(
        "adaptive clipping releases the gradient sum with z_Delta = (z^-2 - (2 sigma_b)^-2)^(-1/2) and a noisy count; "
        "the accountant is fed z_Delta instead of the step's z (wrong: the count is released too, and the two "
        "together are one Gaussian with multiplier z < z_Delta)", "opacus issue #757", "check_noise"),
    "sum_noise_added_to_mean": Pitfall(
        "noise of std z C, calibrated for the clipped sum, is added to the mean sum / m (the mean's sensitivity is "
        "C / m, so the multiplier is z m: the claim z holds but is m times too pessimistic and the update drowns)",
        "jax_privacy issue #383", "check_noise"),
    "accumulation_at_microbatch_rate": Pitfall(
        "k Poisson micro-batches of rate q are summed into each update (gradient accumulation); the ledger counts "
        "the updates at the micro-batch rate q instead of k q (wrong: under-counts)", "jax_privacy PR #271 (#287)",
        "check_claims"),
    "replace_one_sensitivity_C": Pitfall(
        "under replace-one the clipped sum moves by 2C, but the accountant is fed z = std / C instead of z / 2 "
        "(wrong: the curve is that of a Gaussian with twice the signal)", "google/differential-privacy issue #378 "
        "(PR #464)", "check_noise"),
    "classic_gaussian_above_one": Pitfall(
        "z = sqrt(2 ln(1.25/delta)) / epsilon used at epsilon >= 1, where Dwork & Roth's Thm A.1 does not hold (at "
        "epsilon = 10, delta = 1e-5 the exact delta is above the claim)", "scikit-learn issue #30114",
        "check_gaussian_claim"),
}

#: Records in the auditor's base batch (all of gradient 0.5 C e_2); the divisor m of the mean pitfall.
BASE_RECORDS = 10


@dataclass(frozen=True)
class NoiseCheck:
    """What :func:`check_noise` measured: the claimed and measured multipliers, and the test statistic."""

    claimed_multiplier: float
    measured_multiplier: float
    statistic: float
    threshold: float
    relation: str
    draws: int
    description: str = ""

    @property
    def consistent(self):
        """True when the measured noise matches the claim (|statistic| <= threshold)."""
        return abs(self.statistic) <= self.threshold

    @property
    def under_reports(self):
        """True when the step added less noise than its ledger claims: the claimed epsilon is too small."""
        return self.statistic > self.threshold

    def __str__(self):
        head = self.description or "noise check"
        found = ("matches" if self.consistent else "UNDER-REPORTS (less noise than claimed)" if self.under_reports
                 else "OVER-NOISED (more noise than claimed)")
        return (f"{head}: claimed z = {self.claimed_multiplier:.4g}, measured z = {self.measured_multiplier:.4g} "
                f"({self.relation}, {self.draws} draws per world, statistic {self.statistic:+.3g}): {found}")


def _neighbours(relation, clip_norm):
    """The auditor's worst-case pair of per-example gradient sets (rows) under ``relation``."""
    base = np.tile([0.0, 0.5 * clip_norm], (BASE_RECORDS, 1))
    if relation == REPLACE_ONE:          # +C e_1 (unclipped) against -2C e_1 (clipped to -C e_1): shift 2C, count 1
        return np.vstack([base, [clip_norm, 0.0]]), np.vstack([base, [-2.0 * clip_norm, 0.0]])
    return base, np.vstack([base, [clip_norm, 0.0]])     # one record of norm C added: shift C, count 1/2


#: The claimed multipliers :func:`check_noise` accepts: below 1e-6 a step claims almost no noise (its ε is in the
#: millions), above 1e6 no feasible number of draws measures it; outside, the statistic's arithmetic overflows.
CLAIMED_MULTIPLIER_RANGE = (1e-6, 1e6)
#: The largest clip norm :func:`check_noise` accepts (the auditor's gradients are multiples of it up to 2C).
MAX_CLIP_NORM = 1e100


def _released(value, draw, shape):
    """One output of ``release`` as a flat float array; refused by name unless it is finite, real, non-empty and of
    the first draw's ``shape`` (None at the first draw)."""
    try:
        released = np.asarray(value)
    except (ValueError, TypeError):                   # ragged nested lists and the like
        released = None
    if released is None or released.dtype.kind not in "iuf":
        raise TypeError(f"release must return a real numeric array (the step's released vector); draw {draw} returned "
                        f"{type(value).__name__}" + ("" if released is None else f" of dtype {released.dtype}"))
    released = released.astype(float, copy=False)
    if released.size == 0:
        raise ValueError(f"release returned an empty array at draw {draw}: there is nothing to measure")
    if shape is not None and released.shape != shape:
        raise ValueError(f"release must return arrays of one shape; the first draw had shape {shape}, draw {draw} "
                         f"{released.shape}")
    if not np.all(np.isfinite(released)):
        raise ValueError(f"release returned NaN or inf at draw {draw}: a Gaussian release is finite (check the "
                         f"release, its clipping and its noise scale)")
    return released


def _draw_world(release, gradients, generator, draws):
    """``draws`` checked outputs of ``release`` on one neighbouring batch, as a (draws, k) array."""
    first = _released(release(gradients, generator), 0, None)
    rows = [first.ravel()]
    for draw in range(1, draws):
        rows.append(_released(release(gradients, generator), draw, first.shape).ravel())
    return np.array(rows)


#: The draws per neighbouring batch :func:`check_noise` accepts: the statistic's normal approximation needs 100; a
#: million releases per world is hours of the slowest releases here.
DRAWS_RANGE = (100, 10**6)


def _check_draws(draws):
    draws = check_positive_int(draws, "draws", maximum=DRAWS_RANGE[1])
    if draws < DRAWS_RANGE[0]:
        raise ValueError(f"draws must be at least {DRAWS_RANGE[0]} (the test uses normal approximations); got {draws}")
    return draws


def check_noise(release, *, claimed_multiplier, relation="add_remove", clip_norm=1.0, draws=2000, threshold=5.0,
                rng=None, description=""):
    r"""Measure the noise multiplier of ``release`` and compare it with ``claimed_multiplier`` (module docstring).

    ``release(gradients, rng)`` returns the step's released vector (1-D) for per-example gradients (rows, 2
    columns), clipped at ``clip_norm``; every output must be finite, real, non-empty and of one shape (refused by
    name otherwise). ``claimed_multiplier`` (in :data:`CLAIMED_MULTIPLIER_RANGE`) is the multiplier its accountant is
    fed (noise std over the worst-case change under ``relation``). ``draws`` (in :data:`DRAWS_RANGE`) releases are
    made per neighbouring batch. Returns a :class:`NoiseCheck`; under a correct claim the statistic is about standard
    normal, so ``threshold=5`` flags correct code with probability about 1e-6.

    **Power** (docs/math.md §27.1; :func:`noise_check_power`, :func:`draws_to_detect`). At a true multiplier z = 1
    and the default threshold, the default 2,000 draws flag a claim 10 % too high (z_c = 1.1: the step under-reports)
    with probability 0.03 and one 25 % too high with 0.93; flagging them with probability 0.9 takes about 10,000 and
    1,900 draws (claims 10 % and 25 % too low: about 9,600 and 1,700); from z = 1 on they about quadruple each time z
    doubles (37,000 and 7,100 at z = 2). These are from the statistic's normal approximation;
    ``benchmarks/bench_noise_check_power.py`` measures the detection rate by running this check (200 trials per row).
    """
    if not callable(release):
        raise TypeError(f"release must be a callable (gradients, rng) -> array; got {type(release).__name__}")
    claimed = check_in_interval(claimed_multiplier, "claimed_multiplier", *CLAIMED_MULTIPLIER_RANGE)
    relation = check_relation(relation)
    clip_norm = check_in_interval(clip_norm, "clip_norm", 0.0, MAX_CLIP_NORM, low_open=True)
    draws = _check_draws(draws)
    threshold = check_positive(threshold, "threshold")
    generator = check_rng(rng)
    pair = _neighbours(relation, clip_norm)
    worlds = [_draw_world(release, g, generator, draws) for g in pair]
    if worlds[0].shape != worlds[1].shape:
        raise ValueError(f"release must return arrays of one shape; it returned {worlds[0].shape[1]} coordinates "
                         f"without the record and {worlds[1].shape[1]} with it")
    shift = worlds[1].mean(axis=0) - worlds[0].mean(axis=0)
    spread = np.sqrt(0.5 * (worlds[0].var(axis=0, ddof=1) + worlds[1].var(axis=0, ddof=1)))
    noiseless = spread == 0
    if np.any(noiseless & (shift != 0)):
        mu2 = math.inf                                              # a coordinate moved and carried no noise
    else:
        ratios = shift[~noiseless] / spread[~noiseless]
        mu2 = float(np.sum(ratios**2 - 2.0 / draws))
    claim = claimed**-2.0
    k = int(np.sum(~noiseless))
    standard_error = math.sqrt((8.0 * claim + claim**2) / draws + 8.0 * k / draws**2)
    statistic = (mu2 - claim) / standard_error if math.isfinite(mu2) else math.inf
    measured = 1.0 / math.sqrt(mu2) if mu2 > 0 else math.inf
    return NoiseCheck(claimed, measured, statistic, threshold, relation, draws, description)


def _statistic_law(true_multiplier, claimed_multiplier, draws, coordinates):
    """Mean and standard deviation of :func:`check_noise`'s statistic when the step's multiplier is
    ``true_multiplier`` (docs/math.md §27.1)."""
    true_mu2, claim = true_multiplier**-2.0, claimed_multiplier**-2.0
    extra = 8.0 * coordinates / draws**2
    standard_error = math.sqrt((8.0 * claim + claim**2) / draws + extra)
    spread = math.sqrt((8.0 * true_mu2 + true_mu2**2) / draws + extra)
    return (true_mu2 - claim) / standard_error, spread / standard_error


def noise_check_power(true_multiplier, claimed_multiplier, *, draws=2000, threshold=5.0, coordinates=2):
    r"""The probability that :func:`check_noise` flags a claim: a step whose Gaussian release has multiplier
    ``true_multiplier`` (its whole shift in one coordinate, ``coordinates`` noisy coordinates in all), its accountant
    fed ``claimed_multiplier``, measured with ``draws`` releases per neighbouring batch.

    :math:`\hat\mu^2` is about normal with mean :math:`\mu^2 = z^{-2}` and variance
    :math:`(8\mu^2 + \mu^4)/N + 8K/N^2`, so the statistic is about :math:`\mathcal N(m, s^2)` with
    :math:`m = (\mu^2 - \mu_c^2)/\mathrm{se}_c` and :math:`s` the ratio of the two standard errors, and the power is
    :math:`\Phi((m - t)/s) + \Phi((-m - t)/s)` at threshold t (docs/math.md §27.1; normal approximation, checked by
    simulation in ``benchmarks/bench_noise_check_power.py``). The default 2,000 draws rarely catch a claim 10 %
    above the truth, and usually catch one 25 % above it:

    >>> round(noise_check_power(1.0, 1.1), 3), round(noise_check_power(1.0, 1.25), 3)
    (0.028, 0.926)
    """
    z = check_in_interval(true_multiplier, "true_multiplier", *CLAIMED_MULTIPLIER_RANGE)
    claimed = check_in_interval(claimed_multiplier, "claimed_multiplier", *CLAIMED_MULTIPLIER_RANGE)
    draws = _check_draws(draws)
    threshold = check_positive(threshold, "threshold")
    coordinates = check_positive_int(coordinates, "coordinates", maximum=10**6)
    mean, spread = _statistic_law(z, claimed, draws, coordinates)
    return float(ndtr((mean - threshold) / spread) + ndtr((-mean - threshold) / spread))


def draws_to_detect(true_multiplier, claimed_multiplier, *, power=0.9, threshold=5.0, coordinates=2):
    """The fewest draws per neighbouring batch with which :func:`check_noise` flags the claim with probability at
    least ``power`` (:func:`noise_check_power`); ``ValueError`` when a million draws are not enough.

    At z = 1 a claim 10 % too high (z_c = 1.1) needs about 10,000 draws, one 25 % too high about 1,900
    (docs/math.md §27.1):

    >>> draws_to_detect(1.0, 1.1), draws_to_detect(1.0, 1.25)
    (9995, 1881)
    """
    power = check_in_interval(power, "power", 0.0, 1.0, low_open=True, high_open=True)
    arguments = dict(threshold=threshold, coordinates=coordinates)
    if noise_check_power(true_multiplier, claimed_multiplier, draws=DRAWS_RANGE[1], **arguments) < power:
        raise ValueError(f"no number of draws up to {DRAWS_RANGE[1]:,} detects claimed_multiplier="
                         f"{claimed_multiplier:g} against true_multiplier={true_multiplier:g} with power {power:g}")
    return monotone_search(lambda draws: noise_check_power(true_multiplier, claimed_multiplier, draws=draws,
                                                           **arguments) >= power,
                           2000, feasible_when="large", lowest=DRAWS_RANGE[0], highest=DRAWS_RANGE[1], rtol=None,
                           at_limit=lambda draws, feasible: draws)   # the power grows with the draws


@dataclass(frozen=True)
class GaussianClaimCheck:
    """A claimed (ε, δ) of one Gaussian release with multiplier z against its exact δ(ε) (Balle & Wang, Thm 8).

    ``proven`` says whether the classic theorem (Dwork & Roth 2014, Thm A.1: ε < 1) applies at this ε.
    """

    noise_multiplier: float
    epsilon: float
    delta: float
    exact_delta: float
    proven: bool
    description: str = ""

    @property
    def consistent(self):
        """True when the exact δ(ε) is at most the claimed δ (a relative slack of 1e-9 for round-off)."""
        return self.exact_delta <= self.delta * (1.0 + 1e-9)

    def __str__(self):
        head = self.description or "Gaussian claim"
        verdict = "holds" if self.consistent else "REFUSED: the exact delta is above the claim"
        return (f"{head}: z = {self.noise_multiplier:.4g} claims ({self.epsilon:g}, {self.delta:.3g})-DP; the exact "
                f"delta at that epsilon is {self.exact_delta:.3g}: {verdict}")


def check_gaussian_claim(noise_multiplier, epsilon, delta, *, description=""):
    """Check the claim "the Gaussian mechanism with multiplier z is (ε, δ)-DP" against the exact curve."""
    z = check_noise_multiplier(noise_multiplier)
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    return GaussianClaimCheck(z, epsilon, delta, gaussian_delta_exact(epsilon, z), epsilon < 1, description)


def classic_noise_anywhere(epsilon, delta):
    r"""**WRONG on purpose**: :math:`\sqrt{2\ln(1.25/\delta)}/\varepsilon` at any ε, without the ε < 1 guard of
    :func:`dpedu.ground.gaussian.classic_noise_multiplier` (the mistake of scikit-learn issue #30114)."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


@dataclass(frozen=True)
class PitfallResult:
    """One hunt: the pitfall, whether the planted (or the correct) code was checked, the check's report, and the
    check's own result (a :class:`NoiseCheck`, :class:`~.claims.ClaimCheck` or :class:`GaussianClaimCheck`)."""

    pitfall: str
    correct: bool
    consistent: bool
    report: str
    check: NoiseCheck | ClaimCheck | GaussianClaimCheck

    @property
    def caught(self):
        """True when the check refused the run's claim."""
        return not self.consistent


def _dp_sum(gradients, clip_norm, noise_multiplier, rng):
    """The clipped sum of the rows plus N(0, z^2 C^2 I): DP-SGD's release."""
    return gaussian_mechanism(L2_clip(gradients, clip_norm).sum(axis=0), l2_sensitivity=clip_norm,
                              noise_multiplier=noise_multiplier, rng=rng)


def _adaptive_setting(correct):
    plan = plan_dp_sgd(BASE_RECORDS + 1, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=1.0, steps=1,
                       target_quantile=0.5, count_noise_std=0.6)

    def release(gradients, rng):                  # (noisy sum with z_Delta, log C_{t+1}: affine in the noisy count)
        clip = plan.clip_state()
        noisy = _dp_sum(gradients, clip.clip_norm, plan.gradient_noise_multiplier, rng)
        clip.update(np.linalg.norm(gradients, axis=1), rng)
        return np.append(noisy, math.log(clip.clip_norm))

    fed = plan.event.noise_multiplier if correct else plan.gradient_noise_multiplier   # WRONG: z_Delta, not z
    return release, fed, plan.relation


def _mean_setting(correct):
    z, m = 1.0, BASE_RECORDS

    def release(gradients, rng):
        if correct:
            return _dp_sum(gradients, 1.0, z, rng) / m                                  # noise the sum, then divide
        mean = L2_clip(gradients, 1.0).sum(axis=0) / m
        return gaussian_mechanism(mean, l2_sensitivity=1.0, noise_multiplier=z, rng=rng)  # WRONG: sum's noise on mean

    return release, z, "add_remove"


def _replace_one_setting(correct):
    plan = plan_dp_sgd(BASE_RECORDS + 1, noise_multiplier=2.0, clip_norm=1.0, sampling_rate=1.0, steps=1,
                       relation=REPLACE_ONE)

    def release(gradients, rng):
        return _dp_sum(gradients, plan.clip_norm, plan.noise_multiplier, rng)

    event = add_remove_equivalent(plan.event) if correct else plan.event   # WRONG: z = std / C, sensitivity 2C
    return release, event.noise_multiplier, plan.relation


_SETTINGS = {"adaptive_clipping_gradient_multiplier": _adaptive_setting, "sum_noise_added_to_mean": _mean_setting,
             "replace_one_sensitivity_C": _replace_one_setting}


def pitfall_hunt(pitfall, *, correct=False, draws=2000, rng=None):
    """Run the planted ``pitfall`` (or, ``correct=True``, the correct code) and its check: a :class:`PitfallResult`.

    The accumulation pitfall trains DP-SGD (:func:`~dpedu.lab.audit.claims.claim_hunt`); the classic-Gaussian
    one claims (10, 1e-5)-DP (deterministic: ``rng`` and ``draws`` are not used); the others measure one step's
    noise with ``draws`` releases per neighbouring batch.
    """
    pitfall = check_choice(pitfall, "pitfall", PITFALLS)
    if not isinstance(correct, bool):
        raise TypeError(f"correct must be True or False; got {correct!r}")
    draws, rng = _check_draws(draws), check_rng(rng)           # checked whether or not this pitfall uses them
    label = f"{'correct' if correct else 'PLANTED'} {pitfall}"
    if pitfall == "accumulation_at_microbatch_rate":
        check = claim_hunt(pitfall, correct=correct, rng=rng)
    elif pitfall == "classic_gaussian_above_one":
        epsilon, delta = 10.0, 1e-5
        z = analytic_noise_multiplier(epsilon, delta) if correct else classic_noise_anywhere(epsilon, delta)
        check = check_gaussian_claim(z, epsilon, delta, description=label)
    else:
        release, claimed, relation = _SETTINGS[pitfall](correct)
        check = check_noise(release, claimed_multiplier=claimed, relation=relation, draws=draws, rng=rng,
                            description=label)
    return PitfallResult(pitfall, correct, check.consistent, str(check), check)
