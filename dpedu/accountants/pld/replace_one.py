r"""The Poisson-subsampled Gaussian under replace-one: its dominating pair as a :class:`LossModel`.

Each record joins the batch independently with probability q; the batch sum of records of norm at most C
gets noise :math:`\mathcal N(0, z^2C^2I)`. Replacing one record x by x' changes the sum by x (when x was
drawn) and by -x' (when x' was drawn), so in units of C the worst case is (docs/math.md §22.4)

.. math::

    P = (1-q)\,\mathcal N(0, z^2) + q\,\mathcal N(1, z^2), \qquad
    Q = (1-q)\,\mathcal N(0, z^2) + q\,\mathcal N(-1, z^2),

the pair of Zhu, Dong & Wang (2022, §6) and of Google's dp_accounting (its ``REPLACE`` adjacency). The loss

.. math::

    L(x) = \ln\big(1-q+q\,e^{(2x-1)/(2z^2)}\big) - \ln\big(1-q+q\,e^{(-2x-1)/(2z^2)}\big)

increases in x, and the pair is symmetric (:math:`Q(x) = P(-x)`), so one direction is the whole curve. With
:math:`u = e^{x/z^2}`, :math:`c = q e^{-1/(2z^2)}` and :math:`w = e^{L}`, inverting the loss is the positive
root of :math:`c u^2 + (1-q)(1-w) u - c w = 0`.

>>> import numpy as np
>>> model = replace_one_model(1.0, 0.01, 1e-12)
>>> x = np.array([-2.0, 0.0, 3.0])
>>> np.allclose(model.preimage(model.loss(x)), x)
True
>>> float(model.loss(np.array(0.0)))   # x = 0 is as likely under P as under Q
0.0
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri

from ...ground.events import REPLACE_ONE, SubsampledGaussianEvent
from ...ground.events_last_iterate import LinearLastIterateEvent
from .last_iterate import last_iterate_loss_model
from .losses import LossModel, loss_model

__all__ = ["replace_one_model", "event_loss_model"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def replace_one_model(noise_multiplier, sampling_rate, tail):
    r"""The :class:`LossModel` of the pair above, for ``sampling_rate`` q in (0, 1).

    ``tail`` bounds the mass of :math:`\mathcal N(0, z^2)` cut from each end, as for add/remove: below the
    range becomes an atom at the lowest loss kept (pessimistic), above it joins the mass at :math:`+\infty`.
    (A full batch, q = 1, is the Gaussian ``GaussianEvent(z / 2)``: the accountant never asks for it here.)
    """
    z, q = float(noise_multiplier), float(sampling_rate)
    if not 0.0 < q < 1.0:
        raise ValueError(f"sampling_rate must be in (0, 1) here (q = 1 is a plain Gaussian); got {q!r}")
    log_q, log_1mq = math.log(q), math.log1p(-q)
    log_c = log_q - 1.0 / (2.0 * z * z)

    def log_normal(x, mean):
        return -0.5 * ((x - mean) / z) ** 2 - _LOG_SQRT_2PI - math.log(z)

    def loss(x):
        return (np.logaddexp(log_1mq, log_q + (2.0 * x - 1.0) / (2.0 * z * z))
                - np.logaddexp(log_1mq, log_q + (-2.0 * x - 1.0) / (2.0 * z * z)))

    def log_density(x):
        return np.logaddexp(log_1mq + log_normal(x, 0.0), log_q + log_normal(x, 1.0))

    def preimage(l):  # x with loss(x) = l: the positive root, in logarithms, without cancellation
        l = np.asarray(l, dtype=float)
        with np.errstate(over="ignore"):
            a = (1.0 - q) * -np.expm1(-np.abs(l))               # (1-q)|1 - w| / max(w, 1)
            root = np.sqrt(a * a + 4.0 * np.exp(2.0 * log_c - np.abs(l)))  # sqrt(...) / max(w, 1)
        # w >= 1: u = w (a + root) / (2c); w < 1: u = 2 c w / (a + root), the same root without cancellation
        log_u = np.where(l >= 0, l + np.log(a + root) - math.log(2.0) - log_c,
                         log_c + math.log(2.0) + l - np.log(a + root))
        return z * z * log_u

    cut = z * float(ndtri(tail))  # negative: N(0, z^2) has `tail` mass below it
    x_low, x_high = cut, 1.0 - cut
    below = (1.0 - q) * ndtr(x_low / z) + q * ndtr((x_low - 1.0) / z)
    above = (1.0 - q) * ndtr(-x_high / z) + q * ndtr((1.0 - x_high) / z)
    return LossModel(loss, log_density, preimage, x_low, x_high, z / 16.0, (), 0.0, float(below), float(above))


def event_loss_model(event, direction, tail):
    """The :class:`LossModel` of ``event``: the pair above for a replace-one Poisson-subsampled Gaussian
    (both directions are the same), the binomial mixture of :mod:`dpedu.accountants.pld.last_iterate` for the
    linear-loss last iterate, :func:`~dpedu.accountants.pld.losses.loss_model` otherwise."""
    if isinstance(event, SubsampledGaussianEvent) and event.relation == REPLACE_ONE:
        return replace_one_model(event.noise_multiplier, event.sampling_rate, tail)
    if isinstance(event, LinearLastIterateEvent):
        return last_iterate_loss_model(event, direction, tail)
    return loss_model(event, direction, tail)
