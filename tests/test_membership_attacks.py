"""Membership attacks with shadow models (LiRA, RMIA): scores against independent references, the ROC and its
bootstrap, the ceiling test (and a planted bug it catches), the audit from an attack, the shadow models'
independence from n_jobs and Dask, the Adult pool, the figure and the command line."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

from dpedu.accountants.calibrate import noise_multiplier  # noqa: E402
from dpedu.textbook.datasets import make_toy  # noqa: E402
from dpedu.lab.audit import (ATTACKS, MembershipPool, ShadowModels, ShadowTrainer, attack_audit,  # noqa: E402
                                  evaluate_attack, lira_score, lira_scores, membership_attack, rmia_scores,
                                  roc_curve, tpr_at_fpr, train_shadow_models, tune_offline_a)
from dpedu.lab.audit.mia_stats import auc, ceiling_violations, epsilon_line  # noqa: E402


def toy_pool(n=60, canaries=8, d=3, population=40, seed=0):
    """Synthetic records, and canaries that each own a column (a category nobody else has) with a flipped label."""
    X, y = make_toy(n=n + population, d=d, rng=seed)
    Xc, yc = make_toy(n=canaries, d=d, rng=seed + 1)
    pool_X = np.vstack([np.hstack([X[:n], np.zeros((n, canaries))]), np.hstack([Xc, np.eye(canaries)])])
    pool_y = np.concatenate([y[:n], -yc])
    X_pop = np.hstack([X[n:], np.zeros((population, canaries))])
    return MembershipPool(pool_X, pool_y, {"canaries": np.arange(n, n + canaries)}, X_pop, y[n:])


def random_shadow(k=12, n=9, p=5, seed=0):
    rng = np.random.default_rng(seed)
    members = rng.random((k, n)) < 0.5
    members[0, :], members[1, :] = True, False               # every record IN and OUT of several models
    members[2, :], members[3, :] = True, False
    signals = rng.normal(size=(k, n)) * 2 + members * rng.normal(1.0, 0.5, size=n)
    return ShadowModels(members, signals, rng.normal(size=(k, p)), None)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# --- LiRA -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("online", [True, False])
def test_lira_scores_are_the_one_record_score_of_every_pair(online):
    """Leave one model out: each (model, record) score is lira_score on the other models' confidences."""
    shadow = random_shadow()
    scores = lira_scores(shadow, online=online, variance="per-example")
    p = sigmoid(shadow.signals)
    for k in range(shadow.n_models):
        for i in range(shadow.n_records):
            others = np.arange(shadow.n_models) != k
            inside, outside = others & shadow.memberships[:, i], others & ~shadow.memberships[:, i]
            expected = lira_score(p[k, i], p[inside, i] if online else [], p[outside, i], online=online)
            assert scores[k, i] == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_lira_global_variance_pools_the_within_record_deviations():
    shadow = random_shadow(seed=3)
    scores = lira_scores(shadow, online=True, variance="global", targets=[5], reference=np.arange(6, 12))
    ref, phi = np.arange(6, 12), shadow.signals
    expected = []
    for world in (shadow.memberships, ~shadow.memberships):
        dev = [phi[ref][world[ref, i], i] - phi[ref][world[ref, i], i].mean() for i in range(shadow.n_records)]
        ssd, dof = sum((d**2).sum() for d in dev), sum(d.size - 1 for d in dev if d.size)
        means = np.array([phi[ref][world[ref, i], i].mean() if world[ref, i].any() else np.nan
                          for i in range(shadow.n_records)])
        expected.append((means, math.sqrt(ssd / dof)))
    (mi, si), (mo, so) = expected
    manual = stats.norm.logpdf(phi[5], mi, si) - stats.norm.logpdf(phi[5], mo, so)
    np.testing.assert_allclose(scores[0], manual, rtol=1e-9, equal_nan=True)


def test_lira_separates_a_memorised_record_and_leaves_out_what_it_cannot_fit():
    shadow = random_shadow(k=8, n=3)
    members = shadow.memberships.copy()
    members[:, 2] = [True] + [False] * 7                       # record 2: IN of model 0 only
    signals = shadow.signals.copy()
    signals[:, 0] = np.where(members[:, 0], 6.0, -6.0) + 0.01 * np.arange(8)   # record 0 is memorised
    shadow = ShadowModels(members, signals, shadow.population_signals, None)
    scores = lira_scores(shadow, online=True, variance="per-example")
    assert np.all(scores[members[:, 0], 0] > 0) and np.all(scores[~members[:, 0], 0] < 0)
    assert np.all(np.isnan(scores[:, 2]))                      # no IN model left to fit (or only one)
    assert np.isfinite(lira_scores(shadow, online=False, variance="per-example")[:, 2]).sum() >= 7


