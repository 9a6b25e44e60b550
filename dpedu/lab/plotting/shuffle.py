r"""The shuffle gap as a figure: epsilon against the noise multiplier for Poisson and shuffled batches.

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> ax = plot_shuffle_gap([0.5, 1.0], [17.3, 3.85], [13.2, 3.09], [22.2, 8.88], delta=1e-4)
>>> len(ax.lines)
3
>>> len(plot_shuffle_gap([0.5, 1.0], [17.3, 3.85], [13.2, 3.09], [22.2, 8.88], delta=1e-4,
...                      balls_in_bins=[16.0, 3.5]).lines)
4
"""

from __future__ import annotations

import numpy as np

from .common import as_1d, delta_text, get_axes

__all__ = ["plot_shuffle_gap", "first_crossing"]


def first_crossing(noise_multipliers, poisson_upper, shuffle_lower):
    """The smallest noise multiplier at which the shuffle lower bound exceeds the Poisson upper bound, or None.

    When it does so already at the first (smallest) noise multiplier, the curves cross outside the range shown.

    >>> first_crossing([0.5, 1.0, 2.0], [3.0, 1.0, 0.5], [2.0, 1.2, 0.6])
    1.0
    """
    zs, upper, lower = (as_1d(v, name) for v, name in ((noise_multipliers, "noise_multipliers"),
                                                       (poisson_upper, "poisson_upper"),
                                                       (shuffle_lower, "shuffle_lower")))
    if not zs.shape == upper.shape == lower.shape:
        raise ValueError(f"noise_multipliers, poisson_upper and shuffle_lower must have one length; got "
                         f"{zs.size}, {upper.size}, {lower.size}")
    above = np.nonzero(lower > upper)[0]
    return float(zs[above[0]]) if above.size else None


def plot_shuffle_gap(noise_multipliers, poisson_upper, shuffle_lower, one_step_per_epoch, *, delta,
                     relation="add_remove", audits=None, balls_in_bins=None, ax=None):
    r"""Plot epsilon at ``delta`` against z: the Poisson PLD upper bound, the shuffled-batch Monte Carlo lower
    bound (docs/math.md §22.6), and that pair's own upper bound, one full Gaussian step per epoch; the first
    noise multiplier where the lower bound crosses the Poisson number is marked (none: said in the title).
    ``relation`` ("add_remove" or "replace_one") only labels the panel: the values come from the caller.
    ``audits``: optional ``(noise_multipliers, epsilon_lowers)`` of white-box audits of real shuffled runs
    (:func:`dpedu.lab.audit.shuffle_whitebox.shuffle_whitebox_audit`), drawn as points beside the curves.
    ``balls_in_bins``: optional Monte Carlo *estimates* of balls-in-bins batches' epsilon at the same z
    (:func:`dpedu.accountants.balls_in_bins.balls_in_bins_epsilon`, docs/math.md §22.8), drawn and labelled as
    estimates, not guarantees."""
    ax = get_axes(ax)
    zs = as_1d(noise_multipliers, "noise_multipliers")
    crossing = first_crossing(zs, poisson_upper, shuffle_lower)
    ax.plot(zs, as_1d(one_step_per_epoch, "one_step_per_epoch"), color="#999999", linestyle=":", marker=".",
            label="the same pair, upper: one Gaussian step per epoch")
    ax.plot(zs, as_1d(poisson_upper, "poisson_upper"), color="#0072B2", marker="o",
            label="Poisson sampling, upper (PLD)")
    ax.plot(zs, as_1d(shuffle_lower, "shuffle_lower"), color="#D55E00", marker="s", linestyle="--",
            label="shuffled batches, lower (Monte Carlo, 95%)")
    if audits is not None:
        audit_zs, audit_eps = (as_1d(v, name) for v, name in zip(audits, ("audit noise_multipliers", "audit epsilons")))
        if audit_zs.shape != audit_eps.shape:
            raise ValueError(f"audits must be two arrays of one length; got {audit_zs.size} and {audit_eps.size}")
        ax.plot(audit_zs, audit_eps, color="#009E73", marker="D", linestyle="none", markersize=6,
                label="shuffled batches, lower (white-box audit of DP-SGD runs, 95%)")
    if balls_in_bins is not None:
        estimates = as_1d(balls_in_bins, "balls_in_bins")
        if estimates.shape != zs.shape:
            raise ValueError(f"balls_in_bins must have one estimate per noise multiplier ({zs.size}); got "
                             f"{estimates.size}")
        ax.plot(zs, estimates, color="#CC79A7", marker="^", linestyle="-.",
                label="balls-in-bins, Monte Carlo estimate (not a guarantee)")
    if crossing is not None and crossing > zs[0]:
        ax.axvline(crossing, color="#D55E00", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("noise multiplier $z$")
    ax.set_ylabel(rf"$\varepsilon$ at $\delta = {delta_text(delta)}$")
    name = relation.replace("_", "/" if relation == "add_remove" else "-")
    if crossing is None:
        verdict = "shuffle lower bound below the Poisson upper bound"
    elif crossing > zs[0]:
        verdict = f"shuffle lower bound above Poisson from $z = {crossing:g}$"
    else:
        verdict = "shuffle lower bound above the Poisson upper bound at every $z$ shown"
    ax.set_title(f"{name}: {verdict}", fontsize=10)
    ax.legend(fontsize=9)
    return ax
