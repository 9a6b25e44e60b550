"""Test accuracy on Adult at a TOTAL epsilon, with and without paying for the tuning (delta = 1e-5).

Run:  python benchmarks/bench_tuning_accuracy.py [--seeds 10] [--epsilons 0.1 1 10] [--n-jobs 2] [--quick]

Per total epsilon and seed, on Adult's training set (the test set is only scored, never used for a choice
except in the last, labelled column):

(a) defaults: ``DPLogisticRegression(epsilon=eps)`` with ``TUNED_DEFAULTS``. Its epsilon does NOT include the
    tuning that produced the defaults: they were chosen non-privately on a validation split of Adult's
    training data (``dpedu.lab.experiments.tuning_costs.defaults_provenance_cost`` says what composing that grid
    search would have cost).
(b) grid search, naive composition: every one of the k = 16 settings of SPACE trained on all the training rows and
    scored by a Laplace-noised count of its correct predictions on the same rows (epsilon_s = eps / 50 each;
    docs/math.md §23.5 says why scoring on the training rows is private), the best score kept. The per-run noise is
    calibrated (``grid_noise_multiplier``) so that the RDP composition of the k runs and k scores is eps.
(c) private selection: ``PrivateHyperparameterSearch`` over the same SPACE with the same score, a Poisson number
    K of trials with E[K] = 10 (Papernot & Steinke 2022, Thm 6), per-run noise from ``search_noise_multiplier``
    so that the RepeatAndSelect event's RDP epsilon is eps (docs/math.md §23). If K = 0 (probability e^-10)
    nothing is released, and the fixed public guess "<= 50K" for every row is scored instead.
(d) adaptive clipping, C not tuned: ``DPLogisticRegression(epsilon=eps, target_quantile=g, clip_norm=0.1)``
    from the initial C_0 = 0.1 of Andrew et al. (2021), for g = 0.5 (their generic median), 0.8 and 0.9 (the
    quantiles benchmarks/bench_adaptive_clipping.py shows); the other settings are the defaults, as in (a).
    The quantile g is itself a setting: 0.8 was added after 0.5 and 0.9 had been measured, so the 0.8 column
    is a choice made on Adult, like (a)'s. The count's noise is inside the one event (docs/math.md §24), so
    epsilon_ <= eps.
Best fixed C: (a)'s settings with each C of FIXED_CLIPS; the column shows the C with the best mean TEST
    accuracy - a non-private choice, made on the test set, so it flatters the fixed C. It is what (d) is
    compared against.

The search space (b, c) is generic, NOT derived from TUNED_DEFAULTS (those were tuned on Adult's training data,
so a space built from them would not be free): learning rates and clip norms on a log grid a factor 4 and
about 3 apart, one fixed per-run plan of 1 % Poisson batches for 64 epochs (6,400 steps), linear decay.
Every epsilon printed is the RDP accountant's at delta = 1e-5 and is checked to be <= the total epsilon.

How these settings came about (so that a reader can discount them): a first round used 16 epochs, a logarithmic
K (E[K] = 10), epsilon_s = eps / 10 and a 20 % validation split, and missed the targets (83.15 % at eps 1, 83.59 %
at eps 10). The second round - 64 epochs, a Poisson K, epsilon_s = eps / 50, scores on the training rows - was
chosen from per-setting runs on Adult and from how each choice moves the per-run noise multiplier; the space
itself did not change. Those choices were made on Adult, so the (c) column is not a pre-registered result.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from dpedu.accountants import LaplaceEvent, account  # noqa: E402
from dpedu.textbook.datasets import load_adult  # noqa: E402
from dpedu.lab.estimator import DPLogisticRegression  # noqa: E402
from dpedu.ground.events import steps_from_epochs  # noqa: E402
from dpedu.lab.experiments.tuning_costs import grid_noise_multiplier  # noqa: E402
from dpedu.textbook.mechanisms import laplace_mechanism  # noqa: E402
from dpedu.lab.parallel import map_seeded  # noqa: E402
from dpedu.lab.tuning import PrivateHyperparameterSearch, search_noise_multiplier  # noqa: E402

DELTA = 1e-5
EPSILONS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
QUICK_EPSILONS = (0.1, 1.0, 10.0)
TARGETS = {1.0: 0.833, 10.0: 0.843}                    # issue 22: private selection, tuning included
ADAPTIVE_GAP = 0.003                                   # issue 22: adaptive within 0.3 points of the best fixed C


@dataclass(frozen=True)
class Setup:
    """Everything the methods depend on besides the data, the total epsilon and the generator."""

    space: dict = field(default_factory=lambda: {"learning_rate": (1.0, 4.0, 16.0, 64.0),
                                                 "clip_norm": (0.1, 0.3, 1.0, 3.0)})
    sampling_rate: float = 0.01                        # each searched run: 1 % Poisson batches ...
    epochs: float = 64                                 # ... for 64 epochs
    mean_trials: float = 10.0
    shape: float = math.inf                            # Poisson K (Papernot & Steinke 2022, Thm 6)
    score_share: float = 1.0 / 50.0                    # each run's score: epsilon_s = score_share * total epsilon
    validation_fraction: float = 0.0                   # 0: train and score on all the training rows (§23.5)
    target_quantiles: tuple = (0.5, 0.8, 0.9)          # Andrew et al. (2021)'s median; 0.8; 0.9
    initial_clip: float = 0.1                          # Andrew et al.'s C_0
    fixed_clips: tuple = (0.1, 0.25, 1.0, 4.0)
    default_params: dict = field(default_factory=dict)  # extra DPLogisticRegression arguments of (a), (d), fixed C

    @property
    def configs(self):
        names = sorted(self.space)
        return [dict(zip(names, values)) for values in itertools.product(*(self.space[k] for k in names))]

    @property
    def steps(self):
        return steps_from_epochs(self.epochs, self.sampling_rate)


def _grid_search(X, y, X_test, y_test, epsilon, rng, setup, delta):
    """(b): all k settings trained and privately scored, the best kept; epsilon by composing the k runs."""
    configs = setup.configs
    score_epsilon = setup.score_share * epsilon
    z = grid_noise_multiplier(epsilon, trials=len(configs), sampling_rate=setup.sampling_rate, steps=setup.steps,
                              score_epsilon=score_epsilon, delta=delta)
    if math.isinf(z):
        return math.nan, math.nan, z
    if setup.validation_fraction == 0:                  # score on the training rows, as (c) does
        X_fit, y_fit, X_valid, y_valid = X, y, X, y
    else:
        in_validation = rng.random(len(X)) < setup.validation_fraction
        X_fit, y_fit, X_valid, y_valid = X[~in_validation], y[~in_validation], X[in_validation], y[in_validation]
    best, ledger = None, []
    for config in configs:
        model = DPLogisticRegression(epsilon=epsilon, delta=delta, sampling_rate=setup.sampling_rate,
                                     epochs=setup.epochs, noise_multiplier=z, random_state=rng, **config)
        model.fit(X_fit, y_fit)
        correct = float(np.sum(model.predict(X_valid) == y_valid))
        score = laplace_mechanism(correct, l1_sensitivity=1.0, epsilon=score_epsilon, rng=rng)
        ledger += model.ledger_ + [(LaplaceEvent(score_epsilon), 1)]
        if best is None or score > best[0]:
            best = (score, model)
    return best[1].score(X_test, y_test), account(ledger, "rdp", delta=delta, strict=True).epsilon, z


def _private_selection(X, y, X_test, y_test, epsilon, rng, setup, delta):
    """(c): PrivateHyperparameterSearch with its per-run noise calibrated to the total epsilon."""
    score_epsilon = setup.score_share * epsilon
    z = search_noise_multiplier(epsilon, sampling_rate=setup.sampling_rate, steps=setup.steps,
                                score_epsilon=score_epsilon, mean_trials=setup.mean_trials, shape=setup.shape,
                                delta=delta)
    if math.isinf(z):
        return math.nan, math.nan, z
    search = PrivateHyperparameterSearch(
        {name: list(values) for name, values in setup.space.items()}, mean_trials=setup.mean_trials,
        shape=setup.shape, score_epsilon=score_epsilon, validation_fraction=setup.validation_fraction,
        estimator_params=dict(epsilon=epsilon, delta=delta, sampling_rate=setup.sampling_rate, epochs=setup.epochs,
                              noise_multiplier=z), random_state=rng).fit(X, y)
    if search.best_estimator_ is None:                  # a Poisson K of 0 (probability e^-10): nothing released,
        return float(np.mean(y_test == 0)), search.epsilon_, z  # so the fixed public guess "<= 50K" for everyone
    return search.score(X_test, y_test), search.epsilon_, z


def compare_methods(X, y, X_test, y_test, epsilon, rng, *, setup=None, delta=DELTA):
    """``{method: (test accuracy, epsilon spent by the RDP accountant)}`` for one total epsilon and generator.

    Methods: ``"defaults"`` (a), ``"grid"`` (b), ``"selection"`` (c), ``"adaptive g"`` (d) for each quantile g
    of ``setup.target_quantiles``, and ``"fixed C=c"``
    for each c of ``setup.fixed_clips``; ``"grid z"`` and ``"selection z"`` hold (per-run z, nan).
    """
    setup = Setup() if setup is None else setup
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # e.g. an RDP order at the edge of the grid
        clf = DPLogisticRegression(epsilon=epsilon, delta=delta, random_state=rng, **setup.default_params).fit(X, y)
        results["defaults"] = (clf.score(X_test, y_test), clf.epsilon_)
        accuracy, spent, z = _grid_search(X, y, X_test, y_test, epsilon, rng, setup, delta)
        results["grid"], results["grid z"] = (accuracy, spent), (z, math.nan)
        accuracy, spent, z = _private_selection(X, y, X_test, y_test, epsilon, rng, setup, delta)
        results["selection"], results["selection z"] = (accuracy, spent), (z, math.nan)
        for g in setup.target_quantiles:
            clf = DPLogisticRegression(epsilon=epsilon, delta=delta, clip_norm=setup.initial_clip, target_quantile=g,
                                       random_state=rng, **setup.default_params).fit(X, y)
            results[f"adaptive {g:g}"] = (clf.score(X_test, y_test), clf.epsilon_)
        for c in setup.fixed_clips:
            clf = DPLogisticRegression(epsilon=epsilon, delta=delta, clip_norm=c, random_state=rng,
                                       **setup.default_params).fit(X, y)
            results[f"fixed C={c:g}"] = (clf.score(X_test, y_test), clf.epsilon_)
    return results


class _Task:
    """One (total epsilon, seed): :func:`compare_methods` on the data it holds (picklable for n_jobs)."""

    def __init__(self, data, setup):
        self.data, self.setup = data, setup

    def __call__(self, epsilon, rng):
        return compare_methods(*self.data, epsilon, rng, setup=self.setup)


def _fmt(values):
    values = 100 * np.asarray(values)
    return f"{values.mean():5.2f} ± {values.std():4.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None, help="seeds 0..S-1 per epsilon (default 10; 2 with --quick)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=None, help="total epsilons (default: 7 from 0.1 to 10)")
    parser.add_argument("--n-jobs", type=int, default=1,
                        help="workers (dpedu.lab.parallel.map_seeded; -1: every core); the numbers do not depend on it")
    parser.add_argument("--quick", action="store_true", help="2 seeds, epsilon 0.1, 1, 10: a CI-scale check")
    args = parser.parse_args(argv)
    seeds = list(range(args.seeds or (2 if args.quick else 10)))
    epsilons = args.epsilons or (QUICK_EPSILONS if args.quick else EPSILONS)
    setup = Setup()
    data = load_adult()
    print(f"Adult: {len(data.X_train)} training rows, {len(data.X_test)} test rows; delta = {DELTA:g}; "
          f"{len(seeds)} seeds; test accuracy (%) mean ± std over seeds.")
    print(f"Search space (b, c), generic: {setup.space}, q = {setup.sampling_rate:g}, {setup.epochs:g} epochs "
          f"({setup.steps} steps); scores on the training rows, epsilon_s = eps * {setup.score_share:g}; (c) "
          f"E[K] = {setup.mean_trials:g}, " + ("Poisson K." if math.isinf(setup.shape) else f"shape {setup.shape:g}."))
    adaptive = [f"adaptive {g:g}" for g in setup.target_quantiles]
    header = (f"{'eps':>5}  {'(a) defaults*':>13}  {'(b) grid':>13} {'z':>6}  {'(c) selection':>13} {'z':>6}  "
              + "".join(f"{'(d) ' + name:>16}  " for name in adaptive) + f"{'best fixed C**':>14} {'C':>5}")
    print(header + "\n" + "-" * len(header), flush=True)
    task = _Task((data.X_train, data.y_train, data.X_test, data.y_test), setup)
    summary = {}
    for epsilon in epsilons:
        started = time.perf_counter()
        runs = map_seeded(task, len(seeds), items=[epsilon] * len(seeds), seeds=seeds, n_jobs=args.n_jobs)
        column = {name: [run[name][0] for run in runs] for name in runs[0]}
        for name in (name for name in runs[0] if not name.endswith(" z")):
            spent = max(run[name][1] for run in runs)
            assert not spent > epsilon, (name, epsilon, spent)   # nan (no affordable noise) passes
        fixed = max(setup.fixed_clips, key=lambda c: np.mean(column[f"fixed C={c:g}"]))
        summary[epsilon] = {name: float(np.mean(values)) for name, values in column.items()}
        summary[epsilon]["best fixed"] = summary[epsilon][f"fixed C={fixed:g}"]
        print(f"{epsilon:5g}  {_fmt(column['defaults']):>13}  {_fmt(column['grid']):>13} {runs[0]['grid z'][0]:6.2f}  "
              f"{_fmt(column['selection']):>13} {runs[0]['selection z'][0]:6.2f}  "
              + "".join(f"{_fmt(column[name]):>16}  " for name in adaptive)
              + f"{_fmt(column[f'fixed C={fixed:g}']):>14} {fixed:5g}   ({time.perf_counter() - started:.0f} s)",
              flush=True)
    print("\n* (a) does not include tuning: TUNED_DEFAULTS were chosen non-privately on Adult's training data."
          "\n** best fixed C: chosen on the TEST accuracy (non-private); (d)'s other settings are (a)'s."
          "\nz: per-run noise multiplier. Every method's epsilon (RDP, delta = 1e-5) is <= the total epsilon.")
    print("\nTargets (issue 22):")
    for epsilon, target in TARGETS.items():
        if epsilon in summary:
            got = summary[epsilon]["selection"]
            print(f"  private selection at total epsilon {epsilon:g}: {100 * got:.2f} % >= {100 * target:.1f} %: "
                  + ("met" if got >= target else f"MISSED by {100 * (target - got):.2f} points"))
    for epsilon, row in summary.items():
        for name in adaptive if epsilon >= 1 else ():
            gap = row["best fixed"] - row[name]
            print(f"  {name} at epsilon {epsilon:g}: {100 * gap:+.2f} points behind the best fixed C: "
                  + ("met" if gap <= ADAPTIVE_GAP else "MISSED") + f" (target: within {100 * ADAPTIVE_GAP:.1f})")


if __name__ == "__main__":
    main()
