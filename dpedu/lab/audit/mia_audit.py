r"""Membership attacks run end to end: scores, ROCs with intervals, the DP ceiling, and an audit from the attack
(docs/math.md §20.5, §20.6).

:func:`membership_attack` attacks every model with the others (leave one model out) and reports the ROC of the
pairs of each group of records, beside the ceiling the run's accountant certifies. :func:`attack_audit` turns
the attack into a lower bound on epsilon with a stated confidence. The pairs of one model are not independent
trials (they share its training), so the audit uses one record and independent models:

1. the models are split, before any score is looked at, into a *reference* half (the attacker's shadow
   models) and an *evaluation* half (the targets);
2. on the reference half alone (each reference model attacked by the other reference models), the audit picks
   the record and the threshold whose Clopper-Pearson bound is largest there (:func:`best_threshold`), among the
   records that are IN of some evaluation models and OUT of others (a choice by memberships only, which the
   counts are conditioned on anyway);
3. the evaluation models are attacked with Gaussians (or reference averages) fitted on the reference half only,
   so each evaluation model is an independent trial of "trained with the record or not" (each record joins each
   training with probability 1/2, independently); the false positives and false negatives of that one record at
   that one threshold give :func:`~dpedu.lab.audit.statistics.epsilon_lower_bound`.

The neighbouring datasets are add/remove: a training set and the same set with the record (a random half of the
rest of the pool, which DP covers whatever it is). With E evaluation models the bound cannot exceed about
:math:`\ln((E/2)/\ln(2/\alpha))`: a weak attack, or a strong one with few models, proves little. An attack's
success is a lower bound on the leakage; its failure is not a proof of privacy.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ...accountants import compare
from ...accountants.tradeoff import tradeoff_curve
from ...ground.validation import check_choice, check_confidence, check_delta
from .canary import upper_bounds
from .lira import lira_scores, model_sets
from .mia_stats import REPORTED_FPRS, ceiling_violations, evaluate_attack
from .regions import AuditRegion
from .results import AuditBound
from .rmia import rmia_scores, tune_offline_a
from .shadow import ShadowModels
from .statistics import best_threshold, clopper_pearson, epsilon_lower_bound, error_counts
from .statistics import rate_bounds_epsilon

__all__ = ["ATTACKS", "attack_scores", "AttackAudit", "attack_audit", "MembershipAttackReport", "membership_attack",
           "MIN_AUDIT_MODELS"]

ATTACKS = ("lira-online", "lira-offline", "rmia-online", "rmia-offline")
MIN_AUDIT_MODELS = 8


def attack_scores(shadow, attack, *, targets=None, reference=None, variance="auto", gamma=1.0, offline_a=None):
    """Scores of ``attack`` (one of :data:`ATTACKS`) for ``targets`` x records, fitted on ``reference``.

    ``variance`` is LiRA's, ``gamma`` RMIA's; offline RMIA needs ``offline_a``
    (:func:`~dpedu.lab.audit.rmia.tune_offline_a`). Returns the scores, ``(len(targets), n_records)``.
    """
    attack = check_choice(attack, "attack", ATTACKS)
    if attack.startswith("lira"):
        return lira_scores(shadow, online=attack == "lira-online", variance=variance, targets=targets,
                           reference=reference)
    online = attack == "rmia-online"
    return rmia_scores(shadow, online=online, offline_a=None if online else offline_a, gamma=gamma, targets=targets,
                       reference=reference)


def _tuned_a(shadow, reference, gamma):
    """Offline RMIA's a, tuned by attacking the first reference model with the other reference models."""
    return tune_offline_a(shadow, target=int(reference[0]), reference=reference[1:], gamma=gamma)


@dataclass(frozen=True)
class AttackAudit(AuditBound):
    """An audit from a membership attack (:func:`attack_audit`): an :class:`AuditBound` and

    Attributes
    ----------
    attack : str
    record : int
        The record tested (chosen on the reference models).
    threshold : float
        "Member" means score > threshold (chosen on the reference models).
    false_positives, n_out, false_negatives, n_in : int
        Counts on the evaluation models: models trained without / with the record.
    region : AuditRegion
        The observed (FPR, FNR) with its Clopper-Pearson box, for the trade-off plane.
    n_reference, n_evaluation : int
        Models in each half.
    scores_in, scores_out : ndarray
        The record's scores on the evaluation models trained with / without it.
    """

    attack: str
    record: int
    threshold: float
    false_positives: int
    n_out: int
    false_negatives: int
    n_in: int
    region: AuditRegion
    n_reference: int
    n_evaluation: int
    scores_in: np.ndarray
    scores_out: np.ndarray

    def __str__(self):
        lines = [f"{self.attack} audit of the shadow models", f"  {self.description}" if self.description else "",
                 f"  record {self.record}, threshold {self.threshold:.4g} (both chosen on {self.n_reference} "
                 f"reference models);", f"  counted on {self.n_evaluation} other models:",
                 f"  false positives {self.false_positives}/{self.n_out}, false negatives "
                 f"{self.false_negatives}/{self.n_in}"]
        bounds = self.bound_lines(f"attack, {self.confidence:.0%} confidence")
        return "\n".join([line for line in lines if line] + bounds)


