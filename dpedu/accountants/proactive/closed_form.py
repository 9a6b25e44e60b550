r"""The pro-active closed form itself: the noise multiplier from the budget, and its inverse (docs/math.md §16).

van Dijk, Nguyen, Nguyen, Nguyen & Nguyen (arXiv 2102.09030): :math:`z = \sqrt{2(\varepsilon +
\ln(1/\delta))/\varepsilon}` makes DP-SGD :math:`(\varepsilon, \delta)`-DP for :math:`\varepsilon \le 1/2`
**under the conditions** checked by :mod:`dpedu.accountants.proactive.conditions`. Outside them the functions here
refuse (``strict=True``) or warn with :class:`ProactiveConditionWarning`.

>>> round(proactive_noise_multiplier(0.5, 1 / 60_000), 3)
6.783
"""

from __future__ import annotations

import math
import warnings

from ...ground.validation import (
    check_delta, check_epsilon, check_noise_multiplier, check_positive_int, check_sampling_rate
)

__all__ = ["EPSILON_LIMIT", "QZ_LIMIT", "ProactiveConditionWarning", "check_strict", "refuse_or_warn", "closed_form_z",
           "proactive_noise_multiplier", "proactive_epsilon_formula", "proactive_epsilon"]

# The paper's regime: epsilon <= 1/2, and the moment bound behind it needs q z <= 1/e (docs/math.md §16.2).
EPSILON_LIMIT = 0.5
QZ_LIMIT = 1.0 / math.e


class ProactiveConditionWarning(UserWarning):
    """A pro-active DP formula was used outside the conditions under which it is a guarantee."""


def check_strict(strict):
    """``strict`` must be exactly True or False: "yes", 1 or None would silently mean one or the other."""
    if strict is not True and strict is not False:
        raise TypeError(f"strict must be True or False; got {type(strict).__name__} {strict!r}")
    return strict


def refuse_or_warn(message, strict, stacklevel=3):
    """Raise ``ValueError(message)`` when ``strict``; else warn with :class:`ProactiveConditionWarning`.

    ``stacklevel=3`` points the warning at the caller of the public function that calls this one.
    """
    if strict:
        raise ValueError(message)
    warnings.warn(message + " [strict=False: continuing, but the closed form proves NOTHING here]",
                  ProactiveConditionWarning, stacklevel=stacklevel)


