"""Checks for the exercises of chapter 0: what differential privacy promises.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math

import numpy as np

from .common import CheckFailed, call, checker, close, expect, passed, scalar, settings

__all__ = ["check_randomized_response", "check_estimate_share", "check_laplace_threshold_success"]


def _keep_probability(epsilon):
    """The probability that randomized response at ``epsilon`` answers truthfully: e^eps / (1 + e^eps)."""
    return 1.0 / (1.0 + math.exp(-epsilon))


def _answers(value, n):
    array = np.asarray(value)
    expect(array.shape == (n,), f"return one answer per person: an array of shape ({n},); got shape {array.shape}")
    expect(array.dtype == bool or np.all((array == 0) | (array == 1)),
           "the answers must be True/False (or 0/1), one per person")
    return array.astype(bool)


@checker
def check_randomized_response(fn, *, seed=None):
    """``fn(truth, epsilon, rng)``: each answer is the true bit with probability e^eps / (1 + e^eps), else its
    opposite, independently for every person and every call (docs/math.md §26.1)."""
    draw = settings(seed)
    yes = int(draw.integers(800, 1200))
    truth = np.zeros(4000, dtype=bool)
    truth[:yes] = True
    first = _answers(call(fn, truth, 1.0, np.random.default_rng(1)), truth.size)
    again = _answers(call(fn, truth, 1.0, np.random.default_rng(1)), truth.size)
    expect(np.array_equal(first, again), "draw from the rng you are given (rng.random(n)), not from np.random")
    # one coin per person: over 300 calls on 40 people the number of kept answers varies like Binomial(40, p)
    # (variance 40 p (1 - p)); one coin shared by everyone keeps all 40 or none (variance 1600 p (1 - p))
    few, p_three = np.arange(40) % 2 == 0, _keep_probability(math.log(3.0))
    coins = np.random.default_rng(7)
    kept_counts = np.array([np.sum(_answers(call(fn, few, math.log(3.0), coins), few.size) == few)
                            for _ in range(300)])
    expect(not np.all(kept_counts == few.size), "every answer is the true one: that is no privacy at all. "
                                                 "Flip each bit with probability 1 / (1 + e^epsilon)")
    expect(kept_counts.var() > 0.3 * 40 * p_three * (1 - p_three),
           "your answers barely change from one call to the next: every call must flip fresh coins",
           more="draw the coins inside the function, from the rng you are given, at every call")
    expect(kept_counts.var() < 3.0 * 40 * p_three * (1 - p_three),
           "your answers are kept or flipped together: every person needs a coin of their own. With one coin for "
           "everyone the answers tell the truth about the group, or its exact opposite, so nobody is protected",
           more="draw one uniform number per person, rng.random(len(truth)), and flip where it is at least p")
    rng = np.random.default_rng(2024)
    for epsilon in (round(float(draw.uniform(0.3, 0.7)), 2), round(float(draw.uniform(0.9, 1.3)), 2),
                    round(float(draw.uniform(2.5, 3.5)), 2)):
        answers = _answers(call(fn, truth, epsilon, rng), truth.size)
        kept = np.mean(answers == truth)
        expect(not np.array_equal(answers, truth), "every answer is the true one: that is no privacy at all. "
                                                   "Flip each bit with probability 1 / (1 + e^epsilon)")
        p = _keep_probability(epsilon)
        kept_yes, kept_no = answers[:yes].mean(), 1.0 - answers[yes:].mean()
        expect(max(kept_yes, kept_no) < 0.995 or min(kept_yes, kept_no) > 0.995,
               "a true 'yes' and a true 'no' must both be kept with the same probability: flip every bit, "
               "not only the ones that are True (or False)")
        # the share kept is a mean of 4000 Bernoulli(p): standard error below 0.008
        if abs(kept - p) > 0.035:
            expect(abs(kept - 0.5 * (1 + p)) > 0.035,
                   "you answer at random with probability 1 - p and then by a fair coin: that keeps the truth with "
                   "probability (1 + p) / 2. Flip the bit itself with probability 1 / (1 + e^epsilon)")
            expect(abs(kept - math.exp(-epsilon)) > 0.035 and abs(kept - (1 - math.exp(-epsilon))) > 0.035,
                   "the truthful answer comes with probability e^epsilon / (1 + e^epsilon), so that the two answers' "
                   "probabilities have ratio exactly e^epsilon")
            raise CheckFailed(f"at epsilon = {epsilon:.3g} {kept:.1%} of your answers are truthful; randomized "
                              f"response keeps e^epsilon / (1 + e^epsilon) = {p:.1%} of them")
        expect(abs(kept_yes - p) < 0.06 and abs(kept_no - p) < 0.04,
               "a true 'yes' and a true 'no' must both be kept with the same probability e^epsilon / (1 + e^epsilon)")
    passed("randomized response keeps each bit with probability e^epsilon / (1 + e^epsilon)")


@checker
def check_estimate_share(fn, *, seed=None):
    """``fn(answers, epsilon)``: the unbiased estimate (mean - (1 - p)) / (2p - 1) of the share of true bits,
    p = e^eps / (1 + e^eps) (docs/math.md §26.2)."""
    draw = settings(seed)
    cases = []
    for n, low, high in ((100, 0.2, 0.45), (1000, 0.55, 0.75), (100, 0.01, 0.06)):   # the last estimate is < 0
        yes = int(draw.integers(round(low * n), round(high * n)))
        cases.append((np.array([True] * yes + [False] * (n - yes)), round(float(draw.uniform(0.8, 2.2)), 2)))
    for answers, epsilon in cases:
        p = _keep_probability(epsilon)
        mean = answers.mean()
        expected = (mean - (1 - p)) / (2 * p - 1)
        got = scalar(call(fn, answers.copy(), epsilon), "the estimated share")
        if not close(got, expected, rtol=1e-9):
            expect(not close(got, mean), "the raw share of 'yes' answers is biased towards 1/2: some of the 'yes' "
                                         "are flipped 'no'. Solve mean = p s + (1 - p)(1 - s) for s")
            expect(not close(got, min(max(expected, 0.0), 1.0)) or 0.0 <= expected <= 1.0,
                   "do not clip the estimate to [0, 1]: clipping makes it biased (report it clipped if you "
                   "must, but the estimator itself is the unbiased one)")
            raise CheckFailed(f"for {answers.size} answers with share of 'yes' {mean:.2f} at epsilon = {epsilon:.3g} "
                              f"expected (mean - (1 - p)) / (2p - 1) = {expected:.4f}; got {got:.4f}")
    passed("the unbiased estimate of the share from randomized responses")


@checker
def check_laplace_threshold_success(fn, *, seed=None):
    """``fn(epsilon)``: the probability that the guess "the label is +1 when the count rose by more than 1/2"
    is right, for a count with Laplace noise of scale 1/eps: 1 - exp(-eps / 2) / 2 (docs/math.md §26.3)."""
    draw = settings(seed)
    for low, high in ((0.05, 0.3), (0.3, 1.0), (1.0, 3.0), (3.0, 10.0), (20.0, 60.0)):
        epsilon = float(f"{draw.uniform(low, high):.3g}")
        expected = 1.0 - 0.5 * math.exp(-epsilon / 2)
        got = scalar(call(fn, epsilon), f"the success probability at epsilon = {epsilon:g}")
        if not close(got, expected, rtol=1e-9):
            expect(not close(got, 1.0 / (1.0 + math.exp(-epsilon))),
                   "e^epsilon / (1 + e^epsilon) is the bound for *any* test (§26.3), not the success of this one",
                   more="follow this one test: when is its guess wrong, and how likely is that under Laplace noise "
                        "of scale 1/ε?")
            expect(not close(got, 1.0 - 0.5 * math.exp(-epsilon)),
                   "how far must the noise push the count before this guess goes wrong? Not a whole 1: the "
                   "threshold sits between the two possible counts",
                   more="the noise must exceed t = 1/2 in the wrong direction, and Pr[Lap(b) > t] = exp(−t/b)/2 with "
                        "b = 1/ε")
            expect(not close(got, 0.5 * math.exp(-epsilon / 2)),
                   "that is the probability that the guess is WRONG; the exercise asks how often it is right",
                   more="the success probability is 1 minus the chance that the noise crosses the threshold")
            failure = CheckFailed(f"at epsilon = {epsilon:g} expected {expected:.6f}; got {got:.6f}")
            failure.more = ("the guess is wrong only when the Laplace noise exceeds 1/2 in one given direction: "
                            "Pr[Lap(b) > 1/2] = exp(−1/(2b))/2 with b = 1/ε")
            raise failure
        expect(got <= 1.0 / (1.0 + math.exp(-epsilon)) + 1e-12, "no test can beat e^epsilon / (1 + e^epsilon)")
    passed("the threshold guess on a Laplace count succeeds with probability 1 - exp(-epsilon / 2) / 2")
