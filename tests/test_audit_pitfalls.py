"""The five pitfalls from real issue trackers (dpedu.lab.audit.pitfalls, docs/math.md §27): each planted mistake
is caught by its check, the correct code is not, and the numbers quoted in the notes are the code's."""

import math

import numpy as np
import pytest

from dpedu.ground.gaussian import gaussian_delta_exact
from dpedu.lab.audit import (CLAIM_BUGS, PITFALLS, check_gaussian_claim, check_noise, claim_hunt,
                                  pitfall_hunt)
from dpedu.lab.audit.pitfalls import classic_noise_anywhere, draws_to_detect, noise_check_power
from dpedu.textbook.training.adaptive import gradient_noise_multiplier

NOISE_PITFALLS = [name for name, p in PITFALLS.items() if p.check == "check_noise"]


def test_the_five_pitfalls_each_cite_an_issue_and_name_an_existing_check():
    assert len(PITFALLS) == 5
    for name, pitfall in PITFALLS.items():
        assert "#" in pitfall.issue and pitfall.description
        assert pitfall.check in ("check_noise", "check_claims", "check_gaussian_claim")
    assert "accumulation_at_microbatch_rate" in CLAIM_BUGS


@pytest.mark.parametrize("pitfall", sorted(PITFALLS))
def test_each_planted_pitfall_is_caught_and_the_correct_code_is_not(pitfall):
    for seed in range(2):
        planted = pitfall_hunt(pitfall, draws=600, rng=seed)
        assert planted.caught and not planted.correct, planted.report
        control = pitfall_hunt(pitfall, correct=True, draws=600, rng=seed)
        assert not control.caught, control.report


@pytest.mark.parametrize("pitfall, words", [
    ("adaptive_clipping_gradient_multiplier", "UNDER-REPORTS"),
    ("replace_one_sensitivity_C", "UNDER-REPORTS"),
    ("sum_noise_added_to_mean", "OVER-NOISED"),
    ("accumulation_at_microbatch_rate", "Poisson sampling at q = 0.05"),
    ("classic_gaussian_above_one", "exact delta is above the claim"),
])
def test_each_report_says_which_way_the_claim_is_wrong(pitfall, words):
    assert words in pitfall_hunt(pitfall, draws=500, rng=3).report


@pytest.mark.parametrize("pitfall", NOISE_PITFALLS)
def test_under_correct_code_the_noise_statistic_is_about_standard_normal(pitfall):
    stats = np.array([pitfall_hunt(pitfall, correct=True, draws=300, rng=100 + s).check.statistic for s in range(8)])
    assert abs(stats.mean()) < 1.0 and 0.5 < stats.std() < 1.6 and np.all(np.abs(stats) < 4.0)


def test_the_noise_check_measures_the_multiplier_of_a_plain_gaussian_release():
    def release(gradients, rng):                    # the clipped sum (norms <= 1 here) plus N(0, 3^2)
        return gradients.sum(axis=0) + rng.normal(0.0, 3.0, size=2)
    check = check_noise(release, claimed_multiplier=3.0, draws=4000, rng=0)
    assert check.consistent and abs(check.measured_multiplier - 3.0) < 0.3
    assert check_noise(release, claimed_multiplier=6.0, draws=4000, rng=0).under_reports
    over = check_noise(release, claimed_multiplier=1.0, draws=4000, rng=0)
    assert not over.consistent and not over.under_reports
    noiseless = check_noise(lambda g, rng: g.sum(axis=0), claimed_multiplier=1.0, rng=0)
    assert noiseless.under_reports and noiseless.measured_multiplier == 0.0 and math.isinf(noiseless.statistic)


def test_the_noise_check_refuses_bad_arguments_by_name():
    def release(gradients, rng):
        return gradients.sum(axis=0)
    with pytest.raises(TypeError, match="release"):
        check_noise(None, claimed_multiplier=1.0, rng=0)
    for bad, name in [(dict(claimed_multiplier=0.0), "claimed_multiplier"), (dict(draws=10), "draws"),
                      (dict(relation="swap"), "relation"), (dict(threshold=-1.0), "threshold")]:
        with pytest.raises(ValueError, match=name):
            check_noise(release, **{"claimed_multiplier": 1.0, "rng": 0, **bad})
    with pytest.raises(ValueError, match="pitfall"):
        pitfall_hunt("off_by_one")
    with pytest.raises(TypeError, match="correct"):
        pitfall_hunt("classic_gaussian_above_one", correct="yes")



def _gaussian_release(gradients, rng):
    return gradients.sum(axis=0) + rng.normal(0.0, 1.0, size=2)


def _sometimes(value, every=7):
    """A release that returns ``value`` at one draw in ``every`` (the first draw is a good one)."""
    calls = []

    def release(gradients, rng):
        calls.append(None)
        return value if len(calls) % every == 0 else _gaussian_release(gradients, rng)
    return release


