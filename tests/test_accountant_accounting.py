"""dpedu.accountants.account / Accounting / compare, and the event helpers every caller shares."""

import math
import warnings

import pytest

from dpedu.accountants import (
    ACCOUNTANT_NAMES,
    Accounting,
    Comparison,
    EpsilonDeltaEvent,
    GaussianEvent,
    LaplaceEvent,
    OrderGridEdgeWarning,
    SubsampledGaussianEvent,
    UnsupportedEventError,
    account,
    as_ledger,
    compare,
    make_accountant,
)
from dpedu.ground.events import MIN_EVENT_NOISE_MULTIPLIER

ABADI = [(SubsampledGaussianEvent(4.0, 0.01), 10_000)]


@pytest.mark.parametrize("name", ["sequential", "moments", "rdp", "zcdp"])
def test_account_equals_a_fresh_accountant(name):
    ledger = [(GaussianEvent(3.0), 50), (LaplaceEvent(0.1), 2)]
    acc = make_accountant(name)
    for event, count in ledger:
        acc.compose(event, count)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridEdgeWarning)
        expected = acc.get_epsilon(1e-5)
    result = account(ledger, name, delta=1e-5)
    assert isinstance(result, Accounting)
    assert result.accountant == name and result.delta == 1e-5 and result.epsilon == expected and result.applies


def test_account_does_not_touch_an_accountant_it_is_given_a_ledger_of():
    acc = make_accountant("rdp").compose(GaussianEvent(2.0), 3)
    account(acc, "rdp", delta=1e-5)
    assert acc.ledger == [(GaussianEvent(2.0), 3)]


def test_unsupported_event_is_nan_with_the_reason_or_raises_when_strict():
    result = account(ABADI, "zcdp", delta=1e-5)
    assert math.isnan(result.epsilon) and not result.applies
    assert "amplification" in result.note
    with pytest.raises(UnsupportedEventError, match="amplification"):
        account(ABADI, "zcdp", delta=1e-5, strict=True)


def test_no_epsilon_at_this_delta_is_nan_or_raises_when_strict():
    ledger = [(EpsilonDeltaEvent(0.1, 1e-3), 10)]          # the ledger itself spends delta = 1e-2
    result = account(ledger, "sequential", delta=1e-5)
    assert math.isnan(result.epsilon) and result.note.startswith("no epsilon at this delta")
    with pytest.raises(ValueError, match="delta"):
        account(ledger, "sequential", delta=1e-5, strict=True)


def test_bad_input_raises_even_when_not_strict():
    with pytest.raises(ValueError, match="count"):
        account([(GaussianEvent(1.0), 0)], "rdp", delta=1e-5)
    with pytest.raises(TypeError, match="strict"):
        account(ABADI, "rdp", delta=1e-5, strict="yes")
    with pytest.raises(TypeError, match="accountant_options"):
        account(ABADI, "rdp", delta=1e-5, accountant_options=[1])
    with pytest.raises(TypeError, match="accountant"):
        account(ABADI, make_accountant("rdp"), delta=1e-5)


def test_caveat_comes_first_and_options_reach_the_accountant():
    paper = account(ABADI, "strong", delta=1e-5, accountant_options={"recipe": "paper"})
    assert round(paper.epsilon, 2) == 9.34 and "NOT a valid bound" in paper.notes[0]
    assert not account(ABADI, "strong", delta=1e-5).notes


def test_order_grid_warnings_become_notes_and_can_be_reissued():
    ledger = [(GaussianEvent(1000.0), 1)]                   # best order beyond the default grid's largest
    with warnings.catch_warnings():
        warnings.simplefilter("error")                       # nothing is printed while accounting
        result = account(ledger, "rdp", delta=1e-5)
    assert any("largest" in note for note in result.notes)
    assert all(isinstance(w, OrderGridEdgeWarning) for w in result.warnings) and result.warnings
    with pytest.warns(OrderGridEdgeWarning):
        result.reissue_warnings()


def test_compare_is_account_for_every_name():
    table = compare(ABADI, delta=1e-5)
    assert isinstance(table, Comparison) and tuple(table) == ACCOUNTANT_NAMES
    for name in ("moments", "rdp", "zcdp"):
        single = account(ABADI, name, delta=1e-5)
        assert table.accountings[name] == single
        assert (math.isnan(table[name]) and math.isnan(single.epsilon)) or table[name] == single.epsilon
        assert table.notes.get(name, "") == single.note


def test_the_printed_comparison_fits_its_width():
    """A long note (zCDP refusing a subsampled Gaussian, a theorem's name) wraps under itself, every word kept."""
    table = compare(ABADI, delta=1e-5)
    lines = str(table).splitlines()
    assert max(len(line) for line in lines) <= Comparison.WIDTH
    assert " ".join(table.notes["zcdp"].split()) in " ".join(str(table).split())
    row = next(i for i, line in enumerate(lines) if line.startswith("zcdp "))
    start = lines[row].index(table.notes["zcdp"][:10])      # where the note begins
    assert lines[row + 1][:start].strip() == "" and lines[row + 1][start] != " "   # continued under itself


def test_bad_histories_and_names_are_refused_by_name():
    with pytest.raises(TypeError, match="history"):
        compare(3, 1e-5)
    with pytest.raises(TypeError, match="history"):
        as_ledger(2.5)
    with pytest.raises(TypeError, match="accountant"):
        make_accountant(["rdp"])
    with pytest.raises(TypeError, match="accountants"):
        compare(ABADI, 1e-5, accountants="rdp")


def test_the_smallest_noise_multiplier_is_accounted_as_a_huge_epsilon():
    for name in ("sequential", "moments", "rdp"):
        epsilon = account([(SubsampledGaussianEvent(MIN_EVENT_NOISE_MULTIPLIER, 0.01), 10)], name, delta=1e-5).epsilon
        assert epsilon > 1e90


def test_zcdp_of_a_huge_noise_multiplier_does_not_overflow():
    assert 0.0 <= make_accountant("zcdp").compose(GaussianEvent(1e200), 3).get_epsilon(1e-5) < 1e-150
