r"""Experiments behind the course figures and the ``python -m dpedu`` commands.

Two kinds, kept apart on purpose:

* **accounting only** (no data, fast, deterministic): :func:`epsilon_for_run` accounts one DP-SGD
  run with every accountant; :func:`epsilon_curves` does it for a range of epochs (Figure 2 of
  Abadi et al. 2016); :func:`noise_for_target` asks each accountant which noise multiplier z the same
  target epsilon needs.
* **training** (Adult or any data, over several seeds): :func:`run_tradeoff` (test accuracy against
  the total epsilon, DP-SGD with :class:`~dpedu.estimator.DPLogisticRegression`),
  :func:`run_epochs_tradeoff` (more epochs at the same epsilon means more noise per step),
  :func:`run_clipping_noise_grid` (the clip norm against the noise multiplier) and
  :func:`run_noisy_gd_tradeoff` (the book's noisy gradient descent, accounted two ways).

Every epsilon here is the **total** epsilon of a whole training run, after composition, never the
epsilon of one step. Seeds come from one ``numpy.random.SeedSequence(rng)``: the same ``rng`` gives the
same numbers, and seed ``j`` is the same stream at every grid point (common random numbers: curves
are smoother than with independent seeds, and differences between grid points are not seed noise).

Abadi et al.'s setting (q = 0.01, z = 4, 100 epochs = 10,000 steps, delta = 1e-5):

>>> values, notes = epsilon_for_run(noise_multiplier=4.0, sampling_rate=0.01, steps=10_000, delta=1e-5,
...                                 accountants=("moments", "rdp", "strong_paper", "zcdp"))
>>> {name: round(eps, 4) for name, eps in values.items()}
{'moments': 1.2586, 'rdp': 1.0355, 'strong_paper': 9.3391, 'zcdp': nan}
>>> sorted(notes)                      # why zCDP does not apply, and why the paper recipe is no bound
['moments', 'strong_paper', 'zcdp']
"""

from __future__ import annotations

import csv
import math
import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import calibrate
from .validation import check_delta, check_epsilon, check_noise_multiplier, check_positive, check_positive_int
from .validation import check_sampling_rate
from .accountants import UnsupportedEventError, make_accountant
from .events import GaussianEvent, SubsampledGaussianEvent

__all__ = [
    "ACCOUNTANT_KEYS",
    "ACCOUNTANT_LABELS",
    "INVALID_BOUNDS",
    "steps_from_epochs",
    "epsilon_for_run",
    "EpsilonCurves",
    "epsilon_curves",
    "noise_for_target",
    "TradeoffResult",
    "run_tradeoff",
    "EpochsResult",
    "run_epochs_tradeoff",
    "ClippingNoiseResult",
    "run_clipping_noise_grid",
    "NoisyGDResult",
    "run_noisy_gd_tradeoff",
    "non_private_accuracy",
]

# Keys in the teaching order (loosest theorem first). "strong_paper" is the strong-composition recipe
# that reproduces Abadi et al.'s Figure 2 numbers: shown beside the valid recipe, never as a bound.
ACCOUNTANT_KEYS = ("sequential", "advanced", "strong", "strong_paper", "moments", "rdp", "zcdp", "pld")
ACCOUNTANT_LABELS = {
    "sequential": "sequential composition",
    "advanced": "advanced composition",
    "strong": "strong composition (valid recipe)",
    "strong_paper": "strong composition, paper recipe (not a valid bound)",
    "moments": "moments accountant",
    "rdp": "RDP",
    "zcdp": "zCDP",
    "pld": "PLD",
}
INVALID_BOUNDS = ("strong_paper",)
_OPTIONS = {"strong_paper": ("strong", {"recipe": "paper"})}


def _registry_name(key):
    """(registry name, constructor options) for an accountant key of :data:`ACCOUNTANT_KEYS`."""
    if key not in ACCOUNTANT_LABELS:
        raise ValueError(f"unknown accountant {key!r}; choose from {', '.join(ACCOUNTANT_KEYS)}")
    return _OPTIONS.get(key, (key, {}))


