r"""Privacy-loss-distribution (PLD) accounting: a tight, fast upper bound on epsilon, with its lower bound beside it.

**What a PLD is.** Run a mechanism on neighbouring datasets D and D'; its outputs have densities P and Q.
The *privacy loss* of an output x is :math:`L(x) = \ln(P(x)/Q(x))`. Draw x from P and L is a random
variable; its law is the PLD. It holds the whole privacy curve (``docs/math.md §15.1``)

.. math:: \delta(\varepsilon) = m_\infty + E[(1 - e^{\varepsilon - L})_+],

and composing mechanisms *adds* independent losses, so PLDs *convolve*.

**How it is computed here.**

1. *Exact where possible.* T Gaussian releases with multipliers :math:`z_i` compose to one Gaussian with
   :math:`\mu = \sqrt{\sum_i 1/z_i^2}` (Dong, Roth & Su 2019): a ledger of only Gaussians is answered by
   the closed form of :mod:`dpedu.gaussian`; in a mixed ledger they become one Gaussian event.
2. *Discretise each event on a grid* :math:`\{i\Delta\}` by **connect the dots** (Doroshenko et al. 2022;
   ``docs/math.md §15.7``): a loss :math:`\ell` between grid points :math:`\ell_i<\ell<\ell_{i+1}` splits its
   mass between the two so that both its P-mass and its Q-mass are kept. The result *dominates* the event
   (its curve lies above the true one), so every later answer is an upper bound, yet the error is of
   second order in :math:`\Delta`. Pure atoms (Laplace, (ε, 0) events) sit exactly on grid points.
   Beside it an *optimistic* PMF (outputs grouped into bins: post-processing, so a lower bound), on a grid
   up to ``OPTIMISTIC_REFINEMENT`` times finer, since its error grows like T times a second-order shift.
3. *Compose* T copies of one event by one FFT raised to the T-th power, keeping a Chernoff window whose
   discarded tails go to :math:`+\infty` (``docs/math.md §15.8``); different events by convolution.
4. *Read off* :math:`\delta(\varepsilon)`, and :math:`\varepsilon(\delta)` exactly between grid points.
   Poisson subsampling has two directions, *remove* and *add* (``docs/math.md §15.2``): each is composed
   over the whole ledger and the worse one is reported.

**A worked example.** One Laplace release with :math:`\varepsilon=1` has loss :math:`+1` with mass 1/2,
:math:`-1` with mass :math:`e^{-1}/2`, and a continuous part in between. With :math:`\Delta = 1/4`, the
atoms sit on the grid points 4 and -4, and a loss 0.1 between 0 and 0.25 goes up with weight
:math:`(1-e^{-0.1})/(1-e^{-0.25}) = 0.43` and down with 0.57. Two (1, 0) releases and one (2, 0) release
compose to a largest loss of exactly 4, so :math:`\delta(4) = 0`:

>>> from dpedu.accountants import EpsilonDeltaEvent
>>> acc = PLDAccountant().compose(EpsilonDeltaEvent(1.0), 2).compose(EpsilonDeltaEvent(2.0))
>>> float(acc.get_delta(4.0)), round(acc.get_epsilon(1e-10), 6)
(0.0, 4.0)
>>> from dpedu.accountants import SubsampledGaussianEvent
>>> acc = PLDAccountant().compose(SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01), 10_000)
>>> round(acc.get_epsilon(1e-5), 3)
0.947
>>> acc.get_delta([0.5, 1.0]).shape       # an array of epsilons: one delta each
(2,)
"""

from __future__ import annotations

import math

import numpy as np

from ...events import (ADD_REMOVE, REPLACE_ONE, EpsilonDeltaEvent, GaussianEvent, LaplaceEvent,
                       SampledWithoutReplacementGaussianEvent, ShuffledBatchGaussianEvent, SubsampledGaussianEvent,
                       TruncatedPoissonGaussianEvent)
from ...gaussian import gaussian_delta_exact, gaussian_epsilon_exact
from ...validation import check_delta, check_epsilon, check_in_interval, check_positive, check_positive_int
from ..base import Accountant, check_epsilons
from .compose import PrivacyCurve, convolve, self_compose
from .losses import connect_the_dots, grid_binning, loss_moments
from .replace_one import event_loss_model

__all__ = ["PLDAccountant", "MAX_GRID", "HARD_MAX_GRID", "DEFAULT_ACCURACY", "OPTIMISTIC_REFINEMENT"]

DEFAULT_ACCURACY = 1e-3  # target relative error of epsilon (pessimistic minus true), see _spacing
MAX_GRID, HARD_MAX_GRID = 2**22, 2**24  # FFT points; 2^22 points need about 200 MB at the peak
OPTIMISTIC_REFINEMENT = 4  # the optimistic estimate's grid is up to this many times finer (automatic grids only)


