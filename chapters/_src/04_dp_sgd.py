# %% [markdown]
# # Chapter 4 — DP-SGD
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. write one step of DP-SGD (Abadi et al. 2016, Algorithm 1): Poisson sampling, per-example clipping,
# >    Gaussian noise $\mathcal N(0, z^2C^2I)$, division by the *expected* batch size;
# > 2. explain why each of these four choices is there, and what goes wrong without it;
# > 3. read the distribution of per-example gradient norms and reason about the clip norm C;
# > 4. train logistic regression by DP-SGD on Adult and report its test accuracy together with the **total**
# >    ε of the run, from the RDP accountant;
# > 5. compare the four sampling schemes (Poisson, fixed-size, truncated Poisson, shuffled) and say which
# >    accountant covers which of them under which neighbouring relation — and that shuffled fixed-size batches
# >    are covered by none;
# > 6. say what "one record" means (add/remove or replace-one, one example rather than one user), and catch the
# >    pitfalls that make a ledger lie: steps counted in epochs, shuffling accounted as Poisson, the wrong relation.
#
# Chapter 3 showed that good accountants make many noisy steps affordable. DP-SGD takes that further: each step
# uses only a small random *sample* of the data, which both speeds training up and makes each step cheaper in
# privacy, because a record that was not sampled cannot leak.

# %% [markdown]
# *Uses:* [`dp_sgd`](dpedu.training.dp_sgd) · [`dp_sgd_update`](dpedu.training.dp_sgd_update) ·
# [`poisson_sample`](dpedu.training.poisson_sample) · [`noise_multiplier`](dpedu.calibrate.noise_multiplier) ·
# [`DPLogisticRegression`](dpedu.estimator.DPLogisticRegression) · [`MLP`](dpedu.models.mlp.MLP) ·
# [`relations_table`](dpedu.experiments.relations.relations_table) ·
# [`shuffle_gap`](dpedu.audit.shuffle.shuffle_gap) · [`check_claims`](dpedu.audit.claims.check_claims) (see the API
# reference).
# *Notes:* [§8](../docs/math.md#8-dp-sgd-abadi-et-al-2016-algorithm-1) · [§5](../docs/math.md#5-l2-clipping-and-the-sensitivity-of-a-clipped-sum) · [§11](../docs/math.md#11-amplification-by-subsampling) · [§1.2](../docs/math.md#12-neighbouring-relations) · [§22](../docs/math.md#22-neighbouring-relations-and-sampling-schemes-in-the-accounting) in the mathematical notes.

# %%
import math
import warnings

import matplotlib.pyplot as plt
import numpy as np

import dpedu as dp
from dpedu import checks, plotting
from dpedu.notebook import fast_mode, pick, show_source
from dpedu.accountants import SubsampledGaussianEvent, compare, make_accountant
from dpedu.estimator import DPLogisticRegression
from dpedu.models import logistic
from dpedu.models.mlp import MLP

FAST = fast_mode()
print("fast mode" if FAST else "full mode")

# %%
X_train, y_train, X_test, y_test = dp.datasets.load_adult()
n, d = X_train.shape
print(f"{n} training rows, {d} features")

# %% [markdown]
# ## Algorithm 1
#
# With sampling rate q, clip norm C, noise multiplier z and learning rate η, for $t = 1, \dots, T$:
#
# 1. **sample** a batch $B_t$: every record joins independently with probability q;
# 2. **clip** the gradient of every example in the batch to norm at most C;
# 3. **add noise**: sum the clipped gradients and add $\mathcal N(0, z^2C^2I)$;
# 4. **average and step**: divide by the expected batch size qn and move θ against the result.
#
# $$\theta_t = \theta_{t-1} - \frac{\eta}{qn}\Bigl(\sum_{i\in B_t}\mathrm{L2\_clip}\bigl(\nabla\ell(\theta_{t-1}; x_i, y_i), C\bigr)
# + \mathcal N(0, z^2C^2 I)\Bigr)$$
#
# dpedu's step, `dp.training.dp_sgd_update` (the one `dp_sgd`'s loop calls), reads like the list above; you write one step yourself in Exercise 4.3,
# and its listing follows that exercise.
#
# The whole run's privacy depends only on (q, z, T) and on the neighbouring relation (add/remove). It does not
# depend on η, C, the model or its size: those change *what* is released, not how well it is hidden.
#
# ## 1. Poisson sampling
#
# Each record flips its own coin with probability q, afresh at every step. Exercise 4.1 asks for the indices of
# the records whose coin came up, in increasing order: `poisson_sample(5, 1.0, np.random.default_rng(7))` →
# `[0, 1, 2, 3, 4]` (at $q = 1$ every coin comes up, whatever the generator), and with coins drawn as `rng.random(n) < q`,
# `poisson_sample(10, 0.3, np.random.default_rng(0))` → `[1, 2, 3]`.
#
# So the batch size is random, Binomial(n, q), and it can be 0. That is not a nuisance but the point: the
# privacy amplification theorems — and every subsampled-Gaussian accountant in dpedu (moments, RDP, PLD) —
# analyse exactly this mechanism. A record is absent from a step with probability 1 − q, and nobody can tell
# from the output whether it was in. An empty batch is an ordinary step: it releases pure noise and is counted.

