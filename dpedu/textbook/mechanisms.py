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
optional ``budget=`` (:class:`dpedu.accountants.budget.PrivacyBudget`): the release's event is charged *before*
any noise is drawn, and an overspending release raises
:class:`~dpedu.accountants.budget.BudgetExceededError` without returning anything.

.. note:: Floating-point caveat (Mironov 2012). Sampling Laplace noise in doubles does not hit
   every double with the right probability, and which outputs are reachable depends on the true
   answer, so a raw double output can leak more than epsilon (for f = 1, every output in (0, 1) is a
   multiple of 2^-53; for f = 0 most are not). The fix is the snapping mechanism
   (clamp, round to a power-of-two grid, clamp again), :func:`dpedu.textbook.snapping.snapping_mechanism`,
   at a slightly larger epsilon. dpedu is for teaching and does not claim production-grade sampling.

>>> round(laplace_mech(10.0, 1.0, 1.0, rng=0), 4)   # book order: value, sensitivity, epsilon
10.3201
>>> gaussian_mechanism([1.0, 2.0], l2_sensitivity=1.0, noise_multiplier=0.0)
array([1., 2.])
"""

from __future__ import annotations

import math

import numpy as np

from ..ground.door import answer, budget_or_none
from ..ground.validation import check_array, check_choice, check_nonnegative
from ..ground.door import door, generator, open_unit, positive
from ..ground.validation import check_noise_scale, check_positive
from ..ground.events import GaussianEvent, LaplaceEvent
from ..ground.gaussian import analytic_noise_multiplier, classic_noise_multiplier

__all__ = [
    "laplace_scale",
    "gaussian_noise_multiplier",
    "laplace_mechanism",
    "gaussian_mechanism",
    "laplace_mech",
    "gaussian_mech",
    "gaussian_mech_vec",
    "CALIBRATIONS",
]

CALIBRATIONS = ("analytic", "classic")


def laplace_arguments(arguments):
    """The noise scale of a Laplace release must be representable."""
    laplace_scale(arguments["l1_sensitivity"], arguments["epsilon"])


@door(l1_sensitivity=positive, epsilon=positive)
def laplace_scale(l1_sensitivity, epsilon):
    r"""Laplace noise scale :math:`b = \Delta_1/\varepsilon` (Dwork et al. 2006; Dwork & Roth Thm 3.6)."""
    return check_noise_scale(l1_sensitivity / epsilon, f"scale l1_sensitivity / epsilon = {l1_sensitivity!r} / "
                             f"{epsilon!r}", "a smaller l1_sensitivity or a larger epsilon")


def gaussian_noise_multiplier(epsilon, delta, calibration="analytic"):
    r"""Noise multiplier z for one (epsilon, delta) Gaussian release.

    ``calibration="analytic"`` (default): the smallest z that is exactly (epsilon, delta)-DP,
    valid for every epsilon (Balle & Wang 2018). ``"classic"``: :math:`\sqrt{2\ln(1.25/\delta)}/\varepsilon`,
    proven only for :math:`0<\varepsilon<1` and refused outside it (Dwork & Roth 2014, Thm A.1).
    """
    if check_choice(calibration, "calibration", CALIBRATIONS) == "analytic":
        return analytic_noise_multiplier(epsilon, delta)
    return classic_noise_multiplier(epsilon, delta)


@door(laplace_arguments, value=answer, l1_sensitivity=positive, epsilon=positive,
      rng=generator, budget=budget_or_none)
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
    budget : dpedu.accountants.budget.PrivacyBudget, optional
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
    if budget is not None:
        budget.spend(LaplaceEvent(epsilon))        # charged before any noise is drawn
    b = l1_sensitivity / epsilon                   # the scale Delta_1 / epsilon
    noisy = value + rng.laplace(0.0, b, size=np.shape(value))   # f(D) + Lap(b)
    return float(noisy) if np.ndim(noisy) == 0 else noisy


def gaussian_arguments(arguments):
    """A Gaussian release's z (given, or calibrated from epsilon and delta), its sensitivity and its budget."""
    sensitivity = arguments["l2_sensitivity"] = check_positive(arguments["l2_sensitivity"], "l2_sensitivity",
                                                               allow_inf=True)
    z, eps, delta = arguments["noise_multiplier"], arguments["epsilon"], arguments["delta"]
    if z is not None and (eps is not None or delta is not None):
        raise ValueError("give either noise_multiplier or (epsilon, delta), not both")
    if z is None and (eps is None or delta is None):
        raise ValueError("give noise_multiplier, or both epsilon and delta")
    if z is None:
        z = gaussian_noise_multiplier(eps, delta, arguments["calibration"])     # checks all three
    else:
        z = arguments["noise_multiplier"] = check_nonnegative(z, "noise_multiplier")
    if z > 0 and math.isinf(sensitivity):
        raise ValueError("l2_sensitivity=inf: no finite noise protects an unbounded query; it is allowed only "
                         "with noise_multiplier=0 (no noise, non-private)")
    if z > 0:
        check_noise_scale(z * sensitivity, f"std noise_multiplier * l2_sensitivity = {z!r} * {sensitivity!r}",
                          "a smaller noise_multiplier or l2_sensitivity")
    if arguments["budget"] is not None and z == 0:
        raise ValueError("noise_multiplier=0 releases the exact value (infinite epsilon): it cannot be charged "
                         "to a privacy budget")


