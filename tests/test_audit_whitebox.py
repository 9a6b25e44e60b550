"""White-box audits, planted bugs, the one-run bound, and audits that scale (joblib, Dask)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpedu.lab.audit import (
    BUGS,
    bug_hunt,
    buggy_trainer,
    canary_audit,
    dp_sgd_trainer,
    epsilon_from_mu,
    gaussian_mu_lower_bound,
    make_audit_data,
    make_canary,
    observed_trainer,
    one_run_audit,
    one_run_epsilon_lower_bound,
    whitebox_audit,
)
from dpedu.lab.audit.one_run import one_run_p_value
from dpedu.lab.audit.whitebox import canary_update_scores
from dpedu.ground.gaussian import gaussian_epsilon_exact
from dpedu.textbook.models import MLP, LogisticModel

DELTA = 1e-5


@pytest.fixture(scope="module")
def data():
    X, y = make_audit_data(n=40, d=3, rng=0)
    return X, y, make_canary(X, y)


# --- statistics ------------------------------------------------------------------------------------------------


def test_mu_lower_bound_covers_the_truth_at_the_stated_rate():
    """Under the model the bound exceeds the true mu in about 5% of trials (binomial tolerance)."""
    rng = np.random.default_rng(0)
    trials, mu = 400, 0.7
    above = sum(gaussian_mu_lower_bound(rng.normal(mu * 3, 3, 30), rng.normal(0, 3, 30)) > mu for _ in range(trials))
    assert above <= stats.binom.ppf(0.999, trials, 0.05)
    assert above >= stats.binom.ppf(0.001, trials, 0.05)         # not conservative to the point of uselessness


def test_mu_lower_bound_bad_input():
    with pytest.raises(ValueError, match="scores_in"):
        gaussian_mu_lower_bound([1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="zero variance"):
        gaussian_mu_lower_bound([1.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="confidence"):
        gaussian_mu_lower_bound([1.0, 2.0], [0.0, 1.0], confidence=1.0)


def test_epsilon_from_mu_is_the_gaussian_curve():
    assert epsilon_from_mu(2.0, delta=DELTA) == pytest.approx(gaussian_epsilon_exact(DELTA, 0.5))
    assert epsilon_from_mu(0.0, delta=DELTA) == 0.0
    with pytest.raises(ValueError, match="mu"):
        epsilon_from_mu(-1.0, delta=DELTA)


# --- white-box audit -------------------------------------------------------------------------------------------


def test_canary_scores_are_the_noise_plus_C(data):
    """Without noise the canary's coordinate of each full-batch update is exactly C in, 0 out."""
    X, y, canary = data
    train = observed_trainer(noise_multiplier=0.0, sampling_rate=1.0, steps=3)
    run_in = train(np.vstack([X, canary[0]]), np.append(y, canary[1]), np.random.default_rng(0))
    run_out = train(X, y, np.random.default_rng(0))
    s_in, shifts = canary_update_scores(run_in, X, y, canary)
    s_out, _ = canary_update_scores(run_out, X, y, canary)
    np.testing.assert_allclose(s_in, 1.0, atol=1e-9)
    np.testing.assert_allclose(shifts, 1.0)
    np.testing.assert_allclose(s_out, 0.0, atol=1e-9)


@pytest.mark.parametrize("z", [1.0, 4.0])
def test_whitebox_full_batch_is_tight_and_below_the_accountants(data, z):
    X, y, canary = data
    result = whitebox_audit(observed_trainer(noise_multiplier=z, sampling_rate=1.0, steps=4), X, y, canary,
                            runs=600, rng=3)
    exact = gaussian_epsilon_exact(DELTA, z / 2)
    assert result.bound == "gaussian" and result.consistent
    assert 0.6 * exact < result.epsilon_lower <= result.upper_bounds["pld"]
    assert result.upper_bounds["pld"] <= result.upper_bounds["rdp"] <= result.upper_bounds["moments"]


def test_whitebox_beats_the_final_model_audit(data):
    X, y, canary = data
    white = whitebox_audit(observed_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4), X, y, canary,
                           runs=300, rng=1)
    black = canary_audit(dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4), X, y, canary, runs=300,
                         rng=1)
    assert white.epsilon_lower > black.epsilon_lower + 2