@pytest.mark.parametrize("release, kind, match", [
    (lambda g, rng: np.full(2, np.nan), ValueError, r"^release returned NaN or inf at draw 0"),
    (_sometimes(np.array([np.inf, 0.0])), ValueError, r"^release returned NaN or inf at draw 6"),
    (lambda g, rng: np.zeros(0), ValueError, r"^release returned an empty array at draw 0"),
    (lambda g, rng: "noisy sum", TypeError, r"^release must return a real numeric array.* str of dtype <U9"),
    (lambda g, rng: None, TypeError, r"^release must return a real numeric array.* NoneType"),
    (lambda g, rng: np.ones(2) + 1j, TypeError, r"^release must return a real numeric array.* complex128"),
    (lambda g, rng: np.ones(2, dtype=bool), TypeError, r"^release must return a real numeric array.* bool"),
    (lambda g, rng: [[1.0, 2.0], [3.0]], TypeError, r"^release must return a real numeric array.* list"),
    (_sometimes(np.zeros(3)), ValueError, r"^release must return arrays of one shape; the first draw had shape "
                                          r"\(2,\), draw 6 \(3,\)"),
    (lambda g, rng: _gaussian_release(g, rng)[: len(g) % 2 + 1], ValueError,
     r"^release must return arrays of one shape; it returned 1 coordinates without the record and 2 with it"),
], ids=["nan", "inf-later", "empty", "str", "None", "complex", "bool", "ragged", "length-varies", "length-by-world"])
def test_the_noise_check_refuses_what_is_not_a_release_by_name(release, kind, match):
    # before: a NaN release was "measured z = inf: UNDER-REPORTS", an empty one "OVER-NOISED", the others raw NumPy
    with pytest.raises(kind, match=match):
        check_noise(release, claimed_multiplier=1.0, draws=100, rng=0)


@pytest.mark.parametrize("arguments, kind, match", [
    (dict(claimed_multiplier=1e-300), ValueError, r"^claimed_multiplier must be in \[1e-06, 1e\+06\]; got 1e-300"),
    (dict(claimed_multiplier=1e7), ValueError, r"^claimed_multiplier must be in \[1e-06, 1e\+06\]"),
    (dict(claimed_multiplier=0.0), ValueError, r"^claimed_multiplier"),
    (dict(claimed_multiplier=np.nan), ValueError, r"^claimed_multiplier"),
    (dict(claimed_multiplier="1"), TypeError, r"^claimed_multiplier"),
    (dict(clip_norm=1e300), ValueError, r"^clip_norm must be in \(0, 1e\+100\]"),
    (dict(draws=99), ValueError, r"^draws must be at least 100"),
    (dict(draws=10**6 + 1), ValueError, r"^draws must be at most 1,000,000"),
    (dict(draws=2000.0), TypeError, r"^draws must be an integer"),
    (dict(threshold=0.0), ValueError, r"^threshold"),
    (dict(relation="swap"), ValueError, r"relation"),
    (dict(rng="seed"), TypeError, r"^rng"),
], ids=lambda value: str(value)[:28])
def test_the_noise_check_refuses_bad_settings_by_name(arguments, kind, match):
    with pytest.raises(kind, match=match):
        check_noise(_gaussian_release, **{"claimed_multiplier": 1.0, "rng": 0, **arguments})


@pytest.mark.parametrize("pitfall", sorted(PITFALLS))
@pytest.mark.parametrize("arguments, kind, match", [
    (dict(correct="no"), TypeError, r"^correct must be True or False"),
    (dict(correct=1), TypeError, r"^correct must be True or False"),
    (dict(draws=10), ValueError, r"^draws must be at least 100"),
    (dict(draws="many"), TypeError, r"^draws must be an integer"),
    (dict(rng=-1), ValueError, r"^rng"),
], ids=["correct-str", "correct-int", "draws-few", "draws-str", "rng"])
def test_every_hunt_checks_every_argument_by_name(pitfall, arguments, kind, match):
    # draws and rng are checked even where the pitfall does not use them (nothing is silently ignored)
    with pytest.raises(kind, match=match):
        pitfall_hunt(pitfall, **arguments)

