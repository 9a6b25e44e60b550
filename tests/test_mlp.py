"""The one-hidden-layer network: hand-written backward pass checked against finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpedu.textbook.clipping import L2_clip
from dpedu.textbook.models import LogisticModel, Model, MLP
from dpedu.textbook.models import logistic as lg
from dpedu.textbook.training import dp_sgd


def _problem(n=7, d=4, hidden=3, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    net = MLP(n_features=d, hidden_units=hidden)
    theta = scale * rng.normal(size=net.n_params)
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return net, theta, X, y


def _per_example_loss(net, theta, x, y):
    return net.loss(theta, x[None, :], np.array([y]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_example_gradients_match_central_differences(seed):
    net, theta, X, y = _problem(seed=seed)
    grads = net.per_example_gradients(theta, X, y)
    h = 1e-6
    for i in range(X.shape[0]):
        numeric = np.empty(net.n_params)
        for k in range(net.n_params):
            step = np.zeros(net.n_params)
            step[k] = h
            numeric[k] = (_per_example_loss(net, theta + step, X[i], y[i])
                          - _per_example_loss(net, theta - step, X[i], y[i])) / (2 * h)
        # central differences have error O(h^2) ~ 1e-12 plus rounding ~ eps/h ~ 1e-10
        np.testing.assert_allclose(grads[i], numeric, rtol=1e-6, atol=1e-8)


def test_layout_of_the_flat_vector():
    net = MLP(n_features=3, hidden_units=2)
    theta = np.arange(net.n_params, dtype=float)
    W1, b1, w2, b2 = net.unpack(theta)
    assert W1.shape == (2, 3) and b1.shape == (2,) and w2.shape == (2,) and np.ndim(b2) == 0
    np.testing.assert_array_equal(np.concatenate([W1.ravel(), b1, w2, [b2]]), theta)
    assert net.n_params == 2 * 3 + 2 * 2 + 1


def test_output_weights_zero_gives_ln2_and_zero_hidden_gradients():
    net, theta, X, y = _problem()
    theta[-(net.hidden_units + 1):] = 0.0          # w2 = 0, b2 = 0: every score is 0
    assert net.loss(theta, X, y) == pytest.approx(np.log(2), rel=1e-15)
    grads = net.per_example_gradients(theta, X, y)
    h, d = net.hidden_units, net.n_features
    np.testing.assert_array_equal(grads[:, : h * d + h], 0.0)    # no signal reaches the hidden layer
    np.testing.assert_allclose(grads[:, -1], -y / 2)             # d loss / d b2 = -y sigmoid(0)


def test_gradient_sum_and_clipped_sum_agree_with_the_matrix():
    net, theta, X, y = _problem(n=50, scale=2.0)
    grads = net.per_example_gradients(theta, X, y)
    np.testing.assert_allclose(net.clipped_gradient_sum(theta, X, y, np.inf), grads.sum(axis=0), rtol=1e-12,
                               atol=1e-14)
    for clip_norm in (0.01, 0.3, 1.0, 10.0, np.inf):
        np.testing.assert_allclose(net.clipped_gradient_sum(theta, X, y, clip_norm),
                                   L2_clip(grads, clip_norm).sum(axis=0), rtol=1e-10, atol=1e-13)


def test_per_example_norms_without_the_matrix():
    # ||grad_i||^2 = ||delta_i||^2 (||x_i||^2 + 1) + r_i^2 (||a_i||^2 + 1)  (Goodfellow 2015): with C at a record's
    # own gradient norm, the clipped sum of that record alone is its gradient, unchanged (factor exactly 1)
    net, theta, X, y = _problem(n=30, scale=1.5)
    norms = np.linalg.norm(net.per_example_gradients(theta, X, y), axis=1)
    for i in range(30):
        one = net.clipped_gradient_sum(theta, X[i:i + 1], y[i:i + 1], norms[i] * (1 + 1e-12))
        np.testing.assert_allclose(one, net.per_example_gradients(theta, X[i:i + 1], y[i:i + 1])[0], rtol=1e-12)
        smaller = net.clipped_gradient_sum(theta, X[i:i + 1], y[i:i + 1], norms[i] / 2)
        assert np.linalg.norm(smaller) == pytest.approx(norms[i] / 2, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.01, 100.0), x_scale=st.floats(0.01, 1e3),
       clip_norm=st.floats(1e-3, 1e3))
def test_one_record_moves_the_clipped_sum_by_at_most_clip_norm(seed, scale, x_scale, clip_norm):
    # the sensitivity of the clipped sum (add/remove): sum(D + x) - sum(D) = L2_clip(g(x), C)
    net, theta, X, y = _problem(n=6, seed=seed, scale=scale)
    X = X * x_scale
    with_record = net.clipped_gradient_sum(theta, X, y, clip_norm)
    without = net.clipped_gradient_sum(theta, X[1:], y[1:], clip_norm)
    assert np.linalg.norm(with_record - without) <= clip_norm * (1 + 1e-9)
    for i in range(X.shape[0]):
        assert np.linalg.norm(net.clipped_gradient_sum(theta, X[i:i + 1], y[i:i + 1], clip_norm)) <= clip_norm * (1 + 1e-12)


def test_init_uses_only_the_rng():
    net = MLP(n_features=5, hidden_units=4)
    np.testing.assert_array_equal(net.init(rng=3), net.init(rng=3))
    assert not np.array_equal(net.init(rng=3), net.init(rng=4))
    W1, b1, w2, b2 = net.unpack(net.init(rng=np.random.default_rng(0)))
    np.testing.assert_array_equal(b1, 0.0)
    assert b2 == 0.0 and np.all(W1 != 0) and np.all(w2 != 0)


def test_empty_batch_gives_zero_sums():
    # a training step must accept an empty Poisson batch: its clipped sum is zero (its loss is refused)
    net, theta, X, y = _problem()
    np.testing.assert_array_equal(net.clipped_gradient_sum(theta, X[:0], y[:0], 1.0), np.zeros(net.n_params))
    with pytest.raises(ValueError, match="empty"):
        net.loss(theta, X[:0], y[:0])


def test_both_models_follow_the_protocol():
    assert isinstance(MLP(3, 2), Model) and isinstance(LogisticModel(3), Model)
    X = np.array([[3.0, 4.0], [0.1, 0.0]])
    y = np.array([1.0, -1.0])
    theta = np.array([0.2, -0.1])
    model = LogisticModel(2)
    np.testing.assert_array_equal(model.per_example_gradients(theta, X, y), lg.per_example_gradients(theta, X, y))
    np.testing.assert_allclose(model.clipped_gradient_sum(theta, X, y, 1.0),
                               L2_clip(lg.per_example_gradients(theta, X, y), 1.0).sum(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(model.predict(theta, X), lg.predict(theta, X))


@pytest.mark.parametrize("bad", [
    lambda net, th, X, y: net.loss(th, X[:, :2], y),                 # wrong width
    lambda net, th, X, y: net.per_example_gradients(th[:-1], X, y),  # wrong theta length
    lambda net, th, X, y: net.loss(th, X, (y + 1) / 2),              # labels in {0, 1}
    lambda net, th, X, y: net.clipped_gradient_sum(th, X, y, 0.0),   # clip norm must be > 0
])
def test_bad_input_is_refused(bad):
    net, theta, X, y = _problem()
    with pytest.raises(ValueError):
        bad(net, theta, X, y)


@pytest.mark.parametrize("args", [(0, 3), (3, 0), (2.5, 3)])
def test_bad_shape_is_refused(args):
    with pytest.raises((ValueError, TypeError)):
        MLP(*args)


def _xor(n, rng):
    X = rng.uniform(-1, 1, size=(n, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    return X, y


def test_the_network_learns_what_a_linear_model_cannot():
    # XOR by quadrant: no linear classifier beats ~ chance by much; the network (with and without noise) does
    rng = np.random.default_rng(0)
    X, y = _xor(4000, rng)
    net = MLP(n_features=2, hidden_units=8)
    common = dict(clip_norm=1.0, sampling_rate=0.05, epochs=30, learning_rate=1.0)
    plain = dp_sgd(X, y, noise_multiplier=0.0, model=net, rng=1, **common)
    private = dp_sgd(X, y, noise_multiplier=1.0, model=net, rng=1, **common)
    linear = dp_sgd(X, y, noise_multiplier=0.0, rng=1, **common)
    accuracy = lambda model, theta: np.mean(model.predict(theta, X) == y)  # noqa: E731
    assert accuracy(net, plain.theta) > 0.9
    assert accuracy(net, private.theta) > 0.85
    assert accuracy(LogisticModel(2), linear.theta) < 0.7
    assert private.ledger[0][1] == 600                                   # 30 epochs / 0.05


def test_unpack_names_theta_and_the_expected_length():
    net = MLP(n_features=3, hidden_units=2)                     # 2*3 + 2 + 2 + 1 = 11 parameters
    with pytest.raises(ValueError, match=r"theta.*length n_params.*11.*got shape \(10,\)"):
        net.unpack(np.zeros(10))
    with pytest.raises(ValueError, match=r"theta.*11"):
        net.unpack(np.zeros((11, 1)))
    assert [part.shape for part in net.unpack(np.zeros(11))] == [(2, 3), (2,), (2,), ()]


def test_a_new_model_says_four_things_and_gets_the_rest():
    from dpedu.textbook.models import Model

    class Linear(Model):                                       # the four things a model says
        n_features = 2
        n_params = 2

        def init(self, rng=None):
            return np.zeros(2)

        def decision_function(self, theta, X):
            return X @ theta

        def per_example_gradients(self, theta, X, y):
            return lg.per_example_gradients(theta, X, y)

    X, y, theta = np.array([[3.0, 4.0], [0.1, 0.0]]), np.array([1.0, -1.0]), np.array([0.2, -0.1])
    model = Linear()
    assert model.loss(theta, X, y) == lg.loss(theta, X, y)
    np.testing.assert_array_equal(model.predict(theta, X), lg.predict(theta, X))
    np.testing.assert_array_equal(model.clipped_gradient_sum(theta, X, y, 1.0), lg.clipped_gradient_sum(theta, X, y, 1.0))
    result = dp_sgd(X, y, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=1.0, steps=2, model=model, rng=0)
    assert result.theta.shape == (2,)
