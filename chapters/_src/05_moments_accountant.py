# %% [markdown]
# # Chapter 5 — The moments accountant
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. define the **privacy loss random variable** of a mechanism and its log-moments α(λ);
# > 2. explain why log-moments **add** under composition, and turn them into (ε, δ) with the tail bound
# >    $\delta = \min_\lambda \exp(\alpha(\lambda) - \lambda\varepsilon)$;
# > 3. reproduce Figure 2 of Abadi et al. (2016) — and say which of its curves is *not* a valid bound, and why;
# > 4. account the same DP-SGD run with every accountant of the course, explain why zCDP does not apply, and
# >    read off how much noise each accountant needs for the same **total** ε.
#
# *Prerequisites:* chapter 4. *Time:* about 90 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 17 s in fast mode (`DPEDU_FAST=1`), 25 s in full mode.
#
# Chapter 4 trained with DP-SGD: T steps, each on a Poisson sample with rate q, each adding $\mathcal N(0, (zC)^2I)$ to a
# clipped gradient sum. Abadi et al. train for 10 000 steps. Composing 10 000 per-step (ε, δ) pairs with the
# theorems of chapter 3 gives useless numbers; this chapter shows how the moments accountant does better and why.
# The formulas are in [notes §12](../docs/math.md#12-the-moments-accountant) (moments accountant), [§13](../docs/math.md#13-rényi-differential-privacy) (RDP), [§15](../docs/math.md#15-privacy-loss-distributions) (PLD) and [§17](../docs/math.md#17-calibration-by-bisection) (calibration).

# %% [markdown]
# *Uses:* [`MomentsAccountant`](dpedu.accountants.moments.MomentsAccountant) ·
# [`epsilon_from_log_moments`](dpedu.accountants.moments.epsilon_from_log_moments) ·
# [`RDPAccountant`](dpedu.accountants.rdp.RDPAccountant) ·
# [`StrongCompositionAccountant`](dpedu.accountants.strong.StrongCompositionAccountant) ·
# [`epsilon_curves`](dpedu.lab.experiments.epsilon_curves) ·
# [`plot_privacy_curves`](dpedu.lab.plotting.plot_privacy_curves) ·
# [`PLDAccountant`](dpedu.accountants.pld.accountant.PLDAccountant) (see the API reference).
# *Notes:* [§12](../docs/math.md#12-the-moments-accountant) · [§13](../docs/math.md#13-rényi-differential-privacy) · [§14](../docs/math.md#14-zero-concentrated-dp) · [§15](../docs/math.md#15-privacy-loss-distributions) in the mathematical notes.

# %%
import math
import textwrap
import warnings

import matplotlib.pyplot as plt
import numpy as np
from scipy.special import logsumexp

import dpedu as dp
from dpedu.lab import plotting
from dpedu.course import checks
from dpedu.lab import experiments
from dpedu.course.notebook import fast_mode, pick, show_source
from dpedu.accountants import (OrderGridEdgeWarning, SubsampledGaussianEvent, make_accountant,
                               moments)
from dpedu.accountants.pld import PLDAccountant
from dpedu.accountants.rdp import RDPAccountant
from dpedu.accountants.strong import StrongCompositionAccountant

FAST = fast_mode()
print("fast mode" if FAST else "full mode")

# Abadi et al.'s setting (Section 5.1 and Figure 2): sampling rate, noise multiplier, total delta
q, z, delta = 0.01, 4.0, 1e-5