# %%
q = 0.01
rng = np.random.default_rng(4)
sizes = rng.binomial(n, q, size=pick(2000, 300))        # the size of a Poisson batch: Binomial(n, q)
print(f"q = {q}, n = {n}: batch sizes {sizes.min()} .. {sizes.max()}, mean {sizes.mean():.1f} (q n = {q * n:.1f}),")
print(f"  std {sizes.std():.1f} (sqrt(n q (1 - q)) = {math.sqrt(n * q * (1 - q)):.1f})")
small = rng.binomial(100, 0.02, size=pick(20_000, 5000))
print(f"n = 100, q = 0.02: {np.mean(small == 0):.1%} of batches are empty (exactly (1 - q)^n = {0.98 ** 100:.1%})")

# %% [markdown]
# ### Shuffled fixed-size batches are a different mechanism
#
# Most training code shuffles the data once per epoch and cuts it into batches of exactly m records. Every
# record is then used exactly once per epoch — the opposite of an independent coin. The Poisson analyses do
# not cover it (Abadi et al. say openly that their implementation shuffled while the analysis assumed
# Poisson), and no accountant in dpedu pretends otherwise. `dp_sgd(sampling="shuffle")` runs, warns, and
# records an event that every accountant refuses:

# %%
# shows-warning: the warning dp_sgd gives, as its message only
import textwrap

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    shuffled = dp.training.dp_sgd(X_train, y_train, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=q, steps=5,
                                  sampling="shuffle", rng=0)
print(f"{caught[0].category.__name__}:")
print(textwrap.fill(str(caught[0].message), 92, initial_indent="  ", subsequent_indent="  "))
print("ledger:", shuffled.ledger)
refused = compare(shuffled, delta=1e-5, accountants=("rdp", "pld"))
for name, note in refused.notes.items():
    print(f"\n{name}: n/a\n" + textwrap.fill(note, 92, initial_indent="  ", subsequent_indent="  "))

# %% [markdown]
# ### The four schemes side by side
#
# `dp_sgd` offers four ways to draw $B_t$, at the same *expected* batch size $m = qn$
# ([`dp.training.plan`](dpedu.training.plan) has the table of samplers, divisors and events):
#
# * `"poisson"`: every record flips its own coin with probability q (Algorithm 1);
# * `"fixed"`: exactly $m = \mathrm{round}(qn)$ records, drawn uniformly without replacement, afresh each step;
# * `"truncated_poisson"`: a Poisson sample, cut down to a uniformly random `max_batch_size` records when it is
#   larger: fixed memory, as training code wants;
# * `"shuffle"`: shuffle once per epoch and cut it into batches of m, as most training code does.
#
# Here are the batch sizes of 200 steps of each on Adult, $q = 0.01$. The cap of the truncated scheme is set one
# standard deviation above qn so that its pile-up is visible; in practice one chooses it a few standard
# deviations up, where it is rarely reached.

# %%
cap = round(q * n + math.sqrt(n * q * (1 - q)))
schemes = {"poisson": "add_remove", "fixed": "replace_one", "truncated_poisson": "add_remove",
           "shuffle": "add_remove"}
scheme_runs = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dp.training.ShuffledBatchesWarning)   # shown above
    for sampling, relation in schemes.items():
        scheme_runs[sampling] = dp.training.dp_sgd(
            X_train, y_train, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=q, steps=200, sampling=sampling,
            relation=relation, max_batch_size=cap if sampling == "truncated_poisson" else None, rng=4)
fig, axes = plt.subplots(4, 1, figsize=(7, 6.4), sharex=True)
bins = np.arange(240, 372, 3) - 0.5
for ax, (sampling, run) in zip(axes, scheme_runs.items()):
    sizes = run.details["batch_sizes"]
    ax.hist(sizes, bins=bins, color="#0072B2")
    ax.axvline(q * n, color="gray", linestyle=":")
    ax.set_title(f'sampling="{sampling}": sizes {sizes.min()} .. {sizes.max()}', fontsize=10, loc="left")
    ax.set_ylabel("steps")
    print(f"{sampling:>17}: batch sizes {sizes.min()} .. {sizes.max()}, mean {sizes.mean():6.1f}; "
          f"divisor {run.details['divisor']:g}")
axes[-1].set_xlabel(f"batch size (dotted: q n = {q * n:.1f}; cap of the truncated scheme {cap})")
fig.tight_layout()
plt.show()

