r"""Mironov's snapping mechanism: a Laplace mechanism that survives floating point.

**The problem** (Mironov 2012, §3-4). The textbook Laplace mechanism :math:`f(D) + \mathrm{Lap}(b)` is
:math:`\varepsilon`-DP over the reals, but a computer returns a *double*. Which doubles can come out
depends on :math:`f(D)`: a double near 0.3 produced as ``0.0 + y`` can carry mantissa bits down to
:math:`2^{-54}` or finer, while ``1.0 + y`` lands on a multiple of :math:`2^{-53}` (``1 + y`` is
computed on the grid of its operands). An observer who sees the raw output can therefore rule out
one of two neighbouring answers with certainty, an infinite privacy loss on an event of positive
probability. The uniforms behind ``numpy``'s sampler make this worse: they are multiples of
:math:`2^{-53}`, so small uniforms, and large noise values, are coarse.

**The fix** (Mironov 2012, §5.2). For a query of sensitivity 1 and a public bound :math:`B`:

.. math::
    \tilde f(D) = \mathrm{clamp}_B\Big(\big\lfloor \mathrm{clamp}_B(f(D)) \oplus
                  S \otimes \lambda \otimes \mathrm{LN}(U^*) \big\rceil_\Lambda\Big)

with :math:`S` a fair sign, :math:`U^*` uniform on (0, 1) *at full precision* (every double drawn
with probability proportional to its spacing), :math:`\mathrm{LN}` a correctly rounded logarithm,
:math:`\Lambda` the smallest power of two :math:`\ge \lambda`, :math:`\lfloor\cdot\rceil_\Lambda`
rounding to the nearest multiple of :math:`\Lambda`, and :math:`\mathrm{clamp}_B` clipping to
:math:`[-B, B]`. Rounding the output to a coarse grid erases the low-order bits that leaked. The price
is a slightly larger epsilon: the last line of Mironov's proof of Theorem 1 gives

.. math:: \varepsilon_{\mathrm{snap}} = \frac{1 + 12 B\eta}{\lambda} + 2\eta,\qquad \eta = 2^{-53},

which the theorem rounds up to :math:`1/\lambda + 2^{-49}B/\lambda`, stated for
:math:`\lambda < B < 2^{46}\lambda` (:math:`\eta` is the largest double with :math:`1 \oplus \eta = 1`).

**What this module does and does not promise.** :func:`full_precision_uniform` draws :math:`U^*`
exactly (a geometric exponent from fair random bits and 52 uniform mantissa bits). ``numpy.log`` is
accurate to about one ulp but is *not guaranteed to be correctly rounded*, which the proof assumes; a
production implementation would use a correctly rounded library (e.g. CRlibm) or exact integer
arithmetic. dpedu is for teaching: the module shows the mechanism and its cost, and does not claim
production-grade sampling.

>>> out = snapping_mechanism(3.2, epsilon=0.5, bound=100.0, rng=0)
>>> grid = snapping_grid(epsilon=0.5, bound=100.0)            # Lambda: a power of two >= 1/epsilon
>>> grid, float(out / grid).is_integer() or abs(out) == 100.0
(4.0, True)
>>> snapping_epsilon(0.5, bound=100.0) - 0.5 < 1e-12           # the floating-point cost is tiny
True
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..ground.validation import check_array, check_epsilon, check_positive, check_rng, check_scalar

__all__ = [
    "MACHINE_EPSILON",
    "full_precision_uniform",
    "power_of_two_at_least",
    "snapping_epsilon",
    "snapping_laplace_epsilon",
    "snapping_grid",
    "snapping_mechanism",
]

#: Mironov's :math:`\eta`: the largest double with ``1.0 + eta == 1.0`` (half of ``np.finfo(float).eps``).
MACHINE_EPSILON = 2.0**-53

# Theorem 1 of Mironov (2012) is stated for lambda < B < 2^46 lambda (B and lambda in units of the sensitivity).
_MAX_BOUND_OVER_SCALE = 2.0**46


def full_precision_uniform(size=None, rng=None):
    r"""Uniform draws on (0, 1) in which every double appears with probability proportional to its spacing.

    ``rng.random()`` returns multiples of :math:`2^{-53}`: a value near :math:`10^{-10}` has only about
    20 significant bits, and no value below :math:`2^{-53}` ever appears. Mironov's :math:`U^*` instead
    picks the binade :math:`[2^{-k}, 2^{1-k})` with probability :math:`2^{-k}` and then a uniform
    52-bit mantissa inside it:

    .. math:: U^* = (1.m_1 m_2 \dots m_{52})_2 \cdot 2^{-k},\qquad \Pr[k] = 2^{-k},\ k \ge 1.

    :math:`k` is one plus the number of leading zeros in a stream of fair random bits (64 bits at a time),
    so it is exact and unbounded (not capped at 53 as a float-based geometric sampler would be).

    Parameters
    ----------
    size : None, int or tuple of int
        Output shape (``None``: one float).
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    float or numpy.ndarray
        Values in (0, 1). (Binades below :math:`2^{-1022}` would be subnormal; they have probability
        :math:`2^{-1022}`.)
    """
    rng = check_rng(rng)
    shape = () if size is None else size
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if not all(isinstance(n, numbers.Integral) and not isinstance(n, (bool, np.bool_)) for n in dims):
        raise TypeError(f"size must be None, an integer or a tuple of integers; got {size!r}")
    if any(n < 0 for n in dims):
        raise ValueError(f"size must not be negative; got {size!r}")
    exponent = np.ones(shape, dtype=np.int64)           # k >= 1
    pending = np.ones(shape, dtype=bool)
    while np.any(pending):                              # a word of 64 zero bits (prob. 2^-64): read 64 more
        words = rng.integers(0, 2**64, size=shape, dtype=np.uint64, endpoint=False)
        exponent += np.where(pending, _leading_zeros(words), 0)
        pending &= words == 0
    mantissa = rng.integers(0, 2**52, size=shape, dtype=np.int64)
    # 1 + m / 2^52 is exact (m < 2^52), and so is scaling by a power of two
    values = np.ldexp(1.0 + mantissa * 2.0**-52, -exponent)
    return float(values) if size is None else values


def _leading_zeros(words):
    """Number of leading zero bits of each uint64 (64 for 0), exactly, via the binary exponents of 32-bit halves."""
    high = (words >> np.uint64(32)).astype(np.float64)          # < 2^32: converted exactly
    low = (words & np.uint64(0xFFFFFFFF)).astype(np.float64)
    bits_high = np.frexp(high)[1]                               # bit length (frexp(0) gives 0)
    bits_low = np.frexp(low)[1]
    return np.where(high > 0, 32 - bits_high, 64 - bits_low).astype(np.int64)


def power_of_two_at_least(x):
    r"""The smallest power of two :math:`\ge x` (for ``x > 0``), computed exactly from the binary exponent.

    >>> power_of_two_at_least(3.0), power_of_two_at_least(4.0), power_of_two_at_least(0.3)
    (4.0, 4.0, 0.5)
    """
    x = check_positive(x, "x")
    if x > 2.0**1023:  # the next power of two, 2^1024, is not a float
        raise ValueError(f"x must be at most 2^1023 (the largest power of two that is a float); got {x!r}")
    mantissa, exponent = math.frexp(x)                 # x = mantissa * 2**exponent, mantissa in [0.5, 1)
    return math.ldexp(1.0, exponent - 1) if mantissa == 0.5 else math.ldexp(1.0, exponent)


def _check_common(bound, l1_sensitivity):
    bound = check_positive(bound, "bound")
    l1_sensitivity = check_positive(l1_sensitivity, "l1_sensitivity")
    return bound, l1_sensitivity, bound / l1_sensitivity  # B in units of the sensitivity


def snapping_epsilon(laplace_epsilon, *, bound, l1_sensitivity=1.0):
    r"""The epsilon the snapping mechanism guarantees when its Laplace noise has parameter ``laplace_epsilon``.

    .. math:: \varepsilon_{\mathrm{snap}} = (1 + 12\tilde B\eta)\,\varepsilon' + 2\eta,\qquad
              \tilde B = B/\Delta_1,\ \eta = 2^{-53}

    (Mironov 2012, last line of the proof of Theorem 1, with :math:`\lambda = 1/\varepsilon'` in units of
    the sensitivity). It is at most the theorem's rounded form :math:`\varepsilon'(1 + 2^{-49}\tilde B)`.
    """
    laplace_epsilon = check_epsilon(laplace_epsilon, "laplace_epsilon")
    _, _, bound_units = _check_common(bound, l1_sensitivity)
    return (1.0 + 12.0 * bound_units * MACHINE_EPSILON) * laplace_epsilon + 2.0 * MACHINE_EPSILON


def snapping_laplace_epsilon(epsilon, *, bound, l1_sensitivity=1.0):
    r"""The Laplace parameter :math:`\varepsilon'` that makes the snapping mechanism exactly ``epsilon``-DP.

    Inverts :func:`snapping_epsilon`: :math:`\varepsilon' = (\varepsilon - 2\eta)/(1 + 12\tilde B\eta)`,
    so the *guaranteed* epsilon is the one the caller asked for (and the one to account).
    """
    epsilon = check_epsilon(epsilon)
    _, _, bound_units = _check_common(bound, l1_sensitivity)
    if not epsilon > 2.0 * MACHINE_EPSILON:
        raise ValueError(f"epsilon must exceed 2 * 2^-53 (the floating-point cost of snapping); got {epsilon!r}")
    return (epsilon - 2.0 * MACHINE_EPSILON) / (1.0 + 12.0 * bound_units * MACHINE_EPSILON)


def _scale_and_grid(epsilon, bound, l1_sensitivity):
    """lambda and Lambda in units of the sensitivity, after checking Mironov's range lambda < B < 2^46 lambda."""
    laplace_epsilon = snapping_laplace_epsilon(epsilon, bound=bound, l1_sensitivity=l1_sensitivity)
    bound, l1_sensitivity, bound_units = _check_common(bound, l1_sensitivity)
    scale = 1.0 / laplace_epsilon
    if not scale < bound_units < _MAX_BOUND_OVER_SCALE * scale:
        raise ValueError(
            f"bound must satisfy lambda < bound/l1_sensitivity < 2^46 lambda, where lambda = 1/epsilon' = {scale:.6g} "
            f"is the noise scale (Mironov 2012, Thm 1); got bound={bound!r}, l1_sensitivity={l1_sensitivity!r}. "
            "A bound below the noise scale would clamp most outputs to +-bound"
        )
    return scale, power_of_two_at_least(scale)


