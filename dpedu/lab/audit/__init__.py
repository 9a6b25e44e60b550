r"""Empirical privacy auditing: does a training run leak as much as its accountant allows?

An accountant gives an **upper** bound on epsilon: a proof that no attack can do better. An audit runs an
attack and turns its success into a **lower** bound: a statistical proof that the run leaks at least this
much. A correct implementation must satisfy ``lower <= upper``; an audit above the accountant's epsilon
means a bug (in the code or in the accounting), never a reason to loosen the test.

The package, one subject per module:

* :mod:`~dpedu.lab.audit.statistics`: Clopper-Pearson, epsilon from error rates, Gaussian (mu-GDP) bounds;
* :mod:`~dpedu.lab.audit.data`: audit data, canaries and their scores;
* :mod:`~dpedu.lab.audit.results`: :class:`AuditBound`, the fields and checks every audit result shares;
* :mod:`~dpedu.lab.audit.canary`: the canary game over many trainings, final model only;
* :mod:`~dpedu.lab.audit.membership`: the loss-threshold attack on one model;
* :mod:`~dpedu.lab.audit.shadow`: a pool of records and shadow models on random halves of it (Adult, with
  natural outliers and inserted canaries);
* :mod:`~dpedu.lab.audit.lira`, :mod:`~dpedu.lab.audit.rmia`: the LiRA (Carlini et al. 2022) and RMIA
  (Zarifzadeh et al. 2024) membership attacks, online and offline;
* :mod:`~dpedu.lab.audit.mia_stats`: their ROC at low FPR with bootstrap intervals, and the DP ceiling;
* :mod:`~dpedu.lab.audit.mia_audit`: the attacks end to end, and an audit (a lower bound on epsilon) from one;
* :mod:`~dpedu.lab.audit.whitebox`: the auditor sees every noisy update (Nasr et al. 2023);
* :mod:`~dpedu.lab.audit.shuffle`: a Monte Carlo lower bound on epsilon for shuffled batches (Chua et al. 2024);
* :mod:`~dpedu.lab.audit.shuffle_whitebox`: the same pair trained for real, audited from every update;
* :mod:`~dpedu.lab.audit.one_run`: m canaries in one training run (Steinke, Nasr, Jagielski 2023), of DP-SGD or
  of any observed trainer (:func:`one_run_trainer_audit`, e.g. a planted bug);
* :mod:`~dpedu.lab.audit.bugs`: teaching-only trainers with planted bugs, and the hunt that catches them;
* :mod:`~dpedu.lab.audit.claims`: does the ledger describe the batches the sampler drew? (and the planted
  sampling bugs this consistency check refuses);
* :mod:`~dpedu.lab.audit.neighbours`: every learner's claim on worst-case *literal* neighbouring datasets, delta
  measured at the claimed epsilon (:func:`neighbour_table`), with the output laws of
  :mod:`~dpedu.lab.audit.neighbour_laws` (DP-SGD's schemes, DP-FTRL) and
  :mod:`~dpedu.lab.audit.neighbour_convex` (output and objective perturbation), measured by
  :mod:`~dpedu.lab.audit.neighbour_deltas` (exactly, or by Monte Carlo on the privacy loss);
* :mod:`~dpedu.lab.audit.pitfalls`: five mistakes from real issue trackers, planted, and the checks that catch
  them (:func:`check_noise` measures a step's noise multiplier, :func:`check_gaussian_claim` a Gaussian's claim).

Every audit runs its independent trainings through :func:`dpedu.lab.parallel.map_seeded` (``n_jobs=``, joblib,
a Dask cluster): the same result for any ``n_jobs``.

The classic attacks:

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

from .bugs import BUGS, bug_hunt, buggy_trainer
from .claims import CLAIM_BUGS, ClaimCheck, check_claims, claim_buggy_trainer, claim_hunt
from .pitfalls import PITFALLS, GaussianClaimCheck, NoiseCheck, PitfallResult, check_gaussian_claim, check_noise
from .pitfalls import draws_to_detect, noise_check_power, pitfall_hunt
from .results import AuditBound
from .canary import AuditResult, canary_audit, dp_sgd_trainer, noisy_gd_trainer, upper_bounds
from .data import CANARY_KINDS, SCORES, canary_scores, check_canary, make_audit_data, make_canary
from .one_run import OneRunResult, one_run_audit, one_run_epsilon_lower_bound, one_run_trainer_audit
from .membership import MembershipAttackResult, loss_threshold_attack
from .shadow import MembershipPool, ShadowModels, ShadowTrainer, adult_membership_pool, train_shadow_models
from .lira import lira_score, lira_scores
from .rmia import rmia_scores, tune_offline_a
from .mia_stats import AttackROC, ceiling_violations, epsilon_line, evaluate_attack, roc_curve, tpr_at_fpr
from .mia_audit import ATTACKS, AttackAudit, MembershipAttackReport, attack_audit, attack_scores, membership_attack
from ..parallel import map_seeded
from .statistics import (
    clopper_pearson, epsilon_from_mu, epsilon_from_rate_arrays, epsilon_from_rates, epsilon_lower_bound,
    gaussian_mu_lower_bound
)
from .neighbours import NeighbourRow, format_neighbour_table, neighbour_table
from .shuffle_whitebox import ShuffleAuditResult, shuffle_whitebox_audit
from .whitebox import ObservedRun, WhiteBoxResult, canary_update_scores, observed_trainer, whitebox_audit


__all__ = [
    "clopper_pearson",
    "epsilon_from_rates",
    "epsilon_lower_bound",
    "gaussian_mu_lower_bound",
    "epsilon_from_mu",
    "make_audit_data",
    "make_canary",
    "canary_scores",
    "dp_sgd_trainer",
    "noisy_gd_trainer",
    "canary_audit",
    "AuditBound",
    "AuditResult",
    "loss_threshold_attack",
    "MembershipAttackResult",
    "map_seeded",
    "observed_trainer",
    "whitebox_audit",
    "canary_update_scores",
    "WhiteBoxResult",
    "ObservedRun",
    "one_run_audit",
    "one_run_epsilon_lower_bound",
    "one_run_trainer_audit",
    "OneRunResult",
    "buggy_trainer",
    "bug_hunt",
    "BUGS",
    "CLAIM_BUGS",
    "ClaimCheck",
    "check_claims",
    "claim_buggy_trainer",
    "claim_hunt",
    "PITFALLS",
    "PitfallResult",
    "pitfall_hunt",
    "NoiseCheck",
    "check_noise",
    "noise_check_power",
    "draws_to_detect",
    "GaussianClaimCheck",
    "check_gaussian_claim",
    "CANARY_KINDS",
    "SCORES",
    "upper_bounds",
    "check_canary",
    "epsilon_from_rate_arrays",
    "shuffle_whitebox_audit",
    "ShuffleAuditResult",
    "MembershipPool",
    "ShadowModels",
    "ShadowTrainer",
    "adult_membership_pool",
    "train_shadow_models",
    "lira_score",
    "lira_scores",
    "rmia_scores",
    "tune_offline_a",
    "AttackROC",
    "evaluate_attack",
    "roc_curve",
    "tpr_at_fpr",
    "epsilon_line",
    "ceiling_violations",
    "ATTACKS",
    "attack_scores",
    "attack_audit",
    "AttackAudit",
    "membership_attack",
    "MembershipAttackReport",
    "NeighbourRow",
    "neighbour_table",
    "format_neighbour_table",
]
