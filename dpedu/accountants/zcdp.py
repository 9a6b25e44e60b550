r"""Zero-concentrated differential privacy (Bun & Steinke 2016): one number rho that adds up.

A mechanism is :math:`\rho`-zCDP if :math:`D_\alpha(M(D)\,\|\,M(D')) \le \rho\alpha` for every
:math:`\alpha > 1` (docs/math.md §14). The Gaussian with noise multiplier z is :math:`1/(2z^2)`-zCDP
(Prop. 1.6), pure :math:`\varepsilon`-DP implies :math:`\varepsilon^2/2`-zCDP (Prop. 1.4), and
composition adds the rhos (Lemma 2.3). To report :math:`(\varepsilon, \delta)`:

* ``conversion="classic"``: :math:`\varepsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}` (Prop. 1.3);
* ``conversion="improved"``: the RDP conversion of Canonne, Kamath & Steinke (2020, Prop. 12) /
  Balle et al. (2020, Thm 21) applied to the line :math:`\rho\alpha`, minimised over real :math:`\alpha > 1`.

T full-batch Gaussian steps with z = 10 and T = 100 (total :math:`\mu = 1`):

>>> from dpedu.accountants import GaussianEvent
>>> acc = ZCDPAccountant().compose(GaussianEvent(10.0), 100)
>>> acc.rho, round(acc.get_epsilon(1e-5), 4)
(0.5, 5.2985)
>>> round(ZCDPAccountant(conversion="improved").compose(GaussianEvent(10.0), 100).get_epsilon(1e-5), 4)
4.7284
"""

from __future__ import annotations

import math

from scipy.optimize import minimize_scalar

from ..ground.validation import check_delta, check_epsilon, check_nonnegative, check_scalar
from .analysis.composition import SHUFFLED_BATCH, group_ledger
from .base import Accountant
from .analysis.conversions import check_conversion
from ..ground.events import EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, SubsampledGaussianEvent

__all__ = ["ZCDPAccountant", "zcdp_epsilon", "zcdp_delta", "minimise_over_alpha"]

# Search window for log(alpha - 1) around the classic optimum (the classic conversion's best alpha).
_WINDOW = 12.0


def _improved_log_delta_at(rho, epsilon, alpha):
    r""":math:`\ln\delta = (\alpha-1)(\rho\alpha-\varepsilon) - \ln(\alpha-1) + \alpha\ln(1-1/\alpha)`
    (Canonne, Kamath & Steinke 2020, Prop. 12, for the RDP curve :math:`\rho\alpha`)."""
    return (alpha - 1.0) * (rho * alpha - epsilon) - math.log(alpha - 1.0) + alpha * math.log1p(-1.0 / alpha)


def minimise_over_alpha(objective, log_alpha_minus_1):
    """Minimise ``objective(alpha)`` over real alpha > 1; returns the smallest value evaluated.

    Brent's method on x = log(alpha - 1), in a window of +-12 around ``log_alpha_minus_1`` (a starting guess
    of log(alpha - 1)). Every alpha > 1 gives a valid bound in the conversions of :func:`zcdp_epsilon` and
    :func:`zcdp_delta`, so the smallest value evaluated is a valid bound too. ``objective`` must be a finite
    function of alpha > 1 (the caller checks the privacy parameters it closes over).

    >>> round(minimise_over_alpha(lambda alpha: (alpha - 3.0) ** 2 + 1.0, 0.0), 6)
    1.0
    """
    if not callable(objective):
        raise TypeError(f"objective must be a function of alpha; got {type(objective).__name__}")
    centre = check_scalar(log_alpha_minus_1, "log_alpha_minus_1")
    if not math.isfinite(centre):
        raise ValueError(f"log_alpha_minus_1 must be finite; got {centre!r}")

    def in_x(x):
        return objective(1.0 + math.exp(x))

    result = minimize_scalar(in_x, bounds=(centre - _WINDOW, centre + _WINDOW), method="bounded",
                             options={"xatol": 1e-9})
    return min(float(result.fun), in_x(centre))


def zcdp_epsilon(rho, delta, conversion="classic"):
    r"""Epsilon at ``delta`` for a :math:`\rho`-zCDP mechanism.

    ``"classic"``: :math:`\rho + 2\sqrt{\rho\ln(1/\delta)}` (Bun & Steinke 2016, Prop. 1.3).
    ``"improved"``: :math:`\min_{\alpha>1}\ \rho\alpha + \ln\frac{\alpha-1}{\alpha} - \frac{\ln\delta+\ln\alpha}{\alpha-1}`,
    clamped at 0 (Canonne, Kamath & Steinke 2020, Prop. 12 = Balle et al. 2020, Thm 21; never larger
    than the classic value). The minimisation starts at the classic optimum
    :math:`\alpha - 1 = \sqrt{\ln(1/\delta)/\rho}` and runs Brent's method on :math:`\ln(\alpha-1)`.
    """
    rho = check_nonnegative(rho, "rho")
    delta = check_delta(delta)
    check_conversion(conversion)
    if rho == 0:
        return 0.0
    log_delta = math.log(delta)
    if conversion == "classic":
        return rho + 2.0 * math.sqrt(rho * -log_delta)     # rho + 2 sqrt(rho ln(1/delta))

    # rho a + ln((a - 1)/a) - (ln delta + ln a)/(a - 1), a = alpha
    def epsilon_at(alpha):
        return (rho * alpha + math.log1p(-1.0 / alpha)
                - (log_delta + math.log(alpha)) / (alpha - 1.0))
    # from the classic optimum alpha - 1 = sqrt(ln(1/delta) / rho)
    best = minimise_over_alpha(epsilon_at, 0.5 * math.log(-log_delta / rho))
    return max(best, 0.0)


