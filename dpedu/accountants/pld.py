r"""Privacy-loss-distribution (PLD) accounting: a numerically tight upper bound on epsilon.

**What a PLD is.** Run a mechanism on neighbouring datasets D and D'; its outputs have densities P and
Q. The *privacy loss* of an output x is :math:`L(x) = \ln(P(x)/Q(x))`, how much more likely x is under
D. Draw x from P and L is a random variable; its distribution is the PLD. It holds the whole privacy
curve, :math:`\delta(\varepsilon) = E[(1 - e^{\varepsilon - L})_+]` (MATH.md §15.1), where outputs that
are impossible under D' have :math:`L = +\infty` and count fully. Composing mechanisms *adds* their
losses, so the PLD of a composition is the *convolution* of the PLDs: a product of FFTs on a grid.
Nothing is thrown away on the way, which is why PLD is the tightest accountant in dpedu. The one
approximation, the grid, is rounded *up*, so the answer stays a guaranteed upper bound.

**How it is computed here** (Meiser & Mohammadi 2018; Koskela, Jälkö & Honkela 2020). Each event's
loss is put on the grid :math:`\{i\Delta\}`: the mass of the bin :math:`((i-1)\Delta, i\Delta]` is a
difference of CDFs at the preimages of the monotone loss and sits at :math:`i\Delta` (pessimistic) or
:math:`(i-1)\Delta` (optimistic, a lower bound). Mass above the truncation point goes to a separate
infinity mass :math:`m_\infty`. A count T is composed by repeated squaring; every step is an exact
*linear* convolution (zero padded, so no circular wrap-around can move mass). After each convolution,
tails below a budgeted mass are cut (upper tail into :math:`m_\infty`, lower tail moved up to the
cut), and a grid longer than the plan allows doubles its spacing, rounding up again. Finally

.. math:: \delta(\varepsilon) = m_\infty + \sum_{\ell_i > \varepsilon} p_i\,(1 - e^{\varepsilon - \ell_i}).

Poisson-subsampled Gaussian steps have two dominating pairs, *remove* and *add* (MATH.md §15.2):
each direction is composed over the whole ledger and the larger delta is reported.

>>> from dpedu.accountants import SubsampledGaussianEvent
>>> acc = PLDAccountant().compose(SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01), 10_000)
>>> round(acc.get_epsilon(1e-5), 2)
0.95
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np
from scipy import fft as sp_fft
from scipy.fft import next_fast_len
from scipy.special import expit, ndtr, ndtri

from ..validation import check_delta, check_in_interval, check_positive, check_positive_int
from .base import Accountant
from ..events import EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, ShuffledBatchGaussianEvent, SubsampledGaussianEvent

__all__ = ["PLDAccountant"]

ACCURACY = 0.02  # automatic grid: worst-case shift of the composed loss <= 2% of its standard deviation
MIN_GRID, MAX_GRID, HARD_MAX_GRID = 2**14, 2**20, 2**24  # points; 2^24 float64 FFTs need ~1 GB
_TINY = np.finfo(float).tiny


class _LossModel(NamedTuple):
    """One event's privacy loss L under P: ``cdf(l) = P[L <= l]``, ``sf(l) = P[l < L < inf]``."""

    cdf: Callable
    sf: Callable
    lowest: float  # at most `tail` mass below
    highest: float  # at most `tail` mass above (besides infinity_mass)
    infinity_mass: float


@dataclass
class _PLD:
    """A discretised PLD: ``pmf[k]`` is the mass at loss ``(start + k) * spacing``; plus ``infinity_mass``."""

    spacing: float
    start: int
    pmf: np.ndarray
    infinity_mass: float
    steps: int  # how many events it composes (sets its share of the truncation budget)


# ---- one event ----------------------------------------------------------------------------------


