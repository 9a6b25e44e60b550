# %% [markdown]
# # Chapter 6 — Pro-active DP: choose the noise before training
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. compute the pro-active noise multiplier $z = \sqrt{2(\varepsilon + \ln(1/\delta))/\varepsilon}$ of van Dijk et al. from a fixed total
# >    budget (ε, δ), and explain why it does **not depend on the number of steps T**;
# > 2. state its conditions ($\varepsilon \le 1/2$, $\delta = 1/N$, $T \ge 2k^2/\varepsilon$, $q \cdot z \le 1/e$) and show a run where ignoring them breaks
# >    the guarantee;
# > 3. plan a DP-SGD schedule (k, T, q, batch size) with `dpedu.accountants.proactive.plan`, and compare its z with the z
# >    that calibrating on each accountant would choose;
# > 4. train on Adult with the plan and report test accuracy and the ε the tight accountants certify.
#
# *Prerequisites:* chapter 5. *Time:* about 80 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 10 s in fast mode (`DPEDU_FAST=1`), 26 s in full mode.
#
# In chapters 4 and 5 the workflow was: fix the schedule (q, T), then *calibrate* z by bisection on an
# accountant ([notes §17](../docs/math.md#17-calibration-by-bisection)). Change T and you must recalibrate. Van Dijk, N.V. Nguyen, T.N. Nguyen, L.M. Nguyen
# and P.H. Nguyen (arXiv 2102.09030; ICML 2024) turn this around: from the budget alone they give a z in closed
# form, valid for a whole family of schedules, so the noise is fixed **before** training and the schedule is
# tuned afterwards for accuracy. The formulas are in [notes §16](../docs/math.md#16-pro-active-dp).

# %% [markdown]
# *Uses:* [`plan`](dpedu.accountants.proactive.plan) ·
# [`proactive_noise_multiplier`](dpedu.accountants.proactive.proactive_noise_multiplier) ·
# [`minimum_steps`](dpedu.accountants.proactive.minimum_steps) · [`proactive_conditions`](dpedu.accountants.proactive.proactive_conditions)
# · [`compare`](dpedu.accountants.compare) (see the API reference).
# *Notes:* [§16](../docs/math.md#16-pro-active-dp) · [§17](../docs/math.md#17-calibration-by-bisection) in the mathematical notes.

# %%
import math
import textwrap
import warnings

import matplotlib.pyplot as plt
import numpy as np

import dpedu as dp
from dpedu import proactive
from dpedu.lab import plotting
from dpedu.course import checks
from dpedu.lab import experiments
from dpedu.course.notebook import fast_mode, pick, show_source
from dpedu.accountants import SubsampledGaussianEvent, moments
from dpedu.lab.estimator import DPLogisticRegression

FAST = fast_mode()
print("fast mode" if FAST else "full mode")

# %% [markdown]
# ## The closed form
#
# Let N be the number of records, k the number of epochs (so $K = kN$ per-example gradients in total), T the
# number of steps and $q = k/T$ the Poisson sampling rate (expected batch size $s = kN/T = qN$). Then DP-SGD is
# $(\varepsilon, \delta = 1/N)$-DP with $\varepsilon \le 1/2$ if
#
# $$z = \sqrt{\frac{2(\varepsilon + \ln(1/\delta))}{\varepsilon}}, \qquad T \ge \frac{2k^2}{\varepsilon},
#   \qquad \Bigl(\frac{2}{e}\Bigr)^2 k^2 - \frac12 \ge \ln N .$$
#
# There is no T in the formula for z. You write it first, and then the schedule. (Each exercise of this chapter
# comes where its subject does, before dpedu computes the same thing; you may use `numpy` and `math`, not `dpedu`.)
#
# **Exercise 6.1 — the pro-active noise.** Write `proactive_noise_multiplier(epsilon, delta)` returning
# $z = \sqrt{2(\varepsilon + \ln(1/\delta))/\varepsilon}$.

# %% exercise=6.1
def proactive_noise_multiplier(epsilon, delta):
    ### BEGIN SOLUTION
    return math.sqrt(2 * (epsilon + math.log(1 / delta)) / epsilon)
    ### END SOLUTION

# %% check=6.1
checks.check_proactive_noise_multiplier(proactive_noise_multiplier)

# %% [markdown]
# *Compare with dpedu's version:*

