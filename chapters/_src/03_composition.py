# %% [markdown]
# # Chapter 3 — Composition: what a whole training run costs
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. state sequential composition and the advanced composition theorem of Dwork, Rothblum & Vadhan, and say
# >    when the second one actually helps;
# > 2. explain why every extra iteration of a private training loop costs privacy, and why the ε of *one*
# >    iteration is not the privacy of the model;
# > 3. account the book's noisy gradient descent with sequential composition, zCDP and Rényi DP, using one
# >    ledger of events and `dpedu.accountants`;
# > 4. read a plot of **total** ε against the number of iterations, one curve per accountant.
#
# *Prerequisites:* chapter 2. *Time:* about 90 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 8 s in fast mode (`DPEDU_FAST=1`), 9 s in full mode.
#
# Chapter 2 ended with a run of 10 noisy iterations, each $(0.1, 10^{-5})$-DP, and a noisy count. The people in the
# training data are protected by the guarantee of the *whole run*: the model is computed from all the
# iterations together. This chapter is about adding those guarantees up — and about adding them up well.

# %% [markdown]
# *Uses:* [`advanced_composition`](dpedu.accountants.advanced.advanced_composition) ·
# [`zcdp_epsilon`](dpedu.accountants.zcdp.zcdp_epsilon) · [`make_accountant`](dpedu.accountants.make_accountant) ·
# [`compare`](dpedu.accountants.compare) · [`noise_multiplier`](dpedu.accountants.calibrate.noise_multiplier) (see the API
# reference).
# *Notes:* [§9](../docs/math.md#9-sequential-and-parallel-composition) · [§10](../docs/math.md#10-advanced-composition) in the mathematical notes.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import dpedu as dp
from dpedu.lab import plotting
from dpedu.course import checks
from dpedu.course.notebook import fast_mode, pick, show_source
from dpedu.accountants import (EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, compare,
                               make_accountant, zcdp)
from dpedu.accountants.advanced import (advanced_composition, advanced_composition_bound,
                                        advanced_composition_simplified)
from dpedu.textbook.models import logistic

FAST = fast_mode()
print("fast mode" if FAST else "full mode")

# %%
X_train, y_train, X_test, y_test = dp.datasets.load_adult()
n, d = X_train.shape
print(f"{n} training rows, {d} features")

# %% [markdown]
# ## Sequential composition
#
# If mechanisms $M_1, \dots, M_k$ are $(\varepsilon_i, \delta_i)$-DP and run one after the other on the same data — even when each
# is chosen after seeing the outputs of the previous ones (*adaptively*, as in gradient descent, where step t
# depends on $\theta_{t-1}$) — then together they are
#
# $$\Bigl(\sum_i \varepsilon_i,\ \sum_i \delta_i\Bigr)\text{-DP}.$$
#
# (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, Thm 3.16.) For pure ε-DP this is tight in the
# worst case: an adversary can really learn k times as much from k answers.
#
# The book's noisy gradient descent makes $k = 10$ Gaussian releases, each $(0.1, 10^{-5})$-DP, plus one 0.1-DP
# Laplace count. What is its total? You compute it first. (In this chapter, as in chapter 1, an exercise comes
# where its subject does, before dpedu computes the same thing; you may use `numpy` and `math`, not `dpedu`.)
#
# **Exercise 3.1 — the book's total.** Write `book_total(iterations, epsilon_per_iteration, delta_per_iteration)`
# returning the pair (total ε, total δ) of the book's noisy gradient descent by sequential composition. Do
# not forget the noisy count.

# %% exercise=3.1
def book_total(iterations, epsilon_per_iteration, delta_per_iteration):
    ### BEGIN SOLUTION
    return (iterations + 1) * epsilon_per_iteration, iterations * delta_per_iteration
    ### END SOLUTION

# %% check=3.1
checks.check_book_total(book_total)

# %% [markdown]
# `noisy_gradient_descent` reports the same sequential total and, in `ledger`, *what happened* — events that any
# accountant can count:

# %%
book = dp.training.noisy_gradient_descent(X_train, y_train, 10, 0.1, 1e-5, rng=0)
for event, count in book.ledger:            # each event with its numbers to 4 significant digits
    fields = ", ".join(f"{name}={value:.4g}" if isinstance(value, float) else f"{name}={value!r}"
                       for name, value in vars(event).items())
    print(f"ledger: {count} x {type(event).__name__}({fields})")
print(f"per iteration: ({book.epsilon_per_iteration}, {book.delta_per_iteration:g})-DP")
print(f"whole run, sequential composition: ({book.epsilon:.3g}, {book.delta:.3g})-DP")
print(f"test accuracy: {logistic.accuracy(book.theta, X_test, y_test):.4f}")

# %% [markdown]
# The same total from an accountant. If we only know that each iteration is *some* $(0.1, 10^{-5})$-DP release, the
# right event is `EpsilonDeltaEvent(0.1, 1e-5)`, and the sequential accountant adds up:

# %%
seq = (make_accountant("sequential").compose(EpsilonDeltaEvent(0.1, 1e-5), 10)
       .compose(LaplaceEvent(0.1)))
total = seq.breakdown(delta=1e-4)
print(f"sequential accountant: ({total.epsilon:.3g}, {total.delta:.3g})-DP")

# %% [markdown]
# ## Why many iterations cost so much
#
# Under sequential composition the total ε grows **linearly** in the number of iterations. Turn it around: to
# keep a fixed *total* budget, each of k iterations may only spend ε/(k+1), so its noise multiplier
# $z = \sqrt{2 \ln(1.25/\delta)}/\varepsilon_{\text{iteration}}$ grows linearly in k too. `budget_split="total"` asks `noisy_gradient_descent` for
# exactly that split; the noise standard deviation on the gradient sum ($z \cdot C$ with $C = 5$) is in `details`:

# %%
print("iterations k   per-iteration epsilon   noise multiplier z   noise std z*C   test accuracy")
for k in pick([1, 3, 10, 30, 100], [1, 10, 100]):
    plan = dp.training.plan_noisy_gradient_descent(k, 1.1, 1e-4, budget_split="total")
    run = dp.training.run_noisy_gradient_descent(X_train, y_train, plan, rng=0)
    print(f"{k:12d}   {run.epsilon_per_iteration:21.4f}   {run.details.plan.noise_multiplier:18.1f}"
          f"   {run.details.plan.noise_std:13.0f}"
          f"   {logistic.accuracy(run.theta, X_test, y_test):13.4f}")

# %% [markdown]
# Every run above is $(1.1, 10^{-4})$-DP by sequential composition, and the noise on *each* gradient grows in
# proportion to k. Adult is large enough (a sum of 30 000 gradients is long) that a few more, noisier steps
# still help here; but the noise keeps growing with k and eventually wins — on a smaller dataset, or with the
# thousands of steps a neural network needs, much sooner. The theorems below charge far less for many noisy steps, and that is what
# makes long private training (DP-SGD, chapter 4) possible at all.
#
# A warning about reporting. The ε of one iteration — 0.1 in the book — is **not** the privacy of the
# model. Always report the total, after composition, with the accountant and δ used.
#
# ## Advanced composition
#
# Dwork, Rothblum & Vadhan (2010) showed that k adaptive (ε, δ)-DP mechanisms are, for every δ′ > 0,
#
# $$\Bigl(\varepsilon\sqrt{2k\ln(1/\delta')} + k\,\varepsilon\,(e^{\varepsilon} - 1),\ \ k\delta + \delta'\Bigr)\text{-DP}$$
#
# (Dwork & Roth 2014, Thm 3.20). The first term grows only like $\sqrt{k}$: the privacy losses of independent
# steps (chapter 5 defines them) partly cancel, like the steps of a random walk, and δ′ is the small probability
# that they do not. The
# second term is the *drift*, the expected loss of each step; it is about $k\varepsilon^2$ for small ε. You write
# this pair in Exercise 3.2; dpedu's `advanced_composition` returns it too.
#
# **Exercise 3.2 — advanced composition.** Write `advanced_composition_theorem(epsilon, delta, k, delta_prime)`
# returning (ε′, total δ) of the Dwork–Rothblum–Vadhan theorem for k mechanisms that are each (ε, δ)-DP. Use
# the theorem's drift term, not the simplified form. (`math.expm1(x)` computes $e^x - 1$ accurately.)

