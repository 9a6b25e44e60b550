"""Neighbouring relations (docs/math.md §22): events state them, accountants state and enforce them."""

import math

import numpy as np
import pytest

from dpedu.accountants import ACCOUNTANT_NAMES, UnsupportedEventError, make_accountant
from dpedu.accountants.pld.replace_one import replace_one_model
from dpedu.accountants.analysis.rdp_without_replacement import rdp_without_replacement
from dpedu.lab.audit.shuffle import shuffle_epsilon_lower_bound
from dpedu.ground.events import (
    EpsilonDeltaEvent,
    GaussianEvent,
    LaplaceEvent,
    SampledWithoutReplacementGaussianEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    TruncatedPoissonGaussianEvent,
    add_remove_equivalent,
    check_relation,
)
from dpedu.ground.events_allocation import BallsInBinsGaussianEvent
from dpedu.ground.gaussian import gaussian_epsilon_exact


def test_relation_is_validated_and_shown_only_when_not_default():
    assert repr(GaussianEvent(1.0)) == "GaussianEvent(noise_multiplier=1.0)"
    assert "relation='replace_one'" in repr(GaussianEvent(1.0, relation="replace_one"))
    with pytest.raises(ValueError, match="relation"):
        GaussianEvent(1.0, relation="swap")
    with pytest.raises(TypeError, match="relation"):
        check_relation(1)
    assert GaussianEvent(1.0) != GaussianEvent(1.0, relation="replace_one")


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
def test_full_batch_replace_one_is_the_gaussian_with_half_the_multiplier(name):
    replace = make_accountant(name).compose(GaussianEvent(2.0, relation="replace_one"), 3).get_epsilon(1e-5)
    assert replace == make_accountant(name).compose(GaussianEvent(1.0), 3).get_epsilon(1e-5)


def test_pld_full_batch_replace_one_is_the_exact_gaussian():
    eps = make_accountant("pld").compose(GaussianEvent(2.0, relation="replace_one"), 4).get_epsilon(1e-5)
    assert eps == pytest.approx(gaussian_epsilon_exact(1e-5, 1.0 / 2.0), rel=1e-9)  # z/2 / sqrt(4)


def test_laplace_replace_one_doubles_epsilon():
    assert add_remove_equivalent(LaplaceEvent(0.5, relation="replace_one")) == LaplaceEvent(1.0)
    assert make_accountant("sequential").compose(LaplaceEvent(0.5, relation="replace_one"), 2).get_epsilon(1e-5) \
        == pytest.approx(2.0)


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
def test_unsupported_pairs_are_refused_by_name_without_changing_state(name):
    acc = make_accountant(name)
    for event in (ShuffledBatchGaussianEvent(1.0, 6, 60),
                  ShuffledBatchGaussianEvent(1.0, 6, 60, relation="replace_one"),
                  *([] if name == "pld" else [TruncatedPoissonGaussianEvent(1.0, 0.1, 8, 60, relation="replace_one")]),
                  *([] if name in ("rdp", "pld") else [TruncatedPoissonGaussianEvent(1.0, 0.1, 8, 60)]),
                  SampledWithoutReplacementGaussianEvent(1.0, 6, 60)):
        with pytest.raises(UnsupportedEventError, match=type(event).__name__):
            acc.compose(event)
    assert acc.ledger == [] and acc.relation is None


def test_a_ledger_has_one_relation():
    acc = make_accountant("pld").compose(SubsampledGaussianEvent(1.0, 0.01, relation="replace_one"), 10)
    with pytest.raises(UnsupportedEventError, match="relation"):
        acc.compose(SubsampledGaussianEvent(1.0, 0.01))
    assert len(acc.ledger) == 1
    acc.compose(EpsilonDeltaEvent(0.1, relation="replace_one"))   # black-box guarantees keep their relation


def test_supported_relations_are_stated():
    rdp, pld = make_accountant("rdp"), make_accountant("pld")
    assert rdp.supported_relations(SampledWithoutReplacementGaussianEvent) == ("replace_one",)
    # zero-out: a Poisson-subsampled Gaussian's pair is add/remove's (docs/math.md §1.2)
    assert pld.supported_relations(SubsampledGaussianEvent) == ("add_remove", "replace_one", "zero_out")
    assert rdp.supported_relations(SubsampledGaussianEvent) == ("add_remove", "zero_out")
    assert pld.supported_relations(ShuffledBatchGaussianEvent) == ()


def test_without_replacement_at_full_batch_is_the_replace_one_gaussian():
    orders = np.array([2.0, 3.5, 10.0])
    assert np.allclose(rdp_without_replacement(3.0, 50, 50, orders), 2 * orders / 9.0)


