# Claims of chapter 10's prose (run in the chapter's kernel after it executed; see README.md).
import numpy as _np

_sizes = {s: r.details.batch_sizes for s, r in scheme_runs.items()}
assert _sizes["poisson"].std() > 5, "'Only Poisson batches vary like Binomial(n, q)'"
assert all(_np.all(_sizes[s] == round(q * n)) for s in ("fixed", "shuffle")), "'fixed and shuffled batches ... m'"
assert _sizes["truncated_poisson"].max() == cap and _np.sum(_sizes["truncated_poisson"] == cap) > 10, \
    "'the truncated ones pile up at the cap'"
_numbers = {key: {a: v for a, v in row.items() if v != "refused"} for key, row in eps_table.items()}
assert set(_numbers[("Poisson", "add_remove")]) == set(table_accountants) - {"zcdp"}, \
    "'Poisson, add/remove ... every accountant that handles sampling covers it; zCDP refuses'"
assert {"rdp", "pld"} <= set(_numbers[("truncated Poisson", "add_remove")]) \
    and set(_numbers[("truncated Poisson", "replace_one")]) == {"pld"}, "'covered by the PLD under both relations'"
_poisson_rdp = eps_table[("Poisson", "add_remove")]["rdp"]
assert abs(eps_table[("truncated Poisson", "add_remove")]["rdp"] / _poisson_rdp - 1) < 0.01 \
    and abs(eps_table[("truncated Poisson", "add_remove")]["pld"] / eps_table[("Poisson", "add_remove")]["pld"] - 1) < 0.01, \
    "'with a cap rarely reached ... it costs what Poisson sampling costs'"
assert not _numbers[("without replacement", "add_remove")] and "rdp" in _numbers[("without replacement",
                                                                                   "replace_one")]
assert eps_table[("without replacement", "replace_one")]["rdp"] > eps_table[("Poisson", "replace_one")]["pld"] \
    > eps_table[("Poisson", "add_remove")]["pld"], "'there the number is larger' / 'Poisson ... replace-one costs more'"
assert 3 * eps_table[("Poisson", "replace_one")]["pld"] < fixed_lower < eps_table[("without replacement",
                                                                                  "replace_one")]["rdp"], \
    "'the lower bound printed under the table, itself several times the Poisson numbers' (and below the RDP bound)"
assert not _numbers[("shuffled", "add_remove")] and not _numbers[("shuffled", "replace_one")], \
    "'Shuffled batches are refused by every accountant under both relations'"
_zs = _np.asarray(gap_zs)
_up, _low = gap["add_remove"]
assert _np.all(_low < _up) and _np.all(_low > 0.5 * _up), "'under add/remove ... just below the Poisson number'"
_up, _low = gap["replace_one"]
assert _np.all(_low[_zs <= 2] > _up[_zs <= 2]), "'Under replace-one it lies above the Poisson upper bound'"
assert _np.all(_low[_zs <= 1] > 3 * _up[_zs <= 1]), "'by a factor of several at z <= 1'"
assert round(full_eps["add_remove"], 1) == 14.1 and round(full_eps["replace_one"], 1) == 35.1, full_eps
for _bug in CLAIM_BUGS:
    assert not claim_hunt(_bug, rng=0).consistent and claim_hunt(_bug, correct=True, rng=0).consistent, _bug
assert all(check_claims(r).consistent for r in scheme_runs.values()), "'the five runs ... match their ledgers'"
assert audits[False].epsilon_lower > audits[False].upper_bounds["pld"] >= audits[True].epsilon_lower, \
    "'the white-box audit ... proving a lower bound on epsilon above the claimed upper bound' (not for correct code)"
from dpedu.accountants import ACCOUNTANT_NAMES as _NAMES
from dpedu.lab.experiments.relations import scheme_events as _scheme_events

assert len(_NAMES) == 7 and set(_NAMES) - set(table_accountants) == {"advanced", "strong"}, \
    "'Five of the seven accountants are shown; the advanced and strong composition theorems are left out'"
assert _scheme_events(1.0, round(q * n), n, "add_remove")["truncated Poisson"].max_batch_size == 2 * round(q * n), \
    "'(the table puts it at 2m)'"

# balls-in-bins (docs/math.md §22.8)
assert _sizes["balls_in_bins"].std() > 5 and abs(_sizes["balls_in_bins"].std() / _sizes["poisson"].std() - 1) < 0.5, \
    "'balls-in-bins batches [vary] like Binomial(n, 1/b), about as much'"
_bib = eps_table[("balls-in-bins", "add_remove")]
assert set(_numbers[("balls-in-bins", "add_remove")]) == {"pld"} and set(
    eps_table[("balls-in-bins", "replace_one")].values()) == {"refused"}, \
    "'Balls-in-bins batches are covered by the PLD accountant alone, under add/remove' / 'every accountant refuses'"