def _check_keys(accountants):
    if isinstance(accountants, str):
        raise TypeError(f"accountants must be a sequence of names such as ('rdp', 'pld'); got the string {accountants!r}")
    accountants = tuple(accountants)
    for key in accountants:
        _registry_name(key)
    return accountants


def _step_event(noise_multiplier, sampling_rate):
    """A full batch (q = 1) is a plain Gaussian release; otherwise a Poisson-subsampled one."""
    if sampling_rate == 1.0:
        return GaussianEvent(noise_multiplier)
    return SubsampledGaussianEvent(noise_multiplier, sampling_rate)


def steps_from_epochs(epochs, sampling_rate):
    """``round(epochs / q)`` steps (one epoch is 1/q steps in expectation), at least 1.

    >>> steps_from_epochs(100, 0.01), steps_from_epochs(0.5, 0.3)
    (10000, 2)
    """
    epochs = check_positive(epochs, "epochs")
    q = check_sampling_rate(sampling_rate)
    return max(1, round(epochs / q))


def _account(key, event, steps, delta):
    """(epsilon, note) for one accountant key; epsilon nan (with the reason) when it does not apply.

    Non-numerical warnings (e.g. the best order at the edge of the grid) become part of the note;
    RuntimeWarnings are passed on.
    """
    name, options = _registry_name(key)
    acc = make_accountant(name, **options)
    notes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            epsilon = acc.compose(event, steps).get_epsilon(delta)
        except UnsupportedEventError as exc:
            epsilon = math.nan
            notes.append(str(exc))
        except ValueError as exc:  # e.g. the run's own deltas already exceed delta
            epsilon = math.nan
            notes.append(f"no epsilon at this delta: {exc}")
    for w in caught:
        if issubclass(w.category, RuntimeWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        elif str(w.message) not in notes:
            notes.append(str(w.message))
    caveat = getattr(acc, "caveat", None)
    if caveat and not math.isnan(epsilon):
        notes.insert(0, caveat)
    return epsilon, "; ".join(notes)


def epsilon_for_run(*, noise_multiplier, sampling_rate, steps, delta, accountants=ACCOUNTANT_KEYS):
    r"""Total epsilon of ``steps`` DP-SGD steps, by every accountant in ``accountants``.

    Parameters
    ----------
    noise_multiplier : float
        z > 0 (noise std over the clip norm).
    sampling_rate : float
        Poisson rate q in (0, 1]; q = 1 means full-batch steps (``GaussianEvent``), the only case
        where zCDP applies.
    steps : int
        T >= 1.
    delta : float
        Total delta.
    accountants : sequence of str
        Keys of :data:`ACCOUNTANT_KEYS`; ``"strong_paper"`` is Abadi et al.'s recipe (not a bound).

    Returns
    -------
    (dict, dict)
        ``{key: epsilon}`` (nan where the accountant does not apply) and ``{key: note}`` (why nan, or a
        caveat such as "not a valid bound").
    """
    z = check_noise_multiplier(noise_multiplier)
    if z == 0:
        raise ValueError("noise_multiplier=0 releases the clipped sum exactly: epsilon is infinite, nothing to account")
    event = _step_event(z, check_sampling_rate(sampling_rate))
    steps = check_positive_int(steps, "steps")
    delta = check_delta(delta)
    values, notes = {}, {}
    for key in _check_keys(accountants):
        values[key], note = _account(key, event, steps, delta)
        if note:
            notes[key] = note
    return values, notes


@dataclass
class EpsilonCurves:
    """Total epsilon against epochs, one curve per accountant (Figure 2 of Abadi et al. 2016).

    Attributes
    ----------
    epochs, steps : numpy.ndarray
        The x values; ``steps = round(epochs / q)``.
    epsilons : dict
        ``{key: array of epsilons}``, nan where an accountant does not apply.
    notes : dict
        ``{key: why it does not apply / its caveat}`` (the first note of each accountant).
    invalid : tuple
        Keys whose numbers are **not** valid bounds (the paper recipe), to be drawn as such.
    """

    epochs: np.ndarray
    steps: np.ndarray
    epsilons: dict
    notes: dict
    noise_multiplier: float
    sampling_rate: float
    delta: float
    invalid: tuple = INVALID_BOUNDS

    def labels(self):
        """``{key: label for a legend}``."""
        return {key: ACCOUNTANT_LABELS[key] for key in self.epsilons}

    def to_csv(self, path):
        """One row per epoch value: epochs, steps, then one column per accountant."""
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["epochs", "steps", *self.epsilons])
            for i, (e, t) in enumerate(zip(self.epochs, self.steps)):
                writer.writerow([f"{e:g}", int(t), *(f"{v[i]:.6g}" for v in self.epsilons.values())])


