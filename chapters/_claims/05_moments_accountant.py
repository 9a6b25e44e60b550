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

# the privacy curve and the PLD bracket
_widths = [bracket[_d][1] - bracket[_d][0] for _d in (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, None)]
assert all(_a > _b for _a, _b in zip(_widths, _widths[1:])), "'The bracket ... closes as the grid is refined'"
assert bracket[1e-2][0] == 0.0, "'On the coarsest grids the lower bound says nothing (eps = 0)'"
assert bracket[1e-2][1] > 1.5 * bracket[None][1], "'and the upper bound is loose'"
_ratio = (bracket[1e-3][1] - bracket[1e-3][0]) / (bracket[1e-4][1] - bracket[1e-4][0])
assert 50 <= _ratio <= 200, "'From 1e-3 to 1e-4 the width shrinks about a hundredfold'"
assert bracket[None][1] - bracket[None][0] < 1e-3, "'The default grid ... leaves a bracket narrower than 1e-3'"
_labels = [_line.get_label() for _line in curve_ax.lines]
assert "PLD optimistic (lower bound)" in _labels and "PLD (pessimistic: the guarantee)" in _labels, \
    "'The PLD accountant draws two curves'"