# %% exercise=3.2
def advanced_composition_theorem(epsilon, delta, k, delta_prime):
    ### BEGIN SOLUTION
    eps_prime = (epsilon * math.sqrt(2 * k * math.log(1 / delta_prime))
                 + k * epsilon * math.expm1(epsilon))
    return eps_prime, k * delta + delta_prime
    ### END SOLUTION

# %% check=3.2
checks.check_advanced_composition(advanced_composition_theorem)

# %% [markdown]
# Is it always better than sequential composition? Not at all: with $\varepsilon = 1$ the drift alone is
# $k(e - 1) > k$, so the theorem charges *more* than the $k$ of sequential composition. It wins only for small ε
# and many steps; Exercise 3.4, at the end of the chapter, turns the theorem around, and the numbers follow it.

# %% [markdown]
# ## Beyond (ε, δ): zCDP and Rényi DP
#
# Both theorems above only know that each step is "some (ε, δ)-DP mechanism". But our steps are *Gaussian*,
# and for the Gaussian we can do much better by tracking a whole curve instead of one pair of numbers.
#
# * **Rényi DP** (Mironov 2017) measures the Rényi divergence between the output distributions on neighbours.
#   For two distributions P and Q (densities p and q) and an order $\alpha > 1$ it is
#   $D_\alpha(P\,\|\,Q) = \frac{1}{\alpha-1}\ln \mathbb E_{x\sim Q}\big[(p(x)/q(x))^\alpha\big]$: the likelihood ratio
#   an attacker would compute, raised to the power α and averaged, so the larger α, the more weight on the
#   outcomes where P and Q differ most. A mechanism M is $(\alpha, \varepsilon_{\mathrm{RDP}}(\alpha))$-RDP if
#   $D_\alpha(M(D)\,\|\,M(D')) \le \varepsilon_{\mathrm{RDP}}(\alpha)$ for all neighbours D, D′
#   ([§13.1](../docs/math.md#131-definition)), and an accountant keeps the whole curve
#   $\alpha \mapsto \varepsilon_{\mathrm{RDP}}(\alpha)$. A Gaussian with noise multiplier z has
#   $\varepsilon_{\mathrm{RDP}}(\alpha) = \alpha/(2z^2)$. Curves
#   **add** under composition, order by order. At the end, convert once:
#   $\varepsilon = \min_\alpha [ \varepsilon_{\mathrm{RDP}}(\alpha) + \ln(1/\delta)/(\alpha - 1) ]$ (the book's classic conversion; dpedu's default is a slightly
#   tighter one, Balle et al. 2020).
# * **zCDP** (Bun & Steinke 2016) keeps a single number ρ with $D_\alpha \le \rho\alpha$ for all α: the Gaussian is
#   $\rho = 1/(2z^2)$-zCDP, a pure ε-DP mechanism (our Laplace count) is $\varepsilon^2/2$-zCDP, the ρ's add, and
#   $\varepsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}$.
#
# Why this helps: the noise multiplier of each step enters as $1/z^2$, so T steps cost about $\sqrt{T}$ in ε after the
# conversion, *with no drift term*. And δ appears only once, at the end, instead of once per step.
#
# **Exercise 3.3 — zCDP.** Write `zcdp_epsilon(noise_multiplier, steps, delta)`: the ε at which `steps`
# full-batch Gaussian releases with noise multiplier z are DP, by zCDP and the conversion
# $\varepsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}$.

# %% exercise=3.3
def zcdp_epsilon(noise_multiplier, steps, delta):
    ### BEGIN SOLUTION
    rho = steps / (2 * noise_multiplier**2)
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))
    ### END SOLUTION

# %% check=3.3
checks.check_zcdp_epsilon(zcdp_epsilon)

# %% [markdown]
# *Compare with dpedu's version* (the module `zcdp` holds it, so it is not shadowed by your function):

# %%
show_source(zcdp.zcdp_epsilon)

