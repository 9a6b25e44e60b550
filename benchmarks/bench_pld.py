"""dpedu's PLD accountant beside dp_accounting's PLDAccountant (when importable), setting by setting.

Per setting (q, z, T, delta) it prints: dpedu's pessimistic and optimistic epsilon, dp_accounting's epsilon
(connect the dots, value discretisation 1e-4, pessimistic), the ratio dpedu / dp_accounting, the time of
each and their ratio; then one calibration on PLD at Abadi et al.'s point. dpedu never imports
dp_accounting; only this benchmark does (``pip install -r benchmarks/requirements.txt``).

Run: ``python benchmarks/bench_pld.py`` (full grid, several minutes) or ``--quick`` (the issue's rows).
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

from dpedu import calibrate
from dpedu.accountants import SubsampledGaussianEvent
from dpedu.accountants.pld import PLDAccountant

try:
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
except ImportError:  # the benchmark still runs, without the comparison column
    dp_event = None

ISSUE_ROWS = [(0.01, 4.0, 10_000, 1e-5), (0.001, 1.1, 50_000, 1e-6), (0.001, 1.0, 10_000, 1e-5),
              (0.001, 1.0, 1_000_000, 1e-5), (0.1, 0.8, 100_000, 1e-5), (0.001, 0.6, 50_000, 1e-8),
              (1e-4, 0.58, 93_000, 1e-8), (0.001, 0.76, 16_000, 1e-8)]
GRID = [(q, z, t, d) for q, z, t, d in itertools.product((1e-4, 1e-3, 0.01, 0.1, 1.0), (0.5, 1.0, 4.0, 20.0),
                                                          (1, 1000, 100_000), (1e-5, 1e-8))
        if not (q == 1e-4 and t == 1) and not (q == 1.0 and z == 0.5 and t > 1)
        and not (q == 1.0 and z <= 1.0 and t > 1000)]
# Left out at q = 1 (where dpedu's answer is the exact closed form of one Gaussian): z = 0.5 with T >= 1000, where
# dp_accounting needs minutes per value, and z <= 1 with T = 100,000 (epsilon in the thousands), where its grid
# needed more than this machine's 24 GB and the process was killed.


def dpedu_epsilon(q, z, steps, delta):
    event = SubsampledGaussianEvent(z, q)
    start = time.perf_counter()
    high = PLDAccountant().compose(event, steps).get_epsilon(delta)
    seconds = time.perf_counter() - start
    low = PLDAccountant(pessimistic=False).compose(event, steps).get_epsilon(delta)
    return high, low, seconds


def dp_accounting_epsilon(q, z, steps, delta, spacing=1e-4):
    if dp_event is None:
        return float("nan"), float("nan")
    event = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)), steps)
    if q == 1.0:
        event = dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(z), steps)
    start = time.perf_counter()
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=spacing)
    epsilon = accountant.compose(event).get_epsilon(delta)
    return epsilon, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the issue's rows (about a minute)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rows = ISSUE_ROWS if args.quick else ISSUE_ROWS + GRID
    header = (f"{'q':>7}{'z':>6}{'T':>9}{'delta':>7} | {'dpedu pess':>11}{'dpedu opt':>11}{'dp_acc':>10}"
              f"{'ratio':>8} | {'t dpedu':>8}{'t dp_acc':>9}{'t ratio':>8}")
    print(header)
    print("-" * len(header))
    for q, z, steps, delta in rows:
        high, low, seconds = dpedu_epsilon(q, z, steps, delta)
        try:
            reference, reference_seconds = dp_accounting_epsilon(q, z, steps, delta)
        except Exception as exc:  # dp_accounting's own limits (e.g. memory) are reported, not fatal
            reference, reference_seconds = float("nan"), float("nan")
            print(f"   dp_accounting failed: {type(exc).__name__}: {str(exc)[:60]}")
        print(f"{q:>7g}{z:>6g}{steps:>9}{delta:>7.0e} | {high:11.4f}{low:11.4f}{reference:10.4f}"
              f"{high / reference:8.4f} | {seconds:8.3f}{reference_seconds:9.3f}{seconds / reference_seconds:8.3f}")
    start = time.perf_counter()
    z = calibrate.noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sampling_rate=0.01, steps=10_000,
                                   accountant="pld")
    print(f"\ncalibration on PLD at q = 0.01, T = 10,000, epsilon = 1, delta = 1e-5: z = {z:.4f} in "
          f"{time.perf_counter() - start:.3f} s (target <= 0.5 s)")


if __name__ == "__main__":
    main()
