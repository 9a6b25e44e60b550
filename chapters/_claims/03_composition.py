# Claims of chapter 3's prose (run in the chapter's kernel after it executed; see README.md).
import numpy as _np

_k = next(k for k in range(1, 1000) if advanced_composition(0.1, 0.0, k, 1e-5)[0] < 0.1 * k)
assert 28 <= _k <= 31, f"'For epsilon = 0.1 and delta' = 1e-5 that needs more than about 29 steps': {_k}"
assert advanced_composition(1.0, 0.0, 500, 1e-5)[0] > 500, "'k = 500 steps of epsilon = 1, gives more than the 500'"
assert round(table["rdp"], 2) == 0.32 or round(table["rdp"], 2) == 0.33, \
    f"'a total epsilon of about 0.33 by RDP instead of 1.1': {table['rdp']}"
assert table["pld"] < table["rdp"] and table["pld"] > 0.8 * table["rdp"], "'PLD ... sits just below RDP'"
assert 90 <= last["sequential"] <= 110, "'After 1000 iterations sequential composition certifies epsilon ~ 100'"
assert all(last[name] < 5 for name in ("rdp", "zcdp", "pld")), "'RDP, zCDP and PLD certify a few units'"
assert curves["sequential"][0] < curves["rdp"][0], "'At k = 1 sequential composition is *better* than RDP'"
_zs = [dp.calibrate.noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sampling_rate=1.0, steps=100,
                                     accountant=name) for name in ("sequential", "rdp")]
assert 8.5 <= _zs[0] / _zs[1] <= 9.5, "'at k = 100 RDP already needs about 9 times less noise'"
