r"""Empirical privacy auditing: does a training run leak as much as its accountant allows?

An accountant gives an **upper** bound on epsilon: a proof that no attack can do better. An audit runs an
attack and turns its success into a **lower** bound: a statistical proof that the run leaks at least this
much. A correct implementation must satisfy ``lower <= upper``; an audit above the accountant's epsilon
means a bug (in the code or in the accounting), never a reason to loosen the test.

Two attacks live here.

* :func:`loss_threshold_attack`: membership inference on one trained model, "a record is a member when
  its loss is below tau" (Yeom et al. 2018). It measures *average-case* leakage of a real dataset.
* :func:`canary_audit`: the *worst-case* game behind the definition (Jagielski, Ullman, Oprea 2020; Nasr
  et al. 2021). Train many times on D (without) and on D' = D + canary (with), score every model by the
  canary's margin, threshold, and convert the false-positive and false-negative rates into a lower bound
  on epsilon with Clopper-Pearson confidence intervals.

The conversion is the hypothesis-testing view of DP (Kairouz, Oh, Viswanath 2015, Thm 2.1): a mechanism is
(epsilon, delta)-DP if and only if *every* test of "D or D'?" has

.. math:: \mathrm{FPR} + e^{\varepsilon}\,\mathrm{FNR} \ge 1-\delta
          \quad\text{and}\quad
          \mathrm{FNR} + e^{\varepsilon}\,\mathrm{FPR} \ge 1-\delta ,

so a test with rates (FPR, FNR) proves

.. math:: \varepsilon \ \ge\ \max\Big(\ln\frac{1-\delta-\mathrm{FPR}}{\mathrm{FNR}},\
          \ln\frac{1-\delta-\mathrm{FNR}}{\mathrm{FPR}}\Big).

>>> round(epsilon_from_rates(0.01, 0.5, delta=0.0), 4)     # ln((1 - 0.5) / 0.01)
3.912
>>> round(clopper_pearson(0, 10, confidence=0.95), 4)      # 1 - 0.05 ** (1/10)
0.2589
>>> X, y = make_audit_data(n=50, d=2, rng=0)
>>> canary = make_canary(X, y)
>>> train = dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4)
>>> result = canary_audit(train, X, y, canary, runs=100, delta=1e-5, rng=0)
>>> 0 <= result.epsilon_lower <= result.upper_bounds["pld"]
True

References
----------
.. [CP34] Clopper & Pearson, The use of confidence or fiducial limits illustrated in the case of the binomial.
   Biometrika 26(4), 1934.
.. [KOV15] Kairouz, Oh, Viswanath, The Composition Theorem for Differential Privacy. ICML 2015.
.. [JUO20] Jagielski, Ullman, Oprea, Auditing Differentially Private Machine Learning: How Private is Private
   SGD? NeurIPS 2020.
.. [NTS21] Nasr, Song, Thakurta, Papernot, Carlini, Adversary Instantiation: Lower Bounds for Differentially
   Private Machine Learning. IEEE S&P 2021.
.. [YGFJ18] Yeom, Giacomelli, Fredrikson, Jha, Privacy Risk in Machine Learning: Analyzing the Connection to
   Overfitting. CSF 2018.
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from .validation import (
    check_array,
    check_delta,
    check_features,
    check_in_interval,
    check_labels,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_rng,
    check_sampling_rate,
    check_theta,
)
from .accountants import compare
from .datasets import make_toy
from .training import TrainingResult, dp_sgd, noisy_gradient_descent

__all__ = [
    "clopper_pearson",
    "epsilon_from_rates",
    "epsilon_lower_bound",
    "make_audit_data",
    "make_canary",
    "canary_scores",
    "dp_sgd_trainer",
    "noisy_gd_trainer",
    "canary_audit",
    "AuditResult",
    "loss_threshold_attack",
    "MembershipAttackResult",
    "CANARY_KINDS",
    "SCORES",
]

CANARY_KINDS = ("least_used", "mislabeled")
SCORES = ("margin", "loss")


# --- statistics ----------------------------------------------------------------------------------


def _check_count(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer count; got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0; got {value}")
    return int(value)


def _check_confidence(confidence):
    return check_in_interval(confidence, "confidence", 0.0, 1.0, low_open=True, high_open=True)


def clopper_pearson(successes, trials, *, confidence=0.95, side="upper"):
    r"""Exact (Clopper-Pearson) confidence bound on a binomial proportion.

    With k successes in n trials and :math:`\alpha = 1-\text{confidence}`:

    .. math::
        p_{\text{upper}} = B^{-1}(1-\alpha;\ k+1,\ n-k)\ \ (=1 \text{ if } k=n), \qquad
        p_{\text{lower}} = B^{-1}(\alpha;\ k,\ n-k+1)\ \ (=0 \text{ if } k=0),

    where :math:`B^{-1}(\cdot; a, b)` is the Beta quantile. Each one-sided bound holds with probability at
    least ``confidence`` for every true p ([CP34]_); ``side="two-sided"`` returns both ends at
    :math:`\alpha/2` each. With k = 0 the upper bound is :math:`1-\alpha^{1/n}\approx \ln(1/\alpha)/n`.

    Parameters
    ----------
    successes : int or array of int
        k, with 0 <= k <= n.
    trials : int
        n >= 1.
    confidence : float
        In (0, 1), e.g. 0.95.
    side : {"upper", "lower", "two-sided"}

    Returns
    -------
    float, ndarray, or a (lower, upper) tuple for ``side="two-sided"``

    References
    ----------
    .. [CP34] Clopper & Pearson, Biometrika 26(4), 1934.

    Examples
    --------
    >>> lo, hi = clopper_pearson(5, 10, side="two-sided")
    >>> round(lo, 4), round(hi, 4)
    (0.1871, 0.8129)
    """
    n = check_positive_int(trials, "trials")
    confidence = _check_confidence(confidence)
    if side not in ("upper", "lower", "two-sided"):
        raise ValueError(f"side must be 'upper', 'lower' or 'two-sided'; got {side!r}")
    scalar = np.ndim(successes) == 0
    if scalar:
        k = np.array([_check_count(successes, "successes")])
    else:
        k = np.asarray(successes)
        if not np.issubdtype(k.dtype, np.integer) or np.any(k < 0):
            raise ValueError("successes must be integer counts >= 0")
    if np.any(k > n):
        raise ValueError(f"successes must be <= trials = {n}; got {int(np.max(k))}")
    alpha = 1.0 - confidence

    def upper(a):
        safe = np.minimum(k, n - 1)                       # keep b = n - k > 0 inside beta.ppf
        return np.where(k >= n, 1.0, stats.beta.ppf(1.0 - a, safe + 1, n - safe))

    def lower(a):
        safe = np.maximum(k, 1)                           # keep a = k > 0 inside beta.ppf
        return np.where(k <= 0, 0.0, stats.beta.ppf(a, safe, n - safe + 1))

    if side == "upper":
        out = upper(alpha)
    elif side == "lower":
        out = lower(alpha)
    else:
        lo, hi = lower(alpha / 2), upper(alpha / 2)
        return (float(lo[0]), float(hi[0])) if scalar else (lo, hi)
    return float(out[0]) if scalar else out


def _log_ratio(numerator, denominator):
    """ln(numerator / denominator) elementwise: -inf when numerator <= 0, +inf when only the denominator is 0."""
    numerator, denominator = np.broadcast_arrays(np.asarray(numerator, float), np.asarray(denominator, float))
    out = np.full(numerator.shape, -np.inf)
    positive = numerator > 0
    zero_den = positive & (denominator <= 0)
    out[zero_den] = np.inf
    ok = positive & ~zero_den
    out[ok] = np.log(numerator[ok]) - np.log(denominator[ok])
    return out


def _epsilon_from_rates(fpr, fnr, delta):
    """Vectorised core of :func:`epsilon_from_rates` (no validation)."""
    a = _log_ratio(1.0 - delta - fpr, fnr)
    b = _log_ratio(1.0 - delta - fnr, fpr)
    return np.maximum(np.maximum(a, b), 0.0)


def epsilon_from_rates(fpr, fnr, *, delta):
    r"""The smallest epsilon consistent with a test of false-positive rate FPR and false-negative rate FNR.

    .. math:: \varepsilon = \max\Big(0,\ \ln\frac{1-\delta-\mathrm{FPR}}{\mathrm{FNR}},\
              \ln\frac{1-\delta-\mathrm{FNR}}{\mathrm{FPR}}\Big)

    An (epsilon, delta)-DP mechanism admits no test with smaller rates (Kairouz, Oh, Viswanath 2015,
    Thm 2.1). Given the *true* rates this is a lower bound on epsilon; given *estimated* rates it is only
    a point estimate: use :func:`epsilon_lower_bound` for a statement with confidence.

    Parameters
    ----------
    fpr, fnr : float
        Rates in [0, 1]. A rate of 0 makes the matching term infinite (a perfect test: no finite epsilon).
    delta : float
        In [0, 1).

    Returns
    -------
    float
        >= 0 (a useless test, FPR + FNR >= 1 - delta, proves nothing: 0).

    Examples
    --------
    >>> round(epsilon_from_rates(0.3, 0.05, delta=1e-5), 4)       # ln(0.7 / 0.05)
    2.639
    """
    fpr = check_in_interval(fpr, "fpr", 0.0, 1.0)
    fnr = check_in_interval(fnr, "fnr", 0.0, 1.0)
    delta = check_in_interval(delta, "delta", 0.0, 1.0, high_open=True)
    return float(_epsilon_from_rates(fpr, fnr, delta))


def _bound_from_counts(false_positives, n_out, false_negatives, n_in, delta, alpha_each):
    fpr_upper = clopper_pearson(false_positives, n_out, confidence=1.0 - alpha_each)
    fnr_upper = clopper_pearson(false_negatives, n_in, confidence=1.0 - alpha_each)
    return _epsilon_from_rates(fpr_upper, fnr_upper, delta), fpr_upper, fnr_upper


def epsilon_lower_bound(*, false_positives, n_out, false_negatives, n_in, delta, confidence=0.95, n_thresholds=1):
    r"""A lower bound on epsilon that holds with probability at least ``confidence``.

    From ``n_out`` runs *without* the canary (of which ``false_positives`` were called "in") and ``n_in`` runs
    *with* it (``false_negatives`` called "out"):

    .. math::
        \varepsilon_{\mathrm{lb}} = \max\Big(0,\ \ln\frac{1-\delta-\overline{\mathrm{FPR}}}{\overline{\mathrm{FNR}}},\
        \ln\frac{1-\delta-\overline{\mathrm{FNR}}}{\overline{\mathrm{FPR}}}\Big)

    with :math:`\overline{\mathrm{FPR}}, \overline{\mathrm{FNR}}` one-sided Clopper-Pearson upper bounds, each at
    level :math:`1 - \alpha/(2m)` where :math:`\alpha = 1-\text{confidence}` and m = ``n_thresholds``. The
    factor 2 is a Bonferroni correction over the two rates (both bounds must hold at once); m corrects for
    trying m thresholds fixed in advance and reporting the best. If both rates are below their bounds, the
    true rates satisfy the Kairouz-Oh-Viswanath inequalities only if epsilon >= the value returned, because
    :math:`(1-\delta-x)/y` decreases in x and y.

    Parameters
    ----------
    false_positives, n_out, false_negatives, n_in : int
        Counts, 0 <= false_positives <= n_out and 0 <= false_negatives <= n_in, n_out, n_in >= 1.
    delta : float
        The delta at which epsilon is audited, in [0, 1).
    confidence : float
        In (0, 1).
    n_thresholds : int
        How many thresholds were tried on these same runs (1 if the threshold was chosen on other runs).

    Returns
    -------
    float

    Examples
    --------
    >>> round(epsilon_lower_bound(false_positives=0, n_out=500, false_negatives=0, n_in=500, delta=1e-5), 3)
    4.906
    """
    n_out = check_positive_int(n_out, "n_out")
    n_in = check_positive_int(n_in, "n_in")
    fp = _check_count(false_positives, "false_positives")
    fn = _check_count(false_negatives, "false_negatives")
    if fp > n_out:
        raise ValueError(f"false_positives ({fp}) must be <= n_out ({n_out})")
    if fn > n_in:
        raise ValueError(f"false_negatives ({fn}) must be <= n_in ({n_in})")
    delta = check_in_interval(delta, "delta", 0.0, 1.0, high_open=True)
    confidence = _check_confidence(confidence)
    m = check_positive_int(n_thresholds, "n_thresholds")
    eps, _, _ = _bound_from_counts(fp, n_out, fn, n_in, delta, (1.0 - confidence) / (2 * m))
    return float(eps)


# --- data and canaries ---------------------------------------------------------------------------


def make_audit_data(n=100, d=3, *, rng=None):
    r"""A small synthetic training set for audits: :func:`dpedu.datasets.make_toy` plus one unused feature.

    The last column is 0 in every row: a rare feature (think of a one-hot category nobody in the data
    has). Only a canary will use it, which makes it the direction where the data's gradients have zero
    variance, the best place for a gradient canary ([NTS21]_'s "Dirac canary").

    Parameters
    ----------
    n : int
        Number of rows (>= 1).
    d : int
        Number of informative features (>= 1); X has d + 1 columns.
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    X : ndarray, shape (n, d + 1), rows in the unit ball
    y : ndarray, shape (n,), labels in {-1, +1}

    Examples
    --------
    >>> X, y = make_audit_data(n=5, d=2, rng=0)
    >>> X.shape, float(abs(X[:, -1]).max())
    ((5, 3), 0.0)
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    X, y = make_toy(n=n, d=d, rng=check_rng(rng))
    return np.hstack([X, np.zeros((n, 1))]), y


def make_canary(X, y, *, kind="least_used", norm=5.0):
    r"""A canary record ``(x, label)`` crafted to be easy to detect in a model trained with it.

    ``kind="least_used"`` (default, the strongest here): :math:`x = R\,v_{\min}` with :math:`v_{\min}` the unit
    eigenvector of :math:`X^\top X` with the smallest eigenvalue, label +1. The data's gradients
    :math:`-y_i x_i\sigma(-m_i)` lie in the span of the rows, so along :math:`v_{\min}` they are (nearly) zero and
    the canary's clipped gradient is the only signal there; scoring a model by :math:`\theta\cdot v_{\min}`
    then sees the canary plus the DP noise alone. This is the clipping-aware direction of Jagielski et al.
    (2020) and, when a feature is unused (:func:`make_audit_data`), the "Dirac canary" of Nasr et al. (2021).

    ``kind="mislabeled"``: an outlier with an unusual label, :math:`x = R\,u` with u the unit direction from
    the mean of the negative rows to the mean of the positive rows, labelled **-1**, which the data says
    should be +1. Natural, but weaker: its gradient competes with the whole dataset along u.

    Parameters
    ----------
    X, y : arrays
        The training data the canary will be added to (labels in {-1, +1}).
    kind : {"least_used", "mislabeled"}
    norm : float
        R > 0. Keep it well above the clip norm C (the default 5 suits C = 1): the canary's gradient has norm
        :math:`R\,\sigma(-m)`, so it is clipped to exactly C (the largest contribution DP allows) as long as its
        margin m stays below :math:`\ln(R/C - 1)`.

    Returns
    -------
    x : ndarray, shape (d,)
    label : float

    Examples
    --------
    >>> X, y = make_audit_data(n=20, d=2, rng=0)
    >>> x, label = make_canary(X, y)
    >>> np.round(np.abs(x), 6).tolist(), label
    ([0.0, 0.0, 5.0], 1.0)
    """
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    norm = check_positive(norm, "norm")
    if kind == "least_used":
        _, vectors = np.linalg.eigh(X.T @ X)              # eigenvalues ascending
        v = vectors[:, 0]
        v = v * np.sign(v[np.argmax(np.abs(v))])          # a deterministic sign
        return norm * v, 1.0
    if kind == "mislabeled":
        if np.all(y == y[0]):
            raise ValueError("kind='mislabeled' needs both labels in y")
        u = X[y > 0].mean(axis=0) - X[y < 0].mean(axis=0)
        if not np.linalg.norm(u) > 0:
            raise ValueError("kind='mislabeled': the two classes have the same mean; use kind='least_used'")
        return norm * u / np.linalg.norm(u), -1.0
    raise ValueError(f"kind must be one of {CANARY_KINDS}; got {kind!r}")


def _check_canary(canary, n_features):
    if not (isinstance(canary, tuple) and len(canary) == 2):
        raise TypeError("canary must be a pair (x, label), e.g. make_canary(X, y)")
    x = check_theta(canary[0], n_features, "canary x")
    if not np.linalg.norm(x) > 0:
        raise ValueError("canary x must be a nonzero vector")
    label = check_labels(np.atleast_1d(canary[1]), 1, "canary label")[0]
    return x, float(label)


def canary_scores(thetas, canary, *, score="margin"):
    r"""How strongly each model in ``thetas`` looks trained *with* the canary (higher: more likely "in").

    ``"margin"``: :math:`s = y_c\,\theta\cdot x_c/\lVert x_c\rVert`, the model's signed margin on the canary
    direction. ``"loss"``: :math:`s = -\ell(\theta; x_c, y_c) = -\ln(1+e^{-y_c\theta\cdot x_c})`, the
    loss-threshold membership test. The loss is a decreasing function of the margin, so both rank models
    identically and give the **same** audit; the margin does not saturate in floating point.

    Parameters
    ----------
    thetas : array_like, shape (runs, d) or (d,)
    canary : (x, label)
    score : {"margin", "loss"}

    Returns
    -------
    ndarray, shape (runs,)
    """
    thetas = check_array(thetas, "thetas", ndim=(1, 2))
    thetas = np.atleast_2d(thetas)
    x, label = _check_canary(canary, thetas.shape[1])
    margins = label * (thetas @ x)
    if score == "margin":
        return margins / np.linalg.norm(x)
    if score == "loss":
        return -np.logaddexp(0.0, -margins)
    raise ValueError(f"score must be one of {SCORES}; got {score!r}")


# --- trainers ------------------------------------------------------------------------------------


def dp_sgd_trainer(*, noise_multiplier, sampling_rate, steps, clip_norm=1.0, learning_rate=0.1):
    r"""``train(X, y, rng) -> TrainingResult``: :func:`dpedu.training.dp_sgd` with these settings.

    ``noise_multiplier=0`` trains without noise (the non-private baseline the audit must catch);
    ``sampling_rate=1`` is full-batch noisy gradient descent (``GaussianEvent`` steps). A small learning rate
    keeps the canary unfitted, so its gradient stays clipped at exactly C (see :func:`make_canary`); the
    privacy, and hence every accountant's bound, does not depend on it.
    """
    noise_multiplier = check_nonnegative(noise_multiplier, "noise_multiplier")
    sampling_rate = check_sampling_rate(sampling_rate)
    steps = check_positive_int(steps, "steps")
    clip_norm = check_positive(clip_norm, "clip_norm")
    learning_rate = check_positive(learning_rate, "learning_rate")

    def train(X, y, rng):
        return dp_sgd(X, y, noise_multiplier=noise_multiplier, clip_norm=clip_norm, sampling_rate=sampling_rate,
                      steps=steps, learning_rate=learning_rate, rng=rng)

    train.description = (f"DP-SGD: z = {noise_multiplier:g}, q = {sampling_rate:g}, T = {steps}, C = {clip_norm:g}, "
                         f"learning rate {learning_rate:g}")
    return train


def noisy_gd_trainer(*, iterations, epsilon, delta, clip=1.0, learning_rate=0.1, calibration="classic"):
    """``train(X, y, rng) -> TrainingResult``: the book's :func:`dpedu.training.noisy_gradient_descent`.

    ``epsilon``/``delta`` are per iteration, as in the book; the ledger also holds the noisy count.
    """
    iterations = check_positive_int(iterations, "iterations")

    def train(X, y, rng):
        return noisy_gradient_descent(X, y, iterations, epsilon, delta, clip_norm=clip, learning_rate=learning_rate,
                                      calibration=calibration, rng=rng)

    train(np.ones((1, 1)), np.ones(1), 0)              # validates the settings now, not inside the audit
    train.description = (f"noisy gradient descent (book): {iterations} iterations at ({epsilon:g}, {delta:g}) "
                         f"each, C = {clip:g}, {calibration} calibration")
    return train


# --- the canary audit ----------------------------------------------------------------------------


@dataclass
class AuditResult:
    """What :func:`canary_audit` measured.

    Attributes
    ----------
    epsilon_lower : float
        The audited lower bound on epsilon at ``delta``, valid with probability >= ``confidence``.
    upper_bounds : dict
        ``{accountant: epsilon}`` for the same run (``inf`` for a non-private run, ``nan`` where an
        accountant does not apply).
    fpr, fnr : float
        Empirical rates at the threshold, on the evaluation runs.
    fpr_upper, fnr_upper : float
        Their Clopper-Pearson upper bounds (each at level ``1 - (1 - confidence) / (2 m)``).
    threshold : float
        "in" means score > threshold.
    scores_in, scores_out : ndarray
        Scores of all runs with / without the canary (selection runs first).
    n_eval_in, n_eval_out : int
        Runs the rates were measured on.
    selection : str
        How the threshold was chosen (``"split"``, ``"fixed"`` or ``"bonferroni"``).
    delta, confidence : float
    runs : int
        Trainings per world.
    seconds : float
        Wall time.
    description : str
    """

    epsilon_lower: float
    upper_bounds: dict
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    threshold: float
    scores_in: np.ndarray
    scores_out: np.ndarray
    n_eval_in: int
    n_eval_out: int
    selection: str
    delta: float
    confidence: float
    runs: int
    seconds: float
    description: str = ""
    notes: dict = field(default_factory=dict)

    @property
    def consistent(self):
        """True when the lower bound does not exceed any finite valid upper bound (no bug detected)."""
        finite = [u for u in self.upper_bounds.values() if not math.isnan(u)]
        return all(self.epsilon_lower <= u for u in finite)

    def __str__(self):
        how = {"split": "chosen on the first half of the runs, rates measured on the second half",
               "fixed": "fixed in advance",
               "bonferroni": "best of thresholds fixed in advance (Bonferroni-corrected)"}[self.selection]
        lines = [
            self.description or "canary audit",
            f"{self.runs} trainings with and {self.runs} without the canary; threshold {self.threshold:.4g} ({how})",
            f"  empirical FPR {self.fpr:.4f} (of {self.n_eval_out}), FNR {self.fnr:.4f} (of {self.n_eval_in}); "
            f"Clopper-Pearson upper bounds {self.fpr_upper:.4f}, {self.fnr_upper:.4f}",
            f"  {'epsilon lower bound (audit, ' + format(self.confidence, '.0%') + ' confidence)':<44}"
            f"{self.epsilon_lower:10.4f}",
        ]
        for name, eps in self.upper_bounds.items():
            shown = "       n/a" if math.isnan(eps) else f"{eps:10.4f}"
            lines.append(f"  {'epsilon upper bound, ' + name:<44}{shown}")
        lines.append(f"  (delta = {self.delta:g}; {self.seconds:.1f} s)")
        if not self.consistent:
            lines.append("  AUDIT FAILED: the lower bound exceeds an accountant's upper bound: look for a bug")
        return "\n".join(lines)


def _check_seed(rng):
    """A SeedSequence: from None, an int, a SeedSequence, or an integer drawn from a Generator."""
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(int(rng.integers(2**63)))
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, numbers.Integral) or rng < 0:
        raise ValueError(f"rng must be None, a non-negative integer, a SeedSequence or a Generator; got {rng!r}")
    return np.random.SeedSequence(int(rng))


