# %% [markdown]
# # Chapter 8 — What ε means: trade-off curves, Gaussian DP and a privacy statement
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. read a guarantee as a floor under an attacker's errors: the **trade-off curve** $\beta(\alpha)$ of the
# >    test "was this example in the training data?";
# > 2. turn one $(\varepsilon, \delta)$ pair, and a whole privacy profile $\delta(\varepsilon)$, into that curve;
# > 3. draw the curves of one run under every accountant, and read the attacker's best true-positive rate at a
# >    false-positive rate of 1 %;
# > 4. summarise a run by one number, $\mu$-Gaussian DP, certified rather than approximated by the central limit
# >    theorem;
# > 5. put audits on the same axes, and recognise a proven violation;
# > 6. state what a run guarantees the way a careful paper does, including groups of examples.
#
# *Prerequisites:* chapter 5. *Time:* about 80 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 27 s in fast mode (`DPEDU_FAST=1`), 41 s in full mode.
#
# Chapters 3 to 6 computed $\varepsilon$ with ever tighter accountants. Before chapter 9 attacks the code, this
# chapter asks what the number means. Differential privacy is a statement about **every** attack, and the
# cleanest way to see it is the game behind the definition (Wasserman & Zhou 2010; Kairouz, Oh & Viswanath 2015;
# Dong, Roth & Su 2022).

# %% [markdown]
# *Uses:* [`tradeoff_curve`](dpedu.accountants.tradeoff.tradeoff_curve) ·
# [`gaussian_tradeoff`](dpedu.accountants.tradeoff.gaussian_tradeoff) ·
# [`certified_mu`](dpedu.accountants.gdp.certified_mu) · [`clt_mu`](dpedu.accountants.gdp.clt_mu) ·
# [`audit_region`](dpedu.lab.audit.regions.audit_region) ·
# [`plot_tradeoff`](dpedu.lab.plotting.tradeoff.plot_tradeoff) ·
# [`privacy_statement`](dpedu.lab.statement.privacy_statement) (see the API reference).
# *Notes:* [§21](../docs/math.md#21-what-ε-means-trade-off-curves-and-gaussian-dp) in the mathematical notes.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

from dpedu.lab import audit

from dpedu.course import checks
from dpedu.accountants import (ACCOUNTANT_NAMES, GaussianEvent, SubsampledGaussianEvent,
                               make_accountant)
from dpedu.accountants.gdp import certified_mu, clt_mu, group_mu
from dpedu.accountants.tradeoff import (epsilon_delta_tradeoff, gaussian_curve,
                                        pld_tradeoff_bracket, tradeoff_curve)
from dpedu.lab.audit.regions import audit_region, result_ledger
from dpedu.ground.gaussian import gaussian_epsilon_exact
from dpedu.course.notebook import fast_mode, pick
from dpedu.lab.plotting.tradeoff import plot_tradeoff
from dpedu.lab.statement import privacy_statement

FAST = fast_mode()
# trainings per world in each audit: the only thing fast mode shrinks
RUNS = pick(1000, 200)
DELTA = 1e-5
ABADI = [(SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01), 10_000)]   # 100 epochs
print("fast mode" if FAST else "full mode", f"- {RUNS} runs per world in each audit")


def tradeoff_panels(curves, *, audits=(), title=None):
    """The trade-off view over the ROC view, each with a legend naming its lines;
    the figure fits a laptop screen."""
    fig, (upper, lower) = plt.subplots(2, 1, figsize=(7.0, 8.4))
    top = plot_tradeoff(curves, audits=audits, kind="tradeoff", ax=upper, title=title, legend=False)
    plot_tradeoff(curves, audits=audits, kind="roc", ax=lower, annotate=False, legend=False)
    # each panel names its lines, in its empty corner:
    # above the curves (trade-off), below the diagonal (ROC)
    upper.legend(loc="center right" if top.violations else "upper right", fontsize=9)
    lower.legend(loc="lower right", fontsize=9)
    fig.tight_layout()
    return (upper, lower), top.violations