# %%
show_source(proactive.proactive_noise_multiplier)

# %% [markdown]
# **Exercise 6.2 — the schedule.** Write `proactive_schedule(epsilon, dataset_size, epochs)` returning the triple
# `(steps, sampling_rate, expected_batch_size)`: the smallest admissible $T = \lceil 2k^2/\varepsilon\rceil$ (a whole number), $q = k/T$
# and $s = kN/T$.

# %% exercise=6.2
def proactive_schedule(epsilon, dataset_size, epochs):
    ### BEGIN SOLUTION
    steps = math.ceil(2 * epochs**2 / epsilon)
    return steps, epochs / steps, epochs * dataset_size / steps
    ### END SOLUTION

# %% check=6.2
checks.check_proactive_schedule(proactive_schedule)

# %% [markdown]
# *Compare with dpedu's* `minimum_steps` (the smallest admissible T):

# %%
show_source(proactive.minimum_steps)

# %% [markdown]
# dpedu's `proactive.proactive_noise_multiplier` for a few budgets and dataset sizes:

# %%
print(f"{'N':>10} {'delta = 1/N':>12}"
      + "".join(f"{'eps = ' + format(e, 'g'):>11}" for e in (0.1, 0.25, 0.5)))
for n in (1_000, 30_162, 60_000, 10**6):
    row = "".join(f"{proactive.proactive_noise_multiplier(e, 1 / n):11.3f}"
                  for e in (0.1, 0.25, 0.5))
    print(f"{n:>10,} {1 / n:12.3g}{row}")

# %% [markdown]
# z grows like $1/\sqrt{\varepsilon}$, and only logarithmically with N (through $\delta = 1/N$). ($N = 30\,162$ is the Adult training set.)
#
# ## Where it comes from
#
# The course notes ([§16.2](../docs/math.md#162-where-the-closed-form-comes-from)) reconstruct the closed form from chapter 5's tail bound. Suppose the log-moments of the T steps obey the leading-order bound $\alpha_T(\lambda) \le Tq^2\lambda(\lambda + 1)/z^2$. Take $\lambda = z^2$ and
# require $Tq^2 \le \varepsilon/2$ — that is $T \ge 2k^2/\varepsilon$, because $Tq^2 = k^2/T$. Then
#
# $$\alpha_T(\lambda) - \lambda\varepsilon \le \frac{\varepsilon}{2}(z^2 + 1) - z^2\varepsilon
#   = -\frac{\varepsilon}{2}(z^2 - 1) = -\ln(1/\delta) - \varepsilon \le \ln\delta$$
#
# for exactly the z above, so the tail bound gives δ. Why can z ignore T? Because the only place T enters is
# $Tq^2 = k^2/T$, and **more steps at the same k make it smaller**: the smallest admissible $T = 2k^2/\varepsilon$ is the worst
# case of the whole family. But the moment bound holds only for $\lambda \le z^2 \ln(1/(qz))$ (Abadi et al., Lemma 3), and
# $\lambda = z^2$ needs **$q \cdot z \le 1/e$**; at $T = 2k^2/\varepsilon$, $\varepsilon = 1/2$, $\delta = 1/N$ that is exactly the condition on k. Let us check
# the numbers of the headline plan ($N = 60\,000$, $\varepsilon = 1/2$, $k = 5$, $T = 100$) against the *exact* log-moment:

# %%
n, eps, k = 60_000, 0.5, 5
delta = 1 / n
z = proactive.proactive_noise_multiplier(eps, delta)
T = proactive.minimum_steps(eps, k)
q = k / T
# the moment order must be an integer; floor(z^2) keeps lam <= z^2
lam = math.floor(z**2)
alpha_bound = T * q**2 * lam * (lam + 1) / z**2
alpha_exact = T * moments.event_log_moments(SubsampledGaussianEvent(z, q), (lam,))[0]
print(f"z = {z:.4f}, T = {T}, q = {q:g}, T q^2 = {T * q * q:g} <= eps/2 = {eps / 2:g}, "
      f"lambda = {lam}")
print(f"q z = {q * z:.4f} <= 1/e = {1 / math.e:.4f};  "
      f"lambda <= z^2 ln(1/(qz)) = {z**2 * math.log(1 / (q * z)):.2f}")
