"""Checks for the exercises of chapter 1: logistic regression.

Each ``check_*`` prints ``passed: ...`` or raises :class:`~dpedu.course.notebook.CheckFailed` with a teaching hint
(see :mod:`dpedu.course.checks`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from .common import (
    CheckFailed, call, checker, close, expect, loss, overflowing, passed, per_example_gradients, problem, scalar,
    settings, vector
)

__all__ = ['check_logistic_loss', 'check_logistic_gradient', 'check_gradient_descent', 'check_accuracy']


@checker
def check_logistic_loss(fn, *, seed=None):
    r"""``fn(theta, X, y)`` must be the mean logistic loss :math:`\frac1n\sum_i\ln(1+e^{-y_i\theta\cdot x_i})`."""
    theta, X, y = problem(int(settings(seed).integers(2**31)))
    at_zero = scalar(call(fn, np.zeros(X.shape[1]), X, y), "the loss")
    if not close(at_zero, math.log(2.0)):
        expect(not close(at_zero, X.shape[0] * math.log(2.0)),
                "return the mean over the examples, not the sum (at theta = 0 the mean loss is ln 2)")
        raise CheckFailed(f"at theta = 0 every example has loss ln(1 + e⁰) = ln 2 = 0.6931; you returned {at_zero:.6g}")
    out = scalar(call(fn, theta, X, y), "the loss")
    expected = loss(theta, X, y)
    if not close(out, expected):
        margins = y * (X @ theta)
        expect(not close(out, expected * X.shape[0]), "return the mean over the examples, not the sum")
        expect(not close(out, np.mean(np.logaddexp(0.0, margins))),
                "sign: the loss is ln(1 + exp(-m)) with margin m = y * (x . theta); a confident correct "
                "prediction (large m) must have a loss near 0")
        expect(not close(out, np.mean(np.logaddexp(0.0, -(X @ theta)))),
               "your margin ignores the label: a row with y = −1 is scored as if y = +1",
               more="the margin is m = y (x · θ)")
        raise CheckFailed(f"expected the mean logistic loss {expected:.6f}; got {out:.6f}")
    far = overflowing(theta, X, y)
    big = scalar(call(fn, far, X, y), "the loss")
    expect(close(big, loss(far, X, y)),
           "for large margins your loss is not finite: exp(−m) overflows float64 (exp(710) is inf)",
           more="compute ln(1 + exp(−m)) as np.logaddexp(0, -m), which never forms exp(−m)")
    passed("the mean logistic loss, stable for large margins")


@checker
def check_logistic_gradient(fn, *, seed=None):
    r"""``fn(theta, X, y)`` must be the gradient of the mean loss, :math:`-\frac1n\sum_i y_i x_i\,\sigma(-m_i)`."""
    theta, X, y = problem(int(settings(seed).integers(2**31)))
    n, d = X.shape
    raw = call(fn, theta, X, y)
    expect(np.shape(raw) != (n, d), "return the mean over the examples (axis=0), not one gradient per example")
    out = vector(raw, (d,), "the gradient")
    expected = per_example_gradients(theta, X, y).mean(axis=0)
    if not close(out, expected):
        expect(not close(out, -expected),
                "you returned minus the gradient (the descent direction); return the gradient itself: gradient "
                "descent subtracts it")
        expect(not close(out, n * expected), "return the mean over the examples, not the sum")
        wrong_sigmoid = ((-y * expit(y * (X @ theta)))[:, None] * X).mean(axis=0)
        expect(not close(out, wrong_sigmoid), "the weight of example i is sigmoid(-m_i), not sigmoid(m_i): "
                                                "well-classified examples (large m) must contribute little")
        raise CheckFailed(f"expected {np.round(expected, 6)}; got {np.round(out, 6)}")
    far = overflowing(theta, X, y)
    big = vector(call(fn, far, X, y), (d,), "the gradient")
    expect(close(big, per_example_gradients(far, X, y).mean(axis=0)),
           "for large margins your gradient is not finite: the sigmoid overflows",
           more="scipy.special.expit(-m) computes the sigmoid without overflow")
    passed("the gradient of the mean logistic loss")


@checker
def check_gradient_descent(fn, *, seed=None):
    r"""``fn(X, y, iterations, learning_rate)`` must return theta after full-batch gradient descent from 0."""
    draw = settings(seed)
    _, X, y = problem(int(draw.integers(2**31)), n=200, d=3)
    iterations, learning_rate = int(draw.integers(4, 9)), round(float(draw.uniform(0.3, 0.9)), 2)

    def descend(steps, lr, sign=-1.0, scale=1.0):
        theta = np.zeros(X.shape[1])
        for _ in range(steps):
            theta = theta + sign * lr * scale * per_example_gradients(theta, X, y).mean(axis=0)
        return theta

    raw = call(fn, X, y, iterations, learning_rate)
    expect(not hasattr(raw, "theta"), "return the parameter vector theta itself (a numpy array)")
    out = vector(raw, (X.shape[1],), "theta")
    expected = descend(iterations, learning_rate)
    if not close(out, expected):
        expect(not close(out, descend(iterations, learning_rate, sign=+1.0)),
                "you climbed the loss: step against the gradient, theta <- theta - learning_rate * gradient")
        for steps in (iterations - 1, iterations + 1):
            expect(not close(out, descend(steps, learning_rate)),
                    f"you took {steps} steps instead of {iterations}: one update per iteration, starting at theta = 0")
        expect(not close(out, descend(iterations, learning_rate, scale=X.shape[0])),
                "step with the mean gradient, not the sum (the sum makes the step n times larger)")
        expect(loss(out, X, y) < math.log(2.0), "the loss did not decrease from theta = 0: check the update")
        raise CheckFailed(f"expected theta = {np.round(expected, 6)}; got {np.round(out, 6)} (start at zeros)")
    passed("gradient descent from theta = 0")


@checker
def check_accuracy(fn, *, seed=None):
    r"""``fn(theta, X, y)`` must return the fraction of rows where sign(x . theta) equals the label in {-1, +1}."""
    theta, X, y = problem(int(settings(seed).integers(2**31)), n=101)
    out = scalar(call(fn, theta, X, y), "the accuracy")
    scores = X @ theta
    expected = float(np.mean(np.where(scores >= 0, 1.0, -1.0) == y))
    if not close(out, expected):
        expect(not close(out, expected * len(y)), "return the fraction of correct predictions, not their count")
        expect(not close(out, np.mean((scores > 0).astype(float) == y)),
                "the labels are -1/+1 but your predictions are 0/1: predict np.where(X @ theta >= 0, 1, -1)")
        expect(not close(out, 1.0 - expected), "your predictions are flipped: a positive score predicts +1")
        raise CheckFailed(f"expected accuracy {expected:.4f}; got {out:.4f}")
    passed("accuracy of sign(X @ theta) against labels in {-1, +1}")
