r"""One event's privacy loss, and its two discretisations on the grid :math:`\{i\Delta\}`.

A :class:`LossModel` describes the loss :math:`L = \ln(P(X)/Q(X))`, :math:`X \sim P`, of one dominating
pair as a *continuous part* (an increasing loss function of a real variable x on ``[x_low, x_high]``, with
the density of x under P) plus *atoms* (loss values carrying a point mass) plus the mass at
:math:`+\infty`. Every event dpedu accounts fits this shape (``docs/math.md §15.2``).

Two discretisations put the loss on the grid:

* :func:`connect_the_dots` (pessimistic, ``docs/math.md §15.7``): the mass of a loss value
  :math:`\ell \in [i\Delta, (i+1)\Delta]` is split between the two grid points around it so that both its
  P-mass and its Q-mass (:math:`e^{-\ell}` times it) are preserved. The result dominates the event: its
  :math:`\delta(\varepsilon)` is at least the true one for every :math:`\varepsilon`, with an error of
  second order in :math:`\Delta`.
* :func:`grid_binning` (optimistic): the outputs are grouped into bins around the grid points. Grouping is
  post-processing, so the binned pair is dominated by the true one; its bin losses
  :math:`\ln(P(\text{bin})/Q(\text{bin}))` sit within :math:`O(\Delta^2)` of the grid points and are
  placed on the grid shifted down by the largest such deviation, a lower bound again of second order.

For the Gaussian and the subsampled Gaussian, connect the dots needs only each bin's P-mass and Q-mass, which
are differences of the normal CDF (of its survival function in the upper half, so tail masses keep their
relative precision): the split is exact. Other integrals over a bin are Gauss-Legendre sums on panels of x no
wider than a fixed fraction of the noise scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import expit, ndtr, ndtri

from ...ground.events import EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, SubsampledGaussianEvent

__all__ = ["LossModel", "loss_model", "loss_moments", "loss_range", "connect_the_dots", "grid_binning", "GridPMF",
           "atom_arrays"]

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(6)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
SNAP = 1e-9  # an atom within SNAP grid steps of a grid point is on it (floating-point division noise)


@dataclass(frozen=True)
class GridPMF:
    """Masses ``pmf[k]`` at losses ``(start + k) * spacing + offset``; ``infinity_mass`` at :math:`+\\infty`;
    ``roundoff``: the part of ``infinity_mass`` that bounds the FFT round-off so far (docs/math.md §15.8);
    ``top_slack``: the part of ``infinity_mass`` that cannot sit at or above the top grid loss (the round-off bound,
    the FFT margin's mass; docs/math.md §15.10), 0 for a PMF no FFT touched."""

    spacing: float
    start: int
    offset: float
    pmf: np.ndarray
    infinity_mass: float
    roundoff: float = 0.0
    top_slack: float = 0.0

    @property
    def infinity_beyond_top(self):
        """A bound on :math:`\\delta(\\varepsilon)` at every ε at or above the top grid loss:
        ``infinity_mass - top_slack``."""
        return max(self.infinity_mass - self.top_slack, 0.0)


@dataclass(frozen=True)
class LossModel:
    """Continuous part ``loss(x)`` (increasing) with ``log_density(x)`` under P on ``[x_low, x_high]``;
    ``preimage(l)`` inverts ``loss``; ``atoms`` are ``(loss, P-mass)`` pairs (or an array of them, shape (n, 2));
    ``infinity_mass`` is
    P[L = +inf]. ``panel`` is the widest x-panel of the quadrature. ``cut_low`` is the P-mass below
    ``x_low`` (losses at most ``loss(x_low)``) and ``cut_high`` the P-mass above ``x_high``.
    ``interval_masses(edges)``, when known in closed form, gives the P-mass and the Q-mass of x between
    consecutive ``edges``."""

    loss: Callable | None
    log_density: Callable | None
    preimage: Callable | None
    x_low: float
    x_high: float
    panel: float
    atoms: tuple
    infinity_mass: float
    cut_low: float = 0.0
    cut_high: float = 0.0
    interval_masses: Callable | None = None


def atom_arrays(atoms):
    """``(losses, P-masses)`` of ``atoms`` as two arrays: a tuple of ``(loss, mass)`` pairs or an array of shape (n, 2)."""
    pairs = np.asarray(atoms, dtype=float).reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1]


def _log_normal(x, mean, scale):
    return -0.5 * ((x - mean) / scale) ** 2 - _LOG_SQRT_2PI - math.log(scale)


