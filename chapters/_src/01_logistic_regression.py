# %% [markdown]
# # Chapter 1 — Logistic regression from scratch
#
# > **Learning objectives**
# >
# > After this chapter you can
# > 1. write the logistic model, its loss and its gradient for labels in $\{-1, +1\}$, and compute them without overflow;
# > 2. train it by full-batch gradient descent and measure test accuracy on the UCI Adult data;
# > 3. explain why the gradient of one example is bounded by the norm of its features — the fact that every
# >    private algorithm in this course builds on;
# > 4. compare your model with scikit-learn's `LogisticRegression`.
#
# *Prerequisites:* chapter 0. *Time:* about 80 min of reading and exercises.
# *Run time* (measured by `chapters/_times.py`): 14 s in fast mode (`DPEDU_FAST=1`), 25 s in full mode.
#
# Nothing in this chapter is private yet. We first need a model whose every line we understand, because
# differential privacy will be added *inside* its training loop.
#
# Every chapter imports `dpedu` and shows its real source where that helps; nothing is re-typed. Set the
# environment variable `DPEDU_FAST=1` for a quick run (smaller grids, same code).

# %% [markdown]
# *Uses:* [`load_adult`](dpedu.textbook.datasets.load_adult) · [`logistic`](dpedu.textbook.models.logistic) ·
# [`gradient_descent`](dpedu.textbook.training.gradient_descent) · [`plot_loss_curves`](dpedu.lab.plotting.plot_loss_curves) (see
# the API reference).
# *Notes:* [§6](../docs/math.md#6-logistic-loss-and-gradient) in the mathematical notes.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import dpedu as dp
from dpedu.lab import plotting
from dpedu.course import checks
from dpedu.course.notebook import fast_mode, pick, show_source
from dpedu.textbook.models import logistic

FAST = fast_mode()
print("fast mode" if FAST else "full mode")

# %% [markdown]
# ## The data
#
# Adult is the 1994 US census extract used by the book *Programming Differential Privacy*: predict whether a
# person earns more than 50 000 dollars a year. `load_adult` reads the local files (checked against their
# SHA-256), one-hot encodes the 8 categorical columns, scales the 6 numeric ones to [0, 1], and gives labels
# in $\{-1, +1\}$. Because of that encoding every row has norm at most $\sqrt{6 + 8} = \sqrt{14}$ — a bound we know *before*
# looking at the data, which will matter in chapter 2.

# %%
data = dp.datasets.load_adult()
X_train, y_train, X_test, y_test = data
print(f"Adult: {data.n_train} training rows, {data.n_test} test rows, {data.n_features} features")
print(f"share of positive labels: train {np.mean(y_train == 1):.3f}, "
      f"test {np.mean(y_test == 1):.3f}")
print(f"largest row norm {np.linalg.norm(X_train, axis=1).max():.3f} "
      f"<= sqrt(14) = {math.sqrt(14):.3f}")
majority_floor = np.mean(y_test == -1)
print(f'always predicting "<= 50K": test accuracy {majority_floor:.4f}')

# %% [markdown]
# Predicting "≤ 50K" for everyone is already right on 75.43 % of the test rows (the share of negative labels
# printed above): that is the floor any model must beat. Later chapters call it the *majority-class floor*.
#
# ## The model and its loss
#
# The model scores a row $x$ with $\theta \cdot x$ and predicts the sign. With labels $y \in \{-1, +1\}$ the **margin**
# $m = y\,\theta \cdot x$ is positive exactly when the prediction is right. The logistic loss of one example is
#
# $$\ell(\theta; x, y) = \ln\bigl(1 + e^{-m}\bigr), \qquad m = y\,\theta\cdot x ,$$
#
# small for a confident correct prediction (large m), about $-m$ for a confident wrong one. At $\theta = 0$ every
# example has loss $\ln 2 \approx 0.693$. dpedu's `logistic.loss` is the mean of this over the rows (no hidden
# intercept: the book's model has none); you write your own in Exercise 1.1, below.

# %% [markdown]
# `np.logaddexp(0, -m)` computes $\ln(e^0 + e^{-m})$ without ever forming $e^{-m}$. The literal formula
# overflows: $e^{710}$ is larger than the largest float64, so a confidently wrong example gets an infinite loss.

# %%
margins = np.array([-800.0, -10.0, 0.0, 10.0, 800.0])
with np.errstate(over="ignore"):
    naive = np.log(1 + np.exp(-margins))
