r"""Calibration: from a privacy target to the noise (or steps, or sampling rate) that meets it.

The closed forms for a single Gaussian release live in :mod:`dpedu.gaussian` (re-exported here);
this module calibrates a whole training run by bisection on an accountant.
"""

from __future__ import annotations

import math

from .gaussian import analytic_noise_multiplier, classic_noise_multiplier, gaussian_delta_exact, gaussian_epsilon_exact
from .validation import check_delta, check_epsilon, check_noise_multiplier

__all__ = [
    "classic_noise_multiplier",
    "gaussian_delta_exact",
    "gaussian_epsilon_exact",
    "analytic_noise_multiplier",
]


# --- Calibration of a whole run by bisection on an accountant (MATH.md §17) -----------------------
#
# An accountant answers "what epsilon does this run cost?"; calibration asks the inverse question.
# epsilon_acc is non-increasing in the noise multiplier and non-decreasing in the number of steps and
# in the sampling rate (MATH.md §17), so each inverse is a bracket-then-bisect search. Every probe
# uses a FRESH accountant (never one the caller holds), and the search returns the end of the final
# bracket that was *evaluated* and met the target - never a midpoint - so the answer never overshoots.

import warnings  # noqa: E402  (kept beside the code that uses it)

from .validation import check_in_interval, check_positive_int, check_sampling_rate  # noqa: E402

__all__ += ["noise_multiplier", "steps_for_budget", "sampling_rate_for_budget"]

# The search for z gives up outside [_SMALLEST_NOISE, _LARGEST_NOISE]: below, the target is met with
# (almost) no noise, which only happens when delta is so large that the guarantee is vacuous; above,
# the accountant cannot certify the target with any amount of noise (an order grid or a delta split
# puts a floor under its epsilon).
_SMALLEST_NOISE = 1e-3
_LARGEST_NOISE = 1e8
# sampling_rate_for_budget gives up below this rate.
_SMALLEST_RATE = 1e-9


def _gaussian_step_event(noise_multiplier, sampling_rate):
    """``GaussianEvent`` for a full batch (q = 1), else ``SubsampledGaussianEvent`` (Poisson rate q)."""
    from .events import GaussianEvent, SubsampledGaussianEvent

    if sampling_rate == 1.0:
        return GaussianEvent(noise_multiplier)
    return SubsampledGaussianEvent(noise_multiplier, sampling_rate)


