r"""What the released model reveals, as a figure: epsilon against the number of steps T (docs/math.md §28).

Composition climbs with T; the linear-loss last iterate (exact for linear losses, a heuristic otherwise) climbs
more slowly; the proven convex bound flattens; audits of the final model sit below them.

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> ax = plot_last_iterate([10, 100, 1000], [0.7, 1.8, 6.0], [0.4, 1.3, 4.4], [0.7, 1.5, 1.5], delta=1e-5,
...                        audits={"gradient canary": ([10, 100, 1000], [0.3, 0.5, 0.6])})
>>> len(ax.lines)
4
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .common import as_1d, as_numbers, check_options, delta_text, get_axes, place_legend

__all__ = ["plot_last_iterate"]

_AUDIT_MARKERS = ("D", "s", "^", "v")


def plot_last_iterate(steps, composition, heuristic, proven, *, delta, audits=None, ax=None, title=None):
    r"""Epsilon at ``delta`` against T (log-log): composition, the linear-loss heuristic, the proven last-iterate
    bound, and audits of the final model as points.

    Parameters
    ----------
    steps : array_like
        T of each point of the three curves (increasing, > 0).
    composition, heuristic, proven : array_like
        Epsilon at each T (> 0; nan where a bound does not apply, left out).
    delta : float
        Shown in the y label.
    audits : dict, optional
        ``{label: (steps, epsilon_lowers)}``; lower bounds of 0 prove nothing and are not drawn (the log axis has
        no 0), which the legend says.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib Axes
    """
    check_options(delta=delta)
    if delta is None:
        raise TypeError("delta must be a number in (0, 1): the epsilons are at this delta")
    ax = get_axes(ax)
    steps = as_1d(steps, "steps")
    if np.any(steps <= 0) or np.any(np.diff(steps) <= 0):
        raise ValueError(f"steps must be increasing and > 0; got {steps}")
    curves = {"composition": composition, "heuristic": heuristic, "proven": proven}
    styles = {
        "composition": dict(color="#0072B2", marker="o", linewidth=3.0,
                            label="composition of the T steps (PLD)"),
        "heuristic": dict(color="#E69F00", marker="^", linestyle="--",
                          label="last iterate, linear loss (exact there; a heuristic otherwise)"),
        "proven": dict(color="#009E73", marker="s", linewidth=2.2, label="last iterate, proven (convex, projected)"),
    }
    for key, values in curves.items():
        values = as_numbers(values, key)
        if values.shape != steps.shape:
            raise ValueError(f"{key} has {values.size} values but steps has {steps.size}")
        if np.any(values <= 0) or np.any(np.isinf(values)):
            raise ValueError(f"{key} must hold finite epsilons > 0 (or nan); got {values}")
        ok = np.isfinite(values)
        ax.plot(steps[ok], values[ok], markersize=4, **styles[key])
    if audits is not None:
        if not isinstance(audits, Mapping):
            raise TypeError(f"audits must be a dict {{label: (steps, epsilon_lowers)}} or None; got {audits!r}")
        for number, (label, pair) in enumerate(audits.items()):
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(f"audits[{label!r}] must be a pair (steps, epsilon_lowers); got {pair!r}")
            at, lower = as_1d(pair[0], f"audits[{label!r}] steps"), as_1d(pair[1], f"audits[{label!r}] epsilons")
            if at.shape != lower.shape or np.any(lower < 0):
                raise ValueError(f"audits[{label!r}] must be two arrays of one length with epsilons >= 0")
            shown = lower > 0
            hidden = int(np.sum(~shown))
            note = f" ({hidden} point{'s' if hidden > 1 else ''} at 0 not drawn)" if hidden else ""
            ax.plot(at[shown], lower[shown], linestyle="none", marker=_AUDIT_MARKERS[number % len(_AUDIT_MARKERS)],
                    markersize=7, color=("#D55E00", "#CC79A7", "#56B4E9", "#000000")[number % 4],
                    label=f"audit of the final model, {label}, 95% lower bound{note}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("steps $T$")
    ax.set_ylabel(rf"$\varepsilon$ at $\delta = {delta_text(delta)}$")
    if title:
        ax.set_title(title)
    place_legend(ax, fontsize="small")
    return ax
