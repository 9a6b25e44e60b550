# %% [markdown]
# # Chapter 2 — Noisy gradient descent
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. state the L1 and L2 sensitivity of a count and of a sum of clipped vectors, under add/remove and
# >    replace-one neighbours;
# > 2. clip a vector to a norm bound with `L2_clip`, and explain why clipping *coordinates* is wrong;
# > 3. decide when clipping the inputs once is as good as clipping the gradients at every step;
# > 4. release a noisy count (Laplace) and a noisy sum (Gaussian), with the classic and the exact calibration;
# > 5. run the book's noisy gradient descent on Adult and read off what it spends — **in total**.
#
# *Prerequisites:* chapters 0, 1. *Time:* about 105 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 18 s in fast mode (`DPEDU_FAST=1`), 22 s in full mode.
#
# This chapter follows *Programming Differential Privacy* (Near & Abuah), chapter "Machine Learning".

# %% [markdown]
# *Uses:* [`L2_clip`](dpedu.textbook.clipping.L2_clip) · [`laplace_mechanism`](dpedu.textbook.mechanisms.laplace_mechanism) ·
# [`gaussian_noise_multiplier`](dpedu.textbook.mechanisms.gaussian_noise_multiplier) ·
# [`noisy_gradient_descent`](dpedu.textbook.training.noisy_gradient_descent) ·
# [`run_noisy_gd_tradeoff`](dpedu.lab.experiments.run_noisy_gd_tradeoff) (see the API reference).
# *Notes:* [§2](../docs/math.md#2-sensitivity) · [§5](../docs/math.md#5-l2-clipping-and-the-sensitivity-of-a-clipped-sum) · [§7](../docs/math.md#7-noisy-gradient-descent-the-books-algorithm) in the mathematical notes.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import dpedu as dp
from dpedu.lab import plotting
from dpedu.course import checks
from dpedu.lab import experiments
from dpedu.course.notebook import fast_mode, pick, progress_bar, show_source
from dpedu.textbook.models import logistic

FAST = fast_mode()
print("fast mode" if FAST else "full mode")

# %%
X_train, y_train, X_test, y_test = dp.datasets.load_adult()
n, d = X_train.shape
print(f"{n} training rows, {d} features")

# %% [markdown]
# ## Sensitivity
#
# Differential privacy compares the output on two **neighbouring** datasets D and D′. In this course (as in
# the book, Abadi et al. and every accountant in dpedu, chapter 3) neighbours are **add/remove**: D′ is D with one row
# added or removed. The **sensitivity** of a query f is the largest change of its answer between neighbours,
# measured in the L1 norm (for Laplace noise) or the L2 norm (for Gaussian noise):
#
# $$\Delta_2 f = \max_{D \sim D'} \lVert f(D) - f(D') \rVert_2 .$$
#
# It is a worst case over *all* possible datasets, not a property of ours. A count has sensitivity 1. A sum of
# gradients has *no* finite sensitivity — one extreme row can move it arbitrarily — unless each term is first
# forced into a ball of radius C. Then adding or removing a row changes the sum by one vector of norm $\le C$.
#
# What that bound means on Adult: removing row i changes the clipped sum by exactly row i's clipped gradient,
# whose norm is $\min(\lVert g_i\rVert, C)$, so the largest change over all rows is the largest clipped norm.
# (The clipped sum itself is part of Exercise 2.5; after it we remove rows and watch the sum move.)

# %%
# any parameters: the bound holds for all of them
theta = np.random.default_rng(1).normal(size=d)
clip_norm = 1.0
norms = np.linalg.norm(logistic.per_example_gradients(theta, X_train, y_train), axis=1)
print(f"largest unclipped gradient norm over all {n} rows: {norms.max():.4f}")
print(f"largest clipped gradient norm over all {n} rows: "
      f"{np.minimum(norms, clip_norm).max():.4f} <= C = {clip_norm}")

