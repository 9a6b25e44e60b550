# %% [markdown]
# # Chapter 10 — Does the accounting match the code?
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. compare the six ways training code draws its batches (Poisson, fixed-size, truncated Poisson, shuffled,
# >    balls-in-bins, fixed batches from one split) and say which accountant covers which of them under which
# >    neighbouring relation — and that shuffled fixed-size batches are covered by none, balls-in-bins by the PLD
# >    accountant alone, under add/remove, and fixed batches not under add/remove at all;
# > 2. read a Monte Carlo *lower* bound on the ε of shuffled batches beside the Poisson upper bound;
# > 3. say what "one record" means (add/remove, replace-one or zero-out; one example rather than one user), why
# >    fixed-size batches need replace-one, and why DP-FTRL's fixed batches hold under zero-out but not add/remove;
# > 4. read a literal-neighbour audit: δ measured at the claimed ε of every learner, on worst-case pairs of
# >    neighbouring datasets, and what add/remove assumes about n;
# > 5. catch the pitfalls that make a ledger lie: steps counted in epochs, shuffling accounted as Poisson,
# >    oversampling at a nominal rate, the wrong relation, clipping a microbatch as one record — and five
# >    mistakes reported in real libraries' issue trackers.
#
# *Prerequisites:* chapter 4 (9 helps). *Time:* about 60 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 18 s in fast mode (`DPEDU_FAST=1`), 50 s in full mode.
#
# Chapter 4 ran Algorithm 1 exactly as Abadi et al. analyse it: every record joins every batch by its own coin
# flip. An accountant certifies the mechanism its theorem is about, not the code you ran. This chapter asks
# whether the two are the same when the code draws its batches the way most training code does.

# %% [markdown]
# *Uses:* [`plan_dp_sgd`](dpedu.textbook.training.plan_dp_sgd) · [`run_dp_sgd`](dpedu.textbook.training.run_dp_sgd) · [`relations_table`](dpedu.lab.experiments.relations.relations_table) ·
# [`shuffle_gap`](dpedu.lab.audit.shuffle.shuffle_gap) · [`check_claims`](dpedu.lab.audit.claims.check_claims) ·
# [`bug_hunt`](dpedu.lab.audit.bugs.bug_hunt) · [`balls_in_bins_epsilon`](dpedu.accountants.balls_in_bins.balls_in_bins_epsilon) ·
# [`pitfall_hunt`](dpedu.lab.audit.pitfalls.pitfall_hunt) · [`neighbour_table`](dpedu.lab.audit.neighbours.neighbour_table) ·
# [`audit_ftrl`](dpedu.lab.audit.neighbours.audit_ftrl) · [`MLP`](dpedu.textbook.models.mlp.MLP) (see the API reference).
# *Notes:* [§1.2](../docs/math.md#12-neighbouring-relations) · [§11](../docs/math.md#11-amplification-by-subsampling) · [§20.7](../docs/math.md#207-literal-neighbours-δ-measured-at-the-claimed-ε) · [§22](../docs/math.md#22-neighbouring-relations-and-sampling-schemes-in-the-accounting) · [§27](../docs/math.md#27-pitfalls-from-real-code) in the mathematical notes.

# %%
import math
import re
import textwrap
import warnings

import matplotlib.pyplot as plt
import numpy as np

import dpedu as dp
from dpedu.course import checks
from dpedu.course.notebook import fast_mode, pick
from dpedu.accountants import SubsampledGaussianEvent, compare, make_accountant
from dpedu.accountants.balls_in_bins import balls_in_bins_epsilon
from dpedu.lab.audit.bugs import bug_hunt
from dpedu.lab.audit.claims import CLAIM_BUGS, check_claims, claim_hunt
from dpedu.lab.audit.neighbour_convex import audit_output_perturbation
from dpedu.lab.audit.neighbours import (audit_ftrl, format_neighbour_table, neighbour_table,
                                        removal_movement)
from dpedu.lab.audit.pitfalls import PITFALLS, pitfall_hunt
from dpedu.lab.audit.shuffle import shuffle_gap
from dpedu.ground.events import (GaussianEvent, SampledWithoutReplacementGaussianEvent,
                                 add_remove_equivalent)
from dpedu.ground.events_allocation import BallsInBinsGaussianEvent
from dpedu.lab.experiments.relations import (balls_in_bins_note, balls_in_bins_row,
                                             format_relations_table, relations_table)
from dpedu.ground.gaussian import gaussian_epsilon_exact
from dpedu.textbook.learners import FactorizedGaussianEvent
from dpedu.textbook.models.mlp import MLP
from dpedu.lab.plotting.shuffle import plot_shuffle_gap

FAST = fast_mode()
print("fast mode" if FAST else "full mode")


def brief(message, width=92, lines=3):
    """A long message as at most three indented lines: its first sentences that fit, whole."""
    text, kept = " ".join(str(message).split()), ""
    for sentence in re.split(r"(?<=[.:;])\s+(?=[A-Z(])", text):
        longer = f"{kept} {sentence}".strip()
        if len(textwrap.wrap(longer, width - 2)) > lines:
            break
        kept = longer
    if not kept:                                   # one sentence longer than three lines: cut it
        kept = textwrap.shorten(text, lines * (width - 2) - 10, placeholder=" ...")
    return textwrap.fill(kept, width, initial_indent="  ", subsequent_indent="  ")

# %%
X_train, y_train, X_test, y_test = dp.datasets.load_adult()
n, d = X_train.shape
q = 0.01
print(f"{n} training rows, {d} features; sampling rate q = {q}, "
      f"expected batch size q n = {q * n:.1f}")

# %% [markdown]
# ## 1. Shuffled fixed-size batches are a different mechanism
#
# Most training code shuffles the data once per epoch and cuts it into batches of exactly m records. Every
# record is then used exactly once per epoch — the opposite of an independent coin. The Poisson analyses do
# not cover it (Abadi et al. say openly that their implementation shuffled while the analysis assumed
# Poisson), and no accountant in dpedu pretends otherwise. A plan with `sampling="shuffle"` runs, warns, and
# records an event that every accountant refuses:

# %%
# shows-warning: the warning run_dp_sgd gives, as its message only
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    plan = dp.training.plan_dp_sgd(n, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=q, steps=5,
                                   sampling="shuffle")
    shuffled = dp.training.run_dp_sgd(X_train, y_train, plan, rng=0)
print(f"{caught[0].category.__name__}:")
print(brief(caught[0].message))
print("ledger:", shuffled.ledger)
refused = compare(shuffled, delta=1e-5, accountants=("rdp", "pld"))
for name, note in refused.notes.items():
    print(f"{name}: n/a\n" + brief(note))

# %% [markdown]
# ## 2. The schemes side by side
#
# `plan_dp_sgd` offers six ways to draw $B_t$, at the same *expected* batch size $m = qn$
# ([`dp.training.plan`](dpedu.textbook.training.plan) has the table of samplers, divisors and events):
#
# * `"poisson"`: every record flips its own coin with probability q (Algorithm 1);
# * `"fixed"`: exactly $m = \mathrm{round}(qn)$ records, drawn uniformly without replacement, afresh each step;
# * `"truncated_poisson"`: a Poisson sample, cut down to a uniformly random `max_batch_size` records when it is
#   larger: fixed memory, as training code wants;
# * `"shuffle"`: shuffle once per epoch and cut it into batches of m, as most training code does;
# * `"balls_in_bins"`: each epoch, throw every record into one of $b = \mathrm{round}(1/q)$ batches uniformly at
#   random (Chua et al. 2025): each record is used once per epoch, as with shuffling, but the sizes vary;
# * `"cyclic"`: split the records once, at random, into $b$ fixed batches and visit them in the same order every
#   epoch: DP-FTRL's batches (chapter 11), of $n/b$ records each, the same ones every epoch.
#
# Here are the batch sizes of 200 steps of the first five on Adult, $q = 0.01$. The cap of the truncated scheme is set one
# standard deviation above qn so that its pile-up is visible; in practice one chooses it a few standard
# deviations up, where it is rarely reached.

# %% [markdown]
# Before the five run side by side, write down what one step of the second scheme is, for an accountant.
#
# **Exercise 10.1 — the event of a fixed-size batch.** A training loop draws, at every step, exactly m of the n
# records uniformly without replacement, and adds $\mathcal N(0, z^2C^2I)$ to their clipped sum. Write
# `fixed_batch_event(noise_multiplier, batch_size, dataset_size)` returning the event of one such step, from
# `dpedu.ground.events`, so that an accountant can price it. Think about the neighbouring relation.

# %% exercise=10.1
def fixed_batch_event(noise_multiplier, batch_size, dataset_size):
    ### BEGIN SOLUTION
    event = SampledWithoutReplacementGaussianEvent(noise_multiplier, batch_size, dataset_size,
                                                   relation="replace_one")   # m of n, replace-one
    return event
    ### END SOLUTION

# %% check=10.1
checks.check_fixed_batch_event(fixed_batch_event)

# %%
# alt: Five stacked histograms of the batch sizes of 200 DP-SGD steps on Adult, for Poisson, fixed-size, truncated
#   Poisson, shuffled and balls-in-bins sampling, with q n dotted.
cap = round(q * n + math.sqrt(n * q * (1 - q)))
schemes = {"poisson": "add_remove", "fixed": "replace_one", "truncated_poisson": "add_remove",
           "shuffle": "add_remove", "balls_in_bins": "add_remove"}
scheme_runs = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dp.training.ShuffledBatchesWarning)   # shown above
    for sampling, relation in schemes.items():
        plan = dp.training.plan_dp_sgd(n, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=q,
                                       steps=200, sampling=sampling, relation=relation,
                                       max_batch_size=(cap if sampling == "truncated_poisson"
                                                       else None))
        scheme_runs[sampling] = dp.training.run_dp_sgd(X_train, y_train, plan, rng=4)
