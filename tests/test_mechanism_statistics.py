"""Statistical and exact tests of the mechanisms (issue 6): do the samplers draw what the theorems assume?

Three kinds of checks:

* **samplers vs their distributions**: Kolmogorov-Smirnov / chi-square tests with fixed seeds;
* **privacy loss vs epsilon, exactly**: the log density ratio of neighbouring outputs on a grid, and the
  hockey-stick divergence by numerical integration, against the closed forms;
* **floating point** (Mironov 2012): the textbook Laplace mechanism leaks through low-order bits; the
  snapping mechanism (dpedu.textbook.snapping; its own tests are in tests/test_snapping.py) does not.

Threshold for every goodness-of-fit test: p > 1e-4. With a fixed seed each test is deterministic; under
the null hypothesis the p-value is uniform, so a *correct* sampler would fail for about one seed in 10^4
per test, i.e. with ~20 such tests in this file for about one seed choice in 500. Each test also shows the
threshold has teeth: the same draws fail against a scale 10% off (KS statistic about 0.024 against a
critical value of 0.016 at n = 20 000, p = 1e-4).
"""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpedu import calibrate
from dpedu.textbook.mechanisms import (
    gaussian_mech_vec,
    gaussian_mechanism,
    gaussian_noise_multiplier,
    laplace_mech,
    laplace_mechanism,
    laplace_scale,
)
from dpedu.textbook.snapping import snapping_grid, snapping_mechanism

P_MIN = 1e-4
N_DRAWS = 20_000


# --- samplers against their distributions ------------------------------------------------------

@pytest.mark.parametrize("l1_sensitivity, epsilon, seed", [(1.0, 1.0, 11), (2.0, 0.5, 12), (1e-3, 10.0, 13),
                                                           (1e3, 0.01, 14), (1.0, 1e-4, 15)])
def test_laplace_noise_is_laplace_with_scale_sensitivity_over_epsilon(l1_sensitivity, epsilon, seed):
    b = l1_sensitivity / epsilon
    value = 123.25                                    # exact in binary: subtracting it back is exact below 2^44 b
    noise = laplace_mechanism(np.full(N_DRAWS, value), l1_sensitivity=l1_sensitivity, epsilon=epsilon, rng=seed) - value
    assert stats.kstest(noise, stats.laplace(scale=b).cdf).pvalue > P_MIN
    assert stats.kstest(noise, stats.laplace(scale=1.1 * b).cdf).pvalue < P_MIN     # 10% off is detected


@pytest.mark.parametrize("l2_sensitivity, noise_multiplier, seed", [(1.0, 1.0, 21), (3.0, 0.1, 22), (1e-3, 100.0, 23),
                                                                    (50.0, 4.0, 24)])
def test_gaussian_noise_is_normal_with_std_z_times_sensitivity(l2_sensitivity, noise_multiplier, seed):
    std = noise_multiplier * l2_sensitivity
    noise = gaussian_mechanism(np.zeros(N_DRAWS), l2_sensitivity=l2_sensitivity, noise_multiplier=noise_multiplier,
                               rng=seed)
    assert stats.kstest(noise, stats.norm(scale=std).cdf).pvalue > P_MIN
    assert stats.kstest(noise, stats.norm(scale=1.1 * std).cdf).pvalue < P_MIN


@pytest.mark.parametrize("epsilon, delta, seed", [(0.5, 1e-5, 31), (3.0, 1e-6, 32)])
def test_gaussian_mechanism_from_epsilon_uses_the_analytic_std(epsilon, delta, seed):
    std = 2.0 * calibrate.analytic_noise_multiplier(epsilon, delta)
    noise = gaussian_mechanism(np.zeros(N_DRAWS), l2_sensitivity=2.0, epsilon=epsilon, delta=delta, rng=seed)
    assert stats.kstest(noise, stats.norm(scale=std).cdf).pvalue > P_MIN
    assert stats.kstest(noise, stats.norm(scale=1.1 * std).cdf).pvalue < P_MIN


def test_book_spellings_draw_the_same_distributions():
    b = laplace_scale(2.0, 0.5)
    assert stats.kstest(laplace_mech(np.zeros(N_DRAWS), 2.0, 0.5, rng=41), stats.laplace(scale=b).cdf).pvalue > P_MIN
    sigma = 2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5     # classic calibration (Dwork & Roth Thm A.1)
    draws = gaussian_mech_vec(np.zeros(N_DRAWS), 2.0, 0.5, 1e-5, rng=42)
    assert stats.kstest(draws, stats.norm(scale=sigma).cdf).pvalue > P_MIN


def test_noise_does_not_depend_on_the_value():
    # two-sample KS: the noise added to 0 and to 1000 has the same law (different seeds, so independent draws)
    for mech in (lambda v, s: laplace_mechanism(v, l1_sensitivity=1.0, epsilon=1.0, rng=s),
                 lambda v, s: gaussian_mechanism(v, l2_sensitivity=1.0, noise_multiplier=1.0, rng=s)):
        at_zero = mech(np.zeros(N_DRAWS), 51)
        at_thousand = mech(np.full(N_DRAWS, 1000.0), 52) - 1000.0
        assert stats.ks_2samp(at_zero, at_thousand).pvalue > P_MIN