# %% [markdown]
# ## `L2_clip`
#
# $$\mathrm{L2\_clip}(v, C) = v \cdot \min\Bigl(1, \frac{C}{\lVert v\rVert_2}\Bigr)$$
#
# scales a long vector down to norm C and leaves a short one alone. It clips along the last axis, so one call
# clips every row (every example's gradient) of a matrix. You write it in Exercise 2.2; what it must return:
#
# * `L2_clip(np.array([3.0, 4.0]), 1.0)` → `[0.6, 0.8]` (norm 5 scaled down to 1, same direction);
# * `L2_clip(np.array([0.3, 0.4]), 1.0)` → `[0.3, 0.4]` (norm 0.5: left alone, never scaled *up*);
# * `L2_clip(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0)` → `[[0.6, 0.8], [0.3, 0.4]]` (each row on its own);
# * `L2_clip(np.zeros(2), 1.0)` → `[0.0, 0.0]` (the zero vector stays zero, no 0/0);
# * `L2_clip(np.array([3.0, 0.5, -0.2]), 1.0)` → `[0.9843, 0.164, -0.0656]` (norm 1, cosine 1 with v).
#
# Why not `np.clip(v, -C, C)`, coordinate by coordinate? It does bound each coordinate, but the result has
# norm up to $C\sqrt{d}$ (not C), and it **changes the direction** of the gradient — the update no longer points
# downhill in the same way. On the last example above:

# %%
v = np.array([3.0, 0.5, -0.2])
out = np.clip(v, -1.0, 1.0)
cosine = out @ v / (np.linalg.norm(out) * np.linalg.norm(v))
print(f"np.clip: {np.round(out, 3)}  norm {np.linalg.norm(out):.3f}  cosine with v {cosine:.4f}")

# %% [markdown]
# ## Clipping gradients or clipping inputs?
#
# Chapter 1 showed $\lVert \nabla \ell(\theta; x, y) \rVert < \lVert x \rVert$ for the logistic loss. So if every *row* has norm $\le C$, every gradient
# does too, for every θ: clipping the inputs once bounds the gradients forever. (This trick is special to
# losses whose gradient is bounded by the input; a neural network needs per-step gradient clipping.)
#
# On Adult every row has norm $\le \sqrt{14} \approx 3.74$ by construction, so with the book's $C = 5$ *neither* clipping ever
# triggers. How many gradients a smaller C cuts depends on θ: at $\theta = 0$ each gradient has norm exactly $\lVert x \rVert/2$.

# %%
# alt: Histogram, log scale: per-example gradient norms on Adult at theta = 0 and after 50 steps of gradient descent,
#   the outline of the row norms, and dotted lines at the clip norms 0.5, 1, 2 and 5.
trained = dp.training.gradient_descent(X_train, y_train, 50).theta
row_norms = np.linalg.norm(X_train, axis=1)
bins = np.linspace(0, 5.2, 105)
fig, ax = plt.subplots(figsize=(7.3, 5.5), layout="constrained")
for label, t in (("gradients at theta = 0", np.zeros(d)),
                 ("gradients after 50 steps of gradient descent", trained)):
    norms = np.linalg.norm(logistic.per_example_gradients(t, X_train, y_train), axis=1)
    ax.hist(norms, bins=bins, alpha=0.6, label=label)
ax.hist(row_norms, bins=bins, histtype="step", color="black",
        label="row norms ||x|| (what input clipping cuts)")
for c in (0.5, 1.0, 2.0, 5.0):
    ax.axvline(c, color="gray", linestyle=":")
    ax.annotate(f"{c:g}", (c, 1.0), xycoords=("data", "axes fraction"), xytext=(0, 3),
                textcoords="offset points", ha="center", va="bottom", color="gray",
                annotation_clip=False)
ax.set(xlabel="per-example gradient norm", ylabel="number of training rows (log scale)",
       yscale="log")
ax.set_title("How much does clipping cut?\n(Adult; dotted lines: clip norms C = 0.5, 1, 2, 5)",
             pad=16)
# below: bars fill the axes
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncols=1, fontsize="small")
plt.show()
trained_norms = np.linalg.norm(logistic.per_example_gradients(trained, X_train, y_train), axis=1)
print("gradient norms at theta = 0 (= ||x|| / 2): "
      f"{row_norms.min() / 2:.2f} .. {row_norms.max() / 2:.2f}")
for c in (0.5, 1.0, 2.0, 5.0):
    print(f"C = {c}: {np.mean(trained_norms > c):6.1%} of gradients clipped (trained theta), "
          f"{np.mean(row_norms > c):6.1%} of rows clipped by input clipping")

