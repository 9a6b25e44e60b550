# Claims of chapter 2's prose (run in the chapter's kernel after it executed; see README.md).
import numpy as _np

assert round(row_norms.min(), 2) == 2.83 and round(row_norms.max(), 2) == 3.29, \
    "'Every row has norm between 2.83 and 3.29'"
_g0 = _np.linalg.norm(logistic.per_example_gradients(_np.zeros(d), X_train, y_train), axis=1)
assert _g0.max() < 2 and round(_g0.max(), 2) == 1.64 and _g0.min() > 1, \
    "'Gradient clipping at C = 2 touches no gradient at theta = 0 (their norms ||x||/2 are at most 1.64) ... " \
    "at C = 1 it cuts every gradient at theta = 0'"
assert _np.mean(row_norms > 2) == 1.0, "'input clipping at C = 1 or C = 2 shrinks *every* row'"
_acc = {key: value[0].mean() for key, value in clipping_runs.items()}
assert _np.array_equal(clipping_runs[5.0, "gradients"][0], clipping_runs[5.0, "inputs"][0]), \
    "'With C = 5 the two clipping variants give *identical* models'"
assert abs(_acc[2.0, "gradients"] - _acc[5.0, "gradients"]) < 0.01 and _acc[2.0, "gradients"] > _acc[2.0, "inputs"] + 0.01, \
    f"'With C = 2 ... gradient clipping learns about as well as at C = 5, while input clipping ...': {_acc}"
assert clipping_runs[2.0, "inputs"][1] < 0.02 and _acc[2.0, "inputs"] - majority < 0.005, \
    "'input clipping predicts \"> 50K\" for almost nobody and scores barely above the majority-class floor'"
assert round(majority, 4) == 0.7543, "'the majority-class floor of 0.7543'"
assert round(2 / row_norms.min(), 2) <= 0.71, "'Input clipping shrinks every row by a factor 2/||x|| <= 0.71'"
_noiseless = dp.training.run_noisy_gradient_descent(X_train, y_train, dp.training.plan_noisy_gradient_descent(
    10, 1e4, 1e-5, clip_norm=2.0, clip_mode="inputs", calibration="analytic"), rng=0)
assert logistic.accuracy(_noiseless.theta, X_test, y_test) - majority < 0.005, \
    "'The noise is not the reason': input clipping at C = 2 stays at the floor even with almost no noise"
for _mode in ("gradients", "inputs"):
    _accs = clipping_runs[1.0, _mode][0]
    assert _np.all(_np.round(_accs, 4) == round(majority, 4)), \
        f"'With C = 1 *both* variants stay there: their accuracy is exactly the floor, with no spread': {_accs}"
assert round(result.epsilon / result.epsilon_per_iteration) == 11, \
    "'plotting the per-iteration epsilon would make the method look 11 times more private'"
assert plateau > mean_acc[_np.argmin(totals)], "'below it the noise swamps the gradient'"
assert abs(plateau - baseline) < 0.01, "'its plateau, which is the non-private accuracy of 10 iterations'"
if not FAST:
    assert round(flat_from, 2) == 0.22, f"'in full mode 0.22, that is 0.02 per iteration': {flat_from}"
else:
    assert flat_from > 0.22, f"'the coarser grid of fast mode cannot resolve it and prints a larger value': {flat_from}"
_std = noisy_gd.accuracies.std(axis=1)
assert _std[_np.argmin(totals)] > _std[_np.argmax(totals)], "'and the spread over seeds grows'"