# %% [markdown]
# One ledger, every accountant. `compare` accounts the book's run every way at the same total $\delta = 10^{-5}$ (the
# book's own accounting spends $\delta = 10^{-4}$). The sequential and advanced *accountants* do better than 1.1:
# for each Gaussian step they compute the exact $(\varepsilon_0, \delta_0)$ of the Gaussian (Balle & Wang 2018) for a $\delta_0$ they
# choose, instead of taking the classic $(0.1, 10^{-5})$. The moments accountant is chapter 5's subject, so we
# leave it out here.

# %%
accountants = ("sequential", "advanced", "zcdp", "rdp", "pld")
table = compare(book, delta=1e-5, accountants=accountants)
print(f"the book, sequential composition: {book.epsilon:.3f} at delta = {book.delta:g}\n")
print(table)
rdp_classic = make_accountant("rdp", conversion="classic")
for event, count in book.ledger:
    rdp_classic.compose(event, count)
print(f"\nrdp with the book's classic conversion: {rdp_classic.get_epsilon(1e-5):.4f}")

# %% [markdown]
# Same model, same noise, same people protected — and a total ε of about 0.33 by RDP instead of 1.1. The
# accountant does not change the algorithm, only how tightly we *prove* its guarantee. (**PLD**, the privacy-loss
# distribution of chapter 5, computes the tightest ε for this ledger up to discretisation, and sits just below RDP.)
#
# ## Total ε against the number of iterations
#
# Now let the book's run go on for more iterations, each with the same noise (z for $(0.1, 10^{-5})$), plus the
# one Laplace count. The figure shows the **total** ε of the run at $\delta = 10^{-5}$ for each accountant, and, in
# grey, the book's $(k + 1)\cdot 0.1$, whose $\delta = k\cdot 10^{-5}$ grows with k. Both axes are logarithmic: the slope of a
# line is the power of k.

# %%
# alt: Total epsilon of the book's noisy gradient descent against the number of iterations k, one line per way of
#   composing, named in the legend.
z_book = book.details.plan.noise_multiplier
ks = np.array(pick([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000], [1, 10, 100, 1000]))
curves = {"book": (ks + 1) * 0.1}
for name in accountants:
    curves[name] = [make_accountant(name).compose(GaussianEvent(z_book), int(k))
                    .compose(LaplaceEvent(0.1)).get_epsilon(1e-5) for k in ks]
labels = {"book": r"book: $(k+1)\cdot 0.1$, at $\delta = k\cdot 10^{-5}$",
          "sequential": "sequential composition", "advanced": "advanced composition",
          "zcdp": "zCDP", "rdp": "RDP", "pld": "PLD"}
ax = plotting.plot_epsilon_vs_epochs(ks, curves, delta=1e-5, labels=labels)
ax.lines[0].set(color="gray", linestyle="--", marker="o")
ax.legend(fontsize="small")
ax.set_xscale("log")
ax.set_xlabel("number of noisy iterations k (full batch: one iteration = one epoch)")
ax.set_title(f"The book's noisy gradient descent: z = {z_book:.1f} per step, plus one 0.1-DP count")
plt.show()
last = {name: float(np.asarray(values)[ks == 1000][0]) for name, values in curves.items()}
print("total epsilon after k = 1000 iterations:")
print("  " + ", ".join(f"{name} {eps:.1f}" for name, eps in last.items()))
for name in ("sequential", "rdp"):
    slope = np.polyfit(np.log(ks[-3:]), np.log(np.asarray(curves[name])[-3:]), 1)[0]
    print(f"{labels[name]:>22}: total epsilon grows like k^{slope:.2f} for large k")

# %% [markdown]
# Read it from the right. After 1000 iterations sequential composition certifies $\varepsilon \approx 100$ — no meaningful
# guarantee — while RDP, zCDP and PLD certify a few units: their ε grows like $\sqrt{k}$, not k. At $k = 1$ sequential
# composition is *better* than RDP: the RDP-to-(ε, δ) conversion has a price that only pays off over many
# steps. No single accountant is best everywhere; a safe habit is to compute several and report the tightest
# valid one — with its name.
#
# The same point from the other side: for a fixed total budget $(\varepsilon, \delta) = (1, 10^{-5})$, how much noise must each of
# k full-batch Gaussian steps carry? `dpedu.accountants.calibrate.noise_multiplier` searches for the smallest z each
# accountant accepts (the Laplace count left out):