fig, axes = plt.subplots(5, 1, figsize=(7, 8), sharex=True)
bins = np.arange(240, 372, 3) - 0.5
for ax, (sampling, run) in zip(axes, scheme_runs.items()):
    sizes = run.details.batch_sizes
    ax.hist(sizes, bins=bins, color="#0072B2")
    ax.axvline(q * n, color="gray", linestyle=":")
    ax.set_title(f'sampling="{sampling}": sizes {sizes.min()} .. {sizes.max()}',
                 fontsize=10, loc="left")
    ax.set_ylabel("steps")
    print(f"{sampling:>17}: batch sizes {sizes.min()} .. {sizes.max()}, mean {sizes.mean():6.1f}; "
          f"divisor {run.details.plan.divisor:g}")
axes[-1].set_xlabel(f"batch size (dotted: q n = {q * n:.1f}; cap of the truncated scheme {cap})")
fig.tight_layout()
plt.show()

# %% [markdown]
# Poisson batches vary like $\mathrm{Binomial}(n, q)$ and balls-in-bins batches like $\mathrm{Binomial}(n, 1/b)$, about
# as much; fixed and shuffled batches always hold m records, and the truncated ones pile up at the cap. All five
# divide by a public constant, never by the drawn size (balls-in-bins by $n/b$).
# Each run records a different event (which neighbouring relation each one states, and why: below). What
# does each cost? `dpedu.lab.experiments.relations` accounts one step of every scheme, at the same expected batch
# size, under both neighbouring relations (explained just below), for $T = 1000$ steps (10 epochs) at $z = 1$,
# and prints "refused" where an accountant has no theorem for the pair. Five of the seven accountants are
# shown; the advanced and strong composition theorems are left out for width:

