r"""Private selection: the privacy of "run a private mechanism K times, release only the best run".

Running a mechanism Q (say, one DP-SGD training with a privately computed validation score) k times
costs k times its privacy by composition. Releasing only the *best* of a *random* number K of runs costs
much less, and the cost hardly depends on the mean of K (Liu & Talwar 2019; Papernot & Steinke 2022;
docs/math.md §23). With :math:`\varepsilon(\lambda)` the Rényi-DP curve of ONE run of Q:

* K truncated negative binomial with shape :math:`\eta > -1` and :math:`\gamma \in (0, 1)`
  (Papernot & Steinke 2022, Thm 2; docs/math.md §23.2): for every order :math:`\lambda > 1` and every
  :math:`\hat\lambda \ge 1`,

  .. math:: \varepsilon'(\lambda) = \varepsilon(\lambda)
            + (1+\eta)\Bigl(1 - \frac{1}{\hat\lambda}\Bigr)\varepsilon(\hat\lambda)
            + \frac{(1+\eta)\ln(1/\gamma)}{\hat\lambda} + \frac{\ln \mathbb E[K]}{\lambda - 1};

* K Poisson(:math:`\mu`), :math:`\mu \ge 1` (Papernot & Steinke 2022, Thm 6; docs/math.md §23.3): if Q is
  also :math:`(\hat\varepsilon, \hat\delta)`-DP with :math:`e^{\hat\varepsilon} \le 1 + 1/(\lambda-1)`,

  .. math:: \varepsilon'(\lambda) = \varepsilon(\lambda) + \mu\hat\delta + \frac{\ln\mu}{\lambda - 1};

* pure DP (Liu & Talwar 2019; Papernot & Steinke 2022, Cor. 3; docs/math.md §23.4): if Q is
  :math:`\varepsilon`-DP and K is truncated negative binomial, the best run is :math:`(2+\eta)\varepsilon`-DP
  (:math:`3\varepsilon` for the geometric K of Liu & Talwar).

The RDP accountant evaluates both RDP theorems on its grid of orders: :math:`\hat\lambda` ranges over
the same grid (the best one is taken), and, since a Rényi divergence never decreases with the order
(van Erven & Harremoës 2014, Thm 3), the bound at an order also holds at every smaller order.

>>> from dpedu.accountants.analysis.rdp_curves import rdp_gaussian
>>> orders = np.array([2.0, 4.0, 8.0, 16.0, 32.0])
>>> bound = truncated_negative_binomial_rdp(orders, rdp_gaussian(8.0, orders), mean=10.0, shape=1.0)
>>> bool(np.all(bound > rdp_gaussian(8.0, orders)))
True
>>> from dpedu.ground.events import LaplaceEvent, RepeatAndSelectEvent
>>> pure_selection_epsilon(RepeatAndSelectEvent(LaplaceEvent(0.5), mean=10, shape=1.0))   # Liu & Talwar's 3 epsilon
1.5
"""

from __future__ import annotations

import math

import numpy as np

from ...ground.events import EpsilonDeltaEvent, LaplaceEvent, RepeatAndSelectEvent
from ..base import UnsupportedEventError
from .conversions import check_curve, delta_from_rdp
from .trials import log_inverse_gamma, trials_mean

__all__ = [
    "repeat_and_select_rdp",
    "truncated_negative_binomial_rdp",
    "poisson_rdp",
    "pure_selection_epsilon",
]


def _smaller_orders_too(orders, bound):
    r""":math:`\min_{\lambda' \ge \lambda} \text{bound}(\lambda')` at each order: RDP never decreases with the order."""
    ascending = np.argsort(orders)
    envelope = np.minimum.accumulate(bound[ascending][::-1])[::-1]
    result = np.empty_like(bound)
    result[ascending] = envelope
    return result


def truncated_negative_binomial_rdp(orders, rdp, mean, shape):
    r"""RDP curve of the best of K runs, K truncated negative binomial (Papernot & Steinke 2022, Thm 2).

    Parameters
    ----------
    orders : array of float
        Orders :math:`\lambda > 1`; they are also the candidates for :math:`\hat\lambda`.
    rdp : array of float
        :math:`\varepsilon(\lambda)` of ONE run at those orders (``inf`` allowed).
    mean : float
        :math:`\mathbb E[K] > 1`.
    shape : float
        :math:`\eta \in (-1, \infty)`: 1 geometric, 0 logarithmic.

    Returns
    -------
    numpy.ndarray
        :math:`\varepsilon'(\lambda)` at ``orders`` (docs/math.md §23.2): the theorem with the best
        :math:`\hat\lambda` of the grid, then lowered to the smallest bound at any larger order. The
        :math:`\gamma` and :math:`\mathbb E[K]` used are those of the distribution :func:`sample_trials`
        draws from (:math:`\gamma` from ``mean`` by bisection).

    Examples
    --------
    A pure-DP-like curve (the same :math:`\varepsilon` at every order) at one huge order gives
    Corollary 3's :math:`(2+\eta)\varepsilon` up to the vanishing terms:

    >>> float(truncated_negative_binomial_rdp([1e12], [0.5], mean=10.0, shape=1.0)[0]) > 1.5
    True
    """
    alphas, values = check_curve(orders, rdp)
    L = log_inverse_gamma(mean, shape)                  # ln(1/gamma)
    log_mean = math.log(trials_mean(L, shape))
    with np.errstate(invalid="ignore"):                 # (1 - 1/alpha) * inf is inf, never nan (alpha > 1)
        hat_terms = (1 - 1 / alphas) * values + L / alphas
    bound = values + (1 + shape) * np.min(hat_terms) + log_mean / (alphas - 1)
    return _smaller_orders_too(alphas, bound)