@pytest.mark.parametrize("mech", ["laplace", "gaussian"])
def test_coordinates_are_independent(mech):
    # (n, d) noise: the sample correlation of independent coordinates is about N(0, 1/n); 10 pairs, so the
    # chance that a correct sampler exceeds 4.5/sqrt(n) on any pair is about 10 * 6.8e-6
    n, d = N_DRAWS, 5
    if mech == "laplace":
        noise = laplace_mechanism(np.zeros((n, d)), l1_sensitivity=1.0, epsilon=1.0, rng=61)
    else:
        noise = gaussian_mechanism(np.zeros((n, d)), l2_sensitivity=1.0, noise_multiplier=2.0, rng=61)
    corr = np.corrcoef(noise, rowvar=False)
    off_diagonal = corr[~np.eye(d, dtype=bool)]
    assert np.max(np.abs(off_diagonal)) < 4.5 / math.sqrt(n)
    # every column has the same law (the noise is isotropic)
    for j in range(1, d):
        assert stats.ks_2samp(noise[:, 0], noise[:, j]).pvalue > P_MIN


# --- privacy loss against epsilon, exactly -------------------------------------------------------

@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.7, 1.0, 5.0])
@pytest.mark.parametrize("l1_sensitivity", [1e-3, 1.0, 7.0])
def test_laplace_privacy_loss_is_at_most_epsilon_and_attained(epsilon, l1_sensitivity):
    # ln p_f(x) - ln p_f'(x) for neighbours |f - f'| <= Delta_1, on a grid of outputs x and shifts f' - f
    b = laplace_scale(l1_sensitivity, epsilon)
    x = np.linspace(-30 * b, 30 * b, 2001)
    worst = 0.0
    for shift in np.linspace(-l1_sensitivity, l1_sensitivity, 21):
        loss = stats.laplace(0.0, b).logpdf(x) - stats.laplace(shift, b).logpdf(x)
        # the two log densities reach about -31 - ln(2b), each rounded to ~1e-14: allow 1e-12 absolute
        assert np.max(np.abs(loss)) <= epsilon * abs(shift) / l1_sensitivity + 1e-12
        worst = max(worst, np.max(np.abs(loss)))
    assert worst == pytest.approx(epsilon, rel=1e-9, abs=1e-12)   # the bound is tight: attained outside [f, f']


def test_vector_laplace_privacy_loss_uses_the_l1_sensitivity():
    # a k-vector with L1 sensitivity Delta_1: per-coordinate scale Delta_1/eps, loss sum_i |d_i|/b <= eps
    rng = np.random.default_rng(71)
    epsilon, l1_sensitivity, k = 0.8, 3.0, 4
    b = laplace_scale(l1_sensitivity, epsilon)
    x = rng.normal(scale=10 * b, size=(5000, k))
    for _ in range(20):
        shift = rng.normal(size=k)
        shift *= l1_sensitivity / np.abs(shift).sum()       # ||f - f'||_1 = Delta_1 exactly
        loss = (np.abs(x - shift) - np.abs(x)).sum(axis=1) / b
        assert np.max(np.abs(loss)) <= epsilon * (1 + 1e-12)
    # with scale Delta_1/eps per coordinate but L2 instead of L1 sensitivity, the bound fails: k = 4 shifts of
    # 1.5 have L2 norm 3 but L1 norm 6, so the loss reaches 2 eps
    shift = np.full(k, 1.5)
    loss = (np.abs(x - shift) - np.abs(x)).sum(axis=1) / b
    assert np.max(loss) > 1.9 * epsilon


def _hockey_stick(epsilon, mu):
    """sup_S P(S) - e^eps Q(S) for P = N(mu, 1), Q = N(0, 1) by numerical integration of (p - e^eps q)_+."""
    # p > e^eps q  <=>  x > eps/mu + mu/2: integrate the positive part from there (a one-sided integral)
    start = epsilon / mu + mu / 2.0
    value, _ = integrate.quad(lambda x: stats.norm.pdf(x, mu) - math.exp(epsilon) * stats.norm.pdf(x), start, np.inf,
                              epsabs=1e-15, epsrel=1e-10)
    return value


@pytest.mark.parametrize("noise_multiplier", [0.3, 1.0, 3.7306, 10.0])
@pytest.mark.parametrize("epsilon", [0.0, 0.1, 1.0, 4.0])
def test_gaussian_delta_by_integration_matches_balle_wang(noise_multiplier, epsilon):
    # the definition of (eps, delta)-DP for the Gaussian pair, integrated numerically, against Thm 8 of
    # Balle & Wang (2018) as implemented in calibrate.gaussian_delta_exact
    integrated = _hockey_stick(epsilon, 1.0 / noise_multiplier)
    closed = calibrate.gaussian_delta_exact(epsilon, noise_multiplier)
    assert closed == pytest.approx(integrated, rel=1e-7, abs=1e-14)


