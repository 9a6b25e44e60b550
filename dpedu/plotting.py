r"""Plot helpers for the course: each takes an optional matplotlib ``Axes`` and returns the ``Axes``.

* :func:`plot_accuracy_vs_epsilon` - test accuracy against the **total** epsilon of the run
  (log scale), mean over seeds with the spread as a band, the non-private accuracy as a line;
* :func:`plot_epsilon_vs_epochs` - total epsilon against epochs, one curve per accountant (Figure 2
  of Abadi et al. 2016); numbers that are not valid bounds are drawn dashed and labelled so;
* :func:`plot_figure2` - both panels of the course's Figure 2: the paper's view and every accountant;
* :func:`plot_loss_curves` - training loss against epochs (or steps);
* :func:`plot_clipping_noise_tradeoff` - accuracy against the clip norm C, one line per noise multiplier;
* :func:`plot_accuracy_vs_epochs` - accuracy against epochs at one total epsilon, with the noise
  multiplier each needs on a second axis.

No ``plt.show()`` and no global style changes: the caller owns the figure.

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

import math

import numpy as np

__all__ = [
    "ACCOUNTANT_STYLES",
    "plot_accuracy_vs_epsilon",
    "plot_epsilon_vs_epochs",
    "plot_figure2",
    "plot_loss_curves",
    "plot_clipping_noise_tradeoff",
    "plot_accuracy_vs_epochs",
]

# One colour per accountant, the same in every figure of the course (colour-blind-safe Okabe-Ito palette).
ACCOUNTANT_STYLES = {
    "sequential": {"color": "#000000", "linestyle": "-", "marker": "s"},
    "advanced": {"color": "#E69F00", "linestyle": "-", "marker": "^"},
    "strong": {"color": "#D55E00", "linestyle": "-", "marker": "v"},
    "strong_paper": {"color": "#D55E00", "linestyle": "--", "marker": "x"},
    "moments": {"color": "#0072B2", "linestyle": "-", "marker": "o"},
    "rdp": {"color": "#009E73", "linestyle": "-", "marker": "D"},
    "zcdp": {"color": "#CC79A7", "linestyle": "-", "marker": "P"},
    "pld": {"color": "#56B4E9", "linestyle": "-", "marker": "*"},
}


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(7, 4.5))
    return ax


def _as_1d(values, name):
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array; got shape {array.shape}")
    return array


def _as_trials(values, n, name):
    """``values`` as (n, n_trials): a 1-D array is one trial per point."""
    array = np.asarray(values, dtype=float)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},) or ({n}, n_trials); got {np.shape(values)}")
    return array


def _delta_text(delta):
    """``10^{-5}`` for 1e-5, ``2.5 \\times 10^{-6}`` otherwise."""
    exponent = math.floor(math.log10(delta))
    mantissa = delta / 10.0**exponent
    if math.isclose(mantissa, 1.0, rel_tol=1e-9):
        return f"10^{{{exponent}}}"
    return f"{mantissa:.3g} \\times 10^{{{exponent}}}"


def _epsilon_label(delta, what="total $\\varepsilon$ of the training run"):
    return what + (f" ($\\delta = {_delta_text(delta)}$)" if delta is not None else "")


def _plain_log_ticks(axis):
    """Label a log axis 0.1, 1, 10 rather than 10^-1, 10^0, 10^1 (easier to read as epsilons)."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))

    def minor_label(value, _):
        # matplotlib's own minor labels (2x10^-1, 3x10^-1, ...) overlap on short axes; label 2 and 5 in the
        # same plain style, and only when the axis spans at most two decades (else the major ticks suffice)
        low, high = sorted(axis.get_view_interval())
        if low <= 0 or math.log10(high / low) > 2:
            return ""
        leading = value / 10.0 ** math.floor(math.log10(value) + 1e-9)
        return f"{value:g}" if round(leading) in (2, 5) and math.isclose(leading, round(leading), rel_tol=1e-6) else ""

    axis.set_minor_formatter(FuncFormatter(minor_label))