def snapping_grid(*, epsilon, bound, l1_sensitivity=1.0):
    r"""The output grid :math:`\Delta_1\Lambda`: every output is a multiple of it (or :math:`\pm B`).

    :math:`\Lambda` is the smallest power of two :math:`\ge \lambda = 1/\varepsilon'`. Because
    :math:`\varepsilon' < \varepsilon`, a :math:`1/\varepsilon` that is exactly a power of two moves to the
    next one (e.g. :math:`\varepsilon = 0.5` gives :math:`\Lambda = 4`, not 2).
    """
    _, grid = _scale_and_grid(epsilon, bound, l1_sensitivity)
    return grid * check_positive(l1_sensitivity, "l1_sensitivity")


def _round_half_up(t):
    """Nearest integer, ties toward +inf. ``t - floor(t)`` is exact or rounds monotonically, so the test is exact."""
    floor = np.floor(t)
    return floor + (t - floor >= 0.5)


def snapping_mechanism(value, *, epsilon, bound, l1_sensitivity=1.0, rng=None):
    r"""Release ``value`` with Mironov's snapping mechanism: epsilon-DP even as a raw double.

    Parameters
    ----------
    value : float or array_like
        The true answer f(D) (finite). **It is clamped to [-bound, bound] first**: that clamp is part of the
        mechanism (its sensitivity argument needs a bounded answer), so choose ``bound`` a priori, never
        from the data.
    epsilon : float
        The guaranteed epsilon of one release, > 0. The Laplace noise uses the slightly smaller
        :func:`snapping_laplace_epsilon`, so the floating-point cost is already paid.
    bound : float
        B > 0, a public bound on :math:`|f(D)|`. Mironov's theorem needs
        :math:`\lambda < B/\Delta_1 < 2^{46}\lambda` with :math:`\lambda = 1/\varepsilon'`.
    l1_sensitivity : float
        :math:`\Delta_1 > 0`. The computation runs in units of :math:`\Delta_1` (value / Delta_1, then
        the output times Delta_1). With a power of two (1 for a count) this rescaling is exact; otherwise the one
        rounding of ``value / l1_sensitivity`` may exceed the unit sensitivity by a relative :math:`2^{-52}`,
        which the theorem does not cover.
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    float or numpy.ndarray
        A multiple of :func:`snapping_grid` in [-bound, bound] (or exactly +-bound). Each coordinate of
        an array is a separate release with these parameters (Mironov's theorem is for one real-valued
        query): k coordinates cost k x epsilon by sequential composition.

    Notes
    -----
    Mironov (2012), "On Significance of the Least Significant Bits for Differential Privacy", §5.2,
    Theorem 1. ``numpy.log`` stands in for a correctly rounded logarithm (see the module docstring).
    """
    scale, grid = _scale_and_grid(epsilon, bound, l1_sensitivity)
    bound, l1_sensitivity, bound_units = _check_common(bound, l1_sensitivity)
    if np.ndim(value) == 0:
        scalar = check_scalar(value, "value")
        if not math.isfinite(scalar):
            raise ValueError(f"value must be finite; got {scalar!r}")
        x, was_scalar = np.asarray(scalar), True
    else:
        x, was_scalar = check_array(value, "value", allow_empty=True), False
    rng = check_rng(rng)

    x = np.clip(x / l1_sensitivity, -bound_units, bound_units)         # clamp_B(f(D)), in units of Delta_1
    sign = np.where(rng.integers(0, 2, size=x.shape) == 1, 1.0, -1.0)  # S, a fair sign
    noise = sign * (scale * np.log(full_precision_uniform(x.shape, rng)))   # S (x) lambda (x) LN(U*)
    snapped = _round_half_up((x + noise) / grid) * grid               # dividing by a power of two is exact
    out = np.clip(snapped, -bound_units, bound_units) * l1_sensitivity
    return float(out) if was_scalar else out
