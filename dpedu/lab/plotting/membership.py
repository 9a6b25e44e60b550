r"""Membership attacks on log-log ROC axes, under the ceiling DP puts on them (docs/math.md §20.6).

:func:`plot_attack_roc` draws, for one training algorithm and one group of records, the ROC of each attack
(:class:`~dpedu.lab.audit.mia_audit.MembershipAttackReport`) with its bootstrap band, the guessing diagonal
TPR = FPR, and, for a private run, the two ceilings: the accountant's trade-off curve :math:`1 - \beta(\alpha)`
and the line :math:`e^\varepsilon\alpha + \delta`. An attack under the ceiling is what correct code gives; an
attack above it would be a privacy bug. :func:`plot_attack_grid` lays out one panel per (run, group).

Log-log axes show what matters: the TPR at FPRs of 0.1 % and 1 %, where a linear ROC is a flat line
(Carlini et al. 2022).
"""

from __future__ import annotations

import numpy as np

from ..audit.mia_audit import MembershipAttackReport
from ..audit.mia_stats import epsilon_line
from .common import delta_text, get_axes, place_legend

__all__ = ["plot_attack_roc", "plot_attack_grid", "ATTACK_STYLES"]

# one colour per attack (Okabe-Ito), the same in every figure
ATTACK_STYLES = {
    "lira-online": {"color": "#0072B2", "linestyle": "-"},
    "lira-offline": {"color": "#0072B2", "linestyle": "--"},
    "rmia-online": {"color": "#D55E00", "linestyle": "-"},
    "rmia-offline": {"color": "#D55E00", "linestyle": "--"},
}
_FLOOR = 1e-4


def _check_reports(reports):
    if isinstance(reports, MembershipAttackReport):
        reports = [reports]
    reports = list(reports)
    if not reports or not all(isinstance(r, MembershipAttackReport) for r in reports):
        raise TypeError("reports must be a MembershipAttackReport or a non-empty sequence of them "
                        "(from dpedu.lab.audit.membership_attack)")
    return reports


def plot_attack_roc(reports, *, group="all", ax=None, title=None, band=True, legend=True, fontsize=9):
    """ROCs of ``reports`` (attacks on the same shadow models) for record group ``group``, on log-log axes from
    1e-4, with the ceilings of the first report's run. Returns the Axes."""
    reports = _check_reports(reports)
    missing = [r.attack for r in reports if group not in r.rocs]
    if missing:
        raise ValueError(f"group {group!r} was not evaluated by {missing}; evaluated: {sorted(reports[0].rocs)}")
    for name, flag in (("band", band), ("legend", legend)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False; got {flag!r}")
    ax = get_axes(ax)
    grid = np.geomspace(_FLOOR, 1.0, 200)
    ax.plot(grid, grid, color="#BBBBBB", linestyle=":", linewidth=1.0, label="guessing (TPR = FPR)")
    first = reports[0]
    if first.ceiling is not None:
        delta = delta_text(first.delta)
        alpha = first.ceiling.alpha
        keep = alpha >= _FLOOR
        ax.plot(alpha[keep], np.maximum(1.0 - first.ceiling.beta[keep], _FLOOR), color="black", linewidth=1.6,
                label=rf"ceiling: 1 $-$ $\beta$(FPR), the {first.accountant.upper()} trade-off curve of the run")
        ax.plot(grid, epsilon_line(grid, first.epsilon, first.delta), color="black", linestyle="--", linewidth=1.0,
                label=rf"ceiling: $e^\varepsilon\,$FPR$ + \delta$ ($\delta = {delta}$)")
    for report in reports:
        roc = report.rocs[group]
        style = ATTACK_STYLES.get(report.attack, {})
        keep = roc.fpr > 0
        ax.step(np.maximum(roc.fpr[keep], _FLOOR), np.maximum(roc.tpr[keep], _FLOOR), where="post", linewidth=1.6,
                label=report.attack, **style)
        if band:
            ax.fill_between(roc.band_fprs, np.maximum(roc.band_low, _FLOOR), np.maximum(roc.band_high, _FLOOR),
                            color=style.get("color"), alpha=0.15, linewidth=0, step="post")
    for alpha in first.rocs[group].fprs:                        # the FPRs the table reports
        ax.axvline(alpha, color="#DDDDDD", linewidth=0.8, zorder=0)
    ax.set(xscale="log", yscale="log", xlim=(_FLOOR, 1), ylim=(_FLOOR, 1), xlabel="false-positive rate",
           ylabel="true-positive rate")
    ax.tick_params(labelsize=fontsize)
    ax.xaxis.label.set_size(fontsize + 1)
    ax.yaxis.label.set_size(fontsize + 1)
    if title:
        ax.set_title(title, fontsize=fontsize + 1)
    if legend:
        place_legend(ax, fontsize=fontsize - 1)
    return ax


def plot_attack_grid(runs, *, groups=("all", "vulnerable"), figure=None, fontsize=8):
    """One panel per run (rows) and group (columns), one legend below them all (held by the bottom-left
    panel): ``runs`` maps a title (e.g.
    ``"epsilon = 1"``) to the reports of that run. Returns the 2-d array of Axes. ``figure`` (optional) is a
    matplotlib Figure to draw on; by default a new pyplot figure 7.3 inches wide."""
    if not isinstance(runs, dict) or not runs:
        raise TypeError("runs must be a non-empty dict {title: reports}")
    if isinstance(groups, str):
        groups = (groups,)
    if figure is None:
        import matplotlib.pyplot as plt

        figure = plt.figure(figsize=(7.3, 2.9 * len(runs) + 1.0))
    axes = np.atleast_2d(figure.subplots(len(runs), len(groups), squeeze=False))
    handles = {}
    for row, (title, reports) in enumerate(runs.items()):
        for col, group in enumerate(groups):
            ax = plot_attack_roc(reports, group=group, ax=axes[row, col], title=f"{title}: {group} records",
                                 legend=False, fontsize=fontsize)
            for handle, label in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(label, handle)
    figure.tight_layout(rect=(0, min(0.3, 0.75 / figure.get_figheight()), 1, 1))     # 0.75 inch for the legend
    axes[-1, 0].legend(list(handles.values()), list(handles), loc="lower center", bbox_to_anchor=(0.5, 0.0),
                       bbox_transform=figure.transFigure, ncol=2, fontsize=fontsize, frameon=False)
    return axes