@pytest.mark.parametrize("args, match", [
    ((1.0, [0.5, 0.6], [0.4, 0.5]), "confidence"), ((0.5, [0.5, 1.0], [0.4, 0.5]), "in_confidences"),
    ((0.5, [0.5, 0.6], [0.4]), "out_confidences needs 2 values or more"), ((0.5, [0.6], [0.4, 0.5]), "in_confidences"),
    ((math.nan, [0.5, 0.6], [0.4, 0.5]), "confidence"), ((0.5, [0.5, 0.6], [0.0, 0.5]), "out_confidences"),
])
def test_lira_score_refuses_bad_confidences(args, match):
    with pytest.raises(ValueError, match=match):
        lira_score(*args)


def test_offline_lira_score_refuses_in_confidences_rather_than_ignoring_them():
    with pytest.raises(ValueError, match="in_confidences must be empty offline"):
        lira_score(0.5, [0.5, 0.6], [0.4, 0.5], online=False)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"variance": "median"}, ValueError, "variance"), ({"targets": [0, 0]}, ValueError, "targets"),
    ({"targets": [99]}, ValueError, "targets"), ({"reference": [1.5]}, ValueError, "reference"),
    ({"targets": [0], "reference": [0]}, ValueError, "besides the target"),
])
def test_lira_scores_refuse_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        lira_scores(random_shadow(), **kwargs)
    with pytest.raises(TypeError, match="ShadowModels"):
        lira_scores(np.zeros((3, 3)))


# --- RMIA -------------------------------------------------------------------------------------------------------


def _rmia_reference(shadow, k, online, a, gamma):
    """RMIA straight from its definition, in probabilities, one pair at a time."""
    p, pz = sigmoid(shadow.signals), sigmoid(shadow.population_signals)
    others = np.arange(shadow.n_models) != k
    out = np.empty(shadow.n_records)
    for i in range(shadow.n_records):
        ins, outs = others & shadow.memberships[:, i], others & ~shadow.memberships[:, i]
        if online:
            pr_x = 0.5 * (p[ins, i].mean() + p[outs, i].mean())
            pr_z = pz[others].mean(axis=0)
        else:
            pr_x = 0.5 * ((1 + a) * p[outs, i].mean() + 1 - a)
            pr_z = 0.5 * ((1 + a) * pz[others].mean(axis=0) + 1 - a)
        ratio = (p[k, i] / pr_x) / (pz[k] / pr_z)
        out[i] = np.mean(ratio >= gamma * (1 - 1e-12))
    return out


@pytest.mark.parametrize("online, a, gamma", [(True, None, 1.0), (False, 0.3, 1.0), (False, 1.0, 2.0),
                                              (True, None, 1.5)])
def test_rmia_scores_follow_the_definition(online, a, gamma):
    shadow = random_shadow(seed=5)
    scores = rmia_scores(shadow, online=online, offline_a=a, gamma=gamma)
    for k in range(shadow.n_models):
        np.testing.assert_allclose(scores[k], _rmia_reference(shadow, k, online, a, gamma), atol=1e-12)


def test_rmia_is_exact_for_confidences_that_round_to_one():
    shadow = random_shadow(seed=6)
    big = ShadowModels(shadow.memberships, shadow.signals + 45.0, shadow.population_signals + 45.0, None)
    scores = rmia_scores(big)                          # sigma(45) rounds to 1: the ratios are kept through 1 - p
    assert np.all(np.isfinite(scores)) and 0 < scores.mean() < 1
    assert not np.array_equal(scores, np.round(scores))


@pytest.mark.parametrize("kwargs, match", [
    ({"online": False}, "needs offline_a"), ({"online": True, "offline_a": 0.5}, "offline attack"),
    ({"online": False, "offline_a": 1.5}, "offline_a"), ({"gamma": 0.5}, "gamma"), ({"gamma": math.inf}, "gamma"),
])
def test_rmia_refuses_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        rmia_scores(random_shadow(), **kwargs)