def test_without_replacement_bound_grows_with_the_batch():
    orders = np.array([2.0, 4.0, 8.0])
    small = rdp_without_replacement(2.0, 10, 1000, orders)
    large = rdp_without_replacement(2.0, 100, 1000, orders)
    assert np.all(small < large) and np.all(small > 0)


def test_replace_one_pld_lies_between_add_remove_and_the_doubled_sensitivity():
    r = make_accountant("pld").compose(SubsampledGaussianEvent(1.0, 0.01, relation="replace_one"), 1000)
    a = make_accountant("pld").compose(SubsampledGaussianEvent(1.0, 0.01), 1000)
    h = make_accountant("pld").compose(SubsampledGaussianEvent(0.5, 0.01), 1000)
    assert a.get_epsilon(1e-5) < r.get_epsilon(1e-5) < h.get_epsilon(1e-5)
    low, high = r.epsilon_bracket(1e-5)
    assert low <= high and high - low < 1e-2 * high
    assert r.get_epsilon(1e-5) == pytest.approx(2.8434458, rel=3e-3)  # dp_accounting 0.4, REPLACE_ONE, 1e-4 grid


def test_replace_one_model_is_symmetric_and_inverts():
    model = replace_one_model(0.7, 0.05, 1e-15)
    x = np.linspace(-5, 5, 41)
    assert np.allclose(model.loss(-x), -model.loss(x))
    assert np.allclose(model.preimage(model.loss(x)), x, atol=1e-9)


def test_shuffle_lower_bound_is_below_the_exact_value_and_close_at_one_batch():
    # b = 1: every epoch is one full-batch Gaussian, so the exact epsilon is known
    exact = gaussian_epsilon_exact(1e-3, 0.7 / math.sqrt(4))
    low = shuffle_epsilon_lower_bound(0.7, batches_per_epoch=1, epochs=4, delta=1e-3, n_samples=100_000, rng=3)
    assert 0.9 * exact < low <= exact


def test_shuffle_lower_bound_never_exceeds_one_gaussian_step_per_epoch_and_is_seeded():
    kwargs = dict(batches_per_epoch=20, epochs=2, delta=1e-3, n_samples=50_000)
    a = shuffle_epsilon_lower_bound(0.4, rng=7, **kwargs)
    assert a == shuffle_epsilon_lower_bound(0.4, rng=7, **kwargs)
    assert 0 < a <= gaussian_epsilon_exact(1e-3, 0.4 / math.sqrt(2))
    with pytest.raises(TypeError, match="rng"):
        shuffle_epsilon_lower_bound(0.4, **kwargs)


def _renyi_of_replace_one_pair(z, gamma, alpha):
    """D_alpha of ((1-g)N(0,z^2) + g N(1,z^2), (1-g)N(0,z^2) + g N(-1,z^2)) by quadrature on a fine grid."""
    from scipy.special import logsumexp
    x = np.linspace(-1 - 40 * z, 1 + 40 * z, 400_001)
    def log_mix(shift):
        return np.logaddexp(np.log1p(-gamma) - x**2 / (2 * z * z), np.log(gamma) - (x - shift) ** 2 / (2 * z * z)) \
            - 0.5 * np.log(2 * np.pi * z * z)
    log_integrand = alpha * log_mix(1.0) + (1 - alpha) * log_mix(-1.0)
    return (logsumexp(log_integrand) + np.log(x[1] - x[0])) / (alpha - 1)


@pytest.mark.parametrize("z, m, n", [(1.0, 10, 100), (2.0, 600, 60_000), (4.0, 30, 100), (0.7, 1, 3)])
def test_without_replacement_bound_is_above_a_pair_of_neighbouring_datasets(z, m, n):
    # all other records with gradient 0, the replaced one +C in one dataset and -C in the other: the batch
    # holds it with probability m/n, so this pair's Renyi divergence lower-bounds the true curve (§22.3)
    orders = np.array([2.0, 3.0, 5.0, 8.0, 2.5])
    bound = rdp_without_replacement(z, m, n, orders)
    exact = np.array([_renyi_of_replace_one_pair(z, m / n, a) for a in orders])
    assert np.all(bound >= exact * (1 - 1e-9))


def test_without_replacement_order_two_by_hand():
    z, gamma = 1.5, 0.1
    e2 = 4.0 / z**2  # eps(2) = 2 * 2 / z^2 under replace-one
    expected = math.log1p(gamma**2 * min(4 * math.expm1(e2), 2 * math.exp(e2)))
    assert rdp_without_replacement(z, 10, 100, np.array([2.0]))[0] == pytest.approx(expected, rel=1e-12)


