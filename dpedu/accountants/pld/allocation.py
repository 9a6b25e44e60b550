r"""Random allocation (balls-in-bins batches) by PLD: one epoch's pair, discretised in convex order (docs/math.md §22.9).

Each epoch puts every record into one of b steps uniformly at random (random allocation with k = 1 of t = b steps,
Feldman & Shenfeld 2025). Under add/remove one epoch is dominated by (Chua et al. 2025; docs/math.md §22.8)
:math:`P = \frac1b\sum_j \mathcal N(e_j, z^2I_b)` against :math:`Q = \mathcal N(0, z^2I_b)`, whose likelihood
ratio under Q is the mean of b independent lognormals,

.. math:: \Lambda = \frac1b\sum_{j=1}^b W_j, \qquad \ln W_j \sim \mathcal N(-\mu^2/2, \mu^2), \quad \mu = 1/z,
          \quad E\,W_j = 1 .

Both directions are read off the law of Λ under Q: *remove* :math:`\delta(\varepsilon) = E_Q[(\Lambda -
e^\varepsilon)_+]` (losses :math:`\ln\lambda`, P-mass λ times the Q-mass) and *add* :math:`\delta(\varepsilon) =
E_Q[(1 - e^\varepsilon\Lambda)_+]` (losses :math:`-\ln\lambda`, the Q-masses). Both integrands are convex in every
:math:`W_j`, and so is the composed curve of any number of epochs. Replacing W's law by a **mean-preserving spread**
(every cell of a grid sends its mass to its two ends, keeping the cell's mass and mean) can therefore only raise δ,
in both directions and after composition: the spread pair *dominates* the epoch. On a grid of spacing h the spread
sum is a b-fold convolution: one FFT raised to the b-th power (:mod:`.roundoff` bounds its round-off).

A coordinate above :math:`M_1` is rare; the K = 1 branch (exactly one coordinate in :math:`(M_1, W_{max}]`, the rest
at most :math:`M_1`) is the convolution of that coordinate's spread, on a coarser grid, with the (b-1)-fold sum
spread onto it. What is left (two coordinates above :math:`M_1`, one above :math:`W_{max}`, the FFT windows' tails)
has its P-mass (remove) and Q-mass (add) bounded and put at :math:`+\infty`, with the round-off bounds.

The optimistic pair (a lower bound) replaces each cell by its conditional mean (a mean-preserving *contraction*),
placed on the grid with an offset that only lowers Λ (remove) or raises it (add), and drops the tails.

>>> atoms = epoch_atoms(1.0, 100, 1e-20, 2**22, True)          # z = 1, b = 100: P- and Q-masses sum to 1
>>> [round(float(mass.sum()) + infinity, 9) for mass, infinity in ((atoms.remove_mass, atoms.remove_infinity),
...                                                                (atoms.add_mass, atoms.add_infinity))]
[1.0, 1.0]
>>> atoms.remove_infinity < 1e-11, atoms.details["h1"], atoms.details["n1"]
(True, 0.078125, 11976)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import fft as sp_fft
from scipy.special import ndtr, ndtri

from .compose import chernoff_window, convolve
from .losses import GridPMF, LossModel
from .roundoff import composed_spectrum, self_compose_bound

__all__ = ["EpochAtoms", "AllocationModel", "epoch_atoms", "spacing_for", "RESOLUTION", "BAND_RATIO"]

#: the first band's spacing is :math:`\min(2\cdot\mathrm{RESOLUTION}\sqrt b,\ \mathrm{sd}(W)/16)`: the spread adds at most
#: :math:`h^2/(4b)` to Λ's variance, below :math:`\mathrm{RESOLUTION}^2` and below 1/1024 of Λ's own variance
RESOLUTION = 2.0**-8
#: the second band's spacing is at most this fraction of its lower end :math:`M_1` (relative resolution of the one
#: large coordinate), unless the band would need more points than allowed
BAND_RATIO = 2.0**-10


def spacing_for(noise_multiplier, batches_per_epoch):
    """The first band's grid spacing h for W (see :data:`RESOLUTION`)."""
    mu2 = 1.0 / noise_multiplier**2
    sd = math.sqrt(math.expm1(mu2)) if mu2 < 700 else math.inf
    return min(2.0 * RESOLUTION * math.sqrt(batches_per_epoch), sd / 16.0)


