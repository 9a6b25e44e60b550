# %% [markdown]
# # Chapter 9 — Auditing: does the guarantee hold?
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. run a loss-threshold membership-inference attack and read its true- and false-positive rates;
# > 2. state the hypothesis-testing view of differential privacy — every test of "D or D′?" has
# >    $\mathrm{FPR} + e^\varepsilon\cdot\mathrm{FNR} \ge 1 - \delta$ — and turn a test's error rates into the ε they prove;
# > 3. bound an error rate measured on finitely many trainings with an exact Clopper–Pearson interval, and
# >    say why the threshold must be chosen on separate runs (or paid for with a Bonferroni correction);
# > 4. audit DP-SGD with a canary: an empirical **lower** bound on ε beside the accountants' **upper** bounds;
# > 5. recognise a failed audit as a bug — and find one;
# > 6. audit from every observed update (a Gaussian bound on μ) and from a single training run.
#
# *Prerequisites:* chapter 8. *Time:* about 125 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 19 s in fast mode (`DPEDU_FAST=1`), 46 s in full mode.
#
# Every chapter so far *proved* a guarantee: an accountant says "this run is (ε, δ)-DP". A proof is about the
# algorithm on paper. Code can differ from the paper (a noise scale off by a factor C, a batch divided by its
# real size, a sampler that is not Poisson), and no accountant notices. An **audit** attacks the code and
# measures how much it leaks. It can never prove privacy, but it can prove a *lack* of privacy: if the
# attack does better than ε allows, something is wrong. The method follows Jagielski, Ullman & Oprea (2020)
# and Nasr et al. (2021).

# %% [markdown]
# *Uses:* [`make_canary`](dpedu.lab.audit.make_canary) · [`loss_threshold_attack`](dpedu.lab.audit.loss_threshold_attack) ·
# [`canary_audit`](dpedu.lab.audit.canary_audit) · [`epsilon_lower_bound`](dpedu.lab.audit.epsilon_lower_bound) ·
# [`epsilon_from_rates`](dpedu.lab.audit.epsilon_from_rates) (see the API reference).
# *Notes:* [§20](../docs/math.md#20-auditing-lower-bounds-on-epsilon) · [§20.2](../docs/math.md#202-white-box-gaussian-audit-μ-gdp-from-observed-updates) · [§20.3](../docs/math.md#203-one-training-run-steinke-nasr--jagielski-2023) in the mathematical notes.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import dpedu as dp
from dpedu.lab import audit
from dpedu.course import checks
from dpedu.course.notebook import fast_mode, pick, progress_bar, show_source
from dpedu.accountants import GaussianEvent
from dpedu.accountants.calibrate import gaussian_epsilon_exact

FAST = fast_mode()
# trainings per world in each audit: the only thing fast mode shrinks
RUNS = pick(1000, 200)
DELTA = 1e-5
print("fast mode" if FAST else "full mode",
      f"- {RUNS} trainings with and {RUNS} without the canary per audit")

# %% [markdown]
# ## Attack 1: membership inference by loss threshold
#
# The simplest attack against a trained model (Yeom et al. 2018): a model fits its training records better
# than records it has never seen, so guess "member" when the loss is small,
#
# $$\widehat{\text{member}}(x, y) = [\,\ell(\theta; x, y) \le \tau\,], \qquad \tau = \text{mean training loss}.$$
#
# It works best against an **overfitted** model. Take 40 training rows with 30 features and run gradient
# descent for a long time; 40 rows from the same distribution stay outside.

# %%
# alt: Two stacked histograms of the logistic loss of members (training rows) and non-members, one panel per model,
#   with the attack's threshold dotted.
X_all, y_all = dp.datasets.make_toy(n=80, d=30, rng=0, signal=3.0)
members, nonmembers = (X_all[:40], y_all[:40]), (X_all[40:], y_all[40:])
overfit = dp.training.gradient_descent(*members, 500, learning_rate=5.0).theta
private = dp.training.dp_sgd(*members, noise_multiplier=20.0, clip_norm=1.0, sampling_rate=1.0,
                             steps=5, rng=0)