def epsilon_curves(*, noise_multiplier, sampling_rate, delta, epochs, accountants=ACCOUNTANT_KEYS, progress=None):
    r"""Total epsilon after each number of epochs in ``epochs``, for every accountant.

    Parameters
    ----------
    noise_multiplier, sampling_rate, delta : float
        z, q and the total delta (Abadi et al.'s Figure 2: 4, 0.01, 1e-5).
    epochs : array_like of float
        Epoch counts (> 0); each becomes ``round(epochs / q)`` steps.
    accountants : sequence of str
        Keys of :data:`ACCOUNTANT_KEYS`. Accountants that apply to none of the points (zCDP with q < 1)
        are dropped from ``epsilons`` and keep their reason in ``notes``.
    progress : callable, optional
        Called with a short message before each accountant (the PLD curve takes a few seconds).

    Returns
    -------
    EpsilonCurves

    Examples
    --------
    >>> c = epsilon_curves(noise_multiplier=4.0, sampling_rate=0.01, delta=1e-5, epochs=[100, 400],
    ...                    accountants=("moments", "strong_paper", "zcdp"))
    >>> {k: np.round(v, 2).tolist() for k, v in c.epsilons.items()}   # the paper: 1.26, 2.55 / 9.34, 24.22
    {'moments': [1.26, 2.58], 'strong_paper': [9.34, 24.21]}
    """
    z = check_noise_multiplier(noise_multiplier)
    q = check_sampling_rate(sampling_rate)
    delta = check_delta(delta)
    epochs = np.atleast_1d(np.asarray(epochs, dtype=float))
    if epochs.ndim != 1 or epochs.size == 0 or not np.all(np.isfinite(epochs)) or np.any(epochs <= 0):
        raise ValueError(f"epochs must be a non-empty 1-D array of positive numbers; got {epochs!r}")
    steps = np.array([steps_from_epochs(e, q) for e in epochs])
    event = _step_event(z, q)
    curves, notes = {}, {}
    for key in _check_keys(accountants):
        if progress is not None:
            progress(f"accounting {ACCOUNTANT_LABELS[key]} at {len(steps)} points ...")
        values, key_notes = [], []
        for t in steps:
            eps, note = _account(key, event, int(t), delta)
            values.append(eps)
            if note and note not in key_notes:
                key_notes.append(note)
        values = np.array(values)
        if key_notes:
            notes[key] = key_notes[0]
        if not np.all(np.isnan(values)):
            curves[key] = values
    return EpsilonCurves(epochs=epochs, steps=steps, epsilons=curves, notes=notes, noise_multiplier=z,
                         sampling_rate=q, delta=delta)