def _tails(mu, y):
    """``(Q[ln W > y], P[ln W > y])``: W's upper tail under Q, and under P (W's law tilted by w, its first moment)."""
    return float(ndtr(-(y + mu * mu / 2) / mu)), float(ndtr(-(y - mu * mu / 2) / mu))


def _cells(mu, edges):
    """Q-mass A and first moment B (= P-mass) of W between consecutive ``edges`` (0 <= edges, increasing): normal
    CDF differences, below the median from the CDF, above it from the survival function (tails keep their precision)."""
    with np.errstate(divide="ignore"):
        y = np.log(edges)
    out = []
    for shift in (mu * mu / 2, -mu * mu / 2):       # Q: ln W ~ N(-mu^2/2, mu^2); tilted: N(+mu^2/2, mu^2)
        x = (y + shift) / mu
        cdf, survival = ndtr(x), ndtr(-x)
        out.append(np.maximum(np.where(cdf[1:] <= 0.5, cdf[1:] - cdf[:-1], survival[:-1] - survival[1:]), 0.0))
    return out


def _spread(mu, first, count, h):
    """Q-masses on the grid points ``first .. first + count`` (times h) of the spread of W on ``[first h, (first +
    count) h]``: each cell keeps its mass and mean (its mass goes to its ends in proportion)."""
    w = (first + np.arange(count + 1)) * h
    mass, moment = _cells(mu, w)
    up = np.clip((moment - w[:-1] * mass) / h, 0.0, mass)
    q = np.zeros(count + 1)
    q[:-1] += mass - up
    q[1:] += up
    return q


def _contract(mu, first, count, h, lower):
    r"""Optimistic: cells centred on the grid points ``first .. first + count`` (the first and the last cut at the
    band's ends), each cell's mass at its point, and an offset o: every cell's conditional mean is at least (``lower``)
    or at most its point plus o. o is the extreme deviation among cells holding 1e-3 of the largest mass; lighter
    cells beyond it move one point down (up)."""
    points = (first + np.arange(count + 1)) * h
    edges = np.concatenate(([first * h], points[1:] - h / 2, [points[-1]]))     # the band [first h, last point]
    mass, moment = _cells(mu, edges)
    filled = mass > 0
    deviation = np.where(filled, moment / np.where(filled, mass, 1.0) - points, 0.0)
    heavy = mass >= 1e-3 * mass.max()
    offset = min(0.0, deviation[heavy].min()) if lower else max(0.0, deviation[heavy].max())
    moved = (deviation < offset) if lower else (deviation > offset)
    target = np.clip(np.arange(count + 1) + np.where(moved, -1 if lower else 1, 0), 0, count)
    return np.bincount(target, weights=mass, minlength=count + 1), offset


