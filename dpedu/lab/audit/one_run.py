r"""Privacy auditing with one training run (Steinke, Nasr & Jagielski 2023, NeurIPS).

Insert m canaries, each independently with probability 1/2, train **once**, score every canary, guess
"in" for the k+ highest scores and "out" for the k- lowest (abstain on the rest), and count the correct
guesses v of the r = k+ + k- made. For an (epsilon, delta)-DP training, the paper's main result (in its
pure form for delta = 0, and its extension to delta > 0) bounds the tail of v by a binomial one,

.. math:: P[V \ge v] \ \le\ \beta + 2m\delta\,\alpha, \qquad
          \beta = P[\mathrm{Bin}(r, p_\varepsilon) \ge v],\quad p_\varepsilon = \frac{e^\varepsilon}{1+e^\varepsilon},\quad
          \alpha = \max_{1\le i\le v} \frac{P[\mathrm{Bin}(r, p_\varepsilon) \ge v-i] - \beta}{i},

with alpha the largest average of the binomial mass just below v, as the paper computes it.
:func:`one_run_epsilon_lower_bound` returns the largest epsilon
this test rejects at level 1 - confidence (docs/math.md §20.3): a lower bound holding with probability
>= confidence, from one training. The price: v/r can never exceed the accuracy of randomized response,
so each canary carries at most one bit, and the bound is far below the many-run audits.

Two forms, as in the paper: ``"whitebox"`` (gradient canaries: each canary owns a feature no other row
uses, and its coordinate of every observed update is scored by the claimed mixture's likelihood ratio)
and ``"blackbox"`` (input canaries: held-out Adult rows with flipped labels, scored by the final model's
loss on them).

>>> round(one_run_epsilon_lower_bound(m=1000, r=100, v=100, delta=0.0), 2)   # 100 of 100 right
3.49
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ...accountants.calibrate import noise_multiplier as calibrated_noise_multiplier
from ...ground.search import monotone_search
from ...ground.validation import (
    check_choice, check_confidence, check_delta, check_epsilon, check_features, check_labels, check_positive,
    check_positive_int, check_rng
)
from .canary import upper_bounds
from .results import AuditBound
from .whitebox import observed_run, run_statistic

__all__ = ["one_run_p_value", "one_run_epsilon_lower_bound", "one_run_audit", "one_run_trainer_audit", "OneRunResult",
           "MODES"]

MODES = ("whitebox", "blackbox")


def one_run_p_value(m, r, v, epsilon, delta):
    r"""Upper bound on :math:`P[V \ge v]` for an (epsilon, delta)-DP run (Steinke et al. 2023, main result for delta > 0).

    Parameters
    ----------
    m : int
        Canaries (each in with probability 1/2).
    r, v : int
        Guesses made and guesses right, 0 <= v <= r <= m.
    epsilon : float
        >= 0.
    delta : float
        In [0, 1].
    """
    from scipy import stats  # imported when used: workers that only train skip it
    p = 1.0 / (1.0 + math.exp(-epsilon))                  # accuracy of epsilon-randomized response
    beta = float(stats.binom.sf(v - 1, r, p))             # P[Bin(r, p) >= v]
    if delta == 0 or v == 0:
        return beta
    i = np.arange(1, v + 1)
    alpha = float(np.max((stats.binom.sf(v - i - 1, r, p) - beta) / i))
    return min(1.0, beta + 2.0 * m * delta * alpha)


def one_run_epsilon_lower_bound(*, m, r, v, delta, confidence=0.95):
    """The largest epsilon whose null hypothesis "the run is (epsilon, delta)-DP" the count v rejects.

    :func:`one_run_p_value` increases with epsilon, so the bound is found by bisection; it holds with
    probability >= ``confidence`` (Steinke et al. 2023, main result for delta > 0).

    Returns
    -------
    float
        >= 0 (0 when even epsilon = 0 is not rejected).
    """
    m = check_positive_int(m, "m")
    r = check_positive_int(r, "r")
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v <= r <= m:
        raise ValueError(f"need integers 0 <= v <= r <= m; got v={v!r}, r={r}, m={m}")
    delta = float(delta)
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1); got {delta!r}")
    level = 1.0 - check_confidence(confidence)
    if one_run_p_value(m, r, v, 0.0, delta) > level:
        return 0.0
    # the largest epsilon the guesses still reject (p <= level): a lower bound, never above the exact one
    return float(monotone_search(lambda e: one_run_p_value(m, r, v, e, delta) <= level, 1.0, feasible_when="small",
                                 lowest=0.0, highest=1024.0, rtol=1e-6,
                                 at_limit=lambda e, feasible: math.inf if feasible else e))


@dataclass(frozen=True)
class OneRunResult(AuditBound):
    """What :func:`one_run_audit` measured: an :class:`~dpedu.lab.audit.results.AuditBound` and the guesses."""

    mode: str
    m: int
    guesses: int
    correct: int
    target_epsilon: float
    noise_multiplier: float

    def __str__(self):
        upper = ", ".join(f"{k} {v:.3f}" for k, v in self.upper_bounds.items())
        return (f"one-run audit ({self.mode}), m = {self.m} canaries: {self.correct}/{self.guesses} guesses right -> "
                f"epsilon >= {self.epsilon_lower:.3f} ({self.confidence:.0%})\n  upper bounds {upper} "
                f"(delta = {self.delta:g}; {self.seconds:.1f} s)")


def _guess(scores, included, k_positive, k_negative):
    """(guesses made, right): "in" for the k_positive highest scores, "out" for the k_negative lowest."""
    order = np.argsort(scores, kind="stable")
    right = int(np.sum(included[order[len(order) - k_positive:]])) if k_positive else 0
    right += int(np.sum(~included[order[:k_negative]])) if k_negative else 0
    return k_positive + k_negative, right


def _gradient_canaries(X, m, clip_norm):
    r"""``(data, canaries)``: X with m all-zero columns appended, and canary i = :math:`5C\,e_{d+i}` (label +1)."""
    n, d = X.shape
    canaries = np.zeros((m, d + m))
    canaries[np.arange(m), d + np.arange(m)] = 5.0 * clip_norm
    return np.hstack([X, np.zeros((n, m))]), canaries


def _gradient_canary_scores(run, d, m):
    """Each gradient canary's score: the claimed mixture's likelihood ratio of its coordinate of every update."""
    coordinate_scores = -run.updates[:, d:]                        # each canary's clipped gradient is -C e_{d+i}
    steps = coordinate_scores.shape[0]
    return np.array([run_statistic(coordinate_scores[:, i], np.full(steps, run.clip_norm), "likelihood_ratio",
                                   noise_std=run.noise_std, sampling_rate=run.sampling_rate) for i in range(m)])


def one_run_audit(X, y, *, m=1000, target_epsilon=8.0, delta=1e-5, sampling_rate=0.05, steps=200, mode="whitebox",
                  k_positive=None, k_negative=None, X_canary_pool=None, y_canary_pool=None, clip_norm=1.0,
                  learning_rate=0.01, confidence=0.95, rng=None):
    r"""One DP-SGD run (logistic regression) with m canaries each in with probability 1/2; Steinke et al.'s bound.

    The noise multiplier is calibrated (RDP) so the run is (``target_epsilon``, ``delta``)-DP by the RDP
    accountant; the PLD, RDP and moments upper bounds of the run are reported beside the audit.

    Parameters
    ----------
    X, y : arrays
        The training data (e.g. a sample of :func:`dpedu.textbook.datasets.load_adult`).
    m : int
        Canaries.
    mode : {"whitebox", "blackbox"}
        ``"whitebox"``: canary i is :math:`5C\,e_{d+i}` with label +1 on m new all-zero columns, scored by the
        likelihood ratio of its coordinate of every update. ``"blackbox"``: canary i is row i of
        ``X_canary_pool`` with its label flipped, scored by minus its loss under the final model.
    k_positive, k_negative : int, optional
        Guesses "in" / "out" (default m // 10 each), fixed in advance.
    X_canary_pool, y_canary_pool : arrays
        At least m held-out rows (``"blackbox"`` only).
    rng : None, int, SeedSequence or Generator
        Draws the inclusions and the training.

    Returns
    -------
    OneRunResult
    """
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    m = check_positive_int(m, "m")
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    delta = check_delta(delta)
    steps = check_positive_int(steps, "steps")
    mode = check_choice(mode, "mode", MODES)
    k_positive, k_negative = _guess_counts(m, k_positive, k_negative)
    clip_norm = check_positive(clip_norm, "clip_norm")
    confidence = check_confidence(confidence)
    rng = check_rng(rng)
    start = time.perf_counter()
    z = calibrated_noise_multiplier(target_epsilon, delta, sampling_rate, steps)
    included = rng.random(m) < 0.5
    n, d = X.shape
    if mode == "whitebox":
        data, canaries = _gradient_canaries(X, m, clip_norm)
        labels = np.ones(m)
    else:
        if X_canary_pool is None or y_canary_pool is None:
            raise ValueError("mode='blackbox' needs X_canary_pool and y_canary_pool (held-out rows to mislabel)")
        pool = check_features(X_canary_pool, "X_canary_pool")
        pool_y = check_labels(y_canary_pool, pool.shape[0], "y_canary_pool")
        if pool.shape[0] < m or pool.shape[1] != d:
            raise ValueError(f"X_canary_pool must have >= m = {m} rows and {d} columns; got {pool.shape}")
        data, canaries, labels = X, pool[:m], -pool_y[:m]
    train_X = np.vstack([data, canaries[included]])
    train_y = np.append(y, labels[included])
    run = observed_run(train_X, train_y, noise_multiplier=z, clip_norm=clip_norm, sampling_rate=sampling_rate,
                       steps=steps, learning_rate=learning_rate, rng=rng)
    if mode == "whitebox":
        scores = _gradient_canary_scores(run, d, m)
    else:
        scores = -np.logaddexp(0.0, -labels * (canaries @ run.thetas[-1]))
    guesses, right = _guess(scores, included, k_positive, k_negative)
    upper, notes = upper_bounds(run.ledger, delta, ("moments", "rdp", "pld"))
    return OneRunResult(epsilon_lower=one_run_epsilon_lower_bound(m=m, r=guesses, v=right, delta=delta,
                                                                  confidence=confidence),
                        upper_bounds=upper, mode=mode, m=m, guesses=guesses, correct=right,
                        target_epsilon=target_epsilon, noise_multiplier=z, delta=delta, confidence=confidence,
                        seconds=time.perf_counter() - start, notes=notes)


def _guess_counts(m, k_positive, k_negative):
    """The auditor's numbers of "in" and "out" guesses: m // 10 each by default, at most m together."""
    k_positive = m // 10 if k_positive is None else check_positive_int(k_positive, "k_positive")
    k_negative = m // 10 if k_negative is None else check_positive_int(k_negative, "k_negative")
    if k_positive + k_negative > m:
        raise ValueError(f"k_positive + k_negative must be <= m = {m}; got {k_positive} + {k_negative}")
    return k_positive, k_negative


def one_run_trainer_audit(train, X, y, *, m=1000, delta=1e-5, clip_norm=1.0, k_positive=None, k_negative=None,
                          confidence=0.95, rng=None):
    r"""The white-box one-run audit (gradient canaries, as ``one_run_audit(mode="whitebox")``) of any observed trainer.

    ``train(X, y, rng) -> ObservedRun`` is e.g. :func:`dpedu.lab.audit.whitebox.observed_trainer` or a planted-bug
    :func:`dpedu.lab.audit.bugs.buggy_trainer`; the canaries are scored with the run's *claimed* noise and
    compared with the upper bounds of its *claimed* ledger (docs/math.md §20.3). The guesses are valid
    whatever the trainer does, so a bound above the claim exposes a trainer that leaks more than it claims.
    ``clip_norm`` is the trainer's claimed C (canary i is :math:`5C\,e_{d+i}`, so its gradient is clipped).

    Returns
    -------
    OneRunResult
        ``target_epsilon`` is the claimed ledger's RDP epsilon at ``delta``, ``noise_multiplier`` the
        claimed sigma / C.
    """
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    if not callable(train):
        raise TypeError(f"train must be a callable train(X, y, rng) -> ObservedRun; got {type(train).__name__}")
    m = check_positive_int(m, "m")
    delta = check_delta(delta)
    k_positive, k_negative = _guess_counts(m, k_positive, k_negative)
    clip_norm = check_positive(clip_norm, "clip_norm")
    confidence = check_confidence(confidence)
    rng = check_rng(rng)
    start = time.perf_counter()
    included = rng.random(m) < 0.5
    d = X.shape[1]
    data, canaries = _gradient_canaries(X, m, clip_norm)
    run = train(np.vstack([data, canaries[included]]), np.append(y, np.ones(int(included.sum()))), rng)
    guesses, right = _guess(_gradient_canary_scores(run, d, m), included, k_positive, k_negative)
    upper, notes = upper_bounds(run.ledger, delta, ("moments", "rdp", "pld"))
    return OneRunResult(epsilon_lower=one_run_epsilon_lower_bound(m=m, r=guesses, v=right, delta=delta,
                                                                  confidence=confidence),
                        upper_bounds=upper, mode="whitebox", m=m, guesses=guesses, correct=right,
                        target_epsilon=upper["rdp"], noise_multiplier=run.noise_std / run.clip_norm, delta=delta,
                        confidence=confidence, seconds=time.perf_counter() - start, notes=notes)
