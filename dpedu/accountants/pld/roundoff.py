r"""A rigorous bound on the floating-point round-off of the PLD's FFT compositions (docs/math.md §15.8).

The pessimistic PLD adds this bound to the mass at :math:`+\infty`, so the δ it reports stays an upper bound with the
round-off counted. Everything is a bound on the *L1 distance* between the computed composed PMF and the exact one,
which bounds the change of :math:`\delta(\varepsilon) = m_\infty + \sum_i p_i(1-e^{\varepsilon-\ell_i})_+` at every ε
(the weights lie in [0, 1]; setting negative entries to 0 only moves them towards the exact, non-negative values).

Model (standard floating-point arithmetic, unit round-off u; Higham 2002, §3, §24.1): each output of an FFT of
length N is a linear form of the inputs with unit-modulus twiddles, evaluated through at most
:math:`\lceil\log_2 N\rceil` butterfly levels of radix at most 11 (SciPy's pocketfft on ``next_fast_len`` sizes),
a level of radix r costing at most (r + 4) roundings relative to the sum of the magnitudes involved (twiddle
factors accurate to about 2u), that is at most :data:`OPS_PER_LEVEL` per bit of :math:`\log_2 N`. Hence, componentwise,

.. math:: |\widetilde{\hat x}_k - \hat x_k| \le e_F\,\|x\|_1, \qquad e_F = \gamma_{K}, \quad
          K = \mathrm{OPS\_PER\_LEVEL}\,(\lceil\log_2 N\rceil + 1), \quad \gamma_K = \frac{Ku}{1-Ku}.

*Self-composition* (:func:`self_compose_bound`): the spectrum s of a PMF (:math:`\|p\|_1 \le 1`, so
:math:`|\hat p_k| \le 1`) is raised to the power T; with :math:`a_k = \min(1, |\tilde s_k| + e_F)`,
:math:`|\tilde s_k^T - \hat p_k^T| \le T a_k^{T-1} e_F` (mean value theorem), and the power's own rounding (computed
as :math:`e^{T\ln \tilde s}`: a phase :math:`T\theta` and a log-magnitude :math:`T\ln|\tilde s|` rounded) adds at
most :math:`(|\tilde s_k| + e_F)^T\,u\,(T(4 + \pi + 2|\ln|\tilde s_k||) + 4)`. Call the sum :math:`E_k`. The exact
inverse DFT (with its 1/N) maps an L2 error :math:`(\sum_k E_k^2)^{1/2}` to :math:`(\sum_k E_k^2/N)^{1/2}`
(Parseval), and the inverse FFT's own rounding adds at most :math:`\gamma_K` times the L2 norm of its output
(Higham 2002, Thm 24.2, with the same constant). The composed window holds W points, so by Cauchy-Schwarz the L1
error is at most :math:`\sqrt W` times the L2 error.

*Convolution* (:func:`convolve_bound`) of PMFs a and b: each transform is off by at most :math:`e_F\|\cdot\|_1`
componentwise, so the product by at most :math:`(2e_F + e_F^2 + 3u)\|a\|_1\|b\|_1`; then as above.

The bound is a worst case over the rounding errors: it is orders of magnitude above the round-off one measures
(``benchmarks/bench_pld_roundoff.py`` prints both).

>>> bound = convolve_bound(1.0, 1.0, 2**20, 2**20)
>>> 1e-12 < bound < 1e-9
True
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["OPS_PER_LEVEL", "UNIT_ROUNDOFF", "fft_error", "power", "self_compose_bound", "convolve_bound"]

UNIT_ROUNDOFF = float(np.finfo(float).eps) / 2.0
#: roundings per bit of log2 N, relative to the magnitudes summed: a radix-r level costs at most r - 1 additions
#: and a complex multiplication by a twiddle (2.83 u, Higham Lemma 3.5) accurate to about 2 u, so (r + 4) u for
#: log2(r) bits: 6 per bit at r = 2, at most 4.4 for r in 3..11; 8 leaves room, plus 8 for rfft's final pass
OPS_PER_LEVEL = 8


def _gamma(k):
    value = k * UNIT_ROUNDOFF
    return value / (1.0 - value)


def fft_error(size):
    """:math:`e_F`: the componentwise error of a length-``size`` FFT per unit of the input's L1 norm."""
    return _gamma(OPS_PER_LEVEL * (max(1, math.ceil(math.log2(size))) + 1))


def power(spectrum, count):
    r"""``spectrum ** count`` computed as :math:`e^{T\ln s}` in polar form (the computation the bound assumes)."""
    magnitude = np.abs(spectrum)
    with np.errstate(divide="ignore", under="ignore"):
        log_magnitude = count * np.log(magnitude)          # -inf at 0: e^-inf = 0
        phase = count * np.angle(spectrum)
        return np.exp(log_magnitude) * (np.cos(phase) + 1j * np.sin(phase))


def self_compose_bound(spectrum, count, size, width, output_l2, input_l1=1.0):
    r"""L1 bound on the error of ``irfft(power(spectrum, count), size)`` over ``width`` points.

    ``spectrum`` is the computed half spectrum (``rfft``) of a PMF with L1 norm ``input_l1`` (at most 1 up to
    round-off); ``output_l2`` the L2 norm of the computed output (all ``size`` points).
    """
    e_f = fft_error(size) * max(1.0, input_l1)
    magnitude = np.abs(spectrum)
    a = np.minimum(1.0, magnitude + e_f)
    with np.errstate(divide="ignore", under="ignore"):
        log_a = np.log(a)
        propagated = count * np.exp((count - 1) * log_a) * e_f
        log_mag = np.log(np.maximum(magnitude, np.finfo(float).tiny))
        scale = count * (4.0 + math.pi + 2.0 * np.abs(log_mag)) + 4.0
        rounding = np.exp(count * np.log(magnitude + e_f)) * UNIT_ROUNDOFF * scale
    error = propagated + rounding
    # the full spectrum holds each half-spectrum entry twice, except the first (and the last when size is even)
    weights = np.full(error.size, 2.0)
    weights[0] = 1.0
    if size % 2 == 0:
        weights[-1] = 1.0
    exact_l2 = math.sqrt(float(np.sum(weights * error**2)) / size)
    inverse = fft_error(size) * (output_l2 + exact_l2)
    return float(math.sqrt(width) * (exact_l2 + inverse))


def convolve_bound(a_l1, b_l1, size, out_points, output_l2=1.0):
    """L1 bound on the error of the FFT convolution (length ``size``) of two PMFs of L1 norms ``a_l1``, ``b_l1``,
    over ``out_points`` output points whose computed L2 norm is ``output_l2``."""
    e_f = fft_error(size)
    product = (2.0 * e_f + e_f * e_f + 3.0 * UNIT_ROUNDOFF) * a_l1 * b_l1
    exact_l2 = product  # sqrt(size * product^2 / size)
    return math.sqrt(out_points) * (exact_l2 + fft_error(size) * (output_l2 + exact_l2))
