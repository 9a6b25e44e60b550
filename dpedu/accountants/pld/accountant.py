r"""The PLD accountant: the ledger's privacy curves (:mod:`.ledger`), read off as epsilon or delta.

See the package docstring (:mod:`dpedu.accountants.pld`) for what is computed and ``docs/math.md §15`` for the
theory.
"""

from __future__ import annotations

import math

import numpy as np

from ...ground.events import (
    ADD_REMOVE, REPLACE_ONE, EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, SampledWithoutReplacementGaussianEvent,
    ShuffledBatchGaussianEvent, SubsampledGaussianEvent, TruncatedPoissonGaussianEvent
)
from ...ground.events_last_iterate import LAST_ITERATE_CAVEAT, LinearLastIterateEvent
from ...ground.events_allocation import BallsInBinsGaussianEvent
from ...ground.gaussian import gaussian_delta_exact, gaussian_epsilon_exact
from ...ground.validation import check_delta, check_epsilon, check_in_interval, check_positive, check_positive_int
from ..base import Accountant, check_epsilons
from . import grid
from .grid import HARD_MAX_GRID, MAX_GRID
from .ledger import composed_curves, group_ledger

__all__ = ["PLDAccountant"]


class PLDAccountant(Accountant):
    r"""Privacy-loss-distribution accountant: connect-the-dots upper bound, grid-binning lower bound.

    Supports :class:`GaussianEvent` (in closed form), :class:`SubsampledGaussianEvent` (Poisson,
    add/remove: both directions, the worse reported, ``docs/math.md §15.2``; replace-one: the symmetric
    pair of ``docs/math.md §22.4``), :class:`TruncatedPoissonGaussianEvent` (both relations: a two-branch mixture,
    ``docs/math.md §22.7``), :class:`~dpedu.ground.events_allocation.BallsInBinsGaussianEvent` (random allocation under
    add/remove: both directions of one epoch's pair, discretised in convex order, ``docs/math.md §22.9``),
    :class:`LaplaceEvent`, :class:`EpsilonDeltaEvent` (through Kairouz, Oh & Viswanath's dominating pair, 2015,
    Thm 3.3) and :class:`~dpedu.ground.events_last_iterate.LinearLastIterateEvent` (add/remove, both directions: a binomial
    mixture of Gaussians, ``docs/math.md §28.2``; exact for linear losses, a heuristic otherwise, which ``caveat``
    says).

    Parameters
    ----------
    accuracy : float or None
        Target relative error of the pessimistic epsilon; sets each entry's grid
        (:func:`~dpedu.accountants.pld.grid.entry_spacing`). ``None``: the default 1e-3, coarsened (with a
        ``caveat``) when the grid would exceed ``max_grid_size``; an explicit accuracy that needs more raises
        ``ValueError``. Ignored when ``discretization`` is given.
    discretization : float or None
        A fixed grid spacing :math:`\Delta` for every entry instead (exact: no coarsening, refused when too fine).
    tail_mass : float, default 1e-18
        Mass each ledger entry may discard by truncation: a quarter of it per Chernoff cut side and per
        side of one event's range (pessimistic: added to :math:`\delta` as mass at :math:`+\infty`). Deltas
        below about ``100 * tail_mass`` times the number of entries cannot be certified.
    max_grid_size : int, default 2^22
        Largest FFT allowed (memory about 50 bytes per point); a requested accuracy that needs more
        raises ``ValueError``.
    pessimistic : bool, default True
        ``False`` reports the optimistic estimate: a lower bound, not a privacy guarantee. Without an explicit
        ``discretization`` the optimistic estimate uses a grid up to ``OPTIMISTIC_REFINEMENT`` (4) times finer
        than the pessimistic one (as fine as ``max_grid_size`` allows): any grid gives a lower bound, and its
        error, T times a per-event shift of second order (``docs/math.md §15.7``), shrinks 16-fold.

    Notes
    -----
    Doroshenko, Ghazi, Kamath, Kumar & Manurangsi (2022); Koskela, Jälkö & Honkela (2020); Gopi, Lee &
    Wutschitz (2021). ``epsilon_bracket`` and ``delta_bracket`` give both bounds.
    """

    name = "pld"
    supported_events = (GaussianEvent, SubsampledGaussianEvent, LaplaceEvent, EpsilonDeltaEvent,
                        TruncatedPoissonGaussianEvent, BallsInBinsGaussianEvent, LinearLastIterateEvent)
    # replace-one: docs/math.md §22.4; truncated Poisson, both relations: §22.7; the last iterate: add/remove, §28.2
    relations = {SubsampledGaussianEvent: (ADD_REMOVE, REPLACE_ONE),
                 TruncatedPoissonGaussianEvent: (ADD_REMOVE, REPLACE_ONE)}
    unsupported_reasons = {
        (LinearLastIterateEvent, REPLACE_ONE): (
            "under replace-one the sampled last iterate has no one-dimensional dominating pair here (the two "
            "records' gradients need not be opposite, and their count K is shared); account it under add/remove "
            "(docs/math.md §28.2)"
        ),
        SampledWithoutReplacementGaussianEvent: (
            "no dominating pair for fixed-size sampling without replacement is implemented here; under "
            "replace-one the 'rdp' accountant bounds it (docs/math.md §22.3)"
        ),
        ShuffledBatchGaussianEvent: (
            "fixed-size batches from a shuffled pass have no known dominating pair, and the Poisson-"
            "subsampling PLD does not cover them (docs/math.md §1.3)"
        ),
        (BallsInBinsGaussianEvent, REPLACE_ONE): (
            "the random-allocation pair (docs/math.md §22.8, §22.9) is proven under add/remove only; under "
            "replace-one what is proven here is no amplification: each epoch changes one batch's sum by at most "
            "2C, so it is at most one Gaussian release, GaussianEvent(z, relation='replace_one') per epoch"
        ),
    }

    def __init__(self, *, accuracy=None, discretization=None, tail_mass=1e-18, max_grid_size=MAX_GRID,
                 pessimistic=True):
        super().__init__()
        self.accuracy = None if accuracy is None else check_in_interval(accuracy, "accuracy", 0.0, 0.1, low_open=True)
        self.discretization = None if discretization is None else check_positive(discretization, "discretization")
        self.tail_mass = check_in_interval(tail_mass, "tail_mass", 0.0, 1e-3, low_open=True)
        max_grid_size = check_positive_int(max_grid_size, "max_grid_size")
        if not 2**8 <= max_grid_size <= HARD_MAX_GRID:
            raise ValueError(f"max_grid_size must be in [256, {HARD_MAX_GRID}]; got {max_grid_size}")
        self.max_grid_size = max_grid_size
        if not isinstance(pessimistic, bool):
            raise TypeError(f"pessimistic must be True or False; got {pessimistic!r}")
        self.pessimistic = pessimistic

    # ---- the composed curves (pure functions of the ledger: a query changes nothing) ------------------

    @property
    def caveat(self):
        """What to know about the numbers: the optimistic estimate is no guarantee; a coarsened grid is looser; a
        linear-loss last iterate is a heuristic for any other loss."""
        notes = []
        if any(isinstance(event, LinearLastIterateEvent) for event, _ in self.ledger):
            notes.append(LAST_ITERATE_CAVEAT)
        if not self.pessimistic:
            notes.append("optimistic PLD: a LOWER bound on epsilon, not a privacy guarantee")
        elif self._closed_form_mu() is None and self.ledger and self._composition(True).coarsened:
            notes.append(f"PLD grid coarsened to fit max_grid_size={self.max_grid_size}: looser than the default "
                         f"accuracy (see epsilon_bracket)")
        return "; ".join(notes) or None

    def _composition(self, pessimistic):
        mu2, entries = group_ledger(self.ledger)
        options = (self.accuracy, self.discretization, self.tail_mass, self.max_grid_size)
        return composed_curves(mu2, entries, options, pessimistic, grid.OPTIMISTIC_REFINEMENT)

    def _curves(self, pessimistic):
        """One :class:`PrivacyCurve` per direction, or None for a ledger of Gaussians (closed form)."""
        return None if self._closed_form_mu() is not None else list(self._composition(pessimistic).curves)

    def _closed_form_mu(self):
        mu2, entries = group_ledger(self.ledger)
        return None if entries else math.sqrt(mu2)

    # ---- answers ------------------------------------------------------------------------------------

    def _epsilon_at(self, delta, pessimistic):
        mu = self._closed_form_mu()
        if mu is not None:
            return gaussian_epsilon_exact(delta, 1.0 / mu)
        curves = self._curves(pessimistic)
        epsilon = max(curve.epsilon(delta) for curve in curves)
        if math.isinf(epsilon) and pessimistic:
            self._refuse(delta, curves)
        return epsilon

    def _refuse(self, delta, curves):
        """Why no finite epsilon is certified at ``delta`` (docs/math.md §15.10): below the events' own mass at
        infinity there is none (``inf`` is returned, as dp_accounting does); otherwise a ``ValueError`` naming the
        real cause, the FFT round-off bound or the truncated tails, with its size and what to do."""
        log_no_inf = sum(c * math.log1p(-e.delta) for e, c in self.ledger if isinstance(e, EpsilonDeltaEvent))
        own = max(0.0, -math.expm1(log_no_inf))
        if delta < own:
            return                                          # the events' deltas alone exceed it: epsilon = inf
        for curve in curves:
            if curve.roundoff_in_the_way(delta):
                raise ValueError(
                    f"PLD cannot certify delta={delta:g} below the top of its grid: the bound on its FFT round-off, "
                    f"{curve.roundoff:.2g}, is more than delta leaves after the mass at +infinity without it "
                    f"({curve.top_infinity:.2g}); only epsilon = {curve.top_loss:.6g}, where no round-off can sit, "
                    f"is certified. Pass a delta of at least {curve.infinity_mass:.15g} (the round-off bound more than "
                    f"the mass at +infinity), or use an accountant without FFT round-off (e.g. 'rdp')")
        tails = max(0.0, max(curve.top_infinity for curve in curves) - own)
        raise ValueError(f"PLD cannot certify delta={delta:g}: the mass its truncation puts at +infinity ({tails:.2g} "
                         f"beyond the events' own {own:.2g}) exceeds what delta allows; pass a smaller tail_mass "
                         f"(now {self.tail_mass:g}) or a larger delta")

    def _delta_at(self, epsilon, pessimistic):
        mu = self._closed_form_mu()
        if mu is not None:
            return np.array([gaussian_delta_exact(e, 1.0 / mu) for e in np.ravel(epsilon)]).reshape(np.shape(epsilon))
        return np.max([curve.delta(epsilon) for curve in self._curves(pessimistic)], axis=0)

    def _epsilon(self, delta):
        return self._epsilon_at(delta, self.pessimistic)

    def _deltas(self, epsilons):
        return self._delta_at(epsilons, self.pessimistic)

    def get_deltas(self, epsilons):
        """Smallest certified delta at each of ``epsilons`` (a 1-D array of values > 0): an array.

        The same as ``get_delta`` with an array, under the argument name ``epsilons``.
        """
        values = check_epsilons(epsilons, "epsilons")
        return self.get_delta(values)

    def epsilon_bracket(self, delta):
        """``(optimistic, pessimistic)`` epsilon at ``delta``: the ledger's true epsilon lies in between.

        The width is the discretisation error; it shrinks like the square of the grid spacing.
        """
        delta = check_delta(delta)
        if not self.ledger:
            return 0.0, 0.0
        return self._epsilon_at(delta, False), self._epsilon_at(delta, True)

    def roundoff_bound(self):
        """The bound on the FFT round-off that the pessimistic delta carries at every epsilon (docs/math.md §15.8);
        0 for a ledger of Gaussians (closed form) or an empty one."""
        curves = self._curves(True) if self.ledger else None
        return 0.0 if not curves else max(float(getattr(curve, "roundoff", 0.0)) for curve in curves)

    def delta_bracket(self, epsilon):
        """``(optimistic, pessimistic)`` delta at ``epsilon`` (scalar or array): the true delta lies in between."""
        epsilon = check_epsilon(epsilon) if np.ndim(epsilon) == 0 else check_epsilons(epsilon)
        if not self.ledger:
            return 0.0, 0.0
        low, high = self._delta_at(epsilon, False), self._delta_at(epsilon, True)
        return (float(low), float(high)) if np.ndim(epsilon) == 0 else (low, high)
