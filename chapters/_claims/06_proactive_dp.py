# Claims of chapter 6's prose (run in the chapter's kernel after it executed; see README.md).
import math as _math

import numpy as _np

_z = {e: proactive.proactive_noise_multiplier(e, 1e-5) for e in (0.1, 0.4)}
assert 1.9 < _z[0.1] / _z[0.4] < 2.1, "'z grows like 1/sqrt(epsilon)'"
assert alpha_bound > alpha_exact, "'the leading-order bound really is above the exact log-moment'"
_d_bound, _d_exact = _math.exp(alpha_bound - lam * eps), _math.exp(alpha_exact - lam * eps)
assert _d_bound <= delta and 100 <= _d_bound / _d_exact < 1000, \
    "'the tail bound lands below delta = 1/N. The exact moments give a delta hundreds of times smaller'"
_p60 = proactive.plan(epsilon=0.5, dataset_size=60_000, epochs=5)
assert all(v <= 0.5 for v in _p60.accountant_epsilons.values()), "'every accountant certifies at most 0.5'"
for _a in ("rdp", "pld"):
    assert 0.4 <= _p60.accountant_epsilons[_a] / 0.5 <= 0.6, "'RDP and PLD certify about half of it'"
    assert 0.35 <= 1 - _p60.calibrated_noise_multipliers[_a] / _p60.noise_multiplier <= 0.5, \
        "'would have reached epsilon = 0.5 with roughly 40 % less noise'"
assert quarter.accountant_epsilons["rdp"] > 0.5 and quarter.accountant_epsilons["pld"] > 0.5, \
    "'Now RDP *and* PLD ... certify more than 0.5'"
assert low > 0.5, "'the lower end of its discretisation bracket ... is also above 0.5'"
assert exact > 0.5, "'one full-batch release ... exact epsilon > 0.5'"
_last = {name: v[-1] for name, v in eps_by.items()}
_admissible = T_grid >= 2 * k**2 / 0.5
for _name, _values in eps_by.items():
    _v = _np.asarray(_values)[_admissible]
    assert _np.all(_np.diff(_v) < 0) and _v[0] < 0.5, \
        f"'To its right the tight epsilon keeps falling as T grows ... already well above what the tight accountants need' ({_name})"
assert z > max(_np.asarray(z_rdp)[_admissible]), "'at the smallest admissible T [the closed-form z] is already well above what the tight accountants need'"
# the table: RDP/PLD within budget, a smaller fraction for smaller epsilon; moments above its floor only
for _e, _p in plans.items():
    for _a in ("rdp", "pld"):
        assert _p.accountant_epsilons[_a] <= _e, f"'RDP and PLD certify a fraction of the budget' (eps {_e})"
    assert (_p.accountant_epsilons["moments"] > _e) == (_e < moments_floor), \
        f"'The moments column is *above* the budget wherever the budget is below ... floor' (eps {_e})"
    assert wide_orders[_e] <= _e, f"'the same accountant with orders up to 512 ... is within every budget' (eps {_e})"
_fr = [plans[_e].accountant_epsilons["rdp"] / _e for _e in sorted(plans)]
assert _fr == sorted(_fr), "'a smaller fraction for smaller epsilon'"
assert round(moments_floor, 3) == 0.322, "'the moments accountant's floor ln(N)/32 = 0.322'"
assert 0.25 in plans and 0.25 < moments_floor and round(plans[0.25].noise_multiplier ** 2) == 85, \
    "'the moment of order lambda = z^2 (about 85 at epsilon = 0.25)'"
assert 1400 < plan.expected_batch_size < 1600, "'about 1 500 examples per batch'"
assert acc_pro["rdp"] <= 0.5 and acc_pro["pld"] <= 0.5 and spent["pld"] > 0.5, \
    "'The conservative pro-active run still meets epsilon = 0.5 at delta = 1e-8; the calibrated run ... does not'"
_means = _np.array(by_k).mean(axis=1)
assert _means[-1] > _means[0], "'On Adult the extra updates win — accuracy rises with k'"
assert _np.all(_np.diff(noise_per_clip) > 0), "'the noise on the averaged gradient growing in proportion to k'"