stable = np.logaddexp(0.0, -margins)
print(f"{'margin m':>10}  {'ln(1 + exp(-m))':>16}  {'logaddexp(0, -m)':>17}")
for m, a, b in zip(margins, naive, stable):
    print(f"{m:>10g}  {a:>16.6g}  {b:>17.6g}")

# %% [markdown]
# **How the exercises work.** Each exercise comes where its subject does. Fill in the function between the
# solution markers, then run the check cell below it. The checks use their own test data (not your random seed),
# drawn afresh at every run, and tell you what is wrong, and on which line of your function, when they can
# recognise a common mistake; `checks.hint("1.1")` (with the exercise's number) then says more. You may use `numpy`, `scipy` and `math`, but
# not `dpedu` itself: while a check runs, dpedu's own version of the exercise refuses to run ("Exercise 1.1 asks
# you to write this yourself"). After each exercise the chapter goes on with dpedu's version of what you wrote.
#
# **Exercise 1.1 — the loss.** Write `logistic_loss(theta, X, y)`: the *mean* logistic loss over the rows,
# correct even for margins of $\pm 1000$.

# %% exercise=1.1
def logistic_loss(theta, X, y):
    ### BEGIN SOLUTION
    margins = y * (X @ theta)
    return float(np.mean(np.logaddexp(0.0, -margins)))
    ### END SOLUTION

# %% check=1.1
checks.check_logistic_loss(logistic_loss)

# %% [markdown]
# *Compare with dpedu's version*, the loss of each example (`logistic.loss` is its mean):

# %%
show_source(logistic.per_example_loss)

# %% [markdown]
# dpedu's `logistic.loss` at $\theta = 0$, against $\ln 2$:

# %%
print(f"loss at theta = 0: {logistic.loss(np.zeros(X_train.shape[1]), X_train, y_train):.6f} "
      f"= ln 2 = {math.log(2):.6f}")

# %% [markdown]
# ## The gradient
#
# Differentiating ℓ with respect to θ gives, with σ the sigmoid,
#
# $$\nabla_\theta \ell = -y\,x\,\sigma(-m), \qquad \sigma(t) = \frac{1}{1 + e^{-t}} \in (0, 1).$$
#
# Two things to notice. Every per-example gradient is a *scalar times its row* x, so the gradient of a whole
# batch is one matrix-vector product. And since $0 < \sigma < 1$,
#
# $$\lVert\nabla_\theta\ell\rVert_2 < \lVert x\rVert_2 :$$
#
# **one example can move the gradient by at most the norm of its features.** Chapter 2 turns that sentence
# into a privacy guarantee.
#
# **Exercise 1.2 — the gradient.** Write `logistic_gradient(theta, X, y)`: the gradient of the mean loss,
# a vector with one entry per feature. (`scipy.special.expit` is a sigmoid that never overflows.)

# %% exercise=1.2
def logistic_gradient(theta, X, y):
    ### BEGIN SOLUTION
    from scipy.special import expit

    margins = y * (X @ theta)
    return X.T @ (-y * expit(-margins)) / X.shape[0]
    ### END SOLUTION

# %% check=1.2
checks.check_logistic_gradient(logistic_gradient)

# %% [markdown]
# *Compare with dpedu's version*, the gradient of each example (`logistic.gradient` is their mean):

# %%
show_source(logistic.per_example_gradients)

# %% [markdown]
# A gradient formula is easy to get subtly wrong, so we compare dpedu's (the same formula as yours) with finite
# differences (`scipy.optimize.check_grad`) on a few hundred rows:

# %%
from scipy.optimize import check_grad

rows = slice(0, 300)
theta_random = np.random.default_rng(0).normal(size=X_train.shape[1])
error = check_grad(lambda t: logistic.loss(t, X_train[rows], y_train[rows]),
                   lambda t: logistic.gradient(t, X_train[rows], y_train[rows]), theta_random)
print(f"|analytic - finite differences| = {error:.2e}")
norms = np.linalg.norm(logistic.per_example_gradients(theta_random, X_train, y_train), axis=1)
print("every per-example gradient shorter than its row:",
      bool(np.all(norms < np.linalg.norm(X_train, axis=1))))