def noise_for_target(*, target_epsilon, target_delta, sampling_rate, steps, accountants=ACCOUNTANT_KEYS, rtol=1e-3,
                     progress=None):
    r"""The noise multiplier each accountant needs for the same run to meet the same target.

    For each key, :func:`dpedu.calibrate.noise_multiplier` (bisection on a fresh accountant; the
    returned z never overshoots the target).

    Returns
    -------
    (dict, dict)
        ``{key: z}`` (nan where the accountant cannot calibrate this run) and ``{key: note}``.

    Examples
    --------
    >>> z, notes = noise_for_target(target_epsilon=1.26, target_delta=1e-5, sampling_rate=0.01, steps=10_000,
    ...                             accountants=("moments", "rdp"))
    >>> {k: round(v, 2) for k, v in z.items()}          # Abadi et al. used z = 4 for epsilon 1.26
    {'moments': 4.0, 'rdp': 3.37}
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    q = check_sampling_rate(sampling_rate)
    steps = check_positive_int(steps, "steps")
    values, notes = {}, {}
    for key in _check_keys(accountants):
        if progress is not None:
            progress(f"calibrating on {ACCOUNTANT_LABELS[key]} ...")
        name, options = _registry_name(key)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                values[key] = calibrate.noise_multiplier(target_epsilon=target_epsilon, target_delta=target_delta,
                                                         sampling_rate=q, steps=steps, accountant=name, rtol=rtol,
                                                         accountant_options=options or None)
            except ValueError as exc:  # UnsupportedEventError is a ValueError too
                values[key] = math.nan
                notes[key] = str(exc)
        for w in caught:
            if issubclass(w.category, RuntimeWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            elif key not in notes:
                notes[key] = str(w.message)
        if key in INVALID_BOUNDS and not math.isnan(values[key]):
            notes[key] = "not a valid bound: this z does NOT guarantee the target"
    return values, notes


# --- training experiments --------------------------------------------------------------------------


def _unpack(data):
    """(X_train, y_train, X_test, y_test) from an AdultData or any 4-sequence."""
    try:
        X_train, y_train, X_test, y_test = data
    except (TypeError, ValueError):
        raise TypeError("data must be (X_train, y_train, X_test, y_test), e.g. dpedu.datasets.load_adult()") from None
    return X_train, y_train, X_test, y_test


def _seeds(seeds, rng):
    n_seeds = check_positive_int(seeds, "seeds")
    if isinstance(rng, np.random.Generator):  # draw the root entropy from it: reproducible for a seeded Generator
        rng = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    elif rng is not None and not isinstance(rng, np.random.SeedSequence):
        if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, numbers.Integral):
            raise TypeError(f"rng must be None, a non-negative integer, a SeedSequence or a numpy.random.Generator; "
                            f"got {type(rng).__name__} {rng!r}")
        if rng < 0:
            raise ValueError(f"rng must be a non-negative integer seed; got {rng}")
    root = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(rng)
    return root.spawn(n_seeds)


def _fit_score(params, seed, data):
    from .estimator import DPLogisticRegression

    X_train, y_train, X_test, y_test = data
    clf = DPLogisticRegression(**params, random_state=np.random.default_rng(seed)).fit(X_train, y_train)
    return clf.score(X_test, y_test), clf


def _grid(configs, seeds, data, progress, describe):
    """Fit every config with every seed; (accuracies (n_configs, n_seeds), last classifier per config)."""
    accuracies = np.empty((len(configs), len(seeds)))
    fitted = []
    total, done = len(configs) * len(seeds), 0
    for i, params in enumerate(configs):
        clf = None
        for j, seed in enumerate(seeds):
            done += 1
            if progress is not None:
                progress(f"[{done}/{total}] {describe(params)}, seed {j + 1}/{len(seeds)}")
            accuracies[i, j], clf = _fit_score(params, seed, data)
        fitted.append(clf)
    return accuracies, fitted


def non_private_accuracy(data):
    """Test accuracy of scikit-learn's ``LogisticRegression`` (no penalty): the non-private ceiling."""
    from sklearn.linear_model import LogisticRegression

    X_train, y_train, X_test, y_test = _unpack(data)
    return float(LogisticRegression(C=np.inf, max_iter=5000).fit(X_train, y_train).score(X_test, y_test))


def _estimator_params(*, epochs, sampling_rate, clip_norm, learning_rate, delta, accountant, extra):
    params = {"epochs": epochs, "sampling_rate": sampling_rate, "clip_norm": clip_norm,
              "learning_rate": learning_rate, "delta": delta, "accountant": accountant}
    params.update(extra or {})
    return params


