# %% [markdown]
# # Chapter 13 — Attacks that measure privacy
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. set up the shadow-model experiment: every record joins each training with probability ½, every model is
# >    attacked by the others, and every (model, record) pair is one trial of the membership game;
# > 2. run LiRA (online and offline) and RMIA against logistic regression and a small network on Adult;
# > 3. read an attack where it matters — its true-positive rate at a false-positive rate of 0.1 % and 1 %, on
# >    log–log axes — and say which records are vulnerable;
# > 4. put an attack under the ceiling its run's ε certifies, and recognise a crossing as a privacy bug;
# > 5. turn an attack into a lower bound on ε with a stated confidence, and say what a failed attack does *not*
# >    prove.
#
# *Prerequisites:* chapter 9. *Time:* about 60 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 23 s in fast mode (`DPEDU_FAST=1`), 3.1 min in full mode.
#
# Chapter 0 opened with a differencing attack on counts and promised that membership-inference attacks "do the
# same kind of subtraction with a trained model". Chapter 9 audited the *mechanism* with crafted canaries and
# white-box gradients. This chapter runs the attack a practitioner worries about: an adversary who trains
# models of their own — **shadow models** — and asks whether a given person was in the training set. The
# methods are the field's standard since 2022: LiRA (Carlini et al. 2022) and RMIA (Zarifzadeh et al. 2024),
# judged by their true-positive rate at a *low* false-positive rate, beside the ceiling that DP puts on them.
#
# One sentence to keep in mind throughout: **an attack's success is a lower bound on what a model leaks; its
# failure is not a proof of privacy.**

# %% [markdown]
# *Uses:* [`adult_membership_pool`](dpedu.lab.audit.adult_membership_pool) ·
# [`train_shadow_models`](dpedu.lab.audit.train_shadow_models) ·
# [`lira_scores`](dpedu.lab.audit.lira_scores) · [`rmia_scores`](dpedu.lab.audit.rmia_scores) ·
# [`membership_attack`](dpedu.lab.audit.membership_attack) ·
# [`attack_audit`](dpedu.lab.audit.attack_audit) ·
# [`plot_attack_grid`](dpedu.lab.plotting.plot_attack_grid) (see the API reference).
# *Notes:* [§20.5](../docs/math.md#205-membership-inference-with-shadow-models-lira-and-rmia) ·
# [§20.6](../docs/math.md#206-the-ceiling-on-a-membership-attack-and-an-audit-from-one) in the mathematical notes.

# %%
import math
import textwrap

import matplotlib.pyplot as plt
import numpy as np

import dpedu as dp
from dpedu.lab import audit
from dpedu.lab.audit.mia_experiment import (ExperimentRun, ExperimentSettings, attack_experiment,
                                            attack_table, privacy_trainer)
from dpedu.course import checks
from dpedu.course.notebook import fast_mode, pick, progress_bar, show_source
from dpedu.lab.plotting import plot_attack_grid

FAST = fast_mode()
MODELS = pick(64, 16)      # shadow models per privacy level: the only things fast mode shrinks
MLP_MODELS = pick(32, 8)
DELTA = 1e-5
pool = audit.adult_membership_pool(n_records=pick(1000, 400), n_canaries=pick(50, 20),
                                   n_population=pick(2000, 500), rng=0)
settings = ExperimentSettings()    # logistic regression; b = 32, 100 epochs, learning rate 1, C = 1
print("fast mode" if FAST else "full mode", f"- {MODELS} shadow models per privacy level")
print(textwrap.fill(pool.description, 100))
print(f"q = {settings.sampling_rate(pool.n):.4f}, T = {settings.steps(pool.n)} steps per training")

