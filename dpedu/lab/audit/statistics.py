r"""Statistics of audits: Clopper-Pearson bounds, epsilon from error rates, and Gaussian (mu-GDP) bounds.

Two ways to turn an attack into a lower bound on epsilon live here.

* Distribution-free: count a test's errors over independent runs, bound both rates with Clopper-Pearson
  and apply the hypothesis-testing characterisation of DP (Kairouz, Oh, Viswanath 2015, Thm 2.1)
  (:func:`epsilon_lower_bound`, docs/math.md §20.1).
* Gaussian: when the observed statistic is Gaussian with the same variance in both worlds (a Dirac
  gradient canary under full-batch noisy training), the two worlds are a mu-GDP pair; a one-sided lower
  confidence bound on mu (noncentral t) converts to epsilon at delta through the exact Gaussian curve
  (Dong, Roth & Su 2019; :func:`gaussian_mu_lower_bound`, :func:`epsilon_from_mu`, docs/math.md §20.2).

>>> round(epsilon_from_rates(0.01, 0.5, delta=0.0), 4)     # ln((1 - 0.5) / 0.01)
3.912
>>> round(epsilon_from_mu(2.0, delta=1e-5), 2)             # mu = sqrt(4) / 1: z = 1, T = 4
10.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ...ground.gaussian import gaussian_epsilon_exact
from ...ground.search import monotone_search
from ...ground.validation import (
    check_array, check_choice, check_confidence, check_delta, check_in_interval, check_nonnegative,
    check_nonnegative_int, check_positive_int, check_scalar
)
from ...ground.door import count, count_or_zero, delta_or_zero, door, open_unit

__all__ = [
    "bound_is_consistent",
    "clopper_pearson",
    "epsilon_from_rates",
    "epsilon_from_rate_arrays",
    "epsilon_lower_bound",
    "rate_bounds_epsilon",
    "error_counts",
    "best_threshold",
    "gaussian_mu_lower_bound",
    "epsilon_from_mu",
]


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
    confidence = check_confidence(confidence)
    side = check_choice(side, "side", ("upper", "lower", "two-sided"))
    scalar = np.ndim(successes) == 0
    if scalar:
        k = np.array([check_nonnegative_int(successes, "successes")])
    else:
        k = np.asarray(successes)
        if not np.issubdtype(k.dtype, np.integer) or np.any(k < 0):
            raise ValueError("successes must be integer counts >= 0")
    if np.any(k > n):
        raise ValueError(f"successes must be <= trials = {n}; got {int(np.max(k))}")
    from scipy import stats  # imported when used: workers that only train skip it
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


def epsilon_from_rate_arrays(fpr, fnr, delta):
    """Vectorised :func:`epsilon_from_rates` for arrays of rates (no validation): elementwise, >= 0."""
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
    return float(epsilon_from_rate_arrays(fpr, fnr, delta))


def rate_bounds_epsilon(false_positives, n_out, false_negatives, n_in, delta, alpha_each):
    """(epsilon bound, FPR upper, FNR upper) from counts, each rate bounded at level 1 - alpha_each (arrays ok)."""
    fpr_upper = clopper_pearson(false_positives, n_out, confidence=1.0 - alpha_each)
    fnr_upper = clopper_pearson(false_negatives, n_in, confidence=1.0 - alpha_each)
    return epsilon_from_rate_arrays(fpr_upper, fnr_upper, delta), fpr_upper, fnr_upper


def counts_arguments(arguments):
    """Error counts within their run counts."""
    for errors, runs in (("false_positives", "n_out"), ("false_negatives", "n_in")):
        if arguments[errors] > arguments[runs]:
            raise ValueError(f"{errors} ({arguments[errors]}) must be <= {runs} ({arguments[runs]})")


@door(counts_arguments, false_positives=count_or_zero, n_out=count,
      false_negatives=count_or_zero, n_in=count, delta=delta_or_zero,
      confidence=open_unit, n_thresholds=count)
def epsilon_lower_bound(*, false_positives, n_out, false_negatives, n_in, delta,
                        confidence=0.95, n_thresholds=1):
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
    alpha = (1.0 - confidence) / (2 * n_thresholds)  # Bonferroni: 2 rates, m thresholds
    fp, fn = false_positives, false_negatives
    eps, _, _ = rate_bounds_epsilon(fp, n_out, fn, n_in, delta, alpha)
    return float(eps)




# --- thresholds on scores --------------------------------------------------------------------------


def error_counts(scores_in, scores_out, thresholds):
    """(false positives, false negatives) of the test "in iff score > t", for each threshold t (arrays)."""
    thresholds = np.asarray(thresholds, dtype=float)
    fp = scores_out.size - np.searchsorted(np.sort(scores_out), thresholds, side="right")
    fn = np.searchsorted(np.sort(scores_in), thresholds, side="right")
    return fp, fn


def best_threshold(scores_in, scores_out, delta, alpha_each):
    """The threshold maximising the Clopper-Pearson lower bound on these scores (midpoints between scores).

    Choosing it on the runs that then measure the rates is a hidden multiple comparison: choose it on
    separate runs (the audits split their runs in halves).
    """
    values = np.unique(np.concatenate([scores_in, scores_out]))
    candidates = np.concatenate([[values[0] - 1.0], (values[:-1] + values[1:]) / 2, [values[-1] + 1.0]])
    fp, fn = error_counts(scores_in, scores_out, candidates)
    eps, _, _ = rate_bounds_epsilon(fp, scores_out.size, fn, scores_in.size, delta, alpha_each)
    return float(candidates[int(np.argmax(eps))])


# --- Gaussian (mu-GDP) bounds ----------------------------------------------------------------------


def gaussian_mu_lower_bound(scores_in, scores_out, *, confidence=0.95):
    r"""One-sided lower confidence bound on :math:`\mu = (m_{\mathrm{in}} - m_{\mathrm{out}})/\sigma`.

    Model: the ``n1`` scores with the canary are :math:`\mathcal N(m_{\mathrm{in}}, \sigma^2)`, the ``n0``
    without are :math:`\mathcal N(m_{\mathrm{out}}, \sigma^2)`, all independent, :math:`\sigma` unknown.
    Then the two-sample statistic

    .. math:: t = \frac{\bar s_{\mathrm{in}} - \bar s_{\mathrm{out}}}{s_p\sqrt{1/n_1 + 1/n_0}}

    (pooled standard deviation :math:`s_p`) has a noncentral t distribution with :math:`n_1+n_0-2`
    degrees of freedom and noncentrality :math:`\mu/\sqrt{1/n_1+1/n_0}`, increasing in :math:`\mu`. The
    returned :math:`\mu_{\mathrm{lb}}` solves :math:`P(T \ge t_{\mathrm{obs}} \mid \mu_{\mathrm{lb}}) = 1 -
    \text{confidence}`, so :math:`P(\mu_{\mathrm{lb}} \le \mu) \ge` ``confidence`` exactly under the model
    (docs/math.md §20.2). Two N(m, sigma^2) worlds are a mu-GDP pair, so mu is their privacy (Dong, Roth &
    Su 2019, Def. 2.4).

    Parameters
    ----------
    scores_in, scores_out : array_like, 1-d
        At least 2 values each; not all equal.
    confidence : float
        In (0, 1).

    Returns
    -------
    float
        :math:`\mu_{\mathrm{lb}} \ge 0` (0 when the data do not show a positive shift).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> lb = gaussian_mu_lower_bound(rng.normal(2, 1, 4000), rng.normal(0, 1, 4000))
    >>> 1.8 < lb < 2.0
    True
    """
    s_in = check_array(scores_in, "scores_in", ndim=1)
    s_out = check_array(scores_out, "scores_out", ndim=1)
    confidence = check_confidence(confidence)
    n1, n0 = s_in.size, s_out.size
    if n1 < 2 or n0 < 2:
        raise ValueError(f"scores_in and scores_out need at least 2 values each; got {n1} and {n0}")
    from scipy import stats  # imported when used: workers that only train skip it
    df = n1 + n0 - 2
    pooled = math.sqrt((np.sum((s_in - s_in.mean()) ** 2) + np.sum((s_out - s_out.mean()) ** 2)) / df)
    if not pooled > 0:
        raise ValueError("the scores have zero variance: the Gaussian model does not apply (use a threshold bound)")
    scale = math.sqrt(1.0 / n1 + 1.0 / n0)
    t_obs = (s_in.mean() - s_out.mean()) / (pooled * scale)
    alpha = 1.0 - confidence

    def excess(mu):  # P(T >= t_obs | mu) - alpha, increasing in mu
        return float(stats.nct.sf(t_obs, df, mu / scale)) - alpha

    if excess(0.0) >= 0:
        return 0.0
    # the largest mu still rejected (excess < 0): at most the bound's exact value, so never above it
    return float(monotone_search(lambda mu: excess(mu) < 0, max(1.0, 2.0 * t_obs * scale), feasible_when="small",
                                 lowest=0.0, highest=math.inf, rtol=1e-10, at_limit=lambda mu, feasible: mu))


def epsilon_from_mu(mu, *, delta):
    r"""The epsilon of a :math:`\mu`-GDP pair at ``delta``: the exact Gaussian curve (Balle & Wang 2018, Thm 8).

    :math:`\delta(\varepsilon) = \Phi(-\varepsilon/\mu + \mu/2) - e^{\varepsilon}\Phi(-\varepsilon/\mu - \mu/2)`
    (Dong, Roth & Su 2019, Cor. 2.13), inverted by bisection (:func:`dpedu.ground.gaussian.gaussian_epsilon_exact`
    with noise multiplier :math:`1/\mu`). Increasing in mu, so a lower bound on mu gives one on epsilon.

    Parameters
    ----------
    mu : float
        >= 0 (0 gives 0).
    delta : float
        In (0, 1).
    """
    mu = check_nonnegative(mu, "mu")
    delta = check_delta(delta)
    if mu == 0:
        return 0.0
    return float(gaussian_epsilon_exact(delta, 1.0 / mu))


def bound_is_consistent(epsilon_lower, upper_bounds):
    """True when an audited lower bound does not exceed any finite upper bound (no bug detected).

    ``upper_bounds`` maps accountant names to epsilons; ``nan`` (an accountant that does not apply) is skipped.

    >>> bound_is_consistent(1.2, {"pld": 1.5, "zcdp": float("nan")}), bound_is_consistent(2.0, {"pld": 1.5})
    (True, False)

    Raises ``TypeError`` if ``upper_bounds`` is not a mapping or holds a non-number, ``ValueError`` if
    ``epsilon_lower`` is NaN.
    """
    epsilon_lower = check_scalar(epsilon_lower, "epsilon_lower")
    if not isinstance(upper_bounds, Mapping):
        raise TypeError(f"upper_bounds must be a mapping {{accountant: epsilon}}; got {type(upper_bounds).__name__}")
    uppers = [check_scalar(u, f"upper_bounds[{name!r}]", allow_nan=True) for name, u in upper_bounds.items()]
    return all(epsilon_lower <= u for u in uppers if not math.isnan(u))