@dataclass
class TradeoffResult:
    """Test accuracy against the total epsilon (DP-SGD logistic regression, several seeds).

    Attributes
    ----------
    epsilons : numpy.ndarray, shape (n_eps,)
        Target total epsilons (each run is calibrated to meet it).
    accuracies : numpy.ndarray, shape (n_eps, n_seeds)
    achieved_epsilons : numpy.ndarray, shape (n_eps,)
        What the accountant certifies for the calibrated run (<= the target).
    noise_multipliers : numpy.ndarray, shape (n_eps,)
    baseline : float or None
        Non-private test accuracy (scikit-learn ``LogisticRegression``).
    delta : float
    accountant : str
    params : dict
        The estimator parameters shared by every run.
    """

    epsilons: np.ndarray
    accuracies: np.ndarray
    achieved_epsilons: np.ndarray
    noise_multipliers: np.ndarray
    baseline: float | None
    delta: float
    accountant: str
    params: dict = field(default_factory=dict)

    def to_csv(self, path):
        """One row per (epsilon, seed), plus a row ``target_epsilon = inf`` for the non-private baseline."""
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["target_epsilon", "delta", "accountant", "achieved_epsilon", "noise_multiplier", "steps",
                             "sampling_rate", "seed", "test_accuracy"])
            steps = steps_from_epochs(self.params["epochs"], self.params["sampling_rate"])
            for i, eps in enumerate(self.epsilons):
                for j, acc in enumerate(self.accuracies[i]):
                    writer.writerow([f"{eps:g}", f"{self.delta:g}", self.accountant, f"{self.achieved_epsilons[i]:.6g}",
                                     f"{self.noise_multipliers[i]:.6g}", steps, f"{self.params['sampling_rate']:g}", j,
                                     f"{acc:.6f}"])
            if self.baseline is not None:
                writer.writerow(["inf", "0", "none (scikit-learn LogisticRegression)", "inf", "0", "", "", "",
                                 f"{self.baseline:.6f}"])


def _check_epsilon_grid(epsilons, name="epsilons"):
    values = np.atleast_1d(np.asarray(epsilons, dtype=float))
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"{name} must be a non-empty 1-D array of positive finite numbers; got {epsilons!r}")
    return values


def run_tradeoff(data, *, epsilons, seeds=5, delta=1e-5, accountant="rdp", epochs=32, sampling_rate=0.05,
                 clip_norm=0.5, learning_rate=16.0, baseline=True, rng=0, progress=None, estimator_params=None):
    r"""Train DP-SGD logistic regression at each target epsilon, over seeds; test accuracy of each run.

    Each run is :class:`~dpedu.estimator.DPLogisticRegression` with ``epsilon=eps``: the noise multiplier
    is calibrated on ``accountant`` so the **whole run** (``round(epochs / sampling_rate)`` steps) costs
    at most (eps, delta).

    Parameters
    ----------
    data : (X_train, y_train, X_test, y_test)
        For example ``dpedu.datasets.load_adult()``.
    epsilons : array_like
        Target total epsilons.
    seeds : int
        Runs per epsilon (different sampling and noise).
    delta, accountant, epochs, sampling_rate, clip_norm, learning_rate
        Passed to the estimator (its defaults were tuned on a validation split of Adult's training set).
    baseline : bool
        Also fit scikit-learn's non-private ``LogisticRegression``.
    rng : int or SeedSequence
        Root of the seeds.
    progress : callable, optional
        Called with a message before each fit.
    estimator_params : dict, optional
        Further ``DPLogisticRegression`` arguments (e.g. ``{"lr_schedule": "constant"}``).

    Returns
    -------
    TradeoffResult
    """
    data = _unpack(data)
    epsilons = _check_epsilon_grid(epsilons)
    shared = _estimator_params(epochs=epochs, sampling_rate=sampling_rate, clip_norm=clip_norm,
                               learning_rate=learning_rate, delta=delta, accountant=accountant, extra=estimator_params)
    configs = [dict(shared, epsilon=float(eps)) for eps in epsilons]
    accuracies, fitted = _grid(configs, _seeds(seeds, rng), data, progress, lambda p: f"epsilon = {p['epsilon']:g}")
    base = None
    if baseline:
        if progress is not None:
            progress("non-private baseline (scikit-learn LogisticRegression) ...")
        base = non_private_accuracy(data)
    return TradeoffResult(epsilons=epsilons, accuracies=accuracies,
                          achieved_epsilons=np.array([clf.epsilon_ for clf in fitted]),
                          noise_multipliers=np.array([clf.noise_multiplier_ for clf in fitted]),
                          baseline=base, delta=float(delta), accountant=accountant, params=shared)


