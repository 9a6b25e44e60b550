r"""Adaptive clipping as a figure: the clip norm :math:`C_t` over the steps beside the quantile it tracks.

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> ax = plot_adaptive_clipping([1.0, 0.8, 0.6, 0.5], [2, 4], [0.55, 0.5], target_quantile=0.5)
>>> len(ax.lines), ax.get_yscale()
(2, 'log')
"""

from __future__ import annotations

import numpy as np

from .common import as_1d, get_axes, place_legend

__all__ = ["plot_adaptive_clipping"]


def plot_adaptive_clipping(clip_norms, quantile_steps, gradient_norm_quantiles, *, target_quantile, ax=None):
    r"""Plot :math:`C_t` (``clip_norms``, one per step, from ``details.clip_norms`` of an adaptive
    :func:`dpedu.textbook.training.dp_sgd` run) against the step, and the ``target_quantile`` :math:`\gamma` of all the
    per-example gradient norms at ``quantile_steps`` (``details.loss_steps`` and
    ``details.gradient_norm_quantiles``), labelled as the non-private diagnostic it is. Log scale in C."""
    ax = get_axes(ax)
    clip_norms = as_1d(clip_norms, "clip_norms")
    steps = as_1d(quantile_steps, "quantile_steps")
    quantiles = as_1d(gradient_norm_quantiles, "gradient_norm_quantiles")
    if steps.shape != quantiles.shape:
        raise ValueError(f"quantile_steps and gradient_norm_quantiles must have one length; got {steps.size} and "
                         f"{quantiles.size}")
    if not 0 < target_quantile < 1:
        raise ValueError(f"target_quantile must be in (0, 1); got {target_quantile!r}")
    if np.any(clip_norms <= 0) or np.any(quantiles <= 0):
        raise ValueError("clip_norms and gradient_norm_quantiles must be > 0 (log scale)")
    ax.plot(np.arange(clip_norms.size), clip_norms, color="#0072B2", linewidth=1.2,
            label=r"adaptive clip norm $C_t$ (private: moved by noisy counts)")
    ax.plot(steps, quantiles, color="#D55E00", linestyle="--", marker="o", markersize=3,
            label=rf"$\gamma = {target_quantile:g}$ quantile of all gradient norms (non-private diagnostic)")
    ax.set_yscale("log")
    ax.set_xlabel("step $t$")
    ax.set_ylabel("L2 norm")
    place_legend(ax, fontsize=9)
    return ax
