r"""Training sweeps: train over a grid of settings and seeds, and report test accuracy with the privacy spent.

:func:`run_tradeoff` (test accuracy against the total epsilon, DP-SGD with
:class:`~dpedu.lab.estimator.DPLogisticRegression`), :func:`run_epochs_tradeoff` (more epochs at the same epsilon
means more noise per step), :func:`run_clipping_noise_grid` (the clip norm against the noise multiplier)
and :func:`run_noisy_gd_tradeoff` (the book's noisy gradient descent, accounted several ways).

Seeds come from one ``numpy.random.SeedSequence(rng)``: the same ``rng`` gives the same numbers, and seed
``j`` is the same stream at every grid point (common random numbers: curves are smoother than with
independent seeds, and differences between grid points are not seed noise).

Every (grid point, seed) training is an independent task, run through :func:`dpedu.lab.parallel.map_seeded`:
``n_jobs=2`` trains on two cores, ``joblib.parallel_backend("dask")`` on a Dask cluster, and the numbers
do not depend on either.
"""

from __future__ import annotations

import csv
import numbers
from dataclasses import dataclass, field

import numpy as np

from ...accountants import account, compare
from ...ground.events import gaussian_step_event, steps_from_epochs
from ...textbook.models.logistic import accuracy
from ...textbook.training import plan_noisy_gradient_descent, run_noisy_gradient_descent
from ...ground.validation import check_delta, check_epsilon, check_positive, check_positive_int
from ..parallel import check_n_jobs, map_seeded
from .accounting import check_grid

__all__ = [
    "TradeoffResult",
    "run_tradeoff",
    "EpochsResult",
    "run_epochs_tradeoff",
    "ClippingNoiseResult",
    "GridSettings",
    "run_clipping_noise_grid",
    "unpack_data",
    "seed_sequences",
    "fit_grid",
    "run_epsilon",
    "NoisyGDResult",
    "run_noisy_gd_tradeoff",
    "non_private_accuracy",
]


def unpack_data(data):
    """(X_train, y_train, X_test, y_test) from an AdultData or any 4-sequence (``TypeError`` naming ``data``)."""
    try:
        X_train, y_train, X_test, y_test = data
    except (TypeError, ValueError):
        raise TypeError("data must be (X_train, y_train, X_test, y_test), e.g. dpedu.textbook.datasets.load_adult()") from None
    return X_train, y_train, X_test, y_test


def seed_sequences(seeds, rng):
    """``seeds`` child SeedSequences of ``rng`` (an int, a SeedSequence, a Generator or None): seed j of a sweep."""
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


class _FitScore:
    """One estimator fit on the training part, scored on the test part (picklable, for :func:`map_seeded`)."""

    def __init__(self, data):
        self.data = data

    def __call__(self, params, rng):
        from ..estimator import DPLogisticRegression  # imported when first used: it needs scikit-learn

        X_train, y_train, X_test, y_test = self.data
        clf = DPLogisticRegression(**params, random_state=rng).fit(X_train, y_train)
        return clf.score(X_test, y_test), clf


def fit_grid(configs, seeds, data, progress, describe, n_jobs):
    """Fit every config with every seed; (accuracies (n_configs, n_seeds), last classifier per config).

    ``configs``: estimator parameters (dicts); ``seeds``: from :func:`seed_sequences`; ``describe(params)``: the
    progress label of a config. Seed ``j`` is the same stream at every config (common random numbers); the fits
    run through :func:`dpedu.lab.parallel.map_seeded`, so the result does not depend on ``n_jobs``.
    """
    if not callable(describe):
        raise TypeError(f"describe must be a function of a config; got {type(describe).__name__}")
    n_jobs = check_n_jobs(n_jobs)
    tasks = [(params, j) for params in configs for j in range(len(seeds))]
    results = map_seeded(_FitScore(data), len(tasks), items=[params for params, _ in tasks],
                         seeds=[seeds[j] for _, j in tasks], n_jobs=n_jobs, progress=progress,
                         labels=[f"{describe(params)}, seed {j + 1}/{len(seeds)}" for params, j in tasks])
    accuracies = np.array([accuracy for accuracy, _ in results]).reshape(len(configs), len(seeds))
    fitted = [results[(i + 1) * len(seeds) - 1][1] for i in range(len(configs))]
    return accuracies, fitted


