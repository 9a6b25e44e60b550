"""The snapping mechanism (:mod:`dpedu.textbook.snapping`, Mironov 2012): full-precision uniforms, the power-of-two grid,
the clamped and rounded Laplace release, and its epsilon (moved here from test_mechanism_statistics.py, plus
tests of the helpers and of bad input).

Goodness-of-fit threshold p > 1e-4 with fixed seeds, as in tests/test_mechanism_statistics.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpedu import snapping
from dpedu.textbook.snapping import (
    MACHINE_EPSILON,
    _leading_zeros,
    full_precision_uniform,
    power_of_two_at_least,
    snapping_epsilon,
    snapping_grid,
    snapping_laplace_epsilon,
    snapping_mechanism,
)

P_MIN = 1e-4
N_DRAWS = 20_000


# --- full-precision uniforms ----------------------------------------------------------------------

def test_numpy_uniforms_are_coarse_and_full_precision_uniforms_are_not():
    # rng.random() returns k / 2^53, so in [1/4, 1/2) (spacing 2^-54) the last mantissa bit is always 0;
    # Mironov's U* gives every double its share: the last bit is a fair coin there
    def last_bit(v):
        return (v.view(np.uint64) & np.uint64(1)).astype(float)

    coarse = np.random.default_rng(101).random(N_DRAWS)
    fine = full_precision_uniform(N_DRAWS, rng=101)
    band = lambda v: v[(v >= 0.25) & (v < 0.5)]               # noqa: E731
    assert np.all(last_bit(band(coarse)) == 0)
    bits = last_bit(band(fine))
    # binomial(n, 1/2): 5 standard deviations
    assert abs(bits.mean() - 0.5) < 5 * 0.5 / math.sqrt(bits.size)


def test_full_precision_uniform_is_uniform():
    u = full_precision_uniform(N_DRAWS, rng=102)
    assert np.all((u > 0) & (u < 1))
    assert stats.kstest(u, stats.uniform.cdf).pvalue > P_MIN
    # binade k has probability 2^-k: chi-square over k = 1..10 plus the rest
    k = -np.frexp(u)[1] + 1                                    # u in [2^-k, 2^(1-k))
    observed = np.array([np.sum(k == j) for j in range(1, 11)] + [np.sum(k > 10)])
    expected = N_DRAWS * np.array([2.0**-j for j in range(1, 11)] + [2.0**-10])
    assert stats.chisquare(observed, expected).pvalue > P_MIN


def test_leading_zeros_exact_on_edge_words():
    words = np.array([0, 1, 2, 3, 2**31, 2**32 - 1, 2**32, 2**52 + 1, 2**63 - 1, 2**63, 2**64 - 1], dtype=np.uint64)
    expected = [64 - int(w).bit_length() for w in words]
    np.testing.assert_array_equal(_leading_zeros(words), expected)


# --- the snapping mechanism ------------------------------------------------------------------------

def test_power_of_two_at_least():
    for x, expected in [(1.0, 1.0), (1.0000000000000002, 2.0), (0.75, 1.0), (1e-300, 2.0**-996), (3e5, 2.0**19)]:
        assert power_of_two_at_least(x) == expected
    rng = np.random.default_rng(5)
    for x in np.exp(rng.uniform(-50, 50, size=200)):
        p = power_of_two_at_least(x)
        assert p >= x > p / 2 and math.frexp(p)[0] == 0.5


@pytest.mark.parametrize("epsilon, bound, l1_sensitivity", [(1.0, 50.0, 1.0), (0.3, 1e4, 1.0), (2.0, 8.0, 0.25),
                                                            (0.5, 3e3, 4.0)])
def test_snapping_outputs_lie_on_the_grid_inside_the_bound(epsilon, bound, l1_sensitivity):
    grid = snapping_grid(epsilon=epsilon, bound=bound, l1_sensitivity=l1_sensitivity)
    values = np.linspace(-2 * bound, 2 * bound, 4001)           # includes values far outside [-B, B]
    out = snapping_mechanism(values, epsilon=epsilon, bound=bound, l1_sensitivity=l1_sensitivity, rng=7)
    assert np.all(np.abs(out) <= bound)
    on_grid = out / grid == np.floor(out / grid)
    assert np.all(on_grid | (np.abs(out) == bound))
    # the grid is a power of two times the sensitivity, and at least the noise scale Delta_1 / epsilon
    assert math.frexp(grid / l1_sensitivity)[0] == 0.5
    assert grid >= l1_sensitivity / epsilon


def test_snapping_clamps_the_true_answer_first():
    # f(D) = 10^6 with B = 100 is released as if it were 100: outputs near 100, never beyond
    out = snapping_mechanism(np.full(2000, 1e6), epsilon=1.0, bound=100.0, rng=8)
    assert np.all(out <= 100.0) and np.median(out) > 90.0


def test_snapping_distribution_is_rounded_laplace():
    # over the reals the output is clamp(round_Lambda(x + Lap(lambda))): chi-square against that pmf
    epsilon, bound, value = 1.0, 24.0, 3.3
    scale = 1.0 / snapping_laplace_epsilon(epsilon, bound=bound)
    grid = snapping_grid(epsilon=epsilon, bound=bound)
    out = snapping_mechanism(np.full(N_DRAWS, value), epsilon=epsilon, bound=bound, rng=9)
    support, pmf = _snapping_pmf(value, scale, grid, bound)
    observed = np.array([np.sum(out == s) for s in support])
    assert observed.sum() == N_DRAWS                            # nothing outside the support
    keep = pmf * N_DRAWS >= 5                                   # chi-square needs expected counts >= 5: pool the rest
    observed = np.append(observed[keep], observed[~keep].sum())
    expected = np.append(pmf[keep], pmf[~keep].sum()) * N_DRAWS
    assert stats.chisquare(observed, expected).pvalue > P_MIN
    # teeth: the plain Laplace scale 1/epsilon without the grid would put mass on odd integers
    assert np.all(out / 2.0 == np.floor(out / 2.0)) and grid == 2.0


def _snapping_pmf(value, scale, grid, bound):
    """Exact pmf over the reals of clamp_B(round_Lambda(clamp_B(value) + Lap(scale))) (ties have probability 0)."""
    x = min(max(value, -bound), bound)
    top = math.floor(bound / grid)
    points = np.arange(-top, top + 1) * grid                    # grid points inside [-B, B]
    laplace = stats.laplace(x, scale)

    def mass(a, b):  # P(a < x + N <= b), from the nearer tail so that tiny masses keep their precision
        return np.where(a >= x, laplace.sf(a) - laplace.sf(b), laplace.cdf(b) - laplace.cdf(a))

    upper = np.append(points[:-1] + grid / 2, np.inf)           # the last point collects everything above
    lower = np.insert(points[1:] - grid / 2, 0, -np.inf)
    if points[-1] < bound:                                      # B is not on the grid: mass beyond goes to +-B
        upper[-1] = points[-1] + grid / 2
        lower[0] = points[0] - grid / 2
        points = np.concatenate(([-bound], points, [bound]))
        lower = np.concatenate(([-np.inf], lower, [upper[-1]]))
        upper = np.concatenate(([lower[1]], upper, [np.inf]))
    return points, mass(lower, upper)


@pytest.mark.parametrize("epsilon, bound", [(1.0, 24.0), (0.4, 30.0), (1.0, 7.0)])
def test_snapping_privacy_loss_over_the_reals_is_at_most_epsilon(epsilon, bound):
    # exact pmfs for neighbouring answers f and f + 1 (including the clamped endpoints): the log ratio of
    # every output's probability is at most epsilon' <= epsilon (the rounding is post-processing over R)
    scale = 1.0 / snapping_laplace_epsilon(epsilon, bound=bound)
    grid = snapping_grid(epsilon=epsilon, bound=bound)
    for f in np.linspace(-bound - 2, bound + 1, 37):
        support, p = _snapping_pmf(f, scale, grid, bound)
        support_prime, p_prime = _snapping_pmf(f + 1.0, scale, grid, bound)
        np.testing.assert_array_equal(support, support_prime)
        assert np.all(p > 0) and np.all(p_prime > 0)
        assert np.max(np.abs(np.log(p) - np.log(p_prime))) <= 1.0 / scale * (1 + 1e-9)


@pytest.mark.parametrize("laplace_epsilon", [1e-3, 0.1, 1.0, 10.0])
@pytest.mark.parametrize("bound_units", [2e3, 1e6, 1e12])
def test_snapping_epsilon_matches_mironov(laplace_epsilon, bound_units):
    eps = snapping_epsilon(laplace_epsilon, bound=bound_units)
    # the proof's last line, and the theorem's rounded form 1/lambda + 2^-49 B/lambda (lambda < B < 2^46 lambda)
    assert eps == (1 + 12 * bound_units * MACHINE_EPSILON) * laplace_epsilon + 2 * MACHINE_EPSILON
    if 1 / laplace_epsilon < bound_units < 2.0**46 / laplace_epsilon:
        assert eps <= laplace_epsilon * (1 + 2.0**-49 * bound_units)
    assert eps > laplace_epsilon
    # the inverse gives back the Laplace parameter, and sensitivity enters as B / Delta_1
    assert snapping_laplace_epsilon(eps, bound=bound_units) == pytest.approx(laplace_epsilon, rel=1e-14)
    assert snapping_epsilon(laplace_epsilon, bound=4 * bound_units, l1_sensitivity=4.0) == eps


def test_snapping_is_reproducible_and_seeds_differ():
    a = snapping_mechanism(np.zeros(50), epsilon=0.5, bound=100.0, rng=3)
    b = snapping_mechanism(np.zeros(50), epsilon=0.5, bound=100.0, rng=3)
    c = snapping_mechanism(np.zeros(50), epsilon=0.5, bound=100.0, rng=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_array_equal(full_precision_uniform(5, rng=1), full_precision_uniform(5, rng=1))
    assert isinstance(snapping_mechanism(1.0, epsilon=0.5, bound=100.0, rng=0), float)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(epsilon=1.0, bound=0.5), "bound must satisfy"),          # B below the noise scale
        (dict(epsilon=1.0, bound=2.0**47), "bound must satisfy"),      # beyond 2^46 lambda
        (dict(epsilon=0.0, bound=10.0), "epsilon"),
        (dict(epsilon=1e-17, bound=1e20), "epsilon must exceed"),
        (dict(epsilon=1.0, bound=-1.0), "bound"),
        (dict(epsilon=1.0, bound=10.0, l1_sensitivity=0.0), "l1_sensitivity"),
        (dict(epsilon=1.0, bound=np.inf), "bound"),
    ],
)
def test_snapping_refuses_parameters_outside_the_theorem(kwargs, match):
    with pytest.raises(ValueError, match=match):
        snapping_mechanism(1.0, rng=0, **kwargs)


def test_snapping_refuses_bad_values():
    with pytest.raises(ValueError, match="value"):
        snapping_mechanism(np.nan, epsilon=1.0, bound=10.0)
    with pytest.raises(ValueError, match="value"):
        snapping_mechanism([1.0, np.inf], epsilon=1.0, bound=10.0)
    with pytest.raises(TypeError, match="value"):
        snapping_mechanism("3", epsilon=1.0, bound=10.0)


# --- the helpers and their argument checks ---------------------------------------------------------------

def test_snapping_grid_moves_a_power_of_two_scale_to_the_next_one():
    # epsilon' < epsilon, so 1/epsilon' is just above 2 when epsilon = 0.5: the grid is 4, not 2
    assert snapping_grid(epsilon=0.5, bound=100.0) == 4.0
    assert snapping_grid(epsilon=0.5, bound=100.0, l1_sensitivity=0.25) == 1.0   # scales with Delta_1
    lam = 1.0 / snapping_laplace_epsilon(0.3, bound=100.0)
    assert snapping_grid(epsilon=0.3, bound=100.0) == power_of_two_at_least(lam)


def test_snapping_laplace_epsilon_is_below_epsilon_and_inverts_snapping_epsilon():
    for epsilon, bound in [(1e-3, 1e4), (0.5, 100.0), (5.0, 1e9)]:
        laplace_epsilon = snapping_laplace_epsilon(epsilon, bound=bound)
        assert 0 < laplace_epsilon < epsilon
        assert snapping_epsilon(laplace_epsilon, bound=bound) == pytest.approx(epsilon, rel=1e-15)


def test_snapping_mechanism_output_is_exactly_grid_points_or_the_bound():
    # a large value clamps to B; a value at the bound keeps every output inside [-B, B]
    out = snapping_mechanism(np.full(500, 1e300), epsilon=2.0, bound=10.0, rng=0)
    grid = snapping_grid(epsilon=2.0, bound=10.0)
    assert np.all(np.abs(out) <= 10.0)
    assert np.all((np.remainder(out, grid) == 0) | (np.abs(out) == 10.0))


def test_power_of_two_at_least_refuses_what_has_no_float_answer():
    assert power_of_two_at_least(2.0**1023) == 2.0**1023
    with pytest.raises(ValueError, match=r"^x must be at most 2\^1023"):
        power_of_two_at_least(1.5 * 2.0**1023)
    for bad, error in [(0.0, ValueError), (-1.0, ValueError), (math.nan, ValueError), ("1", TypeError)]:
        with pytest.raises(error, match=r"\bx\b"):
            power_of_two_at_least(bad)


@pytest.mark.parametrize("size, error", [(-1, ValueError), (2.0, TypeError), ((2, "3"), TypeError), (True, TypeError)])
def test_full_precision_uniform_refuses_bad_sizes_by_name(size, error):
    with pytest.raises(error, match=r"^size\b"):
        full_precision_uniform(size, rng=0)


def test_full_precision_uniform_shapes_and_scalar():
    assert isinstance(full_precision_uniform(rng=0), float)
    assert full_precision_uniform((2, 3), rng=0).shape == (2, 3)
    assert full_precision_uniform(0, rng=0).shape == (0,)


def test_snapping_epsilon_refuses_bad_arguments_by_name():
    for call, name in [(lambda: snapping.snapping_epsilon(0.0, bound=10.0), "laplace_epsilon"),
                       (lambda: snapping.snapping_epsilon(1.0, bound=0.0), "bound"),
                       (lambda: snapping.snapping_epsilon(1.0, bound=10.0, l1_sensitivity=-1.0), "l1_sensitivity"),
                       (lambda: snapping.snapping_laplace_epsilon(-1.0, bound=10.0), "epsilon")]:
        with pytest.raises(ValueError, match=rf"\b{name}\b"):
            call()