def test_tune_offline_a_picks_the_grid_point_with_the_best_auc():
    shadow = random_shadow(k=16, n=40, seed=8)
    best = tune_offline_a(shadow, target=5, grid=[0.0, 0.5, 1.0])
    aucs = [auc(rmia_scores(shadow, online=False, offline_a=a, targets=[5])[0], shadow.memberships[5])
            for a in (0.0, 0.5, 1.0)]
    assert best == [0.0, 0.5, 1.0][int(np.argmax(aucs))]
    with pytest.raises(ValueError, match="grid"):
        tune_offline_a(shadow, target=0, grid=[0.2, 2.0])


# --- ROC, TPR at low FPR, bootstrap -----------------------------------------------------------------------------


def test_roc_auc_and_tpr_at_fpr_against_brute_force():
    rng = np.random.default_rng(2)
    scores = np.round(rng.normal(size=300) + np.r_[np.ones(150), np.zeros(150)] * 0.7, 1)   # many ties
    labels = np.r_[np.ones(150, bool), np.zeros(150, bool)]
    fpr, tpr = roc_curve(scores, labels)
    for alpha in (0.0, 0.01, 0.05, 0.3, 1.0):
        points = [(np.mean(scores[~labels] >= t), np.mean(scores[labels] >= t)) for t in np.unique(scores)]
        brute = max([0.0] + [hit for false, hit in points if false <= alpha])       # the threshold +inf: (0, 0)
        assert tpr_at_fpr(fpr, tpr, alpha) == pytest.approx(brute, abs=1e-12)
    u = stats.mannwhitneyu(scores[labels], scores[~labels]).statistic
    assert auc(scores, labels) == pytest.approx(u / (150 * 150), rel=1e-12)


def test_bootstrap_resamples_whole_models():
    """The interval equals an independent implementation: resample target models, recompute the ROC."""
    rng = np.random.default_rng(4)
    members = rng.random((10, 50)) < 0.5
    scores = rng.normal(size=(10, 50)) + 0.8 * members
    roc = evaluate_attack(scores, members, fprs=(0.05, 0.2), n_bootstrap=40, confidence=0.9, rng=7)
    draws, again = [], np.random.default_rng(7)
    for _ in range(40):
        rows = again.integers(0, 10, 10)
        f, t = roc_curve(scores[rows].ravel(), members[rows].ravel())
        draws.append([tpr_at_fpr(f, t, a) for a in (0.05, 0.2)])
    np.testing.assert_allclose(roc.tpr_low, np.percentile(draws, 5, axis=0), atol=1e-12)
    np.testing.assert_allclose(roc.tpr_high, np.percentile(draws, 95, axis=0), atol=1e-12)
    f, t = roc_curve(scores.ravel(), members.ravel())
    assert list(roc.tpr_at) == [tpr_at_fpr(f, t, 0.05), tpr_at_fpr(f, t, 0.2)]


@pytest.mark.parametrize("kwargs, match", [
    ({"fprs": (1.5,)}, "fprs"), ({"n_bootstrap": 0}, "n_bootstrap"), ({"confidence": 1.0}, "confidence"),
    ({"records": np.array([], dtype=int)}, "records"), ({"memberships": np.ones((3, 4))}, "memberships"),
    ({"records": np.array([0, 4])}, "records"), ({"records": np.array([-1])}, "records"),
])
def test_evaluate_attack_refuses_bad_arguments(kwargs, match):
    args = {"scores": np.random.default_rng(0).normal(size=(3, 4)), "memberships": np.eye(3, 4, dtype=bool)}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        evaluate_attack(args.pop("scores"), args.pop("memberships"), **args)


# --- shadow models: the design, n_jobs and Dask -----------------------------------------------------------------

TRAINER = ShadowTrainer(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.2, epochs=2, learning_rate=0.5)


def test_shadow_models_are_random_halves_and_do_not_depend_on_n_jobs():
    pool = toy_pool()
    serial = train_shadow_models(pool, TRAINER, n_models=6, rng=3)
    twice = train_shadow_models(pool, TRAINER, n_models=6, rng=3, n_jobs=2)
    for field in ("memberships", "signals", "population_signals"):
        np.testing.assert_array_equal(getattr(serial, field), getattr(twice, field))
    assert serial.ledger == twice.ledger and serial.ledger[0][1] == TRAINER.steps
    assert 0.35 < serial.memberships.mean() < 0.65
    assert not np.array_equal(serial.memberships[0], serial.memberships[1])


