"""Training-loss curves against epochs or steps."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .common import as_1d, as_numbers, check_options, get_axes, mean_and_band, place_legend

__all__ = ["plot_loss_curves"]


def plot_loss_curves(curves, *, ax=None, xlabel="epoch", ylabel="mean training loss", logy=False, spread="range"):
    """Training loss against epochs or steps, one curve per entry.

    Parameters
    ----------
    curves : dict
        ``{label: losses}`` or ``{label: (x, losses)}``; ``losses`` of shape (n,) or (n_seeds, n) (the
        mean is drawn, the spread shaded). Without ``x`` the points are 1, 2, ..., n.
    ax : matplotlib Axes, optional
    xlabel, ylabel : str
    logy : bool
    spread : {"range", "std"}

    Returns
    -------
    matplotlib Axes

    Notes
    -----
    A training loss is computed on the private data and is not itself private: plot it to learn,
    do not publish it as if it were covered by the run's epsilon.
    """
    if not isinstance(curves, Mapping):
        raise TypeError(f"curves must be a dict {{label: losses}}; got {type(curves).__name__} {curves!r}")
    if not curves:
        raise ValueError("curves is empty: nothing to draw")
    check_options(spread=spread, labels=(("xlabel", xlabel), ("ylabel", ylabel)), flags=(("logy", logy),))
    ax = get_axes(ax)
    for label, value in curves.items():
        if isinstance(value, tuple):
            x, losses = value
        else:
            x, losses = None, value
        name = f"curves[{label!r}] (the losses of {label!r})"
        losses = as_numbers(losses, name)
        if losses.ndim == 1:
            losses = losses[None, :]
        if losses.ndim != 2 or losses.shape[1] == 0:
            raise ValueError(f"{name} must have shape (n,) or (n_seeds, n); got {losses.shape}")
        x = np.arange(1, losses.shape[1] + 1) if x is None else as_1d(x, f"the x of curves[{label!r}]")
        if x.shape[0] != losses.shape[1]:
            raise ValueError(f"curves[{label!r}]: {x.shape[0]} x values but {losses.shape[1]} losses")
        mean_and_band(ax, x, losses.T, label=str(label), spread=spread, marker=None)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    place_legend(ax, fontsize="small")
    return ax


