r"""Audits on the trade-off plane: the observed (FPR, FNR) of an attack with its Clopper-Pearson region.

An accountant's trade-off curve :math:`f` is a floor under the FNR of *every* attack at each FPR
(docs/math.md §21.2). An audit measures one attack. Its error rates, bounded above by Clopper-Pearson
(each at the level the audit used), give a box :math:`[\underline{\mathrm{FPR}}, \overline{\mathrm{FPR}}]
\times [\underline{\mathrm{FNR}}, \overline{\mathrm{FNR}}]`. If the whole box lies below :math:`f`, i.e.
its upper-right corner does (:math:`\overline{\mathrm{FNR}} < f(\overline{\mathrm{FPR}})`, as :math:`f` is
non-increasing), the attack beats the floor with the audit's confidence: a **proven violation** of the
accountant's claim (docs/math.md §21.8; the same test as :func:`dpedu.lab.audit.epsilon_lower_bound`, for every
epsilon of the curve at once).

A white-box audit with the Gaussian bound gives instead a lower confidence bound :math:`\mu_{\mathrm{lb}}`:
the run's curve lies below :math:`G_{\mu_{\mathrm{lb}}}`, and a claimed curve that rises above it anywhere is
violated.

A one-run audit (:func:`dpedu.lab.audit.one_run_audit`) gives a lower bound :math:`\varepsilon_{\mathrm{lb}}` at a
:math:`\delta`: the run is not :math:`(\varepsilon, \delta)`-DP for any :math:`\varepsilon \le
\varepsilon_{\mathrm{lb}}`, so its true curve goes below :math:`f_{\varepsilon_{\mathrm{lb}},\delta}`
*somewhere* (where is not known). A claimed curve is violated when it certifies
:math:`(\varepsilon_{\mathrm{lb}}, \delta)`, i.e. lies entirely on or above
:math:`f_{\varepsilon_{\mathrm{lb}},\delta}` (:func:`one_run_region`).

>>> from dpedu.lab.audit.bugs import bug_hunt
>>> from dpedu.accountants.tradeoff import tradeoff_curve
>>> result = bug_hunt("noise_reused", runs=60, rng=0)
>>> region = audit_region(result)
>>> region.violates(tradeoff_curve(result_ledger(result), "pld"))
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...accountants.gdp import gdp_delta
from ...accountants.tradeoff import TradeoffCurve, gaussian_tradeoff
from ...ground.validation import check_delta
from .canary import AuditResult
from .one_run import OneRunResult, one_run_epsilon_lower_bound
from .statistics import best_threshold, clopper_pearson, error_counts
from .whitebox import WhiteBoxResult

__all__ = ["AuditRegion", "audit_region", "one_run_region", "result_ledger"]


@dataclass(frozen=True)
class AuditRegion:
    """One audit on the trade-off plane.

    Attributes
    ----------
    label : str
    fpr, fnr : float
        Empirical rates of the attack (nan for a Gaussian white-box bound).
    fpr_range, fnr_range : (float, float)
        Clopper-Pearson lower and upper bounds, each at ``level`` (the upper ends are the audit's own).
    level : float
        Confidence of each one-sided bound (both hold together with probability >= ``confidence``).
    confidence : float
    mu_lower : float
        The white-box Gaussian lower bound on mu (nan otherwise).
    epsilon_lower, delta : float
        A one-run audit's lower bound on epsilon at this delta (nan otherwise).
    """

    label: str
    fpr: float
    fnr: float
    fpr_range: tuple
    fnr_range: tuple
    level: float
    confidence: float
    mu_lower: float = math.nan
    epsilon_lower: float = math.nan
    delta: float = math.nan

    @property
    def is_gaussian(self):
        """True for a white-box mu bound (a curve, not a box)."""
        return not math.isnan(self.mu_lower)

    @property
    def is_one_run(self):
        """True for a one-run bound epsilon >= ``epsilon_lower`` at ``delta`` (a curve the run dips below)."""
        return not math.isnan(self.epsilon_lower)

    def violates(self, curve):
        """Whether this audit proves ``curve`` (a :class:`TradeoffCurve`) wrong, at the audit's confidence.

        A box: its upper-right corner lies strictly below the curve (or, for the mirrored test, its mirror
        image does). A mu bound: :math:`G_{\\mu_{lb}}` dips below the curve somewhere on its grid. A one-run
        bound: the curve certifies :math:`(\\varepsilon_{lb}, \\delta)`, so it lies entirely on or above
        :math:`f_{\\varepsilon_{lb},\\delta}` (docs/math.md §21.8): a pair :math:`(\\varepsilon_j, \\delta_j)`
        of its profile has :math:`\\varepsilon_j \\le \\varepsilon_{lb}` and :math:`\\delta_j \\le \\delta`, or, for
        a mu-GDP curve, :math:`\\delta_\\mu(\\varepsilon_{lb}) \\le \\delta`.
        """
        if not isinstance(curve, TradeoffCurve):
            raise TypeError(f"curve must be a TradeoffCurve; got {type(curve).__name__}")
        if not curve.applies:
            return False
        if self.is_one_run:
            if curve.mu is not None:
                return bool(gdp_delta(self.epsilon_lower, curve.mu) <= self.delta)
            certified = (curve.epsilons <= self.epsilon_lower) & (curve.deltas <= self.delta)
            return bool(np.any(certified))       # the claim certifies (epsilon_lower, delta): refuted
        if self.is_gaussian:
            return bool(np.any(gaussian_tradeoff(curve.alpha, self.mu_lower) < curve.beta - 1e-12))
        fpr_hi, fnr_hi = self.fpr_range[1], self.fnr_range[1]
        return bool(fnr_hi < curve.beta_at(fpr_hi) or fpr_hi < curve.beta_at(fnr_hi))


def _box(label, fp, n_out, fn, n_in, level, confidence):
    fpr_range = (float(clopper_pearson(fp, n_out, confidence=level, side="lower")),
                 float(clopper_pearson(fp, n_out, confidence=level)))
    fnr_range = (float(clopper_pearson(fn, n_in, confidence=level, side="lower")),
                 float(clopper_pearson(fn, n_in, confidence=level)))
    return AuditRegion(label, fp / n_out, fn / n_in, fpr_range, fnr_range, level, confidence)


def audit_region(result, label=None):
    """The :class:`AuditRegion` of a canary audit (:func:`~dpedu.lab.audit.canary_audit`) or a white-box audit
    (:func:`~dpedu.lab.audit.whitebox_audit`, :func:`~dpedu.lab.audit.bug_hunt`).

    The counts are the audit's own: the rates of the evaluation runs at its threshold (for a white-box audit
    with the Clopper-Pearson bound, recomputed exactly as the audit does: threshold on the first half of the
    runs, rates on the second), each bound at level ``1 - (1 - confidence) / 2`` (Bonferroni over the two
    rates). Audits with several thresholds fixed in advance use ``1 - (1 - confidence) / (2 m)``.
    """
    alpha = None
    if isinstance(result, AuditResult):
        alpha = 1.0 - result.confidence
        m = 1 if result.selection != "bonferroni" else None
        if m is None:
            raise ValueError("audit_region needs an audit with one threshold (threshold='split' or a number)")
        fp = int(round(result.fpr * result.n_eval_out))
        fn = int(round(result.fnr * result.n_eval_in))
        return _box(label or "canary audit", fp, result.n_eval_out, fn, result.n_eval_in, 1.0 - alpha / 2,
                    result.confidence)
    if isinstance(result, WhiteBoxResult):
        alpha = 1.0 - result.confidence
        if result.bound == "gaussian":
            return AuditRegion(label or "white-box audit", math.nan, math.nan, (math.nan, math.nan),
                               (math.nan, math.nan), result.confidence, result.confidence, mu_lower=result.mu_lower)
        s_in, s_out = result.statistics_in, result.statistics_out
        half = result.runs // 2
        tau = best_threshold(s_in[:half], s_out[:half], result.delta, alpha / 2)
        fp, fn = error_counts(s_in[half:], s_out[half:], [tau])
        n_eval = result.runs - half
        return _box(label or "white-box audit", int(fp[0]), n_eval, int(fn[0]), n_eval, 1.0 - alpha / 2,
                    result.confidence)
    raise TypeError(f"result must be an AuditResult or a WhiteBoxResult; got {type(result).__name__}")


def one_run_region(result, delta=None, label=None):
    """The :class:`AuditRegion` of a one-run audit (:func:`~dpedu.lab.audit.one_run_audit`,
    :func:`~dpedu.lab.audit.one_run.one_run_trainer_audit`): epsilon >= ``epsilon_lower`` at ``delta``.

    ``delta`` defaults to the audit's; another delta recomputes the bound from the audit's counts (m, r, v)
    at the same confidence (docs/math.md §20.3). On the plane it is the curve
    :math:`f_{\\varepsilon_{lb},\\delta}` that the run's true curve goes below somewhere (§21.8).
    """
    if not isinstance(result, OneRunResult):
        raise TypeError(f"result must be a OneRunResult; got {type(result).__name__}")
    if delta is None:
        delta, epsilon = result.delta, result.epsilon_lower
    else:
        delta = check_delta(delta)
        epsilon = one_run_epsilon_lower_bound(m=result.m, r=result.guesses, v=result.correct, delta=delta,
                                              confidence=result.confidence)
    nan = (math.nan, math.nan)
    return AuditRegion(label or "one-run audit", math.nan, math.nan, nan, nan, result.confidence, result.confidence,
                       epsilon_lower=float(epsilon), delta=float(delta))


def result_ledger(result):
    """The ledger an audit's run claimed, rebuilt from a :func:`~dpedu.lab.audit.bug_hunt` result's description.

    Only for the planted bugs, whose trainers state their claimed settings (:func:`~dpedu.lab.audit.bugs.bug_setting`).
    """
    from .bugs import BUGS, bug_setting
    from .whitebox import claimed_ledger

    for bug in BUGS:
        if f"({bug})" in result.description:
            return claimed_ledger(**{k: bug_setting(bug)["trainer"][k]
                                     for k in ("noise_multiplier", "sampling_rate", "steps")})
    raise ValueError("result_ledger reads the claim of a planted-bug audit (bug_hunt); this result is not one")
