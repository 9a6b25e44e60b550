r"""Trade-off curves and audits on the same axes (docs/math.md §21.2, §21.8).

:func:`plot_tradeoff` draws, on one Axes, the floor :math:`\beta(\alpha)` every accountant certifies for a
run (:func:`dpedu.accountants.tradeoff.tradeoff_curve`), the mu-GDP curve, and audits as observed
(FPR, FNR) points with their Clopper-Pearson boxes (:func:`dpedu.lab.audit.regions.audit_region`). An audit box
entirely below a curve is a proven violation: it is annotated, and returned in ``violations``. A one-run
audit (:func:`dpedu.lab.audit.regions.one_run_region`) is the dashed curve :math:`f_{\varepsilon_{lb},\delta}` the
run's true curve goes below somewhere; an accountant's curve entirely on or above it is a proven violation.
:func:`plot_tradeoff_panels` stacks the linear view over the ROC view on log axes (TPR against FPR), where
attacks at small FPR - the ones that matter - are visible.

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> from dpedu.accountants import GaussianEvent
>>> from dpedu.accountants.tradeoff import tradeoff_curve, gaussian_curve
>>> curves = [tradeoff_curve([(GaussianEvent(1.0), 1)], "rdp"), gaussian_curve(1.0)]
>>> ax, violations = plot_tradeoff(curves)
>>> ax.get_xlabel(), violations
('false-positive rate $\\alpha$ (FPR)', {})
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...accountants.tradeoff import TradeoffCurve, epsilon_delta_tradeoff, gaussian_tradeoff
from ..audit.regions import AuditRegion
from .common import ACCOUNTANT_STYLES, get_axes, place_legend
from ...ground.validation import check_choice

__all__ = ["TradeoffPlot", "plot_tradeoff", "plot_tradeoff_panels", "KINDS"]

KINDS = ("tradeoff", "roc")
_AUDIT_COLORS = ("#C00000", "#7B3294", "#8C510A")
_ROC_FLOOR = 1e-4        # the ROC view's smallest FPR and TPR (log axes)


class TradeoffPlot(NamedTuple):
    """What :func:`plot_tradeoff` drew: the Axes and ``{audit label: (labels of the curves it violates)}``."""

    ax: object
    violations: dict


def _check_items(items, kind, name):
    if isinstance(items, kind):
        items = [items]
    try:
        items = list(items)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of {kind.__name__}; got {type(items).__name__}") from None
    for item in items:
        if not isinstance(item, kind):
            raise TypeError(f"{name} must hold {kind.__name__} objects; got {type(item).__name__} {item!r}")
    return items


def _curve_style(curve):
    key = curve.label.split(" ")[0]
    if curve.mu is not None:
        return {"color": "#444444", "linestyle": "--", "linewidth": 1.8}
    style = dict(ACCOUNTANT_STYLES.get(key, {"color": "#999999"}))
    style.pop("marker", None)
    if "optimistic" in curve.label:
        style.update(linestyle=":", linewidth=1.2)
    else:
        style.setdefault("linewidth", 1.8)
    return style


def _xy(alpha, beta, kind):
    """Points of a curve in the chosen view: (FPR, FNR) or, for the ROC view, (FPR, TPR) on log axes."""
    if kind == "tradeoff":
        return alpha, beta
    keep = alpha >= _ROC_FLOOR
    return alpha[keep], np.maximum(1.0 - beta[keep], _ROC_FLOOR)


def plot_tradeoff(curves, *, audits=(), kind="tradeoff", ax=None, title=None, legend=True, annotate=True, fontsize=9):
    r"""Accountants' trade-off curves, the GDP curve and audits on one Axes.

    Parameters
    ----------
    curves : TradeoffCurve or sequence of them
        Curves that do not apply (NaN) are left out of the plot.
    audits : AuditRegion or sequence of them
        Boxes (canary or white-box Clopper-Pearson audits) with their observed point, a white-box
        Gaussian bound drawn as the curve :math:`G_{\mu_{lb}}` (the run's true curve lies below it), or a
        one-run bound drawn as the dashed curve :math:`f_{\varepsilon_{lb},\delta}` (the run's true curve goes
        below it somewhere).
    kind : {"tradeoff", "roc"}
        ``"tradeoff"``: FNR against FPR on [0, 1]. ``"roc"``: TPR = 1 - FNR against FPR, both on log axes
        from 1e-4: the attacker's best TPR at each FPR.
    ax : matplotlib Axes, optional
        Draw here (e.g. on a pyplot-free ``matplotlib.figure.Figure``); by default a new pyplot figure.
    title : str, optional
    legend, annotate : bool
        Draw the legend; write "proven violation" beside each audit that is one (the flag is returned either way).
    fontsize : float
        Points for the legend and annotations (9 or more keeps them readable in a 730-pixel column).

    Returns
    -------
    TradeoffPlot
        ``(ax, violations)``; ``violations[audit label]`` lists the curves that audit proves wrong.
    """
    curves = _check_items(curves, TradeoffCurve, "curves")
    audits = _check_items(audits, AuditRegion, "audits")
    kind = check_choice(kind, "kind", KINDS)
    for name, flag in (("legend", legend), ("annotate", annotate)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False; got {flag!r}")
    ax = get_axes(ax)
    _ensure_canvas(ax.figure)
    grid = np.linspace(0.0, 1.0, 201) if kind == "tradeoff" else np.geomspace(_ROC_FLOOR, 1.0, 201)
    ax.plot(grid, 1.0 - grid if kind == "tradeoff" else grid, color="#BBBBBB", linestyle=":", linewidth=1.0,
            label="perfect privacy (guessing)")
    for curve in curves:
        if not curve.applies:
            continue
        ax.plot(*_xy(curve.alpha, curve.beta, kind), label=curve.label, **_curve_style(curve))
    violations = {}
    for index, region in enumerate(audits):
        color = _AUDIT_COLORS[index % len(_AUDIT_COLORS)]
        broken = tuple(c.label for c in curves if region.violates(c))
        if broken:
            violations[region.label] = broken
        _draw_audit(ax, region, color, kind, broken if annotate else (), fontsize, len(violations) - 1)
    if kind == "tradeoff":
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel=r"false-positive rate $\alpha$ (FPR)",
               ylabel=r"false-negative rate $\beta$ (FNR)")
    else:
        ax.set(xscale="log", yscale="log", xlim=(_ROC_FLOOR, 1), ylim=(_ROC_FLOOR, 1),
               xlabel="false-positive rate (FPR)", ylabel="true-positive rate (TPR)")
    if title:
        ax.set_title(title, fontsize=fontsize + 1)
    ax.tick_params(labelsize=fontsize)
    ax.xaxis.label.set_size(fontsize + 1)
    ax.yaxis.label.set_size(fontsize + 1)
    if legend:
        place_legend(ax, fontsize=fontsize)
    return TradeoffPlot(ax, violations)


def _ensure_canvas(figure):
    """Give a bare ``matplotlib.figure.Figure`` an Agg canvas (legend placement needs a renderer); pyplot stays out."""
    if not hasattr(figure.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(figure)


def _tex_number(value):
    """``1e-05`` as ``10^{-5}``, ``2.5e-06`` as ``2.5 \\times 10^{-6}`` (for math mode); plain below 3 decimals."""
    if value >= 1e-3:
        return f"{value:g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    mantissa = f"{float(mantissa):g}"
    power = f"10^{{{int(exponent)}}}"
    return power if mantissa == "1" else rf"{mantissa} \times {power}"


def _draw_audit(ax, region, color, kind, broken, fontsize, slot):
    from matplotlib.patches import Rectangle

    if region.is_one_run:
        grid = np.linspace(0.0, 1.0, 401) if kind == "tradeoff" else np.geomspace(_ROC_FLOOR, 1.0, 401)
        floor = epsilon_delta_tradeoff(grid, region.epsilon_lower, region.delta)
        label = (rf"{region.label}: $\varepsilon \geq {region.epsilon_lower:.3g}$ at $\delta = {_tex_number(region.delta)}$ "
                 "(the true curve goes below this somewhere)")
        ax.plot(*_xy(grid, floor, kind), color=color, linestyle="--", linewidth=1.8, label=label)
        kink = (1.0 - region.delta) / (1.0 + np.exp(region.epsilon_lower))
        anchor = (kink, float(epsilon_delta_tradeoff([kink], region.epsilon_lower, region.delta)[0]))
        if kind == "roc":
            anchor = (0.01, max(1.0 - float(epsilon_delta_tradeoff([0.01], region.epsilon_lower, region.delta)[0]),
                                _ROC_FLOOR))
    elif region.is_gaussian:
        grid = np.linspace(0.0, 1.0, 401) if kind == "tradeoff" else np.geomspace(_ROC_FLOOR, 1.0, 401)
        label = rf"{region.label}: $\mu \geq {region.mu_lower:.3g}$ (the run lies below)"
        ax.plot(*_xy(grid, gaussian_tradeoff(grid, region.mu_lower), kind), color=color, linestyle="-.",
                linewidth=1.8, label=label)
        anchor = (0.5, float(gaussian_tradeoff(0.5, region.mu_lower)))
        if kind == "roc":
            anchor = (0.01, max(1.0 - float(gaussian_tradeoff(0.01, region.mu_lower)), _ROC_FLOOR))
    else:
        (x0, x1), (y0, y1) = region.fpr_range, region.fnr_range
        x, y = region.fpr, region.fnr
        if kind == "roc":
            x0, x = max(x0, _ROC_FLOOR), max(x, _ROC_FLOOR)
            y0, y1, y = 1.0 - y1, 1.0 - y0, 1.0 - y
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor=color, alpha=0.18, edgecolor=color,
                               linewidth=1.2))
        ax.plot([x], [y], marker="o", color=color, linestyle="none", markersize=6,
                label=f"{region.label}: observed (FPR, FNR), {region.confidence:.0%} Clopper-Pearson box")
        anchor = (x1, y1 if kind == "tradeoff" else y0)
    if broken:
        # in the empty triangle of each view: above beta = 1 - alpha, or below TPR = FPR
        where = "entirely above its dashed line: " if region.is_one_run else "below "
        text = f"proven violation ({region.confidence:.0%}):\n{where}" + ", ".join(broken)
        shift = 0.12 * max(slot, 0)                  # one note under the other when several audits violate
        ax.annotate(text, xy=anchor, xytext=(0.97, 0.95 - shift) if kind == "tradeoff" else (0.97, 0.05 + shift),
                    textcoords="axes fraction", ha="right", va="top" if kind == "tradeoff" else "bottom",
                    fontsize=fontsize, color=color, arrowprops={"arrowstyle": "->", "color": color})


def plot_tradeoff_panels(curves, *, audits=(), figure=None, title=None, fontsize=9):
    """Two stacked panels: the trade-off view (with the violation notes) over the ROC view on log axes (with
    the legend, in its empty lower-right triangle); see :func:`plot_tradeoff`.

    ``figure``: a ``matplotlib.figure.Figure`` to draw on (e.g. one not attached to pyplot); by default a new
    pyplot figure 7 inches wide. Returns ``(axes, violations)``.
    """
    if figure is None:
        import matplotlib.pyplot as plt

        figure = plt.figure(figsize=(7.0, 10.5))
    _ensure_canvas(figure)
    axes = figure.subplots(2, 1)
    top = plot_tradeoff(curves, audits=audits, kind="tradeoff", ax=axes[0], title=title, legend=False,
                        fontsize=fontsize)
    plot_tradeoff(curves, audits=audits, kind="roc", ax=axes[1], annotate=False, fontsize=fontsize)
    figure.tight_layout()
    return axes, top.violations
