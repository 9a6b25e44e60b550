# %% [markdown]
# # Chapter 7 — The effect of noise
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. compute how much noise DP-SGD puts into each averaged gradient, $zC/(qn)$, and say why a large dataset
# >    makes private learning easier;
# > 2. read a privacy–utility curve: test accuracy against the **total** ε of the run, with its spread over
# >    seeds and the non-private ceiling;
# > 3. explain why training longer at the same ε means more noise in every step, and why the best number of
# >    epochs depends on the budget;
# > 4. choose the clip norm C together with the noise: the more noise, the smaller the best C;
# > 5. compare every method of this course in one figure, and account for the privacy cost of tuning itself:
# >    the free ride, composition, or private selection;
# > 6. let the clip norm follow a quantile of the gradient norms privately (adaptive clipping).
#
# *Prerequisites:* chapter 4. *Time:* about 130 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 41 s in fast mode (`DPEDU_FAST=1`), 2.5 min in full mode.
#
# Until now we asked *how much privacy* a run spends. This chapter asks what the noise that buys it costs in
# accuracy. All experiments train DP-SGD logistic regression (`DPLogisticRegression`, chapter 4) on Adult,
# repeat every run over several seeds, and report the **total** ε of each run (after composition over all
# its steps), at $\delta = 10^{-5}$. Set `DPEDU_FAST=1` for a quick run: smaller grids and fewer seeds, same code.

# %% [markdown]
# *Uses:* [`run_tradeoff`](dpedu.lab.experiments.run_tradeoff) ·
# [`run_epochs_tradeoff`](dpedu.lab.experiments.run_epochs_tradeoff) ·
# [`run_clipping_noise_grid`](dpedu.lab.experiments.run_clipping_noise_grid) ·
# [`plot_accuracy_vs_epsilon`](dpedu.lab.plotting.plot_accuracy_vs_epsilon) ·
# [`noise_multiplier`](dpedu.accountants.calibrate.noise_multiplier) ·
# [`tuning_cost`](dpedu.lab.experiments.tuning_costs.tuning_cost) · [`affordable_noise`](dpedu.lab.experiments.tuning_costs.affordable_noise) ·
# [`PrivateHyperparameterSearch`](dpedu.lab.tuning.PrivateHyperparameterSearch) ·
# [`plot_adaptive_clipping`](dpedu.lab.plotting.plot_adaptive_clipping) (see the API reference).
# *Notes:* [§8](../docs/math.md#8-dp-sgd-abadi-et-al-2016-algorithm-1) · [§17](../docs/math.md#17-calibration-by-bisection) ·
# [§23](../docs/math.md#23-private-selection-tuning-that-pays-for-itself) ·
# [§24](../docs/math.md#24-adaptive-clipping) in the mathematical notes.

# %%
import math
import warnings

import matplotlib.pyplot as plt
import numpy as np

import dpedu as dp
from dpedu.lab import plotting
from dpedu.course import checks
from dpedu.lab import experiments
from dpedu.course.notebook import fast_mode, pick, progress_bar, show_source
from dpedu.accountants import (LaplaceEvent, OrderGridEdgeWarning, RepeatAndSelectEvent,
                               SubsampledGaussianEvent, account, make_accountant)
from dpedu.lab.estimator import TUNED_DEFAULTS

FAST = fast_mode()
print("fast mode" if FAST else "full mode")

# %%
data = dp.datasets.load_adult()
X_train, y_train, X_test, y_test = data
n = len(X_train)
DELTA = 1e-5
SEEDS = pick(5, 2)
print(f"{n} training rows; delta = {DELTA:g} < 1/n = {1 / n:.1e}; {SEEDS} seeds per setting")

# %% [markdown]
# ## Where the noise goes
#
# One DP-SGD step (chapter 4) releases the sum of the clipped per-example gradients plus $\mathcal N(0, (zC)^2 I)$, and divides
# by the *expected* batch size $qn$. So the averaged gradient carries noise of standard deviation
#
# $$\sigma_{\text{avg}} = \frac{z\,C}{q\,n}\quad\text{in every coordinate},$$
#
# while the signal — the mean of clipped gradients — has norm at most C. Three things follow:
#
# * **more data helps**: for a fixed q and z, the noise on the average shrinks like $1/n$. Privacy is easier on
#   large datasets — the price is paid per person, and each person matters less;
# * **C cancels out of the signal-to-noise ratio** only if every gradient is clipped; otherwise a larger C
#   adds noise without adding signal (section "Clipping against noise");
# * **z is set by the budget**: a smaller ε, or more steps at the same ε, needs a larger z.
#
# `DPLogisticRegression` calibrates z for us: it asks the RDP accountant for the smallest z whose whole run
# ($T = \text{epochs}/q$ steps) stays within the target ε. Its defaults (`dpedu.lab.estimator.TUNED_DEFAULTS`) run 64 epochs,
# up to 6,400 steps. They were chosen **non-privately**: per ε, the configuration with the best exact accuracy on
# a validation split of Adult's *training* data, with no noise in that choice and no ε charged for it. An accuracy
# obtained with them is therefore the accuracy of one run at its ε, *without* the cost of tuning (section "The
# price of tuning" below shows what paying for it costs). This chapter trains many models, so it
# uses one cheaper configuration throughout — 32 epochs at $q = 0.05$ (640 steps, expected batch 1508 rows), $C = 0.5$,
# learning rate 16. It is also what `python -m dpedu tradeoff` runs by default (its `--epochs`, `--sampling-rate`,
# `--clip-norm` and `--learning-rate`), which is why that command reports a lower accuracy at $\varepsilon = 1$ than the
# README quotes for the estimator's tuned defaults. The cell after the next compares the two at $\varepsilon = 1$.

