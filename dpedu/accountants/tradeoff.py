r"""Trade-off curves: what an accountant's guarantee says about the best attack (docs/math.md §21).

An attacker who sees the output of a run and guesses "D or D'?" has a false-positive rate
:math:`\alpha` (FPR) and a false-negative rate :math:`\beta` (FNR). Differential privacy is a floor under
:math:`\beta` at every :math:`\alpha`: the *trade-off curve* :math:`f(\alpha)` (Dong, Roth & Su 2022,
Def. 2.1-2.3). Every privacy profile :math:`\varepsilon \mapsto \delta(\varepsilon)` an accountant certifies
gives one (ibid., Prop. 2.12; docs/math.md §21.3):

.. math:: f(\alpha) = \sup_{\varepsilon \ge 0}\ \max\bigl(0,\ 1-\delta(\varepsilon)-e^{\varepsilon}\alpha,\
          e^{-\varepsilon}(1-\delta(\varepsilon)-\alpha)\bigr).

Here the supremum runs over a *finite* grid of epsilons (:func:`default_epsilons`), which can only make
the curve lower, i.e. weaker: still a valid floor under every attack's FNR. A Gaussian ledger has the
exact curve :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha)-\mu)` (:func:`gaussian_tradeoff`).

>>> from dpedu.ground.events import GaussianEvent
>>> curve = tradeoff_curve([(GaussianEvent(1.0), 1)], "pld", alphas=[0.01, 0.1])
>>> [round(float(b), 3) for b in curve.beta], [round(float(b), 3) for b in gaussian_tradeoff([0.01, 0.1], 1.0)]
([0.908, 0.611], [0.908, 0.611])
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from ..ground.events import GaussianEvent, SubsampledGaussianEvent
from ..ground.validation import check_array, check_in_interval, check_nonnegative
from .registry import as_ledger, make_accountant
from .base import ConversionUnavailableError, UnsupportedEventError, check_epsilons

__all__ = [
    "TradeoffCurve",
    "default_alphas",
    "default_epsilons",
    "check_alphas",
    "gaussian_tradeoff",
    "epsilon_delta_tradeoff",
    "profile_tradeoff",
    "privacy_profile",
    "tradeoff_curve",
    "pld_tradeoff_bracket",
    "pld_delta_bracket",
    "upper_tradeoff",
    "upper_epsilons",
    "gaussian_ledger_mu",
    "gaussian_curve",
]


def default_alphas():
    """A grid of FPRs in [0, 1]: dense near 0 (strong attacks at low FPR) and linear on the whole interval."""
    return np.unique(np.concatenate([[0.0], np.geomspace(1e-8, 1e-2, 121), np.linspace(0.0, 1.0, 401)]))


def default_epsilons():
    """A grid of epsilons for the supremum of docs/math.md §21.3: steps of 0.01 up to 4, coarser up to 100.

    A supporting line of slope :math:`-e^{\\varepsilon}` matters at an FPR where the curve has that slope:
    epsilons near 0-4 shape the curve at the FPRs one plots, larger ones only its part at tiny FPRs.
    """
    return np.unique(np.concatenate([np.linspace(0.005, 4.0, 400), np.linspace(4.0, 20.0, 161),
                                     np.geomspace(20.0, 100.0, 17)]))


def check_alphas(alphas, name="alphas", *, sort=True):
    """A 1-D array of FPRs in [0, 1] (sorted unless ``sort=False``); bad input raises naming ``name``."""
    values = check_array(alphas, name, ndim=1)
    if np.any(values < 0) or np.any(values > 1):
        raise ValueError(f"{name} must lie in [0, 1] (they are false-positive rates); got {alphas!r}")
    return np.sort(values) if sort else values


def gaussian_tradeoff(alpha, mu):
    r""":math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)`: the trade-off curve of
    :math:`\mathcal N(0,1)` against :math:`\mathcal N(\mu,1)` (Dong, Roth & Su 2022, Def. 2.4; docs/math.md §21.4).

    ``alpha`` is a number or an array in [0, 1]; ``mu`` >= 0 (``inf``: no privacy, the curve 0 on (0, 1]).

    >>> round(float(gaussian_tradeoff(0.05, 1.0)), 4)
    0.7405
    """
    mu = check_nonnegative(mu, "mu", allow_inf=True)
    scalar = np.ndim(alpha) == 0
    a = check_alphas(np.atleast_1d(alpha), "alpha", sort=False)
    with np.errstate(over="ignore", invalid="ignore"):
        beta = np.where(a <= 0, 1.0, ndtr(ndtri(1.0 - a) - mu)) if math.isfinite(mu) else np.where(a <= 0, 1.0, 0.0)
    return float(beta[0]) if scalar else beta


def profile_tradeoff(alphas, epsilons, deltas):
    r"""Trade-off curve implied by the pairs :math:`(\varepsilon_j, \delta_j)` (Dong, Roth & Su 2022, Prop. 2.12).

    .. math:: f(\alpha) = \max_j \max\bigl(0,\ 1-\delta_j-e^{\varepsilon_j}\alpha,\
              e^{-\varepsilon_j}(1-\delta_j-\alpha)\bigr)

    Every pair :math:`(\varepsilon_j, \delta_j)` the mechanism satisfies is a floor under its curve (DRS
    Prop. 2.5), so the maximum over a finite set of them is a valid floor (docs/math.md §21.3). Vectorised
    over ``alphas`` (FPRs in [0, 1], in any order) and the pairs.
    """
    alphas = check_alphas(alphas, sort=False)
    epsilons = np.asarray(epsilons, dtype=float)
    deltas = np.asarray(deltas, dtype=float)
    keep = np.isfinite(epsilons) & np.isfinite(deltas) & (deltas < 1)
    epsilons, deltas = epsilons[keep], deltas[keep]
    if epsilons.size == 0:
        return np.zeros_like(alphas)
    a = alphas[:, None]
    slack = 1.0 - deltas[None, :]
    with np.errstate(over="ignore"):
        steep = slack - np.exp(epsilons)[None, :] * a
    flat = np.exp(-epsilons)[None, :] * (slack - a)
    return np.clip(np.maximum(steep, flat).max(axis=1), 0.0, 1.0)


def epsilon_delta_tradeoff(alphas, epsilon, delta):
    r"""The trade-off curve of one :math:`(\varepsilon, \delta)` guarantee (Dong, Roth & Su 2022, Prop. 2.5):
    :math:`f_{\varepsilon,\delta}(\alpha) = \max(0, 1-\delta-e^{\varepsilon}\alpha, e^{-\varepsilon}(1-\delta-\alpha))`.

    >>> [round(float(b), 4) for b in epsilon_delta_tradeoff([0.0, 0.1, 0.5], 1.0, 0.0)]
    [1.0, 0.7282, 0.1839]
    """
    epsilon = check_nonnegative(epsilon, "epsilon")
    delta = check_in_interval(delta, "delta", 0.0, 1.0, high_open=True)
    return profile_tradeoff(alphas, [epsilon], [delta])


@dataclass(frozen=True)
class TradeoffCurve:
    r"""A floor :math:`\beta(\alpha)` under the FNR of every attack at FPR :math:`\alpha` (docs/math.md §21.2).

    Attributes
    ----------
    label : str
        Where it comes from, e.g. ``"rdp"`` or ``"GDP mu=1.23"``.
    alpha, beta : ndarray
        FPR grid and the curve on it (non-increasing, convex, symmetric when derived from a profile).
    epsilons, deltas : ndarray or None
        The privacy profile it was derived from (None for a Gaussian curve).
    mu : float or None
        Set for a Gaussian (mu-GDP) curve.
    notes : tuple of str
        Caveats (warnings of the accountant, why it does not apply).
    upper : bool
        True for a curve that bounds a trade-off curve from *above* (no guarantee; see
        :func:`pld_tradeoff_bracket`): ``beta_at`` then evaluates that upper bound.
    """

    label: str
    alpha: np.ndarray
    beta: np.ndarray
    epsilons: np.ndarray | None = None
    deltas: np.ndarray | None = None
    mu: float | None = None
    notes: tuple = ()
    upper: bool = False

    @property
    def applies(self):
        """Whether the accountant gave a curve (False: ``beta`` is NaN, the reason is in ``notes``)."""
        return bool(np.all(np.isfinite(self.beta)))

    def beta_at(self, alpha):
        """The curve at FPRs ``alpha`` (number or array), computed exactly from its profile, not interpolated."""
        scalar = np.ndim(alpha) == 0
        a = check_alphas(np.atleast_1d(alpha), "alpha", sort=False)
        if self.mu is not None:
            out = gaussian_tradeoff(a, self.mu)
        elif not self.applies:
            out = np.full(a.shape, math.nan)
        else:
            out = (upper_tradeoff if self.upper else profile_tradeoff)(a, self.epsilons, self.deltas)
        return float(out[0]) if scalar else out

    def best_tpr(self, fpr):
        """The attacker's largest possible true-positive rate at FPR ``fpr``: :math:`1 - \\beta(\\alpha)`."""
        beta = self.beta_at(fpr)
        return 1.0 - beta


def _options(accountant_options):
    """The accountant's constructor options: a dict or None, refused by name otherwise."""
    if accountant_options is not None and not isinstance(accountant_options, dict):
        raise TypeError(f"accountant_options must be a dict of keyword arguments or None; got "
                        f"{type(accountant_options).__name__}")
    return accountant_options or {}


def privacy_profile(history, accountant, epsilons=None, *, accountant_options=None):
    """``(epsilons, deltas, notes)``: the accountant's certified delta at each epsilon of the grid.

    The accountant's ``UserWarning`` caveats are collected into ``notes`` (as :func:`account` does). An
    accountant that cannot account the ledger, or gives no delta for an epsilon, returns NaN deltas and the
    reason in ``notes``.
    """
    epsilons = default_epsilons() if epsilons is None else np.sort(check_epsilons(epsilons, "epsilons"))
    ledger = as_ledger(history)
    acc = make_accountant(accountant, **_options(accountant_options))
    notes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            for event, count in ledger:
                acc.compose(event, count)
            deltas = np.asarray(acc.get_delta(epsilons), dtype=float)
        except (UnsupportedEventError, ConversionUnavailableError) as exc:
            deltas = np.full(epsilons.shape, math.nan)
            notes.append(str(exc))
    for w in caught:
        text = str(w.message)
        if text not in notes:
            notes.append(text)
    caveat = getattr(acc, "caveat", None)
    if caveat and caveat not in notes:
        notes.insert(0, caveat)
    return epsilons, deltas, tuple(notes)


def tradeoff_curve(history, accountant="pld", *, alphas=None, epsilons=None, accountant_options=None):
    r"""The trade-off curve an accountant certifies for ``history`` (Dong, Roth & Su 2022, Prop. 2.12).

    Parameters
    ----------
    history : ledger, list of events, event, or an object with ``ledger``
        What happened (:func:`~dpedu.accountants.as_ledger`).
    accountant : str
        A registry name (:data:`~dpedu.accountants.ACCOUNTANT_NAMES`): every accountant with an
        epsilon -> delta conversion gives a curve.
    alphas : array of FPRs in [0, 1], optional
        Default :func:`default_alphas`.
    epsilons : array of epsilons > 0, optional
        The grid of the supremum; default :func:`default_epsilons`. A coarser grid gives a lower (weaker,
        still valid) curve.
    accountant_options : dict, optional
        Constructor options for the accountant.

    Returns
    -------
    TradeoffCurve
        With ``beta`` NaN (and the reason in ``notes``) when the accountant does not apply.
    """
    alphas = default_alphas() if alphas is None else check_alphas(alphas)
    epsilons, deltas, notes = privacy_profile(history, accountant, epsilons, accountant_options=accountant_options)
    if np.all(np.isnan(deltas)):
        beta = np.full(alphas.shape, math.nan)
    else:
        beta = profile_tradeoff(alphas, epsilons, deltas)
    return TradeoffCurve(label=accountant, alpha=alphas, beta=beta, epsilons=epsilons, deltas=deltas, notes=notes)


def upper_epsilons():
    """The finer epsilon grid of the *upper* PLD curve: steps of 0.001 up to 6, 0.01 up to 30, then to 100.

    The upper curve's grid error is of first order in the spacing (docs/math.md §21.3), the lower one's of
    second order, so the upper curve needs the finer grid.
    """
    return np.unique(np.concatenate([np.linspace(0.001, 6.0, 6000), np.linspace(6.0, 30.0, 2401),
                                     np.geomspace(30.0, 100.0, 41)]))


def upper_tradeoff(alphas, epsilons, deltas):
    r"""An upper bound on :math:`\sup_{\varepsilon \ge 0} f_{\varepsilon,\delta(\varepsilon)}(\alpha)` for a
    non-increasing :math:`\delta` known on a grid (docs/math.md §21.3): between grid points
    :math:`\varepsilon_j \le \varepsilon \le \varepsilon_{j+1}`, pair :math:`e^{\pm\varepsilon}` with its
    extreme and :math:`\delta(\varepsilon)` with :math:`\delta(\varepsilon_{j+1})`; below the grid use
    :math:`\varepsilon = 0` with :math:`\delta(\varepsilon_0)`, above it :math:`\delta = 0`. Computed in
    blocks of FPRs, so a fine grid of epsilons needs little memory.
    """
    alphas = check_alphas(alphas, sort=False)
    lo = np.concatenate([[0.0], np.asarray(epsilons, dtype=float)])      # left end of each interval
    slack = 1.0 - np.concatenate([np.asarray(deltas, dtype=float), [0.0]])   # 1 - delta at the right end
    grow, shrink = np.exp(lo), np.exp(-lo)
    out = np.empty(alphas.shape)
    for start in range(0, alphas.size, 32):
        a = alphas[start:start + 32, None]
        steep = slack[None, :] - grow[None, :] * a
        flat = shrink[None, :] * np.maximum(slack[None, :] - a, 0.0)
        out[start:start + 32] = np.maximum(steep, flat).max(axis=1)
    return np.clip(out, 0.0, 1.0)


def pld_tradeoff_bracket(history, *, alphas=None, epsilons=None, accountant_options=None):
    r"""``(lower, upper)``: two :class:`TradeoffCurve` that bracket the ledger's exact trade-off curve.

    ``lower`` is the curve of the PLD accountant's *pessimistic* (connect-the-dots) delta, a valid
    guarantee; ``upper`` bounds the curve of its *optimistic* (grid-binning) delta from above, interval by
    interval (docs/math.md §21.3), so it is no guarantee: the exact curve lies between the two. The gap is
    the PLD's discretisation error plus the epsilon grids' (``epsilons`` for the lower curve, by default
    :func:`upper_epsilons` for the upper one, whose grid error is of first order).
    """
    alphas = default_alphas() if alphas is None else check_alphas(alphas)
    given = epsilons is not None
    epsilons = np.sort(check_epsilons(epsilons, "epsilons")) if given else default_epsilons()
    fine = epsilons if given else upper_epsilons()
    (_, pessimistic), notes = pld_delta_bracket(history, epsilons, accountant_options, with_notes=True)
    (optimistic, _) = pld_delta_bracket(history, fine, accountant_options)
    lower = TradeoffCurve("pld (pessimistic)", alphas, profile_tradeoff(alphas, epsilons, pessimistic),
                          epsilons, pessimistic, notes=notes)
    upper = TradeoffCurve("pld (optimistic, upper)", alphas, upper_tradeoff(alphas, fine, optimistic),
                          fine, optimistic, notes=("an upper bound on the exact curve, no guarantee",), upper=True)
    return lower, upper


def pld_delta_bracket(history, epsilons, accountant_options=None, *, with_notes=False, with_roundoff=False):
    """``(optimistic, pessimistic)`` deltas of the PLD accountant at ``epsilons`` (and its caveats; and the FFT
    round-off bound inside the pessimistic deltas, docs/math.md §15.8)."""
    acc = make_accountant("pld", **_options(accountant_options))
    for event, count in as_ledger(history):
        acc.compose(event, count)
    optimistic, pessimistic = acc.delta_bracket(np.asarray(epsilons, dtype=float))
    bracket = (np.asarray(optimistic, dtype=float), np.asarray(pessimistic, dtype=float))
    if with_roundoff:
        return bracket, acc.roundoff_bound()
    if with_notes:
        return bracket, ((acc.caveat,) if getattr(acc, "caveat", None) else ())
    return bracket


def gaussian_ledger_mu(history):
    r""":math:`\mu = \sqrt{\sum_i k_i / z_i^2}` when every event is a full-batch Gaussian (else ``None``).

    T composed Gaussian releases are exactly one Gaussian with this mu (Dong, Roth & Su 2022, Cor. 3.3).
    """
    total = 0.0
    for event, count in as_ledger(history):
        full = isinstance(event, GaussianEvent) or (isinstance(event, SubsampledGaussianEvent)
                                                    and event.sampling_rate == 1)
        if not full:
            return None
        total += count / event.noise_multiplier**2
    return math.sqrt(total)


def gaussian_curve(mu, *, alphas=None, label=None):
    """The :class:`TradeoffCurve` of mu-GDP on ``alphas`` (default :func:`default_alphas`)."""
    mu = check_nonnegative(mu, "mu")
    alphas = default_alphas() if alphas is None else check_alphas(alphas)
    return TradeoffCurve(label or f"GDP mu={mu:.3g}", alphas, gaussian_tradeoff(alphas, mu), mu=mu)
