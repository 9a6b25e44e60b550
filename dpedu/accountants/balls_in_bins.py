r"""Balls-in-bins batches: a Monte Carlo *estimate* of the privacy curve, the check beside the proven PLD bound
(docs/math.md §22.8, §22.9).

For one record under add/remove, one epoch of b balls-in-bins steps with multiplier z is dominated by

.. math:: P = \frac1b\sum_{j=1}^b \mathcal N(e_j, z^2 I_b), \qquad Q = \mathcal N(0, z^2 I_b), \qquad
          L(y) = \ln\frac1b\sum_j e^{(2y_j - 1)/(2z^2)},

and E epochs compose E independent copies (Chua, Ghazi, Harrison, Leeman, Kamath, Kumar, Manurangsi, Sinha & Zhang,
AISTATS 2025). The PLD accountant (``make_accountant("pld")``) gives a proven upper bound on its ε (random
allocation, docs/math.md §22.9). This module **estimates** :math:`\delta(\varepsilon) = E_P[(1-e^{\varepsilon -
L})_+]` (remove) and :math:`E_Q[(1-e^{\varepsilon + L})_+]` (add) by Monte Carlo, as Chua et al. do, as a check:

* both directions by importance sampling, so the estimates are unbiased: for remove, the record's coordinate is
  drawn with mean :math:`1+\theta` instead of 1 (θ puts the loss near ε), each draw weighted by the exact density
  ratio of the two mixtures; for add, every coordinate of Q's draw is shifted down (the loss near -ε), weighted by
  its Gaussian density ratio;
* *estimate, then verify*: ε̂ is found on one set of draws, then δ(ε̂) is estimated on fresh draws, with its
  standard error and a one-sided upper confidence limit from the normal approximation. When that limit is above the
  target δ the verification does not confirm ε̂, and ε̂ is raised, on the verify draws, to the smallest ε whose upper
  limit is at most δ: the returned ε always passes its own verification (or the call refuses, with the numbers,
  when no ε up to twice the proven bound does).

These numbers are **estimates with a stated confidence, never a guarantee**: the result says so in its ``label``.
Beside them, :attr:`BallsInBinsEstimate.epsilon_upper_bound` is a theorem: the PLD accountant's bound, or, where
its grid would be too large, :func:`balls_in_bins_upper_bound` (P is a mixture of pairs :math:`(\mathcal N(e_j,
z^2I), Q)`, each with the curve of one Gaussian step, and the hockey-stick divergence is jointly convex, so E epochs
are at most as private as E Gaussian releases with multiplier z: no amplification counted).

>>> r = balls_in_bins_epsilon(1.0, 10, epochs=1, delta=1e-3, n_samples=20_000, rng=0)
>>> r.label
'Monte Carlo estimate (not a guarantee)'
>>> bool(r.epsilon_lower <= r.epsilon_upper_bound), bool(r.delta_upper <= 1e-3)
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp, ndtri

from ..ground.events_allocation import BallsInBinsGaussianEvent
from ..ground.gaussian import gaussian_epsilon_exact
from ..ground.validation import check_delta, check_epsilon, check_in_interval, check_positive_int, check_rng
from .pld import PLDAccountant

__all__ = ["BallsInBinsEstimate", "balls_in_bins_delta", "balls_in_bins_epsilon", "balls_in_bins_upper_bound",
           "balls_in_bins_ledger", "proven_epsilon", "MAX_DRAWS", "MAX_EPSILON_PER_EPOCH"]

#: at most this many normal draws (samples x epochs x batches) per call: refused above, by name
MAX_DRAWS = 2 * 10**9
#: the largest epsilon per epoch the estimates take (an argument above it, or a proven bound above it, is refused by
#: name): the proposal's shift solves e^{(1+2θ)/(2z²)} = 1 + b(e^{ε/E} - 1), which must stay a finite float
MAX_EPSILON_PER_EPOCH = 500.0
_CHUNK_DRAWS = 2 * 10**6
LABEL = "Monte Carlo estimate (not a guarantee)"


@dataclass(frozen=True)
class BallsInBinsEstimate:
    """A Monte Carlo estimate for ``epochs`` epochs of ``BallsInBinsGaussianEvent(noise_multiplier, batches_per_epoch)``.

    ``first_estimate`` is ε̂ found on the first ``n_samples`` draws; ``epsilon`` is the returned estimate: ε̂, or, when
    the verify pass (``n_samples`` fresh draws) does not confirm it, the smallest ε whose one-sided upper limit on
    those draws is at most ``delta`` (so ``delta_upper <= delta`` always). ``delta_estimate`` and
    ``delta_standard_error`` are δ(``epsilon``) on the verify draws (the worse direction); ``delta_upper`` its upper
    limit at ``confidence`` (normal approximation; the standard error from the root mean square of the terms, which
    makes the limit decrease in ε). ``epsilon_lower`` is the lower confidence end: below it, on a grid of 256 steps
    from 0, some direction's lower limit on the verify draws stays above ``delta`` (each direction at (1 +
    ``confidence``) / 2: the reported δ is the larger of two estimates). ``epsilon_upper_bound`` is proven: the PLD bound
    (docs/math.md §22.9), or the un-amplified :func:`balls_in_bins_upper_bound` where the PLD's grid is too large,
    whichever is smaller. ``label`` says what the rest is.
    """

    noise_multiplier: float
    batches_per_epoch: int
    epochs: int
    delta: float
    epsilon: float
    delta_estimate: float
    delta_standard_error: float
    delta_upper: float
    confidence: float
    n_samples: int
    epsilon_upper_bound: float
    first_estimate: float
    epsilon_lower: float
    label: str = LABEL


def balls_in_bins_upper_bound(noise_multiplier, epochs, delta):
    """A proven ε at ``delta`` for ``epochs`` balls-in-bins epochs with no amplification counted: E Gaussian releases
    with multiplier z (§22.8). The PLD accountant's bound (§22.9) is far smaller for b > 1."""
    event = BallsInBinsGaussianEvent(noise_multiplier, 1)
    epochs = check_positive_int(epochs, "epochs")
    return gaussian_epsilon_exact(check_delta(delta), event.noise_multiplier / math.sqrt(epochs))


