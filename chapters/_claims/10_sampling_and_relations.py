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
assert all(check_claims(r).consistent for r in scheme_runs.values()), "'the four runs ... match their ledgers'"
assert audits[False].epsilon_lower > audits[False].upper_bounds["pld"] >= audits[True].epsilon_lower, \
    "'the white-box audit ... proving a lower bound on epsilon above the claimed upper bound' (not for correct code)"
from dpedu.accountants import ACCOUNTANT_NAMES as _NAMES
from dpedu.research.experiments.relations import scheme_events as _scheme_events

assert len(_NAMES) == 7 and set(_NAMES) - set(table_accountants) == {"advanced", "strong"}, \
    "'Five of the seven accountants are shown; the advanced and strong composition theorems are left out'"
assert _scheme_events(1.0, round(q * n), n, "add_remove")["truncated Poisson"].max_batch_size == 2 * round(q * n), \
    "'(the table puts it at 2m)'"
