"""Audits meet the accountant: white-box, final-model and one-run lower bounds beside PLD/RDP/moments upper bounds.

    python benchmarks/bench_audit.py [--quick] [--runs 20000] [--runs-other 3000] [--seed 0] [--n-jobs 1]
    python benchmarks/bench_audit.py --speedup [--runs 2000]      # n_jobs=2 against n_jobs=1

Table 1 (full batch, n = 100, C = 1, T = 4, delta = 1e-5): for each target PLD epsilon in {1, 2, 4, 8} the noise
z = sqrt(T)/mu with mu the exact Gaussian mu of that epsilon; the white-box audit (every update observed, Dirac
gradient canary, Gaussian bound) and the final-model canary audit (Clopper-Pearson) at 95%, with ``--runs``
runs per world (20,000: the one-sided 95% bound on mu is then about mu - 0.023, which keeps the bound at or
above 0.8x the PLD epsilon even at epsilon = 1, where mu = 0.27). Then q = 0.01 (T = 10 with ``--runs``
runs, T = 50 with ``--runs-other``) and the MLP (``--runs-other``). Table 2: the one-run audit (Steinke et al. 2023) on Adult, white- and black-box. Table 3: the
planted bugs, each with its claimed epsilon and the audited lower bound. Every row must have lower <= upper
(except the planted bugs, which must be caught).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.optimize import brentq

from dpedu.lab.audit import (
    BUGS,
    bug_hunt,
    canary_audit,
    dp_sgd_trainer,
    epsilon_from_mu,
    make_audit_data,
    make_canary,
    observed_trainer,
    one_run_audit,
    whitebox_audit,
)
from dpedu.textbook.models import MLP

DELTA = 1e-5


def _mu_for(epsilon):
    return brentq(lambda m: epsilon_from_mu(m, delta=DELTA) - epsilon, 1e-4, 20.0)


def _settings():
    rows = [(f"full batch, eps {e:g}", math.sqrt(4) / _mu_for(e), 1.0, 4, None) for e in (1, 2, 4, 8)]
    rows.append(("q = 0.01, T = 10", 0.5, 0.01, 10, None))     # with --runs: the sampled case's best showing
    rows.append(("q = 0.01, T = 50", 0.5, 0.01, 50, None))
    rows.append(("MLP (8 units), full batch", 2.0, 1.0, 4, "mlp"))
    return rows


def table_accountants(runs, runs_other, seed, n_jobs):
    X, y = make_audit_data(n=100, d=3, rng=0)
    canary = make_canary(X, y)
    seeds = np.random.SeedSequence(seed).spawn(16)
    print(f"white-box and final-model audits, n = 100, C = 1, runs per world as listed, delta = {DELTA:g}, 95%\n")
    head = (f"{'setting':<27} {'z':>6} {'runs':>6} | {'PLD':>7} {'RDP':>7} {'moments':>7} | {'white-box':>9} {'/PLD':>5} | "
            f"{'final model':>11} | {'s':>6}")
    print(head + "\n" + "-" * len(head))
    crossings = 0
    for i, (name, z, q, steps, model) in enumerate(_settings()):
        runs_here = runs if model is None and (q == 1 or steps == 10) else runs_other
        start = time.perf_counter()
        net = MLP(4, 8) if model == "mlp" else None
        lr = 0.001 if q < 1 else 0.01
        white = whitebox_audit(observed_trainer(noise_multiplier=z, sampling_rate=q, steps=steps, model=net,
                                                learning_rate=lr),
                               X, y, canary, runs=runs_here, rng=seeds[2 * i], n_jobs=n_jobs)
        final_runs = runs_here if q == 1 else max(4, runs_here // 4)
        final = (canary_audit(dp_sgd_trainer(noise_multiplier=z, sampling_rate=q, steps=steps), X, y, canary,
                              runs=final_runs, rng=seeds[2 * i + 1], n_jobs=n_jobs) if model is None else None)
        up = white.upper_bounds
        crossings += not white.consistent + (final is not None and not final.consistent)
        print(f"{name:<27} {z:>6.3f} {runs_here:>6} | {up['pld']:>7.3f} {up['rdp']:>7.3f} {up['moments']:>7.3f} | "
              f"{white.epsilon_lower:>9.3f} {white.epsilon_lower / up['pld']:>5.2f} | "
              f"{'n/a' if final is None else format(final.epsilon_lower, '.3f'):>11} | "
              f"{time.perf_counter() - start:>6.1f}" + ("  LOWER > UPPER" if not white.consistent else ""), flush=True)
    return crossings


def table_one_run(seed, quick):
    from dpedu.textbook.datasets import load_adult

    X_train, y_train, X_test, y_test = load_adult()
    rng = np.random.default_rng(seed)
    rows = rng.choice(X_train.shape[0], 3000 if quick else 10000, replace=False)
    ms = (250, 500) if quick else (250, 500, 1000)
    print(f"\none-run audits on Adult ({rows.size} training rows), q = 0.1, T = 100, k+ = k- = m/10, 95%, delta = {DELTA:g}\n")
    head = f"{'target eps':>10} {'m':>5} | {'PLD':>7} | {'white-box':>9} {'right':>8} | {'black-box':>9} {'right':>8} | {'s':>5}"
    print(head + "\n" + "-" * len(head))
    for eps in (2.0, 8.0):
        for m in ms:
            start = time.perf_counter()
            kw = dict(m=m, target_epsilon=eps, delta=DELTA, sampling_rate=0.1, steps=100, rng=seed)
            white = one_run_audit(X_train[rows], y_train[rows], mode="whitebox", **kw)
            black = one_run_audit(X_train[rows], y_train[rows], mode="blackbox", X_canary_pool=X_test,
                                  y_canary_pool=y_test, **kw)
            print(f"{eps:>10g} {m:>5d} | {white.upper_bounds['pld']:>7.3f} | {white.epsilon_lower:>9.3f} "
                  f"{f'{white.correct}/{white.guesses}':>8} | {black.epsilon_lower:>9.3f} "
                  f"{f'{black.correct}/{black.guesses}':>8} | {time.perf_counter() - start:>5.1f}")


def table_bugs(runs, seed):
    print(f"\nplanted bugs (white-box audit, {runs} + {runs} runs, 95%): caught when lower > claimed\n")
    head = f"{'bug':<26} | {'claimed eps (PLD)':>17} | {'audited lower':>13} | {'correct code':>12} | caught"
    print(head + "\n" + "-" * len(head))
    missed = 0
    for bug in BUGS:
        buggy = bug_hunt(bug, runs=runs, rng=seed)
        correct = bug_hunt(bug, correct=True, runs=runs, rng=seed)
        missed += buggy.consistent + (not correct.consistent)
        print(f"{bug:<26} | {buggy.upper_bounds['pld']:>17.3f} | {buggy.epsilon_lower:>13.3f} | "
              f"{correct.epsilon_lower:>12.3f} | {not buggy.consistent}")
    return missed


def _busy(iterations):
    """Small NumPy work with no data and no communication, the shape of one training's inner loop."""
    theta, v = np.zeros(3), np.linspace(-1.0, 1.0, 3)
    X = np.outer(np.linspace(-1.0, 1.0, 101), v)
    for _ in range(iterations):
        theta = 0.9 * theta + 0.1 * (X.T @ np.tanh(X @ theta + 0.5))
    return float(theta.sum())