# %% [markdown]
# Only Poisson batches vary like $\mathrm{Binomial}(n, q)$; fixed and shuffled batches always hold m records,
# and the truncated ones pile up at the cap. All four divide by a public constant, never by the drawn size.
# Each run records a different event (which neighbouring relation each one states, and why: below). What
# does each cost? `dpedu.experiments.relations` accounts one step of every scheme, at the same expected batch
# size, under both neighbouring relations (explained just below), for $T = 1000$ steps (10 epochs) at $z = 1$,
# and prints "refused" where an accountant has no theorem for the pair. Five of the seven accountants are
# shown; the advanced and strong composition theorems are left out for width:

# %%
from dpedu.experiments.relations import format_relations_table, relations_table

table_accountants = ("sequential", "moments", "rdp", "zcdp", "pld")
eps_table = relations_table(dataset_size=n, batch_size=round(q * n), noise_multiplier=1.0, steps=1000, delta=1e-5,
                            accountants=table_accountants)
eps_table = {key: row for key, row in eps_table.items() if key[0] != "full batch"}
print(f"epsilon at delta = 1e-5, z = 1, m = {round(q * n)} of n = {n}, T = 1000 steps:\n")
print(format_relations_table(eps_table))
# a lower bound for fixed-size batches under replace-one: the pair of docs/math.md §22.3 (Poisson, multiplier z / 2)
fixed_lower = make_accountant("pld").compose(SubsampledGaussianEvent(0.5, round(q * n) / n), 1000).get_epsilon(1e-5)
print(f"\nfixed-size batches, replace-one: epsilon at least {fixed_lower:.2f} (a pair of neighbouring datasets)")

# %% [markdown]
# Read it row by row.
#
# * **Poisson, add/remove** is what Algorithm 1 assumes, and every accountant that handles sampling covers
#   it; zCDP refuses, since subsampling has no zCDP bound.
# * **Truncated Poisson** is covered by the RDP accountant under add/remove ([§22.5](../docs/math.md#225-truncated-poisson-sampling-rdp-addremove)); with a cap
#   rarely reached (the table puts it at 2m) it costs what Poisson sampling costs.
# * **Fixed-size batches** are covered only under replace-one ([§11.2](../docs/math.md#112-sampling-without-replacement-replace-one), [§22.3](../docs/math.md#223-fixed-size-sampling-without-replacement-replace-one-rdp)), by the RDP accountant
#   (Wang, Balle & Kasiviswanathan 2019), and the number is far larger. That is not only a loose theorem: when
#   every other record has gradient $-C$ and the changed one goes from $+C$ to $-C$, a batch's sum is known
#   except for a shift of $2C$ whenever that record is drawn, so one step is at least as revealing as a Poisson
#   step with multiplier $z/2$. That pair gives the lower bound printed under the table, itself several times
#   the Poisson numbers. Poisson sampling under replace-one ([§22.4](../docs/math.md#224-poisson-subsampled-gaussian-under-replace-one-pld)) also costs more than under add/remove,
#   but much less.
# * **Shuffled batches** are refused by every accountant under both relations.
#
# Refused is not "free". How private *are* shuffled batches? No accountant gives an upper bound, but a
# *lower* bound can be computed: Chua et al. (2024) pick two neighbouring datasets in which every other record
# has the same gradient, so a fixed-size batch's sum is known except for the one record, and the true ε of
# shuffled training is at least that pair's ([§22.6](../docs/math.md#226-shuffled-batches-a-monte-carlo-lower-bound)). `dpedu.audit.shuffle` estimates it by Monte Carlo, with a
# 95 % confidence bound, beside the Poisson upper bound (PLD) at $q = 1/b$ for $b = 100$ batches per epoch, one
# epoch, $\delta = 10^{-3}$:

# %%
from dpedu.audit.shuffle import shuffle_gap
from dpedu.gaussian import gaussian_epsilon_exact
from dpedu.plotting.shuffle import plot_shuffle_gap

gap_zs = pick([0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0], [0.5, 1.0, 2.0, 4.0])
gap = {}
fig, axes = plt.subplots(2, 1, figsize=(7, 7.5), sharex=True)
for ax, (relation, height) in zip(axes, (("add_remove", 1.0), ("replace_one", 2.0))):
    upper, lower = shuffle_gap(gap_zs, batches_per_epoch=100, epochs=1, delta=1e-3,
                               n_samples=pick(200_000, 20_000), relation=relation, rng=5)
    gap[relation] = upper, lower
    one_step = [gaussian_epsilon_exact(1e-3, z / height) for z in gap_zs]
    plot_shuffle_gap(gap_zs, upper, lower, one_step, delta=1e-3, relation=relation, ax=ax)
    print(f"{relation:>11}:  z     Poisson upper   shuffled lower")
    for z, u, low in zip(gap_zs, upper, lower):
        print(f"{'':>13}{z:4g} {u:12.3f} {low:16.3f}")
axes[0].set_xlabel("")
fig.tight_layout()
plt.show()