# %%
q, C, epochs, learning_rate = 0.05, 0.5, 32, 16.0
print("tuned defaults (chosen non-privately; no epsilon includes their tuning):",
      *TUNED_DEFAULTS, sep="\n  ")
steps = experiments.steps_from_epochs(epochs, q)
print(f"q = {q}, C = {C}, {epochs} epochs = {steps} steps, expected batch q n = {q * n:.0f}")
print("\n  total epsilon   noise multiplier z")
zs_by_epsilon = {eps: dp.calibrate.noise_multiplier(target_epsilon=eps, target_delta=DELTA,
                                                    sampling_rate=q, steps=steps)
                 for eps in (0.01, 0.1, 1.0, 10.0)}
for eps, z in zs_by_epsilon.items():
    print(f"  {eps:13g}   {z:18.2f}")
print(f"z at epsilon = 0.01 is {zs_by_epsilon[0.01] / zs_by_epsilon[10.0]:.0f} "
      "times z at epsilon = 10")

# %% [markdown]
# With q, C and n fixed, the noise on the averaged gradient is proportional to z. Exercise 7.1 asks for its
# standard deviation; for example `noise_std_of_average(1.0, 0.5, 0.05, 32561)` → `0.000307` ($z = 1$ with this
# chapter's q, C and n) and `noise_std_of_average(4.0, 1.0, 0.01, 60000)` → `0.00667`. At $\varepsilon = 10$ the averaged
# gradient is almost exact; at $\varepsilon = 0.01$ its noise is several hundred times larger (the ratio of the two z
# printed above).
#
# The two configurations at $\varepsilon = 1$, one seed each (the tuned one runs ten times as many, smaller steps):

# %%
tuned = dp.DPLogisticRegression(epsilon=1.0, delta=DELTA, random_state=0).fit(X_train, y_train)
cheap = dp.DPLogisticRegression(epsilon=1.0, delta=DELTA, epochs=epochs, sampling_rate=q,
                                clip_norm=C, learning_rate=learning_rate,
                                random_state=0).fit(X_train, y_train)
for name, clf in (("tuned defaults (tuning not paid)", tuned),
                  ("this chapter's configuration", cheap)):
    print(f"{name}: test accuracy {clf.score(X_test, y_test):.4f}\n"
          f"  q = {clf.sampling_rate_:.4g}, {clf.epochs_} epochs = {clf.steps_} steps, "
          f"C = {clf.clip_norm_}, learning rate {clf.learning_rate_}")

# %% [markdown]
# The cheaper configuration gives up less than a point at $\varepsilon = 1$, for a tenth of the steps.
#
# ## Accuracy against the total ε
#
# `experiments.run_tradeoff` trains one model per (ε, seed). Every seed is a different random sampling and
# noise, and seed j is the same stream at every ε, so the differences *between* ε values are not seed noise.

# %%
# alt: Test accuracy of DP-SGD on Adult against the total epsilon, 32 epochs, with non-private logistic regression as
#   a horizontal line.
epsilon_grid = pick([0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0], [0.03, 0.3, 3.0])
dpsgd = experiments.run_tradeoff(data, epsilons=epsilon_grid, seeds=SEEDS, delta=DELTA,
                                 epochs=epochs, sampling_rate=q, clip_norm=C,
                                 learning_rate=learning_rate, progress=progress_bar("DP-SGD"))
print("  target eps   certified eps       z   test accuracy (mean ± std over seeds)")
for eps, achieved, z, accs in zip(dpsgd.epsilons, dpsgd.achieved_epsilons, dpsgd.noise_multipliers,
                                  dpsgd.accuracies):
    print(f"  {eps:10g}   {achieved:13.4f}  {z:6.2f}   {accs.mean():.4f} ± {accs.std():.4f}")
print(f"  non-private (scikit-learn, no penalty): {dpsgd.baseline:.4f}")
majority_floor = np.mean(y_test == -1)
seed_std = np.array([accs.std() for accs in dpsgd.accuracies])
print(f'  always predicting "<= 50K" (the majority-class floor): {majority_floor:.4f}')
print(f"  spread over seeds (std): {seed_std[0]:.4f} at epsilon {dpsgd.epsilons[0]:g}, "
      f"{seed_std[-1]:.4f} at epsilon {dpsgd.epsilons[-1]:g}")

ax = plotting.plot_accuracy_vs_epsilon(dpsgd.epsilons, dpsgd.accuracies,
                                       baseline=dpsgd.baseline, delta=DELTA,
                                       baseline_label="non-private logistic regression",
                                       label="DP-SGD, 32 epochs, RDP-calibrated")
ax.set_title("Privacy against accuracy on Adult")
plt.show()

# %% [markdown]
# Read the curve from the right. Down to $\varepsilon \approx 0.3$ privacy is almost free: accuracy stays within a few tenths of
# a point of its value at the largest ε. The gap of about one point to the non-private model that remains even
# there ($z \approx 1$ at $\varepsilon = 10$) is not the privacy noise but clipping and a short training run with a fixed schedule.
# Below $\varepsilon \approx 0.1$ the noise takes over: accuracy falls towards the majority-class floor of 75.43 % (always
# predicting "≤ 50K", chapter 1) — on the full grid, at $\varepsilon = 0.01$, even below it: a model this noisy does worse
# than a constant — and the **spread over seeds grows** by more than an order of magnitude — at a
# small ε, *which* noise you drew matters, and a single run tells you little. Always report several seeds.
#
# The certified ε is at most the target, never above: calibration returns the safe end of its bisection.
#
# ## Iterations against noise
#
# Each step is one more release, so at a fixed total ε, more steps means a larger z for each one. How much
# larger? When the noise is large, the ε of the subsampled Gaussian grows roughly like $q\sqrt{T}/z$, so z must grow
# like $\sqrt{T}$: four times the epochs, twice the z. This is accounting only — no data touched:

# %%
print(" epochs   steps   z for eps = 1   z for eps = 0.05")
for e in (1, 4, 16, 64):
    t = experiments.steps_from_epochs(e, q)
    z1, z05 = (dp.calibrate.noise_multiplier(target_epsilon=eps, target_delta=DELTA,
                                             sampling_rate=q, steps=t)
               for eps in (1.0, 0.05))
    print(f"{e:7d} {t:7d} {z1:15.2f} {z05:18.2f}")

# %% [markdown]
# The right column follows $\sqrt{T}$ closely; at $\varepsilon = 1$ and few steps z grows more slowly. But T steps also add up T
# updates: the signal accumulates like T, and T independent noises of std $\propto \sqrt{T}$ accumulate like $\sqrt{T}\cdot\sqrt{T} = T$ as
# well. To first order it is a draw, so whether longer training helps is an empirical question — and the
# answer depends on the budget. We fix a tight budget, $\varepsilon = 0.05$, and vary the epochs (same learning-rate
# schedule for every run):

# %%
# alt: Test accuracy of DP-SGD on Adult against the number of epochs at a fixed total epsilon, with the noise
#   multiplier each run needed.
epoch_grid = pick([0.5, 1, 2, 4, 8, 16, 32, 64], [1, 4, 32])
tight = experiments.run_epochs_tradeoff(data, epsilon=0.05, epochs=epoch_grid, seeds=SEEDS,
                                        delta=DELTA, progress=progress_bar("epochs"))
ax = plotting.plot_accuracy_vs_epochs(tight.epochs, tight.accuracies,
                                      noise_multipliers=tight.noise_multipliers,
                                      epsilon=tight.epsilon, delta=DELTA, baseline=dpsgd.baseline)
plt.show()
best = tight.epochs[np.argmax(tight.accuracies.mean(axis=1))]
print(f"at epsilon = {tight.epsilon:g} the best of these is {best:g} epochs")

# %% [markdown]
# At $\varepsilon = 0.05$ accuracy first rises (a fraction of an epoch is too little training) and then falls: past a few
# epochs every extra step costs more in noise than it brings in progress. With a more generous budget the balance
# shifts towards more epochs (try $\varepsilon = 0.3$ with epochs up to 128): **the right number of epochs depends on ε**.
# The tuned defaults printed at the top were chosen at $\varepsilon = 0.1, 0.25, 0.5$ and 1 (a larger budget uses the $\varepsilon = 1$
# row), so at other budgets they are a compromise. Remember that choosing the epochs *by looking at the data's
# accuracy* is itself a use of the data (section "The price of tuning" and exercise 7.2).
#
# ## Clipping against noise
#
# The clip norm C does not enter the privacy accounting at all: ε depends only on (z, q, T). It is a pure
# utility knob, with two opposite effects:
#
# * a **small C** clips almost every gradient to the same length, which biases the update (a well-classified
#   example pulls as hard as a misclassified one);
# * a **large C** clips nothing, but the noise $zC$ grows with C while the gradients do not.
#
# `run_clipping_noise_grid` trains on a grid of (C, z). It scales the learning rate like $1/C$, so that a larger
# C does not simply mean a larger step (see its docstring):

# %%
show_source(experiments.run_clipping_noise_grid)

# %%
# alt: Test accuracy of DP-SGD on Adult against the clip norm C, one line per noise multiplier.
clip_grid = pick([0.03, 0.1, 0.3, 1.0, 3.0, 10.0], [0.03, 0.3, 3.0])
noise_grid = pick([1.0, 10.0, 40.0, 160.0], [1.0, 160.0])
grid = experiments.run_clipping_noise_grid(data, clip_norms=clip_grid, noise_multipliers=noise_grid,
                                           seeds=pick(2, 1),
                                           settings=experiments.GridSettings(delta=DELTA),
                                           progress=progress_bar("C x z"))
ax = plotting.plot_clipping_noise_tradeoff(grid.clip_norms, grid.noise_multipliers, grid.accuracies,
                                           epsilons=grid.epsilons, delta=DELTA,
                                           baseline=dpsgd.baseline)
ax.set_title(f"Clip norm against noise ({grid.params['epochs']} epochs, "
             f"q = {grid.params['sampling_rate']})")
plt.show()
for k, z in enumerate(grid.noise_multipliers):
    best_c = grid.clip_norms[np.argmax(grid.accuracies[:, k, :].mean(axis=1))]
    print(f"z = {z:5g} (total epsilon {grid.epsilons[k]:.3g}): best C on this grid = {best_c:g}")

