r"""Calibration: from a privacy target to the noise (or steps, or sampling rate) that meets it.

The closed forms for a single Gaussian release live in :mod:`dpedu.ground.gaussian` (re-exported here);
this module calibrates a whole training run by a monotone search on an accountant
(:func:`monotone_search`): :func:`noise_multiplier`, :func:`steps_for_budget` and
:func:`sampling_rate_for_budget` are the three inverses of "what epsilon does this run cost?". All three have
one shape (dp_accounting's ``calibrate_dp_mechanism``): the run's ledger built from the parameter searched,
a fresh accountant for every probe, and the one search.
"""

from __future__ import annotations

import functools
import math

from . import UnsupportedEventError, account, accountant_class
from ..ground.search import monotone_search
from ..ground.events import gaussian_step_event
from ..ground.gaussian import (
    analytic_noise_multiplier, classic_noise_multiplier, gaussian_delta_exact, gaussian_epsilon_exact
)
from ..ground.validation import (
    check_choice, check_delta, check_epsilon, check_in_interval, check_noise_multiplier, check_positive_int,
    check_sampling_rate
)

__all__ = [
    "classic_noise_multiplier",
    "gaussian_delta_exact",
    "gaussian_epsilon_exact",
    "analytic_noise_multiplier",
    "monotone_search",
    "noise_multiplier",
    "steps_for_budget",
    "sampling_rate_for_budget",
]


# --- Calibration of a whole run on an accountant (docs/math.md §17) -------------------------------------
#
# An accountant answers "what epsilon does this run cost?"; calibration asks the inverse question.
# epsilon_acc is non-increasing in the noise multiplier and non-decreasing in the number of steps and
# in the sampling rate (docs/math.md §17), so each inverse is a bracket-then-bisect search. Every probe
# uses a FRESH accountant (never one the caller holds), and the search returns the end of the final
# bracket that was *evaluated* and met the target - never a midpoint - so the answer never overshoots.

# The search for z gives up outside [_SMALLEST_NOISE, _LARGEST_NOISE]: below, the target is met with
# (almost) no noise, which only happens when delta is so large that the guarantee is vacuous; above,
# the accountant cannot certify the target with any amount of noise (an order grid or a delta split
# puts a floor under its epsilon).
_SMALLEST_NOISE = 1e-3
_LARGEST_NOISE = 1e8
# sampling_rate_for_budget gives up below this rate.
_SMALLEST_RATE = 1e-9


class _Calibration:
    r"""One calibration in dp_accounting's shape: the run's ledger built from the parameter, a fresh accountant
    per probe, one search.

    ``ledger_at(x)`` is the whole run's ledger at parameter x (a noise multiplier, a number of steps, a sampling
    rate); :meth:`epsilon` accounts it by :func:`dpedu.accountants.account` on a fresh accountant
    (``strict=True``: a refused event raises), once per x; :meth:`search` runs :func:`monotone_search` for
    ``epsilon(x) <= target_epsilon``. Warnings of a probe (e.g. the RDP accountant's "best order at the edge of
    the grid") are held in its :class:`~dpedu.accountants.Accounting` and re-issued only for the value the
    search returns: the other probes are scaffolding. Numerical warnings (``RuntimeWarning``) pass through at once.
    """

    def __init__(self, ledger_at, target_epsilon, target_delta, accountant, accountant_options):
        accountant_class(accountant)  # not a str -> TypeError; unknown name -> ValueError listing the names
        if accountant_options is not None and not isinstance(accountant_options, dict):
            raise TypeError(f"accountant_options must be a dict of keyword arguments for the accountant or None; "
                            f"got {type(accountant_options).__name__}")
        self.ledger_at = ledger_at
        self.target_epsilon, self.delta = target_epsilon, target_delta
        self.accountant, self.options = accountant, accountant_options
        self._results = {}

    def epsilon(self, x):
        """Epsilon of the run at parameter ``x``, on a fresh accountant (the same probe twice: the same answer)."""
        if x not in self._results:
            self._results[x] = account(self.ledger_at(x), self.accountant, delta=self.delta,
                                       accountant_options=self.options, strict=True)
        return self._results[x].epsilon

    def check_supported(self, x, sampling_rate):
        """Probe ``x`` before any search: the accountant's own UnsupportedEventError (it says why), with context."""
        try:
            self.epsilon(x)
        except UnsupportedEventError as exc:
            raise UnsupportedEventError(
                f"cannot calibrate on the {self.accountant!r} accountant with sampling_rate={sampling_rate!r}: {exc}"
            ) from None

    def search(self, start, *, feasible_when, lowest, highest, rtol=None, at_limit):
        """:func:`monotone_search` of ``epsilon(x) <= target_epsilon``; the warnings of the answer re-issued."""
        x = monotone_search(lambda x: self.epsilon(x) <= self.target_epsilon, start, feasible_when=feasible_when,
                            lowest=lowest, highest=highest, rtol=rtol, at_limit=at_limit)
        result = self._results.get(x)
        if result is not None:
            result.reissue_warnings(stacklevel=3)
        return x


