"""The levels of a hint, shown when they are asked for: ``checks.hint("2.2")``.

A failed check says what is wrong and where (the line of the student's function that returned the answer),
not how to fix it. Asking for more shows, for the exercise's last failed check, the level that its failure
carries (what to change), or else the exercise's general hint below. An exercise whose general hint would give
the answer away has two levels, a tuple: the first call of ``checks.hint`` points at the idea, the next one
names the fix (``checks.hint("0.3", level=2)`` asks for it directly). Nothing here prints an answer's code:
the hints name the idea, the formula in words, or the numpy function to look up.

>>> import numpy as np
>>> from dpedu.course import checks
>>> try:
...     checks.check_L2_clip(lambda v, c: np.clip(v, -c, c))
... except checks.CheckFailed as failure:
...     print(failure)                                        # doctest: +ELLIPSIS
you clipped coordinates one by one (np.clip), which changes the direction of the vector (your function returned it from line 2 of ...)
>>> checks.hint("2.2")
Exercise 2.2, more: scale the whole vector by one factor, min(1, C / ‖v‖), so its direction stays; np.clip acts on each coordinate alone.
>>> checks.hint("11.2", level=1)
Exercise 11.2, hint 1 of 2: the coefficients are those of the power series of 1/√(1 − x). Binomials and powers of 4 overflow long before their ratio does: how does each coefficient follow from the one before it?
"""

from __future__ import annotations

from .common import LAST_FAILURE
from .guard import EXERCISES

__all__ = ["GENERAL", "levels", "hint_text", "hint"]

