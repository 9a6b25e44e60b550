"""Empirical privacy auditing (dpedu.lab.audit) and the chapter-9 checks.

An audit's lower bound above an accountant's upper bound is a bug to find, never a threshold to loosen.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpedu.course import checks
from dpedu.accountants import GaussianEvent
from dpedu.lab.audit import (
    canary_audit,
    canary_scores,
    clopper_pearson,
    dp_sgd_trainer,
    epsilon_from_rates,
    epsilon_lower_bound,
    loss_threshold_attack,
    make_audit_data,
    make_canary,
    noisy_gd_trainer,
)
from dpedu.accountants.calibrate import gaussian_epsilon_exact
from dpedu.cli import main
from dpedu.textbook.datasets import make_toy
from dpedu.textbook.training import dp_sgd, gradient_descent

DELTA = 1e-5


@pytest.fixture(scope="module")
def data():
    X, y = make_audit_data(n=100, d=3, rng=0)
    return X, y, make_canary(X, y)


# --- Clopper-Pearson ------------------------------------------------------------------------------


def test_clopper_pearson_known_values():
    # k = 0: P(Bin(n, p) = 0) = (1 - p)^n = alpha at the bound, so p = 1 - alpha^(1/n)
    assert clopper_pearson(0, 10, confidence=0.95) == pytest.approx(1 - 0.05 ** 0.1, rel=1e-12)
    assert clopper_pearson(0, 500, confidence=0.99) == pytest.approx(1 - 0.01 ** (1 / 500), rel=1e-12)
    assert clopper_pearson(10, 10) == 1.0 and clopper_pearson(0, 10, side="lower") == 0.0
    # the textbook two-sided 95% interval for 5/10 (e.g. R's binom.test): [0.1871, 0.8129]
    lo, hi = clopper_pearson(5, 10, confidence=0.95, side="two-sided")
    assert (lo, hi) == pytest.approx((0.187086, 0.812914), abs=1e-6)
    # k = n lower bound: alpha^(1/n) (mirror image of k = 0)
    assert clopper_pearson(10, 10, side="lower") == pytest.approx(0.05 ** 0.1, rel=1e-12)
    # arrays agree with scalars
    ks = np.arange(0, 21)
    assert np.allclose(clopper_pearson(ks, 20), [clopper_pearson(int(k), 20) for k in ks])


@pytest.mark.parametrize("p", [0.001, 0.05, 0.3, 0.77])
def test_clopper_pearson_upper_bound_has_exact_coverage(p):
    n, confidence = 40, 0.95
    ks = np.arange(n + 1)
    covered = np.array(clopper_pearson(ks, n, confidence=confidence)) >= p
    assert stats.binom.pmf(ks, n, p)[covered].sum() >= confidence - 1e-12      # exact, not simulated


# --- the epsilon formula --------------------------------------------------------------------------


def test_epsilon_from_rates_exact_inputs():
    assert epsilon_from_rates(0.3, 0.05, delta=DELTA) == pytest.approx(math.log((1 - DELTA - 0.3) / 0.05))
    assert epsilon_from_rates(0.05, 0.3, delta=DELTA) == pytest.approx(math.log((1 - DELTA - 0.3) / 0.05))
    assert epsilon_from_rates(0.01, 0.5, delta=0.0) == pytest.approx(math.log(0.5 / 0.01))
    assert epsilon_from_rates(0.6, 0.6, delta=0.0) == 0.0                  # worse than guessing proves nothing
    assert epsilon_from_rates(0.0, 0.2, delta=DELTA) == math.inf           # a perfect test in one direction
    assert epsilon_from_rates(0.5, 0.5, delta=0.0) == 0.0


def test_epsilon_lower_bound_from_counts():
    n, confidence = 500, 0.95
    u = 1 - ((1 - confidence) / 2) ** (1 / n)                              # Bonferroni over the two rates
    expected = math.log((1 - DELTA - u) / u)
    assert epsilon_lower_bound(false_positives=0, n_out=n, false_negatives=0, n_in=n, delta=DELTA,
                               confidence=confidence) == pytest.approx(expected, rel=1e-12)
    m = 10
    u_m = 1 - ((1 - confidence) / (2 * m)) ** (1 / n)                      # ... and over m thresholds
    assert epsilon_lower_bound(false_positives=0, n_out=n, false_negatives=0, n_in=n, delta=DELTA,
                               confidence=confidence, n_thresholds=m) == pytest.approx(math.log((1 - DELTA - u_m) / u_m))
    fpu = stats.beta.ppf(0.975, 4, 497)
    fnu = stats.beta.ppf(0.975, 121, 380)
    assert epsilon_lower_bound(false_positives=3, n_out=500, false_negatives=120, n_in=500, delta=DELTA) == \
        pytest.approx(max(math.log((1 - DELTA - fpu) / fnu), math.log((1 - DELTA - fnu) / fpu)))
    assert epsilon_lower_bound(false_positives=250, n_out=500, false_negatives=250, n_in=500, delta=DELTA) == 0.0


# --- canaries and scores --------------------------------------------------------------------------


def test_least_used_canary_is_the_unused_feature(data):
    X, y, (x, label) = data
    assert np.allclose(np.abs(x), [0, 0, 0, 5.0]) and label == 1.0
    x2, label2 = make_canary(X, y, kind="mislabeled", norm=2.0)
    assert np.linalg.norm(x2) == pytest.approx(2.0) and label2 == -1.0


def test_loss_and_margin_scores_give_the_same_audit(data):
    X, y, canary = data
    train = dp_sgd_trainer(noise_multiplier=2.0, sampling_rate=1.0, steps=2)
    a = canary_audit(train, X, y, canary, runs=60, rng=3, score="margin")
    b = canary_audit(train, X, y, canary, runs=60, rng=3, score="loss")
    assert a.epsilon_lower == b.epsilon_lower
    assert np.array_equal(np.argsort(a.scores_in), np.argsort(b.scores_in))
    thetas = np.random.default_rng(0).normal(size=(5, 4))
    assert np.allclose(canary_scores(thetas, canary), thetas[:, 3] * np.sign(canary[0][3]))


# --- audits ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("sampling_rate, steps", [(1.0, 3), (0.2, 10)])
def test_non_private_training_leaks(data, sampling_rate, steps):
    X, y, canary = data
    result = canary_audit(dp_sgd_trainer(noise_multiplier=0.0, sampling_rate=sampling_rate, steps=steps),
                          X, y, canary, runs=300, rng=1)
    assert result.epsilon_lower > 2.0                 # at most ln(150 / ln 40) = 3.69 with 150 evaluation runs
    assert result.upper_bounds == {"rdp": math.inf, "pld": math.inf}


@pytest.mark.parametrize("noise_multiplier, sampling_rate, steps", [(1.0, 1.0, 4), (4.0, 1.0, 1), (0.8, 0.2, 10)])
def test_dp_training_stays_below_every_accountant(data, noise_multiplier, sampling_rate, steps):
    X, y, canary = data
    train = dp_sgd_trainer(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate, steps=steps)
    result = canary_audit(train, X, y, canary, runs=400, delta=DELTA, rng=2)
    uppers = dict(result.upper_bounds)
    if sampling_rate == 1.0:
        uppers["exact"] = gaussian_epsilon_exact(DELTA, noise_multiplier / math.sqrt(steps))
    assert result.consistent
    assert all(result.epsilon_lower <= u for u in uppers.values()), (result.epsilon_lower, uppers)


def test_full_batch_audit_is_sharp(data):
    # T = 4 full-batch steps with z = 1: the score is N(0, s^2) vs N(mu s, s^2), mu = 2 (exact eps 10.0 at 1e-5).
    X, y, canary = data
    result = canary_audit(dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4), X, y, canary,
                          runs=400, rng=2)
    assert result.epsilon_lower > 1.0


def test_the_audit_catches_a_miscalibrated_trainer(data):
    """A trainer whose noise is 10x smaller than its ledger claims (z vs z*C with C = 10)."""
    X, y, canary = data

    def buggy(X, y, rng):
        out = dp_sgd(X, y, noise_multiplier=0.4, clip_norm=10.0, sampling_rate=1.0, steps=2, learning_rate=0.01,
                     rng=rng)
        out.ledger = [(GaussianEvent(4.0), 2)]                           # claims z = 4: eps ~ 1.4
        return out

    result = canary_audit(buggy, X, y, make_canary(X, y, norm=50.0), runs=300, rng=0)
    assert not result.consistent and result.epsilon_lower > result.upper_bounds["pld"]
    assert "AUDIT FAILED" in str(result)


def test_noisy_gd_trainer_audit(data):
    X, y, canary = data
    result = canary_audit(noisy_gd_trainer(iterations=3, epsilon=0.9, delta=1e-6), X, y, canary, runs=200, rng=4)
    assert result.consistent and 0.0 <= result.epsilon_lower


def test_fixed_thresholds_use_bonferroni(data):
    X, y, canary = data
    train = dp_sgd_trainer(noise_multiplier=0.0, sampling_rate=1.0, steps=2)
    single = canary_audit(train, X, y, canary, runs=100, rng=0, threshold=0.001)
    many = canary_audit(train, X, y, canary, runs=100, rng=0, threshold=[0.001, 0.002, 0.003, 0.0005])
    assert single.selection == "fixed" and many.selection == "bonferroni"
    assert single.n_eval_in == 100
    # zero errors either way; the four-threshold bound pays for the extra looks
    assert many.epsilon_lower < single.epsilon_lower
    assert single.epsilon_lower == pytest.approx(epsilon_lower_bound(false_positives=0, n_out=100, false_negatives=0,
                                                                     n_in=100, delta=DELTA))


def test_same_seed_same_result(data):
    X, y, canary = data
    train = dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=0.3, steps=3)
    a = canary_audit(train, X, y, canary, runs=20, rng=7)
    b = canary_audit(train, X, y, canary, runs=20, rng=np.random.SeedSequence(7))
    c = canary_audit(train, X, y, canary, runs=20, rng=8)
    assert np.array_equal(a.scores_in, b.scores_in) and np.array_equal(a.scores_out, b.scores_out)
    assert a.epsilon_lower == b.epsilon_lower
    assert not np.array_equal(a.scores_in, c.scores_in)
    d = canary_audit(train, X, y, canary, runs=20, rng=np.random.default_rng(1))
    e = canary_audit(train, X, y, canary, runs=20, rng=np.random.default_rng(1))
    assert np.array_equal(d.scores_in, e.scores_in)


def test_progress_is_reported(data):
    X, y, canary = data
    messages = []
    canary_audit(dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=1), X, y, canary, runs=20, rng=0,
                 progress=messages.append)
    assert len(messages) == 10 and messages[-1].startswith("audit: 20/20")


@pytest.mark.parametrize("kwargs, name", [
    ({"runs": 0}, "runs"), ({"runs": 3}, "runs"), ({"delta": 0.0}, "delta"), ({"confidence": 1.0}, "confidence"),
    ({"threshold": "best"}, "threshold"), ({"score": "auc"}, "score"), ({"rng": -1}, "rng"),
])
def test_canary_audit_bad_input(data, kwargs, name):
    X, y, canary = data
    train = dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=1)
    with pytest.raises(ValueError, match=name):
        canary_audit(train, X, y, canary, **{"runs": 10, **kwargs})


def test_bad_input_elsewhere(data):
    X, y, canary = data
    with pytest.raises(TypeError, match="train"):
        canary_audit("dp_sgd", X, y, canary, runs=10)
    with pytest.raises(ValueError, match="canary x"):
        canary_audit(dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=1), X, y, (np.ones(3), 1), runs=10)
    with pytest.raises(ValueError, match="successes"):
        clopper_pearson(11, 10)
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson(1, 10, confidence=0.0)
    with pytest.raises(ValueError, match="side"):
        clopper_pearson(1, 10, side="both")
    with pytest.raises(ValueError, match="false_positives"):
        epsilon_lower_bound(false_positives=11, n_out=10, false_negatives=0, n_in=10, delta=DELTA)
    with pytest.raises(ValueError, match="fpr"):
        epsilon_from_rates(1.5, 0.1, delta=DELTA)
    with pytest.raises(ValueError, match="kind"):
        make_canary(X, y, kind="loud")
    with pytest.raises(ValueError, match="norm"):
        make_canary(X, y, norm=0.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        dp_sgd_trainer(noise_multiplier=-1.0, sampling_rate=1.0, steps=1)
    with pytest.raises(ValueError, match="sampling_rate"):
        dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=0.0, steps=1)
    with pytest.raises(ValueError, match="epsilon"):
        noisy_gd_trainer(iterations=2, epsilon=-1.0, delta=DELTA)


# --- membership inference -------------------------------------------------------------------------


def test_loss_threshold_attack_on_an_overfitted_model():
    X, y = make_toy(n=80, d=30, rng=0, signal=3.0)
    members, nonmembers = (X[:40], y[:40]), (X[40:], y[40:])
    overfit = gradient_descent(*members, 500, learning_rate=5.0).theta
    leaky = loss_threshold_attack(overfit, *members, *nonmembers)
    assert leaky.advantage > 0.3 and leaky.auc > 0.75
    from sklearn.metrics import roc_auc_score
    truth = np.r_[np.ones(40), np.zeros(40)]
    assert leaky.auc == pytest.approx(roc_auc_score(truth, -np.r_[leaky.member_losses, leaky.nonmember_losses]))
    private = dp_sgd(*members, noise_multiplier=20.0, clip_norm=1.0, sampling_rate=1.0, steps=5, rng=0).theta
    assert abs(loss_threshold_attack(private, *members, *nonmembers).advantage) < leaky.advantage
    with pytest.raises(ValueError, match="X_nonmembers"):
        loss_threshold_attack(overfit, *members, X[40:, :5], y[40:])


# --- command line ---------------------------------------------------------------------------------


def test_cli_audit(capsys):
    assert main(["audit", "--runs", "20", "--steps", "2", "--noise-multiplier", "2"]) == 0
    out, err = capsys.readouterr()
    assert "epsilon lower bound" in out and "rdp" in out and "pld" in out
    assert "audit: 20/20" in err


# --- chapter 9 checks -----------------------------------------------------------------------------


def _stub(*args, **kwargs):
    raise NotImplementedError("write your solution here")


def _ref_rates(fpr, fnr, delta):                      # the student's own answer (dpedu's refuses during the check)
    def term(top, rate):
        if top <= 0:
            return 0.0
        return math.inf if rate == 0 else math.log(top / rate)
    return max(0.0, term(1 - delta - fpr, fnr), term(1 - delta - fnr, fpr))


def _ref_cp(k, n, confidence):
    return 1.0 if k == n else stats.beta.ppf(confidence, k + 1, n - k)


def _ref_bound(fp, n_out, fn, n_in, delta, confidence):
    level = 1 - (1 - confidence) / 2
    return _ref_rates(_ref_cp(fp, n_out, level), _ref_cp(fn, n_in, level), delta)


def _one_direction(fpr, fnr, delta):
    return math.log((1 - delta - fpr) / fnr)


def _two_sided(k, n, confidence):
    return 1.0 if k == n else stats.beta.ppf(1 - (1 - confidence) / 2, k + 1, n - k)


def _no_bonferroni(fp, n_out, fn, n_in, delta, confidence):
    return _ref_rates(_ref_cp(fp, n_out, confidence), _ref_cp(fn, n_in, confidence), delta)


CHECKS = [
    (checks.check_epsilon_from_rates, _ref_rates, _one_direction, "the other inequality"),
    (checks.check_clopper_pearson_upper, _ref_cp, _two_sided, "TWO-sided"),
    (checks.check_audit_lower_bound, _ref_bound, _no_bonferroni, "Bonferroni"),
]


@pytest.mark.parametrize("check, reference, wrong, hint", CHECKS, ids=lambda v: getattr(v, "__name__", ""))
def test_chapter9_checks(check, reference, wrong, hint, capsys):
    check(reference)
    assert capsys.readouterr().out.startswith("passed")
    with pytest.raises(AssertionError, match="not written yet"):
        check(_stub)
    with pytest.raises(AssertionError, match=hint):
        check(wrong)


def test_chapter9_check_hints_for_other_mistakes():
    with pytest.raises(AssertionError, match="clamp at 0"):
        checks.check_epsilon_from_rates(lambda f, n, d: max(math.log((1 - d - f) / n), math.log((1 - d - n) / f)))
    with pytest.raises(AssertionError, match="ignores delta"):
        checks.check_epsilon_from_rates(lambda f, n, d: _ref_rates(f, n, 0.0))
    with pytest.raises(AssertionError, match="Wald"):
        checks.check_clopper_pearson_upper(lambda k, n, c: k / n + stats.norm.ppf(c) * math.sqrt(k / n * (1 - k / n) / n))
    with pytest.raises(AssertionError, match="belongs to the LOWER bound"):
        checks.check_clopper_pearson_upper(lambda k, n, c: 1.0 if k == n else stats.beta.ppf(c, max(k, 1), n - k + 1))
    with pytest.raises(AssertionError, match="observed rates"):
        checks.check_audit_lower_bound(lambda fp, no, fn, ni, d, c: _ref_rates(fp / no, fn / ni, d))


def test_bound_is_consistent_compares_with_every_applicable_upper_bound():
    from dpedu.lab.audit.statistics import bound_is_consistent

    assert bound_is_consistent(1.0, {"pld": 1.0, "rdp": 1.2, "zcdp": math.nan})          # equal is consistent
    assert not bound_is_consistent(1.1, {"pld": 1.0, "rdp": 1.2})                        # any one crossing
    assert bound_is_consistent(50.0, {"pld": math.inf}) and bound_is_consistent(0.0, {})
    for bad, kind, name in [((math.nan, {"pld": 1.0}), ValueError, "epsilon_lower"),
                            (("1", {"pld": 1.0}), TypeError, "epsilon_lower"),
                            ((1.0, [1.0]), TypeError, "upper_bounds"),
                            ((1.0, {"pld": "2"}), TypeError, "upper_bounds\\['pld'\\]")]:
        with pytest.raises(kind, match=name):
            bound_is_consistent(*bad)


def test_audit_results_share_one_frozen_base():
    import dataclasses

    from dpedu.lab.audit import AuditBound, AuditResult, OneRunResult, WhiteBoxResult

    for cls in (AuditResult, WhiteBoxResult, OneRunResult):
        assert issubclass(cls, AuditBound)
        assert cls.__dataclass_params__.frozen
    ok = AuditBound(epsilon_lower=0.5, upper_bounds={"rdp": 1.0, "zcdp": math.nan}, delta=1e-5, confidence=0.95,
                    seconds=1.0)
    bad = dataclasses.replace(ok, epsilon_lower=1.5)
    assert ok.consistent and not bad.consistent
    assert not any("AUDIT FAILED" in line for line in ok.bound_lines("audit"))
    assert bad.bound_lines("audit")[-1].startswith("  AUDIT FAILED")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ok.epsilon_lower = 2.0
