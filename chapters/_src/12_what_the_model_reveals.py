# %% [markdown]
# # Chapter 12 — What the released model reveals
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. say what composition assumes about the adversary, and why a deployed model is only the **last iterate**;
# > 2. derive the privacy of the last iterate for a **linear** loss — a binomial mixture of Gaussians against one
# >    Gaussian — and compute its δ(ε) exactly;
# > 3. explain why that pair is a **heuristic**, not a guarantee, for other losses (a non-convex counterexample);
# > 4. state a **proven** last-iterate bound for projected noisy gradient descent on a convex smooth loss, check
# >    its conditions, and find where it stops growing with the number of steps;
# > 5. audit a model from its final parameters alone, and read the audit beside the three upper bounds.
#
# *Prerequisites:* chapter 9. *Time:* about 70 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 35 s in fast mode (`DPEDU_FAST=1`), 113 s in full mode.
#
# Every accountant of chapters 3 to 5 charges a training run as if the adversary saw **every** intermediate model
# $\theta_1, \dots, \theta_T$: composition adds the privacy loss of each step. A deployed model is only $\theta_T$.
# Does hiding the trajectory help? For convex training, a great deal — provably. For a linear loss there is an
# exact answer. For a non-convex loss, not necessarily: there are losses for which $\theta_T$ reveals the whole
# trajectory. This chapter computes all three on the same axes and checks them with an audit that sees only
# $\theta_T$. Set `DPEDU_FAST=1` for a quick run: fewer audit runs and values of T, same code.

# %% [markdown]
# *Uses:* [`LinearLastIterateEvent`](dpedu.ground.events_last_iterate.LinearLastIterateEvent) ·
# [`linear_last_iterate_epsilon`](dpedu.accountants.last_iterate.linear_last_iterate_epsilon) ·
# [`projected_step`](dpedu.textbook.learners.projected.projected_step) ·
# [`convex_last_iterate_bound`](dpedu.accountants.convex_last_iterate.convex_last_iterate_bound) ·
# [`last_iterate_audit`](dpedu.lab.audit.last_iterate.last_iterate_audit) (see the API reference).
# *Notes:* [§28](../docs/math.md#28-what-the-released-model-reveals-the-last-iterate) in the mathematical notes.

# %%
import math
import textwrap

import matplotlib.pyplot as plt
import numpy as np

import dpedu as dp
from dpedu.course import checks
from dpedu.course.notebook import fast_mode, pick, show_source
from dpedu.accountants import LinearLastIterateEvent, SubsampledGaussianEvent, account, compare
from dpedu.accountants.last_iterate import linear_last_iterate_delta, linear_last_iterate_epsilon
from dpedu.accountants.convex_last_iterate import convex_last_iterate_bound, last_iterate_claim
from dpedu.textbook.learners import ProjectedStep, run_projected
from dpedu.lab.plotting import plot_last_iterate
from dpedu.lab.audit.data import make_audit_data
from dpedu.lab.audit.last_iterate import last_iterate_audit, last_iterate_bounds

FAST = fast_mode()
DELTA = 1e-5
RUNS = pick(300, 40)   # trainings per world in the audit: the only thing fast mode shrinks, with T
print("fast mode" if FAST else "full mode",
      f"- {RUNS} trainings with and {RUNS} without the canary")

