"""The consistency check of a run's batches against its ledger (dpedu.lab.audit.claims): the planted sampling bugs
are refused, correct DP-SGD of every scheme is not."""

import warnings

import numpy as np
import pytest

from dpedu.lab.audit import CLAIM_BUGS, check_claims, claim_buggy_trainer, claim_hunt
from dpedu.textbook.datasets import make_toy
from dpedu.textbook.training import ShuffledBatchesWarning, dp_sgd, plan_dp_sgd, run_dp_sgd


def planned(X, y, *, model=None, theta0=None, budget=None, rng=None, **settings):
    """A DP-SGD run with variants: ``run_dp_sgd`` on ``plan_dp_sgd(len(X), **settings)``."""
    return run_dp_sgd(X, y, plan_dp_sgd(len(X), **settings), model=model, theta0=theta0, budget=budget, rng=rng)



@pytest.mark.parametrize("bug", sorted(CLAIM_BUGS))
def test_every_planted_sampling_bug_is_refused_and_the_correct_code_is_not(bug):
    for seed in range(8):
        caught = claim_hunt(bug, rng=seed)
        assert not caught.consistent and "CLAIM REFUSED" in str(caught)
        control = claim_hunt(bug, correct=True, rng=seed)
        assert control.consistent, str(control)


@pytest.mark.parametrize("bug, words", [
    ("shuffle_accounted_as_poisson", "batch sizes barely vary"),
    ("steps_counted_in_epochs", "the ledger counts 5 steps but the sampler drew 100 batches"),
    ("oversampling_at_nominal_rate", "at the claimed rate 0.05"),
])
def test_the_refusal_says_what_does_not_match(bug, words):
    assert words in " ".join(claim_hunt(bug, rng=1).problems)


@pytest.fixture(scope="module")
def toy():
    return make_toy(n=300, d=3, rng=0)


@pytest.mark.parametrize("kwargs", [
    dict(sampling="poisson"), dict(sampling="poisson", sampling_rate=1.0), dict(sampling="fixed"),
    dict(sampling="fixed", relation="replace_one"), dict(sampling="truncated_poisson", max_batch_size=34),
    dict(sampling="shuffle"), dict(sampling="poisson", sampling_rate=0.01), dict(sampling="poisson", target_quantile=0.5),
])
def test_correct_runs_of_every_scheme_match_their_ledger(toy, kwargs):
    args = {**dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=10), **kwargs}
    for seed in range(5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ShuffledBatchesWarning)
            result = planned(*toy, rng=seed, **args)
        assert check_claims(result).consistent, str(check_claims(result))


def test_a_non_private_run_claims_nothing(toy):
    assert check_claims(dp_sgd(*toy, noise_multiplier=0.0, clip_norm=1.0, sampling_rate=0.1, steps=5, rng=0)).consistent


def test_a_tampered_ledger_is_refused(toy):
    result = dp_sgd(*toy, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=50, rng=0)
    event, count = result.ledger[0]
    result.ledger = [(type(event)(event.noise_multiplier, 0.02), count)]      # claims a fifth of the real rate
    problems = " ".join(check_claims(result).problems)
    assert "Binomial(15000, 0.02)" in problems


def test_bad_arguments(toy):
    with pytest.raises(ValueError, match="bug must be one of"):
        claim_buggy_trainer("forgot_the_noise")
    result = dp_sgd(*toy, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=5, rng=0)
    for alpha in (0.0, 1.0, np.nan):
        with pytest.raises(ValueError, match="alpha"):
            check_claims(result, alpha=alpha)


@pytest.mark.parametrize("call, kind, match", [
    (lambda: claim_hunt("steps_counted_in_epochs", correct="no"), TypeError, r"^correct must be True or False"),
    (lambda: claim_hunt("steps_counted_in_epochs", correct=0), TypeError, r"^correct must be True or False"),
    (lambda: claim_buggy_trainer("steps_counted_in_epochs", correct="yes"), TypeError, r"^correct must be True"),
    (lambda: claim_hunt("forgot_the_noise"), ValueError, r"^bug must be one of"),
    (lambda: claim_hunt("steps_counted_in_epochs", alpha=0.0), ValueError, r"^alpha"),
    (lambda: claim_hunt("steps_counted_in_epochs", rng="x"), TypeError, r"^rng"),
    (lambda: check_claims("x"), TypeError, r"^result must be a TrainingResult .* got str"),
    (lambda: check_claims(None), TypeError, r"^result must be a TrainingResult .* got NoneType"),
    (lambda: check_claims(type("Run", (), {"ledger": None, "details": None})()), TypeError,
     r"^result must be a TrainingResult .* got Run"),
], ids=["correct-str", "correct-int", "trainer-correct", "bug", "alpha", "rng", "str", "None", "no-details"])
def test_claim_checks_refuse_by_name(call, kind, match):
    # before: claim_hunt(correct="no") ran the correct code (a truthy string) and check_claims("x") raised
    # AttributeError
    with pytest.raises(kind, match=match):
        call()
