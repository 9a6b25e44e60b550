r"""What every plot helper shares: argument checks, the accountants' colours, plain log ticks, and a legend
placed where it covers no data.

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> delta_text(1e-5), delta_text(2.5e-6)
('10^{-5}', '2.5 \\times 10^{-6}')
>>> as_1d([1, 2, 3], "epochs")
array([1., 2., 3.])
"""

from __future__ import annotations

import math

import numpy as np

from ...ground.validation import check_choice, check_delta, check_scalar

__all__ = [
    "ACCOUNTANT_STYLES", "get_axes", "as_numbers", "as_1d", "check_options", "as_accuracies", "as_trials",
    "delta_text", "epsilon_label", "plain_log_ticks", "legend_obstacles", "drawing_canvas", "place_legend",
    "mean_and_band",
    "spread_note",
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


def get_axes(ax):
    """``ax`` if it is a matplotlib Axes, a new figure's Axes for None; anything else is a ``TypeError``."""
    from matplotlib.axes import Axes

    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(7, 4.5))
    elif not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None; got {type(ax).__name__} {ax!r}")
    return ax


def as_numbers(values, name):
    """``values`` as a float array; strings, booleans and objects are refused, not converted."""
    array = np.asarray(values)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers; got {array.dtype} values such as {array.ravel()[:1]!r}")
    return array.astype(float)


def as_1d(values, name):
    """``values`` as a non-empty, finite, 1-D float array (else an error naming ``name``)."""
    array = as_numbers(values, name)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array; got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite; got {array}")
    return array


def check_options(*, spread="range", delta=None, baseline=None, labels=(), flags=()):
    """Shared checks: spread, delta, baseline (an accuracy), text labels and booleans (``(name, value)`` pairs)."""
    check_choice(spread, "spread", ("range", "std"))
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


def as_accuracies(values, name):
    """``values`` as a float array of accuracies in [0, 1] (NaN refused)."""
    array = as_numbers(values, name)
    if not np.all((array >= 0) & (array <= 1)):  # also refuses nan
        raise ValueError(f"{name} must be accuracies in [0, 1]; got {array.ravel()[:5]}")
    return array


def as_trials(values, n, name):
    """``values`` as (n, n_trials): a 1-D array is one trial per point."""
    array = as_accuracies(values, name)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},) or ({n}, n_trials); got {np.shape(values)}")
    return array


def delta_text(delta):
    """``10^{-5}`` for 1e-5, ``2.5 \\times 10^{-6}`` otherwise."""
    exponent = math.floor(math.log10(delta))
    mantissa = delta / 10.0**exponent
    if math.isclose(mantissa, 1.0, rel_tol=1e-9):
        return f"10^{{{exponent}}}"
    return f"{mantissa:.3g} \\times 10^{{{exponent}}}"


def epsilon_label(delta, what="total $\\varepsilon$ of the training run"):
    """An axis label: ``what``, with the delta appended when one is given."""
    return what + (f" ($\\delta = {delta_text(delta)}$)" if delta is not None else "")


def plain_log_ticks(axis):
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


def legend_obstacles(ax):
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


def drawing_canvas(figure):
    """The canvas of ``figure``, or an Agg canvas for a figure made without pyplot (``Figure()``).

    Placing a legend needs the drawn sizes of texts, hence a renderer; the bare canvas a ``Figure()`` starts
    with has none. Agg is what ``savefig`` would use for such a figure anyway.
    """
    if not hasattr(figure.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(figure)                        # attaches itself as figure.canvas
    return figure.canvas


def place_legend(ax, axes=None, **kwargs):
    """Put the legend of ``ax`` in the inside position that covers no data of ``axes``, else below the axes.

    The positions are tried on the drawn figure: the legend's window extent must lie inside the axes and
    contain none of the points of :func:`legend_obstacles`. Returns the legend.
    """
    axes = axes or [ax]
    canvas = drawing_canvas(ax.figure)
    canvas.draw()
    points = np.concatenate([legend_obstacles(a) for a in axes])
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


def mean_and_band(ax, x, trials, *, label, spread, color=None, marker="o", linestyle="-"):
    """Draw the mean over the columns of ``trials`` and, with several, their spread as a band; returns the line."""
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


def spread_note(trials, spread):
    """The legend suffix saying how many seeds the mean is over and what the band shows."""
    n = trials.shape[1]
    if n == 1:
        return ""
    return f" (mean of {n} seeds; band: {'min to max' if spread == 'range' else '± 1 std'})"