# %% [markdown]
# ## The linear-loss pair in a few lines
#
# Take a loss that is linear in the parameters, $\ell_i(\theta) = \langle g_i, \theta\rangle$ with
# $\lVert g_i\rVert \le C$. Clipping leaves a constant gradient constant, so DP-SGD with Poisson rate $q$, noise
# multiplier $z$ and a constant learning rate $\eta$ ends at
#
# $$\theta_T = \theta_0 - \frac{\eta}{qn}\Big(\sum_{t=1}^T \sum_{i \in B_t} g_i + \mathcal N(0, z^2C^2T\,I)\Big).$$
#
# The other records' terms have the same law with or without the canary $x$, so only one thing differs: the
# canary adds $K g_x$, where $K$ counts the steps it was sampled in, $K \sim \mathrm{Bin}(T, q)$. Along $g_x$ and in
# units of $C$ (the worst case $\lVert g_x\rVert = C$), the model trained with the canary against the one without is
#
# $$P = \mathrm{Bin}(T, q) + \mathcal N(0, z^2T) \qquad\text{against}\qquad Q = \mathcal N(0, z^2T).$$
#
# That is the pair of Steinke et al. (ICLR 2025, "The Last Iterate Advantage"). It is an **event** in dpedu,
# accounted by the PLD accountant in both directions (every other accountant refuses it by name), and its
# $\delta(\varepsilon)$ has an exact form, a finite sum of normal tails, which you write now.
#
# **Exercise 12.1 — the linear-loss pair's δ(ε).** Write `last_iterate_delta(epsilon, z, q, T)`:
# $\delta(\varepsilon) = \int (P(x) - e^{\varepsilon}Q(x))_+\,dx$ for $P = \mathrm{Bin}(T, q) + \mathcal N(0, z^2T)$ and
# $Q = \mathcal N(0, z^2T)$. The log-likelihood ratio $L(x) = \ln\sum_k b_k e^{(2kx - k^2)/(2z^2T)}$, with
# $b_k = \binom{T}{k}q^k(1 - q)^{T-k}$, increases in x, so the region is $x > x^\ast$ with $L(x^\ast) = \varepsilon$:
# find $x^\ast$ (`scipy.optimize.brentq`) and add up normal tails. For example
# `last_iterate_delta(0.5, 1.0, 0.05, 40)` → `0.014844` and `last_iterate_delta(0.4, 1.0, 0.01, 100)` → `1.34e-05`.

# %% exercise=12.1
from scipy import optimize, special, stats

def last_iterate_delta(epsilon, z, q, T):
    ### BEGIN SOLUTION
    sigma = z * math.sqrt(T)
    k = np.arange(T + 1)
    log_b = stats.binom.logpmf(k, T, q)

    def loss(x):
        return special.logsumexp(log_b + (2 * k * x - k * k) / (2 * sigma ** 2))

    x = optimize.brentq(lambda x: loss(x) - epsilon, -20 * sigma, T + 20 * sigma)
    return float(np.sum(np.exp(log_b) * stats.norm.sf((x - k) / sigma))
                 - math.exp(epsilon) * stats.norm.sf(x / sigma))
    ### END SOLUTION

# %% check=12.1
checks.check_last_iterate_delta(last_iterate_delta)

# %% [markdown]
# *dpedu's version* is `linear_last_iterate_delta`. It computes your direction, P against Q (dpedu calls it
# *remove*: Q is the model trained without the canary), and the other one, Q against P (*add*), and reports the
# larger; `linear_last_iterate_epsilon` inverts it. At your two examples:

# %%
for epsilon, z, q, T in ((0.5, 1.0, 0.05, 40), (0.4, 1.0, 0.01, 100)):
    remove, add = (linear_last_iterate_delta(epsilon, noise_multiplier=z, sampling_rate=q, steps=T,
                                             direction=direction)
                   for direction in ("remove", "add"))
    print(f"epsilon = {epsilon}, z = {z}, q = {q}, T = {T}: remove {remove:.3g}, add {add:.3g}")

# %% [markdown]
# The remove direction is the larger in both. At $T = 100$ its δ at $\varepsilon = 0.4$ is just above $10^{-5}$,
# so the ε at $\delta = 10^{-5}$ is a little above 0.4. With $z = 1$ and $q = 0.01$, that ε exactly, the PLD
# accountant's on the same event, and composition's:

# %%
rows = []
for T in (100, 1000):
    exact = linear_last_iterate_epsilon(DELTA, noise_multiplier=1.0, sampling_rate=0.01, steps=T)
    pld = account([(LinearLastIterateEvent(1.0, 0.01, T), 1)], "pld", delta=DELTA)
    composition = account([(SubsampledGaussianEvent(1.0, 0.01), T)], "pld", delta=DELTA).epsilon
    rows.append((T, exact, pld.epsilon, composition))