# %% [markdown]
# ## The testing game
#
# An attacker sees the output of a training run (here: every noisy update) and must say whether it came from
# $D$ or from $D'$, the same data with one more example. Any rule it uses has two error rates:
#
# * the **false-positive rate** $\alpha$ (FPR): it says "in" although the example was out;
# * the **false-negative rate** $\beta$ (FNR): it says "out" although the example was in. Its true-positive
#   rate is $1 - \beta$.
#
# A mechanism is $(\varepsilon, \delta)$-DP if and only if every rule satisfies
# $\alpha + e^{\varepsilon}\beta \ge 1 - \delta$ and $\beta + e^{\varepsilon}\alpha \ge 1 - \delta$
# ([notes §21.1](../docs/math.md#211-the-hypothesis-testing-reading-of-dp)). The best rule at each $\alpha$ has the smallest $\beta$; as a function of $\alpha$ this is
# the **trade-off curve** $f(\alpha)$, and a mechanism is $f$-DP when no rule gets below it (§21.2).
#
# Take the simplest mechanism, one Gaussian release with $\mu = 1/z$: the attacker sees $\mathcal N(0, 1)$
# without the example and $\mathcal N(\mu, 1)$ with it. The best rule thresholds the output, and its curve is
# $G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)$. You write it first. (Each exercise of this chapter comes where
# its subject does, before dpedu computes the same thing; you may use `numpy`, `scipy` and `math`, not `dpedu`.)
# At $\mu = 1$:
# `gaussian_beta(0.01, 1.0)` → `0.9076`, `gaussian_beta(0.1, 1.0)` → `0.6109`, `gaussian_beta(0.5, 1.0)` → `0.1587`.
#
# **Exercise 8.1 — the Gaussian curve.** Write `gaussian_beta(alpha, mu)` returning the smallest FNR of any test
# at FPR $\alpha$ when the attacker must tell $\mathcal N(0, 1)$ from $\mathcal N(\mu, 1)$:
# $G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)$ (`scipy.stats.norm.cdf` and `.ppf`).

# %% exercise=8.1
from scipy.stats import norm   # norm.cdf is Phi, norm.ppf its inverse


def gaussian_beta(alpha, mu):
    ### BEGIN SOLUTION
    return float(norm.cdf(norm.ppf(1.0 - alpha) - mu))
    ### END SOLUTION

# %% check=8.1
checks.check_gaussian_tradeoff(gaussian_beta)

# %% [markdown]
# Let us play the game 200,000 times and compare, with the rules whose FPR is about 1 %, 10 % and 50 %.

# %%
rng = np.random.default_rng(0)
mu = 1.0
out_world = rng.normal(0.0, 1.0, 200_000)          # without the example
in_world = rng.normal(mu, 1.0, 200_000)            # with it
thresholds = np.quantile(out_world, [0.99, 0.9, 0.5])   # rules "in if the output exceeds t"
for t in thresholds:
    fpr, fnr = np.mean(out_world > t), np.mean(in_world <= t)
    print(f"threshold {t:5.2f}: FPR {fpr:.3f}  FNR {fnr:.3f}")

# %% [markdown]
# The measured FNR sits on the curve (the three values above): at an FPR of 1 % the attacker misses about 91 % of the members (its TPR is
# about 9 %). No rule, however clever, does better, because the threshold rule is the Neyman–Pearson test.
#
# ## From $(\varepsilon, \delta)$ to a curve
#
# One pair $(\varepsilon, \delta)$ is exactly the two lines of the game, and its curve is what they leave to the
# attacker: the smallest β each allows at FPR α. You find it first.
#
# **Exercise 8.2 — one pair, one curve.** Write `pair_beta(alpha, epsilon, delta)`: the trade-off curve of one
# $(\varepsilon, \delta)$ guarantee at FPR $\alpha$. Start from the two inequalities of the testing game and solve
# each for $\beta$. Why do you need both?

# %% exercise=8.2
def pair_beta(alpha, epsilon, delta):
    ### BEGIN SOLUTION
    # from alpha + e^eps beta >= 1 - delta ... solved
    steep = 1.0 - delta - math.exp(epsilon) * alpha
    # ... and from beta + e^eps alpha >= 1 - delta
    flat = math.exp(-epsilon) * (1.0 - delta - alpha)
    return max(0.0, steep, flat)
    ### END SOLUTION