print(f"alpha_T(lambda): leading-order bound {alpha_bound:.3f}, exact {alpha_exact:.3f}")
print("tail bound exp(alpha - lambda eps): "
      f"with the bound {math.exp(alpha_bound - lam * eps):.3g}, "
      f"exact {math.exp(alpha_exact - lam * eps):.3g}")
print(f"  vs delta = 1/N = {delta:.3g}")

# %% [markdown]
# At this point the leading-order bound really is above the exact log-moment, and the tail bound lands below
# $\delta = 1/N$. The exact moments give a δ hundreds of times smaller: the closed form is conservative, by design.
#
# ## The conditions, checked
#
# **Exercise 6.3 — does the closed form apply?** Write `closed_form_applies(epsilon, dataset_size, epochs, steps)`
# returning `True` exactly when every condition holds, with $\delta = 1/N$: $\varepsilon \le 1/2$, $T \ge 2k^2/\varepsilon$,
# $(2/e)^2k^2 - 1/2 \ge \ln N$, and $q \cdot z \le 1/e$ with $q = k/T$ and the closed-form z.

# %% exercise=6.3
def closed_form_applies(epsilon, dataset_size, epochs, steps):
    ### BEGIN SOLUTION
    delta = 1 / dataset_size
    z = math.sqrt(2 * (epsilon + math.log(1 / delta)) / epsilon)
    q = epochs / steps
    return bool(epsilon <= 0.5
                and steps >= 2 * epochs**2 / epsilon
                and (2 / math.e) ** 2 * epochs**2 - 0.5 >= math.log(dataset_size)
                and q * z <= 1 / math.e)
    ### END SOLUTION

# %% check=6.3
checks.check_closed_form_applies(closed_form_applies)

# %% [markdown]
# `proactive.proactive_conditions` evaluates every condition; `plan` refuses (or, with `strict=False`, warns)
# when one fails. The last condition, $q \cdot z \le 1/e$, is implied by the others at the smallest T; it is listed
# because it is the one the derivation actually needs.

# %%
print(proactive.proactive_conditions(epsilon=0.5, delta=1 / n, dataset_size=n, epochs=5, steps=100))
print(f"\nsmallest admissible epochs for N = {n:,}: "
      f"k >= (e/2) sqrt(ln N + 1/2) = {proactive.minimum_epochs(n):.3f}, "
      f"so k = {proactive.smallest_admissible_epochs(n)}")

# %% [markdown]
# ## The planner
#
# The pro-active procedure ([notes §16.3](../docs/math.md#163-choosing-the-parameters-before-training)): z from the budget; the epochs k you can afford (at least the smallest
# admissible); $T = \lceil 2k^2/\varepsilon\rceil$, the *smallest* admissible number of steps (fewest updates, least total noise — any
# larger T keeps the guarantee); then $q = k/T$ and $s = kN/T$. `plan` does this, and beside it accounts the very
# same run with the moments, RDP and PLD accountants, and calibrates each of them for the same budget.

# %%
print(proactive.plan(epsilon=0.5, dataset_size=60_000, epochs=5))

# %% [markdown]
# The plan keeps its promise: every accountant certifies at most 0.5. RDP and PLD certify about half of it, and
# would have reached $\varepsilon = 0.5$ with roughly 40 % less noise. (The moments accountant is held back by its integer
# orders $\lambda \le 32$, as its note says: the best λ here would be larger.)
#
# ## Ignoring the conditions breaks the guarantee
#
# The paper says its guarantee is close to tight: it fails when T is about 4 times below $2k^2/\varepsilon$. Keep z and k
# and take $T = 25$ instead of 100 (four times larger batches). `strict=True` refuses; with `strict=False` we see
# what the accountants say:

# %%
try:
    proactive.plan(epsilon=0.5, dataset_size=60_000, epochs=5, steps=25)
except ValueError as exc:
    print("strict=True refuses:\n"
          + textwrap.fill(str(exc), 92, initial_indent="  ", subsequent_indent="  "))

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", proactive.ProactiveConditionWarning)
    quarter = proactive.plan(epsilon=0.5, dataset_size=60_000, epochs=5, steps=25, strict=False)
print(f"\nstrict=False warns ({len(caught)} warning: {caught[0].category.__name__}) "
      "and plans anyway:\n")
print(quarter)