# %% [markdown]
# Under add/remove the shuffled lower bound stays just below the Poisson number at every z here, which proves
# nothing either way. Under replace-one it lies *above* the Poisson upper bound, by a factor of several at
# $z \le 1$: quoting the Poisson ε for a run that shuffled would claim more privacy than the run has. Use
# `sampling="poisson"` when you want a guarantee. (The dotted grey line is an upper bound for the chosen pair of
# datasets only, one Gaussian step per epoch; it bounds the Monte Carlo estimate, not shuffled training.)
#
# ### Neighbouring relations: what "one record" means
#
# Differential privacy compares the outputs on two *neighbouring* datasets
# ([§1.2](../docs/math.md#12-neighbouring-relations)), and there are two common meanings of "neighbouring":
#
# * **add/remove**: $D'$ is $D$ with one record added or deleted. Then the size n itself may differ by one, and
#   the clipped sum $\sum_{i\in B}\mathrm{L2\_clip}(g_i, C)$ changes by at most one clipped vector: sensitivity
#   $C$.
# * **replace-one**: $D'$ is $D$ with one record changed; n is public. The sum changes by $u - u'$ with
#   $\|u\|, \|u'\| \le C$: sensitivity $2C$ (take $u' = -u$).
#
# A replacement is a removal followed by an addition, so a guarantee under add/remove gives one under
# replace-one at twice the ε and a larger δ (group privacy). For a full-batch Gaussian the conversion is exact: the
# noise $\mathcal N(0, z^2C^2I)$ on a sum of sensitivity $2C$ is the add/remove Gaussian with multiplier $z/2$
# ([§22.2](../docs/math.md#222-full-batch-releases-under-replace-one)). Events always store z per unit of C, and the accountant does the halving:

# %%
from dpedu.events import GaussianEvent, SampledWithoutReplacementGaussianEvent, add_remove_equivalent

full = GaussianEvent(4.0, relation="replace_one")
print(f"{full!r}\n  is accounted as {add_remove_equivalent(full)!r}")
full_eps = {relation: make_accountant("rdp").compose(GaussianEvent(4.0, relation=relation), 100).get_epsilon(1e-5)
            for relation in ("add_remove", "replace_one")}
print(f"100 full-batch steps, z = 4 (RDP): epsilon {full_eps['add_remove']:.3f} under add/remove, "
      f"{full_eps['replace_one']:.3f} under replace-one")
try:
    make_accountant("rdp").compose(SampledWithoutReplacementGaussianEvent(1.0, round(q * n), n), 1000)
except ValueError as error:
    print("\nfixed-size batches under add/remove:\n" + textwrap.fill(str(error), 92, initial_indent="  ",
                                                                   subsequent_indent="  "))

# %% [markdown]
# **Why fixed-size batches need replace-one.** Remove a record from a Poisson sample and the batch simply
# lacks it: one clipped vector fewer, exactly the add/remove difference the subsampling theorems hide. Remove a
# record from a batch of exactly m and the batch still holds m records: another record takes its place. The
# two outputs differ by a *swap*, $u$ against $u'$, which is a replace-one difference, and the analyses of
# sampling without replacement are stated for it ([§11.2](../docs/math.md#112-sampling-without-replacement-replace-one)). So an ε for fixed-size batches is only
# meaningful as a replace-one ε, and dpedu's accountants refuse the add/remove version by name rather than
# quote a number that no theorem supports.
#
# **The unit of privacy is one example.** "One record" is one row of the training data: one example, one
# gradient clipped to C. If a person contributes k rows (several visits, several messages), the guarantee
# protects each row, and the person only through group privacy: for pure DP the group of k rows gets
# $k\varepsilon$ ([§1.4](../docs/math.md#14-post-processing-and-groups)), and under $(\varepsilon, \delta)$ the δ grows with k as well. Protecting users
# needs one clipped contribution per *user*: group the rows by user before clipping. A privacy statement
# should say which relation and which unit its ε is for.
#
# ### Pitfalls that the batches give away
#
# The accountant trusts the ledger it is given. Three common mistakes change what the sampler does without
# changing what the ledger claims: shuffled batches accounted as Poisson, steps counted in *epochs* (E epochs
# are E/q steps, every one a release), and class-balanced oversampling accounted at the nominal rate q.
# `dpedu.audit.claims.check_claims` compares the batches a run actually drew with the ledger it claims
# (batch-size totals and spread, each record's number of batches, the number of steps). Here it is on a small
# imbalanced data set, each planted bug beside the correct code it pretends to be:

# %%
from dpedu.audit.bugs import bug_hunt
from dpedu.audit.claims import CLAIM_BUGS, check_claims, claim_hunt

for bug in CLAIM_BUGS:
    for correct in (False, True):
        for line in str(claim_hunt(bug, correct=correct, rng=0)).splitlines():
            print(textwrap.fill(line, 100, subsequent_indent="      "))
