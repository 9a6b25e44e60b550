# Claims of chapter 5's prose (run in the chapter's kernel after it executed; see README.md).
import math as _math

import numpy as _np

assert round(curves.epsilons["strong_paper"][at[100]], 2) == 9.34, "'9.34 at 100 epochs' (paper recipe)"
assert round(curves.epsilons["strong_paper"][at[400]], 2) == 24.21, "'24.21 at 400' (paper recipe)"
assert round(curves.epsilons["moments"][at[100]], 2) == 1.26, "'Abadi et al. report 1.26' (moments, 100 epochs)"
assert round(paper.epsilon0, 2) == 1.46, "'it is used at eps0 ~ 1.46'"
assert paper.epsilon0 > exact_eps0, "'it happens to over-estimate the exact eps0'"
_ratio = _math.log1p(q * _math.expm1(paper.epsilon0)) / (q * paper.epsilon0)
assert 2.1 <= _ratio <= 2.3, "'about 2.2 times q eps0'"
for _e in (100, 400):
    _r = curves.epsilons["strong"][at[_e]] / curves.epsilons["strong_paper"][at[_e]]
    assert 1.6 <= _r <= 2.3, "'Fixing them gives the valid curve, about twice as high'"
assert round(_math.log(1 / delta) / 32, 2) == 0.36, "'ln(10^5)/32 ~ 0.36'"
assert _np.all(curves.epsilons["rdp"] <= curves.epsilons["moments"]), "'so it is never looser'"
assert abs(anchor["moments"] - 4.0) < 0.05, "'calibrating on the moments accountant for epsilon = 1.26 should give back z = 4'"
