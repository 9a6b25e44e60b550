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

No ``plt.show()`` and no global style changes: the caller owns the figure. Every helper checks its arguments
(``TypeError``/``ValueError`` naming the argument) and places its legend where it covers no data: in the
emptiest inside position, measured on the drawn figure, or else below the axes.

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
from collections.abc import Mapping

import numpy as np

from .validation import check_delta, check_epsilon, check_scalar

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
    from matplotlib.axes import Axes

    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(7, 4.5))
    elif not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None; got {type(ax).__name__} {ax!r}")
    return ax


def _numbers(values, name):
    """``values`` as a float array; strings, booleans and objects are refused, not converted."""
    array = np.asarray(values)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers; got {array.dtype} values such as {array.ravel()[:1]!r}")
    return array.astype(float)


def _as_1d(values, name):
    array = _numbers(values, name)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array; got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite; got {array}")
    return array


def _check_options(*, spread="range", delta=None, baseline=None, labels=(), flags=()):
    """Shared checks: spread, delta, baseline (an accuracy), text labels and booleans (``(name, value)`` pairs)."""
    if spread not in ("range", "std"):
        raise ValueError(f"spread must be 'range' or 'std'; got {spread!r}")
    if delta is not None:
        check_delta(delta)
    if baseline is not None and not 0 <= check_scalar(baseline, "baseline") <= 1:
        raise ValueError(f"baseline must be an accuracy in [0, 1]; got {baseline!r}")
    for name, value in labels:
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string; got {type(value).__name__} {value!r}")
    for name, value in flags:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False; got {value!r}")


def _accuracies(values, name):
    array = _numbers(values, name)
    if not np.all((array >= 0) & (array <= 1)):  # also refuses nan
        raise ValueError(f"{name} must be accuracies in [0, 1]; got {array.ravel()[:5]}")
    return array


def _as_trials(values, n, name):
    """``values`` as (n, n_trials): a 1-D array is one trial per point."""
    array = _accuracies(values, name)
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


def _obstacles(ax):
    """Display-space points of everything drawn in ``ax``: line vertices (interpolated), bands, bars, texts."""
    points = []
    for line in ax.lines:
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        xy = xy[np.all(np.isfinite(xy), axis=1)]
        if len(xy) > 1:  # a segment crossing the legend has no vertex inside it: sample along it
            t = np.linspace(0.0, 1.0, 25)[:, None, None]
            xy = (xy[:-1] * (1 - t) + xy[1:] * t).reshape(-1, 2)
        points.append(xy)
    for artist in list(ax.collections) + list(ax.patches) + list(ax.texts):
        if artist is ax.patch or not artist.get_visible():
            continue
        box = artist.get_window_extent()
        gx, gy = np.meshgrid(np.linspace(box.x0, box.x1, 5), np.linspace(box.y0, box.y1, 5))
        points.append(np.column_stack([gx.ravel(), gy.ravel()]))
    return np.concatenate(points) if points else np.empty((0, 2))


def _place_legend(ax, axes=None, **kwargs):
    """Put the legend of ``ax`` in the inside position that covers no data of ``axes``, else below the axes.

    The positions are tried on the drawn figure: the legend's window extent must lie inside the axes and
    contain none of the points of :func:`_obstacles`. Returns the legend.
    """
    axes = axes or [ax]
    canvas = ax.figure.canvas
    canvas.draw()
    points = np.concatenate([_obstacles(a) for a in axes])
    inside = ax.get_window_extent()
    for loc in ("upper left", "lower right", "upper right", "lower left", "center right", "center left",
                "lower center", "upper center"):
        legend = ax.legend(loc=loc, **kwargs)
        canvas.draw()
        box = legend.get_window_extent()
        fits = inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1
        if fits and box.count_contains(points) == 0:
            return legend
    renderer = canvas.get_renderer()  # no empty corner: below the tick labels and the x label
    bottom = min(a.get_tightbbox(renderer).y0 for a in axes)
    y = ax.transAxes.inverted().transform((0.0, bottom))[1]
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, y - 0.02), **kwargs)


def _mean_and_band(ax, x, trials, *, label, spread, color=None, marker="o", linestyle="-"):
    mean = trials.mean(axis=1)
    (line,) = ax.plot(x, mean, marker=marker, linestyle=linestyle, color=color, label=label)
    if trials.shape[1] > 1:
        if spread == "range":
            low, high = trials.min(axis=1), trials.max(axis=1)
        else:
            sd = trials.std(axis=1, ddof=1)
            low, high = mean - sd, mean + sd
        ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    return line


