# %% [markdown]
# # Chapter 0 — What differential privacy promises
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. carry out a differencing attack on two exact statistics of Adult, and say why "only aggregates" is no
# >    protection;
# > 2. say what two *neighbouring datasets* are, under the add/remove and the replace-one relation;
# > 3. state ε-differential privacy and (ε, δ)-differential privacy, and read them as a limit on how well any
# >    test can tell two neighbouring datasets apart;
# > 4. release a bit by randomized response and a count by the Laplace mechanism, and compute their ε;
# > 5. state post-processing and sequential composition, the two rules every later chapter relies on.
#
# *Prerequisites:* Python, NumPy, basic probability. *Time:* about 75 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 7 s in fast mode (`DPEDU_FAST=1`), 7 s in full mode.
#
# The course trains machine-learning models on personal data and proves that the trained model reveals little
# about any one person. Before any model, this chapter answers two questions: what goes wrong without a
# guarantee, and what exactly the guarantee says.

# %% [markdown]
# *Uses:* [`load_adult`](dpedu.textbook.datasets.load_adult) · [`laplace_mechanism`](dpedu.textbook.mechanisms.laplace_mechanism)
# (see the API reference).
# *Notes:* [§1](../docs/math.md#1-differential-privacy-and-neighbouring-datasets) ·
# [§3](../docs/math.md#3-the-laplace-mechanism) · [§9](../docs/math.md#9-sequential-and-parallel-composition) ·
# [§26](../docs/math.md#26-randomized-response-and-the-testing-game) in the mathematical notes.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import dpedu as dp
from dpedu.course import checks
from dpedu.course.notebook import fast_mode, pick

FAST = fast_mode()
print("fast mode" if FAST else "full mode")

# %% [markdown]
# ## An attack first
#
# Adult is an extract of the 1994 US census: one row per person, with age, education, occupation, hours worked
# and whether the person earns more than 50 000 dollars a year (the label $+1$; $-1$ otherwise). Chapter 1
# trains a model on it. Here we only count.
#
# Suppose a statistics office publishes, every evening, one number: how many people in its database earn more
# than 50K. Counts of thousands of people feel harmless. On Monday the database holds the training rows of
# Adult; on Tuesday one more person, Alice, is added (we take her from the test rows, so she was not there
# before). An attacker who knows that Alice joined on Tuesday subtracts:

# %%
X_train, y_train, X_test, y_test = dp.datasets.load_adult()
# the person who joins on Tuesday: a row of the test set
alice = int(np.flatnonzero(y_test == 1)[0])
monday = int(np.sum(y_train == 1))
tuesday = int(np.sum(np.append(y_train, y_test[alice]) == 1))
print(f"Monday: {monday} of {y_train.size} people earn more than 50K")
print(f"Tuesday: {tuesday} of {y_train.size + 1}")
print(f"the attacker concludes: Alice earns {'more' if tuesday > monday else 'not more'} than 50K"
      f" (true label {y_test[alice]:+.0f})")

# %% [markdown]
# The attacker is right every time, for every Alice: the two counts differ by exactly her label. Nothing but
# aggregates was published, and no rule such as "never publish a count below ten people" would stop it (both
# counts are in the thousands). This is a *differencing attack*. The same reasoning extends far: Dinur and
# Nissim (2003) showed that answering too many counting queries too accurately lets an attacker rebuild almost
# the whole database, and membership-inference attacks (chapter 9) do the same kind of subtraction with a
# trained model instead of a count.
#
# The cure is not to choose the queries more cleverly but to make every answer random, in a way that hides each
# single person.
#
# ## Neighbouring datasets
#
# Monday's and Tuesday's databases differ in one person. Two datasets are **neighbouring** when they differ in
# one record ([§1.2](../docs/math.md#12-neighbouring-relations)). There are two common meanings:
#
# * **add/remove**: $D'$ is $D$ with one record added or deleted (Monday and Tuesday). The number of records
#   differs by one, so even $n$ is something to protect.
# * **replace-one**: $D'$ is $D$ with one record changed, for instance Alice's label flipped. Then $n$ is the
#   same in both and may be public.
#
# The **sensitivity** of a statistic is the largest change one step between neighbours can cause
# ([§2](../docs/math.md#2-sensitivity)). For the count of high earners it is 1 under both relations; for the
# number of rows it is 1 under add/remove and 0 under replace-one:

# %%
flipped = y_train.copy()
flipped[0] = -flipped[0]                             # replace-one: the first person's label changed
pairs = {"add/remove (Monday, Tuesday)": (y_train, np.append(y_train, y_test[alice])),
         "replace-one (first label flipped)": (y_train, flipped)}
for relation, (D, D_prime) in pairs.items():
    count_change = abs(int(np.sum(D == 1)) - int(np.sum(D_prime == 1)))
    print(f"{relation:>34}: count changes by {count_change}, n by {abs(D.size - D_prime.size)}")

# %% [markdown]
# ## The definition
#
# A randomised algorithm $M$ (a *mechanism*) is **ε-differentially private** if for every pair of neighbouring
# datasets $D, D'$ and every set $S$ of outputs
#
# $$\Pr[M(D) \in S] \le e^{\varepsilon}\,\Pr[M(D') \in S],$$
#
# and **(ε, δ)-differentially private** if $\Pr[M(D) \in S] \le e^{\varepsilon}\Pr[M(D') \in S] + \delta$
# ([§1.1](../docs/math.md#11-definition)). The promise is about the algorithm, not about a dataset: whatever the
# other records are, adding, removing or changing yours moves the probability of any outcome by a factor of
# at most $e^\varepsilon$. Small ε means strong privacy; δ is a small probability of slack, always chosen far
# below $1/n$ (the course uses $\delta = 10^{-5}$ on Adult's 30 162 training rows).
#
# **The testing-game reading.** Give the attacker the output and ask: was it computed on $D$ or on $D'$? Any
# test the attacker can run has a false-positive rate α and a false-negative rate β, and differential privacy
# holds exactly when every test satisfies
#
# $$\alpha + e^{\varepsilon}\beta \ge 1 - \delta \quad\text{and}\quad \beta + e^{\varepsilon}\alpha \ge 1 - \delta$$
#
# ([§21.1](../docs/math.md#211-the-hypothesis-testing-reading-of-dp), [§26.3](../docs/math.md#263-the-best-guess)).
# If $D$ and $D'$ are equally likely a priori, no guess is right with probability more than
# $(e^{\varepsilon} + \delta)/(1 + e^{\varepsilon})$. At $\varepsilon = 0$ that is a coin flip; it grows slowly with ε:

# %%
best_guess = {eps: math.exp(eps) / (1 + math.exp(eps)) for eps in (0.1, 0.5, 1.0, 2.0, 5.0)}
for eps, bound in best_guess.items():
    print(f"epsilon = {eps:>3g}: the best guess is right with probability at most {bound:.3f}")

# %% [markdown]
# So $\varepsilon = 1$ lets an attacker who starts at 50 : 50 reach at most about 73 %: a real but limited advantage. $\varepsilon = 5$
# allows more than 99 %, which protects very little. Chapter 8 returns to this reading with whole trade-off curves.
#
# ## Randomized response: privacy for one bit
#
# The oldest private mechanism (Warner 1965) needs no computer. To ask "do you earn more than 50K?", each
# person flips a biased coin in secret: with probability $p = e^{\varepsilon}/(1 + e^{\varepsilon})$ they answer
# truthfully, otherwise they give the opposite answer ([§26.1](../docs/math.md#261-the-mechanism)). Whatever the
# true answer, "yes" has probability $p$ or $1 - p$, and the ratio of the two is exactly $p/(1-p) = e^{\varepsilon}$:
# randomized response is ε-DP for each person's bit, under replace-one (the bit is changed). With $p = 3/4$ the
# ratio is 3:

# %%
p_truth = 0.75
print(f"p = {p_truth}: epsilon = ln(p / (1 - p)) = {math.log(p_truth / (1 - p_truth)):.3f}")

# %% [markdown]
# Each answer is deniable, yet the *share* of high earners can still be estimated from many answers, because
# the noise is known: the expected share of "yes" is $p s + (1 - p)(1 - s)$ for a true share $s$. You write the
# mechanism and that estimator in Exercises 0.1 and 0.2.
#
# ## The Laplace mechanism: privacy for a count
#
# For a number, add noise. The **Laplace mechanism** releases $f(D) + \mathrm{Lap}(\Delta_1/\varepsilon)$, where
# $\Delta_1$ is the L1 sensitivity of $f$ (how far one person can move it); it is ε-DP
# ([§3.1](../docs/math.md#31-mechanism)). $\mathrm{Lap}(b)$ is the **Laplace distribution** of scale $b$: a
# random number centred at 0 with density $e^{-|x|/b}/(2b)$, a two-sided exponential, as likely to be negative as
# positive, with standard deviation $\sqrt2\,b$ and tails $\Pr[\mathrm{Lap}(b) > t] = e^{-t/b}/2$ for $t \ge 0$.
# Moving its centre by $\Delta_1$ changes the density at any point by a factor of at most $e^{\Delta_1/b}$, which
# is $e^\varepsilon$ for $b = \Delta_1/\varepsilon$: that is the whole proof. For our count, $\Delta_1 = 1$. The office now publishes noisy counts, at $\varepsilon = 0.5$ each evening, and the attacker repeats the
# subtraction, guessing "more than 50K" when Tuesday's count is more than 1/2 above Monday's. We replay the
# two evenings many times, with Alice's label drawn at random each time, to measure how often the attacker is right:

# %%
epsilon = 0.5
trials = pick(20_000, 4000)
rng = np.random.default_rng(0)
labels = rng.choice([0, 1], size=trials)             # 1: Alice earns more than 50K
noisy_monday = dp.mechanisms.laplace_mechanism(np.full(trials, float(monday)), l1_sensitivity=1.0,
                                               epsilon=epsilon, rng=rng)
noisy_tuesday = dp.mechanisms.laplace_mechanism(monday + labels.astype(float), l1_sensitivity=1.0,
                                                epsilon=epsilon, rng=rng)
success = np.mean((noisy_tuesday - noisy_monday > 0.5) == (labels == 1))
print(f"epsilon = {epsilon} per release: "
      f"the attacker is right in {success:.1%} of {trials} replays")
print("  (no test can do better than e^eps / (1 + e^eps) = "
      f"{math.exp(epsilon) / (1 + math.exp(epsilon)):.1%})")
print(f"one noisy Tuesday count: {noisy_tuesday[0]:.1f} (true count {monday + labels[0]})")

# %% [markdown]
# The attacker went from always right to barely better than a coin, while each published count is still
# within a few people of the truth: the noise has standard deviation $\sqrt 2/\varepsilon \approx 2.8$, against
# counts in the thousands. Privacy costs accuracy only where one person matters.
#
# ## Two rules that make DP usable
#
# **Post-processing.** Whatever you compute from a private output, without going back to the data, is exactly
# as private ([§1.4](../docs/math.md#14-post-processing-and-groups)). Rounding the noisy count, dividing it by
# $n$, plotting it, or training a model on it costs nothing more. The attacker's subtraction above is
# post-processing too, which is why it could not break the guarantee.
#
# **Composition.** Releases add up. $k$ mechanisms that are $(\varepsilon_i, \delta_i)$-DP, run on the same data, are
# together $(\sum_i \varepsilon_i, \sum_i \delta_i)$-DP, even when each one is chosen after seeing the earlier
# outputs ([§9](../docs/math.md#9-sequential-and-parallel-composition)). Nothing stops an attacker from averaging:
# if the office republishes Tuesday's count $k$ times with fresh noise, the noise averages away, and the
# guarantee is only $k\varepsilon$. Here is the same attack against the average of $k$ noisy releases per evening:

# %%
rates = {}
for k in (1, 10, 100, 400):
    mean_monday = dp.mechanisms.laplace_mechanism(
        np.full((trials, k), float(monday)),
        l1_sensitivity=1.0, epsilon=epsilon, rng=rng).mean(axis=1)
    mean_tuesday = dp.mechanisms.laplace_mechanism(
        np.repeat((monday + labels)[:, None], k, axis=1).astype(float),
        l1_sensitivity=1.0, epsilon=epsilon, rng=rng).mean(axis=1)
    rates[k] = np.mean((mean_tuesday - mean_monday > 0.5) == (labels == 1))
    print(f"k = {k:>3} releases of each count: attacker right in {rates[k]:.1%}; "
          f"composition allows epsilon = {k * epsilon:g}")

# %% [markdown]
# With 400 releases the attacker is right nearly always, and composition said so in advance: $\varepsilon = 200$ promises
# nothing. Training a model is a long sequence of releases (every gradient step is one), so the whole course
# is about spending ε carefully: noisy gradient descent (chapter 2), better composition theorems and accountants
# (chapters 3 and 5), and the sampling that makes each step cheaper (chapter 4).
#
# ## Exercises
#
# **Exercise 0.1 — randomized response.** Write `randomized_response(truth, epsilon, rng)`: `truth` is a boolean
# array, one bit per person; return a boolean array of the same shape in which each bit is kept with probability
# $e^{\varepsilon}/(1 + e^{\varepsilon})$ and flipped otherwise, independently, using the generator `rng`.

# %% exercise=0.1
def randomized_response(truth, epsilon, rng):
    ### BEGIN SOLUTION
    truth = np.asarray(truth, dtype=bool)
    keep = rng.random(truth.shape) < 1.0 / (1.0 + math.exp(-epsilon))
    return np.where(keep, truth, ~truth)
    ### END SOLUTION

# %% check=0.1
checks.check_randomized_response(randomized_response)

# %% [markdown]
# **Exercise 0.2 — estimating the share.** Write `estimate_share(answers, epsilon)`: from the answers of
# randomized response at ε, return the unbiased estimate of the share of true "yes" bits. Solve
# $\bar a = p s + (1 - p)(1 - s)$ for $s$. (The estimate may fall outside [0, 1] for few answers; leave it so.)

# %% exercise=0.2
def estimate_share(answers, epsilon):
    ### BEGIN SOLUTION
    p = 1.0 / (1.0 + math.exp(-epsilon))
    return (np.mean(answers) - (1.0 - p)) / (2.0 * p - 1.0)
    ### END SOLUTION

# %% check=0.2
checks.check_estimate_share(estimate_share)

# %% [markdown]
# **Exercise 0.3 — the attacker's odds.** Tuesday's count is $c + b + \mathrm{Lap}(1/\varepsilon)$ with $b \in \{0, 1\}$
# Alice's bit and $c$ known exactly (suppose Monday's count was published without noise). The attacker guesses
# $b = 1$ when the release exceeds $c + 1/2$. Write `laplace_threshold_success(epsilon)`: the probability that
# this guess is right, for either value of $b$. Use $\Pr[\mathrm{Lap}(s) > t] = e^{-t/s}/2$ for $t \ge 0$.
# Compare it with the bound $e^{\varepsilon}/(1 + e^{\varepsilon})$.

# %% exercise=0.3
def laplace_threshold_success(epsilon):
    ### BEGIN SOLUTION
    return 1.0 - 0.5 * math.exp(-epsilon / 2.0)
    ### END SOLUTION

# %% check=0.3
checks.check_laplace_threshold_success(laplace_threshold_success)