def _check_target(target_epsilon, target_delta):
    return check_epsilon(target_epsilon, "target_epsilon"), check_delta(target_delta, "target_delta")


def _check_rtol(rtol):
    return check_in_interval(rtol, "rtol", 0.0, 0.1, low_open=True)


def _zcdp_guess(target_epsilon, target_delta, sampling_rate, steps):
    r"""A starting point for the search: the zCDP closed form for T full-batch steps (docs/math.md §17),
    :math:`z = \sqrt{T/(2\rho)}` with :math:`\sqrt\rho = \sqrt{\ln(1/\delta)+\varepsilon}-\sqrt{\ln(1/\delta)}`,
    times q for subsampled steps (for small q the sampled Gaussian's RDP is about :math:`q^2\alpha/(2z^2)`
    per step, i.e. ``q**2`` times the Gaussian's). Only a guess, kept inside the search range: the bracket
    grows from it."""
    log_inv_delta = -math.log(target_delta)
    # written as a quotient: the difference of square roots is 0 in floats for a tiny epsilon (1e-16)
    sqrt_rho = target_epsilon / (math.sqrt(log_inv_delta + target_epsilon) + math.sqrt(log_inv_delta))
    full_batch = math.sqrt(steps / 2.0) / sqrt_rho if sqrt_rho > 0 else math.inf
    guess = full_batch if sampling_rate == 1.0 else max(sampling_rate * full_batch, 0.5)
    return min(max(guess, _SMALLEST_NOISE), _LARGEST_NOISE)


