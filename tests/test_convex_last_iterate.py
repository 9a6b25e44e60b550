"""The projected step and the proven last-iterate bound (docs/math.md §28.5-28.6), compare() and the CLI beside them.

The full-batch bound is checked against the formulas it must equal: the window minimum written out by hand, the
closed form of Bok, Su & Altschuler's constrained bound (an upper bound on it), and, for a strongly convex objective
far from the boundary, their exact formula, which is what a quadratic loss (a linear recursion) gives.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpedu import cli
from dpedu.accountants import LinearLastIterateEvent, SubsampledGaussianEvent, account, compare
from dpedu.accountants.convex_last_iterate import (BAD_BATCH_FRACTION, HEURISTIC_LABEL, PROVEN_LABEL,
                                                   convex_last_iterate_bound, last_iterate_claim)
from dpedu.textbook.datasets import make_toy
from dpedu.textbook.learners import ProjectedStep, project_to_ball, projected_step, run_projected
from dpedu.textbook.models import MLP, LogisticModel
from dpedu.textbook.training import dp_sgd, dp_sgd_step, plan_dp_sgd, training_data

DELTA = 1e-5
FULL = dict(noise_multiplier=10.0, sampling_rate=1.0, clip_norm=1.0, learning_rate=4.0, radius=0.05,
            dataset_size=1000, delta=DELTA)


def _mu_by_hand(T, d, s):
    """min over the windows of (d + m s)^2 / m (m < T) and (T s)^2 / T, for a step that contracts with c = 1."""
    return math.sqrt(min([(d + m * s) ** 2 / m for m in range(1, T)] + [T * s * s]))


@pytest.mark.parametrize("steps", [10, 30, 1000])
def test_full_batch_mu_is_the_window_minimum(steps):
    claim = convex_last_iterate_bound(steps=steps, **FULL)
    d, s = 2 * 0.05 * 1000 / (4.0 * 10.0), 1 / 10.0        # D divisor / (eta z C), 1 / z
    assert claim.contraction == 1.0 and claim.mu == pytest.approx(_mu_by_hand(steps, d, s), rel=1e-12)
    assert claim.epsilon <= claim.composition_epsilon
    if steps > 4 * d / s:                                    # past the plateau: Bok et al.'s closed form bounds it
        assert claim.mu ** 2 <= 3 * d * s + s * s * math.ceil(d / s) + 1e-12
        assert claim.mu ** 2 >= 4 * d * s - 1e-12            # the continuous minimum is 4 d s


def test_full_batch_bound_flattens():
    eps = [convex_last_iterate_bound(steps=T, **FULL).epsilon for T in (100, 1000, 10_000)]
    comp = [convex_last_iterate_bound(steps=T, **FULL).composition_epsilon for T in (100, 1000, 10_000)]
    assert eps[0] == eps[1] == eps[2] and comp[0] < comp[1] < comp[2]


def test_strongly_convex_far_from_the_boundary_is_bok_et_al_exact_formula():
    """A huge radius leaves only the window m = T; mu is then (s) sqrt((1+c)(1-c^T) / ((1-c)(1+c^T)))."""
    T, lam, eta, n = 200, 0.05, 2.0, 500
    claim = convex_last_iterate_bound(steps=T, noise_multiplier=3.0, sampling_rate=1.0, clip_norm=1.0,
                                      learning_rate=eta, radius=1e6, dataset_size=n, l2=lam, delta=DELTA)
    c = max(abs(1 - eta * lam), abs(1 - eta * (lam + (n + 1) / (4 * n))))
    assert claim.contraction == pytest.approx(c) and c < 1
    s = 1 / 3.0
    expected = s * math.sqrt((1 + c) * (1 - c ** T) / ((1 - c) * (1 + c ** T)))
    assert claim.mu == pytest.approx(expected, rel=1e-10)
    # a quadratic loss makes the step linear, x <- c x + s + N(0, 1): the two runs' theta_T are Gaussians whose
    # means differ by s (1 + c + ... + c^(T-1)) with variance 1 + c^2 + ... + c^(2(T-1)): exactly this mu
    shift = s * sum(c ** j for j in range(T))
    assert expected == pytest.approx(shift / math.sqrt(sum(c ** (2 * j) for j in range(T))), rel=1e-10)


def test_replace_one_costs_more():
    add = convex_last_iterate_bound(steps=1000, **FULL)
    replace = convex_last_iterate_bound(steps=1000, relation="replace_one", **FULL)
    assert replace.epsilon > add.epsilon and replace.relation == "replace_one"


def test_poisson_bound_is_below_composition_and_flattens():
    args = dict(noise_multiplier=1.0, sampling_rate=0.01, clip_norm=1.0, learning_rate=2.0, radius=0.5,
                dataset_size=10_000, delta=DELTA)
    short, long = (convex_last_iterate_bound(steps=T, **args) for T in (300, 100_000))
    assert short.epsilon == short.composition_epsilon and short.window == 300 and short.split is None
    assert long.epsilon < 0.5 * long.composition_epsilon and long.window < 100_000 and 0 < long.split < 1
    assert 0 < long.bad_batch_probability <= BAD_BATCH_FRACTION * DELTA
    # the window's ledger, accounted again, gives the reported number
    z1 = 1.0 * math.sqrt(1 - long.split)
    d = 2 * 0.5 * 100 / (2.0 * 1.0)
    ledger = [(SubsampledGaussianEvent(z1, 0.01), long.window)]
    from dpedu.accountants import GaussianEvent
    ledger.append((GaussianEvent(math.sqrt(long.split * long.window) / d), 1))
    assert account(ledger, "pld", delta=DELTA - long.bad_batch_probability).epsilon == pytest.approx(long.epsilon)


@pytest.mark.parametrize("args, name", [
    (dict(FULL, learning_rate=8.0), "learning_rate"),               # 8 (1001/4000) > 2
    (dict(FULL, sampling_rate=0.01, learning_rate=3.0, dataset_size=2000), "learning_rate"),
    (dict(FULL, radius=0.0), "radius"),
    (dict(FULL, l2=-1.0), "l2"),
    (dict(FULL, noise_multiplier=0.0), "noise_multiplier"),
    (dict(FULL, dataset_size=0), "dataset_size"),
    (dict(FULL, delta=0.0), "delta"),
    (dict(FULL, relation="swap"), "relation"),
])
def test_conditions_are_checked_and_refused_by_name(args, name):
    with pytest.raises((TypeError, ValueError), match=name):
        convex_last_iterate_bound(steps=100, **args)


def _data(n=300):
    return make_toy(n=n, d=3, rng=0)


def test_projected_step_is_the_dp_sgd_step_then_the_regulariser_then_the_projection():
    X, y = _data()
    data, model = training_data(X, y), LogisticModel(3)
    theta = np.array([0.3, -0.2, 0.1])
    settings = dict(model=model, clip_norm=1.0, noise_multiplier=1.0, expected_batch_size=30.0, learning_rate=2.0)
    step = projected_step(0.2, l2=0.5)
    got = step(theta, data[np.arange(30)], rng=np.random.default_rng(5), **settings)
    plain = dp_sgd_step(theta, data[np.arange(30)], rng=np.random.default_rng(5), **settings)
    assert np.allclose(got, project_to_ball(plain - 2.0 * 0.5 * theta, 0.2)) and np.linalg.norm(got) <= 0.2 + 1e-12
    assert step == ProjectedStep(0.2, 0.5) and repr(step) == "ProjectedStep(radius=0.2, l2=0.5)"


def test_run_projected_uses_the_one_loop_and_records_what_the_claim_needs():
    X, y = _data()
    plan = plan_dp_sgd(300, noise_multiplier=2.0, clip_norm=1.0, sampling_rate=1.0, steps=40, learning_rate=4.0,
                       clip_mode="inputs")
    a, b = (run_projected(X, y, plan, radius=0.1, rng=3) for _ in range(2))
    assert np.array_equal(a.theta, b.theta) and np.linalg.norm(a.theta) <= 0.1 + 1e-12
    assert a.ledger == plan.ledger and a.plan is plan and a.step == ProjectedStep(0.1)
    claim = last_iterate_claim(a, DELTA)
    assert claim.steps == 40 and claim.radius == 0.1 and claim.dataset_size == 300 and claim.divisor == 300
    assert any("diameter 0.2" in line for line in claim.conditions) and "Bok" in str(claim)


@pytest.mark.parametrize("change, words", [
    (dict(clip_mode="gradients"), "clip_mode"),
    (dict(sampling="fixed"), "sampling"),
    (dict(lr_schedule="linear"), "learning rate"),
    (dict(noise_multiplier=0.0), "no noise"),
])
def test_runs_the_theorem_does_not_cover_are_refused_by_name(change, words):
    X, y = _data()
    settings = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=5, learning_rate=1.0,
                    clip_mode="inputs")
    settings.update(change)
    run = run_projected(X, y, plan_dp_sgd(300, **settings), radius=1.0, rng=0)
    with pytest.raises(ValueError, match=words):
        last_iterate_claim(run, DELTA)
    if run.result.private:                                   # compare refuses a run with no ledger at all
        table = compare(run, DELTA, accountants=("rdp",))
        assert math.isnan(table[PROVEN_LABEL]) and words in table.notes[PROVEN_LABEL]


def test_a_network_is_not_covered():
    X, y = _data()
    plan = plan_dp_sgd(300, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=3)
    run = run_projected(X, y, plan, radius=1.0, model=MLP(3), rng=0)
    with pytest.raises(ValueError, match="not logistic regression"):
        last_iterate_claim(run, DELTA)
    with pytest.raises(TypeError, match="ProjectedRun"):
        last_iterate_claim(dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=3), DELTA)


def test_compare_shows_composition_and_the_last_iterate_side_by_side():
    X, y = _data()
    plan = plan_dp_sgd(300, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=50, learning_rate=2.0,
                       clip_mode="inputs")
    run = run_projected(X, y, plan, radius=0.5, rng=0)
    table = compare(run, DELTA, accountants=("pld",))
    assert list(table) == ["pld", HEURISTIC_LABEL, PROVEN_LABEL]
    heuristic = account([(LinearLastIterateEvent(1.0, 0.1, 50), 1)], "pld", delta=DELTA).epsilon
    assert table[HEURISTIC_LABEL] == heuristic < table["pld"] and "heuristic" in table.notes[HEURISTIC_LABEL]
    assert table[PROVEN_LABEL] == last_iterate_claim(run, DELTA).epsilon <= table["pld"]
    plain = dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=50)
    assert list(compare(plain, DELTA, accountants=("pld",))) == ["pld"]
    forced = compare(plain, DELTA, accountants=("pld",), last_iterate=True)
    assert forced[HEURISTIC_LABEL] == heuristic and math.isnan(forced[PROVEN_LABEL])
    assert list(compare(run, DELTA, accountants=("pld",), last_iterate=False)) == ["pld"]
    with pytest.raises(TypeError, match="last_iterate"):
        compare(run, DELTA, last_iterate="yes")


def test_cli_epsilon_prints_the_last_iterate(capsys):
    assert cli.main(["epsilon", "-z", "10", "-q", "1", "--steps", "1000", "--accountants", "pld", "--radius", "0.05",
                     "--learning-rate", "4", "--dataset-size", "1000"]) == 0
    out = capsys.readouterr().out
    proven = convex_last_iterate_bound(steps=1000, **FULL).epsilon
    assert "linear-loss heuristic" in out and f"{proven:.4f}" in out and "Bok" in out
    assert cli.main(["epsilon", "-z", "1", "-q", "0.01", "--steps", "100", "--accountants", "pld"]) == 0
    out = capsys.readouterr().out
    assert "0.4108" in out and "NOT a guarantee" in out and "give --radius" in out


@pytest.mark.parametrize("option, value", [("--radius", "-1"), ("--learning-rate", "0"), ("--dataset-size", "0"),
                                           ("--l2", "-0.1")])
def test_cli_refuses_bad_last_iterate_options_by_name(option, value, capsys):
    assert cli.main(["epsilon", "-z", "1", "-q", "0.01", "--steps", "10", option, value]) != 0
    assert option in capsys.readouterr().err


def test_the_rdp_form_is_the_same_bound():
    from dpedu.accountants.analysis.conversions import epsilon_from_rdp
    from dpedu.accountants.analysis.orders import DEFAULT_ORDERS
    from dpedu.accountants.analysis.rdp_curves import rdp_sampled_gaussian
    from dpedu.accountants.convex_last_iterate import convex_last_iterate_rdp

    claim = convex_last_iterate_bound(steps=1000, **FULL)
    full = dict(FULL)
    rdp, bad = convex_last_iterate_rdp(DEFAULT_ORDERS, steps=1000, **full)
    assert bad == 0.0 and np.allclose(rdp, DEFAULT_ORDERS * claim.mu ** 2 / 2)      # mu-GDP is (a, a mu^2/2)-RDP
    poisson = dict(noise_multiplier=1.5, sampling_rate=0.01, clip_norm=1.0, learning_rate=4.0, radius=3.0, l2=3e-3,
                   dataset_size=30_000, delta=DELTA)
    rdp, bad = convex_last_iterate_rdp(DEFAULT_ORDERS, steps=10_000, **poisson)
    composition = 10_000 * np.asarray(rdp_sampled_gaussian(0.01, 1.5, DEFAULT_ORDERS))
    assert np.all(rdp <= composition) and np.any(rdp < 0.5 * composition) and 0 < bad <= BAD_BATCH_FRACTION * DELTA
    # RDP converts to a looser epsilon than the PLD of the same bound, never a smaller one
    assert epsilon_from_rdp(DEFAULT_ORDERS, rdp, DELTA - bad)[0] >= convex_last_iterate_bound(steps=10_000,
                                                                                             **poisson).epsilon


def test_private_selection_charged_by_the_bound_costs_less_and_runs_reproducibly():
    from dpedu.lab.experiments.last_iterate import select_and_test, selection_epsilon

    configs = ({"learning_rate": 4.0, "radius": 5.0}, {"learning_rate": 2.0, "radius": 5.0})
    settings = dict(configs=configs, steps=300, sampling_rate=1.0, dataset_size=2000, l2=1e-2)
    composition = [selection_epsilon(z, accounting="composition", **settings) for z in (20.0, 40.0)]
    last = [selection_epsilon(z, accounting="last_iterate", **settings) for z in (20.0, 40.0)]
    assert last[0] < composition[0] and last[1] < composition[1] and composition[1] < composition[0]
    with pytest.raises(ValueError, match="configs"):
        selection_epsilon(20.0, accounting="composition", **dict(settings, configs=({"learning_rate": 1.0},)))
    X, y = make_toy(n=400, d=3, rng=1)
    a = select_and_test(X, y, X, y, noise_multiplier=5.0, configs=configs, steps=20, sampling_rate=1.0, l2=1e-2,
                        mean_trials=2.0, rng=7)
    b = select_and_test(X, y, X, y, noise_multiplier=5.0, configs=configs, steps=20, sampling_rate=1.0, l2=1e-2,
                        mean_trials=2.0, rng=7)
    assert a == b and 0.5 < a[0] <= 1.0 and a[1] in configs