# %% [markdown]
# With little noise ($z = 1$) a moderate C is best and a tiny C costs accuracy through bias. As z grows the
# optimum moves to **smaller C**: when the noise dominates, it pays to shrink every gradient to a small,
# equal length so that the same noise is a smaller share of the update. There is no C that is best for every
# budget, and — like the epochs — C must be chosen without peeking at private data, or paid for.
#
# ## The whole course in one figure
#
# Each chapter changed one thing; here they meet on one axis, all at $\delta = 10^{-5}$ and the same test set:
#
# * **chapter 2** — the book's noisy gradient descent (full batch, 10 iterations, classic Gaussian per step and a
#   noisy count), with its total ε as the book states it: sequential composition, $(k + 1)\varepsilon$ per iteration;
# * **chapter 3** — *the same runs*, accounted with RDP: identical accuracies, a smaller ε;
# * **chapters 4–5** — DP-SGD (Poisson subsampling, many small steps) calibrated with Abadi et al.'s moments
#   accountant, and with RDP (the curve from above).
#
# The moments accountant, with its integer orders up to 32, cannot certify anything below $\ln(10^5)/32 \approx 0.36$
# (chapter 5's floor), so its grid starts above that; its grid-edge warnings only say that its (valid) bound
# could be tighter. Where the moments and RDP curves coincide, the moments curve is drawn dashed *on top*.

# %%
# alt: Test accuracy against total epsilon for the course's private learners: noisy gradient descent accounted as in
#   the book and by RDP, and DP-SGD, beside the non-private line.
book = experiments.run_noisy_gd_tradeoff(
    data, epsilons_per_iteration=pick([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.9], [0.02, 0.1, 0.9]),
    iterations=10, delta_per_iteration=DELTA / 10, seeds=SEEDS,
    accountants=("rdp",), progress=progress_bar("noisy GD"))
with warnings.catch_warnings():
    warnings.simplefilter("ignore", OrderGridEdgeWarning)
    moments = experiments.run_tradeoff(data, epsilons=pick([0.5, 1.0, 3.0, 10.0], [1.0, 10.0]),
                                       seeds=SEEDS, delta=DELTA, accountant="moments",
                                       baseline=False, progress=progress_bar("DP-SGD, moments"))

fig, ax = plt.subplots(figsize=(7.3, 6.5), layout="constrained")
plotting.plot_accuracy_comparison([
    (book.total_epsilons["book"], book.accuracies,
     "ch. 2: noisy GD, sequential composition (as in the book)", dict(color="#000000", marker="s")),
    (book.total_epsilons["rdp"], book.accuracies,
     "ch. 3: the same noisy GD runs, RDP accounting", dict(color="#E69F00", marker="^")),
    (dpsgd.epsilons, dpsgd.accuracies,
     "ch. 4-5: DP-SGD, RDP accountant", dict(color="#009E73", marker="D")),
    (moments.epsilons, moments.accuracies, "ch. 4-5: DP-SGD, moments accountant (dashed, on top)",
     dict(color="#0072B2", marker="o", linestyle="--")),
], baseline=dpsgd.baseline, baseline_label="ch. 1: non-private", floor=majority_floor,
   floor_label=f'always "<= 50K": {majority_floor:.4f}', delta=DELTA, ax=ax,
   title="The privacy-utility trade-off of the whole course (Adult, logistic regression)")
plt.show()
shrink = np.asarray(book.total_epsilons["book"]) / np.asarray(book.total_epsilons["rdp"])
gd_mean, sgd_mean = book.accuracies.mean(axis=1), dpsgd.accuracies.mean(axis=1)
at_03 = sgd_mean[list(dpsgd.epsilons).index(0.3)]
print("the same noisy GD runs: the book's epsilon / RDP's epsilon = "
      f"{shrink.min():.2f} .. {shrink.max():.2f}")
print(f"DP-SGD at epsilon 0.3: {at_03:.4f}; "
      f"the best noisy GD mean at any epsilon of its grid: {gd_mean.max():.4f}")
print(f"ceilings: DP-SGD {sgd_mean.max():.4f}, noisy GD {gd_mean.max():.4f} "
      f"({100 * (sgd_mean.max() - gd_mean.max()):.1f} points);")
print(f"  non-private {dpsgd.baseline:.4f} "
      f"({100 * (dpsgd.baseline - sgd_mean[-1]):.1f} points above DP-SGD "
      f"at epsilon {dpsgd.epsilons[-1]:g})")

