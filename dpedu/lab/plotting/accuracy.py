r"""Accuracy plots: accuracy against the total epsilon, against the clip norm (one line per noise multiplier),
and against the number of epochs at one budget.

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> ax = plot_accuracy_vs_epsilon([0.1, 1.0, 10.0], [[0.80, 0.81], [0.83, 0.84], [0.84, 0.85]],
...                               baseline=0.85, delta=1e-5)
>>> ax.get_xscale(), ax.get_xlabel()
('log', 'total $\\varepsilon$ of the training run ($\\delta = 10^{-5}$)')
>>> len(ax.lines)                      # the mean curve and the non-private line
2
"""

from __future__ import annotations

import numpy as np

from ...ground.validation import check_epsilon
from .common import (
    as_1d, as_accuracies, as_trials, check_options, delta_text, epsilon_label, get_axes, mean_and_band, place_legend,
    plain_log_ticks, spread_note
)

__all__ = ["plot_accuracy_vs_epsilon", "plot_clipping_noise_tradeoff", "plot_accuracy_vs_epochs"]


def plot_accuracy_vs_epsilon(epsilons, accuracies, *, baseline=None, baseline_label="non-private", delta=None,
                             ax=None, label="DP-SGD", spread="range", color=None, marker="o", linestyle="-"):
    r"""Test accuracy against the *total* epsilon of each training run (log x axis).

    Parameters
    ----------
    epsilons : array_like, shape (n_eps,)
        Total epsilon of each run after composition (never a per-step epsilon).
    accuracies : array_like, shape (n_eps,) or (n_eps, n_seeds)
        Accuracies; with several seeds the mean is drawn and the spread shaded.
    baseline : float, optional
        Non-private accuracy, drawn as a dashed horizontal line.
    baseline_label : str
        Its legend entry.
    delta : float, optional
        Shown in the x label.
    ax : matplotlib Axes, optional
    label : str
        Legend entry of the curve (the number of seeds and the band are appended).
    spread : {"range", "std"}
        Band from min to max over seeds, or mean ± one standard deviation.
    color, marker, linestyle
        Style of the curve (give curves that may coincide different markers and line styles).

    Returns
    -------
    matplotlib Axes
    """
    epsilons = as_1d(epsilons, "epsilons")
    if np.any(epsilons <= 0):
        raise ValueError("epsilons must be positive and finite (a log axis; draw a non-private run as baseline=)")
    trials = as_trials(accuracies, len(epsilons), "accuracies")
    check_options(spread=spread, delta=delta, baseline=baseline,
                   labels=(("label", label), ("baseline_label", baseline_label)))
    ax = get_axes(ax)
    order = np.argsort(epsilons)
    mean_and_band(ax, epsilons[order], trials[order], label=label + spread_note(trials, spread), spread=spread,
                   color=color, marker=marker, linestyle=linestyle)
    if baseline is not None:
        ax.axhline(float(baseline), linestyle="--", color="gray", label=f"{baseline_label}: {float(baseline):.3f}")
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel(epsilon_label(delta))
    ax.set_ylabel("test accuracy")
    ax.grid(True, which="major", alpha=0.3)
    place_legend(ax, fontsize="small")
    return ax



def plot_clipping_noise_tradeoff(clip_norms, noise_multipliers, accuracies, *, epsilons=None, delta=None,
                                 baseline=None, ax=None, spread="range"):
    r"""Test accuracy against the clip norm C (log x), one line per noise multiplier z.

    Parameters
    ----------
    clip_norms : array_like, shape (n_clip,)
    noise_multipliers : array_like, shape (n_noise,)
    accuracies : array_like, shape (n_clip, n_noise) or (n_clip, n_noise, n_seeds)
    epsilons : array_like, shape (n_noise,), optional
        Total epsilon of each z (the same for every C), shown in the legend.
    delta : float, optional
    baseline : float, optional
        Non-private accuracy.
    ax : matplotlib Axes, optional
    spread : {"range", "std"}

    Returns
    -------
    matplotlib Axes
    """
    clip_norms = as_1d(clip_norms, "clip_norms")
    noise_multipliers = as_1d(noise_multipliers, "noise_multipliers")
    if np.any(clip_norms <= 0) or np.any(noise_multipliers < 0):
        raise ValueError("clip_norms must be positive (a log axis) and noise_multipliers >= 0")
    acc = as_accuracies(accuracies, "accuracies")
    check_options(spread=spread, delta=delta, baseline=baseline)
    if acc.ndim == 2:
        acc = acc[:, :, None]
    if acc.shape[:2] != (clip_norms.size, noise_multipliers.size):
        raise ValueError(f"accuracies must have shape ({clip_norms.size}, {noise_multipliers.size}[, n_seeds]); "
                         f"got {np.shape(accuracies)}")
    if epsilons is not None:
        epsilons = as_1d(epsilons, "epsilons")
        if epsilons.size != noise_multipliers.size:
            raise ValueError("epsilons must have one value per noise multiplier")
    ax = get_axes(ax)
    for k, z in enumerate(noise_multipliers):
        label = f"z = {z:g}"
        if epsilons is not None:
            label += f"  (total $\\varepsilon$ = {epsilons[k]:.3g})"
        mean_and_band(ax, clip_norms, acc[:, k, :], label=label, spread=spread)
    if baseline is not None:
        ax.axhline(float(baseline), linestyle="--", color="gray", label=f"non-private: {float(baseline):.3f}")
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("clip norm C")
    ax.set_ylabel("test accuracy")
    title = "noise multiplier z" + (f", $\\delta = {delta_text(delta)}$" if delta is not None else "")
    if acc.shape[2] > 1:
        title += f"\n(mean of {acc.shape[2]} seeds, band: {'min to max' if spread == 'range' else '± 1 std'})"
    ax.grid(True, alpha=0.3)
    place_legend(ax, title=title, fontsize="small", title_fontsize="small")
    return ax