@pytest.mark.parametrize("epsilon", [0.05, 0.3, 0.99])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-9])
def test_calibrated_gaussians_meet_their_target_on_a_grid(epsilon, delta):
    # analytic: the hockey stick at eps equals delta (tight); classic (eps < 1): at most delta (loose)
    z_analytic = gaussian_noise_multiplier(epsilon, delta, "analytic")
    assert _hockey_stick(epsilon, 1.0 / z_analytic) == pytest.approx(delta, rel=1e-6)
    assert _hockey_stick(epsilon, 1.0 / z_analytic) <= delta * (1 + 1e-6)
    z_classic = gaussian_noise_multiplier(epsilon, delta, "classic")
    assert z_classic > z_analytic
    assert _hockey_stick(epsilon, 1.0 / z_classic) < delta


def test_classic_formula_fails_beyond_its_theorem():
    # why gaussian_mech refuses epsilon >= 1: the formula's z is not (eps, delta)-DP at eps = 10 (docs/math.md §4.1)
    z = math.sqrt(2 * math.log(1.25e5)) / 10.0
    assert _hockey_stick(10.0, 1.0 / z) > 2e-5 > 1e-5


@pytest.mark.parametrize("noise_multiplier, l2_sensitivity, d", [(1.0, 1.0, 1), (0.7, 2.5, 6)])
def test_gaussian_privacy_loss_of_sampled_outputs_is_normal(noise_multiplier, l2_sensitivity, d):
    # Outputs of the real sampler at f, turned into their privacy loss L(x) = ln p_f(x) / p_f'(x) for a
    # neighbour with ||f - f'||_2 = Delta_2. Theory (docs/math.md §4.3): L ~ N(mu^2/2, mu^2), mu = 1/z, whatever d.
    rng = np.random.default_rng(81)
    f = rng.normal(size=d)
    direction = rng.normal(size=d)
    f_prime = f + l2_sensitivity * direction / np.linalg.norm(direction)
    x = gaussian_mechanism(np.tile(f, (N_DRAWS, 1)), l2_sensitivity=l2_sensitivity, noise_multiplier=noise_multiplier,
                           rng=82)
    sigma = noise_multiplier * l2_sensitivity
    loss = (np.sum((x - f_prime) ** 2, axis=1) - np.sum((x - f) ** 2, axis=1)) / (2 * sigma**2)
    mu = 1.0 / noise_multiplier
    assert stats.kstest(loss, stats.norm(mu**2 / 2, mu).cdf).pvalue > P_MIN
    # and the Monte Carlo hockey stick E[(1 - e^{eps - L})_+] matches delta_G within 5 standard errors
    epsilon = 0.5
    terms = np.maximum(0.0, -np.expm1(epsilon - loss))
    standard_error = terms.std(ddof=1) / math.sqrt(N_DRAWS)
    assert abs(terms.mean() - calibrate.gaussian_delta_exact(epsilon, noise_multiplier)) < 5 * standard_error


# --- floating point: Mironov (2012) ----------------------------------------------------------------

def test_textbook_laplace_leaks_through_its_low_order_bits():
    # Neighbours f = 0 and f' = 1, epsilon = 1. For an output x in (0, 1):
    #  * from f' = 1, x = fl(1 + y): the sum of 1 and y in (-1, 0) is computed on the grid of multiples of
    #    2^-53 (Sterbenz for y <= -1/2; rounding to the 2^-53 spacing of [1/2, 1) otherwise);
    #  * from f = 0, x = y itself, which can carry bits finer than 2^-53.
    # So "x in (0, 1) and not a multiple of 2^-53" has probability 0 under f' but not under f: an infinite
    # privacy loss, although over the reals the ratio is at most e^1.
    def distinguishing(x):
        inside = (x > 0) & (x < 1)
        return inside & (np.ldexp(x, 53) != np.floor(np.ldexp(x, 53)))

    from_zero = laplace_mechanism(np.zeros(N_DRAWS), l1_sensitivity=1.0, epsilon=1.0, rng=91)
    from_one = laplace_mechanism(np.ones(N_DRAWS), l1_sensitivity=1.0, epsilon=1.0, rng=92)
    assert not np.any(distinguishing(from_one))                      # impossible from f' = 1 (exact argument above)
    assert np.mean(distinguishing(from_zero)) > 0.1                  # yet frequent from f = 0
    # snapping closes the channel: from either neighbour every output is a multiple of Lambda (or +-B)
    grid = snapping_grid(epsilon=1.0, bound=64.0)
    for value, seed in ((0.0, 93), (1.0, 94)):
        out = snapping_mechanism(np.full(N_DRAWS, value), epsilon=1.0, bound=64.0, rng=seed)
        assert np.all((out / grid == np.floor(out / grid)) | (np.abs(out) == 64.0))