def _preimage(loss, q, z):
    r"""x with :math:`\ln(1-q+q\,e^{(2x-1)/(2z^2)}) = \ell`, i.e. :math:`x = z^2 \ln((e^\ell-1+q)/q) + 1/2`.

    Meaningful for :math:`\ell > \ln(1-q)` only; other entries are finite garbage that callers mask.
    """
    log_excess = np.where(  # ln(e^l - 1 + q), without overflow for large l
        loss > 1.0,
        loss + np.log1p(-(1.0 - q) * np.exp(-np.maximum(loss, 1.0))),
        np.log(np.maximum(np.expm1(np.minimum(loss, 1.0)) + q, _TINY)),
    )
    return z * z * (log_excess - math.log(q)) + 0.5


def _loss_model(event, direction, tail):
    """The :class:`_LossModel` of ``event`` in ``direction`` ("remove" or "add"), tails of ``tail`` mass."""
    if isinstance(event, (GaussianEvent, SubsampledGaussianEvent)):
        z, q = event.noise_multiplier, getattr(event, "sampling_rate", 1.0)
        log_1mq = math.log1p(-q) if q < 1.0 else -math.inf  # remove-direction losses are > ln(1-q)

        def loss_of(x):  # remove direction, increasing in x (MATH.md §15.2)
            return float(np.logaddexp(log_1mq, math.log(q) + (2.0 * x - 1.0) / (2.0 * z * z)))

        # P is (1-q) N(0, z^2) + q N(1, z^2) (remove) or N(0, z^2) (add); each part has <= tail mass
        # below x_low and above x_high
        x_low, x_high = z * ndtri(tail), 1.0 - z * ndtri(tail)

        def x_at(loss):  # the preimage, -inf where the loss is below the support
            return np.where(loss > log_1mq, _preimage(loss, q, z), -np.inf)

        if direction == "remove":
            return _LossModel(
                lambda loss: (1.0 - q) * ndtr(x_at(loss) / z) + q * ndtr((x_at(loss) - 1.0) / z),
                lambda loss: (1.0 - q) * ndtr(-x_at(loss) / z) + q * ndtr((1.0 - x_at(loss)) / z),
                loss_of(x_low), loss_of(x_high), 0.0,
            )
        # add: P = N(0, z^2) and L = -loss_of(x) decreases, so L <= l  <=>  x >= preimage(-l)
        return _LossModel(
            lambda loss: ndtr(-x_at(-loss) / z), lambda loss: ndtr(x_at(-loss) / z),
            -loss_of(x_high), -loss_of(x_low), 0.0,
        )

    if isinstance(event, LaplaceEvent):
        # P = Lap(0, b), Q = Lap(1, b), b = 1/eps: L = eps w.p. 1/2, L = -eps w.p. e^{-eps}/2, and
        # P[L <= l] = e^{(l - eps)/2} / 2 in between (MATH.md §3, §15.2); symmetric in the two directions
        eps = event.epsilon

        def cdf(loss):
            inside = 0.5 * np.exp((np.clip(loss, -eps, eps) - eps) / 2.0)
            return np.where(loss >= eps, 1.0, np.where(loss >= -eps, inside, 0.0))

        return _LossModel(cdf, lambda loss: 1.0 - cdf(loss), -eps, eps, 0.0)

    # EpsilonDeltaEvent: every (eps, delta)-DP mechanism is dominated by the pair behind Kairouz, Oh &
    # Viswanath's optimal composition theorem (2015, Thm 3.3 and its proof): L = +inf w.p. delta,
    # +eps w.p. (1-delta) e^eps/(1+e^eps), -eps w.p. (1-delta)/(1+e^eps); symmetric in the directions.
    eps, delta = event.epsilon, event.delta
    plus, minus = (1.0 - delta) * expit(eps), (1.0 - delta) * expit(-eps)
    return _LossModel(
        lambda loss: np.where(loss >= eps, minus + plus, np.where(loss >= -eps, minus, 0.0)),
        lambda loss: np.where(loss >= eps, 0.0, np.where(loss >= -eps, plus, plus + minus)),
        -eps, eps, delta,
    )


