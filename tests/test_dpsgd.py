"""DP-SGD (Abadi et al. 2016, Algorithm 1): sampling, clipping, noise, divisor, ledger."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpedu.accountants import (
    ACCOUNTANT_NAMES,
    GaussianEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    compare,
)
from dpedu.accountants.budget import BudgetExceededError, PrivacyBudget
from dpedu.textbook.clipping import L2_clip
from dpedu.textbook.datasets import make_toy
from dpedu.ground.events import steps_from_epochs
from dpedu.textbook.models import LogisticModel, MLP
from dpedu.textbook.models import logistic as lg
from dpedu.textbook.training import NotAccountedError, ShuffledBatchesWarning, dp_sgd, dp_sgd_step
from dpedu.textbook.training import plan_dp_sgd, poisson_sample
from dpedu.textbook.training import run_dp_sgd, training_data


def planned(X, y, *, model=None, theta0=None, budget=None, rng=None, **settings):
    """A DP-SGD run with variants: ``run_dp_sgd`` on ``plan_dp_sgd(len(X), **settings)``."""
    return run_dp_sgd(X, y, plan_dp_sgd(len(X), **settings), model=model, theta0=theta0, budget=budget, rng=rng)


@pytest.fixture(scope="module")
def toy():
    X, y = make_toy(n=500, d=4, rng=7)
    return X * 3.0, y          # rows of norm up to 3, so clip norms below 3 really clip


# --- Poisson sampling --------------------------------------------------------------------------

def test_poisson_sampling_rate_and_independence():
    # Each record joins each step independently with probability q. Over T steps the per-record counts
    # are i.i.d. Binomial(T, q) and the batch sizes i.i.d. Binomial(n, q). Two-sided tests at level 1e-4
    # each, so a correct sampler fails for about 1 fixed seed in 10^4.
    n, q, steps = 400, 0.03, 3000
    rng = np.random.default_rng(2024)
    counts = np.zeros(n)
    sizes = np.empty(steps)
    for t in range(steps):
        batch = poisson_sample(n, q, rng)
        counts[batch] += 1
        sizes[t] = batch.size
    # total inclusions ~ Binomial(n T, q): exact two-sided binomial test on the rate
    assert stats.binomtest(int(counts.sum()), n * steps, q).pvalue > 1e-4
    # dispersion: sum (c - Tq)^2 / (Tq(1-q)) ~ chi2 with n degrees of freedom (too regular = not independent)
    for values, trials in ((counts, steps), (sizes, n)):
        dispersion = np.sum((values - trials * q) ** 2) / (trials * q * (1 - q))
        tail = stats.chi2.sf(dispersion, len(values))
        assert 1e-4 / 2 < tail < 1 - 1e-4 / 2
    assert sizes.min() < n * q < sizes.max()          # the size varies: Poisson, not fixed-size


def test_poisson_sample_edges():
    assert poisson_sample(5, 1.0, rng=0).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="sampling_rate"):
        poisson_sample(5, 0.0, rng=0)
    with pytest.raises(ValueError, match=r"\bn\b"):
        poisson_sample(0, 0.5, rng=0)


def test_poisson_sample_by_its_size_is_the_textbook_distribution():
    # |B| ~ Binomial(n, q), then a uniform subset of that size, has P(B = S) = q^|S| (1 - q)^(n - |S|)
    # (docs/math.md §8.1), as {i : U_i < q}. Pinned on what that law implies, at level 1e-4 per test:
    # (1) every subset of a tiny population is equally frequent as the formula says (chi-square over all 2^n),
    # (2) inclusion counts per record and (3) sizes are Binomial, (4) pairs of records are independent.
    rng = np.random.default_rng(2025)
    n, q, draws = 4, 0.3, 40_000
    codes = np.array([int(sum(1 << int(i) for i in poisson_sample(n, q, rng))) for _ in range(draws)])
    observed = np.bincount(codes, minlength=2 ** n)
    sizes = np.array([bin(code).count("1") for code in range(2 ** n)])
    expected = draws * q ** sizes * (1 - q) ** (n - sizes)
    assert stats.chisquare(observed, expected).pvalue > 1e-4
    n, q, steps = 300, 0.04, 4000
    counts, pairs, sizes = np.zeros(n), np.zeros((3, 3)), np.empty(steps)
    for t in range(steps):
        batch = poisson_sample(n, q, rng)
        assert np.all(np.diff(batch) > 0)                                # sorted, no repeats
        counts[batch] += 1
        sizes[t] = batch.size
        inside = np.isin([0, 1, 2], batch)
        pairs += np.outer(inside, inside)
    for values, trials in ((counts, steps), (sizes, n)):
        dispersion = np.sum((values - trials * q) ** 2) / (trials * q * (1 - q))
        assert 1e-4 / 2 < stats.chi2.sf(dispersion, len(values)) < 1 - 1e-4 / 2
    assert stats.binomtest(int(counts.sum()), n * steps, q).pvalue > 1e-4
    for i, j in ((0, 1), (0, 2), (1, 2)):                                  # P(i and j in B) = q^2
        assert stats.binomtest(int(pairs[i, j]), steps, q * q).pvalue > 1e-4


def test_the_loop_draws_poisson_batches_by_their_size(toy):
    X, y = toy
    settings = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=20)
    fast = planned(X, y, rng=3, **settings)
    assert fast.ledger == dp_sgd(X, y, rng=3, **settings).ledger
    rng = np.random.default_rng(3)                     # the stream: init (none), then per step size, subset, noise
    sizes = []
    for _ in range(20):
        sizes.append(rng.binomial(len(X), 0.1))
        rng.choice(len(X), size=sizes[-1], replace=False)
        rng.normal(size=4)
    np.testing.assert_array_equal(fast.details.batch_sizes, sizes)
    capped = planned(X, y, sampling="truncated_poisson", max_batch_size=45, rng=3, **settings)
    assert capped.details.batch_sizes.max() <= 45


# --- one step equals its definition ------------------------------------------------------------

def test_noise_free_unclipped_step_is_a_plain_sgd_step_on_the_same_sample(toy):
    X, y = toy
    q, lr, seed = 0.1, 0.7, 11
    theta0 = np.random.default_rng(0).normal(size=4)
    result = planned(X, y, noise_multiplier=0.0, clip_norm=np.inf, sampling_rate=q, steps=1, learning_rate=lr,
                     theta0=theta0, rng=seed)
    batch = poisson_sample(len(X), q, np.random.default_rng(seed))               # the same draw
    plain = theta0 - lr * lg.per_example_gradients(theta0, X[batch], y[batch]).sum(axis=0) / (q * len(X))
    np.testing.assert_allclose(result.theta, plain, rtol=1e-13, atol=1e-15)
    assert result.ledger is None and result.epsilon == math.inf and not result.private


@pytest.mark.parametrize("model", [None, MLP(n_features=4, hidden_units=3)])
@pytest.mark.parametrize("schedule", ["constant", "linear"])
def test_dp_sgd_follows_algorithm_1(toy, model, schedule):
    # rerun three steps by hand with the same stream: n uniforms for the batch, then d normals for the noise
    X, y = toy
    z, clip_norm, q, lr, steps, seed = 1.3, 0.8, 0.05, 0.5, 3, 5
    result = planned(X, y, noise_multiplier=z, clip_norm=clip_norm, sampling_rate=q, steps=steps, learning_rate=lr,
                     lr_schedule=schedule, model=model, rng=seed)
    model = LogisticModel(4) if model is None else model
    rng = np.random.default_rng(seed)
    theta = model.init(rng)
    for t in range(steps):
        batch = poisson_sample(len(X), q, rng)
        clipped = L2_clip(model.per_example_gradients(theta, X[batch], y[batch]), clip_norm).sum(axis=0)
        noisy = clipped + rng.normal(0.0, z * clip_norm, size=model.n_params)
        eta = lr if schedule == "constant" else lr * (1 - t / steps)
        theta = theta - eta * noisy / (q * len(X))                     # the expected batch size, not |B_t|
    np.testing.assert_allclose(result.theta, theta, rtol=1e-11, atol=1e-14)
    assert result.ledger == [(SubsampledGaussianEvent(z, q), steps)]


def test_public_step_function_matches_the_loop(toy):
    X, y = toy
    kwargs = dict(noise_multiplier=2.0, clip_norm=0.5, learning_rate=1.5)
    rng = np.random.default_rng(3)
    batch = training_data(X, y)[poisson_sample(len(X), 0.2, rng)]          # the loop: sample, then step
    one_step = dp_sgd_step(np.zeros(4), batch, model=LogisticModel(4), expected_batch_size=0.2 * len(X), rng=rng,
                           **kwargs)
    np.testing.assert_array_equal(one_step, dp_sgd(X, y, sampling_rate=0.2, steps=1, rng=3, **kwargs).theta)
    # the step is the formula: theta - eta (sum of clipped gradients + noise) / (q n)
    noise = np.random.default_rng(7).normal(0.0, 2.0 * 0.5, size=4)
    by_formula = -1.5 * (L2_clip(lg.per_example_gradients(np.zeros(4), batch.X, batch.y), 0.5).sum(0) + noise) / 100
    step = dp_sgd_step(np.zeros(4), batch, model=LogisticModel(4), expected_batch_size=100.0,
                       rng=np.random.default_rng(7), **kwargs)
    np.testing.assert_allclose(step, by_formula, rtol=1e-10, atol=1e-14)


def test_step_refuses_bad_arguments_by_name(toy):
    X, y = toy
    batch, model = training_data(X, y)[:10], LogisticModel(4)
    good = dict(model=model, clip_norm=1.0, noise_multiplier=1.0, expected_batch_size=10.0, learning_rate=1.0, rng=0)
    for bad, name in [(dict(clip_norm=-1.0), "clip_norm"), (dict(expected_batch_size=0.0), "expected_batch_size"),
                      (dict(learning_rate=np.nan), "learning_rate"), (dict(noise_multiplier=-1.0), "noise_multiplier")]:
        with pytest.raises(ValueError, match=name):
            dp_sgd_step(np.zeros(4), batch, **{**good, **bad})
    with pytest.raises(ValueError, match="theta"):
        dp_sgd_step(np.zeros(3), batch, **good)
    with pytest.raises(TypeError, match="batch"):
        dp_sgd_step(np.zeros(4), (X, y), **good)


def test_full_batch_is_noisy_gradient_descent(toy):
    # q = 1: every record at every step, divisor n; the steps are plain Gaussian releases
    X, y = toy
    result = dp_sgd(X, y, noise_multiplier=2.0, clip_norm=1.0, sampling_rate=1.0, steps=4, learning_rate=2.0, rng=9)
    rng = np.random.default_rng(9)
    theta = np.zeros(4)
    for _ in range(4):                                 # every record, nothing drawn for the batch
        noisy = lg.clipped_gradient_sum(theta, X, y, 1.0) + rng.normal(0.0, 2.0, size=4)
        theta = theta - 2.0 * noisy / len(X)
    np.testing.assert_allclose(result.theta, theta, rtol=1e-12)
    assert result.ledger == [(GaussianEvent(2.0), 4)]
    assert np.all(result.details.batch_sizes == len(X))


# --- clipping ---------------------------------------------------------------------------------

@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), theta_scale=st.floats(0.0, 1e3), x_scale=st.floats(1e-3, 1e4),
       clip_norm=st.floats(1e-3, 1e2))
def test_every_clipped_per_example_gradient_is_within_clip_norm(seed, theta_scale, x_scale, clip_norm):
    # the training kernel's clipped sum over one record is that record's clipped gradient: norm <= C
    rng = np.random.default_rng(seed)
    X = x_scale * rng.normal(size=(5, 3))
    y = np.where(rng.random(5) < 0.5, 1.0, -1.0)
    norms = np.linalg.norm(X, axis=1)
    for model in (LogisticModel(3), MLP(3, 2)):
        theta = theta_scale * rng.normal(size=model.n_params)
        for i in range(5):
            single = model.clipped_gradient_sum(theta, X[i:i + 1], y[i:i + 1], clip_norm, norms[i:i + 1])
            assert np.linalg.norm(single) <= clip_norm * (1 + 1e-12)
        total = model.clipped_gradient_sum(theta, X, y, clip_norm, norms)
        np.testing.assert_allclose(total, L2_clip(model.per_example_gradients(theta, X, y), clip_norm).sum(axis=0),
                                   rtol=1e-9, atol=1e-12 * clip_norm)


def test_input_clipping_trains_on_clipped_rows(toy):
    X, y = toy
    kwargs = dict(noise_multiplier=1.0, sampling_rate=0.1, steps=5, learning_rate=1.0, rng=4)
    by_inputs = planned(X, y, clip_norm=0.5, clip_mode="inputs", **kwargs)
    # equivalent: clip the rows first, then clip gradients at the same C (which never triggers: ||g|| < ||x|| <= C)
    by_hand = dp_sgd(L2_clip(X, 0.5), y, clip_norm=0.5, **kwargs)
    np.testing.assert_allclose(by_inputs.theta, by_hand.theta, rtol=1e-12)
    assert by_inputs.ledger == by_hand.ledger
    with pytest.raises(ValueError, match="logistic regression only"):
        planned(X, y, clip_norm=0.5, clip_mode="inputs", model=MLP(4, 2), **kwargs)


# --- batches, steps, ledgers ---------------------------------------------------------------------

def test_empty_batches_are_steps_too():
    X, y = make_toy(n=20, d=2, rng=0)
    result = dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.01, steps=200, rng=1)
    sizes = result.details.batch_sizes
    assert np.sum(sizes == 0) > 100 and np.all(np.isfinite(result.theta))
    assert result.ledger == [(SubsampledGaussianEvent(1.0, 0.01), 200)]


def test_epochs_become_steps(toy):
    X, y = toy
    result = dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.04, epochs=3, rng=0)
    assert result.details.plan.steps == 75 and result.ledger[0][1] == 75
    assert result.details.loss_steps.tolist() == [25, 50, 75]        # once per epoch
    assert np.all(np.diff(result.losses) < 0.1)


def test_shuffled_batches_warn_and_no_accountant_covers_them(toy):
    X, y = toy
    with pytest.warns(ShuffledBatchesWarning, match="No accountant"):
        result = planned(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, epochs=2, sampling="shuffle",
                         rng=0)
    assert result.ledger == [(ShuffledBatchGaussianEvent(1.0, 50, 500), 20)]
    assert np.all(result.details.batch_sizes == 50) and result.details.plan.divisor == 50
    table = compare(result, delta=1e-5)
    assert all(math.isnan(table[name]) for name in ACCOUNTANT_NAMES)


def test_shuffled_epoch_visits_each_record_once():
    from dpedu.textbook.training.sampling import Shuffle

    batches = Shuffle(10, 0.3).batches(np.random.default_rng(0))
    epoch = np.concatenate([next(batches) for _ in range(3)])          # 10 // 3 = 3 batches, 1 record left out
    assert len(set(epoch.tolist())) == 9


def test_same_seed_same_run_and_privacy_ignores_the_learning_rate(toy):
    X, y = toy
    kwargs = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=10)
    a = dp_sgd(X, y, rng=123, **kwargs)
    np.testing.assert_array_equal(a.theta, dp_sgd(X, y, rng=123, **kwargs).theta)
    assert not np.array_equal(a.theta, dp_sgd(X, y, rng=124, **kwargs).theta)
    assert dp_sgd(X, y, rng=123, learning_rate=5.0, **kwargs).ledger == a.ledger


@pytest.mark.parametrize("kwargs, error", [
    (dict(noise_multiplier=1.0, clip_norm=np.inf), "only in the non-private"),
    (dict(noise_multiplier=-1.0), "noise_multiplier"),
    (dict(clip_norm=0.0), "clip_norm"),
    (dict(sampling_rate=1.5), "sampling_rate"),
    (dict(steps=None), "exactly one of steps or epochs"),
    (dict(epochs=2), "exactly one of steps or epochs"),
    (dict(lr_schedule="cosine"), "lr_schedule"),
    (dict(sampling="balanced"), "sampling"),
    (dict(clip_mode="layers"), "clip_mode"),
    (dict(model=MLP(3, 2)), "n_features=3"),
])
def test_bad_arguments_are_refused(toy, kwargs, error):
    X, y = toy
    args = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=3)
    args.update(kwargs)
    with pytest.raises(ValueError, match=error):
        planned(X, y, **args)


# --- budget ------------------------------------------------------------------------------------

def test_budget_is_charged_before_training_and_refusal_trains_nothing(toy):
    X, y = toy
    budget = PrivacyBudget(epsilon=6.0, delta=1e-5)            # one run costs 4.85 (RDP), two cost 6.33
    kwargs = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=30)
    planned(X, y, budget=budget, rng=0, **kwargs)
    assert budget.ledger == [(SubsampledGaussianEvent(1.0, 0.1), 30)]
    spent = budget.spent()
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):
        planned(X, y, budget=budget, rng=rng, **kwargs)
    assert rng.bit_generator.state == state                   # not one random number drawn
    assert budget.spent() == spent and len(budget.ledger) == 1
    with pytest.raises(ValueError, match="non-private"):
        planned(X, y, budget=budget, rng=0, **dict(kwargs, noise_multiplier=0.0))


def test_private_result_is_not_accounted_and_says_how_to_account_it(toy):
    X, y = toy
    result = dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=3, rng=0)
    assert result.private and result.sequential is None
    for name in ("epsilon", "delta"):
        with pytest.raises(NotAccountedError, match=r"dpedu\.accountants\.compare\(result, delta="):
            getattr(result, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert compare(result, delta=1e-5)["rdp"] > 0
    plain = dp_sgd(X, y, noise_multiplier=0.0, clip_norm=1.0, sampling_rate=0.1, steps=3, rng=0)
    assert (plain.epsilon, plain.delta) == (math.inf, 0.0)             # a non-private run: accounted trivially


def test_invalid_call_spends_no_budget(toy):
    # every argument is checked before the budget is charged: a call that raises leaves the budget untouched
    X, y = toy
    budget = PrivacyBudget(epsilon=100.0, delta=1e-5)
    kwargs = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=3, budget=budget)
    for bad, error in ((dict(theta0=np.zeros(3)), ValueError), (dict(rng="seed"), TypeError),
                       (dict(rng=-1), ValueError), (dict(theta0=[np.nan] * 4), ValueError),
                       (dict(model=MLP(4, 2), theta0=np.zeros(4)), ValueError)):
        with pytest.raises(error):
            planned(X, y, **dict(dict(rng=0), **bad), **kwargs)
    assert budget.ledger == []
    planned(X, y, rng=0, **kwargs)
    assert budget.ledger == [(SubsampledGaussianEvent(1.0, 0.1), 3)]


def test_absurd_work_is_refused_with_a_stated_limit(toy):
    from dpedu.textbook.training import MAX_STEPS

    X, y = toy
    kwargs = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1)
    for extra in (dict(epochs=1e300), dict(epochs=1e307, sampling_rate=1e-3), dict(steps=MAX_STEPS + 1)):
        with pytest.raises(ValueError, match="MAX_STEPS|overflows"):
            dp_sgd(X, y, rng=0, **dict(kwargs, **extra))
    with pytest.raises(ValueError, match="steps.*MAX_STEPS"):     # refused before the shuffling warning
        planned(X, y, epochs=1e300, sampling="shuffle", rng=0, **kwargs)


def test_huge_X_is_finite_or_refused_naming_X(toy):
    X, y = toy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for model in (None, MLP(4, 3)):
            result = dp_sgd(X * 1e300, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.2, steps=5,
                            model=model, rng=0)
            assert np.all(np.isfinite(result.theta)) and np.all(np.isfinite(result.losses))
        with pytest.raises(ValueError, match=r"\bX\b"):
            dp_sgd(X * 1e300, y, noise_multiplier=0.0, clip_norm=np.inf, sampling_rate=1.0, steps=5, rng=0)
    beyond = X.copy()
    beyond[3] = [1.7e308, -1.7e308, 0.0, 0.0]
    with pytest.raises(ValueError, match=r"\bX\b"):
        dp_sgd(beyond, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=2, rng=0)


# --- the plan: fixed before the data, shared by dp_sgd and the estimator -------------------------------------

def test_dp_sgd_is_plan_then_run(toy):
    X, y = toy
    kwargs = dict(noise_multiplier=1.3, clip_norm=0.7, sampling_rate=0.15, epochs=2, learning_rate=0.5)
    plan = plan_dp_sgd(len(X), **kwargs)
    direct, by_plan = dp_sgd(X, y, rng=4, **kwargs), run_dp_sgd(X, y, plan, rng=4)
    np.testing.assert_array_equal(direct.theta, by_plan.theta)
    assert direct.ledger == by_plan.ledger == plan.ledger and direct.details.plan == plan
    assert plan.steps == steps_from_epochs(2, 0.15) and plan.divisor == 0.15 * len(X)
    linear = run_dp_sgd(X, y, plan_dp_sgd(len(X), lr_schedule="linear", **kwargs), rng=4)
    assert linear.ledger == plan.ledger and not np.array_equal(linear.theta, direct.theta)


def test_plan_checks_every_setting_by_name_and_run_checks_the_plan_fits_the_data(toy):
    X, y = toy
    good = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=3)
    for bad, name in [(dict(noise_multiplier=-1.0), "noise_multiplier"), (dict(clip_norm=0.0), "clip_norm"),
                      (dict(sampling_rate=2.0), "sampling_rate"), (dict(steps=0), "steps"),
                      (dict(sampling="with_replacement"), "sampling"), (dict(lr_schedule="cosine"), "lr_schedule"),
                      (dict(clip_mode="rows"), "clip_mode"), (dict(loss_every=0), "loss_every"),
                      (dict(sampling="cyclic"), "relation")]:
        with pytest.raises(ValueError, match=rf"\b{name}\b"):
            plan_dp_sgd(len(X), **{**good, **bad})
    with pytest.raises(ValueError, match=r"\bn\b"):
        plan_dp_sgd(0, **good)
    with pytest.raises(ValueError, match=r"plan is for n="):
        run_dp_sgd(X[:-1], y[:-1], plan_dp_sgd(len(X), **good), rng=0)
    with pytest.raises(TypeError, match=r"\bplan\b"):
        run_dp_sgd(X, y, good, rng=0)


def test_with_noise_multiplier_keeps_the_run_and_rechecks_the_noise():
    plan = plan_dp_sgd(100, noise_multiplier=0.0, clip_norm=np.inf, sampling_rate=0.1, epochs=1)
    assert plan.ledger is None and not plan.private
    with pytest.raises(ValueError, match="clip_norm=inf"):
        plan.with_noise_multiplier(1.0)
    finite = plan_dp_sgd(100, noise_multiplier=0.0, clip_norm=1.0, sampling_rate=0.1, epochs=1)
    assert finite.with_noise_multiplier(2.0).ledger == [(SubsampledGaussianEvent(2.0, 0.1), 10)]


def test_row_norms_are_computed_once_per_run(toy, monkeypatch):
    # checking X, clipping and every step share one computation of the row norms (training_data)
    import dpedu.textbook.clipping
    import dpedu.textbook.models.logistic
    import dpedu.textbook.training.common
    from dpedu.textbook.training import plan_noisy_gradient_descent, run_noisy_gradient_descent

    calls = []
    original = dpedu.textbook.clipping.l2_norms

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    for module in (dpedu.textbook.clipping, dpedu.textbook.training.common, dpedu.textbook.models.logistic):
        if hasattr(module, "l2_norms"):                    # every module that can reach it by that name
            monkeypatch.setattr(module, "l2_norms", counting)
    X, y = toy
    dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=30, rng=0)
    assert len(calls) == 1
    # noisy gradient descent: once too (the model's clipped sum takes the run's norms)
    run_noisy_gradient_descent(X, y, plan_noisy_gradient_descent(5, 0.5, 1e-5), rng=0)
    assert len(calls) == 2


def test_a_model_is_a_dpedu_model_and_anything_else_is_refused_by_name(toy):
    from dpedu.textbook.models import MLP, LogisticModel, Model

    X, y = toy
    assert isinstance(LogisticModel(3), Model) and isinstance(MLP(3, hidden_units=2), Model)
    plan = plan_dp_sgd(len(X), noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=2)
    for bad in ("model", object(), LogisticModel):             # a string, a stranger, the class itself
        with pytest.raises(TypeError, match=r"\bmodel\b"):
            run_dp_sgd(X, y, plan, model=bad, rng=0)
    with pytest.raises(TypeError, match="abstract"):             # a subclass must say its four things
        type("Partial", (Model,), {"n_params": 3})()