def test_the_gaussian_claim_check_and_the_numbers_in_the_notes():
    z = classic_noise_anywhere(10.0, 1e-5)
    assert z == pytest.approx(0.4845, abs=1e-4)
    refused = check_gaussian_claim(z, 10.0, 1e-5)
    assert not refused.consistent and not refused.proven
    assert refused.exact_delta == pytest.approx(2.27e-5, rel=5e-3)            # docs/math.md §27.6
    lucky = check_gaussian_claim(classic_noise_anywhere(2.0, 1e-5), 2.0, 1e-5)
    assert lucky.consistent and not lucky.proven and lucky.exact_delta == pytest.approx(1.3e-7, rel=0.05)
    below_one = check_gaussian_claim(classic_noise_anywhere(0.5, 1e-5), 0.5, 1e-5)
    assert below_one.consistent and below_one.proven
    assert check_gaussian_claim(1.0, 1.0, gaussian_delta_exact(1.0, 1.0)).consistent
    with pytest.raises(ValueError, match="delta"):
        check_gaussian_claim(1.0, 1.0, 1.5)
    assert gradient_noise_multiplier(1.0, 0.6) == pytest.approx(1.81, abs=5e-3)   # docs/math.md §27.2


def test_accumulation_is_refused_through_the_batch_sizes():
    check = claim_hunt("accumulation_at_microbatch_rate", rng=0)
    assert not check.consistent and "records in all" in check.problems[0]
    assert np.all([claim_hunt("accumulation_at_microbatch_rate", correct=True, rng=s).consistent for s in range(4)])



# --- the noise check's power (docs/math.md §27.1) ---------------------------------------------------------------

def test_draws_is_honoured():
    calls = []

    def release(gradients, rng):
        calls.append(len(gradients))
        return _gaussian_release(gradients, rng)
    check = check_noise(release, claimed_multiplier=1.0, draws=321, rng=0)
    assert check.draws == 321 and calls == [10] * 321 + [11] * 321 and "321 draws per world" in str(check)


@pytest.mark.parametrize("claimed, draws", [(1.25, 300), (1 / 1.25, 300), (1.1, 600)])
def test_the_statistic_follows_its_stated_law(claimed, draws):
    # check_noise itself, 40 seeds, true z = 1: the statistic's mean and spread are those noise_check_power uses
    from dpedu.lab.audit.pitfalls import _statistic_law
    mean, spread = _statistic_law(1.0, claimed, draws, 2)
    stats = np.array([check_noise(_gaussian_release, claimed_multiplier=claimed, draws=draws, rng=s).statistic
                      for s in range(40)])
    assert abs(stats.mean() - mean) < 3.0 * spread / math.sqrt(40)
    assert 0.6 * spread < stats.std(ddof=1) < 1.4 * spread


def test_the_power_stated_in_the_docstring_and_the_notes():
    # docs/math.md §27.1's table
    assert noise_check_power(1.0, 1.1) == pytest.approx(0.028, abs=5e-4)         # 2,000 draws miss 10 %
    assert noise_check_power(1.0, 1.25) == pytest.approx(0.926, abs=5e-4)        # and catch 25 %
    assert (draws_to_detect(1.0, 1.1), draws_to_detect(1.0, 1.25)) == (9995, 1881)
    assert (draws_to_detect(1.0, 1 / 1.1), draws_to_detect(1.0, 1 / 1.25)) == (9565, 1699)
    assert [draws_to_detect(1.0, c, power=0.5) for c in (1.1, 1.25, 1 / 1.1, 1 / 1.25)] == [6057, 1070, 6319, 1182]
    assert (draws_to_detect(2.0, 2.2), draws_to_detect(2.0, 2.5)) == (37056, 7056)
    assert noise_check_power(1.0, 1 / 1.1) == pytest.approx(0.007, abs=5e-4)
    assert noise_check_power(1.0, 1 / 1.25) == pytest.approx(0.974, abs=5e-4)
    n = draws_to_detect(1.0, 1.1)
    assert noise_check_power(1.0, 1.1, draws=n) >= 0.9 > noise_check_power(1.0, 1.1, draws=n - 1)
    assert noise_check_power(1.0, 1.0, draws=2000) < 1e-5                       # a correct claim: false alarms only


@pytest.mark.parametrize("call, kind, match", [
    (lambda: noise_check_power(0.0, 1.0), ValueError, r"^true_multiplier must be in \[1e-06, 1e\+06\]"),
    (lambda: noise_check_power(1.0, 1e-300), ValueError, r"^claimed_multiplier must be in"),
    (lambda: noise_check_power(1.0, 1.1, draws=50), ValueError, r"^draws must be at least 100"),
    (lambda: noise_check_power(1.0, 1.1, threshold=-1.0), ValueError, r"^threshold"),
    (lambda: noise_check_power(1.0, 1.1, coordinates=0), ValueError, r"^coordinates"),
    (lambda: draws_to_detect(1.0, 1.1, power=1.0), ValueError, r"^power must be in \(0, 1\)"),
    (lambda: draws_to_detect(1.0, 1.0001), ValueError, r"^no number of draws up to 1,000,000 detects"),
], ids=["true", "claimed", "draws", "threshold", "coordinates", "power", "undetectable"])
def test_the_power_functions_refuse_by_name(call, kind, match):
    with pytest.raises(kind, match=match):
        call()