def proven_epsilon(noise_multiplier, batches_per_epoch, epochs, delta):
    """The smaller of the PLD accountant's bound (docs/math.md §22.9) and :func:`balls_in_bins_upper_bound`; the
    latter alone where the PLD's grid would be too large."""
    event = BallsInBinsGaussianEvent(noise_multiplier, batches_per_epoch)
    loose = balls_in_bins_upper_bound(event.noise_multiplier, epochs, delta)
    try:
        return min(loose, PLDAccountant().compose(event, epochs).get_epsilon(delta))
    except ValueError as error:
        if "grid points" not in str(error):
            raise
        return loose


def _check(noise_multiplier, batches_per_epoch, epochs, n_samples, rng):
    event = BallsInBinsGaussianEvent(noise_multiplier, batches_per_epoch)
    epochs = check_positive_int(epochs, "epochs")
    n_samples = check_positive_int(n_samples, "n_samples")
    if n_samples * epochs * event.batches_per_epoch > MAX_DRAWS:
        raise ValueError(f"n_samples * epochs * batches_per_epoch must be at most {MAX_DRAWS:g} normal draws; got "
                         f"{n_samples} * {epochs} * {event.batches_per_epoch}")
    if rng is None:
        raise TypeError("rng must be a seed or a numpy Generator (the estimate must be reproducible); got None")
    return event.noise_multiplier, event.batches_per_epoch, epochs, n_samples, check_rng(rng)