# %% [markdown]
# Three lessons in one picture:
#
# 1. **Accounting is free accuracy.** The black and orange curves are the *same models*; a tighter theorem moves
#    every point left, by a factor of 3 to 4.2 here (printed above). Chapter 3's accountants cost nothing but
#    mathematics.
# 2. **The algorithm matters more.** DP-SGD's many small, subsampled steps (amplification by sampling) are more
#    accurate at $\varepsilon = 0.3$ than the book's 10 full-batch steps at *any* ε of the grid, however those are counted,
#    and its ceiling is about 6 points higher, because 640 steps train the model much further than 10. (The book's
#    runs never get more than about 2 points above the majority-class floor, the dotted line.)
# 3. **The last point is the hardest.** Between DP-SGD at its largest ε and the non-private line there is still a
#    gap of about one point, and below $\varepsilon = 0.1$ the curve drops steeply. Moving it takes more data rather than
#    more cleverness: the noise on the average is $zC/(qn)$.
#
# One warning about this very figure: every curve was chosen after seeing test accuracy, and each point is a
# separate training run on the same people. A published model is covered by its own ε only if the choices
# that led to it were made without the private data — or were paid for, which is the next section.
#
# ## The price of tuning
#
# Every run above used settings (epochs, C, learning rate) that someone chose by training and scoring models.
# Choosing is a use of the data, and there are three ways to account for it
# ([§23](../docs/math.md#23-private-selection-tuning-that-pays-for-itself) of the notes):
#
# 1. **The free ride.** Choose the settings by looking at exact accuracies on the private data, then report
#    the ε of the final run only. This is how `TUNED_DEFAULTS` were made: no noise in the choice, no ε
#    for it. The chosen settings depend on the data, and no theorem bounds what that leaks, so the reported ε
#    is only honest if the settings came from *public* data (another data set, the literature).
# 2. **Composition.** Train all $k$ settings of a grid, score each on a private validation split by a noisy
#    count of correct predictions (Laplace noise of scale $1/\varepsilon_s$, sensitivity 1), keep the best. That
#    is $k$ trainings and $k$ scores, composed with RDP as in exercise 7.2.
# 3. **Private selection** (Papernot & Steinke 2022). Train a *random* number $K$ of times, each with a
#    setting drawn at random, and release only the best run; $K$, the other runs and their scores stay
#    secret. If one run (training and score) is $(\lambda, \varepsilon(\lambda))$-RDP and $K$ follows a truncated
#    negative binomial distribution of shape $\eta$ and parameter $\gamma$ ($\eta = 1$: geometric,
#    $\mathbb E[K] = 1/\gamma$; $\eta = 0$: logarithmic), the whole search is $(\lambda, \varepsilon'(\lambda))$-RDP with, for any
#    $\hat\lambda \ge 1$,
#
# $$\varepsilon'(\lambda) = \varepsilon(\lambda) + (1+\eta)\Bigl(1-\frac1{\hat\lambda}\Bigr)\varepsilon(\hat\lambda)
#   + \frac{(1+\eta)\ln(1/\gamma)}{\hat\lambda} + \frac{\ln \mathbb E[K]}{\lambda-1}.$$
#
# The mean number of runs enters only through logarithms: a search over many settings costs no more than a few
# runs, however long it is. A Poisson $K$ has a bound of its own (§23.3), which pays for the mean more heavily.
# Exercises 7.2 and 7.4, at the end of the chapter, ask you to account a search both ways (dpedu's
# `experiments.tuning_cost` does too; its table follows them). Here we turn the question around, for the
# chapter's run (640 steps at $q = 0.05$, the z of $\varepsilon = 1$ for one run) and a score with
# $\varepsilon_s = 0.02$: `experiments.affordable_noise` finds the smallest z per run that keeps the whole search
# within $\varepsilon = 1$.

# %%
from dpedu.lab.experiments.tuning_costs import run_ledger
from dpedu.lab.tuning import PrivateHyperparameterSearch

score_epsilon = 0.02
run_z = dp.calibrate.noise_multiplier(target_epsilon=1.0, target_delta=DELTA, sampling_rate=q,
                                      steps=steps)
one_run = account(run_ledger(run_z, q, steps, score_epsilon), "rdp", delta=DELTA).epsilon
print(f"one run (z = {run_z:.2f}, {steps} steps, noisy score): epsilon = {one_run:.3f}")

affordable = experiments.affordable_noise((4, 16, 64), target_epsilon=1.0, sampling_rate=q,
                                          steps=steps, score_epsilon=score_epsilon, delta=DELTA)
print("\n  noise multiplier per run for a total epsilon = 1 "
      f"(the free ride: z = {run_z:.2f} for any k)")
print("   k   composition   selection (geometric)")
for k, grid_z, selection_z in affordable:
    print(f"  {k:2d}   {grid_z:11.2f}   {selection_z:21.2f}")

# %% [markdown]
# At a total $\varepsilon = 1$, a search over 64 settings by composition needs about ten times the noise
# multiplier of one run, private selection less than three times: the composed cost keeps growing with the
# number of settings, while the selection theorem charges the mean number of runs only through logarithms. The free
# ride's z is the smallest of all — it buys accuracy with a guarantee nobody can state.
#
# What does each way buy in accuracy? We search 12 settings, $C \in \{0.1, 0.3, 1, 3\}$ and learning rate
# $\in \{2, 8, 32\}$, each run on 80 % of the training rows (a random split; the other 20 % score), with the
# chapter's q and a few epochs (fewer in fast mode). At each total ε:
#
# * **free ride**: all 12 settings at the z of one run, the best *exact* validation accuracy wins, and the
#   reported ε is that of one run;
# * **composition**: all 12 settings at the z that `affordable_noise` allows for 12 runs and 12 noisy scores;
# * **private selection**: `PrivateHyperparameterSearch` with a geometric $K$ of mean 12, at the z that
#   `affordable_noise` allows for it; its `epsilon_` is the ε of the whole search.
#
# All three report the test accuracy of the model they release.
#
# A held-out split is one way to score, not the only one. With `validation_fraction=0` every run trains on all
# the training rows and is scored on the same rows: the score is still a count with sensitivity 1, released
# after the model and paid for in the run's ledger, so the search stays private
# ([§23.5](../docs/math.md#235-what-the-score-must-be-and-what-must-stay-secret)); it is training accuracy,
# which a private model cannot push far above its test accuracy. `benchmarks/bench_tuning_accuracy.py` scores
# that way, so no run loses a fifth of its data.

# %%
# alt: Test accuracy against the total epsilon reported when tuning settings on Adult, one line per way of paying for
#   the tuning, including the free ride that pays nothing.
search_space = {"clip_norm": [0.1, 0.3, 1.0, 3.0], "learning_rate": [2.0, 8.0, 32.0]}
settings = [dict(clip_norm=c, learning_rate=lr) for c in search_space["clip_norm"]
            for lr in search_space["learning_rate"]]