# %% [markdown]
# ## The experiment: a pool, random halves, and every record a target
#
# Carlini et al. (2022) fix the design that everyone now uses. Take a **pool** of records. Train K models; for
# each, every record of the pool is included independently with probability ½ (a fair coin per record and per
# model). Every model is then a training on a random half; every record is IN about half of the models and
# OUT of the others. Now take any one model as the *target*: the other K − 1 models are the attacker's shadow
# models, trained on data like the target's, and for each of them the attacker knows which records it saw.
# Leaving one model out at a time, every (model, record) pair becomes one trial of the membership game, with a
# known answer.
#
# **Which records?** Average Adult rows reveal little: a logistic regression has about a hundred weights, fitted
# to hundreds of rows, and no single typical row moves them much. An attacker goes for the records that do
# move them, and so do we, in two groups:
#
# * *natural outliers*: rows that hold a category (a country, an occupation) that at most 3 rows of the pool
#   hold — the model's weight for that category is learned from them alone;
# * *inserted canaries*: held-out rows whose native country is replaced by a country of their own (a column
#   no other record uses) and whose label is flipped. Only the canary informs the weight of its own column,
#   and the rest of the model pushes against its label: the worst case the definition must cover, built from
#   a real row.
#
# The attacker sees one number per model and record: the model's confidence in the record's label, on a logit
# scale, $\phi = \ln\frac{p}{1-p}$. For our models $p = \sigma(y\,f_\theta(x))$, so $\phi = y\,f_\theta(x)$, the signed
# margin. First, shadow models trained **without noise**.

# %%
quiet = privacy_trainer(settings, pool.n, None)          # no clipping, no noise
non_private = audit.train_shadow_models(pool, quiet, n_models=MODELS, rng=1,
                                        progress=progress_bar("shadow models"))
print(non_private.description)
print("signals:", non_private.signals.shape, "(models x records); share IN:",
      round(float(non_private.memberships.mean()), 3))

# %%
# alt: Two panels of histograms of the logit-scaled confidence of the shadow models in one record, IN models
#   against OUT models: for a typical row the two overlap; for a canary the IN models sit far to the right.
typical = int(np.setdiff1d(np.arange(pool.n), pool.group("vulnerable"))[0])
canary = int(pool.groups["canaries"][0])
fig, axes = plt.subplots(2, 1, figsize=(7.3, 5.4), layout="constrained")
for ax, (name, i) in zip(axes, (("a typical Adult row", typical), ("a canary", canary))):
    member = non_private.memberships[:, i]
    phi = non_private.signals[:, i]
    bins = np.linspace(phi.min(), phi.max(), 20)
    ax.hist(phi[~member], bins=bins, alpha=0.6, label="shadow models without it (OUT)")
    ax.hist(phi[member], bins=bins, alpha=0.6, label="shadow models with it (IN)")
    ax.set(title=f"{name} (record {i})", xlabel="logit-scaled confidence in its label",
           ylabel="models")
    ax.legend(fontsize="small")
plt.show()