print(f"DP model: eps = {dp.compare(private, DELTA, accountants=('pld',))['pld']:.2f} "
      f"at delta = {DELTA:g} (PLD)")

# stacked: column-wide panels
fig, axes = plt.subplots(2, 1, figsize=(7.3, 6.5), layout="constrained")
for ax, (name, theta) in zip(axes, (("non-private, 500 steps", overfit),
                                    ("DP-SGD, z = 20", private.theta))):
    attack = audit.loss_threshold_attack(theta, *members, *nonmembers)
    bins = np.linspace(0, max(attack.nonmember_losses.max(), attack.member_losses.max()), 25)
    ax.hist(attack.member_losses, bins=bins, alpha=0.6, label="members (training rows)")
    ax.hist(attack.nonmember_losses, bins=bins, alpha=0.6, label="non-members")
    ax.axvline(attack.threshold, color="black", linestyle=":",
               label="threshold = mean training loss")
    ax.set(title=name, xlabel="logistic loss", ylabel="records")
    print(f"{name:>24}: TPR {attack.tpr:.2f}, FPR {attack.fpr:.2f}, "
          f"advantage {attack.advantage:+.2f}, AUC {attack.auc:.2f}")
axes[0].legend(fontsize="small")
plt.show()

# %% [markdown]
# The overfitted model gives its members away; the noisy one does not (it also learned far less). But this is
# an *average-case* measurement on one dataset: most records are typical, and the 40 records of one model are
# not independent trials, so the rates cannot be turned into a statement about ε with a stated confidence.
# Differential privacy is a promise about the **worst** record. To test it we need the worst record — and
# many independent trainings.
#
# ## The hypothesis-testing view of DP
#
# Picture the attacker's task as a test: "was the model trained on D or on D′ = D + one record?". Any test
# has a false-positive rate (says D′ when it was D) and a false-negative rate (says D when it was D′).
# Kairouz, Oh & Viswanath (2015) showed that a mechanism is (ε, δ)-DP **if and only if** every test satisfies
#
# $$\mathrm{FPR} + e^{\varepsilon}\,\mathrm{FNR} \ge 1-\delta \qquad\text{and}\qquad
#   \mathrm{FNR} + e^{\varepsilon}\,\mathrm{FPR} \ge 1-\delta .$$
#
# So a test that achieves rates (FPR, FNR) *proves*
#
# $$\varepsilon \ \ge\ \max\Big(\ln\frac{1-\delta-\mathrm{FPR}}{\mathrm{FNR}},\ \ln\frac{1-\delta-\mathrm{FNR}}{\mathrm{FPR}}\Big).$$
#
# The figure shows which (FPR, FNR) pairs each ε allows: the attacker lives above the curve, chapter 8's
# trade-off curve $f_{\varepsilon, \delta}$ of one $(\varepsilon, \delta)$ pair.
#
# For example, a test that calls 1 % of the outsiders "in" and misses half of the members proves more than it
# seems: the second term gives $\ln(0.49999/0.01)$. Exercise 9.1 asks for this bound as
# `epsilon_from_rates(fpr, fnr, delta)`: `epsilon_from_rates(0.01, 0.5, 1e-5)` → `3.912`,
# `epsilon_from_rates(0.5, 0.5, 1e-5)` → `0.0` (guessing proves nothing).

# %%
# alt: The false-negative rate against the false-positive rate that an (epsilon, delta)-DP mechanism allows, one line
#   per epsilon, with the guessing diagonal.
fig, ax = plt.subplots(figsize=(5.2, 5))
fpr = np.linspace(0, 1, 400)
for eps in (0.5, 1.0, 2.0, 4.0):
    fnr = np.maximum.reduce([np.zeros_like(fpr), 1 - DELTA - math.exp(eps) * fpr,
                             (1 - DELTA - fpr) * math.exp(-eps)])
    ax.plot(fpr, fnr, label=f"eps = {eps:g}")
