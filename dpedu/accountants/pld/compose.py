r"""Composing discretised PLDs, and reading :math:`\delta(\varepsilon)` and :math:`\varepsilon(\delta)` off the result.

* :func:`self_compose` — T copies of one event with **one** FFT: transform the PMF, raise the spectrum to
  the T-th power, transform back (``docs/math.md §15.8``). The T-fold sum lives on at most
  :math:`T(n-1)+1` grid points; we keep only a window :math:`[\ell_{lo}, \ell_{hi}]` that Chernoff's bound
  :math:`P[S \ge u] \le e^{T \ln M(t) - tu}` (M the moment generating function of one step) proves holds all
  but ``tail`` of the mass on each side. The discarded mass is *never dropped* in the pessimistic case: its
  bound goes to :math:`+\infty`. The FFT is circular: it holds the window and a margin of an eighth of it,
  and the PMF is folded onto its points (index mod its size), which leaves the circular convolution unchanged.
  Mass outside the window (at most ``tail`` per side) wraps into the margin, which is discarded (pessimistically,
  also counted at :math:`+\infty`), or onto window points, where extra mass can only raise :math:`\delta`.
* :func:`convolve` — two different PLDs by one linear (zero-padded) FFT convolution, on one grid
  (:func:`on_finer_grid` puts a PMF on a grid that refines its own, exactly).
* :class:`PrivacyCurve` — :math:`\delta(\varepsilon) = m_\infty + \sum_{\ell_i>\varepsilon} p_i (1-e^{\varepsilon-\ell_i})`
  from suffix sums, and its exact inverse on each segment between grid losses.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft as sp_fft

from .losses import GridPMF
from .roundoff import composed_spectrum, convolve_bound, self_compose_bound

__all__ = ["chernoff_window", "self_compose", "self_compose_size", "on_finer_grid", "convolve", "PrivacyCurve"]


def _log_mgf(pmf, t_values):
    r""":math:`\ln \sum_k p_k e^{tk}` for each :math:`t > 0` in ``t_values``, with few exponentials.

    The indices are cut into blocks of B points, :math:`k = Bi + j`: then
    :math:`\sum_k p_k e^{tk} = \sum_i e^{t(Bi + B - 1)} \sum_j p_{Bi+j} e^{t(j - B + 1)}`, one matrix product for
    the inner sums and a log-sum-exp over the blocks. B is small enough that :math:`e^{-t(B-1)}` stays far above
    underflow, so no term is lost.
    """
    block = int(min(1024, max(1, 700.0 / float(t_values.max()))))
    rows = -(-pmf.size // block)
    padded = np.zeros(rows * block)
    padded[:pmf.size] = pmf
    # einsum, not BLAS: on a thin product BLAS threads cost more than they save on a busy machine
    powers = np.exp(np.outer(np.arange(block) - (block - 1), t_values))
    inner = np.einsum("ij,jk->ik", padded.reshape(rows, block), powers)
    with np.errstate(divide="ignore"):  # empty blocks: log 0 = -inf, dropped by the sum
        log_terms = np.log(inner) + np.outer(np.arange(rows) * block + (block - 1), t_values)
    top = log_terms.max(axis=0)
    return top + np.log(np.exp(log_terms - top).sum(axis=0))


def chernoff_window(pmfs_and_counts, tail):
    r"""``(low, high)``: index bounds (relative to the sum of the parts' ``start``) outside which the
    composed PMF holds at most ``tail`` of mass on each side.

    Chernoff: :math:`P[S - c \ge u] \le \exp(\sum_e T_e \ln M_e(t) - tu)` for every t > 0 (c the
    composed mean, :math:`M_e` the moment generating function of one centred step), minimised over t
    (12 values, then 9 around the best); the same with :math:`-S` for the lower side.
    """
    parts, centre, variance, span = [], 0.0, 0.0, 0
    for g, count in pmfs_and_counts:
        k = np.arange(g.pmf.size, dtype=float)
        total = g.pmf.sum()
        mean = float(np.sum(g.pmf * k) / total)  # sums, not BLAS dot products (threads: see _log_mgf)
        centre += count * mean
        variance += count * float(np.sum(g.pmf * (k - mean) ** 2) / total)
        span += count * (g.pmf.size - 1)
        parts.append((count, g.pmf, mean))
    scale = math.sqrt(max(variance, 1e-12))
    bounds = []
    for sign in (1.0, -1.0):
        def bound(t_values):
            log_mgf = np.zeros_like(t_values)
            for count, pmf, mean in parts:  # the lower side is the upper side of the reversed PMF
                shift = mean if sign > 0 else pmf.size - 1 - mean
                log_mgf += count * (_log_mgf(pmf if sign > 0 else pmf[::-1], t_values) - t_values * shift)
            values = (log_mgf - math.log(tail)) / t_values
            return float(values.min()), float(t_values[np.argmin(values)])

        coarse, best_t = bound(np.geomspace(1e-3, 40.0, 12) / scale)  # per grid index
        bounds.append(min(coarse, bound(best_t * np.geomspace(0.5, 2.0, 9))[0]))
    return max(0, math.floor(centre - bounds[1])), min(span, math.ceil(centre + bounds[0]))


def self_compose_size(g, count, window):
    """FFT points :func:`self_compose` needs for ``count`` copies of ``g`` with the Chernoff ``window``."""
    if count == 1:
        return g.pmf.size
    width = window[1] - window[0] + 1
    return sp_fft.next_fast_len(width + width // 8, real=True)


def self_compose(g, count, tail, pessimistic, max_size, window=None):
    """The PMF of ``count`` independent copies of ``g``: one FFT, the spectrum to the power ``count``.

    ``window`` is ``chernoff_window([(g, count)], tail)`` when already known. Raises ``ValueError`` when the
    window needs more than ``max_size`` points (the accountant plans its grids so that this does not happen).
    """
    if count == 1:
        return g
    low, high = window if window is not None else chernoff_window([(g, count)], tail)
    width = high - low + 1
    size = self_compose_size(g, count, (low, high))
    if size > max_size:
        raise ValueError(f"composing {count} events needs an FFT of {size} points, more than max_grid_size="
                         f"{max_size}; pass a coarser discretization, a larger accuracy or a larger max_grid_size")
    # the PMF folded onto `size` points (index mod size) has the same `size`-point transform
    folded = np.pad(g.pmf, (0, -g.pmf.size % size)).reshape(-1, size).sum(axis=0)
    # the pessimistic spectrum in extended precision where there is one (docs/math.md §15.8)
    spectrum, error, rest = composed_spectrum(folded, count, None if pessimistic else np.float64)
    circular = sp_fft.irfft(spectrum, size)  # the composed PMF, index mod size
    out = np.roll(circular, -(low % size))  # from the window's first point on
    kept = np.maximum(out[:width], 0.0)  # round-off below zero is no probability
    infinity = _composed_infinity(g.infinity_mass, count)
    roundoff, top = 0.0, None
    if pessimistic:
        cut = (tail if low > 0 else 0.0) + (tail if high < count * (g.pmf.size - 1) else 0.0)
        # at and above the window's top no round-off can sit: only the copies' own mass at +infinity and the
        # upper tail cut off (at most `tail`) count there (docs/math.md §15.10)
        top = min(_composed_infinity(g.infinity_beyond_top, count) + cut, 1.0)
        infinity += cut + float(np.maximum(out[width:], 0.0).sum()) * (cut > 0)
        # the FFT's round-off, bounded (docs/math.md §15.8): counted at +infinity
        bound = self_compose_bound(spectrum, error, size, width, rest)
        roundoff = count * g.roundoff + bound  # g's own is inside its infinity mass, composed above
        infinity += bound
    infinity = min(infinity, 1.0)
    return GridPMF(g.spacing, count * g.start + low, count * g.offset, kept, infinity, roundoff,
                   _slack(infinity, top))


def _slack(infinity, top):
    """``infinity - top``, rounded so that ``infinity - slack`` is never below ``top`` (0 when ``top`` is None)."""
    if top is None:
        return 0.0
    slack = max(infinity - top, 0.0)
    while slack > 0.0 and infinity - slack < top:
        slack = float(np.nextafter(slack, 0.0))
    return slack


def _composed_infinity(mass, count):
    """The mass at +infinity of ``count`` independent copies with ``mass`` each: :math:`1 - (1 - m)^T`."""
    log_finite = count * math.log1p(-mass) if mass < 1 else -math.inf
    return -math.expm1(log_finite)


def on_finer_grid(g, spacing):
    """``g`` on the grid ``spacing`` that refines its own (``g.spacing`` = 2^j ``spacing``): zeros in between, exact."""
    ratio = round(g.spacing / spacing)
    if ratio == 1:
        return g
    pmf = np.zeros((g.pmf.size - 1) * ratio + 1)
    pmf[::ratio] = g.pmf
    return GridPMF(spacing, g.start * ratio, g.offset, pmf, g.infinity_mass, g.roundoff, g.top_slack)


def convolve(a, b, pessimistic=True):
    """The PMF of the sum of independent losses from ``a`` and ``b`` (same spacing), by linear FFT convolution;
    ``pessimistic``: the FFT's round-off bound (docs/math.md §15.8) is added to the mass at infinity."""
    size = a.pmf.size + b.pmf.size - 1
    fft_size = sp_fft.next_fast_len(size, real=True)
    full = sp_fft.irfft(sp_fft.rfft(a.pmf, fft_size) * sp_fft.rfft(b.pmf, fft_size), fft_size)
    out = full[:size]
    infinity = a.infinity_mass + b.infinity_mass - a.infinity_mass * b.infinity_mass
    roundoff, top = 0.0, None
    if pessimistic:
        roundoff = a.roundoff + b.roundoff + convolve_bound(float(a.pmf.sum()), float(b.pmf.sum()), fft_size, size,
                                                            float(np.sqrt(np.sum(full**2))))
        infinity += roundoff - a.roundoff - b.roundoff  # theirs are in their infinity masses already
        # the output holds every sum of the two grids: at and above its top, only the two masses at +infinity
        # without round-off (docs/math.md §15.10)
        ta, tb = a.infinity_beyond_top, b.infinity_beyond_top
        top = min(ta + tb - ta * tb, 1.0)
    infinity = min(infinity, 1.0)
    return GridPMF(a.spacing, a.start + b.start, a.offset + b.offset, np.maximum(out, 0.0), infinity, roundoff,
                   _slack(infinity, top))


class PrivacyCurve:
    r"""The privacy curve of one composed PMF, for :math:`\varepsilon \ge 0`.

    With suffix sums :math:`A_k = \sum_{i\ge k} p_i` and :math:`B_k = \sum_{i \ge k} p_i e^{-\ell_i}` over the
    positive losses, :math:`\delta(\varepsilon) = m_\infty + A_k - e^{\varepsilon} B_k` for
    :math:`\ell_{k-1} \le \varepsilon < \ell_k`; on that segment the inverse is
    :math:`\varepsilon = \ln((m_\infty + A_k - \delta)/B_k)`, exact (no bisection). At and above the top grid loss
    ``top_loss`` no FFT round-off can sit, so there :math:`\delta = ` ``top_infinity``, the mass at
    :math:`+\infty` without the round-off bound (docs/math.md §15.10).
    """

    def __init__(self, g):
        loss = (float(g.start) + np.arange(g.pmf.size)) * g.spacing + g.offset  # floats: no integer overflow
        positive = (loss > 0) & (g.pmf > 0)
        self.loss, pmf = loss[positive], g.pmf[positive]
        self.spacing = g.spacing
        self.infinity_mass = g.infinity_mass
        self.roundoff = g.roundoff  # the FFT round-off bound inside infinity_mass (docs/math.md §15.8)
        self.top_loss = float(loss[-1])  # the array's top, whatever its computed mass: round-off sits below
        self.top_infinity = g.infinity_beyond_top
        self.suffix_mass = np.append(np.cumsum(pmf[::-1])[::-1], 0.0)
        with np.errstate(divide="ignore"):  # log of the Q-mass suffix sums: e^{-loss} underflows for huge losses
            log_q = np.log(pmf) - self.loss
        self.log_suffix_q = np.append(np.logaddexp.accumulate(log_q[::-1])[::-1], -np.inf)

    def _delta(self, epsilon, infinity):
        epsilon = np.asarray(epsilon, dtype=float)
        k = np.searchsorted(self.loss, epsilon, side="right")
        q_part = np.exp(epsilon + self.log_suffix_q[k])
        finite = np.maximum(self.suffix_mass[k] - q_part, 0.0)
        return np.minimum(infinity + finite, 1.0)

    def delta(self, epsilon):
        """:math:`\\delta(\\varepsilon)` for an array of epsilons >= 0."""
        epsilon = np.asarray(epsilon, dtype=float)
        return np.where(epsilon >= self.top_loss, self.top_infinity, self._delta(epsilon, self.infinity_mass))

    def _inverse(self, delta, infinity):
        """Smallest ε >= 0 with ``infinity`` + (the finite losses' part) <= ``delta`` (``inf`` if none)."""
        if self._delta(0.0, infinity) <= delta:
            return 0.0
        at_losses = self._delta(self.loss, infinity)  # non-increasing
        k = int(np.searchsorted(-at_losses, -delta, side="left"))  # first grid loss with delta(l_k) <= delta
        if k == self.loss.size:
            return math.inf  # only m_inf is left above the last loss, and it exceeds delta
        # epsilon lies in [l_{k-1}, l_k]; there the suffix starts at k
        remaining = infinity + self.suffix_mass[k] - delta
        epsilon = math.log(remaining) - self.log_suffix_q[k] if remaining > 0 else self.loss[k]
        lower = self.loss[k - 1] if k > 0 else 0.0
        return float(min(max(epsilon, lower), self.loss[k]))

    def roundoff_in_the_way(self, delta):
        """True when ``delta`` is below the mass at infinity with the round-off bound but not without it, and the
        curve without round-off would answer more than one grid step below the top: the round-off bound, not the
        ledger, is what leaves nothing below the top certifiable."""
        if not self.top_infinity <= delta < self.infinity_mass:
            return False
        return self._inverse(delta, self.top_infinity) < self.top_loss - self.spacing

    def epsilon(self, delta):
        r"""Smallest certified :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon) \le` ``delta`` (``inf`` if
        none). Between ``top_infinity`` and ``infinity_mass`` only the top grid loss is certified (no round-off
        reaches it); it is answered when the curve without round-off is within one grid step of it anyway (a ledger
        whose losses end there), else ``inf`` (:meth:`roundoff_in_the_way` says why)."""
        epsilon = self._inverse(delta, self.infinity_mass)
        if math.isinf(epsilon) and self.top_infinity <= delta and not self.roundoff_in_the_way(delta):
            return self.top_loss
        return epsilon