# %% check=8.2
checks.check_epsilon_delta_tradeoff(pair_beta)

# %% [markdown]
# The curve of one pair is
# $f_{\varepsilon,\delta}(\alpha) = \max(0,\ 1-\delta-e^{\varepsilon}\alpha,\ e^{-\varepsilon}(1-\delta-\alpha))$,
# a broken line (Dong, Roth & Su 2022, Prop. 2.5; [notes §21.3](../docs/math.md#213-from-ε-δ-to-a-trade-off-curve)). An accountant gives more than one pair: a
# $\delta(\varepsilon)$ for every $\varepsilon$. Every pair is a floor, so the curve of the run is the highest of
# them, $f(\alpha) = \sup_{\varepsilon} f_{\varepsilon, \delta(\varepsilon)}(\alpha)$ (Prop. 2.12). Below: the
# Gaussian with $\mu = 1$, three of its pairs, and the curve they build.

# %%
# alt: Trade-off curves, false-negative rate against false-positive rate: the Gaussian G_1 and (epsilon, delta)-DP at
#   several epsilons, with the diagonal of perfect privacy.
alphas = np.linspace(0.0, 1.0, 401)
fig, ax = plt.subplots(figsize=(6.5, 5.0))
ax.plot(alphas, gaussian_curve(1.0, alphas=alphas).beta, color="black", linewidth=2.5,
        label=r"$G_1$ (exact)")
for eps in (0.25, 1.0, 2.5):
    d = make_accountant("pld").compose(GaussianEvent(1.0)).get_delta(eps)
    ax.plot(alphas, epsilon_delta_tradeoff(alphas, eps, d), linestyle="--",
            label=rf"$f_{{\varepsilon,\delta}}$ at $\varepsilon = {eps}$, $\delta = {d:.3f}$")
ax.plot(alphas, 1 - alphas, color="#BBBBBB", linestyle=":", label="perfect privacy (guessing)")
ax.set(xlabel=r"false-positive rate $\alpha$", ylabel=r"false-negative rate $\beta$",
       xlim=(0, 1), ylim=(0, 1))
ax.legend(fontsize=9)
plt.show()

# %% [markdown]
# Each broken line touches the curve at one point and lies below it elsewhere; the upper envelope of all of them
# is the curve. dpedu takes the envelope over a grid of about 600 values of $\varepsilon$: a finite grid can only
# make the curve lower, so what is drawn is still a valid floor, never an overstatement ([notes §21.3](../docs/math.md#213-from-ε-δ-to-a-trade-off-curve)).
#
# ## Abadi et al.'s run under every accountant
#
# Now the run of chapter 5: $q = 0.01$, $z = 4$, $T = 10{,}000$ steps (100 epochs). Every accountant's
# $\delta(\varepsilon)$ becomes a curve. Advanced and strong composition are slow to evaluate at one
# $\varepsilon$ (each optimises a split of $\delta$), so they get a coarser grid, which again only lowers them.

# %%
coarse = np.concatenate([np.linspace(0.05, 4.0, 40), np.linspace(4.5, 30.0, 20)])
curves = {name: tradeoff_curve(ABADI, name,
                               epsilons=coarse if name in ("advanced", "strong") else None)
          for name in ACCOUNTANT_NAMES}
pld_low, pld_high = pld_tradeoff_bracket(ABADI)
abadi_mu = certified_mu(ABADI)
gdp = gaussian_curve(abadi_mu, label=f"GDP, certified mu = {abadi_mu:.3f}")


def read_tpr(curve, fpr):
    """1 - beta of the curve as drawn, at an FPR of its grid (0.01 and 0.001 are grid points)."""
    return 1.0 - curve.beta[np.flatnonzero(curve.alpha == fpr)[0]]


print(f"{'accountant':<11} {'epsilon at 1e-5':>15}   best TPR at FPR 1%   best TPR at FPR 0.1%")
for name, curve in curves.items():
    if not curve.applies:
        print(f"{name:<11} {'n/a':>15}   {curve.notes[0][:60]}...")
        continue
    eps = make_accountant(name).compose(*ABADI[0]).get_epsilon(DELTA)
    print(f"{name:<11} {eps:15.3f}   {read_tpr(curve, 0.01):18.4f}   "
          f"{read_tpr(curve, 0.001):20.5f}")