def _theta_of(output, name="train"):
    theta = output.theta if isinstance(output, TrainingResult) else output
    return check_array(theta, f"the parameters returned by {name}", ndim=1)


def _counts(scores_in, scores_out, thresholds):
    """(false positives, false negatives) of the test 'in iff score > t' for each t."""
    fp = scores_out.size - np.searchsorted(np.sort(scores_out), thresholds, side="right")
    fn = np.searchsorted(np.sort(scores_in), thresholds, side="right")
    return fp, fn


def _best_threshold(scores_in, scores_out, delta, alpha_each):
    """The threshold maximising the Clopper-Pearson lower bound on these scores (midpoints between scores)."""
    values = np.unique(np.concatenate([scores_in, scores_out]))
    candidates = np.concatenate([[values[0] - 1.0], (values[:-1] + values[1:]) / 2, [values[-1] + 1.0]])
    fp, fn = _counts(scores_in, scores_out, candidates)
    eps, _, _ = _bound_from_counts(fp, scores_out.size, fn, scores_in.size, delta, alpha_each)
    return float(candidates[int(np.argmax(eps))])


def canary_audit(train, X, y, canary, *, runs=1000, delta=1e-5, confidence=0.95, threshold="split",
                 score="margin", accountants=("rdp", "pld"), rng=None, progress=None):
    r"""Audit a training algorithm with a canary: an empirical lower bound on its epsilon.

    For r = 1..``runs`` (seeds spawned from one :class:`numpy.random.SeedSequence`)::

        theta_in  <- train(D + canary)        score s_in  = score(theta_in)
        theta_out <- train(D)                 score s_out = score(theta_out)

    The test "the canary was in iff s > tau" has false-positive rate FPR = P(s_out > tau) and false-negative
    rate FNR = P(s_in <= tau). Each training is an independent Bernoulli trial of the test, so the counts
    are binomial and Clopper-Pearson bounds them; :func:`epsilon_lower_bound` turns the bounds into
    :math:`\varepsilon_{\mathrm{lb}}`, valid with probability >= ``confidence`` (Jagielski et al. 2020, Alg. 2;
    Nasr et al. 2021). The accountants' upper bounds for the same run come from its ledger.

    Parameters
    ----------
    train : callable
        ``train(X, y, rng) -> TrainingResult`` (or a parameter vector), e.g. :func:`dp_sgd_trainer`. It must
        use ``rng`` for all its randomness.
    X, y : arrays
        The training data D without the canary (labels in {-1, +1}).
    canary : (x, label)
        From :func:`make_canary`; added as the last row of D'.
    runs : int
        Trainings per world (>= 4 with ``threshold="split"``). The bound cannot exceed about
        :math:`\ln(n_{\mathrm{eval}}/\ln(2/\alpha))` however leaky the model: more runs, sharper audits.
    delta : float
        The delta at which epsilon is audited and accounted, in (0, 1).
    confidence : float
        In (0, 1): the probability that the returned bound is valid.
    threshold : "split", float or array of floats
        ``"split"`` (default): choose tau on the first half of the runs (maximising the same bound there) and
        measure the rates on the other half, so the threshold is independent of the evaluation runs and no
        correction is needed. A float: one threshold fixed in advance, all runs evaluate it. An array of m
        thresholds fixed in advance: all runs evaluate each, the best is reported, and every bound is taken
        at level :math:`1-\alpha/(2m)` (Bonferroni).
    score : {"margin", "loss"}
        See :func:`canary_scores` (same ranking, same audit).
    accountants : sequence of str
        Accountants for the upper bounds (:func:`dpedu.accountants.compare`).
    rng : None, int, SeedSequence or Generator
        Root of all seeds; the same value gives the same result.
    progress : callable, optional
        Called with a short message about every 10% of the trainings.

    Returns
    -------
    AuditResult
    """
    if not callable(train):
        raise TypeError(f"train must be a callable train(X, y, rng); got {train!r}")
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    x_c, y_c = _check_canary(canary, X.shape[1])
    runs = check_positive_int(runs, "runs")
    delta = check_delta(delta)
    confidence = _check_confidence(confidence)
    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}; got {score!r}")
    if isinstance(threshold, str):
        if threshold != "split":
            raise ValueError(f"threshold must be 'split', a number or an array of numbers; got {threshold!r}")
        if runs < 4:
            raise ValueError(f"runs must be >= 4 with threshold='split' (half select, half evaluate); got {runs}")
        thresholds = None
    else:
        thresholds = check_array(threshold, "threshold", ndim=(0, 1)).reshape(-1)
    if progress is not None and not callable(progress):
        raise TypeError("progress must be None or a callable taking one message")
    seeds = _check_seed(rng).spawn(2 * runs)

    X_in = np.vstack([X, x_c])
    y_in = np.append(y, y_c)
    start = time.perf_counter()
    thetas_in, thetas_out, ledger = [], [], None
    every = max(1, runs // 10)
    for r in range(runs):
        result = train(X_in, y_in, np.random.default_rng(seeds[2 * r]))
        thetas_in.append(_theta_of(result))
        thetas_out.append(_theta_of(train(X, y, np.random.default_rng(seeds[2 * r + 1]))))
        if r == 0 and isinstance(result, TrainingResult):
            ledger = result.ledger if result.private else "non-private"
        if progress is not None and ((r + 1) % every == 0 or r + 1 == runs):
            progress(f"audit: {r + 1}/{runs} pairs of trainings ({time.perf_counter() - start:.1f} s)")
    s_in = canary_scores(np.array(thetas_in), (x_c, y_c), score=score)
    s_out = canary_scores(np.array(thetas_out), (x_c, y_c), score=score)

    alpha = 1.0 - confidence
    if thresholds is None:
        half = runs // 2
        tau = _best_threshold(s_in[:half], s_out[:half], delta, alpha / 2)
        eval_in, eval_out, m, selection = s_in[half:], s_out[half:], 1, "split"
    else:
        eval_in, eval_out, m = s_in, s_out, thresholds.size
        selection = "fixed" if m == 1 else "bonferroni"
    candidates = np.array([tau]) if thresholds is None else thresholds
    fp, fn = _counts(eval_in, eval_out, candidates)
    eps, fpr_u, fnr_u = _bound_from_counts(fp, eval_out.size, fn, eval_in.size, delta, alpha / (2 * m))
    best = int(np.argmax(eps))

    notes = {}
    if ledger is None:
        upper = {}
        notes["accountants"] = "train returned no TrainingResult, so there is no ledger to account"
    elif ledger == "non-private":
        upper = {name: math.inf for name in accountants}
    else:
        comparison = compare(ledger, delta, accountants=accountants)
        upper, notes = dict(comparison), dict(comparison.notes)
    return AuditResult(
        epsilon_lower=float(eps[best]), upper_bounds=upper,
        fpr=float(fp[best] / eval_out.size), fnr=float(fn[best] / eval_in.size),
        fpr_upper=float(fpr_u[best]), fnr_upper=float(fnr_u[best]), threshold=float(candidates[best]),
        scores_in=s_in, scores_out=s_out, n_eval_in=int(eval_in.size), n_eval_out=int(eval_out.size),
        selection=selection, delta=delta, confidence=confidence, runs=runs,
        seconds=time.perf_counter() - start, description=getattr(train, "description", ""), notes=notes,
    )


# --- membership inference on one model -----------------------------------------------------------


@dataclass
class MembershipAttackResult:
    """Outcome of :func:`loss_threshold_attack`.

    Attributes
    ----------
    tpr, fpr : float
        Members called members; non-members called members.
    advantage : float
        ``tpr - fpr`` (Yeom et al. 2018, Def. 4): 0 for guessing.
    auc : float
        Probability that a random member has a lower loss than a random non-member (ties count 1/2).
    threshold : float
    member_losses, nonmember_losses : ndarray
    """

    tpr: float
    fpr: float
    advantage: float
    auc: float
    threshold: float
    member_losses: np.ndarray
    nonmember_losses: np.ndarray

    @property
    def epsilon_estimate(self):
        """:func:`epsilon_from_rates` of the observed rates at delta = 0: a point estimate, not a bound."""
        return float(_epsilon_from_rates(self.fpr, 1.0 - self.tpr, 0.0))


def loss_threshold_attack(theta, X_members, y_members, X_nonmembers, y_nonmembers, *, threshold=None):
    r"""Membership inference by loss threshold: "a record is a member iff its loss is <= tau".

    .. math:: \ell(\theta; x, y) = \ln(1+e^{-y\,\theta\cdot x}), \qquad
              \widehat{\text{member}}(x, y) = [\ell(\theta; x, y) \le \tau]

    The default :math:`\tau` is the mean training loss, which the attacker is assumed to know (Yeom et al.
    2018, Alg. 1). An overfitted model has a small loss on its members and a larger one elsewhere, so the
    attack works; a DP model bounds it: :math:`\mathrm{TPR} \le e^\varepsilon\,\mathrm{FPR} + \delta`.

    The records of one dataset are not independent trials of the DP game, so the rates of one model do
    **not** give a confidence bound on epsilon; use :func:`canary_audit` for that.

    Parameters
    ----------
    theta : array_like, shape (d,)
    X_members, y_members : arrays
        The training records.
    X_nonmembers, y_nonmembers : arrays
        Records from the same distribution the model never saw.
    threshold : float, optional

    Returns
    -------
    MembershipAttackResult
    """
    Xm = check_features(X_members, "X_members")
    ym = check_labels(y_members, Xm.shape[0], "y_members")
    Xn = check_features(X_nonmembers, "X_nonmembers")
    yn = check_labels(y_nonmembers, Xn.shape[0], "y_nonmembers")
    if Xn.shape[1] != Xm.shape[1]:
        raise ValueError(f"X_nonmembers has {Xn.shape[1]} columns but X_members has {Xm.shape[1]}")
    theta = check_theta(theta, Xm.shape[1])
    member_losses = np.logaddexp(0.0, -ym * (Xm @ theta))
    nonmember_losses = np.logaddexp(0.0, -yn * (Xn @ theta))
    if threshold is None:
        tau = float(member_losses.mean())
    else:
        tau = check_nonnegative(threshold, "threshold", allow_inf=True)
    tpr = float(np.mean(member_losses <= tau))
    fpr = float(np.mean(nonmember_losses <= tau))
    ranks = stats.rankdata(np.concatenate([member_losses, nonmember_losses]))   # Mann-Whitney U
    n_m, n_n = member_losses.size, nonmember_losses.size
    u_nonmembers_higher = ranks[n_m:].sum() - n_n * (n_n + 1) / 2
    return MembershipAttackResult(tpr=tpr, fpr=fpr, advantage=tpr - fpr, auc=float(u_nonmembers_higher / (n_m * n_n)),
                                  threshold=tau, member_losses=member_losses, nonmember_losses=nonmember_losses)
