# Claims of chapter 4's prose (run in the chapter's kernel after it executed; see README.md).
import numpy as _np
from sklearn.linear_model import LogisticRegression as _LR

_gap = dict(zip(epsilons, baseline - _np.mean(table_acc, axis=1)))
assert all(g < 0.005 for e, g in _gap.items() if e >= 1), \
    f"'From about epsilon = 1 on, the noise costs almost nothing here': {_gap}"
assert _gap[min(epsilons)] > 0.01, "'At the smallest budgets the noise does cost accuracy'"
_sk = _LR(C=_np.inf, max_iter=5000).fit(X_train, y_train).score(X_test, y_test)
assert 0.005 <= _sk - baseline <= 0.02, \
    f"'a fully converged non-private model, chapter 1, is about one point better still': {_sk} vs {baseline}"
_acc = {label: logistic.accuracy(r.theta, X_test, y_test) for label, r in runs.items()}
assert _acc["learning rate 64"] < _acc["learning rate 4"], "'too large, and the noise in every step ... makes theta wander'"