# %% [markdown]
# ## The privacy loss is a random variable
#
# Take neighbours D and D′, where D has one extra record. For an output o of a mechanism M, the **privacy loss**
#
# $$c(o) = \ln\frac{\Pr[M(D) = o]}{\Pr[M(D') = o]}$$
#
# says how much more likely o is with the record than without it. With o drawn from M(D), c(o) is a random
# variable. Pure ε-DP says $\lvert c(o)\rvert \le \varepsilon$ for *every* o. (ε, δ)-DP is close to saying that $c(o) \le \varepsilon$ except with
# probability δ. So if we know the whole distribution of c, we know the privacy.
#
# For one DP-SGD step, project onto the direction of the extra record's clipped gradient (sensitivity 1 after
# dividing by C). Without the record the output is $\mu_0 = \mathcal N(0, z^2)$. With it, the record is in the batch with
# probability q, so the output is the mixture $\mu = (1 - q)\mathcal N(0, z^2) + q\,\mathcal N(1, z^2)$. Then
#
# $$c(o) = \ln\frac{\mu(o)}{\mu_0(o)} = \ln\Bigl(1 - q + q\,e^{(2o - 1)/(2z^2)}\Bigr), \qquad o \sim \mu .$$
#
# For $q = 1$ (no subsampling) this is $(2o - 1)/(2z^2)$: the privacy loss of a Gaussian mechanism is itself
# Gaussian, $\mathcal N(1/(2z^2), 1/z^2)$. We sample both.

# %%
# alt: Two stacked histograms of the privacy loss: above, the Gaussian mechanism with its normal density; below, one
#   sampled DP-SGD step on a log scale, with its lower limit ln(1 - q) dotted.
def privacy_loss(o, sampling_rate, noise_multiplier):
    """c(o) = ln(1 - q + q exp((2o - 1) / (2 z^2))),
    written with log1p/expm1 so that q = 1 is exact."""
    return np.log1p(sampling_rate * np.expm1((2 * o - 1) / (2 * noise_multiplier**2)))


def sample_privacy_loss(sampling_rate, noise_multiplier, size, rng):
    """Draw o from mu = (1 - q) N(0, z^2) + q N(1, z^2) and return c(o)."""
    in_batch = rng.random(size) < sampling_rate            # was the extra record sampled?
    o = rng.normal(0.0, noise_multiplier, size) + in_batch
    return privacy_loss(o, sampling_rate, noise_multiplier)


rng = np.random.default_rng(5)
n_samples = pick(2_000_000, 200_000)
losses = {1.0: sample_privacy_loss(1.0, z, n_samples, rng),
          q: sample_privacy_loss(q, z, n_samples, rng)}

plotting.plot_privacy_loss(losses[1.0], losses[q], sampling_rate=q, noise_multiplier=z)
plt.show()
for key, c in losses.items():
    skew = np.mean((c - c.mean()) ** 3) / c.std() ** 3
    print(f"q = {key:<5g}: mean {c.mean():.2e}, std {c.std():.2e}, skewness {skew:5.2f}, "
          f"range of {n_samples:,} samples [{c.min():.4f}, {c.max():.4f}]")

# %% [markdown]
# Subsampling shrinks the loss about a hundredfold and makes it skewed: it can never fall below $\ln(1 - q)$, but
# it has a long right tail, from the rare steps where the record was sampled *and* its noise pushed o far to the
# right. Describing this distribution by one (ε, δ) pair per step — as chapter 3's theorems must — throws its
# shape away.
#
# ## Log-moments
#
# The moments accountant describes the distribution by its **log moment-generating function**
#
# $$\alpha(\lambda) = \ln \mathbb{E}_{o\sim M(D)}\bigl[e^{\lambda c(o)}\bigr],$$
#
# maximised over neighbours (Abadi et al. also check the other direction, D′ against D; for the sampled
# Gaussian the direction above is the larger one, [notes §12.4](../docs/math.md#124-the-sampled-gaussian-one-step)). For integer λ, expanding the mixture
# binomially gives an exact finite sum:
#
# $$\alpha(\lambda) = \ln \sum_{j=0}^{\lambda+1}\binom{\lambda+1}{j}(1-q)^{\lambda+1-j}q^j e^{(j^2-j)/(2z^2)} .$$
#
# Three ways to get the same numbers: averaging $e^{\lambda c}$ over our samples (Monte Carlo), numerical integration
# (what Abadi et al.'s code did; `MomentsAccountant(method="integration")`) and the binomial sum (dpedu's default).
# For $q = 1$ the exact answer is $\lambda(\lambda + 1)/(2z^2)$.
#
# You write the binomial sum first. (Each exercise of this chapter comes where its subject does, before dpedu
# computes the same thing; you may use `numpy`, `scipy` and `math`, but not `dpedu` itself.)
#
# **Exercise 5.1 — the log-moment of one step.** Write `log_moment(sampling_rate, noise_multiplier, moment_order)`
# returning $\alpha(\lambda) = \ln \sum_{j=0}^{\lambda+1} C(\lambda+1, j)(1-q)^{\lambda+1-j} q^j e^{(j^2-j)/(2z^2)}$ for an integer $\lambda \ge 1$. It must
# work for $\lambda = 256$ and $z = 0.8$, where the terms overflow float64: work with logarithms
# (`scipy.special.gammaln` for log-binomials, `scipy.special.logsumexp` for the sum). Careful with $q = 1$.

