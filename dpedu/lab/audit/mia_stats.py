r"""A membership attack's ROC at low false-positive rates, its confidence band, and the ceiling DP puts on it
(docs/math.md §20.5, §20.6).

The attack says "member" when its score is at least a threshold t. Over every (target model, record) pair
with a known answer, each t gives a false-positive rate (OUT pairs called members) and a true-positive rate
(IN pairs called members): the ROC. Carlini et al. (2022) read it on log-log axes and report the TPR at a low
FPR (0.1 %, 1 %), where an attacker can act on its guesses; an average such as the AUC hides them. Here
:math:`\mathrm{TPR}(\alpha)` is the largest TPR among thresholds with FPR at most :math:`\alpha` (no
interpolation between thresholds).

**Confidence intervals** are percentile bootstrap intervals over the *target models*: the pairs of one model share
its training noise, so a model is resampled with all its pairs (B resamples, each recomputing the ROC). They
describe the sampling of the models, not a guarantee; the audit of :mod:`dpedu.lab.audit.mia_audit` gives
the statement with a stated confidence (Clopper-Pearson on independent trainings). The TPR at a low FPR is a
maximum over thresholds, so with few models its percentile interval can even exclude the point estimate.

**The ceiling.** Every membership test against an :math:`(\varepsilon, \delta)`-DP training has
:math:`\mathrm{TPR} \le e^\varepsilon\,\mathrm{FPR} + \delta` (Kairouz, Oh & Viswanath 2015) and, tighter, every
test against a training whose trade-off curve is :math:`\beta` has :math:`\mathrm{TPR} \le 1 - \beta(\mathrm{FPR})`
(Dong, Roth & Su 2022). An attack above either line means a privacy bug; an attack far below proves nothing.

>>> fpr, tpr = roc_curve(np.array([0.9, 0.8, 0.7, 0.1]), np.array([True, False, True, False]))
>>> fpr.tolist(), tpr.tolist()
([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
>>> tpr_at_fpr(fpr, tpr, 0.0), auc(np.array([0.9, 0.8, 0.7, 0.1]), np.array([True, False, True, False]))
(0.5, 0.75)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...accountants.tradeoff import TradeoffCurve, check_alphas
from ...ground.validation import check_array, check_confidence, check_positive_int, check_rng

__all__ = ["roc_curve", "tpr_at_fpr", "auc", "AttackROC", "evaluate_attack", "epsilon_line", "min_fpr_for_tpr",
           "ceiling_violations",
           "REPORTED_FPRS", "BAND_FPRS", "MAX_BOOTSTRAP"]

REPORTED_FPRS = (0.001, 0.01)
BAND_FPRS = tuple(np.geomspace(1e-4, 1.0, 41))
MAX_BOOTSTRAP = 10_000


def _check_pairs(scores, labels):
    s = check_array(scores, "scores", ndim=1)
    labels = np.asarray(labels)
    if labels.dtype != bool or labels.shape != s.shape:
        raise ValueError(f"labels must be booleans (True: member), one per score; got {labels.dtype} {labels.shape}")
    if labels.all() or not labels.any():
        raise ValueError("labels must hold both members (True) and non-members (False)")
    return s, labels


def _sorted_steps(scores, labels):
    """Labels in decreasing order of score, and the end index of each run of equal scores (one ROC point each)."""
    order = np.argsort(-scores, kind="stable")
    ordered = scores[order]
    ends = np.append(np.flatnonzero(ordered[1:] != ordered[:-1]), ordered.size - 1)
    return order, ends


def roc_curve(scores, labels):
    """``(fpr, tpr)`` of the test "member iff score >= t" for every threshold t, from (0, 0) to (1, 1).

    Equal scores form one step (the test cannot split them). ``labels``: True for a member (IN) pair.
    """
    s, labels = _check_pairs(scores, labels)
    order, ends = _sorted_steps(s, labels)
    hits = np.cumsum(labels[order])[ends]
    false = (ends + 1) - hits
    return np.append(0.0, false / (~labels).sum()), np.append(0.0, hits / labels.sum())


def tpr_at_fpr(fpr, tpr, alpha):
    """The largest TPR among the ROC's thresholds with FPR <= ``alpha`` (0 if there is none but the first)."""
    fpr, tpr = np.asarray(fpr, dtype=float), np.asarray(tpr, dtype=float)
    keep = fpr <= alpha * (1 + 1e-12)                 # k / n_out == alpha up to rounding counts as <= alpha
    return float(tpr[keep].max()) if keep.any() else 0.0


def auc(scores, labels):
    """Area under the ROC: the probability that a member's score beats a non-member's (ties count 1/2)."""
    fpr, tpr = roc_curve(scores, labels)
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))


