r"""A rigorous bound on the floating-point round-off of the PLD's FFT compositions (docs/math.md §15.8).

The pessimistic PLD adds this bound to the mass at :math:`+\infty`, so the δ it reports stays an upper bound with the
round-off counted. Everything is a bound on the *L1 distance* between the computed composed PMF and the exact one,
which bounds the change of :math:`\delta(\varepsilon) = m_\infty + \sum_i p_i(1-e^{\varepsilon-\ell_i})_+` at every ε
(the weights lie in [0, 1]; setting negative entries to 0 only moves them towards the exact, non-negative values).

Model (standard floating-point arithmetic with unit round-off u of the precision at hand; Higham 2002, §2.2, §3,
§24.1): each output of an FFT of length N is a linear form of the inputs with unit-modulus twiddles, evaluated
through at most :math:`\lceil\log_2 N\rceil` butterfly levels of radix at most 11 (SciPy's pocketfft on
``next_fast_len`` sizes), a level of radix r costing at most (r + 4) roundings relative to the sum of the magnitudes
involved (twiddle factors accurate to about 2u), that is at most :data:`OPS_PER_LEVEL` per bit of
:math:`\log_2 N`. Hence, componentwise,

.. math:: |\widetilde{\hat x}_k - \hat x_k| \le e_F\,\|x\|_1, \qquad e_F = \gamma_{K}, \quad
          K = \mathrm{OPS\_PER\_LEVEL}\,(\lceil\log_2 N\rceil + 1), \quad \gamma_K = \frac{Ku}{1-Ku}.

*Self-composition* (:func:`composed_spectrum`, :func:`self_compose_bound`). The T-th power multiplies the forward
transform's relative error by T, so the spectrum and the power are computed in :data:`SPECTRUM_DTYPE`: x87
extended precision (:math:`u_x = 2^{-64}`, 2048 times below double's) where NumPy's long double is that, and the
result is rounded to double once. Only the frequencies whose power does not underflow are computed (found from the
FFT in double): by one long-double FFT, or by :func:`direct_dft` where that is cheaper, whose componentwise error
is :func:`dft_error` (twiddles reduced exactly to :math:`|t| \le N/2`, 16 :math:`u_x` off; two blocked sums of
:math:`B = \lceil\sqrt n\rceil` and :math:`M = \lceil n/B\rceil` terms): :math:`\gamma_{2(B+M)+40}\|x\|_1`. With :math:`e = e_F L` (:math:`e_F` at :math:`u_x`, :math:`L \ge \|p\|_1`) and
:math:`a_k = \max(|\tilde s_k|, \min(L, |\tilde s_k| + e))` (a bound on :math:`|z|` between the computed and
the exact :math:`\hat p_k`), :math:`|\tilde s_k^T - \hat p_k^T| \le T a_k^{T-1} e` (mean value theorem); the power,
computed as :math:`e^{T\ln \tilde s}` (a phase :math:`T\theta` and a log-magnitude :math:`T\ln|\tilde s|` rounded),
adds at most :math:`(|\tilde s_k| + e)^T\,u_x\,(T(4 + \pi + 2|\ln|\tilde s_k||) + 4)` and the rounding to double
:math:`2u(|\tilde s_k| + e)^T`. A frequency with :math:`(|\tilde s_k| + e)^T < e^{-700}` is set to 0, an error
of at most that. Call the sum :math:`E_k`. The exact inverse DFT (with its 1/N) maps it to an L2 error
:math:`(\sum_k E_k^2/N)^{1/2}` (Parseval), and the inverse FFT (double) adds at most :math:`\gamma_K` times the L2
norm of its exact output, :math:`(\sum_k |\tilde S_k|^2/N)^{1/2}` (Higham 2002, Thm 24.2, with the same constant).
The composed window holds W points, so by Cauchy-Schwarz the L1 error is at most :math:`\sqrt W` times the L2 error.

*Convolution* (:func:`convolve_bound`) of PMFs a and b, in double: each transform is off by at most
:math:`e_F\|\cdot\|_1` componentwise, so the product by at most :math:`(2e_F + e_F^2 + 3u)\|a\|_1\|b\|_1`; then as
above.

The bound is a worst case over the rounding errors; ``benchmarks/bench_pld_roundoff.py`` prints it beside the
round-off one measures, and beside the bound with the spectrum in double (the earlier computation).

>>> bound = convolve_bound(1.0, 1.0, 2**20, 2**20)
>>> 1e-12 < bound < 1e-9
True
>>> spectrum, error, rest = composed_spectrum(np.array([0.5, 0.25, 0.0, 0.25]), 100)
>>> bool(np.all(error < 1e-12)), round(float(spectrum[0].real), 12)
(True, 1.0)
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft as sp_fft

__all__ = ["OPS_PER_LEVEL", "UNIT_ROUNDOFF", "SPECTRUM_DTYPE", "LOG_NEGLIGIBLE", "unit_roundoff", "fft_error",
           "dft_error", "direct_dft", "power", "composed_spectrum", "self_compose_bound", "convolve_bound"]

UNIT_ROUNDOFF = float(np.finfo(float).eps) / 2.0
#: roundings per bit of log2 N, relative to the magnitudes summed: a radix-r level costs at most r - 1 additions
#: and a complex multiplication by a twiddle (2.83 u, Higham Lemma 3.5) accurate to about 2 u, so (r + 4) u for
#: log2(r) bits: 6 per bit at r = 2, at most 4.4 for r in 3..11; 8 leaves room, plus 8 for rfft's final pass
OPS_PER_LEVEL = 8
#: the precision of the forward transform and the power: x87 extended (64-bit significand, in hardware) where
#: NumPy's long double is that, else double (where long double is double, or a software quad: too slow)
SPECTRUM_DTYPE = np.longdouble if np.finfo(np.longdouble).nmant == 63 else np.float64
#: a frequency whose power is below e^LOG_NEGLIGIBLE is set to 0 (it underflows in double anyway); the bound
#: counts it
LOG_NEGLIGIBLE = -700.0


def unit_roundoff(dtype=np.float64):
    """The unit round-off u of a floating-point type (half its machine epsilon)."""
    return float(np.finfo(dtype).eps) / 2.0


def _gamma(k, unit=UNIT_ROUNDOFF):
    value = k * unit
    return value / (1.0 - value)


def fft_error(size, unit=UNIT_ROUNDOFF):
    """:math:`e_F`: the componentwise error of a length-``size`` FFT per unit of the input's L1 norm, for the
    unit round-off ``unit`` (double's by default)."""
    return _gamma(OPS_PER_LEVEL * (max(1, math.ceil(math.log2(size))) + 1), unit)


def power(spectrum, count):
    r"""``spectrum ** count`` computed as :math:`e^{T\ln s}` in polar form (the computation the bound assumes), in
    the precision of ``spectrum``."""
    magnitude = np.abs(spectrum)
    with np.errstate(divide="ignore", under="ignore"):
        log_magnitude = count * np.log(magnitude)          # -inf at 0: e^-inf = 0
        phase = count * np.angle(spectrum)
        return np.exp(log_magnitude) * (np.cos(phase) + 1j * np.sin(phase))


def dft_error(points, unit=UNIT_ROUNDOFF):
    r"""The componentwise error of :func:`direct_dft` on ``points`` inputs per unit of their L1 norm: blocks of
    B = ceil(sqrt(n)) points, M = ceil(n / B) blocks; each twiddle is off by at most 16 u (the angle's 3 roundings
    times pi, cos and sin to 2 ulps), a sum of B (or M) products by at most :math:`\sqrt2\gamma_{B+1}`."""
    block = math.isqrt(max(points - 1, 0)) + 1
    return _gamma(2 * (block + -(-points // block)) + 40, unit)


def _twiddles(exponents, size, dtype):
    r"""``(cos, sin)`` of :math:`2\pi t/N` for integer exponents t, reduced exactly to :math:`|t| \le N/2` first."""
    t = exponents % size
    t = np.where(2 * t > size, t - size, t).astype(dtype)
    angle = (2 * _PI[np.dtype(dtype).char]) * (t / dtype(size))
    return np.cos(angle), np.sin(angle)


_PI = {np.dtype(t).char: t("3.14159265358979323846264338327950288419716939937510") for t in (np.float64, np.longdouble)}


def direct_dft(x, frequencies, size, dtype):
    """``sum_j x_j exp(-2 pi i j k / size)`` at each integer k of ``frequencies``, in ``dtype``: two blocked sums
    (about 2 sqrt(n) twiddles per frequency; real arithmetic), for a short ``x`` and few frequencies."""
    n = x.size
    block = math.isqrt(max(n - 1, 0)) + 1
    rows = -(-n // block)
    padded = np.zeros(rows * block, dtype=dtype)
    padded[:n] = x
    padded = padded.reshape(rows, block)
    k = np.asarray(frequencies, dtype=np.int64)
    cos, sin = _twiddles(np.outer(np.arange(block), k), size, dtype)
    real, imag = padded @ cos, padded @ sin                 # the inner sums times e^{+i angle}: conjugated below
    cos, sin = _twiddles(np.outer(np.arange(rows) * block, k), size, dtype)
    # sum_m e^{-i a_m} conj(real + i imag) = sum_m (cos - i sin)(real - i imag)
    return np.sum(cos * real - sin * imag, axis=0) - 1j * np.sum(sin * real + cos * imag, axis=0)


def _live(spectrum, count, e_f):
    """``(live, upper, log_reach)``: the frequencies whose power does not underflow, given the computed spectrum
    and its error bound ``e_f``; ``upper`` bounds its modulus, ``log_reach`` bounds T ln max(|s~_k|, |p_hat_k|)."""
    # the modulus of s~_k rounded to complex double (2 roundings of u) and taken in double (2 more), raised
    upper = np.abs(spectrum.astype(complex, copy=False)) * (1.0 + 6.0 * UNIT_ROUNDOFF)
    with np.errstate(divide="ignore", under="ignore"):
        log_reach = count * np.log(upper + e_f)
    return np.flatnonzero(log_reach > LOG_NEGLIGIBLE), upper, log_reach


def composed_spectrum(folded, count, dtype=None):
    r"""``(S, E, rest)``: the half spectrum S of the ``count``-fold circular self-convolution of ``folded`` (a
    non-negative PMF on the FFT's N points) in complex double, a bound :math:`E_k \ge |S_k - \hat p_k^T|` per
    frequency, and one bound ``rest`` for the frequencies set to 0 (docs/math.md §15.8).

    The spectrum is computed in ``dtype`` (default :data:`SPECTRUM_DTYPE`) at the frequencies whose power does
    not underflow: by one FFT, or, where the PMF's support n is short, those frequencies are found from the FFT in
    double and computed again by :func:`direct_dft` when n times their number is small beside N.
    """
    dtype = SPECTRUM_DTYPE if dtype is None else dtype
    size, unit = folded.size, unit_roundoff(dtype)
    # |p_hat_k| <= ||p||_1 <= L: the float sum, raised by gamma_N to cover any summation order
    bound_l1 = float(folded.sum()) * (1.0 + 2.0 * size * UNIT_ROUNDOFF)
    nonzero = np.flatnonzero(folded)
    support = int(nonzero[-1]) + 1 if nonzero.size else 1
    affordable = 4 * size // (support + 16 * math.isqrt(support))   # frequencies a direct transform may take
    e_f = fft_error(size, unit) * bound_l1
    if unit < UNIT_ROUNDOFF and affordable >= 32:
        live, upper, log_reach = _live(sp_fft.rfft(folded), count, fft_error(size) * bound_l1)
        if live.size <= affordable:
            spectrum, e_f = direct_dft(folded[:support].astype(dtype), live, size, dtype), dft_error(support, unit)
            e_f *= bound_l1
        else:
            spectrum = sp_fft.rfft(folded.astype(dtype))[live]
        _, upper, log_reach_live = _live(spectrum, count, e_f)      # the extended values' own bounds
    else:
        spectrum = sp_fft.rfft(folded.astype(dtype, copy=False))
        live, upper, log_reach = _live(spectrum, count, e_f)
        spectrum, upper, log_reach_live = spectrum[live], upper[live], log_reach[live]
    result = np.zeros(log_reach.size, dtype=complex)
    result[live] = power(spectrum, count)
    reach = np.exp(log_reach_live)
    a = np.maximum(np.minimum(bound_l1, upper + e_f), upper)                # >= |z| between s~_k and p_hat_k
    with np.errstate(divide="ignore", under="ignore"):
        propagated = count * np.exp((count - 1) * np.log(a)) * e_f
    log_mag = np.abs(np.log(np.maximum(upper, np.finfo(float).tiny)))
    rounding = reach * (unit * (count * (4.0 + math.pi + 2.0 * log_mag) + 4.0) + 2.0 * UNIT_ROUNDOFF)
    # the frequencies set to 0 are off by at most e^LOG_NEGLIGIBLE each: returned as one bound for all of them
    error = np.zeros(log_reach.size)
    error[live] = propagated + rounding
    return result, error, math.exp(LOG_NEGLIGIBLE + 1.0) if live.size < log_reach.size else 0.0  # + 1: slack


def _half_weights(count, size):
    """How often each half-spectrum entry appears in the full spectrum of a real signal of ``size`` points."""
    weights = np.full(count, 2.0)
    weights[0] = 1.0
    if size % 2 == 0:
        weights[-1] = 1.0
    return weights


def self_compose_bound(spectrum, error, size, width, rest=0.0):
    r"""L1 bound, over ``width`` of its ``size`` points, on the error of ``irfft(spectrum, size)`` as the composed
    PMF, given the per-frequency bounds ``error`` and ``rest`` of :func:`composed_spectrum` (docs/math.md §15.8)."""
    weights = _half_weights(spectrum.size, size)
    exact_l2 = math.sqrt(float(np.sum(weights * error**2)) / size) + rest      # Parseval: IDFT of the error
    output_l2 = math.sqrt(float(np.sum(weights * np.abs(spectrum) ** 2)) / size)   # exact IDFT of the computed S
    return float(math.sqrt(width) * (exact_l2 + fft_error(size) * output_l2))


def convolve_bound(a_l1, b_l1, size, out_points, output_l2=1.0):
    """L1 bound on the error of the FFT convolution (length ``size``) of two PMFs of L1 norms ``a_l1``, ``b_l1``,
    over ``out_points`` output points whose computed L2 norm is ``output_l2``."""
    e_f = fft_error(size)
    product = (2.0 * e_f + e_f * e_f + 3.0 * UNIT_ROUNDOFF) * a_l1 * b_l1
    exact_l2 = product  # sqrt(size * product^2 / size)
    return math.sqrt(out_points) * (exact_l2 + fft_error(size) * (output_l2 + exact_l2))