# %% exercise=5.1
def log_moment(sampling_rate, noise_multiplier, moment_order):
    ### BEGIN SOLUTION
    from scipy.special import gammaln, xlog1py, xlogy

    a = moment_order + 1
    j = np.arange(a + 1)
    log_binomial = gammaln(a + 1) - gammaln(j + 1) - gammaln(a - j + 1)
    # xlogy(k, q) = k ln q, but 0 when k = 0:
    # at q = 1 the terms with j < a are exp(-inf) = 0, not nan
    log_terms = (log_binomial + xlog1py(a - j, -sampling_rate) + xlogy(j, sampling_rate)
                 + (j * j - j) / (2 * noise_multiplier**2))
    return float(logsumexp(log_terms))
    ### END SOLUTION

# %% check=5.1
checks.check_log_moment(log_moment)

# %% [markdown]
# Now the three ways side by side, for the chapter's $q$ and $z$ (dpedu's binomial sum is the last column):

# %%
lambdas = np.array([1, 2, 4, 8, 16, 32])


def monte_carlo_log_moment(c, lam):
    """ln mean(exp(lam * c)), in log space."""
    return float(logsumexp(lam * c) - math.log(c.size))


def log_moments_of(event, method):
    acc = moments.MomentsAccountant(moment_orders=lambdas, method=method).compose(event)
    return acc.log_moments()[1]


sampled = SubsampledGaussianEvent(noise_multiplier=z, sampling_rate=q)
integrated = log_moments_of(sampled, "integration")
closed_form = log_moments_of(sampled, "closed_form")
print(f"{'':>4} {'q = 1':^27} | {'q = ' + format(q, 'g'):^42}")
print(f"{'lam':>4} {'Monte Carlo':>13} {'exact':>13} | "
      f"{'Monte Carlo':>13} {'integration':>13} {'binomial sum':>14}")
for i, lam in enumerate(lambdas):
    print(f"{lam:4d} {monte_carlo_log_moment(losses[1.0], lam):13.5f} "
          f"{lam * (lam + 1) / (2 * z**2):13.5f} | "
          f"{monte_carlo_log_moment(losses[q], lam):13.3e} "
          f"{integrated[i]:13.3e} {closed_form[i]:14.3e}")

# %% [markdown]
# Monte Carlo agrees up to its sampling error (largest for small λ, where α is tiny, and for large λ with
# $q = 1$, where $e^{\lambda c}$ is heavy-tailed); integration and the binomial sum agree to many digits. Note the scale:
# one subsampled step has log-moments about $q^2 = 10^{-4}$ times those of a full-batch Gaussian step.
#
# ## Composition: log-moments add
#
# For two independent releases the privacy loss of the pair is the *sum* of the two losses (the log of a product
# of likelihood ratios), and the moment-generating function of a sum of independent variables is the product of
# theirs. Taking logs: **log-moments add**. Abadi et al. (Theorem 2) prove this also for adaptive composition,
# where each step depends on the previous outputs — as in training. So T identical steps have
#
# $$\alpha_T(\lambda) = T\,\alpha(\lambda) \quad\text{for every } \lambda .$$
#
# That is all an accountant needs to store: the ledger, and the sum at each λ.