ax.plot([0, 1], [1, 0], color="gray", linestyle="--", label="guessing (eps = 0)")
ax.set(xlabel="false-positive rate", ylabel="false-negative rate", xlim=(0, 1), ylim=(0, 1),
       title=f"Rates an (eps, {DELTA:g})-DP mechanism allows")
ax.legend()
plt.show()

# %% [markdown]
# ## From counts to a bound: Clopper–Pearson
#
# We never know the true rates, only counts: out of n trainings *without* the record, k were called "with".
# An audit must not overstate ε, so it replaces each rate by an **upper** confidence bound. The exact
# Clopper–Pearson (1934) bound is a Beta quantile,
#
# $$\overline{p} = B^{-1}(1-\alpha;\ k+1,\ n-k) \qquad(\overline{p} = 1 \text{ if } k = n),$$
#
# which holds with probability $\ge 1 - \alpha$ for every true rate. Two bounds (FPR and FNR) must hold *at once*, so
# each gets $\alpha/2$ (Bonferroni). With zero errors the bound is $1 - (\alpha/2)^{1/n} \approx \ln(2/\alpha)/n$: even a perfect
# attack proves at most about $\ln(n/\ln(2/\alpha))$ — more trainings, sharper audits.
#
# dpedu's `audit.epsilon_lower_bound` combines the two Clopper–Pearson bounds; you write it in Exercise 9.3 as
# `audit_lower_bound(false_positives, n_out, false_negatives, n_in, delta, confidence)`. With zero errors at
# 95 % confidence, 100, 1000 and 10 000 runs per world prove
# `audit_lower_bound(0, 100, 0, 100, 1e-5, 0.95)` → `3.28`,
# `audit_lower_bound(0, 1000, 0, 1000, 1e-5, 0.95)` → `5.60` and
# `audit_lower_bound(0, 10000, 0, 10000, 1e-5, 0.95)` → `7.90`: each tenfold of the runs adds about $\ln 10 \approx 2.3$.
#
# **The threshold is part of the test.** Choosing τ to make the rates look best on the same runs that measure
# them is a hidden multiple comparison. `canary_audit` avoids it by splitting: τ is chosen on the first half
# of the runs and the rates are measured on the second half, with one fixed τ. (The alternative — m thresholds
# fixed *before* looking, each bound at level α/(2m) — is `threshold=[...]`.)

# %% [markdown]
# ### Exercises: from rates to a lower bound
#
# Before dpedu's audits turn rates into bounds, write the three steps yourself.
#
# **Exercise 9.1 — ε from error rates.** Write `epsilon_from_rates(fpr, fnr, delta)`: the smallest $\varepsilon \ge 0$ for
# which an (ε, δ)-DP mechanism allows a test with these (positive) rates. Remember both inequalities.

# %% exercise=9.1
def epsilon_from_rates(fpr, fnr, delta):
    ### BEGIN SOLUTION
    return max(0.0, math.log((1 - delta - fpr) / fnr) if 1 - delta - fpr > 0 else 0.0,
               math.log((1 - delta - fnr) / fpr) if 1 - delta - fnr > 0 else 0.0)
    ### END SOLUTION

# %% check=9.1
checks.check_epsilon_from_rates(epsilon_from_rates)

# %% [markdown]
# **Exercise 9.2 — Clopper–Pearson.** Write `clopper_pearson_upper(k, n, confidence)`: the one-sided upper
# confidence bound on a proportion after k successes in n trials. Use `scipy.stats.beta.ppf`.

# %% exercise=9.2
from scipy.stats import beta

def clopper_pearson_upper(k, n, confidence):
    ### BEGIN SOLUTION
    if k == n:
        return 1.0
    return float(beta.ppf(confidence, k + 1, n - k))
    ### END SOLUTION

# %% check=9.2
checks.check_clopper_pearson_upper(clopper_pearson_upper)

