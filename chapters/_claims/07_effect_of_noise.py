# Claims of chapter 7's prose (run in the chapter's kernel after it executed; see README.md).
import math as _math

import numpy as _np

assert TUNED_DEFAULTS[-1].epochs / TUNED_DEFAULTS[-1].sampling_rate == 6400 and \
    all(row.epochs == 64 for row in TUNED_DEFAULTS), "'Its defaults ... run 64 epochs, up to 6,400 steps'"
assert round(q * n) == 1508 and steps == 640, "'32 epochs at q = 0.05 (640 steps, expected batch 1508 rows)'"
_z = {e: dp.calibrate.noise_multiplier(target_epsilon=e, target_delta=DELTA, sampling_rate=q, steps=steps)
      for e in (0.01, 10.0)}
_std = {e: z * C / (q * n) for e, z in _z.items()}
assert 100 <= _std[0.01] / _std[10.0] < 1000, "'at epsilon = 0.01 its noise is several hundred times larger'"
assert round(_z[10.0]) == 1, "'(z ~ 1 at epsilon = 10)'"
_t, _c = tuned.score(X_test, y_test), cheap.score(X_test, y_test)
assert 0 <= _t - _c < 0.01 and tuned.steps_ >= 10 * cheap.steps_, \
    f"'The cheaper configuration gives up less than a point at epsilon = 1, for a tenth of the steps': {_t} vs {_c}"
_mean = _np.array([a.mean() for a in dpsgd.accuracies])
_eps = list(dpsgd.epsilons)
assert abs(_mean[_eps.index(0.3)] - _mean[-1]) < 0.005, \
    "'Down to epsilon ~ 0.3 ... accuracy stays within a few tenths of a point of its value at the largest epsilon'"
assert 0.005 <= dpsgd.baseline - _mean[-1] <= 0.02, "'The gap of about one point to the non-private model'"
# "falls towards the floor": at the smallest epsilon (below 0.1) more than half of the way from its value at 0.3
# down to the floor (the full grid's 0.01 falls below it; the fast grid stops at 0.03)
_drop = _mean[_eps.index(0.3)] - majority_floor
assert _mean[0] < _mean[_eps.index(0.3)] - 0.02 and _mean[0] - majority_floor < 0.5 * _drop and _eps[0] < 0.1, \
    "'Below epsilon ~ 0.1 the noise takes over: accuracy falls towards the majority-class floor'"
assert round(100 * majority_floor, 2) == 75.43, "'the majority-class floor of 75.43 %'"
assert seed_std[0] > 10 * seed_std[-1], "'the spread over seeds grows by more than an order of magnitude'"
assert _np.all(dpsgd.achieved_epsilons <= dpsgd.epsilons), "'The certified epsilon is at most the target'"
_z05 = [dp.calibrate.noise_multiplier(target_epsilon=0.05, target_delta=DELTA, sampling_rate=q,
                                      steps=experiments.steps_from_epochs(e, q)) for e in (1, 4, 16, 64)]
assert all(1.8 < b / a < 2.1 for a, b in zip(_z05, _z05[1:])), "'four times the epochs, twice the z'"
_best = _np.argmax(tight.accuracies.mean(axis=1))
assert 0 < _best < len(tight.epochs) - 1, "'At epsilon = 0.05 accuracy first rises ... and then falls'"
_bc = [grid.clip_norms[_np.argmax(grid.accuracies[:, k, :].mean(axis=1))] for k in range(len(grid.noise_multipliers))]
assert _bc[0] > _bc[-1] and grid.noise_multipliers[0] == 1, "'As z grows the optimum moves to **smaller C**'"
_a1 = grid.accuracies[:, 0, :].mean(axis=1)
assert _a1[0] < _a1.max() - 0.005, "'With little noise (z = 1) ... a tiny C costs accuracy through bias'"
assert round(_math.log(1e5) / 32, 2) == 0.36 and min(moments.epsilons) > 0.36, \
    "'cannot certify anything below ln(1e5)/32 ~ 0.36 ... so its grid starts above that'"
assert 3 <= shrink.min() and round(shrink.max(), 1) <= 4.2, "'by a factor of 3 to 4.2 here'"
assert at_03 > gd_mean.max(), "'more accurate at epsilon = 0.3 than the book's 10 full-batch steps at *any* epsilon'"
assert 0.05 <= sgd_mean.max() - gd_mean.max() <= 0.07, "'its ceiling is about 6 points higher'"
assert gd_mean.max() - majority_floor <= 0.03, "'never get more than about 2 points above the majority-class floor'"
assert sgd_mean[0] < sgd_mean[1] - 0.02, "'below epsilon = 0.1 the curve drops steeply'"
if 0.01 in _eps:
    assert _mean[_eps.index(0.01)] < majority_floor, "'on the full grid, at epsilon = 0.01, even below it'"
# --- the price of tuning ---------------------------------------------------------------------------------------
assert all(not row.grid_epsilon < row.selection_epsilon for row in costs["geometric"][1:]) and \
    costs["geometric"][0].grid_epsilon < costs["geometric"][0].selection_epsilon, \
    "'For two settings composition is cheaper than the geometric selection ... from four settings on ...'"
_grid = [row.grid_epsilon for row in costs["geometric"]]
assert all(1.3 < b / a < 1.6 for a, b in zip(_grid, _grid[1:])), "'the composed cost grows roughly like sqrt(k)'"
assert all(row.selection_epsilon < 3 * one_run for name in shapes if name != "Poisson" for row in costs[name]), \
    "'a search over many settings costs less than three runs' epsilon (geometric or logarithmic K)'"
assert costs["Poisson"][-1].selection_epsilon > 2 * costs["geometric"][-1].selection_epsilon > \
    2 * costs["logarithmic"][-1].selection_epsilon, "'The Poisson K is by far the most expensive at a large mean'"
_k64 = dict((k, (g, s)) for k, g, s in affordable)[64]
assert _k64[0] > 9 * run_z and _k64[1] < 3 * run_z, \
    "'64 settings: composition ten times the noise of one run, selection less than three times'"
assert all(run_z < s < g for _, g, s in affordable[1:]), "'the free ride's z is the smallest of all'"
for _way in ways:
    assert _np.all(_np.asarray(spent[_way]) <= _np.asarray(search_epsilons) * (1 + 1e-9)), \
        f"'Every way reports an epsilon at most its target': {_way}"
_means = {w: tuning_accuracy[w].mean(axis=1) for w in ways}
assert _means["free ride"][0] > _means["private selection"][0] > _means["composition"][0], \
    "'At a small budget ... the free ride is the most accurate ... private selection beats composition'"
assert max(m[-1] for m in _means.values()) - min(m[-1] for m in _means.values()) < 0.005, \
    "'With a generous budget all three land near the same accuracy'"
# --- adaptive clipping ---------------------------------------------------------------------------------------
_Cs, _qs = details.clip_norms, details.gradient_norm_quantiles
assert _Cs[0] == 0.1 and _Cs[0] < _qs[0] / 10, "'from its deliberately poor start'"
assert _np.all(_np.abs(_np.log(_np.interp(details.loss_steps[5:], _np.arange(_Cs.size), _Cs) / _qs[5:])) < 0.2), \
    "'C ... then follows the quantile' (within 20 % after five epochs)"
assert abs(adaptive_accuracy - cheap.score(X_test, y_test)) < 0.01, "'the accuracy is close to the chapter's C'"
assert adaptive.ledger == cheap.ledger_, "'its ledger is the same as with a fixed C'"
assert z_one_run < details.plan.gradient_noise_multiplier, "'a little more noise than z'"
