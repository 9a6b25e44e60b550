"""The privacy statement (dpedu.lab.statement) and its command: every number equals the accountants' own."""

from __future__ import annotations

import numpy as np
import pytest

from dpedu import dp_sgd
from dpedu.textbook.training import plan_dp_sgd, run_dp_sgd
from dpedu.accountants import GaussianEvent, LaplaceEvent, ShuffledBatchGaussianEvent, SubsampledGaussianEvent
from dpedu.accountants import make_accountant
from dpedu.accountants.gdp import certified_mu
from dpedu.accountants.tradeoff import tradeoff_curve
from dpedu.cli import main
from dpedu.ground.gaussian import gaussian_epsilon_exact
from dpedu.lab.statement import privacy_statement


def planned(X, y, *, model=None, theta0=None, budget=None, rng=None, **settings):
    """A DP-SGD run with variants: ``run_dp_sgd`` on ``plan_dp_sgd(len(X), **settings)``."""
    return run_dp_sgd(X, y, plan_dp_sgd(len(X), **settings), model=model, theta0=theta0, budget=budget, rng=rng)


ABADI = [(SubsampledGaussianEvent(4.0, 0.01), 10_000)]


def accounted(ledger, name, delta):
    acc = make_accountant(name)
    for event, count in ledger:
        acc.compose(event, count)
    return acc


def test_numbers_equal_the_accountants():
    s = privacy_statement(ABADI, delta=1e-5, n=60_000, clip_norm=4.0, group_size=3)
    assert s.epsilon == accounted(ABADI, "pld", 1e-5).get_epsilon(1e-5)
    assert s.epsilon_bracket == accounted(ABADI, "pld", 1e-5).epsilon_bracket(1e-5)
    assert s.epsilon_rdp == accounted(ABADI, "rdp", 1e-5).get_epsilon(1e-5)
    assert s.mu == certified_mu(ABADI)
    assert s.epsilon_from_mu == gaussian_epsilon_exact(1e-5, 1 / s.mu) >= s.epsilon
    assert s.group_mu == 3 * s.mu and s.group_epsilon == gaussian_epsilon_exact(1e-5, 1 / (3 * s.mu))
    assert s.best_tpr == tradeoff_curve(ABADI, "pld", alphas=[0.01]).best_tpr(0.01)
    text = str(s)
    for shown in (f"{s.epsilon:.4g}", f"{s.epsilon_rdp:.4g}", f"{s.mu:.4g}", "60,000", "q = 0.01", "10,000",
                  "noise multiplier z:       4", "add/remove", "one example", "every intermediate model", "Poisson", "shuffled", "tuning"):
        assert shown in text, shown


def test_a_training_result_and_an_estimator_report_their_settings():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    result = dp_sgd(X, y, noise_multiplier=2.0, clip_norm=0.5, sampling_rate=0.1, steps=30, rng=0)
    s = privacy_statement(result, delta=1e-4, n=200)
    assert (s.noise_multiplier, s.sampling_rate, s.steps, s.clip_norm) == (2.0, 0.1, 30, 0.5)
    assert s.epsilon == accounted(result.ledger, "pld", 1e-4).get_epsilon(1e-4)

    from dpedu import DPLogisticRegression
    clf = DPLogisticRegression(epsilon=1.0, delta=1e-3, epochs=2, random_state=0).fit(X, y)
    s = clf.privacy_statement_
    assert s.delta == 1e-3 and s.steps == clf.steps_ and s.clip_norm == clf.clip_norm_
    assert s.epsilon == accounted(clf.ledger_, "pld", 1e-3).get_epsilon(1e-3) <= clf.epsilon_ + 1e-9


def test_full_batch_and_mixed_ledgers():
    s = privacy_statement([(GaussianEvent(2.0), 4)], delta=1e-5)
    assert s.mu == 1.0 and "full-batch" in str(s)
    mixed = [(GaussianEvent(2.0), 4), (LaplaceEvent(0.1), 1)]
    s = privacy_statement(mixed, delta=1e-5)
    assert "Laplace" in str(s) and s.epsilon == accounted(mixed, "pld", 1e-5).get_epsilon(1e-5)


def test_delta_not_below_one_over_n_is_flagged():
    assert "1/n" in str(privacy_statement(ABADI, delta=1e-3, n=5000))