print("\nthe four runs of the histogram above:")
for sampling, run in scheme_runs.items():
    print(f"  {sampling:>17}: {check_claims(run)}")

# %% [markdown]
# A fourth mistake is in the clipping, not the sampling: clipping the mean gradient of each *microbatch* of
# two records to C, while claiming per-example privacy. A record can then flip its microbatch's clipped
# gradient from $+C$ to $-C$, sensitivity $2C$. The batches look right, so `check_claims` cannot see it; the
# white-box audit (`dpedu.audit.bugs.bug_hunt`, explained in the auditing chapter) can, by proving a lower
# bound on ε above the claimed upper bound:

# %%
audits = {}
for correct in (False, True):
    audit = audits[correct] = bug_hunt("microbatch_clipped_as_one", correct=correct, runs=pick(200, 100), rng=0)
    verdict = "CAUGHT" if audit.epsilon_lower > audit.upper_bounds["pld"] else "consistent"
    print(f"{'correct' if correct else 'buggy'} clipping: epsilon lower bound {audit.epsilon_lower:.2f}, claimed "
          f"(PLD) {audit.upper_bounds['pld']:.2f}: {verdict}")

# %% [markdown]
# The last pitfall is the relation: an ε computed under add/remove, quoted for a run whose neighbours are
# replace-one (fixed-size batches, a public n), is too small; for the 100 full-batch steps above it would be
# 14.1 where the run has 35.1. The accountants catch this one themselves when the event states its relation,
# as above: they refuse a fixed-size batch under add/remove.

# %% [markdown]
# ## 2. Per-example clipping
#
# Why clip? The noise must hide any one record, so it is calibrated to how much one record can move the sum
# of gradients — its sensitivity. Without a bound that is unlimited: for a neural network a single strange
# example can have an enormous gradient. Clipping each example's gradient to norm C makes the sensitivity
# exactly C under add/remove (one clipped vector more or less), whatever the data. It must be
# *per example*: clipping the batch's sum or mean bounds the wrong thing, since one record could still
# dominate it.
#
# What does clipping cut on Adult? The histogram shows the per-example gradient norms of the logistic model at
# the start ($\theta = 0$, where every norm is $\lVert x\rVert/2$) and at a model trained below by DP-SGD. We look at the private
# training data here *to learn*; choosing C from these numbers (Abadi et al. suggest the median of the
# unclipped norms) would itself leak, unless it is done on public data or paid for with privacy budget.

# %%
z_demo = dp.calibrate.noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sampling_rate=q, steps=1000)
demo = dp.training.dp_sgd(X_train, y_train, noise_multiplier=z_demo, clip_norm=1.0, sampling_rate=q, steps=1000,
                          learning_rate=4.0, rng=1)
fig, ax = plt.subplots(figsize=(7, 4))
for label, theta in (("theta = 0", np.zeros(d)), ("after DP-SGD (1000 steps)", demo.theta)):
    norms = np.linalg.norm(logistic.per_example_gradients(theta, X_train, y_train), axis=1)
    ax.hist(norms, bins=80, alpha=0.6, label=f"{label}: median {np.median(norms):.2f}")
    print(f"{label:>26}: clipped at " + ", ".join(f"C = {c:g}: {np.mean(norms > c):5.1%}" for c in (0.1, 0.5, 1.0, 2.0)))
for c in (0.1, 0.5, 1.0, 2.0):
    ax.axvline(c, color="gray", linestyle=":")
ax.set(yscale="log", xlabel="per-example gradient norm", ylabel="number of training rows (log scale)",
       title="Per-example gradient norms, logistic regression on Adult (dotted: C = 0.1, 0.5, 1, 2)")
ax.legend()
plt.show()

# %% [markdown]
# Training makes most gradients small (well-classified rows), but a long tail of badly classified rows keeps
# norms near $\lVert x\rVert$ — those are the rows clipping acts on.
#
# **The effect of C.** The noise has standard deviation $zC$, so a large C means more noise for the same
# privacy; a small C shrinks most gradients, which biases and slows the descent. Because ε does not depend on
# C, we can compare clip norms at a *fixed* total ε — here for two noise multipliers (two budgets), with
# $q = 0.01$, $T = 1000$ steps (10 epochs) and $\eta = 4$. The grey line is the same loop with $C = 1$ and no noise at
# all (`noise_multiplier=0`, not private):

# %%
steps = 1000
budgets = (1.0, 4.0)
zs = [dp.calibrate.noise_multiplier(target_epsilon=eps, target_delta=1e-5, sampling_rate=q, steps=steps)
      for eps in budgets]
clip_norms = pick([0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0], [0.05, 0.5, 4.0])
seeds = np.random.SeedSequence(2024).spawn(pick(2, 1))
accuracies = np.array([[[logistic.accuracy(dp.training.dp_sgd(
    X_train, y_train, noise_multiplier=z, clip_norm=c, sampling_rate=q, steps=steps, learning_rate=4.0,
    rng=np.random.default_rng(s)).theta, X_test, y_test) for s in seeds] for z in zs] for c in clip_norms])