print(f"{'T':>6} {'last iterate (exact)':>21} {'PLD accountant':>15} {'composition':>12}")
for T, exact, pld_epsilon, composition in rows:
    print(f"{T:>6} {exact:>21.4f} {pld_epsilon:>15.4f} {composition:>12.4f}")
print("\n" + textwrap.fill("the accountant's note: " + pld.note, 100))

# %% [markdown]
# The last iterate costs 0.41 after 100 steps and 1.28 after 1000, where composition charges 0.72 and 1.83: a
# real discount, from hiding *when* the canary was used. But it still grows with T (the canary's total push
# $qT$ grows faster than the noise's $z\sqrt T$), and with a full batch ($q = 1$) it is exactly composition: then
# $K = T$ is known and nothing is hidden.
#
# ## A heuristic, not a guarantee
#
# Steinke et al. propose the linear pair as a **heuristic** for any loss, and test it against audits. It is not a
# theorem. For a non-convex loss the last iterate can hold the whole trajectory: give the model one coordinate that
# counts the steps (every record moves it by the same amount) and make the canary's gradient at step $t$ point
# along the $t$-th of $T$ further coordinates that no other record uses — the loss reads the counter to choose
# the direction, which no convex loss can do. Then $\theta_T$ holds every step's noisy canary coordinate
# separately, the adversary sees the trajectory, and the privacy of $\theta_T$ is composition: 0.72 and 1.83 in
# the table above, not 0.41 and 1.28. Annamalai (2024, "It's Our Loss: No Privacy Amplification for Hidden State
# DP-SGD With Non-Convex Loss") constructs such a loss and measures its final iterate's leakage at the
# composition bound; Cebere, Bellet & Papernot (2024) find the same with gradients crafted at every step; Steinke
# et al. give their own counterexamples. So dpedu labels every last-iterate number of this kind "exact for linear
# losses, a heuristic otherwise". For a *guarantee* we need conditions on the loss.
#
# ## A proven bound for convex training
#
# Logistic regression on rows clipped to norm $C$ is convex, $C$-Lipschitz and $C^2/4$-smooth. Add the regulariser
# $\frac\lambda2\lVert\theta\rVert^2$ and project every iterate onto a ball of radius $R$:
#
# $$\theta \leftarrow \Pi_R\Big(\theta - \eta\Big(\tfrac{1}{qn}\big(\textstyle\sum_{i\in B}\mathrm{L2\_clip}(\nabla\ell_i, C)
#   + \mathcal N(0, z^2C^2I)\big) + \lambda\theta\Big)\Big).$$
#
# It is the DP-SGD step of chapter 4, then the regulariser, then the projection: dpedu injects it into the one
# training loop as `step=`, it does not write a new loop.

# %%
show_source(ProjectedStep)

# %% [markdown]
# Why privacy stops growing: if $\eta(\lambda + bC^2/(4qn)) \le 2$ for every batch the run can draw, each gradient
# step is a contraction, so two runs that differ in one record drift apart by at most one step's gradient
# difference per step, while the projection keeps them within the diameter $D = 2R$. Whatever the record did more
# than about $D$ worth of steps ago is washed out by the noise added since. Bok, Su & Altschuler (ICML 2024) make
# this exact for the full batch: in units of one step's noise, with $d = 2R\,qn/(\eta zC)$ and $s = 1/z$, the last
# iterate is $\mu$-GDP with
#
# $$\mu(T)^2 = \min\Big(T s^2,\ \min_{1 \le j < T} \frac{(d + js)^2}{j}\Big) \quad (\lambda = 0),$$
#
# the composition of the T steps or the best window of the last $j$ steps (math notes §28.5; with $\lambda > 0$ the
# steps contract and the window shrinks further; with Poisson sampling the noise is split between the two jobs,
# §28.6).

