"""Gaussian DP of DP-SGD: the central-limit mu against a certified mu, setting by setting (docs/math.md §21.4-21.5).

Per setting (q, z, T) it prints

* ``mu CLT``: Bu, Dong, Long & Su (2020), q sqrt(T (e^{1/z^2} - 1)) - a limit, not a bound;
* ``mu cert``: :func:`dpedu.accountants.gdp.certified_mu`, the smallest mu whose Gaussian curve the PLD's
  pessimistic curve dominates (up to 1e-10): a guarantee;
* ``mu(eps)``: the mu of the Gaussian mechanism with the PLD's epsilon at delta = 1e-5 (solving
  delta_mu(eps) = 1e-5), which matches the run at that one point only;
* ``CLT/cert``: below 1 the CLT under-reports the privacy loss;
* ``eps CLT`` and ``eps PLD``: the epsilon at delta = 1e-5 of the CLT's mu and the PLD's pessimistic one.

The last line is the CLT's worst under-report. Run: ``python benchmarks/bench_gdp.py`` (about a minute).
"""

from __future__ import annotations

import itertools
import time

from dpedu.accountants import SubsampledGaussianEvent, make_accountant
from dpedu.accountants.gdp import certified_mu, clt_mu
from dpedu.ground.gaussian import analytic_noise_multiplier, gaussian_epsilon_exact

DELTA = 1e-5
SETTINGS = [(q, z, t) for q, z, t in itertools.product((1e-3, 0.01, 0.1, 1.0), (0.8, 1.1, 4.0), (1, 100, 10_000, 100_000))
            if q * t >= 1 and not (q == 1.0 and t > 100)]


def row(q, z, steps):
    ledger = [(SubsampledGaussianEvent(z, q), steps)]
    start = time.perf_counter()
    clt = clt_mu(z, q, steps)
    certified = certified_mu(ledger)
    epsilon = make_accountant("pld").compose(*ledger[0]).get_epsilon(DELTA)
    matched = 1.0 / analytic_noise_multiplier(epsilon, DELTA)     # the Gaussian through (epsilon, delta)
    clt_epsilon = gaussian_epsilon_exact(DELTA, 1.0 / clt)
    return dict(q=q, z=z, T=steps, clt=clt, cert=certified, matched=matched, ratio=clt / certified,
                eps_clt=clt_epsilon, eps_pld=epsilon, seconds=time.perf_counter() - start)


def main():
    print(f"{'q':>6} {'z':>4} {'T':>7} | {'mu CLT':>8} {'mu cert':>8} {'mu(eps)':>8} {'CLT/cert':>8} | "
          f"{'eps CLT':>8} {'eps PLD':>8} | {'s':>5}")
    rows = []
    for q, z, steps in SETTINGS:
        r = row(q, z, steps)
        rows.append(r)
        print(f"{q:>6g} {z:>4g} {steps:>7} | {r['clt']:8.4f} {r['cert']:8.4f} {r['matched']:8.4f} {r['ratio']:8.3f} | "
              f"{r['eps_clt']:8.3f} {r['eps_pld']:8.3f} | {r['seconds']:5.2f}")
    worst = min(rows, key=lambda r: r["ratio"])
    print(f"{len(rows)} settings. Worst CLT under-report: mu CLT / mu certified = {worst['ratio']:.3f} at q = {worst['q']:g}, "
          f"z = {worst['z']:g}, T = {worst['T']} (epsilon at delta = {DELTA:g}: {worst['eps_clt']:.3f} by the CLT, "
          f"{worst['eps_pld']:.3f} by the PLD)")


if __name__ == "__main__":
    main()