@dataclass(frozen=True)
class AttackROC:
    """An attack's ROC over (target model, record) pairs, with bootstrap intervals over the target models.

    Attributes
    ----------
    label : str
    fpr, tpr : ndarray
        The ROC (:func:`roc_curve`).
    n_in, n_out : int
        Member and non-member pairs; ``dropped`` pairs had no score (NaN: too few shadow models saw the record).
    auc : float
    fprs, tpr_at, tpr_low, tpr_high : ndarray
        The reported FPRs, the TPR at each and its percentile interval.
    band_fprs, band_low, band_high : ndarray
        The same interval on a grid of FPRs from 1e-4 to 1 (the shaded band of a plot).
    confidence : float
    n_bootstrap, n_models : int
    """

    label: str
    fpr: np.ndarray
    tpr: np.ndarray
    n_in: int
    n_out: int
    dropped: int
    auc: float
    fprs: np.ndarray
    tpr_at: np.ndarray
    tpr_low: np.ndarray
    tpr_high: np.ndarray
    band_fprs: np.ndarray
    band_low: np.ndarray
    band_high: np.ndarray
    confidence: float
    n_bootstrap: int
    n_models: int

    def row(self):
        """``"TPR at 0.1%:  1.23% [0.80, 1.71]   TPR at 1%: ..."``: the reported TPRs with their intervals (in %)."""
        return "   ".join(f"TPR at {100 * a:g}%: {100 * t:5.2f}% [{100 * lo:.2f}, {100 * hi:.2f}]"
                          for a, t, lo, hi in zip(self.fprs, self.tpr_at, self.tpr_low, self.tpr_high))


def _weighted_tprs(labels, model_of, ends, weights, alphas):
    """TPR at each FPR in ``alphas`` when model k's pairs count ``weights[k]`` times (one bootstrap resample)."""
    w = weights[model_of]
    hits = np.cumsum(np.where(labels, w, 0.0))[ends]
    false = np.cumsum(np.where(labels, 0.0, w))[ends]
    total_in, total_out = hits[-1], false[-1]
    if total_in <= 0 or total_out <= 0:
        return np.full(len(alphas), math.nan)
    fpr, tpr = np.append(0.0, false / total_out), np.append(0.0, hits / total_in)
    best = np.maximum.accumulate(tpr)            # fpr is non-decreasing: the best TPR up to each point
    last = np.searchsorted(fpr, np.asarray(alphas) * (1 + 1e-12), side="right") - 1
    return best[last]


def evaluate_attack(scores, memberships, *, records=None, fprs=REPORTED_FPRS, n_bootstrap=200, confidence=0.95,
                    rng=None, label=""):
    """The :class:`AttackROC` of ``scores`` (target models x records) against the true ``memberships``.

    Parameters
    ----------
    scores : array, shape (T, N)
        One row per target model (e.g. :func:`~dpedu.lab.audit.lira.lira_scores`); NaN pairs are dropped.
    memberships : bool array, shape (T, N)
        The answers for the same models (``shadow.memberships[targets]``).
    records : index array, optional
        The records to count (a group); default all.
    fprs : sequence of float
        The FPRs whose TPR is reported.
    n_bootstrap : int
        Resamples of the target models, 1 to :data:`MAX_BOOTSTRAP` (each costs one pass over the pairs).
    confidence : float
        Of the percentile intervals.
    rng : None, int, SeedSequence or Generator
        Draws the resamples.
    label : str
    """
    scores = check_array(scores, "scores", ndim=2, finite=False)
    memberships = np.asarray(memberships)
    if memberships.shape != scores.shape or memberships.dtype != bool:
        raise ValueError(f"memberships must be booleans of the shape of scores {scores.shape}; got "
                         f"{memberships.dtype} {memberships.shape}")
    if records is not None:
        records = np.asarray(records)
        if records.ndim != 1 or records.size == 0 or not np.issubdtype(records.dtype, np.integer) \
                or records.min() < 0 or records.max() >= scores.shape[1]:
            raise ValueError(f"records must be a non-empty 1-d array of record indices in [0, {scores.shape[1]}); "
                             f"got {records!r}")
        scores, memberships = scores[:, records], memberships[:, records]
    reported = check_alphas(fprs, "fprs", sort=False)
    n_bootstrap = check_positive_int(n_bootstrap, "n_bootstrap", maximum=MAX_BOOTSTRAP)
    confidence = check_confidence(confidence)
    rng = check_rng(rng)
    model_of = np.repeat(np.arange(scores.shape[0]), scores.shape[1])
    flat_scores, flat_labels = scores.ravel(), memberships.ravel()
    if np.any(np.isposinf(flat_scores) | np.isneginf(flat_scores)):
        raise ValueError("scores must be finite or NaN (no score); got an infinite score")
    ok = ~np.isnan(flat_scores)
    flat_scores, flat_labels, model_of = flat_scores[ok], flat_labels[ok], model_of[ok]
    fpr, tpr = roc_curve(flat_scores, flat_labels)
    order, ends = _sorted_steps(flat_scores, flat_labels)
    labels_sorted, model_sorted = flat_labels[order], model_of[order]
    alphas = np.concatenate([reported, np.asarray(BAND_FPRS)])
    draws = np.empty((n_bootstrap, alphas.size))
    for b in range(n_bootstrap):
        weights = np.bincount(rng.integers(0, scores.shape[0], scores.shape[0]), minlength=scores.shape[0])
        draws[b] = _weighted_tprs(labels_sorted, model_sorted, ends, weights.astype(float), alphas)
    tail = 100 * (1 - confidence) / 2
    with np.errstate(invalid="ignore"):
        low, high = np.nanpercentile(draws, tail, axis=0), np.nanpercentile(draws, 100 - tail, axis=0)
    k = reported.size
    return AttackROC(label=label, fpr=fpr, tpr=tpr, n_in=int(flat_labels.sum()), n_out=int((~flat_labels).sum()),
                     dropped=int((~ok).sum()), auc=float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2)),
                     fprs=reported, tpr_at=np.array([tpr_at_fpr(fpr, tpr, a) for a in reported]),
                     tpr_low=low[:k], tpr_high=high[:k], band_fprs=alphas[k:], band_low=low[k:], band_high=high[k:],
                     confidence=confidence, n_bootstrap=n_bootstrap, n_models=scores.shape[0])