assert "not a guarantee" in bib_row.label and (bib_row.batches_per_epoch, bib_row.epochs) == (100, 10)
assert bib_row.epsilon_upper_bound == _bib["pld"], "'Under the row is its check'"
assert 0.85 * eps_table[("Poisson", "add_remove")]["pld"] < _bib["pld"] < eps_table[("Poisson", "add_remove")]["pld"], \
    "'it lands a little below the Poisson number at the same mean batch size'"
assert bib_row.epsilon_lower <= _bib["pld"] and bib_row.delta_upper <= 1e-5, \
    "'raise it until ... upper confidence limit is at most 1e-5; its lower confidence end must lie below the proven " \
    "number, and does'"
_bib_up = gap["add_remove"][0]
assert _np.all(_np.abs(bib_gap / _bib_up - 1) < 0.35), "'their estimate stays near the Poisson number at every z'"
from dpedu.accountants.balls_in_bins import balls_in_bins_upper_bound as _bib_bound

assert _np.all(bib_gap < [_bib_bound(z, 1, 1e-3) for z in gap_zs]) and _np.allclose(
    [_bib_bound(z, 1, 1e-3) for z in gap_zs], [gaussian_epsilon_exact(1e-3, z) for z in gap_zs]), \
    "'below the grey line (one Gaussian release per epoch, balls-in-bins' un-amplified bound)'"
_poisson_z1 = gap["add_remove"][0][list(gap_zs).index(1.0)]
assert bib_proven < _poisson_z1 and abs(bib_proven / _poisson_z1 - 1) < 0.25, \
    "'They train like shuffling and cost about what Poisson sampling costs, and that is proven'"
# pitfalls from real code (docs/math.md §27)
assert len(pitfall_rows) == 5 and all(p.caught and not c.caught for p, c in pitfall_rows.values()), \
    "'plants each one beside the correct code and runs the check that catches it'"
assert "UNDER-REPORTS" in pitfall_rows["adaptive_clipping_gradient_multiplier"][0].report \
    and "UNDER-REPORTS" in pitfall_rows["replace_one_sensitivity_C"][0].report, "'... under-report'"
assert "OVER-NOISED" in pitfall_rows["sum_noise_added_to_mean"][0].report, "'... is over-noised'"
assert "accumulation_at_microbatch_rate" in CLAIM_BUGS, "'The accumulation mistake is the one check_claims refused'"

# fixed batches, zero-out and literal neighbours (docs/math.md §1.2, §20.7, §22.10)
assert set(eps_table[("fixed batches", "add_remove")].values()) == {"not held"} and all(
    isinstance(v, float) for v in eps_table[("fixed batches", "zero_out")].values()), \
    "'[fixed batches] the accountants price it; but under add/remove the row reads \"not held\"'"
assert not _numbers[("shuffled", "zero_out")], "'Shuffled batches are refused by every accountant under every relation'"
assert eps_table[("Poisson", "zero_out")] == eps_table[("Poisson", "add_remove")], \
    "'for a Gaussian or Poisson step ... the accountants price it alike (the table's zero-out rows)'"
assert all(_r.holds for _r in neighbour_rows), "'Every claim holds.'"
_rows = {(_r.learner, _r.relation): _r for _r in neighbour_rows}
for _key in (("DP-SGD, poisson", "add_remove"), ("noisy GD", "add_remove"), ("DP-SGD, cyclic", "zero_out"),
             ("DP-SGD, balls_in_bins", "add_remove")):
    assert _rows[_key].measured > 0.9 * _rows[_key].delta, f"'the measured δ sits at the claim': {_key}"
for _key in (("DP-SGD, fixed", "replace_one"), ("DP-SGD, truncated_poisson", "add_remove"),
             ("output perturbation", "replace_one"),
             ("objective perturbation", "replace_one")):
    assert _rows[_key].upper < 0.1 * _rows[_key].delta, f"'loose ... far below the claim': {_key}"
assert abs(d1_rows[0].epsilon - 4.377) < 1e-3 and not d1_rows[0].holds and 100 < d1_rows[0].lower / 1e-5 < 1000, \
    "'the ledger's ε(10⁻⁵) = 4.377 ... the measured δ is hundreds of times the claimed 10⁻⁵'"
assert d1_rows[1].holds and d1_rows[2].holds, "'Under zero-out and replace-one the claims hold at 10⁻⁵'"
assert removal_movement("dp_sgd") == (2.0, 1.0), "'one noise-free step ... moves by 2C, while the noisy sums move by C'"
assert not literal_row.holds, "'the literal pair exceeds its claim'"