def test_replace_one_poisson_pld_is_below_the_without_replacement_rdp():
    # the PLD's pair is a pair of neighbouring datasets for sampling without replacement too (§22.3, §22.4)
    pld = make_accountant("pld").compose(SubsampledGaussianEvent(2.0, 0.01, relation="replace_one"), 1000)
    rdp = make_accountant("rdp").compose(SampledWithoutReplacementGaussianEvent(2.0, 600, 60_000,
                                                                                relation="replace_one"), 1000)
    assert pld.epsilon_bracket(1e-5)[0] < rdp.get_epsilon(1e-5)


def test_shuffle_replace_one_lower_bound_exceeds_the_poisson_upper_bound():
    # docs/math.md §22.6: other gradients -C, the record's +C replaced by -C; the fixed batch size gives it away
    from dpedu.lab.audit.shuffle import shuffle_gap
    upper, lower = shuffle_gap([1.0], batches_per_epoch=100, epochs=1, delta=1e-3, n_samples=50_000,
                               relation="replace_one", rng=11)
    assert lower[0] > 2 * upper[0]
    assert lower[0] <= gaussian_epsilon_exact(1e-3, 0.5)   # the pair's own upper bound: one step, height 2


def test_shuffle_relation_is_validated():
    with pytest.raises(ValueError, match="relation"):
        shuffle_epsilon_lower_bound(1.0, batches_per_epoch=2, epochs=1, delta=1e-3, n_samples=10, relation="x",
                                    rng=0)


@pytest.mark.parametrize("name", ["sequential", "advanced"])
def test_composition_accountants_amplify_without_replacement_like_poisson_at_half_the_multiplier(name):
    # §11.2: the same amplification formula with q = m/n, for the replace-one Gaussian (multiplier z / 2)
    wor = make_accountant(name).compose(SampledWithoutReplacementGaussianEvent(2.0, 50, 1000, relation="replace_one"),
                                        100)
    poisson = make_accountant(name).compose(SubsampledGaussianEvent(1.0, 0.05), 100)
    assert wor.get_epsilon(1e-5) == pytest.approx(poisson.get_epsilon(1e-5), rel=1e-12)
    assert wor.relation == "replace_one"


def test_relations_table_states_every_pair():
    from dpedu.lab.experiments.relations import format_relations_table, relations_table
    table = relations_table(steps=10, accountants=("rdp", "pld", "sequential"))
    assert len(table) == 7 * 3                                           # seven schemes, three relations
    assert set(table[("fixed batches", "add_remove")].values()) == {"not held"}   # adding a record moves the others
    assert table[("fixed batches", "zero_out")]["pld"] == pytest.approx(gaussian_epsilon_exact(1e-5, 1.0), rel=1e-9)
    assert table[("fixed batches", "replace_one")]["pld"] == pytest.approx(gaussian_epsilon_exact(1e-5, 0.5), rel=1e-9)
    for scheme in ("full batch", "Poisson"):                             # zero-out = add/remove for these: §1.2
        assert table[(scheme, "zero_out")] == table[(scheme, "add_remove")]
    for scheme in ("without replacement", "shuffled", "truncated Poisson", "balls-in-bins"):
        assert set(table[(scheme, "zero_out")].values()) <= {"refused", "not held"}
    add_remove = table[("balls-in-bins", "add_remove")]                  # random allocation by PLD: §22.9
    assert {add_remove["rdp"], add_remove["sequential"]} == {"refused"} == set(
        table[("balls-in-bins", "replace_one")].values())
    assert add_remove["pld"] == make_accountant("pld").compose(BallsInBinsGaussianEvent(1.0, 100), 1).get_epsilon(1e-5)
    for (scheme, _), row in table.items():
        if scheme == "shuffled" or (scheme, _) == ("truncated Poisson", "replace_one"):  # PLD: docs/math.md §22.7
            assert {v for k, v in row.items() if not (scheme == "truncated Poisson" and k == "pld")} == {"refused"}
    assert table[("Poisson", "replace_one")]["rdp"] == "refused"
    assert table[("full batch", "replace_one")]["pld"] == pytest.approx(
        gaussian_epsilon_exact(1e-5, 0.5 / math.sqrt(10)), rel=1e-9)
    assert "without replacement" in format_relations_table(table)


def test_the_balls_in_bins_row_is_an_estimate_beside_a_proven_bound():
    from dpedu.accountants.balls_in_bins import LABEL
    from dpedu.lab.experiments.relations import (balls_in_bins_note, balls_in_bins_row, format_relations_table,
                                                      relations_table)
    estimate = balls_in_bins_row(dataset_size=1000, batch_size=100, steps=25, delta=1e-4, n_samples=2000, rng=0)
    assert (estimate.batches_per_epoch, estimate.epochs) == (10, 3)        # b = n / m, ceil(T / b) epochs
    assert estimate.epsilon_upper_bound == make_accountant("pld").compose(BallsInBinsGaussianEvent(1.0, 10),
                                                                          3).get_epsilon(1e-4)
    note = balls_in_bins_note(estimate)
    assert LABEL in note and "proven upper bound" in note
    table = relations_table(dataset_size=1000, batch_size=100, steps=25, delta=1e-4, accountants=("rdp",))
    text = format_relations_table(table, notes={("balls-in-bins", "add_remove"): note})
    row = text.splitlines().index(next(line for line in text.splitlines() if line.startswith("balls-in-bins")))
    assert text.splitlines()[row + 1].strip().startswith("proven upper bound")