# %%
show_source(moments.MomentsAccountant.log_moments)

# %% [markdown]
# ## From moments to (ε, δ): the tail bound
#
# Markov's inequality applied to $e^{\lambda c}$: for every $\lambda > 0$,
#
# $$\Pr[c(o) \ge \varepsilon] = \Pr\bigl[e^{\lambda c(o)} \ge e^{\lambda\varepsilon}\bigr]
#   \le \frac{\mathbb{E}[e^{\lambda c(o)}]}{e^{\lambda \varepsilon}} = e^{\alpha(\lambda) - \lambda\varepsilon}.$$
#
# A mechanism whose loss exceeds ε with probability at most δ is (ε, δ)-DP, so M is (ε, δ)-DP with
#
# $$\delta = \min_\lambda e^{\alpha(\lambda) - \lambda\varepsilon}, \qquad\text{or, for a target } \delta,\qquad
#   \varepsilon = \min_\lambda \frac{\alpha(\lambda) + \ln(1/\delta)}{\lambda}.$$
#
# Every λ gives a valid bound; the accountant simply keeps the best one. Large λ divides $\ln(1/\delta)$ by more but
# pays a larger α(λ): the best λ balances the two. You write this minimisation in Exercise 5.2; dpedu's
# `moments.epsilon_from_log_moments` does it too.
#
# **Exercise 5.2 — the tail bound.** Write `epsilon_from_log_moments(moment_orders, log_moments, delta)`: given
# the composed α(λ) at each λ (two arrays), return the total $\varepsilon = \min_\lambda (\alpha(\lambda) + \ln(1/\delta))/\lambda$.

# %% exercise=5.2
def epsilon_from_log_moments(moment_orders, log_moments, delta):
    ### BEGIN SOLUTION
    moment_orders = np.asarray(moment_orders, dtype=float)
    log_moments = np.asarray(log_moments, dtype=float)
    return float(np.min((log_moments + math.log(1 / delta)) / moment_orders))
    ### END SOLUTION

# %% check=5.2
checks.check_epsilon_from_log_moments(epsilon_from_log_moments)

# %% [markdown]
# *Compare with dpedu's version*, which also reports the order λ that attains the minimum:

# %%
show_source(moments.epsilon_from_log_moments)

# %% [markdown]
# The tail bound at every λ, for three lengths of training:

# %%
# alt: The moments accountant's tail bound (total epsilon) against the moment order lambda, one line per number of
#   epochs, a star at each minimum.
orders = np.arange(1, 33)
fig, ax = plt.subplots(figsize=(7.3, 4.5))
for epochs in (10, 100, 400):
    steps = experiments.steps_from_epochs(epochs, q)
    acc = moments.MomentsAccountant(moment_orders=orders).compose(sampled, steps)
    lam, alpha = acc.log_moments()
    candidates = (alpha + math.log(1 / delta)) / lam
    eps, best = moments.epsilon_from_log_moments(lam, alpha, delta)
    ax.plot(lam, candidates, marker=".",
            label=f"{epochs} epochs (T = {steps:,}): best λ = {best}, ε = {eps:.4f}")
    ax.plot([best], [eps], "k*", markersize=12)
ax.set_yscale("log")
ax.set(xlabel="moment order λ",
       ylabel=r"$(\alpha_T(\lambda) + \ln(1/\delta))\,/\,\lambda$   (total ε)",
       title=f"The tail bound for every λ (q = {q:g}, z = {z:g}, δ = {delta:g}); "
             "star = the minimum")
ax.legend()
plt.show()

acc = make_accountant("moments").compose(sampled, experiments.steps_from_epochs(100, q))
eps, best = acc.get_epsilon_and_moment_order(delta)
print(f"100 epochs: total epsilon {eps:.4f} at lambda = {best} (Abadi et al. report 1.26)")
print(f"and back: delta at that epsilon = {acc.get_delta(eps):.3g}")