# %% [markdown]
# **Exercise 9.3 — the audit's lower bound.** Write `audit_lower_bound(false_positives, n_out, false_negatives,
# n_in, delta, confidence)`: a lower bound on ε that holds with probability at least `confidence`. Both rate
# bounds must hold at the same time.

# %% exercise=9.3
def audit_lower_bound(false_positives, n_out, false_negatives, n_in, delta, confidence):
    ### BEGIN SOLUTION
    level = 1 - (1 - confidence) / 2               # Bonferroni: alpha/2 for each of the two rates
    fpr_upper = 1.0 if false_positives == n_out else float(beta.ppf(level, false_positives + 1,
                                                                    n_out - false_positives))
    fnr_upper = 1.0 if false_negatives == n_in else float(beta.ppf(level, false_negatives + 1,
                                                                   n_in - false_negatives))
    terms = [0.0]
    for a, b in ((fpr_upper, fnr_upper), (fnr_upper, fpr_upper)):
        if 1 - delta - a > 0:
            terms.append(math.log((1 - delta - a) / b))
    return max(terms)
    ### END SOLUTION

# %% check=9.3
checks.check_audit_lower_bound(audit_lower_bound)

# %% [markdown]
# *Compare with dpedu's version*, which can also correct for having tried several thresholds:

# %%
show_source(audit.epsilon_lower_bound)

# %% [markdown]
# ## Attack 2: a canary audit
#
# Now the worst case. Following Nasr et al. (2021), the attacker *crafts* the extra record, the **canary**,
# to be as visible as possible. Our synthetic data have a feature that no real row uses (a rare one-hot
# category, say), and the canary is a large vector along it:

# %%
X, y = audit.make_audit_data(n=100, d=3, rng=0)
canary = audit.make_canary(X, y)
print("canary x =", np.round(canary[0], 3), " label", canary[1])
print("largest |value| of the last feature in the real data:", np.abs(X[:, -1]).max())

# %% [markdown]
# Why this canary? The real rows' gradients $-y\,x\,\sigma(-m)$ lie in the span of the rows, so along the unused
# feature they are exactly 0. The canary's gradient is clipped to norm C, the most DP-SGD lets one record
# contribute. The model's weight on that feature is therefore "C per step if the canary is in, plus noise",
# and "noise" if not: the attacker's score sees the canary and the Gaussian noise and nothing else. A
# "natural" outlier with an unusual label (`kind="mislabeled"`) is weaker, because its gradient competes with
# the whole dataset.
#
# The audit trains `RUNS` times with and `RUNS` times without the canary (seeds from one `SeedSequence`),
# scores each model by its margin on the canary, and converts the rates into ε. First the sanity check: a
# model trained **without noise** must be caught.

# %%
non_private = audit.canary_audit(
    audit.dp_sgd_trainer(noise_multiplier=0.0, sampling_rate=1.0, steps=4),
    X, y, canary, runs=RUNS, delta=DELTA, rng=1, progress=progress_bar("audit"))
print(non_private)

# %% [markdown]
# Every model with the canary scores higher than every model without: zero errors, so the audit proves as much
# as this many runs can prove (about $\ln(n/\ln 40)$ with n evaluation runs per world). Now DP-SGD with full
# batches, $z = 1$ and $T = 4$ steps. For full batches the accountants are exact (chapter 3): T Gaussian steps are
# one Gaussian with $\mu = \sqrt{T}/z = 2$.

# %%
# alt: Histograms of the canary score of DP-SGD (z = 1, q = 1, T = 4) trained with and without the canary, with the
#   threshold dotted.
dp_run = audit.canary_audit(audit.dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4),
                            X, y, canary, runs=RUNS, delta=DELTA, rng=1,
                            progress=progress_bar("audit"))
print(dp_run)
print(f"  exact Gaussian epsilon: {gaussian_epsilon_exact(DELTA, 1.0 / math.sqrt(4)):.4f}")