print(f"{'GDP':<11} {gaussian_epsilon_exact(DELTA, 1 / abadi_mu):15.3f}   "
      f"{read_tpr(gdp, 0.01):18.4f}   {read_tpr(gdp, 0.001):20.5f}")
bracket_tpr = (read_tpr(pld_high, 0.01), read_tpr(pld_low, 0.01))
print("PLD bracket at FPR 1%: "
      f"the best TPR lies between {bracket_tpr[0]:.6f} and {bracket_tpr[1]:.6f}")

# %% [markdown]
# Read the PLD line: at an FPR of 1 % no attack finds more than about 1.9 % of the members, barely above the 1 %
# that guessing gets. The RDP and moments accountants allow a little more (2.1 % and 2.7 %), and the composition
# theorems allow far more: advanced and strong composition (the same valid recipe here, so their curves coincide)
# allow 29 %, and sequential composition's $\varepsilon \approx 223$ bounds nothing an attacker would care about
# (its best TPR is 1). zCDP has no theorem for subsampling, so it gives no curve. The PLD's own bracket
# (pessimistic and optimistic discretisation) is narrower than $10^{-4}$ in TPR.
#
# The picture: the linear view on top, and below it the ROC view on log axes, where the attacks that matter, at
# small FPR, are visible.

# %%
# alt: Trade-off curves of Abadi et al.'s run (q = 0.01, z = 4, T = 10,000) under every accountant, in two panels,
#   each with a legend naming its lines.
axes, _ = tradeoff_panels(list(curves.values()) + [pld_high, gdp],
                          title="Abadi et al.'s run: q = 0.01, z = 4, T = 10,000")
plt.show()

# %% [markdown]
# ## One number: Gaussian DP
#
# The PLD curve and $G_\mu$ with $\mu = 0.256$ are indistinguishable (best TPR 1.91 % against 1.92 %). A mechanism is **$\mu$-GDP** when its curve
# lies above $G_\mu$ (Dong, Roth & Su 2022; [notes §21.4](../docs/math.md#214-gaussian-dp)). Gaussian DP composes by adding $\mu^2$, its
# $\delta(\varepsilon)$ is known in closed form, and groups of $k$ examples get $k\mu$. For full-batch Gaussian
# steps it is exact: $\mu = \sqrt{T}/z$. For subsampled steps, two ways to get a $\mu$:
#
# * the **central limit theorem** of Bu, Dong, Long & Su (2020): $\mu_{\mathrm{CLT}} = q\sqrt{T(e^{1/z^2}-1)}$,
#   the limit as $T \to \infty$ with $q\sqrt{T}$ fixed. A limit is **not a bound**;
# * a **certified** $\mu$: the smallest $\mu$ such that the PLD's pessimistic $\delta(\varepsilon)$ lies below
#   $\delta_\mu(\varepsilon) = \Phi(-\varepsilon/\mu + \mu/2) - e^{\varepsilon}\Phi(-\varepsilon/\mu - \mu/2)$ at
#   every $\varepsilon$, checked between grid points too, up to a slack of $10^{-10}$ (§21.4).

# %%
settings = [(4.0, 0.01, 10_000), (1.1, 0.01, 10_000), (0.8, 0.01, 100), (1.1, 0.1, 100)]
print(f"{'z':>4} {'q':>5} {'T':>6} | {'mu CLT':>7} {'mu certified':>12} | "
      f"eps(1e-5): {'CLT':>6} {'PLD':>6}")
gdp_rows = {}
for z, q, steps in settings:
    ledger = [(SubsampledGaussianEvent(z, q), steps)]
    clt, cert = clt_mu(z, q, steps), certified_mu(ledger)
    eps_pld = make_accountant("pld").compose(*ledger[0]).get_epsilon(DELTA)
    gdp_rows[(z, q, steps)] = (clt, cert, gaussian_epsilon_exact(DELTA, 1 / clt), eps_pld)
    print(f"{z:4g} {q:5g} {steps:6} | {clt:7.3f} {cert:12.3f} | "
          f"{gdp_rows[(z, q, steps)][2]:17.3f} {eps_pld:6.3f}")