n_settings = len(settings)
tune_epochs = pick(8, 4)
tune_steps = experiments.steps_from_epochs(tune_epochs, q)
search_epsilons = pick([0.3, 1.0, 3.0, 10.0], [0.3, 3.0])
tuning_seeds = pick(3, 1)


def grid_search(total_epsilon, noise_multiplier, score_epsilon, seed):
    """Train every setting, keep the best validation score (exact when score_epsilon is None);
    return the test accuracy of the model kept."""
    rng = np.random.default_rng(seed)
    scoring = rng.random(n) < 0.2
    best_score, best_model = -math.inf, None
    for setting in settings:
        model = dp.DPLogisticRegression(epsilon=total_epsilon, delta=DELTA,
                                        noise_multiplier=noise_multiplier, epochs=tune_epochs,
                                        sampling_rate=q, random_state=rng, **setting)
        model.fit(X_train[~scoring], y_train[~scoring])
        score = float(np.sum(model.predict(X_train[scoring]) == y_train[scoring]))
        if score_epsilon is not None:
            score = dp.mechanisms.laplace_mechanism(score, l1_sensitivity=1.0,
                                                    epsilon=score_epsilon, rng=rng)
        if score > best_score:
            best_score, best_model = score, model
    return best_model.score(X_test, y_test)


ways = ("free ride", "composition", "private selection")
tuning_accuracy = {way: np.zeros((len(search_epsilons), tuning_seeds)) for way in ways}
tuning_noise = {way: [] for way in ways}
spent = {way: [] for way in ways}
for i, eps in enumerate(search_epsilons):
    free_z = dp.calibrate.noise_multiplier(target_epsilon=eps, target_delta=DELTA, sampling_rate=q,
                                           steps=tune_steps)
    (_, grid_z, selection_z), = experiments.affordable_noise(
        [n_settings], target_epsilon=eps, sampling_rate=q, steps=tune_steps,
        score_epsilon=score_epsilon, delta=DELTA)
    for way, z in zip(ways, (free_z, grid_z, selection_z)):
        tuning_noise[way].append(z)
    grid_ledger = [(event, count * n_settings) for event, count in
                   run_ledger(grid_z, q, tune_steps, score_epsilon)]
    spent["free ride"].append(account(run_ledger(free_z, q, tune_steps, score_epsilon)[:1], "rdp",
                                      delta=DELTA).epsilon)
    spent["composition"].append(account(grid_ledger, "rdp", delta=DELTA).epsilon)
    for s in range(tuning_seeds):
        tuning_accuracy["free ride"][i, s] = grid_search(eps, free_z, None, s)
        tuning_accuracy["composition"][i, s] = grid_search(eps, grid_z, score_epsilon, s)
        search = PrivateHyperparameterSearch(
            search_space, mean_trials=n_settings, score_epsilon=score_epsilon,
            validation_fraction=0.2,
            estimator_params=dict(epsilon=eps, delta=DELTA, noise_multiplier=selection_z,
                                  epochs=tune_epochs, sampling_rate=q),
            random_state=s).fit(X_train, y_train)
        tuning_accuracy["private selection"][i, s] = search.score(X_test, y_test)
    spent["private selection"].append(search.epsilon_)

print(f"{n_settings} settings, {tune_epochs} epochs = {tune_steps} steps per run, "
      f"{tuning_seeds} seed(s)")
print("  total eps   way                  z per run   eps reported   "
      "test accuracy (mean over seeds)")
for i, eps in enumerate(search_epsilons):
    for way in ways:
        print(f"  {eps:9g}   {way:<18}   {tuning_noise[way][i]:9.2f}   {spent[way][i]:12.3f}   "
              f"{tuning_accuracy[way][i].mean():.4f}")

styles = {"free ride": ("#999999", "s", ":"), "composition": ("#D55E00", "^", "--"),
          "private selection": ("#0072B2", "o", "-")}
paid = {way: "tuning not paid" if way == "free ride" else "tuning paid" for way in ways}
ax = plotting.plot_accuracy_comparison(
    [(search_epsilons, tuning_accuracy[way], f"{way} ({paid[way]})",
      dict(zip(("color", "marker", "linestyle"), styles[way]))) for way in ways],
    baseline=dpsgd.baseline, delta=DELTA,
    title=f"Tuning {n_settings} settings on Adult: accuracy against the total epsilon")
ax.set_xlabel(r"total $\varepsilon$ reported, $\delta = 10^{-5}$ (the free ride reports one run's)")
plt.show()

# %% [markdown]
# Every way reports an ε at most its target (the "eps reported" column; the free ride's is one run's). At a
# small budget the order is the one the noise table predicts: the free ride is the most accurate — because it
# did not pay — and private selection beats composition, whose 12 runs must each be much noisier. With a
# generous budget all three land near the same accuracy: the noise no longer matters much, and paying for
# the tuning becomes cheap. A free ride is not a fourth option with better accuracy; it is the same search with
# its cost left out of the statement.
#
# ## Adaptive clipping: tuning C inside the run
#
# One setting need not be searched at all. Adaptive clipping (Andrew et al. 2021,
# [§24](../docs/math.md#24-adaptive-clipping)) moves C during training towards a chosen quantile $\gamma$ of the
# per-example gradient norms: at every step it also releases a noisy count of the sampled gradients with norm
# at most $C_t$ (noise of standard deviation $\sigma_b$) and updates
# $C_{t+1} = C_t\,e^{-\eta_C(\tilde b_t - \gamma)}$, where $\tilde b_t$ is the noisy fraction of unclipped
# gradients. We run the chapter's configuration at $\varepsilon = 1$, starting from $C_0 = 0.1$, with $\gamma = 0.9$.
# (With the median, $\gamma = 0.5$, C would collapse: on Adult most gradients of a trained model are tiny.)
# The dashed line is the true 0.9-quantile of all gradient norms, computed once per epoch on the private data:
# a diagnostic for this figure, not part of the private run.

