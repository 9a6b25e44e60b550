r"""The moments accountant of Abadi et al. (2016), as the paper states it.

Track the log-moment of the privacy loss :math:`c(o) = \ln\frac{\Pr[M(D)=o]}{\Pr[M(D')=o]}` at integer
orders :math:`\lambda` (docs/math.md §12):

.. math:: \alpha_M(\lambda) = \max_{D\sim D'} \ln \mathbb E_{o\sim M(D)}\big[e^{\lambda c(o)}\big].

Log-moments add under (adaptive) composition (Thm 2, part 1), and the tail bound (Thm 2, part 2) turns the total
into :math:`(\varepsilon, \delta)`:

.. math:: \delta = \min_\lambda e^{\alpha(\lambda) - \lambda\varepsilon}, \qquad
          \varepsilon = \min_\lambda \frac{\alpha(\lambda) + \ln(1/\delta)}{\lambda}.

Since :math:`\alpha(\lambda) = \lambda\,\varepsilon_{\mathrm{RDP}}(\lambda+1)`, this is the classic RDP
conversion restricted to integer orders :math:`2..33`: the ``rdp`` accountant is never looser.
Neighbouring relation: **add/remove**; subsampling: **Poisson**.

>>> from dpedu.accountants import SubsampledGaussianEvent
>>> acc = MomentsAccountant().compose(SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01), 10_000)
>>> eps, lam = acc.get_epsilon_and_moment_order(1e-5)   # the paper reports 1.26 (§5.1, 100 epochs)
>>> round(eps, 4), lam
(1.2586, 19)
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..ground.validation import check_choice, check_delta, check_epsilon, check_noise_multiplier, check_positive_int
from ..ground.validation import check_sampling_rate
from .analysis.conversions import check_curve_values
from .analysis.log_moments import log_moment
from .analysis.log_moments_integrated import abadi_log_moments_integrated
from .analysis.orders import OrderGridEdgeWarning, check_orders
from .analysis.rdp_curves import rdp_laplace, rdp_pure_dp
from .curve import CurveAccountant
from ..ground.events import (
    EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, ShuffledBatchGaussianEvent, SubsampledGaussianEvent
)

__all__ = [
    "MomentsAccountant",
    "OrderGridEdgeWarning",
    "abadi_lemma3_bound",
    "check_moment_curve",
    "epsilon_from_log_moments",
    "delta_from_log_moments",
    "event_log_moments",
]

_METHODS = ("closed_form", "integration")


def check_moment_curve(moment_orders, log_moments):
    r"""The checked ``(lambdas, values)`` of a log-moment curve :math:`\lambda \mapsto \alpha(\lambda)`.

    ``moment_orders``: a 1-D sequence of integers :math:`\lambda \ge 1`; ``log_moments``: finite values (or
    ``inf``) of the same shape. Raises ``ValueError``/``TypeError`` naming the argument.

    >>> check_moment_curve([1, 2], [0.5, 1.5])
    (array([1., 2.]), array([0.5, 1.5]))
    """
    lambdas = np.atleast_1d(check_orders(moment_orders, "moment_orders", integer=True, strict=False))
    if lambdas.ndim != 1:
        raise ValueError(f"moment_orders must be 1-D; got shape {lambdas.shape}")
    return lambdas, check_curve_values(log_moments, lambdas.shape, "log_moments")


def epsilon_from_log_moments(moment_orders, log_moments, delta):
    r"""Abadi et al.'s tail bound inverted for a target delta; returns ``(epsilon, best_lambda)``.

    .. math:: \varepsilon = \min_\lambda \frac{\alpha(\lambda) + \ln(1/\delta)}{\lambda}
              \qquad\text{([ACG16]_ Thm 2, part 2; docs/math.md §12.3)}

    Examples
    --------
    >>> eps, lam = epsilon_from_log_moments([1, 2], [0.0, 0.0], math.exp(-2))
    >>> eps, lam
    (1.0, 2)
    """
    lambdas, values = check_moment_curve(moment_orders, log_moments)
    delta = check_delta(delta)
    eps = (values + math.log(1 / delta)) / lambdas   # (alpha + ln(1/delta)) / lambda
    best = int(np.argmin(eps))                       # the best lambda: the smallest bound
    return float(eps[best]), int(lambdas[best])


def delta_from_log_moments(moment_orders, log_moments, epsilon):
    r"""Abadi et al.'s tail bound :math:`\delta = \min_\lambda e^{\alpha(\lambda) - \lambda\varepsilon}` (capped at 1).

    Returns ``(delta, best_lambda)``; compared in log space so a huge total cannot overflow.

    Examples
    --------
    >>> delta, lam = delta_from_log_moments([1, 2], [0.0, 0.0], 1.0)
    >>> round(delta, 12), lam
    (0.135335283237, 2)
    """
    lambdas, values = check_moment_curve(moment_orders, log_moments)
    epsilon = check_epsilon(epsilon)
    log_delta = values - lambdas * epsilon
    best = int(np.argmin(log_delta))
    return math.exp(min(0.0, float(log_delta[best]))), int(lambdas[best])


@functools.lru_cache(maxsize=1024)
def event_log_moments(event, moment_orders, method="closed_form"):
    r"""Log-moments :math:`\alpha(\lambda)` of one event at ``moment_orders`` (a tuple of ints), read-only.

    - ``SubsampledGaussianEvent(z, q)``: :math:`\ln\max(E_1, E_2)` ([ACG16]_ §3.2). ``"closed_form"``
      uses :math:`\ln E_2` from the binomial sum (:func:`dpedu.accountants.analysis.log_moments.log_moment`), because
      :math:`E_1 \le E_2` for the sampled Gaussian (Mironov, Talwar & Zhang 2019, §3; checked by
      integration on a grid of (q, z, λ) in the tests). ``"integration"`` integrates both numerically,
      as the paper's implementation did, and takes the max.
    - ``GaussianEvent(z)``: q = 1, where :math:`E_1 = E_2 = e^{\lambda(\lambda+1)/(2z^2)}`.
    - ``LaplaceEvent(eps)``: :math:`\lambda\,\varepsilon_{\mathrm{RDP}}(\lambda+1)` with Mironov's (2017)
      Laplace curve (the same for both methods).
    - ``EpsilonDeltaEvent(eps, 0)``: :math:`\lambda\min(\varepsilon, (\lambda+1)\varepsilon^2/2)`.

    Cached: 10,000 identical steps cost one evaluation.
    """
    lambdas = np.asarray(moment_orders, dtype=float)
    check_choice(method, "method", _METHODS)
    if isinstance(event, (SubsampledGaussianEvent, GaussianEvent)):
        q = event.sampling_rate if isinstance(event, SubsampledGaussianEvent) else 1.0
        values = (log_moment(q, event.noise_multiplier, lambdas) if method == "closed_form"     # ln E_2 (>= ln E_1)
                  else np.maximum(*abadi_log_moments_integrated(q, event.noise_multiplier, lambdas)))
    elif isinstance(event, LaplaceEvent):
        values = lambdas * rdp_laplace(event.scale, lambdas + 1)
    elif isinstance(event, EpsilonDeltaEvent) and event.delta == 0:
        values = lambdas * rdp_pure_dp(event.epsilon, lambdas + 1)
    else:
        raise TypeError(f"no log-moments for {event!r}")
    values = np.array(values, dtype=float).reshape(lambdas.shape)
    values.flags.writeable = False  # shared through the cache
    return values


class MomentsAccountant(CurveAccountant):
    r"""Abadi et al. (2016)'s moments accountant: integer log-moments, summed, then the tail bound.

    Parameters
    ----------
    moment_orders : iterable of int, default ``range(1, 33)``
        Orders :math:`\lambda \ge 1` (integers, as in the paper, which uses :math:`\lambda \le 32`).
    method : {"closed_form", "integration"}, default "closed_form"
        How the sampled Gaussian's log-moment is computed: the binomial closed form of :math:`E_2`,
        or numerical integration of both :math:`E_1` and :math:`E_2` as the paper did (about 20 ms per
        new event instead of 0.15 ms; the same log-moments to ~1e-9).

    Notes
    -----
    Supported events: ``SubsampledGaussianEvent``, ``GaussianEvent``, ``LaplaceEvent``,
    ``EpsilonDeltaEvent`` with ``delta == 0`` (see :func:`event_log_moments`). At
    :math:`q = 0.01, z = 4, \delta = 10^{-5}` it gives 1.2586 after 10,000 steps (paper: 1.26) and
    2.5759 after 40,000 (paper: 2.55). :func:`abadi_lemma3_bound` is the paper's asymptotic bound, for
    comparison only.

    References
    ----------
    .. [ACG16] Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar, Zhang. Deep Learning with Differential
       Privacy. CCS 2016, arXiv:1607.00133 (§3.2, Thm 2, Lemma 3, App. B, §5.1).
    """

    name = "moments"
    unsupported_reasons = {
        EpsilonDeltaEvent: (
            "an (epsilon, delta)-DP guarantee with delta > 0 does not bound the moment generating function "
            "of the privacy loss (with probability delta the loss may be unbounded, so every log-moment can "
            "be infinite); only pure DP (delta = 0) does. Account the mechanism itself instead"
        ),
        ShuffledBatchGaussianEvent: (
            "the moments accountant analyses Poisson sampling (each record joins each batch independently "
            "with probability q); fixed-size batches from a shuffled pass are a different mechanism (Abadi et "
            "al. note that their implementation shuffles while the analysis assumes Poisson). Train with "
            "Poisson sampling and record SubsampledGaussianEvent(z, q) instead"
        ),
    }
    caveat = "integer orders only and the classic tail bound: never tighter than 'rdp'"

    def __init__(self, moment_orders=range(1, 33), method="closed_form"):
        super().__init__()
        if isinstance(moment_orders, range):
            moment_orders = list(moment_orders)
        lambdas = np.atleast_1d(check_orders(moment_orders, "moment_orders", integer=True, strict=False))
        if lambdas.ndim != 1:
            raise ValueError(f"moment_orders must be a 1-D sequence; got shape {lambdas.shape}")
        self.moment_orders = np.unique(lambdas).astype(int)  # sorted; order and repeats carry no meaning
        self.moment_orders.flags.writeable = False
        self.method = check_choice(method, "method", _METHODS)

    grid_name, lowest_order = "moment_orders", 1

    def _grid(self):
        return self.moment_orders

    def _event_curve(self, event, grid_key):
        return event_log_moments(event, grid_key, self.method)

    def _convert_epsilon(self, grid, total, delta):
        return epsilon_from_log_moments(grid, total, delta)

    def _convert_delta(self, grid, total, epsilon):
        return delta_from_log_moments(grid, total, epsilon)

    def log_moments(self):
        r"""``(moment_orders, alpha)``: the composed log-moments, each event's α(λ) times its count, summed.

        That is :math:`\sum_t \text{count}_t\,\alpha_t(\lambda)`: log-moments of adaptively composed
        mechanisms add ([ACG16]_ Thm 2, part 1). Every conversion to (ε, δ) reads this sum.
        """
        lambdas = tuple(self.moment_orders.tolist())
        total = np.zeros(len(lambdas))
        for event, count in self.ledger:     # alpha(lambda) = sum_t count_t alpha_t(lambda)
            total += count * event_log_moments(event, lambdas, self.method)
        return self.moment_orders.copy(), total

    composed_curve = log_moments                                 # what get_epsilon and get_delta convert

    def get_epsilon_and_moment_order(self, delta):
        """``(epsilon, best_lambda)`` at ``delta``; ``(0.0, None)`` for an empty ledger.

        Warns with :class:`OrderGridEdgeWarning` when the best :math:`\\lambda` is an end of the grid.
        """
        return self._epsilon_and_order(delta)

    def __repr__(self):
        return (f"MomentsAccountant(moment_orders {self.moment_orders[0]}..{self.moment_orders[-1]}, "
                f"method={self.method!r}, {len(self.ledger)} ledger entries)")


def abadi_lemma3_bound(sampling_rate, noise_multiplier, moment_order):
    r"""Abadi et al.'s Lemma 3 leading term :math:`q^2\lambda(\lambda+1)/((1-q)z^2)`, within its conditions.

    Parameters
    ----------
    sampling_rate : float
        :math:`q`, with :math:`q < 1/(16z)`.
    noise_multiplier : float
        :math:`z \ge 1`.
    moment_order : int
        :math:`\lambda`, a positive integer with :math:`\lambda \le z^2\ln(1/(qz))`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Outside the lemma's conditions, naming the one that fails.

    Notes
    -----
    [ACG16]_ Lemma 3: :math:`\alpha(\lambda) \le q^2\lambda(\lambda+1)/((1-q)z^2) + O(q^3\lambda^3/z^3)`.
    The dropped :math:`O(\cdot)` term makes this an asymptotic statement, not a bound to account with;
    the true leading term is about half of it, :math:`q^2\lambda(\lambda+1)/(2z^2)`. Put through the
    tail bound at the headline setting (q = 0.01, z = 4, 10,000 steps, :math:`\delta=10^{-5}`) it gives
    1.77 where the exact log-moments give 1.26 (docs/math.md §12.5). A teaching comparison only.

    Examples
    --------
    >>> round(abadi_lemma3_bound(0.01, 4.0, 19) * 10_000, 2)     # vs 12.40 exact (log_moment)
    23.99
    """
    q = check_sampling_rate(sampling_rate)
    z = check_noise_multiplier(noise_multiplier)
    lam = check_positive_int(moment_order, "moment_order")
    if z < 1:
        raise ValueError(f"Abadi et al.'s Lemma 3 needs noise_multiplier >= 1; got {z!r}")
    if not q < 1 / (16 * z):
        raise ValueError(f"Abadi et al.'s Lemma 3 needs sampling_rate < 1/(16 z) = {1 / (16 * z):.6g}; got {q!r}")
    lam_max = z * z * math.log(1 / (q * z))
    if lam > lam_max:
        raise ValueError(
            f"Abadi et al.'s Lemma 3 needs moment_order <= z^2 ln(1/(q z)) = {lam_max:.6g}; got {lam}"
        )
    return q * q * lam * (lam + 1) / ((1 - q) * z * z)