# the same loop with the same clipping but no noise (noise_multiplier=0 is dp_sgd's non-private sanity setting)
noiseless = dp.training.dp_sgd(X_train, y_train, noise_multiplier=0.0, clip_norm=1.0, sampling_rate=q, steps=steps,
                               learning_rate=4.0, rng=0)
baseline = logistic.accuracy(noiseless.theta, X_test, y_test)
ax = plotting.plot_clipping_noise_tradeoff(clip_norms, zs, accuracies, epsilons=budgets, delta=1e-5,
                                           baseline=baseline)
ax.set_title(f"DP-SGD on Adult: q = {q}, T = {steps} steps, learning rate 4")
plt.show()

# %% [markdown]
# Too small a C and the steps are too short to get anywhere in 1000 steps; too large and the noise $zC$ drowns
# the signal, more so for the smaller budget. In between there is a broad plateau. (C and η interact: with
# clipping active, the step length is roughly $\eta C/(qn)\cdot(\text{batch size})$, so a smaller C can partly be made up by a
# larger η. Tuning either on the private data costs privacy too — chapter 7.)
#
# ## 3. Gaussian noise, and 4. dividing by the expected batch size
#
# The clipped sum has L2 sensitivity C, so $\mathcal N(0, z^2C^2I)$ makes it the Gaussian mechanism with noise multiplier
# z (chapter 2) — on a Poisson sample, which is what `SubsampledGaussianEvent(z, q)` records.
#
# Then we divide by **qn**, a public constant, and not by $|B_t|$, the size of the batch actually drawn. Why?
# Under add/remove neighbours, $|B_t|$ is one larger exactly when the extra record was sampled; that is precisely
# the fact subsampling is supposed to hide. Dividing by $|B_t|$ would put this *un-noised* count into every update
# — the analysis no longer applies — and with an empty batch it divides by zero. Dividing by qn is
# post-processing of the noisy sum, so it is free. In our setting the noise on the *averaged* gradient has
# standard deviation zC/(qn) per coordinate:

# %%
print(f"z = {z_demo:.3f}, C = 1, q n = {q * n:.1f}: noise std on the averaged gradient {z_demo / (q * n):.5f}")
print(f"  per coordinate, norm about {z_demo / (q * n) * math.sqrt(d):.3f} over {d} coordinates")
print(f"batch sizes in the run above: {demo.details['batch_sizes'].min()} .. {demo.details['batch_sizes'].max()}")
print(f"  (a diagnostic on the private data: dp_sgd uses the divisor {demo.details['divisor']:.2f})")

# %% [markdown]
# Larger expected batches (larger q) shrink this noise in proportion, but each step then costs more privacy,
# and an epoch has fewer steps ($T = \text{epochs}/q$). Abadi et al. suggest a lot size around $\sqrt{n}$ as a start.
#
# ## The learning rate
#
# η multiplies the released noisy average, so it is post-processing: runs that differ only in η have
# *identical* ledgers and the same ε. It matters for accuracy only. Too small, and the run ends before it
# converges; too large, and the noise in every step (η zC/(qn)) makes θ wander:

# %%
runs = {f"learning rate {lr:g}": dp.training.dp_sgd(X_train, y_train, noise_multiplier=z_demo, clip_norm=1.0,
                                                    sampling_rate=q, steps=steps, learning_rate=lr, loss_every=20,
                                                    rng=1)
        for lr in (0.5, 4.0, 64.0)}
(event, count), = demo.ledger
print("identical ledgers:", all(r.ledger == demo.ledger for r in runs.values()),
      f"- {count} x SubsampledGaussianEvent(z = {event.noise_multiplier:.4f}, q = {event.sampling_rate:g})")
for label, r in runs.items():
    print(f"{label:>18}: test accuracy {logistic.accuracy(r.theta, X_test, y_test):.4f}")
ax = plotting.plot_loss_curves({label: (r.details["loss_steps"], r.losses) for label, r in runs.items()},
                               xlabel="step", logy=True)
ax.set_title(f"DP-SGD on Adult, same privacy for every curve (z = {z_demo:.2f}, q = {q}, C = 1)")
plt.show()

# %% [markdown]
# (The training loss is computed on the private data and is not itself private: it is for you, not for
# publication.)
#
# ## Training on Adult: accuracy and total ε
#
# Now the real workflow: fix the total budget $(\varepsilon, \delta = 10^{-5})$ and the run's shape ($q = 0.01$, 10 epochs), let
# `dpedu.calibrate.noise_multiplier` find the smallest z the RDP accountant accepts, train, and report the test
# accuracy with the ε the accountant certifies for the run that actually happened. PLD is shown beside it: it
# is tighter, which tells us the RDP number is a safe over-estimate.