def zcdp_delta(rho, epsilon, conversion="classic"):
    r"""Delta at ``epsilon`` for a :math:`\rho`-zCDP mechanism (1.0 when the conversion gives nothing).

    ``"classic"``: inverting Prop. 1.3, :math:`\delta = \exp(-(\varepsilon-\rho)^2/(4\rho))` for
    :math:`\varepsilon \ge \rho`; below :math:`\rho` the classic conversion certifies nothing, and the
    trivial :math:`\delta = 1` is returned. ``"improved"``: :math:`\min_{\alpha>1}
    \frac{e^{(\alpha-1)(\rho\alpha-\varepsilon)}}{\alpha-1}\bigl(1-\frac1\alpha\bigr)^{\alpha}` (Canonne,
    Kamath & Steinke 2020, Prop. 12), capped at 1.
    """
    rho = check_nonnegative(rho, "rho")
    epsilon = check_epsilon(epsilon)
    check_conversion(conversion)
    if rho == 0:
        return 0.0
    if conversion == "classic":
        # (x * x, not x ** 2: a huge epsilon gives inf and delta 0 instead of an OverflowError)
        return math.exp(-(epsilon - rho) * (epsilon - rho) / (4.0 * rho)) if epsilon >= rho else 1.0
    if epsilon >= rho and (epsilon - rho) * (epsilon - rho) / (4.0 * rho) > 745.0:
        return 0.0  # the classic delta, an upper bound on the improved one, is below the smallest float
    # The exponent (alpha - 1)(rho alpha - epsilon) is smallest near alpha = (epsilon + rho) / (2 rho).
    centre = math.log(max((epsilon - rho) / (2.0 * rho), 1e-6))
    log_delta = minimise_over_alpha(lambda alpha: _improved_log_delta_at(rho, epsilon, alpha), centre)
    return math.exp(log_delta) if log_delta < 0 else 1.0


class ZCDPAccountant(Accountant):
    r"""Zero-concentrated DP (Bun & Steinke 2016): add the rhos, convert once.

    Parameters
    ----------
    conversion : {"classic", "improved"}
        ``"classic"`` (default): :math:`\varepsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}` (Prop. 1.3), the
        form the book uses. ``"improved"``: the Canonne-Kamath-Steinke / Balle et al. conversion of the
        line :math:`\rho\alpha`, minimised over continuous :math:`\alpha > 1` (:func:`zcdp_epsilon`).

    Notes
    -----
    Per event (Bun & Steinke 2016):

    * :class:`GaussianEvent` (z): :math:`\rho = 1/(2z^2)` (Prop. 1.6);
    * :class:`SubsampledGaussianEvent` only with ``sampling_rate == 1`` (then it *is* a Gaussian);
    * :class:`LaplaceEvent` and :class:`EpsilonDeltaEvent` with delta = 0 (pure epsilon-DP):
      :math:`\rho = \varepsilon^2/2` (Prop. 1.4);
    * refused: subsampled steps (zCDP has no amplification-by-subsampling theorem), (epsilon, delta>0)
      events (approximate DP implies no zCDP bound), shuffled fixed-size batches.

    Composition adds the rhos (Lemma 2.3). For a Gaussian ledger zCDP equals the RDP curve exactly, so
    the classic conversion here equals RDP's classic conversion at its optimal order.
    """

    name = "zcdp"
    supported_events = (GaussianEvent, LaplaceEvent, EpsilonDeltaEvent)  # + SubsampledGaussianEvent with q = 1
    support_notes = {EpsilonDeltaEvent: "delta = 0 only"}
    unsupported_reasons = {
        SubsampledGaussianEvent: "zCDP has no amplification-by-subsampling theorem; use rdp, moments or pld "
        "(a SubsampledGaussianEvent is accepted only with sampling_rate 1, where it is a plain Gaussian)",
        EpsilonDeltaEvent: "an (epsilon, delta)-DP guarantee with delta > 0 implies no zCDP bound (with "
        "probability delta it may reveal everything, an infinite Renyi divergence); only pure epsilon-DP "
        "converts, to rho = epsilon^2 / 2",
        **SHUFFLED_BATCH,
    }

    def __init__(self, *, conversion="classic"):
        super().__init__()
        check_conversion(conversion)
        self.conversion = conversion

    def supports(self, event) -> bool:
        """Gaussian, pure-DP, and subsampled steps only when they are not subsampled (q = 1)."""
        if isinstance(event, SubsampledGaussianEvent):
            return event.sampling_rate == 1.0
        if isinstance(event, EpsilonDeltaEvent):
            return event.delta == 0.0
        return super().supports(event)

    @staticmethod
    def event_rho(event):
        r""":math:`\rho` of one supported event: :math:`1/(2z^2)` for a Gaussian, :math:`\varepsilon^2/2` for pure DP."""
        if isinstance(event, (GaussianEvent, SubsampledGaussianEvent)):
            z = event.noise_multiplier
            return 0.5 / z / z  # not z**2, which overflows (OverflowError) for z > 1e154
        return 0.5 * event.epsilon**2

    @property
    def rho(self):
        """Total :math:`\\rho` of the ledger: the sum over its events (Bun & Steinke 2016, Lemma 2.3)."""
        return math.fsum(count * self.event_rho(event) for event, count in group_ledger(self.ledger).items())

    def _epsilon(self, delta):
        return zcdp_epsilon(self.rho, delta, self.conversion)

    def _delta(self, epsilon):
        return zcdp_delta(self.rho, epsilon, self.conversion)