def _is_gaussian(event):
    return isinstance(event, GaussianEvent) or (isinstance(event, SubsampledGaussianEvent) and event.sampling_rate == 1)


def _spacing(models, counts, accuracy):
    r"""Grid spacing for a target relative error ``accuracy`` of epsilon.

    Connect the dots adds, per event, about :math:`\Delta^2/12` to the mean loss and :math:`\Delta^2/6` to
    its variance (a split over one grid step). Over :math:`T` events, with composed mean :math:`m` and
    standard deviation :math:`s`, epsilon near :math:`m + k s` (:math:`k \approx 6` at small delta) moves by
    about :math:`T\Delta^2(1 + k/s)/12`. We ask for at most ``accuracy`` times :math:`|m| + s`, a floor of
    epsilon for the deltas that matter, and never more than a quarter of the widest event's own spread.
    """
    moments = [loss_moments(m) for m in models]
    total = sum(counts)
    mean = sum(c * m for (m, _), c in zip(moments, counts))
    sd = math.sqrt(sum(c * v for (_, v), c in zip(moments, counts)))
    if sd == 0:  # only point masses (pure events): _snap_to_atoms puts them on the grid
        return 0.1
    spacing = math.sqrt(12.0 * accuracy * (abs(mean) + sd) / (total * (1.0 + 6.0 / sd)))
    return min(spacing, 0.25 * max(math.sqrt(v) for _, v in moments), 0.1)


def _snap_to_atoms(spacing, events):
    """Shrink ``spacing`` so the atoms of pure events (+-epsilon) lie on grid points where possible
    (exactly for the smallest epsilon and its multiples); at most 2^20 grid steps per atom."""
    atoms = sorted({e.epsilon for e in events if isinstance(e, (LaplaceEvent, EpsilonDeltaEvent))})
    atoms = [a for a in atoms if a >= spacing]  # an atom finer than the grid is split, never refines it
    if not atoms:
        return spacing
    return atoms[0] / max(1, min(math.ceil(atoms[0] / spacing - 1e-9), 2**20))


class GridTooLargeError(ValueError):
    """The grid a requested accuracy needs exceeds ``max_grid_size``."""