# %%
# alt: The clip norm of adaptive clipping on Adult against the step, beside the quantile of the gradient norms it
#   tracks.
design, design_test = (np.hstack([A, np.ones((len(A), 1))]) for A in (X_train, X_test))
# the z of one run at epsilon = 1 (calibrated above)
z_one_run = cheap.noise_multiplier_
adaptive_plan = dp.training.plan_dp_sgd(len(design), noise_multiplier=z_one_run, clip_norm=0.1,
                                        sampling_rate=q, steps=steps, learning_rate=learning_rate,
                                        lr_schedule="linear", target_quantile=0.9)
adaptive = dp.training.run_dp_sgd(design, y_train, adaptive_plan, rng=0)
details = adaptive.details
fig, ax = plt.subplots(figsize=(7.3, 3.8), layout="constrained")
plotting.plot_adaptive_clipping(details.clip_norms, details.loss_steps,
                                details.gradient_norm_quantiles, target_quantile=0.9, ax=ax)
ax.set_title("Adaptive clipping on Adult, epsilon = 1: "
             f"z = {z_one_run:.2f}, q = {q}, {steps} steps")
plt.show()
adaptive_accuracy = np.mean(np.where(design_test @ adaptive.theta > 0, 1, -1) == y_test)
print(f"requested z = {z_one_run:.4f}; "
      f"count noise sigma_b = {details.plan.resolved_count_noise_std:.1f}")
print(f"C: {details.clip_norms[0]:g} at the start, {details.clip_norms[-1]:.3f} at the end; "
      f"last 0.9-quantile of the gradient norms {details.gradient_norm_quantiles[-1]:.3f}")
print(f"same ledger as the fixed-C run of this chapter: {adaptive.ledger == cheap.ledger_}")
print(f"test accuracy: adaptive C {adaptive_accuracy:.4f}; "
      f"fixed C = {C}: {cheap.score(X_test, y_test):.4f}")

# %% [markdown]
# C climbs from its deliberately poor start within the first five epochs and then follows the quantile as the
# model, and so its gradients, change; no grid of clip norms was trained, and the accuracy is close to the
# chapter's hand-picked C.
#
# Why is the privacy unchanged? Each step now releases two things: the noisy gradient sum with noise
# multiplier $z_\Delta$ and the noisy count with noise $\sigma_b$. One person moves the clipped sum by at most
# $C_t$ and the count, shifted by $\tfrac12$ per record, by at most $\tfrac12$. Dividing the sum by $z_\Delta C_t$
# and the count by $\sigma_b$, the pair is one sum of per-person vectors of norm at most
# $\sqrt{z_\Delta^{-2} + (2\sigma_b)^{-2}}$ plus standard Gaussian noise: one Gaussian step, with multiplier $z$ if
# $z^{-2} = z_\Delta^{-2} + (2\sigma_b)^{-2}$. So `dp_sgd` solves this for $z_\Delta$ and gives the gradients a
# little more noise than $z$; the run is the requested step with multiplier $z$, and its ledger is the same as
# with a fixed C. Solving for $z_\Delta$, and saying when it can be solved, is exercise 7.5; the $z_\Delta$ of
# this run is printed after it.

# %% [markdown]
# ## Exercises
#
# Fill in each function between the solution markers, then run the check cell below it. The checks use their
# own numbers, not your results above.
#
# **Exercise 7.1 — the noise on the average.** Write `noise_std_of_average(noise_multiplier, clip_norm,
# sampling_rate, dataset_size)`: the standard deviation of the noise in each coordinate of DP-SGD's averaged
# gradient (noise on the clipped sum, divided by the expected batch size).

# %% exercise=7.1
def noise_std_of_average(noise_multiplier, clip_norm, sampling_rate, dataset_size):
    ### BEGIN SOLUTION
    return noise_multiplier * clip_norm / (sampling_rate * dataset_size)
    ### END SOLUTION

# %% check=7.1
checks.check_noise_std_of_average(noise_std_of_average)

# %% [markdown]
# **Exercise 7.2 — the price of tuning.** A hyper-parameter search trains `n_runs` models on the same data,
# each with `steps` DP-SGD steps at noise multiplier z and sampling rate q, and publishes the best. All runs
# see the data, so all of them count. Write `tuning_epsilon(noise_multiplier, sampling_rate, steps, n_runs,
# delta)`: the total ε of the search by the RDP accountant. You may use `make_accountant` and
# `SubsampledGaussianEvent` (imported above). Is it `n_runs` times the ε of one run?

# %% exercise=7.2
def tuning_epsilon(noise_multiplier, sampling_rate, steps, n_runs, delta):
    ### BEGIN SOLUTION
    event = SubsampledGaussianEvent(noise_multiplier, sampling_rate)
    return make_accountant("rdp").compose(event, steps * n_runs).get_epsilon(delta)
    ### END SOLUTION

# %% check=7.2
checks.check_tuning_epsilon(tuning_epsilon)