@pytest.mark.parametrize("kwargs, error, name", [
    ({"delta": 0.0}, ValueError, "delta"), ({"delta": 1e-5, "n": 0}, ValueError, "n"),
    ({"delta": 1e-5, "n": 10.0}, TypeError, "n"), ({"delta": 1e-5, "clip_norm": -1}, ValueError, "clip_norm"),
    ({"delta": 1e-5, "group_size": 0}, ValueError, "group_size"), ({"delta": 1e-5, "fpr": 1.0}, ValueError, "fpr"),
    ({}, TypeError, "delta"),
])
def test_bad_arguments_are_named(kwargs, error, name):
    with pytest.raises(error, match=name):
        privacy_statement(ABADI, **kwargs)


def test_no_statement_without_a_guarantee():
    with pytest.raises(TypeError, match="not private"):
        privacy_statement(None, delta=1e-5)
    with pytest.raises(ValueError, match="shuffled"):
        privacy_statement([(ShuffledBatchGaussianEvent(1.0, 10, 100), 5)], delta=1e-5)


def test_cli_statement_prints_the_same_numbers(capsys):
    assert main(["statement", "-z", "4", "-q", "0.01", "--epochs", "100", "--n", "60000", "--clip-norm", "4"]) == 0
    out = capsys.readouterr().out
    s = privacy_statement(ABADI, delta=1e-5, n=60_000, clip_norm=4.0)
    assert str(s) in out