@dataclass
class EpochsResult:
    """Accuracy against the number of epochs at one fixed total epsilon.

    ``noise_multipliers[i]`` is what epochs[i] needs for the same epsilon: more steps, more noise per step.
    """

    epochs: np.ndarray
    accuracies: np.ndarray
    noise_multipliers: np.ndarray
    epsilon: float
    delta: float
    params: dict = field(default_factory=dict)


def run_epochs_tradeoff(data, *, epsilon, epochs, seeds=3, delta=1e-5, accountant="rdp", sampling_rate=0.05,
                        clip_norm=0.5, learning_rate=16.0, rng=0, progress=None, estimator_params=None):
    r"""At a fixed total epsilon, train for each number of epochs in ``epochs`` (over seeds).

    Privacy fixes the total; each epoch count gets the z that makes ``round(epochs / q)`` steps cost
    exactly that total, so longer training means noisier steps. Returns :class:`EpochsResult`.
    """
    data = _unpack(data)
    epsilon = check_epsilon(epsilon)
    grid = _check_epsilon_grid(epochs, "epochs")
    shared = _estimator_params(epochs=None, sampling_rate=sampling_rate, clip_norm=clip_norm,
                               learning_rate=learning_rate, delta=delta, accountant=accountant, extra=estimator_params)
    configs = [dict(shared, epsilon=epsilon, epochs=float(e)) for e in grid]
    accuracies, fitted = _grid(configs, _seeds(seeds, rng), data, progress, lambda p: f"{p['epochs']:g} epochs")
    return EpochsResult(epochs=grid, accuracies=accuracies,
                        noise_multipliers=np.array([clf.noise_multiplier_ for clf in fitted]),
                        epsilon=epsilon, delta=float(delta), params=shared)


@dataclass
class ClippingNoiseResult:
    """Accuracy over a grid of clip norms C (rows) and noise multipliers z (columns), several seeds.

    ``epsilons[k]`` is the total epsilon of noise multiplier ``noise_multipliers[k]``: it does not depend
    on C (privacy depends only on z, q and T), which is why C is a free utility knob.
    """

    clip_norms: np.ndarray
    noise_multipliers: np.ndarray
    accuracies: np.ndarray          # (n_clip, n_noise, n_seeds)
    epsilons: np.ndarray            # (n_noise,)
    delta: float
    params: dict = field(default_factory=dict)