# %% [markdown]
# Every row has norm between 2.83 and 3.29, so input clipping at $C = 1$ or $C = 2$ shrinks *every* row — it changes
# the data. Gradient clipping at $C = 2$ touches no gradient at $\theta = 0$ (their norms $\lVert x \rVert/2$ are at most 1.64) and,
# after training, only the badly classified examples (the printed share); at $C = 1$ it cuts every gradient at $\theta = 0$.
#
# ## The Laplace and Gaussian mechanisms
#
# * **Laplace** (ε-DP): add noise of scale $\Delta_1/\varepsilon$ to each coordinate. For the count of rows, $\Delta_1 = 1$.
# * **Gaussian** ((ε, δ)-DP): add $\mathcal N(0, \sigma^2)$ to each coordinate with $\sigma = z \Delta_2$, where the **noise multiplier** z
#   depends only on (ε, δ). The classic formula $z = \sqrt{2\ln(1.25/\delta)}/\varepsilon$ is proven only for $\varepsilon < 1$; the exact
#   ("analytic") calibration of Balle & Wang (2018) works for every ε and needs less noise.
#
# A noisy count (Exercise 2.3) adds one Laplace draw of scale $1/\varepsilon$, taken from the generator it is
# given: `noisy_count(100, 0.5, np.random.default_rng(1))` → `100.0479`, and
# `noisy_count(32561, 0.1, np.random.default_rng(0))` → `32564.201` (the count of Adult's training rows, off by
# about $1/\varepsilon = 10$ on average). The same generator state gives the same answer.
#
# The classic multiplier (Exercise 2.4) at $\delta = 10^{-5}$:
# `classic_noise_multiplier(0.1, 1e-5)` → `48.448`, `classic_noise_multiplier(0.5, 1e-5)` → `9.690`,
# `classic_noise_multiplier(0.9, 1e-5)` → `5.383`, and `classic_noise_multiplier(2.0, 1e-5)` raises `ValueError`.
# The analytic calibration at the same $(\varepsilon, \delta)$ needs less:

# %%
print(" epsilon  delta   analytic z")
for eps in (0.1, 0.5, 0.9, 2.0):
    print(f"{eps:8g}  1e-05  {dp.gaussian.analytic_noise_multiplier(eps, 1e-5):11.3f}")

# %% [markdown]
# ## Noisy gradient descent
#
# The book's algorithm: full batch, k iterations, each one (ε, δ)-DP, plus one ε-DP noisy count n + Lap(1/ε)
# used as the divisor. Each iteration releases the clipped gradient sum plus $\mathcal N(0, (zC)^2I)$ — one such release is
# Exercise 2.5, and the listing of `dp.training.noisy_gradient_descent` follows it.
#
# What does one run spend? Each of the $k = 10$ iterations is $(0.1, 10^{-5})$-DP and the count is 0.1-DP, so by
# sequential composition (chapter 3) the **whole run** is $((k+1)\cdot 0.1, k\cdot 10^{-5}) = (1.1, 10^{-4})$-DP. The ε printed on
# a single iteration is not the privacy of the model: the model is the output of all of them.

# %%
seeds = np.random.SeedSequence(2024).spawn(pick(10, 3))
clipping_runs = {}
for clip in (5.0, 2.0, 1.0):
    for clip_mode in ("gradients", "inputs"):
        plan = dp.training.plan_noisy_gradient_descent(10, 0.1, 1e-5, clip_norm=clip,
                                                       clip_mode=clip_mode)
        thetas = [dp.training.run_noisy_gradient_descent(X_train, y_train, plan,
                                                         rng=np.random.default_rng(s)).theta
                  for s in seeds]
        accs = np.array([logistic.accuracy(t, X_test, y_test) for t in thetas])
        positive = np.mean([logistic.predict(t, X_test) == 1 for t in thetas])
        clipping_runs[clip, clip_mode] = accs, positive
        kind = f"{clip_mode:<9}"
        print(f"C = {clip}: clipping {kind} test accuracy {accs.mean():.4f} ± {accs.std():.4f}, "
              f'"> 50K" for {positive:6.2%} of the test rows')
majority = np.mean(y_test == -1)
print(f'(always predicting "<= 50K": {majority:.4f})')
result = dp.training.noisy_gradient_descent(X_train, y_train, 10, 0.1, 1e-5, rng=0)
print(f"\nper iteration: ({result.epsilon_per_iteration}, {result.delta_per_iteration})-DP; "
      f"whole run: ({result.epsilon:.3g}, {result.delta:.3g})-DP by sequential composition")

