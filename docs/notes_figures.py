"""The figures of the mathematical notes (``docs/math.md``): ``python docs/notes_figures.py``.

Writes three PNGs into ``docs/_static/notes/`` (they are committed; rerun this script after changing it, the
book does not regenerate them):

* ``privacy_loss.png`` — the privacy-loss distribution of the Gaussian mechanism (exactly N(μ²/2, μ²), §4.3)
  and of one Poisson-subsampled Gaussian step (its density, from the change of variables of §12.1 / §15.2);
* ``tradeoff.png`` — trade-off curves: the Gaussian G_μ (§21.4) and the (ε, δ)-DP curve f_{ε,δ} (§21.3);
* ``amplification.png`` — amplification by subsampling: the ε of one subsampled Gaussian step against q, from the
  PLD accountant, beside the bound ln(1 + q(e^ε − 1)) applied to the full-batch ε (§11.1).

Every number comes from dpedu's own functions; nothing is typed in.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.stats import norm  # noqa: E402

from dpedu.accountants import GaussianEvent, SubsampledGaussianEvent, make_accountant  # noqa: E402
from dpedu.accountants.tradeoff import epsilon_delta_tradeoff, gaussian_tradeoff  # noqa: E402

OUT = Path(__file__).resolve().parent / "_static" / "notes"
DELTA = 1e-5


def privacy_loss(path):
    """Left: the Gaussian mechanism's privacy loss for three multipliers; right: one subsampled step."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    grid = np.linspace(-3, 6, 600)
    for z in (0.5, 1.0, 2.0):
        mu = 1.0 / z
        left.plot(grid, norm.pdf(grid, loc=mu**2 / 2, scale=mu), label=f"z = {z:g}: N(μ²/2, μ²), μ = {mu:g}")
    left.axvline(0, color="gray", linestyle=":", linewidth=1)
    left.set(xlabel="privacy loss L", ylabel="density", title="Gaussian mechanism (§4.3)")
    left.legend(fontsize=9)
    # one Poisson-subsampled Gaussian step, add/remove: output o ~ (1-q) N(0, z²) + q N(1, z²) under D,
    # loss L(o) = ln((1 - q) + q exp((2o - 1) / (2 z²))) (§12.1); its density by sampling o from D
    rng = np.random.default_rng(0)
    z = 1.0
    for q in (0.01, 0.1, 0.5):
        o = rng.normal(0.0, z, 400_000) + (rng.random(400_000) < q)
        loss = np.log1p(q * np.expm1((2 * o - 1) / (2 * z**2)))
        right.hist(loss, bins=np.linspace(-0.8, 2.5, 200), density=True, histtype="step", linewidth=1.5,
                   label=f"q = {q:g} (lower limit ln(1 − q) = {math.log(1 - q):.2f})")
    right.set(xlabel="privacy loss L", ylabel="density (log scale)", yscale="log",
              title=f"one subsampled Gaussian step, z = {z:g} (§12.1)")
    right.legend(fontsize=9)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def tradeoff(path):
    """FNR against FPR: G_mu for three mu, and f_{eps,delta} at eps = 1."""
    fig, ax = plt.subplots(figsize=(5.6, 5.0), layout="constrained")
    alphas = np.linspace(0, 1, 501)
    for mu in (0.5, 1.0, 2.0):
        ax.plot(alphas, gaussian_tradeoff(alphas, mu), label=f"Gaussian DP, μ = {mu:g}: G_μ (§21.4)")
    ax.plot(alphas, epsilon_delta_tradeoff(alphas, 1.0, DELTA), color="black", linestyle="--",
            label="(ε, δ)-DP, ε = 1, δ = 1e-5: f_ε,δ (§21.3)")
    ax.plot(alphas, 1 - alphas, color="gray", linestyle=":", label="perfect privacy: β = 1 − α")
    ax.set(xlabel="false-positive rate α", ylabel="false-negative rate β", xlim=(0, 1), ylim=(0, 1),
           title="Trade-off curves: no test does better (lower)")
    ax.legend(fontsize=9)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def amplification(path):
    """Epsilon of one step against the sampling rate q, PLD accountant, with the §11.1 bound."""
    fig, ax = plt.subplots(figsize=(7.0, 4.2), layout="constrained")
    qs = np.geomspace(1e-3, 1.0, 16)
    for z, color in ((1.0, "C0"), (2.0, "C1")):
        full = make_accountant("pld").compose(GaussianEvent(z), 1).get_epsilon(DELTA)
        sampled = [make_accountant("pld").compose(SubsampledGaussianEvent(z, q), 1).get_epsilon(DELTA)
                   if q < 1 else full for q in qs]
        ax.plot(qs, sampled, marker="o", color=color, label=f"z = {z:g}: PLD accountant, one step")
        ax.plot(qs, np.log1p(qs * np.expm1(full)), color=color, linestyle="--",
                label=f"z = {z:g}: ln(1 + q(e^ε − 1)), ε = {full:.2f} at q = 1 (§11.1)")
    ax.set(xscale="log", yscale="log", xlabel="sampling rate q", ylabel=f"ε of one step at δ = {DELTA:g}",
           title="Amplification by subsampling: a step that touches few records costs little")
    ax.legend(fontsize=9)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, draw in (("privacy_loss", privacy_loss), ("tradeoff", tradeoff), ("amplification", amplification)):
        draw(OUT / f"{name}.png")
        print(f"wrote {(OUT / f'{name}.png').relative_to(OUT.parents[2])}")


if __name__ == "__main__":
    main()