# %% [markdown]
# At Abadi et al.'s setting the CLT is excellent (0.254 against 0.256). With a hundred steps of a low-noise
# mechanism it is not: at $z = 0.8$, $q = 0.01$, $T = 100$ it says $\mu = 0.19$ and $\varepsilon = 0.70$, while the
# PLD puts the run at $\varepsilon = 1.51$ (and its optimistic lower bound is just as high). The CLT under-reports exactly where its conditions (many steps,
# a sampled example's loss small) fail; `benchmarks/bench_gdp.py` measures this on 30 settings. Use it for
# intuition, and the certified $\mu$ for a claim.
#
# ## Audits on the same axes
#
# An audit (chapter 9 builds one step by step) trains a model many times with and without one example, the
# *canary*, and measures how well one attack tells the two apart. On the trade-off plane an audit is a **point**
# $(\alpha, \beta)$ of a real attack, and its Clopper–Pearson bounds make it a box. Every accountant's curve is a
# floor under every attack, so a correct run puts its box on or above every valid curve. If the whole box lies
# **below** a curve (its upper-right corner does), the attack beats the floor with the audit's confidence: the
# curve is wrong, a **proven violation** ([notes §21.8](../docs/math.md#218-audits-on-the-trade-off-plane)). A white-box audit with the Gaussian bound gives a
# curve instead: the run lies below $G_{\mu_{\mathrm{lb}}}$.
#
# Auditing Abadi et al.'s run would need thousands of trainings of 10,000 steps each, and its curve is so close
# to the diagonal that no audit box could get below it. So audit a run that leaks more: full-batch DP-SGD with
# $z = 1$ and $T = 4$ steps ($\mu = 2$ exactly), black-box with a canary and white-box from every update.

# %%
# alt: Trade-off curves of full-batch DP-SGD with z = 1 and T = 4 under every accountant, with the boxes of a canary
#   audit and a white-box audit.
X, y = audit.make_audit_data(n=50, d=2, rng=0)
canary = audit.make_canary(X, y)
small = [(GaussianEvent(1.0), 4)]
black = audit.canary_audit(
    audit.dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4), X, y, canary,
    runs=RUNS, delta=DELTA, rng=1)
white = audit.whitebox_audit(
    audit.observed_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4), X, y, canary,
    runs=RUNS, delta=DELTA, rng=2)
regions = [audit_region(black, "canary audit"), audit_region(white, "white-box audit")]
small_curves = [tradeoff_curve(small, name) for name in ("moments", "rdp", "zcdp", "pld")]
axes, small_violations = tradeoff_panels(
    small_curves + [gaussian_curve(2.0)], audits=regions,
    title="full-batch DP-SGD, z = 1, T = 4 (mu = 2): correct code")
plt.show()
print(f"canary audit: FPR {black.fpr:.3f}, FNR {black.fnr:.3f} "
      f"(upper bounds {black.fpr_upper:.3f}, {black.fnr_upper:.3f}); "
      f"white-box: mu >= {white.mu_lower:.3f} (true mu = 2)")
print("proven violations:", small_violations or "none")

# %% [markdown]
# The canary box is not below the curves: its upper-right corner, the audit's own bound, lies above all of them
# (the box reaches below them, which proves nothing). The white-box bound $\mu_{\mathrm{lb}}$ is just below the
# true $\mu = 2$, so its curve runs just above $G_2$. Correct code, no violation. Now one of the planted bugs
# chapter 9 hunts, `noise_reused`, which adds the same noise vector at every step and claims the ledger of correct
# DP-SGD.

# %%
# alt: Trade-off curves claimed for the planted bug 'noise_reused', with the audit's box and curve against them.
bug = audit.bug_hunt("noise_reused", runs=RUNS, rng=0)
claimed = result_ledger(bug)
bug_curves = [tradeoff_curve(claimed, name) for name in ("moments", "rdp", "pld")]
bug_mu = certified_mu(claimed)
axes, bug_violations = tradeoff_panels(
    bug_curves + [gaussian_curve(bug_mu)], audits=[audit_region(bug, "white-box audit")],
    title="planted bug 'noise_reused' (claims z = 5, q = 0.5, T = 8)")