def poisson_rdp(orders, rdp, mean):
    r"""RDP curve of the best of K runs, K ~ Poisson(``mean``) (Papernot & Steinke 2022, Thm 6).

    At each order :math:`\lambda`, :math:`\hat\varepsilon = \ln(1 + 1/(\lambda-1))` (the largest the
    theorem allows) and :math:`\hat\delta` is the smallest delta the one-run curve certifies at
    :math:`\hat\varepsilon` (improved conversion, best order of the grid; docs/math.md §13.4). Then
    :math:`\varepsilon'(\lambda) = \varepsilon(\lambda) + \mu\hat\delta + \ln\mu/(\lambda-1)`, lowered to the
    smallest bound at any larger order (docs/math.md §23.3). ``mean`` must be >= 1.

    Examples
    --------
    >>> from dpedu.accountants.analysis.rdp_curves import rdp_gaussian
    >>> orders = np.array([2.0, 8.0, 32.0])
    >>> bool(np.all(poisson_rdp(orders, rdp_gaussian(8.0, orders), 10.0) > rdp_gaussian(8.0, orders)))
    True
    """
    alphas, values = check_curve(orders, rdp)
    if not (math.isfinite(mean) and mean >= 1):
        raise ValueError(f"mean must be finite and >= 1 for the Poisson bound; got {mean!r}")
    bound = np.empty_like(values)
    for i, alpha in enumerate(alphas):
        epsilon_hat = math.log1p(1 / (alpha - 1))
        delta_hat, _ = delta_from_rdp(alphas, values, epsilon_hat, "improved")
        bound[i] = values[i] + mean * delta_hat + math.log(mean) / (alpha - 1)
    return _smaller_orders_too(alphas, bound)


def repeat_and_select_rdp(orders, rdp, mean, shape):
    """The RDP curve of the selection: :func:`poisson_rdp` when ``shape`` is ``inf``, else the truncated
    negative binomial's :func:`truncated_negative_binomial_rdp` (docs/math.md §23.2-23.3)."""
    if math.isinf(shape):
        return poisson_rdp(orders, rdp, mean)
    return truncated_negative_binomial_rdp(orders, rdp, mean, shape)


def _pure_epsilon(event):
    if isinstance(event, LaplaceEvent) or (isinstance(event, EpsilonDeltaEvent) and event.delta == 0):
        return event.epsilon
    if isinstance(event, RepeatAndSelectEvent):
        return pure_selection_epsilon(event)
    raise UnsupportedEventError(
        f"pure_selection_epsilon needs a pure epsilon-DP run (LaplaceEvent, EpsilonDeltaEvent with delta = 0, or a "
        f"selection of such runs); {event!r} is not pure DP - account the selection with the 'rdp' accountant")


def pure_selection_epsilon(event):
    r"""Pure epsilon of a selection whose runs are pure DP: :math:`(2+\eta)\varepsilon` (docs/math.md §23.4).

    Parameters
    ----------
    event : RepeatAndSelectEvent
        Its one-run ledger must be pure DP (``LaplaceEvent``, ``EpsilonDeltaEvent`` with ``delta = 0``);
        the run's :math:`\varepsilon` is their sum (basic composition), and its shape must be finite
        (a truncated negative binomial, K >= 1).

    Returns
    -------
    float
        :math:`(2+\eta)\varepsilon`: Papernot & Steinke 2022, Cor. 3 (the limit of their Thm 2 as both
        orders grow); for the geometric K (:math:`\eta = 1`) it is Liu & Talwar's (2019) :math:`3\varepsilon`.

    Raises
    ------
    UnsupportedEventError
        For a Poisson K (no pure-DP statement is made for it here) or a run that is not pure DP.
    TypeError
        If ``event`` is not a :class:`~dpedu.ground.events.RepeatAndSelectEvent`.
    """
    if not isinstance(event, RepeatAndSelectEvent):
        raise TypeError(f"event must be a RepeatAndSelectEvent; got {type(event).__name__} {event!r}")
    if math.isinf(event.shape):
        raise UnsupportedEventError("pure_selection_epsilon covers the truncated negative binomial (finite shape) "
                                    "only; a Poisson number of runs is accounted by the 'rdp' accountant")
    run_epsilon = math.fsum(count * _pure_epsilon(inner) for inner, count in event.run_ledger)
    return (2 + event.shape) * run_epsilon