def test_shadow_models_on_a_dask_cluster_give_the_serial_result():
    distributed = pytest.importorskip("dask.distributed")
    import joblib

    pool = toy_pool()
    serial = train_shadow_models(pool, TRAINER, n_models=4, rng=5)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        with joblib.parallel_backend("dask"):
            remote = train_shadow_models(pool, TRAINER, n_models=4, rng=5, n_jobs=-1)
    np.testing.assert_array_equal(serial.signals, remote.signals)
    np.testing.assert_array_equal(serial.memberships, remote.memberships)


def test_shadow_models_report_progress_and_the_signal_is_the_true_label_logit():
    messages = []
    pool = toy_pool()
    shadow = train_shadow_models(pool, TRAINER, n_models=3, rng=0, progress=messages.append)
    assert messages[-1].startswith("shadow models: 3/3 trainings")
    rng = np.random.default_rng(np.random.SeedSequence(0).spawn(3)[0])
    member = rng.random(pool.n) < 0.5
    theta = TRAINER(pool.X[member], pool.y[member], rng).theta
    np.testing.assert_allclose(shadow.signals[0], pool.y * (pool.X @ theta), rtol=1e-12)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"n_models": 1}, ValueError, "n_models"), ({"n_models": 10**6}, ValueError, "n_models"),
    ({"trainer": "dp_sgd"}, TypeError, "trainer"), ({"pool": np.zeros((30, 2))}, TypeError, "pool"),
    ({"n_jobs": 0}, ValueError, "n_jobs"), ({"trainer": lambda X, y, rng: np.zeros(X.shape[1])}, TypeError, "DP-SGD"),
])
def test_train_shadow_models_refuses_bad_arguments(kwargs, error, match):
    args = {"pool": toy_pool(), "trainer": TRAINER, "n_models": 2}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        train_shadow_models(args.pop("pool"), args.pop("trainer"), **args)


def test_a_pool_too_small_and_trainers_with_bad_settings_are_refused():
    small = toy_pool(n=5, canaries=2)
    with pytest.raises(ValueError, match="at least 20 records"):
        train_shadow_models(small, TRAINER, n_models=2)
    for kwargs, match in (({"model": "tree"}, "model"), ({"noise_multiplier": -1.0}, "noise_multiplier"),
                          ({"clip_norm": math.inf}, "clip_norm"), ({"sampling_rate": 0.0}, "sampling_rate"),
                          ({"epochs": 0}, "epochs")):
        settings = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=1) | kwargs
        with pytest.raises(ValueError, match=match):
            ShadowTrainer(**settings)


# --- the ceiling, a planted bug, and the audit from the attack --------------------------------------------------

STEPS = 50


class _Understated:
    """A planted bug: trains without noise, but its ledger claims the noise of (1, 1e-5)-DP."""

    description = "planted bug: no noise, claims epsilon = 1"

    def __init__(self, honest):
        self.quiet = ShadowTrainer(noise_multiplier=0.0, clip_norm=1.0, sampling_rate=1.0, epochs=STEPS)
        self.claim = honest(np.ones((2, 1)), np.ones(2), 0).ledger

    def __call__(self, X, y, rng):
        result = self.quiet(X, y, rng)
        result.ledger = self.claim
        return result


@pytest.fixture(scope="module")
def ceiling_runs():
    z = noise_multiplier(1.0, 1e-5, 1.0, STEPS, accountant="pld")
    honest = ShadowTrainer(noise_multiplier=z, clip_norm=1.0, sampling_rate=1.0, epochs=STEPS)
    pool = toy_pool()
    return {name: membership_attack(train_shadow_models(pool, trainer, n_models=64, rng=1), "lira-online",
                                    n_bootstrap=100, rng=0)
            for name, trainer in (("honest", honest), ("planted", _Understated(honest)))}


def test_a_correct_run_stays_under_its_ceiling(ceiling_runs):
    report = ceiling_runs["honest"]
    assert report.epsilon == pytest.approx(1.0, abs=2e-3)
    assert report.violations() == {}
    assert report.audit.consistent and not report.audit.region.violates(report.ceiling)


