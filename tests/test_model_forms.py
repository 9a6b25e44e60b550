"""A model's clipped sum in another form is the formula a chapter prints; the loops are the printed steps.

``LogisticModel.clipped_gradient_sum`` (two matrix-vector products) and ``MLP.clipped_gradient_sum`` (from the
per-example norms) against the plain formula ``L2_clip(per_example_gradients(...), C).sum(0)``, on random inputs
(hypothesis) and adversarial ones: zero rows, huge and tiny norms, empty batches, gradient norms exactly C. Then
``run_dp_sgd`` against a loop of the printed ``dp_sgd_step`` and ``poisson_sample``, to the bit, and the book's
noisy gradient descent against its loop written with ``per_example_gradients`` and ``L2_clip``.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpedu.textbook.clipping import L2_clip, l2_norms
from dpedu.textbook.models import MLP, LogisticModel
from dpedu.textbook.models import logistic

MODEL = LogisticModel(4)

N, D = 12, 4
FEATURES = arrays(np.float64, (N, D), elements=st.floats(-1e3, 1e3))
THETAS = arrays(np.float64, (D,), elements=st.floats(-10, 10))
LABELS = arrays(np.float64, (N,), elements=st.sampled_from([-1.0, 1.0]))
CLIP_NORMS = st.one_of(st.floats(1e-3, 1e3), st.just(np.inf))


def _textbook_clipped_sum(theta, X, y, clip_norm):
    return L2_clip(logistic.per_example_gradients(theta, X, y), clip_norm).sum(axis=0)


def _close(fast, textbook, clip_norm, n):
    scale = n * (clip_norm if np.isfinite(clip_norm) else 1.0)
    np.testing.assert_allclose(fast, textbook, rtol=1e-10, atol=1e-12 * max(scale, np.abs(textbook).max(initial=0)))


# --- logistic regression ------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(X=FEATURES, theta=THETAS, y=LABELS, clip_norm=CLIP_NORMS)
def test_logistic_clipped_sum_is_the_textbook(X, theta, y, clip_norm):
    textbook = _textbook_clipped_sum(theta, X, y, clip_norm)
    _close(MODEL.clipped_gradient_sum(theta, X, y, clip_norm), textbook, clip_norm, N)
    _close(MODEL.clipped_gradient_sum(theta, X, y, clip_norm, l2_norms(X)[:, 0]), textbook, clip_norm, N)


@settings(max_examples=60, deadline=None)
@given(X=FEATURES, theta=THETAS, y=LABELS, clip_norm=CLIP_NORMS)
def test_logistic_losses_are_the_textbook_to_the_bit(X, theta, y, clip_norm):
    # the model's loss (logaddexp of its scores) is the module's loss, to the bit
    loss = logistic.loss(theta, X, y)
    assert MODEL.loss(theta, X, y) == loss == float(np.mean(logistic.per_example_loss(theta, X, y)))


MODEL_2 = LogisticModel(2)


def test_logistic_adversarial_rows():
    # zero rows, rows of norm 1e200 and 1e-200 (their squares overflow / underflow), rows whose gradient norm is
    # exactly C (kept, factor 1), on both sides of C
    X = np.array([[0.0, 0.0], [1e200, -1e200], [1e-200, 1e-200], [6.0, 8.0], [3.0, 4.0], [60.0, 80.0]])
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0, 1.0])
    theta = np.zeros(2)                                  # sigma(0) = 1/2: ||g_i|| = ||x_i|| / 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for clip_norm in (5.0, 2.5, 1e-3, 1e3, np.inf):
            textbook = _textbook_clipped_sum(theta, X, y, clip_norm) if np.isfinite(clip_norm) else None
            fast = MODEL_2.clipped_gradient_sum(theta, X, y, clip_norm)
            if textbook is None:                         # unclipped: the 1e200 row dominates, both finite
                assert np.all(np.isfinite(fast))
                np.testing.assert_allclose(fast, logistic.per_example_gradients(theta, X, y).sum(axis=0), rtol=1e-12)
            else:
                np.testing.assert_allclose(fast, textbook, rtol=1e-12, atol=1e-15 * clip_norm)
        # ||g|| = 5 exactly for the row [6, 8]: with C = 5 it is kept as it is, by both
        one = np.array([[6.0, 8.0]])
        np.testing.assert_array_equal(MODEL_2.clipped_gradient_sum(theta, one, y[:1], 5.0), [-3.0, -4.0])
        np.testing.assert_array_equal(_textbook_clipped_sum(theta, one, y[:1], 5.0), [-3.0, -4.0])


def test_logistic_empty_batch_sums_to_zero():
    # Poisson sampling can draw an empty batch: every form of the sum over it is 0, and the loss refuses it
    for clip_norm in (1.0, np.inf):
        for out in (LogisticModel(3).clipped_gradient_sum(np.ones(3), np.zeros((0, 3)), np.zeros(0), clip_norm,
                                                          np.zeros(0)),
                    logistic.clipped_gradient_sum(np.ones(3), np.zeros((0, 3)), np.zeros(0), clip_norm),
                    logistic.per_example_gradients(np.ones(3), np.zeros((0, 3)), np.zeros(0)).sum(axis=0)):
            np.testing.assert_array_equal(out, np.zeros(3))
    with pytest.raises(ValueError, match="empty"):
        logistic.loss(np.ones(3), np.zeros((0, 3)), np.zeros(0))


@pytest.mark.parametrize("margin", [1e6, -1e6, 800.0, -800.0, 0.0])
def test_logistic_extreme_margins_engine_and_textbook_agree(margin):
    X, y = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, -1.0])
    theta = np.array([margin, 0.5])
    assert MODEL_2.loss(theta, X, y) == logistic.loss(theta, X, y)
    np.testing.assert_allclose(MODEL_2.clipped_gradient_sum(theta, X, y, 0.3),
                               _textbook_clipped_sum(theta, X, y, 0.3), rtol=1e-15, atol=0)


def test_textbook_at_extreme_features_is_finite_or_refused_by_name():
    # |X| ~ 1e300: finite results with no RuntimeWarning, or a ValueError naming X
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(5, 3)) * 1e300, np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for theta in (rng.normal(size=3), np.zeros(3)):
            assert np.isfinite(logistic.loss(theta, X, y))
            assert np.all(np.isfinite(logistic.per_example_gradients(theta, X, y)))
            assert np.all(np.isfinite(logistic.gradient(theta, X, y)))
            np.testing.assert_allclose(logistic.clipped_gradient_sum(theta, X, y, 1.0),
                                       LogisticModel(3).clipped_gradient_sum(theta, X, y, 1.0), rtol=1e-12)
        for f in (logistic.loss, logistic.per_example_loss, logistic.per_example_gradients, logistic.gradient,
                  lambda t, X, y: logistic.clipped_gradient_sum(t, X, y, 1.0), LogisticModel(3).loss,
                  lambda t, X, y: LogisticModel(3).clipped_gradient_sum(t, X, y, 1.0)):
            with pytest.raises(ValueError, match=r"\bX\b.*rescale X"):
                f(np.full(3, 1e10), X, y)                # X @ theta overflows: refused, naming X
        with pytest.raises(ValueError, match=r"\bX\b.*rescale X"):
            logistic.gradient(np.zeros(2), np.full((3, 2), 1.7e308), np.ones(3))   # the sum overflows


# --- the MLP ------------------------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.01, 30.0), x_scale=st.floats(1e-3, 1e3), clip_norm=CLIP_NORMS)
def test_mlp_clipped_sum_is_the_textbook(seed, scale, x_scale, clip_norm):
    rng = np.random.default_rng(seed)
    net = MLP(n_features=3, hidden_units=4)
    theta, X = scale * rng.normal(size=net.n_params), x_scale * rng.normal(size=(9, 3))
    y = np.where(rng.random(9) < 0.5, 1.0, -1.0)
    G = net.per_example_gradients(theta, X, y)
    np.testing.assert_allclose(net.clipped_gradient_sum(theta, X, y, np.inf), G.sum(axis=0),     # weights 1
                               rtol=1e-10, atol=1e-12 * np.abs(G).max())
    for i in range(3):                  # C = one row's own gradient norm: that row alone comes back unchanged
        norm = float(np.linalg.norm(G[i]))
        if norm > 0:
            np.testing.assert_allclose(net.clipped_gradient_sum(theta, X[i:i + 1], y[i:i + 1], norm), G[i],
                                       rtol=1e-12)
    _close(net.clipped_gradient_sum(theta, X, y, clip_norm), L2_clip(G, clip_norm).sum(axis=0), clip_norm, 9)
    _close(net.clipped_gradient_sum(theta, X, y, clip_norm, l2_norms(X)[:, 0]), L2_clip(G, clip_norm).sum(axis=0),
           clip_norm, 9)


def test_mlp_adversarial_rows_and_empty_batch():
    net = MLP(n_features=2, hidden_units=3)
    theta = net.init(rng=1)
    X = np.array([[0.0, 0.0], [1e-200, 1e-200], [1e100, -1e100], [3.0, 4.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    G = net.per_example_gradients(theta, X, y)
    for clip_norm in (1e-3, 1.0, 1e3):
        np.testing.assert_allclose(net.clipped_gradient_sum(theta, X, y, clip_norm),
                                   L2_clip(G, clip_norm).sum(axis=0), rtol=1e-10, atol=1e-14 * clip_norm)
    # a gradient norm exactly C is kept (factor 1), as L2_clip keeps it
    exact = net.clipped_gradient_sum(theta, X[3:], y[3:], float(np.linalg.norm(G[3])))
    np.testing.assert_allclose(exact, G[3], rtol=1e-12)
    empty = net.clipped_gradient_sum(theta, X[:0], y[:0], 1.0, np.zeros(0))
    np.testing.assert_array_equal(empty, np.zeros(net.n_params))


# --- training loops: the printed loops and their steps --------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("epsilon, clip_norm", [(0.1, 5.0), (0.9, 0.5), (0.5, 1e-3)])
def test_noisy_gradient_descent_is_the_books_loop(seed, epsilon, clip_norm):
    """The book's loop written with per-example gradients, L2_clip and the Gaussian mechanism, and the run
    (two matrix-vector products per iteration) draw the same noise and reach the same parameters; the book's
    call is the plan's run to the bit."""
    from dpedu.textbook.datasets import make_toy
    from dpedu.textbook.mechanisms import gaussian_mechanism, laplace_mechanism
    from dpedu.textbook.training import noisy_gradient_descent, plan_noisy_gradient_descent, run_noisy_gradient_descent
    X, y = make_toy(n=300, d=5, rng=seed)
    X[0] *= 1e3                                        # one row far outside the clipping ball
    plan = plan_noisy_gradient_descent(7, epsilon, 1e-5, clip_norm=clip_norm)
    run = run_noisy_gradient_descent(X, y, plan, rng=seed)
    rng, theta, losses = np.random.default_rng(seed), np.zeros(5), []
    noisy_n = max(laplace_mechanism(len(X), l1_sensitivity=1.0, epsilon=epsilon, rng=rng), 1.0)
    for _ in range(7):
        G = L2_clip(logistic.per_example_gradients(theta, X, y), clip_norm).sum(axis=0)
        theta = theta - gaussian_mechanism(G, l2_sensitivity=clip_norm, noise_multiplier=plan.noise_multiplier,
                                           rng=rng) / noisy_n
        losses.append(logistic.loss(theta, X, y))
    np.testing.assert_allclose(run.theta, theta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(run.losses, losses, rtol=1e-9)
    assert run.details.noisy_count == noisy_n
    np.testing.assert_array_equal(run.details.loss_steps, np.arange(1, 8))
    book = noisy_gradient_descent(X, y, 7, epsilon, 1e-5, clip_norm=clip_norm, rng=seed)
    np.testing.assert_array_equal(book.theta, run.theta)
    assert book.ledger == run.ledger and book.epsilon == run.epsilon


def _dp_sgd_by_textbook_steps(X, y, plan, theta0, seed):
    """``run_dp_sgd`` as its docstring states it: the plan's batches (``poisson_sample`` for Poisson), then one
    ``dp_sgd_step`` per step, the loss after every ``loss_every`` steps; the same generator for batches and noise."""
    from dpedu.textbook.training import dp_sgd_step, poisson_sample, training_data
    data = training_data(X, y, clip_inputs_to=plan.clip_norm if plan.clip_mode == "inputs" else None)
    model, rng, theta = LogisticModel(X.shape[1]), np.random.default_rng(seed), theta0.copy()
    batches, sizes, losses = plan.scheme.batches(rng), [], []
    for t in range(plan.steps):
        if plan.sampling == "poisson" and plan.sampling_rate < 1:
            B = poisson_sample(len(X), plan.sampling_rate, rng)       # the printed sampler itself
        else:
            B = next(batches)
        sizes.append(B.size if isinstance(B, np.ndarray) else len(X))
        theta = dp_sgd_step(theta, data[B], model=model, clip_norm=plan.clip_norm,
                            noise_multiplier=plan.noise_multiplier, expected_batch_size=plan.divisor,
                            learning_rate=plan.learning_rate_at(t), rng=rng)
        if (t + 1) % plan.loss_every == 0 or t + 1 == plan.steps:
            losses.append(logistic.loss(theta, data.X, data.y))
    return theta, np.array(sizes), np.array(losses)


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("settings", [
    dict(noise_multiplier=1.1, clip_norm=0.5, sampling_rate=0.05),
    dict(noise_multiplier=1.1, clip_norm=0.5, sampling_rate=0.05, lr_schedule="linear"),
    dict(noise_multiplier=0.0, clip_norm=np.inf, sampling_rate=0.1, loss_every=7),
    dict(noise_multiplier=2.0, clip_norm=1e-3, sampling_rate=1.0, learning_rate=0.3),
    dict(noise_multiplier=0.8, clip_norm=0.2, sampling_rate=0.005, clip_mode="inputs"),    # empty batches too
    dict(noise_multiplier=0.8, clip_norm=0.2, sampling_rate=0.07, sampling="fixed", relation="replace_one"),
    dict(noise_multiplier=0.8, clip_norm=0.7, sampling_rate=0.1, sampling="truncated_poisson", max_batch_size=12),
    dict(noise_multiplier=0.8, clip_norm=0.7, sampling_rate=0.1, sampling="balls_in_bins"),
    dict(noise_multiplier=0.8, clip_norm=0.7, sampling_rate=0.1, sampling="cyclic", relation="zero_out"),
])
def test_logistic_dp_sgd_run_is_the_textbook_steps_to_the_bit(seed, settings):
    """``run_dp_sgd`` of logistic regression equals a loop of the printed ``dp_sgd_step`` and ``poisson_sample`` on
    the same batches and noise, to the bit: parameters, batch sizes, inclusions and losses."""
    from dpedu.textbook.datasets import make_toy
    from dpedu.textbook.training import plan_dp_sgd, run_dp_sgd
    X, y = make_toy(n=240, d=5, rng=seed)
    X[1] *= 1e3                                        # one row far outside the clipping ball
    X[2] = 0.0                                         # and a zero row
    plan = plan_dp_sgd(len(X), steps=40, **settings)
    theta0 = np.random.default_rng(seed + 10).normal(size=5)
    theta, sizes, losses = _dp_sgd_by_textbook_steps(X, y, plan, theta0, seed)
    run = run_dp_sgd(X, y, plan, theta0=theta0, rng=seed)
    np.testing.assert_array_equal(run.theta, theta)
    np.testing.assert_array_equal(run.details.batch_sizes, sizes)
    np.testing.assert_array_equal(run.losses, losses)
    assert run.details.inclusions.sum() == sizes.sum()
    if settings["sampling_rate"] == 0.005:
        assert 0 in sizes                              # the empty-batch step (pure noise) was exercised


@pytest.mark.parametrize("model", [LogisticModel(D), MLP(D, hidden_units=3)])
def test_the_steps_call_with_the_runs_norms_is_the_checked_method(model):
    """What a step calls (the batch's rows and their norms, computed once per run) equals the checked method."""
    from dpedu.textbook.training import training_data
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(N, D)) * 3, rng.choice([-1.0, 1.0], N)
    theta = rng.normal(size=model.n_params)
    batch = training_data(X, y)[np.array([0, 3, 4, 9])]
    np.testing.assert_allclose(model.clipped_gradient_sum(theta, batch.X, batch.y, 0.7, batch.row_norms),
                               model.clipped_gradient_sum(theta, batch.X, batch.y, 0.7), rtol=1e-14)
    with pytest.raises(ValueError, match="n_features"):
        model.clipped_gradient_sum(theta, X[:, :2], y, 0.7)
    with pytest.raises(ValueError, match="row_norms"):
        model.clipped_gradient_sum(theta, batch.X, batch.y, 0.7, np.ones(3))


@pytest.mark.parametrize("model", [LogisticModel(D), MLP(D, hidden_units=3)])
@pytest.mark.parametrize("bad", [[[1.0, 2.0]], np.ones((3, D)), None, "batch"])
def test_the_step_refuses_what_is_not_a_batch(model, bad):
    from dpedu.textbook.training import dp_sgd_step
    with pytest.raises(TypeError, match=r"\bbatch\b"):
        dp_sgd_step(np.zeros(model.n_params), bad, model=model, clip_norm=1.0, noise_multiplier=1.0,
                    expected_batch_size=2.0, learning_rate=1.0, rng=0)