@pytest.mark.parametrize("argv, message", [
    (["-z", "0", "-q", "0.1", "--steps", "3"], "--noise-multiplier"), (["-z", "1", "-q", "0", "--steps", "3"],
                                                                      "--sampling-rate"),
    (["-z", "1", "-q", "0.1", "--steps", "3", "--delta", "2"], "--delta"),
    (["-z", "1", "-q", "0.1", "--steps", "3", "--n", "-5"], "--n"),
    (["-z", "1", "-q", "0.1", "--steps", "3", "--clip-norm", "0"], "--clip-norm"),
    (["-z", "1", "-q", "0.1", "--steps", "3", "--group-size", "0"], "--group-size"),
    (["-z", "1", "-q", "0.1", "--steps", "3", "--fpr", "1"], "--fpr"),
    (["-z", "1", "-q", "0.1", "--steps", "0"], "--steps"),
])
def test_cli_statement_names_the_bad_option(capsys, argv, message):
    assert main(["statement", *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_full_batch_runs_do_not_claim_poisson_sampling():
    text = str(privacy_statement([(GaussianEvent(2.0), 4)], delta=1e-5))
    assert "no sampling" in text and "Poisson" not in text
    assert "Poisson" in str(privacy_statement(ABADI, delta=1e-5))


def test_an_estimator_statement_reports_n_and_says_when_the_tuned_defaults_were_used():
    from dpedu import DPLogisticRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    clf = DPLogisticRegression(epsilon=1.0, delta=1e-4, epochs=2, random_state=0).fit(X, y)
    s = clf.privacy_statement_
    assert s.n == 300 and "300 examples" in str(s) and "not given" not in str(s).split("clip norm")[0]
    assert s.defaults_used == ("sampling_rate", "clip_norm", "learning_rate") == clf.defaults_used_
    assert "TUNED_DEFAULTS, chosen NON-privately" in " ".join(str(s).split())   # lines wrap at 100 columns
    given = DPLogisticRegression(epsilon=1.0, delta=1e-4, epochs=2, sampling_rate=0.1, clip_norm=1.0,
                                 learning_rate=1.0, random_state=0).fit(X, y)
    assert given.privacy_statement_.defaults_used == () and "TUNED_DEFAULTS" not in str(given.privacy_statement_)
    assert "TUNED_DEFAULTS" not in str(privacy_statement(ABADI, delta=1e-5))


# --- the relation and the sampling scheme of the run (dp_sgd's ledgers for poisson / fixed, both relations) ---

def _dp_sgd_ledger(sampling, relation):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    return planned(X, y, noise_multiplier=2.0, clip_norm=0.5, sampling_rate=0.1, steps=30, sampling=sampling,
                  relation=relation, rng=0)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_poisson_runs_are_accounted_by_the_pld_under_their_relation(relation):
    result = _dp_sgd_ledger("poisson", relation)
    s = privacy_statement(result, delta=1e-4, n=200)
    assert s.accountant == "pld" and s.relation == relation and s.sampling == "poisson"
    assert s.epsilon == accounted(result.ledger, "pld", 1e-4).get_epsilon(1e-4)
    text = str(s)
    assert "PLD accountant" in text and "Poisson samples" in text
    assert ("add/remove one example" in text) == (relation == "add_remove")
    assert ("replace one example" in text) == (relation == "replace_one")
    if relation == "replace_one":                 # RDP does not cover Poisson replace-one (docs/math.md §22.4)
        assert np.isnan(s.epsilon_rdp) and "RDP:           not applicable" in text
        add_remove = privacy_statement(_dp_sgd_ledger("poisson", "add_remove"), delta=1e-4, n=200)
        assert s.epsilon > add_remove.epsilon     # replacing moves the sum twice as far


def test_fixed_size_batches_under_replace_one_are_accounted_by_rdp():
    result = _dp_sgd_ledger("fixed", "replace_one")
    s = privacy_statement(result, delta=1e-4)
    assert (s.accountant, s.relation, s.sampling, s.batch_size, s.n) == ("rdp", "replace_one", "fixed", 20, 200)
    assert s.epsilon == s.epsilon_rdp == accounted(result.ledger, "rdp", 1e-4).get_epsilon(1e-4)
    assert np.isnan(s.epsilon_bracket[0])
    assert s.mu == certified_mu(result.ledger, accountant="rdp") and s.epsilon_from_mu >= s.epsilon
    assert s.best_tpr == tradeoff_curve(result.ledger, "rdp", alphas=[0.01]).best_tpr(0.01)
    text = str(s)
    assert "RDP accountant" in text and "PLD:           not applicable" in text
    assert "uniformly random fixed-size samples drawn afresh each step" in text and "Poisson" not in text
    assert "m = 20" in text and "replace one example" in text
    # a valid lower bound (docs/math.md §22.3): the Poisson add/remove pair with multiplier z / 2
    lower = accounted([(SubsampledGaussianEvent(1.0, 0.1), 30)], "pld", 1e-4).epsilon_bracket(1e-4)[0]
    assert lower <= s.epsilon
    with pytest.raises(ValueError, match="n=100"):
        privacy_statement(result, delta=1e-4, n=100)


def test_uncovered_pairs_are_refused_naming_what_is_covered():
    with pytest.raises(ValueError, match="SampledWithoutReplacement"):
        privacy_statement(_dp_sgd_ledger("fixed", "add_remove"), delta=1e-4)


def test_cli_statement_fixed_replace_one_prints_the_rdp_statement(capsys):
    argv = ["statement", "-z", "1", "-q", "0.1", "--steps", "50", "--n", "200", "--sampling", "fixed",
            "--relation", "replace_one", "--delta", "1e-4"]
    assert main(argv) == 0
    from dpedu.ground.events import SampledWithoutReplacementGaussianEvent
    ledger = [(SampledWithoutReplacementGaussianEvent(1.0, 20, 200, relation="replace_one"), 50)]
    assert str(privacy_statement(ledger, delta=1e-4, n=200)) in capsys.readouterr().out


def test_truncated_poisson_is_accounted_by_the_pld_under_both_relations_and_not_called_unsampled():
    from dpedu.ground.events import TruncatedPoissonGaussianEvent
    ledger = [(TruncatedPoissonGaussianEvent(2.0, 0.1, 30, 200), 30)]
    s = privacy_statement(ledger, delta=1e-4)
    assert s.accountant == "pld" and s.epsilon == accounted(ledger, "pld", 1e-4).get_epsilon(1e-4)
    assert s.epsilon <= accounted(ledger, "rdp", 1e-4).get_epsilon(1e-4)       # the tighter of the two
    replace = [(TruncatedPoissonGaussianEvent(2.0, 0.1, 30, 200, relation="replace_one"), 30)]
    assert privacy_statement(replace, delta=1e-4).accountant == "pld"
    text = str(s)
    assert "no sampling" not in text and "Poisson samples cut" in text