# %% [markdown]
# ## Gradient descent
#
# Start at $\theta_0 = 0$ and repeatedly step against the mean gradient:
# $\theta \leftarrow \theta - \eta \cdot (1/n) \sum_i \nabla\ell(\theta; x_i, y_i)$. The loss is convex, so a small enough step size always decreases it.
#
# **Exercise 1.3 — gradient descent.** Write `gradient_descent(X, y, iterations, learning_rate)`: start at
# $\theta = 0$, take `iterations` steps against the mean gradient, return θ.

# %% exercise=1.3
def gradient_descent(X, y, iterations, learning_rate):
    ### BEGIN SOLUTION
    from scipy.special import expit

    theta = np.zeros(X.shape[1])
    for _ in range(iterations):
        margins = y * (X @ theta)
        theta = theta - learning_rate * X.T @ (-y * expit(-margins)) / X.shape[0]
    return theta
    ### END SOLUTION

# %% check=1.3
checks.check_gradient_descent(gradient_descent)

# %% [markdown]
# *Compare with dpedu's version*, which also records the loss after every step:

# %%
show_source(dp.training.gradient_descent)

# %% [markdown]
# To judge a trained θ we count how often it is right.
#
# **Exercise 1.4 — accuracy.** Write `accuracy(theta, X, y)`: the fraction of rows whose predicted label
# ($+1$ when $\theta \cdot x \ge 0$, else $-1$) equals y.

# %% exercise=1.4
def accuracy(theta, X, y):
    ### BEGIN SOLUTION
    predictions = np.where(X @ theta >= 0, 1.0, -1.0)
    return float(np.mean(predictions == y))
    ### END SOLUTION

# %% check=1.4
checks.check_accuracy(accuracy)

# %% [markdown]
# Now dpedu's `dp.training.gradient_descent` (your loop, recording the loss after every step) and
# `logistic.accuracy`, with three step sizes:

# %%
# alt: Line chart: the training loss of non-private gradient descent on Adult against the iteration, one line per run
#   named in the legend; each loss falls from ln 2.
iterations = pick(300, 60)
runs = {f"learning rate {lr:g}": dp.training.gradient_descent(X_train, y_train, iterations,
                                                              learning_rate=lr)
        for lr in (0.3, 1.0, 4.0)}
for label, run in runs.items():
    print(f"{label:>18}: loss {run.losses[-1]:.4f}, "
          f"test accuracy {logistic.accuracy(run.theta, X_test, y_test):.4f}")

ax = plotting.plot_loss_curves({label: run.losses for label, run in runs.items()},
                               xlabel="iteration")
ax.set_title("Gradient descent on Adult (non-private)")
plt.show()

# %% [markdown]
# A step that is too large overshoots: the loss is L-smooth with $L = \max\lVert x\rVert ^2/4$, so every step size up to
# $2/L = 8/\max\lVert x\rVert ^2$ is guaranteed to decrease it — $8/3.286^2 \approx 0.74$ on Adult ($8/14 \approx 0.57$ from the $\sqrt{14}$ bound alone).
# Learning rate 1 is beyond that guarantee and still works here (its loss is the lowest of the three), while 4
# overshoots: its loss goes up and down and ends highest. The book runs only 10 iterations with learning rate 1;
# with more iterations the same loop keeps improving (next cell). Every extra iteration will cost privacy
# later, which is why "how many iterations?" becomes a real question in chapters 3 and 7.

# %%
book = dp.training.gradient_descent(X_train, y_train, 10, learning_rate=1.0)
print("10 iterations (the book): "
      f"test accuracy {logistic.accuracy(book.theta, X_test, y_test):.4f}; "
      f"{iterations} iterations: "
      f"{logistic.accuracy(runs['learning rate 1'].theta, X_test, y_test):.4f}")

# %% [markdown]
# ## Comparison with scikit-learn
#
# `LogisticRegression(C=np.inf)` minimises the same loss without a penalty, with a second-order solver
# and an intercept. It is the non-private ceiling for everything that follows.

# %%
from sklearn.linear_model import LogisticRegression

sk = LogisticRegression(C=np.inf, max_iter=5000).fit(X_train, y_train)
ours = runs["learning rate 1"].theta
print(f"scikit-learn test accuracy: {sk.score(X_test, y_test):.4f}")
print(f"ours ({iterations} iterations, learning rate 1): "
      f"{logistic.accuracy(ours, X_test, y_test):.4f}")
print(f"same prediction on {np.mean(logistic.predict(ours, X_test) == sk.predict(X_test)):.1%} "
      "of the test rows")
