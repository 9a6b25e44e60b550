"""Checks for the exercises of chapter 13: attacks that measure privacy (docs/math.md §20.5, §20.6).

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`). The inputs are drawn from the check's own seed; a failure names the mistake it
recognises, never the expected number.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from .common import CheckFailed, call, checker, close, expect, passed, scalar, settings

__all__ = ["check_lira_record_score", "check_min_fpr_for_tpr"]


def _logit(p):
    return np.log(p) - np.log1p(-p)


def _gaussian_ratio(x, inside, outside, ddof=1, logs=True):
    m_in, s_in = inside.mean(), inside.std(ddof=ddof)
    m_out, s_out = outside.mean(), outside.std(ddof=ddof)
    value = stats.norm.logpdf(x, m_in, s_in) - stats.norm.logpdf(x, m_out, s_out)
    return value if logs else math.exp(value)


def _draws(rng):
    """(target confidence, IN confidences, OUT confidences) cases drawn from ``rng``: the member looks like a
    member, like a non-member, or in between, with few and with more shadow models."""
    cases = []
    for n_in, n_out, where in ((4, 5, 1.0), (8, 7, 0.0), (6, 9, 0.5), (16, 16, 0.8)):
        mu_in, mu_out = rng.normal(2.0, 0.5), rng.normal(0.0, 0.5)
        inside = 1 / (1 + np.exp(-rng.normal(mu_in, 0.7, n_in)))
        outside = 1 / (1 + np.exp(-rng.normal(mu_out, 0.9, n_out)))
        phi = where * mu_in + (1 - where) * mu_out + rng.normal(0, 0.3)
        cases.append((float(1 / (1 + math.exp(-phi))), inside, outside))
    return cases


@checker
def check_lira_record_score(fn, *, seed=None):
    r"""``fn(confidence, in_confidences, out_confidences)``: the online LiRA score of one record, from the target
    model's confidence in the record's label and the confidences of shadow models trained with (IN) and without
    (OUT) it: logit-scale every confidence, :math:`\phi = \ln(p/(1-p))`, fit a Gaussian to each world (sample mean,
    unbiased variance) and return :math:`\ln\mathcal N(\phi; \mu_{in}, \sigma_{in}^2) - \ln\mathcal N(\phi;
    \mu_{out}, \sigma_{out}^2)`."""
    for k, (p, inside, outside) in enumerate(_draws(settings(seed))):
        out = scalar(call(fn, p, inside.copy(), outside.copy()), "the score")
        phi, lin, lout = _logit(p), _logit(inside), _logit(outside)
        expected = _gaussian_ratio(phi, lin, lout)
        if close(out, expected, rtol=1e-6, atol=1e-9):
            continue
        where = f"(case {k + 1}: {inside.size} IN and {outside.size} OUT shadow models)"
        expect(not close(out, _gaussian_ratio(p, inside, outside), rtol=1e-6, atol=1e-9),
               f"you fitted the Gaussians to the raw confidences {where}: LiRA logit-scales them first, "
               "phi = ln(p / (1 - p)), which makes them close to Gaussian",
               more="apply phi = log(p) - log(1 - p) to the target's confidence and to every shadow confidence")
        expect(not close(out, -expected, rtol=1e-6, atol=1e-9),
               f"your score has the wrong sign {where}: a member should score high, so it is ln N(IN) - ln N(OUT)")
        expect(not close(out, _gaussian_ratio(phi, lin, lout, logs=False), rtol=1e-6, atol=1e-12),
               f"you returned the ratio of the densities {where}; the score is its logarithm (the densities "
               "underflow for a strong attack)")
        expect(not close(out, _gaussian_ratio(phi, lin, lout, ddof=0), rtol=1e-6, atol=1e-9),
               f"your variances divide by n {where}; use the unbiased sample variance (divide by n - 1, ddof=1): "
               "with a handful of shadow models the difference is large")
        expect(not close(out, stats.norm.logpdf(phi, lin.mean(), lin.std(ddof=1)), rtol=1e-6, atol=1e-9),
               f"you returned the IN log-density alone {where}; subtract the OUT log-density: LiRA is a ratio")
        raise CheckFailed(f"your score is not the log-likelihood ratio of the two fitted Gaussians {where}")
    passed("the online LiRA score of one record from its IN and OUT shadow confidences")


def _min_fpr(t, epsilon, delta):
    return max(0.0, (t - delta) * math.exp(-epsilon), 1.0 - delta - math.exp(epsilon) * (1.0 - t))


@checker
def check_min_fpr_for_tpr(fn, *, seed=None):
    r"""``fn(tpr, epsilon, delta)``: the smallest false-positive rate at which an :math:`(\varepsilon,
    \delta)`-DP training lets an attack reach the true-positive rate ``tpr`` (below it the ceiling stops the
    attack). The check tests the property: at the answer the ceiling :math:`\min(e^\varepsilon\alpha + \delta,
    1 - e^{-\varepsilon}(1 - \delta - \alpha))` reaches ``tpr``, and just below it does not."""
    rng = settings(seed)
    cases = [(float(rng.uniform(0.05, 0.3)), float(rng.uniform(0.5, 2.0)), 1e-5),
             (float(rng.uniform(0.9, 0.99)), float(rng.uniform(0.5, 1.5)), 1e-5),
             (float(rng.uniform(0.4, 0.6)), float(rng.uniform(3.0, 6.0)), 1e-3),
             (float(rng.uniform(1e-6, 5e-6)), 1.0, 1e-5)]
    for k, (t, epsilon, delta) in enumerate(cases):
        out = scalar(call(fn, t, epsilon, delta), "the FPR")
        expected = _min_fpr(t, epsilon, delta)
        if close(out, expected, rtol=1e-7, atol=1e-12):
            continue
        where = f"(case {k + 1}: TPR {t:.4g} at epsilon {epsilon:.3g}, delta {delta:g})"
        expect(math.isfinite(out) and 0.0 <= out <= 1.0, f"an FPR is a rate in [0, 1] {where}")
        ceiling = min(math.exp(epsilon) * out + delta, 1.0 - math.exp(-epsilon) * (1.0 - delta - out))
        expect(not (ceiling < t - 1e-9 and close(out, max(0.0, (t - delta) * math.exp(-epsilon)), rtol=1e-7)),
               f"at your FPR the second line of the ceiling, 1 - exp(-eps)(1 - delta - FPR), is still below the TPR "
               f"{where}: a test can be flipped, so both lines bound the attack",
               more="solve both lines for the FPR and keep the larger (and never below 0)")
        expect(not close(out, max(0.0, t * math.exp(-epsilon), 1.0 - math.exp(epsilon) * (1.0 - t)), rtol=1e-7),
               f"you left delta out {where}: delta lifts both lines of the ceiling")
        expect(ceiling >= t - 1e-9, f"at your FPR the ceiling is below the TPR {where}: the attack is still stopped "
                                    "there, so your FPR is too small")
        raise CheckFailed(f"at your FPR the ceiling is above the TPR {where}: a smaller FPR would already allow "
                          "it, so yours is not the smallest")
    passed("the smallest FPR at which the (epsilon, delta) ceiling lets an attack reach a TPR")
