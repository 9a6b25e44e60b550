r"""The Laplace and Gaussian mechanisms: add calibrated noise to a query answer.

Two spellings of each mechanism:

* keyword style, with the sensitivity's norm in its name:
  :func:`laplace_mechanism` (``l1_sensitivity``, ``epsilon``) and :func:`gaussian_mechanism`
  (``l2_sensitivity`` and either ``noise_multiplier`` or ``epsilon``/``delta``);
* the book's own names and argument order (*Programming Differential Privacy*), so code
  moves from the book without friction: :func:`laplace_mech`, :func:`gaussian_mech`,
  :func:`gaussian_mech_vec`.

Mechanisms only sample noise; accounting is done by :mod:`dpedu.accountants` from events
(a Gaussian release with multiplier z is ``GaussianEvent(z)``; a Laplace release that is
epsilon-DP is ``LaplaceEvent(epsilon)``). All assume add/remove neighbours. Every mechanism takes an
optional ``budget=`` (:class:`dpedu.budget.PrivacyBudget`): the release's event is charged *before*
any noise is drawn, and an overspending release raises
:class:`~dpedu.budget.BudgetExceededError` without returning anything.

.. note:: Floating-point caveat (Mironov 2012). Sampling Laplace noise in doubles does not hit
   every double with the right probability, and which outputs are reachable depends on the true
   answer, so a raw double output can leak more than epsilon (for f = 1, every output in (0, 1) is a
   multiple of 2^-53; for f = 0 most are not). The fix is the snapping mechanism
   (clamp, round to a power-of-two grid, clamp again), :func:`dpedu.snapping.snapping_mechanism`,
   at a slightly larger epsilon. dpedu is for teaching and does not claim production-grade sampling.

>>> round(laplace_mech(10.0, 1.0, 1.0, rng=0), 4)   # book order: value, sensitivity, epsilon
10.3201
>>> gaussian_mechanism([1.0, 2.0], l2_sensitivity=1.0, noise_multiplier=0.0)
array([1., 2.])
"""

from __future__ import annotations

import math

import numpy as np

from .validation import check_array, check_budget, check_noise_scale, check_nonnegative, check_positive, check_rng
from .validation import check_scalar
from .events import GaussianEvent, LaplaceEvent
from .gaussian import analytic_noise_multiplier, classic_noise_multiplier

__all__ = [
    "laplace_scale",
    "gaussian_noise_multiplier",
    "laplace_mechanism",
    "gaussian_mechanism",
    "laplace_mech",
    "gaussian_mech",
    "gaussian_mech_vec",
]

CALIBRATIONS = ("analytic", "classic")


def _check_value(value, name="value"):
    """A finite number or array; returns (array, was_scalar)."""
    if np.ndim(value) == 0:
        scalar = check_scalar(value, name)
        if not np.isfinite(scalar):
            raise ValueError(f"{name} must be finite; got {scalar!r}")
        return np.asarray(scalar), True
    return check_array(value, name, allow_empty=True), False


def _as_output(noisy, was_scalar):
    return float(noisy) if was_scalar else noisy


def laplace_scale(l1_sensitivity, epsilon):
    r"""Laplace noise scale :math:`b = \Delta_1/\varepsilon` (Dwork et al. 2006; Dwork & Roth Thm 3.6)."""
    l1_sensitivity = check_positive(l1_sensitivity, "l1_sensitivity")
    epsilon = check_positive(epsilon, "epsilon")
    return check_noise_scale(l1_sensitivity / epsilon, f"scale l1_sensitivity / epsilon = {l1_sensitivity!r} / "
                             f"{epsilon!r}", "a smaller l1_sensitivity or a larger epsilon")


def gaussian_noise_multiplier(epsilon, delta, calibration="analytic"):
    r"""Noise multiplier z for one (epsilon, delta) Gaussian release.

    ``calibration="analytic"`` (default): the smallest z that is exactly (epsilon, delta)-DP,
    valid for every epsilon (Balle & Wang 2018). ``"classic"``: :math:`\sqrt{2\ln(1.25/\delta)}/\varepsilon`,
    proven only for :math:`0<\varepsilon<1` and refused outside it (Dwork & Roth 2014, Thm A.1).
    """
    if calibration == "analytic":
        return analytic_noise_multiplier(epsilon, delta)
    if calibration == "classic":
        return classic_noise_multiplier(epsilon, delta)
    raise ValueError(f"calibration must be one of {CALIBRATIONS}; got {calibration!r}")