class _RunEpsilon:
    r"""``epsilon(z, q, T)`` of T identical Gaussian steps on a fresh accountant, at ``delta``.

    Warnings raised by a probe (e.g. the RDP accountant's "best order at the edge of the grid") are
    held back and replayed only for the value the search returns: the other probes are scaffolding.
    Numerical warnings (``RuntimeWarning``) are never held back.
    """

    def __init__(self, accountant, accountant_options, delta):
        # Imported here, not at the top: the accountants themselves import this module.
        from .accountants import accountant_class, make_accountant

        if not isinstance(accountant, str):
            raise TypeError(f"accountant must be a registry name such as 'rdp' (every probe makes a fresh "
                            f"accountant); got {type(accountant).__name__}")
        accountant_class(accountant)  # unknown name -> ValueError listing the registered ones
        self._make = lambda: make_accountant(accountant, **(accountant_options or {}))
        self.accountant = accountant
        self.delta = delta
        self._warnings = {}

    def check_supported(self, noise_multiplier, sampling_rate):
        """Raise the accountant's own UnsupportedEventError (it says why) before any search."""
        from .accountants import UnsupportedEventError

        try:
            self._make().compose(_gaussian_step_event(noise_multiplier, sampling_rate), 1)
        except UnsupportedEventError as exc:
            raise UnsupportedEventError(
                f"cannot calibrate on the {self.accountant!r} accountant with sampling_rate={sampling_rate!r}: {exc}"
            ) from None

    def __call__(self, noise_multiplier, sampling_rate, steps):
        event = _gaussian_step_event(noise_multiplier, sampling_rate)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            epsilon = self._make().compose(event, steps).get_epsilon(self.delta)
        held = []
        for w in caught:
            if issubclass(w.category, RuntimeWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            else:
                held.append(w)
        self._warnings[(noise_multiplier, sampling_rate, steps)] = held
        return epsilon

    def replay_warnings(self, noise_multiplier, sampling_rate, steps):
        """Re-issue the warnings of the probe whose parameters are returned to the caller."""
        for w in self._warnings.get((noise_multiplier, sampling_rate, steps), ()):
            warnings.warn(w.message, w.category, stacklevel=3)


def _check_rtol(rtol):
    return check_in_interval(rtol, "rtol", 0.0, 0.1, low_open=True)


def _check_options(accountant_options):
    if accountant_options is not None and not isinstance(accountant_options, dict):
        raise TypeError(f"accountant_options must be a dict of keyword arguments for the accountant or None; "
                        f"got {type(accountant_options).__name__}")
    return accountant_options


def _zcdp_guess(target_epsilon, target_delta, sampling_rate, steps):
    r"""A starting point for the search: the zCDP closed form for T full-batch steps (MATH.md §17),
    :math:`z = \sqrt{T/(2\rho)}` with :math:`\sqrt\rho = \sqrt{\ln(1/\delta)+\varepsilon}-\sqrt{\ln(1/\delta)}`,
    times q for subsampled steps (for small q the sampled Gaussian's RDP is about :math:`q^2\alpha/(2z^2)`
    per step, i.e. ``q**2`` times the Gaussian's). Only a guess: the bracket grows from it."""
    log_inv_delta = -math.log(target_delta)
    sqrt_rho = math.sqrt(log_inv_delta + target_epsilon) - math.sqrt(log_inv_delta)
    full_batch = math.sqrt(steps / 2.0) / sqrt_rho
    return full_batch if sampling_rate == 1.0 else max(sampling_rate * full_batch, 0.5)


def noise_multiplier(target_epsilon, target_delta, sampling_rate, steps, accountant="rdp", *, rtol=1e-3,
                     accountant_options=None):
    r"""Smallest noise multiplier (to relative tolerance ``rtol``) whose run meets the privacy target.

    The run is ``steps`` Gaussian steps with Poisson sampling rate ``sampling_rate``
    (``SubsampledGaussianEvent(z, q)``; ``GaussianEvent(z)`` when ``sampling_rate == 1``), accounted by
    a fresh ``make_accountant(accountant, **accountant_options)``.

    Parameters
    ----------
    target_epsilon : float
        Total epsilon of the whole run (> 0).
    target_delta : float
        Total delta, in (0, 1).
    sampling_rate : float
        Poisson inclusion probability q in (0, 1].
    steps : int
        Number of steps T >= 1.
    accountant : str, default "rdp"
        A registry name: ``"rdp"``, ``"pld"``, ``"moments"``, ``"zcdp"`` (full batch only),
        ``"sequential"``, ``"advanced"``, ``"strong"``.
    rtol : float in (0, 0.1], default 1e-3
        The search stops when the bracket ``[lo, hi]`` has ``hi - lo <= rtol * hi``.
    accountant_options : dict, optional
        Keyword arguments for the accountant's constructor, e.g. ``{"conversion": "classic"}``.

    Returns
    -------
    float
        ``hi``, the upper end of the final bracket: its epsilon was computed and is
        ``<= target_epsilon``, while ``lo >= hi * (1 - rtol)`` was computed and exceeds the target.
        So the answer never overshoots, and it is within ``rtol`` of the smallest feasible z.

    Raises
    ------
    ValueError
        For bad arguments; when the accountant refuses the event (zCDP with q < 1); when even
        ``noise_multiplier = 1e8`` does not reach the target (the accountant's epsilon has a floor:
        e.g. the RDP conversion :math:`\ln(1/\delta)/(\alpha_{\max}-1)` for the largest order); or
        when even ``noise_multiplier = 1e-3`` meets it (then delta is so large that the guarantee is
        vacuous: roughly ``delta >= sampling_rate * steps``).

    Notes
    -----
    Procedure of MATH.md §17: start from a guess (the zCDP closed form), double or halve it until
    ``epsilon(lo) > target >= epsilon(hi)``, then bisect and return ``hi``. Returning the midpoint
    instead overshot epsilon by about 0.5 in Opacus (opacus#346). Monotonicity of the accountant in z
    makes the result within ``rtol`` of the smallest feasible z; "never overshoots" holds even
    without it, because ``hi`` is always an evaluated feasible point.

    Examples
    --------
    T full-batch steps under zCDP (classic conversion) have the closed form
    :math:`z = \sqrt{T/(2\rho)}`, :math:`\sqrt\rho = \sqrt{\ln(1/\delta)+\varepsilon}-\sqrt{\ln(1/\delta)}`:

    >>> z = noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sampling_rate=1.0, steps=100,
    ...                      accountant="zcdp")
    >>> closed_form = math.sqrt(100 / 2) / (math.sqrt(math.log(1e5) + 1) - math.sqrt(math.log(1e5)))
    >>> bool(closed_form <= z <= closed_form * (1 + 1e-3))
    True
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    q = check_sampling_rate(sampling_rate)
    steps = check_positive_int(steps, "steps")
    rtol = _check_rtol(rtol)
    epsilon_of = _RunEpsilon(accountant, _check_options(accountant_options), target_delta)
    guess = _zcdp_guess(target_epsilon, target_delta, q, steps)
    epsilon_of.check_supported(guess, q)

    def feasible(z):
        return epsilon_of(z, q, steps) <= target_epsilon

    # Bracket: epsilon(lo) > target >= epsilon(hi).
    if feasible(guess):
        lo, hi = guess / 2.0, guess
        while feasible(lo):
            if lo < _SMALLEST_NOISE:
                raise ValueError(
                    f"target_epsilon={target_epsilon!r} is met even with noise_multiplier={lo:.3g} "
                    f"(sampling_rate={q!r}, steps={steps}, accountant {accountant!r}): target_delta={target_delta!r} "
                    f"is so large that the guarantee is vacuous (about sampling_rate * steps = {q * steps:.3g} "
                    f"or more: such a delta allows publishing a record outright); use a much smaller delta"
                )
            lo, hi = lo / 2.0, lo
    else:
        lo, hi = guess, 2.0 * guess
        while not feasible(hi):
            if hi > _LARGEST_NOISE:
                floor = epsilon_of(hi, q, steps)
                raise ValueError(
                    f"the {accountant!r} accountant cannot certify target_epsilon={target_epsilon!r} at "
                    f"target_delta={target_delta!r} for {steps} steps with sampling_rate={q!r}: even "
                    f"noise_multiplier={hi:.3g} gives epsilon={floor:.4g}. Its epsilon has a floor here; raise "
                    f"target_epsilon, use fewer steps, or use a tighter accountant (rdp or pld)"
                )
            lo, hi = hi, 2.0 * hi
    # Bisect, keeping hi feasible; stop on the tolerance (or when the floats stop moving).
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if feasible(mid):
            hi = mid
        else:
            lo = mid
    epsilon_of.replay_warnings(hi, q, steps)
    return hi


def steps_for_budget(target_epsilon, target_delta, noise_multiplier, sampling_rate, accountant="rdp", *,
                     max_steps=10**6, accountant_options=None):
    r"""Largest number of steps T whose run still meets the privacy target.

    Parameters
    ----------
    target_epsilon, target_delta : float
        The privacy target for the whole run.
    noise_multiplier : float
        z of every step (> 0).
    sampling_rate : float
        Poisson rate q in (0, 1]; 1 means full-batch ``GaussianEvent`` steps.
    accountant : str, default "rdp"
        Registry name (see :func:`noise_multiplier`).
    max_steps : int, default 10**6
        Give up (``ValueError``) when even this many steps meet the target.
    accountant_options : dict, optional
        Keyword arguments for the accountant's constructor.

    Returns
    -------
    int
        T with ``epsilon(T) <= target_epsilon < epsilon(T + 1)``; both values were computed.

    Raises
    ------
    ValueError
        When even one step exceeds the target (more noise or a larger target is needed), or when
        ``max_steps`` steps still meet it.

    Notes
    -----
    epsilon is non-decreasing in T (MATH.md §17). Doubling T from 1 brackets the answer,
    ``epsilon(lo) <= target < epsilon(hi)``; integer bisection then shrinks the bracket to
    ``hi = lo + 1``. About :math:`2\log_2 T` accountant evaluations.

    Examples
    --------
    >>> T = steps_for_budget(target_epsilon=1.0, target_delta=1e-5, noise_multiplier=4.0, sampling_rate=0.01)
    >>> T   # 10,000 steps (100 epochs) of Abadi et al.'s setting cost 1.0355 by RDP: fewer fit
    9375
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    z = check_noise_multiplier(noise_multiplier)
    q = check_sampling_rate(sampling_rate)
    max_steps = check_positive_int(max_steps, "max_steps")
    epsilon_of = _RunEpsilon(accountant, _check_options(accountant_options), target_delta)
    epsilon_of.check_supported(z, q)

    def feasible(steps):
        return epsilon_of(z, q, steps) <= target_epsilon

    if not feasible(1):
        raise ValueError(
            f"even a single step with noise_multiplier={z!r} and sampling_rate={q!r} costs "
            f"epsilon={epsilon_of(z, q, 1):.4g} > target_epsilon={target_epsilon!r} (accountant {accountant!r}); "
            f"use more noise or a larger target"
        )
    lo, hi = 1, 2
    while feasible(hi):
        if hi >= max_steps:
            raise ValueError(
                f"{max_steps} steps still meet target_epsilon={target_epsilon!r} (noise_multiplier={z!r}, "
                f"sampling_rate={q!r}, accountant {accountant!r}); pass a larger max_steps"
            )
        lo, hi = hi, min(2 * hi, max_steps)
    while hi - lo > 1:  # epsilon(lo) <= target < epsilon(hi)
        mid = (lo + hi) // 2
        if feasible(mid):
            lo = mid
        else:
            hi = mid
    epsilon_of.replay_warnings(z, q, lo)
    return lo


def sampling_rate_for_budget(target_epsilon, target_delta, noise_multiplier, steps, accountant="rdp", *, rtol=1e-3,
                             accountant_options=None):
    r"""Largest Poisson sampling rate q (to relative tolerance ``rtol``) whose run meets the target.

    Parameters
    ----------
    target_epsilon, target_delta : float
        The privacy target for the whole run.
    noise_multiplier : float
        z of every step (> 0).
    steps : int
        Number of steps T >= 1.
    accountant : str, default "rdp"
        Registry name (see :func:`noise_multiplier`).
    rtol : float in (0, 0.1], default 1e-3
        The search stops when the bracket ``[lo, hi]`` has ``hi - lo <= rtol * lo``.
    accountant_options : dict, optional
        Keyword arguments for the accountant's constructor.

    Returns
    -------
    float
        1.0 when full-batch steps already meet the target; otherwise ``lo``, the lower end of the final
        bracket (evaluated, feasible), with ``hi <= lo * (1 + rtol)`` evaluated and infeasible.

    Raises
    ------
    ValueError
        When even ``sampling_rate = 1e-9`` exceeds the target (more noise or fewer steps needed).

    Examples
    --------
    >>> q = sampling_rate_for_budget(target_epsilon=1.0, target_delta=1e-5, noise_multiplier=4.0, steps=10_000)
    >>> bool(0.009 < q < 0.01)   # 10,000 steps at q = 0.01 cost 1.04 by RDP: a slightly smaller q fits
    True
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    z = check_noise_multiplier(noise_multiplier)
    steps = check_positive_int(steps, "steps")
    rtol = _check_rtol(rtol)
    epsilon_of = _RunEpsilon(accountant, _check_options(accountant_options), target_delta)

    def feasible(q):
        return epsilon_of(z, q, steps) <= target_epsilon

    if feasible(1.0):
        epsilon_of.replay_warnings(z, 1.0, steps)
        return 1.0
    epsilon_of.check_supported(z, 0.5)  # zcdp accounts full batches only
    lo, hi = 0.5, 1.0  # epsilon(lo) <= target < epsilon(hi) once bracketed
    while not feasible(lo):
        if lo < _SMALLEST_RATE:
            raise ValueError(
                f"even sampling_rate={lo:.3g} exceeds target_epsilon={target_epsilon!r} with "
                f"noise_multiplier={z!r} over {steps} steps (accountant {accountant!r}); use more noise or fewer steps"
            )
        lo, hi = lo / 2.0, lo
    while hi - lo > rtol * lo:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if feasible(mid):
            lo = mid
        else:
            hi = mid
    epsilon_of.replay_warnings(z, lo, steps)
    return lo
