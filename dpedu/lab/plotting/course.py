r"""Three figures of chapters 5 to 7, each one call: the privacy loss of one step, privacy against the number of
steps at a fixed noise, and several accuracy-against-epsilon curves on one axes.

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> top, bottom = plot_privacy_loss(rng.normal(0.125, 0.5, 5000), np.log1p(0.01 * np.expm1(rng.normal(0, 2, 5000))),
...                                 sampling_rate=0.01, noise_multiplier=2.0)
>>> bottom.get_yscale(), len(top.lines)          # the sampled step on a log scale; the Gaussian density on top
('log', 1)
"""

from __future__ import annotations

import math

import numpy as np

from ...ground.validation import check_epsilon, check_positive, check_sampling_rate
from .accuracy import plot_accuracy_vs_epsilon
from .common import as_1d, check_options, delta_text, get_axes, place_legend

__all__ = ["plot_privacy_loss", "plot_steps_and_privacy", "plot_accuracy_comparison"]


def _two_panels(axes, figsize, sharex=False):
    """``axes`` as two matplotlib Axes (a new figure of two stacked panels for None)."""
    from matplotlib.axes import Axes

    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(2, 1, figsize=figsize, sharex=sharex, layout="constrained")
    axes = list(np.ravel(axes)) if not isinstance(axes, Axes) else [axes]
    if len(axes) != 2 or not all(isinstance(ax, Axes) for ax in axes):
        raise TypeError(f"axes must be two matplotlib Axes (or None for a new figure); got {axes!r:.80}")
    return axes


def plot_privacy_loss(full_batch, sampled, *, sampling_rate, noise_multiplier, axes=None):
    r"""Histograms of the privacy loss :math:`c(o) = \ln\bigl(1 - q + q\,e^{(2o - 1)/(2z^2)}\bigr)` of one step,
    for samples ``o`` of the output on the larger dataset (Abadi et al. 2016, Section 3.2; docs/math.md §12.1):

    * top, ``full_batch`` (q = 1): the Gaussian mechanism, whose loss is exactly :math:`N(1/(2z^2), 1/z^2)`,
      drawn over the histogram;
    * bottom, ``sampled`` (q = ``sampling_rate``): one DP-SGD step, on a log density axis, with its lower limit
      :math:`\ln(1 - q)` dotted.

    Returns the two Axes (``axes``, or a new figure's two stacked panels).
    """
    full_batch, sampled = as_1d(full_batch, "full_batch"), as_1d(sampled, "sampled")
    q = check_sampling_rate(sampling_rate, "sampling_rate")
    if not q < 1:
        raise ValueError(f"sampling_rate must be below 1 (the top panel is q = 1); got {sampling_rate!r}")
    z = check_positive(noise_multiplier, "noise_multiplier")
    top, bottom = _two_panels(axes, (7.3, 7.5))
    top.hist(full_batch, bins=200, density=True, alpha=0.6, label=f"{full_batch.size:,} samples")
    grid = np.linspace(full_batch.min(), full_batch.max(), 400)
    mean, std = 1 / (2 * z * z), 1 / z
    top.plot(grid, np.exp(-0.5 * ((grid - mean) / std) ** 2) / (std * math.sqrt(2 * math.pi)), "k",
             label=r"$N(1/(2z^2),\ 1/z^2)$")
    top.set(xlabel="privacy loss c(o)", ylabel="density", title=f"Gaussian mechanism, q = 1, z = {z:g}")
    bottom.hist(sampled, bins=200, density=True, alpha=0.6, color="C1", label=f"{sampled.size:,} samples")
    bottom.axvline(math.log1p(-q), color="gray", linestyle=":", label=r"lower limit $\ln(1-q)$")
    bottom.set_yscale("log")
    bottom.set(xlabel="privacy loss c(o)", ylabel="density (log scale)",
               title=f"one DP-SGD step, q = {q:g}, z = {z:g}")
    for ax in (top, bottom):
        place_legend(ax)
    return top, bottom