# %% [markdown]
# Now RDP *and* PLD — the tightest accountant we have — certify more than 0.5. PLD's number is an upper bound,
# so by itself it shows only that no accountant here can certify 0.5; the lower end of its discretisation bracket
# (computed below) is also above 0.5, so the run really spends more than its budget.
#
# A second way to leave the conditions: a **single full-batch release** ($q = 1$, $T = 1$). One Gaussian release has
# an exact ε (Balle & Wang; chapter 2), so here there is no doubt at all:

# %%
pld = dp.make_accountant("pld").compose(
    SubsampledGaussianEvent(quarter.noise_multiplier, quarter.sampling_rate), quarter.steps)
low, high = pld.epsilon_bracket(quarter.delta)
print(f"T = 25: PLD bracket [{low:.4f}, {high:.4f}] (optimistic, pessimistic) > 0.5")

z_single = proactive.proactive_noise_multiplier(0.5, 1e-5)
exact = dp.calibrate.gaussian_epsilon_exact(delta=1e-5, noise_multiplier=z_single)
print(f"one full-batch release with z = {z_single:.4f} (eps = 0.5, delta = 1e-5): "
      f"exact epsilon = {exact:.4f} > 0.5")

# %% [markdown]
# ## z does not depend on T — but the tight ε does
#
# Fix the closed-form z ($\varepsilon = 1/2$, $N = 60\,000$) and the epochs $k = 5$, and vary the number of steps T (so $q = k/T$).
# Left: the total ε the tight accountants certify for that z. Right: the z that calibrating on RDP would choose
# for $\varepsilon = 1/2$ at each T, against the constant closed form. (Calibrating on PLD gives slightly less — see the
# plans above — but takes seconds per point at large T, so we calibrate on RDP only.)

# %%
# alt: Two stacked panels against the number of steps T: above, the total epsilon (RDP and PLD) reached with the
#   pro-active noise multiplier, beside the target 0.5; below, the noise multiplier calibrated on RDP beside the
#   closed form's constant z.
k = 5
z = proactive.proactive_noise_multiplier(0.5, 1 / n)
T_grid = np.unique(np.geomspace(k, 2000, pick(16, 6)).round().astype(int))
eps_by = {"rdp": [], "pld": []}
z_rdp = []
for T in T_grid:
    values = experiments.epsilon_for_run(noise_multiplier=z, sampling_rate=k / T, steps=int(T),
                                         delta=1 / n, accountants=("rdp", "pld"))
    for name in eps_by:
        eps_by[name].append(values[name])
    z_rdp.append(dp.calibrate.noise_multiplier(target_epsilon=0.5, target_delta=1 / n,
                                               sampling_rate=k / T, steps=int(T), accountant="rdp"))

plotting.plot_steps_and_privacy(T_grid, eps_by, z_rdp, noise_multiplier=z, epochs=k,
                                target_epsilon=0.5, delta=1 / n)
plt.show()

# %% [markdown]
# The shaded region is $T < 2k^2/\varepsilon$, where the closed form promises nothing. To its right the tight ε keeps falling
# as T grows: with k fixed, more and smaller batches amplify privacy more. That is why one z can serve every
# admissible T — and also why it is conservative: at the smallest admissible T it is already well above what the
# tight accountants need, and the gap widens with T. Calibration is the opposite trade: the least noise for one
# exact schedule, recomputed whenever the schedule changes.
#
# ## Closed form against calibration, for several budgets
#
# On Adult ($N = 30\,162$, $\delta = 1/N$, $k = 5$ epochs, the smallest admissible T for each ε):

# %%
X_train, y_train, X_test, y_test = dp.datasets.load_adult()
N = X_train.shape[0]
k_min = proactive.smallest_admissible_epochs(N)
budgets = pick([0.1, 0.25, 0.5], [0.25, 0.5])
plans = {e: proactive.plan(epsilon=e, dataset_size=N, epochs=k_min) for e in budgets}
names = ("moments", "rdp", "pld")
print(f"N = {N:,}, delta = 1/N = {1 / N:.3g}, k = {k_min} epochs")
print(f"{'':>29}|{'total eps of the plan':^26}|{'z calibrated to the budget':^27}")
print(f"{'eps':>5} {'T':>5} {'q':>7} {'closed z':>9} |" + "".join(f"{n:>8}" for n in names) + "  |"
      + "".join(f"{n:>8}" for n in names))
