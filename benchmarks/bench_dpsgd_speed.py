"""Time of one epoch of DP-SGD on the full Adult training set: logistic regression and the MLP.

Run:  python benchmarks/bench_dpsgd_speed.py [--repeat 7]

Each row is the best of ``--repeat`` runs of ``dp_sgd(..., epochs=1)`` (n = 30,162 rows, 105 columns with the
constant feature), measured side by side with the floor of any full-data gradient method: one bare pass
``u = X @ v; X.T @ u`` over the whole training set. The ratio column is time / bare pass. Target for
logistic regression at the default sampling rate: under 0.1 s per epoch.

What one epoch costs besides the two matrix-vector products on the sampled rows: 1/q Poisson draws of n
uniforms each (so small q costs more), copying the sampled rows, the noise, and one full-data loss evaluation
(the per-epoch diagnostic).
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
from dpedu.training import dp_sgd  # noqa: E402


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
    args = parser.parse_args(argv)

    X_train, y_train, _, _ = load_adult()
    X = np.hstack([X_train, np.ones((len(X_train), 1))])
    n, d = X.shape
    v = np.random.default_rng(0).normal(size=d)

    def bare_pass():
        u = X @ v
        return X.T @ u

    bare = best_time(bare_pass, 50)
    rows = [("bare pass X @ v, X.T @ u", "-", bare)]
    for q in (0.01, 0.05, 0.2, 1.0):  # the tuned defaults use 0.01 or 0.05 (dpedu.estimator.TUNED_DEFAULTS)
        def epoch(q=q):
            return dp_sgd(X, y_train, noise_multiplier=1.0, clip_norm=0.5, sampling_rate=q, epochs=1, rng=0)
        rows.append(("DP-SGD logistic regression", f"{q:g}", best_time(epoch, args.repeat)))
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


if __name__ == "__main__":
    main()