# %% [markdown]
# With $C = 5$ the two clipping variants give *identical* models: neither clips anything, and the same seed draws
# the same noise. With $C = 2$ they differ: gradient clipping learns about as well as at $C = 5$, while input clipping
# predicts "> 50K" for almost nobody and scores barely above the majority-class floor of 0.7543. The noise is not
# the reason — its std $z \cdot C$ is *smaller* at $C = 2$ than at $C = 5$. Input clipping shrinks every row by a factor
# $2/\lVert x \rVert \le 0.71$, so every gradient and every step shrinks too, and 10 steps of learning rate 1 no longer get the
# model out of its first phase, where it predicts the majority class (chapter 1: 10 iterations are few even
# without clipping). With $C = 1$ *both* variants stay there: their accuracy is exactly the floor, with no spread
# over seeds, because every gradient is cut to norm 1 from the first step on. Clipping is a bias, not only a
# sensitivity bound: a smaller C must be paid for with more steps or a larger learning rate.
#
# ## Accuracy against the total ε
#
# Now vary the per-iteration ε. The x-axis of the figure is the **total** ε of the run, $(k + 1) \cdot \varepsilon$ per iteration,
# because that is what protects the people in the data; plotting the per-iteration ε would make the method
# look 11 times more private than it is.

# %%
# alt: Test accuracy of the book's noisy gradient descent on Adult against its total epsilon by sequential
#   composition, with non-private gradient descent as a horizontal line.
grid = pick([0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.9], [0.01, 0.1, 0.9])
noisy_gd = experiments.run_noisy_gd_tradeoff((X_train, y_train, X_test, y_test),
                                             epsilons_per_iteration=grid, iterations=10,
                                             delta_per_iteration=1e-5, seeds=pick(5, 2),
                                             accountants=(), progress=progress_bar("noisy GD"))
baseline = logistic.accuracy(dp.training.gradient_descent(X_train, y_train, 10).theta,
                             X_test, y_test)
ax = plotting.plot_accuracy_vs_epsilon(noisy_gd.total_epsilons["book"], noisy_gd.accuracies,
                                       delta=noisy_gd.delta, baseline=baseline,
                                       baseline_label="non-private gradient descent, 10 iterations",
                                       label="noisy GD, sequential composition as in the book")
ax.set_title("The book's noisy gradient descent on Adult (10 iterations)")
plt.show()
totals = np.asarray(noisy_gd.total_epsilons["book"])
mean_acc = noisy_gd.accuracies.mean(axis=1)
plateau = mean_acc[np.argmax(totals)]
flat_from = totals[mean_acc >= plateau - 0.01].min()
print(f"mean accuracy at the largest total epsilon ({totals.max():.3g}): {plateau:.4f};")
print(f"  within 1 point of it down to a total epsilon of {flat_from:.3g};")
print(f"  at the smallest ({totals.min():.3g}): {mean_acc[np.argmin(totals)]:.4f}")

# %% [markdown]
# The curve is flat — within one point of its plateau, which is the non-private accuracy of 10 iterations — down
# to the total ε printed above (in full mode 0.22, that is 0.02 per iteration; the coarser grid of fast mode
# cannot resolve it and prints a larger value); below it the noise swamps the
# gradient and the spread over seeds grows. Chapter 3 shows that sequential composition over-charges these runs,
# and chapter 7 puts all the methods of the course in one figure.
#
# ## Exercises
#
# A failed check says what is wrong; `checks.hint("2.2")` (with the exercise's number) says more.
#
# **Exercise 2.1 — sensitivities.** With add/remove neighbours a count has sensitivity ____; a sum of vectors
# each clipped to norm C has L2 sensitivity ____. Under *replace-one* neighbours (one row changed), the clipped
# sum has L2 sensitivity ____. Fill in the three numbers for $C = 5$.

# %% exercise=2.1
C = 5.0
# your answers below
sensitivity_count = sensitivity_sum_add_remove = sensitivity_sum_replace_one = None
### BEGIN SOLUTION
sensitivity_count = 1
sensitivity_sum_add_remove = C
sensitivity_sum_replace_one = 2 * C
### END SOLUTION

# %% check=2.1
checks.check_sensitivities(sensitivity_count, sensitivity_sum_add_remove,
                           sensitivity_sum_replace_one, clip_norm=C)

# %% [markdown]
# **Exercise 2.2 — `L2_clip`.** Write `L2_clip(v, clip_norm)` for a vector *or* a matrix whose rows are
# clipped one by one. Leave short vectors unchanged, keep directions, and do not divide by zero.

# %% exercise=2.2
def L2_clip(v, clip_norm):
    ### BEGIN SOLUTION
    v = np.asarray(v, dtype=float)
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return v * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))
    ### END SOLUTION

# %% check=2.2
checks.check_L2_clip(L2_clip)

