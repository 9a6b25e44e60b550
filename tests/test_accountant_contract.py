"""The contract every accountant keeps, written once and run over all of them (dpedu/accountants/*).

Whatever its theorem, an accountant's epsilon never decreases with more steps, a larger sampling rate or
an extra event, and never increases with more noise; ``get_delta`` answers a number with a float and an
array with an array of the same values; a refused event leaves the ledger as it was; an edge-of-grid
warning points at the caller's line.
"""

import itertools
import math
import warnings

import numpy as np
import pytest

from dpedu.accountants import (
    ACCOUNTANT_NAMES,
    ConversionUnavailableError,
    EpsilonDeltaEvent,
    GaussianEvent,
    LaplaceEvent,
    OrderGridEdgeWarning,
    SubsampledGaussianEvent,
    UnsupportedEventError,
    make_accountant,
)

DELTA = 1e-5


def epsilon(name, ledger, delta=DELTA):
    accountant = make_accountant(name)
    for event, count in ledger:
        accountant.compose(event, count)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridEdgeWarning)
        return accountant.get_epsilon(delta)


def supports(name, event):
    return make_accountant(name).supports(event)


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
@pytest.mark.parametrize("z", [0.5, 0.7, 1.0, 4.0])
def test_monotone_in_steps_sampling_rate_and_noise(name, z):
    if not supports(name, SubsampledGaussianEvent(z, 0.01)):
        pytest.skip(f"{name} has no subsampling theorem")

    def eps(noise, q, steps):
        return epsilon(name, [(SubsampledGaussianEvent(noise, q), steps)])

    by_steps = [eps(z, 0.01, t) for t in (1, 10, 100, 1000, 10_000)]
    by_rate = [eps(z, q, 100) for q in (1e-4, 1e-3, 0.01, 0.1, 1.0)]
    by_noise = [eps(z * f, 0.01, 100) for f in (1.0, 1.5, 2.0, 4.0)]
    assert np.all(np.diff(by_steps) >= 0)
    assert np.all(np.diff(by_rate) >= 0)
    assert np.all(np.diff(by_noise) <= 0)


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
def test_monotone_for_gaussian_releases(name):
    by_steps = [epsilon(name, [(GaussianEvent(2.0), t)]) for t in (1, 2, 10, 100)]
    by_noise = [epsilon(name, [(GaussianEvent(z), 10)]) for z in (0.5, 1.0, 2.0, 8.0)]
    by_delta = [epsilon(name, [(GaussianEvent(2.0), 10)], d) for d in (1e-9, 1e-6, 1e-3)]
    assert np.all(np.diff(by_steps) >= 0) and np.all(np.diff(by_noise) <= 0) and np.all(np.diff(by_delta) <= 0)


EXTRA_EVENTS = [LaplaceEvent(0.01), EpsilonDeltaEvent(0.05), GaussianEvent(30.0), SubsampledGaussianEvent(5.0, 0.001)]


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
@pytest.mark.parametrize("extra", EXTRA_EVENTS, ids=repr)
def test_an_extra_event_never_lowers_epsilon(name, extra):
    base = SubsampledGaussianEvent(1.0, 0.02) if supports(name, SubsampledGaussianEvent(1.0, 0.02)) else GaussianEvent(3.0)
    if not supports(name, extra):
        pytest.skip(f"{name} refuses {extra!r}")
    for steps in (1, 300):
        assert epsilon(name, [(base, steps), (extra, 1)]) >= epsilon(name, [(base, steps)])


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
def test_get_delta_scalar_and_array_agree(name):
    accountant = make_accountant(name).compose(GaussianEvent(2.0), 4)
    grid = np.array([0.5, 1.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridEdgeWarning)
        try:
            deltas = accountant.get_delta(grid)
        except ConversionUnavailableError:
            pytest.skip(f"{name} gives no epsilon -> delta conversion")
        singles = [accountant.get_delta(float(e)) for e in grid]
    assert isinstance(deltas, np.ndarray) and deltas.shape == (3,)
    assert all(isinstance(d, float) for d in singles)
    assert np.array_equal(deltas, singles) and np.all(np.diff(deltas) <= 0)
    assert make_accountant(name).get_delta(1.0) == 0.0
    assert np.array_equal(make_accountant(name).get_delta(grid), np.zeros(3))


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
def test_a_refused_event_changes_nothing(name):
    accountant = make_accountant(name).compose(GaussianEvent(2.0), 3)
    before = list(accountant.ledger)
    for bad in (EpsilonDeltaEvent(1.0, 1e-6), "not an event"):
        if isinstance(bad, str) or not accountant.supports(bad):
            with pytest.raises((UnsupportedEventError, TypeError)):
                accountant.compose(bad)
    with pytest.raises(ValueError, match="count"):
        accountant.compose(GaussianEvent(2.0), 0)
    assert accountant.ledger == before


@pytest.mark.parametrize("name, kwargs", [("rdp", {"orders": [2, 3, 4]}), ("moments", {})])
@pytest.mark.parametrize("query", ["get_epsilon", "get_delta", "epsilon_and_order"])
def test_edge_warning_points_at_the_caller(name, kwargs, query):
    accountant = make_accountant(name, **kwargs).compose(SubsampledGaussianEvent(4.0, 0.01), 1)
    call = {"get_epsilon": lambda: accountant.get_epsilon(DELTA),
            "get_delta": lambda: accountant.get_delta(3.0),
            "epsilon_and_order": lambda: getattr(accountant, "get_epsilon_and_order", None)
            and accountant.get_epsilon_and_order(DELTA)
            or accountant.get_epsilon_and_moment_order(DELTA)}[query]
    with pytest.warns(OrderGridEdgeWarning) as record:
        call()
    assert record[0].filename == __file__


def test_moments_is_rdp_on_integer_orders_with_the_classic_conversion():
    # alpha(lambda) = lambda * eps_RDP(lambda + 1): the two accountants answer the same number
    for z, q, steps in itertools.product((0.8, 4.0), (0.001, 0.05), (1, 1000)):
        event = SubsampledGaussianEvent(z, q)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OrderGridEdgeWarning)
            moments = make_accountant("moments").compose(event, steps).get_epsilon(DELTA)
            rdp = make_accountant("rdp", orders=np.arange(2, 34), conversion="classic").compose(event, steps)
            assert math.isclose(moments, rdp.get_epsilon(DELTA), rel_tol=1e-9)