def _shift(z, b, epochs, epsilon, generator=None):
    """``(θ, θ_add)``. θ for the remove direction: chosen on small pilot draws (when ``generator`` is given) among
    multiples of a first guess, the one with the smallest relative spread of the weighted terms at ε; the first guess
    puts the record's coordinate where one epoch's loss is ε/E when the other b - 1 terms sit at their mean 1:
    :math:`e^{(1+2\theta)/(2z^2)} = 1 + b(e^{\varepsilon/E} - 1)`. θ_add shifts every coordinate of Q down so that the
    add-direction loss is near -ε, capped so that the log-weights' variance b θ_add^2 / z^2 stays at most 4."""
    guess = max(0.0, z * z * math.log1p(b * math.expm1(epsilon / epochs)) - 0.5)
    theta_add = min(max(0.0, z * z * epsilon / epochs - 0.5), 2.0 * z / math.sqrt(b))
    if generator is None or guess == 0.0:
        return guess, theta_add
    pilot = max(200, _CHUNK_DRAWS // (epochs * b) // 4)
    best, best_spread = guess, math.inf
    for theta in guess * np.array([0.25, 0.5, 0.75, 1.0, 1.25, 1.5]):
        r, _ = _terms(_draws(z, b, epochs, pilot, (theta, 0.0), generator), epsilon)
        mean = float(r.mean())
        spread = float(r.std()) / mean if mean > 0 else math.inf
        if spread < best_spread:
            best, best_spread = float(theta), spread
    return best, theta_add


def _draws(z, b, epochs, n_samples, shifts, generator):
    """``(L_remove, log_weight, L_add, log_weight_add)`` per sample: the composed loss under each direction's shifted
    proposal with its log density ratio (P/proposal, Q/proposal)."""
    theta, theta_add = shifts
    per_chunk = max(1, _CHUNK_DRAWS // (epochs * b))
    remove, weights, add, add_weights = [], [], [], []
    scale = 2.0 * z * z
    for start in range(0, n_samples, per_chunk):
        m = min(per_chunk, n_samples - start)
        noise = z * generator.standard_normal((m, epochs, b))
        j = generator.integers(0, b, size=(m, epochs))
        y = noise.copy()
        np.put_along_axis(y, j[..., None], np.take_along_axis(y, j[..., None], axis=2) + 1.0 + theta, axis=2)
        log_p = logsumexp((2.0 * y - 1.0) / scale, axis=2) - math.log(b)          # L = ln P/Q per epoch
        log_r = logsumexp((2.0 * (1.0 + theta) * y - (1.0 + theta) ** 2) / scale, axis=2) - math.log(b)
        remove.append(log_p.sum(axis=1))
        weights.append((log_p - log_r).sum(axis=1))                                # ln P/proposal
        q_draw = z * generator.standard_normal((m, epochs, b)) - theta_add        # Q shifted down by theta_add
        add.append((logsumexp((2.0 * q_draw - 1.0) / scale, axis=2) - math.log(b)).sum(axis=1))
        add_weights.append(((2.0 * theta_add * q_draw + theta_add**2) / scale).sum(axis=(1, 2)))  # ln Q/proposal
    return tuple(np.concatenate(part) for part in (remove, weights, add, add_weights))


def _terms(draws, epsilon):
    """Per-sample contributions to δ(ε), remove (weighted) and add."""
    remove, log_weight, add, log_weight_add = draws
    with np.errstate(over="ignore"):
        r = np.exp(log_weight) * -np.expm1(np.minimum(epsilon - remove, 0.0))
        a = np.exp(log_weight_add) * -np.expm1(np.minimum(epsilon + add, 0.0))
    return r, a


def _delta(draws, epsilon):
    r, a = _terms(draws, epsilon)
    return max(float(r.mean()), float(a.mean()))


def balls_in_bins_delta(noise_multiplier, batches_per_epoch, *, epochs, epsilon, n_samples, rng, confidence=0.95):
    """``(estimate, standard error, upper limit at confidence)`` of δ(``epsilon``) by Monte Carlo (the worse direction):
    an estimate, not a guarantee. ``epsilon`` is at most :data:`MAX_EPSILON_PER_EPOCH` times ``epochs``."""
    z, b, epochs, n, generator = _check(noise_multiplier, batches_per_epoch, epochs, n_samples, rng)
    epsilon = check_epsilon(epsilon)
    if epsilon > MAX_EPSILON_PER_EPOCH * epochs:
        raise ValueError(f"epsilon must be at most MAX_EPSILON_PER_EPOCH * epochs = {MAX_EPSILON_PER_EPOCH * epochs:g} "
                         f"for a Monte Carlo estimate; got {epsilon:g}")
    confidence = check_in_interval(confidence, "confidence", 0.0, 1.0, low_open=True, high_open=True)
    draws = _draws(z, b, epochs, n, _shift(z, b, epochs, epsilon, generator), generator)
    return _summary(draws, epsilon, n, confidence)


def _moments(draws, epsilon, n):
    """Per direction, the estimate of δ(ε) and its standard error, estimated by the root mean square of the terms
    over √n (at least the usual estimate; it decreases in ε, as the estimate does: so do the upper limits); inf for
    one draw."""
    return [(float(t.mean()), math.sqrt(float(np.mean(t * t)) / n) if n > 1 else math.inf)
            for t in _terms(draws, epsilon)]


def _summary(draws, epsilon, n, confidence):
    k = float(ndtri(confidence))
    mean, error = max(_moments(draws, epsilon, n), key=lambda item: item[0] + k * item[1])
    return mean, error, min(1.0, mean + k * error)


def _solve(draws, delta, high):
    """Smallest ε in [0, high] with the estimated δ(ε) <= delta (bisection: the estimate decreases in ε)."""
    if _delta(draws, 0.0) <= delta:
        return 0.0
    low = 0.0
    while _delta(draws, high) > delta and high < 1e6:
        low, high = high, 2.0 * high
    for _ in range(60):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if _delta(draws, mid) > delta else (low, mid)
    return high


def _upper_limit(draws, epsilon, n, k):
    """One-sided upper limit on δ(ε) from ``draws``, the worse direction (normal approximation); decreasing in ε."""
    return max(mean + k * error for mean, error in _moments(draws, epsilon, n))


def _raised(draws, delta, low, high, n, k):
    """The smallest ε in [low, high] whose upper limit is at most ``delta`` (it holds at ``high``): bisection, exact
    since the limit decreases. Then ε < ε(δ) only if the limit at ε(δ) is at most δ(ε(δ)): a test at one point."""
    for _ in range(60):
        mid = 0.5 * (low + high)
        low, high = (low, mid) if _upper_limit(draws, mid, n, k) <= delta else (mid, high)
    return high


def _lower_end(draws, delta, high, n, k, points=256):
    """The largest grid point g_m of [0, high] with, for every j <= m, some direction's estimate at g_j minus k times
    its standard error at g_(j-1) above ``delta``. The estimate and the error decrease in ε, so on (g_(j-1), g_j]
    that bounds the lower limit from below: ε(δ) <= g_m only if the lower limit at ε(δ) is above δ(ε(δ))."""
    grid = np.linspace(0.0, high, points + 1)
    moments = [_moments(draws, e, n) for e in grid]
    for j in range(1, points + 1):
        if max(now[0] - k * before[1] for now, before in zip(moments[j], moments[j - 1])) <= delta:
            return float(grid[j - 1])
    return float(high)


def balls_in_bins_epsilon(noise_multiplier, batches_per_epoch, *, epochs, delta, n_samples, rng, confidence=0.95):
    """Estimate, then verify (Chua et al. 2025): ε̂ at ``delta`` on ``n_samples`` draws, δ(ε̂) again on as many fresh
    draws, ε̂ raised until the verify pass's upper limit is at most ``delta``; a :class:`BallsInBinsEstimate` (an
    estimate, not a guarantee) with the proven upper bound beside it. A setting whose proven bound exceeds
    :data:`MAX_EPSILON_PER_EPOCH` times ``epochs`` is refused (tiny noise: the bound is then the answer).

    Raises ``ValueError`` with the numbers when no ε up to twice the proven bound passes the verification (too few
    draws: with one draw the standard error is unknown). An estimate above the proven bound is returned as it is:
    the theorem is the guarantee, the estimate its check."""
    z, b, epochs, n, generator = _check(noise_multiplier, batches_per_epoch, epochs, n_samples, rng)
    delta = check_delta(delta)
    confidence = check_in_interval(confidence, "confidence", 0.0, 1.0, low_open=True, high_open=True)
    bound = proven_epsilon(z, b, epochs, delta)
    if bound > MAX_EPSILON_PER_EPOCH * epochs:
        raise ValueError(f"noise_multiplier={z:g} is too small for a Monte Carlo estimate at delta={delta:g}: the proven "
                         f"bound is epsilon = {bound:.4g}, above MAX_EPSILON_PER_EPOCH * epochs = "
                         f"{MAX_EPSILON_PER_EPOCH * epochs:g} (proven_epsilon gives it)")
    guess = _solve(_draws(z, b, epochs, max(1, n // 4), _shift(z, b, epochs, bound), generator), delta, bound)
    first = _solve(_draws(z, b, epochs, n, _shift(z, b, epochs, guess, generator), generator), delta,
                   max(bound, guess))
    verify = _draws(z, b, epochs, n, _shift(z, b, epochs, first, generator), generator)
    k = float(ndtri(confidence))
    epsilon = first
    if _upper_limit(verify, first, n, k) > delta:             # not confirmed: raise it on the verify draws
        high = max(2.0 * bound, first, 1.0)
        if _upper_limit(verify, high, n, k) > delta:
            estimate, error, upper = _summary(verify, first, n, confidence)
            raise ValueError(
                f"the Monte Carlo estimate does not verify: on {n} fresh draws delta({first:.4g}) = {estimate:.3g} "
                f"+- {error:.2g} (upper limit {upper:.3g} > delta={delta:g}), and the upper limit stays above delta up "
                f"to epsilon={high:.4g} (at least twice the proven bound {bound:.4g}); pass more n_samples")
        epsilon = _raised(verify, delta, first, high, n, k)
    # the lower end claims delta(e) > delta, true when either direction's is: each at (1 + confidence) / 2
    lower = _lower_end(verify, delta, epsilon, n, float(ndtri((1.0 + confidence) / 2.0)))
    estimate, error, upper = _summary(verify, epsilon, n, confidence)
    return BallsInBinsEstimate(z, b, epochs, delta, epsilon, estimate, error, upper, confidence, n, bound, first, lower)


def balls_in_bins_ledger(ledger, *, delta, n_samples, rng, confidence=0.95):
    """:func:`balls_in_bins_epsilon` for a run's ledger (e.g. ``plan_dp_sgd(..., sampling="balls_in_bins").ledger``):
    ``[(BallsInBinsGaussianEvent(z, b), epochs), ...]`` with one z and b, under add/remove.

    The PLD accountant gives the proven bound (§22.9); this gives the labelled estimate, its check, with that bound
    beside it. Other events, mixed settings and replace-one (not covered by §22.8's pair) are refused by name.
    """
    if not isinstance(ledger, (list, tuple)) or not ledger:
        raise TypeError(f"ledger must be a non-empty list of (BallsInBinsGaussianEvent, epochs); got {ledger!r}")
    events = set()
    for entry in ledger:
        if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], BallsInBinsGaussianEvent)):
            raise ValueError(f"ledger entries must be (BallsInBinsGaussianEvent, epochs); got {entry!r}")
        events.add(entry[0])
    if len(events) != 1:
        raise ValueError(f"ledger must hold one BallsInBinsGaussianEvent (one z and b); got "
                         f"{sorted(map(repr, events))}")
    event = events.pop()
    if event.relation != "add_remove":
        raise ValueError(f"the balls-in-bins pair (docs/math.md §22.8) is stated under add/remove; {event!r} is under "
                         f"relation={event.relation!r}, which is not covered")
    epochs = sum(check_positive_int(count, "epochs") for _, count in ledger)
    return balls_in_bins_epsilon(event.noise_multiplier, event.batches_per_epoch, epochs=epochs, delta=delta,
                                 n_samples=n_samples, rng=rng, confidence=confidence)