def noise_multiplier(target_epsilon, target_delta, sampling_rate, steps, accountant="rdp", *, rtol=1e-3,
                     accountant_options=None, step_event=None):
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
    step_event : callable, optional
        ``step_event(z)`` is the event of one step with noise multiplier z, for a run that is not Poisson
        sampling under add/remove: another sampling scheme or neighbouring relation, e.g.
        ``plan.event_at`` of a :class:`~dpedu.textbook.training.DPSGDPlan`. Default:
        ``gaussian_step_event(z, sampling_rate)``. ``sampling_rate`` then only seeds the search.

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
    Procedure of docs/math.md §17: start from a guess (the zCDP closed form), double or halve it until
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
    target_epsilon, target_delta = _check_target(target_epsilon, target_delta)
    q = check_sampling_rate(sampling_rate)
    steps = check_positive_int(steps, "steps")
    rtol = _check_rtol(rtol)
    if step_event is None:
        step_event = functools.partial(gaussian_step_event, sampling_rate=q)
    elif not callable(step_event):
        raise TypeError(f"step_event must be a callable z -> event or None; got {type(step_event).__name__}")
    run = _Calibration(lambda z: [(step_event(z), steps)], target_epsilon, target_delta, accountant,
                       accountant_options)
    guess = _zcdp_guess(target_epsilon, target_delta, q, steps)
    run.check_supported(guess, q)

    def at_limit(z, is_feasible):
        if is_feasible:
            raise ValueError(
                f"target_epsilon={target_epsilon!r} is met even with noise_multiplier={z:.3g} "
                f"(sampling_rate={q!r}, steps={steps}, accountant {accountant!r}): target_delta={target_delta!r} "
                f"is so large that the guarantee is vacuous (about sampling_rate * steps = {q * steps:.3g} "
                f"or more: such a delta allows publishing a record outright); use a much smaller delta"
            )
        raise ValueError(
            f"the {accountant!r} accountant cannot certify target_epsilon={target_epsilon!r} at "
            f"target_delta={target_delta!r} for {steps} steps with sampling_rate={q!r}: even "
            f"noise_multiplier={z:.3g} gives epsilon={run.epsilon(z):.4g}. Its epsilon has a floor here; "
            f"raise target_epsilon, use fewer steps, or use a tighter accountant (rdp or pld)"
        )

    return run.search(guess, feasible_when="large", lowest=_SMALLEST_NOISE, highest=_LARGEST_NOISE, rtol=rtol,
                      at_limit=at_limit)


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
    epsilon is non-decreasing in T (docs/math.md §17). Doubling T from 1 brackets the answer,
    ``epsilon(lo) <= target < epsilon(hi)``; integer bisection then shrinks the bracket to
    ``hi = lo + 1``. About :math:`2\log_2 T` accountant evaluations.

    Examples
    --------
    >>> T = steps_for_budget(target_epsilon=1.0, target_delta=1e-5, noise_multiplier=4.0, sampling_rate=0.01)
    >>> T   # 10,000 steps (100 epochs) of Abadi et al.'s setting cost 1.0355 by RDP: fewer fit
    9375
    """
    target_epsilon, target_delta = _check_target(target_epsilon, target_delta)
    z = check_noise_multiplier(noise_multiplier)
    q = check_sampling_rate(sampling_rate)
    max_steps = check_positive_int(max_steps, "max_steps")
    run = _Calibration(lambda steps: [(gaussian_step_event(z, q), steps)], target_epsilon, target_delta, accountant,
                       accountant_options)
    run.check_supported(1, q)

    def at_limit(steps, is_feasible):
        if is_feasible:
            raise ValueError(
                f"{max_steps} steps still meet target_epsilon={target_epsilon!r} (noise_multiplier={z!r}, "
                f"sampling_rate={q!r}, accountant {accountant!r}); pass a larger max_steps"
            )
        raise ValueError(
            f"even a single step with noise_multiplier={z!r} and sampling_rate={q!r} costs "
            f"epsilon={run.epsilon(1):.4g} > target_epsilon={target_epsilon!r} (accountant {accountant!r}); "
            f"use more noise or a larger target"
        )

    return run.search(1, feasible_when="small", lowest=1, highest=max_steps, at_limit=at_limit)


def sampling_rate_for_budget(target_epsilon, target_delta, noise_multiplier, steps, accountant="rdp", *, rtol=1e-3,
                             accountant_options=None):
    r"""Largest Poisson sampling rate q (to relative tolerance ``rtol``) whose run meets the target.

    Parameters
    ----------
    steps : int
        Number of steps T >= 1.
    rtol : float in (0, 0.1], default 1e-3
        The search stops when the bracket ``[lo, hi]`` has ``hi - lo <= rtol * lo``.
    target_epsilon, target_delta, noise_multiplier, accountant, accountant_options
        As in :func:`steps_for_budget`.

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
    target_epsilon, target_delta = _check_target(target_epsilon, target_delta)
    z = check_noise_multiplier(noise_multiplier)
    steps = check_positive_int(steps, "steps")
    rtol = _check_rtol(rtol)
    run = _Calibration(lambda q: [(gaussian_step_event(z, q), steps)], target_epsilon, target_delta, accountant,
                       accountant_options)

    def at_limit(q, is_feasible):
        if is_feasible:  # q = 1 meets the target: full batches, nothing to sample away
            return q
        raise ValueError(
            f"even sampling_rate={q:.3g} exceeds target_epsilon={target_epsilon!r} with "
            f"noise_multiplier={z!r} over {steps} steps (accountant {accountant!r}); use more noise or fewer steps"
        )

    if not run.epsilon(1.0) <= target_epsilon:
        run.check_supported(0.5, 0.5)  # zcdp accounts full batches only: its own reason, before the search
    return run.search(1.0, feasible_when="small", lowest=_SMALLEST_RATE, highest=1.0, rtol=rtol, at_limit=at_limit)