# %% [markdown]
# ## LiRA: a likelihood ratio per record
#
# The histograms are the whole idea. For each record, the IN models and the OUT models give two distributions
# of $\phi$; the logit scaling makes them close to Gaussian (the paper's observation). LiRA fits
# $\mathcal N(\mu_{\text{in}}, \sigma_{\text{in}}^2)$ and $\mathcal N(\mu_{\text{out}}, \sigma_{\text{out}}^2)$ per record and scores the target's value $\phi$ by
#
# $$\Lambda = \ln\mathcal N(\phi;\ \mu_{\text{in}}, \sigma_{\text{in}}^2) - \ln\mathcal N(\phi;\ \mu_{\text{out}}, \sigma_{\text{out}}^2),$$
#
# the Neyman–Pearson likelihood ratio between the two fitted worlds (**online**: it needs IN models, trained
# with the target record). The **offline** variant uses OUT models only — they can be trained once for every
# future target — and scores by the one-sided test $\ln\Phi((\phi - \mu_{\text{out}})/\sigma_{\text{out}})$: how far into the OUT
# distribution's upper tail the target's value lies. With few shadow models a per-record variance is a noisy
# estimate; the paper then uses one variance for all records, and so does `lira_scores` below 64 models.
# Exercise 13.1 asks you to write the online score of one record.
#
# ## RMIA: compare with the population
#
# RMIA (Zarifzadeh et al. 2024) asks a different question: does the target model like x *more than models
# usually do*, relative to how it likes typical records z? With $\Pr(x \mid \theta) = \sigma(\phi)$ and $\Pr(x)$ its average
# over the reference (shadow) models,
#
# $$\mathrm{LR}_\theta(x, z) = \frac{\Pr(x \mid \theta)/\Pr(x)}{\Pr(z \mid \theta)/\Pr(z)}, \qquad
#   \mathrm{Score}(x) = \Pr_{z}\big[\mathrm{LR}_\theta(x, z) \ge \gamma\big],$$
#
# over population records z that no model saw (held-out Adult rows). Online, $\Pr(x)$ averages the IN and OUT
# models; offline, only OUT models exist and the IN average is approximated by a line,
# $\Pr(x) \approx \tfrac12((1 + a)\,\bar p_{\text{out}}(x) + 1 - a)$, with a chosen by attacking one reference model.
# The paper's selling point: it stays strong with very few reference models.

# %%
attacks = {name: audit.membership_attack(non_private, name, delta=DELTA, rng=0)
           for name in audit.ATTACKS}
print("TPR at FPR 0.1% and 1% [95% bootstrap interval over the target models]")
for name, report in attacks.items():
    for group, roc in report.rocs.items():
        print(f"{name:<13} {group:<11} {roc.row()}")

# %% [markdown]
# ## Reading an attack at a low false-positive rate
#
# An attack says "member" when its score passes a threshold; each threshold gives a false-positive rate (OUT
# pairs called members) and a true-positive rate. An attacker acts on the few records it is *sure* about, so the
# question is the TPR at an FPR of 0.1 % or 1 %, read off the ROC on **log–log** axes (on linear axes that corner
# is a flat line, and the AUC averages it away). The intervals are bootstrap intervals over the target models:
# the pairs of one model share its training, so a model is resampled with all its pairs.
#
# Without noise the vulnerable records are found at a low FPR far more often than chance (TPR = FPR), and far
# more often than the records taken all together: the leakage is concentrated on the records that stand out.
# Which is exactly what differential privacy is about: the guarantee holds for the worst record.
#
# A caveat on RMIA's numbers: its score is a share of the population records, so it takes at most one value more
# than there are of them, and the records that beat *every* z tie at 1. A test cannot split a tie, so when that
# top group holds more non-members than the FPR allows, the TPR at that FPR is 0 — which is why offline RMIA can
# show 0 at 0.1 % here. More population records make the steps finer.
#
# ## The ceiling: what ε allows an attack
#
# Any test of "was x in?" against an $(\varepsilon, \delta)$-DP training has $\mathrm{TPR} \le e^\varepsilon\,\mathrm{FPR} + \delta$ (chapter 9), and, tighter,
# $\mathrm{TPR} \le 1 - \beta(\mathrm{FPR})$ with β the trade-off curve the accountant certifies for the run (chapter 8). Both
# bounds survive averaging over records, models and random halves (notes §20.6), so the attack's pooled ROC
# must lie under them. Now the same experiment at $\varepsilon = 1$ and $\varepsilon = 8$ (PLD accountant,
# $\delta = 10^{-5}$), and the figure this chapter is about.

# %%
private_runs = attack_experiment(pool, settings=settings, epsilons=(1.0, 8.0), n_models=MODELS,
                                 attacks=("lira-online", "rmia-online"), delta=DELTA, rng=2,
                                 progress=progress_bar("shadow models"))
runs = [ExperimentRun("non-private", None, quiet, non_private,
                      {name: attacks[name] for name in ("lira-online", "rmia-online")}),
        *private_runs]