def loss_model(event, direction, tail):
    """The :class:`LossModel` of ``event`` in ``direction`` ("remove" or "add").

    ``tail`` bounds the P-mass cut from each end of a Gaussian's range; the cut lower end becomes an
    atom at the lowest loss kept (pessimistic: moved up), the upper end joins ``infinity_mass``.
    """
    if isinstance(event, (GaussianEvent, SubsampledGaussianEvent)):
        z = event.noise_multiplier
        q = getattr(event, "sampling_rate", 1.0)
        return _gaussian_model(z, q, direction if q < 1.0 else "remove", tail)
    if isinstance(event, LaplaceEvent):  # P = Lap(1, 1/eps), Q = Lap(0, 1/eps); symmetric (docs/math.md §15.2)
        eps = event.epsilon
        return LossModel(
            lambda x: eps * (2.0 * x - 1.0),
            lambda x: math.log(eps / 2.0) - eps * (1.0 - x),
            lambda loss: (loss / eps + 1.0) / 2.0,
            0.0, 1.0, 1.0 / 64.0,
            ((-eps, 0.5 * math.exp(-eps)), (eps, 0.5)), 0.0,
        )
    if isinstance(event, EpsilonDeltaEvent):  # Kairouz, Oh & Viswanath (2015, Thm 3.3): symmetric
        eps, delta = event.epsilon, event.delta
        atoms = ((-eps, (1.0 - delta) * expit(-eps)), (eps, (1.0 - delta) * expit(eps)))
        return LossModel(None, None, None, 0.0, 0.0, 1.0, atoms, delta)
    raise TypeError(f"no privacy loss model for {event!r}")


def _gaussian_model(z, q, direction, tail):
    r"""Remove: P = (1-q)N(0,z^2) + qN(1,z^2), Q = N(0,z^2), L = ln(1-q+q e^{(2x-1)/(2z^2)}). Add: P = N(0,z^2)
    and, with y = -x, L = -ln(1-q+q e^{(-2y-1)/(2z^2)}), increasing in y (docs/math.md §15.2)."""
    log_q, log_1mq = math.log(q), (math.log1p(-q) if q < 1.0 else -math.inf)
    cut = z * float(ndtri(tail))  # negative: N(0, z^2) has `tail` mass below it
    if direction == "remove":
        def loss(x):
            return np.logaddexp(log_1mq, log_q + (2.0 * x - 1.0) / (2.0 * z * z))

        def log_density(x):
            return np.logaddexp(log_1mq + _log_normal(x, 0.0, z), log_q + _log_normal(x, 1.0, z))

        def preimage(l):  # x with loss(x) = l, for l > ln(1-q)
            excess = l + np.log1p(-np.exp(log_1mq - l)) if q < 1.0 else l
            return z * z * (excess - log_q) + 0.5

        def interval_masses(x):  # P = (1-q)N(0, z^2) + qN(1, z^2), Q = N(0, z^2)
            cdf, survival = ndtr(x / z), ndtr(-x / z)
            return (_between((1.0 - q) * cdf + q * ndtr((x - 1.0) / z),
                             (1.0 - q) * survival + q * ndtr((1.0 - x) / z)),
                    _between(cdf, survival))

        x_low, x_high = (cut, 1.0 - cut) if q < 1.0 else (1.0 + cut, 1.0 - cut)
        below = (1.0 - q) * ndtr(x_low / z) + q * ndtr((x_low - 1.0) / z)
        above = (1.0 - q) * ndtr(-x_high / z) + q * ndtr((1.0 - x_high) / z)
    else:
        def loss(y):
            return -np.logaddexp(log_1mq, log_q + (-2.0 * y - 1.0) / (2.0 * z * z))

        def log_density(y):
            return _log_normal(y, 0.0, z)

        def preimage(l):  # y with loss(y) = l, for l < -ln(1-q)
            return -z * z * (-l + np.log1p(-np.exp(log_1mq + l)) - log_q) - 0.5

        def interval_masses(y):  # P = N(0, z^2), Q = (1-q)N(0, z^2) + qN(-1, z^2) in y = -x
            cdf, survival = ndtr(y / z), ndtr(-y / z)
            return (_between(cdf, survival),
                    _between((1.0 - q) * cdf + q * ndtr((y + 1.0) / z),
                             (1.0 - q) * survival + q * ndtr(-(y + 1.0) / z)))

        x_low, x_high = cut, -cut
        below = above = float(ndtr(cut / z))
    return LossModel(loss, log_density, preimage, x_low, x_high, z / 16.0, (), 0.0, float(below), float(above),
                     interval_masses)


def _between(cdf, survival):
    """Masses between consecutive edges from the CDF and the survival function at the edges: the CDF's
    difference below the median, the survival function's above it, so tail masses keep their relative
    precision."""
    return np.maximum(np.where(cdf[1:] <= 0.5, cdf[1:] - cdf[:-1], survival[:-1] - survival[1:]), 0.0)


