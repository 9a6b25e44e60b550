r"""Privacy-loss-distribution (PLD) accounting: a tight, fast upper bound on epsilon, with its lower bound beside it.

**What a PLD is.** Run a mechanism on neighbouring datasets D and D'; its outputs have densities P and Q.
The *privacy loss* of an output x is :math:`L(x) = \ln(P(x)/Q(x))`. Draw x from P and L is a random
variable; its law is the PLD. It holds the whole privacy curve (``docs/math.md §15.1``)

.. math:: \delta(\varepsilon) = m_\infty + E[(1 - e^{\varepsilon - L})_+],

and composing mechanisms *adds* independent losses, so PLDs *convolve*.

**How it is computed here.**

1. *Exact where possible.* T Gaussian releases with multipliers :math:`z_i` compose to one Gaussian with
   :math:`\mu = \sqrt{\sum_i 1/z_i^2}` (Dong, Roth & Su 2019): a ledger of only Gaussians is answered by
   the closed form of :mod:`dpedu.ground.gaussian`; in a mixed ledger they become one Gaussian event.
2. *Discretise each event on a grid* :math:`\{i\Delta\}` by **connect the dots** (Doroshenko et al. 2022;
   ``docs/math.md §15.7``): a loss :math:`\ell` between grid points :math:`\ell_i<\ell<\ell_{i+1}` splits its
   mass between the two so that both its P-mass and its Q-mass are kept. The result *dominates* the event
   (its curve lies above the true one), so every later answer is an upper bound, yet the error is of
   second order in :math:`\Delta`. Each ledger entry gets its own grid, a power of two chosen before any FFT
   from the event and its count alone (:mod:`.grid`, ``docs/math.md §15.9``), so adding an event never lowers
   epsilon. The atoms of a ledger of (ε, δ) events only sit exactly on grid points.
   Beside it an *optimistic* PMF (outputs grouped into bins: post-processing, so a lower bound), on a grid
   up to ``OPTIMISTIC_REFINEMENT`` times finer, since its error grows like T times a second-order shift.
3. *Compose* T copies of one event by one FFT raised to the T-th power, keeping a Chernoff window whose
   discarded tails go to :math:`+\infty` (``docs/math.md §15.8``), as does a rigorous bound on the FFT's
   round-off (:mod:`.roundoff`); different events by convolution on the
   finest of their grids (:mod:`.ledger`). The accountant (:mod:`.accountant`) only reads the curves off.
4. *Read off* :math:`\delta(\varepsilon)`, and :math:`\varepsilon(\delta)` exactly between grid points; a δ that
   cannot be certified is refused naming its cause, the round-off bound or the truncated tails
   (``docs/math.md §15.10``).
   Poisson subsampling has two directions, *remove* and *add* (``docs/math.md §15.2``): each is composed
   over the whole ledger and the worse one is reported. So do balls-in-bins batches (random allocation,
   :mod:`.allocation`, ``docs/math.md §22.9``), whose epoch PMFs come from a b-fold FFT of a spread lognormal.

**A worked example.** One Laplace release with :math:`\varepsilon=1` has loss :math:`+1` with mass 1/2,
:math:`-1` with mass :math:`e^{-1}/2`, and a continuous part in between. With :math:`\Delta = 1/4`, the
atoms sit on the grid points 4 and -4, and a loss 0.1 between 0 and 0.25 goes up with weight
:math:`(1-e^{-0.1})/(1-e^{-0.25}) = 0.43` and down with 0.57. Two (1, 0) releases and one (2, 0) release
compose to a largest loss of exactly 4, so :math:`\delta(4) = 0`: below the top of the grid the pessimistic δ
counts a bound on the FFT's round-off (``docs/math.md §15.8``), at and above it no round-off can sit
(``docs/math.md §15.10``):

>>> from dpedu.accountants import EpsilonDeltaEvent
>>> acc = PLDAccountant().compose(EpsilonDeltaEvent(1.0), 2).compose(EpsilonDeltaEvent(2.0))
>>> float(acc.get_delta(4.0)), bool(0 < acc.get_delta(3.99) < 1e-2), round(acc.get_epsilon(1e-10), 6)
(0.0, True, 4.0)
>>> from dpedu.accountants import SubsampledGaussianEvent
>>> acc = PLDAccountant().compose(SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01), 10_000)
>>> round(acc.get_epsilon(1e-5), 3)
0.947
>>> acc.get_delta([0.5, 1.0]).shape       # an array of epsilons: one delta each
(2,)
"""

from __future__ import annotations

from .accountant import PLDAccountant
from .grid import DEFAULT_ACCURACY, HARD_MAX_GRID, MAX_GRID, OPTIMISTIC_REFINEMENT

__all__ = ["PLDAccountant", "MAX_GRID", "HARD_MAX_GRID", "DEFAULT_ACCURACY", "OPTIMISTIC_REFINEMENT"]