for run in runs:
    if run.epsilon is not None:
        print(f"{run.label}: z = {run.trainer.noise_multiplier:.3f}; above the ceiling:",
              {name: report.violations() for name, report in run.reports.items()})

# %%
# alt: Six log-log ROC panels, rows non-private, epsilon = 1 and epsilon = 8, columns all records and vulnerable
#   records: LiRA and RMIA curves with bootstrap bands; in the private rows the solid trade-off ceiling and the
#   dashed e^epsilon FPR + delta line lie above every attack.
fig = plt.figure(figsize=(7.3, 9.7))
plot_attack_grid({run.label: list(run.reports.values()) for run in runs}, figure=fig)
plt.show()

# %% [markdown]
# At $\varepsilon = 1$ the ceiling hugs the diagonal and the attacks stay near it; at $\varepsilon = 8$ the ceiling leaves a lot of room
# (a TPR of several percent at FPR 0.1 %) and the attacks use little of it. That gap is not slack in the
# accountant that an attacker could exploit: the accountant bounds *every* attack, including one that sees each
# noisy update and crafts its own canary (chapter 9), while ours sees only the final model and attacks
# records of a real dataset. An attack far under the ceiling proves nothing about privacy — only an attack
# above it would prove something, namely a bug.
#
# ## A planted bug: less noise than claimed
#
# Here is a trainer that trains without noise but hands in the ledger of the $\varepsilon = 1$ run: the kind of bug no
# accountant can see, since accountants read ledgers.

# %%
claimed = private_runs[0].shadow.ledger                  # the events of the epsilon = 1 run


def buggy_trainer(X, y, rng):
    """Trains without noise, but reports the ledger of the epsilon = 1 run."""
    result = quiet(X, y, rng)
    result.ledger = claimed
    return result


buggy_trainer.description = "buggy DP-SGD: no noise, claims epsilon = 1"
buggy = audit.membership_attack(
    audit.train_shadow_models(pool, buggy_trainer, n_models=MODELS, rng=3),
    "lira-online", delta=DELTA, rng=0)
print(buggy)

# %% [markdown]
# The attack's TPR interval lies above the ceiling of the claimed ε: with the stated confidence of a bootstrap over
# the models, this training is not $(1, 10^{-5})$-DP. A test that flags exactly this is part of dpedu's test suite
# (`tests/test_membership_attacks.py`), with a planted bug to show that it can fail.
#
# ## An audit from the attack
#
# The intervals above describe the sampling of models; a *proof* needs independent trials. The pairs of one model
# are not independent (they share its training), so `attack_audit` uses one record and independent models: it
# splits the models in halves *before* looking, chooses the record and the threshold on the first half (each
# model attacked by the others of that half), then attacks each model of the second half with fits from the
# first half only. Each of those is an independent trial of "trained with the record or not", and Clopper–Pearson
# turns the counts into a lower bound on ε (chapter 9), beside the accountant's upper bound. With E evaluation
# models it can prove at most about $\ln((E/2)/\ln 40)$: a few dozen models prove little, however leaky.

# %%
for result in (buggy.audit, runs[0].reports["lira-online"].audit,
               runs[2].reports["lira-online"].audit):
    print(result, end="\n\n")
print(f"at most, {MODELS // 2} evaluation models (about {MODELS // 4} per world) prove about "
      f"{math.log((MODELS // 4) / math.log(40)):.2f}")

# %% [markdown]
# Chapter 9's canary audit of the same algorithm ($\varepsilon = 8$) stands beside it: a crafted canary and many pairs of
# trainings, the worst case rather than a record of the pool.

# %%
half = np.random.default_rng(4).random(pool.n) < 0.5
X_half, y_half = pool.X[half], pool.y[half]
canary_run = audit.canary_audit(runs[2].trainer, X_half, y_half, audit.make_canary(X_half, y_half),
                                runs=pick(200, 30), delta=DELTA, accountants=("pld",), rng=5,
                                progress=progress_bar("canary audit"))