# %%
epsilons = pick([0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0], [0.1, 1.0, 8.0])
print(" target eps        z   eps (RDP)   eps (PLD)   test accuracy")
table_acc = []
for eps in epsilons:
    z = dp.calibrate.noise_multiplier(target_epsilon=eps, target_delta=1e-5, sampling_rate=q, steps=steps)
    accs, result = [], None
    for s in seeds:
        result = dp.training.dp_sgd(X_train, y_train, noise_multiplier=z, clip_norm=1.0, sampling_rate=q,
                                    steps=steps, learning_rate=4.0, rng=np.random.default_rng(s))
        accs.append(logistic.accuracy(result.theta, X_test, y_test))
    table_acc.append(accs)
    spent = compare(result, delta=1e-5, accountants=("rdp", "pld"))
    print(f"{eps:10g}   {z:6.3f}   {spent['rdp']:9.4f}   {spent['pld']:9.4f}   {np.mean(accs):.4f}")
ax = plotting.plot_accuracy_vs_epsilon(epsilons, table_acc, delta=1e-5, baseline=baseline,
                                       baseline_label="same loop without noise (C = 1, not private)",
                                       label=f"DP-SGD, q = {q}, {steps} steps, C = 1 (RDP accountant)")
ax.set_title("DP-SGD logistic regression on Adult")
plt.show()
gaps = baseline - np.mean(table_acc, axis=1)
print("accuracy below the noiseless run: " + ", ".join(f"{g:+.4f} at epsilon {e:g}" for e, g in zip(epsilons, gaps)))

# %% [markdown]
# The x-axis is the **total** ε of each run. From about $\varepsilon = 1$ on, the noise costs almost nothing here: DP-SGD is
# as accurate as the same loop without noise (a fully converged non-private model, chapter 1, is about one
# point better still). At the smallest budgets the noise does cost accuracy. Logistic regression on 30 000 rows
# is an easy case: few parameters, and hundreds of rows in every batch to average the noise over.
#
# ### The packaged version: `DPLogisticRegression`
#
# The same algorithm as a scikit-learn estimator. It adds an intercept (its gradient is clipped and noised
# like the rest), calibrates z for the budget you give, trains with its tuned defaults, and reports the ε
# its accountant certifies in `epsilon_` and the events in `ledger_`:

# %%
clf = DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=0).fit(X_train, y_train)
print(f"test accuracy {clf.score(X_test, y_test):.4f}; z = {clf.noise_multiplier_:.3f}, q = {clf.sampling_rate_}, "
      f"T = {clf.steps_} steps; epsilon_ = {clf.epsilon_:.4f} (RDP, delta = {clf.delta_:g})")
print(f"tuned defaults used for epsilon = 1: C = {clf.clip_norm_}, learning rate {clf.learning_rate_}, "
      f"{clf.epochs_} epochs")
print(compare(clf, delta=1e-5, accountants=("rdp", "pld")))

# %% [markdown]
# ### A small neural network
#
# Nothing in DP-SGD is specific to logistic regression. For a network the gradient is *not* bounded by $\lVert x\rVert$,
# so per-step gradient clipping is the only option (`clip_mode="inputs"` is refused). One hidden layer of 16 tanh
# units, same privacy accounting — the ledger again depends only on (z, q, T):

# %%
net = MLP(n_features=d, hidden_units=16)
mlp_steps = pick(1000, 300)
z_mlp = dp.calibrate.noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sampling_rate=q, steps=mlp_steps)
mlp_run = dp.training.dp_sgd(X_train, y_train, noise_multiplier=z_mlp, clip_norm=1.0, sampling_rate=q,
                             steps=mlp_steps, learning_rate=1.0, model=net, rng=0)
mlp_eps = compare(mlp_run, delta=1e-5, accountants=("rdp",))["rdp"]
print(f"{net}: {net.n_params} parameters, {mlp_steps} steps, z = {z_mlp:.3f}")
print(f"test accuracy {np.mean(net.predict(mlp_run.theta, X_test) == y_test):.4f} at epsilon = {mlp_eps:.3f} "
      f"(RDP, delta = 1e-5)")

# %% [markdown]
# On Adult a linear model is already about as good as it gets, so the network does not win here; its value
# is to show that the *same* step and the same accountant work unchanged for a non-convex model.
#
# ## Exercises
#
# **Exercise 4.1 — Poisson sampling.** Write `poisson_sample(n, sampling_rate, rng)` returning the *indices*
# of the records in the batch (an integer array, possibly empty). Use the generator you are given.

# %% exercise=4.1
def poisson_sample(n, sampling_rate, rng):
    ### BEGIN SOLUTION
    return np.flatnonzero(rng.random(n) < sampling_rate)
    ### END SOLUTION

# %% check=4.1
checks.check_poisson_sample(poisson_sample)