def non_private_accuracy(data):
    """Test accuracy of scikit-learn's ``LogisticRegression`` (no penalty): the non-private ceiling."""
    from sklearn.linear_model import LogisticRegression

    X_train, y_train, X_test, y_test = unpack_data(data)
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


def run_tradeoff(data, *, epsilons, seeds=5, delta=1e-5, accountant="rdp", epochs=32, sampling_rate=0.05,
                 clip_norm=0.5, learning_rate=16.0, baseline=True, rng=0, progress=None, estimator_params=None,
                 n_jobs=1):
    r"""Train DP-SGD logistic regression at each target epsilon, over seeds; test accuracy of each run.

    Each run is :class:`~dpedu.lab.estimator.DPLogisticRegression` with ``epsilon=eps``: the noise multiplier
    is calibrated on ``accountant`` so the **whole run** (``round(epochs / sampling_rate)`` steps) costs
    at most (eps, delta).

    Parameters
    ----------
    data : (X_train, y_train, X_test, y_test)
        For example ``dpedu.textbook.datasets.load_adult()``.
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
        Called with a message as each fit finishes (``"[3/10] epsilon = 0.5, seed 3/5"``).
    estimator_params : dict, optional
        Further ``DPLogisticRegression`` arguments (e.g. ``{"lr_schedule": "constant"}``).
    n_jobs : int
        Workers for the independent fits (:func:`dpedu.lab.parallel.map_seeded`; -1: every core). The
        result does not depend on it.

    Returns
    -------
    TradeoffResult
    """
    data = unpack_data(data)
    epsilons = check_grid(epsilons, "epsilons")
    shared = _estimator_params(epochs=epochs, sampling_rate=sampling_rate, clip_norm=clip_norm,
                               learning_rate=learning_rate, delta=delta, accountant=accountant, extra=estimator_params)
    configs = [dict(shared, epsilon=float(eps)) for eps in epsilons]
    accuracies, fitted = fit_grid(configs, seed_sequences(seeds, rng), data, progress, lambda p: f"epsilon = {p['epsilon']:g}",
                               check_n_jobs(n_jobs))
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
                        clip_norm=0.5, learning_rate=16.0, rng=0, progress=None, estimator_params=None,
                        n_jobs=1):
    r"""At a fixed total epsilon, train for each number of epochs in ``epochs`` (over seeds).

    Privacy fixes the total; each epoch count gets the z that makes ``round(epochs / q)`` steps cost
    exactly that total, so longer training means noisier steps. Arguments as in :func:`run_tradeoff`
    (``n_jobs``: workers for the independent fits). Returns :class:`EpochsResult`.
    """
    data = unpack_data(data)
    epsilon = check_epsilon(epsilon)
    grid = check_grid(epochs, "epochs")
    shared = _estimator_params(epochs=None, sampling_rate=sampling_rate, clip_norm=clip_norm,
                               learning_rate=learning_rate, delta=delta, accountant=accountant, extra=estimator_params)
    configs = [dict(shared, epsilon=epsilon, epochs=float(e)) for e in grid]
    accuracies, fitted = fit_grid(configs, seed_sequences(seeds, rng), data, progress, lambda p: f"{p['epochs']:g} epochs",
                               check_n_jobs(n_jobs))
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