# %% [markdown]
# Two consequences of the formula, both visible above:
#
# * **A floor.** Since $\alpha(\lambda) \ge 0$, $\varepsilon \ge \ln(1/\delta)/\lambda_{\max}$: with Abadi et al.'s orders $\lambda \le 32$ and $\delta = 10^{-5}$ no run, however
#   noisy, is certified below $\ln(10^5)/32 \approx 0.36$. With few steps (10 epochs) the best λ is already at the edge of
#   the grid. Chapter 6 meets this floor again.
# * **It is Rényi DP in disguise.** $\alpha(\lambda) = \lambda\cdot\varepsilon_{\mathrm{RDP}}(\lambda + 1)$: the Rényi divergence of order λ + 1 ([notes §12.7](../docs/math.md#127-relation-to-rdp)).
#   The RDP accountant tracks the same quantity at fractional orders too and converts it with a tighter
#   formula, so it is never looser:

# %%
print(f"floor with lambda <= 32: ln(1/delta)/32 = {math.log(1 / delta) / 32:.4f}")
steps = experiments.steps_from_epochs(100, q)
lam, alpha = moments.MomentsAccountant(moment_orders=[19]).compose(sampled, steps).log_moments()
rdp_orders, rdp = RDPAccountant(orders=[20.0]).compose(sampled, steps).rdp_curve()
print(f"alpha_T(19) / 19 = {alpha[0] / 19:.6f}   RDP of order 20 = {rdp[0]:.6f}")

# %% [markdown]
# ## Figure 2 of Abadi et al., reproduced
#
# Abadi et al. compare, for $q = 0.01$, $z = 4$, $\delta = 10^{-5}$, the moments accountant with "strong composition":
# each step is made $(\varepsilon_0, \delta_0)$-DP by the Gaussian mechanism, amplified by subsampling to $(\varepsilon_1, \delta_1)$, and the T steps
# are composed with the advanced composition theorem. We draw three curves in the top panel:
#
# * the moments accountant;
# * strong composition **as in the paper** — the recipe that reproduces the paper's numbers (the paper reports 9.34
#   at 100 epochs and 24.22 at 400; the table below prints 9.34 and 24.21; [notes §12.6](../docs/math.md#126-anchors)). It is **not a valid bound** (dashed), for reasons we take apart below;
# * strong composition with a **valid** recipe: the exact Gaussian $\varepsilon_0$ (Balle & Wang), the correct amplification
#   $\varepsilon_1 = \ln(1 + q(e^{\varepsilon_0} - 1))$, the exact Dwork–Rothblum–Vadhan bound and the best split of δ.
#
# The lower panel adds every other accountant on a log scale. All y values are the **total** ε of the run.

# %%
# alt: Abadi et al.'s Figure 2 redrawn in two stacked panels, total epsilon against epochs, each panel's accountants
#   named in its own legend.
epoch_grid = pick(np.r_[1, 2, 5, 10:101:10, 125:401:25], np.array([1, 10, 100, 200, 400]))
curves = experiments.epsilon_curves(noise_multiplier=z, sampling_rate=q, delta=delta,
                                    epochs=epoch_grid)
# stacked: column-wide panels
fig, panels = plt.subplots(2, 1, figsize=(7.3, 9.5), layout="constrained")
top, bottom = plotting.plot_figure2(curves, axes=panels)
plt.show()

# %%
at = {e: int(np.flatnonzero(curves.epochs == e)[0]) for e in (100, 400)}
print(f"{'accountant':<54}{'100 epochs':>11}{'400 epochs':>11}")
for key, values in curves.epsilons.items():
    print(f"{experiments.ACCOUNTANT_LABELS[key]:<54}{values[at[100]]:11.4f}{values[at[400]]:11.4f}")
for key, note in curves.notes.items():
    if key not in curves.epsilons:
        print(f"{experiments.ACCOUNTANT_LABELS[key]:<54}{'n/a':>11}{'n/a':>11}")

