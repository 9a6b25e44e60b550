"""Time every accountant on Abadi et al.'s Figure-2 curve, and one calibration on RDP and on PLD.

The curve: DP-SGD with q = 0.01, z = 4, delta = 1e-5, ten points from 10 to 400 epochs (T = epochs / q,
so up to 40,000 steps). Each epsilon is computed on a fresh accountant. "cold" clears the accountants'
caches (the RDP and moments modules memoise per-event curves) before every point, so it is the full
cost of one epsilon value; "warm" is the same call with the per-event caches filled, which is what a
student sees when sweeping epochs.

Run: ``python benchmarks/bench_accountants.py`` (about 40 s on one core).
"""

from __future__ import annotations

import functools
import importlib
import statistics
import time
import warnings

from dpedu import calibrate
from dpedu.accountants import ACCOUNTANT_NAMES, SubsampledGaussianEvent, UnsupportedEventError, make_accountant

Q, Z, DELTA = 0.01, 4.0, 1e-5
EPOCHS = [10, 25, 50, 100, 150, 200, 250, 300, 350, 400]
# targets from the issue: milliseconds per epsilon value (None: no target)
TARGET_MS = {"moments": 10.0, "rdp": 10.0, "pld": 1000.0}
CALIBRATION_TARGET_S = {"rdp": 0.5, "pld": None}


def clear_accountant_caches():
    """Empty every functools cache in dpedu.accountants.* (so a timing includes the real work)."""
    for name in ACCOUNTANT_NAMES + ("analysis.log_moments", "analysis.composition", "pld.ledger"):
        module = importlib.import_module(f"dpedu.accountants.{name}")
        for obj in vars(module).values():
            if isinstance(obj, functools._lru_cache_wrapper):
                obj.cache_clear()


def epsilon_at(name, epochs):
    steps = round(epochs / Q)
    return make_accountant(name).compose(SubsampledGaussianEvent(Z, Q), steps).get_epsilon(DELTA)


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - start


def bench_curve(name):
    """(cold ms per value, warm ms per value, {epochs: epsilon}) or None when the accountant refuses."""
    cold, warm, values = [], [], {}
    for epochs in EPOCHS:
        clear_accountant_caches()
        try:
            values[epochs], seconds = timed(epsilon_at, name, epochs)
        except UnsupportedEventError:
            return None
        cold.append(seconds)
        warm.append(timed(epsilon_at, name, epochs)[1])
    return 1e3 * statistics.mean(cold), 1e3 * statistics.median(warm), values


def main():
    warnings.simplefilter("ignore", UserWarning)  # order-grid edge notes; the numbers are what matter here
    print(f"Abadi et al. Figure 2: q = {Q}, z = {Z}, delta = {DELTA:g}, {len(EPOCHS)} points, "
          f"{EPOCHS[0]}..{EPOCHS[-1]} epochs (T up to {round(EPOCHS[-1] / Q):,})\n")
    header = (f"{'accountant':<11}{'cold ms/eps':>12}{'warm ms/eps':>12}{'target ms':>10}{'cold/target':>12}"
              f"{'eps @100 ep':>13}{'eps @400 ep':>13}")
    print(header)
    print("-" * len(header))
    for name in ACCOUNTANT_NAMES:
        result = bench_curve(name)
        if result is None:
            print(f"{name:<11}{'n/a: no subsampling theorem (SubsampledGaussianEvent refused)':>60}")
            continue
        cold_ms, warm_ms, values = result
        target = TARGET_MS.get(name)
        target_text = f"{target:10.0f}{cold_ms / target:12.3f}" if target else f"{'-':>10}{'-':>12}"
        print(f"{name:<11}{cold_ms:12.2f}{warm_ms:12.2f}{target_text}{values[100]:13.4f}{values[400]:13.4f}")
    print("\nPLD discretisation error: optimistic (a lower bound) vs pessimistic (the reported upper bound);")
    print("the true epsilon lies in between. Target: width <= 1% within 1 s per epsilon value.")
    print(f"  {'max_grid_size':<14}{'epochs':>7}{'s / eps':>9}{'optimistic':>12}{'pessimistic':>13}"
          f"{'width':>8}  verdict")
    for grid in (None, 2**19, 2**20):
        for epochs in (100, 400):
            options = {} if grid is None else {"max_grid_size": grid}
            event, steps = SubsampledGaussianEvent(Z, Q), round(epochs / Q)
            _, seconds = timed(make_accountant("pld", **options).compose(event, steps).get_epsilon, DELTA)
            optimistic, pessimistic = make_accountant("pld", **options).compose(event, steps).epsilon_bracket(DELTA)
            width = (pessimistic - optimistic) / pessimistic
            verdict = "ok" if width <= 0.01 and seconds <= 1.0 else (
                "MISSED: " + " and ".join(text for text, missed in (("width > 1%", width > 0.01),
                                                                      ("time > 1 s", seconds > 1.0)) if missed))
            grid_text = "default" if grid is None else f"2**{grid.bit_length() - 1}"
            print(f"  {grid_text:<14}{epochs:>7}{seconds:9.2f}{optimistic:12.4f}{pessimistic:13.4f}"
                  f"{100 * width:7.2f}%  {verdict}")

    print("\nCalibration: smallest z for epsilon = 1, delta = 1e-5, q = 0.01, T = 10,000 (rtol 1e-3)")
    for name in ("rdp", "pld"):
        clear_accountant_caches()
        z, seconds = timed(calibrate.noise_multiplier, target_epsilon=1.0, target_delta=DELTA, sampling_rate=Q,
                           steps=10_000, accountant=name)
        achieved = make_accountant(name).compose(SubsampledGaussianEvent(z, Q), 10_000).get_epsilon(DELTA)
        target = CALIBRATION_TARGET_S[name]
        target_text = f"target {target} s, ratio {seconds / target:.3f}" if target else "no target"
        print(f"  {name:<4} z = {z:.4f} (epsilon {achieved:.4f} <= 1)  in {seconds:.3f} s   {target_text}")


if __name__ == "__main__":
    main()