def _mean_and_band(ax, x, trials, *, label, spread, color=None, marker="o", linestyle="-"):
    mean = trials.mean(axis=1)
    (line,) = ax.plot(x, mean, marker=marker, linestyle=linestyle, color=color, label=label)
    if trials.shape[1] > 1:
        if spread == "range":
            low, high = trials.min(axis=1), trials.max(axis=1)
        elif spread == "std":
            sd = trials.std(axis=1, ddof=1)
            low, high = mean - sd, mean + sd
        else:
            raise ValueError(f"spread must be 'range' or 'std'; got {spread!r}")
        ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    return line


def _spread_note(trials, spread):
    n = trials.shape[1]
    if n == 1:
        return ""
    return f" (mean of {n} seeds; band: {'min to max' if spread == 'range' else '± 1 std'})"


def plot_accuracy_vs_epsilon(epsilons, accuracies, *, baseline=None, baseline_label="non-private", delta=None,
                             ax=None, label="DP-SGD", spread="range", color=None, marker="o"):
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
    color, marker
        Line style of the curve.

    Returns
    -------
    matplotlib Axes
    """
    epsilons = _as_1d(epsilons, "epsilons")
    if not np.all(np.isfinite(epsilons)) or np.any(epsilons <= 0):
        raise ValueError("epsilons must be positive and finite (a log axis; draw a non-private run as baseline=)")
    trials = _as_trials(accuracies, len(epsilons), "accuracies")
    ax = _axes(ax)
    order = np.argsort(epsilons)
    _mean_and_band(ax, epsilons[order], trials[order], label=label + _spread_note(trials, spread), spread=spread,
                   color=color, marker=marker)
    if baseline is not None:
        ax.axhline(float(baseline), linestyle="--", color="gray", label=f"{baseline_label}: {float(baseline):.3f}")
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel(_epsilon_label(delta))
    ax.set_ylabel("test accuracy")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="best")  # accuracy curves rise to the right: let matplotlib find the empty corner
    return ax


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
    epochs = _as_1d(epochs, "epochs")
    if not curves:
        raise ValueError("curves is empty: nothing to draw")
    labels = dict(labels or {})
    invalid = set(invalid)
    ax = _axes(ax)
    for key, values in curves.items():
        values = _as_1d(values, f"curves[{key!r}]")
        if values.shape != epochs.shape:
            raise ValueError(f"curves[{key!r}] has {values.size} points but epochs has {epochs.size}")
        style = dict(ACCOUNTANT_STYLES.get(key, {"marker": "."}))
        label = labels.get(key, key)
        if key in invalid:
            style["linestyle"] = "--"
            if "not a valid bound" not in label:
                label += " (not a valid bound)"
        ok = np.isfinite(values)
        ax.plot(epochs[ok], values[ok], label=label, markevery=markevery, markersize=4, **style)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("epochs (steps = epochs / q)")
    ax.set_ylabel(_epsilon_label(delta, "total $\\varepsilon$ after composition"))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_figure2(curves, axes=None):
    r"""Figure 2 of Abadi et al. (2016) from :func:`dpedu.experiments.epsilon_curves`, in two panels.

    Left, linear axes as in the paper: the moments accountant, strong composition as in the paper
    (dashed: **not a valid bound**) and the valid strong-composition recipe. Right, log y axis: every
    accountant that applies; the ones that do not (zCDP for q < 1) are listed as "n/a" in the legend.
    On a Gaussian ledger the valid strong recipe and advanced composition coincide, so they are drawn
    once.

    Parameters
    ----------
    curves : dpedu.experiments.EpsilonCurves
    axes : pair of matplotlib Axes, optional

    Returns
    -------
    (Axes, Axes)
    """
    from .experiments import ACCOUNTANT_LABELS

    if axes is None:
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
    right.legend(fontsize="small", loc="lower right")
    right.set_title(f"every accountant (z = {curves.noise_multiplier:g}, q = {curves.sampling_rate:g}), log scale",
                    fontsize="medium")
    return left, right


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
    if not curves:
        raise ValueError("curves is empty: nothing to draw")
    ax = _axes(ax)
    for label, value in curves.items():
        if isinstance(value, tuple):
            x, losses = value
        else:
            x, losses = None, value
        losses = np.asarray(losses, dtype=float)
        if losses.ndim == 1:
            losses = losses[None, :]
        if losses.ndim != 2 or losses.shape[1] == 0:
            raise ValueError(f"losses of {label!r} must have shape (n,) or (n_seeds, n); got {losses.shape}")
        x = np.arange(1, losses.shape[1] + 1) if x is None else _as_1d(x, f"x of {label!r}")
        if x.shape[0] != losses.shape[1]:
            raise ValueError(f"{label!r}: {x.shape[0]} x values but {losses.shape[1]} losses")
        _mean_and_band(ax, x, losses.T, label=str(label), spread=spread, marker=None)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend()
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
    clip_norms = _as_1d(clip_norms, "clip_norms")
    noise_multipliers = _as_1d(noise_multipliers, "noise_multipliers")
    acc = np.asarray(accuracies, dtype=float)
    if acc.ndim == 2:
        acc = acc[:, :, None]
    if acc.shape[:2] != (clip_norms.size, noise_multipliers.size):
        raise ValueError(f"accuracies must have shape ({clip_norms.size}, {noise_multipliers.size}[, n_seeds]); "
                         f"got {np.shape(accuracies)}")
    if epsilons is not None:
        epsilons = _as_1d(epsilons, "epsilons")
        if epsilons.size != noise_multipliers.size:
            raise ValueError("epsilons must have one value per noise multiplier")
    ax = _axes(ax)
    for k, z in enumerate(noise_multipliers):
        label = f"z = {z:g}"
        if epsilons is not None:
            label += f"  (total $\\varepsilon$ = {epsilons[k]:.3g})"
        _mean_and_band(ax, clip_norms, acc[:, k, :], label=label, spread=spread)
    if baseline is not None:
        ax.axhline(float(baseline), linestyle="--", color="gray", label=f"non-private: {float(baseline):.3f}")
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel("clip norm C")
    ax.set_ylabel("test accuracy")
    title = "noise multiplier z" + (f", $\\delta = {_delta_text(delta)}$" if delta is not None else "")
    if acc.shape[2] > 1:
        title += f"\n(mean of {acc.shape[2]} seeds, band: {'min to max' if spread == 'range' else '± 1 std'})"
    ax.legend(title=title, fontsize="small", title_fontsize="small")
    ax.grid(True, alpha=0.3)
    return ax


def plot_accuracy_vs_epochs(epochs, accuracies, *, noise_multipliers=None, epsilon=None, delta=None, baseline=None,
                            ax=None, spread="range"):
    r"""Test accuracy against the number of epochs at one total epsilon (and the noise each needs).

    Parameters
    ----------
    epochs : array_like, shape (n,)
    accuracies : array_like, shape (n,) or (n, n_seeds)
    noise_multipliers : array_like, shape (n,), optional
        Drawn on a second y axis (right): the z that makes each run cost ``epsilon``.
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
    epochs = _as_1d(epochs, "epochs")
    trials = _as_trials(accuracies, epochs.size, "accuracies")
    ax = _axes(ax)
    handles = [_mean_and_band(ax, epochs, trials, label="test accuracy" + _spread_note(trials, spread), spread=spread)]
    if baseline is not None:
        handles.append(ax.axhline(float(baseline), linestyle="--", color="gray",
                                  label=f"non-private: {float(baseline):.3f}"))
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel("epochs")
    ax.set_ylabel("test accuracy")
    ax.grid(True, alpha=0.3)
    if noise_multipliers is not None:
        z = _as_1d(noise_multipliers, "noise_multipliers")
        if z.size != epochs.size:
            raise ValueError("noise_multipliers must have one value per epoch count")
        right = ax.twinx()
        (line,) = right.plot(epochs, z, color="#D55E00", marker="s", linestyle=":",
                             label="noise multiplier z needed (right axis)")
        right.set_ylabel("noise multiplier z", color="#D55E00")
        handles.append(line)
        ax.right_ax = right
    if epsilon is not None:
        title = f"same total budget for every run: $\\varepsilon = {epsilon:g}$"
        if delta is not None:
            title += f", $\\delta = {_delta_text(delta)}$"
        ax.set_title(title)
    ax.legend(handles=handles, loc="lower center", fontsize="small")
    return ax