@dataclass(frozen=True)
class GridSettings:
    """What every run of :func:`run_clipping_noise_grid` shares (the defaults are chapter 7's).

    ``learning_rate`` is the rate at ``reference_clip_norm``; a run at clip norm C uses
    ``learning_rate * reference_clip_norm / C``. ``estimator_params``: more
    :class:`~dpedu.lab.estimator.DPLogisticRegression` parameters (e.g. ``{"batch_size": 256}``).
    """

    delta: float = 1e-5
    accountant: str = "rdp"
    epochs: float = 8
    sampling_rate: float = 0.05
    learning_rate: float = 8.0
    reference_clip_norm: float = 0.5
    estimator_params: dict | None = None

    def __post_init__(self):
        check_positive(self.learning_rate, "learning_rate")
        check_positive(self.reference_clip_norm, "reference_clip_norm")
        if self.estimator_params is not None and not isinstance(self.estimator_params, dict):
            raise TypeError(f"estimator_params must be a dict or None; got {type(self.estimator_params).__name__}")

    def shared_params(self):
        """The estimator parameters every run shares (``clip_norm`` and ``learning_rate`` are set per run)."""
        return _estimator_params(epochs=self.epochs, sampling_rate=self.sampling_rate, clip_norm=None,
                                 learning_rate=None, delta=self.delta, accountant=self.accountant,
                                 extra=self.estimator_params)


def run_clipping_noise_grid(data, *, clip_norms, noise_multipliers, seeds=3,
                            settings=None, rng=0, progress=None, n_jobs=1):
    r"""Train at every (C, z) pair of the grid; returns :class:`ClippingNoiseResult`.

    The learning rate is scaled as ``learning_rate * reference_clip_norm / C`` (both in ``settings``, a
    :class:`GridSettings`): when every gradient is clipped, the update is :math:`\eta C (\sum_i u_i + z\,\xi)/(qn)`
    with unit vectors :math:`u_i`, so without the scaling a larger C would only mean a larger step. With it, C
    trades clipping *bias* (small C: every gradient cut to the same length) against *noise* (large C: noise std
    zC grows while the gradients do not). ``n_jobs``: workers for the independent fits.
    """
    data, settings = unpack_data(data), GridSettings() if settings is None else settings
    clip_grid = check_grid(clip_norms, "clip_norms")
    noise_grid = check_grid(noise_multipliers, "noise_multipliers")
    shared, n = settings.shared_params(), len(data[0])
    eta, reference = settings.learning_rate, settings.reference_clip_norm
    # z fixes what a run costs: pass it as the run's epsilon (else each fit warns that z
    # overrides the default target)
    costs = {} if "epsilon" in shared else {float(z): run_epsilon(shared, z, n)
                                            for z in noise_grid if z > 0}
    configs = [dict(shared, clip_norm=float(c), noise_multiplier=float(z),
                    learning_rate=eta * reference / float(c),              # eta C_ref / C
                    **({"epsilon": costs[float(z)]} if float(z) in costs else {}))
               for c in clip_grid for z in noise_grid]
    def label(p):
        return f"C = {p['clip_norm']:g}, z = {p['noise_multiplier']:g}"

    seeds = seed_sequences(seeds, rng)
    accuracies, fitted = fit_grid(configs, seeds, data, progress, label, n_jobs)
    # privacy depends on z, not C: the first row of fits has every z
    epsilons = np.array([clf.epsilon_ for clf in fitted[: len(noise_grid)]])
    params = dict(shared, learning_rate=eta, reference_clip_norm=reference)
    accuracies = accuracies.reshape(len(clip_grid), len(noise_grid), -1)
    return ClippingNoiseResult(clip_norms=clip_grid, noise_multipliers=noise_grid,
                               epsilons=epsilons, accuracies=accuracies,
                               delta=float(settings.delta), params=params)