fig, ax = plt.subplots(figsize=(7, 3.8))
bins = np.linspace(min(dp_run.scores_out.min(), dp_run.scores_in.min()),
                   max(dp_run.scores_out.max(), dp_run.scores_in.max()), 40)
ax.hist(dp_run.scores_out, bins=bins, alpha=0.6, label="trained without the canary")
ax.hist(dp_run.scores_in, bins=bins, alpha=0.6, label="trained with the canary")
ax.axvline(dp_run.threshold, color="black", linestyle=":", label="threshold (from the first half)")
ax.set(xlabel="score: the model's margin on the canary direction", ylabel="trainings",
       title="DP-SGD, z = 1, q = 1, T = 4")
ax.legend(fontsize="small")
plt.show()

# %% [markdown]
# The two histograms are the two Gaussians of the privacy analysis, made visible. The lower bound is well
# below the accountants' ε: the gap is statistics (the true $\varepsilon \approx 10$ would need millions of runs to confirm at
# $\delta = 10^{-5}$), not slack in the accountant. **lower ≤ upper** is the consistency check an implementation must
# pass.
#
# ## A failed audit is a bug
#
# Here is a plausible implementation mistake: noise drawn with standard deviation z instead of $z\cdot C$. With $C = 1$
# the two agree and every test passes; with $C = 10$ the noise is ten times too small, while the ledger still
# claims z.

# %%
def buggy_dp_sgd(X, y, rng, *, z=4.0, C=10.0, steps=2):
    """DP-SGD whose noise std is z (the bug) instead of z*C; its ledger claims GaussianEvent(z)."""
    result = dp.training.dp_sgd(X, y, noise_multiplier=z / C, clip_norm=C, sampling_rate=1.0,
                                steps=steps, learning_rate=0.01, rng=rng)
    result.ledger = [(GaussianEvent(z), steps)]                 # what the buggy code would report
    return result

buggy_dp_sgd.description = ("buggy DP-SGD: claims z = 4, C = 10, T = 2; "
                            "its noise std is z instead of z*C")

buggy = audit.canary_audit(buggy_dp_sgd, X, y, audit.make_canary(X, y, norm=50.0), runs=RUNS,
                           delta=DELTA, rng=2, progress=progress_bar("audit"))
print(buggy)

# %% [markdown]
# The audit proves more leakage than the claimed (ε, δ) allows — with 95% confidence, the claim is false. No
# accountant could have found this: they only read the ledger. (The fix is `noise_std = z * C`.)
#
# ## How tight is the audit?
#
# With full batches the canary audit is nearly optimal for its number of runs. With Poisson subsampling
# ($q < 1$) it stays far below the accountants. The accountants assume the attacker sees *every* noisy step,
# and whether the canary was sampled in each. Our attacker sees only the final model, where the canary's
# random inclusions blur into the noise. Closing that gap is a research topic; the gap does not mean the
# accountant is loose for attackers who can see intermediate models.

# %%
rows = []
for z, q, steps in ((2.0, 1.0, 1), (0.5, 1.0, 4), (1.0, 0.1, 20)):
    r = audit.canary_audit(audit.dp_sgd_trainer(noise_multiplier=z, sampling_rate=q, steps=steps),
                           X, y, canary, runs=RUNS, delta=DELTA, rng=3,
                           progress=progress_bar(f"audit z={z}"))
    rows.append((z, q, steps, r.epsilon_lower, r.upper_bounds["rdp"], r.upper_bounds["pld"],
                 r.consistent))
print(f"{'z':>4} {'q':>4} {'T':>3}  {'audit lower':>11}  {'RDP':>7}  {'PLD':>7}  consistent")
for z, q, steps, lower, rdp, pld, ok in rows:
    print(f"{z:>4g} {q:>4g} {steps:>3d}  {lower:>11.3f}  {rdp:>7.3f}  {pld:>7.3f}  {ok}")

