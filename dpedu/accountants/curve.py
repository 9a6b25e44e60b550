r"""What the moments and the RDP accountant share: one curve per event on a grid of orders, summed, converted once.

Both accountants give every event a curve over a grid of orders (log-moments :math:`\alpha(\lambda)` for the
moments accountant, :math:`\varepsilon_{\mathrm{RDP}}(\alpha)` for the RDP one), add the curves over the
ledger (composition, adaptive or not: docs/math.md §12.2, §13.3) and turn the total into
:math:`(\varepsilon, \delta)` by minimising a conversion over the grid (§12.3, §13.4). A subclass says
only which curve, which grid and which conversion: :class:`CurveAccountant` does the rest, including the
warning when the best order is an end of the grid. With :math:`\alpha(\lambda) = \lambda\,
\varepsilon_{\mathrm{RDP}}(\lambda + 1)`, the moments accountant is the RDP one on integer orders with the
classic conversion (docs/math.md §12.7).

>>> from dpedu.accountants import make_accountant, SubsampledGaussianEvent
>>> acc = make_accountant("rdp").compose(SubsampledGaussianEvent(4.0, 0.01), 100)
>>> isinstance(acc, CurveAccountant), acc.composed_curve()[1].shape == acc.orders.shape
(True, True)
"""

from __future__ import annotations

import abc
from typing import ClassVar

import numpy as np

from ..ground.events import EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, SubsampledGaussianEvent
from ..ground.validation import check_delta
from .base import Accountant
from .analysis.orders import warn_if_at_edge

__all__ = ["CurveAccountant"]


class CurveAccountant(Accountant):
    """Base of the accountants that add per-event curves over a grid of orders and convert the sum once.

    A subclass sets ``grid_name`` (the constructor argument holding the grid, for messages),
    ``lowest_order`` (the smallest order its method allows at all, or None) and implements
    :meth:`_grid`, :meth:`_event_curve`, :meth:`_convert_epsilon` and :meth:`_convert_delta`.
    """

    grid_name: ClassVar[str] = "orders"
    lowest_order: ClassVar[float | None] = None
    supported_events = (GaussianEvent, SubsampledGaussianEvent, LaplaceEvent, EpsilonDeltaEvent)
    support_notes = {EpsilonDeltaEvent: "delta = 0 only"}

    def supports(self, event) -> bool:
        """Whether ``event`` has a curve here (an ``EpsilonDeltaEvent`` only with ``delta == 0``)."""
        if isinstance(event, EpsilonDeltaEvent) and event.delta > 0:
            return False
        return super().supports(event)

    @abc.abstractmethod
    def _grid(self) -> np.ndarray:
        """The sorted, read-only grid of orders."""

    @abc.abstractmethod
    def _event_curve(self, event, grid_key: tuple) -> np.ndarray:
        """One event's curve at the orders ``grid_key`` (a tuple: cacheable)."""

    @abc.abstractmethod
    def _convert_epsilon(self, grid, total, delta):
        """``(epsilon, best order)`` of the composed curve at ``delta``."""

    @abc.abstractmethod
    def _convert_delta(self, grid, total, epsilon):
        """``(delta, best order)`` of the composed curve at ``epsilon``."""

    def composed_curve(self):
        r"""``(grid, total)``: the grid of orders and :math:`\sum_t \text{count}_t\,c_t` of the event curves."""
        grid = self._grid()
        key = tuple(grid.tolist())
        total = np.zeros(grid.shape)
        for event, count in self.ledger:
            total += count * self._event_curve(event, key)
        return grid.copy(), total

    def _best(self, delta):
        """``(epsilon, best order)`` at a validated ``delta``; ``(0.0, None)`` for an empty ledger."""
        if not self.ledger:
            return 0.0, None
        grid, total = self.composed_curve()
        epsilon, order = self._convert_epsilon(grid, total, delta)
        if epsilon > 0:  # at epsilon = 0 every order is as good as any other
            warn_if_at_edge(order, grid, self.grid_name, lower_limit=self.lowest_order)
        return epsilon, order

    def _epsilon_and_order(self, delta):
        return self._best(check_delta(delta))

    def _epsilon(self, delta):
        return self._best(delta)[0]

    def _delta(self, epsilon):
        grid, total = self.composed_curve()
        delta, order = self._convert_delta(grid, total, epsilon)
        if delta < 1:
            warn_if_at_edge(order, grid, self.grid_name, lower_limit=self.lowest_order)
        return delta
