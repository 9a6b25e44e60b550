r"""Rényi-DP accountant: add RDP curves over a grid of orders, convert once at the end.

Each event contributes a curve :math:`\alpha \mapsto \varepsilon_{\mathrm{RDP}}(\alpha)` (docs/math.md §13.2,
§13.5); curves add under composition, adaptive or not (Mironov 2017, Prop. 1); the total is
converted to :math:`(\varepsilon, \delta)` by minimising over the grid (§13.4).

Neighbouring relation and subsampling: **add/remove** with **Poisson** sampling (what the sampled-Gaussian
bound of Mironov, Talwar & Zhang 2019 assumes); **replace-one** with fixed-size batches sampled **without
replacement** (Wang, Balle & Kasiviswanathan 2019, docs/math.md §22.3); full-batch releases under either
relation. Shuffled fixed-size batches and truncated Poisson samples are refused.

>>> from dpedu.accountants import SubsampledGaussianEvent
>>> acc = RDPAccountant().compose(SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01), 10_000)
>>> eps, order = acc.get_epsilon_and_order(1e-5)        # Abadi et al.'s setting, 100 epochs
>>> round(eps, 4), order
(1.0355, 17.0)
>>> round(RDPAccountant(conversion="classic").compose(SubsampledGaussianEvent(4.0, 0.01), 10_000).get_epsilon(1e-5), 4)
1.2586
"""

from __future__ import annotations

import functools

import numpy as np

from ..validation import check_delta
from .conversions import check_conversion, delta_from_rdp, epsilon_from_rdp
from .orders import DEFAULT_ORDERS, OrderGridEdgeWarning, check_orders, warn_if_at_edge
from .rdp_curves import rdp_gaussian, rdp_laplace, rdp_pure_dp, rdp_sampled_gaussian
from .rdp_without_replacement import rdp_without_replacement
from .base import Accountant
from ..events import (
    EpsilonDeltaEvent,
    GaussianEvent,
    REPLACE_ONE,
    LaplaceEvent,
    SampledWithoutReplacementGaussianEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    TruncatedPoissonGaussianEvent,
)

__all__ = ["RDPAccountant", "DEFAULT_ORDERS", "OrderGridEdgeWarning", "event_rdp_curve"]


@functools.lru_cache(maxsize=1024)
def event_rdp_curve(event, orders):
    r"""RDP curve of one event at ``orders`` (a tuple of floats > 1), as a read-only array.

    Cached on ``(event, orders)``: events are frozen dataclasses, so 10,000 identical DP-SGD steps
    (or many accountants holding the same event) cost one evaluation.

    - ``GaussianEvent(z)``: :math:`\alpha/(2z^2)` (Mironov 2017, Prop. 7);
    - ``SubsampledGaussianEvent(z, q)``: :math:`\ln A_\alpha/(\alpha-1)` (Mironov, Talwar & Zhang 2019, §3);
    - ``LaplaceEvent(eps)``: the Laplace curve with :math:`b = 1/\varepsilon` (Mironov 2017, Table II);
    - ``EpsilonDeltaEvent(eps, 0)``: :math:`\min(\varepsilon, \alpha\varepsilon^2/2)` (Mironov 2017,
      Prop. 3; Bun & Steinke 2016, Prop. 3.3);
    - ``SampledWithoutReplacementGaussianEvent(z, m, n)`` under replace-one: Wang, Balle &
      Kasiviswanathan (2019), Thm 9 (docs/math.md §22.3).
    """
    alphas = np.asarray(orders, dtype=float)
    if isinstance(event, SubsampledGaussianEvent):
        curve = rdp_sampled_gaussian(event.sampling_rate, event.noise_multiplier, alphas)
    elif isinstance(event, GaussianEvent):
        curve = rdp_gaussian(event.noise_multiplier, alphas)
    elif isinstance(event, LaplaceEvent):
        curve = rdp_laplace(event.scale, alphas)
    elif isinstance(event, EpsilonDeltaEvent) and event.delta == 0:
        curve = rdp_pure_dp(event.epsilon, alphas)
    elif isinstance(event, SampledWithoutReplacementGaussianEvent):  # replace-one only (docs/math.md §22.3)
        curve = rdp_without_replacement(event.noise_multiplier, event.batch_size, event.dataset_size, alphas)
    else:
        raise TypeError(f"no RDP curve for {event!r}")
    curve = np.array(curve, dtype=float)
    curve.flags.writeable = False  # shared through the cache
    return curve


