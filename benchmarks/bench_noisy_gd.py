"""Time one iteration of noisy gradient descent on the full Adult training set, three ways.

    python benchmarks/bench_noisy_gd.py [--repeats 30]

1. the book's per-example Python loop (one gradient, one L2_clip per row);
2. a vectorised per-example gradient matrix (n x d), clipped row-wise, then summed;
3. the two-matvec shortcut used by dpedu.training (per-example gradient = scalar * x_i).

Each is timed as one whole noisy iteration (clipped sum + Gaussian noise + update), and compared
with two bare products ``X @ v`` and ``X.T @ u`` on the same arrays: the memory-bound limit,
since the shortcut reads X twice. Targets: shortcut >= 50x faster than the loop, and within
1.5x of the two bare products. The three paths are also checked to agree to 1e-12.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpedu.calibrate import classic_noise_multiplier
from dpedu.clipping import L2_clip, l2_norms
from dpedu.datasets import load_adult
from dpedu.models.logistic import _clip_over_norms, _clipped_gradient_sum, per_example_gradients


def loop_clipped_sum(theta, X, y, clip):
    """The book's gradient_sum: a Python loop over examples."""
    total = np.zeros_like(theta)
    for x_i, y_i in zip(X, y):
        margin = y_i * (x_i @ theta)
        grad = -y_i * x_i / (1.0 + np.exp(margin))
        norm = np.linalg.norm(grad)
        total += grad if norm <= clip else grad * (clip / norm)
    return total


def matrix_clipped_sum(theta, X, y, clip, _):
    return L2_clip(per_example_gradients(theta, X, y), clip).sum(axis=0)


def shortcut_clipped_sum(theta, X, y, clip, clip_over_norms):
    return _clipped_gradient_sum(theta, X, y, clip_over_norms)


def best_time(fn, repeats):
    """Minimum wall time over ``repeats`` calls (the least-disturbed measurement)."""
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="timed repetitions (the loop gets 3)")
    args = parser.parse_args(argv)

    X, y, _, _ = load_adult()
    X = np.ascontiguousarray(X)
    n, d = X.shape
    rng = np.random.default_rng(0)
    theta = rng.normal(scale=0.5, size=d)
    clip, eps, delta = 1.0, 0.1, 1e-5
    noise_std = classic_noise_multiplier(eps, delta) * clip
    noisy_count = float(n)
    clip_over_norms = _clip_over_norms(clip, l2_norms(X)[:, 0])  # once per dataset, as in training

    def iteration(clipped_sum):
        def run():
            g = clipped_sum(theta, X, y, clip, clip_over_norms) + rng.normal(0.0, noise_std, size=d)
            return theta - g / noisy_count
        return run

    # the three paths compute the same clipped sum
    reference = shortcut_clipped_sum(theta, X, y, clip, clip_over_norms)
    for other in (loop_clipped_sum(theta, X, y, clip), matrix_clipped_sum(theta, X, y, clip, clip_over_norms)):
        assert np.max(np.abs(other - reference)) <= 1e-12 * max(1.0, np.abs(reference).max()), "paths disagree"

    v, u = rng.normal(size=d), rng.normal(size=n)
    timings = {
        "per-example Python loop (book)": best_time(iteration(lambda t, X_, y_, c, r: loop_clipped_sum(t, X_, y_, c)),
                                                    3),
        "vectorised n x d gradient matrix": best_time(iteration(matrix_clipped_sum), args.repeats),
        "two-matvec shortcut (dpedu)": best_time(iteration(shortcut_clipped_sum), args.repeats),
        "bare X @ v and X.T @ u (limit)": best_time(lambda: (X @ v, X.T @ u), args.repeats),
    }
    shortcut = timings["two-matvec shortcut (dpedu)"]
    print(f"One noisy gradient descent iteration on Adult: n = {n:,}, d = {d}, best of {args.repeats} runs\n")
    print(f"{'method':<36} {'seconds':>11} {'vs shortcut':>12}")
    for name, seconds in timings.items():
        print(f"{name:<36} {seconds:11.6f} {seconds / shortcut:11.2f}x")
    speedup = timings["per-example Python loop (book)"] / shortcut
    overhead = shortcut / timings["bare X @ v and X.T @ u (limit)"]
    print(f"\nshortcut speed-up over the loop: {speedup:,.0f}x  (target >= 50x: {'met' if speedup >= 50 else 'MISSED'})")
    print(f"shortcut / two bare matvecs:    {overhead:.2f}x  (target <= 1.5x: {'met' if overhead <= 1.5 else 'MISSED'})")
    print("all three paths agree to 1e-12")


if __name__ == "__main__":
    main()
