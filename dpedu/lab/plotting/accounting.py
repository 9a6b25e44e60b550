"""Privacy-accounting plots: total epsilon against epochs (one curve per accountant), the two panels of
Figure 2 of Abadi et al. (2016), and the privacy curve delta(epsilon) of one run under every accountant.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ...accountants import (
    ACCOUNTANT_NAMES, ConversionUnavailableError, UnsupportedEventError, as_ledger, check_accountant_names,
    make_accountant
)
from ...accountants.base import check_epsilons
from ...ground.validation import check_scalar
from .common import ACCOUNTANT_STYLES, as_1d, as_numbers, check_options, epsilon_label, get_axes, place_legend

__all__ = ["plot_epsilon_vs_epochs", "plot_figure2", "plot_privacy_curves"]


def plot_epsilon_vs_epochs(epochs, curves, *, delta=None, ax=None, labels=None, invalid=(), logy=True,
                           markevery=None):
    r"""Total epsilon against the number of epochs, one curve per accountant.

    Parameters
    ----------
    epochs : array_like, shape (n,)
    curves : dict
        ``{key: epsilons}``; keys of :data:`ACCOUNTANT_STYLES` get the course's fixed colours. Points
        that are nan (the accountant does not apply) are left out.
    delta : float, optional
        Shown in the y label.
    ax : matplotlib Axes, optional
    labels : dict, optional
        ``{key: legend label}`` (default: the key).
    invalid : iterable of keys
        Curves that are **not valid bounds** (e.g. the strong-composition recipe as in Abadi et al.):
        drawn dashed and labelled "not a valid bound" unless the label already says so.
    logy : bool
        Log y axis (default): sequential composition is hundreds of times above the moments accountant.
    markevery : int, optional
        Marker spacing for long curves.

    Returns
    -------
    matplotlib Axes
    """
    epochs = as_1d(epochs, "epochs")
    if not isinstance(curves, Mapping):
        raise TypeError(f"curves must be a dict {{key: epsilons}}; got {type(curves).__name__} {curves!r}")
    if not curves:
        raise ValueError("curves is empty: nothing to draw")
    if labels is not None and not isinstance(labels, Mapping):
        raise TypeError(f"labels must be a dict {{key: legend label}} or None; got {labels!r}")
    if isinstance(invalid, str):
        raise TypeError(f"invalid must be a collection of curve keys, not a string; got {invalid!r}")
    if markevery is not None and (isinstance(markevery, bool) or not isinstance(markevery, int) or markevery < 1):
        raise ValueError(f"markevery must be a positive int or None; got {markevery!r}")
    check_options(delta=delta, flags=(("logy", logy),))
    labels = dict(labels or {})
    invalid = set(invalid)
    ax = get_axes(ax)
    for key, values in curves.items():
        values = as_numbers(values, f"curves[{key!r}]")
        if values.ndim != 1 or np.any(values <= 0):  # nan (not applicable) is allowed and left out
            raise ValueError(f"curves[{key!r}] must be a 1-D array of positive epsilons (or nan); got {values}")
        if values.shape != epochs.shape:
            raise ValueError(f"curves[{key!r}] has {values.size} points but epochs has {epochs.size}")
        style = dict(ACCOUNTANT_STYLES.get(key, {"marker": "."}))
        label = labels.get(key, key)
        if key in invalid:
            style["linestyle"] = "--"
            if "not a valid bound" not in label:
                label += " (not a valid bound)"
        ok = np.isfinite(values)
        ax.plot(epochs[ok], values[ok], label=label, markevery=markevery, markersize=4,
                **{"zorder": 2 + len(ax.lines) * 0.01, **style})  # later curves on top, markers visible
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("epochs (steps = epochs / q)")
    ax.set_ylabel(epsilon_label(delta, "total $\\varepsilon$ after composition"))
    ax.grid(True, which="major", alpha=0.3)
    place_legend(ax, fontsize="small")
    return ax


def plot_figure2(curves, axes=None):
    r"""Figure 2 of Abadi et al. (2016) from :func:`dpedu.lab.experiments.epsilon_curves`, in two panels.

    Left, linear axes as in the paper: the moments accountant, strong composition as in the paper
    (dashed: **not a valid bound**) and the valid strong-composition recipe. Right, log y axis: every
    accountant that applies; the ones that do not (zCDP for q < 1) are listed as "n/a" in the legend.
    On a Gaussian ledger the valid strong recipe and advanced composition coincide, so they are drawn
    once.

    Parameters
    ----------
    curves : dpedu.lab.experiments.EpsilonCurves
    axes : pair of matplotlib Axes, optional

    Returns
    -------
    (Axes, Axes)
    """
    from ..experiments import ACCOUNTANT_LABELS, EpsilonCurves

    if not isinstance(curves, EpsilonCurves):
        raise TypeError(f"curves must be a dpedu.lab.experiments.EpsilonCurves (from epsilon_curves); got "
                        f"{type(curves).__name__}")
    if axes is not None:
        if len(np.shape(axes)) != 1 or len(axes) != 2:
            raise ValueError(f"axes must be a pair of matplotlib Axes or None; got {axes!r}")
        axes = [get_axes(a) for a in axes]
    else:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, 2, figsize=(13, 5), layout="constrained")
    left, right = axes
    labels = {key: ACCOUNTANT_LABELS.get(key, key) for key in curves.epsilons}
    paper = {key: curves.epsilons[key] for key in ("strong_paper", "strong", "moments") if key in curves.epsilons}
    if paper:
        plot_epsilon_vs_epochs(curves.epochs, paper, delta=curves.delta, labels=labels, invalid=curves.invalid,
                               logy=False, ax=left)
    left.set_title("Figure 2 of Abadi et al. (2016), reproduced", fontsize="medium")
    every = dict(curves.epsilons)
    if "advanced" in every and "strong" in every and np.allclose(every["advanced"], every["strong"], rtol=1e-9):
        # on a Gaussian ledger the valid strong recipe IS advanced composition: one curve, said once
        del every["strong"]
        labels["advanced"] = "advanced composition (= strong, valid recipe)"
    plot_epsilon_vs_epochs(curves.epochs, every, delta=curves.delta, labels=labels, invalid=curves.invalid,
                           logy=True, ax=right)
    for key in curves.notes:
        if key not in curves.epsilons:  # keep the reason in the legend: "n/a" is part of the comparison
            why = " (no subsampling theorem)" if key == "zcdp" else ""
            right.plot([], [], " ", label=f"{ACCOUNTANT_LABELS.get(key, key)}: n/a{why}")
    low = min(np.nanmin(v) for v in every.values())
    right.set_ylim(low / 20, None)             # room below the curves for the legend
    place_legend(right, fontsize="small")
    right.set_title(f"every accountant (z = {curves.noise_multiplier:g}, q = {curves.sampling_rate:g}), log scale",
                    fontsize="medium")
    return left, right




def _checked_delta_range(delta_range):
    """``delta_range`` as ``(low, high)`` with 0 < low < high <= 1."""
    if isinstance(delta_range, (str, bytes)) or not hasattr(delta_range, "__len__") or len(delta_range) != 2:
        raise TypeError(f"delta_range must be a pair (low, high) of deltas; got {delta_range!r}")
    low, high = (check_scalar(value, "delta_range") for value in delta_range)
    if not 0 < low < high <= 1:
        raise ValueError(f"delta_range must satisfy 0 < low < high <= 1; got {delta_range!r}")
    return low, high


def _composed(name, ledger):
    """A fresh accountant ``name`` with ``ledger`` composed, or ``(None, why not)`` when it refuses an event."""
    accountant = make_accountant(name)
    try:
        for event, count in ledger:
            accountant.compose(event, count)
    except UnsupportedEventError:
        refused = sorted({type(e).__name__ for e, _ in ledger if not accountant.supports(e)})
        return None, f"refuses {', '.join(refused)}"
    return accountant, None


def plot_privacy_curves(history, *, epsilons=None, delta_range=(1e-12, 1.0), accountants=ACCOUNTANT_NAMES, ax=None):
    r"""The privacy curve :math:`\delta(\varepsilon)` of one run under every accountant, on a log delta axis.

    Each accountant composes the run's ledger afresh and answers ``get_delta`` at every epsilon; the smaller
    the curve, the tighter the accountant. The PLD accountant draws two curves, its pessimistic estimate (an
    upper bound: the guarantee) and its optimistic one (a lower bound, dashed): the true curve lies between
    them (``docs/math.md §15.7``). Accountants that refuse an event of the run, or that give no
    epsilon-to-delta conversion, are listed in the legend as "n/a" with the reason.

    Parameters
    ----------
    history : ledger, event(s), or an object with a ledger
        The run: anything :func:`dpedu.accountants.as_ledger` accepts (a ledger ``[(event, count), ...]``,
        a ``TrainingResult``, an accountant, a fitted estimator).
    epsilons : array_like of float > 0, optional
        Where to evaluate the curves. Default: 60 values from near 0 to 1.5 times the smallest epsilon
        any of the accountants certifies at ``delta_range[0]``.
    delta_range : (float, float), default (1e-12, 1)
        Limits of the delta axis, ``0 < low < high <= 1``; deltas below ``low`` are not drawn.
    accountants : sequence of str
        Registry names (:data:`dpedu.accountants.ACCOUNTANT_NAMES`), drawn in this order.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from dpedu.accountants import SubsampledGaussianEvent
    >>> ax = plot_privacy_curves([(SubsampledGaussianEvent(4.0, 0.01), 1000)], accountants=("rdp", "zcdp", "pld"))
    >>> [t.get_text() for t in ax.get_legend().get_texts()][-1]
    'zCDP: n/a (refuses SubsampledGaussianEvent)'
    """
    from ..experiments import ACCOUNTANT_LABELS

    ledger = as_ledger(history)
    if not ledger:
        raise ValueError("history is empty: there is no privacy curve to draw")
    names = check_accountant_names(accountants, "accountants")
    if not names:
        raise ValueError("accountants is empty: nothing to draw")
    if len(set(names)) != len(names):
        raise ValueError(f"accountants lists a name twice: {names!r}")
    low, high = _checked_delta_range(delta_range)
    if epsilons is not None:
        epsilons = np.sort(check_epsilons(epsilons, "epsilons"))
    ax = get_axes(ax)
    composed, notes = {}, {}
    for name in names:
        composed[name], notes[name] = _composed(name, ledger)
    if epsilons is None:
        reach = []
        for acc in composed.values():
            try:
                reach.append(acc.get_epsilon(low))
            except (AttributeError, ValueError):       # no accountant, or delta_range[0] below what it certifies
                continue                               # (the PLD's infinite-loss mass holds its FFT round-off bound)
        reach = [e for e in reach if np.isfinite(e) and e > 0]
        if not reach:
            raise ValueError("no accountant certifies any epsilon at delta_range[0]; pass epsilons explicitly")
        epsilons = np.linspace(0.01, 1.5, 60) * min(reach)
    curves = {}
    for name in names:
        if composed[name] is None:
            continue
        try:
            accountant = composed[name]
            curves[name] = accountant.delta_bracket(epsilons) if name == "pld" else accountant.get_delta(epsilons)
        except ConversionUnavailableError:
            composed[name], notes[name] = None, "no epsilon-to-delta conversion"
    labels = {name: ACCOUNTANT_LABELS.get(name, name) for name in names}
    if "advanced" in curves and "strong" in curves and np.allclose(curves["advanced"], curves["strong"], rtol=1e-9):
        del curves["strong"]  # on a Gaussian ledger the valid strong recipe IS advanced composition: drawn once
        labels["advanced"] = "advanced composition (= strong, valid recipe)"
    for name, deltas in curves.items():
        label, style = labels[name], {**ACCOUNTANT_STYLES.get(name, {}), "marker": None}
        if name == "pld":
            optimistic, deltas = deltas
        shown = np.where(np.asarray(deltas) >= low, deltas, np.nan)
        ax.plot(epsilons, shown, label=label + (" (pessimistic: the guarantee)" if name == "pld" else ""), **style)
        if name == "pld":
            ax.plot(epsilons, np.where(optimistic >= low, optimistic, np.nan), label="PLD optimistic (lower bound)",
                    **{**style, "linestyle": "--"})
    for name in names:
        if composed[name] is None:  # keep the reason in the legend: "n/a" is part of the comparison
            ax.plot([], [], " ", label=f"{labels[name]}: n/a ({notes[name]})")
    ax.set_yscale("log")
    ax.set_ylim(low, high * 1.5)
    ax.set_xlim(0.0, float(epsilons[-1]))
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(r"$\delta(\varepsilon)$ certified for the whole run")
    steps = sum(count for _, count in ledger)
    ax.set_title(f"privacy curve of one run ({steps:,} events) under each accountant", fontsize="medium")
    ax.grid(True, which="major", alpha=0.3)
    place_legend(ax, fontsize="small")
    return ax
