r"""The one search: the evaluated feasible end of a bracket around the boundary of a monotone condition.

Every calibration and inversion in dpedu is this search: the noise multiplier, steps or sampling rate that meet
a budget (:mod:`dpedu.accountants.calibrate`), the exact Gaussian's epsilon and noise multiplier (:mod:`dpedu.ground.gaussian`),
the certified mu (:mod:`dpedu.accountants.gdp`), the sequential accountant's delta split, and every audit's
lower bound (:mod:`dpedu.lab.audit`). It returns the end of the final bracket that was *evaluated* and
satisfies the condition, never a midpoint, so an answer never lies on the wrong side of what it claims: an
upper bound is never too small, a lower bound never too large (docs/math.md §17).
"""

from __future__ import annotations


from .validation import check_choice

__all__ = ["monotone_search"]


def monotone_search(feasible, start, *, feasible_when, lowest, highest, rtol=None, at_limit, step=None):
    r"""The evaluated feasible end of a bracket around the boundary of a monotone feasibility.

    Parameters
    ----------
    feasible : callable
        ``feasible(x) -> bool``, monotone in x: once true, true for every larger x
        (``feasible_when="large"``, e.g. the noise multiplier) or for every smaller x
        (``feasible_when="small"``, e.g. the number of steps or the sampling rate).
    start : float or int
        The first probe (a guess of the boundary), in ``[lowest, highest]``.
    feasible_when : {"large", "small"}
        Which side of the boundary is feasible.
    lowest, highest : float or int
        The search never probes outside this range. Integers (with ``rtol=None``) make an integer
        search: probes are whole numbers and the bracket shrinks to two neighbours.
    rtol : float, optional
        Continuous search: stop when the bracket is at most ``rtol`` times its feasible end (0: when the midpoint
        equals an end, the float resolution).
    step : float, optional
        Bracket by steps instead of factors: move ``step``, then twice that, four times, ... from ``start`` (for a
        condition on any real line, negative numbers too). By default the bracket doubles or halves x (x > 0).
    at_limit : callable
        ``at_limit(x, is_feasible)`` is called when the bracket cannot be closed inside the range: the
        probe x at ``lowest`` or ``highest`` is still feasible where an infeasible point was looked for
        (``is_feasible=True``), or still infeasible (``False``). It raises (the caller's message), or
        returns the value to return.

    Returns
    -------
    float or int
        The feasible end of the final bracket. It was evaluated, so it is feasible; the other end was
        evaluated too and is not, so the true boundary lies between them.

    Notes
    -----
    Bracket: from ``start``, double (towards larger x) or halve (towards smaller x), clipped to the
    range, until one end is feasible and the other is not. Bisect: probe the midpoint and keep the
    half that still holds the boundary, until the bracket is narrow enough or the midpoint equals an
    end (floats stop moving). Returning the midpoint instead of the feasible end overshot epsilon by
    about 0.5 in Opacus (opacus#346). docs/math.md §17.

    Examples
    --------
    The smallest x with x**2 >= 2, to 1e-6:

    >>> import math
    >>> x = monotone_search(lambda x: x * x >= 2, 1.0, feasible_when="large", lowest=1e-9, highest=1e9,
    ...                     rtol=1e-6, at_limit=None)
    >>> bool(x * x >= 2 and abs(x - math.sqrt(2)) <= 2e-6)
    True
    """
    check_choice(feasible_when, "feasible_when", ("large", "small"))
    integer = rtol is None

    moves = [step]

    def towards(x, larger):
        if step is not None:                       # additive: +- step, +- 2 step, ... (any real x)
            moves[0] *= 2
            return min(x + moves[0] / 2, highest) if larger else max(x - moves[0] / 2, lowest)
        if larger:
            return min(2 * x, highest)
        return max(x // 2 if integer else x / 2.0, lowest)

    good_is_larger = feasible_when == "large"  # where the feasible end lies relative to the infeasible one
    if feasible(start):
        good = start  # look for an infeasible point on the other side
        while True:
            x = towards(good, larger=not good_is_larger)
            if x == good:
                return at_limit(good, True)
            if not feasible(x):
                bad = x
                break
            good = x
    else:
        bad = start  # look for a feasible point
        while True:
            x = towards(bad, larger=good_is_larger)
            if x == bad:
                return at_limit(bad, False)
            if feasible(x):
                good = x
                break
            bad = x
    while abs(good - bad) > (1 if integer else rtol * good):
        mid = (good + bad) // 2 if integer else 0.5 * (good + bad)
        if mid in (good, bad):
            break
        if feasible(mid):
            good = mid
        else:
            bad = mid
    return good
