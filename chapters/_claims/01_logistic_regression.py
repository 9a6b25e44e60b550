# Claims of chapter 1's prose (run in the chapter's kernel after it executed; see README.md).
import math as _math

import numpy as _np

assert round(100 * majority_floor, 2) == 75.43, \
    f"'Predicting \"<= 50K\" for everyone is already right on 75.43 % of the test rows': {majority_floor:.4%}"
assert _np.linalg.norm(X_train, axis=1).max() <= _math.sqrt(14), "'every row has norm at most sqrt(14)'"
assert _math.log(_np.finfo(float).max) < 710, "'e^{710} is larger than the largest float64'"
_max_norm = _np.linalg.norm(X_train, axis=1).max()
assert round(_max_norm, 3) == 3.286 and round(8 / _max_norm**2, 2) == 0.74, \
    f"'2/L = 8/max||x||^2 ... 8/3.286^2 ~ 0.74 on Adult': max norm {_max_norm:.3f}, 2/L = {8 / _max_norm**2:.3f}"
assert round(8 / 14, 2) == 0.57, "'8/14 ~ 0.57 from the sqrt(14) bound'"
_final = {label: run.losses[-1] for label, run in runs.items()}
assert min(_final, key=_final.get) == "learning rate 1", \
    f"'Learning rate 1 ... still works here (its loss is the lowest of the three)': final losses {_final}"
_l4 = _np.asarray(runs["learning rate 4"].losses)
assert _np.any(_np.diff(_l4) > 0) and max(_final, key=_final.get) == "learning rate 4", \
    "'while 4 overshoots: its loss goes up and down and ends highest'"
assert logistic.accuracy(runs["learning rate 1"].theta, X_test, y_test) > logistic.accuracy(book.theta, X_test, y_test), \
    "'with more iterations the same loop keeps improving'"
