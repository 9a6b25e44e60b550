"""Privacy events: *what happened*, never how to count it.

An event records the mathematical behaviour of one release, with everything an
accountant needs and nothing an accountant decides (no delta split, no order grid).
Training functions return a ledger ``[(event, count), ...]`` so the same run can be
accounted by every accountant in :mod:`dpedu.accountants`.

Every event states its **neighbouring relation** (docs/math.md §1.2, §22.1): ``relation="add_remove"``
(the default, :data:`ADD_REMOVE`) or ``"replace_one"`` (:data:`REPLACE_ONE`). Events are
*normalised by the per-record contribution bound* C (the add/remove sensitivity; the clip norm of
DP-SGD): a Gaussian with standard deviation ``noise_std`` on a sum of records of norm at most C is
``GaussianEvent(noise_std / C)``, whatever the relation. Under replace-one such a sum has sensitivity
2C, and the accountants apply it (:func:`add_remove_equivalent`); an event never stores a value already
halved or doubled.

**Adding an event**: a ``@dataclass(frozen=True, repr=False)`` subclass of :class:`Event` with its fields and
``relation: str = _relation_field()`` last. :class:`Event` checks every field by its name (:data:`FIELD_CHECKS`:
a new field name gets its rule there), so the class needs no checking code. Export it in ``__all__`` here and
import it in :mod:`dpedu.accountants` (which re-exports the event types); then each accountant that covers it
says how: the RDP curve registered on :func:`dpedu.accountants.rdp.rdp_of`, the relations and refusals in the
accountant's ``relations`` and ``unsupported_reasons``.

>>> SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01)
SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01)
>>> LaplaceEvent(epsilon=0.5).scale
2.0
>>> gaussian_step_event(4.0, 0.01), steps_from_epochs(100, 0.01)
(SubsampledGaussianEvent(noise_multiplier=4.0, sampling_rate=0.01), 10000)
>>> GaussianEvent(2.0, relation="replace_one")
GaussianEvent(noise_multiplier=2.0, relation='replace_one')
>>> add_remove_equivalent(GaussianEvent(2.0, relation="replace_one"))
GaussianEvent(noise_multiplier=1.0)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from .validation import (
    check_choice, check_in_interval, check_noise_multiplier, check_positive, check_positive_int, check_sampling_rate,
    check_scalar
)

__all__ = [
    "Event",
    "GaussianEvent",
    "SubsampledGaussianEvent",
    "LaplaceEvent",
    "EpsilonDeltaEvent",
    "ShuffledBatchGaussianEvent",
    "RepeatAndSelectEvent",
    "MAX_EVENT_EPSILON",
    "MIN_EVENT_NOISE_MULTIPLIER",
    "gaussian_step_event",
    "steps_from_epochs",
    "ADD_REMOVE",
    "REPLACE_ONE",
    "ZERO_OUT",
    "NEIGHBOURING_RELATIONS",
    "check_relation",
    "add_remove_equivalent",
    "SampledWithoutReplacementGaussianEvent",
    "TruncatedPoissonGaussianEvent",
    "FIELD_CHECKS",
    "ZERO_OUT_AS_ADD_REMOVE",
    "ledger_pairs",
]

#: The neighbouring relations (docs/math.md §1.2): one record added or deleted; one record changed; one record
#: replaced by a special record whose gradient is zero (n unchanged and public: "zero-out").
ADD_REMOVE, REPLACE_ONE, ZERO_OUT = "add_remove", "replace_one", "zero_out"
NEIGHBOURING_RELATIONS = (ADD_REMOVE, REPLACE_ONE, ZERO_OUT)


def check_relation(relation):
    """``relation`` if it is one of :data:`NEIGHBOURING_RELATIONS`; otherwise an error naming it.

    >>> check_relation("replace_one")
    'replace_one'
    """
    if not isinstance(relation, str):
        raise TypeError(f"relation must be one of {NEIGHBOURING_RELATIONS} (a str); got {type(relation).__name__} "
                        f"{relation!r}")
    return check_choice(relation, "relation", NEIGHBOURING_RELATIONS)


# A per-release epsilon above this carries no information (e^epsilon overflowed long before), and squaring it
# (zCDP's rho = epsilon^2 / 2, RDP's curves, advanced composition) would overflow: refused, by name.
MAX_EVENT_EPSILON = 1e100


# The same limit for Gaussian events: a noise multiplier below this has a per-release RDP alpha / (2 z^2) above
# 1e100 at every order, and z * z underflows to 0 below 1e-154 (the series for the sampled Gaussian's log-moments
# then never converge). Refused, by name, with the allowed range.
MIN_EVENT_NOISE_MULTIPLIER = 1e-50

# steps_from_epochs refuses runs longer than this (round() of an inf or a 1e300 is no step count). Accounting a
# long run is cheap, so this bounds only the arithmetic; training runs have the much smaller limit
# dpedu.ground.validation.MAX_STEPS.
MAX_ACCOUNTED_STEPS = 1e15


def _check_event_epsilon(epsilon):
    return check_in_interval(epsilon, "epsilon", 0.0, MAX_EVENT_EPSILON, low_open=True)


def _check_event_noise_multiplier(noise_multiplier):
    z = check_noise_multiplier(noise_multiplier)
    if z < MIN_EVENT_NOISE_MULTIPLIER:
        raise ValueError(
            f"noise_multiplier must be in [{MIN_EVENT_NOISE_MULTIPLIER:g}, inf) for an accountable release (below it "
            f"the privacy loss is beyond the float range: the release is effectively not private); got {z!r}"
        )
    return z


def _check_size(name):
    return lambda value: check_positive_int(value, name)


#: How each event field is checked, by its name: the one place an event's fields are validated. An event's
#: ``__post_init__`` (:class:`Event`'s) runs the check of every field it has, in the order of its fields, and
#: stores the checked value. A new event whose fields have these names needs no checking code of its own; a new
#: field name gets its rule here.
FIELD_CHECKS = {
    "noise_multiplier": _check_event_noise_multiplier,
    "sampling_rate": check_sampling_rate,
    "epsilon": _check_event_epsilon,
    "delta": lambda value: check_in_interval(value, "delta", 0.0, 1.0, high_open=True),
    "batch_size": _check_size("batch_size"),
    "max_batch_size": _check_size("max_batch_size"),
    "dataset_size": _check_size("dataset_size"),
    "relation": check_relation,
}


class Event:
    """Base class of every privacy event (events carry data, not behaviour).

    Its ``__post_init__`` checks every field by its name (:data:`FIELD_CHECKS`) and that a batch is no larger
    than the dataset it is drawn from (``batch_size`` or ``max_batch_size`` at most ``dataset_size``); an
    event with rules of its own (:class:`RepeatAndSelectEvent`) overrides it. Its ``repr`` lists the fields
    and leaves out ``relation`` when it is the default, add/remove.
    """

    __slots__ = ()

    def __post_init__(self):
        for f in dataclasses.fields(self):
            if f.name in FIELD_CHECKS:
                object.__setattr__(self, f.name, FIELD_CHECKS[f.name](getattr(self, f.name)))
        for batch in ("batch_size", "max_batch_size"):
            if hasattr(self, batch) and hasattr(self, "dataset_size") and getattr(self, batch) > self.dataset_size:
                raise ValueError(f"{batch} ({getattr(self, batch)}) must not exceed dataset_size ({self.dataset_size})")

    def __repr__(self):
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                 if not (f.name == "relation" and getattr(self, f.name) == ADD_REMOVE)]
        return f"{type(self).__name__}({', '.join(shown)})"


def _relation_field():
    """The ``relation`` field every event ends with: keyword-only, add/remove by default."""
    return dataclasses.field(default=ADD_REMOVE, kw_only=True)


@dataclass(frozen=True, repr=False)
class GaussianEvent(Event):
    r"""One full-batch Gaussian release with noise multiplier :math:`z = \sigma/C` (C: each record's bound).

    Dominating pair :math:`(\mathcal N(1, z^2), \mathcal N(0, z^2))` under add/remove (docs/math.md §4);
    under replace-one the sensitivity is 2C, the pair :math:`(\mathcal N(2, z^2), \mathcal N(0, z^2))`,
    the same as ``GaussianEvent(z / 2)`` under add/remove (docs/math.md §22.2).
    """

    noise_multiplier: float
    relation: str = _relation_field()


@dataclass(frozen=True, repr=False)
class SubsampledGaussianEvent(Event):
    r"""One DP-SGD step: Poisson-sample each record with probability ``sampling_rate`` = q,
    release the clipped sum plus :math:`\mathcal N(0, z^2 C^2 I)` (Abadi et al. 2016, Alg. 1).

    With ``sampling_rate == 1`` this is exactly :class:`GaussianEvent`. Under replace-one its dominating
    pair is :math:`(q\mathcal N(1, z^2) + (1-q)\mathcal N(0, z^2),\ q\mathcal N(-1, z^2) + (1-q)\mathcal N(0, z^2))`
    (docs/math.md §22.4).
    """

    noise_multiplier: float
    sampling_rate: float
    relation: str = _relation_field()


@dataclass(frozen=True, repr=False)
class LaplaceEvent(Event):
    r"""One Laplace release that is ``epsilon``-DP: noise scale :math:`b = \Delta_1/\varepsilon`.

    Sensitivity-normalised, so the dominating pair is :math:`(\mathrm{Lap}(1, b), \mathrm{Lap}(0, b))`
    with ``b = scale = 1/epsilon`` (docs/math.md §3, §15.2). ``epsilon`` is per unit of each record's L1
    bound; under replace-one the sensitivity doubles and the release is ``2 * epsilon``-DP (§22.2).
    """

    epsilon: float
    relation: str = _relation_field()

    @property
    def scale(self) -> float:
        """Noise scale per unit of L1 sensitivity, :math:`b = 1/\\varepsilon`."""
        return 1.0 / self.epsilon


@dataclass(frozen=True, repr=False)
class EpsilonDeltaEvent(Event):
    """A black-box release known only to be (``epsilon``, ``delta``)-DP (``delta`` in [0, 1)) under ``relation``.

    The guarantee is stated for its relation already, so it is accounted as it is under either relation.
    """

    epsilon: float
    delta: float = 0.0
    relation: str = _relation_field()


@dataclass(frozen=True, repr=False)
class ShuffledBatchGaussianEvent(Event):
    """One step on a fixed-size batch from a *shuffled* pass (``batch_size`` of ``dataset_size``).

    This is what most training loops really do, and **no accountant covers it** (docs/math.md §1.3,
    §22.6): accountants refuse it, under either relation, instead of silently treating it as Poisson
    sampling. :mod:`dpedu.lab.audit.shuffle` measures how far it can be from the Poisson number.
    """

    noise_multiplier: float
    batch_size: int
    dataset_size: int
    relation: str = _relation_field()


def ledger_pairs(history, name="history"):
    """A ledger ``[(event, count), ...]`` from a ledger, a list of events (count 1 each) or one event.

    The one place a ledger is normalised (:func:`dpedu.accountants.as_ledger` unwraps an object's ``ledger``
    and comes here). Counts are passed on as they are: whoever composes them checks them. Anything else is
    refused with a ``TypeError`` naming ``name``.

    >>> ledger_pairs(GaussianEvent(2.0))
    [(GaussianEvent(noise_multiplier=2.0), 1)]
    """
    items = (history,) if isinstance(history, Event) else history
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise TypeError(f"{name} must be a ledger [(event, count), ...], a list of events or an event; got "
                        f"{type(history).__name__} {history!r}")
    pairs = []
    for item in items:
        if isinstance(item, Event):
            item = (item, 1)
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Event)):
            raise TypeError(f"{name} must hold events or (event, count) pairs; got {item!r}")
        pairs.append(item)
    return pairs


def _check_inner_ledger(ledger):
    """One run's ledger as a tuple of ``(event, count)`` pairs (an event alone counts once); refused by name."""
    pairs = [(event, check_positive_int(count, "run_ledger count"))
             for event, count in ledger_pairs(ledger, "run_ledger")]
    if not pairs:
        raise ValueError("run_ledger must hold at least one event: one run of the repeated mechanism")
    relations = {event.relation for event, _ in pairs}
    if len(relations) > 1:
        raise ValueError(f"run_ledger must hold events under one neighbouring relation; got {sorted(relations)}")
    return tuple(pairs)


@dataclass(frozen=True)
class RepeatAndSelectEvent(Event):
    r"""Run a private mechanism K times, K random and independent of the data, and release only the best run.

    ``run_ledger`` is what ONE run releases, its private score included (a tuple of ``(event, count)``
    pairs; an event or a list is accepted). It is not called ``ledger``: an object with a ``ledger`` is a
    whole history to :func:`dpedu.accountants.as_ledger`, and this event's history is the selection, not one run. K is drawn from a distribution with mean ``mean`` and shape
    :math:`\eta` = ``shape`` (Papernot & Steinke 2022; docs/math.md §23.1):

    * ``shape`` in :math:`(-1, \infty)`: the truncated negative binomial (K >= 1), ``mean`` > 1;
      ``shape = 1`` is the geometric distribution, ``shape = 0`` the logarithmic one;
    * ``shape = math.inf``: Poisson(``mean``) (K = 0 releases nothing), ``mean`` >= 1.

    Only the Rényi-DP accountant accounts it (docs/math.md §23.2-23.3).
    """

    run_ledger: tuple
    mean: float
    shape: float = 1.0

    unsupported_reason = ("the repeat-and-select theorems (Papernot & Steinke 2022, Thm 2 and Thm 6) are Rényi-DP "
                          "statements: account this event with the 'rdp' accountant (docs/math.md §23)")

    def __post_init__(self):
        object.__setattr__(self, "run_ledger", _check_inner_ledger(self.run_ledger))
        shape = check_scalar(self.shape, "shape")
        if not shape > -1:
            raise ValueError(f"shape must be in (-1, inf] (inf: Poisson); got {shape!r}")
        mean = check_scalar(self.mean, "mean")
        if math.isinf(shape):
            mean = check_in_interval(mean, "mean", 1.0, MAX_ACCOUNTED_STEPS)
        elif not 1 < mean <= MAX_ACCOUNTED_STEPS:
            raise ValueError(f"mean must be in (1, {MAX_ACCOUNTED_STEPS:g}] for a truncated negative binomial number "
                             f"of runs (a mean of 1 is always exactly one run: account its ledger directly); got {mean!r}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "mean", mean)

    @property
    def relation(self) -> str:
        """The neighbouring relation of the runs (one for the whole run ledger), and so of the selection."""
        return self.run_ledger[0][0].relation


def gaussian_step_event(noise_multiplier, sampling_rate):
    """The event of one Gaussian step with Poisson sampling rate ``sampling_rate`` (q).

    Parameters
    ----------
    noise_multiplier : float
        z, in ``[MIN_EVENT_NOISE_MULTIPLIER, inf)``.
    sampling_rate : float
        q in (0, 1].

    Returns
    -------
    GaussianEvent or SubsampledGaussianEvent
        ``GaussianEvent(z)`` for a full batch (q == 1: every record in every step), otherwise
        ``SubsampledGaussianEvent(z, q)``. The two are the same mechanism at q = 1, but only the plain
        Gaussian is accepted by the zCDP accountant, so one place decides.

    Examples
    --------
    >>> gaussian_step_event(2.0, 1.0)
    GaussianEvent(noise_multiplier=2.0)
    """
    q = check_sampling_rate(sampling_rate)
    if q == 1.0:
        return GaussianEvent(noise_multiplier)
    return SubsampledGaussianEvent(noise_multiplier, q)


def steps_from_epochs(epochs, sampling_rate):
    """Number of steps of ``epochs`` passes at Poisson rate q: ``max(1, round(epochs / q))``, at least 1.

    One epoch is 1/q steps in expectation (each step sees q N records): the rule the training functions, the
    estimator and the experiments use, in one place. ``epochs`` finite and > 0 (a fraction is allowed), q in
    (0, 1]; a bad value is refused naming ``epochs`` or ``sampling_rate``.

    >>> steps_from_epochs(100, 0.01), steps_from_epochs(0.5, 0.3)
    (10000, 2)
    """
    epochs = check_positive(epochs, "epochs")
    q = check_sampling_rate(sampling_rate)
    steps = epochs / q
    if not math.isfinite(steps) or steps > MAX_ACCOUNTED_STEPS:
        raise ValueError(f"epochs / sampling_rate must be at most {MAX_ACCOUNTED_STEPS:g} steps; got epochs={epochs!r}, "
                         f"sampling_rate={q!r}")
    return max(1, round(steps))


@dataclass(frozen=True, repr=False)
class SampledWithoutReplacementGaussianEvent(Event):
    r"""One Gaussian step on ``batch_size`` = m records drawn uniformly *without replacement*, afresh each step,
    from ``dataset_size`` = n (every m-subset equally likely), noise :math:`\mathcal N(0, z^2C^2 I)`.

    The dataset size n is public, so the natural relation is replace-one: the RDP accountant covers it there
    (Wang, Balle & Kasiviswanathan 2019, Thm 9; docs/math.md §22.3). Under add/remove it is refused.

    >>> SampledWithoutReplacementGaussianEvent(1.0, 600, 60_000, relation="replace_one").sampling_rate
    0.01
    """

    noise_multiplier: float
    batch_size: int
    dataset_size: int
    relation: str = _relation_field()

    @property
    def sampling_rate(self) -> float:
        r""":math:`\gamma = m/n`, the chance that a given record is in the batch."""
        return self.batch_size / self.dataset_size


@dataclass(frozen=True, repr=False)
class TruncatedPoissonGaussianEvent(Event):
    r"""One Gaussian step on a Poisson sample (rate ``sampling_rate`` of ``dataset_size`` records) cut down to
    at most ``max_batch_size`` records by keeping a uniformly random subset when it is larger.

    Fixed memory, as training code wants, but no longer Poisson sampling. Under add/remove the RDP accountant
    bounds it (docs/math.md §22.5); every other (accountant, relation) pair refuses it.
    """

    noise_multiplier: float
    sampling_rate: float
    max_batch_size: int
    dataset_size: int
    relation: str = _relation_field()


#: The events whose zero-out curve is their add/remove curve (:func:`add_remove_equivalent`).
ZERO_OUT_AS_ADD_REMOVE = (GaussianEvent, SubsampledGaussianEvent, LaplaceEvent)


def add_remove_equivalent(event):
    r"""The add/remove event with the same privacy curve as a *full-batch* replace-one ``event``, or as a zero-out
    Gaussian, Poisson-subsampled Gaussian or Laplace ``event``; else ``event`` (docs/math.md §1.2, §22.2).

    Zero-out changes one record's contribution from g (norm at most C) to 0, every batch unchanged: a Gaussian on
    a sum, Poisson-subsampled or not, is then the add/remove pair in one of its two orders. Replace-one gives a sum
    sensitivity 2C, so a full-batch Gaussian with multiplier z is exactly ``GaussianEvent(z / 2)`` and a Laplace
    release of ``epsilon`` is ``LaplaceEvent(2 * epsilon)`` (``sampling_rate`` 1 is a full batch too).

    >>> add_remove_equivalent(LaplaceEvent(0.5, relation="replace_one"))
    LaplaceEvent(epsilon=1.0)
    >>> add_remove_equivalent(SubsampledGaussianEvent(1.0, 0.01, relation="replace_one")).relation
    'replace_one'
    """
    if not isinstance(event, Event):
        raise TypeError(f"event must be a dpedu event; got {type(event).__name__} {event!r}")
    if getattr(event, "gaussian_equivalent", None) is not None:  # a Gaussian in disguise (dpedu.textbook.learners)
        event = event.gaussian_equivalent
    relation = getattr(event, "relation", ADD_REMOVE)
    if relation == ZERO_OUT and isinstance(event, ZERO_OUT_AS_ADD_REMOVE):
        return dataclasses.replace(event, relation=ADD_REMOVE)    # g against 0: add/remove's two pairs
    if relation != REPLACE_ONE:
        return event
    if isinstance(event, GaussianEvent) or (isinstance(event, SubsampledGaussianEvent) and event.sampling_rate == 1):
        return GaussianEvent(event.noise_multiplier / 2.0)
    if isinstance(event, LaplaceEvent):
        return LaplaceEvent(2.0 * event.epsilon)
    return event