def attack_audit(shadow, attack="lira-online", *, records=None, delta=1e-5, confidence=0.95,
                 accountants=("pld",), variance="auto", gamma=1.0):
    """A lower bound on epsilon from a membership attack, valid with probability >= ``confidence`` (module docstring).

    Parameters
    ----------
    shadow : ShadowModels
        At least :data:`MIN_AUDIT_MODELS` models; the first half is the reference, the second the evaluation.
    attack : str
        One of :data:`ATTACKS`.
    records : None, str or index array
        The candidate records (a group name of ``shadow`` or indices); one is chosen. Default: the
        ``"vulnerable"`` group, or every record when ``shadow`` has no groups.
    delta, confidence : float
    accountants : sequence of str
        For the upper bounds of the same run (from ``shadow.ledger``; inf for a non-private run).
    variance, gamma :
        The attack's options (:func:`attack_scores`); offline RMIA's a is tuned on the reference half.

    Returns
    -------
    AttackAudit
    """
    if not isinstance(shadow, ShadowModels):
        raise TypeError(f"shadow must be ShadowModels (from train_shadow_models); got {type(shadow).__name__}")
    attack = check_choice(attack, "attack", ATTACKS)
    delta, confidence = check_delta(delta), check_confidence(confidence)
    if shadow.n_models < MIN_AUDIT_MODELS:
        raise ValueError(f"an audit needs at least {MIN_AUDIT_MODELS} models (half reference, half evaluation); "
                         f"shadow has {shadow.n_models}")
    if records is None:
        records = "vulnerable" if shadow.group("vulnerable").size else "all"
    candidates = shadow.group(records) if isinstance(records, str) else _record_indices(records, shadow.n_records)
    start = time.perf_counter()
    half = shadow.n_models // 2
    reference, evaluation = np.arange(half), np.arange(half, shadow.n_models)
    seen = shadow.memberships[evaluation][:, candidates]            # the counts are conditioned on anyway
    candidates = candidates[seen.any(axis=0) & ~seen.all(axis=0)]
    if candidates.size == 0:
        raise ValueError(f"records {records!r}: no record is both IN and OUT of the evaluation models: "
                         "train more models")
    alpha = 1.0 - confidence
    options = dict(variance=variance, gamma=gamma)
    if attack == "rmia-offline":
        options["offline_a"] = _tuned_a(shadow, reference, gamma)
    chosen_scores = attack_scores(shadow, attack, targets=reference, reference=reference, **options)
    best = (-1.0, int(candidates[0]), math.inf)
    for i in candidates:
        column, members = chosen_scores[:, i], shadow.memberships[reference, i]
        ok = np.isfinite(column)
        s_in, s_out = column[ok & members], column[ok & ~members]
        if s_in.size == 0 or s_out.size == 0:
            continue
        tau = best_threshold(s_in, s_out, delta, alpha / 2)
        fp, fn = error_counts(s_in, s_out, [tau])
        bound = float(rate_bounds_epsilon(fp, s_out.size, fn, s_in.size, delta, alpha / 2)[0][0])
        if bound > best[0]:
            best = (bound, int(i), tau)
    _, record, tau = best
    scores = attack_scores(shadow, attack, targets=evaluation, reference=reference, **options)
    column, members = scores[:, record], shadow.memberships[evaluation, record]
    ok = np.isfinite(column)
    s_in, s_out = column[ok & members], column[ok & ~members]
    if s_in.size == 0 or s_out.size == 0:
        raise ValueError(f"record {record} has no score on the evaluation models (too few reference models saw it IN "
                         "or OUT): train more models")
    fp, fn = (int(c[0]) for c in error_counts(s_in, s_out, [tau]))
    epsilon = epsilon_lower_bound(false_positives=fp, n_out=s_out.size, false_negatives=fn, n_in=s_in.size,
                                  delta=delta, confidence=confidence)
    level = 1.0 - alpha / 2
    region = AuditRegion(f"{attack} audit", fp / s_out.size, fn / s_in.size,
                         (clopper_pearson(fp, s_out.size, confidence=level, side="lower"),
                          clopper_pearson(fp, s_out.size, confidence=level)),
                         (clopper_pearson(fn, s_in.size, confidence=level, side="lower"),
                          clopper_pearson(fn, s_in.size, confidence=level)), level, confidence)
    upper, notes = upper_bounds("non-private" if shadow.ledger is None else shadow.ledger, delta, accountants)
    return AttackAudit(epsilon_lower=epsilon, upper_bounds=upper, delta=delta, confidence=confidence,
                       seconds=time.perf_counter() - start, description=shadow.description, notes=notes,
                       attack=attack, record=record, threshold=float(tau), false_positives=fp, n_out=int(s_out.size),
                       false_negatives=fn, n_in=int(s_in.size), region=region, n_reference=reference.size,
                       n_evaluation=evaluation.size, scores_in=s_in, scores_out=s_out)