def test_the_ceiling_test_catches_a_run_with_less_noise_than_claimed(ceiling_runs):
    """The bug claims epsilon = 1; the attack's TPR interval lies above 1 - beta(FPR), and the audit from the
    attack (Clopper-Pearson on independent models) proves epsilon > 1: both tests fail, as they must."""
    report = ceiling_runs["planted"]
    assert report.violations(), str(report)
    assert not report.audit.consistent and report.audit.epsilon_lower > report.epsilon
    assert report.audit.region.violates(report.ceiling)


def test_ceiling_violations_needs_enough_false_positives_and_a_curve(ceiling_runs):
    roc = ceiling_runs["planted"].rocs["all"]
    assert ceiling_violations(roc, ceiling_runs["planted"].ceiling, min_false_positives=10 ** 6) == []
    with pytest.raises(TypeError, match="TradeoffCurve"):
        ceiling_violations(roc, 1.0)
    assert epsilon_line([0.0, 0.01, 1.0], 1.0, 1e-5).tolist() == pytest.approx([1e-5, math.e * 0.01 + 1e-5, 1.0])


def test_the_audit_chooses_its_record_and_threshold_on_the_reference_half_only(ceiling_runs):
    shadow = train_shadow_models(toy_pool(), _Understated(ShadowTrainer(noise_multiplier=30.0, clip_norm=1.0,
                                 sampling_rate=1.0, epochs=STEPS)), n_models=16, rng=2)
    first = attack_audit(shadow, "lira-online")
    scrambled = np.array(shadow.signals)
    scrambled[8:] = np.random.default_rng(0).normal(size=scrambled[8:].shape)   # change the evaluation half only
    second = attack_audit(ShadowModels(shadow.memberships, scrambled, shadow.population_signals, shadow.ledger,
                                       shadow.groups), "lira-online")
    assert (first.record, first.threshold) == (second.record, second.threshold)
    assert first.n_reference == first.n_evaluation == 8 and first.n_in + first.n_out == 8
    # the evaluation models are attacked with fits on the reference half only: the counts are those of that test
    scores = lira_scores(shadow, targets=np.arange(8, 16), reference=np.arange(8))[:, first.record]
    members = shadow.memberships[8:, first.record]
    np.testing.assert_array_equal(first.scores_in, scores[members])
    np.testing.assert_array_equal(first.scores_out, scores[~members])
    assert (first.false_positives, first.false_negatives) == (int(np.sum(scores[~members] > first.threshold)),
                                                               int(np.sum(scores[members] <= first.threshold)))
    with pytest.raises(ValueError, match="at least 8 models"):
        attack_audit(ShadowModels(shadow.memberships[:6], shadow.signals[:6], shadow.population_signals[:6], None))


@pytest.mark.parametrize("attack", ATTACKS)
def test_every_attack_runs_end_to_end_and_offline_rmia_spares_its_tuning_model(attack, ceiling_runs):
    shadow = train_shadow_models(toy_pool(), TRAINER, n_models=10, rng=4)
    report = membership_attack(shadow, attack, n_bootstrap=20, rng=0)
    assert set(report.rocs) == {"all", "vulnerable"} and math.isinf(report.epsilon) is False
    assert report.targets.tolist() == (list(range(1, 10)) if attack == "rmia-offline" else list(range(10)))
    assert (report.offline_a is not None) == (attack == "rmia-offline")
    assert attack in str(report)


# --- the Adult pool ---------------------------------------------------------------------------------------------