@door(gaussian_arguments, value=answer, rng=generator, budget=budget_or_none)
def gaussian_mechanism(value, *, l2_sensitivity, noise_multiplier=None, epsilon=None, delta=None,
                       calibration="analytic", rng=None, budget=None):
    r"""Release ``value`` plus isotropic Gaussian noise: :math:`M(D) = f(D) + \mathcal N(0, z^2\Delta_2^2 I)`.

    Give either ``noise_multiplier`` (z, e.g. from :mod:`dpedu.accountants.calibrate`) or a per-release
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
    rng : None, int, SeedSequence, numpy.random.Generator, or a noise source
        Where the noise comes from: anything with ``normal(loc, scale, size)`` (inside a training run, the
        run's noise source).
    budget : dpedu.accountants.budget.PrivacyBudget, optional
        Charged with ``GaussianEvent(z)`` before sampling; refuses (nothing released) if overspent.
        A noise-free release (z = 0) cannot be charged and raises ``ValueError``.

    Returns
    -------
    float or numpy.ndarray

    Notes
    -----
    docs/math.md §4. Accountants see ``GaussianEvent(z)``; its exact (epsilon, delta) curve is
    :func:`dpedu.ground.gaussian.gaussian_delta_exact`. Every coordinate gets its own independent draw.
    """
    z = noise_multiplier if noise_multiplier is not None else gaussian_noise_multiplier(epsilon, delta, calibration)
    if budget is not None:
        budget.spend(GaussianEvent(z))                       # charged before any noise is drawn
    sigma = z * l2_sensitivity                               # noise std z * Delta_2 (none when z = 0)
    noisy = value + (rng.normal(0.0, sigma, size=np.shape(value)) if sigma > 0 else 0.0)
    return float(noisy) if np.ndim(noisy) == 0 else noisy   # f(D) + N(0, sigma^2 I)


# --- the book's spellings (Programming Differential Privacy, ch. 3, 6, 12) -------------------------

def l1_sensitivity_of_the_book(value, name):
    """The book's ``sensitivity`` of a Laplace release: its L1 sensitivity, > 0."""
    return check_positive(value, f"{name} (l1_sensitivity)")


def l2_sensitivity_of_the_book(value, name):
    """The book's ``sensitivity`` of a Gaussian release: its L2 sensitivity, > 0."""
    return check_positive(value, f"{name} (l2_sensitivity)")


def book_laplace_arguments(arguments):
    """The noise scale of the book's Laplace release must be representable."""
    laplace_scale(arguments["sensitivity"], arguments["epsilon"])


@door(book_laplace_arguments, v=answer, sensitivity=l1_sensitivity_of_the_book, epsilon=positive, rng=generator,
      budget=budget_or_none)
def laplace_mech(v, sensitivity, epsilon, rng=None, *, budget=None):
    """The book's call shape ``laplace_mech(v, sensitivity, epsilon)``: :func:`laplace_mechanism` under another name.

    ``sensitivity`` is the L1 sensitivity; bad arguments are reported under the book's names.
    """
    return laplace_mechanism(v, l1_sensitivity=sensitivity, epsilon=epsilon, rng=rng, budget=budget)


def book_gaussian_arguments(arguments):
    """The book's Gaussian release: the classic calibration (epsilon < 1), as :func:`gaussian_mechanism` checks it."""
    gaussian_arguments(dict(l2_sensitivity=arguments.get("sensitivity"), noise_multiplier=None,
                            epsilon=arguments["epsilon"], delta=arguments["delta"], calibration="classic",
                            budget=arguments["budget"]))


def scalar_answer(arguments):
    """``gaussian_mech`` takes one number."""
    if np.ndim(arguments["v"]) != 0:
        raise ValueError(f"v must be a scalar: gaussian_mech takes one number (use gaussian_mech_vec for vectors); "
                         f"got shape {np.shape(arguments['v'])}")


@door(scalar_answer, book_gaussian_arguments, v=answer, sensitivity=l2_sensitivity_of_the_book, epsilon=positive,
      delta=open_unit, rng=generator, budget=budget_or_none)
def gaussian_mech(v, sensitivity, epsilon, delta, rng=None, *, budget=None):
    r"""The book's call shape ``gaussian_mech(v, sensitivity, epsilon, delta)`` for a scalar answer.

    :func:`gaussian_mechanism` with ``calibration="classic"`` under another name.

    Noise std :math:`\Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon` (the classic calibration, as in the
    book). It is proven only for :math:`0<\varepsilon<1`, so :math:`\varepsilon \ge 1` raises
    ``ValueError`` instead of silently under-protecting (at :math:`\varepsilon=10, \delta=10^{-5}`
    the true delta would be 2.27e-5); use ``gaussian_mechanism(..., calibration="analytic")`` there.
    """
    return gaussian_mechanism(v, l2_sensitivity=sensitivity, epsilon=epsilon, delta=delta, calibration="classic",
                              rng=rng, budget=budget)


def one_vector(value, name):
    """A finite vector (d,), empty allowed."""
    return check_array(value, name, ndim=1, allow_empty=True)


@door(book_gaussian_arguments, vec=one_vector, sensitivity=l2_sensitivity_of_the_book, epsilon=positive,
      delta=open_unit,
      rng=generator, budget=budget_or_none)
def gaussian_mech_vec(vec, sensitivity, epsilon, delta, rng=None, *, budget=None):
    r"""The book's call shape ``gaussian_mech_vec``: independent classic-calibrated noise on every coordinate.

    :func:`gaussian_mechanism` with ``calibration="classic"`` under another name, for a vector ``vec``.

    ``sensitivity`` is the **L2** sensitivity of the whole vector. Same calibration and the same
    :math:`0<\varepsilon<1` restriction as :func:`gaussian_mech`.
    """
    return gaussian_mechanism(vec, l2_sensitivity=sensitivity, epsilon=epsilon, delta=delta, calibration="classic",
                              rng=rng, budget=budget)