print(canary_run)

# %% [markdown]
# ## The table: models, ε, attacks
#
# Every row: the TPR at FPR 0.1 % and 1 % for all records and for the vulnerable ones (95 % bootstrap intervals over
# the models), the audit's lower bound on ε from the attack, and the accountant's ε. The logistic regression
# first, then the 16-unit network (fewer models; in fast mode also fewer epochs).

# %%
mlp_settings = ExperimentSettings(model="mlp", epochs=pick(100.0, 25.0))
mlp_runs = attack_experiment(pool, settings=mlp_settings, epsilons=(None, 8.0), n_models=MLP_MODELS,
                             attacks=("lira-online", "rmia-online"), delta=DELTA, rng=6,
                             progress=progress_bar("MLP shadow models"))
print(attack_table(runs + mlp_runs))

# %% [markdown]
# ## What an attack proves, and what it does not
#
# * A **successful** attack is evidence of leakage: a TPR above the FPR, with an interval that excludes it, shows
#   that the model gives its members away; an audit turns that into a lower bound on ε with a stated
#   confidence. An attack above the ceiling of the claimed ε proves that the claim is false.
# * A **failed** attack proves nothing. It may be the wrong attack (final model only, the wrong statistic), the
#   wrong records, or too few models for the statistics. The accountant's ε is a proof about *every* attack; an
#   attack is one attack.
# * Report attacks at a low FPR, with the vulnerable records apart, and with intervals. "The attack reaches an
#   AUC of 0.52" says nothing about the few records that are found with certainty.

# %% [markdown]
# ## Exercises
#
# **Exercise 13.1 — the LiRA score of one record.** Write `lira_record_score(confidence, in_confidences,
# out_confidences)`: the online LiRA score of one record, from the target model's confidence in the record's label
# and the confidences of shadow models trained with it (IN) and without it (OUT). Logit-scale every confidence,
# fit a Gaussian to each world with the sample mean and the *unbiased* sample variance (`ddof=1`), and return the
# difference of the two log-densities at the target's value.

# %% exercise=13.1
from scipy.stats import norm


def lira_record_score(confidence, in_confidences, out_confidences):
    ### BEGIN SOLUTION
    def logit(p):
        p = np.asarray(p, dtype=float)
        return np.log(p) - np.log1p(-p)

    phi, inside, outside = logit(confidence), logit(in_confidences), logit(out_confidences)
    return float(norm.logpdf(phi, inside.mean(), inside.std(ddof=1))
                 - norm.logpdf(phi, outside.mean(), outside.std(ddof=1)))
    ### END SOLUTION

# %% check=13.1
checks.check_lira_record_score(lira_record_score)

# %% [markdown]
# *Compare with dpedu's version*, which also has the offline test:

# %%
show_source(audit.lira_score)

# %% [markdown]
# **Exercise 13.2 — where the ceiling stops an attack.** An attacker wants to find members with a true-positive rate
# `tpr`. Write `min_fpr_for_tpr(tpr, epsilon, delta)`: the smallest false-positive rate at which an
# (ε, δ)-DP training allows it; below it, the ceiling stops the attack. Both lines of the testing region bound the
# attack. For example `min_fpr_for_tpr(0.5, 1.0, 1e-5)` → `0.18394`: to find half of the members of a
# $(1, 10^{-5})$-DP training, an attacker must accuse at least 18 % of the non-members.

# %% exercise=13.2
def min_fpr_for_tpr(tpr, epsilon, delta):
    ### BEGIN SOLUTION
    return max(0.0, (tpr - delta) * math.exp(-epsilon),
               1.0 - delta - math.exp(epsilon) * (1.0 - tpr))
    ### END SOLUTION

# %% check=13.2
checks.check_min_fpr_for_tpr(min_fpr_for_tpr)