for e, p in plans.items():
    eps_text = "".join(f"{p.accountant_epsilons[a]:8.4f}" for a in names)
    z_text = "".join(f"{'n/a':>8}" if math.isnan(p.calibrated_noise_multipliers[a])
                     else f"{p.calibrated_noise_multipliers[a]:8.3f}" for a in names)
    print(f"{e:5g} {p.steps:5d} {p.sampling_rate:7.4f} {p.noise_multiplier:9.3f} "
          f"|{eps_text}  |{z_text}")
moments_floor = math.log(N) / 32
for e, p in plans.items():
    if "moments" in p.notes and math.isnan(p.calibrated_noise_multipliers["moments"]):
        print(f"\nmoments at eps = {e:g}: "
              f"n/a because ln(1/delta)/32 = {moments_floor:.3f} > {e:g}\n"
              "  (chapter 5's floor: with lambda <= 32 no amount of noise certifies less)")
wide_orders = {e: moments.MomentsAccountant(moment_orders=np.arange(1, 513)).compose(
    SubsampledGaussianEvent(p.noise_multiplier, p.sampling_rate), p.steps).get_epsilon(p.delta)
    for e, p in plans.items()}
print("\nmoments accountant with orders up to 512:\n"
      + "\n".join(f"  {wide:.4f} at eps = {e:g}" for e, wide in wide_orders.items()))

# %% [markdown]
# Read the table by columns. The "eps" columns are what the accountants certify for the pro-active run. RDP and
# PLD certify a fraction of the budget — a smaller fraction for smaller ε. The moments column is *above* the
# budget wherever the budget is below the moments accountant's floor $\ln(N)/32 = 0.322$ (at $\varepsilon = 0.25$, and 0.1 in
# the full run): not because the closed form fails — its conditions hold and RDP/PLD certify it — but because
# with integer orders $\lambda \le 32$ the moments accountant cannot certify anything below that floor, whatever the
# noise. The closed form's derivation uses the moment of order $\lambda = z^2$ (about 85 at $\varepsilon = 0.25$), far beyond
# Abadi et al.'s $\lambda \le 32$; the same accountant with orders up to 512 (printed last) is within every budget. The
# "z" columns are what calibration would use instead; for the same reason the moments accountant cannot be
# calibrated for the budgets below its floor (n/a).
#
# So why use the closed form at all? Because it is a one-line, schedule-free answer you can give *before* the
# experiment design is fixed, with its conditions checkable by hand. The price is noise: compare the z columns.
#
# ## Training on Adult with the plan
#
# We take $\varepsilon = 1/2$, $\delta = 1/N$ and the smallest admissible k, train `DPLogisticRegression` with the plan's z, q and
# k (so $T = k/q$ steps), and report test accuracy over several seeds, with the ε the tight accountants certify for
# the run. For comparison, the same schedule with the z calibrated on RDP and on PLD — the noise we could have
# saved. (The clip norm and learning rate are the estimator's defaults; they do not affect privacy.)

# %%
plan = plans[0.5]
print(plan)
seeds = np.random.SeedSequence(2024).spawn(pick(5, 2))


def accuracies_with(noise_multiplier, epochs, sampling_rate, delta, accountant):
    accs, clf = [], None
    for s in seeds:
        clf = DPLogisticRegression(epsilon=0.5, delta=delta, noise_multiplier=noise_multiplier,
                                   epochs=epochs, sampling_rate=sampling_rate,
                                   accountant=accountant, random_state=np.random.default_rng(s))
        accs.append(clf.fit(X_train, y_train).score(X_test, y_test))
    return np.array(accs), clf


baseline = experiments.non_private_accuracy((X_train, y_train, X_test, y_test))
# (z, the accountant the estimator reports)
runs = {"pro-active closed form": (plan.noise_multiplier, "rdp"),
        "calibrated on RDP": (plan.calibrated_noise_multipliers["rdp"], "rdp"),
        "calibrated on PLD": (plan.calibrated_noise_multipliers["pld"], "pld")}
print(f"\nnon-private (scikit-learn): test accuracy {baseline:.4f}")
print(f"{'noise':<24}{'z':>7}{'accuracy':>18}   total epsilon at delta = 1/N: RDP / PLD")
for label, (z_run, accountant) in runs.items():
    accs, clf = accuracies_with(z_run, plan.epochs, plan.sampling_rate, plan.delta, accountant)
    spent = dp.compare(clf, delta=plan.delta, accountants=("rdp", "pld"))
    print(f"{label:<24}{z_run:7.3f}   {accs.mean():.4f} ± {accs.std():.4f}   "
          f"{spent['rdp']:.4f} / {spent['pld']:.4f}   "
          f"({clf.steps_} steps, mean of {len(seeds)} seeds)")