# %% [markdown]
# ## The whole privacy curve of one run
#
# Each number above is one point $(\varepsilon, \delta = 10^{-5})$ of a curve: an accountant certifies a δ(ε) for every ε.
# [`plot_privacy_curves`](dpedu.lab.plotting.plot_privacy_curves) composes Abadi et al.'s run ($q = 0.01$, $z = 4$) on a
# fresh accountant of each kind and draws δ(ε) on a log δ axis ([notes §15.1](../docs/math.md#151-what-is-computed)). The PLD accountant draws
# two curves: its pessimistic estimate (an upper bound: the guarantee) and its optimistic one (a lower bound,
# dashed); the true curve lies between them ([notes §15.7](../docs/math.md#157-connect-the-dots-discretisation-pessimistic-and-optimistic)). On this run they are so close that the dashed
# curve hides under the solid one; the table below puts numbers on the gap. Strong composition with the valid
# recipe is the same computation as advanced composition on this ledger, so it is left out.

# %%
# alt: Privacy curves of the DP-SGD run: delta against epsilon, one line per accountant, named in the legend.
run_steps = pick(10_000, 2_000)
# the moments accountant's edge-of-grid warning at small epsilon (see the floor above)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", OrderGridEdgeWarning)
    curve_ax = plotting.plot_privacy_curves(
        [(sampled, run_steps)], epsilons=np.linspace(0.02, 2.5, pick(60, 20)),
        accountants=("sequential", "advanced", "moments", "rdp", "zcdp", "pld"))
plt.show()

# %% [markdown]
# The PLD accountant discretises each step's privacy loss on a grid of spacing Δ. The bracket
# [optimistic, pessimistic] around the true ε at $\delta = 10^{-5}$ closes as the grid is refined:

# %%
print(f"T = {run_steps:,} steps, delta = {delta:g}")
print(f"{'grid spacing':>14}{'optimistic eps':>16}{'pessimistic eps':>17}{'width':>11}")
bracket = {}
for spacing in (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, None):
    bracket[spacing] = (PLDAccountant(discretization=spacing).compose(sampled, run_steps)
                        .epsilon_bracket(delta))
    low, high = bracket[spacing]
    name = "default" if spacing is None else f"{spacing:g}"
    print(f"{name:>14}{low:16.4f}{high:17.4f}{high - low:11.2e}")

# %% [markdown]
# On the coarsest grids the lower bound says nothing ($\varepsilon = 0$) and the upper bound is loose. From $\Delta = 10^{-3}$ to
# $\Delta = 10^{-4}$ the width shrinks about a hundredfold: the error of both estimates is of second order in Δ. The
# default grid, chosen for the pessimistic ε (with the optimistic estimate on a grid four times finer), leaves
# a bracket narrower than $10^{-3}$.

# %% [markdown]
# ## Why the paper's strong-composition curve is not a bound
#
# The two recipes differ in three places. Here are the per-step numbers behind each at 100 epochs:

# %%
steps = experiments.steps_from_epochs(100, q)
for recipe in ("paper", "valid"):
    b = StrongCompositionAccountant(recipe=recipe).compose(sampled, steps).breakdown(delta)
    s = b.gaussian_steps[0]
    print(f"{recipe:>5}: delta0 = {s.delta0:.3g}, eps0 = {s.epsilon0:.4f} "
          f"-> per step (eps1, delta1) = ({s.epsilon1:.5f}, {s.delta1:.3g});\n"
          f"       delta' = {b.delta_slack:.3g}; total epsilon {b.epsilon:.3f}")

paper = (StrongCompositionAccountant(recipe="paper").compose(sampled, steps).breakdown(delta)
         .gaussian_steps[0])
exact_eps0 = dp.calibrate.gaussian_epsilon_exact(delta=paper.delta0, noise_multiplier=z)
print(f"\nat the paper's delta0 = {paper.delta0:.3g}:")
print(f"  classic eps0 = sqrt(2 ln(1.25/delta0))/z = {paper.epsilon0:.4f}"
      "  (the formula is proven for eps0 < 1 only)")