# %%
print("    k   z (sequential)   z (RDP)   z (zCDP)   ratio sequential / RDP")
for k in pick([1, 10, 100, 1000], [1, 100]):
    zs = [dp.calibrate.noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sampling_rate=1.0,
                                        steps=k, accountant=name)
          for name in ("sequential", "rdp", "zcdp")]
    print(f"{k:5d}   {zs[0]:14.1f}   {zs[1]:7.1f}   {zs[2]:8.1f}   {zs[0] / zs[1]:22.1f}")

# %% [markdown]
# With sequential composition z grows like k, with RDP like $\sqrt{k}$: at $k = 100$ RDP already needs about 9 times
# less noise on every gradient for the same guarantee, and the ratio keeps growing like $\sqrt{k}$.
#
# ## A last exercise: splitting a budget
#
# **Exercise 3.4 — splitting a budget.** Write `per_iteration_epsilon(total_epsilon, k, delta_prime)`: the
# *largest* per-iteration ε such that k iterations (each (ε, 0)-DP) cost at most `total_epsilon` by advanced
# composition with slack δ′. There is no closed form: the composed ε increases with ε, so find it by
# bisection (you may call your `advanced_composition_theorem`). Return the end of the bracket that satisfies
# the budget, and make the bracket small (the check wants 0.1 % precision).

# %% exercise=3.4
def per_iteration_epsilon(total_epsilon, k, delta_prime):
    ### BEGIN SOLUTION
    # at eps = total_epsilon, k >= 1 steps already cost at least total_epsilon
    lo, hi = 0.0, total_epsilon
    while hi - lo > 1e-12 * total_epsilon:
        mid = (lo + hi) / 2
        if advanced_composition_theorem(mid, 0.0, k, delta_prime)[0] <= total_epsilon:
            lo = mid
        else:
            hi = mid
    return lo
    ### END SOLUTION

# %% check=3.4
checks.check_per_iteration_epsilon(per_iteration_epsilon)

# %% [markdown]
# ## Advanced composition in numbers
#
# *Compare with dpedu's version* of Exercise 3.2, which is what its advanced accountant runs. It composes
# releases of different ε too, with the heterogeneous form of the theorem (Kairouz, Oh & Viswanath 2015,
# Thm 3.5): it needs only two sums over the releases, $\sum_i \varepsilon_i^2$ and
# $\sum_i \varepsilon_i(e^{\varepsilon_i} - 1)$, which for k equal releases are $k\varepsilon^2$ and
# $k\varepsilon(e^\varepsilon - 1)$, the formula of Exercise 3.2:

# %%
show_source(advanced_composition_bound)

# %% [markdown]
# The book's example, $k = 500$ steps of $\varepsilon = 1$, gives more than the 500 of sequential composition.
# The book's plot uses a *simplified* form, $2\varepsilon\sqrt{2k\ln(1/\delta')}$, which drops the drift; it is
# only valid for small ε and under-reports badly here.

# %%
eps_adv, delta_adv = advanced_composition(epsilon=1.0, delta=0.0, k=500, delta_prime=1e-5)
print(f"k = 500, epsilon = 1: sequential 500, advanced ({eps_adv:.2f}, {delta_adv:g}), "
      f"simplified form {advanced_composition_simplified(epsilon=1.0, k=500, delta_prime=1e-5):.2f}"
      " (not a bound)")

# %% [markdown]
# For small ε and large k it wins. Where exactly? Advanced beats sequential when
# $\sqrt{2 \ln(1/\delta')/k} + (e^\varepsilon - 1) < 1$. For $\varepsilon = 0.1$ and $\delta' = 10^{-5}$ that needs more than about 29 steps — so for
# the book's 10 iterations sequential composition is still the better of the two:

# %%
print("    k   sequential k*eps   advanced (delta' = 1e-5)")
for k in (10, 30, 100, 1000, 10_000):
    print(f"{k:5d}   {k * 0.1:16.1f}   {advanced_composition(0.1, 0.0, k, 1e-5)[0]:24.2f}")