# %% [markdown]
# *Compare with dpedu's version.* The line above it, `@door(...)`, says what it accepts: when you call it, those
# checks run first (a vector whose norm exceeds the largest float is refused too); when a training run calls it,
# they are skipped, because the run checked its inputs once. The factor it scales by is `clip_factor`, the one
# clip factor every clipped sum in dpedu uses:

# %%
show_source(dp.clipping.L2_clip)
show_source(dp.clipping.clip_factor)

# %% [markdown]
# **Exercise 2.3 — a noisy count.** Write `noisy_count(true_count, epsilon, rng)`: the count plus Laplace noise
# that makes it ε-DP, drawn from the generator `rng` you are given.

# %% exercise=2.3
def noisy_count(true_count, epsilon, rng):
    ### BEGIN SOLUTION
    return true_count + rng.laplace(0.0, 1.0 / epsilon)
    ### END SOLUTION

# %% check=2.3
checks.check_noisy_count(noisy_count)

# %% [markdown]
# *Compare with dpedu's version*, for any L1 sensitivity and any shape:

# %%
show_source(dp.mechanisms.laplace_mechanism)

# %% [markdown]
# **Exercise 2.4 — the classic Gaussian calibration.** Write `classic_noise_multiplier(epsilon, delta)`
# returning $z = \sqrt{2\ln(1.25/\delta)}/\varepsilon$, and raising `ValueError` when $\varepsilon \ge 1$, where the formula is not proven.

# %% exercise=2.4
def classic_noise_multiplier(epsilon, delta):
    ### BEGIN SOLUTION
    if not 0 < epsilon < 1:
        raise ValueError(f"the classic Gaussian calibration needs 0 < epsilon < 1; got {epsilon}")
    return math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    ### END SOLUTION

# %% check=2.4
checks.check_classic_noise_multiplier(classic_noise_multiplier)

# %% [markdown]
# **Exercise 2.5 — one noisy gradient.** Write `noisy_gradient_sum(theta, X, y, clip_norm, noise_multiplier, rng)`:
# the sum of the per-example logistic gradients, each clipped to `clip_norm`, plus Gaussian noise calibrated to
# the sum's sensitivity. You may use `dp.L2_clip` and `dp.models.logistic.per_example_gradients`.

# %% exercise=2.5
def noisy_gradient_sum(theta, X, y, clip_norm, noise_multiplier, rng):
    ### BEGIN SOLUTION
    gradients = dp.models.logistic.per_example_gradients(theta, X, y)
    clipped_sum = dp.L2_clip(gradients, clip_norm).sum(axis=0)
    return clipped_sum + rng.normal(0.0, noise_multiplier * clip_norm, size=clipped_sum.shape)
    ### END SOLUTION

# %% check=2.5
checks.check_noisy_gradient_sum(noisy_gradient_sum)

# %% [markdown]
# *Compare with dpedu's version*: the book's noisy gradient descent releases one such noisy sum per iteration,
# divided by the noisy count. `noisy_gradient_descent` fixes the run as a plan (the noise multiplier from ε and δ,
# checked before any noise is drawn) and runs its loop, `run_noisy_gradient_descent`, which every noisy-GD run in
# dpedu takes, the sweeps and benchmarks too:

# %%
show_source(dp.training.noisy_gradient_descent)
show_source(dp.training.run_noisy_gradient_descent)

# %% [markdown]
# The clipped sum is the model's. It is `L2_clip(per_example_gradients(theta, X, y), C).sum(0)`, computed
# without the n × d matrix of gradients: each gradient is a number times its row, $g_i = s_i x_i$, so its norm is
# $|s_i|\,\lVert x_i\rVert$ and clipping scales the number, by the same `clip_factor`. Two matrix-vector products
# per iteration instead of building every gradient; a test pins the two forms together.

# %%
show_source(dp.models.LogisticModel.clipped_gradient_sum)

# %% [markdown]
# Now that you have written the clipped sum, watch the sensitivity bound of the start of this chapter hold on
# the sum itself: remove each of the first rows in turn and measure how far the clipped gradient sum moves
# (`logistic.clipped_gradient_sum` computes that sum for logistic regression, at the θ and C used there).

# %%
full_sum = logistic.clipped_gradient_sum(theta, X_train, y_train, clip_norm)
moves = [np.linalg.norm(full_sum - logistic.clipped_gradient_sum(theta,
                                                                 np.delete(X_train, i, axis=0),
                                                                 np.delete(y_train, i), clip_norm))
         for i in range(20)]
print("largest change of the clipped sum when one of the first 20 rows is removed: "
      f"{max(moves):.4f} <= C = {clip_norm}")