def _record_indices(records, n_records):
    """``records`` as distinct record indices in [0, n_records)."""
    idx = np.asarray(records)
    if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer) or np.any(idx < 0) or np.any(idx >= n_records) \
            or np.unique(idx).size != idx.size:
        raise ValueError(f"records must be a group name or distinct record indices in [0, {n_records}); "
                         f"got {records!r}")
    return idx


@dataclass(frozen=True)
class MembershipAttackReport:
    """What :func:`membership_attack` found.

    Attributes
    ----------
    attack, description : str
    rocs : dict
        ``{group: AttackROC}``.
    ceiling : TradeoffCurve or None
        The accountant's trade-off curve of one training (None for a non-private run).
    epsilon, delta : float
        The accountant's epsilon at delta (inf for a non-private run).
    accountant : str
    targets : ndarray
        The models attacked.
    offline_a : float or None
        Offline RMIA's a (tuned on model 0, which is then not a target).
    audit : AttackAudit or None
    """

    attack: str
    description: str
    rocs: dict
    ceiling: object
    epsilon: float
    delta: float
    accountant: str
    targets: np.ndarray
    offline_a: object
    audit: object

    def violations(self):
        """``{group: [(fpr, tpr_low, ceiling), ...]}`` where the ROC's interval lies above the ceiling (empty: none)."""
        if self.ceiling is None:
            return {}
        found = {group: ceiling_violations(roc, self.ceiling) for group, roc in self.rocs.items()}
        return {group: v for group, v in found.items() if v}

    def __str__(self):
        eps = "inf (non-private)" if math.isinf(self.epsilon) else f"{self.epsilon:.3f}"
        lines = [f"{self.attack} against {self.description}", f"  accountant ({self.accountant}): epsilon = {eps} "
                 f"at delta = {self.delta:g}; {self.targets.size} target models; [95% bootstrap intervals]"]
        for group, roc in self.rocs.items():
            lines.append(f"  {group:<11} {roc.row()}")
            lines.append(f"  {'':<11} AUC {roc.auc:.3f}; {roc.n_in} IN / {roc.n_out} OUT pairs")
        for group, found in self.violations().items():
            for a, t, c in found:
                lines.append(f"  ABOVE THE CEILING ({group}): at FPR {a:g} the TPR is >= {t:.4f}, the ceiling {c:.4f}")
        if self.audit is not None:
            lines.append(f"  audit: epsilon >= {self.audit.epsilon_lower:.3f} ({self.audit.confidence:.0%} confidence)")
        return "\n".join(lines)


def membership_attack(shadow, attack="lira-online", *, groups=("all", "vulnerable"), delta=1e-5, fprs=REPORTED_FPRS,
                      n_bootstrap=200, confidence=0.95, accountant="pld", audit=True, variance="auto", gamma=1.0,
                      rng=None):
    """Attack every model with the others and report the ROC of each group beside the DP ceiling.

    Every model is a target, attacked by all the other models (leave one model out, Carlini et al. 2022); for
    offline RMIA, model 0 tunes a and the others are the targets. ``groups`` names record groups of ``shadow``
    (``"all"``, ``"vulnerable"`` or a named group); an empty group is skipped. The ceiling is the trade-off curve
    ``accountant`` certifies for one training (:func:`dpedu.accountants.tradeoff.tradeoff_curve`), the epsilon
    its epsilon at ``delta``. ``audit=True`` adds :func:`attack_audit` (needs :data:`MIN_AUDIT_MODELS` models).
    ``rng`` draws the bootstrap resamples.
    """
    if not isinstance(shadow, ShadowModels):
        raise TypeError(f"shadow must be ShadowModels (from train_shadow_models); got {type(shadow).__name__}")
    attack = check_choice(attack, "attack", ATTACKS)
    delta = check_delta(delta)
    if isinstance(groups, str):
        groups = (groups,)
    targets, reference = model_sets(shadow, None, None)
    options = dict(variance=variance, gamma=gamma)
    if attack == "rmia-offline":
        options["offline_a"] = _tuned_a(shadow, reference, gamma)
        targets = targets[1:]
    scores = attack_scores(shadow, attack, targets=targets, reference=reference, **options)
    rocs = {}
    for group in groups:
        records = shadow.group(group)
        if records.size:
            rocs[group] = evaluate_attack(scores, shadow.memberships[targets], records=records, fprs=fprs,
                                          n_bootstrap=n_bootstrap, confidence=confidence, rng=rng, label=group)
    if shadow.ledger is None:
        ceiling, epsilon = None, math.inf
    else:
        ceiling = tradeoff_curve(shadow.ledger, accountant)
        epsilon = float(compare(shadow.ledger, delta, accountants=(accountant,))[accountant])
    result = attack_audit(shadow, attack, delta=delta, confidence=confidence, accountants=(accountant,),
                          variance=variance, gamma=gamma) if audit else None
    return MembershipAttackReport(attack=attack, description=shadow.description, rocs=rocs, ceiling=ceiling,
                                  epsilon=epsilon, delta=delta, accountant=accountant, targets=targets,
                                  offline_a=options.get("offline_a"), audit=result)