# %% [markdown]
# ## Seeing every update: the white-box audit
#
# The accountants' attacker sees **every** noisy update $\tilde g_t = \sum \mathrm{clip}(g_i) + \mathcal N(0, \sigma^2I)$, not only the last model.
# Give our auditor the same view (Nasr et al. 2023). The canary's gradient lives on the feature nobody else
# uses, so on that coordinate every other record contributes exactly 0. The canary's coordinate of each
# update is therefore $C + \mathcal N(0, \sigma^2)$ when it is in and $\mathcal N(0, \sigma^2)$ when it is out: **the privacy loss you can
# see**. Summed over T full-batch steps it is $\mathcal N(TC, T\sigma^2)$ against $\mathcal N(0, T\sigma^2)$, a μ-GDP pair with $\mu = \sqrt{T}\cdot C/\sigma$
# (Dong, Roth & Su 2019). The audit estimates μ from the runs with a one-sided 95% bound and reads ε off
# the exact Gaussian curve. First write the two steps of that reading yourself.

# %% [markdown]
# **Exercise 9.4 — a lower bound on the shift.** Each run's statistic is Gaussian with known standard
# deviation σ: mean $m_{\text{in}}$ with the canary, $m_{\text{out}}$ without. Write `shift_lower_bound(mean_in, mean_out, sigma,
# n_in, n_out, confidence)`: a one-sided lower confidence bound on $\mu = (m_{\text{in}} - m_{\text{out}})/\sigma$ from the two sample
# means of `n_in` and `n_out` runs.

# %% exercise=9.4
from scipy.stats import norm

def shift_lower_bound(mean_in, mean_out, sigma, n_in, n_out, confidence):
    ### BEGIN SOLUTION
    return (mean_in - mean_out) / sigma - norm.ppf(confidence) * math.sqrt(1 / n_in + 1 / n_out)
    ### END SOLUTION

# %% check=9.4
checks.check_gaussian_shift_lower_bound(shift_lower_bound)

# %% [markdown]
# **Exercise 9.5 — from μ to ε.** Write `epsilon_from_gdp(mu, delta)`: the smallest ε with
# $\Phi(-\varepsilon/\mu + \mu/2) - e^\varepsilon\cdot\Phi(-\varepsilon/\mu - \mu/2) \le \delta$ (the left side decreases in ε; bisect).

# %% exercise=9.5
def epsilon_from_gdp(mu, delta):
    ### BEGIN SOLUTION
    def delta_of(eps):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
    lo, hi = 0.0, 1.0
    while delta_of(hi) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_of(mid) > delta else (lo, mid)
    return hi
    ### END SOLUTION

# %% check=9.5
checks.check_epsilon_from_gdp(epsilon_from_gdp)

# %% [markdown]
# Now the white-box audit of the chapter's training, which takes both steps:

# %%
show_source(audit.canary_update_scores)
white = audit.whitebox_audit(
    audit.observed_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4), X, y, canary,
    runs=RUNS, delta=DELTA, rng=1)
print(white)
print(f"  the final-model audit of the same training proved eps >= {dp_run.epsilon_lower:.3f}")

# %% [markdown]
# The same training, the same number of runs: the white-box bound is several times the final-model one and
# close to the exact $\varepsilon \approx 10$, because a Gaussian's mean is estimated far more precisely than a tail rate. The
# price is a *model*: the bound assumes the run statistic is Gaussian with one variance in both worlds, which
# holds exactly for correct code with a Dirac canary. With Poisson sampling ($q < 1$) the canary's coordinate
# is a mixture, $(1 - q)\cdot\mathcal N(0, \sigma^2) + q\cdot\mathcal N(C, \sigma^2)$, and no μ describes it. `whitebox_audit` then scores each run
# by the likelihood ratio of the claimed mixture and falls back on Clopper–Pearson, which needs no model
# but can prove at most about $\ln(n/\ln 40)$ from n runs.
#
# ## One training run, many canaries
#
# Many-run audits cost hundreds of trainings. Steinke, Nasr & Jagielski (2023) insert m canaries, each with
# probability ½, train **once**, and guess membership of the k most and k least confident canaries. An
# (ε, δ)-DP training cannot make the guesses much better than randomized response: v correct out of r has
# $P[V \ge v] \le P[\mathrm{Bin}(r, e^\varepsilon/(1+e^\varepsilon)) \ge v]$ plus a δ term (their main result). The largest ε this rejects is the
# lower bound. First write the test yourself.