# %% [markdown]
# *Compare with dpedu's version:*

# %%
show_source(dp.training.poisson_sample)

# %% [markdown]
# **Exercise 4.2 — the clipped sum.** Write `clipped_gradient_sum(per_example_gradients, clip_norm)`: clip each
# row (one example's gradient) to L2 norm at most C, then sum the rows. An empty batch (zero rows) must give
# the zero vector.

# %% exercise=4.2
def clipped_gradient_sum(per_example_gradients, clip_norm):
    ### BEGIN SOLUTION
    G = np.asarray(per_example_gradients, dtype=float)
    norms = np.linalg.norm(G, axis=1, keepdims=True)
    return (G * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))).sum(axis=0)
    ### END SOLUTION

# %% check=4.2
checks.check_clipped_gradient_sum(clipped_gradient_sum)

# %% [markdown]
# **Exercise 4.3 — one DP-SGD step.** Write `dp_sgd_step(theta, X_batch, y_batch, *, clip_norm, noise_multiplier,
# expected_batch_size, learning_rate, rng)` for logistic regression (labels in $\{-1, +1\}$) on a batch that has
# already been sampled: per-example gradients, clipped sum, Gaussian noise, divide by the expected batch size,
# step. You may use your `clipped_gradient_sum` and `scipy.special.expit`.

# %% exercise=4.3
def dp_sgd_step(theta, X_batch, y_batch, *, clip_norm, noise_multiplier, expected_batch_size, learning_rate, rng):
    ### BEGIN SOLUTION
    from scipy.special import expit

    margins = y_batch * (X_batch @ theta)
    gradients = (-y_batch * expit(-margins))[:, None] * X_batch
    noisy_sum = clipped_gradient_sum(gradients, clip_norm) + rng.normal(0.0, noise_multiplier * clip_norm,
                                                                        size=theta.shape)
    return theta - learning_rate * noisy_sum / expected_batch_size
    ### END SOLUTION

# %% check=4.3
checks.check_dp_sgd_step(dp_sgd_step)

# %% [markdown]
# *Compare with dpedu's version*, for any model (the clipped sum for logistic regression is computed in
# `dpedu.models.logistic`, chapter 2):

# %%
show_source(dp.training.dp_sgd_update)

# %% [markdown]
# **Exercise 4.4 — steps and ε.** Write `steps_and_epsilon(epochs, sampling_rate, noise_multiplier, delta)`
# returning the pair (number of steps T, total ε of the run by the RDP accountant). Use
# `make_accountant("rdp")` and the event of one DP-SGD step.

# %% exercise=4.4
def steps_and_epsilon(epochs, sampling_rate, noise_multiplier, delta):
    ### BEGIN SOLUTION
    steps = round(epochs / sampling_rate)
    accountant = make_accountant("rdp").compose(SubsampledGaussianEvent(noise_multiplier, sampling_rate), steps)
    return steps, accountant.get_epsilon(delta)
    ### END SOLUTION

# %% check=4.4
checks.check_steps_and_epsilon(steps_and_epsilon)

# %% [markdown]
# Try `steps_and_epsilon(100, 0.01, 4.0, 1e-5)`: Abadi et al.'s setting ($q = 0.01$, $z = 4$, 100 epochs). The
# paper reported $\varepsilon = 1.26$ with its moments accountant; chapter 5 shows why RDP certifies less for the same run.

# %% [markdown]
# **Exercise 4.5 — from a training loop to a ledger.** A training script says: "10 epochs, batch size 250,
# 60,000 examples". Run privately with Poisson sampling at the same expected batch size, it needs a sampling rate
# q and a number of steps T for its ledger. Write `steps_and_sampling_rate(epochs, batch_size, dataset_size)`
# returning the pair (T, q).

# %% exercise=4.5
def steps_and_sampling_rate(epochs, batch_size, dataset_size):
    ### BEGIN SOLUTION
    sampling_rate = batch_size / dataset_size
    return round(epochs / sampling_rate), sampling_rate
    ### END SOLUTION

# %% check=4.5
checks.check_steps_and_sampling_rate(steps_and_sampling_rate)

# %% [markdown]
# **Exercise 4.6 — the event of a fixed-size batch.** A training loop draws, at every step, exactly m of the n
# records uniformly without replacement, and adds $\mathcal N(0, z^2C^2I)$ to their clipped sum. Write
# `fixed_batch_event(noise_multiplier, batch_size, dataset_size)` returning the event of one such step, from
# `dpedu.events`, so that an accountant can price it. Think about the neighbouring relation.

# %% exercise=4.6
def fixed_batch_event(noise_multiplier, batch_size, dataset_size):
    ### BEGIN SOLUTION
    return SampledWithoutReplacementGaussianEvent(noise_multiplier, batch_size, dataset_size, relation="replace_one")
    ### END SOLUTION

# %% check=4.6
checks.check_fixed_batch_event(fixed_batch_event)