def run_clipping_noise_grid(data, *, clip_norms, noise_multipliers, seeds=3, delta=1e-5, accountant="rdp", epochs=8,
                            sampling_rate=0.05, learning_rate=8.0, reference_clip_norm=0.5, rng=0, progress=None,
                            estimator_params=None):
    r"""Train at every (C, z) pair of the grid; returns :class:`ClippingNoiseResult`.

    The learning rate is scaled as ``learning_rate * reference_clip_norm / C``: when every gradient is
    clipped, the update is :math:`\eta C (\sum_i u_i + z\,\xi)/(qn)` with unit vectors :math:`u_i`, so
    without the scaling a larger C would only mean a larger step. With it, C trades clipping *bias*
    (small C: every gradient cut to the same length) against *noise* (large C: noise std zC grows while
    the gradients do not).
    """
    data = _unpack(data)
    clip_grid = _check_epsilon_grid(clip_norms, "clip_norms")
    noise_grid = _check_epsilon_grid(noise_multipliers, "noise_multipliers")
    reference_clip_norm = check_positive(reference_clip_norm, "reference_clip_norm")
    shared = _estimator_params(epochs=epochs, sampling_rate=sampling_rate, clip_norm=None, learning_rate=None,
                               delta=delta, accountant=accountant, extra=estimator_params)
    configs = [dict(shared, clip_norm=float(c), noise_multiplier=float(z),
                    learning_rate=learning_rate * reference_clip_norm / float(c))
               for c in clip_grid for z in noise_grid]
    accuracies, fitted = _grid(configs, _seeds(seeds, rng), data, progress,
                               lambda p: f"C = {p['clip_norm']:g}, z = {p['noise_multiplier']:g}")
    epsilons = np.array([clf.epsilon_ for clf in fitted[: len(noise_grid)]])
    shared.update(learning_rate=learning_rate, reference_clip_norm=reference_clip_norm)
    return ClippingNoiseResult(clip_norms=clip_grid, noise_multipliers=noise_grid,
                               accuracies=accuracies.reshape(len(clip_grid), len(noise_grid), -1),
                               epsilons=epsilons, delta=float(delta), params=shared)


@dataclass
class NoisyGDResult:
    r"""The book's noisy gradient descent at several per-iteration epsilons, accounted several ways.

    ``total_epsilons[name][i]`` is the total epsilon of the runs at ``epsilons_per_iteration[i]`` by
    accountant ``name`` at ``delta`` (the same runs: only the accounting differs). The key ``"book"`` is
    the book's own statement, :math:`(k+1)\varepsilon` by sequential composition of the per-iteration
    budgets.
    """

    epsilons_per_iteration: np.ndarray
    accuracies: np.ndarray          # (n_eps, n_seeds)
    total_epsilons: dict
    iterations: int
    delta: float


def run_noisy_gd_tradeoff(data, *, epsilons_per_iteration, iterations=10, delta_per_iteration=1e-5, clip=5.0,
                          seeds=3, accountants=("rdp",), rng=0, progress=None):
    r"""The book's noisy gradient descent (classic calibration, per-iteration budget) over a grid.

    Each run is ``iterations`` Gaussian steps that are each (eps, delta_per_iteration)-DP plus one
    eps-DP noisy count. Its total is reported at ``delta = iterations * delta_per_iteration`` (what
    sequential composition spends): as the book states it (key ``"book"``, :math:`(k+1)\varepsilon`) and
    by every accountant in ``accountants``. Returns :class:`NoisyGDResult`.
    """
    from .accountants import compare
    from .models.logistic import accuracy
    from .training import noisy_gradient_descent

    X_train, y_train, X_test, y_test = _unpack(data)
    grid = _check_epsilon_grid(epsilons_per_iteration, "epsilons_per_iteration")
    iterations = check_positive_int(iterations, "iterations")
    delta = iterations * check_delta(delta_per_iteration, "delta_per_iteration")
    seed_list = _seeds(seeds, rng)
    accuracies = np.empty((len(grid), len(seed_list)))
    accountants = tuple(accountants)
    totals = {name: np.empty(len(grid)) for name in ("book", *accountants)}
    for i, eps in enumerate(grid):
        for j, seed in enumerate(seed_list):
            if progress is not None:
                progress(f"[{i * len(seed_list) + j + 1}/{accuracies.size}] noisy GD, epsilon per iteration {eps:g}, "
                         f"seed {j + 1}")
            result = noisy_gradient_descent(X_train, y_train, iterations, float(eps), delta_per_iteration, clip=clip,
                                            rng=np.random.default_rng(seed))
            accuracies[i, j] = accuracy(result.theta, X_test, y_test)
        totals["book"][i] = result.epsilon            # the runs differ only in their noise: same ledger
        table = compare(result, delta=delta, accountants=accountants)
        for name in accountants:
            totals[name][i] = table[name]
    return NoisyGDResult(epsilons_per_iteration=grid, accuracies=accuracies, total_epsilons=totals,
                         iterations=iterations, delta=delta)
