"""Balls-in-bins batches: the sampler, the event, and the Monte Carlo estimate beside its proven bound (docs/math.md
§22.8)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from dpedu.accountants import UnsupportedEventError, make_accountant
from dpedu.accountants.balls_in_bins import (LABEL, balls_in_bins_delta, balls_in_bins_epsilon,
                                             balls_in_bins_upper_bound)
from dpedu.events_allocation import BallsInBinsGaussianEvent, balls_in_bins_batches
from dpedu.gaussian import gaussian_delta_exact, gaussian_epsilon_exact


def test_an_epoch_is_a_partition_and_is_seeded():
    batches = list(balls_in_bins_batches(1_000, 7, rng=3))
    assert len(batches) == 7
    assert np.array_equal(np.sort(np.concatenate(batches)), np.arange(1_000))
    assert all(np.all(np.diff(b) > 0) for b in batches if b.size > 1)
    again = list(balls_in_bins_batches(1_000, 7, rng=3))
    assert all(np.array_equal(a, b) for a, b in zip(batches, again))
    generator = np.random.default_rng(3)
    first, second = list(balls_in_bins_batches(50, 5, generator)), list(balls_in_bins_batches(50, 5, generator))
    assert any(not np.array_equal(a, b) for a, b in zip(first, second))   # the caller's stream advances


def test_each_record_lands_in_a_uniform_bin_independently_of_the_others():
    rng = np.random.default_rng(11)
    b, epochs = 5, 4_000
    where = np.empty((epochs, 3), dtype=int)
    for e in range(epochs):
        for j, batch in enumerate(balls_in_bins_batches(3, b, rng)):
            where[e, batch] = j
    for record in range(3):       # uniform over the b bins
        assert chisquare(np.bincount(where[:, record], minlength=b)).pvalue > 1e-3
    pairs = where[:, 0] * b + where[:, 1]            # records 0 and 1 independent: uniform over b^2 pairs
    assert chisquare(np.bincount(pairs, minlength=b * b)).pvalue > 1e-3


def test_sampler_refuses_bad_arguments_by_name():
    with pytest.raises(ValueError, match="batches_per_epoch"):
        list(balls_in_bins_batches(10, 0, rng=0))
    with pytest.raises((TypeError, ValueError), match="n"):
        list(balls_in_bins_batches(2.5, 3, rng=0))
    with pytest.raises(TypeError, match="rng"):
        list(balls_in_bins_batches(10, 3, rng="seed"))


def test_the_event_is_checked_and_refused_by_every_accountant_with_the_reason():
    event = BallsInBinsGaussianEvent(1.0, 100)
    assert repr(event) == "BallsInBinsGaussianEvent(noise_multiplier=1.0, batches_per_epoch=100)"
    for bad, name in (((0.0, 10), "noise_multiplier"), ((1e-300, 10), "noise_multiplier"), ((1.0, 0), "batches")):
        with pytest.raises(ValueError, match=name):
            BallsInBinsGaussianEvent(*bad)
    for name in ("rdp", "pld"):
        with pytest.raises(UnsupportedEventError, match="balls_in_bins"):
            make_accountant(name).compose(event)


def test_one_batch_per_epoch_is_the_gaussian_and_the_estimate_finds_it():
    # b = 1: every epoch is one full-batch Gaussian release, so the exact curve is known
    estimate = balls_in_bins_epsilon(1.0, 1, epochs=4, delta=1e-5, n_samples=50_000, rng=1)
    exact = gaussian_epsilon_exact(1e-5, 0.5)
    assert estimate.epsilon == pytest.approx(exact, rel=5e-3)
    assert estimate.label == LABEL and "not a guarantee" in estimate.label
    value, error, upper = balls_in_bins_delta(1.0, 1, epochs=4, epsilon=3.0, n_samples=50_000, rng=2)
    assert abs(value - gaussian_delta_exact(3.0, 0.5)) < 5 * error and value < upper


def test_the_estimate_is_seeded_below_its_proven_bound_and_verified_on_fresh_draws():
    kwargs = dict(epochs=2, delta=1e-4, n_samples=10_000)
    a = balls_in_bins_epsilon(1.0, 20, rng=5, **kwargs)
    assert a == balls_in_bins_epsilon(1.0, 20, rng=5, **kwargs)
    assert 0 < a.epsilon < a.epsilon_upper_bound == pytest.approx(balls_in_bins_upper_bound(1.0, 2, 1e-4))
    assert abs(a.delta_estimate - 1e-4) < 5 * a.delta_standard_error     # the verify pass agrees with delta
    assert a.delta_estimate <= a.delta_upper


def test_estimates_refuse_what_cannot_be_reproduced_or_afforded():
    with pytest.raises(TypeError, match="rng"):
        balls_in_bins_epsilon(1.0, 10, epochs=1, delta=1e-5, n_samples=100, rng=None)
    with pytest.raises(ValueError, match="n_samples"):
        balls_in_bins_epsilon(1.0, 10_000, epochs=1_000, delta=1e-5, n_samples=10**6, rng=0)
    with pytest.raises(ValueError, match="delta"):
        balls_in_bins_epsilon(1.0, 10, epochs=1, delta=2.0, n_samples=100, rng=0)
    with pytest.raises(ValueError, match="confidence"):
        balls_in_bins_delta(1.0, 10, epochs=1, epsilon=1.0, n_samples=100, rng=0, confidence=1.0)
    assert math.isfinite(balls_in_bins_upper_bound(1e-3, 1, 1e-5))