# %% [markdown]
# **Exercise 9.6 — the one-run bound.** With $\delta = 0$, write `one_run_bound(r, v, confidence)`: the ε at which
# $P[\mathrm{Bin}(r, e^\varepsilon/(1+e^\varepsilon)) \ge v]$ equals $1 - \text{confidence}$, or 0 if v correct guesses out of r are not significant
# even at $\varepsilon = 0$. Use `scipy.stats.binom.sf`.

# %% exercise=9.6
from scipy.stats import binom

def one_run_bound(r, v, confidence):
    ### BEGIN SOLUTION
    def p_value(eps):
        return binom.sf(v - 1, r, 1 / (1 + math.exp(-eps)))
    alpha = 1 - confidence
    if p_value(0.0) > alpha:
        return 0.0
    lo, hi = 0.0, 1.0
    while p_value(hi) <= alpha:
        lo, hi = hi, 2 * hi
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if p_value(mid) <= alpha else (lo, mid)
    return lo
    ### END SOLUTION

# %% check=9.6
checks.check_one_run_bound(one_run_bound)

# %% [markdown]
# Now one training run of DP-SGD on Adult, audited both ways:

# %%
adult = dp.datasets.load_adult()
sample = np.random.default_rng(0).choice(adult.X_train.shape[0], 3000, replace=False)
for mode in ("whitebox", "blackbox"):
    one = audit.one_run_audit(adult.X_train[sample], adult.y_train[sample], m=500,
                              target_epsilon=8.0, delta=DELTA, sampling_rate=0.1, steps=100,
                              mode=mode, X_canary_pool=adult.X_test,
                              y_canary_pool=adult.y_test, rng=0)
    print(one)

# %% [markdown]
# One training proves a positive ε in the white-box form (each canary owns a feature; its coordinate in every
# update is scored); the black-box form (mislabeled held-out rows, scored by the final model's loss) proves
# little or nothing, as the paper found. Each canary carries at most one bit, so the one-run bound stays
# well below the many-run audits; its selling point is the cost.
#
# ## Hunting planted bugs
#
# `audit.buggy_trainer` holds teaching-only DP-SGD variants that are wrong on purpose and still claim the
# correct ledger. For each, `audit.bug_hunt` picks the neighbouring datasets that expose it (the definition
# lets the auditor choose the worst case) and runs the white-box audit; the correct code runs in the same
# setting as a control.

# %%
for bug, why in audit.BUGS.items():
    caught = audit.bug_hunt(bug, runs=pick(200, 100), delta=DELTA, rng=5)
    control = audit.bug_hunt(bug, correct=True, runs=pick(200, 100), delta=DELTA, rng=5)
    print(f"{bug:<25} claims eps {caught.upper_bounds['pld']:6.3f}; "
          f"audited >= {caught.epsilon_lower:7.3f} "
          f"({'CAUGHT' if not caught.consistent else 'missed'}); "
          f"correct code: >= {control.epsilon_lower:.3f}")

# %% [markdown]
# Every bug is caught at 95% confidence from a couple of hundred cheap runs, and the correct code is not.
# `clip_after_sum` needed a special dataset: a record whose gradient the canary flips, showing the
# sensitivity $2C$; `noise_reused` needed $q < 1$, so that the canary's presence changes between steps while
# the shared noise cancels in the differences. `divide_by_batch_size` needed both $q < 1$ and a tiny dataset
# with many unused features: one record, so that $|B_t| = 2$ happens only with the canary, and 200 coordinates
# that carry nothing but noise, whose scale $\sigma/|B_t|$ gives $|B_t|$ away at every step.