def test_whitebox_subsampled_and_mlp_stay_below(data):
    X, y, canary = data
    sub = whitebox_audit(observed_trainer(noise_multiplier=0.5, sampling_rate=0.2, steps=10), X, y, canary, runs=100,
                         rng=0)
    assert sub.statistic == "likelihood_ratio" and sub.bound == "clopper_pearson"
    assert 0 < sub.epsilon_lower <= sub.upper_bounds["pld"]
    mlp = whitebox_audit(observed_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=2, model=MLP(4, 4)), X, y,
                         canary, runs=150, rng=0)
    assert 0 < mlp.epsilon_lower <= mlp.upper_bounds["pld"]


def test_correct_training_is_not_flagged_beyond_the_confidence(data):
    """40 independent audits of correct full-batch DP-SGD: the number flagged is consistent with 5%."""
    X, y, canary = data
    train = observed_trainer(noise_multiplier=1.5, sampling_rate=1.0, steps=2)
    flagged = sum(not whitebox_audit(train, X, y, canary, runs=60, rng=seed, accountants=("pld",)).consistent
                  for seed in range(40))
    assert flagged <= stats.binom.ppf(0.999, 40, 0.05)


@pytest.mark.parametrize("kwargs, name", [
    ({"runs": 3}, "runs"), ({"statistic": "max"}, "statistic"), ({"bound": "t"}, "bound"),
    ({"statistic": "range", "bound": "gaussian"}, "bound"), ({"n_jobs": 0}, "n_jobs"), ({"delta": 0.0}, "delta"),
])
def test_whitebox_bad_input(data, kwargs, name):
    X, y, canary = data
    train = observed_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=1)
    with pytest.raises(ValueError, match=name):
        whitebox_audit(train, X, y, canary, **{"runs": 10, **kwargs})


# --- planted bugs ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_planted_bug_is_caught_and_the_correct_trainer_is_not(bug):
    caught = bug_hunt(bug, runs=120, rng=11)
    assert not caught.consistent, f"{bug}: lower {caught.epsilon_lower} vs {caught.upper_bounds}"
    correct = bug_hunt(bug, correct=True, runs=120, rng=11)
    assert correct.consistent


def test_buggy_trainer_bad_name():
    with pytest.raises(ValueError, match="bug must be one of"):
        buggy_trainer("forgot_everything", noise_multiplier=1.0, sampling_rate=1.0, steps=1)


# --- one run ---------------------------------------------------------------------------------------------------


def test_one_run_bound_pure_dp_is_the_binomial_test():
    """delta = 0: the bound is the epsilon where P[Bin(r, e^eps/(1+e^eps)) >= v] = 0.05."""
    eps = one_run_epsilon_lower_bound(m=500, r=100, v=80, delta=0.0)
    p = 1 / (1 + math.exp(-eps))
    assert stats.binom.sf(79, 100, p) == pytest.approx(0.05, abs=1e-4)
    assert one_run_epsilon_lower_bound(m=500, r=100, v=50, delta=0.0) == 0.0
    assert one_run_epsilon_lower_bound(m=500, r=100, v=80, delta=1e-3) < eps      # delta costs


def test_one_run_p_value_is_valid_for_randomized_response():
    """eps-randomized response on m canaries: v correct out of m is Bin(m, p_eps), so the test rejects <= 5%."""
    rng = np.random.default_rng(0)
    eps, m = 1.0, 200
    p = 1 / (1 + math.exp(-eps))
    rejections = sum(one_run_p_value(m, m, int(rng.binomial(m, p)), eps, 0.0) <= 0.05 for _ in range(400))
    assert rejections <= stats.binom.ppf(0.999, 400, 0.05)


def test_one_run_audit_whitebox_beats_blackbox(data):
    rng = np.random.default_rng(5)
    X, y = make_audit_data(n=400, d=3, rng=1)
    pool_X, pool_y = make_audit_data(n=300, d=3, rng=2)
    kw = dict(m=200, target_epsilon=8.0, sampling_rate=0.1, steps=60, rng=4)
    white = one_run_audit(X, y, mode="whitebox", **kw)
    black = one_run_audit(X, y, mode="blackbox", X_canary_pool=pool_X, y_canary_pool=pool_y, **kw)
    assert 0 < white.epsilon_lower <= white.upper_bounds["pld"]
    assert black.epsilon_lower <= white.epsilon_lower
    with pytest.raises(ValueError, match="X_canary_pool"):
        one_run_audit(X, y, mode="blackbox", **kw)
    with pytest.raises(ValueError, match="mode"):
        one_run_audit(X, y, mode="greybox", **kw)
    del rng


# --- scaling: n_jobs and Dask ----------------------------------------------------------------------------------