def test_the_adult_pool_holds_outliers_and_canaries_as_documented():
    from dpedu.textbook.datasets import load_adult
    from dpedu.lab.audit import adult_membership_pool

    adult = load_adult()
    pool = adult_membership_pool(n_records=300, n_canaries=6, n_population=40, rare_count=3, rng=1)
    n, d = 300, adult.X_train.shape[1]
    assert pool.X.shape == (306, d + 6) and pool.X_population.shape == (40, d + 6)
    own = pool.X[:, d:]
    assert np.all(own[:n] == 0) and np.array_equal(own[n:], np.eye(6)) and np.all(pool.X_population[:, d:] == 0)
    country = [i for i, name in enumerate(adult.feature_names) if name.startswith("native-country=")]
    assert np.all(pool.X[n:, country] == 0) and np.all(pool.X[:n][:, country].sum(axis=1) == 1)
    others = np.setdiff1d(np.arange(d), country)               # a canary is its source row but for the country
    sources = [np.flatnonzero(np.all(adult.X_test[:, others] == row[others], axis=1)) for row in pool.X[n:]]
    assert all(any(adult.y_test[j] == -label for j in s) for s, label in zip(sources, pool.y[n:]))  # label flipped
    onehot = [i for i, name in enumerate(adult.feature_names) if "=" in name]
    held = (pool.X[:n][:, onehot] != 0).sum(axis=0)
    rare = np.array(onehot)[(held > 0) & (held <= 3)]
    expected = np.flatnonzero((pool.X[:n][:, rare] != 0).any(axis=1))
    np.testing.assert_array_equal(pool.groups["outliers"], expected)
    assert pool.group("vulnerable").size == expected.size + 6
    with pytest.raises(ValueError, match="group"):
        pool.group("typical")
    with pytest.raises(ValueError, match="n_records"):
        adult_membership_pool(n_records=10**6)
    with pytest.raises(ValueError, match="at least 20|>= 20"):
        adult_membership_pool(n_records=5, n_canaries=0, n_population=5)


# --- the figure and the command line ----------------------------------------------------------------------------


def test_the_roc_figure_draws_the_attacks_and_both_ceilings(ceiling_runs, tmp_path):
    from matplotlib.figure import Figure

    from dpedu.lab.plotting import plot_attack_grid, plot_attack_roc

    ax = plot_attack_roc([ceiling_runs["honest"], ceiling_runs["planted"]], group="vulnerable")
    labels = [line.get_label() for line in ax.lines]
    assert any(label.startswith("ceiling: 1") for label in labels)
    assert any("e^\\varepsilon" in label for label in labels)
    assert labels.count("lira-online") == 2 and ax.get_xscale() == ax.get_yscale() == "log"
    figure = Figure(figsize=(7, 7))
    axes = plot_attack_grid({"claims 1": [ceiling_runs["planted"]], "honest": [ceiling_runs["honest"]]}, figure=figure)
    assert axes.shape == (2, 2)
    figure.savefig(tmp_path / "roc.png")
    assert (tmp_path / "roc.png").stat().st_size > 10_000
    with pytest.raises(ValueError, match="group"):
        plot_attack_roc(ceiling_runs["honest"], group="outliers")
    with pytest.raises(TypeError, match="reports"):
        plot_attack_roc([1, 2])


def test_cli_attack_writes_the_figure_and_the_table(capsys, tmp_path):
    from dpedu import cli

    out = tmp_path / "attack.png"
    status = cli.main(["attack", "--records", "60", "--canaries", "4", "--population", "40", "--models", "8",
                       "--epochs", "1", "--bootstrap", "5", "--epsilons", "inf,4", "--attacks", "lira-offline",
                       "--out", str(out)])
    printed = capsys.readouterr().out
    assert status == 0 and out.stat().st_size > 10_000
    lines = printed.splitlines()
    rows = [line for line in lines if line.strip().startswith("lira-offline")]
    headers = [line for line in lines if line.startswith("logistic regression, ")]
    assert len(rows) == 2 and all("epsilon >= " in row for row in rows) and max(map(len, lines)) <= 110
    assert headers[0].startswith("logistic regression, non-private: accountant (pld) epsilon inf")
    assert float(headers[1].split("epsilon ")[-1]) == pytest.approx(4.0, abs=5e-3)
    assert "does not prove privacy" in printed


@pytest.mark.parametrize("argv, message", [
    (["--epsilons", "-1"], "--epsilons must be positive"), (["--models", "4"], "--models must be >= 8"),
    (["--attacks", "lira,rmia"], "--attacks must be among"), (["--canaries", "-2"], "--canaries must be >= 0"),
    (["--out", "/nonexistent/x.png"], "--out"), (["--delta", "2"], "--delta"), (["--n-jobs", "0"], "--n-jobs"),
    (["--epochs", "1e300"], "--epochs"), (["--bootstrap", "0"], "--bootstrap"),
])
def test_cli_attack_refuses_bad_options_before_any_work(capsys, monkeypatch, argv, message):
    from dpedu import cli, datasets

    monkeypatch.setattr(datasets, "load_adult", lambda *a, **k: pytest.fail("Adult was loaded"))
    assert cli.main(["attack", *argv]) == 1
    err = capsys.readouterr().err
    assert message in err.strip().splitlines()[-1] and "Traceback" not in err