def _spread_note(trials, spread):
    n = trials.shape[1]
    if n == 1:
        return ""
    return f" (mean of {n} seeds; band: {'min to max' if spread == 'range' else '± 1 std'})"


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
    epsilons = _as_1d(epsilons, "epsilons")
    if np.any(epsilons <= 0):
        raise ValueError("epsilons must be positive and finite (a log axis; draw a non-private run as baseline=)")
    trials = _as_trials(accuracies, len(epsilons), "accuracies")
    _check_options(spread=spread, delta=delta, baseline=baseline,
                   labels=(("label", label), ("baseline_label", baseline_label)))
    ax = _axes(ax)
    order = np.argsort(epsilons)
    _mean_and_band(ax, epsilons[order], trials[order], label=label + _spread_note(trials, spread), spread=spread,
                   color=color, marker=marker, linestyle=linestyle)
    if baseline is not None:
        ax.axhline(float(baseline), linestyle="--", color="gray", label=f"{baseline_label}: {float(baseline):.3f}")
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel(_epsilon_label(delta))
    ax.set_ylabel("test accuracy")
    ax.grid(True, which="major", alpha=0.3)
    _place_legend(ax, fontsize="small")
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
    _check_options(delta=delta, flags=(("logy", logy),))
    labels = dict(labels or {})
    invalid = set(invalid)
    ax = _axes(ax)
    for key, values in curves.items():
        values = _numbers(values, f"curves[{key!r}]")
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
    ax.set_ylabel(_epsilon_label(delta, "total $\\varepsilon$ after composition"))
    ax.grid(True, which="major", alpha=0.3)
    _place_legend(ax, fontsize="small")
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
    from .experiments import ACCOUNTANT_LABELS, EpsilonCurves

    if not isinstance(curves, EpsilonCurves):
        raise TypeError(f"curves must be a dpedu.experiments.EpsilonCurves (from epsilon_curves); got "
                        f"{type(curves).__name__}")
    if axes is not None:
        if len(np.shape(axes)) != 1 or len(axes) != 2:
            raise ValueError(f"axes must be a pair of matplotlib Axes or None; got {axes!r}")
        axes = [_axes(a) for a in axes]
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
    _place_legend(right, fontsize="small")
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
    if not isinstance(curves, Mapping):
        raise TypeError(f"curves must be a dict {{label: losses}}; got {type(curves).__name__} {curves!r}")
    if not curves:
        raise ValueError("curves is empty: nothing to draw")
    _check_options(spread=spread, labels=(("xlabel", xlabel), ("ylabel", ylabel)), flags=(("logy", logy),))
    ax = _axes(ax)
    for label, value in curves.items():
        if isinstance(value, tuple):
            x, losses = value
        else:
            x, losses = None, value
        losses = _numbers(losses, f"losses of {label!r}")
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
    _place_legend(ax, fontsize="small")
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
    if np.any(clip_norms <= 0) or np.any(noise_multipliers < 0):
        raise ValueError("clip_norms must be positive (a log axis) and noise_multipliers >= 0")
    acc = _accuracies(accuracies, "accuracies")
    _check_options(spread=spread, delta=delta, baseline=baseline)
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
    ax.grid(True, alpha=0.3)
    _place_legend(ax, title=title, fontsize="small", title_fontsize="small")
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
    epochs = _as_1d(epochs, "epochs")
    if np.any(epochs <= 0):
        raise ValueError(f"epochs must be positive (a log axis); got {epochs}")
    trials = _as_trials(accuracies, epochs.size, "accuracies")
    _check_options(spread=spread, delta=delta, baseline=baseline)
    if epsilon is not None:
        check_epsilon(epsilon)
    if noise_multipliers is not None and right is not None:
        raise ValueError("give noise_multipliers or right, not both: there is one right axis")
    if noise_multipliers is not None:
        right = ("noise multiplier z needed", noise_multipliers)
    if right is not None:
        if not (isinstance(right, tuple) and len(right) == 2 and isinstance(right[0], str)):
            raise TypeError(f"right must be a pair (axis label, values); got {right!r}")
        right_values = _as_1d(right[1], "noise_multipliers" if noise_multipliers is not None else "right values")
        if right_values.size != epochs.size:
            raise ValueError(f"{right[0]!r} must have one value per epoch count ({epochs.size}); got {right_values.size}")
    ax = _axes(ax)
    handles = [_mean_and_band(ax, epochs, trials, label="test accuracy" + _spread_note(trials, spread), spread=spread)]
    if baseline is not None:
        handles.append(ax.axhline(float(baseline), linestyle="--", color="gray",
                                  label=f"non-private: {float(baseline):.3f}"))
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
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
            title += f", $\\delta = {_delta_text(delta)}$"
        ax.set_title(title)
    _place_legend(owner, drawn, handles=handles, fontsize="small")
    return ax
