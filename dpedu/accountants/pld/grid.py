r"""Choosing the grids of a PLD computation, before any FFT (``docs/math.md §15.9``).

**One spacing per ledger entry, all powers of two.** Connect the dots on a grid :math:`2\Delta` dominates connect the
dots on :math:`\Delta`: every coarse point is a fine point, and splitting a loss onto the fine grid and then onto the
coarse one puts the same P- and Q-mass on the same two coarse points as splitting it onto the coarse grid directly.
So each entry (one event, counted ``count`` times) gets a spacing :math:`2^{-k}` that depends only on the event and
its count and never gets finer as the count grows (:func:`entry_spacing`). A PMF on a grid :math:`2^{j}\Delta` sits
exactly on the grid :math:`\Delta` (zeros in between), so the entries are composed on the finest of their grids with
no second discretisation. Adding an event to the ledger then convolves one more dominating PMF into the others,
unchanged: the pessimistic epsilon can only grow.

**A floor from the size.** So that one tiny event (a Laplace release with :math:`\varepsilon = 10^{-9}`) cannot ask
for an enormous grid, no entry is discretised finer than :func:`size_floor`: the composed range of the whole
ledger spread over ``max_grid_size / 4`` points. The range only grows with the ledger, so the floor never gets
finer when events are added. An entry that the floor coarsens is reported (``coarsened``) unless its own scale is
negligible beside the ledger's.

>>> entry_spacing(0.5, 1.0, 1, 1e-3)      # one Gaussian release with z = 1: 0.0507, so 2^-4
0.0625
>>> dyadic_floor(0.1), dyadic_ceil(0.1)
(0.0625, 0.125)
"""

from __future__ import annotations

import math

__all__ = ["DEFAULT_ACCURACY", "MAX_GRID", "HARD_MAX_GRID", "OPTIMISTIC_REFINEMENT", "dyadic_floor", "dyadic_ceil",
           "entry_spacing", "entry_span", "size_floor"]

DEFAULT_ACCURACY = 1e-3  # target relative error of epsilon (pessimistic minus true), see entry_spacing
MAX_GRID, HARD_MAX_GRID = 2**22, 2**24  # FFT points; 2^22 points need about 200 MB at the peak
OPTIMISTIC_REFINEMENT = 4  # the optimistic estimate's grid is up to this many times finer (automatic grids only)
COARSEST = 2.0**-4  # no automatic spacing above 1/16 unless the size floor asks for it


def dyadic_floor(x):
    """The largest power of two at most ``x`` (> 0)."""
    return 2.0 ** math.floor(math.log2(x))


def dyadic_ceil(x):
    """The smallest power of two at least ``x`` (> 0)."""
    return 2.0 ** math.ceil(math.log2(x))


def entry_spacing(mean, variance, count, accuracy, atom=None):
    r"""Grid spacing (the nearest power of two) for ``count`` copies of an event whose loss has ``mean`` and ``variance``.

    Connect the dots adds, per event, about :math:`\Delta^2/12` to the mean loss and :math:`\Delta^2/6` to its
    variance. Over :math:`c` copies, with composed mean :math:`m = c\mu` and standard deviation :math:`s =
    \sqrt c\,\sigma`, epsilon near :math:`m + 6s` moves by about :math:`c\Delta^2(1 + 6/s)/12`; we ask for at most
    ``accuracy`` times :math:`|m| + s`:

    .. math:: \Delta^2 \le f(c) = \frac{12\,a\,(c|\mu| + \sqrt c\,\sigma)}{c\,(1 + 6/(\sqrt c\,\sigma))}.

    With :math:`x = \sqrt c`, :math:`f = 12a(x|\mu| + \sigma)/(x + 6/\sigma)` is monotone in :math:`c`, so
    :math:`\min(f(c), f(\infty) = 12a|\mu|)` is the smallest value at any count from :math:`c` on: the spacing
    never gets finer as the count grows. It is also at most a quarter of one event's standard deviation,
    at most 1/16, and, for events with atoms at :math:`\pm\varepsilon` (``atom``), at most
    :math:`a\,\varepsilon\sqrt c` (an atom between grid points is split; its error fades with composition).
    """
    sd = math.sqrt(variance)
    if sd == 0.0:  # all mass on one loss value
        return COARSEST
    x = math.sqrt(count)
    bound = min(12.0 * accuracy * (x * abs(mean) + sd) / (x + 6.0 / sd), 12.0 * accuracy * abs(mean))
    spacing = min(math.sqrt(bound) if bound > 0 else math.inf, 0.25 * sd, COARSEST)
    if atom is not None:
        spacing = min(spacing, accuracy * atom * x)
    return dyadic_floor(math.sqrt(2.0) * spacing)  # the power of two nearest to it (by ratio)


def entry_span(mean, variance, loss_range, count, tail):
    r"""A planning estimate of the range of losses ``count`` copies cover outside ``tail`` of mass (loss units).

    :math:`c|\mu| + 2k\sqrt c\,\sigma + r` with :math:`k = \sqrt{2\ln(1/\tau)}` (a Gaussian tail) and :math:`r`
    one event's range; never decreasing in the count. Only a starting point: the sizes are measured on the
    discretised PMFs before any FFT, and the floor is raised when they do not fit.
    """
    k = math.sqrt(2.0 * math.log(1.0 / tail))
    return count * abs(mean) + 2.0 * k * math.sqrt(count * variance) + loss_range


def size_floor(spans, max_grid_size):
    """The finest spacing (a power of two) at which the summed ``spans`` fit in ``max_grid_size / 4`` points."""
    return dyadic_ceil(max(sum(spans), 1e-300) / (max_grid_size / 4))