def proactive_noise_multiplier(epsilon, delta, *, strict=True):
    r"""The pro-active closed form z = √(2(ε + ln(1/δ))/ε).

    That is :math:`z = \sqrt{2(\varepsilon + \ln(1/\delta))/\varepsilon}`.

    Parameters
    ----------
    epsilon : float
        Total epsilon of the whole training run; the formula is stated for :math:`\varepsilon \le 1/2`.
    delta : float
        Total delta; the paper takes :math:`\delta = 1/N`.
    strict : bool, default True
        For :math:`\varepsilon > 1/2`: raise ``ValueError`` (True) or emit
        :class:`ProactiveConditionWarning` and return the formula's value (False).

    Returns
    -------
    float
        The noise multiplier z.

    Notes
    -----
    **Valid only under all the conditions of** :func:`proactive_conditions` (which also involve N, the
    epochs k and the steps T, unknown here): :math:`\varepsilon \le 1/2`, :math:`\delta = 1/N`,
    :math:`T \ge 2k^2/\varepsilon`, :math:`(2/e)^2k^2 - 1/2 \ge \ln N`. Outside them it is not a
    guarantee: one full-batch release with this z at :math:`\varepsilon = 1/2`, :math:`\delta = 10^{-5}`
    costs 0.508 exactly (:func:`dpedu.ground.gaussian.gaussian_epsilon_exact`). Use :func:`plan`, which
    checks everything.

    Derivation (docs/math.md §16.2, a reconstruction): Abadi et al.'s tail bound with
    :math:`\alpha_T(\lambda) \le Tq^2\lambda(\lambda+1)/z^2` at :math:`\lambda = z^2` and
    :math:`Tq^2 \le \varepsilon/2` gives :math:`\delta \le \exp((\varepsilon/2)(z^2+1) - z^2\varepsilon)`, which is
    :math:`\le \delta` for this z. [vD21]_

    References
    ----------
    .. [vD21] van Dijk, N.V. Nguyen, T.N. Nguyen, L.M. Nguyen, P.H. Nguyen, arXiv 2102.09030 (2021-2024);
       ICML 2024 (PMLR 235).

    Examples
    --------
    >>> round(proactive_noise_multiplier(0.25, 1 / 60_000), 3)
    9.488
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    strict = check_strict(strict)
    if epsilon > EPSILON_LIMIT:
        refuse_or_warn(f"the pro-active closed form is proven only for epsilon <= 1/2; "
                       f"got epsilon={epsilon!r}. Split the budget, or calibrate on an "
                       f"accountant instead (dpedu.calibrate.noise_multiplier)", strict)
    return closed_form_z(epsilon, delta)


def closed_form_z(epsilon, delta):
    r""":math:`\sqrt{2(\varepsilon + \ln(1/\delta))/\varepsilon}`, without any check (see :func:`proactive_noise_multiplier`).

    >>> round(closed_form_z(0.5, 1e-5), 4)
    6.9319
    """
    return math.sqrt(2.0 * (epsilon + math.log(1.0 / delta)) / epsilon)


def proactive_epsilon_formula(z, q, steps, delta):
    r""":math:`\max(2\ln(1/\delta)/(z^2-2),\ 2Tq^2)`, without any check (``z > sqrt(2)``; see :func:`proactive_epsilon`).

    >>> proactive_epsilon_formula(6.0, 0.01, 100, 1e-5) == 2 * math.log(1e5) / 34
    True
    """
    return max(2.0 * math.log(1.0 / delta) / (z * z - 2.0), 2.0 * steps * q * q)


def proactive_epsilon(*, noise_multiplier, sampling_rate, steps, delta, strict=True):
    r"""The epsilon the pro-active closed form certifies for a given run (docs/math.md §16.3).

    .. math:: \varepsilon_{\text{pro}} = \max\Bigl(\frac{2\ln(1/\delta)}{z^2-2},\ 2Tq^2\Bigr)

    The first term inverts :func:`proactive_noise_multiplier`; the second is the condition
    :math:`Tq^2 \le \varepsilon/2`.

    Parameters
    ----------
    noise_multiplier : float
        z; must exceed :math:`\sqrt2` (else the formula has no value).
    sampling_rate : float
        Poisson rate q in (0, 1].
    steps : int
        T >= 1.
    delta : float
        Total delta.
    strict : bool, default True
        The value means something only when :math:`\varepsilon_{\text{pro}} \le 1/2` and
        :math:`qz \le 1/e`. Outside: raise ``ValueError`` (True) or warn with
        :class:`ProactiveConditionWarning` and return the value (False).

    Returns
    -------
    float

    Examples
    --------
    >>> round(proactive_epsilon(noise_multiplier=proactive_noise_multiplier(0.5, 1 / 60_000),
    ...                         sampling_rate=0.05, steps=100, delta=1 / 60_000), 6)
    0.5
    """
    z = check_noise_multiplier(noise_multiplier)
    q = check_sampling_rate(sampling_rate)
    steps = check_positive_int(steps, "steps")
    delta = check_delta(delta)
    strict = check_strict(strict)
    if not z > math.sqrt(2.0):
        raise ValueError(f"the pro-active formula needs noise_multiplier > sqrt(2) (it divides by z^2 - 2); got {z!r}")
    epsilon = proactive_epsilon_formula(z, q, steps, delta)
    problems = []
    # 1e-12: z from proactive_noise_multiplier(0.5, delta) maps back to 0.5 only up to rounding
    if epsilon > EPSILON_LIMIT * (1 + 1e-12):
        problems.append(f"its value {epsilon:.4g} exceeds 1/2")
    if q * z > QZ_LIMIT:
        problems.append(f"q z = {q * z:.4g} exceeds 1/e = {QZ_LIMIT:.4f} (the moment bound behind it does not hold)")
    if problems:
        refuse_or_warn(
            f"the pro-active epsilon for noise_multiplier={z!r}, sampling_rate={q!r}, steps={steps} is not a "
            f"guarantee: " + "; ".join(problems) + ". Account this run with a tight accountant "
            "(dpedu.make_accountant('rdp') or 'pld') instead",
            strict,
        )
    return epsilon
