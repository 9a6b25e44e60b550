# Claims of chapter 0's prose (run in the chapter's kernel after it executed; see README.md).
import math as _math

import numpy as _np

_base = int(_np.sum(y_train == 1))
assert all(int(_np.sum(_np.append(y_train, y_test[_i]) == 1)) - _base == (y_test[_i] == 1)
           for _i in range(0, y_test.size, 997)), "'the two counts differ by exactly her label', for every Alice"
assert monday > 1000, "'both counts are in the thousands'"
assert round(100 * best_guess[1.0]) == 73, "'epsilon = 1 lets an attacker ... reach at most about 73 %'"
assert best_guess[5.0] > 0.99, "'epsilon = 5 allows more than 99 %'"
assert abs(_math.log(p_truth / (1 - p_truth)) - _math.log(3)) < 1e-12, "'With p = 3/4 the ratio is 3'"
_bound = _math.exp(epsilon) / (1 + _math.exp(epsilon))
_se = _math.sqrt(0.25 / trials)
assert success <= _bound + 3 * _se, f"the measured success {success} respects the bound {_bound}"
assert 0.5 < success < 0.65, "'barely better than a coin'"
assert abs(_math.sqrt(2) / epsilon - 2.8) < 0.05, "'the noise has standard deviation sqrt 2 / epsilon, about 2.8'"
assert rates[1] < rates[10] < rates[100] < rates[400] and rates[400] > 0.95, "'With 400 releases the attacker is right nearly always'"