def _charge(budget, event):
    """Charge ``event`` to ``budget`` (if any) before the noise is drawn."""
    if budget is not None:
        budget.spend(event)


def laplace_mechanism(value, *, l1_sensitivity, epsilon, rng=None, budget=None):
    r"""Release ``value`` plus i.i.d. Laplace noise of scale Δ₁/ε (L1 sensitivity over epsilon).

    Parameters
    ----------
    value : float or array_like
        The true answer f(D) (finite).
    l1_sensitivity : float
        :math:`\Delta_1 > 0`, the largest L1 change of f between neighbours (a vector of k
        counts has :math:`\Delta_1 = k`).
    epsilon : float
        Privacy parameter of this one release, > 0.
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness (an int seed gives reproducible output).
    budget : dpedu.budget.PrivacyBudget, optional
        Charged with ``LaplaceEvent(epsilon)`` before sampling; refuses (nothing released) if overspent.

    Returns
    -------
    float or numpy.ndarray
        :math:`f(D) + \mathrm{Lap}(\Delta_1/\varepsilon)` per coordinate; epsilon-DP.

    Notes
    -----
    Pure epsilon-DP for every epsilon > 0 (Dwork, McSherry, Nissim & Smith 2006). Accountants see
    ``LaplaceEvent(epsilon)``.
    """
    return _laplace_release(value, l1_sensitivity, epsilon, rng, budget)


def _laplace_release(value, l1_sensitivity, epsilon, rng, budget, *, value_name="value",
                     sensitivity_name="l1_sensitivity"):
    """:func:`laplace_mechanism`, reporting bad arguments under the caller's names (the book's ``v``, ...)."""
    value, was_scalar = _check_value(value, value_name)
    l1_sensitivity = check_positive(l1_sensitivity, sensitivity_name)
    scale = laplace_scale(l1_sensitivity, epsilon)                    # b = Delta_1 / epsilon
    rng, budget = check_rng(rng), check_budget(budget)
    _charge(budget, LaplaceEvent(epsilon))
    return _as_output(value + rng.laplace(0.0, scale, size=value.shape), was_scalar)   # f(D) + Lap(b)


def gaussian_mechanism(value, *, l2_sensitivity, noise_multiplier=None, epsilon=None, delta=None,
                       calibration="analytic", rng=None, budget=None):
    r"""Release ``value`` plus isotropic Gaussian noise: :math:`M(D) = f(D) + \mathcal N(0, z^2\Delta_2^2 I)`.

    Give either ``noise_multiplier`` (z, e.g. from :mod:`dpedu.calibrate`) or a per-release
    ``epsilon`` and ``delta`` (then z comes from ``calibration``).

    Parameters
    ----------
    value : float or array_like
        The true answer f(D) (finite).
    l2_sensitivity : float
        :math:`\Delta_2 > 0`. For a sum of vectors clipped to norm C it is C (add/remove). ``inf`` (an
        unclipped sum) only together with ``noise_multiplier=0``, the non-private sanity setting.
    noise_multiplier : float, optional
        :math:`z = \sigma/\Delta_2 \ge 0`. ``0`` adds no noise (non-private; for sanity checks).
    epsilon, delta : float, optional
        Per-release privacy target, used when ``noise_multiplier`` is not given.
    calibration : {"analytic", "classic"}
        How (epsilon, delta) becomes z: exact analytic Gaussian (Balle & Wang 2018, any epsilon)
        or the classic :math:`\sqrt{2\ln(1.25/\delta)}/\varepsilon` (only :math:`0<\varepsilon<1`).
    rng : None, int, SeedSequence or numpy.random.Generator
    budget : dpedu.budget.PrivacyBudget, optional
        Charged with ``GaussianEvent(z)`` before sampling; refuses (nothing released) if overspent.
        A noise-free release (z = 0) cannot be charged and raises ``ValueError``.

    Returns
    -------
    float or numpy.ndarray

    Notes
    -----
    docs/math.md §4. Accountants see ``GaussianEvent(z)``; its exact (epsilon, delta) curve is
    :func:`dpedu.gaussian.gaussian_delta_exact`.
    """
    value, was_scalar = _check_value(value)
    z, l2_sensitivity = _gaussian_noise(l2_sensitivity, noise_multiplier, epsilon, delta, calibration)
    return _gaussian_release(value, was_scalar, z, l2_sensitivity, rng, budget)