def _discretise(model, spacing, pessimistic):
    """The loss on the grid ``spacing * Z``: each bin's mass at its upper end (pessimistic) or lower end."""
    # start one point below `lowest` so that an atom sitting exactly on it still falls inside a bin
    first, last = math.floor(model.lowest / spacing) - 1, math.ceil(model.highest / spacing)
    grid = np.arange(first, last + 1) * spacing
    below, above = model.cdf(grid), model.sf(grid)
    # mass of ((i-1)D, iD]; in the upper half sf differences keep their precision
    bins = np.maximum(np.where(above[:-1] < 0.5, above[:-1] - above[1:], below[1:] - below[:-1]), 0.0)
    if pessimistic:  # mass <= first*D moves up to first*D, mass above last*D to +inf
        return _PLD(spacing, first, np.concatenate(([below[0]], bins)), model.infinity_mass + above[-1], 1)
    return _PLD(spacing, first, bins, model.infinity_mass, 1)  # both truncated tails dropped


# ---- composition --------------------------------------------------------------------------------


def _coarsen(pld, spacing, pessimistic):
    """Move ``pld`` to the grid ``spacing`` (a power-of-two multiple of its own), rounding up or down."""
    factor = round(spacing / pld.spacing)
    if factor == 1:
        return pld
    index = pld.start + np.arange(pld.pmf.size)
    new_index = -((-index) // factor) if pessimistic else index // factor
    pmf = np.bincount(new_index - new_index[0], weights=pld.pmf)
    return _PLD(spacing, int(new_index[0]), pmf, pld.infinity_mass, pld.steps)


def _truncate(pld, tail, pessimistic, grid_size, round_off=0.0):
    """Cut both tails (<= ``tail`` mass each), then coarsen until at most ``grid_size`` points remain.

    Entries at or below ``round_off`` (the FFT's error level) carry no information and are ignored
    when choosing the cuts; whatever was computed beyond a cut still moves (pessimistic: upper tail
    into m_inf, lower tail up to the cut - so round-off can only raise delta; optimistic: dropped).
    """
    pmf = pld.pmf
    resolved = np.where(pmf > round_off, pmf, 0.0)
    low = int(np.searchsorted(np.cumsum(resolved), tail, side="right"))
    high = pmf.size - int(np.searchsorted(np.cumsum(resolved[::-1]), tail, side="right"))
    if low < high:
        kept, infinity_mass = pmf[low:high].copy(), pld.infinity_mass
        if pessimistic:
            kept[0] += pmf[:low].sum()
            infinity_mass += pmf[high:].sum()
        pld = _PLD(pld.spacing, pld.start + low, kept, infinity_mass, pld.steps)
    while pld.pmf.size > grid_size:
        pld = _coarsen(pld, 2 * pld.spacing, pessimistic)
    return pld


def _convolve(a, b, tail_per_step, pessimistic, grid_size):
    """The PLD of ``a`` composed with ``b``: a linear convolution by FFT, then truncation."""
    spacing = max(a.spacing, b.spacing)
    a, b = _coarsen(a, spacing, pessimistic), _coarsen(b, spacing, pessimistic)
    size = a.pmf.size + b.pmf.size - 1  # the whole support of the sum: nothing can wrap around
    fft_size = next_fast_len(size, real=True)
    spectrum = sp_fft.rfft(a.pmf, fft_size, workers=-1)
    spectrum = spectrum * spectrum if a is b else spectrum * sp_fft.rfft(b.pmf, fft_size, workers=-1)
    pmf = np.maximum(sp_fft.irfft(spectrum, fft_size, workers=-1)[:size], 0.0)  # clamp round-off below zero
    # the FFT's error per entry is about eps_machine |a|_2 |b|_2, and |p|_2^2 <= max(p) sum(p)
    round_off = 8 * np.finfo(float).eps * math.sqrt(a.pmf.max() * a.pmf.sum() * b.pmf.max() * b.pmf.sum())
    # L = inf if either loss is: m = 1 - (1 - m_a)(1 - m_b), written without cancellation
    infinity_mass = a.infinity_mass + b.infinity_mass - a.infinity_mass * b.infinity_mass
    steps = a.steps + b.steps
    composed = _PLD(spacing, a.start + b.start, pmf, infinity_mass, steps)
    return _truncate(composed, tail_per_step * steps, pessimistic, grid_size, round_off)


def _variance(model):
    """Variance of the loss, from a quick pessimistic discretisation with 2^14 points."""
    pld = _discretise(model, (model.highest - model.lowest) / MIN_GRID, True)
    loss, p = (pld.start + np.arange(pld.pmf.size)) * pld.spacing, pld.pmf / pld.pmf.sum()
    return float(np.sum(p * (loss - np.sum(p * loss)) ** 2))


def _grid_plan(models, counts, discretization, max_grid_size):
    r"""``(spacings, grid_size, capped)``: each event's grid spacing and the most points a PLD may keep.

    Automatic rule: a rounding moves a loss up by less than one grid step, so T events on spacing
    :math:`\Delta` shift the composed loss by less than :math:`T\Delta`. We take :math:`T\Delta` =
    ``ACCURACY`` (2%) of the standard deviation of the composed loss, :math:`\sigma^2 = \sum_e T_e
    \mathrm{Var}[L_e]` (later coarsenings add about as much again), and let a composed PLD keep as many
    points as an average event needs: at least 2^14, at most ``max_grid_size`` (``capped`` if that
    binds). For light tails :math:`\sigma \propto \sqrt T`, so the grid grows like :math:`\sqrt T`.
    """
    mean_span = sum(c * (m.highest - m.lowest) for m, c in zip(models, counts)) / sum(counts)
    if discretization is None:
        sigma = math.sqrt(sum(c * _variance(m) for m, c in zip(models, counts)))
        # for a few pure-DP events the second term wins: a power-of-two fraction of their span 2 eps, so
        # the atoms at +-eps sit exactly on the grid and are not rounded up (one Laplace release: eps <= eps)
        wanted = min(ACCURACY * sigma / sum(counts), mean_span / MIN_GRID)
        finest = max(wanted, mean_span / max_grid_size)
        grid_size = min(math.ceil(mean_span / finest) + 3, max_grid_size)
    else:  # every event exactly on the requested grid, or a clear error
        finest = wanted = discretization
        widest = max(m.highest - m.lowest for m in models) / finest + 3
        grid_size = min(max(math.ceil(widest), MIN_GRID), max_grid_size)
    spacings = []
    for model in models:
        spacing = finest
        while (model.highest - model.lowest) / spacing + 3 > grid_size:  # the points _discretise makes
            if discretization is not None:
                raise ValueError(
                    f"discretization={discretization!r} needs {math.ceil((model.highest - model.lowest) / spacing)}"
                    f" points for one event, more than max_grid_size={max_grid_size}; pass a coarser "
                    f"discretization or a larger max_grid_size (at most {HARD_MAX_GRID})"
                )
            spacing *= 2.0
        spacings.append(spacing)
    return spacings, grid_size, wanted < finest


def _compose_ledger(entries, direction, discretization, tail_mass, pessimistic, max_grid_size):
    """``(pld, capped)``: one PLD for the ledger ``[(event, count), ...]`` in one direction."""
    counts = [count for _, count in entries]
    # A cut in a PLD of s steps may move tail_mass * s / (2 T n_cuts) per side. That PLD occurs at most
    # T / s times in the result, so all cuts together change delta by at most tail_mass.
    n_cuts = sum(2 * count.bit_length() for count in counts)
    tail_per_step = tail_mass / (2 * sum(counts) * n_cuts)
    models = [_loss_model(event, direction, tail_per_step) for event, _ in entries]
    spacings, grid_size, capped = _grid_plan(models, counts, discretization, max_grid_size)
    options, result = (tail_per_step, pessimistic, grid_size), None
    for model, count, spacing in zip(models, counts, spacings):
        power = _discretise(model, spacing, pessimistic)
        while True:  # repeated squaring: `power` is the event composed 2^j times
            if count & 1:
                result = power if result is None else _convolve(result, power, *options)
            count >>= 1
            if not count:
                break
            power = _convolve(power, power, *options)
    return result, capped


def _privacy_curve(pld):
    r"""``(delta, top)``: :math:`\delta(\varepsilon) = m_\infty + \sum_{\ell_i>\varepsilon} p_i(1-e^{\varepsilon-\ell_i})`
    for :math:`\varepsilon \ge 0`, and the largest finite loss (above it only m_inf is left)."""
    loss = (pld.start + np.arange(pld.pmf.size)) * pld.spacing
    positive = loss > 0  # epsilon >= 0, so only positive losses can contribute
    loss, pmf = loss[positive], pld.pmf[positive]

    def delta(epsilon):
        i = np.searchsorted(loss, epsilon, side="right")  # the losses are sorted
        # np.sum(a * b), not a @ b: BLAS threads slow this down a lot on a busy machine
        return pld.infinity_mass + float(np.sum(pmf[i:] * -np.expm1(epsilon - loss[i:])))

    return delta, (float(loss[-1]) if loss.size else 0.0)


def _epsilon_from_curves(curves, delta):
    """Smallest epsilon >= 0 with max_k delta_k(epsilon) <= delta, by bisection (feasible end returned)."""

    def worst(epsilon):
        return max(curve(epsilon) for curve, _ in curves)

    if worst(0.0) <= delta:
        return 0.0
    low, high = 0.0, max(top for _, top in curves)
    if worst(high) > delta:
        return math.inf  # m_inf alone exceeds delta: no finite epsilon exists
    while high - low > 1e-12 * max(1.0, high):  # delta(epsilon) is non-increasing
        middle = 0.5 * (low + high)
        low, high = (middle, high) if worst(middle) > delta else (low, middle)
    return high


class PLDAccountant(Accountant):
    r"""Privacy-loss-distribution accountant: a numerically tight upper bound on epsilon.

    Supports :class:`GaussianEvent`, :class:`SubsampledGaussianEvent` (Poisson, add/remove: the remove
    and the add direction are each composed over the whole ledger and the larger delta is reported,
    MATH.md §15.2), :class:`LaplaceEvent` (unit sensitivity, scale 1/epsilon) and
    :class:`EpsilonDeltaEvent` (through the dominating pair of Kairouz, Oh & Viswanath 2015, Thm 3.3).
    Different events compose by convolution; equal events are grouped first (composition commutes).

    Parameters
    ----------
    discretization : float or None
        Grid spacing :math:`\Delta` on which every event is discretised (composition may double it
        when a PLD outgrows the grid). ``None`` (default): the automatic rule of :func:`_grid_plan`,
        whose worst-case shift of the composed loss is about 2-3% of its standard deviation (about
        0.5-1% of epsilon; the true error is usually half of that).
    tail_mass : float
        Truncated tails change delta by at most this much (pessimistic: added to :math:`m_\infty`;
        optimistic: dropped). Default 1e-12; ``delta`` must be larger. FFT round-off, about 1e-16 of
        the largest bin per convolution, also ends up in :math:`m_\infty` (about 1e-11 at T = 10^4).
    max_grid_size : int
        Most grid points a PLD may keep (default 2^20, at most 2^24). Where the automatic rule needs
        more, the grid is capped, the bound gets looser and ``caveat`` says so.
    pessimistic : bool
        ``True`` (default): round up, an upper bound on epsilon. ``False``: round down and drop the
        truncated tails, a *lower* bound, for showing the bracket; not a privacy guarantee.

    Notes
    -----
    With the adaptive grid, epsilon is monotone in the number of steps only up to the discretisation
    error (a longer ledger may get a finer grid); with a fixed ``discretization`` it is monotone.
    Meiser & Mohammadi (2018); Sommer, Meiser & Mohammadi (2019); Koskela, Jälkö & Honkela (2020).
    Tighter discretisations exist (Doroshenko et al. 2022, "connect the dots").
    """

    name = "pld"
    supported_events = (GaussianEvent, SubsampledGaussianEvent, LaplaceEvent, EpsilonDeltaEvent)
    unsupported_reasons = {
        ShuffledBatchGaussianEvent: (
            "fixed-size batches from a shuffled pass have no known dominating pair, and the Poisson-"
            "subsampling PLD does not cover them (MATH.md §1.3)"
        ),
    }

    def __init__(self, *, discretization=None, tail_mass=1e-12, max_grid_size=MAX_GRID, pessimistic=True):
        super().__init__()
        self.discretization = None if discretization is None else check_positive(discretization, "discretization")
        self.tail_mass = check_in_interval(tail_mass, "tail_mass", 0.0, 1e-3, low_open=True)
        max_grid_size = check_positive_int(max_grid_size, "max_grid_size")
        if not 2**8 <= max_grid_size <= HARD_MAX_GRID:
            raise ValueError(f"max_grid_size must be in [256, {HARD_MAX_GRID}]; got {max_grid_size}")
        self.max_grid_size = max_grid_size
        if not isinstance(pessimistic, bool):
            raise TypeError(f"pessimistic must be True or False; got {pessimistic!r}")
        self.pessimistic = pessimistic
        self.caveat = None if pessimistic else "optimistic PLD: a LOWER bound on epsilon, not a privacy guarantee"
        self._cache = {}

    def _composed(self, pessimistic):
        """The ledger's PLD, one per direction (cached until the ledger changes)."""
        counts = {}  # equal events are grouped: composition commutes, and compose(e, 5) == 5 x compose(e)
        for event, count in self.ledger:
            counts[event] = counts.get(event, 0) + count
        entries = tuple(sorted(counts.items(), key=lambda item: repr(item[0])))  # the order cannot matter
        if (entries, pessimistic) not in self._cache:
            self._cache = {k: v for k, v in self._cache.items() if k[0] == entries}
            directions = ["remove"]
            if any(isinstance(e, SubsampledGaussianEvent) and e.sampling_rate < 1 for e in counts):
                directions.append("add")  # the other events are symmetric: both directions agree
            results = [_compose_ledger(entries, d, self.discretization, self.tail_mass, pessimistic,
                                       self.max_grid_size) for d in directions]
            if pessimistic and self.pessimistic:
                capped = any(capped for _, capped in results)
                self.caveat = (f"PLD grid capped at max_grid_size={self.max_grid_size}, so the bound is looser "
                               f"than the default accuracy (see epsilon_bracket)") if capped else None
            self._cache[entries, pessimistic] = [pld for pld, _ in results]
        return self._cache[entries, pessimistic]

    def _epsilon_at(self, delta, pessimistic):
        if not delta > self.tail_mass:
            raise ValueError(f"delta must be larger than tail_mass={self.tail_mass:g}; got {delta!r} "
                             f"(pass a smaller tail_mass)")
        plds = self._composed(pessimistic)
        epsilon = _epsilon_from_curves([_privacy_curve(p) for p in plds], delta)
        # the events' own probability of an infinite loss: 1 - prod (1 - delta_e)^count
        log_no_inf = sum(c * math.log1p(-e.delta) for e, c in self.ledger if isinstance(e, EpsilonDeltaEvent))
        exact = max(0.0, -math.expm1(log_no_inf))
        if math.isinf(epsilon) and exact <= delta:
            numerical = max(p.infinity_mass for p in plds)
            raise ValueError(
                f"PLD cannot certify delta={delta:g} for this ledger: truncation and FFT round-off put "
                f"{numerical:.2g} of probability at infinite loss (the events themselves {exact:.2g}); use a "
                f"larger delta or another accountant (rdp)"
            )
        return epsilon

    def _epsilon(self, delta):
        return self._epsilon_at(delta, self.pessimistic)

    def _delta(self, epsilon):
        # FFT round-off can push the total mass (hence delta) a few ulps above 1: a probability stays <= 1
        return min(1.0, max(_privacy_curve(p)[0](epsilon) for p in self._composed(self.pessimistic)))

    def epsilon_bracket(self, delta):
        """``(optimistic, pessimistic)`` epsilon at ``delta``: the ledger's true epsilon lies in between.

        The width of the bracket is the discretisation error (up to round-off).
        """
        delta = check_delta(delta)
        if not self.ledger:
            return 0.0, 0.0
        return self._epsilon_at(delta, False), self._epsilon_at(delta, True)