def _truncated_poisson_means(values, x, q, cap):
    """{mean: probability} of the truncated Poisson batch sum over the records ``values`` (+ ``x`` if not None)."""
    import itertools
    from collections import defaultdict
    records = list(values) + ([] if x is None else [x])
    law = defaultdict(float)
    for drawn in itertools.product((0, 1), repeat=len(records)):
        chosen = [v for v, d in zip(records, drawn) if d]
        weight = math.prod(q if d else 1 - q for d in drawn)
        if len(chosen) <= cap:
            law[round(sum(chosen), 9)] += weight
        else:
            subsets = list(itertools.combinations(chosen, cap))
            for subset in subsets:
                law[round(sum(subset), 9)] += weight / len(subsets)
    return law


@pytest.mark.parametrize("others_value", [-1.0, 0.0, 1.0])
def test_truncated_poisson_rdp_is_above_a_brute_force_pair(others_value):
    # 5 other records with gradient `others_value`, the differing one +1 (present or removed); enumerate every
    # sample and truncation, integrate the two Gaussian mixtures, compare both directions with the bound (§22.5)
    from dpedu.accountants.analysis.rdp_truncated_poisson import rdp_truncated_poisson
    z, q, cap = 0.8, 0.4, 2
    with_x = _truncated_poisson_means([others_value] * 5, 1.0, q, cap)
    without = _truncated_poisson_means([others_value] * 5, None, q, cap)
    grid = np.linspace(-12, 12, 24_001)

    def density(law):
        return sum(w * np.exp(-(grid - m) ** 2 / (2 * z * z)) for m, w in law.items()) / math.sqrt(2 * math.pi * z * z)

    p, r = density(with_x), density(without)
    for alpha in (2.0, 3.0, 6.0):
        bound = rdp_truncated_poisson(z, q, cap, 6, np.array([alpha]))[0]
        for a, b in ((p, r), (r, p)):
            exact = math.log(np.sum(a**alpha * b ** (1 - alpha)) * (grid[1] - grid[0])) / (alpha - 1)
            assert exact <= bound * (1 + 1e-9)


def test_truncated_poisson_without_cuts_is_poisson_and_replace_one_is_refused():
    from dpedu.accountants.analysis.rdp_truncated_poisson import rdp_truncated_poisson
    from dpedu.accountants.analysis.rdp_curves import rdp_sampled_gaussian
    orders = np.array([2.0, 3.0])  # Pr[cut] = Pr[Bin(50, 0.1) >= 50] = 1e-50 (high orders still feel it)
    assert np.allclose(rdp_truncated_poisson(1.0, 0.1, 50, 50, orders), rdp_sampled_gaussian(0.1, 1.0, orders),
                       rtol=1e-12, atol=0)
    with pytest.raises(UnsupportedEventError, match="add/remove"):
        make_accountant("rdp").compose(TruncatedPoissonGaussianEvent(1.0, 0.1, 8, 60, relation="replace_one"))


def test_supported_pairs_list_each_type_with_its_relations():
    pairs = make_accountant("rdp").supported_pairs()
    assert (SampledWithoutReplacementGaussianEvent, "replace_one") in pairs
    assert (SampledWithoutReplacementGaussianEvent, "add_remove") not in pairs
    assert (TruncatedPoissonGaussianEvent, "add_remove") in pairs
    assert all(relation in ("add_remove", "replace_one", "zero_out") for _, relation in pairs)
    assert (SubsampledGaussianEvent, "zero_out") in pairs                  # the Gaussian's zero-out = add/remove
    assert (SampledWithoutReplacementGaussianEvent, "zero_out") not in pairs


@pytest.mark.parametrize("z", [1.0, 2.0, 4.0])
def test_without_replacement_rdp_is_above_the_fixed_batch_lower_bound(z):
    # §22.3: other gradients -C, +C replaced by -C: the pair is the Poisson add/remove pair at z / 2
    rdp = make_accountant("rdp").compose(SampledWithoutReplacementGaussianEvent(z, 600, 60_000,
                                                                                relation="replace_one"), 1000)
    lower = make_accountant("pld").compose(SubsampledGaussianEvent(z / 2, 0.01), 1000).epsilon_bracket(1e-5)[0]
    assert lower < rdp.get_epsilon(1e-5)