def epsilon_line(alpha, epsilon, delta):
    r"""The simple ceiling :math:`\min(1, e^\varepsilon\alpha + \delta)` on the TPR at FPR :math:`\alpha`."""
    a = check_alphas(np.atleast_1d(alpha), "alpha", sort=False)
    with np.errstate(over="ignore"):
        return np.minimum(1.0, math.exp(min(epsilon, 700.0)) * a + delta)


def min_fpr_for_tpr(tpr, epsilon, delta):
    r"""The smallest FPR at which an :math:`(\varepsilon, \delta)`-DP training lets any attack reach ``tpr``:

    .. math:: \alpha_{\min} = \max\big(0,\ (t - \delta)\,e^{-\varepsilon},\ 1 - \delta - e^{\varepsilon}(1 - t)\big),

    both lines of the testing region solved for the FPR (docs/math.md §20.6). Below it the ceiling stops the attack.

    >>> round(min_fpr_for_tpr(0.5, 1.0, 1e-5), 5)          # (0.5 - 1e-5) / e
    0.18394
    """
    from ...ground.validation import check_in_interval, check_nonnegative

    t = check_in_interval(tpr, "tpr", 0.0, 1.0)
    epsilon = check_nonnegative(epsilon, "epsilon")
    delta = check_in_interval(delta, "delta", 0.0, 1.0, high_open=True)
    with np.errstate(over="ignore"):
        steep = (t - delta) * math.exp(-epsilon)
        flat = 1.0 - delta - math.exp(min(epsilon, 700.0)) * (1.0 - t)
    return float(max(0.0, steep, flat))


def ceiling_violations(roc, curve, *, min_false_positives=10):
    r"""The reported FPRs :math:`\alpha` at which the attack's TPR interval lies entirely above the ceiling
    :math:`1 - \beta(\alpha)` of ``curve`` (a :class:`~dpedu.accountants.tradeoff.TradeoffCurve`): a list of
    ``(alpha, tpr_low, ceiling)``. Empty for a correct implementation.

    Only FPRs with at least ``min_false_positives`` expected false positives (:math:`\alpha\,n_{out}`) are
    tested: below that the empirical TPR at :math:`\alpha` rests on a handful of OUT pairs. The intervals are
    per FPR, not simultaneous; for a statement with a stated confidence use the audit
    (:func:`dpedu.lab.audit.mia_audit.attack_audit`).
    """
    if not isinstance(roc, AttackROC):
        raise TypeError(f"roc must be an AttackROC (from evaluate_attack); got {type(roc).__name__}")
    if not isinstance(curve, TradeoffCurve):
        raise TypeError(f"curve must be a TradeoffCurve; got {type(curve).__name__}")
    min_false_positives = check_positive_int(min_false_positives, "min_false_positives")
    if not curve.applies:
        return []
    found = []
    for alpha, low in zip(roc.fprs, roc.tpr_low):
        if alpha * roc.n_out < min_false_positives or not np.isfinite(low):
            continue
        ceiling = float(curve.best_tpr(float(alpha)))
        if low > ceiling + 1e-12:
            found.append((float(alpha), float(low), ceiling))
    return found