def plot_accuracy_vs_epochs(epochs, accuracies, *, noise_multipliers=None, epsilon=None, delta=None, baseline=None,
                            ax=None, spread="range", right=None):
    r"""Test accuracy against the number of epochs at one total epsilon (and the noise each needs).

    Parameters
    ----------
    epochs : array_like, shape (n,)
    accuracies : array_like, shape (n,) or (n, n_seeds)
    noise_multipliers : array_like, shape (n,), optional
        Drawn on a second y axis (right): the z that makes each run cost ``epsilon``.
    right : (str, array_like of shape (n,)), optional
        Another quantity for the right axis instead, as ``(axis label, values)``: e.g. the noise std of
        the averaged gradient when z is the same for every run (a constant would draw a flat line).
    epsilon, delta : float, optional
        The fixed total budget, shown in the title.
    baseline : float, optional
    ax : matplotlib Axes, optional
    spread : {"range", "std"}

    Returns
    -------
    matplotlib Axes
        The accuracy axes (the noise axes is ``ax.right_ax`` when drawn).
    """
    epochs = as_1d(epochs, "epochs")
    if np.any(epochs <= 0):
        raise ValueError(f"epochs must be positive (a log axis); got {epochs}")
    trials = as_trials(accuracies, epochs.size, "accuracies")
    check_options(spread=spread, delta=delta, baseline=baseline)
    if epsilon is not None:
        check_epsilon(epsilon)
    if noise_multipliers is not None and right is not None:
        raise ValueError("give noise_multipliers or right, not both: there is one right axis")
    if noise_multipliers is not None:
        right = ("noise multiplier z needed", noise_multipliers)
    if right is not None:
        if not (isinstance(right, tuple) and len(right) == 2 and isinstance(right[0], str)):
            raise TypeError(f"right must be a pair (axis label, values); got {right!r}")
        right_values = as_1d(right[1], "noise_multipliers" if noise_multipliers is not None else "right values")
        if right_values.size != epochs.size:
            raise ValueError(f"{right[0]!r} must have one value per epoch count ({epochs.size}); got {right_values.size}")
    ax = get_axes(ax)
    handles = [mean_and_band(ax, epochs, trials, label="test accuracy" + spread_note(trials, spread), spread=spread)]
    if baseline is not None:
        handles.append(ax.axhline(float(baseline), linestyle="--", color="gray",
                                  label=f"non-private: {float(baseline):.3f}"))
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    if epochs.size <= 12:  # label every epoch count drawn, not only the powers of ten
        ax.set_xticks(epochs, [f"{e:g}" for e in epochs])
        ax.set_xticks([], minor=True)
    ax.set_xlabel("epochs")
    ax.set_ylabel("test accuracy")
    ax.grid(True, alpha=0.3)
    owner, drawn = ax, [ax]
    if right is not None:
        owner = ax.right_ax = ax.twinx()
        (line,) = owner.plot(epochs, right_values, color="#D55E00", marker="s", linestyle=":",
                             label=f"{right[0]} (right axis)")
        owner.set_ylabel(right[0], color="#D55E00")
        owner.margins(y=0.12)  # keep its end points off the frame (and off the baseline drawn there)
        handles.append(line)
        drawn.append(owner)
    if epsilon is not None:
        title = f"same total budget for every run: $\\varepsilon = {epsilon:g}$"
        if delta is not None:
            title += f", $\\delta = {delta_text(delta)}$"
        ax.set_title(title)
    place_legend(owner, drawn, handles=handles, fontsize="small")
    return ax