# %%
table_accountants = ("sequential", "moments", "rdp", "zcdp", "pld")
eps_table = relations_table(dataset_size=n, batch_size=round(q * n), noise_multiplier=1.0,
                            steps=1000, delta=1e-5, accountants=table_accountants)
eps_table = {key: row for key, row in eps_table.items() if key[0] != "full batch"}
# balls-in-bins (b = 100 batches per epoch, 10 epochs): the PLD accountant's proven number,
# and under it the Monte Carlo estimate that checks it
bib_row = balls_in_bins_row(dataset_size=n, batch_size=round(q * n), noise_multiplier=1.0,
                            steps=1000, delta=1e-5, n_samples=pick(20_000, 2_000), rng=0)
bib_notes = {("balls-in-bins", "add_remove"): balls_in_bins_note(bib_row),
             ("balls-in-bins", "replace_one"): "refused: only the un-amplified bound is proven\n"
                                               "(one Gaussian release of sensitivity 2C per epoch)"}
print(f"epsilon at delta = 1e-5, z = 1, m = {round(q * n)} of n = {n}, T = 1000 steps:\n")
print(format_relations_table(eps_table, notes=bib_notes))
# a lower bound for fixed-size batches under replace-one:
# the pair of docs/math.md §22.3 (Poisson, multiplier z / 2)
fixed_lower = (make_accountant("pld").compose(SubsampledGaussianEvent(0.5, round(q * n) / n), 1000)
               .get_epsilon(1e-5))