def loss_moments(model):
    """``(mean, variance)`` of the loss under P (continuous part by quadrature, plus the finite atoms)."""
    values, masses = atom_arrays(model.atoms)
    values, masses = [values], [masses]
    if model.loss is not None:
        edges = np.linspace(model.x_low, model.x_high, int((model.x_high - model.x_low) / model.panel) + 2)
        x, w = _panel_nodes(edges)
        masses.append(np.exp(model.log_density(x)) * w)
        values.append(model.loss(x))
    m = np.concatenate([np.atleast_1d(v) for v in masses])
    v = np.concatenate([np.atleast_1d(v) for v in values])
    m = m / m.sum()
    mean = float(np.sum(m * v))
    return mean, float(np.sum(m * (v - mean) ** 2))


def _panel_nodes(edges):
    """Gauss-Legendre nodes and weights on the panels between consecutive ``edges``."""
    half, mid = np.diff(edges)[:, None] / 2.0, (edges[:-1] + edges[1:])[:, None] / 2.0
    return (mid + half * _NODES).ravel(), (half * _WEIGHTS).ravel()


def _continuous_nodes(model, loss_edges):
    """``(loss, P-mass)`` quadrature nodes of the continuous part, with panels split at ``loss_edges``."""
    inner = loss_edges[(loss_edges > model.loss(np.array(model.x_low)))
                       & (loss_edges < model.loss(np.array(model.x_high)))]
    x_cuts = np.clip(model.preimage(inner), model.x_low, model.x_high)
    uniform = np.linspace(model.x_low, model.x_high, int((model.x_high - model.x_low) / model.panel) + 2)
    edges = np.unique(np.concatenate((uniform, x_cuts)))
    x, w = _panel_nodes(edges)
    return model.loss(x), np.exp(model.log_density(x)) * w


def _index(values, spacing):
    """``(index, on_grid)``: the grid point at or below each value, snapped to the nearest grid point
    when within SNAP steps of it (then ``on_grid``)."""
    ratio = np.asarray(values, dtype=float) / spacing
    nearest = np.round(ratio)
    on_grid = np.abs(ratio - nearest) < SNAP
    return np.where(on_grid, nearest, np.floor(ratio)).astype(np.int64), on_grid


def loss_range(model):
    """Width of the finite losses ``model`` can take (continuous part and atoms)."""
    losses = atom_arrays(model.atoms)[0]
    values = [float(losses.min()), float(losses.max())] if losses.size else []
    if model.loss is not None:
        values += [float(model.loss(np.array(model.x_low))), float(model.loss(np.array(model.x_high)))]
    return max(values) - min(values)


def _check_size(model, spacing, max_size):
    """Refuse (``ValueError``) a grid of more than ``max_size`` points for one event."""
    points = loss_range(model) / spacing + 3
    if not points <= max_size:
        raise ValueError(f"one event needs {points:.3g} grid points at spacing {spacing:.3g}, more than "
                         f"max_grid_size={max_size}; pass a coarser discretization or a larger accuracy")


def connect_the_dots(model, spacing, max_size=2**24):
    r"""Pessimistic :class:`GridPMF` of ``model``: each loss :math:`\ell` between grid points
    :math:`\ell_i \le \ell < \ell_{i+1}` sends the fraction :math:`(1-e^{\ell_i-\ell})/(1-e^{-\Delta})` of its
    mass up and the rest down (Doroshenko et al. 2022; ``docs/math.md §15.7``); the cut upper tail goes to
    :math:`+\infty`."""
    _check_size(model, spacing, max_size)
    atom_losses, atom_masses = atom_arrays(model.atoms)
    values, masses = [atom_losses], [atom_masses]
    if model.cut_low > 0:  # the cut lower tail moves up to the lowest loss kept
        values.append(np.array([float(model.loss(np.array(model.x_low)))]))
        masses.append(np.array([model.cut_low]))
    index, down, up = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)  # bins done in closed form
    if model.loss is not None:
        low, high = model.loss(np.array(model.x_low)), model.loss(np.array(model.x_high))
        edges = np.arange(math.floor(low / spacing), math.ceil(high / spacing) + 1) * spacing
        if model.interval_masses is not None and max(abs(low), abs(high)) < 600.0:
            index, down, up = _exact_bins(model, edges, spacing, low, high)
        else:
            loss, mass = _continuous_nodes(model, edges)
            values.append(loss)
            masses.append(mass)
    loss, mass = np.concatenate(values), np.concatenate(masses)
    below, on_grid = _index(loss, spacing)
    fraction = np.where(on_grid, 0.0, np.expm1(-(loss - below * spacing)) / math.expm1(-spacing))
    below = np.concatenate((below, index))
    down_mass, up_mass = np.concatenate((mass * (1.0 - fraction), down)), np.concatenate((mass * fraction, up))
    start = int(below.min())
    size = int(below.max()) - start + 2
    pmf = np.bincount(below - start, weights=down_mass, minlength=size)
    pmf += np.bincount(below - start + 1, weights=up_mass, minlength=size)
    return _trimmed(GridPMF(spacing, start, 0.0, pmf, model.infinity_mass + model.cut_high))