def run_epsilon(params, noise_multiplier, n_train):
    """Total epsilon of a DP-SGD run with these estimator ``params`` and noise multiplier, by the estimator's
    own accounting (sampling rate, ``steps_from_epochs``, one :func:`~dpedu.accountants.account` call).

    ``params``: the estimator parameters (``epochs``, ``sampling_rate`` or ``batch_size``, ``accountant``,
    ``delta``); ``noise_multiplier`` > 0; ``n_train``: the number of training rows.
    """
    noise_multiplier = check_positive(noise_multiplier, "noise_multiplier")
    n_train = check_positive_int(n_train, "n_train")
    batch_size = params.get("batch_size")
    sampling_rate = params["sampling_rate"] if batch_size is None else batch_size / n_train
    steps = steps_from_epochs(params["epochs"], sampling_rate)
    ledger = [(gaussian_step_event(noise_multiplier, sampling_rate), steps)]
    return account(ledger, params["accountant"], delta=params["delta"], strict=True).epsilon


class _NoisyGDRun:
    """One run of the book's noisy gradient descent and its test accuracy (picklable, for :func:`map_seeded`)."""

    def __init__(self, data, iterations, delta_per_iteration, clip_norm):
        self.data, self.iterations = data, iterations
        self.delta_per_iteration, self.clip_norm = delta_per_iteration, clip_norm

    def __call__(self, epsilon, rng):
        X_train, y_train, X_test, y_test = self.data
        plan = plan_noisy_gradient_descent(self.iterations, epsilon, self.delta_per_iteration, clip_norm=self.clip_norm)
        result = run_noisy_gradient_descent(X_train, y_train, plan, rng=rng)     # the engine's form, same numbers
        return accuracy(result.theta, X_test, y_test), result


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


def run_noisy_gd_tradeoff(data, *, epsilons_per_iteration, iterations=10, delta_per_iteration=1e-5, clip_norm=5.0,
                          seeds=3, accountants=("rdp",), rng=0, progress=None, n_jobs=1):
    r"""The book's noisy gradient descent (classic calibration, per-iteration budget) over a grid.

    Each run is ``iterations`` Gaussian steps that are each (eps, delta_per_iteration)-DP plus one
    eps-DP noisy count. Its total is reported at ``delta = iterations * delta_per_iteration`` (what
    sequential composition spends): as the book states it (key ``"book"``, :math:`(k+1)\varepsilon`) and
    by every accountant in ``accountants``. ``n_jobs`` runs the independent trainings in parallel
    (:func:`dpedu.lab.parallel.map_seeded`; the result does not depend on it). Returns :class:`NoisyGDResult`.
    """
    data = unpack_data(data)
    grid = check_grid(epsilons_per_iteration, "epsilons_per_iteration")
    iterations = check_positive_int(iterations, "iterations")
    delta = iterations * check_delta(delta_per_iteration, "delta_per_iteration")
    n_jobs = check_n_jobs(n_jobs)
    seed_list = seed_sequences(seeds, rng)
    accountants = tuple(accountants)
    tasks = [(float(eps), j) for eps in grid for j in range(len(seed_list))]
    results = map_seeded(_NoisyGDRun(data, iterations, delta_per_iteration, clip_norm), len(tasks),
                         items=[eps for eps, _ in tasks], seeds=[seed_list[j] for _, j in tasks], n_jobs=n_jobs,
                         progress=progress,
                         labels=[f"noisy GD, epsilon per iteration {eps:g}, seed {j + 1}" for eps, j in tasks])
    accuracies = np.array([acc for acc, _ in results]).reshape(len(grid), len(seed_list))
    totals = {name: np.empty(len(grid)) for name in ("book", *accountants)}
    for i in range(len(grid)):
        result = results[(i + 1) * len(seed_list) - 1][1]  # the runs differ only in their noise: same ledger
        totals["book"][i] = result.epsilon
        table = compare(result, delta=delta, accountants=accountants)
        for name in accountants:
            totals[name][i] = table[name]
    return NoisyGDResult(epsilons_per_iteration=grid, accuracies=accuracies, total_epsilons=totals,
                         iterations=iterations, delta=delta)