# %% [markdown]
# **Exercise 7.3 — reading the curve.** Write `smallest_epsilon_reaching(epsilons, accuracies, target)`: given
# the ε grid (in any order) and the accuracies of shape (number of ε, number of seeds), return the smallest ε
# whose **mean** accuracy over seeds reaches `target`, or `math.inf` if none does. (Try it afterwards on
# `dpsgd.epsilons, dpsgd.accuracies` from above.)

# %% exercise=7.3
def smallest_epsilon_reaching(epsilons, accuracies, target):
    ### BEGIN SOLUTION
    epsilons = np.asarray(epsilons, dtype=float)
    reached = np.asarray(accuracies, dtype=float).mean(axis=1) >= target
    return float(epsilons[reached].min()) if reached.any() else math.inf
    ### END SOLUTION

# %% check=7.3
checks.check_smallest_epsilon_reaching(smallest_epsilon_reaching)

# %% [markdown]
# **Exercise 7.4 — composition or selection.** A search tries `n_settings` settings; each run is `steps`
# DP-SGD steps at noise multiplier z and sampling rate q, plus one validation score with Laplace noise
# ($\varepsilon_s$ = `score_epsilon`). Write `tuning_epsilons(noise_multiplier, sampling_rate, steps,
# score_epsilon, n_settings, delta)` returning the pair (ε of the grid search by RDP composition, ε of private
# selection with a geometric $K$ of mean `n_settings`), both at `delta`. A ledger is a list of `(event, count)`
# pairs and `account(ledger, "rdp", delta=delta).epsilon` its ε; the events you need are
# `SubsampledGaussianEvent`, `LaplaceEvent` and `RepeatAndSelectEvent(ledger_of_one_run, mean)` (all imported at
# the top). Then try the chapter's run (`run_z, q, steps, score_epsilon`) with 2 and with 20 settings.

# %% exercise=7.4
def tuning_epsilons(noise_multiplier, sampling_rate, steps, score_epsilon, n_settings, delta):
    ### BEGIN SOLUTION
    training = (SubsampledGaussianEvent(noise_multiplier, sampling_rate), steps)
    score = (LaplaceEvent(score_epsilon), 1)
    grid = [(training[0], n_settings * steps), (score[0], n_settings)]
    selection = [(RepeatAndSelectEvent([training, score], n_settings), 1)]
    return (account(grid, "rdp", delta=delta).epsilon,
            account(selection, "rdp", delta=delta).epsilon)
    ### END SOLUTION

# %% check=7.4
checks.check_tuning_epsilons(tuning_epsilons)

# %% [markdown]
# *Compare with dpedu's version*: `experiments.tuning_cost` accounts the chapter's run (`run_z`, `steps` at `q`,
# $\varepsilon_s$ = `score_epsilon`) both ways, for 2 to 64 settings and three distributions of $K$:

# %%
trials = (2, 4, 8, 16, 32, 64)
shapes = {"geometric": 1.0, "logarithmic": 0.0, "Poisson": math.inf}
costs = {name: experiments.tuning_cost(trials, noise_multiplier=run_z, sampling_rate=q, steps=steps,
                                       score_epsilon=score_epsilon, delta=DELTA, shape=shape)
         for name, shape in shapes.items()}
print(f"one run: epsilon = {one_run:.3f}; "
      f"total epsilon of the search, same z = {run_z:.2f} per run:")
print("   k   composition   selection: geometric   logarithmic   Poisson")
for j, k in enumerate(trials):
    row = [costs[name][j].selection_epsilon for name in shapes]
    print(f"  {k:2d}   {costs['geometric'][j].grid_epsilon:11.2f}   "
          f"{row[0]:20.2f}   {row[1]:11.2f}   {row[2]:7.2f}")

# %% [markdown]
# Read the table by rows. For two settings composition is cheaper than selection with a geometric $K$: the
# selection theorem pays a fixed overhead (the second and third terms of its bound, in the section on the price
# of tuning). From four settings on, the composed cost keeps growing, roughly like $\sqrt k$, while the selected
# one barely moves: with a geometric or logarithmic $K$ the whole search stays below three times the ε of one run,
# up to 64 settings. A Poisson $K$ is by far the most expensive selection at a large mean.

# %% [markdown]
# **Exercise 7.5 — the noise split of adaptive clipping.** Write `gradient_noise_multiplier(noise_multiplier,
# count_noise_std)`: the multiplier $z_\Delta$ the gradient sum must get so that the step, gradient and count
# together, is one Gaussian step with multiplier $z$ when the count has noise of standard deviation $\sigma_b$
# (the derivation closes the section on adaptive clipping). Raise `ValueError` when no $z_\Delta$ exists.

# %% exercise=7.5
def gradient_noise_multiplier(noise_multiplier, count_noise_std):
    ### BEGIN SOLUTION
    if not 2 * count_noise_std > noise_multiplier:
        raise ValueError("the count's noise must satisfy 2 sigma_b > z, "
                         "or the count alone spends the whole step")
    return (noise_multiplier ** -2 - (2 * count_noise_std) ** -2) ** -0.5
    ### END SOLUTION

# %% check=7.5
checks.check_gradient_noise_multiplier(gradient_noise_multiplier)

# %% [markdown]
# *Compare with dpedu's version*: the plan of the adaptive run above solved the same equation for its $z$ and
# $\sigma_b$, and gave the gradients this multiplier (your function gives the same at these two numbers):

# %%
print(f"z = {z_one_run:.4f}, sigma_b = {details.plan.resolved_count_noise_std:.1f}: "
      f"z_Delta = {details.plan.gradient_noise_multiplier:.4f}")