# %% [markdown]
# All three runs are (0.5, 1/N)-DP: the first by the closed form *and* the accountants, the other two by their
# accountant. Here the extra noise of the closed form costs little accuracy — logistic regression on Adult is an
# easy problem and about 1 500 examples per batch average the noise away — but it is never free.
#
# One caveat that is not about the formula: **$\delta = 1/N$ is a weak δ.** A mechanism that publishes one randomly
# chosen record in full is $(\ln(N/(N-1)), 1/N)$-DP — $\varepsilon \approx 1/N$, yet it reveals someone's data completely. The usual
# advice is $\delta \ll 1/N$. The accountants tell us what the same run
# guarantees at a smaller δ:

# %%
for d in (1 / N, 1e-6, 1e-8):
    spent = dp.compare(clf, delta=d, accountants=("rdp", "pld"))
    print(f"the PLD-calibrated run at delta = {d:.3g}: "
          f"RDP {spent['rdp']:.4f}, PLD {spent['pld']:.4f}")
acc_pro = dp.compare([(SubsampledGaussianEvent(plan.noise_multiplier, plan.sampling_rate),
                       plan.steps)],
                     delta=1e-8, accountants=("rdp", "pld"))
print(f"the pro-active run at delta = 1e-08: RDP {acc_pro['rdp']:.4f}, PLD {acc_pro['pld']:.4f}")

# %% [markdown]
# The conservative pro-active run still meets $\varepsilon = 0.5$ at $\delta = 10^{-8}$; the calibrated run, tuned to spend exactly
# 0.5 at $\delta = 1/N$, does not. Slack in one guarantee is room in another.
#
# ## The utility graph: trading epochs at a fixed z
#
# The point of fixing z first: the epochs k (and with them T and the batch size) can then be chosen for accuracy
# without touching the privacy analysis, as long as the conditions hold. With the same z for every k:

# %%
# alt: Test accuracy on Adult against the number of epochs k at epsilon 0.5 with the pro-active schedule, with the
#   non-private accuracy as a horizontal line.
epoch_grid = pick([k_min, 8, 12, 20], [k_min, 8])
by_k = []
for kk in epoch_grid:
    p = proactive.plan(epsilon=0.5, dataset_size=N, epochs=kk, accountants=())
    accs, _ = accuracies_with(p.noise_multiplier, p.epochs, p.sampling_rate, p.delta, "rdp")
    by_k.append(accs)
    print(f"k = {kk:2d}: T = {p.steps:4d}, q = {p.sampling_rate:.4f}, "
          f"batch {p.expected_batch_size:7.1f}, z = {p.noise_multiplier:.3f}, "
          f"all conditions hold: {p.conditions.all_hold}, accuracy {accs.mean():.4f}")
noise_per_clip = [plan.noise_multiplier
                  / (proactive.plan(epsilon=0.5, dataset_size=N, epochs=kk, accountants=())
                     .expected_batch_size)
                  for kk in epoch_grid]
ax = plotting.plot_accuracy_vs_epochs(
    epoch_grid, np.array(by_k), epsilon=0.5, delta=1 / N, baseline=baseline,
    right=("noise std of the averaged gradient / C", noise_per_clip))
ax.set_xlabel("epochs k   (T = ⌈2k²/ε⌉ steps, q = k/T; "
              f"the same z = {plan.noise_multiplier:.3f} for every k)")
plt.show()
print("noise std of the averaged gradient, z / (q N) per unit of C: "
      + ", ".join(f"{v:.5f} at k = {kk}" for kk, v in zip(epoch_grid, noise_per_clip)))

# %% [markdown]
# The noise multiplier is the same for every k (in the x label) and every run is (0.5, 1/N)-DP. More epochs means
# more steps with smaller batches ($q = k/T = \varepsilon/(2k)$): more updates, each noisier relative to its batch — the right
# axis shows the noise on the averaged gradient growing in proportion to k. On Adult the extra updates win —
# accuracy rises with k at no privacy cost. This utility graph is how the paper suggests choosing among
# admissible schedules, without ever touching the privacy analysis again.