print(f"\nfixed-size batches, replace-one: epsilon at least {fixed_lower:.2f} "
      "(a pair of neighbouring datasets)")

# %% [markdown]
# Read it row by row. The third relation in the table, **zero-out** (one record replaced by a record that contributes a
# zero gradient, n kept), is explained in section 3.
#
# * **Poisson, add/remove** is what Algorithm 1 assumes, and every accountant that handles sampling covers
#   it; zCDP refuses, since subsampling has no zCDP bound.
# * **Truncated Poisson** is covered by the PLD accountant under both relations ([§22.7](../docs/math.md#227-truncated-poisson-sampling-by-pld-both-relations))
#   and by RDP under add/remove ([§22.5](../docs/math.md#225-truncated-poisson-sampling-rdp-addremove)); with a
#   cap rarely reached (the table puts it at 2m) it costs what Poisson sampling costs.
# * **Fixed-size batches** are covered only under replace-one ([§11.2](../docs/math.md#112-sampling-without-replacement-replace-one), [§22.3](../docs/math.md#223-fixed-size-sampling-without-replacement-replace-one-rdp)), by the RDP accountant
#   (Wang, Balle & Kasiviswanathan 2019), and the number is far larger. That is not only a loose theorem: when
#   every other record has gradient $-C$ and the changed one goes from $+C$ to $-C$, a batch's sum is known
#   except for a shift of $2C$ whenever that record is drawn, so one step is at least as revealing as a Poisson
#   step with multiplier $z/2$. That pair gives the lower bound printed under the table, itself several times
#   the Poisson numbers. Poisson sampling under replace-one ([§22.4](../docs/math.md#224-poisson-subsampled-gaussian-under-replace-one-pld)) also costs more than under add/remove,
#   but much less.
# * **Shuffled batches** are refused by every accountant under every relation.
# * **Fixed batches from one split** (`"cyclic"`) record one Gaussian release per epoch (each record is in one batch
#   per epoch), and the accountants price it; but under add/remove the row reads "not held": the plan refuses that
#   relation before any accountant is asked, because adding a record moves the other records' batches (section 3).
# * **Balls-in-bins batches** are covered by the PLD accountant alone, under add/remove. Each epoch is *random
#   allocation* (Feldman & Shenfeld 2025): the record's batch is one of b, uniformly; its privacy loss is the log of
#   a mean of b independent lognormal likelihood ratios, whose law dpedu computes by one FFT on a grid built so
#   that the discretised pair can only be *less* private than the true one
#   ([§22.9](../docs/math.md#229-balls-in-bins-batches-by-pld-random-allocation-proven)). The number is a
#   proven upper bound, and it lands a little below the Poisson number at the same mean batch size. Under the row
#   is its check, the *Monte Carlo estimate* of Chua et al. (2025)
#   ([§22.8](../docs/math.md#228-balls-in-bins-batches-a-monte-carlo-estimate-and-a-proven-bound)): estimate ε on
#   one set of draws, measure δ at it on fresh draws, and raise it until that measurement's upper confidence limit
#   is at most $10^{-5}$; its lower confidence end must lie below the proven number, and does. Under replace-one
#   only the un-amplified bound (one Gaussian release of sensitivity $2C$ per epoch) is proven here, so every
#   accountant refuses.
#
# Refused is not "free". How private *are* shuffled batches? No accountant gives an upper bound, but a
# *lower* bound can be computed: Chua et al. (2024) pick two neighbouring datasets in which every other record
# has the same gradient, so a fixed-size batch's sum is known except for the one record, and the true ε of
# shuffled training is at least that pair's ([§22.6](../docs/math.md#226-shuffled-batches-a-monte-carlo-lower-bound)). `dpedu.lab.audit.shuffle` estimates it by Monte Carlo, with a
# 95 % confidence bound, beside the Poisson upper bound (PLD) at $q = 1/b$ for $b = 100$ batches per epoch, one
# epoch, $\delta = 10^{-3}$:

# %%
# alt: Two stacked panels, add/remove and replace-one: epsilon against the noise multiplier z, the Poisson upper
#   bound beside the Monte Carlo lower bound for shuffled batches.
gap_zs = pick([0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0], [0.5, 1.0, 2.0, 4.0])
gap = {}
# balls-in-bins at the same b = 100, one epoch:
# a Monte Carlo estimate (add/remove only), not a guarantee
bib_gap = np.array([balls_in_bins_epsilon(z, 100, epochs=1, delta=1e-3,
                                          n_samples=pick(20_000, 2_000), rng=6).epsilon
                    for z in gap_zs])
fig, axes = plt.subplots(2, 1, figsize=(7, 7.5), sharex=True)
for ax, (relation, height) in zip(axes, (("add_remove", 1.0), ("replace_one", 2.0))):
    upper, lower = shuffle_gap(gap_zs, batches_per_epoch=100, epochs=1, delta=1e-3,
                               n_samples=pick(200_000, 20_000), relation=relation, rng=5)
    gap[relation] = upper, lower
    one_step = [gaussian_epsilon_exact(1e-3, z / height) for z in gap_zs]
    bib = bib_gap if relation == "add_remove" else None
    plot_shuffle_gap(gap_zs, upper, lower, one_step, delta=1e-3, relation=relation,
                     balls_in_bins=bib, ax=ax)
    print(f"{relation:>11}:  z     Poisson upper   shuffled lower"
          + ("   balls-in-bins (estimate)" if bib is not None else ""))
    for i, (z, u, low) in enumerate(zip(gap_zs, upper, lower)):
        print(f"{'':>13}{z:4g} {u:12.3f} {low:16.3f}"
              + (f" {bib[i]:26.3f}" if bib is not None else ""))
bib_proven = make_accountant("pld").compose(BallsInBinsGaussianEvent(1.0, 100)).get_epsilon(1e-3)
print("balls-in-bins at z = 1, proven by the PLD accountant (docs/math.md §22.9): "
      f"{bib_proven:.3f}")
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
# Balls-in-bins batches (add/remove panel, dash-dotted) use every record once per epoch as shuffling does, yet their
# Monte Carlo estimate stays near the Poisson number at every z shown and below the grey line (one Gaussian release
# per epoch, balls-in-bins' un-amplified bound). They train like shuffling and cost about what Poisson sampling
# costs, and that is proven: the PLD accountant's bound ([§22.9](../docs/math.md#229-balls-in-bins-batches-by-pld-random-allocation-proven)), printed under the table for $z = 1$, is the
# guarantee; the curve is its check.
#
# ## 3. Neighbouring relations: what "one record" means
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
full = GaussianEvent(4.0, relation="replace_one")
print(f"{full!r}\n  is accounted as {add_remove_equivalent(full)!r}")
full_eps = {relation: (make_accountant("rdp").compose(GaussianEvent(4.0, relation=relation), 100)
                       .get_epsilon(1e-5))
            for relation in ("add_remove", "replace_one")}
print(f"100 full-batch steps, z = 4 (RDP): epsilon {full_eps['add_remove']:.3f} under add/remove, "
      f"{full_eps['replace_one']:.3f} under replace-one")
try:
    make_accountant("rdp").compose(SampledWithoutReplacementGaussianEvent(1.0, round(q * n), n),
                                   1000)