def _exact_bins(model, edges, spacing, low, high):
    r"""Connect the dots of the continuous part bin by bin, from each bin's P-mass A and Q-mass B in closed form.

    Every loss :math:`\ell \in [\ell_k, \ell_{k+1})` sends :math:`(1 - e^{\ell_k - \ell})/(1 - e^{-\Delta})` of its
    P-mass up, and :math:`e^{-\ell}dP = dQ`, so the bin sends up exactly
    :math:`(A - e^{\ell_k}B)/(1 - e^{-\Delta})` (no quadrature). Returns ``(index, down, up)`` per bin.
    """
    inner = edges[(edges > low) & (edges < high)]
    x = np.concatenate(([model.x_low], np.clip(model.preimage(inner), model.x_low, model.x_high), [model.x_high]))
    p_mass, q_mass = model.interval_masses(x)
    first, _ = _index(np.array([low]), spacing)
    index = np.concatenate((first, np.round(inner / spacing).astype(np.int64)))
    up = np.clip((p_mass - np.exp(index * spacing) * q_mass) / -math.expm1(-spacing), 0.0, p_mass)
    return index, p_mass - up, up


def grid_binning(model, spacing, max_size=2**24):
    r"""Optimistic :class:`GridPMF`: bins :math:`[\ell_j - \Delta/2, \ell_j + \Delta/2)`, each bin's loss
    :math:`\ln(P(\text{bin})/Q(\text{bin}))` moved down to :math:`\ell_j + o` (or :math:`\ell_{j-1} + o` when it
    lies below :math:`\ell_j + o`), with o from :func:`_best_offset`. Moving losses down can only lower
    delta, for one event and for any composition (the sum of losses only decreases). The cut tails are
    dropped: a lower bound."""
    _check_size(model, spacing, max_size)
    atom_losses, atom_masses = atom_arrays(model.atoms)
    values, masses = [atom_losses], [atom_masses]
    if model.loss is not None:
        low, high = model.loss(np.array(model.x_low)), model.loss(np.array(model.x_high))
        edges = (np.arange(math.floor(low / spacing) - 1, math.ceil(high / spacing) + 2) + 0.5) * spacing
        loss, mass = _continuous_nodes(model, edges)
        values.append(loss)
        masses.append(mass)
    loss, mass = np.concatenate(values), np.concatenate(masses)
    keep = mass > 0
    loss, mass = loss[keep], mass[keep]
    index = np.round(loss / spacing).astype(np.int64)
    start = int(index.min())
    p_bin = np.bincount(index - start, weights=mass)
    q_bin = np.bincount(index - start, weights=mass * np.exp(-loss))
    filled = p_bin > 0
    deviation = np.full(p_bin.size, np.inf)
    deviation[filled] = np.log(p_bin[filled]) - np.log(q_bin[filled]) - (start + np.flatnonzero(filled)) * spacing
    offset = _best_offset(deviation[filled], p_bin[filled] / p_bin[filled].sum(), spacing)
    target = np.arange(p_bin.size) - (deviation < offset)  # light bins that deviate more: one step lower
    pmf = np.bincount(target[filled] + 1, weights=p_bin[filled], minlength=p_bin.size + 1)
    return _trimmed(GridPMF(spacing, start - 1, offset, pmf, model.infinity_mass))


def _best_offset(deviation, weight, spacing):
    r"""The offset o minimising the mean downward shift :math:`-o + \Delta\,P[\text{deviation} < o]` (bins
    deviating below o move one more grid step down); o is at most the smallest deviation of any bin
    holding a fraction 1e-3 or more of the mass."""
    order = np.argsort(deviation)
    candidates, below = deviation[order], np.cumsum(weight[order]) - weight[order]
    allowed = candidates <= candidates[np.argmax(weight[order] >= 1e-3 * weight.max())]
    cost = -candidates + spacing * below
    cost[~allowed] = np.inf
    return float(min(candidates[np.argmin(cost)], 0.5 * spacing))


def _trimmed(g):
    """Drop exact zeros at both ends."""
    nonzero = np.flatnonzero(g.pmf > 0)
    if nonzero.size == 0:
        return GridPMF(g.spacing, 0, g.offset, np.zeros(1), g.infinity_mass)
    first, last = nonzero[0], nonzero[-1]
    return GridPMF(g.spacing, g.start + int(first), g.offset, g.pmf[first:last + 1].copy(), g.infinity_mass)