class PLDAccountant(Accountant):
    r"""Privacy-loss-distribution accountant: connect-the-dots upper bound, grid-binning lower bound.

    Supports :class:`GaussianEvent` (in closed form), :class:`SubsampledGaussianEvent` (Poisson,
    add/remove: both directions, the worse reported, ``docs/math.md §15.2``; replace-one: the symmetric
    pair of ``docs/math.md §22.4``), :class:`LaplaceEvent` and
    :class:`EpsilonDeltaEvent` (through Kairouz, Oh & Viswanath's dominating pair, 2015, Thm 3.3).

    Parameters
    ----------
    accuracy : float or None
        Target relative error of the pessimistic epsilon; sets the grid (``_spacing``). ``None``: the
        default 1e-3, coarsened (with a ``caveat``) when the grid would exceed ``max_grid_size``; an
        explicit accuracy that needs more raises ``ValueError``. Ignored when ``discretization`` is given.
    discretization : float or None
        A fixed grid spacing :math:`\Delta` instead (may be shrunk slightly to put pure atoms on the grid).
    tail_mass : float, default 1e-18
        Mass each Chernoff cut may discard per side (pessimistic: added to :math:`\delta` as mass at
        :math:`+\infty`). Deltas below about ``100 * tail_mass`` cannot be certified.
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
    supported_events = (GaussianEvent, SubsampledGaussianEvent, LaplaceEvent, EpsilonDeltaEvent)
    relations = {SubsampledGaussianEvent: (ADD_REMOVE, REPLACE_ONE)}  # replace-one: docs/math.md §22.4
    unsupported_reasons = {
        SampledWithoutReplacementGaussianEvent: (
            "no dominating pair for fixed-size sampling without replacement is implemented here; under "
            "replace-one the 'rdp' accountant bounds it (docs/math.md §22.3)"
        ),
        TruncatedPoissonGaussianEvent: (
            "a Poisson sample cut at a maximum batch size is not Poisson sampling, and dpedu implements no "
            "theorem for it (docs/math.md §22.5)"
        ),
        ShuffledBatchGaussianEvent: (
            "fixed-size batches from a shuffled pass have no known dominating pair, and the Poisson-"
            "subsampling PLD does not cover them (docs/math.md §1.3)"
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
        self.caveat = None if pessimistic else "optimistic PLD: a LOWER bound on epsilon, not a privacy guarantee"
        self._cache = {}

    # ---- the composed curves ----------------------------------------------------------------------

    def _entries(self):
        """The ledger grouped: (Gaussian mu^2, ((event, count), ...)) in a fixed order."""
        counts, mu2 = {}, 0.0
        for event, count in self.ledger:
            if _is_gaussian(event):
                mu2 += count / event.noise_multiplier**2
            else:
                counts[event] = counts.get(event, 0) + count
        return mu2, tuple(sorted(counts.items(), key=lambda item: repr(item[0])))

    def _curves(self, pessimistic):
        """One :class:`PrivacyCurve` per direction (cached until the ledger changes), or None (closed form)."""
        mu2, entries = self._entries()
        key = (mu2, entries, pessimistic)
        if key in self._cache:
            return self._cache[key]
        if not entries:
            return None
        if mu2 > 0:  # all Gaussians as one (docs/math.md §15.2)
            entries = entries + ((GaussianEvent(1.0 / math.sqrt(mu2)), 1),)
        directions = ["remove"]
        if any(isinstance(e, SubsampledGaussianEvent) and e.sampling_rate < 1 and e.relation == ADD_REMOVE
               for e, _ in entries):  # replace-one's pair is symmetric: one direction (docs/math.md §22.4)
            directions.append("add")
        n_cuts = 2 * len(entries)
        tail = self.tail_mass / n_cuts
        curves, coarsened = [], False
        for direction in directions:
            models = [event_loss_model(e, direction, tail / (2 * c)) for e, c in entries]
            counts = [c for _, c in entries]
            spacing = self.discretization or _spacing(models, counts, self.accuracy or DEFAULT_ACCURACY)
            # the optimistic estimate's error is a shift of T times its offset (docs/math.md §15.7), larger than
            # the pessimistic one's: on an automatic grid it is computed on a finer grid (any grid gives a
            # lower bound), as fine as max_grid_size allows up to OPTIMISTIC_REFINEMENT
            refine = OPTIMISTIC_REFINEMENT if not pessimistic and self.discretization is None else 1
            while True:
                try:
                    curves.append(self._compose(models, counts, _snap_to_atoms(spacing / refine,
                                                                               [e for e, _ in entries]),
                                                tail, pessimistic))
                    break
                except GridTooLargeError:
                    if refine > 1:
                        refine //= 2
                        continue
                    if self.discretization is not None or self.accuracy is not None:
                        raise
                    spacing, coarsened = 4.0 * spacing, True  # the default accuracy is a target, not a demand
        if pessimistic and self.pessimistic:
            self.caveat = (f"PLD grid coarsened to fit max_grid_size={self.max_grid_size}: looser than the default "
                           f"accuracy (see epsilon_bracket)") if coarsened else None
        self._cache = {key: curves}
        return curves

    def _compose(self, models, counts, spacing, tail, pessimistic):
        """The :class:`PrivacyCurve` of the ledger ``models`` x ``counts`` on grid ``spacing`` (one direction)."""
        total = None
        for model, count in zip(models, counts):
            try:
                single = (connect_the_dots if pessimistic else grid_binning)(model, spacing, self.max_grid_size)
                part = self_compose(single, count, tail, pessimistic, self.max_grid_size)
            except ValueError as exc:
                raise GridTooLargeError(str(exc)) from None
            total = part if total is None else convolve(total, part)
        return PrivacyCurve(total)

    def _closed_form_mu(self):
        mu2, entries = self._entries()
        return None if entries else math.sqrt(mu2)

    # ---- answers ------------------------------------------------------------------------------------

    def _epsilon_at(self, delta, pessimistic):
        mu = self._closed_form_mu()
        if mu is not None:
            return gaussian_epsilon_exact(delta, 1.0 / mu)
        epsilon = max(curve.epsilon(delta) for curve in self._curves(pessimistic))
        if math.isinf(epsilon) and pessimistic:
            log_no_inf = sum(c * math.log1p(-e.delta) for e, c in self.ledger if isinstance(e, EpsilonDeltaEvent))
            if -math.expm1(log_no_inf) <= delta:
                raise ValueError(f"PLD cannot certify delta={delta:g}: it is below the truncated tail mass; pass a "
                                 f"smaller tail_mass (now {self.tail_mass:g})")
        return epsilon

    def _delta_at(self, epsilon, pessimistic):
        mu = self._closed_form_mu()
        if mu is not None:
            return np.array([gaussian_delta_exact(e, 1.0 / mu) for e in np.ravel(epsilon)]).reshape(np.shape(epsilon))
        return np.max([curve.delta(epsilon) for curve in self._curves(pessimistic)], axis=0)

    def _epsilon(self, delta):
        return self._epsilon_at(delta, self.pessimistic)

    def _delta(self, epsilon):
        return float(self._delta_at(epsilon, self.pessimistic))

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

    def delta_bracket(self, epsilon):
        """``(optimistic, pessimistic)`` delta at ``epsilon`` (scalar or array): the true delta lies in between."""
        epsilon = check_epsilon(epsilon) if np.ndim(epsilon) == 0 else check_epsilons(epsilon)
        if not self.ledger:
            return 0.0, 0.0
        low, high = self._delta_at(epsilon, False), self._delta_at(epsilon, True)
        return (float(low), float(high)) if np.ndim(epsilon) == 0 else (low, high)