print(f"  exact eps0 (Balle-Wang)                   = {exact_eps0:.4f}")
print(f"  amplified, linear q*eps0                  = {q * paper.epsilon0:.5f}")
print("  amplified, ln(1 + q(e^eps0 - 1))          = "
      f"{math.log1p(q * math.expm1(paper.epsilon0)):.5f}")

# %% [markdown]
# 1. **$\varepsilon_0 > 1$.** The classic calibration $z = \sqrt{2 \ln(1.25/\delta_0)}/\varepsilon_0$ is proven only for $\varepsilon_0 < 1$ (chapter 2). Here it
#    is used at $\varepsilon_0 \approx 1.46$. (In this range it happens to over-estimate the exact $\varepsilon_0$, so this flaw alone is not
#    what makes the curve too low.)
# 2. **Linear amplification.** The subsampling theorem gives $\varepsilon_1 = \ln(1 + q(e^{\varepsilon_0} - 1))$, which for $\varepsilon_0 \approx 1.46$ is
#    about 2.2 times $q\cdot\varepsilon_0$. The "O(qε)" of the paper hides exactly this constant, and the recipe sets it to 1.
#    This is the flaw that matters: the per-step $\varepsilon_1$ is too small.
# 3. **The second term.** Advanced composition has $k\varepsilon_1(e^{\varepsilon_1} - 1)$; the recipe uses $k\varepsilon_1^2$, slightly smaller.
#
# Fixing them gives the valid curve, about twice as high. Both are one to two orders of magnitude above the
# moments accountant, and the reason is not a bad constant: a per-step $(\varepsilon_1, \delta_1)$ pair is a worst case over
# every mechanism with those parameters, while the moments accountant composes the actual privacy-loss
# distribution of the subsampled Gaussian (its moments), which is far from the worst case.
#
# ## Every accountant on the same run
#
# The lower panel of the figure and the table above contain all the accountants of the course:
#
# * **sequential** adds up per-step ε's ($\delta_0$ split over the steps): linear in T.
# * **advanced** (and the valid strong recipe, the same computation here) grows like $\sqrt{T}$, but starts from
#   amplified per-step pairs and inherits their looseness.
# * **moments** — this chapter — and **RDP** (the same log-moments at more orders, with the improved conversion).
# * **PLD** composes the discretised privacy-loss *distribution* itself by FFT ([notes §15](../docs/math.md#15-privacy-loss-distributions)): the tightest, at
#   the price of some seconds per number.
# * **zCDP: n/a.** Why? ρ-zCDP requires the Rényi curve to lie below a *line*: $\bar\varepsilon(\alpha) \le \rho\alpha$ for every $\alpha > 1$. The
#   subsampled Gaussian's curve is tiny at small orders but, at large orders, climbs to the slope $1/(2z^2)$ of the
#   plain Gaussian — so the only ρ that covers it is the one *without* subsampling. zCDP has no amplification
#   theorem, and dpedu's zCDP accountant refuses the event rather than give that useless number:

# %%
rdp_orders, rdp = RDPAccountant().compose(sampled).rdp_curve()
print(f"one step, q = {q:g}, z = {z:g}: slope of the RDP curve, eps_RDP(alpha) / alpha")
for order in (2, 8, 32, 128, 256, 512, 1024):
    i = int(np.flatnonzero(rdp_orders == order)[0])
    print(f"  alpha = {order:5d}: {rdp[i] / order:.3e}")
print(f"plain Gaussian (no subsampling): 1/(2 z^2) = {1 / (2 * z**2):.3e}")
rho = steps * 1 / (2 * z**2)
print(f"zCDP with that rho over {steps:,} steps: eps = rho + 2 sqrt(rho ln(1/delta)) = "
      f"{rho + 2 * math.sqrt(rho * math.log(1 / delta)):.1f}")
