r"""From a ledger to its privacy curves: group the entries, plan the grids, discretise, compose.

:func:`group_ledger` merges all Gaussian releases into one Gaussian (``docs/math.md §15.8``) and sorts the other
entries, so the answer does not depend on the order of the ledger. :func:`composed_curves` is a pure function of
the grouped ledger and the options (cached), so asking a question never changes the accountant: it plans one
spacing per entry (:mod:`.grid`), discretises each entry on its grid, measures the FFT sizes this needs
*before* any FFT (raising the size floor while they do not fit), then composes each entry by one FFT and all
entries on the finest of their grids. Poisson subsampling has two directions (``docs/math.md §15.2``): each
gives one :class:`~.compose.PrivacyCurve`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from ...ground.events import EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, SubsampledGaussianEvent
from ...ground.events_allocation import BallsInBinsGaussianEvent
from . import grid
from .compose import PrivacyCurve, chernoff_window, convolve, on_finer_grid, self_compose, self_compose_size
from .truncated import discretise, model_for, model_moments, model_range, scenarios

__all__ = ["is_gaussian", "group_ledger", "Composition", "composed_curves"]

_MAX_DOUBLINGS = 80  # the size floor doubles at most this often (2^80: any finite range fits by then)


def is_gaussian(event):
    """A full-batch Gaussian release (composes in closed form): balls-in-bins with one batch per epoch is one."""
    return (isinstance(event, GaussianEvent) or (isinstance(event, SubsampledGaussianEvent) and event.sampling_rate == 1)
            or (isinstance(event, BallsInBinsGaussianEvent) and event.batches_per_epoch == 1))


def group_ledger(ledger):
    """``(mu2, ((event, count), ...))``: the Gaussians' :math:`\\mu^2 = \\sum c/z^2` and the other entries, merged and
    sorted."""
    counts, mu2 = {}, 0.0
    for event, count in ledger:
        if is_gaussian(event):
            mu2 += count / event.noise_multiplier**2
        else:
            counts[event] = counts.get(event, 0) + count
    return mu2, tuple(sorted(counts.items(), key=lambda item: repr(item[0])))


@dataclass(frozen=True)
class Composition:
    """The curves of one ledger (one per direction) and whether a grid had to be coarser than the accuracy asked."""

    curves: tuple
    coarsened: bool


def _atom(event):
    return event.epsilon if isinstance(event, (LaplaceEvent, EpsilonDeltaEvent)) else None


def _snap_to_atoms(spacing, events):
    """Shrink ``spacing`` so the atoms of pure events (+-epsilon) lie on grid points where possible
    (exactly for the smallest epsilon and its multiples); at most 2^20 grid steps per atom."""
    atoms = sorted({e.epsilon for e in events if isinstance(e, (LaplaceEvent, EpsilonDeltaEvent))})
    atoms = [a for a in atoms if a >= spacing]  # an atom finer than the grid is split, never refines it
    if not atoms:
        return spacing
    return atoms[0] / max(1, min(math.ceil(atoms[0] / spacing - 1e-9), 2**20))


def _discretise(models, counts, spacings, tail, pessimistic, max_size):
    """Per entry ``(pmf, count, window)`` on its spacing, and the largest FFT the composition will need."""
    parts, sizes = [], []
    for model, count, spacing in zip(models, counts, spacings):
        g = discretise(model, spacing, pessimistic, max_size)
        window = chernoff_window([(g, count)], tail) if count > 1 else (0, g.pmf.size - 1)
        parts.append((g, count, window))
        sizes.append(self_compose_size(g, count, window))
    common = min(spacings)
    linear = sum((w[1] - w[0]) * round(s / common) for (_, _, w), s in zip(parts, spacings)) + 1
    return parts, max(sizes + [linear])


def _plan(models, counts, events, options, tail):
    """``(own, floor, matters)``: each entry's spacing for the accuracy, the size floor (None: one fixed grid for
    all entries, ``own[0]``) and which entries matter (their own scale is not negligible beside the largest)."""
    accuracy, discretization, _, max_size = options
    a = accuracy or grid.DEFAULT_ACCURACY
    moments = [model_moments(m) for m in models]
    if discretization is not None or all(isinstance(e, EpsilonDeltaEvent) for e in events):
        # a fixed spacing, or pure events only, whose atoms are put on the grid (exact)
        spacing = discretization or min(grid.entry_spacing(m, v, c, a) for (m, v), c in zip(moments, counts))
        return [spacing] * len(models), None, [True] * len(models)
    own = [grid.entry_spacing(m, v, c, a, _atom(e)) for (m, v), c, e in zip(moments, counts, events)]
    spans = [grid.entry_span(m, v, model_range(model), c, tail) for (m, v), c, model in zip(moments, counts, models)]
    scales = [c * abs(m) + math.sqrt(c * v) for (m, v), c in zip(moments, counts)]
    return own, grid.size_floor(spans, max_size), [s >= a * max(scales) for s in scales]


def _curve(models, counts, events, options, pessimistic, tail, refinement):
    """The :class:`PrivacyCurve` of one direction and whether its grid is coarser than the accuracy asked.

    The sizes are measured on the discretised PMFs before any FFT; while they exceed ``max_grid_size`` the
    optimistic estimate gives up its refinement first, then the size floor (or, for the default accuracy, the
    one fixed grid) doubles. An explicit accuracy or discretization that does not fit is refused.
    """
    accuracy, discretization, _, max_size = options
    own, floor, matters = _plan(models, counts, events, options, tail)
    refine = refinement if not pessimistic and discretization is None else 1
    fixed, coarsened = floor is None, False
    for _ in range(_MAX_DOUBLINGS):
        if fixed:
            spacings = [own[0] if discretization is not None else _snap_to_atoms(own[0] / refine, events)] * len(own)
        else:
            # an entry that does not matter may be as coarse as the ledger's range over max_grid_size / 256 points
            spacings = [max(o, floor if m else 64 * floor) for o, m in zip(own, matters)]
            if not pessimistic:  # a lower bound needs no monotonicity: one grid, finer, with the atoms on it
                spacings = [_snap_to_atoms(min(spacings) / refine, events)] * len(own)
        if all(model_range(m) / s + 3 <= max_size for m, s in zip(models, spacings)):
            parts, size = _discretise(models, counts, spacings, tail, pessimistic, max_size)
        else:
            size = math.inf
        if size <= max_size:
            break
        if refine > 1:
            refine //= 2
        elif fixed and (discretization is not None or accuracy is not None):
            raise ValueError(f"the PLD grid for this ledger needs more than max_grid_size={max_size} FFT points; "
                             f"pass a coarser discretization, a larger accuracy or a larger max_grid_size")
        elif fixed:
            own, coarsened = [2.0 * own[0]] * len(own), True
        else:
            floor *= 2.0
    else:
        raise ValueError(f"no PLD grid of at most max_grid_size={max_size} points holds this ledger")
    if not fixed:
        coarsened = any(floor > o and m for o, m in zip(own, matters))
    if coarsened and accuracy is not None:
        raise ValueError(f"the requested accuracy={accuracy:g} needs more than max_grid_size={max_size} FFT points; "
                         f"pass a larger accuracy or a larger max_grid_size")
    common = min(spacings)
    total = None
    for g, count, window in parts:
        part = on_finer_grid(self_compose(g, count, tail, pessimistic, max_size, window), common)
        total = part if total is None else convolve(total, part, pessimistic)
    return PrivacyCurve(total), coarsened


@functools.lru_cache(maxsize=2)  # the two estimates of the last ledger (a curve may hold millions of points)
def composed_curves(mu2, entries, options, pessimistic, refinement=grid.OPTIMISTIC_REFINEMENT):
    """:class:`Composition` of the grouped ledger ``(mu2, entries)`` (see :func:`group_ledger`) under ``options``
    ``(accuracy, discretization, tail_mass, max_grid_size)``; ``pessimistic`` picks connect the dots or binning,
    ``refinement`` how much finer the optimistic grid may be."""
    if mu2 > 0:  # all Gaussians as one (docs/math.md §15.8)
        entries = entries + ((GaussianEvent(1.0 / math.sqrt(mu2)), 1),)
    events, counts = [e for e, _ in entries], [c for _, c in entries]
    # both directions under add/remove (replace-one's pairs are symmetric, docs/math.md §22.4), and for truncated
    # Poisson both sizes of the dataset holding the record (docs/math.md §22.7)
    cases = scenarios(events)
    tail = options[2] / 4  # per cut side, whatever the ledger (so adding an event never lowers another's bound)
    curves, coarsened = [], False
    for direction, extra in cases:
        models = [model_for(e, direction, extra, tail / (2 * c), options[3]) for e, c in entries]
        curve, flag = _curve(models, counts, events, options, pessimistic, tail, refinement)
        curves.append(curve)
        coarsened = coarsened or flag
    return Composition(tuple(curves), coarsened)