except ValueError as error:
    print("fixed-size batches under add/remove:\n" + brief(error))

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
# **A third relation: zero-out.** Some analyses keep n fixed and public, and let the record differ by being replaced
# with a special record that contributes nothing: a zero clipped gradient (for logistic regression, a row of zeros).
# This is **zero-out** ([§1.2](../docs/math.md#12-neighbouring-relations); Google's `dp_accounting` calls it
# `REPLACE_SPECIAL`). A clipped sum still changes by at most C, and for a Gaussian or Poisson step the two output
# distributions are those of add/remove, so the accountants price it alike (the table's zero-out rows). What differs
# is what the *batches* may depend on.
#
# ### Literal neighbours: does every claim hold?
#
# A **literal neighbour** takes the relation at its word. For add/remove it is D and D with one more record, so the
# second run has n + 1 records and draws its batches on n + 1 records; for zero-out, one record replaced by a row of
# zeros, n kept; for replace-one, one record changed. An accountant's ε is a claim about every such pair. DP-FTRL's
# batches (`sampling="cyclic"`) are one random split of the records, a permutation of their indices taken modulo b.
# Add a record and the permutation of n + 1 indices puts the *other* records elsewhere: one batch gains a record, and
# the sums of several batches change, not just by the new record's contribution. Replace a record by a row of zeros
# instead and n is unchanged, so the split has the same law in both runs: the record sits in the same batch in both,
# and only its own contribution differs, at most C on each of its steps, which is the Gaussian the ledger records.
# So fixed batches hold under zero-out and replace-one, not under add/remove, and `plan_dp_sgd` refuses that
# relation for them ([§22.10](../docs/math.md#2210-fixed-batches-from-one-split-zero-out-and-replace-one-not-addremove)).
#
# `dpedu.lab.audit.neighbours` checks every learner's claims on such pairs
# ([§20.7](../docs/math.md#207-literal-neighbours-δ-measured-at-the-claimed-ε)). On small worst-case pairs ($n = 8$:
# every other record with the same clipped gradient, 0, $-C$ or $+C$, and the one that differs) it writes down what
# the learner releases, checked against noise-free runs of the real code, takes the smallest ε any accountant
# certifies for the learner's own ledger at $\delta = 10^{-2}$, and measures δ at that ε: exactly where the release has a
# closed form, and by Monte Carlo on the privacy loss, with a 95 % Clopper–Pearson interval, where it is a mixture
# over the batch assignments. A claim holds when the upper end of the measured δ is within 10 % of the claimed δ (or
# within six standard errors of the Monte Carlo, when fewer draws resolve less: 13 % in fast mode).

# %%
neighbour_rows = neighbour_table(delta=1e-2, draws=pick(10**6, 2 * 10**5), rng=0,
                                 ftrl_kinds=pick(("identity", "tree"), ("tree",)))
print(format_neighbour_table(neighbour_rows))

# %% [markdown]
# Every claim holds. Where the worst pair is the accountant's own worst case the measured δ sits at the claim:
# Poisson sampling, noisy gradient descent (its count and its sums, exactly), balls-in-bins (the random-allocation
# PLD bound is tight on this pair), and fixed batches under zero-out with independent noise (the `"cyclic"` row:
# the identity factorisation's). Fixed-size batches and truncated Poisson are priced by bounds that are loose at
# this size; output and objective perturbation's sensitivities assume a gradient of norm L
# at the minimiser, which a logistic loss on rows of norm 1 never quite reaches, so their δ is far below the claim.
#
# Now the claim DP-FTRL used to make: its fixed batches recorded under add/remove, the ledger's
# $\varepsilon(10^{-5}) = 4.377$ for one epoch of $b = 30$ batches, the identity factorisation and $z = 1$. The pair:
# every record has gradient $-C$ and the added one $+C$ ($n = 30$ records, so the permutation modulo 30 makes batches
# of one). Beside it, the same learner under the relations it claims now:

# %%
# add/remove, planted back
old_claim = [(FactorizedGaussianEvent(1.0, 1.0, relation="add_remove"), 1)]
d1_rows = [audit_ftrl("identity", "add_remove", n=30, batches=30, epochs=1, delta=1e-5,
                      draws=pick(2 * 10**5, 2 * 10**4), rng=1, claim=old_claim, others=(-1,))]