plt.show()
print("claimed ledger:", claimed)
print(f"certified mu = {bug_mu:.3f}; "
      f"the claimed PLD curve at FPR 10%: FNR >= {1 - read_tpr(bug_curves[2], 0.1):.2f}")
print("proven violations:", bug_violations)

# %% [markdown]
# The bug's box hugs the origin: the attack almost never errs, while the curves of the *claimed* run demand, at an
# FPR of 10 %, an FNR of at least 0.8. Every curve is violated. This is the verdict chapter 9's audits
# print as "AUDIT FAILED" for one $\varepsilon$, here for every $\varepsilon$ of the curve at once.
#
# ## Groups and people
#
# The unit of privacy in DP-SGD is **one example**. A person who contributed $k$ examples is protected as a group
# of $k$: $\mu$-GDP becomes $k\mu$-GDP (Dong, Roth & Su 2022, Thm 2.14; [notes §21.6](../docs/math.md#216-group-privacy)), tight for Gaussian
# releases, since $k$ examples move the clipped sum by up to $kC$.

# %%
for k in (1, 2, 5, 10):
    k_mu = group_mu(abadi_mu, k)
    print(f"k = {k:2}: {k_mu:.3f}-GDP, "
          f"epsilon {gaussian_epsilon_exact(DELTA, 1 / k_mu):6.3f} at delta = {DELTA:g}, "
          f"best TPR at FPR 1% {read_tpr(gaussian_curve(k_mu), 0.01):.3f}")

# %% [markdown]
# Ten examples per person turn a run with $\varepsilon \approx 0.95$ into one with $\varepsilon \approx 14$ for
# that person. If your data has users with many rows, account per user, not per row.
#
# ## A privacy statement
#
# A number without its conditions is not a guarantee. Ponomareva et al. (2023, §5) list what a paper should
# report; `privacy_statement` writes it out for a run, with every number computed by the accountants above.

# %%
statement = privacy_statement(ABADI, delta=DELTA, n=60_000, clip_norm=4.0)
print(statement)

# %% [markdown]
# Three things in it deserve a second look. The guarantee covers **every intermediate model**: the accountants
# assume the attacker sees all 10,000 noisy updates, so releasing checkpoints costs nothing extra. It holds for
# **Poisson** batches only: the shuffled fixed-size batches most training loops use are a different algorithm,
# and no accountant here covers them (chapter 4). And it says nothing about the **tuning** that picked $z$, $C$
# and the learning rate: trying many configurations on the same data and keeping the best is itself a release
# (chapter 7).
#
# ## A last exercise: the attacker's best TPR
#
# **Exercise 8.3 — the attacker's best TPR.** An accountant hands you its privacy profile: arrays `epsilons` and
# `deltas` with the run $(\varepsilon_j, \delta_j)$-DP for every $j$. Write `best_tpr(epsilons, deltas, fpr)`: the
# largest true-positive rate any attack can have at false-positive rate `fpr`. For one pair,
# `best_tpr([1.0], [0.0], 0.01)` → `0.0272`; for two, `best_tpr([1.0, 2.0], [1e-3, 1e-5], 0.01)` → `0.0282` (the
# pair that allows the larger TPR is the one that counts). Then try it on the PLD accountant's
# profile of Abadi et al.'s run (`make_accountant("pld")`, `get_delta` on a grid of epsilons): do you find the
# 1.9 % of the table above? Why can a coarser grid of epsilons only give a larger TPR?

# %% exercise=8.3
def best_tpr(epsilons, deltas, fpr):
    ### BEGIN SOLUTION
    floors = [max(0.0, 1.0 - d - math.exp(e) * fpr, math.exp(-e) * (1.0 - d - fpr))
              for e, d in zip(epsilons, deltas)]
    return 1.0 - max(floors)
    ### END SOLUTION

# %% check=8.3
checks.check_best_tpr(best_tpr)
