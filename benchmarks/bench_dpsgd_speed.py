"""Time of one epoch of DP-SGD on the full Adult training set: logistic regression and the MLP.

Run:  python benchmarks/bench_dpsgd_speed.py [--repeat 7] [--samplers-only]

Each row is the best of ``--repeat`` runs of ``dp_sgd(..., epochs=1)`` (n = 30,162 rows, 105 columns with the
constant feature), measured side by side with the floor of any full-data gradient method: one bare pass
``u = X @ v; X.T @ u`` over the whole training set. The ratio column is time / bare pass. Target for
logistic regression at the default sampling rate: under 0.1 s per epoch.

What one epoch costs besides the two matrix-vector products on the sampled rows: 1/q Poisson draws of n
uniforms each (so small q costs more), copying the sampled rows, the noise, and one full-data loss evaluation
(the per-epoch diagnostic). The row ``sampler="binomial"`` draws the same Poisson batches by their size
(docs/math.md §8.1).

The first table times 100 Poisson samples at q = 0.01 from the n rows, side by side: the two calls of the
binomial-size form alone (``rng.binomial``, ``rng.choice(..., replace=False)``), dpedu's
``binomial_poisson_sample`` (argument checks and the sort included; target: at most 3x the two calls alone)
and the textbook ``poisson_sample`` (n uniforms per sample).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from dpedu.datasets import load_adult  # noqa: E402
from dpedu.estimator import tuned_defaults  # noqa: E402
from dpedu.models import MLP  # noqa: E402
from dpedu.training import binomial_poisson_sample, dp_sgd, plan_dp_sgd, poisson_sample, run_dp_sgd  # noqa: E402


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--samplers-only", action="store_true", help="print the sampler table only")
    args = parser.parse_args(argv)

    X_train, y_train, _, _ = load_adult()
    X = np.hstack([X_train, np.ones((len(X_train), 1))])
    n, d = X.shape
    v = np.random.default_rng(0).normal(size=d)
    sampler_table(n, max(args.repeat, 15))
    if args.samplers_only:
        return

    def bare_pass():
        u = X @ v
        return X.T @ u

    bare = best_time(bare_pass, 50)
    rows = [("bare pass X @ v, X.T @ u", "-", bare)]
    for q in (0.01, 0.05, 0.2, 1.0):  # the tuned defaults use 0.01 or 0.05 (dpedu.estimator.TUNED_DEFAULTS)
        def epoch(q=q):
            return dp_sgd(X, y_train, noise_multiplier=1.0, clip_norm=0.5, sampling_rate=q, epochs=1, rng=0)
        rows.append(("DP-SGD logistic regression", f"{q:g}", best_time(epoch, args.repeat)))
        if q == 0.01:
            plan = plan_dp_sgd(n, noise_multiplier=1.0, clip_norm=0.5, sampling_rate=q, epochs=1, sampler="binomial")
            rows.append(('DP-SGD logistic regression, sampler="binomial"', f"{q:g}",
                         best_time(lambda: run_dp_sgd(X, y_train, plan, rng=0), args.repeat)))
    for hidden in (16, 64):
        model = MLP(n_features=d, hidden_units=hidden)
        for q in (tuned_defaults(1.0).sampling_rate, 1.0):
            def epoch(q=q, model=model):
                return dp_sgd(X, y_train, noise_multiplier=1.0, clip_norm=0.5, sampling_rate=q, epochs=1,
                              model=model, rng=0)
            rows.append((f"DP-SGD MLP, {hidden} tanh units ({model.n_params} params)", f"{q:g}",
                         best_time(epoch, args.repeat)))

    print(f"One epoch of DP-SGD on Adult (n = {n}, d = {d} with the intercept column), best of {args.repeat}; "
          f"numpy {np.__version__}")
    width = max(len(name) for name, _, _ in rows)
    print(f"{'what':<{width}}  {'q':>5}  {'time/epoch':>11}  {'x bare pass':>11}")
    for name, q, seconds in rows:
        print(f"{name:<{width}}  {q:>5}  {1e3 * seconds:8.2f} ms  {seconds / bare:11.1f}")


def sampler_table(n, rounds, q=0.01, samples=100):
    """Print the time of ``samples`` Poisson samples at rate q from n records, three ways, side by side.

    Paired rounds: each round times the three forms back to back, so they see the same load; the ratio column is
    the median over rounds of each form's time over the two calls' time in that round (robust to a disturbed
    round), the time column the best round.
    """
    rng = np.random.default_rng(0)

    def two_calls():
        for _ in range(samples):
            rng.choice(n, size=rng.binomial(n, q), replace=False)

    def by_size():
        for _ in range(samples):
            binomial_poisson_sample(n, q, rng)

    def by_uniforms():
        for _ in range(samples):
            poisson_sample(n, q, rng)

    names = ("rng.binomial + rng.choice alone", "binomial_poisson_sample (checked, sorted)",
             "poisson_sample (n uniforms)")
    times = np.array([[best_time(fn, 1) for fn in (two_calls, by_size, by_uniforms)] for _ in range(rounds)])
    ratios = np.median(times / times[:, :1], axis=0)
    print(f"{samples} Poisson samples at q = {q:g} from n = {n:,} ({rounds} paired rounds; numpy {np.__version__})")
    width = max(len(name) for name in names)
    print(f"{'sampler':<{width}}  {'best time':>9}  {'x the two calls (median)':>24}")
    for name, seconds, ratio in zip(names, times.min(axis=0), ratios):
        print(f"{name:<{width}}  {1e3 * seconds:6.2f} ms  {ratio:24.2f}")
    print()

if __name__ == "__main__":
    main()
