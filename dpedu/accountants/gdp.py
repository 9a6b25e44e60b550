r"""Gaussian differential privacy (mu-GDP) for a ledger: exact, certified, and the CLT approximation.

A mechanism is :math:`\mu`-GDP when no test tells D from D' better than a test of
:math:`\mathcal N(0,1)` against :math:`\mathcal N(\mu,1)`: its trade-off curve lies above
:math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha)-\mu)` (Dong, Roth & Su 2022, Def. 2.6; docs/math.md §21.4).
One number then says everything: composition adds :math:`\mu^2`, a group of k people gets
:math:`k\mu`, and every :math:`(\varepsilon, \delta(\varepsilon))` follows in closed form.

Three mus for a DP-SGD ledger:

* :func:`clt_mu` - Bu, Dong, Long & Su (2020): :math:`\mu \approx q\sqrt{T(e^{1/z^2}-1)}`, a *limit*
  (:math:`T\to\infty`, :math:`q\sqrt T\to\nu`), not a bound: it can under-report (docs/math.md §21.5);
* :func:`certified_mu` - the smallest mu whose curve :math:`G_\mu` lies below the PLD's pessimistic curve
  (checked through the privacy profiles, between grid points too): a guarantee (§21.4);
* the mu whose single :math:`(\varepsilon, \delta)` matches a reported pair is the Gaussian's:
  ``1 / dpedu.ground.gaussian.analytic_noise_multiplier(epsilon, delta)``.

>>> round(clt_mu(noise_multiplier=4.0, sampling_rate=0.01, steps=10_000), 4)
0.254
>>> from dpedu.ground.events import GaussianEvent
>>> certified_mu([(GaussianEvent(2.0), 4)])            # exact for full-batch Gaussians: sqrt(4) / 2
1.0
>>> from dpedu.ground.gaussian import analytic_noise_multiplier
>>> round(1 / analytic_noise_multiplier(4.3772, 1e-5), 3)
1.0
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ..ground.gaussian import gaussian_delta_exact
from ..ground.search import monotone_search
from ..ground.validation import (
    check_in_interval, check_noise_multiplier, check_nonnegative, check_positive_int, check_sampling_rate
)
from .base import check_epsilons
from .tradeoff import gaussian_ledger_mu, pld_delta_bracket, privacy_profile

__all__ = ["clt_mu", "certified_mu", "certification_epsilons", "gdp_delta", "group_mu", "MAX_MU"]

#: mus above this are reported as "no useful guarantee" (G_mu is below 1e-300 at every FPR above 1e-300).
MAX_MU = 64.0


def clt_mu(noise_multiplier, sampling_rate, steps):
    r"""The central-limit mu of T Poisson-subsampled Gaussian steps: :math:`q\sqrt{T(e^{1/z^2}-1)}`.

    Bu, Dong, Long & Su (2020), §3 (Dong, Roth & Su 2022, Thm 3.5, Cor. 5.4): as :math:`T \to \infty` with
    :math:`q\sqrt T \to \nu`, the T-fold composition converges to :math:`\nu\sqrt{e^{1/z^2}-1}`-GDP.
    **An approximation, not a bound**: for finite T, and above all for large q or few steps, the true
    curve can lie below :math:`G_\mu` (docs/math.md §21.5; ``benchmarks/bench_gdp.py``). Returns ``inf``
    when :math:`e^{1/z^2}` overflows.
    """
    z = check_noise_multiplier(noise_multiplier)
    q = check_sampling_rate(sampling_rate)
    steps = check_positive_int(steps, "steps")
    exponent = 1.0 / (z * z)
    if exponent > 700.0:
        return math.inf
    return q * math.sqrt(steps * math.expm1(exponent))


def gdp_delta(epsilon, mu):
    r""":math:`\delta_\mu(\varepsilon) = \Phi(-\varepsilon/\mu+\mu/2) - e^{\varepsilon}\Phi(-\varepsilon/\mu-\mu/2)`:
    mu-GDP is :math:`(\varepsilon, \delta_\mu(\varepsilon))`-DP for every epsilon, and no smaller delta
    (Dong, Roth & Su 2022, Cor. 2.13; the Gaussian mechanism's exact curve with :math:`z = 1/\mu`).
    """
    mu = check_nonnegative(mu, "mu")
    return 0.0 if mu == 0 else gaussian_delta_exact(epsilon, 1.0 / mu)


def _gdp_deltas(epsilons, mu):
    """delta_mu at each of ``epsilons`` (vectorised docs/math.md §21.4 formula, in log space)."""
    first = log_ndtr(mu / 2.0 - epsilons / mu)
    second = epsilons + log_ndtr(-mu / 2.0 - epsilons / mu)
    return np.where(second < first, -np.exp(first) * np.expm1(np.minimum(second - first, 0.0)), 0.0)


def certification_epsilons():
    """The epsilon grid of :func:`certified_mu`: 1e-9, then steps of 0.002 up to 6, coarser up to 5000.

    The grid must reach an epsilon where the PLD's delta is below the slack; a run whose delta is still
    larger at 5000 gets no certificate (``inf``).
    """
    return np.unique(np.concatenate([[1e-9], np.linspace(0.002, 6.0, 3000), np.linspace(6.0, 20.0, 1401),
                                     np.linspace(20.0, 200.0, 3601), np.geomspace(200.0, 5000.0, 1001)]))


def _certifies(mu, epsilons, deltas, slack):
    """Whether delta(eps) <= delta_mu(eps) + slack for every eps >= 0, from a non-increasing delta on a grid.

    Between grid points e_j <= eps <= e_{j+1}: delta(eps) <= delta(e_j) and delta_mu(eps) >= delta_mu(e_{j+1});
    below e_0: delta(eps) <= delta(0) <= min(1, delta(e_0) + expm1(e_0)); above the grid: delta(eps) <= delta(e_last).
    """
    if mu == 0:
        target = np.zeros_like(epsilons)
    else:
        target = _gdp_deltas(epsilons, mu)
    return bool(min(1.0, deltas[0] + math.expm1(epsilons[0])) <= target[0] + slack
                and np.all(deltas[:-1] <= target[1:] + slack) and deltas[-1] <= slack)


def certified_mu(history, *, slack=1e-10, epsilons=None, accountant_options=None, accountant="pld"):
    r"""The smallest mu such that ``history`` is mu-GDP up to ``slack``, certified through the PLD (docs/math.md §21.4).

    Full-batch Gaussian ledgers are exactly :math:`\sqrt{\sum_i k_i/z_i^2}`-GDP (Dong, Roth & Su 2022,
    Cor. 3.3): that mu is returned. Otherwise mu-GDP holds iff the mechanism is
    :math:`(\varepsilon, \delta_\mu(\varepsilon))`-DP for every :math:`\varepsilon \ge 0` (ibid., Cor. 2.13),
    so it suffices that the PLD accountant's *pessimistic* delta (an upper bound on the true one) satisfies
    :math:`\delta_{\mathrm{PLD}}(\varepsilon) \le \delta_\mu(\varepsilon) + \tau` for every epsilon. Both
    sides are non-increasing, so the check on a grid, shifted by one grid point, covers every epsilon in
    between (:func:`certification_epsilons`). Bisection on mu returns the feasible end.
    The PLD's pessimistic delta also carries a bound r on its FFT round-off at every epsilon (docs/math.md §15.8,
    about 4e-10 for Abadi et al.'s 10,000 steps): the check then uses :math:`\tau + r`, and what is certified is
    :math:`\mathrm{FNR} \ge G_\mu(\mathrm{FPR}) - \tau - r`.

    The slack :math:`\tau` (``slack``, default 1e-10) is there because the PLD keeps a tiny mass at infinite
    loss (its truncated tails), so no finite mu holds with :math:`\tau = 0`. What is certified: every test has
    :math:`\mathrm{FNR} \ge G_\mu(\mathrm{FPR}) - \tau` (Prop. 2.12 of the same paper, term by term). In the
    trade-off picture this is the PLD's pessimistic curve lying above :math:`G_\mu` up to :math:`\tau`.

    Parameters
    ----------
    history : ledger, events, or an object with ``ledger``
    slack : float
        :math:`\tau` in (0, 1e-3].
    epsilons : array, optional
        Epsilon grid (default :func:`certification_epsilons`); a coarser grid certifies a larger mu.
    accountant_options : dict, optional
        Options of the accountant (e.g. ``{"accuracy": 1e-4}`` for the PLD).
    accountant : str, default "pld"
        Whose delta(epsilon) is certified against: the PLD's pessimistic one, or any other accountant's
        (e.g. ``"rdp"`` for a ledger the PLD does not cover: every accountant's delta is an upper bound on the
        true one, so the same check applies, with a larger mu).

    Returns
    -------
    float
        ``inf`` when no mu up to :data:`MAX_MU` is certified.
    """
    slack = check_in_interval(slack, "slack", 0.0, 1e-3, low_open=True)
    exact = gaussian_ledger_mu(history)
    if exact is not None:
        return exact
    epsilons = certification_epsilons() if epsilons is None else np.sort(check_epsilons(epsilons, "epsilons"))
    if accountant == "pld":   # its pessimistic delta carries the FFT round-off bound r at every epsilon: tau + r
        (_, pessimistic), roundoff = pld_delta_bracket(history, epsilons, accountant_options, with_roundoff=True)
        slack = slack + roundoff
    else:
        _, pessimistic, notes = privacy_profile(history, accountant, epsilons, accountant_options=accountant_options)
        if np.any(np.isnan(pessimistic)):
            raise ValueError(f"accountant {accountant!r} gives no delta for this history: {'; '.join(notes)}")
    if not _certifies(MAX_MU, epsilons, pessimistic, slack):
        return math.inf
    return monotone_search(lambda mu: _certifies(mu, epsilons, pessimistic, slack), 1.0, feasible_when="large",
                           lowest=1e-12, highest=MAX_MU, rtol=1e-9, at_limit=lambda mu, feasible: mu)


def group_mu(mu, group_size):
    r"""mu-GDP for one record is :math:`k\mu`-GDP for a group of k records (Dong, Roth & Su 2022, Thm 2.14).

    Tight for full-batch Gaussian releases: a group of k moves the clipped sum by up to kC, a Gaussian
    shift k times as large. ``inf`` stays ``inf``.
    """
    mu = check_nonnegative(mu, "mu", allow_inf=True)
    return check_positive_int(group_size, "group_size") * mu