# %% [markdown]
# **Exercise 12.2 — where the proven bound flattens.** With $\lambda = 0$ the full-batch bound is
# $\mu(T)^2 = \min(Ts^2, \min_{1\le j<T}(d + js)^2/j)$. Write `flat_from(d, s)`: the first T from which $\mu(T)$
# no longer grows ($\mu(T') = \mu(T)$ for every $T' \ge T$). For example `flat_from(2.5, 0.1)` → `100`. The
# full-batch run of the figure below ($n = 100$ records, $z = 1$, $C = 1$, learning rate $\eta = 4$, $R = 0.06$) has
# $d = 0.12 \cdot 100/4 = 3$ and $s = 1$, and `flat_from(3.0, 1.0)` → `12`: its proven bound is flat from 12 steps
# on.

# %% exercise=12.2
def flat_from(d, s):
    ### BEGIN SOLUTION
    plateau = min((d + j * s) ** 2 / j for j in range(1, int(4 * d / s) + 3))
    T = 1
    while min([T * s * s] + [(d + j * s) ** 2 / j for j in range(1, T)]) < plateau * (1 - 1e-12):
        T += 1
    return T
    ### END SOLUTION

# %% check=12.2
checks.check_flat_from(flat_from)

# %% [markdown]
# *dpedu's version* is `convex_last_iterate_bound`: for the run it is given it computes $d$, $s$ and the best window,
# and reports $\mu(T)$ and the ε of that μ-GDP at δ (or composition's, when smaller). The figure's run, around its
# 12th step:

# %%
settings = dict(noise_multiplier=1.0, sampling_rate=1.0, learning_rate=4.0, radius=0.06)
for T in range(10, 15):
    claim = convex_last_iterate_bound(steps=T, clip_norm=1.0, dataset_size=100, delta=DELTA,
                                      **settings)
    print(f"T = {T}: mu = {claim.mu:.4f} (window: the last {claim.window} steps), "
          f"epsilon = {claim.epsilon:.3f}")

# %% [markdown]
# It also checks every condition of the theorem before it reports a number, and says which. `last_iterate_claim`
# asks it about a run that happened, projected noisy GD on Adult:

# %%
adult = dp.datasets.load_adult()
X, y = adult.X_train[: pick(30_162, 2_000)], adult.y_train[: pick(30_162, 2_000)]
plan = dp.training.plan_dp_sgd(len(X), noise_multiplier=20.0, clip_norm=1.0, sampling_rate=1.0,
                               steps=pick(200, 20), learning_rate=4.0, clip_mode="inputs",
                               loss_every=10**6)
run = run_projected(X, y, plan, radius=6.0, l2=5e-3, rng=0)
accuracy = np.mean(np.where(adult.X_test @ run.theta >= 0, 1, -1) == adult.y_test)
print(f"projected noisy GD on {len(X)} Adult rows, T = {plan.steps}: "
      f"test accuracy {accuracy:.3f}\n")
print(last_iterate_claim(run, DELTA))
print()
print(compare(run, DELTA, accountants=("rdp", "pld")))

# %% [markdown]
# A learning rate that is too large, a network instead of a convex model, or clipped gradients instead of clipped
# rows, and the claim is refused by name: no number is reported for a run the theorem does not cover.
#
# ## The plateau, on the same axes as everything else
#
# The figure puts composition, the linear-loss pair and the proven bound against T for a small full-batch run,
# and an **audit that sees only** $\theta_T$: trainings with and without a canary in a feature nobody else uses,
# the canary's margin as the score, a threshold chosen on half the runs and Clopper–Pearson bounds on the other
# half's error rates (chapter 9). The canary is a *gradient canary*: its gradient is a fixed vector of norm C,
# a linear loss, the worst case of the pair above and covered by the convex theorem.

# %%
# alt: Epsilon against the number of steps, log-log: composition and the linear-loss last iterate climb together
#   (full batch), the proven last-iterate bound flattens from about a dozen steps on, and the audit's points stay
#   below all three.
X_audit, y_audit = make_audit_data(n=99, d=3, rng=0)
X_audit = 0.01 * X_audit         # the other records barely move the model: the canary stands out
checkpoints = pick((1, 3, 10, 30, 100), (1, 5, 20))
grid = pick((1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 1000), (1, 3, 10, 30, 100, 1000))
curves = last_iterate_bounds(grid, dataset_size=100, delta=DELTA, **settings)
audit = last_iterate_audit(X_audit, y_audit, steps=checkpoints, runs=RUNS, rng=2025, **settings)
print(audit)
ax = plot_last_iterate(grid, *curves, delta=DELTA,
                       audits={"gradient canary": (audit.steps, audit.epsilon_lower)},
                       title="full batch: z = 1, learning rate 4, R = 0.06")
