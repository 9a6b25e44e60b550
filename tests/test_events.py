"""Privacy events (:mod:`dpedu.ground.events`): what each records, how its fields are checked, and the two rules that
turn a training setting into events (``gaussian_step_event``, ``steps_from_epochs``; some tests moved here from
test_accountant_accounting.py). Accountants' treatment of events is tested in tests/test_accountant_*.py.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from dpedu.ground.events import (
    MAX_EVENT_EPSILON,
    MIN_EVENT_NOISE_MULTIPLIER,
    EpsilonDeltaEvent,
    Event,
    FIELD_CHECKS,
    GaussianEvent,
    LaplaceEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    gaussian_step_event,
    ledger_pairs,
    steps_from_epochs,
)


def test_gaussian_step_event_is_plain_at_full_batch():
    assert gaussian_step_event(2.0, 1.0) == GaussianEvent(2.0)
    assert gaussian_step_event(2.0, 0.5) == SubsampledGaussianEvent(2.0, 0.5)
    with pytest.raises(ValueError, match="sampling_rate"):
        gaussian_step_event(2.0, 0.0)


@pytest.mark.parametrize("epochs, q, steps", [(100, 0.01, 10_000), (0.5, 0.3, 2), (1e-9, 0.5, 1), (3, 1.0, 3)])
def test_steps_from_epochs_rule(epochs, q, steps):
    assert steps_from_epochs(epochs, q) == steps == max(1, round(epochs / q))


@pytest.mark.parametrize("epochs, q, error, name", [
    (True, 0.1, TypeError, "epochs"), ("3", 0.1, TypeError, "epochs"), (0.0, 0.1, ValueError, "epochs"),
    (math.inf, 0.1, ValueError, "epochs"), (1e300, 1e-300, ValueError, "epochs"), (1.0, 0.0, ValueError, "sampling_rate"),
])
def test_steps_from_epochs_refuses_bad_input(epochs, q, error, name):
    with pytest.raises(error, match=name):
        steps_from_epochs(epochs, q)


@pytest.mark.parametrize("z", [1e-300, 1e-160, MIN_EVENT_NOISE_MULTIPLIER / 2])
def test_a_noise_multiplier_beyond_the_float_range_is_refused_with_the_range(z):
    with pytest.raises(ValueError, match=r"noise_multiplier must be in \[1e-50"):
        SubsampledGaussianEvent(z, 0.01)
    with pytest.raises(ValueError, match="noise_multiplier"):
        GaussianEvent(z)


def test_events_are_frozen_hashable_values():
    a, b = SubsampledGaussianEvent(1.0, 0.01), SubsampledGaussianEvent(1, 0.01)
    assert a == b and hash(a) == hash(b) and len({a, b, GaussianEvent(1.0)}) == 2
    assert isinstance(a.noise_multiplier, float)                      # checked values are stored cleaned
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.noise_multiplier = 2.0
    for event in (a, GaussianEvent(2.0), LaplaceEvent(0.5), EpsilonDeltaEvent(1.0, 1e-5),
                  ShuffledBatchGaussianEvent(1.0, 10, 100)):
        assert isinstance(event, Event) and eval(repr(event)) == event


def test_laplace_event_scale_is_one_over_epsilon():
    assert LaplaceEvent(0.25).scale == 4.0
    assert EpsilonDeltaEvent(1.0).delta == 0.0


@pytest.mark.parametrize("make, name", [
    (lambda: GaussianEvent(-1.0), "noise_multiplier"),
    (lambda: GaussianEvent(True), "noise_multiplier"),
    (lambda: SubsampledGaussianEvent(1.0, 1.5), "sampling_rate"),
    (lambda: SubsampledGaussianEvent(1.0, 0.0), "sampling_rate"),
    (lambda: LaplaceEvent(0.0), "epsilon"),
    (lambda: LaplaceEvent(MAX_EVENT_EPSILON * 10), "epsilon"),
    (lambda: EpsilonDeltaEvent(1.0, 1.0), "delta"),
    (lambda: EpsilonDeltaEvent(math.nan), "epsilon"),
    (lambda: ShuffledBatchGaussianEvent(1.0, 0, 100), "batch_size"),
    (lambda: ShuffledBatchGaussianEvent(1.0, 10.0, 100), "batch_size"),
    (lambda: ShuffledBatchGaussianEvent(1.0, 101, 100), "batch_size"),
    (lambda: ShuffledBatchGaussianEvent(1.0, 10, None), "dataset_size"),
])
def test_bad_event_fields_are_refused_by_name(make, name):
    with pytest.raises((TypeError, ValueError), match=rf"\b{name}\b"):
        make()


def test_the_noise_multiplier_range_is_inclusive_at_its_minimum():
    assert GaussianEvent(MIN_EVENT_NOISE_MULTIPLIER).noise_multiplier == MIN_EVENT_NOISE_MULTIPLIER


def test_dp_sgd_plans_record_the_event_of_their_sampling_scheme():
    from dpedu.textbook.training import plan_dp_sgd

    common = dict(noise_multiplier=1.5, clip_norm=1.0, steps=7)
    assert plan_dp_sgd(1000, sampling_rate=0.01, **common).ledger == [(SubsampledGaussianEvent(1.5, 0.01), 7)]
    assert plan_dp_sgd(1000, sampling_rate=1.0, **common).ledger == [(GaussianEvent(1.5), 7)]
    shuffled = plan_dp_sgd(1000, sampling_rate=0.01, sampling="shuffle", **common)
    assert shuffled.ledger == [(ShuffledBatchGaussianEvent(1.5, 10, 1000), 7)]
    assert plan_dp_sgd(1000, sampling_rate=0.01, noise_multiplier=0.0, clip_norm=1.0, steps=7).ledger is None


# --- one place for field checks, one ledger normaliser ----------------------------------------------------------


@dataclasses.dataclass(frozen=True, repr=False)
class _BatchOfAFewEvent(Event):
    """An event written the way a new one is: fields only, no checking code of its own."""

    noise_multiplier: float
    batch_size: int
    dataset_size: int
    relation: str = dataclasses.field(default="add_remove", kw_only=True)


def test_a_new_event_gets_its_fields_checked_by_their_names():
    assert _BatchOfAFewEvent(2, 3, 10).noise_multiplier == 2.0                      # stored as checked (a float)
    assert isinstance(_BatchOfAFewEvent(2, 3, 10).noise_multiplier, float)
    with pytest.raises(ValueError, match="noise_multiplier"):
        _BatchOfAFewEvent(0.0, 3, 10)
    with pytest.raises(TypeError, match="batch_size"):
        _BatchOfAFewEvent(1.0, 2.5, 10)
    with pytest.raises(ValueError, match=r"batch_size \(11\) must not exceed dataset_size \(10\)"):
        _BatchOfAFewEvent(1.0, 11, 10)
    with pytest.raises(ValueError, match="relation must be one of"):
        _BatchOfAFewEvent(1.0, 3, 10, relation="swap")
    assert set(FIELD_CHECKS) >= {"noise_multiplier", "sampling_rate", "epsilon", "delta", "batch_size",
                                 "max_batch_size", "dataset_size", "relation"}


@pytest.mark.parametrize("history, expected", [
    (GaussianEvent(1.0), [(GaussianEvent(1.0), 1)]),
    ([GaussianEvent(1.0), (LaplaceEvent(0.5), 3)], [(GaussianEvent(1.0), 1), (LaplaceEvent(0.5), 3)]),
    ((), []),
])
def test_one_ledger_normaliser_serves_as_ledger_and_the_run_ledger(history, expected):
    from dpedu.accountants import RepeatAndSelectEvent, as_ledger

    assert ledger_pairs(history) == expected
    assert as_ledger(history) == expected
    if expected:
        assert RepeatAndSelectEvent(history, mean=2.0).run_ledger == tuple(expected)


@pytest.mark.parametrize("bad", [3, "GaussianEvent(1.0)", [(GaussianEvent(1.0),)], [1.0]])
def test_ledger_normaliser_refuses_by_the_callers_name(bad):
    from dpedu.accountants import RepeatAndSelectEvent, as_ledger

    with pytest.raises(TypeError, match="^history must"):
        as_ledger(bad)
    with pytest.raises(TypeError, match="^run_ledger must"):
        RepeatAndSelectEvent(bad, mean=2.0)
