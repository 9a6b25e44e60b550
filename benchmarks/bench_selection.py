"""Private selection: dpedu's RepeatAndSelectEvent beside dp_accounting's RepeatAndSelectDpEvent (when importable).

Both implement Papernot & Steinke (2022) Thm 2 (truncated negative binomial, shapes 0, 0.5, 1, 2) and Thm 6
(Poisson, shape inf) on an RDP order grid, then convert to (epsilon, delta) with the improved conversion. The
grid is dpedu's DEFAULT_ORDERS for both, so the ratio dpedu / dp_accounting is 1.000 where the two agree.
Inner mechanisms: a plain Gaussian (z = 5) and DP-SGD runs (Poisson rate q = 0.01, z = 1, 1,000 steps; and
q = 0.004, z = 0.8, 5,000 steps). Printed: dpedu's epsilon and, in brackets, dpedu / dp_accounting per mean K,
and the same ratio for ONE run (no selection).

Where a selection ratio is below 1 although the one-run ratio is 1: Thm 2 also uses the run's RDP at a second,
often small, order lambda-hat (1.8 for the third mechanism), where dp_accounting's sampled-Gaussian RDP at a
fractional order is a conservative upper bound while dpedu's is the series of Mironov, Talwar & Zhang (2019);
the last table compares both with a numerical integral of A_alpha at a few orders (dpedu matches it).

dpedu never imports dp_accounting; only this benchmark does (``pip install dp-accounting``; listed in
benchmarks/requirements.txt). Without it the dpedu column is printed alone.

Run: ``python benchmarks/bench_selection.py`` (a few seconds).
"""

from __future__ import annotations

import math
import warnings

from dpedu.accountants import GaussianEvent, RepeatAndSelectEvent, SubsampledGaussianEvent
from dpedu.accountants.analysis.orders import DEFAULT_ORDERS
from dpedu.accountants.rdp import RDPAccountant

try:
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant
except ImportError:  # the benchmark still runs, without the comparison
    dp_event = None

DELTA = 1e-5
MEANS = (2, 5, 10, 50)
SHAPES = (0.0, 0.5, 1.0, 2.0, math.inf)
INNER = {
    "Gaussian z=5": (GaussianEvent(5.0), 1),
    "DP-SGD q=0.01 z=1 T=1000": (SubsampledGaussianEvent(1.0, 0.01), 1000),
    "DP-SGD q=0.004 z=0.8 T=5000": (SubsampledGaussianEvent(0.8, 0.004), 5000),
}


def dpedu_epsilon(event, count=1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # an edge order is reported, not printed here
        return RDPAccountant().compose(event, count).get_epsilon(DELTA)


def reference_event(event, count):
    """The same inner mechanism as a dp_accounting event."""
    if isinstance(event, GaussianEvent):
        inner = dp_event.GaussianDpEvent(event.noise_multiplier)
    else:
        inner = dp_event.PoissonSampledDpEvent(event.sampling_rate, dp_event.GaussianDpEvent(event.noise_multiplier))
    return inner if count == 1 else dp_event.SelfComposedDpEvent(inner, count)


def reference_epsilon(event):
    accountant = rdp_privacy_accountant.RdpAccountant(orders=list(DEFAULT_ORDERS))
    accountant.compose(event)
    return accountant.get_epsilon(DELTA)


def integrated_sampled_gaussian_rdp(q, z, order):
    """ln A_alpha / (alpha - 1) with A_alpha = E_{x ~ N(0, z^2)} [(1 - q + q exp((2x - 1) / (2 z^2)))^alpha], by quad."""
    from scipy import integrate, stats

    def integrand(x):
        return stats.norm.pdf(x, scale=z) * (1 - q + q * math.exp((2 * x - 1) / (2 * z * z))) ** order

    value = integrate.quad(integrand, -40 * z, 0.5, epsabs=0, epsrel=1e-12, limit=400)[0]
    value += integrate.quad(integrand, 0.5, 40 * z, epsabs=0, epsrel=1e-12, limit=400)[0]
    return math.log(value) / (order - 1)


def compare_fractional_orders(q=0.004, z=0.8):
    from dpedu.accountants.analysis.rdp_curves import rdp_sampled_gaussian

    print(f"\none sampled-Gaussian step (q = {q:g}, z = {z:g}): RDP at fractional orders")
    print(f"{'order':>8}{'integral':>16}{'dpedu':>16}{'dp_accounting':>16}")
    for order in (1.1, 1.5, 1.8, 2.5):
        theirs = float("nan")
        if dp_event is not None:
            theirs = reference_rdp(q, z, order)
        print(f"{order:>8g}{integrated_sampled_gaussian_rdp(q, z, order):>16.6e}"
              f"{rdp_sampled_gaussian(q, z, order):>16.6e}{theirs:>16.6e}")


def reference_rdp(q, z, order):
    accountant = rdp_privacy_accountant.RdpAccountant(orders=[order])
    accountant.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)))
    return float(accountant._rdp[0])


def main():
    print(f"epsilon at delta = {DELTA:g} of the best of K runs (RDP, improved conversion, dpedu's order grid)")
    if dp_event is None:
        print("dp_accounting is not installed: dpedu's values only (pip install dp-accounting for the ratios)")
    header = "".join(f"{'E[K]=' + str(m):>18}" for m in MEANS)
    for name, (event, count) in INNER.items():
        run = dpedu_epsilon(event, count)
        line = f"\n{name}: one run epsilon {run:.4f}"
        if dp_event is not None:
            line += f" (dpedu / dp_accounting {run / reference_epsilon(reference_event(event, count)):.5f})"
        print(line)
        print(f"{'shape':>8}" + header)
        for shape in SHAPES:
            cells = []
            for mean in MEANS:
                ours = dpedu_epsilon(RepeatAndSelectEvent([(event, count)], mean, shape))
                cell = f"{ours:.4f}"
                if dp_event is not None:
                    theirs = reference_epsilon(dp_event.RepeatAndSelectDpEvent(reference_event(event, count), mean,
                                                                               shape))
                    cell += f" ({ours / theirs:.4f})"
                cells.append(f"{cell:>18}")
            print(f"{shape:>8g}" + "".join(cells))
    compare_fractional_orders()


if __name__ == "__main__":
    main()