def plot_steps_and_privacy(steps, epsilons, calibrated, *, noise_multiplier, epochs, target_epsilon, delta,
                           axes=None):
    r"""The pro-active view of the number of steps T at a fixed number of epochs k (q = k/T; docs/math.md §16):

    * top: the total epsilon of the run with the fixed ``noise_multiplier`` z, one line per accountant
      (``epsilons``: ``{name: one epsilon per T}``), beside ``target_epsilon``;
    * bottom: the noise multiplier each T needs for ``target_epsilon`` (``calibrated``), beside z.

    The steps below :math:`2k^2/\varepsilon`, where the closed form is not proven, are shaded. Returns the two
    Axes (``axes``, or a new figure's two stacked panels sharing the T axis).
    """
    steps = as_1d(steps, "steps")
    if np.any(steps <= 0):
        raise ValueError(f"steps must be positive (a log axis); got {steps}")
    if not isinstance(epsilons, dict) or not epsilons:
        raise TypeError(f"epsilons must be a non-empty dict {{accountant: one epsilon per step count}}; got "
                        f"{type(epsilons).__name__}")
    curves = {name: as_1d(values, f"epsilons[{name!r}]") for name, values in epsilons.items()}
    calibrated = as_1d(calibrated, "calibrated")
    for name, values in [*((f"epsilons[{n!r}]", v) for n, v in curves.items()), ("calibrated", calibrated)]:
        if values.shape != steps.shape:
            raise ValueError(f"{name} must hold one value per step count ({steps.size}); got {values.size}")
    z = check_positive(noise_multiplier, "noise_multiplier")
    target = check_epsilon(target_epsilon, "target_epsilon")
    epochs = check_positive(epochs, "epochs")
    check_options(delta=delta)
    top, bottom = _two_panels(axes, (7.3, 8), sharex=True)
    for name, values in curves.items():
        top.plot(steps, values, marker="o", label=f"{name.upper()}: total ε with the closed-form z")
    bottom.plot(steps, calibrated, marker="o", label=f"z calibrated for ε = {target:g}")
    top.axhline(target, color="gray", linestyle="--", label=f"target ε = {target:g}")
    bottom.axhline(z, color="black", linestyle="--", label=f"pro-active closed form z = {z:.3f} (no T)")
    smallest = 2 * epochs**2 / target
    for ax in (top, bottom):
        ax.axvline(smallest, color="gray", linestyle=":", label="T = 2k²/ε (smallest admissible)")
        ax.axvspan(steps.min(), smallest, color="red", alpha=0.07)
        ax.set_xscale("log")
        ax.grid(True, alpha=0.3)
    bottom.set_xlabel(f"number of steps T   (k = {epochs:g} epochs, q = k/T)")
    top.set(ylabel=f"total ε of the run (δ = ${delta_text(delta)}$)", yscale="log",
            title="same z, more steps: less privacy loss")
    bottom.set(ylabel="noise multiplier z", title=f"z needed for total ε = {target:g}")
    for ax in (top, bottom):
        place_legend(ax, fontsize="small")
    return top, bottom


def plot_accuracy_comparison(curves, *, baseline=None, baseline_label="non-private", floor=None, floor_label=None,
                             delta=None, ax=None, title=None):
    """Several accuracy-against-total-epsilon curves on one axes, each as :func:`plot_accuracy_vs_epsilon` draws it.

    ``curves``: a sequence of ``(epsilons, accuracies, label)`` or ``(epsilons, accuracies, label, style)``, with
    ``style`` a dict of ``color``, ``marker``, ``linestyle``. ``baseline`` (the non-private accuracy) is a dashed
    line, ``floor`` (for example the majority class) a dotted one. One legend for all, where it covers no data.
    Returns the Axes.
    """
    if isinstance(curves, (str, bytes, dict)) or not hasattr(curves, "__iter__"):
        raise TypeError(f"curves must be a sequence of (epsilons, accuracies, label[, style]); got "
                        f"{type(curves).__name__}")
    curves = list(curves)
    if not curves:
        raise ValueError("curves must hold at least one curve")
    for index, curve in enumerate(curves):
        if not isinstance(curve, (tuple, list)) or len(curve) not in (3, 4) or (
                len(curve) == 4 and not isinstance(curve[3], dict)):
            raise TypeError(f"curves[{index}] must be (epsilons, accuracies, label) or (epsilons, accuracies, label, "
                            f"style dict); got {curve!r:.80}")
        unknown = set(curve[3]) - {"color", "marker", "linestyle"} if len(curve) == 4 else set()
        if unknown:
            raise ValueError(f"curves[{index}]'s style may set color, marker and linestyle; got {sorted(unknown)}")
    check_options(delta=delta, baseline=baseline, labels=[("baseline_label", baseline_label)]
                  + ([("floor_label", floor_label)] if floor_label is not None else [])
                  + ([("title", title)] if title is not None else []))
    if floor is not None and not 0 <= float(floor) <= 1:
        raise ValueError(f"floor must be an accuracy in [0, 1]; got {floor!r}")
    ax = get_axes(ax)
    for index, (epsilons, accuracies, label, *style) in enumerate(curves):
        plot_accuracy_vs_epsilon(epsilons, accuracies, ax=ax, label=label, delta=delta,
                                 baseline=baseline if index == len(curves) - 1 else None,
                                 baseline_label=baseline_label, **(style[0] if style else {}))
    if floor is not None:
        ax.axhline(float(floor), color="gray", linestyle=":",
                   label=floor_label or f"floor: {float(floor):.4f}")
    if title is not None:
        ax.set_title(title)
    place_legend(ax, fontsize="small")
    return ax