def _power(q, count, low, high, pessimistic, extended=True):
    """The ``count``-fold self-convolution of ``q`` (masses on grid indices 0..) on the indices ``low..high``, and the
    L1 bound on its round-off (docs/math.md §15.8: the spectrum and its power in extended precision where
    ``extended``, else in double with the double bound; no bound when not ``pessimistic``)."""
    width = high - low + 1
    if count == 1:
        return q[low:high + 1].copy(), 0.0
    size = sp_fft.next_fast_len(width + width // 8, real=True)
    folded = np.pad(q, (0, -q.size % size)).reshape(-1, size).sum(axis=0)      # same circular convolution
    spectrum, error, rest = composed_spectrum(folded, count, None if pessimistic and extended else np.float64)
    out = np.maximum(np.roll(sp_fft.irfft(spectrum, size), -(low % size))[:width], 0.0)
    return out, (self_compose_bound(spectrum, error, size, width, rest) if pessimistic else 0.0)


def _window(q, weights, count, tail):
    """Index bounds holding all but ``tail`` per side of the ``count``-fold sum under Q and under P (one coordinate
    tilted by its value: P-masses ``weights``)."""
    g, gp = GridPMF(1.0, 0, 0.0, q, 0.0), GridPMF(1.0, 0, 0.0, weights, 0.0)
    q_low, q_high = chernoff_window([(g, count)], tail)
    parts = [(gp, 1)] + ([(g, count - 1)] if count > 1 else [])
    p_low, p_high = chernoff_window(parts, tail)
    return min(q_low, p_low), max(q_high, p_high)


@dataclass(frozen=True)
class EpochAtoms:
    """One epoch's PMFs, both directions: remove losses :math:`\\ln\\lambda` with their P-masses, add losses
    :math:`-\\ln\\lambda` with their Q-masses, each with its mass at :math:`+\\infty` (truncated tails and, when
    pessimistic, the round-off bounds ``*_roundoff``, included in it). ``details``: the grids, for the notes."""

    remove_loss: np.ndarray
    remove_mass: np.ndarray
    remove_infinity: float
    add_loss: np.ndarray
    add_mass: np.ndarray
    add_infinity: float
    remove_roundoff: float
    add_roundoff: float
    details: dict


def _solve_upper(function, target, low, high):
    """Smallest y in [low, high] (to 1e-9) with the decreasing ``function(y) <= target`` (``high`` if none)."""
    if function(low) <= target:
        return low
    for _ in range(100):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if function(mid) > target else (low, mid)
        if high - low < 1e-9:
            break
    return high


def _plan(mu, b, tail, max_points):
    """``(h1, n1, r, n2, y_max, y1)``: the first band [0, n1 h1], the second (n1 h1, (n1 + r n2) h1] on spacing
    r h1 (n2 = 0: one band); y_max, y1: the logs of the cut points whose tails are bounded."""
    budget = tail / 8.0

    def beyond(y):  # one coordinate above e^y: its P-mass (tilted coordinate, or one of the b - 1 others)
        q_t, p_t = _tails(mu, y)
        return p_t + (b - 1) * q_t

    def two_above(y):  # two or more coordinates above e^y: P-mass
        q_t, p_t = _tails(mu, y)
        return (b - 1) * p_t * q_t + (b - 1) * (b - 2) / 2 * q_t * q_t

    start = -mu * mu / 2
    y_max = _solve_upper(beyond, budget, start, start + 50.0 * mu + 50.0)
    y1 = y_max if b == 1 else min(y_max, _solve_upper(two_above, budget, start, y_max))
    h1 = spacing_for(1.0 / mu, b)
    w_max = math.exp(y_max) if y_max < 700 else math.inf
    if not (math.isfinite(w_max) and math.exp(y1) > 0 and h1 > 0):   # beyond the float range: no grid fits
        raise ValueError(
            f"random allocation at noise_multiplier={1 / mu:g}, batches_per_epoch={b} needs more grid points for "
            f"one coordinate than any max_grid_size: its likelihood ratios span more than the float range")
    if y1 >= y_max - 1e-9:
        n1 = math.ceil(w_max / h1)
        r, n2 = 1, 0
    else:
        m1 = math.exp(y1)
        r = max(1, math.ceil(max(BAND_RATIO * m1, (w_max - m1) / max_points) / h1))
        n1 = r * math.ceil(m1 / (r * h1))
        n2 = max(1, math.ceil((w_max - n1 * h1) / (r * h1)))
        y1 = math.log(n1 * h1)
    if max(n1, n2) > max_points:
        raise ValueError(
            f"random allocation at noise_multiplier={1 / mu:g}, batches_per_epoch={b} needs "
            f"{max(n1, n2):.3g} grid points for one coordinate, more than max_grid_size={max_points}; pass a "
            f"larger max_grid_size (at most 2^24) or a larger tail_mass")
    return h1, n1, r, n2, math.log(w_max), y1


@functools.lru_cache(maxsize=4)  # both estimates of two settings (a setting may hold 100 MB)
def epoch_atoms(noise_multiplier, batches_per_epoch, tail, max_points, pessimistic):
    """The :class:`EpochAtoms` of one epoch of ``BallsInBinsGaussianEvent(noise_multiplier, batches_per_epoch)``.

    ``pessimistic``: the spread pair (dominates the epoch: an upper bound on δ after any composition; its mass at
    :math:`+\\infty` holds every truncated tail, in all at most about ``tail``, and the FFTs' round-off bounds).
    Otherwise the contracted pair on a grid twice as fine (a lower bound; tails dropped, no round-off bound).
    Cached: a few seconds at most.
    """
    mu, b = 1.0 / noise_multiplier, batches_per_epoch
    h1, n1, r, n2, y_max, y1 = _plan(mu, b, tail, max_points)
    window_tail = tail / 64.0
    details = {"h1": h1, "n1": n1, "h2": r * h1, "n2": n2, "w_max": math.exp(y_max), "m1": n1 * h1}
    if not pessimistic:
        return _optimistic(mu, b, h1 / 2, 2 * n1, 2 * r, n2, window_tail, details)
    q = _spread(mu, 0, n1, h1)
    total = _others(q, h1, b, window_tail, True, True)                      # S_b, spectrum in extended precision
    lam = (total.start + np.arange(total.pmf.size)) * h1 / b
    parts = [(lam, total.pmf)]
    q_max, p_max = _tails(mu, y_max)
    # P-mass (remove) and Q-mass (add) at +infinity: one coordinate above w_max; S_b outside its window (two sides,
    # under Q and under P); the round-off of S_b's masses (times lambda for the P-masses)
    roundoff = [total.roundoff * lam[-1], total.roundoff]
    remove_inf = p_max + (b - 1) * q_max + 2 * window_tail
    add_inf = b * q_max + 2 * window_tail
    if n2:
        q_1, p_1 = _tails(mu, y1)
        remove_inf += (b - 1) * p_1 * q_1 + (b - 1) * (b - 2) / 2 * q_1 * q_1     # two coordinates above M_1
        add_inf += b * (b - 1) / 2 * q_1 * q_1
        big = _spread(mu, n1 // r, n2, r * h1)                                    # the one large coordinate
        others = _others(q, h1, b - 1, window_tail, True, False)    # S_{b-1}: its error is weighted by |big|
        coarse = GridPMF(1.0, others.start // r, 0.0, _coarsen(others.pmf, others.start, r), 0.0, others.roundoff)
        branch = convolve(coarse, GridPMF(1.0, n1 // r, 0.0, big, 0.0))
        lam2 = (branch.start + np.arange(branch.pmf.size)) * r * h1 / b
        parts.append((lam2, b * branch.pmf))                                      # b choices of the large one
        error = b * (others.roundoff * big.sum() + branch.roundoff - others.roundoff)   # L1, the branch's Q-masses
        roundoff = [roundoff[0] + error * lam2[-1], roundoff[1] + error]
        remove_inf += 2 * window_tail * (p_1 + (b - 1) * q_1)
        add_inf += 2 * window_tail * b * q_1
    return _atoms(parts, remove_inf, add_inf, details, roundoff)


def _others(q, h, count, tail, pessimistic, extended=False):
    """The ``count``-fold sum of the first band's W on its window (all but ``tail`` per side under Q and under P), as a
    :class:`GridPMF` on unit spacing whose ``roundoff`` is its L1 round-off bound (a point mass at 0 for ``count``
    0)."""
    if count == 0:
        return GridPMF(1.0, 0, 0.0, np.ones(1), 0.0)
    low, high = _window(q, q * np.arange(q.size) * h, count, tail)
    pmf, roundoff = _power(q, count, low, high, pessimistic, extended)
    return GridPMF(1.0, low, 0.0, pmf, 0.0, roundoff)


def _coarsen(masses, first, r, mode="spread"):
    """Masses on fine indices ``first, first + 1, ..`` moved onto every r-th index (coarse index = fine // r, the
    result starting at ``first // r``): split between the two coarse neighbours keeping mass and mean (``spread``),
    or all to the one below (``down``)."""
    fine = first + np.arange(masses.size)
    below = fine // r
    frac = (fine % r) / r if mode == "spread" else np.zeros(masses.size)
    start = below[0]
    out = np.bincount(below - start, weights=masses * (1.0 - frac), minlength=below[-1] - start + 2)
    out += np.bincount(below - start + 1, weights=masses * frac, minlength=out.size)
    return out


def _optimistic(mu, b, h1, n1, r, n2, tail, details):
    """The contracted pair: Λ lowered for remove (with the K = 1 branch, the others rounded down onto its grid),
    raised for add (first band only); tails dropped."""
    parts = []
    for lower in (True, False):
        q, offset = _contract(mu, 0, n1, h1, lower)
        total = _others(q, h1, b, tail, False)
        lam = (total.start + np.arange(total.pmf.size)) * h1 / b + offset
        direction = [(lam, total.pmf)]
        if n2 and lower:
            big, big_offset = _contract(mu, n1 // r, n2, r * h1, True)
            others = _others(q, h1, b - 1, tail, False)
            coarse = GridPMF(1.0, others.start // r, 0.0, _coarsen(others.pmf, others.start, r, "down"), 0.0)
            branch = convolve(coarse, GridPMF(1.0, n1 // r, 0.0, big, 0.0), False)
            lam2 = (branch.start + np.arange(branch.pmf.size)) * r * h1 / b
            direction.append((lam2 + (big_offset + (b - 1) * offset) / b, b * branch.pmf))
        parts.append(direction)
    return _atoms(parts, 0.0, 0.0, details, None)


def _atoms(parts, remove_inf, add_inf, details, roundoff):
    """Loss atoms of both directions from ``(λ, Q-mass)`` parts: one list for both (pessimistic, with ``roundoff``
    the two directions' round-off bounds, added to their masses at infinity) or one list per direction."""
    pessimistic = roundoff is not None
    remove_parts, add_parts = (parts, parts) if pessimistic else parts
    roundoff = roundoff or [0.0, 0.0]
    lam, mass = (np.concatenate(x) for x in zip(*remove_parts))
    keep = (lam > 0) & (mass > 0)
    remove_loss, remove_mass = np.log(lam[keep]), lam[keep] * mass[keep]
    lam, mass = (np.concatenate(x) for x in zip(*add_parts))
    keep = (lam > 0) & (mass > 0)
    zero = float(mass[(lam <= 0) & (mass > 0)].sum()) if pessimistic else 0.0   # Λ = 0: add loss +inf
    remove_inf, add_inf = float(remove_inf + roundoff[0]), float(add_inf + zero + roundoff[1])
    return EpochAtoms(remove_loss, remove_mass, min(1.0, remove_inf), -np.log(lam[keep]), mass[keep], min(1.0, add_inf),
                      float(roundoff[0]), float(roundoff[1]), details)


@dataclass(frozen=True)
class AllocationModel:
    """The PLD model of ``BallsInBinsGaussianEvent(noise_multiplier, batches_per_epoch)`` in ``direction`` ("remove"
    or "add"), built when first asked (:func:`epoch_atoms`); :meth:`loss_model` gives its atoms as a
    :class:`~.losses.LossModel` that :func:`~.losses.connect_the_dots` and :func:`~.losses.grid_binning` take."""

    noise_multiplier: float
    batches_per_epoch: int
    direction: str
    tail: float
    max_points: int = 2**22

    def loss_model(self, pessimistic=True):
        """The atoms of this direction: the spread pair (``pessimistic``) or the contracted one."""
        atoms = epoch_atoms(self.noise_multiplier, self.batches_per_epoch, self.tail, self.max_points, pessimistic)
        if self.direction == "remove":
            loss, mass, infinity = atoms.remove_loss, atoms.remove_mass, atoms.remove_infinity
        else:
            loss, mass, infinity = atoms.add_loss, atoms.add_mass, atoms.add_infinity
        return LossModel(None, None, None, 0.0, 0.0, 1.0, np.stack((loss, mass), axis=1), infinity)

    def roundoff(self):
        """The part of the pessimistic mass at infinity that bounds the FFTs' round-off (docs/math.md §15.8)."""
        atoms = epoch_atoms(self.noise_multiplier, self.batches_per_epoch, self.tail, self.max_points, True)
        return atoms.remove_roundoff if self.direction == "remove" else atoms.add_roundoff