plt.show()

# %% [markdown]
# Composition climbs like $\sqrt T$ forever; the proven bound stops at about $4d/s$ steps (12 here, as Exercise
# 12.2 found) and stays there; the audit, which only ever sees the final model, stays below both — as it must. The
# gap between the audit and the proven bound is partly the audit's (a few hundred runs cannot show an
# $\varepsilon$ of 20 at $\delta = 10^{-5}$) and partly the bound's (it is tight for quadratic losses, not for this
# one).
#
# ## What it buys on Adult
#
# Charged by the proven bound instead of composition, the same run needs less noise for the same total
# $\varepsilon$. Projected, L2-regularised logistic regression on Adult (noisy GD, $T = 200$ steps), its settings
# chosen by private selection (chapter 7, the selection inside the total $\varepsilon$): the noise each charge
# allows at a total $\varepsilon$ of 1 and 3, and the test accuracy of the model each releases
# (`benchmarks/bench_last_iterate_accuracy.py` runs ten seeds of this and DP-SGD too).

# %%
from dpedu.textbook.datasets import load_adult
from dpedu.lab.experiments.last_iterate import select_and_test, selection_noise

X_adult, y_adult, X_adult_test, y_adult_test = load_adult()
configs = tuple({"learning_rate": lr, "radius": r} for lr in (4.0, 6.0) for r in (6.0, 10.0))
n_selection = len(X_adult) - round(0.2 * len(X_adult))      # 20 % of the rows score the settings
seeds = pick(1, 5)
buys = {}
for target in (1.0, 3.0):
    for how in ("composition", "last_iterate"):
        z = selection_noise(target, accounting=how, configs=configs, steps=200, sampling_rate=1.0,
                            dataset_size=n_selection, l2=5e-3, mean_trials=2.0)[0]
        accuracy = [select_and_test(X_adult, y_adult, X_adult_test, y_adult_test,
                                    noise_multiplier=z, configs=configs, steps=200,
                                    sampling_rate=1.0, l2=5e-3, mean_trials=2.0, rng=seed)[0]
                    for seed in range(seeds)]
        buys[target, how] = (z, np.nanmean(accuracy))
        print(f"total epsilon {target:g}, charged by {how:12s}: z = {z:5.1f}, "
              f"test accuracy {np.nanmean(accuracy):.4f} ({seeds} seed{'s' * (seeds > 1)})")

# %% [markdown]
# The proven bound cuts the noise by a quarter to a third at the same total $\varepsilon$, and the accuracy does not
# move: with $\lambda = 5\cdot 10^{-3}$ the regularised model's own accuracy is the ceiling, and both noises are
# already small for 24,000 records. The bound buys accuracy where the noise is what limits it: fewer records, a
# smaller $\varepsilon$, or a longer run, since composition grows with $T$ and the bound does not.

# %% [markdown]
# ## Summary
#
# * Composition charges for every intermediate model; a deployed model is one, $\theta_T$.
# * For a linear loss $\theta_T$ is exactly the pair $\mathrm{Bin}(T, q) + \mathcal N(0, z^2T)$ against
#   $\mathcal N(0, z^2T)$: cheaper than composition, still growing with T. For other losses it is a heuristic, and a
#   non-convex loss can make $\theta_T$ leak as much as the whole trajectory.
# * For a convex smooth loss, a small enough step and a projection, a theorem bounds $\theta_T$ and the bound
#   stops growing: dpedu checks every condition before it reports the number, and records them with it.
# * An audit of $\theta_T$ alone stays below all of them; on Adult the proven bound lets the same total ε pay for
#   less noise.