GENERAL = {
    "0.1": "keep the true bit with probability e^ε / (1 + e^ε), otherwise flip it; draw one uniform number per "
           "person from the generator you are given.",
    "0.2": "the share of 'yes' answers is p·s + (1 − p)(1 − s) for a true share s: solve it for s.",
    "0.3": ("the guess is wrong only when the noise carries the count across the threshold, halfway between the "
            "two possible counts. How likely is Laplace noise to go that far in one given direction?",
            "the noise must exceed 1/2 in the wrong direction, Pr[Lap(b) > t] = exp(−t/b)/2 with b = 1/ε: the guess "
            "is right with probability 1 − exp(−ε/2)/2."),
    "1.1": "the loss of one example is ln(1 + exp(−m)) with the margin m = y θ·x; average it over the rows. "
           "np.logaddexp(0, −m) computes it without overflow.",
    "1.2": "the gradient of one example is −y σ(−m) x; average those vectors over the rows (one entry per feature).",
    "1.3": "start from zeros, and at every step move against the mean gradient by learning_rate times it.",
    "1.4": "predict +1 where θ·x ≥ 0 and −1 elsewhere, then take the mean of (prediction == y).",
    "2.1": "think of the two datasets that differ most: for add/remove one row is there or not; for replace-one "
           "a row is swapped for another one.",
    "2.2": "compute the norm of each row (axis=-1, keepdims=True), and multiply by min(1, C / norm), guarding the "
           "division for a zero row.",
    "2.3": "a count has L1 sensitivity 1, so the Laplace scale is 1/ε; draw with the generator you are given.",
    "2.4": "z = √(2 ln(1.25/δ)) / ε, proven only for 0 < ε < 1: outside that range raise ValueError.",
    "2.5": "clip every per-example gradient first, sum them, and add Gaussian noise whose standard deviation is the "
           "noise multiplier times the sensitivity of the sum.",
    "3.1": "sequential composition adds up the ε and the δ of every release, and the noisy count is a release too.",
    "3.2": "ε′ = ε √(2k ln(1/δ′)) + k ε (exp(ε) − 1), and the δ of the k steps add up, plus δ′.",
    "3.3": "one Gaussian step with multiplier z is 1/(2z²)-zCDP, ρ adds up over steps, then convert ρ to ε.",
    "3.4": "the composed ε grows with the per-step ε: bisect between 0 and the total, keeping the end that "
           "stays within the budget.",
    "4.1": "draw one uniform number per record and keep the indices where it is below q (np.flatnonzero).",
    "4.2": "clip each row on its own to norm ≤ C, then sum the rows; zero rows must give the zero vector.",
    "4.3": "per-example gradients, clipped sum, Gaussian noise of standard deviation z C, divide by the expected "
           "batch size (not the drawn one), step against it.",
    "4.4": "one epoch is 1/q steps; compose the event of one DP-SGD step that many times in the RDP accountant.",
    "4.5": "q is the chance that one record joins a batch (m out of n); T counts steps, epochs / q of them.",
    "5.1": "write each term's logarithm (log-binomial + powers of q and 1 − q + the exponent) and add them with "
           "logsumexp; at q = 1 use functions that give 0 · log 0 = 0.",
    "5.2": "for every λ compute (α(λ) + ln(1/δ)) / λ and return the smallest.",
    "5.3": "keep the invariant: epsilon_of(lo) > target and epsilon_of(hi) ≤ target; return the end that meets it.",
    "6.1": "a direct formula: z = √(2(ε + ln(1/δ)) / ε).",
    "6.2": "T is the smallest whole number ≥ 2k²/ε; q and the expected batch size follow from T.",
    "6.3": "check every condition with δ = 1/N and return True only if all hold.",
    "7.1": "the noise on the sum has standard deviation z C; the average divides the sum by the expected batch "
           "size q n.",
    "7.2": "every run of the search touches the data: compose all their steps in one RDP accountant.",
    "7.3": "average the accuracies over seeds (axis 1), keep the ε whose mean reaches the target, take the "
           "smallest of them.",
    "7.4": "the grid search composes every run and every score; private selection is one RepeatAndSelectEvent "
           "around the ledger of one run.",
    "7.5": "independent Gaussian noises add their precisions: solve z⁻² = z_Δ⁻² + (2σ_b)⁻² for z_Δ.",
    "8.1": "the best test at FPR α thresholds at the (1 − α) quantile of N(0, 1); under N(μ, 1) it misses with "
           "probability Φ(Φ⁻¹(1 − α) − μ).",
    "8.2": "solve each of the two inequalities of the testing game for β; the curve is the largest of the two and 0.",
    "8.3": "each pair gives a floor under the FNR; the largest floor is the curve, and the best TPR is 1 minus it.",
    "9.1": "solve both inequalities of (ε, δ)-DP for ε and keep the larger, never below 0.",
    "9.2": ("Clopper and Pearson's exact bound is a quantile of a Beta distribution: which one belongs to the UPPER "
            "end after k successes in n trials, which quantile is one-sided, and what happens when k = n?",
            "return scipy.stats.beta.ppf(confidence, k + 1, n − k), and 1.0 when k = n (the Beta with b = 0 is not "
            "defined)."),
    "9.3": "bound both rates from above at the same time (each at level 1 − (1 − confidence)/2), then turn the "
           "bounds into ε as in Exercise 9.1.",
    "9.4": ("estimate μ from the two sample means, then lower it by as much as that estimate's own noise allows at "
            "this confidence, on one side only. What is the standard deviation of a difference of two independent "
            "means?",
            "(mean_in − mean_out)/σ − norm.ppf(confidence) · √(1/n_in + 1/n_out)."),
    "9.5": "the left side decreases in ε: bisect on ε until it is at most δ.",
    "9.6": "the p-value of v correct guesses at ε is P[Bin(r, p(ε)) ≥ v]; find the ε where it equals "
           "1 − confidence.",
    "10.1": "a batch of exactly m of n records drawn afresh each step is sampling without replacement, whose "
            "theorem is for replace-one neighbours.",
    "11.1": "the minimiser moves by at most (the change of the gradient sum) / (N Λ); one record changes that sum "
            "by L when added or removed and by 2L when replaced.",
    "11.2": ("the coefficients are those of the power series of 1/√(1 − x). Binomials and powers of 4 overflow long "
             "before their ratio does: how does each coefficient follow from the one before it?",
             "r₀ = 1 and r_k = r_(k−1) · (2k − 1)/(2k)."),
    "11.3": "for each participation pattern add up the columns of C it touches, take the norm, keep the largest.",
    "12.1": "P is a mixture: sum over k of C(T, k) q^k (1 − q)^(T − k) times N(k, z² T); find the x where the log "
            "density ratio equals ε, then δ = P(X > x) − e^ε Q(X > x), both sums of normal tails.",
    "12.2": "compute the plateau, the smallest (d + j s)² / j over j ≥ 1; the bound at T is the smaller of T s² and the "
            "best window below T; walk T up until it reaches the plateau.",
    "13.1": "logit-scale every confidence, fit a mean and an unbiased variance to the IN values and to the OUT "
            "values, and subtract the OUT Gaussian's log-density at the target's value from the IN one's.",
    "13.2": "the ceiling has two lines, e^ε·FPR + δ and 1 − e^(−ε)(1 − δ − FPR); solve each for the FPR at which "
            "it reaches the TPR and keep the larger, never below 0.",
}


_SHOWN = {}        # exercise number -> the level of its general hint shown last


def levels(number):
    """The levels of exercise ``number``'s general hint, as a tuple (one or two of them)."""
    general = GENERAL[number]
    return general if isinstance(general, tuple) else (general,)


def hint_text(number, level=None):
    """The next level of the hint for exercise ``number`` (``"2.2"``), or the one asked for (1, 2, ...).

    An exercise with one level: what its last failure carries, else the general hint. With two levels: the idea
    first; then what the last failure carries, else the general hint's second level, the fix.
    """
    if not isinstance(number, str) or number not in EXERCISES:
        raise ValueError(f"number must be an exercise number such as '2.2', one of {sorted(EXERCISES)}; "
                         f"got {number!r}")
    steps = levels(number)
    if level is None:
        level = min(_SHOWN.get(number, 0) + 1, len(steps))
    elif isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= len(steps):
        raise ValueError(f"level must be an int from 1 to {len(steps)} for exercise {number}; got {level!r}")
    _SHOWN[number] = level
    more = getattr(LAST_FAILURE.get(number), "more", None)
    if len(steps) == 1:
        return f"Exercise {number}, more: {more or steps[0]}"
    text = steps[0] if level == 1 else (more or steps[level - 1])
    return f"Exercise {number}, hint {level} of {len(steps)}: {text}"


def hint(number, level=None):
    """Print the next level of the hint for exercise ``number`` (``checks.hint("2.2")``), or the ``level`` asked
    for."""
    print(hint_text(number, level))