def test_results_do_not_depend_on_n_jobs(data):
    X, y, canary = data
    train = dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=0.5, steps=2)
    a = canary_audit(train, X, y, canary, runs=12, rng=9, n_jobs=1)
    b = canary_audit(train, X, y, canary, runs=12, rng=9, n_jobs=2)
    np.testing.assert_array_equal(a.scores_in, b.scores_in)
    np.testing.assert_array_equal(a.scores_out, b.scores_out)
    w1 = whitebox_audit(observed_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=2), X, y, canary, runs=8,
                        rng=9, n_jobs=1)
    w2 = whitebox_audit(observed_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=2), X, y, canary, runs=8,
                        rng=9, n_jobs=2)
    np.testing.assert_array_equal(w1.statistics_in, w2.statistics_in)
    assert w1.epsilon_lower == w2.epsilon_lower


def test_dask_cluster_gives_the_serial_result(data):
    import dask.distributed as distributed
    import joblib

    X, y, canary = data
    train = dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=2)
    serial = canary_audit(train, X, y, canary, runs=10, rng=4)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        with joblib.parallel_backend("dask"):
            remote = canary_audit(train, X, y, canary, runs=10, rng=4, n_jobs=-1)
    np.testing.assert_array_equal(serial.scores_in, remote.scores_in)
    np.testing.assert_array_equal(serial.scores_out, remote.scores_out)
    assert serial.epsilon_lower == remote.epsilon_lower


# --- command line ----------------------------------------------------------------------------------------------


def test_cli_audit_modes(capsys):
    from dpedu.cli import main

    assert main(["audit", "--mode", "whitebox", "--runs", "40", "--steps", "2", "--noise-multiplier", "2"]) == 0
    out, _ = capsys.readouterr()
    assert "white-box" in out and "moments" in out and "pld" in out
    assert main(["audit", "--mode", "bugs", "--runs", "60"]) == 0
    out, _ = capsys.readouterr()
    assert all(bug in out for bug in BUGS) and "True" in out
    from dpedu.lab.audit import CLAIM_BUGS

    assert all(f"{bug} caught True   correct code flagged False" in out.replace("  ", " ") or bug in out
               for bug in CLAIM_BUGS)
    assert out.count("caught True") == len(CLAIM_BUGS) and "flagged True" not in out
    with pytest.raises(SystemExit):
        main(["audit", "--mode", "greybox"])
    err = capsys.readouterr().err
    assert "--mode" in err and "canary" in err and "one-run" in err and "bugs" in err


# --- dividing by the realised batch size ------------------------------------------------------------------------


def test_divide_by_batch_size_is_caught_from_a_few_hundred_runs_and_the_correct_trainer_is_not():
    for seed in (0, 1, 2):
        buggy = bug_hunt("divide_by_batch_size", runs=200, rng=seed, confidence=0.95)
        assert buggy.epsilon_lower > buggy.upper_bounds["pld"], (seed, buggy.epsilon_lower, buggy.upper_bounds)
        correct = bug_hunt("divide_by_batch_size", correct=True, runs=200, rng=seed, confidence=0.95)
        assert correct.consistent and correct.epsilon_lower < correct.upper_bounds["pld"]


def test_update_scales_read_the_noise_off_the_quiet_coordinates():
    from dpedu.lab.audit.bugs import bug_setting
    from dpedu.lab.audit.whitebox import quiet_coordinates, update_scales

    setting = bug_setting("divide_by_batch_size")
    X, y, canary = setting["X"], setting["y"], setting["canary"]
    quiet = quiet_coordinates(LogisticModel(X.shape[1]), np.zeros(X.shape[1]), X, y, canary)
    np.testing.assert_array_equal(quiet, np.arange(2, X.shape[1]))       # neither the record's nor the canary's
    run = observed_trainer(**setting["trainer"])(X, y, np.random.default_rng(0))
    scales = update_scales(run, quiet)
    np.testing.assert_allclose(scales, run.noise_std, rtol=0.2)          # one scale, sigma, at every step
    # the buggy trainer on D + canary: with |B_t| = 2 the noise has half the scale of the other steps
    X_in, y_in = np.vstack([X, canary[0]]), np.append(y, canary[1])
    buggy = buggy_trainer("divide_by_batch_size", **setting["trainer"])(X_in, y_in, np.random.default_rng(3))
    ratio = update_scales(buggy, quiet) / np.max(update_scales(buggy, quiet))
    assert np.all((np.abs(ratio - 1) < 0.2) | (np.abs(ratio - 0.5) < 0.1)) and np.any(ratio < 0.6)
    with pytest.raises(ValueError, match="noise scale"):
        update_scales(run, [])