def _gaussian_noise(l2_sensitivity, noise_multiplier, epsilon, delta, calibration, *,
                    sensitivity_name="l2_sensitivity"):
    """The checked ``(z, l2_sensitivity)`` of a Gaussian release: z given, or calibrated from (epsilon, delta)."""
    l2_sensitivity = check_positive(l2_sensitivity, sensitivity_name, allow_inf=True)
    if noise_multiplier is not None:
        if epsilon is not None or delta is not None:
            raise ValueError("give either noise_multiplier or (epsilon, delta), not both")
        z = check_nonnegative(noise_multiplier, "noise_multiplier")
    elif epsilon is None or delta is None:
        raise ValueError("give noise_multiplier, or both epsilon and delta")
    else:
        z = gaussian_noise_multiplier(epsilon, delta, calibration)
    if z > 0 and math.isinf(l2_sensitivity):
        raise ValueError(f"{sensitivity_name}=inf: no finite noise protects an unbounded query; it is allowed only "
                         f"with noise_multiplier=0 (no noise, non-private)")
    if z > 0:
        check_noise_scale(z * l2_sensitivity, f"std noise_multiplier * {sensitivity_name} = {z!r} * "
                          f"{l2_sensitivity!r}", f"a smaller noise_multiplier or {sensitivity_name}")
    return z, l2_sensitivity


def _gaussian_release(value, was_scalar, z, l2_sensitivity, rng, budget):
    """f(D) + N(0, z^2 Delta_2^2 I) for a checked value and noise; ``GaussianEvent(z)`` is charged first."""
    rng, budget = check_rng(rng), check_budget(budget)
    if budget is not None and z == 0:
        raise ValueError("noise_multiplier=0 releases the exact value (infinite epsilon): it cannot be charged "
                         "to a privacy budget")
    if z > 0:
        _charge(budget, GaussianEvent(z))
    noise = rng.normal(0.0, z * l2_sensitivity, size=value.shape) if z > 0 else np.zeros(value.shape)
    return _as_output(value + noise, was_scalar)


# --- the book's spellings (Programming Differential Privacy, ch. 3, 6, 12) -------------------------

def laplace_mech(v, sensitivity, epsilon, rng=None, *, budget=None):
    """The book's ``laplace_mech(v, sensitivity, epsilon)``: :func:`laplace_mechanism` with L1 sensitivity."""
    return _laplace_release(v, sensitivity, epsilon, rng, budget, value_name="v",
                            sensitivity_name="sensitivity (l1_sensitivity)")


def gaussian_mech(v, sensitivity, epsilon, delta, rng=None, *, budget=None):
    r"""The book's ``gaussian_mech(v, sensitivity, epsilon, delta)`` for a scalar answer.

    Noise std :math:`\Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon` (the classic calibration, as in the
    book). It is proven only for :math:`0<\varepsilon<1`, so :math:`\varepsilon \ge 1` raises
    ``ValueError`` instead of silently under-protecting (at :math:`\varepsilon=10, \delta=10^{-5}`
    the true delta would be 2.27e-5); use ``gaussian_mechanism(..., calibration="analytic")`` there.
    """
    if np.ndim(v) != 0:
        raise ValueError(f"v must be a scalar: gaussian_mech takes one number (use gaussian_mech_vec for vectors); "
                         f"got shape {np.shape(v)}")
    v, was_scalar = _check_value(v, "v")
    z, sensitivity = _gaussian_noise(sensitivity, None, epsilon, delta, "classic",
                                     sensitivity_name="sensitivity (l2_sensitivity)")
    return _gaussian_release(v, was_scalar, z, sensitivity, rng, budget)


def gaussian_mech_vec(vec, sensitivity, epsilon, delta, rng=None, *, budget=None):
    r"""The book's ``gaussian_mech_vec``: independent classic-calibrated noise on every coordinate.

    ``sensitivity`` is the **L2** sensitivity of the whole vector. Same calibration and the same
    :math:`0<\varepsilon<1` restriction as :func:`gaussian_mech`.
    """
    vec = check_array(vec, "vec", ndim=1, allow_empty=True)
    z, sensitivity = _gaussian_noise(sensitivity, None, epsilon, delta, "classic",
                                     sensitivity_name="sensitivity (l2_sensitivity)")
    return _gaussian_release(vec, False, z, sensitivity, rng, budget)

