r"""Truncated Poisson sampling by PLD, under both relations: a two-branch mixture of dominating pairs.

Each record is drawn with probability q; when more than B are drawn a uniformly random B are kept; the kept sum
gets :math:`\mathcal N(0, z^2C^2I)` (:class:`~dpedu.ground.events.TruncatedPoissonGaussianEvent`). Revealing whether the
*other* records drawn number at least B (K >= B, probability :math:`p = \Pr[\mathrm{Bin}(n_o, q) \ge B]`, the same
law in both datasets) only helps the adversary, so the pair with the branch revealed dominates the step, and its
privacy-loss distribution is the *mixture* of the branches' (docs/math.md §22.7):

* K < B (weight 1 - p): the Poisson-subsampled Gaussian, rate q, multiplier z (add/remove: §15.2, both
  directions; replace-one: the symmetric pair of §22.4);
* K >= B (weight p): the differing record, kept with probability :math:`\bar\gamma`
  (:func:`~dpedu.accountants.analysis.rdp_truncated_poisson.truncation_branches`), replaces a uniformly random kept
  record, a change of norm at most 2C: the Poisson-subsampled Gaussian with rate :math:`\bar\gamma` and multiplier
  z/2 (add/remove: its add/remove pair, both directions; replace-one: its replace-one pair).

Under add/remove the dataset with the differing record has :math:`n_o + 1` records, :math:`n_o = n - 1` or
:math:`n` (the run's dataset holds it, or its neighbour does): both are composed and the worse is reported. Under
replace-one :math:`n_o = n - 1`. Each branch is discretised by connect the dots on the entry's grid and the PMFs are
mixed with the branch weights: a mixture of dominating PMFs dominates the mixture (δ(ε) is linear in the PMF).

>>> from dpedu.ground.events import TruncatedPoissonGaussianEvent
>>> model = truncated_poisson_model(TruncatedPoissonGaussianEvent(1.0, 0.01, 620, 60_000), "remove", 0, 1e-12)
>>> [round(w, 4) for w, _ in model.components]
[0.789, 0.211]
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ...ground.events import (
    REPLACE_ONE, GaussianEvent, SubsampledGaussianEvent, TruncatedPoissonGaussianEvent, check_relation
)
from ...ground.events_last_iterate import LinearLastIterateEvent
from ...ground.events_allocation import BallsInBinsGaussianEvent
from ..analysis.rdp_truncated_poisson import truncation_branches
from .allocation import AllocationModel
from .losses import GridPMF, atom_arrays, connect_the_dots, grid_binning, loss_model, loss_moments, loss_range
from .replace_one import event_loss_model, replace_one_model

__all__ = ["MixtureModel", "truncated_poisson_model", "model_for", "model_moments", "model_range", "discretise",
           "scenarios"]


@dataclass(frozen=True)
class MixtureModel:
    """A privacy-loss distribution that is the mixture of ``components``: ``((weight, LossModel), ...)``, weights
    summing to 1 (the PLD of a pair whose branch, drawn with these weights in both datasets, is revealed)."""

    components: tuple


def _poisson_model(noise_multiplier, rate, relation, direction, tail):
    """The LossModel of the Poisson-subsampled Gaussian (rate in (0, 1]) under ``relation`` in ``direction``."""
    if relation == REPLACE_ONE:
        if rate == 1.0:  # the full batch under replace-one: the Gaussian with multiplier z / 2 (§22.2)
            return loss_model(GaussianEvent(noise_multiplier / 2.0), "remove", tail)
        return replace_one_model(noise_multiplier, rate, tail)
    return loss_model(SubsampledGaussianEvent(noise_multiplier, rate), direction, tail)


def truncated_poisson_model(event, direction, extra, tail, *, cut_relation=None):
    """The :class:`MixtureModel` of ``event`` (a TruncatedPoissonGaussianEvent) in ``direction`` ("remove" or "add"),
    with :math:`n_o = n - 1 + extra` other records (``extra`` in {0, 1}; replace-one: always n - 1).

    ``cut_relation`` is the pair taken for the cut branch: the event's relation by default; ``"replace_one"``
    under add/remove is Google's ``dp_accounting`` construction (looser, valid), kept for comparison.
    """
    z, q, relation = event.noise_multiplier, event.sampling_rate, event.relation
    cut_relation = relation if cut_relation is None else check_relation(cut_relation)
    others = event.dataset_size - 1 + (0 if relation == REPLACE_ONE else int(extra))
    p, gamma_bar = truncation_branches(q, event.max_batch_size, others)
    components = []
    if p < 1.0:
        components.append((1.0 - p, _poisson_model(z, q, relation, direction, tail)))
    if p > 0.0 and gamma_bar > 0.0:
        components.append((p, _poisson_model(z / 2.0, gamma_bar, cut_relation, direction, tail)))
    elif p > 0.0:  # the record is never kept in this branch: its outputs are the same in both datasets
        components.append((p, None))
    return MixtureModel(tuple(components))


def scenarios(events):
    """The ``(direction, extra)`` pairs a ledger of ``events`` must be composed under (the worst is reported)."""
    add_remove_truncated = any(isinstance(e, TruncatedPoissonGaussianEvent) and e.relation != REPLACE_ONE
                               for e in events)
    directions = ["remove"]
    if add_remove_truncated or any(isinstance(e, BallsInBinsGaussianEvent) for e in events) or any(
            isinstance(e, (SubsampledGaussianEvent, LinearLastIterateEvent)) and e.sampling_rate < 1
            and e.relation != REPLACE_ONE for e in events):
        directions.append("add")
    extras = (0, 1) if add_remove_truncated else (0,)
    return [(d, x) for x in extras for d in directions]


def model_for(event, direction, extra, tail, max_size=2**22):
    """The loss model of any PLD event: a :class:`MixtureModel` for truncated Poisson, an
    :class:`~.allocation.AllocationModel` for balls-in-bins (at most ``max_size`` grid points per band), a LossModel
    otherwise."""
    if isinstance(event, TruncatedPoissonGaussianEvent):
        return truncated_poisson_model(event, direction, extra, tail)
    if isinstance(event, BallsInBinsGaussianEvent):
        return AllocationModel(event.noise_multiplier, event.batches_per_epoch, direction, tail, max_size)
    return event_loss_model(event, direction, tail)


def _parts(model):
    if isinstance(model, AllocationModel):      # planning reads the pessimistic atoms
        return [(1.0, model.loss_model(True))], 0.0
    if isinstance(model, MixtureModel):
        return [(w, m) for w, m in model.components if m is not None], sum(w for w, m in model.components if m is None)
    return [(1.0, model)], 0.0


def model_moments(model):
    """``(mean, variance)`` of the loss (a branch whose outputs agree has loss 0)."""
    parts, silent = _parts(model)
    moments = [(w, loss_moments(m)) for w, m in parts] + ([(silent, (0.0, 0.0))] if silent > 0 else [])
    mean = sum(w * m for w, (m, _) in moments)
    return mean, sum(w * (v + (m - mean) ** 2) for w, (m, v) in moments)


def _ends(model):
    losses = atom_arrays(model.atoms)[0]
    values = [float(losses.min()), float(losses.max())] if losses.size else []
    if model.loss is not None:
        values += [float(model.loss(np.array(model.x_low))), float(model.loss(np.array(model.x_high)))]
    return min(values), max(values)


def model_range(model):
    """Width of the finite losses of ``model`` (all branches together)."""
    parts, silent = _parts(model)
    if len(parts) == 1 and silent == 0:
        return loss_range(parts[0][1])
    ends = [_ends(m) for _, m in parts] + ([(0.0, 0.0)] if silent > 0 else [])
    return max(h for _, h in ends) - min(lo for lo, _ in ends)


def discretise(model, spacing, pessimistic, max_size):
    """The GridPMF of ``model`` on ``spacing``: connect the dots (pessimistic) or grid binning (optimistic); a
    mixture's branches on the same grid, mixed with their weights (optimistic: all at the lowest branch offset,
    which only moves losses down); balls-in-bins: the spread atoms or the contracted ones (docs/math.md §22.9)."""
    if isinstance(model, AllocationModel):      # its FFTs' round-off bound is part of its mass at infinity
        g = (connect_the_dots if pessimistic else grid_binning)(model.loss_model(pessimistic), spacing, max_size)
        return dataclasses.replace(g, roundoff=model.roundoff()) if pessimistic else g
    parts, silent = _parts(model)
    method = connect_the_dots if pessimistic else grid_binning
    pmfs = [(w, method(m, spacing, max_size)) for w, m in parts]
    if silent > 0:
        pmfs.append((silent, GridPMF(spacing, 0, 0.0, np.ones(1), 0.0)))
    if len(pmfs) == 1 and pmfs[0][0] == 1.0:
        return pmfs[0][1]
    start = min(g.start for _, g in pmfs)
    stop = max(g.start + g.pmf.size for _, g in pmfs)
    pmf = np.zeros(stop - start)
    for w, g in pmfs:
        pmf[g.start - start:g.start - start + g.pmf.size] += w * g.pmf
    infinity = math.fsum(w * g.infinity_mass for w, g in pmfs)
    return GridPMF(spacing, start, min(g.offset for _, g in pmfs), pmf, min(infinity, 1.0))