def _timed_busy(iterations):
    start = time.time()
    _busy(iterations)
    return start, time.time()


def _ceiling(iterations):
    """(serial seconds, two-process seconds) of ``_busy``: what this machine gives two processes at best.

    The two-process time runs from the first worker's start to the last one's end (wall clock), so it leaves
    out joblib's dispatch: it is the machine alone.
    """
    import joblib

    start = time.perf_counter()
    _busy(iterations)
    _busy(iterations)
    serial = time.perf_counter() - start
    spans = joblib.Parallel(n_jobs=2)(joblib.delayed(_timed_busy)(iterations) for _ in range(2))
    return serial, max(end for _, end in spans) - min(begin for begin, _ in spans)


def speedup(runs, seed, repeats=11):
    """Wall time of one canary audit with n_jobs=1 and n_jobs=2 (same seed, so the same result).

    "cold": the first n_jobs=2 call, which also starts the worker processes (each imports numpy, scipy and
    dpedu: about a second each, the fixed cost of going parallel); "warm": later calls, which reuse them
    (joblib keeps its loky workers alive). The tasks go out in about 6 chunks per worker, halving in size
    (:func:`dpedu.lab.parallel.map_seeded`), so 2,000 tiny trainings cost 12 dispatches, not 2,000. The start of
    the workers is a fixed cost, so a last line times a ten times longer audit cold (the workers shut down
    first), where it is paid once over more work.

    Each round also times the machine's ceiling: the same number of seconds of small NumPy work, with no data
    and no communication, run twice in a row in this process, then once in each of the two (warm) workers at
    the same time. Two processes on two cores of a shared virtual machine can give less than 2x (shared caches,
    memory bandwidth, neighbours); the ratio of the audit's speed-up to this ceiling is the part of the loss
    that is the audit's own (dispatch, results sent back, the workers not finishing together).
    """
    import os

    X, y = make_audit_data(n=100, d=3, rng=0)
    canary = make_canary(X, y)
    train = dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4)

    def timed(n_jobs):
        start = time.perf_counter()
        result = canary_audit(train, X, y, canary, runs=runs, rng=seed, n_jobs=n_jobs)
        return time.perf_counter() - start, result.epsilon_lower

    print(f"canary audit, {runs} pairs of trainings; load average before: "
          + " ".join(f"{v:.2f}" for v in os.getloadavg()))
    cold, eps_cold = timed(2)
    start = time.perf_counter()
    _busy(2000)
    per_iteration = (time.perf_counter() - start) / 2000
    times, lowers, ratios, ceilings = {1: [], 2: []}, {eps_cold}, [], []
    for _ in range(repeats):                      # paired rounds: each ratio from two back-to-back timings
        for n_jobs in (1, 2):
            seconds, lower = timed(n_jobs)
            times[n_jobs].append(seconds)
            lowers.add(lower)
        ratios.append(times[1][-1] / times[2][-1])
        serial, parallel = _ceiling(max(1, int(times[1][-1] / 2 / per_iteration)))
        ceilings.append(serial / parallel)
    assert len(lowers) == 1, lowers               # the result does not depend on n_jobs
    one, two = float(np.median(times[1])), float(np.median(times[2]))
    print(f"  n_jobs = 1: {one:.2f} s (median of {repeats}); epsilon >= {eps_cold:.4f} with either")
    print(f"  n_jobs = 2: {two:.2f} s warm (median of {repeats}), {cold:.2f} s cold (first call, starts the workers)")
    low, high = np.percentile(ratios, [25, 75])
    print(f"speed-up n_jobs=2 / n_jobs=1: {np.median(ratios):.2f}x warm (median of {repeats} paired rounds; quartiles "
          f"{low:.2f}-{high:.2f}), {one / cold:.2f}x cold")
    low, high = np.percentile(ceilings, [25, 75])
    efficiency = np.array(ratios) / np.array(ceilings)
    print(f"this machine's ceiling (the same seconds of work, no communication): {np.median(ceilings):.2f}x "
          f"(quartiles {low:.2f}-{high:.2f}); audit speed-up / ceiling: {np.median(efficiency):.2f} "
          f"(quartiles {np.percentile(efficiency, 25):.2f}-{np.percentile(efficiency, 75):.2f})")
    from joblib.externals.loky import get_reusable_executor

    big = 10 * runs
    start = time.perf_counter()
    canary_audit(train, X, y, canary, runs=big, rng=seed, n_jobs=1)
    serial = time.perf_counter() - start
    get_reusable_executor().shutdown(wait=True)   # the next n_jobs=2 call starts new workers
    start = time.perf_counter()
    canary_audit(train, X, y, canary, runs=big, rng=seed, n_jobs=2)
    parallel = time.perf_counter() - start
    print(f"{big} pairs, cold (workers started inside the call): n_jobs = 1 {serial:.2f} s, n_jobs = 2 {parallel:.2f} s, "
          f"speed-up {serial / parallel:.2f}x")
    print("load average after: " + " ".join(f"{v:.2f}" for v in os.getloadavg()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs and canaries (a few minutes)")
    parser.add_argument("--runs", type=int, default=None,
                        help="runs per world, full-batch logistic rows (default 20000; --quick 2000); --speedup: 2000")
    parser.add_argument("--runs-other", type=int, default=None,
                        help="runs per world, the q = 0.01 and MLP rows (default 3000; --quick 600)")
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument("--n-jobs", type=int, default=1, help="joblib workers (default 1)")
    parser.add_argument("--speedup", action="store_true", help="only time a canary audit with n_jobs=1 and 2")
    args = parser.parse_args(argv)
    if args.speedup:
        speedup(args.runs or 2000, args.seed)
        return 0
    runs = args.runs or (2000 if args.quick else 20000)
    runs_other = args.runs_other or (600 if args.quick else 3000)
    crossings = table_accountants(runs, runs_other, args.seed, args.n_jobs)
    table_one_run(args.seed, args.quick)
    missed = table_bugs(200, args.seed)
    print(f"\n{crossings} crossing(s) (lower > upper) in the accountant table; {missed} bug(s) missed or false alarm(s)")
    return 1 if crossings or missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