print("\nthe accountant says:\n"
      + textwrap.fill(curves.notes["zcdp"], 92, initial_indent="  ", subsequent_indent="  "))

# %% [markdown]
# ## How much noise does each accountant need?
#
# Privacy costs accuracy through the noise: the noise in DP-SGD's average gradient has standard deviation
# zC/(qn). So the practical question is the inverse one: for a fixed target ε, which z does each accountant
# certify? `experiments.noise_for_target` bisects on a fresh accountant ([notes §17](../docs/math.md#17-calibration-by-bisection)) and always returns the
# end of the bracket that meets the target. Same run: $q = 0.01$, 100 epochs (10 000 steps), $\delta = 10^{-5}$.

# %%
targets = pick([0.5, 1.0, 1.26, 2.0], [1.0])
steps = experiments.steps_from_epochs(100, q)
table = {t: experiments.noise_for_target(target_epsilon=t, target_delta=delta, sampling_rate=q,
                                         steps=steps)
         for t in targets}
print("noise multiplier z needed for a total epsilon of ... "
      f"(q = {q:g}, T = {steps:,}, delta = {delta:g})")
print(f"{'accountant':<54}" + "".join(f"{'eps = ' + format(t, 'g'):>12}" for t in targets))
for key in experiments.ACCOUNTANT_KEYS:
    row = "".join(f"{'n/a':>12}" if math.isnan(table[t][0][key]) else f"{table[t][0][key]:12.2f}"
                  for t in targets)
    print(f"{experiments.ACCOUNTANT_LABELS[key]:<54}{row}")
print("\nrelative to PLD:")
for key in ("sequential", "advanced", "moments", "rdp"):
    ratios = ", ".join(f"{table[t][0][key] / table[t][0]['pld']:.2f}x" for t in targets)
    print(f"  {key:<11}{ratios}")
print("\nnote (strong_paper):", table[targets[0]][1]["strong_paper"])

# %% [markdown]
# Sequential composition asks for around a hundred times more noise than PLD; advanced composition about six
# times more. The moments accountant needs roughly 1.2 to 1.5 times PLD's noise (most at small ε, where its
# $\lambda \le 32$ limit bites), RDP about 1.08 times. The paper recipe's z is listed only to show that it is not a number
# to train with: it guarantees nothing. At these targets it even asks for *more* noise than the valid recipe
# (at large z the loose classic calibration outweighs the optimistic amplification), while at $z = 4$ in the
# figure it gives a *smaller* ε: a number that is not a bound can be wrong in either direction.
#
# A consistency check: calibrating on the moments accountant for Abadi et al.'s own $\varepsilon = 1.26$ should give back
# their $z = 4$.

# %%
anchor, _ = experiments.noise_for_target(target_epsilon=1.26, target_delta=delta, sampling_rate=q,
                                         steps=steps, accountants=("moments", "rdp"))
print(f"target 1.26: moments z = {anchor['moments']:.3f}, RDP z = {anchor['rdp']:.3f}")

# %% [markdown]
# ## A last exercise: calibration by bisection
#
# **Exercise 5.3 — calibration by bisection.** Write `smallest_feasible(epsilon_of, target, lo, hi, rtol)`: the
# accountant's ε is non-increasing in z, `epsilon_of(lo) > target` and `epsilon_of(hi) <= target`. Bisect until
# `hi - lo <= rtol * hi` and return a z with `epsilon_of(z) <= target` that is within `rtol` of the smallest
# such z. Which end of the bracket must you return, and why not the midpoint?

# %% exercise=5.3
def smallest_feasible(epsilon_of, target, lo, hi, rtol):
    ### BEGIN SOLUTION
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        if epsilon_of(mid) <= target:
            hi = mid          # mid meets the target: the answer is at most mid
        else:
            lo = mid
    return hi                 # hi always meets the target; lo and the midpoint may not
    ### END SOLUTION

# %% check=5.3
checks.check_smallest_feasible(smallest_feasible)