d1_rows += [audit_ftrl("identity", relation, n=30, batches=30, epochs=1, delta=1e-5,
                       draws=pick(2 * 10**5, 2 * 10**4), rng=1)
            for relation in ("zero_out", "replace_one")]
print(format_neighbour_table(d1_rows))
print(f"add/remove: delta at the claimed epsilon is {d1_rows[0].lower / 1e-5:.0f} times the claim "
      "or more")

# %% [markdown]
# Under add/remove the measured δ is hundreds of times the claimed $10^{-5}$ (at $n = 30{,}000$ records, as the issue that
# found it, $4.3\times10^{-3}$: [§22.10](../docs/math.md#2210-fixed-batches-from-one-split-zero-out-and-replace-one-not-addremove)).
# Under zero-out and replace-one the claims hold at $10^{-5}$: there the record's batch is the same in both runs, so
# the two releases are a mixture of the ledger's Gaussian pairs, and joint convexity bounds δ exactly, at any δ.
#
# **What add/remove assumes about n.** A literal removal also changes n. DP-SGD divides its noisy sums by the
# constant $qn$, and output perturbation calibrates its noise to $L/(n\Lambda)$: both treat n as public. Remove a
# record and let the code recompute n from the data, and the *mean* of the clipped gradients moves by up to $2C/n$,
# not $C/n$: one noise-free step, times the divisor over η, moves by 2C, while the noisy sums move by C. Noisy
# gradient descent needs no such assumption: it releases a noisy count and divides by it. Output perturbation, run
# on n and n − 1 rows, recomputes its noise scale too, and the literal pair exceeds even its zero-out claim:

# %%
for learner in ("dp_sgd", "noisy_gd"):
    over_n, public = removal_movement(learner)
    print(f"{learner:>8}: one literal removal moves a noise-free update by {over_n:.3f} C "
          f"(divisor len(X)),\n{'':>10}the noisy sums by {public:.3f} C")
literal_row = audit_output_perturbation("add_remove", delta=1e-2)
print(format_neighbour_table([literal_row]))

# %% [markdown]
# So an add/remove ε of DP-SGD is a statement about its noisy sums with n public, as in Abadi et al. and Opacus.
# Output perturbation puts n into the noise itself, so dpedu records its claim as zero-out (n public) and refuses
# `relation="add_remove"` for it. A run whose n is itself secret needs a noisy count, as noisy gradient descent has.
#
# ## 4. Pitfalls that the batches give away
#
# The accountant trusts the ledger it is given. Four common mistakes change what the sampler does without
# changing what the ledger claims: shuffled batches accounted as Poisson, steps counted in *epochs* (E epochs
# are E/q steps, every one a release), class-balanced oversampling accounted at the nominal rate q, and
# gradient accumulation (k micro-batches summed into one update) accounted at the micro-batch's rate.
# `dpedu.lab.audit.claims.check_claims` compares the batches a run actually drew with the ledger it claims
# (batch-size totals and spread, each record's number of batches, the number of steps). Here it is on a small
# imbalanced data set, each planted bug beside the correct code it pretends to be:

# %%
for bug in CLAIM_BUGS:
    for correct in (False, True):
        for line in str(claim_hunt(bug, correct=correct, rng=0)).splitlines():
            print(textwrap.fill(line, 100, subsequent_indent="      "))
print("\nthe five runs of the histogram above:")
for sampling, run in scheme_runs.items():
    print(f"  {sampling:>17}: {check_claims(run)}")

# %% [markdown]
# A fourth mistake is in the clipping, not the sampling: clipping the mean gradient of each *microbatch* of
# two records to C, while claiming per-example privacy. A record can then flip its microbatch's clipped
# gradient from $+C$ to $-C$, sensitivity $2C$. The batches look right, so `check_claims` cannot see it; the
# white-box audit (`dpedu.lab.audit.bugs.bug_hunt`, chapter 9) can, by proving a lower
# bound on ε above the claimed upper bound:

# %%
audits = {}
for correct in (False, True):
    audit = audits[correct] = bug_hunt("microbatch_clipped_as_one", correct=correct,
                                       runs=pick(200, 100), rng=0)
    verdict = "CAUGHT" if audit.epsilon_lower > audit.upper_bounds["pld"] else "consistent"
    print(f"{'correct' if correct else 'buggy'} clipping: "
          f"epsilon lower bound {audit.epsilon_lower:.2f}, "
          f"claimed (PLD) {audit.upper_bounds['pld']:.2f}: {verdict}")

# %% [markdown]
# The last pitfall is the relation: an ε computed under add/remove, quoted for a run whose neighbours are
# replace-one (fixed-size batches, a public n), is too small; for the 100 full-batch steps above it would be
# 14.1 where the run has 35.1. The accountants catch this one themselves when the event states its relation,
# as above: they refuse a fixed-size batch under add/remove.
#
# ### Pitfalls from real code
#
# Users of open-source DP libraries reported five such mistakes in 2025–2026
# ([§27](../docs/math.md#27-pitfalls-from-real-code) has one paragraph on each, with the issue). `dpedu.lab.audit.pitfalls` plants each one
# beside the correct code and runs the check that catches it. Two checks are new. `check_noise` *measures* one
# step's noise multiplier from the release itself: it releases the step many times on a worst-case pair of
# neighbouring batches and compares the shift of the output with its spread. `check_gaussian_claim` compares a
# claimed (ε, δ) with the Gaussian's exact curve. The accumulation mistake is the one `check_claims` refused above.

# %%
print(f"{'pitfall':<38} {'caught by':<21} {'planted caught':>15} {'correct flagged':>16}")
pitfall_rows = {}
for name, pitfall in PITFALLS.items():
    planted, correct = (pitfall_hunt(name, correct=c, draws=pick(2000, 500), rng=0)
                        for c in (False, True))
    pitfall_rows[name] = planted, correct
    print(f"{name:<38} {pitfall.check:<21} {str(planted.caught):>15} {str(correct.caught):>16}")
    print(f"{'':<4}reported in {pitfall.issue}")
print()
for name in ("adaptive_clipping_gradient_multiplier", "sum_noise_added_to_mean",
             "classic_gaussian_above_one"):
    print(textwrap.fill(pitfall_rows[name][0].report, 100, subsequent_indent="    "))

# %% [markdown]
# Not every mismatch is a leak. Adaptive clipping fed $z_\Delta$ and replace-one fed $z$ *under-report*: the
# step adds less noise than its ledger claims, so the ε printed is too small. Noise for the sum added to the
# mean is *over-noised*: the claim still holds, but the update carries m times the noise the run paid for,
# which shows up as a model that does not learn. The classic formula at $\varepsilon = 10$ claims a δ its noise
# does not give; at other $\varepsilon \ge 1$ the same formula can happen to hold, with no theorem behind it.

# %% [markdown]
# ## 5. The ledger does not see the model
#
# Nothing in DP-SGD is specific to logistic regression. For a network the gradient is *not* bounded by $\lVert x\rVert$,
# so per-step gradient clipping is the only option (`clip_mode="inputs"` is refused). One hidden layer of 16 tanh
# units, same privacy accounting — the ledger again depends only on (z, q, T):

# %%
net = MLP(n_features=d, hidden_units=16)
mlp_steps = pick(1000, 300)
z_mlp = dp.calibrate.noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sampling_rate=q,
                                      steps=mlp_steps)
mlp_run = dp.training.dp_sgd(X_train, y_train, noise_multiplier=z_mlp, clip_norm=1.0,
                             sampling_rate=q, steps=mlp_steps, learning_rate=1.0, model=net, rng=0)
mlp_eps = compare(mlp_run, delta=1e-5, accountants=("rdp",))["rdp"]
print(f"{net}: {net.n_params} parameters, {mlp_steps} steps, z = {z_mlp:.3f}")
print(f"test accuracy {np.mean(net.predict(mlp_run.theta, X_test) == y_test):.4f} "
      f"at epsilon = {mlp_eps:.3f} (RDP, delta = 1e-5)")


# %% [markdown]
# On Adult a linear model is already about as good as it gets, so the network does not win here; its value
# is to show that the *same* step and the same accountant work unchanged for a non-convex model.
