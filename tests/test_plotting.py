"""The plot helpers of :mod:`dpedu.lab.plotting`: they draw what they are given, their legends cover no data, and
bad arguments are refused with an error naming the argument."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from dpedu.lab import plotting  # noqa: E402
from dpedu.accountants import SubsampledGaussianEvent, make_accountant  # noqa: E402
from dpedu.accountants.tradeoff import gaussian_curve  # noqa: E402
from dpedu.lab.experiments import EpsilonCurves  # noqa: E402

EPS = [0.1, 0.3, 1.0, 3.0, 10.0]
ACC = [[0.76, 0.78], [0.80, 0.81], [0.83, 0.84], [0.84, 0.845], [0.845, 0.85]]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _data_points(ax):
    """Display coordinates of every plotted vertex of ``ax`` (lines, with their own transforms, and bands)."""
    points = [line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float)) for line in ax.lines]
    points += [c.get_transform().transform(p.vertices) for c in ax.collections for p in c.get_paths()]
    points = np.concatenate(points) if points else np.empty((0, 2))
    return points[np.all(np.isfinite(points), axis=1)]


def assert_legend_clear(ax, *others):
    """The legend of ``ax`` exists and its box contains no plotted point of ``ax`` or of ``others``."""
    ax.figure.canvas.draw()
    legend = ax.get_legend()
    assert legend is not None, "no legend drawn"
    box = legend.get_window_extent()
    for a in (ax, *others):
        inside = [tuple(p) for p in _data_points(a) if box.contains(*p)]
        assert not inside, f"the legend covers data points (display coordinates) {inside[:3]}"


def _labels(ax):
    return [text.get_text() for text in ax.get_legend().get_texts()]


# --- each function draws, with a legend that covers no data ----------------------------------------------------

def test_accuracy_vs_epsilon_draws_curve_baseline_and_clear_legend():
    ax = plotting.plot_accuracy_vs_epsilon(EPS, ACC, baseline=0.85, delta=1e-5,
                                           baseline_label="a very long label for the non-private baseline run",
                                           label="DP-SGD with a long description of its settings")
    assert len(ax.lines) == 2 and len(ax.collections) == 1           # mean, baseline, band
    np.testing.assert_allclose(ax.lines[0].get_ydata(), np.mean(ACC, axis=1))
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "test accuracy"
    assert any("non-private" in t for t in _labels(ax))
    assert_legend_clear(ax)


def test_accuracy_vs_epsilon_legend_stays_off_a_flat_curve():
    """A curve across the whole top of the axes (the case of chapter 2): no inside corner is free."""
    flat = [[0.776, 0.777]] * 5
    ax = plotting.plot_accuracy_vs_epsilon(EPS, flat, baseline=0.777, delta=1e-4)
    ax.plot([0.1, 10], [0.74, 0.74])                                  # data along the bottom too
    plotting.place_legend(ax)
    assert_legend_clear(ax)


def test_epsilon_vs_epochs_draws_each_curve_and_leaves_nan_out():
    epochs = np.array([1, 2, 5, 10])
    curves = {"sequential": [10, 20, 50, 100], "moments": [0.5, 0.6, np.nan, 1.0], "rdp": [0.5, 0.6, 0.8, 1.0]}
    ax = plotting.plot_epsilon_vs_epochs(epochs, curves, delta=1e-5, invalid=("sequential",))
    assert len(ax.lines) == 3
    assert len(ax.lines[1].get_xdata()) == 3                          # the nan point is left out
    assert ax.lines[0].get_linestyle() == "--" and "not a valid bound" in ax.lines[0].get_label()
    assert ax.lines[2].get_zorder() > ax.lines[1].get_zorder()        # coinciding curves: the later one on top
    assert_legend_clear(ax)


def test_figure2_draws_both_panels():
    epochs = np.array([1.0, 10.0, 100.0])
    curves = EpsilonCurves(epochs=epochs, steps=epochs * 100, noise_multiplier=4.0, sampling_rate=0.01, delta=1e-5,
                           epsilons={"moments": np.array([0.4, 0.5, 1.2]), "strong_paper": np.array([1.0, 3.0, 9.0]),
                                     "strong": np.array([2.0, 6.0, 18.0]), "rdp": np.array([0.3, 0.45, 1.0])},
                           notes={"zcdp": "no subsampling theorem"})
    left, right = plotting.plot_figure2(curves)
    assert len(left.lines) == 3 and len(right.lines) >= 4
    assert any("n/a" in t for t in _labels(right))
    assert_legend_clear(left)
    assert_legend_clear(right)


def test_loss_curves_draws_mean_and_band():
    losses = np.array([[0.7, 0.5, 0.4, 0.35], [0.7, 0.55, 0.42, 0.36]])
    ax = plotting.plot_loss_curves({"lr 1": losses, "lr 4": ([1, 2, 3, 4], [0.7, 0.6, 0.65, 0.5])}, logy=True)
    assert [line.get_label() for line in ax.lines] == ["lr 1", "lr 4"]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), losses.mean(axis=0))
    assert ax.get_yscale() == "log"
    assert_legend_clear(ax)


def test_clipping_noise_tradeoff_draws_one_line_per_noise():
    acc = np.array([[0.80, 0.70], [0.84, 0.76], [0.83, 0.72]])
    ax = plotting.plot_clipping_noise_tradeoff([0.1, 1.0, 10.0], [1.0, 10.0], acc, epsilons=[3.0, 0.1], delta=1e-5,
                                               baseline=0.85)
    assert len(ax.lines) == 3
    assert any("z = 10" in t for t in _labels(ax))
    assert_legend_clear(ax)


def test_accuracy_vs_epochs_right_axis_and_clear_legend():
    ax = plotting.plot_accuracy_vs_epochs([1, 2, 4, 8], [0.80, 0.82, 0.83, 0.81], noise_multipliers=[2, 3, 4, 6],
                                          epsilon=0.5, delta=1e-5, baseline=0.85)
    np.testing.assert_allclose(ax.right_ax.lines[0].get_ydata(), [2, 3, 4, 6])
    assert "noise multiplier" in ax.right_ax.get_ylabel()
    legend_owner = ax.right_ax                   # the legend sits on the top axes, over neither curve
    assert_legend_clear(legend_owner, ax)
    other = plotting.plot_accuracy_vs_epochs([1, 2, 4], [0.80, 0.82, 0.83], right=("batch size", [900, 600, 300]))
    assert other.right_ax.get_ylabel() == "batch size"


# --- bad input: an error naming the argument ---------------------------------------------------------------------

@pytest.mark.parametrize("call, error, name", [
    (lambda: plotting.plot_accuracy_vs_epsilon(EPS, ACC, ax="x"), TypeError, "ax"),
    (lambda: plotting.plot_accuracy_vs_epsilon(["0.1", "1", "10", "3", "5"], ACC), TypeError, "epsilons"),
    (lambda: plotting.plot_accuracy_vs_epsilon(EPS, ACC, delta=0), ValueError, "delta"),
    (lambda: plotting.plot_accuracy_vs_epsilon(EPS, ACC, delta="1e-5"), TypeError, "delta"),
    (lambda: plotting.plot_accuracy_vs_epsilon(EPS, ACC, baseline=85.0), ValueError, "baseline"),
    (lambda: plotting.plot_accuracy_vs_epsilon(EPS, ACC, label=3), TypeError, "label"),
    (lambda: plotting.plot_accuracy_vs_epsilon(EPS, ACC, spread="iqr"), ValueError, "spread"),
    (lambda: plotting.plot_accuracy_vs_epsilon([0.1, np.nan, 1, 2, 3], ACC), ValueError, "epsilons"),
    (lambda: plotting.plot_accuracy_vs_epsilon(EPS, np.array(ACC) * 100), ValueError, "accuracies"),
    (lambda: plotting.plot_epsilon_vs_epochs([1, 2], "x"), TypeError, "curves"),
    (lambda: plotting.plot_epsilon_vs_epochs([1, 2], {"rdp": [1, 2]}, ax="x"), TypeError, "ax"),
    (lambda: plotting.plot_epsilon_vs_epochs([1, 2], {"rdp": [1, 2]}, delta=0), ValueError, "delta"),
    (lambda: plotting.plot_epsilon_vs_epochs([1, 2], {"rdp": ["1", "2"]}), TypeError, "curves['rdp']"),
    (lambda: plotting.plot_epsilon_vs_epochs([1, 2], {"rdp": [1, -2]}), ValueError, "curves['rdp']"),
    (lambda: plotting.plot_epsilon_vs_epochs([1, 2], {"rdp": [1, 2]}, labels="x"), TypeError, "labels"),
    (lambda: plotting.plot_epsilon_vs_epochs([1, 2], {"rdp": [1, 2]}, invalid="rdp"), TypeError, "invalid"),
    (lambda: plotting.plot_epsilon_vs_epochs([1, 2], {"rdp": [1, 2]}, logy="no"), TypeError, "logy"),
    (lambda: plotting.plot_epsilon_vs_epochs([1, 2], {"rdp": [1, 2]}, markevery=0), ValueError, "markevery"),
    (lambda: plotting.plot_figure2("x"), TypeError, "curves"),
    (lambda: plotting.plot_loss_curves("x"), TypeError, "curves"),
    (lambda: plotting.plot_loss_curves({"a": [1.0, 0.5]}, ax="x"), TypeError, "ax"),
    (lambda: plotting.plot_loss_curves({"a": ["1", "0.5"]}), TypeError, "losses of 'a'"),
    (lambda: plotting.plot_loss_curves({"a": np.ones((2, 2, 2))}), ValueError, "curves['a']"),
    (lambda: plotting.plot_loss_curves({"a": ([1, 2, 3], [1.0, 0.5])}), ValueError, "curves['a']"),
    (lambda: plotting.plot_loss_curves({"a": (["x", "y"], [1.0, 0.5])}), TypeError, "curves['a']"),
    (lambda: plotting.plot_loss_curves({"a": [1.0, 0.5]}, xlabel=None), TypeError, "xlabel"),
    (lambda: plotting.plot_clipping_noise_tradeoff([0.1, 1], [1.0], [[0.8], [0.9]], ax="x"), TypeError, "ax"),
    (lambda: plotting.plot_clipping_noise_tradeoff([0.1, 1], [1.0], [[0.8], [0.9]], delta=0), ValueError, "delta"),
    (lambda: plotting.plot_clipping_noise_tradeoff([0, 1], [1.0], [[0.8], [0.9]]), ValueError, "clip_norms"),
    (lambda: plotting.plot_clipping_noise_tradeoff(["a", "b"], [1.0], [[0.8], [0.9]]), TypeError, "clip_norms"),
    (lambda: plotting.plot_accuracy_vs_epochs([1, 2], [0.8, 0.9], ax="x"), TypeError, "ax"),
    (lambda: plotting.plot_accuracy_vs_epochs([1, 2], [0.8, 0.9], epsilon=0.5, delta=0), ValueError, "delta"),
    (lambda: plotting.plot_accuracy_vs_epochs([1, 2], [0.8, 0.9], epsilon=-1), ValueError, "epsilon"),
    (lambda: plotting.plot_accuracy_vs_epochs([1, 2], [0.8, 0.9], noise_multipliers=[1.0]), ValueError, "one value"),
    (lambda: plotting.plot_accuracy_vs_epochs([1, 2], [0.8, 0.9], right="x"), TypeError, "right"),
])
def test_bad_input_is_refused_naming_the_argument(call, error, name):
    with pytest.raises(error, match=None) as info:
        call()
    assert name in str(info.value), f"the message does not name {name!r}: {info.value}"


# --- plot_privacy_curves -----------------------------------------------------------------------------------------

RUN = [(SubsampledGaussianEvent(2.0, 0.05), 200)]
CURVE_EPS = np.linspace(0.2, 4.0, 12)


def test_privacy_curves_draw_each_accountant_pld_bracket_and_clear_legend():
    ax = plotting.plot_privacy_curves(RUN, epsilons=CURVE_EPS, accountants=("moments", "rdp", "zcdp", "pld"))
    drawn = {line.get_label(): line for line in ax.lines}
    assert ax.get_yscale() == "log"
    rdp = make_accountant("rdp").compose(*RUN[0])
    expected = rdp.get_delta(CURVE_EPS)
    np.testing.assert_allclose(drawn["RDP"].get_ydata(), np.where(expected >= 1e-12, expected, np.nan))
    low, high = make_accountant("pld").compose(*RUN[0]).delta_bracket(CURVE_EPS)
    pess = drawn["PLD (pessimistic: the guarantee)"].get_ydata()
    opt = drawn["PLD optimistic (lower bound)"].get_ydata()
    np.testing.assert_allclose(pess, np.where(high >= 1e-12, high, np.nan))
    assert np.all(opt[np.isfinite(opt)] <= pess[np.isfinite(opt)])
    assert np.all(low <= high) and drawn["PLD optimistic (lower bound)"].get_linestyle() == "--"
    rdp_drawn = drawn["RDP"].get_ydata()
    both = np.isfinite(pess) & np.isfinite(rdp_drawn)   # PLD is the tightest, up to its FFT round-off bound (§15.8)
    roundoff = make_accountant("pld").compose(*RUN[0]).roundoff_bound()
    assert both.sum() > 5 and np.all(pess[both] <= rdp_drawn[both] + roundoff)
    assert any(t.startswith("zCDP: n/a (refuses SubsampledGaussianEvent)") for t in _labels(ax))
    assert_legend_clear(ax)


def test_privacy_curves_default_grid_reaches_the_lowest_delta():
    ax = plotting.plot_privacy_curves(RUN, accountants=("rdp", "pld"), delta_range=(1e-8, 1.0))
    x = ax.lines[0].get_xdata()
    assert x.size == 60 and np.all(np.diff(x) > 0)
    pessimistic = make_accountant("pld").compose(*RUN[0]).get_epsilon(1e-8)
    assert x[-1] == pytest.approx(1.5 * pessimistic)       # 1.5 times the tightest epsilon at the lowest delta
    assert ax.get_ylim()[0] == 1e-8
    assert_legend_clear(ax)


def test_privacy_curves_draw_advanced_and_equal_strong_once():
    ax = plotting.plot_privacy_curves(RUN, epsilons=[2.0, 4.0, 8.0], accountants=("advanced", "strong"))
    assert [line.get_label() for line in ax.lines] == ["advanced composition (= strong, valid recipe)"]
    assert_legend_clear(ax)


def test_privacy_curves_note_an_accountant_without_delta(monkeypatch):
    from dpedu.accountants import ConversionUnavailableError
    from dpedu.accountants.moments import MomentsAccountant

    def refuse(self, epsilon):
        raise ConversionUnavailableError("no conversion")

    monkeypatch.setattr(MomentsAccountant, "_delta", refuse)
    ax = plotting.plot_privacy_curves(RUN, epsilons=CURVE_EPS, accountants=("moments", "rdp"))
    assert [line.get_label() for line in ax.lines if line.get_xdata().size] == ["RDP"]
    assert "moments accountant: n/a (no epsilon-to-delta conversion)" in _labels(ax)


@pytest.mark.parametrize("kwargs, error, name", [
    ({"history": "abc"}, TypeError, "history"),
    ({"history": []}, ValueError, "history"),
    ({"accountants": "pld"}, TypeError, "accountants"),
    ({"accountants": ("pld", "nope")}, ValueError, "nope"),
    ({"accountants": ()}, ValueError, "accountants"),
    ({"accountants": ("rdp", "rdp")}, ValueError, "accountants"),
    ({"delta_range": (1e-3, 1e-5)}, ValueError, "delta_range"),
    ({"delta_range": (0.0, 1.0)}, ValueError, "delta_range"),
    ({"delta_range": "ab"}, TypeError, "delta_range"),
    ({"delta_range": (True, 1.0)}, TypeError, "delta_range"),
    ({"epsilons": [0.5, -1.0]}, ValueError, "epsilons"),
    ({"epsilons": [0.5, np.nan]}, ValueError, "epsilons"),
    ({"epsilons": ["a"]}, TypeError, "epsilons"),
    ({"epsilons": [[0.5, 1.0]]}, TypeError, "epsilons"),
    ({"ax": "x"}, TypeError, "ax"),
])
def test_privacy_curves_bad_input_is_refused_naming_the_argument(kwargs, error, name):
    arguments = {"history": RUN, "epsilons": CURVE_EPS, "accountants": ("rdp",), **kwargs}
    history = arguments.pop("history")
    with pytest.raises(error) as info:
        plotting.plot_privacy_curves(history, **arguments)
    assert name in str(info.value), f"the message does not name {name!r}: {info.value}"


# --- the figures of chapters 5 to 7 ------------------------------------------------------------------------------

def _losses(n=4000, q=0.01, z=2.0):
    rng = np.random.default_rng(7)
    def loss(o, q):                                  # c(o) of docs/math.md §12.1
        return np.log1p(q * np.expm1((2 * o - 1) / (2 * z * z)))

    return loss(rng.normal(0.0, z, n) + 1.0, 1.0), loss(rng.normal(0.0, z, n) + (rng.random(n) < q), q)


# T, epsilon by accountant at the closed-form z, the z calibrated for the target (chapter 6's figure)
STEPS_PANEL = (np.array([5, 20, 100, 400, 2000]), {"rdp": [3.0, 1.2, 0.6, 0.4, 0.3], "pld": [2.5, 1.0, 0.5, 0.35, 0.25]},
               [9.0, 7.5, 6.9, 6.6, 6.5])
PANEL_KWARGS = dict(noise_multiplier=6.78, epochs=5, target_epsilon=0.5, delta=1e-5)


def _steps_panel():
    return STEPS_PANEL


def _comparison():
    return [(EPS, ACC, "a", {"color": "#000000", "marker": "s"}), ([0.2, 2.0], [[0.8, 0.81], [0.83, 0.84]], "b")]



def test_privacy_loss_draws_the_gaussian_above_and_the_sampled_step_on_a_log_scale():
    top, bottom = plotting.plot_privacy_loss(*_losses(), sampling_rate=0.01, noise_multiplier=2.0)
    (density,) = top.lines
    x, y = density.get_data()
    assert x[np.argmax(y)] == pytest.approx(1 / 8, abs=0.05)          # N(1/(2z^2), 1/z^2) peaks at 1/8
    assert bottom.get_yscale() == "log" and bottom.lines[0].get_xdata()[0] == pytest.approx(np.log(0.99))
    assert len(top.patches) == len(bottom.patches) == 200              # the two histograms
    for ax in (top, bottom):
        assert_legend_clear(ax)


def test_steps_and_privacy_draws_every_accountant_the_target_and_the_unproven_steps():
    top, bottom = plotting.plot_steps_and_privacy(*_steps_panel(), **PANEL_KWARGS)
    labels = [line.get_label() for line in top.lines]
    assert labels[:2] == ["RDP: total ε with the closed-form z", "PLD: total ε with the closed-form z"]
    assert "target ε = 0.5" in labels and top.get_xscale() == bottom.get_xscale() == "log"
    assert any(line.get_xdata()[0] == 100 for line in bottom.lines)   # T = 2k^2/eps = 100, dotted
    assert len(top.patches) == 1 and len(bottom.patches) == 1            # the shaded T < 2k^2/eps
    np.testing.assert_allclose(bottom.lines[0].get_ydata(), [9.0, 7.5, 6.9, 6.6, 6.5])


def test_accuracy_comparison_draws_each_curve_once_with_one_legend():
    ax = plotting.plot_accuracy_comparison(_comparison(), baseline=0.85, floor=0.75, floor_label="majority",
                                           delta=1e-5, title="t")
    labels = [line.get_label() for line in ax.lines]
    assert labels[0].startswith("a") and labels[1].startswith("b (mean of 2 seeds")
    assert "non-private: 0.850" in labels and "majority" in labels and ax.get_title() == "t"
    assert ax.lines[0].get_color() == "#000000"
    assert_legend_clear(ax)


@pytest.mark.parametrize("call, error, name", [
    (lambda: plotting.plot_privacy_loss(*_losses(), sampling_rate=1.0, noise_multiplier=2.0), ValueError,
     "sampling_rate"),
    (lambda: plotting.plot_privacy_loss(*_losses(), sampling_rate=0.01, noise_multiplier=0), ValueError,
     "noise_multiplier"),
    (lambda: plotting.plot_privacy_loss(["a"], [1.0], sampling_rate=0.01, noise_multiplier=2.0), TypeError,
     "full_batch"),
    (lambda: plotting.plot_privacy_loss(*_losses(), sampling_rate=0.01, noise_multiplier=2.0, axes="x"), TypeError,
     "axes"),
    (lambda: plotting.plot_steps_and_privacy(*_steps_panel()[:1], [], [1.0] * 5, **PANEL_KWARGS), TypeError,
     "epsilons"),
    (lambda: plotting.plot_steps_and_privacy([5, 20], {"rdp": [1.0]}, [1.0, 2.0], **PANEL_KWARGS), ValueError,
     "epsilons['rdp']"),
    (lambda: plotting.plot_steps_and_privacy(*_steps_panel(), **{**PANEL_KWARGS, "delta": 2}), ValueError, "delta"),
    (lambda: plotting.plot_steps_and_privacy(*_steps_panel(), **{**PANEL_KWARGS, "target_epsilon": -1}), ValueError,
     "target_epsilon"),
    (lambda: plotting.plot_accuracy_comparison("abc"), TypeError, "curves"),
    (lambda: plotting.plot_accuracy_comparison([]), ValueError, "curves"),
    (lambda: plotting.plot_accuracy_comparison([(EPS, ACC)]), TypeError, "curves[0]"),
    (lambda: plotting.plot_accuracy_comparison([(EPS, ACC, "a", {"width": 2})]), ValueError, "curves[0]"),
    (lambda: plotting.plot_accuracy_comparison(_comparison(), floor=75), ValueError, "floor"),
    (lambda: plotting.plot_accuracy_comparison(_comparison(), baseline=85), ValueError, "baseline"),
])
def test_the_chapter_figures_refuse_bad_input_naming_the_argument(call, error, name):
    with pytest.raises(error) as info:
        call()
    assert name in str(info.value), info.value


# --- figures made without pyplot -------------------------------------------------------------------------------

def _tradeoff_panels(ax):
    """plot_tradeoff_panels draws its own two panels on ``figure``: the placeholder axes make way; the
    legend is in the second (ROC) panel."""
    figure = ax.figure
    ax.remove()
    return plotting.plot_tradeoff_panels([gaussian_curve(1.0)], figure=figure)[0][1]


def _attack_report():
    """A membership attack on made-up shadow models of a (mu = 2)-GDP run: its ROC and its ceiling."""
    from dpedu.accountants import GaussianEvent
    from dpedu.lab.audit import ShadowModels, membership_attack

    rng = np.random.default_rng(0)
    members = rng.random((8, 60)) < 0.5
    signals = rng.normal(size=(8, 60)) + 0.5 * members
    shadow = ShadowModels(members, signals, rng.normal(size=(8, 20)), [(GaussianEvent(0.5), 1)])
    return membership_attack(shadow, "lira-online", groups=("all",), n_bootstrap=5, audit=False, rng=0)


def _attack_grid(ax):
    figure = ax.figure
    ax.remove()
    return plotting.plot_attack_grid({"made up": _attack_report()}, groups=("all",), figure=figure)[-1, 0]


def _figure2_curves():
    epochs = np.array([1.0, 10.0, 100.0])
    return EpsilonCurves(epochs=epochs, steps=epochs * 100, noise_multiplier=4.0, sampling_rate=0.01, delta=1e-5,
                         epsilons={"moments": np.array([0.4, 0.5, 1.2]), "strong_paper": np.array([1.0, 3.0, 9.0]),
                                   "strong": np.array([2.0, 6.0, 18.0]), "rdp": np.array([0.3, 0.45, 1.0])},
                         notes={"zcdp": "no subsampling theorem"})


PYPLOT_FREE_CALLS = {
    "plot_accuracy_vs_epsilon": lambda ax: plotting.plot_accuracy_vs_epsilon(EPS, ACC, baseline=0.85, ax=ax),
    "plot_clipping_noise_tradeoff": lambda ax: plotting.plot_clipping_noise_tradeoff(
        [0.1, 1.0, 10.0], [1.0, 10.0], [[0.7, 0.6], [0.8, 0.7], [0.75, 0.72]], ax=ax),
    "plot_accuracy_vs_epochs": lambda ax: plotting.plot_accuracy_vs_epochs(
        [1, 2, 4, 8], [0.80, 0.82, 0.83, 0.81], noise_multipliers=[2, 3, 4, 6], ax=ax),
    "plot_epsilon_vs_epochs": lambda ax: plotting.plot_epsilon_vs_epochs(
        [1, 2, 4], {"rdp": [0.5, 0.8, 1.2], "moments": [0.6, 0.9, 1.4]}, delta=1e-5, ax=ax),
    "plot_privacy_curves": lambda ax: plotting.plot_privacy_curves(
        RUN, epsilons=CURVE_EPS, accountants=("rdp", "pld"), ax=ax),
    "plot_loss_curves": lambda ax: plotting.plot_loss_curves({"a": [1.0, 0.7, 0.5], "b": [0.9, 0.8, 0.6]}, ax=ax),
    "plot_figure2": lambda axes: plotting.plot_figure2(_figure2_curves(), axes=axes),
    "plot_tradeoff": lambda ax: plotting.plot_tradeoff([gaussian_curve(1.0)], ax=ax)[0],
    "plot_tradeoff_panels": lambda ax: _tradeoff_panels(ax),
    "plot_adaptive_clipping": lambda ax: plotting.plot_adaptive_clipping(
        [1.0, 0.8, 0.7, 0.65], [2, 4], [0.7, 0.66], target_quantile=0.5, ax=ax),
    "plot_last_iterate": lambda ax: plotting.plot_last_iterate(
        [10, 100, 1000], [0.7, 1.8, 6.0], [0.4, 1.3, 4.4], [0.7, 1.5, 1.5], delta=1e-5,
        audits={"gradient canary": ([10, 100], [0.2, 0.0])}, ax=ax),
    "plot_attack_roc": lambda ax: plotting.plot_attack_roc(_attack_report(), ax=ax),
    "plot_attack_grid": lambda ax: _attack_grid(ax),
    "plot_privacy_loss": lambda axes: plotting.plot_privacy_loss(*_losses(), sampling_rate=0.01, noise_multiplier=2.0,
                                                                 axes=axes),
    "plot_steps_and_privacy": lambda axes: plotting.plot_steps_and_privacy(*_steps_panel(), axes=axes,
                                                                           **PANEL_KWARGS),
    "plot_accuracy_comparison": lambda ax: plotting.plot_accuracy_comparison(_comparison(), baseline=0.85,
                                                                             floor=0.75, ax=ax),
}
TWO_PANELS = {"plot_figure2", "plot_privacy_loss", "plot_steps_and_privacy"}


def test_plot_helpers_are_all_covered_by_the_pyplot_free_test():
    assert set(PYPLOT_FREE_CALLS) == {name for name in plotting.__all__ if name.startswith("plot_")}


@pytest.mark.parametrize("name", sorted(PYPLOT_FREE_CALLS))
def test_every_plot_helper_draws_on_a_figure_made_without_pyplot(name):
    # matplotlib.figure.Figure() has no pyplot canvas with a renderer; the legend placement must still work
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4.5))
    target = figure.subplots(1, 2) if name in TWO_PANELS else figure.subplots()
    n_figures = len(plt.get_fignums())
    result = PYPLOT_FREE_CALLS[name](target)
    for ax in np.atleast_1d(result):
        owner = getattr(ax, "right_ax", ax)                           # plot_accuracy_vs_epochs: on the twin axes
        assert ax.figure is figure and owner.figure is figure
        assert_legend_clear(owner, ax)
    assert len(plt.get_fignums()) == n_figures                        # no pyplot figure was opened
    figure.savefig(io.BytesIO(), format="png")
