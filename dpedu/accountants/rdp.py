r"""Rényi-DP accountant: add RDP curves over a grid of orders, convert once at the end.

Each event contributes a curve :math:`\alpha \mapsto \varepsilon_{\mathrm{RDP}}(\alpha)` (docs/math.md §13.2,
§13.5); curves add under composition, adaptive or not (Mironov 2017, Prop. 1); the total is
converted to :math:`(\varepsilon, \delta)` by minimising over the grid (§13.4).

Neighbouring relation and subsampling: **add/remove** with **Poisson** sampling (what the sampled-Gaussian
bound of Mironov, Talwar & Zhang 2019 assumes); **replace-one** with fixed-size batches sampled **without
replacement** (Wang, Balle & Kasiviswanathan 2019, docs/math.md §22.3); full-batch releases under either
relation; truncated Poisson samples under add/remove (§22.5). Shuffled fixed-size batches are refused.

**Adding an event.** Each event type's curve is one function registered on :func:`rdp_of`
(``@rdp_of.register(MyEvent)`` in this module, with the others and above :class:`RDPAccountant`; it takes
``(event, alphas)`` and returns the curve at the float array ``alphas``). The accountant supports exactly
the registered types (:data:`RDP_EVENTS`, in the order they are registered); nothing else dispatches on the
event's type. An event covered under a relation other than
add/remove (or under both) says so in :attr:`RDPAccountant.relations`; a refusal worth teaching goes in
:attr:`RDPAccountant.unsupported_reasons`.

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

from .analysis.conversions import check_conversion, delta_from_rdp, epsilon_from_rdp
from .analysis.orders import DEFAULT_ORDERS, OrderGridEdgeWarning, check_orders
from .analysis.rdp_curves import rdp_gaussian, rdp_laplace, rdp_pure_dp, rdp_sampled_gaussian
from .curve import CurveAccountant
from .analysis.rdp_truncated_poisson import rdp_truncated_poisson
from .analysis.rdp_without_replacement import rdp_without_replacement
from .analysis.selection import repeat_and_select_rdp
from ..ground.events import (
    EpsilonDeltaEvent, GaussianEvent, NEIGHBOURING_RELATIONS, REPLACE_ONE, LaplaceEvent, add_remove_equivalent,
    SampledWithoutReplacementGaussianEvent, RepeatAndSelectEvent, ShuffledBatchGaussianEvent, SubsampledGaussianEvent,
    TruncatedPoissonGaussianEvent
)

__all__ = ["RDPAccountant", "DEFAULT_ORDERS", "OrderGridEdgeWarning", "event_rdp_curve", "rdp_of", "RDP_EVENTS"]


@functools.singledispatch
def rdp_of(event, alphas):
    r"""The RDP curve :math:`\varepsilon_{\mathrm{RDP}}(\alpha)` of one event at ``alphas`` (a float array).

    One function per event type, registered with ``@rdp_of.register(EventType)`` (below, one per theorem):
    the RDP accountant supports exactly the registered types. An unregistered event is refused here.
    """
    raise TypeError(f"no RDP curve for {event!r}")


@rdp_of.register(GaussianEvent)
def _(event, alphas):  # alpha / (2 z^2) (Mironov 2017, Prop. 7)
    return rdp_gaussian(event.noise_multiplier, alphas)


@rdp_of.register(SubsampledGaussianEvent)
def _(event, alphas):  # ln A_alpha / (alpha - 1) (Mironov, Talwar & Zhang 2019, §3)
    return rdp_sampled_gaussian(event.sampling_rate, event.noise_multiplier, alphas)


@rdp_of.register(LaplaceEvent)
def _(event, alphas):  # the Laplace curve with b = 1/epsilon (Mironov 2017, Table II)
    return rdp_laplace(event.scale, alphas)


@rdp_of.register(EpsilonDeltaEvent)
def _(event, alphas):  # min(eps, alpha eps^2 / 2) (Mironov 2017, Prop. 3; Bun & Steinke 2016, Prop. 3.3)
    if event.delta != 0:
        raise TypeError(f"no RDP curve for {event!r}: only pure DP (delta = 0) has one")
    return rdp_pure_dp(event.epsilon, alphas)


@rdp_of.register(SampledWithoutReplacementGaussianEvent)
def _(event, alphas):  # replace-one only: Wang, Balle & Kasiviswanathan (2019), Thm 9 (docs/math.md §22.3)
    return rdp_without_replacement(event.noise_multiplier, event.batch_size, event.dataset_size, alphas)


@rdp_of.register(TruncatedPoissonGaussianEvent)
def _(event, alphas):  # add/remove only: a two-branch mixture of sampled-Gaussian curves (docs/math.md §22.5)
    return rdp_truncated_poisson(event.noise_multiplier, event.sampling_rate, event.max_batch_size,
                                 event.dataset_size, alphas)


@rdp_of.register(RepeatAndSelectEvent)
def _(event, alphas):  # the best of K runs (Papernot & Steinke 2022, Thm 2 and Thm 6; docs/math.md §23)
    orders = tuple(alphas.tolist())
    run = sum(count * event_rdp_curve(add_remove_equivalent(inner), orders) for inner, count in event.run_ledger)
    return repeat_and_select_rdp(alphas, run, event.mean, event.shape)


#: The event types that have an RDP curve, in the order they were registered: what the accountant supports.
RDP_EVENTS = tuple(t for t in rdp_of.registry if t is not object)


@functools.lru_cache(maxsize=1024)
def event_rdp_curve(event, orders):
    r"""RDP curve of one event at ``orders`` (a tuple of floats > 1), as a read-only array: :func:`rdp_of`.

    Cached on ``(event, orders)``: events are frozen dataclasses, so 10,000 identical DP-SGD steps
    (or many accountants holding the same event) cost one evaluation.
    """
    curve = np.array(rdp_of(event, np.asarray(orders, dtype=float)), dtype=float)
    curve.flags.writeable = False  # shared through the cache
    return curve


class RDPAccountant(CurveAccountant):
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
    Supported events: ``GaussianEvent``, ``SubsampledGaussianEvent``, ``LaplaceEvent``,
    ``EpsilonDeltaEvent`` with ``delta == 0``, and ``RepeatAndSelectEvent`` of those; see
    :func:`event_rdp_curve` for the curves.

    When the minimising order is an end of the grid, :class:`OrderGridEdgeWarning` is raised: a
    wider grid could give a smaller epsilon.
    """

    name = "rdp"
    supported_events = RDP_EVENTS  # every type with a curve registered in rdp_of
    support_notes = {EpsilonDeltaEvent: "delta = 0 only", RepeatAndSelectEvent: "of supported events"}
    relations = {SampledWithoutReplacementGaussianEvent: (REPLACE_ONE,),
                 RepeatAndSelectEvent: NEIGHBOURING_RELATIONS}  # the relation of its runs, each checked (supports)
    unsupported_reasons = {
        (SubsampledGaussianEvent, REPLACE_ONE): (
            "the sampled-Gaussian RDP bound (Mironov, Talwar & Zhang 2019) is for add/remove neighbours; under "
            "replace-one use the 'pld' accountant (docs/math.md §22.4)"
        ),
        (SampledWithoutReplacementGaussianEvent, "add_remove"): (
            "the bound for sampling without replacement (Wang, Balle & Kasiviswanathan 2019, Thm 9) is for "
            "replace-one neighbours (the dataset size is public); record the event with relation='replace_one'"
        ),
        (TruncatedPoissonGaussianEvent, REPLACE_ONE): (
            "the bound for a Poisson sample cut at a maximum batch size (docs/math.md §22.5) is for add/remove "
            "neighbours"
        ),
        RepeatAndSelectEvent: "its one-run ledger holds an event this accountant refuses (compose that event alone to "
                              "see why)",
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
        """Whether ``event`` has an RDP curve; a ``RepeatAndSelectEvent`` when every event of its run has one."""
        if isinstance(event, RepeatAndSelectEvent):
            return all(self.supports(inner) for inner, _ in event.run_ledger)
        return super().supports(event)

    def _grid(self):
        return self.orders

    def _event_curve(self, event, grid_key):
        return event_rdp_curve(event, grid_key)

    def _convert_epsilon(self, grid, total, delta):
        return epsilon_from_rdp(grid, total, delta, self.conversion)

    def _convert_delta(self, grid, total, epsilon):
        return delta_from_rdp(grid, total, epsilon, self.conversion)

    def rdp_curve(self):
        r"""The composed curve: ``(orders, rdp)`` with :math:`\sum_t \text{count}_t \cdot \varepsilon_t(\alpha)`."""
        return self.composed_curve()

    def get_epsilon_and_order(self, delta):
        """``(epsilon, best_order)`` at ``delta``; ``(0.0, None)`` for an empty ledger.

        Warns with :class:`OrderGridEdgeWarning` when the best order is an end of the grid.
        """
        return self._epsilon_and_order(delta)

    def __repr__(self):
        return (f"RDPAccountant({len(self.orders)} orders {self.orders[0]:g}..{self.orders[-1]:g}, "
                f"conversion={self.conversion!r}, {len(self.ledger)} ledger entries)")