class RDPAccountant(Accountant):
    r"""Rényi differential privacy accountant (Mironov 2017; Mironov, Talwar & Zhang 2019).

    Parameters
    ----------
    orders : array of float, default :data:`DEFAULT_ORDERS`
        Rényi orders :math:`\alpha > 1`, treated as a set. The default is Opacus's grid
        :math:`\{1.1, 1.2, \dots, 10.9\} \cup \{12, \dots, 63\}` extended with
        :math:`80, 96, 128, \dots, 1024` so that large noise multipliers and tiny sampling rates
        (whose best order is in the hundreds) are not cut off at 63.
    conversion : {"improved", "classic"}, default "improved"
        RDP :math:`\to (\varepsilon,\delta)` theorem: ``"classic"``
        :math:`\varepsilon(\alpha) + \ln(1/\delta)/(\alpha-1)` (Mironov 2017, Prop. 3; the book's),
        or ``"improved"`` (Balle et al. 2020, Thm 21; Canonne, Kamath & Steinke 2020, Prop. 12; what
        Opacus and TF Privacy use), which is never larger.

    Notes
    -----
    Supported events: ``GaussianEvent``, ``SubsampledGaussianEvent``, ``LaplaceEvent``, and
    ``EpsilonDeltaEvent`` with ``delta == 0``; see :func:`event_rdp_curve` for the curves.

    When the minimising order is an end of the grid, :class:`OrderGridEdgeWarning` is raised: a
    wider grid could give a smaller epsilon.
    """

    name = "rdp"
    supported_events = (GaussianEvent, SubsampledGaussianEvent, LaplaceEvent, EpsilonDeltaEvent,
                        SampledWithoutReplacementGaussianEvent)
    support_notes = {EpsilonDeltaEvent: "delta = 0 only"}
    relations = {SampledWithoutReplacementGaussianEvent: (REPLACE_ONE,)}
    unsupported_reasons = {
        (SubsampledGaussianEvent, REPLACE_ONE): (
            "the sampled-Gaussian RDP bound (Mironov, Talwar & Zhang 2019) is for add/remove neighbours; under "
            "replace-one use the 'pld' accountant (docs/math.md §22.4)"
        ),
        (SampledWithoutReplacementGaussianEvent, "add_remove"): (
            "the bound for sampling without replacement (Wang, Balle & Kasiviswanathan 2019, Thm 9) is for "
            "replace-one neighbours (the dataset size is public); record the event with relation='replace_one'"
        ),
        TruncatedPoissonGaussianEvent: (
            "a Poisson sample cut at a maximum batch size is not Poisson sampling, and dpedu implements no "
            "theorem for it (docs/math.md §22.5)"
        ),
        EpsilonDeltaEvent: (
            "an (epsilon, delta)-DP guarantee with delta > 0 gives no Rényi bound at any order: with "
            "probability delta the privacy loss may be unbounded, so every Rényi divergence can be infinite. "
            "Only pure DP (delta = 0) converts to RDP; account the mechanism itself (e.g. GaussianEvent) instead"
        ),
        ShuffledBatchGaussianEvent: (
            "fixed-size batches from a shuffled pass are not Poisson subsampling, and the sampled-Gaussian RDP "
            "bound (Mironov, Talwar & Zhang 2019) assumes each record joins each batch independently with "
            "probability q. Train with Poisson sampling and record SubsampledGaussianEvent(z, q) instead"
        ),
    }

    def __init__(self, orders=DEFAULT_ORDERS, conversion="improved"):
        super().__init__()
        alphas = np.atleast_1d(check_orders(orders))
        if alphas.ndim != 1:
            raise ValueError(f"orders must be a 1-D sequence; got shape {alphas.shape}")
        self.orders = np.unique(alphas)  # sorted; order and repeats carry no meaning
        self.orders.flags.writeable = False
        self.conversion = check_conversion(conversion)

    def supports(self, event) -> bool:
        """Whether ``event`` has an RDP curve (an ``EpsilonDeltaEvent`` only with ``delta == 0``)."""
        if isinstance(event, EpsilonDeltaEvent) and event.delta > 0:
            return False
        return super().supports(event)

    def rdp_curve(self):
        r"""The composed curve: ``(orders, rdp)`` with :math:`\sum_t \text{count}_t \cdot \varepsilon_t(\alpha)`."""
        key = tuple(self.orders.tolist())
        total = np.zeros(self.orders.shape)
        for event, count in self.ledger:
            total += count * event_rdp_curve(event, key)
        return self.orders.copy(), total

    def get_epsilon_and_order(self, delta):
        """``(epsilon, best_order)`` at ``delta``; ``(0.0, None)`` for an empty ledger.

        Warns with :class:`OrderGridEdgeWarning` when the best order is an end of the grid.
        """
        delta = check_delta(delta)
        if not self.ledger:
            return 0.0, None
        return self._epsilon_and_order(delta, stacklevel=4)

    def _epsilon(self, delta):
        return self._epsilon_and_order(delta, stacklevel=5)[0]

    def _epsilon_and_order(self, delta, stacklevel):
        orders, rdp = self.rdp_curve()
        epsilon, order = epsilon_from_rdp(orders, rdp, delta, self.conversion)
        if epsilon > 0:  # at epsilon = 0 every order is as good as any other
            warn_if_at_edge(order, orders, "orders", stacklevel=stacklevel)
        return epsilon, order

    def _delta(self, epsilon):
        orders, rdp = self.rdp_curve()
        delta, order = delta_from_rdp(orders, rdp, epsilon, self.conversion)
        if delta < 1:
            warn_if_at_edge(order, orders, "orders", stacklevel=4)
        return delta

    def __repr__(self):
        return (f"RDPAccountant({len(self.orders)} orders {self.orders[0]:g}..{self.orders[-1]:g}, "
                f"conversion={self.conversion!r}, {len(self.ledger)} ledger entries)")
